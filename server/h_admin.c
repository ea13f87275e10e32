/* h_admin.c — retention and recovery: deleting an ended plan, purging old
 * samples, raw outputs and plans (role admin), retrying a failed plan's
 * failed jobs (its submitter or an admin, plan_owner.h), and moving a plan
 * with its results between servers: export (read) and import (role
 * submit; the plan has no submitter here). */
#include "auth.h"
#include "db_admin.h"
#include "db_recommendations.h"
#include "handlers.h"
#include "jspec.h"
#include "log.h"
#include "plan_owner.h"
#include "report.h"
#include "result.h"
#include "timeutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Answers an action on a plan: 409 conflict with detail conflict when the
 * plan is not in a state the action allows, else as hv_reply_one(). */
static void reply_plan(struct hv_request *req, enum hv_db_status s, json_t *obj,
                       const char *conflict)
{
    if (s == HV_DB_CONFLICT) {
        json_decref(obj);
        hv_reply_problem(req, HV_E_CONFLICT, conflict, NULL);
        return;
    }
    hv_reply_one(req, s, obj, "no plan with this id");
}

void hv_h_plan_delete(struct hv_request *req)
{
    json_t *out = NULL;
    enum hv_db_status s = hv_db_plan_delete(req->ids[0], &out);
    reply_plan(req, s, s == HV_DB_OK ? json_pack("{s:o}", "deleted", out) : out,
               "the plan has not ended (or its host is not restored yet): cancel it "
               "and wait for its restore step first");
}

void hv_h_plan_retry(struct hv_request *req)
{
    if (!hv_plan_owner_check(req, req->ids[0], "retry"))
        return;
    long n = 0;
    enum hv_db_status s = hv_db_plan_retry(req->ids[0], &n);
    reply_plan(req, s,
               s == HV_DB_OK ? json_pack("{s:I,s:I}", "plan_id", (json_int_t)req->ids[0], "retried",
                                         (json_int_t)n)
                             : NULL,
               "only a failed plan without tuning blocks whose after_host hook ended can be "
               "retried (a tuning plan's host was restored after its blocks: submit it again)");
}

/* The body goes straight into the purge. */
#define TO(field) HV_JTO(struct hv_purge, field)

static const struct hv_jfield purge_fields[] = {
    {.name = "before", .type = HV_J_STRING, .required = true, .max_len = 64, TO(before)},
    {.name = "plans", .type = HV_J_BOOL, TO(plans)},
    {.name = "samples", .type = HV_J_BOOL, TO(samples)},
    {.name = "raw", .type = HV_J_BOOL, TO(raw)},
    {.name = "dry_run", .type = HV_J_BOOL, TO(dry_run)},
    {0},
};

/* The time and what to purge, once the members are checked. */
static void check_purge(const json_t *doc, const void *dest, json_t *errors)
{
    const struct hv_purge *p = dest;
    if (json_array_size(errors) > 0)
        return;
    if (!hv_iso8601_valid(p->before))
        hv_errors_add(errors, "/before", "must be an ISO 8601 time (2026-01-31T00:00:00Z)");
    if (!p->plans && !p->samples && !p->raw)
        hv_errors_add(errors, "", "name what to purge: plans, samples and/or raw");
}

void hv_h_purge(struct hv_request *req)
{
    struct hv_purge p = {0};
    json_t *doc = hv_req_body(req, purge_fields, &p, check_purge, "bad purge request");
    if (doc == NULL)
        return;
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

/* An exported plan (GET /api/v1/plans/{id}/export, migrations/014). */
static const char *const job_states[] = {"done", "failed", "cancelled", NULL};
static const char *const result_states[] = {"ok", "error", NULL};
static const char *const formats[] = {"hvbench-plan/1", NULL};

static const struct hv_jfield doc_fields[] = {
    {.name = "format", .type = HV_J_STRING, .required = true, .choices = formats},
    {.name = "exported_at", .type = HV_J_ANY},
    {.name = "plan", .type = HV_J_OBJECT, .required = true},
    {.name = "configurations", .type = HV_J_ARRAY, .required = true},
    {.name = "groups", .type = HV_J_ARRAY},
    {.name = "jobs", .type = HV_J_ARRAY, .required = true},
    {0},
};
static const struct hv_jfield plan_fields[] = {
    {.name = "id", .type = HV_J_INTEGER},
    {.name = "name", .type = HV_J_STRING, .required = true, .max_len = HV_JSPEC_NAME_MAX},
    {.name = "spec", .type = HV_J_OBJECT, .required = true},
    {.name = "seed", .type = HV_J_INTEGER, .required = true},
    {.name = "cancelled", .type = HV_J_BOOL},
    {.name = "created_at", .type = HV_J_ANY},
    {.name = "cancelled_at", .type = HV_J_ANY},
    {0},
};
static const struct hv_jfield config_fields[] = {
    {.name = "idx", .type = HV_J_INTEGER, .required = true, .min = 0, .max = 1e6},
    {.name = "name", .type = HV_J_STRING, .required = true, .max_len = 4096},
    {.name = "levels", .type = HV_J_OBJECT},
    {0},
};
static const struct hv_jfield group_fields[] = {
    {.name = "idx", .type = HV_J_INTEGER, .required = true, .min = 0, .max = 1e9},
    {.name = "size", .type = HV_J_INTEGER, .required = true, .min = 1, .max = 1e6},
    {0},
};
static const struct hv_jfield job_fields[] = {
    {.name = "id", .type = HV_J_INTEGER},
    {.name = "configuration", .type = HV_J_INTEGER, .required = true, .min = 0, .max = 1e6},
    {.name = "group", .type = HV_J_ANY},
    {.name = "role", .type = HV_J_ANY},
    {.name = "workload_id", .type = HV_J_STRING, .required = true, .max_len = 256},
    {.name = "workload", .type = HV_J_OBJECT, .required = true},
    {.name = "target", .type = HV_J_STRING, .required = true, .max_len = HV_JSPEC_NAME_MAX},
    {.name = "repetition", .type = HV_J_INTEGER, .required = true, .min = 1, .max = 1e6},
    {.name = "run_order", .type = HV_J_INTEGER, .required = true, .min = 0, .max = 2e9},
    {.name = "status", .type = HV_J_STRING, .required = true, .choices = job_states},
    {.name = "attempt", .type = HV_J_INTEGER, .min = 0, .max = 1e6},
    {.name = "error", .type = HV_J_ANY},
    {.name = "claimed_at", .type = HV_J_ANY},
    {.name = "finished_at", .type = HV_J_ANY},
    {.name = "results", .type = HV_J_ARRAY},
    {0},
};
static const struct hv_jfield result_fields[] = {
    {.name = "attempt", .type = HV_J_INTEGER, .required = true, .min = 1, .max = 1e6},
    {.name = "status", .type = HV_J_STRING, .required = true, .choices = result_states},
    {.name = "error", .type = HV_J_ANY},
    {.name = "started_at", .type = HV_J_ANY},
    {.name = "finished_at", .type = HV_J_ANY},
    {.name = "received_at", .type = HV_J_ANY},
    {.name = "observed", .type = HV_J_OBJECT},
    {.name = "raw", .type = HV_J_ANY},
    {.name = "metrics", .type = HV_J_ARRAY},
    {.name = "samples", .type = HV_J_ARRAY},
    {0},
};
/* Members that must be null or a time; members that must be null or a
 * string (of at most max characters). */
static void check_times(const json_t *o, const char *path, const char *const *names, json_t *errors)
{
    for (const char *const *n = names; *n != NULL; n++) {
        const json_t *v = json_object_get(o, *n);
        if (v == NULL || json_is_null(v))
            continue;
        char p[128];
        hv_jpath(p, sizeof p, path, *n);
        if (!json_is_string(v) || !hv_iso8601_valid(json_string_value(v)))
            hv_errors_add(errors, p, "must be null or an ISO 8601 UTC time");
    }
}

static void check_nullable(const json_t *o, const char *path, const char *name, bool integer,
                           json_t *errors)
{
    const json_t *v = json_object_get(o, name);
    if (v == NULL || json_is_null(v) || (integer ? json_is_integer(v) : json_is_string(v)))
        return;
    char p[128];
    hv_jpath(p, sizeof p, path, name);
    hv_errors_add(errors, p, integer ? "must be null or an integer" : "must be null or a string");
}

/* Checks each element of o's array member name against fields. */
static void check_each(const json_t *o, const char *base, const char *name,
                       const struct hv_jfield *fields, json_t *errors)
{
    char path[128];
    hv_jpath(path, sizeof path, base, name);
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(o, name), i, x)
    {
        char p[160];
        hv_jpath_index(p, sizeof p, path, i);
        hv_jspec_check(x, p, fields, errors);
        if (json_array_size(errors) > 20)
            return;
    }
}

/* Appends an error at the member key of each element of list (an array
 * of objects under path) whose key another element before it has: the
 * database keeps one of each, and would refuse the document whole. */
static void check_unique(const json_t *list, const char *path, const char *key, const char *what,
                         json_t *errors)
{
    size_t i, k;
    const json_t *x;
    json_array_foreach(list, i, x)
    {
        const json_t *v = json_object_get(x, key);
        for (k = 0; k < i && v != NULL; k++) {
            if (!json_equal(json_object_get(json_array_get(list, k), key), v))
                continue;
            char p[192], q[192];
            hv_jpath_index(q, sizeof q, path, i);
            hv_jpath(p, sizeof p, q, key);
            hv_errors_add(errors, p, "%s of %" JSON_INTEGER_FORMAT " appears more than once", what,
                          json_integer_value(v));
            break;
        }
    }
}

static void check_results(const json_t *job, const char *jpath, json_t *errors)
{
    static const char *const times[] = {"started_at", "finished_at", "received_at", NULL};
    char path[128];
    hv_jpath(path, sizeof path, jpath, "results");
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(job, "results"), i, r)
    {
        char p[160];
        hv_jpath_index(p, sizeof p, path, i);
        if (hv_jspec_check(r, p, result_fields, errors) > 0)
            return;
        check_times(r, p, times, errors);
        check_nullable(r, p, "error", false, errors);
        check_nullable(r, p, "raw", false, errors);
        const json_t *raw = json_object_get(r, "raw");
        if (json_string_length(raw) > HV_RESULT_MAX_RAW) {
            char q[192];
            hv_jpath(q, sizeof q, p, "raw");
            hv_errors_add(errors, q, "must be at most %u bytes", HV_RESULT_MAX_RAW);
        }
        /* The rules of an upload, so an export is no way around them. */
        hv_result_data_check(r, p, errors);
    }
    check_unique(json_object_get(job, "results"), path, "attempt", "an attempt", errors);
}

/* Whether the array of objects list has one whose "idx" is v. */
static bool has_idx(const json_t *list, const json_t *v)
{
    size_t i;
    const json_t *x;
    json_array_foreach(list, i, x)
    {
        if (json_equal(json_object_get(x, "idx"), v))
            return true;
    }
    return false;
}

/* A job's configuration and group must be the document's. */
static void check_refs(const json_t *doc, const json_t *job, const char *path, json_t *errors)
{
    char p[96];
    if (!has_idx(json_object_get(doc, "configurations"), json_object_get(job, "configuration"))) {
        hv_jpath(p, sizeof p, path, "configuration");
        hv_errors_add(errors, p, "names no configuration of the document");
    }
    const json_t *g = json_object_get(job, "group");
    if (json_is_integer(g) && !has_idx(json_object_get(doc, "groups"), g)) {
        hv_jpath(p, sizeof p, path, "group");
        hv_errors_add(errors, p, "names no group of the document");
    }
}

static void check_document(const json_t *doc, json_t *errors)
{
    static const char *const plan_times[] = {"created_at", "cancelled_at", NULL};
    static const char *const job_times[] = {"claimed_at", "finished_at", NULL};
    if (hv_jspec_check(doc, "", doc_fields, errors) > 0)
        return;
    const json_t *plan = json_object_get(doc, "plan");
    if (hv_jspec_check(plan, "/plan", plan_fields, errors) == 0)
        check_times(plan, "/plan", plan_times, errors);
    check_each(doc, "", "configurations", config_fields, errors);
    check_each(doc, "", "groups", group_fields, errors);
    check_unique(json_object_get(doc, "configurations"), "/configurations", "idx",
                 "a configuration index", errors);
    check_unique(json_object_get(doc, "groups"), "/groups", "idx", "a group index", errors);
    size_t i;
    const json_t *job;
    json_array_foreach(json_object_get(doc, "jobs"), i, job)
    {
        char p[64];
        hv_jpath_index(p, sizeof p, "/jobs", i);
        if (hv_jspec_check(job, p, job_fields, errors) > 0)
            continue;
        check_times(job, p, job_times, errors);
        check_nullable(job, p, "group", true, errors);
        check_nullable(job, p, "role", false, errors);
        check_nullable(job, p, "error", false, errors);
        check_refs(doc, job, p, errors);
        check_results(job, p, errors);
        if (json_array_size(errors) > 20)
            return;
    }
}

void hv_h_plan_export(struct hv_request *req)
{
    char *doc = NULL;
    enum hv_db_status s = hv_db_plan_export(req->ids[0], &doc);
    if (s == HV_DB_NONE)
        hv_reply_problem(req, HV_E_NOT_FOUND, "no plan with this id", NULL);
    else if (s == HV_DB_CONFLICT)
        hv_reply_problem(req, HV_E_CONFLICT, "the plan has not ended; export it when it has", NULL);
    else if (s != HV_DB_OK)
        hv_reply_db_failure(req, s);
    else
        hv_reply_text(req, 200, "application/json", doc);
    if (s != HV_DB_OK)
        free(doc);
}

/* The identity of an exported document: the SHA-256 (hex) of its compact
 * JSON with sorted keys, "exported_at" left out, so the same plan exported
 * twice, or sent by another client that wrote the file its own way, is the
 * same document. Numbers go through jansson's parsing and printing, which
 * one value always leaves the same. Removes "exported_at" from doc. */
static bool document_digest(json_t *doc, char out[65])
{
    json_object_del(doc, "exported_at");
    char *canon = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
    if (canon == NULL)
        return false;
    hv_sha256_hex(canon, strlen(canon), out);
    free(canon);
    return true;
}

/* An imported plan ends done without a round decided here: its report's
 * recommendations are kept as a round's end keeps them (nothing for a plan
 * that is not done; a second import of the document keeps what the first
 * could not). */
static void keep_recommendations(int64_t id)
{
    json_t *report = NULL;
    char idtxt[24];
    snprintf(idtxt, sizeof idtxt, "%lld", (long long)id);
    struct hv_db *db = hv_db_thread();
    enum hv_db_status s = db != NULL ? hv_report_get(id, false, &report) : HV_DB_UNAVAILABLE;
    if (s == HV_DB_OK)
        s = hv_db_recommendations_keep(db, idtxt, json_object_get(report, "recommendations"));
    if (s != HV_DB_OK)
        hv_warn("plan %lld: its recommendations could not be kept", (long long)id);
    json_decref(report);
}

void hv_h_plan_import(struct hv_request *req)
{
    json_t *doc = hv_req_json(req);
    if (doc == NULL)
        return;
    json_t *errors = json_array();
    check_document(doc, errors);
    char digest[65];
    bool digested = json_array_size(errors) == 0 && document_digest(doc, digest);
    json_decref(doc);
    if (json_array_size(errors) > 0) {
        hv_reply_problem(req, HV_E_INVALID_REQUEST, "not a plan as hvbench exports them", errors);
        return;
    }
    json_decref(errors);
    if (!digested) {
        hv_reply_problem(req, HV_E_INTERNAL, "out of memory", NULL);
        return;
    }
    int64_t id = 0;
    bool created = false;
    /* No submitter is recorded (token 0): the plan was made elsewhere, and
     * an imported plan is an admin's to cancel or retry (plan_owner.h). */
    enum hv_db_status s = hv_db_plan_import(req->body, 0, digest, &id, &created);
    if (s == HV_DB_CONFLICT) {
        hv_reply_problem(req, HV_E_CONFLICT,
                         "the document holds something twice that the server keeps once; "
                         "nothing was stored",
                         NULL);
        return;
    }
    if (s != HV_DB_OK) {
        hv_reply_db_failure(req, s);
        return;
    }
    keep_recommendations(id);
    /* The same document again: its plan, nothing stored (201 once, then 200). */
    snprintf(req->location, sizeof req->location, "/api/v1/plans/%lld", (long long)id);
    hv_reply_json(req, created ? 201 : 200, json_pack("{s:I}", "id", (json_int_t)id));
}
