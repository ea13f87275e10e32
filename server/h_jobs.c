/* h_jobs.c — the worker side of the job protocol: claim, heartbeat,
 * release, result. */
#include "auth.h"
#include "batch.h"
#include "config.h"
#include "db_jobs.h"
#include "db_steps.h"
#include "db_workers.h"
#include "handlers.h"
#include "jspec.h"
#include "log.h"
#include "metrics.h"
#include "query.h"
#include "result.h"
#include "timeutil.h"
#include "waiters.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the calls' bodies hold, bound by their tables. */
struct job_body {
    const json_t *target_id;
    int attempt;
    const char *reason;
    double wait;
    const json_t *endpoint;
};

#define TO(field) HV_JTO(struct job_body, field)

static const struct hv_jfield claim_fields[] = {
    {.name = "target_id", .type = HV_J_INTEGER, .min = 1, .max = 9e18, TO(target_id)},
    {.name = "wait", .type = HV_J_NUMBER, .min = 0, .max = 60, TO(wait)},
    {0},
};

static const struct hv_jfield attempt_fields[] = {
    {.name = "attempt", .type = HV_J_INTEGER, .required = true, .min = 1, .max = 1e9, TO(attempt)},
    {.name = "reason",
     .type = HV_J_STRING,
     .max_len = 1024,
     TO(reason),
     .def_str = "released by the worker"},
    {0},
};

static const struct hv_jfield ready_fields[] = {
    {.name = "attempt", .type = HV_J_INTEGER, .required = true, .min = 1, .max = 1e9, TO(attempt)},
    {.name = "wait", .type = HV_J_NUMBER, .min = 0, .max = 60, TO(wait)},
    {.name = "endpoint", .type = HV_J_OBJECT, TO(endpoint)},
    {0},
};

static const struct hv_jfield endpoint_fields[] = {
    {.name = "host", .type = HV_J_STRING, .required = true, .max_len = 255},
    {.name = "port", .type = HV_J_INTEGER, .required = true, .min = 1, .max = 65535},
    {0},
};

/* Where a result's members go; lib/result.c checks them
 * (hv_result_body_check). */
static const struct hv_jfield result_binding[] = {
    {.name = "attempt", HV_JTO(struct hv_result_upload, attempt)},
    {.name = "status", HV_JTO(struct hv_result_upload, status)},
    {.name = "error", HV_JTO(struct hv_result_upload, error)},
    {.name = "started_at", HV_JTO(struct hv_result_upload, started_at)},
    {.name = "finished_at", HV_JTO(struct hv_result_upload, finished_at)},
    {.name = "metrics", HV_JTO(struct hv_result_upload, metrics)},
    {.name = "samples", HV_JTO(struct hv_result_upload, samples)},
    {.name = "observed", HV_JTO(struct hv_result_upload, observed)},
    {.name = "raw", HV_JTO(struct hv_result_upload, raw)},
    {0},
};

#define DOES_NOT_FIT "the request body does not fit"

/* A ready call's endpoint, checked once the body's members are. */
static void check_endpoint(const json_t *doc, const void *dest, json_t *errors)
{
    const struct job_body *b = dest;
    if (json_array_size(errors) == 0 && b->endpoint != NULL)
        hv_jspec_check(b->endpoint, "/endpoint", endpoint_fields, errors);
}

/* The detail of a 409 stale_attempt. */
static const char stale[] = "this attempt is not running any more (lease expired, job "
                            "re-queued, finished or cancelled)";

static void reply_stale(struct hv_request *req)
{
    hv_reply_problem(req, HV_E_STALE_ATTEMPT, stale, NULL);
}

static void reply_not_claimer(struct hv_request *req)
{
    hv_reply_problem(req, HV_E_FORBIDDEN,
                     "this worker did not claim this attempt of the job; only its claimer "
                     "may send its calls",
                     NULL);
}

/* Whether the calling worker claimed this attempt of the job in the
 * path; answers 404, 403 or a database failure and returns false when
 * not. Only the claimer may touch an attempt (migrations/005). */
static bool caller_owns(struct hv_request *req, int attempt)
{
    enum hv_job_owner who = HV_OWNER_OTHER;
    enum hv_db_status s = hv_db_job_owner(req->ids[0], attempt, req->worker_id, &who);
    if (s != HV_DB_OK) {
        hv_reply_db_failure(req, s);
        return false;
    }
    if (who == HV_OWNER_NO_JOB) {
        hv_reply_problem(req, HV_E_NOT_FOUND, "no job with this id", NULL);
        return false;
    }
    if (who == HV_OWNER_OTHER) {
        reply_not_claimer(req);
        return false;
    }
    return true;
}

/* Long polls never hold a request longer than this, whatever was asked. */
#define MAX_WAIT ((double)HV_CLAIM_WAIT_MAX)

/* Starts or continues a long poll: the first run sets the deadline; a
 * handler with nothing to answer calls park() and returns. */
static void set_deadline(struct hv_request *req, double wait)
{
    if (req->wait_deadline == 0)
        req->wait_deadline = hv_monotonic() + (wait > MAX_WAIT ? MAX_WAIT : wait);
}

static bool may_wait(struct hv_request *req, double wait)
{
    set_deadline(req, wait);
    return !hv_waiters_stopping() && hv_monotonic() + 0.05 < req->wait_deadline;
}

static void park(struct hv_request *req, enum hv_wait_kind kind, int64_t key)
{
    req->park = true;
    req->park_kind = kind;
    req->park_key = key;
}

/* A credential not looked up yet (hv_auth_defer) is looked up now; false,
 * with the refusal answered, when it does not hold. */
static bool settle_auth(struct hv_request *req)
{
    char detail[256];
    return !hv_auth_reply_refusal(req, hv_auth_settle(req, detail, sizeof detail), detail);
}

/* A claimed job as it is answered (returned), logged and counted. */
static json_t *job_claimed(json_t *job, json_int_t target)
{
    json_object_set_new(job, "lease_seconds", json_integer(hv_cfg.lease_seconds));
    hv_info("job %lld attempt %lld claimed by target %lld",
            (long long)json_integer_value(json_object_get(job, "id")),
            (long long)json_integer_value(json_object_get(job, "attempt")), (long long)target);
    return job;
}

/* Answers a claimed job (owned: given to the answer). */
static void reply_job(struct hv_request *req, json_t *job, json_int_t target)
{
    char now[32];
    hv_now_iso8601(now, sizeof now);
    job = job_claimed(job, target);
    hv_reply_json(req, 200, json_pack("{s:o,s:s}", "job", job, "server_time", now));
    hv_metrics_claim(true);
}

/* The single claim: the sweeps that are due, a step of the target, else
 * its next job. HV_DB_OK with *step or *job set, HV_DB_NONE with neither. */
static enum hv_db_status claim_single(struct hv_request *req, json_t **step, json_t **job)
{
    json_int_t target = req->worker_target;
    bool steps = true;
    enum hv_db_status s = hv_db_claim_sweeps(target, hv_cfg.lease_seconds, &steps);
    /* A host's apply and restore steps go before its jobs: a caller that
     * takes no step (step NULL) gets no job while one may be queued. */
    if (s == HV_DB_OK && steps && step == NULL)
        return HV_DB_NONE;
    if (s == HV_DB_OK)
        s = steps ? hv_db_step_claim(target, req->worker_id, hv_cfg.lease_seconds, step)
                  : HV_DB_NONE;
    if (s != HV_DB_NONE)
        return s;
    return hv_db_job_claim(target, req->worker_id, hv_cfg.lease_seconds, job);
}

void hv_h_job_claim(struct hv_request *req)
{
    struct job_body b = {0};
    json_t *doc = hv_req_body(req, claim_fields, &b, NULL, DOES_NOT_FIT);
    if (doc == NULL)
        return;
    double wait = b.wait;
    json_int_t asked = b.target_id != NULL ? json_integer_value(b.target_id) : 0;
    json_decref(doc);
    set_deadline(req, wait);
    int outcome = req->batch_outcome;
    req->batch_outcome = 0;
    if (outcome == 0) {
        /* Read before looking, so a notification that comes between the
         * look and the park wakes this request at once. */
        req->wait_seq = hv_waiters_seq(HV_WAIT_JOBS);
        if (hv_batch_on(HV_BATCH_CLAIM)) {
            req->batch = HV_BATCH_CLAIM; /* batch.h: the answer comes on the next run */
            req->batch_target = asked;
            req->park = true;
            return;
        }
    }
    if (!settle_auth(req))
        return;
    json_int_t target = req->worker_target;
    if (asked != 0 && asked != target) {
        hv_reply_problem(req, HV_E_FORBIDDEN,
                         "this worker holds another target; it claims only that target's jobs",
                         NULL);
        return;
    }
    json_t *step = NULL, *job = NULL;
    enum hv_db_status s = HV_DB_NONE;
    if (outcome == HV_CLAIM_JOB) {
        job = req->batch_job;
        req->batch_job = NULL;
        s = HV_DB_OK;
    } else if (outcome != HV_CLAIM_NONE) {
        s = claim_single(req, &step, &job);
    }
    if (s == HV_DB_OK && step != NULL) {
        json_object_set_new(step, "lease_seconds", json_integer(hv_cfg.lease_seconds));
        char now[32];
        hv_now_iso8601(now, sizeof now);
        hv_info("step %lld (%s, plan %lld) attempt %lld claimed by target %lld",
                (long long)json_integer_value(json_object_get(step, "id")),
                json_string_value(json_object_get(step, "kind")),
                (long long)json_integer_value(json_object_get(step, "plan_id")),
                (long long)json_integer_value(json_object_get(step, "attempt")), (long long)target);
        hv_reply_json(req, 200, json_pack("{s:o,s:s}", "step", step, "server_time", now));
        hv_metrics_claim(true);
        return;
    }
    if (s == HV_DB_NONE) {
        if (may_wait(req, wait)) {
            park(req, HV_WAIT_JOBS, 0);
        } else {
            hv_reply_json(req, 204, NULL);
            hv_metrics_claim(false);
        }
        return;
    }
    if (s != HV_DB_OK) {
        hv_reply_db_failure(req, s);
        return;
    }
    reply_job(req, job, target);
}

void hv_h_job_ready(struct hv_request *req)
{
    struct job_body b = {0};
    json_t *doc = hv_req_body(req, ready_fields, &b, check_endpoint, DOES_NOT_FIT);
    if (doc == NULL)
        return;
    char *endpoint_text = b.endpoint ? json_dumps(b.endpoint, JSON_COMPACT) : NULL;
    int attempt = b.attempt;
    double wait = b.wait;
    json_decref(doc);
    if (!caller_owns(req, attempt)) {
        free(endpoint_text);
        return;
    }
    req->wait_seq = hv_waiters_seq(HV_WAIT_GROUP);
    struct hv_group_state g;
    enum hv_db_status s = hv_db_job_ready(req->ids[0], attempt, hv_cfg.lease_seconds,
                                          hv_cfg.group_start_delay, endpoint_text, &g);
    free(endpoint_text);
    if (s == HV_DB_NONE) {
        json_decref(g.endpoints);
        reply_stale(req);
        return;
    }
    if (s != HV_DB_OK) {
        json_decref(g.endpoints);
        hv_reply_db_failure(req, s);
        return;
    }
    if (g.start_at[0] == '\0' && may_wait(req, wait)) {
        json_decref(g.endpoints);
        park(req, HV_WAIT_GROUP, g.group_id);
        return;
    }
    char now[32];
    hv_now_iso8601(now, sizeof now);
    json_t *answer = json_pack("{s:s,s:{s:I,s:i,s:i},s:o}", "server_time", now, "group", "id",
                               (json_int_t)g.group_id, "size", g.size, "ready", g.ready,
                               "endpoints", g.endpoints ? g.endpoints : json_array());
    json_object_set_new(answer, "start_at", g.start_at[0] ? json_string(g.start_at) : json_null());
    hv_reply_json(req, 200, answer);
}

void hv_h_job_heartbeat(struct hv_request *req)
{
    struct job_body b = {0};
    json_t *doc = hv_req_body(req, attempt_fields, &b, NULL, DOES_NOT_FIT);
    if (doc == NULL)
        return;
    bool cancel = false;
    int attempt = b.attempt;
    json_decref(doc);
    if (!caller_owns(req, attempt))
        return;
    enum hv_db_status s = hv_db_job_heartbeat(req->ids[0], attempt, hv_cfg.lease_seconds, &cancel);
    hv_reply_heartbeat(req, s, hv_cfg.lease_seconds, cancel, stale);
}

void hv_h_job_release(struct hv_request *req)
{
    struct job_body b = {0};
    json_t *doc = hv_req_body(req, attempt_fields, &b, NULL, DOES_NOT_FIT);
    if (doc == NULL)
        return;
    if (!caller_owns(req, b.attempt)) {
        json_decref(doc);
        return;
    }
    enum hv_db_status s = hv_db_job_release(req->ids[0], b.attempt, b.reason);
    json_decref(doc);
    if (s == HV_DB_NONE)
        reply_stale(req);
    else if (s != HV_DB_OK)
        hv_reply_db_failure(req, s);
    else
        hv_reply_json(req, 200, json_pack("{s:s}", "status", "queued"));
}

/* The next job of a result stored with ?claim=true, or NULL: what its
 * claim batch got, else a claim of its own. A tuning step is never
 * handed out here: with one queued (or the sweeps failing) there is no
 * next job, and the worker's claim takes the step. */
static json_t *next_job(struct hv_request *req)
{
    int outcome = req->claim_outcome;
    req->claim_outcome = 0;
    json_int_t target = req->worker_target;
    json_t *job = NULL;
    if (outcome == HV_CLAIM_JOB) {
        job = req->batch_job;
        req->batch_job = NULL;
    } else if (outcome != HV_CLAIM_NONE && target != 0) {
        enum hv_db_status s = claim_single(req, NULL, &job);
        if (s != HV_DB_OK && s != HV_DB_NONE)
            hv_warn("target %lld: claiming with a result failed; its worker claims alone",
                    (long long)target);
    }
    if (job == NULL)
        return NULL;
    hv_metrics_claim_with_result();
    return job_claimed(job, target);
}

/* Answers what storing the upload u came to; with ?claim=true also the
 * worker's next job ("next", null when there is none now). */
static void reply_stored(struct hv_request *req, const struct hv_result_upload *u,
                         enum hv_db_status s, const struct hv_result_stored *stored)
{
    if (s == HV_DB_NONE) {
        hv_reply_problem(req, HV_E_NOT_FOUND, "no job with this id", NULL);
    } else if (s == HV_DB_CONFLICT && stored->not_claimer) {
        reply_not_claimer(req);
    } else if (s == HV_DB_CONFLICT) {
        reply_stale(req);
    } else if (s != HV_DB_OK) {
        hv_reply_db_failure(req, s);
    } else {
        hv_info("job %lld attempt %d: result %lld %s", (long long)u->job_id, u->attempt,
                (long long)stored->result_id,
                stored->replayed ? "(replayed upload, nothing stored)" : "stored");
        if (!stored->replayed) {
            hv_metrics_result_stored(json_array_size(u->samples));
            hv_metrics_job_duration(u->status != NULL && strcmp(u->status, "ok") == 0,
                                    hv_iso8601_seconds(u->finished_at) -
                                        hv_iso8601_seconds(u->started_at));
        }
        json_t *answer =
            json_pack("{s:I,s:i,s:I,s:b}", "job_id", (json_int_t)u->job_id, "attempt", u->attempt,
                      "result_id", (json_int_t)stored->result_id, "stored", !stored->replayed);
        if (req->claim_next) {
            json_t *job = next_job(req);
            char now[32];
            hv_now_iso8601(now, sizeof now);
            json_object_set_new(answer, "next", job ? json_pack("{s:o}", "job", job) : json_null());
            json_object_set_new(answer, "server_time", json_string(now));
        }
        hv_reply_json(req, stored->replayed ? 200 : 201, answer);
    }
}

void hv_h_job_result(struct hv_request *req)
{
    struct hv_result_item *it = req->batch_item;
    int outcome = req->batch_outcome;
    req->batch_outcome = 0;
    if (outcome != 0 && it != NULL && !it->single) {
        reply_stored(req, &it->u, it->status, &it->stored); /* the batch stored it */
        return;
    }
    if (it == NULL) {
        json_t *errors = json_array();
        hv_query_bool(req, "claim", false, &req->claim_next, errors);
        if (hv_query_failed(req, errors))
            return;
        json_t *doc = hv_req_json(req);
        if (doc == NULL)
            return;
        errors = json_array();
        if (hv_result_body_check(doc, errors) > 0) {
            hv_reply_problem(req, HV_E_INVALID_REQUEST, "the result does not fit", errors);
            json_decref(doc);
            return;
        }
        json_decref(errors);
        it = calloc(1, sizeof *it);
        if (it == NULL) {
            json_decref(doc);
            hv_reply_problem(req, HV_E_INTERNAL, "out of memory", NULL);
            return;
        }
        /* The store checks, on the job's locked row, that this worker
         * claimed the attempt (what caller_owns() asks of the other calls). */
        it->doc = doc;
        it->u = (struct hv_result_upload){.job_id = req->ids[0], .worker_id = req->worker_id};
        hv_jspec_bind(doc, result_binding, &it->u);
        req->batch_item = it;
        req->batch_item_free = hv_result_item_free;
        /* Results without samples are stored many at once (batch.h). */
        if (json_array_size(it->u.samples) == 0 && hv_batch_on(HV_BATCH_RESULT)) {
            req->batch = HV_BATCH_RESULT;
            req->park = true;
            return;
        }
    }
    if (!settle_auth(req))
        return;
    it->u.worker_id = req->worker_id;
    struct hv_result_stored stored = {0};
    enum hv_db_status s = hv_db_result_store(&it->u, &stored);
    if (s == HV_DB_OK && req->claim_next && req->worker_id != 0 && hv_batch_on(HV_BATCH_CLAIM)) {
        /* Stored; its next job is claimed with the others (batch.h). */
        it->status = s;
        it->stored = stored;
        it->single = false;
        req->batch_outcome = 1;
        req->batch = HV_BATCH_CLAIM;
        req->park = true;
        return;
    }
    reply_stored(req, &it->u, s, &stored);
}
