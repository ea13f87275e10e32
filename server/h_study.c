/* h_study.c — POST /api/v1/imports with a study: saved outputs of hand-run
 * comparisons (a guest against the bare host, a storage setting on and
 * off), each under a label, become one finished plan whose report compares
 * the labels as it compares any plan's configurations.
 *
 * A study is one factor, "study", whose levels are the labels and whose
 * default is the baseline: the plan's configurations are "default" (the
 * baseline's outputs) and "study=LABEL" for each other label, with levels
 * {"study": LABEL}, and its stored plan says factors {"study": [baseline,
 * labels in order of appearance]} and baseline "default". Each tool and
 * identity (what the output says was run, with the output's "params":
 * h_import.c) is a workload, engine the tool, id the tool for its first
 * identity and "TOOL-2", "TOOL-3" ... for the next ones in order of
 * appearance, so a label's fio at queue depth 1 is compared with another
 * label's at depth 1, never with one at 32. The runs of one label and
 * workload are its repetitions, so they must be runs of one workload
 * (hv_parse_runs_alike over all of them); outputs of different labels may
 * differ otherwise (a guest's and a host's bonnie++ name other machines). Every
 * output is read before anything is stored: one that does not parse
 * refuses the study, naming /outputs/N/output. */
#include "auth.h"
#include "db_import.h"
#include "import_runs.h"
#include "jspec.h"
#include "log.h"
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** The most outputs one study takes. */
#define STUDY_MAX_OUTPUTS 256
/** The longest label. */
#define STUDY_LABEL_MAX 64

/* One element of outputs, bound by output_fields. */
struct output {
    const char *label, *tool, *at;
    const json_t *text;
    const json_t *params; /* what the output does not say of its workload */
    size_t workload;      /* its workload's index in study.workloads */
};

/* A study being read: the members of its body (bound by study_fields),
 * its outputs, its labels (baseline first), workloads (one per tool), and
 * per output its runs. */
struct study {
    const char *study, *target, *baseline, *name;
    const json_t *tags;    /* the body's labels (tags of the plan) */
    const json_t *outputs; /* as given */
    struct output *out;    /* and bound, one per output */
    json_t *labels;        /* ["host", "guest"]: configuration i is label i */
    json_t *workloads;     /* the jobs' workload variants, one per tool */
    json_t *runs;          /* per output: its runs */
};

#define TO(field) HV_JTO(struct study, field)

static const struct hv_jfield study_fields[] = {
    {.name = "study", .type = HV_J_STRING, .required = true, .max_len = 128, TO(study)},
    {.name = "target", .type = HV_J_STRING, .required = true, .max_len = 128, TO(target)},
    {.name = "baseline",
     .type = HV_J_STRING,
     .required = true,
     .max_len = STUDY_LABEL_MAX,
     TO(baseline)},
    {.name = "labels", .type = HV_J_OBJECT, TO(tags)},
    {.name = "name", .type = HV_J_STRING, .max_len = 128, TO(name)},
    {.name = "outputs",
     .type = HV_J_ARRAY,
     .required = true,
     .max_len = STUDY_MAX_OUTPUTS,
     TO(outputs)},
    {0},
};

#undef TO
#define TO(field) HV_JTO(struct output, field)

static const struct hv_jfield output_fields[] = {
    {.name = "label", .type = HV_J_STRING, .required = true, .max_len = STUDY_LABEL_MAX, TO(label)},
    {.name = "tool", .type = HV_J_STRING, .required = true, .max_len = 32, TO(tool)},
    {.name = "at", .type = HV_J_STRING, .max_len = 40, TO(at)},
    {.name = "params", .type = HV_J_OBJECT, TO(params)},
    /* The body cap (--max-body) bounds it first. */
    {.name = "output", .type = HV_J_STRING, .required = true, .max_len = (size_t)1 << 31, TO(text)},
    {0},
};

/* Whether s is a label: 1 to 64 of A-Z a-z 0-9 _ . - */
static bool label_ok(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && n <= STUDY_LABEL_MAX &&
           strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

static size_t index_of(const json_t *strings, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(strings, i, v)
    {
        if (strcmp(json_string_value(v), s) == 0)
            return i;
    }
    return (size_t)-1;
}

/* Checks one element of outputs; adds its label to st->labels. */
static void check_output(const json_t *o, size_t i, struct study *st, json_t *errors)
{
    char path[64], at[96];
    hv_jpath_index(path, sizeof path, "/outputs", i);
    struct output *out = &st->out[i];
    if (hv_jspec_parse(o, path, output_fields, out, errors) > 0 || !json_is_object(o))
        return;
    const char *label = out->label;
    snprintf(at, sizeof at, "%s/label", path);
    if (!label_ok(label))
        hv_errors_add(errors, at, "must be 1 to 64 of A-Z a-z 0-9 _ . -");
    else if (index_of(st->labels, label) == (size_t)-1)
        json_array_append_new(st->labels, json_string(label));
    snprintf(at, sizeof at, "%s/tool", path);
    hv_import_check_tool(out->tool, at, errors);
    snprintf(at, sizeof at, "%s/at", path);
    hv_import_check_at(out->at, at, errors);
    snprintf(at, sizeof at, "%s/output", path);
    if (json_string_length(out->text) == 0)
        hv_errors_add(errors, at, "must not be empty");
    snprintf(at, sizeof at, "%s/params", path);
    hv_params_given_check(out->params, at, errors);
}

/* Checks the request beyond its types; orders st->labels baseline first.
 * Appends errors. */
static void check_study(struct study *st, json_t *errors)
{
    if (st->study != NULL && !hv_jspec_name_ok(st->study))
        hv_errors_add(errors, "/study", "must be 1 to 128 printable characters without '/'");
    if (st->target != NULL && !hv_jspec_name_ok(st->target))
        hv_errors_add(errors, "/target", "must be 1 to 128 printable characters without '/'");
    if (st->name != NULL && !hv_jspec_name_ok(st->name))
        hv_errors_add(errors, "/name", "must be 1 to 128 printable characters without '/'");
    if (json_is_object(st->tags))
        hv_jspec_check_labels(st->tags, "/labels", errors);
    const json_t *outputs = st->outputs;
    size_t i;
    const json_t *o;
    json_array_foreach(outputs, i, o)
    {
        check_output(o, i, st, errors);
    }
    if (json_is_array(outputs) && json_array_size(errors) == 0) {
        size_t n = json_array_size(st->labels);
        size_t b = st->baseline ? index_of(st->labels, st->baseline) : (size_t)-1;
        if (n < 2)
            hv_errors_add(errors, "/outputs",
                          "a study compares at least two labels; this one has %zu", n);
        else if (n > HV_PLAN_MAX_LEVELS)
            hv_errors_add(errors, "/outputs",
                          "a study compares at most %d labels; this one has %zu",
                          HV_PLAN_MAX_LEVELS, n);
        if (st->baseline != NULL && b == (size_t)-1)
            hv_errors_add(errors, "/baseline", "must be the label of one of the outputs");
        else if (b != (size_t)-1 && b > 0) {
            json_t *base = json_incref(json_array_get(st->labels, b));
            json_array_remove(st->labels, b);
            json_array_insert_new(st->labels, 0, base);
        }
    }
}

/* The index of the workload variant of tool and params (kind from runs),
 * added on first use. Appends an error when another output of the tool
 * measured another kind. */
static size_t workload_of(struct study *st, const struct hv_tool_parser *p, const json_t *runs,
                          const json_t *params, size_t i, json_t *errors)
{
    const char *kind = hv_import_kind(p, runs);
    size_t k, same_tool = 0;
    json_t *w;
    json_array_foreach(st->workloads, k, w)
    {
        if (strcmp(json_string_value(json_object_get(w, "engine")), p->name) != 0)
            continue;
        same_tool++;
        const char *had = json_string_value(json_object_get(w, "kind"));
        if (strcmp(had, kind) != 0) {
            char path[64];
            hv_jpath_index(path, sizeof path, "/outputs", i);
            hv_errors_add(errors, path,
                          "this %s output measures %s where an earlier one measures %s: import "
                          "them as separate studies",
                          p->display, kind, had);
            return k;
        }
        if (json_equal(json_object_get(w, "params"), params))
            return k;
    }
    char id[48];
    if (same_tool == 0)
        snprintf(id, sizeof id, "%s", p->name);
    else
        snprintf(id, sizeof id, "%s-%zu", p->name, same_tool + 1);
    w = json_pack("{s:s,s:s,s:s,s:s,s:O}", "id", id, "workload", id, "kind", kind, "engine",
                  p->name, "params", params);
    json_array_append_new(st->workloads, w);
    return json_array_size(st->workloads) - 1;
}

/* Reads every output; then checks that the runs of each label and tool
 * are runs of one workload. Appends errors. */
static void read_outputs(struct study *st, json_t *errors)
{
    size_t n = json_array_size(st->outputs);
    for (size_t i = 0; i < n; i++) {
        const struct hv_tool_parser *p = hv_parser_find(st->out[i].tool);
        const json_t *text = st->out[i].text;
        char path[64];
        hv_jpath_index(path, sizeof path, "/outputs", i);
        json_t *params;
        json_t *runs = hv_import_parse(p, json_string_value(text), json_string_length(text), 0,
                                       st->out[i].params, path, errors, &params);
        json_array_append_new(st->runs, runs ? runs : json_array());
        if (runs != NULL)
            st->out[i].workload = workload_of(st, p, runs, params, i, errors);
        json_decref(params);
    }
    if (json_array_size(errors) > 0)
        return;
    /* Repetitions: every run of one label and workload, in the order
     * given. */
    for (size_t a = 0; a < n; a++) {
        const struct output *o = &st->out[a];
        json_t *all = json_array();
        bool first = true;
        for (size_t b = 0; b < n; b++) {
            const struct output *q = &st->out[b];
            bool same = strcmp(o->label, q->label) == 0 && o->workload == q->workload;
            first = first && (b >= a || !same);
            if (same)
                json_array_extend(all, json_array_get(st->runs, b));
        }
        char err[HV_PARSE_ERR_MAX], path[64];
        if (first && hv_parse_runs_alike(o->tool, all, err, sizeof err) != 0) {
            hv_jpath_index(path, sizeof path, "/outputs", a);
            hv_errors_add(errors, path, "label %s: %s", o->label, err);
        }
        json_decref(all);
    }
}

/* The configurations: "default" for the baseline, "study=LABEL" else. */
static json_t *configs_json(const struct study *st)
{
    json_t *configs = json_array();
    size_t i;
    json_t *label;
    json_array_foreach(st->labels, i, label)
    {
        char name[STUDY_LABEL_MAX + 8];
        snprintf(name, sizeof name, "study=%s", json_string_value(label));
        json_array_append_new(configs, json_pack("{s:s,s:{s:O}}", "name", i == 0 ? "default" : name,
                                                 "levels", "study", label));
    }
    return configs;
}

/* The fewest and most repetitions of the (label, tool) pairs that have
 * runs, from their counts reps[0..n). */
static void rep_range(const size_t *reps, size_t n, json_int_t range[2])
{
    range[0] = range[1] = 0;
    for (size_t i = 0; i < n; i++) {
        json_int_t r = (json_int_t)reps[i];
        if (r > 0 && (range[0] == 0 || r < range[0]))
            range[0] = r;
        if (r > range[1])
            range[1] = r;
    }
}

/* The runs as db_import.h stores them, and per output where it came from
 * (into provenance). sha gets the study's digest: of each output's label,
 * tool and digest, in order; range the fewest and most repetitions. */
static json_t *entries_json(const struct study *st, json_t *provenance, char sha[65],
                            json_int_t range[2])
{
    json_t *entries = json_array();
    size_t n = json_array_size(st->outputs);
    size_t nw = json_array_size(st->workloads), nl = json_array_size(st->labels);
    size_t *reps = calloc(nw * nl + 1, sizeof *reps);
    size_t cap = n * (STUDY_LABEL_MAX + 32 + 66) + 1, len = 0;
    char *digests = malloc(cap);
    for (size_t i = 0; i < n; i++) {
        const char *label = st->out[i].label;
        const struct hv_tool_parser *p = hv_parser_find(st->out[i].tool);
        const json_t *text = st->out[i].text, *runs = json_array_get(st->runs, i);
        size_t c = index_of(st->labels, label), w = st->out[i].workload;
        char now[32], one[65];
        const char *source;
        const char *started = hv_import_start(st->out[i].at, runs, now, sizeof now, &source);
        if (reps != NULL)
            hv_import_entries(entries, runs, started, source, c, json_array_get(st->workloads, w),
                              i, &reps[c * nw + w]);
        hv_sha256_hex(json_string_value(text), json_string_length(text), one);
        if (digests != NULL)
            len += (size_t)snprintf(digests + len, cap - len, "%s\n%s\n%s\n", label, p->name, one);
        const json_t *info = json_object_get(json_array_get(runs, 0), "info");
        json_t *from =
            json_pack("{s:s,s:s,s:O,s:s,s:s,s:I,s:s}", "label", label, "tool", p->name, "format",
                      json_object_get(info, "format"), "at", started, "at_source", source, "runs",
                      (json_int_t)json_array_size(runs), "output_sha256", one);
        if (json_is_string(json_object_get(info, "tool_version")))
            json_object_set(from, "tool_version", json_object_get(info, "tool_version"));
        json_object_set(from, "workload", json_object_get(json_array_get(st->workloads, w), "id"));
        if (json_object_size(st->out[i].params) > 0)
            json_object_set(from, "params_given", (json_t *)st->out[i].params);
        json_array_append_new(provenance, from);
    }
    hv_sha256_hex(digests ? digests : "", len, sha);
    if (reps != NULL)
        rep_range(reps, nw * nl, range);
    bool failed = reps == NULL || digests == NULL;
    free(reps);
    free(digests);
    if (failed) {
        json_decref(entries);
        return NULL;
    }
    return entries;
}

/* The plan document of a study: a valid stored plan with the factor
 * "study", plus its labels and where its outputs came from. */
static json_t *study_spec(const struct study *st, const char *name, json_t *provenance,
                          const char *sha, const json_int_t range[2])
{
    const char *study = st->study;
    char description[256];
    snprintf(description, sizeof description,
             "study %s: %zu outputs under %zu labels, imported with POST /api/v1/imports", study,
             json_array_size(st->outputs), json_array_size(st->labels));
    json_t *workloads = json_array();
    size_t i;
    json_t *w;
    json_array_foreach(st->workloads, i, w)
    {
        json_array_append_new(
            workloads, json_pack("{s:O,s:O,s:O,s:O}", "id", json_object_get(w, "id"), "kind",
                                 json_object_get(w, "kind"), "engine", json_object_get(w, "engine"),
                                 "params", json_object_get(w, "params")));
    }
    const json_t *labels = st->tags;
    return json_pack("{s:s,s:s,s:{s:s},s:o,s:{s:O},s:s,s:s,s:{s:I,s:I,s:f},s:s,s:i,s:s,s:o,"
                     "s:{s:s,s:s,s:O,s:s,s:o}}",
                     "name", name, "description", description, "targets", "host", st->target,
                     "workloads", workloads, "factors", "study", st->labels, "design", "full",
                     "concurrency", "one-guest", "repetitions", "min", range[0], "max", range[1],
                     "ci_pct", 2.0, "order", "sequential", "seed", 0, "baseline", "default",
                     "labels", labels ? json_deep_copy(labels) : json_object(), "study", "name",
                     study, "baseline", st->baseline, "labels", st->labels, "output_sha256", sha,
                     "outputs", json_incref(provenance));
}

/* 201: the plan, its configurations, and per run its label, job, result
 * and metrics. */
static json_t *receipt_json(const struct study *st, const struct hv_import_receipt *rc,
                            const char *name, const json_t *configs, const json_t *entries)
{
    size_t i;
    json_t *r;
    json_array_foreach(rc->runs, i, r)
    {
        const json_t *e = json_array_get(entries, i);
        size_t c = (size_t)json_integer_value(json_object_get(e, "config"));
        json_object_set(r, "label", json_array_get(st->labels, c));
        json_object_set(r, "configuration", json_object_get(json_array_get(configs, c), "name"));
        json_object_set(r, "workload", json_object_get(json_object_get(e, "workload"), "id"));
        json_object_set(r, "repetition", json_object_get(e, "repetition"));
        json_object_set(r, "metrics", json_object_get(json_object_get(e, "run"), "metrics"));
    }
    json_t *labels = json_array();
    json_t *c;
    json_array_foreach(configs, i, c)
    {
        json_array_append_new(labels, json_pack("{s:O,s:O}", "label", json_array_get(st->labels, i),
                                                "configuration", json_object_get(c, "name")));
    }
    return json_pack("{s:I,s:s,s:s,s:s,s:b,s:s,s:o,s:O}", "plan_id", (json_int_t)rc->plan_id,
                     "name", name, "study", st->study, "target", st->target, "target_created",
                     rc->target_created, "baseline", st->baseline, "configurations", labels, "runs",
                     rc->runs);
}

/* Stores the study read into st, and answers. */
static void store(struct hv_request *req, struct study *st)
{
    const char *study = st->study, *target = st->target, *name = st->name;
    char plan_name[160], sha[65];
    if (name == NULL) {
        snprintf(plan_name, sizeof plan_name, "study: %s", study);
        name = plan_name;
    }
    json_t *provenance = json_array(), *configs = configs_json(st);
    json_int_t range[2] = {0, 0};
    json_t *entries = entries_json(st, provenance, sha, range);
    size_t n = json_array_size(st->outputs);
    const char **texts = calloc(n + 1, sizeof *texts);
    json_t *spec = entries ? study_spec(st, name, provenance, sha, range) : NULL;
    if (entries == NULL || texts == NULL || spec == NULL || configs == NULL) {
        hv_reply_problem(req, HV_E_INTERNAL, "out of memory", NULL);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        texts[i] = json_string_value(st->out[i].text);
    struct hv_import im = {.tool = "study",
                           .target = target,
                           .plan_name = name,
                           .spec = spec,
                           .configs = configs,
                           .runs = entries,
                           .outputs = texts,
                           .output_sha256 = sha,
                           .token_id = req->token_id};
    struct hv_import_receipt rc;
    enum hv_db_status s = hv_db_import_store(&im, &rc);
    if (s == HV_DB_CONFLICT && rc.existing_plan_id > 0) {
        char detail[300];
        snprintf(detail, sizeof detail,
                 "this study (the same outputs under the same labels) was imported for target %s "
                 "before, as plan %lld",
                 target, (long long)rc.existing_plan_id);
        hv_reply_problem(req, HV_E_CONFLICT, detail, NULL);
    } else if (s != HV_DB_OK) {
        hv_reply_db_failure(req, s);
    } else {
        hv_info("import: study %s for %s stored as plan %lld (%zu outputs, %zu labels)", study,
                target, (long long)rc.plan_id, n, json_array_size(st->labels));
        snprintf(req->location, sizeof req->location, "/api/v1/plans/%lld", (long long)rc.plan_id);
        hv_reply_json(req, 201, receipt_json(st, &rc, name, configs, entries));
        json_decref(rc.runs);
    }
done:
    free(texts);
    json_decref(spec);
    json_decref(entries);
    json_decref(configs);
    json_decref(provenance);
}

void hv_import_study(struct hv_request *req, json_t *doc)
{
    struct study st = {.labels = json_array(), .workloads = json_array(), .runs = json_array()};
    json_t *errors = json_array();
    if (hv_jspec_parse(doc, "", study_fields, &st, errors) == 0) {
        st.out = calloc(json_array_size(st.outputs) + 1, sizeof *st.out);
        if (st.out == NULL) {
            json_decref(errors);
            hv_reply_problem(req, HV_E_INTERNAL, "out of memory", NULL);
            goto done;
        }
        check_study(&st, errors);
    }
    if (json_array_size(errors) > 0) {
        hv_reply_problem(req, HV_E_INVALID_REQUEST, "the study does not fit", errors);
    } else {
        /* Nothing is stored unless every output reads. */
        read_outputs(&st, errors);
        if (json_array_size(errors) > 0) {
            hv_reply_problem(req, HV_E_INVALID_REQUEST,
                             "an output of the study cannot be imported; nothing was stored",
                             errors);
        } else {
            json_decref(errors);
            store(req, &st);
        }
    }
done:
    free(st.out);
    json_decref(st.labels);
    json_decref(st.workloads);
    json_decref(st.runs);
}
