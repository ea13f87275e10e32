/* test_compare.c — ratios of two configurations on logs, verdicts,
 * rounds to decide, main effects and Holm's adjustment: values against
 * tests/unit/ref_stats.py (Python's standard library, not GSL) and R's
 * p.adjust, then the known-truth simulations of docs/statistics.md, 1,000
 * seeds each, with their rates printed. */
#include "compare.h"

#include "check.h"
#include "sim.h"

#define SEEDS  1000
#define MARGIN HV_MARGIN_PCT_DEFAULT

static void test_welch_reference(void)
{
    double a[] = {102, 98, 105, 101, 99}, b[] = {95, 97, 93, 96, 99};
    struct hv_ratio r;
    CHECK(hv_compare(a, 5, b, 5, &r) == HV_STAT_OK);
    CHECK_NEAR(r.log.est, 0.0506971208457, 1e-12);
    CHECK_NEAR(r.log.se, 0.0159469121611, 1e-12);
    CHECK_NEAR(r.log.df, 7.83295923171, 1e-9);
    CHECK_NEAR(r.pct, 5.20042148782, 1e-9);
    CHECK_NEAR(r.lo_pct, 1.38819970066, 1e-7);
    CHECK_NEAR(r.hi_pct, 9.15598377217, 1e-7);
    CHECK_NEAR(r.p, 0.0133758533039, 1e-9);
    CHECK(r.log.n_min == 5 && r.log.runs == 10 && r.cells == 1 && !r.log.degenerate);
    CHECK(hv_verdict_of(&r, MARGIN, true) == HV_VERDICT_BETTER);
    CHECK(hv_verdict_of(&r, MARGIN, false) == HV_VERDICT_WORSE);
    CHECK(hv_verdict_of(&r, 2.0, true) == HV_VERDICT_INCONCLUSIVE);

    /* Unequal n and spread. */
    double c[] = {10.0, 10.2, 9.9}, d[] = {11.5, 12.4, 11.9, 12.0, 12.2, 11.8};
    CHECK(hv_compare(c, 3, d, 6, &r) == HV_STAT_OK);
    CHECK_NEAR(r.log.df, 6.57645074982, 1e-9);
    CHECK_NEAR(r.pct, -16.1383260647, 1e-9);
    CHECK_NEAR(r.lo_pct, -18.8773390169, 1e-7);
    CHECK_NEAR(r.hi_pct, -13.3068335036, 1e-7);
    CHECK_NEAR(r.p, 7.19446954278e-06, 1e-12);
    CHECK(r.log.n_min == 3 && r.log.runs == 9);
    CHECK(hv_verdict_of(&r, MARGIN, false) == HV_VERDICT_BETTER);
}

static void test_main_effect_reference(void)
{
    /* Two cells of the other factors; the level vs the default in each. */
    double l0[] = {105, 107, 104}, b0[] = {100, 101, 99};
    double l1[] = {210, 216, 207, 212}, b1[] = {200, 198, 203};
    struct hv_log_group lv[2], bs[2];
    hv_log_group_of(l0, 3, &lv[0]);
    hv_log_group_of(b0, 3, &bs[0]);
    hv_log_group_of(l1, 4, &lv[1]);
    hv_log_group_of(b1, 3, &bs[1]);
    struct hv_ratio r;
    CHECK(hv_effect(lv, bs, 2, &r) == HV_STAT_OK);
    CHECK_NEAR(r.log.est, 0.0524579015445, 1e-12);
    CHECK_NEAR(r.log.se, 0.00766830296742, 1e-12);
    CHECK_NEAR(r.log.df, 8.53709875441, 1e-9);
    CHECK_NEAR(r.lo_pct, 3.55850694173, 1e-7);
    CHECK_NEAR(r.hi_pct, 7.24537545863, 1e-7);
    CHECK(r.cells == 2 && r.log.n_min == 3 && r.log.runs == 13);
    CHECK(hv_effect(lv, bs, 0, &r) == HV_STAT_BAD_ARG);
}

/* A ratio with a given 95 % interval in %. */
static struct hv_ratio interval(double lo, double hi)
{
    struct hv_ratio r = {.lo_pct = lo, .hi_pct = hi, .pct = 0.5 * (lo + hi)};
    return r;
}

static void test_verdicts(void)
{
    static const struct {
        double lo, hi;
        bool hib;
        enum hv_verdict want;
    } cases[] = {
        {1.5, 4.0, true, HV_VERDICT_BETTER},          {1.5, 4.0, false, HV_VERDICT_WORSE},
        {-4.0, -1.5, true, HV_VERDICT_WORSE},         {-4.0, -1.5, false, HV_VERDICT_BETTER},
        {-0.8, 0.9, true, HV_VERDICT_NO_EFFECT},      {-1.0, 1.0, false, HV_VERDICT_NO_EFFECT},
        {0.5, 3.0, true, HV_VERDICT_INCONCLUSIVE},    {-3.0, 3.0, true, HV_VERDICT_INCONCLUSIVE},
        {1.0, 3.0, true, HV_VERDICT_INCONCLUSIVE}, /* touching the margin is not past it */
        {-2.0, -0.5, false, HV_VERDICT_INCONCLUSIVE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct hv_ratio r = interval(cases[i].lo, cases[i].hi);
        enum hv_verdict v = hv_verdict_of(&r, MARGIN, cases[i].hib);
        CHECK_MSG(v == cases[i].want, "case %zu: %s, want %s", i, hv_verdict_name(v),
                  hv_verdict_name(cases[i].want));
    }
    struct hv_ratio none = interval(NAN, NAN);
    CHECK(hv_verdict_of(&none, MARGIN, true) == HV_VERDICT_INCONCLUSIVE);
    CHECK_STR(hv_verdict_name(HV_VERDICT_NO_EFFECT), "no_effect");
    CHECK_STR(hv_verdict_name(HV_VERDICT_BETTER), "better");
}

static void test_refusals(void)
{
    double a[] = {100, 101, 99}, one[] = {100}, zero[] = {0, 1, 2}, neg[] = {-1, 1, 2};
    double nan[] = {1, NAN, 2};
    struct hv_ratio r;
    CHECK(hv_compare(a, 3, one, 1, &r) == HV_STAT_TOO_FEW);
    CHECK(hv_compare(a, 3, one, 0, &r) == HV_STAT_TOO_FEW);
    CHECK(isnan(r.pct) && isnan(r.lo_pct));
    CHECK(hv_compare(a, 3, zero, 3, &r) == HV_STAT_NOT_POSITIVE);
    CHECK(hv_compare(neg, 3, a, 3, &r) == HV_STAT_NOT_POSITIVE);
    CHECK(hv_compare(a, 3, nan, 3, &r) == HV_STAT_NOT_FINITE);
    CHECK(isnan(hv_margin_p(&r, MARGIN)));
    /* n = 2 each is enough (df small, interval wide). */
    CHECK(hv_compare(a, 2, a + 1, 2, &r) == HV_STAT_OK);
    CHECK(hv_verdict_of(&r, MARGIN, true) == HV_VERDICT_INCONCLUSIVE);
    /* No spread anywhere: the interval is the point itself. */
    double s1[] = {100, 100, 100}, s2[] = {110, 110};
    CHECK(hv_compare(s2, 2, s1, 3, &r) == HV_STAT_OK);
    CHECK(r.log.degenerate && r.lo_pct == r.hi_pct && r.p == 0.0);
    CHECK_NEAR(r.pct, 10.0, 1e-9);
    CHECK(hv_verdict_of(&r, MARGIN, true) == HV_VERDICT_BETTER);
    CHECK(hv_compare(s1, 3, s1, 2, &r) == HV_STAT_OK);
    CHECK(r.p == 1.0 && hv_verdict_of(&r, MARGIN, true) == HV_VERDICT_NO_EFFECT);
}

/* hv_margin_p is below 0.05 exactly when the verdict is directional. */
static void test_margin_p(void)
{
    size_t agree = 0, n = 0;
    double a[6], b[6];
    for (uint64_t seed = 0; seed < 300; seed++) {
        uint64_t st = sim_state(10, seed);
        sim_sample(&st, 100.0 * (1.0 + 0.01 * (double)(seed % 7)), 0.03, a, 6);
        sim_sample(&st, 100.0, 0.03, b, 6);
        struct hv_ratio r;
        hv_compare(a, 6, b, 6, &r);
        enum hv_verdict v = hv_verdict_of(&r, MARGIN, true);
        bool directional = v == HV_VERDICT_BETTER || v == HV_VERDICT_WORSE;
        agree += directional == (hv_margin_p(&r, MARGIN) < 0.05);
        n++;
    }
    CHECK_MSG(agree == n, "%zu of %zu agree", agree, n);
}

/* The rounds to decide against the formula of compare.h, evaluated here. */
static double crit(const struct hv_log_group *a, const struct hv_log_group *b, size_t k)
{
    double va = a->var / (double)(a->n + k), vb = b->var / (double)(b->n + k);
    double df = (va + vb) * (va + vb) /
                (va * va / (double)(a->n + k - 1) + vb * vb / (double)(b->n + k - 1));
    return (hv_t_quantile(0.975, df) + 0.8416212335729143) * sqrt(va + vb);
}

static void test_rounds_to_decide(void)
{
    double a[] = {103, 99, 106, 101, 104}, b[] = {100, 98, 101, 102, 99};
    struct hv_log_group ga, gb;
    hv_log_group_of(a, 5, &ga);
    hv_log_group_of(b, 5, &gb);
    struct hv_ratio r;
    hv_effect(&ga, &gb, 1, &r);
    CHECK(hv_verdict_of(&r, MARGIN, true) == HV_VERDICT_INCONCLUSIVE);
    struct hv_more more;
    CHECK(hv_rounds_to_decide(&ga, &gb, 1, MARGIN, 1000, &more) == HV_STAT_OK);
    double gap = r.log.est - log1p(MARGIN / 100.0);
    printf("rounds to decide %+.2f %% (%.2f .. %.2f): %zu more\n", r.pct, r.lo_pct, r.hi_pct,
           more.rounds);
    CHECK(!more.beyond_cap && more.rounds == 27);
    CHECK(crit(&ga, &gb, more.rounds) <= gap);
    CHECK(crit(&ga, &gb, more.rounds - 1) > gap);
    /* A cap below the need: "more than cap". */
    CHECK(hv_rounds_to_decide(&ga, &gb, 1, MARGIN, more.rounds - 1, &more) == HV_STAT_OK);
    CHECK(more.beyond_cap);
    /* Already decided: none. */
    hv_log_group_of(b, 5, &ga);
    for (size_t i = 0; i < 5; i++)
        a[i] = b[i] * 1.2;
    hv_log_group_of(a, 5, &ga);
    CHECK(hv_rounds_to_decide(&ga, &gb, 1, MARGIN, 1000, &more) == HV_STAT_OK);
    CHECK(more.rounds == 0 && !more.beyond_cap);
    /* An estimate on the margin never decides. */
    for (size_t i = 0; i < 5; i++)
        a[i] = b[(i + 1) % 5] * 1.01;
    hv_log_group_of(a, 5, &ga);
    CHECK(hv_rounds_to_decide(&ga, &gb, 1, MARGIN, 1000, &more) == HV_STAT_OK);
    CHECK(more.beyond_cap && more.rounds == 1000);
    CHECK(hv_rounds_to_decide(&ga, &gb, 1, -1.0, 1000, &more) == HV_STAT_BAD_ARG);
    CHECK(hv_rounds_to_decide(&ga, &gb, 1, MARGIN, HV_DECIDE_CAP_MAX + 1, &more) ==
          HV_STAT_BAD_ARG);
}

/* The paired estimate: the round ratios' spread, at the look's level. */
static void test_rounds_to_decide_paired(void)
{
    /* Round ratios of about +2.4 % with a spread of about 2 %. */
    static const double level[] = {103, 99, 106, 101, 104}, base[] = {100, 98, 101, 100, 102};
    struct hv_ratio r;
    CHECK(hv_effect_paired(level, base, 1, 5, &r) == HV_STAT_OK);
    struct hv_more more, strict;
    CHECK(hv_rounds_to_decide_paired(&r, MARGIN, 0.05, 1000, &more) == HV_STAT_OK);
    CHECK(hv_rounds_to_decide_paired(&r, MARGIN, 0.01, 1000, &strict) == HV_STAT_OK);
    double gap = r.log.est - log1p(MARGIN / 100.0);
    double n = (double)r.log.n_min;
#define PAIRED_CRIT(k, a)                                                                          \
    ((hv_t_quantile(1.0 - (a) / 2.0, r.log.df + (double)(k)) + 0.8416212335729143) * r.log.se *    \
     sqrt(n / (n + (double)(k))))
    printf("paired rounds to decide %+.2f %% (%.2f .. %.2f): %zu more at 0.05, %zu at 0.01\n",
           r.pct, r.lo_pct, r.hi_pct, more.rounds, strict.rounds);
    CHECK(!more.beyond_cap && more.rounds > 0);
    CHECK(PAIRED_CRIT(more.rounds, 0.05) <= gap && PAIRED_CRIT(more.rounds - 1, 0.05) > gap);
    /* A stricter level asks for more. */
    CHECK(strict.rounds > more.rounds);
    CHECK(PAIRED_CRIT(strict.rounds, 0.01) <= gap && PAIRED_CRIT(strict.rounds - 1, 0.01) > gap);
#undef PAIRED_CRIT
    CHECK(hv_rounds_to_decide_paired(&r, MARGIN, 0.05, more.rounds - 1, &more) == HV_STAT_OK);
    CHECK(more.beyond_cap);
    CHECK(hv_rounds_to_decide_paired(&r, MARGIN, 0.0, 1000, &more) == HV_STAT_BAD_ARG);
    CHECK(hv_rounds_to_decide_paired(&r, -1.0, 0.05, 1000, &more) == HV_STAT_BAD_ARG);
}

static void test_holm(void)
{
    /* R: p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") = 0.03 0.06 0.06 0.02 */
    double p[] = {0.01, 0.04, 0.03, 0.005}, adj[4];
    bool sig[4];
    CHECK(hv_holm(p, 4, 0.05, adj, sig) == HV_STAT_OK);
    double want[] = {0.03, 0.06, 0.06, 0.02};
    for (size_t i = 0; i < 4; i++)
        CHECK_NEAR(adj[i], want[i], 1e-15);
    CHECK(sig[0] && !sig[1] && !sig[2] && sig[3]);
    /* R: p.adjust(c(0.5, 0.2, 0.9), "holm") = 1.0 0.6 1.0 (capped at 1,
     * then never below an earlier step). */
    double q[] = {0.5, 0.2, 0.9};
    hv_holm(q, 3, 0.05, adj, NULL);
    CHECK_NEAR(adj[0], 1.0, 1e-15);
    CHECK_NEAR(adj[1], 0.6, 1e-15);
    CHECK_NEAR(adj[2], 1.0, 1e-15);
    CHECK(hv_holm(q, 0, 0.05, adj, sig) == HV_STAT_OK);
    q[1] = NAN;
    CHECK(hv_holm(q, 3, 0.05, adj, sig) == HV_STAT_BAD_ARG);
    q[1] = 1.5;
    CHECK(hv_holm(q, 3, 0.05, adj, sig) == HV_STAT_BAD_ARG);
}

/* Searches seeded samples for a comparison that is better on its own with
 * a margin p between 0.05/3 and 0.05: Holm must withdraw it in a family of
 * three when the other two are null, and keep it when they are clear. */
static void test_family(void)
{
    double base[6], a[6], n1[6], n2[6], big[6], down[6];
    struct hv_ratio r[3];
    double p1 = 1.0;
    uint64_t st = sim_state(11, 0);
    for (int tries = 0; tries < 1000 && !(p1 > 0.05 / 3 && p1 < 0.05); tries++) {
        sim_sample(&st, 100.0, 0.02, base, 6);
        sim_sample(&st, 103.0, 0.02, a, 6);
        hv_compare(a, 6, base, 6, &r[0]);
        p1 = hv_margin_p(&r[0], MARGIN);
    }
    CHECK(p1 > 0.05 / 3 && p1 < 0.05);
    CHECK(hv_verdict_of(&r[0], MARGIN, true) == HV_VERDICT_BETTER);
    sim_sample(&st, 100.0, 0.02, n1, 6);
    sim_sample(&st, 100.0, 0.02, n2, 6);
    hv_compare(n1, 6, base, 6, &r[1]);
    hv_compare(n2, 6, base, 6, &r[2]);
    bool hib[3] = {true, true, false};
    enum hv_verdict v[3];
    double adj[3];
    CHECK(hv_family_verdicts(r, 3, MARGIN, hib, v, adj) == HV_STAT_OK);
    printf("family of 3: %+.2f %% (%.2f .. %.2f), margin p %.4f, Holm %.4f: %s\n", r[0].pct,
           r[0].lo_pct, r[0].hi_pct, p1, adj[0], hv_verdict_name(v[0]));
    CHECK_NEAR(adj[0], 3 * p1, 1e-12);
    CHECK(v[0] == HV_VERDICT_INCONCLUSIVE);
    for (size_t i = 0; i < 6; i++) {
        big[i] = base[(i + 1) % 6] * 1.15;
        down[i] = base[(i + 2) % 6] * 0.85;
    }
    hv_compare(big, 6, base, 6, &r[1]);
    hv_compare(down, 6, base, 6, &r[2]);
    CHECK(hv_family_verdicts(r, 3, MARGIN, hib, v, adj) == HV_STAT_OK);
    CHECK(v[0] == HV_VERDICT_BETTER && v[1] == HV_VERDICT_BETTER && v[2] == HV_VERDICT_BETTER);
    CHECK_NEAR(adj[0], p1, 1e-12); /* step-down: compared with 0.05/1 */
    CHECK(hv_family_verdicts(r, 3, -1.0, hib, v, adj) == HV_STAT_BAD_ARG);
}

/* Tallies of verdicts over seeds. */
struct tally {
    size_t v[4], covered, n;
};

static void tally_add(struct tally *t, const struct hv_ratio *r, double truth_pct, bool hib)
{
    t->v[hv_verdict_of(r, MARGIN, hib)]++;
    t->covered += r->lo_pct <= truth_pct && truth_pct <= r->hi_pct;
    t->n++;
}

static void tally_print(const char *what, const struct tally *t)
{
    printf("%s: better %.1f %%, worse %.1f %%, no_effect %.1f %%, inconclusive %.1f %%, "
           "interval covers the truth %.1f %%\n",
           what, sim_pct(t->v[HV_VERDICT_BETTER], t->n), sim_pct(t->v[HV_VERDICT_WORSE], t->n),
           sim_pct(t->v[HV_VERDICT_NO_EFFECT], t->n), sim_pct(t->v[HV_VERDICT_INCONCLUSIVE], t->n),
           sim_pct(t->covered, t->n));
}

/* Two configurations from one distribution, CV 3 %: better or worse in at
 * most 5 % of seeds. */
static void sim_null(size_t n)
{
    struct tally t = {0};
    double a[10], b[10];
    for (uint64_t seed = 0; seed < SEEDS; seed++) {
        uint64_t st = sim_state(20 + n, seed);
        sim_sample(&st, 100.0, 0.03, a, n);
        sim_sample(&st, 100.0, 0.03, b, n);
        struct hv_ratio r;
        CHECK(hv_compare(a, n, b, n, &r) == HV_STAT_OK);
        tally_add(&t, &r, 0.0, true);
    }
    char what[64];
    snprintf(what, sizeof what, "null, CV 3 %%, n = %zu", n);
    tally_print(what, &t);
    CHECK(sim_pct(t.v[HV_VERDICT_BETTER] + t.v[HV_VERDICT_WORSE], t.n) <= 5.0);
    CHECK(sim_pct(t.covered, t.n) >= 93.5);
}

/* A planted +5 % at CV 3 %, n = 10: the interval covers +5 % in at least
 * 93.5 % of seeds and the verdict is better in at least 75 %. The same
 * for a time (lower is better) 5 % shorter. */
static void sim_planted(bool hib)
{
    struct tally t = {0};
    double a[10], b[10], f = hib ? 1.05 : 1.0 / 1.05, truth = 100.0 * (f - 1.0);
    for (uint64_t seed = 0; seed < SEEDS; seed++) {
        uint64_t st = sim_state(hib ? 32 : 33, seed);
        sim_sample(&st, 100.0 * f, 0.03, a, 10);
        sim_sample(&st, 100.0, 0.03, b, 10);
        struct hv_ratio r;
        hv_compare(a, 10, b, 10, &r);
        tally_add(&t, &r, truth, hib);
    }
    tally_print(hib ? "planted +5 %, CV 3 %, n = 10" : "planted time -4.8 %, CV 3 %, n = 10", &t);
    CHECK(sim_pct(t.covered, t.n) >= 93.5);
    CHECK(sim_pct(t.v[HV_VERDICT_BETTER], t.n) >= 75.0);
}

/* Inconclusive at n = 5 with a planted +5 %: after the rounds
 * hv_rounds_to_decide names, how often the verdict is decided. */
static void sim_decide(void)
{
    size_t asked = 0, decided = 0, beyond = 0, rounds_sum = 0;
    double a[205], b[205];
    for (uint64_t seed = 0; seed < SEEDS; seed++) {
        uint64_t st = sim_state(40, seed);
        sim_sample(&st, 105.0, 0.03, a, 5);
        sim_sample(&st, 100.0, 0.03, b, 5);
        struct hv_log_group ga, gb;
        hv_log_group_of(a, 5, &ga);
        hv_log_group_of(b, 5, &gb);
        struct hv_ratio r;
        hv_effect(&ga, &gb, 1, &r);
        if (hv_verdict_of(&r, MARGIN, true) != HV_VERDICT_INCONCLUSIVE)
            continue;
        struct hv_more more;
        hv_rounds_to_decide(&ga, &gb, 1, MARGIN, 200, &more);
        asked++;
        if (more.beyond_cap) {
            beyond++;
            continue;
        }
        size_t n = 5 + more.rounds;
        sim_sample(&st, 105.0, 0.03, a + 5, more.rounds);
        sim_sample(&st, 100.0, 0.03, b + 5, more.rounds);
        hv_compare(a, n, b, n, &r);
        decided += hv_verdict_of(&r, MARGIN, true) != HV_VERDICT_INCONCLUSIVE;
        rounds_sum += more.rounds;
    }
    printf("planted +5 %%, n = 5: inconclusive in %.1f %%; of those, more than 200 rounds in "
           "%.1f %%; otherwise %.1f rounds on average, after which %.1f %% are decided\n",
           sim_pct(asked, SEEDS), sim_pct(beyond, asked),
           (double)rounds_sum / (double)(asked - beyond), sim_pct(decided, asked - beyond));
    CHECK(sim_pct(decided, asked - beyond) >= 60.0);
}

/* A 2 x 3 factorial, n = 5 per cell, CV 3 %: factor A's level on (+5 %, or
 * no effect) against its default, pooled over factor B's levels (x1.0,
 * x0.9, x1.2). The per-cell main effect against all runs of the level
 * against all runs of the default, whose variance takes B's levels for
 * noise. */
static void sim_factorial(double effect, const char *what)
{
    static const double b_level[3] = {1.0, 0.9, 1.2};
    struct tally cell = {0}, pooled = {0};
    double lv[3][5], df[3][5];
    for (uint64_t seed = 0; seed < SEEDS; seed++) {
        uint64_t st = sim_state(effect > 1.0 ? 50 : 51, seed);
        struct hv_log_group gl[3], gd[3];
        for (size_t c = 0; c < 3; c++) {
            sim_sample(&st, 100.0 * b_level[c] * effect, 0.03, lv[c], 5);
            sim_sample(&st, 100.0 * b_level[c], 0.03, df[c], 5);
            hv_log_group_of(lv[c], 5, &gl[c]);
            hv_log_group_of(df[c], 5, &gd[c]);
        }
        struct hv_ratio r;
        CHECK(hv_effect(gl, gd, 3, &r) == HV_STAT_OK);
        CHECK(r.log.n_min == 5 && r.log.runs == 30);
        tally_add(&cell, &r, 100.0 * (effect - 1.0), true);
        hv_compare(&lv[0][0], 15, &df[0][0], 15, &r);
        tally_add(&pooled, &r, 100.0 * (effect - 1.0), true);
    }
    char line[96];
    snprintf(line, sizeof line, "%s, per-cell main effect", what);
    tally_print(line, &cell);
    snprintf(line, sizeof line, "%s, all runs vs all runs", what);
    tally_print(line, &pooled);
    CHECK(sim_pct(cell.covered, cell.n) >= 93.5);
    if (effect == 1.0)
        CHECK(sim_pct(cell.v[HV_VERDICT_BETTER] + cell.v[HV_VERDICT_WORSE], cell.n) <= 5.0);
    else
        CHECK(cell.v[HV_VERDICT_BETTER] > pooled.v[HV_VERDICT_BETTER]);
}

/* Ten levels with no effect, each against one shared default (n = 5, CV
 * 3 %): how often any of them is called better or worse, alone and under
 * Holm. */
static void sim_family(void)
{
    enum { M = 10 };
    size_t raw = 0, holm = 0;
    double base[5], lv[5];
    for (uint64_t seed = 0; seed < SEEDS; seed++) {
        uint64_t st = sim_state(60, seed);
        sim_sample(&st, 100.0, 0.03, base, 5);
        struct hv_ratio r[M];
        bool hib[M], any_raw = false, any_holm = false;
        enum hv_verdict v[M];
        for (size_t i = 0; i < M; i++) {
            sim_sample(&st, 100.0, 0.03, lv, 5);
            hv_compare(lv, 5, base, 5, &r[i]);
            hib[i] = true;
            enum hv_verdict one = hv_verdict_of(&r[i], MARGIN, true);
            any_raw |= one == HV_VERDICT_BETTER || one == HV_VERDICT_WORSE;
        }
        hv_family_verdicts(r, M, MARGIN, hib, v, NULL);
        for (size_t i = 0; i < M; i++)
            any_holm |= v[i] == HV_VERDICT_BETTER || v[i] == HV_VERDICT_WORSE;
        raw += any_raw;
        holm += any_holm;
    }
    printf("10 null levels vs one default, n = 5: some better/worse in %.1f %% of seeds "
           "alone, %.1f %% under Holm\n",
           sim_pct(raw, SEEDS), sim_pct(holm, SEEDS));
    CHECK(sim_pct(holm, SEEDS) <= 5.0);
}

static void run_simulations(void)
{
    sim_null(5);
    sim_null(10);
    sim_planted(true);
    sim_planted(false);
    sim_decide();
    sim_factorial(1.05, "factorial 2x3, A +5 %");
    sim_factorial(1.0, "factorial 2x3, A null");
    sim_family();
}

/* No verdict from an interval too short or too wide to print: the words
 * say why, and that the interval alone would have decided. */
static void test_verdict_usable(void)
{
    struct hv_ratio r = {.pct = 10.0, .lo_pct = 8.0, .hi_pct = 12.0};
    char note[200];
    bool usable = true;
    CHECK(hv_verdict_usable(&r, 3, 1.0, true, &usable, note, sizeof note) == HV_VERDICT_BETTER);
    CHECK(usable && note[0] == '\0');
    CHECK(hv_verdict_usable(&r, 2, 1.0, true, &usable, note, sizeof note) ==
          HV_VERDICT_INCONCLUSIVE);
    CHECK(!usable);
    CHECK_STR(note, "n = 2: too few rounds for an interval, so the verdict is inconclusive");
    /* Past ±100 %: wholly above the margin, and still no verdict. */
    r = (struct hv_ratio){.pct = 400.0, .lo_pct = 150.0, .hi_pct = 900.0};
    CHECK(hv_verdict_usable(&r, 5, 1.0, false, &usable, note, sizeof note) ==
          HV_VERDICT_INCONCLUSIVE);
    CHECK_STR(note, "n = 5: the interval is too wide to use, so the verdict is inconclusive");
    /* Inconclusive anyway: the words alone. */
    r = (struct hv_ratio){.pct = 0.0, .lo_pct = -90.0, .hi_pct = 900.0};
    CHECK(hv_verdict_usable(&r, 2, 1.0, true, NULL, note, sizeof note) == HV_VERDICT_INCONCLUSIVE);
    CHECK_STR(note, "n = 2: too few rounds for an interval");
}

int main(void)
{
    test_welch_reference();
    test_main_effect_reference();
    test_verdicts();
    test_verdict_usable();
    test_refusals();
    test_margin_p();
    test_rounds_to_decide();
    test_rounds_to_decide_paired();
    test_holm();
    test_family();
    run_simulations();
    return check_summary("test_compare");
}
