/* report_load.c — a plan's report data from the database; see report.h. */
#include "build_id.h"
#include "db_migrate.h"
#include "db_plans.h"
#include "db_telemetry.h"
#include "report.h"

#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Job ids read from one row; a group holds at most a plan's guests and
 * a net server, so this is plenty; more are dropped from the evidence. */
#define MAX_ROW_JOBS 512

/* Parses an array literal "{41,42}" into ids; returns how many. */
static size_t parse_jobs(const char *text, int64_t *ids, size_t max)
{
    size_t n = 0;
    const char *p = text;
    while (p != NULL && *p != '\0' && n < max) {
        if (*p == '{' || *p == ',' || *p == '}') {
            p++;
            continue;
        }
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno != 0)
            break;
        ids[n++] = (int64_t)v;
        p = end;
    }
    return n;
}

/* hv_db_obs_fn: one value into the data. */
static int add_obs(void *arg, const struct hv_db_obs *o)
{
    struct hv_rdata *d = arg;
    int64_t ids[MAX_ROW_JOBS];
    size_t n = parse_jobs(o->jobs, ids, MAX_ROW_JOBS);
    /* mean_s is within [-1, 1], so the product is at most the largest
     * stored magnitude: finite. */
    struct hv_rrow row = {
        .config = o->config >= 0 ? (size_t)o->config : SIZE_MAX,
        .workload = o->workload,
        .target = o->target,
        .metric = o->metric,
        .unit = o->unit,
        .higher_is_better = o->higher_is_better,
        .round = o->round,
        .value = o->scale > 0.0 ? o->mean_s * o->scale : 0.0,
        .members = o->members > 0 ? (size_t)o->members : 1,
        .jobs = ids,
        .n_jobs = n,
    };
    int rc = hv_rdata_run(d, &row);
    return rc == -1 ? -1 : 0; /* a row of an unknown workload is left out */
}

/* Reads the configurations and workload variants of meta into d. */
static int read_meta(struct hv_rdata *d, const json_t *meta)
{
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(meta, "configurations"), i, v)
    {
        if (hv_rdata_config(d, json_string_value(json_object_get(v, "name")),
                            json_object_get(v, "levels")) != 0)
            return -1;
    }
    json_array_foreach(json_object_get(meta, "workloads"), i, v)
    {
        if (hv_rdata_workload(d, json_string_value(json_object_get(v, "id")),
                              json_string_value(json_object_get(v, "kind")),
                              json_string_value(json_object_get(v, "engine"))) != 0)
            return -1;
    }
    return 0;
}

/* The key of what is kept of the plan of summary (hv_report_key): this
 * build, the database's migration level and the state of the plan's jobs.
 * NULL when the level cannot be read or memory runs out. */
static char *state_of(const json_t *summary)
{
    int level = hv_schema_level();
    return level >= 0 ? hv_report_key(hv_build_id(), level, summary) : NULL;
}

/* What an answer in the default form reads besides the values (or the
 * digest) of the state d->version of the plan's done jobs, as compact JSON
 * text: the plan's summary, its meta less the digest (settings,
 * configurations, workload variants, targets, emulated guests, the ids of
 * the recommendations kept), the host's
 * view (KVM probe, busy jobs) and the code that renders it. A kept answer
 * is sent only for the same text (its md5), so whatever a section of the
 * report reads from elsewhere must be added here. NULL when memory runs
 * out. */
static char *answer_inputs(const json_t *summary, const json_t *meta, const json_t *host_view)
{
    json_t *rest = json_copy((json_t *)meta);
    if (rest == NULL)
        return NULL;
    json_object_del(rest, "digest");
    json_t *o = json_pack("{s:s,s:O,s:o,s:O?}", "form", hv_build_id(), "summary", summary, "meta",
                          rest, "host", host_view);
    char *text = o != NULL ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(o);
    return text;
}

/* Fills d with plan id's summary, settings, state (d->version) and the
 * host's view, not its values; with digest_wanted, the digest kept for that
 * state too when there is one; with inputs, the text of what an answer
 * reads besides the values into *inputs (answer_inputs). */
static enum hv_db_status load_head(int64_t id, struct hv_rdata *d, bool digest_wanted,
                                   char **inputs)
{
    json_t *summary = NULL, *meta = NULL;
    enum hv_db_status s = hv_db_plan_get(id, false, &summary);
    if (s == HV_DB_OK && (d->version = state_of(summary)) == NULL)
        s = HV_DB_ERROR;
    if (s == HV_DB_OK)
        s = hv_db_plan_report_meta(id, d->runs_all ? NULL : d->version, digest_wanted, &meta);
    if (s == HV_DB_OK &&
        (hv_rdata_plan(d, summary, json_object_get(meta, "spec")) != 0 || read_meta(d, meta) != 0))
        s = HV_DB_ERROR;
    if (s == HV_DB_OK) {
        d->emulated = json_incref(json_object_get(meta, "emulated"));
        d->recommendation_ids = json_incref(json_object_get(meta, "recommendation_ids"));
        json_t *digest = json_object_get(meta, "digest");
        if (json_is_object(digest))
            d->digest = json_incref(digest);
    }
    if (s == HV_DB_OK)
        s = hv_db_report_host(id, &d->host_view);
    if (s == HV_DB_OK && inputs != NULL &&
        (*inputs = answer_inputs(summary, meta, d->host_view)) == NULL)
        s = HV_DB_ERROR;
    json_decref(summary);
    json_decref(meta);
    return s;
}

/* Reads d's values unless it holds a digest, and finishes it. */
static enum hv_db_status load_values(int64_t id, struct hv_rdata *d)
{
    enum hv_db_status s = HV_DB_OK;
    if (d->digest == NULL)
        s = hv_db_plan_observations(id, add_obs, d);
    if (s == HV_DB_OK && hv_rdata_finish(d) != 0)
        s = HV_DB_ERROR;
    return s;
}

enum hv_db_status hv_report_load(int64_t id, struct hv_rdata *d)
{
    enum hv_db_status s = load_head(id, d, !d->runs_all, NULL);
    return s == HV_DB_OK ? load_values(id, d) : s;
}

/* The report of plan id into *report, and unless runs_all, with text, the
 * answer as sent into *text too. What a big plan's report computed is kept
 * for the next: the digest when it was computed from the values, and the
 * answer with it when text is asked for or the digest was computed; the
 * answer alone when it was rendered from the digest kept. */
static enum hv_db_status render(int64_t id, bool runs_all, json_t **report, char **text)
{
    *report = NULL;
    struct hv_rdata d;
    hv_rdata_init(&d);
    d.runs_all = runs_all;
    char *inputs = NULL;
    enum hv_db_status s = load_head(id, &d, !runs_all, runs_all ? NULL : &inputs);
    if (s == HV_DB_OK)
        s = load_values(id, &d);
    json_t *digest = NULL;
    if (s == HV_DB_OK) {
        *report = hv_report_build_digest(&d, &digest);
        if (*report == NULL)
            s = HV_DB_ERROR;
    }
    /* Kept for the next report; what cannot be kept is computed again. */
    char *kept = digest != NULL && d.version != NULL ? json_dumps(digest, JSON_COMPACT) : NULL;
    char *answer = NULL;
    if (s == HV_DB_OK && inputs != NULL && (text != NULL || kept != NULL) &&
        (kept != NULL || d.digest != NULL))
        answer = json_dumps(*report, JSON_COMPACT);
    if (kept != NULL && hv_db_plan_report_digest_put(id, d.version, kept, answer,
                                                     answer != NULL ? inputs : NULL) != HV_DB_OK)
        hv_warn("plan %lld: the report's digest could not be kept", (long long)id);
    else if (kept == NULL && answer != NULL &&
             hv_db_plan_report_answer_put(id, d.version, answer, inputs) != HV_DB_OK)
        hv_warn("plan %lld: the report's answer could not be kept", (long long)id);
    free(kept);
    if (text != NULL && s == HV_DB_OK) {
        *text = answer != NULL ? answer : json_dumps(*report, JSON_COMPACT);
        answer = NULL;
        if (*text == NULL)
            s = HV_DB_ERROR;
    }
    free(answer);
    free(inputs);
    json_decref(digest);
    hv_rdata_free(&d);
    return s;
}

enum hv_db_status hv_report_get(int64_t id, bool runs_all, json_t **report)
{
    return render(id, runs_all, report, NULL);
}

/* Whether the plan of summary has ended (done, failed or cancelled). */
static bool ended(const json_t *summary)
{
    const char *status = json_string_value(json_object_get(summary, "status"));
    return status != NULL && (strcmp(status, "done") == 0 || strcmp(status, "failed") == 0 ||
                              strcmp(status, "cancelled") == 0);
}

enum hv_db_status hv_report_answer(int64_t id, char **text)
{
    *text = NULL;
    /* A running plan's jobs keep ending: while its digest is recent, the
     * answer kept is sent whatever state it is of, before anything else
     * of the plan is read (its workload variants and targets, read from
     * its jobs for a state no digest is kept for, cost a scan of them). */
    json_t *summary = NULL;
    enum hv_db_status s = hv_db_plan_get(id, false, &summary);
    bool running = s == HV_DB_OK && !ended(summary);
    json_decref(summary);
    if (s != HV_DB_OK)
        return s;
    if (running) {
        s = hv_db_plan_report_answer_recent(id, HV_REPORT_RUNNING_S, text);
        if (s != HV_DB_NONE)
            return s;
    }
    struct hv_rdata d;
    hv_rdata_init(&d);
    char *inputs = NULL;
    s = load_head(id, &d, false, &inputs);
    if (s == HV_DB_OK)
        s = hv_db_plan_report_answer(id, d.version, inputs, text);
    free(inputs);
    hv_rdata_free(&d);
    if (s != HV_DB_NONE)
        return s;
    /* None kept for this state and these inputs: rendered (from the digest
     * kept, else from the values) and kept. */
    json_t *report = NULL;
    s = render(id, false, &report, text);
    json_decref(report);
    if (s != HV_DB_OK) {
        free(*text);
        *text = NULL;
    }
    return s;
}
