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

#include "timeutil.h"
#include "worker/engines/cpu_kernels.h"
#include "grow.h"

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

/* A copy scores SCORE_SCALE x the geometric mean of rate / reference rate
 * (cpu_kernels.h). */
#define SCORE_SCALE 1000.0

/* At most this many samples per run (each about 60 bytes of the result
 * upload, whose body the server caps at 1 MiB by default): runs longer
 * than this many seconds sample every ceil(seconds / MAX_SAMPLES) s. */
#define MAX_SAMPLES 3600
/* The longest warm-up; shorter runs warm up for a tenth of seconds. */
#define WARMUP_MAX 1.0

/* The score of one copy from its per-kernel rates. */
static double copy_score(const double rate[HV_CPU_N_KERNELS])
{
    double log_sum = 0;
    for (size_t k = 0; k < HV_CPU_N_KERNELS; k++) {
        if (!(rate[k] > 0))
            return 0;
        log_sum += log(rate[k] / hv_cpu_kernels[k].reference_rate);
    }
    return SCORE_SCALE * exp(log_sum / (double)HV_CPU_N_KERNELS);
}

/* ---------------------------------------------------------------------
 * Settings, from the params lib/params.c checked. */

int hv_cpu_settings(const json_t *params, long cpus, struct hv_cpu_settings *s, char *err,
                    size_t len)
{
    const struct hv_engine_def *def = &hv_engine_def_cpu_builtin;
    json_t *p = hv_engine_params_check(def, params, cpus, err, len);
    if (p == NULL)
        return -1;
    *s = (struct hv_cpu_settings){.copies = hv_params_count(def, p, "copies", cpus),
                                  .seconds = hv_params_num(p, "seconds"),
                                  .pin = hv_params_bool(p, "pin")};
    json_decref(p);
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
    void *state[HV_CPU_N_KERNELS];
    /* Written by the copy, read by copy 0's sampler: atomic accesses. */
    uint64_t iterations[HV_CPU_N_KERNELS];
    uint64_t ns[HV_CPU_N_KERNELS];
    double elapsed;  /* seconds from the start gate to the copy's end */
    double cpu_time; /* CPU seconds the copy's thread got meanwhile */
    bool failed;
    char error[300];
};

/* The whole run. */
struct cpu_run {
    const struct hv_engine_ctx *ctx;
    struct hv_engine_result *out;
    struct hv_cpu_settings params;
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
    uint64_t (*prev_iterations)[HV_CPU_N_KERNELS];
    uint64_t (*prev_ns)[HV_CPU_N_KERNELS];
    double *series; /* the samples' values, for the steady-state test */
    size_t n_series, cap_series;
};

/* The warm-up before the measured seconds (see the top of the file). */
static double warmup_seconds(const struct hv_cpu_settings *p)
{
    return p->seconds / 10 < WARMUP_MAX ? p->seconds / 10 : WARMUP_MAX;
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
    return ns > 0 ? (double)iterations * hv_cpu_kernels[k].units / ((double)ns * 1e-9) : 0;
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
        double rate[HV_CPU_N_KERNELS];
        for (size_t k = 0; k < HV_CPU_N_KERNELS; k++) {
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
    if (hv_grow(&run->series, &run->cap_series, run->n_series, sizeof *run->series, 64) == 0)
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
    uint64_t warm_end = hv_monotonic_ns() + (uint64_t)(warmup_seconds(&run->params) * 1e9);
    for (size_t k = 0; hv_monotonic_ns() < warm_end; k = (k + 1) % HV_CPU_N_KERNELS) {
        if (run_stopping(run))
            return;
        char why[200];
        if (hv_cpu_kernels[k].iterate(c->state[k], why, sizeof why) != 0) {
            copy_fail(c, hv_cpu_kernels[k].name, "failed its self-check", why);
            return;
        }
    }
    double cpu_start = thread_cpu_seconds();
    uint64_t start = hv_monotonic_ns();
    uint64_t deadline = start + (uint64_t)(run->params.seconds * 1e9);
    if (c->index == 0) {
        run->t0_ns = start;
        run->next_sample_ns = start + run->sample_every_ns;
    }
    for (uint64_t round = 0;; round++)
        for (size_t k = 0; k < HV_CPU_N_KERNELS; k++) {
            if (run_stopping(run))
                goto out;
            char why[200];
            uint64_t t1 = hv_monotonic_ns();
            int rc = hv_cpu_kernels[k].iterate(c->state[k], why, sizeof why);
            uint64_t t2 = hv_monotonic_ns();
            if (rc != 0) {
                copy_fail(c, hv_cpu_kernels[k].name, "failed its self-check", why);
                goto out;
            }
            __atomic_store_n(&c->iterations[k], c->iterations[k] + 1, __ATOMIC_RELAXED);
            __atomic_store_n(&c->ns[k], c->ns[k] + (t2 - t1), __ATOMIC_RELAXED);
            if (c->index == 0 && t2 >= run->next_sample_ns)
                take_sample(run, t2);
            if ((round > 0 || k == HV_CPU_N_KERNELS - 1) && t2 >= deadline)
                goto out;
        }
out:
    c->elapsed = (double)(hv_monotonic_ns() - start) * 1e-9;
    c->cpu_time = thread_cpu_seconds() - cpu_start;
}

static void *copy_main(void *arg)
{
    struct copy *c = arg;
    hv_engine_thread_name("hv-cpu");
    /* Set up after pinning, so the memory is first touched (and thus
     * placed) on the copy's own NUMA node. */
    struct cpu_run *run = c->run;
    for (size_t k = 0; k < HV_CPU_N_KERNELS && !c->failed && !run_stopping(run); k++) {
        char why[200];
        c->state[k] = hv_cpu_kernels[k].setup(why, sizeof why);
        if (c->state[k] == NULL)
            copy_fail(c, hv_cpu_kernels[k].name, "setup failed", why);
    }
    pthread_mutex_lock(&run->gate_mu);
    run->arrived++;
    pthread_cond_broadcast(&run->gate_cv);
    while (!run->open)
        pthread_cond_wait(&run->gate_cv, &run->gate_mu);
    pthread_mutex_unlock(&run->gate_mu);
    if (!c->failed && !run_stopping(run))
        copy_loop(c);
    for (size_t k = 0; k < HV_CPU_N_KERNELS; k++)
        if (c->state[k] != NULL)
            hv_cpu_kernels[k].teardown(c->state[k]);
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

static void add_observed(struct cpu_run *run, const double rates[HV_CPU_N_KERNELS],
                         const uint64_t iterations[HV_CPU_N_KERNELS], double seconds,
                         json_t *scores)
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
    for (size_t k = 0; k < HV_CPU_N_KERNELS; k++)
        json_array_append_new(list,
                              json_pack("{s:s, s:s, s:s, s:f, s:f, s:I, s:f}", "name",
                                        hv_cpu_kernels[k].name, "metric", hv_cpu_kernels[k].metric,
                                        "work_unit", hv_cpu_kernels[k].work_unit,
                                        "units_per_iteration", hv_cpu_kernels[k].units,
                                        "reference_rate", hv_cpu_kernels[k].reference_rate,
                                        "iterations", (json_int_t)iterations[k], "rate", rates[k]));
    json_object_set_new(obs, "kernels", list);
    json_object_set_new(obs, "score_formula",
                        json_string("per copy: 1000 x geometric mean over kernels of "
                                    "rate / reference_rate; cpu.score sums the copies"));
}

/* Turns the copies' counters into metrics and observed. */
static int report(struct cpu_run *run)
{
    double rates[HV_CPU_N_KERNELS] = {0}, total = 0, seconds = 0;
    uint64_t iterations[HV_CPU_N_KERNELS] = {0};
    json_t *scores = json_array();
    for (long i = 0; i < run->params.copies; i++) {
        struct copy *c = &run->copies[i];
        double rate[HV_CPU_N_KERNELS];
        for (size_t k = 0; k < HV_CPU_N_KERNELS; k++) {
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
    for (size_t k = 0; k < HV_CPU_N_KERNELS; k++)
        rc |= hv_engine_add_metric(run->out, hv_cpu_kernels[k].metric, rates[k], "ops/s", true);
    return rc == 0 ? 0 : hv_engine_fail(run->out, "cannot record the metrics");
}

int hv_engine_cpu_run(const struct hv_engine *e, const struct hv_engine_ctx *ctx,
                      struct hv_engine_result *out)
{
    (void)e;
    struct cpu_run run = {.ctx = ctx, .out = out};
    if (hv_cpu_settings(ctx->params, hv_engine_cpus(), &run.params, out->error,
                        sizeof out->error) != 0)
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
