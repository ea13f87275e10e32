/* test_efficiency.c — virtualization efficiency per subsystem and the
 * weighted geometric mean overall: values against tests/unit/ref_stats.py
 * (Python's standard library, not GSL), the HEPscore identities, refusals,
 * and the interval's coverage on data of known truth (1,000 seeds). */
#include "efficiency.h"

#include "check.h"
#include "sim.h"

#define SEEDS 1000

/* The items of ref_stats.py: cpu; disk with a throughput and a latency;
 * net. */
static void reference_items(struct hv_eff_item it[4])
{
    static const double g0[] = {90, 92, 89, 91}, h0[] = {100, 101, 99, 100};
    static const double g1[] = {700, 650, 720}, h1[] = {800, 810, 790};
    static const double g2[] = {1.3, 1.25, 1.35}, h2[] = {1.0, 1.05, 0.98};
    static const double g3[] = {9.1, 9.3, 9.0, 9.4, 9.2}, h3[] = {9.8, 9.9, 9.7, 9.9, 10.0};
    it[0] = (struct hv_eff_item){.subsystem = 0, .higher_is_better = true};
    it[1] = (struct hv_eff_item){.subsystem = 1, .higher_is_better = true};
    it[2] = (struct hv_eff_item){.subsystem = 1, .higher_is_better = false};
    it[3] = (struct hv_eff_item){.subsystem = 2, .higher_is_better = true};
    hv_log_group_of(g0, 4, &it[0].guest);
    hv_log_group_of(h0, 4, &it[0].host);
    hv_log_group_of(g1, 3, &it[1].guest);
    hv_log_group_of(h1, 3, &it[1].host);
    hv_log_group_of(g2, 3, &it[2].guest);
    hv_log_group_of(h2, 3, &it[2].host);
    hv_log_group_of(g3, 5, &it[3].guest);
    hv_log_group_of(h3, 5, &it[3].host);
}

static void test_reference(void)
{
    struct hv_eff_item it[4];
    reference_items(it);
    struct hv_eff sub[3], all;
    double w[3] = {2.0, 1.0, 1.0};
    CHECK(hv_efficiency(it, 4, w, 3, sub, &all) == HV_STAT_OK);
    static const double want[4][5] = {
        {0.904953557905, 0.885766277983, 0.924556468586, 0.00821895477719, 4.77497701997},
        {0.818266942229, 0.775055607559, 0.86388741945, 0.0217684809951, 5.57954252349},
        {0.93300262669, 0.91278208463, 0.953671107342, 0.00926904079805, 7.01097603106},
        {0.889216707494, 0.8753931679, 0.903258537857, 0.00720237266751, 12.1735090629},
    };
    for (size_t s = 0; s < 4; s++) {
        const struct hv_eff *e = s < 3 ? &sub[s] : &all;
        CHECK(e->valid);
        CHECK_NEAR(e->eff, want[s][0], 1e-11);
        CHECK_NEAR(e->lo, want[s][1], 1e-9);
        CHECK_NEAR(e->hi, want[s][2], 1e-9);
        CHECK_NEAR(e->log.se, want[s][3], 1e-12);
        CHECK_NEAR(e->log.df, want[s][4], 1e-8);
    }
    CHECK(sub[1].items == 2 && all.items == 4);
    CHECK_NEAR(sub[0].weight, 0.5, 1e-15);
    CHECK_NEAR(sub[2].weight, 0.25, 1e-15);
    CHECK(sub[1].log.n_min == 3 && sub[2].log.n_min == 5 && all.log.n_min == 3);
}

/* HEPscore identities: equal weights give the plain geometric mean; given
 * weights the weighted one; the overall variance is Σ w_s²·se_s². */
static void test_identities(void)
{
    struct hv_eff_item it[4];
    reference_items(it);
    struct hv_eff sub[4], all;
    CHECK(hv_efficiency(it, 4, NULL, 3, sub, &all) == HV_STAT_OK);
    CHECK_NEAR(all.eff, cbrt(sub[0].eff * sub[1].eff * sub[2].eff), 1e-12);
    double var = 0.0;
    for (size_t s = 0; s < 3; s++)
        var += sub[s].log.se * sub[s].log.se / 9.0;
    CHECK_NEAR(all.log.se, sqrt(var), 1e-14);
    CHECK(all.lo < all.eff && all.eff < all.hi);

    double w[2] = {3.0, 1.0};
    CHECK(hv_efficiency(it, 3, w, 2, sub, &all) == HV_STAT_OK);
    CHECK_NEAR(all.eff, pow(sub[0].eff, 0.75) * pow(sub[1].eff, 0.25), 1e-12);

    /* A lower-is-better item: host/guest. */
    CHECK(hv_efficiency(&it[2], 1, NULL, 2, sub, &all) == HV_STAT_OK);
    double gl = it[2].guest.mean, hl = it[2].host.mean;
    CHECK_NEAR(sub[1].eff, exp(hl - gl), 1e-12);
    CHECK(sub[1].eff < 1.0);
    /* A subsystem without an item is left out and shares no weight. */
    CHECK(!sub[0].valid && isnan(sub[0].eff) && sub[0].weight == 0.0);
    CHECK_NEAR(all.eff, sub[1].eff, 1e-12);
    reference_items(it);
    double w4[4] = {1, 1, 1, 5};
    CHECK(hv_efficiency(it, 4, w4, 4, sub, &all) == HV_STAT_OK);
    CHECK(!sub[3].valid);
    CHECK_NEAR(all.eff, cbrt(sub[0].eff * sub[1].eff * sub[2].eff), 1e-12);
}

static void test_refusals(void)
{
    struct hv_eff_item it[4];
    reference_items(it);
    struct hv_eff sub[3], all;
    CHECK(hv_efficiency(it, 0, NULL, 3, sub, &all) == HV_STAT_BAD_ARG);
    CHECK(hv_efficiency(it, 4, NULL, 2, sub, &all) == HV_STAT_BAD_ARG); /* index 2 */
    double neg[3] = {1, -1, 1}, zero[3] = {0, 0, 0}, nan[3] = {1, NAN, 1};
    CHECK(hv_efficiency(it, 4, neg, 3, sub, &all) == HV_STAT_BAD_ARG);
    CHECK(hv_efficiency(it, 4, zero, 3, sub, &all) == HV_STAT_BAD_ARG);
    CHECK(hv_efficiency(it, 4, nan, 3, sub, &all) == HV_STAT_BAD_ARG);
    CHECK(isnan(all.eff) && !all.valid);
    /* A weight of 0 keeps the subsystem's own figure out of the score. */
    double w[3] = {1, 0, 1};
    CHECK(hv_efficiency(it, 4, w, 3, sub, &all) == HV_STAT_OK);
    CHECK(sub[1].valid && sub[1].weight == 0.0);
    CHECK_NEAR(all.eff, sqrt(sub[0].eff * sub[2].eff), 1e-12);
    /* One run on a side: no interval. */
    it[3].host.n = 1;
    CHECK(hv_efficiency(it, 4, NULL, 3, sub, &all) == HV_STAT_TOO_FEW);
    it[3].host.n = 5;
    it[3].host.mean = NAN;
    CHECK(hv_efficiency(it, 4, NULL, 3, sub, &all) == HV_STAT_NOT_FINITE);
}

/* cpu keeps 90 %, disk 80 % (a throughput, and a latency 25 % longer), net
 * 95 %; CV 3 % (disk 5 %), n = 5: the intervals cover the truth. */
static void sim_coverage(void)
{
    static const double keep[4] = {0.90, 0.80, 1.25, 0.95}, cv[4] = {0.03, 0.05, 0.05, 0.03};
    static const size_t sub_of[4] = {0, 1, 1, 2};
    double truth[3] = {0.90, 0.80, 0.95};
    double overall = cbrt(0.90 * 0.80 * 0.95);
    size_t cov[3] = {0}, cov_all = 0;
    double g[5], h[5];
    for (uint64_t seed = 0; seed < SEEDS; seed++) {
        uint64_t st = sim_state(70, seed);
        struct hv_eff_item it[4];
        for (size_t i = 0; i < 4; i++) {
            sim_sample(&st, 100.0 * keep[i], cv[i], g, 5);
            sim_sample(&st, 100.0, cv[i], h, 5);
            it[i] = (struct hv_eff_item){.subsystem = sub_of[i], .higher_is_better = i != 2};
            hv_log_group_of(g, 5, &it[i].guest);
            hv_log_group_of(h, 5, &it[i].host);
        }
        struct hv_eff sub[3], all;
        CHECK(hv_efficiency(it, 4, NULL, 3, sub, &all) == HV_STAT_OK);
        for (size_t s = 0; s < 3; s++)
            cov[s] += sub[s].lo <= truth[s] && truth[s] <= sub[s].hi;
        cov_all += all.lo <= overall && overall <= all.hi;
    }
    printf("efficiency, n = 5: intervals cover the truth: cpu %.1f %%, disk %.1f %%, net %.1f %%, "
           "overall %.1f %%\n",
           sim_pct(cov[0], SEEDS), sim_pct(cov[1], SEEDS), sim_pct(cov[2], SEEDS),
           sim_pct(cov_all, SEEDS));
    for (size_t s = 0; s < 3; s++)
        CHECK(sim_pct(cov[s], SEEDS) >= 93.5);
    CHECK(sim_pct(cov_all, SEEDS) >= 93.5);
}

int main(void)
{
    test_reference();
    test_identities();
    test_refusals();
    sim_coverage();
    return check_summary("test_efficiency");
}
