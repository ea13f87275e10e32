/* h_steps.c — apply and restore steps of tuning plans (db_steps.h): the
 * host worker's heartbeat and result calls, a plan's steps, and what
 * plans changed on a target. */
#include "config.h"
#include "db_steps.h"
#include "handlers.h"
#include "jspec.h"
#include "log.h"
#include "timeutil.h"

#include <stdlib.h>
#include <string.h>

/* not_yet: a before_host hook that exited 75 (its error: its words). */
static const char *const step_statuses[] = {"ok", "error", "waiting_for_operator", "not_yet", NULL};

/* What the calls' bodies hold, bound by their tables. */
struct step_body {
    int attempt;
    const char *status;
    const char *error;
    const json_t *settings;
    const json_t *changes;
    const json_t *waiting;
    const json_t *answer;
};

#define TO(field) HV_JTO(struct step_body, field)

static const struct hv_jfield heartbeat_fields[] = {
    {.name = "attempt", .type = HV_J_INTEGER, .required = true, .min = 1, .max = 1e9, TO(attempt)},
    {0},
};

static const struct hv_jfield result_fields[] = {
    {.name = "attempt", .type = HV_J_INTEGER, .required = true, .min = 1, .max = 1e9, TO(attempt)},
    {.name = "status", .type = HV_J_STRING, .required = true, .choices = step_statuses, TO(status)},
    {.name = "error",
     .type = HV_J_STRING,
     .max_len = 4096,
     TO(error),
     .def_str = "the host worker gave no reason"},
    {.name = "settings", .type = HV_J_OBJECT, TO(settings)},
    {.name = "changes", .type = HV_J_ARRAY, .max_len = 10000, TO(changes)},
    {.name = "waiting", .type = HV_J_ARRAY, .max_len = 64, TO(waiting)},
    {.name = "answer", .type = HV_J_OBJECT, TO(answer)},
    {0},
};

/* A level only the operator can bring about (status waiting_for_operator). */
static const struct hv_jfield waiting_fields[] = {
    {.name = "factor", .type = HV_J_STRING, .required = true, .max_len = 64},
    {.name = "level", .type = HV_J_STRING, .required = true, .max_len = 128},
    {.name = "value", .type = HV_J_STRING, .max_len = 128},
    {.name = "file", .type = HV_J_STRING, .max_len = 1024},
    {.name = "command", .type = HV_J_STRING, .required = true, .max_len = 1024},
    {0},
};

/* The one member of a change the server reads. */
struct change_row {
    const char *at;
};

static const struct hv_jfield change_fields[] = {
    {.name = "factor", .type = HV_J_STRING, .required = true, .max_len = 64},
    {.name = "scope", .type = HV_J_STRING, .max_len = 16},
    {.name = "object", .type = HV_J_STRING, .max_len = 1024},
    {.name = "from", .type = HV_J_ANY},
    {.name = "to", .type = HV_J_ANY},
    {.name = "at", .type = HV_J_STRING, .max_len = 40, HV_JTO(struct change_row, at)},
    {.name = "domain", .type = HV_J_STRING, .max_len = 256},
    {0},
};

/* Checks each change of list (at base: "/changes") against fields, whose
 * "at" (bound to a change_row) must be an ISO 8601 UTC time. */
static void check_change_list(const json_t *list, const char *base, const struct hv_jfield *fields,
                              json_t *errors)
{
    size_t i;
    const json_t *c;
    char path[64];
    json_array_foreach(list, i, c)
    {
        hv_jpath_index(path, sizeof path, base, i);
        struct change_row change = {NULL};
        hv_jspec_parse(c, path, fields, &change, errors);
        if (change.at != NULL && !hv_iso8601_valid(change.at))
            hv_errors_add(errors, path, "at: must be an ISO 8601 UTC time");
    }
}

/* Each change a result reports, once the body's members are checked. */
static void check_changes(const json_t *doc, const void *dest, json_t *errors)
{
    const struct step_body *b = dest;
    if (json_array_size(errors) > 0)
        return;
    size_t i;
    const json_t *c;
    char path[64];
    check_change_list(b->changes, "/changes", change_fields, errors);
    json_array_foreach(b->waiting, i, c)
    {
        hv_jpath_index(path, sizeof path, "/waiting", i);
        hv_jspec_check(c, path, waiting_fields, errors);
    }
    bool waits = b->status != NULL && strcmp(b->status, "waiting_for_operator") == 0;
    if (waits != (json_array_size(b->waiting) > 0))
        hv_errors_add(errors, "/waiting",
                      "a step waiting_for_operator lists what it waits for in waiting (at least "
                      "one level), and only such a step does");
}

/* Parses the body against fields into b (400 when it does not fit), then
 * checks that the caller claimed the step's attempt (404, 403). Returns
 * the body or NULL when an answer was set. */
static json_t *checked(struct hv_request *req, const struct hv_jfield *fields, struct step_body *b)
{
    json_t *doc = hv_req_body(req, fields, b, fields == result_fields ? check_changes : NULL,
                              "the request body does not fit");
    if (doc == NULL)
        return NULL;
    enum hv_db_status s = hv_db_step_owner(req->ids[0], b->attempt, req->worker_id);
    if (s == HV_DB_OK)
        return doc;
    json_decref(doc);
    if (s == HV_DB_NONE)
        hv_reply_problem(req, HV_E_NOT_FOUND, "no step with this id", NULL);
    else if (s == HV_DB_CONFLICT)
        hv_reply_problem(req, HV_E_FORBIDDEN,
                         "this worker did not claim this attempt of the step; only its claimer "
                         "may send its calls",
                         NULL);
    else
        hv_reply_db_failure(req, s);
    return NULL;
}

/* The detail of a 409 stale_attempt. */
static const char stale[] =
    "this attempt of the step is not running any more (lease expired or ended)";

void hv_h_step_heartbeat(struct hv_request *req)
{
    struct step_body b = {0};
    json_t *doc = checked(req, heartbeat_fields, &b);
    if (doc == NULL)
        return;
    bool cancel = false;
    enum hv_db_status s =
        hv_db_step_heartbeat(req->ids[0], b.attempt, hv_cfg.lease_seconds, &cancel);
    json_decref(doc);
    hv_reply_heartbeat(req, s, hv_cfg.lease_seconds, cancel, stale);
}

void hv_h_step_result(struct hv_request *req)
{
    struct step_body b = {0};
    json_t *doc = checked(req, result_fields, &b);
    if (doc == NULL)
        return;
    char *settings_text = b.settings ? json_dumps(b.settings, JSON_COMPACT) : NULL;
    char *changes_text = b.changes ? json_dumps(b.changes, JSON_COMPACT) : NULL;
    char *waiting_text = b.waiting ? json_dumps(b.waiting, JSON_COMPACT) : NULL;
    char *answer_text = b.answer ? json_dumps(b.answer, JSON_COMPACT) : NULL;
    const char *status = b.status;
    struct hv_step_result r = {
        .id = req->ids[0],
        .attempt = b.attempt,
        .ok = strcmp(status, "ok") == 0,
        .error = b.error,
        .settings = settings_text,
        .changes = changes_text,
        .waiting = waiting_text,
        .answer = answer_text,
        .not_yet = strcmp(status, "not_yet") == 0,
    };
    bool replayed = false;
    enum hv_db_status s = hv_db_step_result(&r, &replayed);
    free(settings_text);
    free(changes_text);
    free(waiting_text);
    free(answer_text);
    if (s == HV_DB_CONFLICT) {
        hv_reply_problem(req, HV_E_STALE_ATTEMPT, stale, NULL);
    } else if (s != HV_DB_OK) {
        hv_reply_db_failure(req, s);
    } else {
        hv_info("step %lld attempt %d: %s%s%s", (long long)r.id, r.attempt, status,
                r.ok ? "" : ": ", r.ok ? "" : r.error);
        hv_reply_json(req, replayed ? 200 : 201,
                      json_pack("{s:I,s:i,s:b}", "step_id", (json_int_t)r.id, "attempt", r.attempt,
                                "stored", !replayed));
    }
    json_decref(doc);
}

/* POST /api/v1/workers/restored: what a host worker put back itself from
 * its journal (docs/api.md). */
struct restored_body {
    const json_t *restored;
};

/* The most entries one report holds (a worker sends more in turns). */
#define RESTORED_MAX 1000

static const struct hv_jfield restored_fields[] = {
    {.name = "restored",
     .type = HV_J_ARRAY,
     .required = true,
     .max_len = RESTORED_MAX,
     HV_JTO(struct restored_body, restored)},
    {0},
};

static const char *const restored_hows[] = {"worker_start", "restore_command", NULL};

static const struct hv_jfield restored_entry_fields[] = {
    {.name = "plan_id", .type = HV_J_INTEGER, .required = true, .min = 1, .max = 9e15},
    {.name = "factor", .type = HV_J_STRING, .required = true, .max_len = 64},
    {.name = "scope", .type = HV_J_STRING, .max_len = 16},
    {.name = "object", .type = HV_J_STRING, .max_len = 1024},
    {.name = "from", .type = HV_J_ANY},
    {.name = "to", .type = HV_J_ANY},
    {.name = "at",
     .type = HV_J_STRING,
     .required = true,
     .max_len = 40,
     HV_JTO(struct change_row, at)},
    {.name = "how", .type = HV_J_STRING, .required = true, .choices = restored_hows},
    {0},
};

/* Each entry of a report, once the body's member is checked. */
static void check_restored(const json_t *doc, const void *dest, json_t *errors)
{
    const struct restored_body *b = dest;
    check_change_list(b->restored, "/restored", restored_entry_fields, errors);
}

void hv_h_worker_restored(struct hv_request *req)
{
    struct restored_body b = {0};
    json_t *doc =
        hv_req_body(req, restored_fields, &b, check_restored, "the request body does not fit");
    if (doc == NULL)
        return;
    char *text = json_dumps(b.restored, JSON_COMPACT);
    int64_t marked = 0;
    enum hv_db_status s =
        text != NULL ? hv_db_changes_restored(req->worker_id, text, &marked) : HV_DB_UNAVAILABLE;
    free(text);
    if (s != HV_DB_OK) {
        hv_reply_db_failure(req, s);
    } else {
        hv_info("worker %lld reported %zu restored setting%s: %lld change%s marked",
                (long long)req->worker_id, json_array_size(b.restored),
                json_array_size(b.restored) == 1 ? "" : "s", (long long)marked,
                marked == 1 ? "" : "s");
        hv_reply_json(req, 200,
                      json_pack("{s:I,s:I}", "received", (json_int_t)json_array_size(b.restored),
                                "marked", (json_int_t)marked));
    }
    json_decref(doc);
}

void hv_h_plan_steps(struct hv_request *req)
{
    json_t *items = NULL;
    enum hv_db_status s = hv_db_plan_steps(req->ids[0], &items);
    hv_reply_items(req, s, items, NULL);
}

void hv_h_target_changes(struct hv_request *req)
{
    json_t *items = NULL;
    enum hv_db_status s = hv_db_target_changes(req->ids[0], 1000, &items);
    hv_reply_items(req, s, items, "no target with this id");
}
