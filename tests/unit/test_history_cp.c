/* test_history_cp.c — change points placed on a target's history
 * (server/history_cp.c) and the facts that differ between two versions
 * (server/facts_diff.c): steps of known size and place in short histories
 * (searched point by point) and long ones (searched on the means of runs
 * of points, then placed on the points), flat histories left alone, the
 * figures and times of each change point, and the rate at which a 5 %
 * step in 1,000 points is placed within a run of its place. */
#include "server/facts_diff.h"
#include "server/history_cp.h"

#include "changepoint.h"
#include "check.h"
#include "sim.h"

#include <stdlib.h>

/* A history of n points an hour apart: level 100, times `factor[k]` from
 * `at[k]` on (k < steps), noise cv; result ids 1000 + i, plans i / 10. */
static void make(struct hv_history_values *v, size_t n, const size_t *at, const double *factor,
                 size_t steps, double cv, uint64_t seed)
{
    v->n = n;
    v->t = malloc(n * sizeof *v->t);
    v->value = malloc(n * sizeof *v->value);
    v->result_id = malloc(n * sizeof *v->result_id);
    v->plan_id = malloc(n * sizeof *v->plan_id);
    if (!v->t || !v->value || !v->result_id || !v->plan_id) {
        fprintf(stderr, "out of memory\n");
        exit(99);
    }
    uint64_t st = sim_state(91, seed);
    for (size_t i = 0; i < n; i++) {
        double level = 100.0;
        for (size_t k = 0; k < steps; k++)
            if (i >= at[k])
                level *= factor[k];
        v->t[i] = 1.6e9 + 3600.0 * (double)i;
        v->value[i] = level * (1.0 + cv * sim_normal(&st));
        v->result_id[i] = 1000 + (int64_t)i;
        v->plan_id[i] = (int64_t)i / 10;
    }
}

static void test_long_history(void)
{
    static const size_t at[] = {3000, 6000, 8500};
    static const double factor[] = {0.88, 1.08, 1.10};
    struct hv_history_values v;
    make(&v, 10000, at, factor, 3, 0.02, 1);
    struct hv_history_cp cp[HV_HISTORY_MAX_CP];
    size_t k = 0;
    CHECK(hv_history_detect(&v, cp, HV_HISTORY_MAX_CP, &k) == HV_STAT_OK);
    CHECK_MSG(k == 3, "found %zu change points", k);
    for (size_t c = 0; c < k && c < 3; c++) {
        long off = (long)cp[c].index - (long)at[c];
        CHECK_MSG(labs(off) <= 3, "change point %zu at %zu, the step at %zu", c, cp[c].index,
                  at[c]);
        CHECK_NEAR(cp[c].rel_change, factor[c] - 1.0, 0.005);
        CHECK(cp[c].p <= HV_CP_ALPHA);
        /* Its first point's time, result and plan; the point before it. */
        CHECK(cp[c].at == v.t[cp[c].index] && cp[c].before_at == v.t[cp[c].index - 1]);
        CHECK(cp[c].result_id == 1000 + (int64_t)cp[c].index);
        CHECK(cp[c].plan_id == (int64_t)cp[c].index / 10);
        /* Found again within 5 runs of 40 points either side. */
        CHECK(cp[c].match_lo == v.t[cp[c].index - 200] && cp[c].match_hi == v.t[cp[c].index + 200]);
    }
    /* The counts run from one change point to the next. */
    CHECK(k == 3 && cp[0].n_before == cp[0].index && cp[0].n_after == cp[1].index - cp[0].index &&
          cp[2].n_after == 10000 - cp[2].index);
    hv_history_values_free(&v);

    make(&v, 10000, at, factor, 0, 0.02, 2);
    CHECK(hv_history_detect(&v, cp, HV_HISTORY_MAX_CP, &k) == HV_STAT_OK);
    CHECK_MSG(k == 0, "a flat history has %zu change points", k);
    hv_history_values_free(&v);
}

static void test_short_history(void)
{
    static const size_t at[] = {30};
    static const double factor[] = {0.9};
    struct hv_history_values v;
    make(&v, 60, at, factor, 1, 0.005, 3);
    struct hv_history_cp cp[4];
    size_t k = 0;
    CHECK(hv_history_detect(&v, cp, 4, &k) == HV_STAT_OK);
    CHECK(k == 1 && cp[0].index == 30 && cp[0].n_before == 30 && cp[0].n_after == 30);
    CHECK(k == 1 && cp[0].match_lo == v.t[25] && cp[0].match_hi == v.t[35]);
    hv_history_values_free(&v);

    /* Too short to split; cap 0. */
    make(&v, 9, at, factor, 0, 0.005, 4);
    CHECK(hv_history_detect(&v, cp, 4, &k) == HV_STAT_OK && k == 0);
    hv_history_values_free(&v);
    make(&v, 60, at, factor, 1, 0.005, 3);
    CHECK(hv_history_detect(&v, cp, 0, &k) == HV_STAT_OK && k == 0);
    hv_history_values_free(&v);
}

/* A 5 % step at CV 2 % in 1,000 points (runs of 4 points): placed within
 * 4 points of its place in nearly every history. */
static void test_placement_rate(void)
{
    enum { SEEDS = 100, N = 1000 };
    size_t placed = 0, extra = 0;
    for (uint64_t seed = 0; seed < SEEDS; seed++) {
        uint64_t st = sim_state(92, seed);
        size_t at[] = {200 + (size_t)(hv_rng_uniform(&st) * 600)};
        double factor[] = {1.05};
        struct hv_history_values v;
        make(&v, N, at, factor, 1, 0.02, 100 + seed);
        struct hv_history_cp cp[HV_HISTORY_MAX_CP];
        size_t k = 0;
        CHECK(hv_history_detect(&v, cp, HV_HISTORY_MAX_CP, &k) == HV_STAT_OK);
        bool hit = false;
        for (size_t c = 0; c < k; c++)
            hit |= labs((long)cp[c].index - (long)at[0]) <= 4;
        placed += hit;
        extra += k > (hit ? 1u : 0u);
        hv_history_values_free(&v);
    }
    printf("5 %% step, 1,000 points, CV 2 %%: placed within 4 points in %.1f %% "
           "(another point besides: %.1f %%)\n",
           sim_pct(placed, SEEDS), sim_pct(extra, SEEDS));
    CHECK(sim_pct(placed, SEEDS) >= 95.0);
    CHECK(sim_pct(extra, SEEDS) <= 10.0);
}

static void test_facts_diff(void)
{
    json_t *before = check_json("{\"kernel\": \"6.1.0\", \"cpus\": 8, \"libvirt\": "
                                "{\"version\": \"9.0.0\", \"hypervisor_version\": \"7.2.0\"}, "
                                "\"kvm\": {\"ept\": true}, \"flags\": [\"a\", \"b\"]}");
    json_t *after = check_json("{\"kernel\": \"6.5.0\", \"cpus\": 8, \"libvirt\": "
                               "{\"version\": \"9.0.0\", \"hypervisor_version\": \"8.0.0\"}, "
                               "\"kvm\": {\"ept\": true, \"tdp_mmu\": false}, \"flags\": [\"a\"]}");
    json_t *d = hv_facts_diff(before, after);
    json_t *want =
        check_json("[{\"fact\": \"flags\", \"before\": [\"a\", \"b\"], \"after\": [\"a\"]},"
                   " {\"fact\": \"kernel\", \"before\": \"6.1.0\", \"after\": \"6.5.0\"},"
                   " {\"fact\": \"kvm.tdp_mmu\", \"before\": null, \"after\": false},"
                   " {\"fact\": \"libvirt.hypervisor_version\", \"before\": \"7.2.0\", \"after\": "
                   "\"8.0.0\"}]");
    CHECK(json_equal(d, want));
    json_decref(d);
    json_decref(want);
    d = hv_facts_diff(before, before);
    CHECK(json_is_array(d) && json_array_size(d) == 0);
    json_decref(d);
    /* A fact that was an object and is a string now is compared whole. */
    json_t *flat = check_json("{\"libvirt\": \"none\"}");
    d = hv_facts_diff(before, flat);
    CHECK(json_array_size(d) == 7);
    json_decref(d);
    d = hv_facts_diff(NULL, NULL);
    CHECK(json_is_array(d) && json_array_size(d) == 0);
    json_decref(d);
    json_decref(flat);
    json_decref(before);
    json_decref(after);
}

/* Facts of three sides: every path once, a value per side, the differing
 * marked. */
static void test_facts_side_by_side(void)
{
    json_t *a = check_json("{\"kernel\": \"6.1.0\", \"kvm\": {\"ept\": true}}");
    json_t *b = check_json("{\"kernel\": \"6.1.0\", \"kvm\": {\"ept\": false}}");
    const json_t *sides[] = {a, b, NULL};
    json_t *d = hv_facts_side_by_side(sides, 3);
    json_t *want = check_json("[{\"name\": \"kernel\", \"values\": [\"6.1.0\", \"6.1.0\", null], "
                              "\"differs\": true}, {\"name\": \"kvm.ept\", \"values\": [true, "
                              "false, null], \"differs\": true}]");
    CHECK(json_equal(d, want));
    json_decref(d);
    json_decref(want);
    d = hv_facts_side_by_side(sides, 2);
    want = check_json("[{\"name\": \"kernel\", \"values\": [\"6.1.0\", \"6.1.0\"], \"differs\": "
                      "false}, {\"name\": \"kvm.ept\", \"values\": [true, false], \"differs\": "
                      "true}]");
    CHECK(json_equal(d, want));
    json_decref(d);
    json_decref(want);
    json_decref(a);
    json_decref(b);
}

int main(void)
{
    test_short_history();
    test_long_history();
    test_placement_rate();
    test_facts_diff();
    test_facts_side_by_side();
    return check_summary("test_history_cp");
}
