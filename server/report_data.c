/* report_data.c — see report_data.h. */
#include "report_data.h"

#include "adaptive.h"
#include "compare.h"
#include "params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hv_rdata_init(struct hv_rdata *d)
{
    memset(d, 0, sizeof *d);
    d->margin_pct = HV_MARGIN_PCT_DEFAULT;
    for (int s = 0; s < HV_SUB_COUNT; s++)
        d->weights[s] = 1.0;
    d->rep_min = d->rep_max = 1;
    d->ci_pct = HV_CI_PCT_DEFAULT;
}

/* A copy of s ("" for NULL); NULL only when memory runs out. */
static char *dup_str(const char *s)
{
    return strdup(s != NULL ? s : "");
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Reads the factors of the spec in name order, as configurations name
 * them: each with its levels, the first the plan's default. */
static int read_factors(struct hv_rdata *d, const json_t *factors)
{
    size_t n = json_object_size(factors);
    if (n == 0)
        return 0;
    d->factors = calloc(n, sizeof *d->factors);
    if (d->factors == NULL)
        return -1;
    const char **names = calloc(n, sizeof *names);
    if (names == NULL)
        return -1;
    const char *key;
    json_t *v;
    size_t k = 0;
    json_object_foreach((json_t *)factors, key, v) names[k++] = key;
    qsort(names, n, sizeof *names, cmp_names);
    int rc = 0;
    for (size_t f = 0; f < n && rc == 0; f++) {
        struct hv_rfactor *fac = &d->factors[d->n_factors++];
        const json_t *levels = json_object_get(factors, names[f]);
        fac->name = strdup(names[f]);
        fac->levels = calloc(json_array_size(levels) + 1, sizeof *fac->levels);
        rc = fac->name != NULL && fac->levels != NULL ? 0 : -1;
        for (size_t l = 0; rc == 0 && l < json_array_size(levels); l++) {
            const json_t *lv = json_array_get(levels, l);
            char num[32];
            const char *text = json_string_value(lv);
            if (text == NULL) {
                snprintf(num, sizeof num, "%lld", (long long)json_integer_value(lv));
                text = num;
            }
            fac->levels[fac->n_levels] = strdup(text);
            rc = fac->levels[fac->n_levels++] != NULL ? 0 : -1;
        }
    }
    free(names);
    return rc;
}

/* The plan's weights: a named subsystem takes its weight, the rest 1. */
static void read_weights(struct hv_rdata *d, const json_t *weights)
{
    for (int s = 0; s < HV_SUB_COUNT; s++) {
        const json_t *w = json_object_get(weights, hv_subsys_name((enum hv_subsys)s));
        d->weights[s] = json_is_number(w) ? json_number_value(w) : 1.0;
    }
}

int hv_rdata_plan(struct hv_rdata *d, json_t *summary, const json_t *spec)
{
    d->summary = json_incref(summary);
    const char *status = json_string_value(json_object_get(summary, "status"));
    d->finished = status != NULL && (strcmp(status, "done") == 0 || strcmp(status, "failed") == 0 ||
                                     strcmp(status, "cancelled") == 0);
    const char *host = json_string_value(json_object_get(json_object_get(spec, "targets"), "host"));
    const char *baseline = json_string_value(json_object_get(spec, "baseline"));
    const char *design = json_string_value(json_object_get(spec, "design"));
    d->host = dup_str(host);
    d->baseline = dup_str(baseline != NULL ? baseline : "host");
    d->full = design == NULL || strcmp(design, "one-at-a-time") != 0;
    const json_t *margin = json_object_get(spec, "margin_pct");
    if (json_is_number(margin))
        d->margin_pct = json_number_value(margin);
    read_weights(d, json_object_get(spec, "weights"));
    const json_t *reps = json_object_get(spec, "repetitions");
    const json_t *mn = json_object_get(reps, "min"), *mx = json_object_get(reps, "max");
    const json_t *ci = json_object_get(reps, "ci_pct");
    d->rep_min = json_is_integer(mn) ? (int)json_integer_value(mn) : 1;
    d->rep_max = json_is_integer(mx) ? (int)json_integer_value(mx) : d->rep_min;
    if (json_is_number(ci))
        d->ci_pct = json_number_value(ci);
    if (d->host == NULL || d->baseline == NULL)
        return -1;
    return read_factors(d, json_object_get(spec, "factors"));
}

/* The index of text among factor f's levels, or SIZE_MAX. */
static size_t level_index(const struct hv_rfactor *f, const char *text)
{
    for (size_t l = 0; text != NULL && l < f->n_levels; l++)
        if (strcmp(f->levels[l], text) == 0)
            return l;
    return SIZE_MAX;
}

int hv_rdata_config(struct hv_rdata *d, const char *name, const json_t *levels)
{
    struct hv_rconfig *grown = realloc(d->configs, (d->n_configs + 1) * sizeof *grown);
    if (grown == NULL)
        return -1;
    d->configs = grown;
    struct hv_rconfig *c = &d->configs[d->n_configs];
    c->name = dup_str(name);
    c->level = calloc(d->n_factors + 1, sizeof *c->level);
    if (c->name == NULL || c->level == NULL) {
        free(c->name);
        free(c->level);
        return -1;
    }
    for (size_t f = 0; f < d->n_factors; f++) {
        const json_t *lv = json_object_get(levels, d->factors[f].name);
        char num[32];
        const char *text = json_string_value(lv);
        if (text == NULL && json_is_integer(lv)) {
            snprintf(num, sizeof num, "%lld", (long long)json_integer_value(lv));
            text = num;
        }
        c->level[f] = level_index(&d->factors[f], text);
    }
    d->n_configs++;
    return 0;
}

int hv_rdata_workload(struct hv_rdata *d, const char *id, const char *kind, const char *engine)
{
    struct hv_rworkload *grown = realloc(d->workloads, (d->n_workloads + 1) * sizeof *grown);
    if (grown == NULL)
        return -1;
    d->workloads = grown;
    struct hv_rworkload *w = &d->workloads[d->n_workloads];
    w->id = dup_str(id);
    w->kind = dup_str(kind);
    w->engine = dup_str(engine != NULL ? engine : "builtin");
    if (w->id == NULL || w->kind == NULL || w->engine == NULL) {
        free(w->id);
        free(w->kind);
        free(w->engine);
        return -1;
    }
    d->n_workloads++;
    return 0;
}

size_t hv_rdata_workload_index(const struct hv_rdata *d, const char *id)
{
    for (size_t w = 0; id != NULL && w < d->n_workloads; w++)
        if (strcmp(d->workloads[w].id, id) == 0)
            return w;
    return SIZE_MAX;
}

/* Whether s is the series of row (its workload index w). */
static bool same_series(const struct hv_rseries *s, const struct hv_rrow *row, size_t w)
{
    return s->config == row->config && s->workload == w && strcmp(s->target, row->target) == 0 &&
           strcmp(s->metric, row->metric) == 0;
}

/* A new, empty series for row at the end of d's list, or NULL. */
static struct hv_rseries *new_series(struct hv_rdata *d, const struct hv_rrow *row, size_t w)
{
    if (d->n_series == d->cap_series) {
        size_t cap = d->cap_series ? 2 * d->cap_series : 64;
        struct hv_rseries *grown = realloc(d->series, cap * sizeof *grown);
        if (grown == NULL)
            return NULL;
        d->series = grown;
        d->cap_series = cap;
    }
    struct hv_rseries *s = &d->series[d->n_series];
    memset(s, 0, sizeof *s);
    s->config = row->config;
    s->workload = w;
    s->target = dup_str(row->target);
    s->metric = dup_str(row->metric);
    s->unit = dup_str(row->unit);
    s->higher_is_better = row->higher_is_better;
    s->side = strcmp(s->target, d->host) == 0 ? HV_SIDE_HOST : HV_SIDE_GUESTS;
    if (s->target == NULL || s->metric == NULL || s->unit == NULL) {
        free(s->target);
        free(s->metric);
        free(s->unit);
        return NULL;
    }
    d->n_series++;
    return s;
}

/* Appends run to s (the run's jobs are taken over). */
static int append_run(struct hv_rseries *s, const struct hv_rrun *run)
{
    if (s->n_runs == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 8;
        struct hv_rrun *grown = realloc(s->runs, cap * sizeof *grown);
        if (grown == NULL)
            return -1;
        s->runs = grown;
        s->cap = cap;
    }
    s->runs[s->n_runs++] = *run;
    return 0;
}

int hv_rdata_run(struct hv_rdata *d, const struct hv_rrow *row)
{
    size_t w = hv_rdata_workload_index(d, row->workload);
    if (w == SIZE_MAX || row->config >= d->n_configs || row->target == NULL || row->metric == NULL)
        return -2;
    /* Rows come grouped by series from the database: the last one is
     * almost always it; a series that came apart is merged by finish. */
    struct hv_rseries *s = d->n_series > 0 ? &d->series[d->n_series - 1] : NULL;
    if (s == NULL || !same_series(s, row, w))
        s = new_series(d, row, w);
    if (s == NULL)
        return -1;
    struct hv_rrun run = {.round = row->round, .value = row->value, .members = row->members};
    if (row->n_jobs > 0) {
        run.jobs = malloc(row->n_jobs * sizeof *run.jobs);
        if (run.jobs == NULL)
            return -1;
        memcpy(run.jobs, row->jobs, row->n_jobs * sizeof *run.jobs);
        run.n_jobs = row->n_jobs;
    }
    if (append_run(s, &run) != 0) {
        free(run.jobs);
        return -1;
    }
    return 0;
}

static int cmp_series(const void *a, const void *b)
{
    const struct hv_rseries *x = a, *y = b;
    if (x->config != y->config)
        return x->config < y->config ? -1 : 1;
    if (x->workload != y->workload)
        return x->workload < y->workload ? -1 : 1;
    int c = strcmp(x->target, y->target);
    return c != 0 ? c : strcmp(x->metric, y->metric);
}

static int cmp_runs(const void *a, const void *b)
{
    const struct hv_rrun *x = a, *y = b;
    return (x->round > y->round) - (x->round < y->round);
}

/* Frees a series' members. */
static void series_free(struct hv_rseries *s)
{
    for (size_t r = 0; r < s->n_runs; r++)
        free(s->runs[r].jobs);
    free(s->runs);
    free(s->target);
    free(s->metric);
    free(s->unit);
}

int hv_rdata_finish(struct hv_rdata *d)
{
    if (d->n_series > 1)
        qsort(d->series, d->n_series, sizeof *d->series, cmp_series);
    size_t out = 0;
    for (size_t i = 0; i < d->n_series; i++) {
        struct hv_rseries *s = &d->series[i];
        if (out > 0 && cmp_series(&d->series[out - 1], s) == 0) {
            struct hv_rseries *keep = &d->series[out - 1];
            for (size_t r = 0; r < s->n_runs; r++) {
                if (append_run(keep, &s->runs[r]) != 0)
                    return -1;
                s->runs[r].jobs = NULL;
            }
            series_free(s);
            continue;
        }
        d->series[out++] = *s;
    }
    d->n_series = out;
    for (size_t i = 0; i < d->n_series; i++)
        qsort(d->series[i].runs, d->series[i].n_runs, sizeof(struct hv_rrun), cmp_runs);
    return 0;
}

enum hv_subsys hv_subsys_of(const char *kind)
{
    for (int s = 0; kind != NULL && s < HV_SUB_COUNT; s++)
        if (strcmp(kind, hv_subsys_name((enum hv_subsys)s)) == 0)
            return (enum hv_subsys)s;
    return HV_SUB_COUNT;
}

const char *hv_subsys_name(enum hv_subsys s)
{
    static const char *const names[] = {
        [HV_SUB_CPU] = "cpu", [HV_SUB_DISK] = "disk", [HV_SUB_NET] = "net"};
    return (unsigned)s < HV_SUB_COUNT ? names[s] : "other";
}

bool hv_rdata_primary(const struct hv_rdata *d, size_t w, const char *metric)
{
    return w < d->n_workloads &&
           hv_engine_metric_primary(d->workloads[w].kind, d->workloads[w].engine, metric);
}

void hv_rdata_free(struct hv_rdata *d)
{
    json_decref(d->emulated);
    json_decref(d->recommendation_ids);
    json_decref(d->digest);
    free(d->version);
    json_decref(d->host_view);
    for (size_t i = 0; i < d->n_series; i++)
        series_free(&d->series[i]);
    free(d->series);
    for (size_t f = 0; f < d->n_factors; f++) {
        for (size_t l = 0; l < d->factors[f].n_levels; l++)
            free(d->factors[f].levels[l]);
        free(d->factors[f].levels);
        free(d->factors[f].name);
    }
    free(d->factors);
    for (size_t c = 0; c < d->n_configs; c++) {
        free(d->configs[c].name);
        free(d->configs[c].level);
    }
    free(d->configs);
    for (size_t w = 0; w < d->n_workloads; w++) {
        free(d->workloads[w].id);
        free(d->workloads[w].kind);
        free(d->workloads[w].engine);
    }
    free(d->workloads);
    free(d->host);
    free(d->baseline);
    json_decref(d->summary);
    hv_rdata_init(d);
}
