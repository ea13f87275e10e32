/* test_stats.c — summaries, log-scale intervals, running moments, outlier
 * flags and the adaptive stop rule, against values computed independently
 * (tests/unit/ref_stats.py: Python's standard library, not GSL; R's
 * qt(0.975, df) for the t quantiles), and against data of known truth
 * (1,000 seeds each). */
#include "adaptive.h"
#include "stats.h"

#include "check.h"
#include "sim.h"

#define SEEDS 1000

static void test_quantiles(void)
{
    CHECK_NEAR(hv_t_quantile(0.975, 1), 12.7062047, 1e-6);
    CHECK_NEAR(hv_t_quantile(0.975, 2), 4.30265273, 1e-7);
    CHECK_NEAR(hv_t_quantile(0.975, 9), 2.26215716, 1e-7);
    CHECK_NEAR(hv_t_quantile(0.975, 1000), 1.96233908, 1e-7);
}

static void test_arithmetic(void)
{
    /* 3 observations: mean 1020, sd 10, half-width 4.30265 * 10 / sqrt(3). */
    double x[] = {1010, 1020, 1030};
    struct hv_summary s;
    CHECK(hv_summarize(x, 3, &s) == HV_STAT_OK);
    CHECK(s.n == 3);
    CHECK_NEAR(s.mean, 1020.0, 1e-12);
    CHECK_NEAR(s.sd, 10.0, 1e-12);
    CHECK_NEAR(s.cv_pct, 0.980392156863, 1e-10);
    CHECK(s.has_ci);
    CHECK_NEAR(s.ci_low, 1020.0 - 24.84138, 1e-4);
    CHECK_NEAR(s.ci_high, 1020.0 + 24.84138, 1e-4);
    CHECK_NEAR(s.half_pct, 2.4354291, 1e-6);

    /* Welford stays exact where the naive sum of squares would not. */
    double big[] = {1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16};
    hv_summarize(big, 4, &s);
    CHECK_NEAR(s.mean, 1e9 + 10, 1e-6);
    CHECK_NEAR(s.sd, sqrt(30.0), 1e-9);

    /* From moments, as the server gets them from SQL: linear only. */
    hv_summarize_moments(10, 50.0, 2.0, &s);
    CHECK_NEAR(s.ci_high - s.mean, 2.26215716 * 2.0 / sqrt(10.0), 1e-7);
    CHECK(s.scale == HV_CI_LINEAR);
    CHECK_NEAR(s.cv_pct, 4.0, 1e-12);

    /* A zero mean has no relative width and no CV. */
    hv_summarize_moments(4, 0.0, 1.0, &s);
    CHECK(isnan(s.half_pct));
    CHECK(isnan(s.cv_pct));
}

static void test_log_interval(void)
{
    struct hv_summary s;
    double x[] = {96, 100, 104, 110};
    CHECK(hv_summarize(x, 4, &s) == HV_STAT_OK);
    CHECK(s.scale == HV_CI_LOG);
    CHECK_STR(hv_ci_scale_name(s.scale), "log");
    CHECK_NEAR(s.center, 102.370379759, 1e-8);
    CHECK_NEAR(s.lo, 93.3447949268, 1e-8);
    CHECK_NEAR(s.hi, 112.268655797, 1e-8);
    CHECK_NEAR(s.sd_log, 0.0580039956658, 1e-11);
    CHECK_NEAR(s.rel_half_pct, 9.66908207309, 1e-8);
    CHECK_NEAR(s.cv_pct, 5.82649524136, 1e-9);
    CHECK(s.n == 4);

    double y[] = {1010, 1020, 1030};
    hv_summarize(y, 3, &s);
    CHECK_NEAR(s.center, 1019.96731921, 1e-7);
    CHECK_NEAR(s.lo, 995.425910788, 1e-7);
    CHECK_NEAR(s.hi, 1045.11377591, 1e-7);

    /* A zero: no logarithm, so the arithmetic interval, which may cross
     * zero, and the summary says so. */
    double z[] = {0, 2, 4};
    CHECK(hv_summarize(z, 3, &s) == HV_STAT_OK);
    CHECK(s.scale == HV_CI_LINEAR);
    CHECK_STR(hv_ci_scale_name(s.scale), "linear");
    CHECK_NEAR(s.center, 2.0, 1e-12);
    CHECK_NEAR(s.lo, 2.0 - 4.30265273 * 2.0 / sqrt(3.0), 1e-6);
    CHECK(isnan(s.mean_log));
    CHECK(s.lo < 0.0 && !s.lo_clamped);
    /* A quantity that cannot be negative: the bound stops at 0. */
    hv_summary_nonneg(&s);
    CHECK(s.lo == 0.0 && s.lo_clamped && s.ci_low < 0.0);
    CHECK_NEAR(s.hi, 2.0 + 4.30265273 * 2.0 / sqrt(3.0), 1e-6);
    double neg[] = {-1, 1, 3};
    hv_summarize(neg, 3, &s);
    CHECK(s.scale == HV_CI_LINEAR);
    CHECK_NEAR(s.mean, 1.0, 1e-12);

    /* Zero spread: the interval is the point. */
    double same[] = {5, 5, 5};
    hv_summarize(same, 3, &s);
    CHECK(s.scale == HV_CI_LOG);
    CHECK(s.lo == s.hi && s.sd == 0.0 && s.cv_pct == 0.0 && s.sd_log == 0.0);
    hv_summary_nonneg(&s);
    CHECK(!s.lo_clamped);
    CHECK_NEAR(s.lo, 5.0, 1e-12);

    /* Two values: t(0.975, 1) = 12.706. */
    double two[] = {100, 110};
    hv_summarize(two, 2, &s);
    double ml = 0.5 * (log(100) + log(110)), sl = fabs(log(110) - log(100)) / sqrt(2.0);
    CHECK_NEAR(s.hi, exp(ml + 12.7062047 * sl / sqrt(2.0)), 1e-4);

    /* One value: no interval. */
    hv_summarize(y, 1, &s);
    CHECK(s.n == 1 && !s.has_ci && s.sd == 0.0 && s.scale == HV_CI_NONE);
    CHECK(isnan(s.ci_low) && isnan(s.lo) && isnan(s.cv_pct));
    CHECK(s.mean == 1010.0);
    hv_summarize(NULL, 0, &s);
    CHECK(s.n == 0 && isnan(s.mean));

    /* NaN and infinity are refused, not skipped. */
    double bad[] = {1, NAN, 3};
    CHECK(hv_summarize(bad, 3, &s) == HV_STAT_NOT_FINITE);
    CHECK(s.n == 3 && isnan(s.mean) && s.scale == HV_CI_NONE);
    bad[1] = INFINITY;
    CHECK(hv_summarize(bad, 3, &s) == HV_STAT_NOT_FINITE);
    CHECK_STR(hv_stat_err_str(HV_STAT_NOT_FINITE), "a value is NaN or infinite");
}

/* The same figures from values, from running moments added one by one,
 * from two halves merged, and from SQL-style figures. */
static void test_moments(void)
{
    double x[] = {96, 100, 104, 110, 97, 121, 99};
    size_t n = 7;
    struct hv_summary a, b;
    hv_summarize(x, n, &a);
    struct hv_moments m, h1, h2, q;
    hv_moments_init(&h1);
    hv_moments_init(&h2);
    for (size_t i = 0; i < n; i++)
        CHECK(hv_moments_add(i < 3 ? &h1 : &h2, x[i]) == HV_STAT_OK);
    m = h1;
    hv_moments_merge(&m, &h2);
    hv_moments_summary(&m, &b);
    CHECK(b.n == n && b.scale == HV_CI_LOG);
    CHECK_NEAR(b.mean, a.mean, 1e-12);
    CHECK_NEAR(b.sd, a.sd, 1e-12);
    CHECK_NEAR(b.lo, a.lo, 1e-10);
    CHECK_NEAR(b.hi, a.hi, 1e-10);
    CHECK(hv_moments_add(&m, NAN) == HV_STAT_NOT_FINITE && m.n == n);

    CHECK(hv_moments_set(&q, n, a.mean, a.sd, a.mean_log, a.sd_log, 0) == HV_STAT_OK);
    hv_moments_summary(&q, &b);
    CHECK_NEAR(b.hi, a.hi, 1e-10);
    CHECK_NEAR(b.center, a.center, 1e-10);
    CHECK(hv_moments_set(&q, 3, 1, -1, 0, 0, 0) == HV_STAT_BAD_ARG);
    CHECK(hv_moments_set(&q, 3, NAN, 1, 0, 0, 0) == HV_STAT_NOT_FINITE);
    CHECK(hv_moments_set(&q, 3, 1, 1, 0, 0, 4) == HV_STAT_BAD_ARG);

    /* A value <= 0 turns the summary linear and the log group away. */
    hv_moments_add(&m, 0.0);
    hv_moments_summary(&m, &b);
    CHECK(b.scale == HV_CI_LINEAR && b.n == n + 1);
    struct hv_log_group g;
    CHECK(hv_moments_log_group(&m, &g) == HV_STAT_NOT_POSITIVE);
    CHECK(hv_moments_log_group(&h1, &g) == HV_STAT_OK);
    CHECK(g.n == 3);
    CHECK_NEAR(g.mean, (log(96) + log(100) + log(104)) / 3.0, 1e-12);
    CHECK(hv_log_group_of(x, n, &g) == HV_STAT_OK && g.n == n);
    CHECK_NEAR(g.var, a.sd_log * a.sd_log, 1e-14);
}

static void test_outliers(void)
{
    /* Scores from tests/unit/ref_stats.py. */
    double x[] = {10.1, 9.9, 10.0, 10.2, 9.8, 14.0};
    double want[] = {0.2248333333, -0.6745, -0.2248333333, 0.6745, -1.1241666667, 17.7618333333};
    double score[6];
    bool flag[6];
    size_t k;
    CHECK(hv_outliers(x, 6, score, flag, &k) == HV_STAT_OK);
    CHECK(k == 1);
    for (size_t i = 0; i < 6; i++) {
        CHECK_NEAR(score[i], want[i], 1e-9);
        CHECK(flag[i] == (i == 5));
    }
    /* MAD 0: the mean absolute deviation stands in. 40/(1.253314·8). */
    double y[] = {10, 10, 10, 10, 50};
    CHECK(hv_outliers(y, 5, score, flag, &k) == HV_STAT_OK);
    CHECK(k == 1 && flag[4] && !flag[0]);
    CHECK_NEAR(score[4], 40.0 / (1.253314 * 8.0), 1e-9);
    /* All equal, one value, none: nothing flagged. */
    double z[] = {3, 3, 3};
    CHECK(hv_outliers(z, 3, score, flag, &k) == HV_STAT_OK && k == 0 && score[1] == 0.0);
    CHECK(hv_outliers(z, 1, NULL, flag, &k) == HV_STAT_OK && k == 0 && !flag[0]);
    CHECK(hv_outliers(NULL, 0, NULL, NULL, &k) == HV_STAT_OK && k == 0);
    double bad[] = {1, 2, NAN};
    CHECK(hv_outliers(bad, 3, score, flag, &k) == HV_STAT_NOT_FINITE);
}

/* Summaries with a given reported relative half-width. */
static struct hv_summary width(double rel_half_pct)
{
    struct hv_summary s;
    hv_summarize_moments(5, 100.0, 1.0, &s);
    s.rel_half_pct = rel_half_pct;
    if (isnan(rel_half_pct))
        s.scale = HV_CI_NONE;
    return s;
}

static void test_adaptive(void)
{
    struct hv_summary s[3] = {width(1.5), width(2.5), width(1.9)};
    size_t widest;
    CHECK(!hv_ci_reached(s, 3, 2.0, &widest) && widest == 1);
    CHECK(hv_ci_reached(s, 3, 2.5, &widest) && widest == 1);
    CHECK(hv_adapt_next(s, 3, 2.0, 2, 3, 10) == HV_ADAPT_MORE);    /* below min */
    CHECK(hv_adapt_next(s, 3, 2.0, 3, 3, 10) == HV_ADAPT_MORE);    /* too wide */
    CHECK(hv_adapt_next(s, 3, 3.0, 3, 3, 10) == HV_ADAPT_PRECISE); /* all within */
    CHECK(hv_adapt_next(s, 3, 2.0, 10, 3, 10) == HV_ADAPT_MAX);    /* max reached */
    CHECK(hv_adapt_next(s, 3, 3.0, 10, 3, 10) == HV_ADAPT_PRECISE);
    CHECK_STR(hv_adapt_name(HV_ADAPT_MAX), "max");
    /* No interval (n < 2, or a zero mean) is never precise enough. */
    s[2] = width(NAN);
    CHECK(!hv_ci_reached(s, 3, 50.0, &widest) && widest == 2);
    CHECK(hv_ci_reached(s, 0, 2.0, NULL));
}

/* An interval too short or too wide to print is named in words, with the
 * rounds that would give the plan's width: the n at which the stop rule's
 * own measure (rel_half_pct of hv_summarize) first falls within it. */
static void test_interval_note(void)
{
    double two[] = {100.0, 130.0};
    struct hv_summary s;
    hv_summarize(two, 2, &s);
    char note[200];
    CHECK(!hv_interval_note(&s, 2.0, note, sizeof note));
    size_t need = hv_rounds_for_width(&s, 2.0, 1000);
    CHECK(need > 2);
    /* At need rounds of the same spread the stop rule's width is reached,
     * at need - 1 not. */
    for (size_t n = need - 1; n <= need; n++) {
        double h =
            100.0 * expm1(hv_t_quantile(0.975, (double)(n - 1)) * s.sd_log / sqrt((double)n));
        CHECK(n == need ? h <= 2.0 : h > 2.0);
    }
    char want[200];
    snprintf(want, sizeof want,
             "n = 2: too few rounds for an interval; about %zu more would give \xc2\xb1"
             "2 %%",
             need - 2);
    CHECK_STR(note, want);
    /* n = 1: no spread to go by. */
    hv_summarize(two, 1, &s);
    CHECK(!hv_interval_note(&s, 2.0, note, sizeof note));
    CHECK_STR(note, "n = 1: too few rounds for an interval");
    /* Three rounds within ±100 %: printed. */
    double three[] = {100.0, 101.0, 99.0};
    hv_summarize(three, 3, &s);
    CHECK(hv_interval_note(&s, 2.0, note, sizeof note) && note[0] == '\0');
    CHECK(hv_rounds_for_width(&s, 50.0, 1000) == 3);
    /* Three rounds past ±100 %: words instead. */
    double wild[] = {1.0, 100.0, 10000.0};
    hv_summarize(wild, 3, &s);
    CHECK(s.rel_half_pct > 100.0);
    CHECK(!hv_interval_note(&s, 2.0, note, sizeof note));
    CHECK(strncmp(note, "n = 3: the interval is too wide to use", 38) == 0);
    /* The scaled summary reads the same relative widths. */
    struct hv_summary u;
    hv_summarize_scaled(three, 3, &u);
    hv_summarize(three, 3, &s);
    CHECK(fabs(u.rel_half_pct - s.rel_half_pct) < 1e-12 && fabs(u.center - s.center) < 1e-9);
}

/* A % change's interval is printed, as a summary's, only with n >= 3,
 * finite bounds and a half-width within ±100 %. */
static void test_contrast_note(void)
{
    static const struct {
        size_t n;
        double lo, hi;
        bool usable;
        const char *note;
    } cases[] = {
        {2, -98.7, 833414.7, false, "n = 2: too few rounds for an interval"},
        {2, 4.0, 6.0, false, "n = 2: too few rounds for an interval"},
        {3, 4.0, 6.0, true, ""},
        {3, -100.0, 100.0, true, ""},
        {3, -100.0, 100.2, false, "n = 3: the interval is too wide to use"},
        {4, -99.9, 277000553.4, false, "n = 4: the interval is too wide to use"},
        {5, -12.0, INFINITY, false, "n = 5: no interval"},
        {5, NAN, 3.0, false, "n = 5: no interval"},
        {1, NAN, NAN, false, "n = 1: too few rounds for an interval"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char note[200] = "x";
        CHECK(hv_contrast_note(cases[i].n, cases[i].lo, cases[i].hi, note, sizeof note) ==
              cases[i].usable);
        CHECK_STR(note, cases[i].note);
    }
    /* A short buffer: the judgement alone, the words cut. */
    char small[8];
    CHECK(!hv_contrast_note(2, 4.0, 6.0, small, sizeof small) && strcmp(small, "n = 2: ") == 0);
    CHECK(hv_contrast_note(3, 4.0, 6.0, NULL, 0));
}

/* The log interval covers the true geometric mean of lognormal data. */
static void sim_log_coverage(double sigma, size_t n, double min_pct)
{
    size_t covered = 0;
    double x[16];
    for (uint64_t seed = 0; seed < SEEDS; seed++) {
        uint64_t st = sim_state(1, seed);
        for (size_t i = 0; i < n; i++)
            x[i] = 100.0 * exp(sigma * sim_normal(&st));
        struct hv_summary s;
        hv_summarize(x, n, &s);
        covered += s.lo <= 100.0 && 100.0 <= s.hi;
    }
    printf("log interval, lognormal sigma %.2f, n = %zu: covers the geometric mean in %.1f %%\n",
           sigma, n, sim_pct(covered, SEEDS));
    CHECK(sim_pct(covered, SEEDS) >= min_pct);
}

/* Skewed positive data: the arithmetic interval often goes below zero,
 * the log interval never. */
static void sim_never_negative(void)
{
    size_t lin_neg = 0, log_neg = 0;
    double x[3];
    for (uint64_t seed = 0; seed < SEEDS; seed++) {
        uint64_t st = sim_state(2, seed);
        for (size_t i = 0; i < 3; i++)
            x[i] = exp(1.0 * sim_normal(&st));
        struct hv_summary s;
        hv_summarize(x, 3, &s);
        lin_neg += s.ci_low < 0.0;
        log_neg += s.lo < 0.0 || s.scale != HV_CI_LOG;
    }
    printf("lognormal sigma 1, n = 3: arithmetic lower bound < 0 in %.1f %%, log in %.1f %%\n",
           sim_pct(lin_neg, SEEDS), sim_pct(log_neg, SEEDS));
    CHECK(log_neg == 0);
    CHECK(lin_neg > 0);
}

/* The stop rule on one configuration, CV 3 %, ci_pct 2, max 50.
 * Stopping as soon as the width is reached favours stops where the sd
 * happens to be low, so the interval at the stop covers less than 95 %;
 * a larger min narrows the shortfall (docs/statistics.md). The bound
 * guards it from growing. */
static void sim_adaptive(int rep_min, double min_cover_pct)
{
    size_t precise = 0, covered = 0, rounds_sum = 0;
    double x[50];
    for (uint64_t seed = 0; seed < SEEDS; seed++) {
        uint64_t st = sim_state(3, seed);
        struct hv_summary s;
        int r = 0;
        enum hv_adapt a;
        do {
            x[r] = 100.0 * exp(0.03 * sim_normal(&st));
            r++;
            hv_summarize(x, (size_t)r, &s);
        } while ((a = hv_adapt_next(&s, 1, 2.0, r, rep_min, 50)) == HV_ADAPT_MORE);
        precise += a == HV_ADAPT_PRECISE;
        CHECK(a == HV_ADAPT_MAX || s.rel_half_pct <= 2.0);
        covered += s.lo <= 100.0 && 100.0 <= s.hi;
        rounds_sum += (size_t)r;
    }
    printf("adaptive, CV 3 %%, ci_pct 2, %d..50 rounds: precise in %.1f %%, mean rounds %.2f, "
           "coverage at the stop %.1f %%\n",
           rep_min, sim_pct(precise, SEEDS), (double)rounds_sum / SEEDS, sim_pct(covered, SEEDS));
    CHECK(precise == SEEDS);
    CHECK(sim_pct(covered, SEEDS) >= min_cover_pct);
}

int main(void)
{
    test_quantiles();
    test_arithmetic();
    test_log_interval();
    test_moments();
    test_outliers();
    test_adaptive();
    test_interval_note();
    test_contrast_note();
    sim_log_coverage(0.03, 5, 93.5);
    sim_log_coverage(0.5, 5, 93.5);
    sim_log_coverage(0.03, 10, 93.5);
    sim_never_negative();
    sim_adaptive(3, 87.0);
    sim_adaptive(5, 89.5);
    return check_summary("test_stats");
}
