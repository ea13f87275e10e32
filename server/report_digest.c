/* report_digest.c — what the report of a big plan keeps between reads
 * (report.h): the summaries as answered, the warnings they gave, and per
 * arm the figures the comparisons read; see report_int.h. And what it is
 * kept under: its key, and the tables whose rows it is computed from. */
#include "report.h"
#include "report_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The members of a digest. */
#define DIGEST_SUMMARIES "summaries"
#define DIGEST_ROWS      "rows"
#define DIGEST_WARNINGS  "warnings"
#define DIGEST_ARMS      "arms"

char *hv_report_key(const char *build, int level, const json_t *summary)
{
    const json_t *jobs = json_object_get(summary, "jobs");
    const char *at = json_string_value(json_object_get(summary, "updated_at"));
    char *v = NULL;
    if (asprintf(&v, "%s:m%d:%lld:%lld:%s", build, level,
                 (long long)json_integer_value(json_object_get(jobs, "total")),
                 (long long)json_integer_value(json_object_get(jobs, "done")),
                 at != NULL ? at : "") < 0)
        return NULL;
    return v;
}

/* tests/integration/test_report_key.sh reads the names below and fails
 * when a report scans a table not named here, or no longer scans one
 * named here; each row says why a change of its rows cannot leave a
 * stale digest or answer behind. */
const struct hv_report_table hv_report_tables[] = {
    {"configurations", "the answer's inputs (names and levels in the plan's meta)"},
    {"hv_schema_migrations", "the key's migration level itself (read once per process)"},
    {"jobs", "the key's state of the jobs; workload variants and targets are kept with the "
             "digest"},
    {"metrics", "the key's state: a job's values are written before it becomes done"},
    {"plan_job_count_shards", "the key's state (the job counts of the plan's summary)"},
    {"plans", "the answer's inputs (the summary; the spec in the plan's meta)"},
    {"recommendations", "the answer's inputs (the ids in the plan's meta), written in the "
                        "transaction that ends the plan done"},
    {"report_digests", "what is kept itself, found by its key"},
    {"results", "the key's state: a job's result is written before it becomes done"},
    {"targets", "the answer's inputs (the host's view, the guests found emulated)"},
    {"telemetry", "the answer's inputs (the host's view: KVM probe, busy jobs)"},
    {"tokens", "the answer's inputs (the summary's owner, the name of the submitting token)"},
    {NULL, NULL},
};

bool hv_rdigest_wanted(const struct hv_rdata *d)
{
    if (d->digest != NULL || d->runs_all)
        return false;
    for (size_t i = 0; i < d->n_series; i++)
        if (d->series[i].n_runs > HV_REPORT_RUNS_LISTED)
            return true;
    return false;
}

/* A number as JSON: null when it is not finite (read back as NaN). */
static json_t *num_json(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static double num_of(const json_t *a, size_t i)
{
    const json_t *v = json_array_get(a, i);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* A summary as an array, every member in the order of struct hv_summary;
 * JSON reals keep 17 digits, so it reads back exactly. */
static json_t *summary_json(const struct hv_summary *s)
{
    return json_pack(
        "[I,o,o,o,b,o,o,o,i,o,o,o,o,b,o,o]", (json_int_t)s->n, num_json(s->mean), num_json(s->sd),
        num_json(s->cv_pct), s->has_ci, num_json(s->ci_low), num_json(s->ci_high),
        num_json(s->half_pct), (int)s->scale, num_json(s->center), num_json(s->lo), num_json(s->hi),
        num_json(s->rel_half_pct), s->lo_clamped, num_json(s->mean_log), num_json(s->sd_log));
}

static void summary_of(const json_t *a, struct hv_summary *s)
{
    *s = (struct hv_summary){
        .n = (size_t)json_integer_value(json_array_get(a, 0)),
        .mean = num_of(a, 1),
        .sd = num_of(a, 2),
        .cv_pct = num_of(a, 3),
        .has_ci = json_is_true(json_array_get(a, 4)),
        .ci_low = num_of(a, 5),
        .ci_high = num_of(a, 6),
        .half_pct = num_of(a, 7),
        .scale = (enum hv_ci_scale)json_integer_value(json_array_get(a, 8)),
        .center = num_of(a, 9),
        .lo = num_of(a, 10),
        .hi = num_of(a, 11),
        .rel_half_pct = num_of(a, 12),
        .lo_clamped = json_is_true(json_array_get(a, 13)),
        .mean_log = num_of(a, 14),
        .sd_log = num_of(a, 15),
    };
}

/* An arm's per-round values as [[round, value], ...]: what a paired
 * comparison reads (17 digits: they read back exactly). */
static json_t *arm_values_json(const struct hv_arm *a)
{
    json_t *list = json_array();
    for (size_t i = 0; list != NULL && i < a->n; i++)
        if (json_array_append_new(list, json_pack("[i,o]", a->rounds[i], num_json(a->values[i]))) !=
            0) {
            json_decref(list);
            list = NULL;
        }
    return list;
}

/* An arm's figures and its per-round values. */
static json_t *arm_json(const struct hv_arm *a)
{
    return json_pack("{s:I,s:I,s:i,s:s,s:s,s:b,s:I,s:b,s:o,s:b,s:[I,o,o],s:o,s:o}", "config",
                     (json_int_t)a->config, "workload", (json_int_t)a->workload, "side",
                     (int)a->side, "metric", a->metric, "unit", a->unit, "higher_is_better",
                     a->higher_is_better, "n", (json_int_t)a->n, "finite", a->finite, "summary",
                     summary_json(&a->sum), "positive", a->positive, "log", (json_int_t)a->log.n,
                     num_json(a->log.mean), num_json(a->log.var), "jobs",
                     hv_rjobs_json(a->jobs, a->n_jobs, a->n_jobs), "values", arm_values_json(a));
}

json_t *hv_rdigest(const struct hv_rctx *c, json_t *summaries, json_t *rows, size_t first_warning)
{
    json_t *arms = json_array(), *warnings = json_array();
    for (size_t i = 0; arms != NULL && i < c->n_arms; i++)
        if (json_array_append_new(arms, arm_json(&c->arms[i])) != 0) {
            json_decref(arms);
            arms = NULL;
        }
    for (size_t i = first_warning; warnings != NULL && i < json_array_size(c->warnings); i++)
        json_array_append(warnings, json_array_get(c->warnings, i));
    if (arms == NULL || warnings == NULL) {
        json_decref(arms);
        json_decref(warnings);
        return NULL;
    }
    return json_pack("{s:O,s:O,s:o,s:o}", DIGEST_SUMMARIES, summaries, DIGEST_ROWS, rows,
                     DIGEST_WARNINGS, warnings, DIGEST_ARMS, arms);
}

json_t *hv_rdigest_summaries(struct hv_rctx *c, json_t **rows)
{
    const json_t *dg = c->d->digest;
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(dg, DIGEST_WARNINGS), i, w)
        json_array_append(c->warnings, w);
    json_t *list = json_object_get(dg, DIGEST_SUMMARIES);
    *rows = json_incref(json_object_get(dg, DIGEST_ROWS));
    return json_incref(list);
}

/* Arm a from its figures in o; its strings stay o's. */
static int arm_of(const struct hv_rdata *d, const json_t *o, struct hv_arm *a)
{
    const json_t *log = json_object_get(o, "log"), *jobs = json_object_get(o, "jobs");
    json_int_t config = json_integer_value(json_object_get(o, "config"));
    json_int_t workload = json_integer_value(json_object_get(o, "workload"));
    const char *metric = json_string_value(json_object_get(o, "metric"));
    const char *unit = json_string_value(json_object_get(o, "unit"));
    if (config < 0 || (size_t)config >= d->n_configs || workload < 0 ||
        (size_t)workload >= d->n_workloads || metric == NULL || unit == NULL)
        return -1;
    *a = (struct hv_arm){
        .config = (size_t)config,
        .workload = (size_t)workload,
        .side = json_integer_value(json_object_get(o, "side")) == HV_SIDE_HOST ? HV_SIDE_HOST
                                                                               : HV_SIDE_GUESTS,
        .metric = metric,
        .unit = unit,
        .higher_is_better = json_is_true(json_object_get(o, "higher_is_better")),
        .n = (size_t)json_integer_value(json_object_get(o, "n")),
        .finite = json_is_true(json_object_get(o, "finite")),
        .positive = json_is_true(json_object_get(o, "positive")),
        .log = {.n = (size_t)json_integer_value(json_array_get(log, 0)),
                .mean = num_of(log, 1),
                .var = num_of(log, 2)},
    };
    a->primary = hv_rdata_primary(d, a->workload, a->metric);
    summary_of(json_object_get(o, "summary"), &a->sum);
    const json_t *values = json_object_get(o, "values");
    if (json_array_size(values) != a->n)
        return -1;
    a->values = malloc((a->n ? a->n : 1) * sizeof *a->values);
    a->rounds = malloc((a->n ? a->n : 1) * sizeof *a->rounds);
    if (a->values == NULL || a->rounds == NULL)
        return -1;
    for (size_t i = 0; i < a->n; i++) {
        const json_t *v = json_array_get(values, i);
        a->rounds[i] = (int)json_integer_value(json_array_get(v, 0));
        a->values[i] = num_of(v, 1);
    }
    size_t n = json_array_size(jobs);
    a->jobs = malloc((n ? n : 1) * sizeof *a->jobs);
    if (a->jobs == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        a->jobs[i] = (int64_t)json_integer_value(json_array_get(jobs, i));
    a->n_jobs = n;
    return 0;
}

int hv_rdigest_arms(struct hv_rctx *c)
{
    const json_t *list = json_object_get(c->d->digest, DIGEST_ARMS);
    size_t n = json_array_size(list);
    c->arms = calloc(n ? n : 1, sizeof *c->arms);
    if (c->arms == NULL)
        return -1;
    /* Counted first: what a failing arm allocated is freed with c. */
    for (size_t i = 0; i < n; i++)
        if (arm_of(c->d, json_array_get(list, i), &c->arms[c->n_arms++]) != 0)
            return -1;
    return 0;
}
