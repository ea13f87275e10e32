/* report_load.c — a plan's report data from the database; see report.h. */
#include "db_plans.h"
#include "db_telemetry.h"
#include "report.h"

#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

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

/* The state of the plan's jobs in its summary: how many, how many done
 * (a done job stays done), and when one last changed status. A job that
 * becomes done, whichever way its result arrived, changes it. Its prefix
 * names the form of the digest: a change to what a digest holds or how its
 * figures are computed bumps it, so no digest kept before is read. NULL
 * when memory runs out. */
static char *state_of(const json_t *summary)
{
    const json_t *jobs = json_object_get(summary, "jobs");
    const char *at = json_string_value(json_object_get(summary, "updated_at"));
    char *v = NULL;
    if (asprintf(
            &v, "r1:%lld:%lld:%s", (long long)json_integer_value(json_object_get(jobs, "total")),
            (long long)json_integer_value(json_object_get(jobs, "done")), at != NULL ? at : "") < 0)
        return NULL;
    return v;
}

enum hv_db_status hv_report_load(int64_t id, struct hv_rdata *d)
{
    json_t *summary = NULL, *meta = NULL;
    enum hv_db_status s = hv_db_plan_get(id, false, &summary);
    if (s == HV_DB_OK && (d->version = state_of(summary)) == NULL)
        s = HV_DB_ERROR;
    if (s == HV_DB_OK)
        s = hv_db_plan_report_meta(id, d->runs_all ? NULL : d->version, &meta);
    if (s == HV_DB_OK &&
        (hv_rdata_plan(d, summary, json_object_get(meta, "spec")) != 0 || read_meta(d, meta) != 0))
        s = HV_DB_ERROR;
    if (s == HV_DB_OK) {
        d->emulated = json_incref(json_object_get(meta, "emulated"));
        json_t *digest = json_object_get(meta, "digest");
        if (json_is_object(digest))
            d->digest = json_incref(digest);
    }
    if (s == HV_DB_OK)
        s = hv_db_report_host(id, &d->host_view);
    json_decref(summary);
    json_decref(meta);
    if (s == HV_DB_OK && d->digest == NULL)
        s = hv_db_plan_observations(id, add_obs, d);
    if (s == HV_DB_OK && hv_rdata_finish(d) != 0)
        s = HV_DB_ERROR;
    return s;
}

enum hv_db_status hv_report_get(int64_t id, bool runs_all, json_t **report)
{
    *report = NULL;
    struct hv_rdata d;
    hv_rdata_init(&d);
    d.runs_all = runs_all;
    enum hv_db_status s = hv_report_load(id, &d);
    json_t *digest = NULL;
    if (s == HV_DB_OK) {
        *report = hv_report_build_digest(&d, &digest);
        if (*report == NULL)
            s = HV_DB_ERROR;
    }
    /* Kept for the next report; one that cannot be kept is computed again. */
    char *text = digest != NULL && d.version != NULL ? json_dumps(digest, JSON_COMPACT) : NULL;
    if (text != NULL && hv_db_plan_report_digest_put(id, d.version, text) != HV_DB_OK)
        hv_warn("plan %lld: the report's digest could not be kept", (long long)id);
    free(text);
    json_decref(digest);
    hv_rdata_free(&d);
    return s;
}
