/* cpu.c — the built-in CPU engine; see cpu.h.
 *
 * Design:
 *  - The suite is a table of kernels. A kernel owns its input (built from a
 *    fixed seed, so every run and every machine does identical work), does
 *    a fixed amount of work per iteration (a few ms on a current core, well
 *    under the 50 ms stop latency we promise), and verifies each
 *    iteration's output against a value that setup derived independently.
 *  - A kernel's rate is its work units divided by the time spent inside
 *    its own iterations, so the score does not depend on how the run's time
 *    happened to split between kernels.
 *  - Copies start together (a gate after their setup) and stop on their
 *    own clock; nothing sleeps. Copy 0 takes the per-second samples between
 *    its iterations, from counters the copies publish atomically.
 *  - Each copy first runs the suite, verified but not counted, for a short
 *    warm-up (a tenth of seconds, at most WARMUP_MAX): caches, TLBs,
 *    frequency and the host's scheduling settle, and then `seconds` are
 *    measured as before, so scores keep their meaning. The per-second
 *    samples of the measured time get the shared steady-state verdict.
 */
#include "worker/engines/cpu.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Reference rates, in work units per second, of one copy on the reference
 * core: a vCPU of an AMD EPYC (Zen 5, family 26) KVM guest with 4 KiB
 * pages for the chase (THP "madvise"), code built by gcc 12 -O2, rounded
 * from 1-copy runs of 5 s on an otherwise idle guest (where it scores
 * 1000-1070). A copy scores 1000 x the geometric mean of rate / reference
 * rate. A bare-metal core of the same generation scores higher, mostly on
 * "mem" (no nested paging). These are fixed divisors, not measurements of
 * the machine under test: changing one makes scores incomparable with
 * earlier results. */
#define REF_INT_RATE    1.0e9 /* 64-bit words hashed per second */
#define REF_FP_RATE     9.0e7 /* n-body pair interactions per second */
#define REF_MEM_RATE    4.0e6 /* dependent loads per second */
#define REF_BRANCH_RATE 1.6e7 /* elements sorted per second */
#define SCORE_SCALE     1000.0

#define MAX_COPIES 1024
/* At most this many samples per run (each about 60 bytes of the result
 * upload, whose body the server caps at 1 MiB by default): runs longer
 * than this many seconds sample every ceil(seconds / MAX_SAMPLES) s. */
#define MAX_SAMPLES    3600
#define MAX_SECONDS    86400.0
#define DEFAULT_SECOND 10.0
/* The longest warm-up; shorter runs warm up for a tenth of seconds. */
#define WARMUP_MAX 1.0

/* A fixed-seed PRNG (xorshift64*): the inputs are the same on every run. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

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
        s->data[i] = rng_next(&seed);
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
 * (and usually TLB) miss whose latency cannot be hidden. The cycle is built
 * from a shuffled visiting order, which also gives, without chasing,
 * where the chase must be every MEM_HOPS hops: each iteration chases one
 * segment and must land on the next checkpoint, and MEM_SEGMENTS
 * iterations visit every node and return to the start. */

#define MEM_BYTES    ((size_t)64 << 20)
#define MEM_NODES    (MEM_BYTES / sizeof(uint64_t))
#define MEM_HOPS     ((size_t)1 << 15)
#define MEM_SEGMENTS (MEM_NODES / MEM_HOPS)
#define MEM_SEED     0x0DDB1A5E5BAD5EEDULL

struct mem_state {
    uint64_t *next;                    /* next[i]: the node after i */
    uint64_t checkpoint[MEM_SEGMENTS]; /* the node at hop k * MEM_HOPS */
    size_t segment;                    /* the segment the chase is at */
};

static void *mem_setup(char *err, size_t len)
{
    struct mem_state *s = calloc(1, sizeof *s);
    uint32_t *order = malloc(MEM_NODES * sizeof *order);
    if (s == NULL || order == NULL || (s->next = malloc(MEM_BYTES)) == NULL) {
        snprintf(err, len, "cannot allocate %zu MiB for pointer chasing", MEM_BYTES >> 20);
        free(order);
        free(s);
        return NULL;
    }
    uint64_t seed = MEM_SEED;
    for (size_t i = 0; i < MEM_NODES; i++)
        order[i] = (uint32_t)i;
    for (size_t i = MEM_NODES - 1; i > 0; i--) { /* Fisher-Yates */
        size_t j = (size_t)(((rng_next(&seed) >> 32) * (uint64_t)(i + 1)) >> 32);
        uint32_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < MEM_NODES; i++)
        s->next[order[i]] = order[(i + 1) % MEM_NODES];
    for (size_t k = 0; k < MEM_SEGMENTS; k++)
        s->checkpoint[k] = order[k * MEM_HOPS];
    free(order);
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
        s->input[i] = (int32_t)(uint32_t)(rng_next(&seed) >> 32);
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

/* --------------------------------------------------------------------- */

/* One kernel of the suite. */
struct kernel {
    const char *name;      /* short name, in observed.kernels */
    const char *metric;    /* the rate metric */
    const char *work_unit; /* what one unit of work is */
    double units;          /* work units per iteration */
    double reference_rate; /* units/s of the reference core (see REF_*) */
    void *(*setup)(char *err, size_t len);
    int (*iterate)(void *state, char *err, size_t len); /* 0 when verified */
    void (*corrupt)(void *state);                       /* test hook */
    void (*teardown)(void *state);
};

static const struct kernel kernels[] = {
    {"int", "cpu.int.rate", "64-bit words hashed", (double)INT_WORDS *INT_PASSES, REF_INT_RATE,
     int_setup, int_iterate, int_corrupt, int_teardown},
    {"fp", "cpu.fp.rate", "n-body pair interactions (double)", (double)FP_STEPS *FP_PAIRS,
     REF_FP_RATE, fp_setup, fp_iterate, fp_corrupt, fp_teardown},
    {"mem", "cpu.mem.rate", "dependent loads over 64 MiB", (double)MEM_HOPS, REF_MEM_RATE,
     mem_setup, mem_iterate, mem_corrupt, mem_teardown},
    {"branch", "cpu.branch.rate", "32-bit integers quicksorted", (double)SORT_N, REF_BRANCH_RATE,
     sort_setup, sort_iterate, sort_corrupt, sort_teardown},
};

#define N_KERNELS (sizeof kernels / sizeof kernels[0])

size_t hv_cpu_kernel_count(void)
{
    return N_KERNELS;
}

const char *hv_cpu_kernel_name(size_t i)
{
    return i < N_KERNELS ? kernels[i].name : NULL;
}

int hv_cpu_kernel_selftest(const char *name, bool corrupt, int iterations, char *err, size_t len)
{
    for (size_t k = 0; k < N_KERNELS; k++) {
        if (strcmp(kernels[k].name, name) != 0)
            continue;
        void *state = kernels[k].setup(err, len);
        if (state == NULL)
            return -2;
        if (corrupt)
            kernels[k].corrupt(state);
        int rc = 0;
        for (int i = 0; i < iterations && rc == 0; i++)
            rc = kernels[k].iterate(state, err, len);
        kernels[k].teardown(state);
        return rc;
    }
    snprintf(err, len, "no kernel named \"%s\"", name);
    return -2;
}

/* The score of one copy from its per-kernel rates. */
static double copy_score(const double rate[N_KERNELS])
{
    double log_sum = 0;
    for (size_t k = 0; k < N_KERNELS; k++) {
        if (!(rate[k] > 0))
            return 0;
        log_sum += log(rate[k] / kernels[k].reference_rate);
    }
    return SCORE_SCALE * exp(log_sum / (double)N_KERNELS);
}

/* ---------------------------------------------------------------------
 * Params, declared once as a table. */

struct cpu_params {
    long copies;
    double seconds;
    bool pin;
};

static int parse_copies(const json_t *v, struct cpu_params *p, char *err, size_t len)
{
    return hv_engine_param_count(v, &p->copies, 1, MAX_COPIES, true, err, len);
}

static int parse_seconds(const json_t *v, struct cpu_params *p, char *err, size_t len)
{
    return hv_engine_param_seconds(v, &p->seconds, 0, true, MAX_SECONDS, err, len);
}

static int parse_pin(const json_t *v, struct cpu_params *p, char *err, size_t len)
{
    return hv_engine_param_bool(v, &p->pin, err, len);
}

static const struct {
    const char *name;
    int (*parse)(const json_t *v, struct cpu_params *p, char *err, size_t len);
} param_table[] = {
    {"copies", parse_copies},
    {"seconds", parse_seconds},
    {"pin", parse_pin},
};

static int parse_params(const json_t *params, struct cpu_params *p, struct hv_engine_result *out)
{
    *p = (struct cpu_params){.copies = 1, .seconds = DEFAULT_SECOND, .pin = false};
    if (params == NULL || json_is_null(params))
        return 0;
    if (!json_is_object(params))
        return hv_engine_fail(out, "invalid params: must be an object");
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)params, key, v)
    {
        size_t i = 0;
        while (i < sizeof param_table / sizeof param_table[0] && strcmp(param_table[i].name, key))
            i++;
        if (i == sizeof param_table / sizeof param_table[0])
            return hv_engine_fail(out,
                                  "invalid params: unknown parameter \"%s\" (known: copies, "
                                  "seconds, pin)",
                                  key);
        char why[160];
        if (param_table[i].parse(v, p, why, sizeof why) != 0)
            return hv_engine_fail(out, "invalid params: %s %s", key, why);
    }
    return 0;
}

/* ---------------------------------------------------------------------
 * Copies. */

struct cpu_run;

/* One copy: its kernels' state and the counters it publishes. */
struct copy {
    struct cpu_run *run;
    int index;
    int cpu; /* the CPU it is pinned to, or -1 */
    pthread_t thread;
    bool started;
    void *state[N_KERNELS];
    /* Written by the copy, read by copy 0's sampler: atomic accesses. */
    uint64_t iterations[N_KERNELS];
    uint64_t ns[N_KERNELS];
    double elapsed;  /* seconds from the start gate to the copy's end */
    double cpu_time; /* CPU seconds the copy's thread got meanwhile */
    bool failed;
    char error[300];
};

/* The whole run. */
struct cpu_run {
    const struct hv_engine_ctx *ctx;
    struct hv_engine_result *out;
    struct cpu_params params;
    struct copy *copies;
    /* The start gate: copies wait here after their setup, so that all
     * start measuring together. */
    pthread_mutex_t gate_mu;
    pthread_cond_t gate_cv;
    long arrived;
    bool open;
    int abort; /* set (atomically) when a copy failed: all stop */
    /* /proc/stat "cpu" totals and steal, in jiffies, when the copies
     * started and after they ended; -1 (all ones) when unreadable. */
    uint64_t stat_total[2], stat_steal[2];
    /* Sampler state, touched by copy 0 only. */
    uint64_t t0_ns, next_sample_ns, sample_every_ns;
    uint64_t (*prev_iterations)[N_KERNELS];
    uint64_t (*prev_ns)[N_KERNELS];
    double *series; /* the samples' values, for the steady-state test */
    size_t n_series, cap_series;
};

/* The warm-up before the measured seconds (see the top of the file). */
static double warmup_seconds(const struct cpu_params *p)
{
    return p->seconds / 10 < WARMUP_MAX ? p->seconds / 10 : WARMUP_MAX;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double thread_cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool run_stopping(struct cpu_run *run)
{
    return __atomic_load_n(&run->abort, __ATOMIC_RELAXED) || hv_engine_stopping(run->ctx);
}

/* The rate of kernel k from iteration and time counts; 0 without data. */
static double kernel_rate(size_t k, uint64_t iterations, uint64_t ns)
{
    return ns > 0 ? (double)iterations * kernels[k].units / ((double)ns * 1e-9) : 0;
}

/* Emits the cpu.score sample: the sum of every copy's score over its
 * iterations since the previous sample (a second ago; longer in runs over
 * an hour). A kernel without a finished iteration in that window falls
 * back to its rate since the start. */
static void take_sample(struct cpu_run *run, uint64_t now)
{
    double total = 0;
    for (long c = 0; c < run->params.copies; c++) {
        struct copy *cp = &run->copies[c];
        double rate[N_KERNELS];
        for (size_t k = 0; k < N_KERNELS; k++) {
            uint64_t it = __atomic_load_n(&cp->iterations[k], __ATOMIC_RELAXED);
            uint64_t ns = __atomic_load_n(&cp->ns[k], __ATOMIC_RELAXED);
            uint64_t dit = it - run->prev_iterations[c][k], dns = ns - run->prev_ns[c][k];
            rate[k] = dit > 0 && dns > 0 ? kernel_rate(k, dit, dns) : kernel_rate(k, it, ns);
            run->prev_iterations[c][k] = it;
            run->prev_ns[c][k] = ns;
        }
        total += copy_score(rate);
    }
    hv_engine_emit_sample(run->ctx, run->out, "cpu.score", (double)(now - run->t0_ns) * 1e-9,
                          total);
    if (run->n_series == run->cap_series) {
        size_t cap = run->cap_series ? run->cap_series * 2 : 64;
        double *v = realloc(run->series, cap * sizeof *v);
        if (v != NULL) {
            run->series = v;
            run->cap_series = cap;
        }
    }
    if (run->n_series < run->cap_series)
        run->series[run->n_series++] = total;
    while (run->next_sample_ns <= now)
        run->next_sample_ns += run->sample_every_ns;
}

/* Records why a copy failed and makes every copy stop. */
static void copy_fail(struct copy *c, const char *kernel, const char *what, const char *why)
{
    snprintf(c->error, sizeof c->error, "copy %d: kernel %s %s: %s", c->index, kernel, what, why);
    c->failed = true;
    __atomic_store_n(&c->run->abort, 1, __ATOMIC_RELAXED);
}

/* Loops over the suite until the time is up, a stop is requested or a
 * kernel fails verification. Every kernel runs at least once. */
static void copy_loop(struct copy *c)
{
    struct cpu_run *run = c->run;
    /* The warm-up: whole kernel iterations, verified, counted nowhere. */
    uint64_t warm_end = now_ns() + (uint64_t)(warmup_seconds(&run->params) * 1e9);
    for (size_t k = 0; now_ns() < warm_end; k = (k + 1) % N_KERNELS) {
        if (run_stopping(run))
            return;
        char why[200];
        if (kernels[k].iterate(c->state[k], why, sizeof why) != 0) {
            copy_fail(c, kernels[k].name, "failed its self-check", why);
            return;
        }
    }
    double cpu_start = thread_cpu_seconds();
    uint64_t start = now_ns();
    uint64_t deadline = start + (uint64_t)(run->params.seconds * 1e9);
    if (c->index == 0) {
        run->t0_ns = start;
        run->next_sample_ns = start + run->sample_every_ns;
    }
    for (uint64_t round = 0;; round++)
        for (size_t k = 0; k < N_KERNELS; k++) {
            if (run_stopping(run))
                goto out;
            char why[200];
            uint64_t t1 = now_ns();
            int rc = kernels[k].iterate(c->state[k], why, sizeof why);
            uint64_t t2 = now_ns();
            if (rc != 0) {
                copy_fail(c, kernels[k].name, "failed its self-check", why);
                goto out;
            }
            __atomic_store_n(&c->iterations[k], c->iterations[k] + 1, __ATOMIC_RELAXED);
            __atomic_store_n(&c->ns[k], c->ns[k] + (t2 - t1), __ATOMIC_RELAXED);
            if (c->index == 0 && t2 >= run->next_sample_ns)
                take_sample(run, t2);
            if ((round > 0 || k == N_KERNELS - 1) && t2 >= deadline)
                goto out;
        }
out:
    c->elapsed = (double)(now_ns() - start) * 1e-9;
    c->cpu_time = thread_cpu_seconds() - cpu_start;
}

static void *copy_main(void *arg)
{
    struct copy *c = arg;
    /* Set up after pinning, so the memory is first touched (and thus
     * placed) on the copy's own NUMA node. */
    struct cpu_run *run = c->run;
    for (size_t k = 0; k < N_KERNELS && !c->failed && !run_stopping(run); k++) {
        char why[200];
        c->state[k] = kernels[k].setup(why, sizeof why);
        if (c->state[k] == NULL)
            copy_fail(c, kernels[k].name, "setup failed", why);
    }
    pthread_mutex_lock(&run->gate_mu);
    run->arrived++;
    pthread_cond_broadcast(&run->gate_cv);
    while (!run->open)
        pthread_cond_wait(&run->gate_cv, &run->gate_mu);
    pthread_mutex_unlock(&run->gate_mu);
    if (!c->failed && !run_stopping(run))
        copy_loop(c);
    for (size_t k = 0; k < N_KERNELS; k++)
        if (c->state[k] != NULL)
            kernels[k].teardown(c->state[k]);
    return NULL;
}

/* Reads the machine-wide CPU time and the part of it stolen by the
 * hypervisor (jiffies), so a guest can tell how much of the run's
 * slowness was the host's doing. */
static void read_cpu_stat(uint64_t *total, uint64_t *steal)
{
    *total = *steal = UINT64_MAX;
    FILE *f = fopen("/proc/stat", "re");
    if (f == NULL)
        return;
    unsigned long long v[8];
    if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
               &v[5], &v[6], &v[7]) == 8) {
        *total = 0;
        for (int i = 0; i < 8; i++)
            *total += v[i];
        *steal = v[7];
    }
    fclose(f);
}

/* Chooses the CPU of each copy: the i-th CPU, modulo their number, of the
 * process's affinity set (all online CPUs unless restricted by taskset or
 * a cgroup). */
static int assign_cpus(struct cpu_run *run)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return hv_engine_fail(run->out, "cannot read the CPU affinity: %s", strerror(errno));
    int allowed[CPU_SETSIZE], n = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &set))
            allowed[n++] = cpu;
    if (n == 0)
        return hv_engine_fail(run->out, "the CPU affinity set is empty");
    for (long i = 0; i < run->params.copies; i++)
        run->copies[i].cpu = allowed[i % n];
    return 0;
}

static int start_copies(struct cpu_run *run)
{
    for (long i = 0; i < run->params.copies; i++) {
        struct copy *c = &run->copies[i];
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        if (c->cpu >= 0) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(c->cpu, &one);
            pthread_attr_setaffinity_np(&attr, sizeof one, &one);
        }
        int rc = pthread_create(&c->thread, &attr, copy_main, c);
        pthread_attr_destroy(&attr);
        if (rc != 0) {
            hv_engine_fail(run->out, "cannot start copy %ld: %s", i, strerror(rc));
            /* The copies already started see abort at the gate and end. */
            __atomic_store_n(&run->abort, 1, __ATOMIC_RELAXED);
            return -1;
        }
        c->started = true;
    }
    return 0;
}

static void add_observed(struct cpu_run *run, const double rates[N_KERNELS],
                         const uint64_t iterations[N_KERNELS], double seconds, json_t *scores)
{
    json_t *obs = run->out->observed;
    json_object_set_new(obs, "copies", json_integer(run->params.copies));
    json_object_set_new(obs, "seconds", json_real(seconds));
    json_object_set_new(obs, "warmup", json_real(warmup_seconds(&run->params)));
    struct hv_steady st;
    hv_steady_state(run->series, run->n_series, &st);
    json_t *steady = json_object();
    if (steady != NULL && hv_steady_observe(steady, &st) == 0)
        json_object_set_new(obs, "steady_state", steady);
    else
        json_decref(steady);
    /* Below 1 when something else (other processes, more copies than
     * CPUs) took CPU time from the copies: a measurement to distrust. */
    double share = 0;
    for (long i = 0; i < run->params.copies; i++)
        if (run->copies[i].elapsed > 0)
            share += run->copies[i].cpu_time / run->copies[i].elapsed;
    json_object_set_new(obs, "cpu_share", json_real(share / (double)run->params.copies));
    if (run->stat_total[0] != UINT64_MAX && run->stat_total[1] != UINT64_MAX &&
        run->stat_total[1] > run->stat_total[0])
        json_object_set_new(obs, "steal_pct",
                            json_real(100.0 * (double)(run->stat_steal[1] - run->stat_steal[0]) /
                                      (double)(run->stat_total[1] - run->stat_total[0])));
    json_object_set_new(obs, "pinned", json_boolean(run->params.pin));
    if (run->params.pin) {
        json_t *cpus = json_array();
        for (long i = 0; i < run->params.copies; i++)
            json_array_append_new(cpus, json_integer(run->copies[i].cpu));
        json_object_set_new(obs, "cpus", cpus);
    }
    json_object_set_new(obs, "copy_scores", scores);
    json_t *list = json_array();
    for (size_t k = 0; k < N_KERNELS; k++)
        json_array_append_new(
            list,
            json_pack("{s:s, s:s, s:s, s:f, s:f, s:I, s:f}", "name", kernels[k].name, "metric",
                      kernels[k].metric, "work_unit", kernels[k].work_unit, "units_per_iteration",
                      kernels[k].units, "reference_rate", kernels[k].reference_rate, "iterations",
                      (json_int_t)iterations[k], "rate", rates[k]));
    json_object_set_new(obs, "kernels", list);
    json_object_set_new(obs, "score_formula",
                        json_string("per copy: 1000 x geometric mean over kernels of "
                                    "rate / reference_rate; cpu.score sums the copies"));
}

/* Turns the copies' counters into metrics and observed. */
static int report(struct cpu_run *run)
{
    double rates[N_KERNELS] = {0}, total = 0, seconds = 0;
    uint64_t iterations[N_KERNELS] = {0};
    json_t *scores = json_array();
    for (long i = 0; i < run->params.copies; i++) {
        struct copy *c = &run->copies[i];
        double rate[N_KERNELS];
        for (size_t k = 0; k < N_KERNELS; k++) {
            rate[k] = kernel_rate(k, c->iterations[k], c->ns[k]);
            rates[k] += rate[k];
            iterations[k] += c->iterations[k];
        }
        double s = copy_score(rate);
        json_array_append_new(scores, json_real(s));
        total += s;
        if (c->elapsed > seconds)
            seconds = c->elapsed;
    }
    add_observed(run, rates, iterations, seconds, scores);
    if (!(total > 0))
        return hv_engine_fail(run->out, "no kernel iteration completed");
    int rc = hv_engine_add_metric(run->out, "cpu.score", total, "score", true);
    rc |= hv_engine_add_metric(run->out, "cpu.score_per_copy", total / (double)run->params.copies,
                               "score", true);
    for (size_t k = 0; k < N_KERNELS; k++)
        rc |= hv_engine_add_metric(run->out, kernels[k].metric, rates[k], "ops/s", true);
    return rc == 0 ? 0 : hv_engine_fail(run->out, "cannot record the metrics");
}

int hv_engine_cpu_run(const struct hv_engine_ctx *ctx, struct hv_engine_result *out)
{
    struct cpu_run run = {.ctx = ctx, .out = out};
    if (parse_params(ctx->params, &run.params, out) != 0)
        return -1;
    long n = run.params.copies;
    run.sample_every_ns = (uint64_t)ceil(run.params.seconds / MAX_SAMPLES) * 1000000000u;
    run.copies = calloc((size_t)n, sizeof *run.copies);
    run.prev_iterations = calloc((size_t)n, sizeof *run.prev_iterations);
    run.prev_ns = calloc((size_t)n, sizeof *run.prev_ns);
    int rc = -1;
    if (run.copies == NULL || run.prev_iterations == NULL || run.prev_ns == NULL) {
        hv_engine_fail(out, "out of memory");
        goto done;
    }
    for (long i = 0; i < n; i++)
        run.copies[i] = (struct copy){.run = &run, .index = (int)i, .cpu = -1};
    if (run.params.pin && assign_cpus(&run) != 0)
        goto done;
    pthread_mutex_init(&run.gate_mu, NULL);
    pthread_cond_init(&run.gate_cv, NULL);
    int start_rc = start_copies(&run);
    /* Open the gate once every copy is set up; at once when a copy could
     * not start (the others then see abort and end). */
    pthread_mutex_lock(&run.gate_mu);
    while (start_rc == 0 && run.arrived < n)
        pthread_cond_wait(&run.gate_cv, &run.gate_mu);
    run.open = true;
    read_cpu_stat(&run.stat_total[0], &run.stat_steal[0]);
    pthread_cond_broadcast(&run.gate_cv);
    pthread_mutex_unlock(&run.gate_mu);
    for (long i = 0; i < n; i++)
        if (run.copies[i].started)
            pthread_join(run.copies[i].thread, NULL);
    read_cpu_stat(&run.stat_total[1], &run.stat_steal[1]);
    pthread_cond_destroy(&run.gate_cv);
    pthread_mutex_destroy(&run.gate_mu);
    if (start_rc != 0)
        goto done;
    for (long i = 0; i < n; i++)
        if (run.copies[i].failed) {
            hv_engine_fail(out, "%s", run.copies[i].error);
            goto done;
        }
    double ran = 0;
    for (long i = 0; i < n; i++)
        ran = run.copies[i].elapsed > ran ? run.copies[i].elapsed : ran;
    if (hv_engine_stopping(ctx)) {
        if (ran > 0)
            hv_engine_fail(out, "stopped after %.1f s of %.1f s", ran, run.params.seconds);
        else
            hv_engine_fail(out, "stopped during the setup or the %.1f s warm-up",
                           warmup_seconds(&run.params));
        goto done;
    }
    rc = report(&run);
done:
    free(run.series);
    free(run.copies);
    free(run.prev_iterations);
    free(run.prev_ns);
    return rc;
}
