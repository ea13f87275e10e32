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
 * output says it did, else after the run before it.
 *
 * The workload's params are its identity, what the output says was run
 * (fio's rw, bs and iodepth, iperf3's streams and MSS: the tool's
 * identity table, lib/parsers.h), with "params" of the body adding what
 * the output does not say (a pasted bonnie++ table's size); a given
 * param the output contradicts refuses the import. A history keeps each
 * workload's points apart from the others' (jobs.series_key covers the
 * params).
 *
 * A post quoting several bonnie++ tables is imported one table at a time:
 * "table" N reads only the N-th, and the import is told apart from the
 * post's other tables by its digest (of the output's digest and the
 * table).
 *
 * A body with "study" holds several labelled outputs instead, which become
 * one plan with a configuration per label (h_study.c). */
#include "auth.h"
#include "db_import.h"
#include "handlers.h"
#include "import_runs.h"
#include "jspec.h"
#include "log.h"
#include "parsers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An import's body, bound by import_fields. */
struct import_body {
    const char *tool, *target, *at, *name;
    const json_t *labels, *output;
    const json_t *params; /* what the output does not say of its workload */
    int table;            /* the table of the output to read (from 1), 0: all of it */
};

#define TO(field) HV_JTO(struct import_body, field)

static const struct hv_jfield import_fields[] = {
    {.name = "tool", .type = HV_J_STRING, .required = true, .max_len = 32, TO(tool)},
    {.name = "target", .type = HV_J_STRING, .required = true, .max_len = 128, TO(target)},
    {.name = "at", .type = HV_J_STRING, .max_len = 40, TO(at)},
    {.name = "labels", .type = HV_J_OBJECT, TO(labels)},
    {.name = "name", .type = HV_J_STRING, .max_len = 128, TO(name)},
    {.name = "table", .type = HV_J_INTEGER, .min = 1, .max = 1000, TO(table)},
    {.name = "params", .type = HV_J_OBJECT, TO(params)},
    /* The body cap (--max-body) bounds it first. */
    {.name = "output",
     .type = HV_J_STRING,
     .required = true,
     .max_len = (size_t)1 << 31,
     TO(output)},
    {0},
};

/* Checks the members beyond their types (those of the wrong type were
 * named already, and read as NULL); appends errors. */
static void check_body(const json_t *doc, const void *dest, json_t *errors)
{
    const struct import_body *b = dest;
    hv_import_check_tool(b->tool, "/tool", errors);
    if (b->target != NULL && !hv_jspec_name_ok(b->target))
        hv_errors_add(errors, "/target", "must be 1 to 128 printable characters without '/'");
    if (b->name != NULL && !hv_jspec_name_ok(b->name))
        hv_errors_add(errors, "/name", "must be 1 to 128 printable characters without '/'");
    hv_import_check_at(b->at, "/at", errors);
    if (json_is_string(b->output) && json_string_length(b->output) == 0)
        hv_errors_add(errors, "/output", "must not be empty");
    if (json_is_object(b->labels))
        hv_jspec_check_labels(b->labels, "/labels", errors);
    hv_params_given_check(b->params, "/params", errors);
}

/* The plan document of an import: a valid stored plan (one workload on
 * one host, one repetition per run) plus its labels and where it came
 * from. workload is the jobs' variant; the plan's workload is the same
 * without the variant's "workload" member. */
static json_t *plan_spec(const char *name, const struct hv_tool_parser *p,
                         const struct import_body *b, const json_t *runs, const char *started,
                         const char *source, const char *sha, json_t *workload)
{
    const json_t *info = json_object_get(json_array_get(runs, 0), "info");
    json_int_t n = (json_int_t)json_array_size(runs);
    char description[160];
    snprintf(description, sizeof description,
             "%s output imported with POST /api/v1/imports (%lld run%s)", p->display, (long long)n,
             n == 1 ? "" : "s");
    const json_t *labels = b->labels;
    json_t *import = json_pack("{s:s,s:O,s:s,s:s,s:I,s:s}", "tool", p->name, "format",
                               json_object_get(info, "format"), "at", started, "at_source", source,
                               "runs", n, "output_sha256", sha);
    const json_t *version = json_object_get(info, "tool_version");
    if (json_is_string(version))
        json_object_set(import, "tool_version", (json_t *)version);
    if (b->table > 0)
        json_object_set_new(import, "table", json_integer(b->table));
    if (json_object_size(b->params) > 0)
        json_object_set(import, "params_given", (json_t *)b->params);
    return json_pack(
        "{s:s,s:s,s:{s:s},s:[{s:O,s:O,s:O,s:O}],s:{},s:s,s:s,s:{s:I,s:I,s:f},s:s,s:i,s:s,"
        "s:o,s:o}",
        "name", name, "description", description, "targets", "host", b->target, "workloads", "id",
        json_object_get(workload, "id"), "kind", json_object_get(workload, "kind"), "engine",
        json_object_get(workload, "engine"), "params", json_object_get(workload, "params"),
        "factors", "design", "full", "concurrency", "one-guest", "repetitions", "min", n, "max", n,
        "ci_pct", 2.0, "order", "sequential", "seed", 0, "baseline", "host", "labels",
        labels ? json_deep_copy(labels) : json_object(), "import", import);
}

/* 201: the plan, the workload's params, and per run its job, result and
 * metrics. */
static json_t *receipt_json(const struct hv_import_receipt *rc, const char *name,
                            const struct hv_tool_parser *p, const char *target, const json_t *runs,
                            const json_t *params)
{
    size_t i;
    json_t *r;
    json_array_foreach(rc->runs, i, r)
    {
        json_object_set(r, "metrics", json_object_get(json_array_get(runs, i), "metrics"));
    }
    json_t *first = json_array_get(rc->runs, 0);
    return json_pack(
        "{s:I,s:s,s:s,s:s,s:b,s:O,s:O,s:O,s:O,s:O,s:O}", "plan_id", (json_int_t)rc->plan_id, "name",
        name, "tool", p->name, "target", target, "target_created", rc->target_created, "params",
        params, "started_at", json_object_get(first, "started_at"), "job_id",
        json_object_get(first, "job_id"), "result_id", json_object_get(first, "result_id"),
        "metrics", json_object_get(first, "metrics"), "runs", rc->runs);
}

/* Answers 400 for an output that cannot be imported: the parser's reason
 * as the detail, or that values are impossible. Takes errors. */
static void reply_unreadable(struct hv_request *req, json_t *errors)
{
    const json_t *first = json_array_get(errors, 0);
    const char *path = json_string_value(json_object_get(first, "path"));
    char detail[HV_PARSE_ERR_MAX];
    if (path != NULL && (strcmp(path, "/output") == 0 || strcmp(path, "/params") == 0))
        snprintf(detail, sizeof detail, "%s", json_string_value(json_object_get(first, "message")));
    else
        snprintf(detail, sizeof detail,
                 "the output holds values no measurement can have; nothing was stored");
    hv_reply_problem(req, HV_E_INVALID_REQUEST, detail, errors);
}

/* Stores the runs of p's output text[0..len) as b asks, of a workload
 * of params, and answers. */
static void store(struct hv_request *req, const struct import_body *b,
                  const struct hv_tool_parser *p, const char *text, size_t len, json_t *runs,
                  const json_t *params)
{
    char now[32], sha[65], plan_name[160];
    const char *source;
    const char *started = hv_import_start(b->at, runs, now, sizeof now, &source);
    const char *target = b->target;
    const char *name = b->name;
    if (name == NULL) {
        snprintf(plan_name, sizeof plan_name, "import: %s %.10s", p->name, started);
        name = plan_name;
    }
    hv_sha256_hex(text, len, sha);
    if (b->table > 0) {
        /* Each table of a post is an import of its own. */
        char key[96];
        int n = snprintf(key, sizeof key, "%s table %d", sha, b->table);
        hv_sha256_hex(key, (size_t)n, sha);
    }
    json_t *workload =
        json_pack("{s:s,s:s,s:s,s:s,s:O}", "id", p->name, "workload", p->name, "kind",
                  hv_import_kind(p, runs), "engine", p->name, "params", params);
    json_t *entries = json_array();
    size_t rep = 0;
    hv_import_entries(entries, runs, started, source, 0, workload, 0, &rep);
    json_t *spec = plan_spec(name, p, b, runs, started, source, sha, workload);
    json_t *configs = json_pack("[{s:s,s:{}}]", "name", "default", "levels");
    const char *outputs[] = {text};
    struct hv_import im = {
        .tool = p->name,
        .target = target,
        .plan_name = name,
        .spec = spec,
        .configs = configs,
        .runs = entries,
        .outputs = outputs,
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
        hv_reply_json(req, 201, receipt_json(&rc, name, p, target, runs, params));
        json_decref(rc.runs);
    }
    json_decref(configs);
    json_decref(spec);
    json_decref(entries);
    json_decref(workload);
}

void hv_h_import(struct hv_request *req)
{
    json_t *doc = hv_req_json(req);
    if (doc == NULL)
        return;
    if (json_is_object(doc) && json_object_get(doc, "study") != NULL) {
        hv_import_study(req, doc);
        json_decref(doc);
        return;
    }
    struct import_body b = {0};
    if (!hv_req_fits(req, doc, import_fields, &b, check_body, "the import request does not fit")) {
        json_decref(doc);
        return;
    }
    const struct hv_tool_parser *p = hv_parser_find(b.tool);
    const char *text = json_string_value(b.output);
    size_t len = json_string_length(b.output);
    /* Nothing is stored when the output does not read: it is the client's
     * to fix. */
    json_t *errors = json_array(), *params;
    json_t *runs = hv_import_parse(p, text, len, b.table, b.params, "", errors, &params);
    if (runs == NULL) {
        reply_unreadable(req, errors);
    } else {
        json_decref(errors);
        store(req, &b, p, text, len, runs, params);
    }
    json_decref(params);
    json_decref(runs);
    json_decref(doc);
}
