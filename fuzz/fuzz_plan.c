/* fuzz_plan.c — a plan submitted to POST /api/v1/plans: the body parsed as
 * the server parses it, validated by hv_plan_parse() as server/h_plans.c
 * calls it, and a valid plan expanded by hv_plan_expand().
 *
 * Checked (plan.h): an invalid plan says why, every error under a JSON
 * path; a valid plan's expansion holds rep_min rounds of
 * hv_plan_jobs_per_round() jobs, each pointing at a real configuration,
 * workload, target and group, within HV_PLAN_MAX_JOBS; the normalised
 * document, which is what the server stores, validates again to itself;
 * at most HV_PLAN_MAX_ERRORS problems and one counting the rest; and every
 * string a valid plan hands on to a host worker's virt layer is a
 * host-safe name (names.h): the host, each guest's domain, each clone's
 * name once the server put a plan id in it, the template domain, the site
 * factors' and site benchmarks' names and the hooks' local commands. */
#include "fuzz.h"

#include "factors.h"
#include "names.h"
#include "plan.h"
#include "plan_targets.h"
#include "tests/unit/plan_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The expansion of a valid plan against what plan.h promises. */
static void check_expansion(const struct hv_plan *plan, const struct hv_expansion *x)
{
    FUZZ_REQUIRE(plan->rep_min >= 1 && plan->rep_min <= plan->rep_max &&
                 plan->rep_max <= HV_PLAN_MAX_REPETITIONS);
    FUZZ_REQUIRE(x->n_jobs == hv_plan_jobs_per_round(plan) * (size_t)plan->rep_min);
    FUZZ_REQUIRE(x->n_jobs <= HV_PLAN_MAX_JOBS);
    size_t grouped = 0, members = 0;
    for (size_t i = 0; i < x->n_jobs; i++) {
        const struct hv_job_spec *j = &x->jobs[i];
        FUZZ_REQUIRE(j->run_order == (int)i);
        FUZZ_REQUIRE(j->config < plan->n_configs && j->workload < plan->n_workloads);
        FUZZ_REQUIRE(j->repetition >= 1 && j->repetition <= plan->rep_min);
        FUZZ_REQUIRE(j->target != NULL && j->target[0] != '\0');
        FUZZ_REQUIRE(j->group >= -1 && j->group < (long)x->n_groups);
        grouped += j->group >= 0;
    }
    for (size_t g = 0; g < x->n_groups; g++) {
        FUZZ_REQUIRE(x->group_sizes[g] > 1);
        members += (size_t)x->group_sizes[g];
    }
    FUZZ_REQUIRE(grouped == members);
}

/* A guest target name as the host worker gets it: the domain part, with
 * the plan's id (here id) in place of HV_PLAN_ID_TOKEN. */
static void require_guest(const char *target, const char *id)
{
    char name[512];
    const char *domain = hv_plan_domain_of(target);
    const char *mark = strstr(domain, HV_PLAN_ID_MARK);
    if (mark == NULL) {
        FUZZ_REQUIRE(hv_name_host_ok(domain));
        return;
    }
    int n = snprintf(name, sizeof name, "%.*sp%s%s", (int)(mark - domain), domain, id,
                     mark + strlen(HV_PLAN_ID_MARK));
    FUZZ_REQUIRE(n > 0 && (size_t)n < sizeof name);
    FUZZ_REQUIRE(hv_name_host_ok(name));
}

/* Every string of a valid plan that reaches a host is host-safe. */
static void check_host_names(const struct hv_plan *plan)
{
    FUZZ_REQUIRE(hv_name_host_ok(plan->host));
    for (size_t i = 0; i < plan->n_guests; i++) {
        require_guest(plan->guests[i], "1");
        require_guest(plan->guests[i], HV_PLAN_ID_LONGEST);
    }
    const json_t *guests = json_object_get(json_object_get(plan->doc, "targets"), "guests");
    const json_t *tmpl = json_object_get(guests, "template");
    if (tmpl != NULL) {
        FUZZ_REQUIRE(hv_name_host_json_ok(json_object_get(tmpl, "domain")));
        FUZZ_REQUIRE(hv_name_host_json_ok(json_object_get(tmpl, "prefix")));
    }
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(guests, "domains"), i, v)
        FUZZ_REQUIRE(hv_name_host_json_ok(v));
    const char *key;
    json_object_foreach(json_object_get(plan->doc, "factors"), key, v)
    {
        if (hv_site_factor_is(key))
            FUZZ_REQUIRE(hv_name_host_ok(key + strlen(HV_SITE_PREFIX)));
    }
    for (size_t w = 0; w < plan->n_workloads; w++)
        if (strcmp(plan->workloads[w].engine, "custom") == 0)
            FUZZ_REQUIRE(hv_name_host_json_ok(json_object_get(plan->workloads[w].params, "name")));
    json_object_foreach(json_object_get(plan->doc, "hooks"), key, v)
    {
        const json_t *local = json_object_get(v, "local");
        FUZZ_REQUIRE(local == NULL || hv_name_host_json_ok(local));
    }
}

/* Validates the normalised document of a valid plan once more: it must
 * stay valid and come back unchanged. */
static void check_normalised(const struct hv_plan *plan)
{
    json_t *errors = json_array();
    struct hv_plan again;
    enum hv_plan_verdict v = hv_plan_parse(plan->doc, 7, &plan_env, &again, errors);
    if (v != HV_PLAN_VALID) {
        char *doc = json_dumps(plan->doc, JSON_COMPACT);
        char *why = json_dumps(errors, JSON_COMPACT);
        fprintf(stderr, "normalised plan %s refused: %s\n", doc, why);
        free(doc);
        free(why);
    }
    FUZZ_REQUIRE(v == HV_PLAN_VALID);
    FUZZ_REQUIRE(json_equal(again.doc, plan->doc));
    hv_plan_free(&again);
    json_decref(errors);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *doc = fuzz_json_body(data, size);
    if (doc == NULL)
        return 0;
    json_t *errors = json_array();
    struct hv_plan plan;
    enum hv_plan_verdict v = hv_plan_parse(doc, 12345, &plan_env, &plan, errors);
    json_decref(doc);
    FUZZ_REQUIRE(v == HV_PLAN_VALID || v == HV_PLAN_INVALID || v == HV_PLAN_IMPOSSIBLE);
    fuzz_check_errors(errors, v != HV_PLAN_VALID);
    FUZZ_REQUIRE(json_array_size(errors) <= HV_PLAN_MAX_ERRORS + 1);
    json_decref(errors);
    if (v != HV_PLAN_VALID)
        return 0;
    struct hv_expansion x;
    FUZZ_REQUIRE(hv_plan_expand(&plan, &x) == 0);
    check_expansion(&plan, &x);
    hv_expansion_free(&x);
    check_host_names(&plan);
    check_normalised(&plan);
    hv_plan_free(&plan);
    return 0;
}
