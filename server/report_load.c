/* report_load.c — a plan's report data from the database; see report.h. */
#include "db_plans.h"
#include "report.h"

#include <errno.h>
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

enum hv_db_status hv_report_load(int64_t id, struct hv_rdata *d)
{
    json_t *summary = NULL, *meta = NULL;
    enum hv_db_status s = hv_db_plan_get(id, false, &summary);
    if (s == HV_DB_OK)
        s = hv_db_plan_report_meta(id, &meta);
    if (s == HV_DB_OK &&
        (hv_rdata_plan(d, summary, json_object_get(meta, "spec")) != 0 || read_meta(d, meta) != 0))
        s = HV_DB_ERROR;
    if (s == HV_DB_OK)
        d->emulated = json_incref(json_object_get(meta, "emulated"));
    json_decref(summary);
    json_decref(meta);
    if (s == HV_DB_OK)
        s = hv_db_plan_observations(id, add_obs, d);
    if (s == HV_DB_OK && hv_rdata_finish(d) != 0)
        s = HV_DB_ERROR;
    return s;
}
