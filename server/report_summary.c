/* report_summary.c — per configuration, workload, target and metric: the
 * summary with its per-run values and outlier flags, and the flat rows of
 * the report's first version; see report_int.h. */
#include "report_int.h"

#include "adaptive.h"
#include "report.h"
#include "report_render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *hv_rinterval_json(const struct hv_summary *s)
{
    if (s->scale == HV_CI_NONE)
        return json_null();
    json_t *o = json_pack("{s:s,s:f,s:b}", "scale", hv_ci_scale_name(s->scale), "level", 0.95,
                          "lo_clamped", s->lo_clamped);
    hv_rset_num(o, "center", s->center);
    hv_rset_num(o, "lo", s->lo);
    hv_rset_num(o, "hi", s->hi);
    hv_rset_num(o, "rel_half_pct", s->rel_half_pct);
    return o;
}

void hv_rset_usable(json_t *o, bool usable, const char *note)
{
    json_object_set_new(o, "usable", json_boolean(usable));
    json_object_set_new(o, "interval_note", usable ? json_null() : json_string(note));
}

void hv_rusable_json(json_t *o, const struct hv_summary *s, double ci_pct)
{
    char note[200];
    hv_rset_usable(o, hv_interval_note(s, ci_pct, note, sizeof note), note);
}

bool hv_rusable_change(json_t *o, size_t n, double lo_pct, double hi_pct, char *note, size_t len)
{
    bool usable = hv_contrast_note(n, lo_pct, hi_pct, note, len);
    hv_rset_usable(o, usable, note);
    return usable;
}

char *hv_rchange_interval(char *buf, size_t len, bool usable, double lo_pct, double hi_pct,
                          int decimals, const char *note)
{
    if (usable)
        return hv_fmt_change_interval(buf, len, lo_pct, hi_pct, decimals);
    snprintf(buf, len, "(%s)", note);
    return buf;
}

/* The row of the report's first version (deprecated: docs/api.md): the
 * arithmetic interval. */
static json_t *row_json(const struct hv_rdata *d, const struct hv_rseries *s,
                        const struct hv_summary *sum)
{
    json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:b,s:I}", "configuration",
                          d->configs[s->config].name, "workload", d->workloads[s->workload].id,
                          "target", s->target, "metric", s->metric, "unit", s->unit,
                          "higher_is_better", s->higher_is_better, "n", (json_int_t)sum->n);
    hv_rset_num(o, "mean", sum->mean);
    hv_rset_num(o, "sd", sum->sd);
    hv_rset_num(o, "ci95_low", sum->has_ci ? sum->ci_low : NAN);
    hv_rset_num(o, "ci95_high", sum->has_ci ? sum->ci_high : NAN);
    hv_rset_num(o, "ci95_half_pct", sum->has_ci ? sum->half_pct : NAN);
    return o;
}

/* The per-run values of s with their modified z-scores and outlier flags,
 * every run or (all false) the flagged ones; *flagged gets how many are
 * flagged. */
static json_t *runs_json(const struct hv_rseries *s, const double *x, bool all, size_t *flagged)
{
    size_t n = s->n_runs;
    double *z = malloc((n ? n : 1) * sizeof *z);
    bool *flag = malloc((n ? n : 1) * sizeof *flag);
    json_t *runs = json_array();
    *flagged = 0;
    if (z == NULL || flag == NULL) {
        free(z);
        free(flag);
        return runs;
    }
    if (hv_outliers(x, n, z, flag, flagged) != HV_STAT_OK) {
        for (size_t i = 0; i < n; i++) {
            z[i] = NAN;
            flag[i] = false;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const struct hv_rrun *r = &s->runs[i];
        if (!all && !flag[i])
            continue;
        json_t *o =
            json_pack("{s:i,s:I,s:b,s:o}", "round", r->round, "members", (json_int_t)r->members,
                      "outlier", flag[i], "jobs", hv_rjobs_json(r->jobs, r->n_jobs, r->n_jobs));
        hv_rset_num(o, "value", r->value);
        hv_rset_num(o, "z", z[i]);
        json_array_append_new(runs, o);
    }
    free(z);
    free(flag);
    return runs;
}

/* The outliers of a report, gathered into one warning. */
struct outliers {
    size_t values, series;
    char text[768];
    size_t len;
};

/* Names the outlying rounds of s (flagged of them) in o. */
static void note_outliers(const struct hv_rctx *c, const struct hv_rseries *s, json_t *runs,
                          size_t flagged, struct outliers *o)
{
    o->values += flagged;
    if (o->series++ >= 5 || o->len >= sizeof o->text - 64)
        return;
    o->len += (size_t)snprintf(o->text + o->len, sizeof o->text - o->len,
                               "%s%s (%s) on %s under %s, round%s", o->len ? "; " : "", s->metric,
                               c->d->workloads[s->workload].id, s->target,
                               c->d->configs[s->config].name, flagged == 1 ? "" : "s");
    size_t i, k = 0;
    json_t *r;
    json_array_foreach(runs, i, r)
    {
        if (json_is_true(json_object_get(r, "outlier")) && o->len < sizeof o->text - 24)
            o->len += (size_t)snprintf(o->text + o->len, sizeof o->text - o->len, "%s %lld",
                                       k++ ? "," : "",
                                       (long long)json_integer_value(json_object_get(r, "round")));
    }
}

/* The summary object of one series, or NULL when its values are not
 * finite (then a warning says so). */
static json_t *summary_json(struct hv_rctx *c, const struct hv_rseries *s, struct hv_summary *sum,
                            struct outliers *out)
{
    const struct hv_rdata *d = c->d;
    double *x = malloc((s->n_runs ? s->n_runs : 1) * sizeof *x);
    if (x == NULL)
        return NULL;
    for (size_t i = 0; i < s->n_runs; i++)
        x[i] = s->runs[i].value;
    if (hv_rsummarize(x, s->n_runs, hv_rnonneg(s->metric, s->unit), sum) != HV_STAT_OK) {
        free(x);
        hv_rwarn(c, "not_finite", "%s (%s) on %s under %s has a value that is not a number",
                 s->metric, d->workloads[s->workload].id, s->target, d->configs[s->config].name);
        return NULL;
    }
    size_t flagged;
    bool all = d->runs_all || s->n_runs <= HV_REPORT_RUNS_LISTED;
    json_t *runs = runs_json(s, x, all, &flagged);
    free(x);
    if (flagged > 0)
        note_outliers(c, s, runs, flagged, out);
    json_t *o =
        json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:b,s:b,s:I,s:o,s:I,s:o}", "configuration",
                  d->configs[s->config].name, "workload", d->workloads[s->workload].id, "target",
                  s->target, "side", hv_rside_name(s->side), "metric", s->metric, "unit", s->unit,
                  "higher_is_better", s->higher_is_better, "primary",
                  hv_rdata_primary(d, s->workload, s->metric), "n", (json_int_t)sum->n, "interval",
                  hv_rinterval_json(sum), "outliers", (json_int_t)flagged, "runs", runs);
    hv_rset_num(o, "mean", sum->mean);
    hv_rset_num(o, "sd", sum->n >= 2 ? sum->sd : NAN);
    hv_rset_num(o, "cv_pct", sum->cv_pct);
    hv_rusable_json(o, sum, d->ci_pct);
    if (!all) {
        json_object_set_new(o, "runs_listed", json_string("flagged"));
        json_object_set_new(o, "runs_omitted", json_integer((json_int_t)(s->n_runs - flagged)));
    }
    return o;
}

json_t *hv_rsummaries(struct hv_rctx *c, json_t **rows)
{
    json_t *list = json_array();
    if (c->d->digest != NULL) {
        json_decref(list);
        return hv_rdigest_summaries(c, rows);
    }
    *rows = json_array();
    if (list == NULL || *rows == NULL)
        return NULL;
    struct outliers out = {0};
    for (size_t i = 0; i < c->d->n_series; i++) {
        const struct hv_rseries *s = &c->d->series[i];
        struct hv_summary sum;
        json_t *o = summary_json(c, s, &sum, &out);
        if (o == NULL)
            continue;
        json_array_append_new(list, o);
        json_array_append_new(*rows, row_json(c->d, s, &sum));
    }
    if (out.values > 0)
        hv_rwarn(c, "outliers",
                 "%zu outlying value%s in %zu series (modified z-score above %.1f), shown and kept "
                 "in every figure: %s%s",
                 out.values, out.values == 1 ? "" : "s", out.series, HV_OUTLIER_Z, out.text,
                 out.series > 5 ? "; and more" : "");
    return list;
}
