/* import_runs.c — see import_runs.h. */
#include "import_runs.h"

#include "jspec.h"
#include "result.h"
#include "timeutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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

void hv_import_check_at(const char *at, const char *path, json_t *errors)
{
    if (at == NULL)
        return;
    if (!hv_iso8601_valid(at))
        hv_errors_add(errors, path, "must be an ISO 8601 UTC time such as 2026-11-01T10:00:00Z");
    else if (iso_seconds(at) > time(NULL) + 86400)
        hv_errors_add(errors, path, "must not be in the future");
}

void hv_import_check_tool(const char *tool, const char *path, json_t *errors)
{
    const struct hv_tool_parser *p = tool != NULL ? hv_parser_find(tool) : NULL;
    if (tool == NULL || (p != NULL && strcmp(p->name, tool) == 0))
        return;
    char names[128] = "";
    size_t n = 0;
    for (const char *const *t = hv_parser_names(); *t != NULL; t++)
        n += (size_t)snprintf(names + n, n < sizeof names ? sizeof names - n : 0, "%s%s",
                              n ? ", " : "", *t);
    hv_errors_add(errors, path, "must be one of: %s", names);
}

/* Applies the rules of an upload (lib/result.h) to what the parser read:
 * a corrupt or hand-edited output must not plant a name or value a worker
 * could not upload. Errors name PATH/runs/N/metrics/K/value (or /name,
 * /samples/K/...). Returns their number. */
static int check_run_values(const json_t *runs, const char *base, json_t *errors)
{
    int bad = 0;
    size_t i;
    const json_t *run;
    json_array_foreach(runs, i, run)
    {
        char path[96];
        snprintf(path, sizeof path, "%s/runs/%zu", base, i);
        bad += hv_result_data_check(run, path, errors);
    }
    return bad;
}

json_t *hv_import_parse(const struct hv_tool_parser *p, const char *text, size_t len, int table,
                        const json_t *given, const char *path, json_t *errors, json_t **params)
{
    json_t *runs = NULL;
    char err[HV_PARSE_ERR_MAX], at[160];
    *params = NULL;
    if (hv_parse_tool_table_runs(p->name, text, len, table, &runs, err, sizeof err) != 0 ||
        hv_parse_runs_alike(p->name, runs, err, sizeof err) != 0) {
        snprintf(at, sizeof at, "%s/output", path);
        hv_errors_add(errors, at, "%s", err);
        json_decref(runs);
        return NULL;
    }
    if (hv_parse_identity_apply(p->name, runs, given, params, err, sizeof err) != 0) {
        snprintf(at, sizeof at, "%s/params", path);
        hv_errors_add(errors, at, "%s", err);
        json_decref(runs);
        return NULL;
    }
    if (check_run_values(runs, path, errors) > 0) {
        json_decref(runs);
        json_decref(*params);
        *params = NULL;
        return NULL;
    }
    return runs;
}

const char *hv_import_kind(const struct hv_tool_parser *p, const json_t *runs)
{
    const char *kind = json_string_value(
        json_object_get(json_object_get(json_array_get(runs, 0), "info"), "kind"));
    if (kind != NULL && strcmp(kind, "cpu") == 0)
        return "cpu";
    if (kind != NULL && strcmp(kind, "disk") == 0)
        return "disk";
    if (kind != NULL && strcmp(kind, "net") == 0)
        return "net";
    return p->kind;
}

const char *hv_import_start(const char *at, const json_t *runs, char *now, size_t len,
                            const char **source)
{
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

void hv_import_entries(json_t *entries, const json_t *runs, const char *started, const char *source,
                       size_t config, json_t *workload, size_t output, size_t *rep)
{
    const char *anchor = started;
    double after = 0;
    size_t i;
    json_t *run;
    json_array_foreach(runs, i, run)
    {
        const char *own =
            json_string_value(json_object_get(json_object_get(run, "info"), "started_at"));
        if (i > 0 && strcmp(source, "output") == 0 && own != NULL && hv_iso8601_valid(own)) {
            anchor = own;
            after = 0;
        }
        json_array_append_new(entries, json_pack("{s:I,s:O,s:I,s:I,s:O,s:s,s:f,s:f}", "config",
                                                 (json_int_t)config, "workload", workload,
                                                 "repetition", (json_int_t)++ * rep, "output",
                                                 (json_int_t)output, "run", run, "at", anchor,
                                                 "after_s", after, "seconds", run_seconds(run)));
        after += run_seconds(run);
    }
}
