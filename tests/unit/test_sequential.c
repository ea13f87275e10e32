/* test_sequential.c — the paired comparison of complete rounds
 * (hv_effect_paired) and the group-sequential rule (lib/sequential.h):
 * spending values and boundaries against published and independently
 * computed figures, Holm at a look, the stop decision. */
#include "sequential.h"

#include "check.h"

#include <gsl/gsl_cdf.h>

static void test_paired(void)
{
    /* d_r = ln(level/base) by round; mean, sd/√4, t(0.975, 3) = 3.1824463
     * by hand (Python's statistics module). */
    double level[] = {105, 103, 108, 104}, base[] = {100, 99, 104, 101};
    struct hv_ratio r;
    CHECK(hv_effect_paired(level, base, 1, 4, &r) == HV_STAT_OK);
    CHECK_NEAR(r.log.est, 0.038852503136859395, 1e-12);
    CHECK_NEAR(r.log.se, 0.004003993595581191, 1e-12);
    CHECK_NEAR(r.log.df, 3.0, 1e-9);
    CHECK_NEAR(r.pct, 3.96171320751494, 1e-9);
    CHECK_NEAR(r.lo_pct, 2.645386092476585, 1e-7);
    CHECK_NEAR(r.hi_pct, 5.294920935893519, 1e-7);
    CHECK(r.log.n_min == 4 && r.log.runs == 8 && r.cells == 1);
    CHECK(hv_verdict_of(&r, 1.0, true) == HV_VERDICT_BETTER);
    /* Two cells: each round's d is the mean over the cells; a cell that
     * repeats the first changes nothing. */
    double l2[] = {105, 103, 108, 104, 105, 103, 108, 104};
    double b2[] = {100, 99, 104, 101, 100, 99, 104, 101};
    struct hv_ratio r2;
    CHECK(hv_effect_paired(l2, b2, 2, 4, &r2) == HV_STAT_OK);
    CHECK_NEAR(r2.log.est, r.log.est, 1e-12);
    CHECK_NEAR(r2.log.se, r.log.se, 1e-12);
    CHECK(r2.cells == 2 && r2.log.runs == 16);
    /* A drift common to both configurations of a round cancels. */
    double ld[] = {105 * 1.1, 103 * 0.9, 108 * 1.3, 104},
           bd[] = {100 * 1.1, 99 * 0.9, 104 * 1.3, 101};
    CHECK(hv_effect_paired(ld, bd, 1, 4, &r2) == HV_STAT_OK);
    CHECK_NEAR(r2.log.est, r.log.est, 1e-12);
    CHECK_NEAR(r2.log.se, r.log.se, 1e-12);
    /* Refusals. */
    double bad[] = {105, -1, 108, 104}, nan_[] = {105, NAN, 108, 104};
    CHECK(hv_effect_paired(bad, base, 1, 4, &r2) == HV_STAT_NOT_POSITIVE);
    CHECK(hv_effect_paired(nan_, base, 1, 4, &r2) == HV_STAT_NOT_FINITE && isnan(r2.pct));
    CHECK(hv_effect_paired(level, base, 1, 1, &r2) == HV_STAT_TOO_FEW);
    CHECK(hv_effect_paired(level, base, 0, 4, &r2) == HV_STAT_BAD_ARG);
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
        flat[i] = base[i] * (1.0 + 0.004 * ((i % 2) ? 1 : -1));
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

int main(void)
{
    test_paired();
    test_spending();
    test_bounds();
    test_design_and_verdicts();
    return check_summary("sequential");
}
