/* h_compare.c — GET /api/v1/compare?a=A&b=B: two plans, or two
 * configurations of plans, side by side, metric by metric, with B's %
 * change against A, its 95 % interval and a verdict against the margin
 * (lib/compare.h, on logs).
 *
 * A side is "PLAN" (the plan's default configuration, its first) or
 * "PLAN:CONFIGURATION": everything after the first ':' is the
 * configuration's name as it is, so the '=' and ',' of
 * "12:vcpu_pin=on,thp=never" need no escaping beyond the URL's own. Rows
 * are matched by workload id, params, metric and target; when each side
 * ran on one target only (a guest's import against the host's), by
 * workload id, params and metric. Two imports of one tool share the
 * workload id, and their params are what each output says was run (fio's
 * iodepth, iperf3's streams): a workload of one side whose params the
 * other side's workload of that id does not have is another workload, and
 * the comparison is refused (409) naming the first param that differs.
 * Values no measurement can have, stored before the doors
 * refused them, are left out and counted (server/db_values.h). */
#include "adaptive.h"
#include "compare.h"
#include "db_compare.h"
#include "db_values.h"
#include "handlers.h"
#include "query.h"
#include "stats.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One side as the request named it. */
struct side {
    const char *arg; /* "a" or "b" */
    int64_t plan;
    char config[520]; /* "" for the default */
    json_t *doc;      /* db_compare.h's answer */
    bool one_target;  /* every row on one target */
};

/* Parses "PLAN[:CONFIGURATION]"; appends an error under the argument's
 * name when it does not fit. */
static void parse_side(struct hv_request *req, struct side *sd, json_t *errors)
{
    const char *v = NULL;
    hv_query_str(req, sd->arg, 530, &v, errors);
    if (v == NULL) {
        if (hv_req_query(req, sd->arg) == NULL)
            hv_errors_add(errors, sd->arg, "is required: PLAN or PLAN:CONFIGURATION");
        return;
    }
    size_t digits = strspn(v, "0123456789");
    const char *rest = v + digits;
    if (digits == 0 || digits > 18 || v[0] == '0' || (*rest != '\0' && *rest != ':') ||
        (*rest == ':' && (rest[1] == '\0' || strlen(rest + 1) >= sizeof sd->config))) {
        hv_errors_add(errors, sd->arg,
                      "must be a plan id, or a plan id, ':' and a configuration name "
                      "(12, 12:vcpu_pin=on,thp=never)");
        return;
    }
    sd->plan = strtoll(v, NULL, 10);
    snprintf(sd->config, sizeof sd->config, "%s", *rest == ':' ? rest + 1 : "");
}

/* Reads a side; answers 404 and returns false when its plan or
 * configuration does not exist. */
static bool load_side(struct hv_request *req, struct side *sd)
{
    enum hv_db_status s = hv_db_compare_side(sd->plan, sd->config[0] ? sd->config : NULL, &sd->doc);
    char detail[700];
    if (s == HV_DB_NONE) {
        snprintf(detail, sizeof detail, "%s: no plan %lld", sd->arg, (long long)sd->plan);
        hv_reply_problem(req, HV_E_NOT_FOUND, detail, NULL);
        return false;
    }
    if (s != HV_DB_OK) {
        hv_reply_db_failure(req, s);
        return false;
    }
    if (json_is_null(json_object_get(sd->doc, "configuration"))) {
        char *names = json_dumps(json_object_get(sd->doc, "configurations"), JSON_COMPACT);
        snprintf(detail, sizeof detail, "%s: plan %lld has no configuration \"%s\"; it has %s",
                 sd->arg, (long long)sd->plan, sd->config, names ? names : "none");
        free(names);
        hv_reply_problem(req, HV_E_NOT_FOUND, detail, NULL);
        return false;
    }
    const char *first = NULL;
    sd->one_target = true;
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(sd->doc, "rows"), i, row)
    {
        const char *t = json_string_value(json_object_get(row, "target"));
        if (first == NULL)
            first = t;
        else if (t != NULL && strcmp(t, first) != 0)
            sd->one_target = false;
    }
    return true;
}

static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static void set_num(json_t *o, const char *key, double v)
{
    json_object_set_new(o, key, isfinite(v) ? json_real(v) : json_null());
}

/* A row's moments as lib/stats.h keeps them; false when they do not fit. */
static bool moments_of(const json_t *row, struct hv_moments *m)
{
    /* A row whose values were all left out (db_values.h) has none. */
    if (json_integer_value(json_object_get(row, "n")) < 1)
        return false;
    double sd = num(row, "sd"), ls = num(row, "log_sd"), lm = num(row, "log_mean");
    size_t n = (size_t)json_integer_value(json_object_get(row, "n"));
    size_t np = (size_t)json_integer_value(json_object_get(row, "n_nonpos"));
    return hv_moments_set(m, n, num(row, "mean"), isfinite(sd) ? sd : 0.0, np < n ? lm : 0.0,
                          isfinite(ls) ? ls : 0.0, np) == HV_STAT_OK;
}

/* One side of a row as the answer shows it: n, mean, sd and the
 * interval to report (on logs when every value was positive). */
static json_t *side_json(const json_t *row, struct hv_moments *m, bool *ok)
{
    *ok = row != NULL && moments_of(row, m);
    if (!*ok)
        return json_null();
    struct hv_summary s;
    hv_moments_summary(m, &s);
    hv_summary_nonneg(&s);
    json_t *o = json_pack("{s:O,s:I,s:s,s:I}", "target", json_object_get(row, "target"), "n",
                          (json_int_t)s.n, "scale", hv_ci_scale_name(s.scale), "excluded",
                          json_integer_value(json_object_get(row, "excluded")));
    set_num(o, "mean", s.mean);
    set_num(o, "sd", s.n >= 2 ? s.sd : NAN);
    set_num(o, "center", s.center);
    set_num(o, "lo", s.lo);
    set_num(o, "hi", s.hi);
    char note[200];
    bool usable = hv_interval_note(&s, HV_CI_PCT_DEFAULT, note, sizeof note);
    json_object_set_new(o, "usable", json_boolean(usable));
    json_object_set_new(o, "interval_note", usable ? json_null() : json_string(note));
    return o;
}

/* The comparison of b against a: ratio of geometric means with its
 * interval and verdict when both sides have two positive values or more;
 * the ratio of means alone otherwise (null when undefined). */
static void compare_into(json_t *out, const struct hv_moments *a, const struct hv_moments *b,
                         bool hib, double margin)
{
    struct hv_log_group ga, gb;
    struct hv_ratio r;
    if (hv_moments_log_group(a, &ga) == HV_STAT_OK && hv_moments_log_group(b, &gb) == HV_STAT_OK &&
        hv_effect(&gb, &ga, 1, &r) == HV_STAT_OK) {
        set_num(out, "ratio", 1.0 + r.pct / 100.0);
        set_num(out, "change_pct", r.pct);
        set_num(out, "lo_pct", r.lo_pct);
        set_num(out, "hi_pct", r.hi_pct);
        set_num(out, "p", r.p);
        char note[160];
        bool usable;
        enum hv_verdict v = hv_verdict_usable(&r, a->n < b->n ? a->n : b->n, margin, hib, &usable,
                                              note, sizeof note);
        json_object_set_new(out, "verdict", json_string(hv_verdict_name(v)));
        json_object_set_new(out, "usable", json_boolean(usable));
        json_object_set_new(out, "interval_note", usable ? json_null() : json_string(note));
        return;
    }
    double ratio = a->mean > 0 && b->mean >= 0 ? b->mean / a->mean : NAN;
    set_num(out, "ratio", ratio);
    set_num(out, "change_pct", 100.0 * (ratio - 1.0));
    set_num(out, "lo_pct", NAN);
    set_num(out, "hi_pct", NAN);
    set_num(out, "p", NAN);
    json_object_set_new(out, "verdict", json_null());
    char note[160];
    hv_contrast_note(a->n < b->n ? a->n : b->n, NAN, NAN, note, sizeof note);
    json_object_set_new(out, "usable", json_false());
    json_object_set_new(out, "interval_note", json_string(note));
}

/* The row of a comparing ra (may be NULL) with rb (may be NULL). */
static json_t *row_json(const json_t *ra, const json_t *rb, double margin)
{
    const json_t *any = ra != NULL ? ra : rb;
    json_t *hib = json_object_get(any, "higher_is_better");
    json_t *out =
        json_pack("{s:O,s:O,s:O,s:O,s:O}", "workload", json_object_get(any, "workload"), "params",
                  json_object_get(any, "params"), "metric", json_object_get(any, "metric"), "unit",
                  json_object_get(any, "unit"), "higher_is_better", hib);
    struct hv_moments ma, mb;
    bool oka, okb;
    json_object_set_new(out, "a", side_json(ra, &ma, &oka));
    json_object_set_new(out, "b", side_json(rb, &mb, &okb));
    if (oka && okb) {
        compare_into(out, &ma, &mb, json_is_true(hib), margin);
    } else {
        static const char *const keys[] = {"ratio",  "change_pct", "lo_pct",
                                           "hi_pct", "p",          "verdict"};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            json_object_set_new(out, keys[i], json_null());
        json_object_set_new(out, "usable", json_false());
        json_object_set_new(out, "interval_note", json_string("no interval: a side has no runs"));
    }
    return out;
}

static bool same_str(const json_t *x, const json_t *y, const char *key)
{
    const char *a = json_string_value(json_object_get(x, key));
    const char *b = json_string_value(json_object_get(y, key));
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* Whether x and y are rows of one workload: its id and its params. */
static bool same_workload(const json_t *x, const json_t *y)
{
    return same_str(x, y, "workload") &&
           json_equal(json_object_get(x, "params"), json_object_get(y, "params"));
}

/* The first member (in the order of their keys) where params a and b
 * differ, written as "KEY VALUE_A where B's has VALUE_B" into buf (B the
 * name of b's side). */
static void params_difference(const json_t *a, const json_t *b, const char *name_b, char *buf,
                              size_t len)
{
    const json_t *both[2] = {a, b};
    const char *first = NULL;
    for (int s = 0; s < 2; s++) {
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)both[s], key, v)
        {
            const json_t *w = json_object_get(both[1 - s], key);
            if ((w == NULL || !json_equal(v, w)) && (first == NULL || strcmp(key, first) < 0))
                first = key;
        }
    }
    if (first == NULL) {
        snprintf(buf, len, "different params");
        return;
    }
    const json_t *va = json_object_get(a, first), *vb = json_object_get(b, first);
    char *sa = va ? json_dumps(va, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    char *sb = vb ? json_dumps(vb, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    snprintf(buf, len, "%s %.60s where %s's has %.60s", first, sa ? sa : "none", name_b,
             sb ? sb : "none");
    free(sa);
    free(sb);
}

/* Whether a workload id of a is, on b, only of other params (another
 * workload under the same id: imports of one tool at other queue depths);
 * then detail says which and how. */
static bool workloads_differ(const struct side *a, const struct side *b, char *detail, size_t len)
{
    const json_t *ra = json_object_get(a->doc, "rows"), *rb = json_object_get(b->doc, "rows");
    size_t i, k;
    const json_t *x, *y;
    json_array_foreach(ra, i, x)
    {
        const json_t *other = NULL;
        bool matched = false;
        json_array_foreach(rb, k, y)
        {
            if (!same_str(x, y, "workload"))
                continue;
            if (same_workload(x, y))
                matched = true;
            else if (other == NULL)
                other = y;
        }
        if (matched || other == NULL)
            continue;
        char diff[200];
        params_difference(json_object_get(x, "params"), json_object_get(other, "params"), b->arg,
                          diff, sizeof diff);
        snprintf(detail, len,
                 "%s's workload %s is not %s's: %s's has %s; different workloads are not "
                 "compared (compare plans that ran the same one)",
                 a->arg, json_string_value(json_object_get(x, "workload")), b->arg, a->arg, diff);
        return true;
    }
    return false;
}

/* The rows of a matched with those of b, then b's unmatched ones. */
static json_t *rows_json(const struct side *a, const struct side *b, double margin)
{
    bool by_target = !(a->one_target && b->one_target);
    json_t *ra = json_object_get(a->doc, "rows"), *rb = json_object_get(b->doc, "rows");
    size_t nb = json_array_size(rb);
    bool *used = calloc(nb + 1, sizeof *used);
    json_t *rows = json_array();
    if (used == NULL || rows == NULL) {
        free(used);
        json_decref(rows);
        return NULL;
    }
    size_t i, k;
    json_t *x;
    json_array_foreach(ra, i, x)
    {
        json_t *match = NULL;
        for (k = 0; k < nb && match == NULL; k++) {
            json_t *y = json_array_get(rb, k);
            if (!used[k] && same_workload(x, y) && same_str(x, y, "metric") &&
                (!by_target || same_str(x, y, "target"))) {
                used[k] = true;
                match = y;
            }
        }
        json_array_append_new(rows, row_json(x, match, margin));
    }
    for (k = 0; k < nb; k++)
        if (!used[k])
            json_array_append_new(rows, row_json(NULL, json_array_get(rb, k), margin));
    free(used);
    return rows;
}

/* What the answer says of a side. */
static json_t *side_head(const struct side *sd)
{
    json_t *targets = json_array();
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(sd->doc, "rows"), i, row)
    {
        json_t *t = json_object_get(row, "target");
        bool seen = false;
        for (size_t k = 0; k < json_array_size(targets) && !seen; k++)
            seen = json_equal(json_array_get(targets, k), t);
        if (!seen)
            json_array_append(targets, t);
    }
    return json_pack("{s:O,s:O,s:O,s:o,s:{s:I,s:s}}", "plan_id",
                     json_object_get(sd->doc, "plan_id"), "plan_name",
                     json_object_get(sd->doc, "plan_name"), "configuration",
                     json_object_get(sd->doc, "configuration"), "targets", targets, "excluded",
                     "values", (json_int_t)json_number_value(json_object_get(sd->doc, "excluded")),
                     "reason", HV_SQL_EXCLUDED_REASON);
}

/* The margin the query gives (*given set), checked. */
static void margin_arg(struct hv_request *req, double *margin, bool *given, json_t *errors)
{
    const char *v = NULL;
    hv_query_str(req, "margin_pct", 32, &v, errors);
    *given = v != NULL;
    if (v == NULL)
        return;
    char *end;
    *margin = strtod(v, &end);
    if (end == v || *end != '\0' || !(*margin >= 0.0 && *margin < 100.0))
        hv_errors_add(errors, "margin_pct", "must be a number from 0 to below 100");
}

void hv_h_compare(struct hv_request *req)
{
    json_t *errors = json_array();
    struct side a = {.arg = "a"}, b = {.arg = "b"};
    parse_side(req, &a, errors);
    parse_side(req, &b, errors);
    double margin = HV_MARGIN_PCT_DEFAULT;
    bool given = false;
    margin_arg(req, &margin, &given, errors);
    if (hv_query_failed(req, errors))
        return;
    if (!load_side(req, &a) || !load_side(req, &b)) {
        json_decref(a.doc);
        json_decref(b.doc);
        return;
    }
    if (!given) {
        /* B's plan's margin, else A's, else the default. */
        double mb = num(b.doc, "margin_pct"), ma = num(a.doc, "margin_pct");
        margin = isfinite(mb) ? mb : isfinite(ma) ? ma : HV_MARGIN_PCT_DEFAULT;
    }
    char detail[600];
    if (workloads_differ(&a, &b, detail, sizeof detail) ||
        workloads_differ(&b, &a, detail, sizeof detail)) {
        hv_reply_problem(req, HV_E_CONFLICT, detail, NULL);
        json_decref(a.doc);
        json_decref(b.doc);
        return;
    }
    json_t *rows = rows_json(&a, &b, margin);
    if (rows == NULL) {
        hv_reply_problem(req, HV_E_INTERNAL, "out of memory", NULL);
    } else {
        json_t *answer = json_pack("{s:o,s:o,s:f,s:o}", "a", side_head(&a), "b", side_head(&b),
                                   "margin_pct", margin, "rows", rows);
        hv_reply_json(req, 200, answer);
    }
    json_decref(a.doc);
    json_decref(b.doc);
}
