/* test_plan.c — plan validation (every error with its JSON path),
 * normalisation and expansion. */
#include "plan.h"

#include "check.h"

#include <stdlib.h>

/* Parses text and returns the verdict; errors are left in *errors. */
static enum hv_plan_verdict parse(const char *text, struct hv_plan *plan, json_t **errors)
{
    json_error_t err;
    json_t *doc = json_loads(text, JSON_REJECT_DUPLICATES, &err);
    if (doc == NULL) {
        fprintf(stderr, "bad test JSON: %s: %s\n", text, err.text);
        exit(99);
    }
    *errors = json_array();
    enum hv_plan_verdict v = hv_plan_parse(doc, 12345, plan, *errors);
    json_decref(doc);
    return v;
}

/* Whether errors has an entry for path. */
static int has_path(const json_t *errors, const char *path)
{
    size_t i;
    const json_t *e;
    json_array_foreach(errors, i, e) if (strcmp(json_string_value(json_object_get(e, "path")),
                                                path) == 0) return 1;
    return 0;
}

#define GOOD_WORKLOAD "{\"id\":\"cpu\",\"kind\":\"cpu\"}"
#define BASE          "\"name\":\"t\",\"targets\":{\"host\":\"h\"}"

static const struct {
    const char *plan;
    enum hv_plan_verdict verdict;
    const char *paths[4]; /* each must be reported */
} bad[] = {
    {"[]", HV_PLAN_INVALID, {""}},
    {"{}", HV_PLAN_INVALID, {"/name", "/targets", "/workloads"}},
    {"{\"name\":7,\"targets\":{\"host\":\"h\"},\"workloads\":[" GOOD_WORKLOAD "]}",
     HV_PLAN_INVALID,
     {"/name"}},
    {"{" BASE ",\"workloads\":[]}", HV_PLAN_INVALID, {"/workloads"}},
    {"{" BASE ",\"workloads\":[{\"id\":\"a\",\"kind\":\"gpu\"}]}",
     HV_PLAN_INVALID,
     {"/workloads/0/kind"}},
    {"{" BASE ",\"workloads\":[{\"kind\":\"cpu\"}]}", HV_PLAN_INVALID, {"/workloads/0/id"}},
    {"{" BASE ",\"workloads\":[{\"id\":\"Bad Id\",\"kind\":\"cpu\"}]}",
     HV_PLAN_INVALID,
     {"/workloads/0/id"}},
    {"{" BASE ",\"workloads\":[" GOOD_WORKLOAD "," GOOD_WORKLOAD "]}",
     HV_PLAN_INVALID,
     {"/workloads/1/id"}},
    {"{" BASE ",\"workloads\":[" GOOD_WORKLOAD "],\"bogus\":1}", HV_PLAN_INVALID, {"/bogus"}},
    {"{" BASE ",\"workloads\":[" GOOD_WORKLOAD "],\"repetitions\":{\"min\":0}}",
     HV_PLAN_INVALID,
     {"/repetitions/min"}},
    {"{" BASE ",\"workloads\":[" GOOD_WORKLOAD "],\"repetitions\":{\"min\":5,\"max\":2}}",
     HV_PLAN_INVALID,
     {"/repetitions/max"}},
    {"{" BASE ",\"workloads\":[" GOOD_WORKLOAD "],\"order\":\"shuffled\"}",
     HV_PLAN_INVALID,
     {"/order"}},
    {"{" BASE ",\"workloads\":[{\"id\":\"c\",\"kind\":\"cpu\",\"params\":{\"copies\":0}}]}",
     HV_PLAN_INVALID,
     {"/workloads/0/params/copies"}},
    {"{" BASE ",\"workloads\":[{\"id\":\"c\",\"kind\":\"cpu\",\"params\":{\"copies\":\"all\"}}]}",
     HV_PLAN_INVALID,
     {"/workloads/0/params/copies"}},
    {"{" BASE
     ",\"workloads\":[{\"id\":\"c\",\"kind\":\"cpu\",\"params\":{\"seconds\":\"1 week\"}}]}",
     HV_PLAN_INVALID,
     {"/workloads/0/params/seconds"}},
    {"{" BASE ",\"workloads\":[{\"id\":\"c\",\"kind\":\"cpu\",\"params\":{\"seconds\":0.5}}]}",
     HV_PLAN_INVALID,
     {"/workloads/0/params/seconds"}},
    {"{" BASE ",\"workloads\":[{\"id\":\"c\",\"kind\":\"cpu\",\"params\":{\"turbo\":true}}]}",
     HV_PLAN_INVALID,
     {"/workloads/0/params/turbo"}},
    /* Well formed, but not runnable here: 422. */
    {"{" BASE ",\"workloads\":[{\"id\":\"d\",\"kind\":\"disk\"}]}",
     HV_PLAN_IMPOSSIBLE,
     {"/workloads/0/engine"}},
    {"{" BASE ",\"workloads\":[" GOOD_WORKLOAD "],\"factors\":{\"warp_drive\":[\"off\",\"on\"]}}",
     HV_PLAN_IMPOSSIBLE,
     {"/factors/warp_drive"}},
    {"{\"name\":\"t\",\"targets\":{\"host\":\"h\",\"guests\":{}},\"workloads\":[" GOOD_WORKLOAD
     "]}",
     HV_PLAN_IMPOSSIBLE,
     {"/targets/guests"}},
};

int main(void)
{
    struct hv_plan plan;
    json_t *errors;

    /* Every bad plan gets its verdict and names each bad path. */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        enum hv_plan_verdict v = parse(bad[i].plan, &plan, &errors);
        CHECK(v == bad[i].verdict);
        for (size_t k = 0; k < 4 && bad[i].paths[k] != NULL; k++) {
            int found = has_path(errors, bad[i].paths[k]);
            CHECK(found);
            if (!found)
                fprintf(stderr, "  plan %zu: no error at '%s' in %s\n", i, bad[i].paths[k],
                        json_dumps(errors, JSON_COMPACT));
        }
        json_decref(errors);
    }

    /* The "{}" plan reports all three missing members at once. */
    parse("{}", &plan, &errors);
    CHECK(json_array_size(errors) == 3);
    json_decref(errors);

    /* A valid plan is normalised: defaults and units. */
    CHECK(parse("{" BASE ",\"workloads\":[{\"id\":\"cpu\",\"kind\":\"cpu\",\"params\":"
                "{\"seconds\":\"2m\",\"copies\":\"per-vcpu\"}},{\"id\":\"cpu2\",\"kind\":\"cpu\"}],"
                "\"repetitions\":{\"min\":4}}",
                &plan, &errors) == HV_PLAN_VALID);
    CHECK(json_array_size(errors) == 0);
    json_decref(errors);
    CHECK_STR(plan.name, "t");
    CHECK_STR(plan.host, "h");
    CHECK(plan.n_workloads == 2);
    CHECK_STR(plan.workloads[0].engine, "builtin");
    CHECK_NEAR(json_number_value(json_object_get(plan.workloads[0].params, "seconds")), 120.0, 0);
    CHECK_NEAR(json_number_value(json_object_get(plan.workloads[1].params, "seconds")), 10.0, 0);
    CHECK(json_integer_value(json_object_get(plan.workloads[1].params, "copies")) == 1);
    CHECK(plan.rep_min == 4 && plan.rep_max == 4);
    CHECK_NEAR(plan.ci_pct, 2.0, 0);
    CHECK(plan.randomized);
    CHECK(plan.seed == (12345 >> 11));
    CHECK_STR(json_string_value(json_object_get(plan.doc, "order")), "randomized");

    /* Expansion: 1 config x 2 workloads x 4 repetitions, each round holding
     * every workload once, run_order 0..7. */
    size_t n = 0;
    struct hv_job_spec *jobs = hv_plan_expand(&plan, &n);
    CHECK(n == 8);
    for (size_t r = 0; r < 4; r++) {
        CHECK(jobs[2 * r].repetition == (int)r + 1 && jobs[2 * r + 1].repetition == (int)r + 1);
        CHECK(jobs[2 * r].workload != jobs[2 * r + 1].workload);
    }
    for (size_t i = 0; i < n; i++)
        CHECK(jobs[i].run_order == (int)i);
    /* The same seed gives the same order. */
    size_t n2 = 0;
    struct hv_job_spec *again = hv_plan_expand(&plan, &n2);
    CHECK(n2 == n && memcmp(jobs, again, n * sizeof *jobs) == 0);
    free(again);
    free(jobs);
    hv_plan_free(&plan);

    /* A recorded seed is kept; sequential order is as written. */
    CHECK(parse("{" BASE ",\"workloads\":[" GOOD_WORKLOAD ",{\"id\":\"b\",\"kind\":\"cpu\"}],"
                "\"order\":\"sequential\",\"seed\":99}",
                &plan, &errors) == HV_PLAN_VALID);
    json_decref(errors);
    CHECK(plan.seed == 99 && !plan.randomized);
    jobs = hv_plan_expand(&plan, &n);
    CHECK(n == 6 && jobs[0].workload == 0 && jobs[1].workload == 1);
    free(jobs);
    hv_plan_free(&plan);

    /* The example every newcomer runs must stay valid. */
    json_error_t jerr;
    json_t *quick = json_load_file("examples/quick.json", JSON_REJECT_DUPLICATES, &jerr);
    CHECK(quick != NULL);
    errors = json_array();
    CHECK(quick && hv_plan_parse(quick, 1, &plan, errors) == HV_PLAN_VALID);
    if (quick && json_array_size(errors) == 0) {
        jobs = hv_plan_expand(&plan, &n);
        CHECK(n == 3);
        free(jobs);
        hv_plan_free(&plan);
    }
    json_decref(errors);
    json_decref(quick);
    return check_summary("test_plan");
}
