/* report_arms.c — the summaries of a report and the per-round values of
 * each configuration ("arms") the comparisons read; see report_int.h. */
#include "report_int.h"

#include "report.h"
#include "report_render.h"
#include "result.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hv_rset_num(json_t *o, const char *key, double v)
{
    json_object_set_new(o, key, isfinite(v) ? json_real(v) : json_null());
}

void hv_rwarn(struct hv_rctx *c, const char *kind, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_array_append_new(c->warnings, json_pack("{s:s,s:s}", "kind", kind, "message", msg));
}

const char *hv_rside_phrase(enum hv_side s)
{
    return s == HV_SIDE_HOST ? "on the host" : "in the guests";
}

const char *hv_rside_name(enum hv_side s)
{
    return s == HV_SIDE_HOST ? "host" : "guests";
}

char *hv_rsubject(const struct hv_rctx *c, const struct hv_arm *a, char *buf, size_t len)
{
    char label[160];
    hv_metric_label(a->metric, label, sizeof label);
    if (c->multi_workload)
        snprintf(buf, len, "%s (%s) %s", label, c->d->workloads[a->workload].id,
                 hv_rside_phrase(a->side));
    else
        snprintf(buf, len, "%s %s", label, hv_rside_phrase(a->side));
    return buf;
}

json_t *hv_rjobs_json(const int64_t *jobs, size_t n, size_t max)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n && i < max; i++)
        json_array_append_new(a, json_integer((json_int_t)jobs[i]));
    return a;
}

enum hv_stat_err hv_rsummarize(const double *x, size_t n, bool nonneg, struct hv_summary *s)
{
    enum hv_stat_err e = hv_summarize_scaled(x, n, s);
    if (e == HV_STAT_OK && nonneg)
        hv_summary_nonneg(s);
    return e;
}

bool hv_rnonneg(const char *metric, const char *unit)
{
    char why[8];
    return !hv_metric_value_check(metric, unit, -1.0, why, sizeof why);
}

/* ---- arms ------------------------------------------------------------ */

/* The order of arms: workload, metric, side, configuration. */
static int cmp_arm_key(size_t w1, const char *m1, enum hv_side s1, size_t c1, size_t w2,
                       const char *m2, enum hv_side s2, size_t c2)
{
    if (w1 != w2)
        return w1 < w2 ? -1 : 1;
    int m = strcmp(m1, m2);
    if (m != 0)
        return m;
    if (s1 != s2)
        return s1 < s2 ? -1 : 1;
    return (c1 > c2) - (c1 < c2);
}

static int cmp_series_arm(const void *a, const void *b, void *arg)
{
    const struct hv_rdata *d = arg;
    const struct hv_rseries *x = &d->series[*(const size_t *)a];
    const struct hv_rseries *y = &d->series[*(const size_t *)b];
    int k = cmp_arm_key(x->workload, x->metric, x->side, x->config, y->workload, y->metric, y->side,
                        y->config);
    return k != 0 ? k : strcmp(x->target, y->target);
}

/* One run of a series, for merging the series of an arm by round. */
struct run_ref {
    const struct hv_rrun *run;
};

static int cmp_run_ref(const void *a, const void *b)
{
    int x = ((const struct run_ref *)a)->run->round, y = ((const struct run_ref *)b)->run->round;
    return (x > y) - (x < y);
}

/* Fills arm a's values from its series' runs: per round the mean of the
 * series' values of that round, and every job behind them. */
static int fill_values(struct hv_arm *a, struct run_ref *refs, size_t n_refs, size_t n_jobs)
{
    qsort(refs, n_refs, sizeof *refs, cmp_run_ref);
    a->values = malloc((n_refs ? n_refs : 1) * sizeof *a->values);
    a->rounds = malloc((n_refs ? n_refs : 1) * sizeof *a->rounds);
    a->jobs = malloc((n_jobs ? n_jobs : 1) * sizeof *a->jobs);
    if (a->values == NULL || a->rounds == NULL || a->jobs == NULL)
        return -1;
    size_t k = 0; /* values of the current round so far */
    for (size_t i = 0; i < n_refs; i++) {
        const struct hv_rrun *r = refs[i].run;
        if (a->n == 0 || a->rounds[a->n - 1] != r->round) {
            a->rounds[a->n] = r->round;
            a->values[a->n++] = r->value;
            k = 1;
        } else {
            k++;
            a->values[a->n - 1] += (r->value - a->values[a->n - 1]) / (double)k;
        }
        memcpy(a->jobs + a->n_jobs, r->jobs, r->n_jobs * sizeof *a->jobs);
        a->n_jobs += r->n_jobs;
    }
    return 0;
}

/* The statistics of an arm's values: summary and log group. */
static void arm_stats(struct hv_arm *a)
{
    a->finite =
        hv_rsummarize(a->values, a->n, hv_rnonneg(a->metric, a->unit), &a->sum) == HV_STAT_OK;
    a->positive = a->finite && hv_log_group_of(a->values, a->n, &a->log) == HV_STAT_OK;
}

/* Builds the arm of the series idx[0..n) (one key). */
static int build_arm(struct hv_rctx *c, const size_t *idx, size_t n, struct hv_arm *a)
{
    const struct hv_rdata *d = c->d;
    const struct hv_rseries *first = &d->series[idx[0]];
    *a = (struct hv_arm){.config = first->config,
                         .workload = first->workload,
                         .side = first->side,
                         .metric = first->metric,
                         .unit = first->unit,
                         .higher_is_better = first->higher_is_better};
    a->primary = hv_rdata_primary(d, a->workload, a->metric);
    size_t n_refs = 0, n_jobs = 0;
    for (size_t i = 0; i < n; i++)
        n_refs += d->series[idx[i]].n_runs;
    struct run_ref *refs = malloc((n_refs ? n_refs : 1) * sizeof *refs);
    if (refs == NULL)
        return -1;
    n_refs = 0;
    for (size_t i = 0; i < n; i++) {
        const struct hv_rseries *s = &d->series[idx[i]];
        for (size_t r = 0; r < s->n_runs; r++) {
            refs[n_refs++].run = &s->runs[r];
            n_jobs += s->runs[r].n_jobs;
        }
    }
    int rc = fill_values(a, refs, n_refs, n_jobs);
    free(refs);
    if (rc == 0)
        arm_stats(a);
    /* A big plan's evidence: the jobs of the first rounds. */
    if (a->n > HV_REPORT_RUNS_LISTED && a->n_jobs > HV_REPORT_RUNS_LISTED)
        a->n_jobs = HV_REPORT_RUNS_LISTED;
    return rc;
}

static int cmp_levels(const void *a, const void *b, void *arg)
{
    const struct hv_rdata *d = arg;
    const size_t *x = d->configs[*(const size_t *)a].level;
    const size_t *y = d->configs[*(const size_t *)b].level;
    for (size_t f = 0; f < d->n_factors; f++)
        if (x[f] != y[f])
            return x[f] < y[f] ? -1 : 1;
    return 0;
}

/* Sorts the configurations by their levels for hv_rconfig_find. */
static int index_configs(struct hv_rctx *c)
{
    const struct hv_rdata *d = c->d;
    c->by_levels = malloc((d->n_configs ? d->n_configs : 1) * sizeof *c->by_levels);
    if (c->by_levels == NULL)
        return -1;
    for (size_t i = 0; i < d->n_configs; i++)
        c->by_levels[i] = i;
    qsort_r(c->by_levels, d->n_configs, sizeof *c->by_levels, cmp_levels, (void *)d);
    return 0;
}

int hv_rarms_build(struct hv_rctx *c)
{
    const struct hv_rdata *d = c->d;
    c->multi_workload = d->n_workloads > 1;
    if (index_configs(c) != 0)
        return -1;
    if (d->digest != NULL)
        return hv_rdigest_arms(c);
    size_t *idx = malloc((d->n_series ? d->n_series : 1) * sizeof *idx);
    c->arms = calloc(d->n_series ? d->n_series : 1, sizeof *c->arms);
    if (idx == NULL || c->arms == NULL) {
        free(idx);
        return -1;
    }
    for (size_t i = 0; i < d->n_series; i++)
        idx[i] = i;
    qsort_r(idx, d->n_series, sizeof *idx, cmp_series_arm, (void *)d);
    int rc = 0;
    for (size_t i = 0; i < d->n_series && rc == 0;) {
        const struct hv_rseries *s = &d->series[idx[i]];
        size_t j = i + 1;
        while (j < d->n_series &&
               cmp_arm_key(s->workload, s->metric, s->side, s->config, d->series[idx[j]].workload,
                           d->series[idx[j]].metric, d->series[idx[j]].side,
                           d->series[idx[j]].config) == 0)
            j++;
        rc = build_arm(c, idx + i, j - i, &c->arms[c->n_arms++]);
        i = j;
    }
    free(idx);
    return rc;
}

void hv_rctx_free(struct hv_rctx *c)
{
    for (size_t i = 0; i < c->n_arms; i++) {
        free(c->arms[i].values);
        free(c->arms[i].rounds);
        free(c->arms[i].jobs);
    }
    free(c->arms);
    free(c->by_levels);
    free(c->cmps);
    json_decref(c->warnings);
}

const struct hv_arm *hv_rarm_find(const struct hv_rctx *c, size_t config, size_t workload,
                                  const char *metric, enum hv_side side)
{
    size_t lo = 0, hi = c->n_arms;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct hv_arm *a = &c->arms[mid];
        int k =
            cmp_arm_key(a->workload, a->metric, a->side, a->config, workload, metric, side, config);
        if (k == 0)
            return a;
        if (k < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

size_t hv_rconfig_find(const struct hv_rctx *c, const size_t *levels)
{
    const struct hv_rdata *d = c->d;
    size_t lo = 0, hi = d->n_configs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const size_t *x = d->configs[c->by_levels[mid]].level;
        int k = 0;
        for (size_t f = 0; f < d->n_factors && k == 0; f++)
            k = x[f] != levels[f] ? (x[f] < levels[f] ? -1 : 1) : 0;
        if (k == 0)
            return c->by_levels[mid];
        if (k < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return SIZE_MAX;
}
