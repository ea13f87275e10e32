/* h_admin.c — retention and recovery: deleting an ended plan, purging old
 * samples, raw outputs and plans (role admin), and retrying a failed
 * plan's failed jobs (role submit). */
#include "db_admin.h"
#include "handlers.h"
#include "jspec.h"
#include "timeutil.h"

#include <stdio.h>

void hv_h_plan_delete(struct hv_request *req)
{
    json_t *out = NULL;
    enum hv_db_status s = hv_db_plan_delete(req->ids[0], &out);
    if (s == HV_DB_NONE)
        hv_reply_problem(req, HV_E_NOT_FOUND, "no plan with this id", NULL);
    else if (s == HV_DB_CONFLICT)
        hv_reply_problem(req, HV_E_CONFLICT,
                         "the plan has not ended (or its host is not restored yet): cancel it "
                         "and wait for its restore step first",
                         NULL);
    else if (s != HV_DB_OK)
        hv_reply_db_failure(req, s);
    else
        hv_reply_json(req, 200, json_pack("{s:o}", "deleted", out));
}

void hv_h_plan_retry(struct hv_request *req)
{
    long n = 0;
    enum hv_db_status s = hv_db_plan_retry(req->ids[0], &n);
    if (s == HV_DB_NONE)
        hv_reply_problem(req, HV_E_NOT_FOUND, "no plan with this id", NULL);
    else if (s == HV_DB_CONFLICT)
        hv_reply_problem(req, HV_E_CONFLICT,
                         "only a failed plan without tuning blocks can be retried (a tuning "
                         "plan's host was restored after its blocks: submit it again)",
                         NULL);
    else if (s != HV_DB_OK)
        hv_reply_db_failure(req, s);
    else
        hv_reply_json(
            req, 200,
            json_pack("{s:I,s:I}", "plan_id", (json_int_t)req->ids[0], "retried", (json_int_t)n));
}

static const struct hv_jfield purge_fields[] = {
    {.name = "before", .type = HV_J_STRING, .required = true, .max_len = 64},
    {.name = "plans", .type = HV_J_BOOL},
    {.name = "samples", .type = HV_J_BOOL},
    {.name = "raw", .type = HV_J_BOOL},
    {.name = "dry_run", .type = HV_J_BOOL},
    {0},
};

void hv_h_purge(struct hv_request *req)
{
    json_t *doc = hv_req_json(req);
    if (doc == NULL)
        return;
    json_t *errors = json_array();
    struct hv_purge p = {0};
    if (hv_jspec_check(doc, "", purge_fields, errors) == 0) {
        p.before = json_string_value(json_object_get(doc, "before"));
        p.plans = json_is_true(json_object_get(doc, "plans"));
        p.samples = json_is_true(json_object_get(doc, "samples"));
        p.raw = json_is_true(json_object_get(doc, "raw"));
        p.dry_run = json_is_true(json_object_get(doc, "dry_run"));
        if (!hv_iso8601_valid(p.before))
            hv_errors_add(errors, "/before", "must be an ISO 8601 time (2026-01-31T00:00:00Z)");
        if (!p.plans && !p.samples && !p.raw)
            hv_errors_add(errors, "", "name what to purge: plans, samples and/or raw");
    }
    if (json_array_size(errors) > 0) {
        hv_reply_problem(req, HV_E_INVALID_REQUEST, "bad purge request", errors);
        json_decref(doc);
        return;
    }
    json_decref(errors);
    json_t *out = NULL;
    enum hv_db_status s = hv_db_purge(&p, &out);
    if (s != HV_DB_OK) {
        hv_reply_db_failure(req, s);
    } else {
        json_object_set_new(out, "before", json_string(p.before));
        json_object_set_new(out, "dry_run", json_boolean(p.dry_run));
        hv_reply_json(req, 200, out);
    }
    json_decref(doc);
}
