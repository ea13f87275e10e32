/* test_changepoint.c — E-Divisive means on histories of known truth: clear
 * steps found at their index, flat histories left alone, determinism from
 * the seed, refusals, and the rates of docs/statistics.md over 1,000 seeds
 * (a 10 % step in 60 points at CV 3 %; null histories). */
#include "changepoint.h"

#include "check.h"
#include "sim.h"

#define SEEDS 1000
#define N     60

/* mu until `at`, mu·(1 + step) from there, CV cv; at >= n for none. */
static void history(uint64_t *st, double *x, size_t n, size_t at, double step, double cv)
{
    for (size_t i = 0; i < n; i++)
        x[i] = 100.0 * (i >= at ? 1.0 + step : 1.0) * (1.0 + cv * sim_normal(st));
}

static void test_clear_steps(void)
{
    double x[N];
    struct hv_changepoint cp[8];
    size_t k;
    uint64_t st = sim_state(80, 0);
    history(&st, x, N, 30, 0.10, 0.005);
    CHECK(hv_changepoints(x, N, NULL, cp, 8, &k) == HV_STAT_OK);
    CHECK(k == 1);
    CHECK(cp[0].index == 30 && cp[0].n_before == 30 && cp[0].n_after == 30);
    CHECK_NEAR(cp[0].rel_change, 0.10, 0.005);
    CHECK(cp[0].p <= HV_CP_ALPHA && cp[0].q > 0.0);
    CHECK_NEAR(cp[0].p, 1.0 / (1.0 + HV_CP_PERMUTATIONS), 1e-15);

    /* Two steps, up then down: both, in index order, with the means of
     * the segments between them. */
    for (size_t i = 0; i < N; i++)
        x[i] = 100.0 * (i >= 20 && i < 45 ? 1.2 : 1.0) * (1.0 + 0.005 * sim_normal(&st));
    CHECK(hv_changepoints(x, N, NULL, cp, 8, &k) == HV_STAT_OK);
    CHECK(k == 2);
    CHECK(cp[0].index == 20 && cp[1].index == 45);
    CHECK(cp[0].n_before == 20 && cp[0].n_after == 25 && cp[1].n_after == 15);
    CHECK_NEAR(cp[0].rel_change, 0.20, 0.01);
    CHECK_NEAR(cp[1].rel_change, 1.0 / 1.2 - 1.0, 0.01);
    CHECK(cp[0].mean_after == cp[1].mean_before);

    /* A cap keeps the most significant first, still in index order. */
    CHECK(hv_changepoints(x, N, NULL, cp, 1, &k) == HV_STAT_OK && k == 1);
    CHECK(cp[0].index == 20 || cp[0].index == 45);
    CHECK(cp[0].n_before + cp[0].n_after == N);

    /* A step near the end, within the minimum window, cannot be placed
     * there: the split stays >= min_window from either end. */
    history(&st, x, N, 57, 0.10, 0.005);
    CHECK(hv_changepoints(x, N, NULL, cp, 8, &k) == HV_STAT_OK);
    for (size_t i = 0; i < k; i++)
        CHECK(cp[i].index >= HV_CP_MIN_WINDOW && cp[i].index <= N - HV_CP_MIN_WINDOW);
}

static void test_flat_and_short(void)
{
    double x[N];
    struct hv_changepoint cp[8];
    size_t k = 99;
    for (size_t i = 0; i < N; i++)
        x[i] = 42.0;
    CHECK(hv_changepoints(x, N, NULL, cp, 8, &k) == HV_STAT_OK && k == 0);
    /* Shorter than two windows: nothing to split. */
    double s[9] = {1, 1, 1, 1, 9, 9, 9, 9, 9};
    CHECK(hv_changepoints(s, 9, NULL, cp, 8, &k) == HV_STAT_OK && k == 0);
    CHECK(hv_changepoints(NULL, 0, NULL, cp, 8, &k) == HV_STAT_OK && k == 0);
    /* A smaller window finds it. */
    struct hv_cp_opts o;
    hv_cp_defaults(&o);
    o.min_window = 3;
    CHECK(hv_changepoints(s, 9, &o, cp, 8, &k) == HV_STAT_OK);
    /* With 9 points a shuffle is as well separated (1111|99999 or
     * 99999|1111) with probability 2/126, so p stays near 1/63: above
     * alpha = 0.01, below 0.05. */
    CHECK(k == 0);
    o.alpha = 0.05;
    CHECK(hv_changepoints(s, 9, &o, cp, 8, &k) == HV_STAT_OK && k == 1 && cp[0].index == 4);
}

static void test_determinism_and_refusals(void)
{
    double x[N];
    uint64_t st = sim_state(81, 0);
    history(&st, x, N, 25, 0.04, 0.03);
    struct hv_changepoint a[8], b[8];
    size_t ka, kb;
    struct hv_cp_opts o;
    hv_cp_defaults(&o);
    o.seed = 7;
    hv_changepoints(x, N, &o, a, 8, &ka);
    hv_changepoints(x, N, &o, b, 8, &kb);
    CHECK(ka == kb);
    for (size_t i = 0; i < ka && i < kb; i++)
        CHECK(a[i].index == b[i].index && a[i].p == b[i].p && a[i].q == b[i].q);

    size_t k;
    x[3] = NAN;
    CHECK(hv_changepoints(x, N, NULL, a, 8, &k) == HV_STAT_NOT_FINITE && k == 0);
    x[3] = INFINITY;
    CHECK(hv_changepoints(x, N, NULL, a, 8, &k) == HV_STAT_NOT_FINITE);
    x[3] = 100.0;
    o.min_window = 1;
    CHECK(hv_changepoints(x, N, &o, a, 8, &k) == HV_STAT_BAD_ARG);
    hv_cp_defaults(&o);
    o.alpha = 0.0;
    CHECK(hv_changepoints(x, N, &o, a, 8, &k) == HV_STAT_BAD_ARG);
    hv_cp_defaults(&o);
    o.permutations = 0;
    CHECK(hv_changepoints(x, N, &o, a, 8, &k) == HV_STAT_BAD_ARG);
    CHECK(hv_changepoints(x, N, NULL, a, 0, &k) == HV_STAT_OK && k == 0);
}

/* A step (10 %: the rate docs/statistics.md promises; 5 % and 3 % for
 * the record) at a seeded index in 10..50 of a 60-point history, CV 3 %:
 * how often a change point is found within ±3 points, and how often
 * another one is raised besides. */
static void sim_step(double step, double min_hit_pct)
{
    size_t hit = 0, extra = 0;
    double x[N];
    struct hv_changepoint cp[16];
    size_t k;
    for (uint64_t seed = 0; seed < SEEDS; seed++) {
        uint64_t st = sim_state(82, seed);
        size_t at = 10 + hv_rng_below(&st, 41);
        history(&st, x, N, at, step, 0.03);
        struct hv_cp_opts o;
        hv_cp_defaults(&o);
        o.seed = seed;
        CHECK(hv_changepoints(x, N, &o, cp, 16, &k) == HV_STAT_OK);
        bool found = false;
        size_t others = 0;
        for (size_t i = 0; i < k; i++) {
            bool near = cp[i].index + 3 >= at && cp[i].index <= at + 3;
            found |= near;
            others += !near;
        }
        hit += found;
        extra += others > 0;
    }
    printf("%.0f %% step in 60 points, CV 3 %%: found within +-3 in %.1f %% of seeds, "
           "another change point besides in %.1f %%\n",
           100.0 * step, sim_pct(hit, SEEDS), sim_pct(extra, SEEDS));
    CHECK(sim_pct(hit, SEEDS) >= min_hit_pct);
}

/* Null histories (60 points, CV 3 %) raise a change point in at most 5 %. */
static void sim_null(void)
{
    size_t any = 0;
    double x[N];
    struct hv_changepoint cp[16];
    size_t k;
    for (uint64_t seed = 0; seed < SEEDS; seed++) {
        uint64_t st = sim_state(83, seed);
        history(&st, x, N, N, 0.0, 0.03);
        struct hv_cp_opts o;
        hv_cp_defaults(&o);
        o.seed = seed;
        CHECK(hv_changepoints(x, N, &o, cp, 16, &k) == HV_STAT_OK);
        any += k > 0;
    }
    printf("null histories of 60 points, CV 3 %%: a change point in %.1f %% of seeds\n",
           sim_pct(any, SEEDS));
    CHECK(sim_pct(any, SEEDS) <= 5.0);
}

int main(void)
{
    test_clear_steps();
    test_flat_and_short();
    test_determinism_and_refusals();
    sim_step(0.10, 90.0);
    sim_step(0.05, 80.0);
    sim_step(0.03, 25.0);
    sim_null();
    return check_summary("test_changepoint");
}
