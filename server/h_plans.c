/* h_plans.c — submitting, listing and reading plans. */
#include "db_plans.h"
#include "handlers.h"
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

/* A seed for plans that give none: recorded with the plan, so its run
 * order can be replayed. */
static uint64_t fresh_seed(void)
{
    uint64_t s = 0;
    if (getrandom(&s, sizeof s, 0) != sizeof s)
        s = (uint64_t)time(NULL);
    return s;
}

/* The dry-run answer: what the plan expands into, without storing it. */
static json_t *expansion_json(const struct hv_plan *plan, const struct hv_job_spec *jobs, size_t n)
{
    json_t *order = json_array();
    for (size_t i = 0; i < n && i < 10000; i++)
        json_array_append_new(order, json_pack("{s:s,s:s,s:s,s:i,s:i}", "configuration",
                                               hv_plan_config_name(plan, jobs[i].config),
                                               "workload", plan->workloads[jobs[i].workload].id,
                                               "target", plan->host, "repetition",
                                               jobs[i].repetition, "run_order", jobs[i].run_order));
    return json_pack("{s:b,s:O,s:{s:I,s:I,s:I,s:I,s:I},s:o}", "dry_run", 1, "plan", plan->doc,
                     "counts", "configurations", (json_int_t)plan->n_configs, "workloads",
                     (json_int_t)plan->n_workloads, "targets", (json_int_t)1, "repetitions",
                     (json_int_t)plan->rep_min, "jobs", (json_int_t)n, "run_order", order);
}

void hv_h_plans_create(struct hv_request *req)
{
    json_t *doc = hv_req_json(req);
    if (doc == NULL)
        return;
    json_t *errors = json_array();
    struct hv_plan plan;
    enum hv_plan_verdict v = hv_plan_parse(doc, fresh_seed(), &plan, errors);
    json_decref(doc);
    if (v != HV_PLAN_VALID) {
        char detail[64];
        snprintf(detail, sizeof detail, "%zu error%s in the plan", json_array_size(errors),
                 json_array_size(errors) == 1 ? "" : "s");
        hv_reply_problem(req, v == HV_PLAN_INVALID ? HV_E_INVALID_PLAN : HV_E_IMPOSSIBLE_PLAN,
                         detail, errors);
        return;
    }
    json_decref(errors);
    size_t n = 0;
    struct hv_job_spec *jobs = hv_plan_expand(&plan, &n);
    if (jobs == NULL) {
        hv_plan_free(&plan);
        hv_reply_problem(req, HV_E_INTERNAL, "out of memory expanding the plan", NULL);
        return;
    }
    const char *dry = hv_req_query(req, "dry_run");
    if (dry != NULL && (strcmp(dry, "1") == 0 || strcmp(dry, "true") == 0)) {
        hv_reply_json(req, 200, expansion_json(&plan, jobs, n));
    } else {
        int64_t id = 0;
        enum hv_db_status s = hv_db_plan_create(&plan, jobs, n, &id);
        json_t *summary = NULL;
        if (s == HV_DB_OK)
            s = hv_db_plan_get(id, true, &summary);
        if (s == HV_DB_OK) {
            snprintf(req->location, sizeof req->location, "/api/v1/plans/%lld", (long long)id);
            hv_reply_json(req, 201, summary);
        } else {
            hv_reply_db_failure(req, s);
        }
    }
    free(jobs);
    hv_plan_free(&plan);
}

void hv_h_plans_list(struct hv_request *req)
{
    int limit = 50;
    const char *l = hv_req_query(req, "limit");
    if (l != NULL) {
        char *end;
        long v = strtol(l, &end, 10);
        if (*l == '\0' || *end != '\0' || v < 1 || v > 500) {
            json_t *errors = json_array();
            hv_errors_add(errors, "limit", "must be an integer between 1 and 500");
            hv_reply_problem(req, HV_E_INVALID_REQUEST, "bad query parameter", errors);
            return;
        }
        limit = (int)v;
    }
    json_t *items = NULL;
    enum hv_db_status s = hv_db_plan_list(limit, &items);
    if (s != HV_DB_OK) {
        hv_reply_db_failure(req, s);
        return;
    }
    hv_reply_json(req, 200, json_pack("{s:o}", "items", items));
}

void hv_h_plan_get(struct hv_request *req)
{
    json_t *summary = NULL;
    enum hv_db_status s = hv_db_plan_get(req->ids[0], true, &summary);
    if (s == HV_DB_NONE)
        hv_reply_problem(req, HV_E_NOT_FOUND, "no plan with this id", NULL);
    else if (s != HV_DB_OK)
        hv_reply_db_failure(req, s);
    else
        hv_reply_json(req, 200, summary);
}
