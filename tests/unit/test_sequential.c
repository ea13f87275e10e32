/* test_sequential.c — the paired comparison of complete rounds
 * (hv_effect_paired) and the group-sequential rule (lib/sequential.h):
 * spending values and boundaries against published and independently
 * computed figures, Holm at a look, the stop decision. */
#include "sequential.h"

#include "check.h"

#include <gsl/gsl_cdf.h>

/* hv_effect_paired of one cell over `rounds` rounds into *r, checked
 * against est, se, df and pct worked out apart: its interval is
 * est ± t(0.975, df)·se, its rounds and runs are the data's. */
static void check_paired(const double *level, const double *base, size_t rounds, double est,
                         double se, double df, double pct, struct hv_ratio *r)
{
    CHECK(hv_effect_paired(level, base, 1, rounds, r) == HV_STAT_OK);
    CHECK_NEAR(r->log.est, est, 1e-12);
    CHECK_NEAR(r->log.se, se, 1e-12);
    CHECK_NEAR(r->log.df, df, 1e-9);
    CHECK_NEAR(r->pct, pct, 1e-9);
    double t = gsl_cdf_tdist_Pinv(0.975, df);
    CHECK_NEAR(r->log.lo, est - t * se, 1e-12);
    CHECK_NEAR(r->log.hi, est + t * se, 1e-12);
    CHECK(r->log.n_min == rounds && r->log.runs == 2 * rounds && r->cells == 1);
}

/* Whether two paired comparisons state the same figures. */
static bool same_figures(const struct hv_ratio *a, const struct hv_ratio *b)
{
    return fabs(a->log.est - b->log.est) < 1e-12 && fabs(a->log.se - b->log.se) < 1e-12 &&
           a->log.df == b->log.df;
}

static void test_paired(void)
{
    /* d_r = ln(level/base) by round; mean, sd/√4, t(0.975, 3) = 3.1824463
     * by hand (Python's statistics module). Four rounds: nothing is
     * trimmed, it is the paired t. */
    double level[] = {105, 103, 108, 104}, base[] = {100, 99, 104, 101};
    struct hv_ratio r;
    check_paired(level, base, 4, 0.038852503136859395, 0.004003993595581191, 3.0, 3.96171320751494,
                 &r);
    CHECK_NEAR(r.lo_pct, 2.645386092476585, 1e-7);
    CHECK_NEAR(r.hi_pct, 5.294920935893519, 1e-7);
    CHECK(hv_verdict_of(&r, 1.0, true) == HV_VERDICT_BETTER);
    /* Two cells: each round's d is the mean over the cells; a cell that
     * repeats the first changes nothing. */
    double l2[] = {105, 103, 108, 104, 105, 103, 108, 104};
    double b2[] = {100, 99, 104, 101, 100, 99, 104, 101};
    struct hv_ratio r2;
    CHECK(hv_effect_paired(l2, b2, 2, 4, &r2) == HV_STAT_OK);
    CHECK(same_figures(&r2, &r));
    CHECK(r2.cells == 2 && r2.log.runs == 16);
    /* A drift common to both configurations of a round cancels. */
    double ld[] = {105 * 1.1, 103 * 0.9, 108 * 1.3, 104},
           bd[] = {100 * 1.1, 99 * 0.9, 104 * 1.3, 101};
    CHECK(hv_effect_paired(ld, bd, 1, 4, &r2) == HV_STAT_OK);
    CHECK(same_figures(&r2, &r));
    /* Refusals. */
    double bad[] = {105, -1, 108, 104}, nan_[] = {105, NAN, 108, 104};
    CHECK(hv_effect_paired(bad, base, 1, 4, &r2) == HV_STAT_NOT_POSITIVE);
    CHECK(hv_effect_paired(nan_, base, 1, 4, &r2) == HV_STAT_NOT_FINITE && isnan(r2.pct));
    CHECK(hv_effect_paired(level, base, 1, 1, &r2) == HV_STAT_TOO_FEW);
    CHECK(hv_effect_paired(level, base, 0, 4, &r2) == HV_STAT_BAD_ARG);
}

/* The one rule of when two sides pair: complete rounds, the same ones. */
static void test_rounds_complete(void)
{
    int a[] = {1, 2, 3, 4}, b[] = {1, 2, 3, 4}, gap[] = {1, 2, 4, 5}, three[] = {1, 2, 3};
    CHECK(hv_rounds_complete(a, 4, b, 4));
    CHECK(!hv_rounds_complete(a, 4, gap, 4));   /* a round missing on one side */
    CHECK(!hv_rounds_complete(a, 4, three, 3)); /* one side a round short */
    CHECK(!hv_rounds_complete(a, 1, b, 1));     /* one round: nothing to pair */
    CHECK(!hv_rounds_complete(NULL, 0, NULL, 0));
}

static void test_paired_trimmed(void)
{
    /* Ten rounds, the seventh's level hit by a burst (+20 %): g = 2 rounds
     * off each end, Yuen's trimmed mean of the middle six, se from the
     * variance winsorized at the same two, df = 6 − 1; by hand (Python's
     * statistics module). The plain mean would be 0.0613 ± 0.0171. */
    double level[] = {104, 106, 103, 105, 107, 104, 125, 105, 103, 106};
    double base[] = {100, 101, 99, 100, 102, 100, 101, 99, 100, 101};
    struct hv_ratio r, r2;
    check_paired(level, base, 10, 0.0453521985228346, 0.002596104897664218, 5.0, 4.6396334260072845,
                 &r);
    /* A bigger burst on the same run changes nothing: the round is
     * trimmed from the mean and winsorized in the spread. */
    level[6] = 250;
    CHECK(hv_effect_paired(level, base, 1, 10, &r2) == HV_STAT_OK);
    CHECK(same_figures(&r2, &r));
    /* Neither does the order of the rounds. */
    double lr[10], br[10];
    for (int i = 0; i < 10; i++)
        lr[i] = level[9 - i], br[i] = base[9 - i];
    CHECK(hv_effect_paired(lr, br, 1, 10, &r2) == HV_STAT_OK);
    CHECK(same_figures(&r2, &r));
    /* Five rounds trim one off each end: df = 3 − 1. */
    CHECK(hv_effect_paired(level, base, 1, 5, &r2) == HV_STAT_OK);
    CHECK(r2.log.df == 2.0 && r2.log.n_min == 5);
}

static void test_spending(void)
{
    /* 2·Q(z(0.975)/√t) and 0.05·ln(1 + (e − 1)·t), in Python. */
    CHECK_NEAR(hv_spend(HV_SPEND_OBF, 0.05, 0.5), 0.005574596680784432, 1e-12);
    CHECK_NEAR(hv_spend(HV_SPEND_OBF, 0.05, 0.2), 1.1726446842521248e-05, 1e-15);
    CHECK_NEAR(hv_spend(HV_SPEND_POCOCK, 0.05, 0.5), 0.031005725347913876, 1e-12);
    CHECK_NEAR(hv_spend(HV_SPEND_OBF, 0.05, 1.0), 0.05, 1e-12);
    CHECK_NEAR(hv_spend(HV_SPEND_POCOCK, 0.05, 1.0), 0.05, 1e-12);
    CHECK(hv_spend(HV_SPEND_OBF, 0.05, 0.0) == 0.0 && hv_spend(HV_SPEND_POCOCK, 0.05, 2.0) == 0.05);
}

static void test_bounds(void)
{
    double t1[] = {1.0}, z[5];
    CHECK(hv_seq_bounds(HV_SPEND_OBF, 0.05, t1, 1, z) == HV_STAT_OK);
    CHECK_NEAR(z[0], 1.959964, 1e-6);
    /* Pocock type, five equal looks: 2.4380, 2.4268, 2.4101, 2.3966,
     * 2.3859 (Jennison and Turnbull, Table 7.6; R ldbounds). */
    double t5[] = {0.2, 0.4, 0.6, 0.8, 1.0};
    double pocock[] = {2.4380, 2.4268, 2.4101, 2.3966, 2.3859};
    CHECK(hv_seq_bounds(HV_SPEND_POCOCK, 0.05, t5, 5, z) == HV_STAT_OK);
    for (int i = 0; i < 5; i++)
        CHECK_MSG(fabs(z[i] - pocock[i]) < 2e-4, "look %d: %.5f", i, z[i]);
    /* O'Brien–Fleming type, two looks: the first is the spending
     * quantile; the second holds P(|Z1| >= z1 or |Z2| >= z2) = 0.05 by a
     * bivariate normal integral done apart (Python, Simpson, 20,000
     * steps): 2.7718, 1.9793. */
    double t2[] = {0.5, 1.0};
    CHECK(hv_seq_bounds(HV_SPEND_OBF, 0.05, t2, 2, z) == HV_STAT_OK);
    CHECK_NEAR(z[0], 2.77181, 1e-4);
    CHECK_NEAR(z[1], 1.9793, 2e-4);
    /* Three looks: falls towards the end, ends above 1.96. */
    double t3[] = {1.0 / 3, 2.0 / 3, 1.0};
    CHECK(hv_seq_bounds(HV_SPEND_OBF, 0.05, t3, 3, z) == HV_STAT_OK);
    CHECK(z[0] > z[1] && z[1] > z[2] && z[2] > 1.96 && z[2] < 2.05);
    /* A look that may spend nothing: the first of 3..50 under OBF. */
    double early[] = {0.001, 1.0};
    CHECK(hv_seq_bounds(HV_SPEND_OBF, 0.05, early, 2, z) == HV_STAT_OK);
    CHECK(z[0] == HV_SEQ_Z_NONE && fabs(z[1] - 1.959964) < 1e-4);
    double disorder[] = {0.5, 0.4};
    CHECK(hv_seq_bounds(HV_SPEND_OBF, 0.05, disorder, 2, z) == HV_STAT_BAD_ARG);
    CHECK(hv_seq_bounds(HV_SPEND_OBF, 0.0, t2, 2, z) == HV_STAT_BAD_ARG);
}

static void test_design_and_verdicts(void)
{
    struct hv_seq_design d;
    CHECK(hv_seq_design_init(&d, HV_SPEND_POCOCK, 0.05, 3, 50, 2) == HV_STAT_OK);
    /* Levels: within (0, 0.05), the share alpha/2 stricter. */
    for (int r = 3; r <= 50; r++) {
        double a1 = hv_seq_level(&d, r, 1), a2 = hv_seq_level(&d, r, 2);
        CHECK_MSG(a1 > 0.0 && a1 < 0.05 && a2 < a1, "round %d: %g %g", r, a1, a2);
    }
    CHECK(hv_seq_level(&d, 2, 1) == 0.0 && hv_seq_level(&d, 51, 1) == 0.0);
    /* Two comparisons at round 10, from paired data: a clear +4 % and a
     * null one. Holm: the clear one at its share, the other stays open. */
    double level[10], base[10], flat[10];
    for (int i = 0; i < 10; i++) {
        base[i] = 100.0 + (i % 3);
        level[i] = base[i] * 1.04 * (1.0 + 0.002 * ((i % 2) ? 1 : -1));
        flat[i] = base[i] * (1.0 + 0.002 * ((i % 2) ? 1 : -1));
    }
    struct hv_ratio r[2];
    CHECK(hv_effect_paired(level, base, 1, 10, &r[0]) == HV_STAT_OK);
    CHECK(hv_effect_paired(flat, base, 1, 10, &r[1]) == HV_STAT_OK);
    bool hib[2] = {true, false};
    enum hv_verdict v[2];
    CHECK(hv_seq_verdicts(&d, 10, r, 2, 1.0, hib, v) == HV_STAT_OK);
    CHECK(v[0] == HV_VERDICT_BETTER);
    /* The null one's interval at the look's level lies within ±1 %. */
    CHECK(v[1] == HV_VERDICT_NO_EFFECT);
    CHECK(hv_seq_next(&d, r, v, 2, 2.0, 10) == HV_SEQ_DECIDED);
    CHECK(hv_seq_next(&d, r, v, 2, 2.0, 2) == HV_SEQ_MORE);
    /* At margin 3.9 % the +4 % one cannot be decided; a wide ci_pct
     * counts it precise, a narrow one asks for more, max stops. */
    CHECK(hv_seq_verdicts(&d, 10, r, 2, 3.9, hib, v) == HV_STAT_OK);
    CHECK(v[0] == HV_VERDICT_INCONCLUSIVE);
    CHECK(hv_seq_next(&d, r, v, 2, 5.0, 10) == HV_SEQ_PRECISE);
    CHECK(hv_seq_next(&d, r, v, 2, 0.01, 10) == HV_SEQ_MORE);
    CHECK(hv_seq_next(&d, r, v, 2, 0.01, 50) == HV_SEQ_MAX);
    /* lower is better: the +4 % is worse. */
    hib[0] = false;
    CHECK(hv_seq_verdicts(&d, 10, r, 2, 1.0, hib, v) == HV_STAT_OK && v[0] == HV_VERDICT_WORSE);
    CHECK(hv_seq_verdicts(&d, 10, r, 1, 1.0, hib, v) == HV_STAT_BAD_ARG);
    hv_seq_design_free(&d);
    CHECK(hv_seq_design_init(&d, HV_SPEND_OBF, 0.05, 5, 4, 1) == HV_STAT_BAD_ARG);
    hv_seq_design_free(&d);
}

/* A design computed up to a look has the whole design's levels there. */
static void test_design_to(void)
{
    struct hv_seq_design whole, part;
    CHECK(hv_seq_design_init(&whole, HV_SEQ_SPEND, 0.05, 3, 200, 3) == HV_STAT_OK);
    CHECK(hv_seq_design_init_to(&part, HV_SEQ_SPEND, 0.05, 3, 200, 12, 3) == HV_STAT_OK);
    for (int r = 3; r <= 12; r++)
        for (size_t j = 1; j <= 3; j++)
            CHECK_NEAR(hv_seq_level(&part, r, j), hv_seq_level(&whole, r, j), 1e-15);
    CHECK(hv_seq_level(&part, 13, 1) == 0.0 && hv_seq_level(&whole, 13, 1) > 0.0);
    hv_seq_design_free(&part);
    /* Past the cap is the cap; before the first look is refused. */
    CHECK(hv_seq_design_init_to(&part, HV_SEQ_SPEND, 0.05, 3, 20, 99, 1) == HV_STAT_OK &&
          part.last == 20);
    hv_seq_design_free(&part);
    CHECK(hv_seq_design_init_to(&part, HV_SEQ_SPEND, 0.05, 3, 20, 2, 1) == HV_STAT_BAD_ARG);
    hv_seq_design_free(&whole);
}

int main(void)
{
    test_design_to();
    test_paired();
    test_rounds_complete();
    test_paired_trimmed();
    test_spending();
    test_bounds();
    test_design_and_verdicts();
    return check_summary("sequential");
}
