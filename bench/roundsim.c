/* roundsim.c — see roundsim.h. */
#include "bench/roundsim.h"

#include "tests/unit/sim.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A model with the stop rule's settings and the noise every experiment
 * shares, its verdicts read at the margins listed. */
#define MODEL(effect, drift, bursts, ...)                                                          \
    {                                                                                              \
        .effect_pct = (effect), .cv_pct = 3.0, .drift_pct = (drift), .burst_share = (bursts),      \
        .burst_pct = 20.0, .rep_min = 3, .rep_max = 50, .ci_pct = HV_CI_PCT_DEFAULT,               \
        .n_margins = sizeof((double[]){__VA_ARGS__}) / sizeof(double), .margin_pct = {             \
            __VA_ARGS__                                                                            \
        }                                                                                          \
    }

const struct roundsim_experiment roundsim_experiments[] = {
    {"+5 %, noise only", 1, MODEL(5.0, 0.0, 0.0, HV_MARGIN_PCT_DEFAULT)},
    {"+5 %, drift and bursts", 2, MODEL(5.0, 1.0, 0.1, HV_MARGIN_PCT_DEFAULT)},
    {"null, noise only", 3, MODEL(0.0, 0.0, 0.0, 0.1, HV_MARGIN_PCT_DEFAULT)},
    {"null, drift and bursts", 4, MODEL(0.0, 1.0, 0.1, 0.1, HV_MARGIN_PCT_DEFAULT)},
};
const size_t roundsim_n_experiments = sizeof roundsim_experiments / sizeof roundsim_experiments[0];

/* From the first look at which trimming starts (5 rounds: one round off
 * each end) to the experiments' rep_max. */
const int roundsim_cover_at[ROUNDSIM_COVER_LOOKS] = {5, 10, 20, 50};

size_t roundsim_wrong(const struct roundsim_model *m, const size_t *v)
{
    if (m->effect_pct == 0.0)
        return v[HV_VERDICT_BETTER] + v[HV_VERDICT_WORSE];
    return m->effect_pct > 0.0 ? v[HV_VERDICT_WORSE] : v[HV_VERDICT_BETTER];
}

/* The comparison of level[0..n) against base[0..n) as the report states it
 * for a plan of one comparison, at margin_pct: the family verdict where
 * the interval is usable, else inconclusive (server/report_compare.c). */
static enum hv_verdict report_verdict(const double *level, const double *base, size_t n,
                                      double margin_pct)
{
    struct hv_log_group gl, gb;
    struct hv_ratio r;
    if (hv_log_group_of(level, n, &gl) != HV_STAT_OK || hv_log_group_of(base, n, &gb) != HV_STAT_OK)
        return HV_VERDICT_INCONCLUSIVE;
    /* A failed hv_effect leaves r without figures: no interval, not usable. */
    (void)hv_effect(&gl, &gb, 1, &r);
    bool usable = false, hib = true;
    char note[160];
    (void)hv_verdict_usable(&r, r.log.n_min, margin_pct, true, &usable, note, sizeof note);
    enum hv_verdict family = HV_VERDICT_INCONCLUSIVE;
    if (hv_family_verdicts(&r, 1, margin_pct, &hib, &family, NULL) != HV_STAT_OK)
        return HV_VERDICT_INCONCLUSIVE;
    return usable ? family : HV_VERDICT_INCONCLUSIVE;
}

const char *roundsim_arm_name(enum roundsim_arm arm)
{
    return arm == ROUNDSIM_SEQUENTIAL ? "sequential" : "today";
}

/* Today's rule on the series: stops by hv_adapt_next, verdicts at the
 * stop. */
static int run_today(const struct roundsim_model *m, const double *level, const double *base,
                     struct roundsim_seed *out)
{
    const double *series[2] = {base, level};
    struct hv_summary s[2];
    enum hv_adapt a = HV_ADAPT_MORE;
    int r = 0;
    while (a == HV_ADAPT_MORE) {
        r++;
        for (int c = 0; c < 2; c++)
            if (hv_summarize_scaled(series[c], (size_t)r, &s[c]) != HV_STAT_OK)
                return -1;
        a = hv_adapt_next(s, 2, m->ci_pct, r, m->rep_min, m->rep_max);
    }
    for (size_t i = 0; i < m->n_margins; i++) {
        out->rounds[i] = r;
        out->stop[i] = a == HV_ADAPT_PRECISE ? HV_SEQ_PRECISE : HV_SEQ_MAX;
        out->verdict[i] = report_verdict(level, base, (size_t)r, m->margin_pct[i]);
    }
    return 0;
}

/* The sequential arm on the series, one plan per margin. */
static int run_sequential(const struct roundsim_model *m, const struct hv_seq_design *d,
                          const double *level, const double *base, struct roundsim_seed *out)
{
    bool hib = true;
    for (size_t i = 0; i < m->n_margins; i++) {
        enum hv_seq_stop stop = HV_SEQ_MORE;
        enum hv_verdict v = HV_VERDICT_INCONCLUSIVE;
        int r = 0;
        while (stop == HV_SEQ_MORE) {
            r++;
            struct hv_ratio ratio = {.log = {.se = NAN}};
            v = HV_VERDICT_INCONCLUSIVE;
            if (r >= m->rep_min &&
                hv_effect_paired(level, base, 1, (size_t)r, &ratio) == HV_STAT_OK &&
                hv_seq_verdicts(d, r, &ratio, 1, m->margin_pct[i], &hib, &v) != HV_STAT_OK)
                return -1;
            stop = hv_seq_next(d, &ratio, &v, 1, m->ci_pct, r);
        }
        out->rounds[i] = r;
        out->stop[i] = stop;
        out->verdict[i] = v;
    }
    return 0;
}

/* out->covered: the arm's 95 % interval of the first rounds of the
 * series (m->rep_max of them) against the true effect. */
static void cover(const struct roundsim_model *m, enum roundsim_arm arm, const double *level,
                  const double *base, struct roundsim_seed *out)
{
    double truth = log1p(m->effect_pct / 100.0);
    for (size_t k = 0; k < ROUNDSIM_COVER_LOOKS; k++) {
        int n = roundsim_cover_at[k];
        struct hv_ratio r = {.log = {.lo = NAN, .hi = NAN}};
        struct hv_log_group gl, gb;
        if (n > m->rep_max)
            continue;
        if (arm == ROUNDSIM_SEQUENTIAL)
            (void)hv_effect_paired(level, base, 1, (size_t)n, &r);
        else if (hv_log_group_of(level, (size_t)n, &gl) == HV_STAT_OK &&
                 hv_log_group_of(base, (size_t)n, &gb) == HV_STAT_OK)
            (void)hv_effect(&gl, &gb, 1, &r);
        out->covered[k] = r.log.lo <= truth && truth <= r.log.hi;
    }
}

int roundsim_seed(const struct roundsim_model *m, enum roundsim_arm arm,
                  const struct hv_seq_design *d, uint64_t stream, uint64_t seed,
                  struct roundsim_seed *out)
{
    if (m->rep_min < 1 || m->rep_max < m->rep_min || m->n_margins < 1 ||
        m->n_margins > ROUNDSIM_MARGINS_MAX || (arm == ROUNDSIM_SEQUENTIAL && d == NULL))
        return -1;
    size_t cap = (size_t)m->rep_max;
    double *x = malloc(2 * cap * sizeof *x);
    if (x == NULL)
        return -1;
    double *base = x, *level = x + cap;
    double sigma = sqrt(log1p(m->cv_pct * m->cv_pct / 1e4));
    double mu[2] = {0.0, log1p(m->effect_pct / 100.0)};
    double *series[2] = {base, level};
    double walk = 0.0, burst = 1.0 + m->burst_pct / 100.0;
    uint64_t st = sim_state(stream, seed);
    /* Every round up to max, drawn in the order rounds are run: a plan
     * that stops at r has seen exactly the first r rounds. */
    for (size_t r = 0; r < cap; r++) {
        if (m->drift_pct > 0.0)
            walk += m->drift_pct / 100.0 * sim_normal(&st);
        for (int c = 0; c < 2; c++) {
            double v = 100.0 * exp(mu[c] + walk + sigma * sim_normal(&st));
            if (m->burst_share > 0.0 && hv_rng_uniform(&st) < m->burst_share)
                v *= burst;
            series[c][r] = v;
        }
    }
    memset(out, 0, sizeof *out);
    cover(m, arm, level, base, out);
    int rc = arm == ROUNDSIM_SEQUENTIAL ? run_sequential(m, d, level, base, out)
                                        : run_today(m, level, base, out);
    free(x);
    return rc;
}

/* The work shared by roundsim_run's threads: each takes the next seed. */
struct job {
    const struct roundsim_model *m;
    enum roundsim_arm arm;
    const struct hv_seq_design *d;
    uint64_t stream;
    size_t seeds, next;
    struct roundsim_seed *out;
    int failed;
};

static void *worker(void *arg)
{
    struct job *j = arg;
    for (;;) {
        size_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (i >= j->seeds)
            break;
        if (roundsim_seed(j->m, j->arm, j->d, j->stream, i, &j->out[i]) != 0)
            __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

int roundsim_run(const struct roundsim_model *m, enum roundsim_arm arm, uint64_t stream,
                 size_t seeds, int threads, struct roundsim_seed *out)
{
    struct hv_seq_design d = {0};
    struct job j = {.m = m, .arm = arm, .stream = stream, .seeds = seeds, .out = out};
    if (threads < 1)
        return -1;
    if (arm == ROUNDSIM_SEQUENTIAL) {
        if (hv_seq_design_init(&d, ROUNDSIM_SPEND, HV_FAMILY_ALPHA, m->rep_min, m->rep_max, 1) !=
            HV_STAT_OK)
            return -1;
        j.d = &d;
    }
    pthread_t *t = calloc((size_t)threads, sizeof *t);
    if (t == NULL) {
        hv_seq_design_free(&d);
        return -1;
    }
    int started = 0;
    for (; started < threads - 1; started++)
        if (pthread_create(&t[started], NULL, worker, &j) != 0)
            break;
    worker(&j); /* the calling thread is the last one */
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    free(t);
    hv_seq_design_free(&d);
    return j.failed || started < threads - 1 ? -1 : 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The q-quantile of sorted v[0..n): the smallest value with at least q·n
 * values at or below it (the inverse of the empirical distribution). */
static int quantile(const int *v, size_t n, double q)
{
    size_t k = (size_t)ceil(q * (double)n);
    return v[k > 0 ? k - 1 : 0];
}

int roundsim_tally(const struct roundsim_model *m, const struct roundsim_seed *s, size_t n,
                   struct roundsim_tally *t)
{
    *t = (struct roundsim_tally){.seeds = n};
    int *rounds = malloc(3 * n * sizeof *rounds);
    if (rounds == NULL || n == 0) {
        free(rounds);
        return -1;
    }
    int *better = rounds + n, *won = rounds + 2 * n;
    size_t n_won = 0;
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        t->precise += s[i].stop[0] == HV_SEQ_PRECISE;
        t->decided += s[i].stop[0] == HV_SEQ_DECIDED;
        sum += s[i].rounds[0];
        rounds[i] = s[i].rounds[0];
        /* "Never" sorts after every number of rounds. */
        better[i] = s[i].verdict[0] == HV_VERDICT_BETTER ? s[i].rounds[0] : INT32_MAX;
        if (s[i].verdict[0] == HV_VERDICT_BETTER)
            won[n_won++] = s[i].rounds[0];
        for (size_t k = 0; k < m->n_margins; k++)
            t->verdicts[k][s[i].verdict[k]]++;
        for (size_t k = 0; k < ROUNDSIM_COVER_LOOKS; k++)
            t->covered[k] += s[i].covered[k];
    }
    qsort(rounds, n, sizeof *rounds, cmp_int);
    qsort(better, n, sizeof *better, cmp_int);
    qsort(won, n_won, sizeof *won, cmp_int);
    t->mean_rounds = sum / (double)n;
    t->p50 = quantile(rounds, n, 0.5);
    t->p90 = quantile(rounds, n, 0.9);
    t->better_p50 = quantile(better, n, 0.5);
    t->better_p90 = quantile(better, n, 0.9);
    if (t->better_p50 == INT32_MAX)
        t->better_p50 = ROUNDSIM_NEVER;
    if (t->better_p90 == INT32_MAX)
        t->better_p90 = ROUNDSIM_NEVER;
    t->won_p50 = n_won > 0 ? quantile(won, n_won, 0.5) : ROUNDSIM_NEVER;
    t->won_p90 = n_won > 0 ? quantile(won, n_won, 0.9) : ROUNDSIM_NEVER;
    free(rounds);
    return 0;
}

double roundsim_upper95(size_t k, size_t n)
{
    if (k >= n)
        return 1.0;
    /* The p at which k or fewer events in n have probability 5 %:
     * P(X <= k) = 1 - I_p(k + 1, n - k), decreasing in p, solved by
     * bisection (gsl_cdf_beta_Pinv fails to converge for some k, n). */
    double a = (double)k + 1.0, b = (double)(n - k), lo = 0.0, hi = 1.0;
    for (int i = 0; i < 100 && hi - lo > 1e-12; i++) {
        double mid = 0.5 * (lo + hi);
        if (gsl_cdf_beta_P(mid, a, b) < 0.95)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}
