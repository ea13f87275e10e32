/* h_import.c — POST /api/v1/imports: a saved output of fio, iperf3, iperf
 * 2, bonnie++, sysbench or stress-ng becomes a finished plan.
 *
 * The server parses the output (lib/parsers.h, the same code the worker's
 * tool adapters use), so an import gets the metric names of a run hvbench
 * made itself, and an output that does not parse stores nothing. The plan
 * is named "import: TOOL DATE", has one configuration and one done job per
 * run in the output on the named target (created as a host without facts
 * when no worker registered it), and its report is an ordinary report.
 *
 * A file may hold several runs (bonnie++ -x N, outputs saved one after
 * another): they become repetitions, so they must be runs of one workload
 * (hv_parse_runs_alike); otherwise the import is refused naming how many
 * runs the file holds and where they differ. Each run starts when its
 * output says it did, else after the run before it. */
#include "auth.h"
#include "db_import.h"
#include "handlers.h"
#include "result.h"
#include "jspec.h"
#include "log.h"
#include "parsers.h"
#include "timeutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct hv_jfield import_fields[] = {
    {.name = "tool", .type = HV_J_STRING, .required = true, .max_len = 32},
    {.name = "target", .type = HV_J_STRING, .required = true, .max_len = 128},
    {.name = "at", .type = HV_J_STRING, .max_len = 40},
    {.name = "labels", .type = HV_J_OBJECT},
    {.name = "name", .type = HV_J_STRING, .max_len = 128},
    /* The body cap (--max-body) bounds it first. */
    {.name = "output", .type = HV_J_STRING, .required = true, .max_len = (size_t)1 << 31},
    {0},
};

/* Seconds since 1970 of an ISO 8601 UTC time hv_iso8601_valid() accepts
 * (fractions ignored). */
static time_t iso_seconds(const char *s)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *end = strptime(s, "%Y-%m-%d", &tm);
    if (end != NULL && *end == 'T')
        strptime(end, "T%H:%M:%S", &tm);
    return timegm(&tm);
}

/* Checks the members beyond their types (those of the wrong type were
 * named already); appends errors. */
static void check_body(const json_t *doc, json_t *errors)
{
    const char *tool = json_string_value(json_object_get(doc, "tool"));
    const struct hv_tool_parser *p = tool != NULL ? hv_parser_find(tool) : NULL;
    if (tool != NULL && (p == NULL || strcmp(p->name, tool) != 0)) {
        char names[128] = "";
        size_t n = 0;
        for (const char *const *t = hv_parser_names(); *t != NULL; t++)
            n += (size_t)snprintf(names + n, n < sizeof names ? sizeof names - n : 0, "%s%s",
                                  n ? ", " : "", *t);
        hv_errors_add(errors, "/tool", "must be one of: %s", names);
    }
    const char *target = json_string_value(json_object_get(doc, "target"));
    if (target != NULL && !hv_jspec_name_ok(target))
        hv_errors_add(errors, "/target", "must be 1 to 128 printable characters without '/'");
    const char *name = json_string_value(json_object_get(doc, "name"));
    if (name != NULL && !hv_jspec_name_ok(name))
        hv_errors_add(errors, "/name", "must be 1 to 128 printable characters without '/'");
    const char *at = json_string_value(json_object_get(doc, "at"));
    if (at != NULL && !hv_iso8601_valid(at))
        hv_errors_add(errors, "/at", "must be an ISO 8601 UTC time such as 2026-11-01T10:00:00Z");
    else if (at != NULL && iso_seconds(at) > time(NULL) + 86400)
        hv_errors_add(errors, "/at", "must not be in the future");
    const json_t *output = json_object_get(doc, "output");
    if (json_is_string(output) && json_string_length(output) == 0)
        hv_errors_add(errors, "/output", "must not be empty");
    const json_t *labels = json_object_get(doc, "labels");
    if (json_is_object(labels))
        hv_jspec_check_labels(labels, "/labels", errors);
}

/* When the runs started: the request's "at", else what the output says
 * (fio, iperf3 and stress-ng's YAML stamp their reports), else now. */
static const char *start_time(const json_t *doc, const json_t *runs, char *now, size_t len,
                              const char **source)
{
    const char *at = json_string_value(json_object_get(doc, "at"));
    if (at != NULL) {
        *source = "request";
        return at;
    }
    const json_t *info = json_object_get(json_array_get(runs, 0), "info");
    const char *stamp = json_string_value(json_object_get(info, "started_at"));
    if (stamp != NULL && hv_iso8601_valid(stamp)) {
        *source = "output";
        return stamp;
    }
    *source = "import";
    hv_now_iso8601(now, len);
    return now;
}

/* The run's duration from its info, 0 when unknown or absurd. */
static double run_seconds(const json_t *run)
{
    double d = json_number_value(json_object_get(json_object_get(run, "info"), "duration_s"));
    return isfinite(d) && d > 0 && d < 1e7 ? d : 0;
}

/* When each run started and how long it lasted, [{"at", "after_s",
 * "seconds"}] (db_import.h). Runs one after another in a file: a run whose
 * output stamps its start (and no "at" was given) starts then; any other
 * starts where the run before it ended. */
static json_t *run_starts(const json_t *runs, const char *started, const char *source)
{
    json_t *starts = json_array();
    const char *anchor = started;
    double after = 0;
    size_t i;
    const json_t *run;
    json_array_foreach(runs, i, run)
    {
        const char *own =
            json_string_value(json_object_get(json_object_get(run, "info"), "started_at"));
        if (i > 0 && strcmp(source, "output") == 0 && own != NULL && hv_iso8601_valid(own)) {
            anchor = own;
            after = 0;
        }
        json_array_append_new(starts, json_pack("{s:s,s:f,s:f}", "at", anchor, "after_s", after,
                                                "seconds", run_seconds(run)));
        after += run_seconds(run);
    }
    return starts;
}

/* The workload kind of the runs: the tool's, unless the output says
 * otherwise (sysbench's fileio test is a disk measurement). */
static const char *run_kind(const struct hv_tool_parser *p, const json_t *runs)
{
    const char *kind = json_string_value(
        json_object_get(json_object_get(json_array_get(runs, 0), "info"), "kind"));
    if (kind != NULL &&
        (strcmp(kind, "cpu") == 0 || strcmp(kind, "disk") == 0 || strcmp(kind, "net") == 0))
        return kind;
    return p->kind;
}

/* The plan document of an import: a valid stored plan (one workload on
 * one host, one repetition per run) plus its labels and where it came
 * from. workload is the jobs' variant; the plan's workload is the same
 * without the variant's "workload" member. */
static json_t *plan_spec(const char *name, const struct hv_tool_parser *p, const json_t *doc,
                         const json_t *runs, const char *started, const char *source,
                         const char *sha, json_t *workload)
{
    const json_t *info = json_object_get(json_array_get(runs, 0), "info");
    json_int_t n = (json_int_t)json_array_size(runs);
    char description[160];
    snprintf(description, sizeof description,
             "%s output imported with POST /api/v1/imports (%lld run%s)", p->display, (long long)n,
             n == 1 ? "" : "s");
    const json_t *labels = json_object_get(doc, "labels");
    json_t *import = json_pack("{s:s,s:O,s:s,s:s,s:I,s:s}", "tool", p->name, "format",
                               json_object_get(info, "format"), "at", started, "at_source", source,
                               "runs", n, "output_sha256", sha);
    const json_t *version = json_object_get(info, "tool_version");
    if (json_is_string(version))
        json_object_set(import, "tool_version", (json_t *)version);
    return json_pack(
        "{s:s,s:s,s:{s:s},s:[{s:O,s:O,s:O,s:O}],s:{},s:s,s:s,s:{s:I,s:I,s:f},s:s,s:i,s:s,"
        "s:o,s:o}",
        "name", name, "description", description, "targets", "host",
        json_string_value(json_object_get(doc, "target")), "workloads", "id",
        json_object_get(workload, "id"), "kind", json_object_get(workload, "kind"), "engine",
        json_object_get(workload, "engine"), "params", json_object_get(workload, "params"),
        "factors", "design", "full", "concurrency", "one-guest", "repetitions", "min", n, "max", n,
        "ci_pct", 2.0, "order", "sequential", "seed", 0, "baseline", "host", "labels",
        labels ? json_deep_copy(labels) : json_object(), "import", import);
}

/* Applies the upload rule for metric values (lib/result.h) to what the
 * parser read: a corrupt or hand-edited output must not plant a value a
 * worker could not upload. Errors name /runs/N/metrics/K. Returns their
 * number. */
static int check_run_values(const json_t *runs, json_t *errors)
{
    size_t i, k;
    const json_t *run, *m;
    json_array_foreach(runs, i, run)
    {
        json_array_foreach(json_object_get(run, "metrics"), k, m)
        {
            char why[160], path[64];
            const char *name = json_string_value(json_object_get(m, "name"));
            if (hv_metric_value_check(name, json_string_value(json_object_get(m, "unit")),
                                      json_number_value(json_object_get(m, "value")), why,
                                      sizeof why))
                continue;
            snprintf(path, sizeof path, "/runs/%zu/metrics/%zu", i, k);
            hv_errors_add(errors, path, "%s: %s", name ? name : "metric", why);
        }
    }
    return (int)json_array_size(errors);
}

/* 201: the plan, and per run its job, result and metrics. */
static json_t *receipt_json(const struct hv_import_receipt *rc, const char *name,
                            const struct hv_tool_parser *p, const char *target, const json_t *runs)
{
    size_t i;
    json_t *r;
    json_array_foreach(rc->runs, i, r)
    {
        json_object_set(r, "metrics", json_object_get(json_array_get(runs, i), "metrics"));
    }
    json_t *first = json_array_get(rc->runs, 0);
    return json_pack(
        "{s:I,s:s,s:s,s:s,s:b,s:O,s:O,s:O,s:O,s:O}", "plan_id", (json_int_t)rc->plan_id, "name",
        name, "tool", p->name, "target", target, "target_created", rc->target_created, "started_at",
        json_object_get(first, "started_at"), "job_id", json_object_get(first, "job_id"),
        "result_id", json_object_get(first, "result_id"), "metrics",
        json_object_get(first, "metrics"), "runs", rc->runs);
}

void hv_h_import(struct hv_request *req)
{
    json_t *doc = hv_req_json(req);
    if (doc == NULL)
        return;
    json_t *errors = json_array();
    hv_jspec_check(doc, "", import_fields, errors);
    if (json_is_object(doc))
        check_body(doc, errors);
    if (json_array_size(errors) > 0) {
        hv_reply_problem(req, HV_E_INVALID_REQUEST, "the import request does not fit", errors);
        json_decref(doc);
        return;
    }
    json_decref(errors);
    const struct hv_tool_parser *p =
        hv_parser_find(json_string_value(json_object_get(doc, "tool")));
    const json_t *output = json_object_get(doc, "output");
    const char *text = json_string_value(output);
    size_t len = json_string_length(output);
    json_t *runs = NULL;
    char err[HV_PARSE_ERR_MAX];
    if (hv_parse_tool_runs(p->name, text, len, &runs, err, sizeof err) != 0 ||
        hv_parse_runs_alike(p->name, runs, err, sizeof err) != 0) {
        /* Nothing is stored: the output is the client's to fix. */
        errors = json_array();
        hv_errors_add(errors, "/output", "%s", err);
        hv_reply_problem(req, HV_E_INVALID_REQUEST, err, errors);
        json_decref(runs);
        json_decref(doc);
        return;
    }
    errors = json_array();
    if (check_run_values(runs, errors) > 0) {
        hv_reply_problem(req, HV_E_INVALID_REQUEST,
                         "the output holds values no measurement can have; nothing was stored",
                         errors);
        json_decref(runs);
        json_decref(doc);
        return;
    }
    json_decref(errors);
    char now[32], sha[65], plan_name[160];
    const char *source;
    const char *started = start_time(doc, runs, now, sizeof now, &source);
    const char *target = json_string_value(json_object_get(doc, "target"));
    const char *name = json_string_value(json_object_get(doc, "name"));
    if (name == NULL) {
        snprintf(plan_name, sizeof plan_name, "import: %s %.10s", p->name, started);
        name = plan_name;
    }
    hv_sha256_hex(text, len, sha);
    json_t *workload = json_pack("{s:s,s:s,s:s,s:s,s:{}}", "id", p->name, "workload", p->name,
                                 "kind", run_kind(p, runs), "engine", p->name, "params");
    json_t *starts = run_starts(runs, started, source);
    json_t *spec = plan_spec(name, p, doc, runs, started, source, sha, workload);
    struct hv_import im = {
        .tool = p->name,
        .target = target,
        .plan_name = name,
        .spec = spec,
        .workload = workload,
        .runs = runs,
        .starts = starts,
        .raw = text,
        .output_sha256 = sha,
        .token_id = req->token_id,
    };
    struct hv_import_receipt rc;
    enum hv_db_status s = hv_db_import_store(&im, &rc);
    if (s == HV_DB_CONFLICT && rc.existing_plan_id > 0) {
        char detail[300];
        snprintf(detail, sizeof detail,
                 "this %s output was imported for target %s before, as plan %lld", p->name, target,
                 (long long)rc.existing_plan_id);
        hv_reply_problem(req, HV_E_CONFLICT, detail, NULL);
    } else if (s != HV_DB_OK) {
        hv_reply_db_failure(req, s);
    } else {
        hv_info("import: %s output for %s stored as plan %lld (%zu run%s)", p->name, target,
                (long long)rc.plan_id, json_array_size(runs),
                json_array_size(runs) == 1 ? "" : "s");
        snprintf(req->location, sizeof req->location, "/api/v1/plans/%lld", (long long)rc.plan_id);
        hv_reply_json(req, 201, receipt_json(&rc, name, p, target, runs));
        json_decref(rc.runs);
    }
    json_decref(spec);
    json_decref(workload);
    json_decref(starts);
    json_decref(runs);
    json_decref(doc);
}
