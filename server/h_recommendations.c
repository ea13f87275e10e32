/* h_recommendations.c — the recommendations kept with stable ids
 * (db_recommendations.h): GET /api/v1/recommendations without target (the
 * list; with target, h_report.c's per-host reading of reports),
 * GET /api/v1/recommendations/{id}, POST /api/v1/recommendations/{id}/adopt;
 * and POST /api/v1/workers/settings, the host settings a host worker
 * reads, from which adoptions are observed. */
#include "db_recommendations.h"
#include "factors.h"
#include "handlers.h"
#include "jspec.h"
#include "query.h"
#include "selector.h"
#include "verdicts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const rec_states[] = {"proposed", "adopted",   "delivered", "partial",
                                         "none",     "regressed", NULL};

void hv_h_recommendations_list(struct hv_request *req)
{
    json_t *errors = json_array();
    const char *state = NULL;
    long limit, cursor;
    hv_query_enum(req, "state", rec_states, &state, errors);
    hv_query_int(req, "limit", 1, 500, 50, &limit, errors);
    hv_query_int(req, "cursor", 1, 9007199254740991L, 0, &cursor, errors);
    if (hv_query_failed(req, errors))
        return;
    json_t *items = NULL;
    /* One more than asked tells whether a next page exists. */
    enum hv_db_status s = hv_db_recommendations_list(state, cursor, (int)limit + 1, &items);
    if (s != HV_DB_OK) {
        hv_reply_db_failure(req, s);
        return;
    }
    hv_reply_page(req, items, limit, "id");
}

void hv_h_recommendation_get(struct hv_request *req)
{
    json_t *out = NULL;
    /* The verdict as the values stand now (the sweeper judges too). */
    enum hv_db_status s = hv_verdict_judge(req->ids[0]);
    if (s == HV_DB_OK || s == HV_DB_NONE)
        s = hv_db_recommendation_get(req->ids[0], &out);
    hv_reply_one(req, s, out, "no recommendation with this id");
}

/* An adoption's body: the hosts, by selector or by name. */
struct adopt_body {
    const json_t *selector, *targets;
};

static const struct hv_jfield adopt_fields[] = {
    {.name = "selector", .type = HV_J_OBJECT, HV_JTO(struct adopt_body, selector)},
    {.name = "targets", .type = HV_J_ARRAY, .max_len = 1000, HV_JTO(struct adopt_body, targets)},
    {0},
};

/* One of selector and targets, not empty; labels as a selector names
 * them (lib/selector.h), names as targets have them. */
static void check_adopt(const json_t *doc, const void *dest, json_t *errors)
{
    (void)doc;
    const struct adopt_body *b = dest;
    if ((b->selector == NULL) == (b->targets == NULL))
        hv_errors_add(errors, "", "give either selector or targets");
    if (b->selector != NULL && json_object_size(b->selector) == 0)
        hv_errors_add(errors, "/selector", "must name at least one label");
    if (json_object_size(b->selector) > HV_SELECTOR_MAX_PAIRS)
        hv_errors_add(errors, "/selector", "at most %d labels", HV_SELECTOR_MAX_PAIRS);
    hv_labels_check(b->selector, "/selector", errors);
    if (b->targets != NULL && json_array_size(b->targets) == 0)
        hv_errors_add(errors, "/targets", "must name at least one host");
    size_t i;
    const json_t *v;
    json_array_foreach((json_t *)b->targets, i, v)
    {
        char p[64];
        hv_jpath_index(p, sizeof p, "/targets", i);
        if (!json_is_string(v) || !hv_jspec_name_ok(json_string_value(v)))
            hv_errors_add(errors, p, "must be a target's name");
    }
}

void hv_h_recommendation_adopt(struct hv_request *req)
{
    struct adopt_body b = {0};
    json_t *doc = hv_req_body(req, adopt_fields, &b, check_adopt, "bad adoption");
    if (doc == NULL)
        return;
    json_t *out = NULL;
    enum hv_db_status s =
        hv_db_recommendation_adopt(req->ids[0], b.selector, b.targets, req->token_id, &out);
    json_decref(doc);
    if (s != HV_DB_OK) {
        if (s == HV_DB_NONE)
            hv_reply_problem(req, HV_E_NOT_FOUND, "no recommendation with this id", NULL);
        else
            hv_reply_db_failure(req, s);
        return;
    }
    const json_t *unknown = json_object_get(out, "unknown");
    if (json_array_size(json_object_get(out, "matched")) == 0 || json_array_size(unknown) > 0) {
        json_t *errors = json_array();
        size_t i;
        json_t *n;
        json_array_foreach(unknown, i, n)
            hv_errors_add(errors, "/targets", "no host target \"%s\"", json_string_value(n));
        if (json_array_size(errors) == 0)
            hv_errors_add(errors, "/selector", "no host target's labels hold every pair");
        hv_reply_problem(req, HV_E_NO_MATCHING_HOST,
                         "the recommendation can only be adopted on host targets hvbench knows; "
                         "nothing was recorded",
                         errors);
        json_decref(out);
        return;
    }
    json_decref(out);
    json_t *rec = NULL;
    s = hv_db_recommendation_get(req->ids[0], &rec);
    hv_reply_one(req, s, rec, "no recommendation with this id");
}

/* A host worker's report of its settings. */
struct settings_body {
    const json_t *settings;
};

static const struct hv_jfield settings_fields[] = {
    {.name = "settings",
     .type = HV_J_OBJECT,
     .required = true,
     HV_JTO(struct settings_body, settings)},
    {0},
};

static void check_settings(const json_t *doc, const void *dest, json_t *errors)
{
    (void)doc;
    const struct settings_body *b = dest;
    hv_factor_settings_check(b->settings, "/settings", errors);
}

void hv_h_worker_settings(struct hv_request *req)
{
    struct settings_body b = {0};
    json_t *doc = hv_req_body(req, settings_fields, &b, check_settings, "bad settings");
    if (doc == NULL)
        return;
    char *text = json_dumps(b.settings, JSON_COMPACT | JSON_SORT_KEYS);
    enum hv_db_status s =
        text != NULL ? hv_db_target_settings_put(req->worker_target, text) : HV_DB_ERROR;
    free(text);
    json_decref(doc);
    if (s == HV_DB_NONE)
        hv_reply_problem(req, HV_E_CONFLICT,
                         "only a host's worker reports host settings; this credential holds a "
                         "guest",
                         NULL);
    else if (s != HV_DB_OK)
        hv_reply_db_failure(req, s);
    else
        hv_reply_json(req, 200, json_pack("{s:I}", "target_id", (json_int_t)req->worker_target));
}
