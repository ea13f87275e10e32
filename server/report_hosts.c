/* report_hosts.c — a fleet plan's per-host view; see report_hosts.h. */
#include "report_hosts.h"

#include "adaptive.h"
#include "compare.h"
#include "params.h"
#include "report_int.h"
#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The parent's margin ($2 when it sets none, the report's default) and
 * its children's hosts with their facts; no row for a plan that is no
 * fleet's parent. */
static const struct hv_stmt hosts_meta = {
    "report_hosts_meta",
    "SELECT json_build_object('margin_pct', coalesce((p.spec->>'margin_pct')::float8, "
    "$2::float8), 'hosts', json_agg(json_build_object('host', c.spec->'targets'->>'host', "
    "'plan_id', c.id, 'facts', coalesce(t.facts, '{}')) ORDER BY c.id))::text "
    "FROM plans p JOIN plans c ON c.parent_id = p.id "
    "LEFT JOIN targets t ON t.name = c.spec->'targets'->>'host' WHERE p.id = $1 GROUP BY p.id",
    2};

/* Per child, side (the host's bare metal, or its guests), workload and
 * metric: the workload's kind and engine and the side's value of each
 * round: the mean over the side's targets of each target's value of that
 * round (hv_round_values, migrations/042: a group is one value), so a
 * host's guest count or a failed guest job does not weigh on it. The
 * default configuration only; the server side of net runs left out. */
static const struct hv_stmt hosts_values = {
    "report_hosts_values",
    "SELECT coalesce(json_agg(json_build_object('host', y.host, 'where', y.side, 'workload', "
    "y.workload_id, 'metric', y.metric, 'unit', y.unit, 'higher_is_better', y.hib, 'kind', "
    "y.kind, 'engine', y.engine, 'values', y.v) ORDER BY y.workload_id, y.metric, y.side, "
    "y.host), '[]')::text FROM (SELECT x.host, x.side, x.workload_id, x.metric, "
    "min(x.unit) AS unit, bool_and(x.hib) AS hib, min(x.kind) AS kind, min(x.engine) AS engine, "
    "json_agg(x.v ORDER BY x.round) AS v FROM ("
    " SELECT c.spec->'targets'->>'host' AS host, CASE WHEN v.target = "
    " c.spec->'targets'->>'host' THEN 'host' ELSE 'guests' END AS side, v.workload_id, "
    " v.metric, min(v.unit) AS unit, bool_and(v.higher_is_better) AS hib, min(v.kind) AS kind, "
    " min(v.engine) AS engine, v.round, avg(v.value) AS v "
    " FROM plans c CROSS JOIN LATERAL hv_round_values(c.id) v "
    " WHERE c.parent_id = $1 AND v.config_idx = 0 "
    " GROUP BY 1, 2, 3, 4, v.round) x GROUP BY 1, 2, 3, 4) y",
    1};

static const struct hv_stmt hosts_parent = {
    "report_hosts_parent", "SELECT '1' FROM plans WHERE parent_id = $1 LIMIT 1", 1};

enum hv_db_status hv_report_hosts_parent(int64_t id, bool *parent)
{
    char idtxt[24];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id)};
    json_t *one = NULL;
    enum hv_db_status s = hv_db_json(&hosts_parent, params, &one, NULL);
    json_decref(one);
    *parent = s == HV_DB_OK;
    return s == HV_DB_NONE ? HV_DB_OK : s;
}

enum hv_db_status hv_report_hosts_add(int64_t id, json_t *report)
{
    char idtxt[24], margin[32];
    snprintf(margin, sizeof margin, "%g", HV_MARGIN_PCT_DEFAULT);
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id), margin};
    json_t *meta = NULL, *rows = NULL;
    enum hv_db_status s = hv_db_json(&hosts_meta, params, &meta, NULL);
    if (s == HV_DB_NONE)
        return HV_DB_OK;
    if (s == HV_DB_OK)
        s = hv_db_json(&hosts_values, params, &rows, NULL);
    json_t *view = NULL;
    if (s == HV_DB_OK) {
        view = hv_report_hosts_build(rows, json_object_get(meta, "hosts"),
                                     json_number_value(json_object_get(meta, "margin_pct")));
        if (view == NULL || json_object_set_new(report, "hosts", view) != 0)
            s = HV_DB_ERROR;
    }
    json_decref(meta);
    json_decref(rows);
    return s;
}

static json_t *num(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of x[0..n) (sorts x). */
static double median(double *x, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(x, n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/* One host's figures in a series: its centre (the geometric mean on a log
 * interval, else the mean) and interval. */
struct host_fig {
    const json_t *row;
    size_t n;
    double center, lo, hi;
    bool has_ci;
    bool usable;    /**< its ratio to the median is worth printing (hv_contrast_note) */
    char note[160]; /**< else the words to print instead */
};

static void host_figures(const json_t *row, struct host_fig *f)
{
    const json_t *values = json_object_get(row, "values");
    size_t n = json_array_size(values);
    double *x = calloc(n ? n : 1, sizeof *x);
    size_t k = 0;
    for (size_t i = 0; x != NULL && i < n; i++)
        if (json_is_number(json_array_get(values, i)))
            x[k++] = json_number_value(json_array_get(values, i));
    struct hv_summary s;
    memset(&s, 0, sizeof s);
    f->row = row;
    f->n = k;
    f->center = f->lo = f->hi = NAN;
    f->has_ci = false;
    if (x != NULL && k > 0 && hv_summarize(x, k, &s) == HV_STAT_OK) {
        /* A linear interval of a quantity that cannot be negative starts at 0. */
        if (hv_rnonneg(json_string_value(json_object_get(row, "metric")),
                       json_string_value(json_object_get(row, "unit"))))
            hv_summary_nonneg(&s);
        f->center = s.scale != HV_CI_NONE ? s.center : s.mean;
        f->has_ci = s.scale != HV_CI_NONE && isfinite(s.lo) && isfinite(s.hi);
        f->lo = f->has_ci ? s.lo : NAN;
        f->hi = f->has_ci ? s.hi : NAN;
    }
    free(x);
}

/* The most common value of fact among the hosts (compared as compact
 * JSON text); NULL when no host has it. A borrowed reference. */
static const json_t *typical(const json_t *hosts, const char *fact)
{
    const json_t *best = NULL;
    size_t best_n = 0;
    for (size_t i = 0; i < json_array_size(hosts); i++) {
        const json_t *v = json_object_get(json_object_get(json_array_get(hosts, i), "facts"), fact);
        if (v == NULL)
            continue;
        size_t n = 0;
        for (size_t j = 0; j < json_array_size(hosts); j++)
            n += json_equal(
                v, json_object_get(json_object_get(json_array_get(hosts, j), "facts"), fact));
        if (n > best_n) {
            best = v;
            best_n = n;
        }
    }
    return best;
}

/* The facts in which host h differs from the typical host. */
static json_t *differs(const json_t *hosts, const json_t *h)
{
    static const char *const facts[] = HV_HOST_FACTS;
    json_t *out = json_array();
    for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++) {
        const json_t *t = typical(hosts, facts[i]);
        const json_t *v = json_object_get(json_object_get(h, "facts"), facts[i]);
        if (t == NULL || (v != NULL && json_equal(v, t)))
            continue;
        json_array_append_new(out, json_pack("{s:s,s:O,s:O}", "fact", facts[i], "value",
                                             v != NULL ? (json_t *)v : json_null(), "typical", t));
    }
    return out;
}

/* The host named name among hosts, or NULL. */
static const json_t *host_of(const json_t *hosts, const char *name)
{
    for (size_t i = 0; i < json_array_size(hosts); i++)
        if (strcmp(json_string_value(json_object_get(json_array_get(hosts, i), "host")), name) == 0)
            return json_array_get(hosts, i);
    return NULL;
}

/* Adds one outlying series to host name's entry of outliers. */
static void add_outlier(json_t *outliers, const json_t *hosts, const char *name, json_t *what)
{
    for (size_t i = 0; i < json_array_size(outliers); i++) {
        json_t *o = json_array_get(outliers, i);
        if (strcmp(json_string_value(json_object_get(o, "host")), name) == 0) {
            json_array_append_new(json_object_get(o, "series"), what);
            return;
        }
    }
    const json_t *h = host_of(hosts, name);
    json_t *series = json_array();
    json_array_append_new(series, what);
    json_array_append_new(outliers,
                          json_pack("{s:s,s:O,s:o,s:o}", "host", name, "plan_id",
                                    h != NULL ? json_object_get(h, "plan_id") : json_null(),
                                    "series", series, "differs", differs(hosts, h)));
}

/* The side of row: "host" (the host's bare metal, also a row that does
 * not say) or "guests". */
static const char *where_of(const json_t *row)
{
    const char *w = json_string_value(json_object_get(row, "where"));
    return w != NULL ? w : "host";
}

/* One series (rows[from..to), one workload and metric): its figures, and
 * its outliers added. */
static json_t *series_json(const json_t *rows, size_t from, size_t to, const json_t *hosts,
                           double margin, json_t *outliers)
{
    size_t n = to - from;
    struct host_fig *f = calloc(n, sizeof *f);
    double *centers = calloc(n, sizeof *centers);
    if (f == NULL || centers == NULL) {
        free(f);
        free(centers);
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        host_figures(json_array_get(rows, from + i), &f[i]);
        if (isfinite(f[i].center))
            centers[k++] = f[i].center;
    }
    double med = median(centers, k);
    const json_t *first = json_array_get(rows, from);
    const char *workload = json_string_value(json_object_get(first, "workload"));
    const char *metric = json_string_value(json_object_get(first, "metric"));
    const char *where = where_of(first);
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        const char *name = json_string_value(json_object_get(f[i].row, "host"));
        double r = f[i].center / med, rlo = f[i].lo / med, rhi = f[i].hi / med;
        bool usable = isfinite(med) && med > 0;
        /* Judged as the % change against the median it is. */
        f[i].usable =
            hv_contrast_note(f[i].n, usable ? 100.0 * (rlo - 1.0) : NAN,
                             usable ? 100.0 * (rhi - 1.0) : NAN, f[i].note, sizeof f[i].note);
        /* An interval too short or too wide to print names no outlier. */
        bool below = usable && f[i].usable && rhi < 1 - margin / 100;
        bool above = usable && f[i].usable && rlo > 1 + margin / 100;
        json_t *o = json_pack("{s:s,s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:b,s:b}", "host", name, "n",
                              (json_int_t)f[i].n, "mean", num(f[i].center), "lo", num(f[i].lo),
                              "hi", num(f[i].hi), "ratio", num(usable ? r : NAN), "ratio_lo",
                              num(usable ? rlo : NAN), "ratio_hi", num(usable ? rhi : NAN),
                              "outlier", below || above, "usable", f[i].usable);
        json_object_set_new(o, "interval_note", f[i].usable ? json_null() : json_string(f[i].note));
        json_array_append_new(list, o);
        if (below || above)
            add_outlier(outliers, hosts, name,
                        json_pack("{s:s,s:s,s:s,s:o,s:o,s:o,s:s}", "workload", workload, "metric",
                                  metric, "where", where, "ratio", num(r), "ratio_lo", num(rlo),
                                  "ratio_hi", num(rhi), "side", below ? "below" : "above"));
    }
    free(f);
    free(centers);
    return json_pack("{s:s,s:s,s:s,s:O,s:O,s:o,s:o}", "workload", workload, "metric", metric,
                     "where", where, "unit", json_object_get(first, "unit"), "higher_is_better",
                     json_object_get(first, "higher_is_better"), "median", num(med), "hosts", list);
}

/* Whether row's metric is a primary metric of its workload's engine (every
 * metric of an engine that names none): the view leaves the others out,
 * whose many comparisons would name outliers by chance. */
static bool primary(const json_t *row)
{
    return hv_engine_metric_primary(json_string_value(json_object_get(row, "kind")),
                                    json_string_value(json_object_get(row, "engine")),
                                    json_string_value(json_object_get(row, "metric")));
}

/* Whether rows a and b belong to one series. */
static bool same_series(const json_t *a, const json_t *b)
{
    return json_equal(json_object_get(a, "workload"), json_object_get(b, "workload")) &&
           json_equal(json_object_get(a, "metric"), json_object_get(b, "metric")) &&
           strcmp(where_of(a), where_of(b)) == 0;
}

json_t *hv_report_hosts_build(const json_t *rows, const json_t *hosts, double margin_pct)
{
    json_t *series = json_array(), *outliers = json_array();
    json_t *names = json_array();
    for (size_t i = 0; i < json_array_size(hosts); i++)
        json_array_append(names, json_object_get(json_array_get(hosts, i), "host"));
    size_t n = json_array_size(rows);
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && same_series(json_array_get(rows, i), json_array_get(rows, j)); j++)
            ;
        if (!primary(json_array_get(rows, i)))
            continue;
        json_t *s = series_json(rows, i, j, hosts, margin_pct, outliers);
        if (s == NULL || json_array_append_new(series, s) != 0) {
            json_decref(series);
            json_decref(outliers);
            json_decref(names);
            return NULL;
        }
    }
    return json_pack("{s:o,s:f,s:o,s:o}", "hosts", names, "margin_pct", margin_pct, "series",
                     series, "outliers", outliers);
}
