/* tools.c — the runner shared by the external tools' adapters
 * (tool_*.c): argv building, the params lib/params.h normalised, the run,
 * the parse of its output and the report; see tools.h. The net tools' two sides are tools_net.c. */
#include "worker/engines/tools.h"

#include "fileio.h"
#include "params.h"
#include "parsers.h"
#include "worker/engines/storage.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------------
 * An argv under construction. */

void hv_tool_arg(struct hv_tool_args *a, const char *fmt, ...)
{
    if (a->n >= HV_TOOL_MAX_ARGS) {
        a->broken = true;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    if (s == NULL) {
        a->broken = true;
        return;
    }
    a->v[a->n++] = s;
    a->v[a->n] = NULL;
}

void hv_tool_args_free(struct hv_tool_args *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->v[i]);
    a->n = 0;
    a->v[0] = NULL;
}

json_t *hv_tool_argv_json(const char *const *argv)
{
    json_t *list = json_array();
    for (size_t i = 0; list != NULL && argv[i] != NULL; i++)
        json_array_append_new(list, json_string(argv[i]));
    return list;
}

int hv_tool_job_init(struct hv_tool_job *j, const struct hv_engine *e,
                     const struct hv_engine_ctx *ctx, struct hv_engine_result *out)
{
    *j = (struct hv_tool_job){.engine = e,
                              .tool = e->tool,
                              .ctx = ctx,
                              .out = out,
                              .cpus = hv_engine_cpus(),
                              .root = geteuid() == 0};
    /* Normalised again here with the rows that validated the plan, so
     * defaults come from one place and a job sent by hand is checked too. */
    j->params = hv_engine_params_check(e->def, ctx->params, j->cpus, out->error, sizeof out->error);
    return j->params != NULL ? 0 : -1;
}

/* ---------------------------------------------------------------------
 * Files and numbers the adapters share. */

long long hv_tool_whole_seconds(double s)
{
    double c = ceil(s);
    return c < 1 ? 1 : (long long)c;
}

/* A warm-up in the whole seconds tools take (rounded up; 0 stays 0). */
long long hv_tool_whole_warmup(double s)
{
    double c = ceil(s - 1e-9);
    return c < 0 ? 0 : (long long)c;
}

/* ---------------------------------------------------------------------
 * Where tools may write: the policy of the built-in disk engine
 * (storage.h). */

/* A name for a new file or directory in the scratch directory, ending in
 * suffix. Returns 0, or -1 with r->error set when the path is too long. */
int hv_tool_scratch_name(char *out, size_t len, const char *scratch, const char *what,
                         const char *suffix, struct hv_engine_result *r)
{
    static unsigned counter;
    unsigned n = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
    int w = snprintf(out, len, "%s/hvbench-%s-%ld-%u%s", scratch, what, (long)getpid(), n, suffix);
    if (w < 0 || (size_t)w >= len)
        return hv_engine_fail(r, "the scratch directory's path %s is too long", scratch);
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

/* A private directory under the scratch one: stress-ng's temporary files
 * and its YAML report. */
int hv_tool_make_tmpdir(struct hv_tool_job *j, const char *what)
{
    char scratch[PATH_MAX];
    if (hv_scratch_dir(scratch, sizeof scratch, j->out) != 0)
        return -1;
    if (hv_tool_scratch_name(j->tmpdir, sizeof j->tmpdir, scratch, what, "-XXXXXX", j->out) != 0) {
        j->tmpdir[0] = '\0';
        return -1;
    }
    if (mkdtemp(j->tmpdir) == NULL) {
        int e = errno;
        j->tmpdir[0] = '\0';
        return hv_engine_fail(j->out, "cannot make a directory in %s: %s", scratch, strerror(e));
    }
    return 0;
}

void hv_tool_job_cleanup(struct hv_tool_job *j)
{
    if (j->remove[0] != '\0')
        unlink(j->remove);
    if (j->tmpdir[0] != '\0')
        nftw(j->tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    hv_tool_args_free(&j->args);
    json_decref(j->params);
    j->params = NULL;
}

/* ---------------------------------------------------------------------
 * Running and reporting. */

/* The first non-empty line of text, trimmed, as a new JSON string. */
static json_t *first_line(const char *text)
{
    if (text == NULL)
        return NULL;
    text += strspn(text, " \t\r\n");
    size_t n = strcspn(text, "\r\n");
    while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t'))
        n--;
    return n > 0 ? json_stringn(text, n > 200 ? 200 : n) : NULL;
}

/* Records `PROGRAM VERSION_FLAG`'s first line as observed.tool_version. */
void hv_tool_record_version(const struct hv_tool *t, json_t *observed)
{
    if (t->version_flag == NULL)
        return;
    const char *argv[] = {t->program, t->version_flag, NULL};
    struct hv_run_spec spec = {.argv = argv, .display = t->display, .timeout = 10};
    struct hv_run_result r;
    char err[256];
    if (hv_run(&spec, NULL, &r, err, sizeof err) != 0)
        return;
    json_t *v = NULL;
    if (!r.timed_out && r.signal == 0) {
        v = first_line(r.out);
        if (v == NULL)
            v = first_line(r.err);
    }
    if (v != NULL)
        json_object_set_new(observed, "tool_version", v);
    hv_run_result_clear(&r);
}

void hv_tool_keep_failed_output(struct hv_engine_result *out, const struct hv_run_result *r)
{
    static const char sep[] = "\n--- stderr ---\n";
    size_t n = r->out_len + sizeof sep + r->err_len;
    char *text = malloc(n + 1);
    if (text == NULL)
        return;
    size_t len = 0;
    if (r->out_len > 0) {
        memcpy(text, r->out, r->out_len);
        len = r->out_len;
    }
    if (r->err_len > 0) {
        memcpy(text + len, sep + (len == 0), sizeof sep - 1 - (len == 0));
        len += sizeof sep - 1 - (len == 0);
        memcpy(text + len, r->err, r->err_len);
        len += r->err_len;
    }
    if (len > 0)
        hv_engine_set_raw_of(out, text, len,
                             len + (r->out_total > r->out_len ? r->out_total - r->out_len : 0));
    free(text);
}

/* Records how a run went in observed. */
static void record_run(json_t *observed, const struct hv_run_result *r)
{
    json_object_set_new(observed, "tool_path", json_string(r->path));
    json_object_set_new(observed, "exit_code",
                        r->signal == 0 ? json_integer(r->exit_code) : json_null());
    json_object_set_new(observed, "seconds", json_real(round(r->seconds * 1000) / 1000));
}

/* Turns a finished run into out: failure with its reason, or success. */
int hv_tool_finish(struct hv_engine_result *out, const char *display, const struct hv_run_result *r)
{
    record_run(out->observed, r);
    if (hv_run_ok(r))
        return 0;
    char why[sizeof out->error];
    hv_run_describe(r, display, why, sizeof why);
    hv_tool_keep_failed_output(out, r);
    return hv_engine_fail(out, "%s", why);
}

int hv_tool_exec(const struct hv_engine_ctx *ctx, struct hv_engine_result *out,
                 const struct hv_run_spec *spec, struct hv_run_result *r)
{
    memset(r, 0, sizeof *r);
    json_object_set_new(out->observed, "argv", hv_tool_argv_json(spec->argv));
    char err[sizeof out->error];
    if (hv_run(spec, ctx->stop, r, err, sizeof err) != 0)
        return hv_engine_fail(out, "%s", err);
    return hv_tool_finish(out, spec->display ? spec->display : spec->argv[0], r);
}

/* The samples of run into out (and ctx's live view), the warm-up of a tool
 * without one of its own dropped, and the steady-state verdict over the
 * series of the headline metric (or of the first sampled metric when the
 * headline has none: a mixed fio job samples both directions at once) in
 * observed.steady_state. Returns 0, or -1 when memory runs out. */
static int observe_steady(const struct hv_tool *t, struct hv_tool_job *j, json_t *run)
{
    json_t *obs = j->out->observed;
    if (t->no_samples != NULL) {
        json_t *o =
            json_pack("{s:n, s:i, s:n, s:n, s:b, s:s}", "steady", "window", HV_STEADY_WINDOW,
                      "range_pct", "slope_pct", "assessed", false, "why", t->no_samples);
        return o != NULL && json_object_set_new(obs, "steady_state", o) == 0 ? 0 : -1;
    }
    json_object_set_new(obs, "warmup", json_real(j->warmup));
    json_t *samples = json_object_get(run, "samples");
    const char *series = json_string_value(
        json_object_get(json_array_get(json_object_get(run, "metrics"), 0), "name"));
    size_t i, n = 0;
    json_t *s;
    bool headline_sampled = false;
    json_array_foreach(samples, i, s)
    {
        headline_sampled |= strcmp(json_string_value(json_object_get(s, "metric")), series) == 0;
    }
    if (!headline_sampled && json_array_size(samples) > 0)
        series = json_string_value(json_object_get(json_array_get(samples, 0), "metric"));
    double *v = calloc(json_array_size(samples) + 1, sizeof *v), sum = 0;
    if (v == NULL)
        return -1;
    double drop = t->drop_warmup ? j->warmup : 0;
    int rc = 0;
    json_array_foreach(samples, i, s)
    {
        const char *metric = json_string_value(json_object_get(s, "metric"));
        double at = json_number_value(json_object_get(s, "t"));
        double value = json_number_value(json_object_get(s, "value"));
        if (at <= drop + 1e-6)
            continue;
        rc |= hv_engine_emit_sample(j->ctx, j->out, metric, at - drop, value);
        if (strcmp(metric, series) == 0) {
            v[n++] = value;
            sum += value;
        }
    }
    struct hv_steady st;
    hv_steady_state(v, n, &st);
    free(v);
    json_t *o = json_pack("{s:b, s:s, s:i}", "assessed", true, "metric", series, "samples", (int)n);
    if (o == NULL || hv_steady_observe(o, &st) != 0) {
        json_decref(o);
        return -1;
    }
    /* fio's own verdict over its window (the whole measured time). */
    const json_t *fio = json_object_get(
        json_array_get(json_object_get(json_object_get(run, "info"), "jobs"), 0), "steadystate");
    if (fio != NULL) {
        json_object_set(o, "fio_attained", json_object_get(fio, "attained"));
        json_object_set(o, "fio_criterion", json_object_get(fio, "ss"));
    }
    json_object_set_new(obs, "steady_state", o);
    if (t->drop_warmup) {
        /* The headline is the tool's whole-test figure, warm-up included;
         * the mean of the intervals after it is given beside. */
        json_object_set_new(obs, "headline",
                            json_string("the tool's whole-test total, warm-up "
                                        "included"));
        if (n > 0)
            json_object_set_new(obs, "after_warmup",
                                json_pack("{s:s, s:f, s:i}", "metric", series, "mean",
                                          sum / (double)n, "intervals", (int)n));
    }
    return rc == 0 ? 0 : -1;
}

/* Parses the tool's output into out's metrics and observed, keeping it as
 * raw. */
int hv_tool_report(struct hv_tool_job *j, const struct hv_run_result *r)
{
    const struct hv_tool *t = j->tool;
    const char *parser = j->engine->def->engine;
    struct hv_engine_result *out = j->out;
    char *file = NULL;
    const char *text = r->out;
    size_t len = r->out_len, total;
    if (j->outfile[0] != '\0') {
        file =
            hv_read_file(j->outfile, HV_ENGINE_RAW_MAX, HV_READ_TRUNCATE | HV_READ_NOFOLLOW, &len);
        if (file == NULL) {
            int e = errno;
            hv_tool_keep_failed_output(out, r);
            return hv_engine_fail(out, "%s exited with status 0 but wrote no report (%s): %s",
                                  t->display, j->outfile, strerror(e));
        }
        struct stat st;
        total = len;
        if (len == HV_ENGINE_RAW_MAX && stat(j->outfile, &st) == 0 && (size_t)st.st_size > len)
            total = (size_t)st.st_size; /* the read stopped at its cap */
        text = file;
    } else if (r->out_truncated) {
        hv_engine_set_raw_of(out, text, len, r->out_total);
        return hv_engine_fail(out, "%s printed %zu bytes, more than the %zu hvbench reads",
                              t->display, r->out_total, r->out_len);
    } else {
        total = len;
    }
    hv_engine_set_raw_of(out, text, len, total);
    json_t *run = NULL;
    char err[HV_PARSE_ERR_MAX];
    int rc = hv_parse_tool_run(parser, text, len, &run, err, sizeof err);
    free(file);
    if (rc != 0) {
        if (r->err_len > 0)
            hv_tool_keep_failed_output(out, r);
        return hv_engine_fail(out, "cannot read the output of %s: %s", t->display, err);
    }
    json_array_extend(out->metrics, json_object_get(run, "metrics"));
    /* What the parser read beside the metrics, as an import records it;
     * the version the tool itself printed wins. */
    json_object_update_missing(out->observed, json_object_get(run, "info"));
    rc = observe_steady(t, j, run);
    json_decref(run);
    return rc == 0 ? 0 : hv_engine_fail(out, "out of memory");
}

/* A nonzero exit with nothing on standard error: the parser may know why
 * (iperf3 -J puts its error into the JSON). */
void hv_tool_explain_failure(const struct hv_tool_job *j, const struct hv_run_result *r)
{
    const struct hv_tool *t = j->tool;
    struct hv_engine_result *out = j->out;
    if (r->stopped || r->timed_out || r->exit_code <= 0 || r->out_len == 0 || r->err_len > 0)
        return;
    json_t *metrics = NULL, *info = NULL;
    char err[HV_PARSE_ERR_MAX];
    if (hv_parse_tool_output(j->engine->def->engine, r->out, r->out_len, &metrics, &info, err,
                             sizeof err) != 0)
        hv_engine_fail(out, "%s exited with status %d: %s", t->display, r->exit_code, err);
    json_decref(metrics);
    json_decref(info);
}

/* The run of a one-sided tool, or of a net workload's client. */
int hv_tool_run(const struct hv_engine *e, const struct hv_engine_ctx *ctx,
                struct hv_engine_result *out)
{
    const struct hv_tool *t = e->tool;
    char path[PATH_MAX], err[sizeof out->error];
    if (hv_run_find(t->program, t->display, path, sizeof path, err, sizeof err) != 0)
        return hv_engine_fail(out, "%s", err);
    struct hv_tool_job j;
    if (hv_tool_job_init(&j, e, ctx, out) != 0)
        return -1;
    int rc = -1;
    if ((t->place != NULL && t->place(&j) != 0) || t->argv(&j) != 0)
        goto done;
    if (j.args.broken) {
        hv_engine_fail(out, "cannot build the command line of %s: out of memory", t->display);
        goto done;
    }
    hv_tool_record_version(t, out->observed);
    struct hv_run_spec spec = {.argv = (const char *const *)j.args.v,
                               .display = t->display,
                               .timeout = j.timeout,
                               .cwd = j.cwd[0] ? j.cwd : NULL};
    struct hv_run_result r;
    if (hv_tool_exec(ctx, out, &spec, &r) != 0)
        hv_tool_explain_failure(&j, &r);
    else
        rc = hv_tool_report(&j, &r);
    hv_run_result_clear(&r);
done:
    hv_tool_job_cleanup(&j);
    return rc;
}
