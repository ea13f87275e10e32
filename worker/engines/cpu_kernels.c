/* cpu_kernels.c — the built-in CPU engine's suite of self-checking
 * kernels; see cpu_kernels.h.
 *
 * A kernel owns its input (built from a fixed seed, so every run and every
 * machine does identical work), does a fixed amount of work per iteration
 * (a few ms on a current core, well under the 50 ms stop latency the
 * engine promises), and verifies each iteration's output against a value
 * that setup derived independently. */
#include "worker/engines/cpu_kernels.h"

#include "rng.h"
#include "worker/engines/cpu.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reference rates, in work units per second, of one copy on the reference
 * core: a vCPU of an AMD EPYC (Zen 5, family 26) KVM guest with 4 KiB
 * pages for the chase (THP "madvise"), code built by gcc 12 -O2, rounded
 * from 1-copy runs of 5 s on an otherwise idle guest (where it scores
 * 1000-1070). A copy scores 1000 x the geometric mean of rate / reference
 * rate (cpu.c). A bare-metal core of the same generation scores higher, mostly on
 * "mem" (no nested paging). These are fixed divisors, not measurements of
 * the machine under test: changing one makes scores incomparable with
 * earlier results. */
#define REF_INT_RATE    1.0e9 /* 64-bit words hashed per second */
#define REF_FP_RATE     9.0e7 /* n-body pair interactions per second */
#define REF_MEM_RATE    4.0e6 /* dependent loads per second */
#define REF_BRANCH_RATE 1.6e7 /* elements sorted per second */
/* ---------------------------------------------------------------------
 * Integer: CRC-like multiply/shift/table mixing of a 256 KiB array (L2
 * resident) in four independent lanes, as real hash functions do.
 * Verified against the result of a plain one-word-at-a-time loop. */

#define INT_WORDS  32768
#define INT_PASSES 128
#define INT_SEED   0x1234567887654321ULL

struct int_state {
    uint64_t *data;
    uint64_t table[256];
    uint64_t expect;
};

static inline uint64_t int_mix(uint64_t h, uint64_t w, const uint64_t *table)
{
    uint64_t x = (h ^ w) * 0x9E3779B97F4A7C15ULL;
    x ^= x >> 29;
    return (x >> 8) ^ table[x & 0xff];
}

static uint64_t int_combine(const uint64_t h[4])
{
    return h[0] ^ (h[1] << 16 | h[1] >> 48) ^ (h[2] << 32 | h[2] >> 32) ^ (h[3] << 48 | h[3] >> 16);
}

/* The plain method: word i goes to lane i % 4. */
static uint64_t int_reference(const struct int_state *s)
{
    uint64_t h[4] = {1, 2, 3, 4};
    for (int p = 0; p < INT_PASSES; p++)
        for (size_t i = 0; i < INT_WORDS; i++)
            h[i % 4] = int_mix(h[i % 4], s->data[i], s->table);
    return int_combine(h);
}

/* The timed method: the four lanes unrolled so they overlap in the core. */
static uint64_t int_hash(const struct int_state *s)
{
    uint64_t h0 = 1, h1 = 2, h2 = 3, h3 = 4;
    const uint64_t *d = s->data, *t = s->table;
    for (int p = 0; p < INT_PASSES; p++)
        for (size_t i = 0; i < INT_WORDS; i += 4) {
            h0 = int_mix(h0, d[i], t);
            h1 = int_mix(h1, d[i + 1], t);
            h2 = int_mix(h2, d[i + 2], t);
            h3 = int_mix(h3, d[i + 3], t);
        }
    uint64_t h[4] = {h0, h1, h2, h3};
    return int_combine(h);
}

static void *int_setup(char *err, size_t len)
{
    struct int_state *s = calloc(1, sizeof *s);
    if (s == NULL || (s->data = malloc(INT_WORDS * sizeof *s->data)) == NULL) {
        free(s);
        snprintf(err, len, "out of memory");
        return NULL;
    }
    uint64_t seed = INT_SEED;
    for (size_t i = 0; i < INT_WORDS; i++)
        s->data[i] = hv_rng_xorshift(&seed);
    /* The CRC-64/XZ table (reflected ECMA-182 polynomial). */
    for (uint64_t i = 0; i < 256; i++) {
        uint64_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0xC96C5795D7870F42ULL : c >> 1;
        s->table[i] = c;
    }
    s->expect = int_reference(s);
    return s;
}

static int int_iterate(void *state, char *err, size_t len)
{
    struct int_state *s = state;
    uint64_t got = int_hash(s);
    if (got == s->expect)
        return 0;
    snprintf(err, len, "hash %016llx, expected %016llx", (unsigned long long)got,
             (unsigned long long)s->expect);
    return -1;
}

static void int_corrupt(void *state)
{
    struct int_state *s = state;
    s->data[INT_WORDS / 3] ^= 1ULL << 17; /* one flipped bit */
}

static void int_teardown(void *state)
{
    struct int_state *s = state;
    if (s != NULL)
        free(s->data);
    free(s);
}

/* ---------------------------------------------------------------------
 * Floating point: the classic 5-body (Sun and Jovian planets) simulation
 * in double precision. Each iteration integrates the same initial state
 * for a fixed number of steps. Setup checks the physics of the first run
 * (energy conserved to 1e-4, momentum stays zero); every iteration must
 * then reproduce that run's final state bit for bit — same code, same
 * input. */

#define FP_BODIES 5
#define FP_PAIRS  (FP_BODIES * (FP_BODIES - 1) / 2)
#define FP_STEPS  20000
#define FP_DT     0.01

struct body {
    double x, y, z, vx, vy, vz, mass;
};

struct fp_state {
    struct body initial[FP_BODIES];
    struct body expect[FP_BODIES];
};

static void fp_initial(struct body *b)
{
    const double pi = 3.141592653589793, solar_mass = 4 * pi * pi, days = 365.24;
    static const double init[FP_BODIES][7] = {
        {0, 0, 0, 0, 0, 0, 1},
        {4.84143144246472090e+00, -1.16032004402742839e+00, -1.03622044471123109e-01,
         1.66007664274403694e-03, 7.69901118419740425e-03, -6.90460016972063023e-05,
         9.54791938424326609e-04},
        {8.34336671824457987e+00, 4.12479856412430479e+00, -4.03523417114321381e-01,
         -2.76742510726862411e-03, 4.99852801234917238e-03, 2.30417297573763929e-05,
         2.85885980666130812e-04},
        {1.28943695621391310e+01, -1.51111514016986312e+01, -2.23307578892655734e-01,
         2.96460137564761618e-03, 2.37847173959480950e-03, -2.96589568540237556e-05,
         4.36624404335156298e-05},
        {1.53796971148509165e+01, -2.59193146099879641e+01, 1.79258772950371181e-01,
         2.68067772490389322e-03, 1.62824170038242295e-03, -9.51592254519715870e-05,
         5.15138902046611451e-05},
    };
    double px = 0, py = 0, pz = 0;
    for (int i = 0; i < FP_BODIES; i++) {
        b[i] = (struct body){init[i][0],
                             init[i][1],
                             init[i][2],
                             init[i][3] * days,
                             init[i][4] * days,
                             init[i][5] * days,
                             init[i][6] * solar_mass};
        px += b[i].vx * b[i].mass;
        py += b[i].vy * b[i].mass;
        pz += b[i].vz * b[i].mass;
    }
    /* The Sun moves so that the total momentum is zero. */
    b[0].vx = -px / solar_mass;
    b[0].vy = -py / solar_mass;
    b[0].vz = -pz / solar_mass;
}

static void fp_advance(struct body *b, int steps)
{
    for (int s = 0; s < steps; s++) {
        for (int i = 0; i < FP_BODIES; i++)
            for (int j = i + 1; j < FP_BODIES; j++) {
                double dx = b[i].x - b[j].x, dy = b[i].y - b[j].y, dz = b[i].z - b[j].z;
                double d2 = dx * dx + dy * dy + dz * dz;
                double mag = FP_DT / (d2 * sqrt(d2));
                b[i].vx -= dx * b[j].mass * mag;
                b[i].vy -= dy * b[j].mass * mag;
                b[i].vz -= dz * b[j].mass * mag;
                b[j].vx += dx * b[i].mass * mag;
                b[j].vy += dy * b[i].mass * mag;
                b[j].vz += dz * b[i].mass * mag;
            }
        for (int i = 0; i < FP_BODIES; i++) {
            b[i].x += FP_DT * b[i].vx;
            b[i].y += FP_DT * b[i].vy;
            b[i].z += FP_DT * b[i].vz;
        }
    }
}

static double fp_energy(const struct body *b)
{
    double e = 0;
    for (int i = 0; i < FP_BODIES; i++) {
        e += 0.5 * b[i].mass * (b[i].vx * b[i].vx + b[i].vy * b[i].vy + b[i].vz * b[i].vz);
        for (int j = i + 1; j < FP_BODIES; j++) {
            double dx = b[i].x - b[j].x, dy = b[i].y - b[j].y, dz = b[i].z - b[j].z;
            e -= b[i].mass * b[j].mass / sqrt(dx * dx + dy * dy + dz * dz);
        }
    }
    return e;
}

static double fp_momentum(const struct body *b)
{
    double px = 0, py = 0, pz = 0;
    for (int i = 0; i < FP_BODIES; i++) {
        px += b[i].vx * b[i].mass;
        py += b[i].vy * b[i].mass;
        pz += b[i].vz * b[i].mass;
    }
    return sqrt(px * px + py * py + pz * pz);
}

static void *fp_setup(char *err, size_t len)
{
    struct fp_state *s = calloc(1, sizeof *s);
    if (s == NULL) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    fp_initial(s->initial);
    memcpy(s->expect, s->initial, sizeof s->expect);
    fp_advance(s->expect, FP_STEPS);
    double e0 = fp_energy(s->initial), e1 = fp_energy(s->expect);
    double drift = fabs((e1 - e0) / e0), p = fp_momentum(s->expect);
    if (!(drift < 1e-4) || !(p < 1e-9)) {
        snprintf(err, len, "n-body violates conservation: energy drift %.3g, momentum %.3g", drift,
                 p);
        free(s);
        return NULL;
    }
    return s;
}

static int fp_iterate(void *state, char *err, size_t len)
{
    struct fp_state *s = state;
    struct body b[FP_BODIES];
    memcpy(b, s->initial, sizeof b);
    fp_advance(b, FP_STEPS);
    for (int i = 0; i < FP_BODIES; i++)
        if (memcmp(&b[i], &s->expect[i], sizeof b[i]) != 0) {
            snprintf(err, len, "body %d ends at x=%.17g, expected %.17g", i, b[i].x,
                     s->expect[i].x);
            return -1;
        }
    return 0;
}

static void fp_corrupt(void *state)
{
    struct fp_state *s = state;
    s->initial[2].vy *= 1.0 + 1e-12;
}

static void fp_teardown(void *state)
{
    free(state);
}

/* ---------------------------------------------------------------------
 * Memory: dependent loads over a 64 MiB single-cycle random permutation,
 * far larger than the L2/L3 a core sees, so nearly every hop is a cache
 * (and usually TLB) miss whose latency cannot be hidden. The cycle visits
 * node mem_perm(k) at hop k, where mem_perm is a fixed bijection of the
 * 23-bit node numbers (xor, then rounds of an odd multiply and a right
 * xorshift, each invertible modulo 2^23): so next[x] is
 * mem_perm(mem_perm^-1(x) + 1), filled in address order without a
 * shuffled table, which under emulation (QEMU's TCG, where every random
 * access misses the soft TLB) is what makes the setup seconds instead of
 * tens of seconds. It also gives, without chasing, where the chase must be
 * every MEM_HOPS hops: each iteration chases one segment and must land on
 * the next checkpoint, and MEM_SEGMENTS iterations visit every node and
 * return to the start. */

#define MEM_BITS     23
#define MEM_NODES    ((size_t)1 << MEM_BITS)
#define MEM_MASK     ((uint64_t)MEM_NODES - 1)
#define MEM_BYTES    (MEM_NODES * sizeof(uint64_t))
#define MEM_HOPS     ((size_t)1 << 15)
#define MEM_SEGMENTS (MEM_NODES / MEM_HOPS)
#define MEM_XOR      0x2f5a3cU

static const uint64_t mem_mul[3] = {0x5bd1e995U, 0x1b873593U, 0x27d4eb2fU};
static const unsigned mem_shift[3] = {11, 12, 10};

struct mem_state {
    uint64_t *next;                    /* next[i]: the node after i */
    uint64_t checkpoint[MEM_SEGMENTS]; /* the node at hop k * MEM_HOPS */
    size_t segment;                    /* the segment the chase is at */
    uint64_t mul_inverse[3];           /* mem_mul[r]^-1 modulo 2^64 */
};

static uint64_t mem_perm(uint64_t x)
{
    x ^= MEM_XOR;
    for (int r = 0; r < 3; r++) {
        x = (x * mem_mul[r]) & MEM_MASK;
        x ^= x >> mem_shift[r];
    }
    return x;
}

/* y = x ^ (x >> s) gives x back by y ^ (x >> s) repeated until the known
 * top bits cover all MEM_BITS. */
static uint64_t mem_unshift(uint64_t y, unsigned s)
{
    uint64_t x = y;
    for (unsigned known = s; known < MEM_BITS; known += s)
        x = y ^ (x >> s);
    return x;
}

static uint64_t mem_perm_inverse(const struct mem_state *s, uint64_t x)
{
    for (int r = 2; r >= 0; r--) {
        x = mem_unshift(x, mem_shift[r]);
        x = (x * s->mul_inverse[r]) & MEM_MASK;
    }
    return x ^ MEM_XOR;
}

static void *mem_setup(char *err, size_t len)
{
    struct mem_state *s = calloc(1, sizeof *s);
    if (s == NULL || (s->next = malloc(MEM_BYTES)) == NULL) {
        snprintf(err, len, "cannot allocate %zu MiB for pointer chasing", MEM_BYTES >> 20);
        free(s);
        return NULL;
    }
    for (int r = 0; r < 3; r++) { /* Newton: each step doubles the correct low bits */
        uint64_t inv = mem_mul[r];
        for (int k = 0; k < 5; k++)
            inv *= 2 - mem_mul[r] * inv;
        s->mul_inverse[r] = inv;
    }
    for (uint64_t x = 0; x < MEM_NODES; x++)
        s->next[x] = mem_perm((mem_perm_inverse(s, x) + 1) & MEM_MASK);
    for (size_t k = 0; k < MEM_SEGMENTS; k++)
        s->checkpoint[k] = mem_perm(k * MEM_HOPS);
    return s;
}

static int mem_iterate(void *state, char *err, size_t len)
{
    struct mem_state *s = state;
    const uint64_t *next = s->next;
    uint64_t p = s->checkpoint[s->segment];
    for (size_t h = 0; h < MEM_HOPS; h++)
        p = next[p];
    size_t following = (s->segment + 1) % MEM_SEGMENTS;
    if (p != s->checkpoint[following]) {
        snprintf(err, len, "chase of segment %zu ended at node %llu, expected %llu", s->segment,
                 (unsigned long long)p, (unsigned long long)s->checkpoint[following]);
        return -1;
    }
    s->segment = following;
    return 0;
}

static void mem_corrupt(void *state)
{
    struct mem_state *s = state;
    uint64_t start = s->checkpoint[s->segment];
    s->next[start] = s->next[s->next[start]]; /* a lost link skips a node */
}

static void mem_teardown(void *state)
{
    struct mem_state *s = state;
    if (s != NULL)
        free(s->next);
    free(s);
}

/* ---------------------------------------------------------------------
 * Branch: quicksort (median of three, Hoare partition, insertion sort for
 * short runs) of 32768 pseudo-random 32-bit integers, whose comparisons
 * are unpredictable by construction. Verified by sorted order plus the sum
 * and xor of the elements (the output is a permutation of the input). */

#define SORT_N    32768
#define SORT_SEED 0x5EED0F50127ULL

struct sort_state {
    int32_t *input, *work;
    uint64_t sum, xor;
};

static void insertion_sort(int32_t *a, ptrdiff_t n)
{
    for (ptrdiff_t i = 1; i < n; i++) {
        int32_t v = a[i];
        ptrdiff_t j = i;
        for (; j > 0 && a[j - 1] > v; j--)
            a[j] = a[j - 1];
        a[j] = v;
    }
}

static int32_t median3(int32_t a, int32_t b, int32_t c)
{
    if (a > b) {
        int32_t t = a;
        a = b;
        b = t;
    }
    return c < a ? a : c > b ? b : c;
}

static void quick_sort(int32_t *a, ptrdiff_t n)
{
    while (n > 16) {
        int32_t pivot = median3(a[0], a[n / 2], a[n - 1]);
        ptrdiff_t i = -1, j = n;
        for (;;) {
            do
                i++;
            while (a[i] < pivot);
            do
                j--;
            while (a[j] > pivot);
            if (i >= j)
                break;
            int32_t t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
        /* Recurse into the smaller half, loop on the larger: O(log n)
         * stack whatever the data. */
        ptrdiff_t left = j + 1;
        if (left < n - left) {
            quick_sort(a, left);
            a += left;
            n -= left;
        } else {
            quick_sort(a + left, n - left);
            n = left;
        }
    }
    insertion_sort(a, n);
}

static void sort_digest(const int32_t *a, uint64_t *sum, uint64_t * xor)
{
    *sum = *xor = 0;
    for (size_t i = 0; i < SORT_N; i++) {
        *sum += (uint64_t)(int64_t)a[i];
        *xor ^= (uint32_t)a[i];
    }
}

static void *sort_setup(char *err, size_t len)
{
    struct sort_state *s = calloc(1, sizeof *s);
    if (s == NULL || (s->input = malloc(SORT_N * sizeof *s->input)) == NULL ||
        (s->work = malloc(SORT_N * sizeof *s->work)) == NULL) {
        if (s != NULL)
            free(s->input);
        free(s);
        snprintf(err, len, "out of memory");
        return NULL;
    }
    uint64_t seed = SORT_SEED;
    for (size_t i = 0; i < SORT_N; i++)
        s->input[i] = (int32_t)(uint32_t)(hv_rng_xorshift(&seed) >> 32);
    sort_digest(s->input, &s->sum, &s->xor);
    return s;
}

static int sort_iterate(void *state, char *err, size_t len)
{
    struct sort_state *s = state;
    memcpy(s->work, s->input, SORT_N * sizeof *s->work);
    quick_sort(s->work, SORT_N);
    for (size_t i = 1; i < SORT_N; i++)
        if (s->work[i - 1] > s->work[i]) {
            snprintf(err, len, "not sorted at index %zu", i);
            return -1;
        }
    uint64_t sum, xor;
    sort_digest(s->work, &sum, &xor);
    if (sum != s->sum || xor != s->xor) {
        snprintf(err, len, "sorted elements are not the input's (sum %llx, expected %llx)",
                 (unsigned long long)sum, (unsigned long long)s->sum);
        return -1;
    }
    return 0;
}

static void sort_corrupt(void *state)
{
    struct sort_state *s = state;
    s->input[SORT_N / 5] ^= 1 << 9;
}

static void sort_teardown(void *state)
{
    struct sort_state *s = state;
    if (s != NULL) {
        free(s->input);
        free(s->work);
    }
    free(s);
}

const struct hv_cpu_kernel hv_cpu_kernels[HV_CPU_N_KERNELS] = {
    {"int", "cpu.int.rate", "64-bit words hashed", (double)INT_WORDS *INT_PASSES, REF_INT_RATE,
     int_setup, int_iterate, int_corrupt, int_teardown},
    {"fp", "cpu.fp.rate", "n-body pair interactions (double)", (double)FP_STEPS *FP_PAIRS,
     REF_FP_RATE, fp_setup, fp_iterate, fp_corrupt, fp_teardown},
    {"mem", "cpu.mem.rate", "dependent loads over 64 MiB", (double)MEM_HOPS, REF_MEM_RATE,
     mem_setup, mem_iterate, mem_corrupt, mem_teardown},
    {"branch", "cpu.branch.rate", "32-bit integers quicksorted", (double)SORT_N, REF_BRANCH_RATE,
     sort_setup, sort_iterate, sort_corrupt, sort_teardown},
};

size_t hv_cpu_kernel_count(void)
{
    return HV_CPU_N_KERNELS;
}

const char *hv_cpu_kernel_name(size_t i)
{
    return i < HV_CPU_N_KERNELS ? hv_cpu_kernels[i].name : NULL;
}

int hv_cpu_kernel_selftest(const char *name, bool corrupt, int iterations, char *err, size_t len)
{
    for (size_t k = 0; k < HV_CPU_N_KERNELS; k++) {
        if (strcmp(hv_cpu_kernels[k].name, name) != 0)
            continue;
        void *state = hv_cpu_kernels[k].setup(err, len);
        if (state == NULL)
            return -2;
        if (corrupt)
            hv_cpu_kernels[k].corrupt(state);
        int rc = 0;
        for (int i = 0; i < iterations && rc == 0; i++)
            rc = hv_cpu_kernels[k].iterate(state, err, len);
        hv_cpu_kernels[k].teardown(state);
        return rc;
    }
    snprintf(err, len, "no kernel named \"%s\"", name);
    return -2;
}
