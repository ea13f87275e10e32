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
 * refused them, are left out and counted (server/db_values.h).
 *
 * GET /api/v1/compare?items=A,B,C…&baseline=B: two to twelve items (a
 * side as above, or a target's name standing for its latest done plan)
 * against a baseline, rows paired across all of them as above; each
 * metric's comparisons with the baseline are one family whose verdicts
 * are read after Holm (lib/compare.h, hv_family_verdicts), and each item
 * gets the geometric mean of its ratios over the primary metrics every
 * item has, a lower-is-better ratio inverted. */
#include "adaptive.h"
#include "compare.h"
#include "db_compare.h"
#include "db_values.h"
#include "facts_diff.h"
#include "handlers.h"
#include "params.h"
#include "query.h"
#include "stats.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One side as the request named it. */
struct side {
    const char *arg; /* "a" or "b", or the item's name in messages */
    char name[600];  /* an item's: 'item "TEXT"' */
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

/* A row's values by round (its "rounds": {"ROUND": value}) as round
 * numbers and values, in the order of the rounds; false when one is not
 * a number or a round number not one. */
struct by_round {
    int round;
    double value;
};

static int by_round_order(const void *x, const void *y)
{
    const struct by_round *a = x, *b = y;
    return (a->round > b->round) - (a->round < b->round);
}

static bool row_rounds(const json_t *rounds, struct by_round *out, int *numbers, double *values)
{
    size_t i = 0;
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)rounds, key, v)
    {
        char *end;
        long r = strtol(key, &end, 10);
        if (*end != '\0' || end == key || r < 0 || r > 1000000 || !json_is_number(v))
            return false;
        out[i++] = (struct by_round){(int)r, json_number_value(v)};
    }
    qsort(out, i, sizeof *out, by_round_order);
    for (size_t j = 0; j < i; j++) {
        numbers[j] = out[j].round;
        values[j] = out[j].value;
    }
    return true;
}

/* The within-round comparison of row rb against row ra when both are of
 * one plan and their rounds complete (hv_rounds_complete, the rule a
 * plan's report pairs by): hv_effect_paired over the rounds, the analysis
 * the report uses (docs/statistics.md). False otherwise, or when a value
 * is missing or not positive. */
static bool paired(const json_t *ra, const json_t *rb, struct hv_ratio *r, size_t *n)
{
    const json_t *pa = json_object_get(ra, "plan_id"), *pb = json_object_get(rb, "plan_id");
    const json_t *va = json_object_get(ra, "rounds"), *vb = json_object_get(rb, "rounds");
    size_t ka = json_object_size(va), kb = json_object_size(vb);
    *n = ka;
    if (!json_is_integer(pa) || !json_is_integer(pb) ||
        json_integer_value(pa) != json_integer_value(pb) || ka == 0 || kb == 0)
        return false;
    struct by_round *scratch = malloc((ka + kb) * sizeof *scratch);
    int *na = malloc((ka + kb) * sizeof *na);
    double *base = malloc((ka + kb) * sizeof *base);
    bool ok = scratch != NULL && na != NULL && base != NULL && row_rounds(va, scratch, na, base) &&
              row_rounds(vb, scratch, na + ka, base + ka) &&
              hv_rounds_complete(na, ka, na + ka, kb) &&
              hv_effect_paired(base + ka, base, 1, ka, r) == HV_STAT_OK;
    free(scratch);
    free(na);
    free(base);
    return ok;
}

/* The comparison of b against a (rows ra and rb, their moments a and b):
 * ratio of geometric means with its interval and verdict — paired within
 * rounds when the rows are of one plan and share their rounds (analysis
 * "paired"), else Welch on logs ("welch") — when both sides have two
 * positive values or more (then *r is it and *usable whether the interval
 * is, and true is returned); the ratio of means alone otherwise (null when
 * undefined). */
static bool compare_into(json_t *out, const json_t *ra, const json_t *rb,
                         const struct hv_moments *a, const struct hv_moments *b, bool hib,
                         double margin, struct hv_ratio *rp, bool *usable_out)
{
    struct hv_log_group ga, gb;
    struct hv_ratio r;
    size_t n = a->n < b->n ? a->n : b->n;
    *usable_out = false;
    bool pair = paired(ra, rb, &r, &n);
    if (pair ||
        (hv_moments_log_group(a, &ga) == HV_STAT_OK && hv_moments_log_group(b, &gb) == HV_STAT_OK &&
         hv_effect(&gb, &ga, 1, &r) == HV_STAT_OK)) {
        json_object_set_new(out, "analysis", json_string(pair ? "paired" : "welch"));
        *rp = r;
        set_num(out, "ratio", 1.0 + r.pct / 100.0);
        set_num(out, "change_pct", r.pct);
        set_num(out, "lo_pct", r.lo_pct);
        set_num(out, "hi_pct", r.hi_pct);
        set_num(out, "p", r.p);
        char note[160];
        bool usable;
        enum hv_verdict v = hv_verdict_usable(&r, n, margin, hib, &usable, note, sizeof note);
        json_object_set_new(out, "verdict", json_string(hv_verdict_name(v)));
        json_object_set_new(out, "usable", json_boolean(usable));
        json_object_set_new(out, "interval_note", usable ? json_null() : json_string(note));
        *usable_out = usable;
        return true;
    }
    double ratio = a->mean > 0 && b->mean >= 0 ? b->mean / a->mean : NAN;
    json_object_set_new(out, "analysis", json_null());
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
    return false;
}

/* The keys of a comparison without one (a side has no runs), null. */
static void no_comparison(json_t *out)
{
    static const char *const keys[] = {"ratio", "change_pct", "lo_pct",  "hi_pct",
                                       "p",     "verdict",    "analysis"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        json_object_set_new(out, keys[i], json_null());
    json_object_set_new(out, "usable", json_false());
    json_object_set_new(out, "interval_note", json_string("no interval: a side has no runs"));
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
    struct hv_ratio r;
    bool usable;
    if (oka && okb)
        compare_into(out, ra, rb, &ma, &mb, json_is_true(hib), margin, &r, &usable);
    else
        no_comparison(out);
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

/* ---- N items: GET /api/v1/compare?items=A,B,C…&baseline=B ------------- */

/* The most items one comparison takes: a page and a table stay readable. */
#define ITEMS_MAX 12

/* The items of a comparison, parsed and read. */
struct items {
    struct side sd[ITEMS_MAX];
    char text[ITEMS_MAX][540]; /* each item as the request gave it */
    size_t n;
    size_t base; /* the baseline's index */
};

/* Whether piece continues the previous item's configuration: a
 * "FACTOR=LEVEL" after the ',' of "12:vcpu_pin=on,thp=never" (no ':',
 * an '=' and not a plan id). */
static bool continues(const struct items *it, const char *piece)
{
    return it->n > 0 && strchr(it->text[it->n - 1], ':') != NULL && strchr(piece, ':') == NULL &&
           strchr(piece, '=') != NULL;
}

/* Splits items= into it->text; appends errors under "items". */
static void split_items(const char *v, struct items *it, json_t *errors)
{
    char buf[ITEMS_MAX * 540];
    if (v[0] == '\0') {
        hv_errors_add(errors, "items", "must name 2 to %d items", ITEMS_MAX);
        return;
    }
    if (strlen(v) >= sizeof buf) {
        hv_errors_add(errors, "items", "is too long");
        return;
    }
    snprintf(buf, sizeof buf, "%s", v);
    char *save = NULL;
    for (char *piece = strtok_r(buf, ",", &save); piece != NULL;
         piece = strtok_r(NULL, ",", &save)) {
        if (continues(it, piece)) {
            char *t = it->text[it->n - 1];
            size_t len = strlen(t);
            if (len + 1 + strlen(piece) >= sizeof it->text[0]) {
                hv_errors_add(errors, "items", "item %zu is too long", it->n);
                return;
            }
            snprintf(t + len, sizeof it->text[0] - len, ",%s", piece);
            continue;
        }
        if (it->n == ITEMS_MAX) {
            hv_errors_add(errors, "items", "names more than %d items", ITEMS_MAX);
            return;
        }
        if (strlen(piece) >= sizeof it->text[0]) {
            hv_errors_add(errors, "items", "item %zu is too long", it->n + 1);
            return;
        }
        snprintf(it->text[it->n++], sizeof it->text[0], "%s", piece);
    }
    if (it->n < 2 || v[0] == ',' || v[strlen(v) - 1] == ',' || strstr(v, ",,") != NULL)
        hv_errors_add(errors, "items",
                      "must name 2 to %d items, joined by ',': plan ids, PLAN:CONFIGURATION "
                      "or target names (12,12:vcpu_pin=on,host-a)",
                      ITEMS_MAX);
}

/* Parses item i: a plan id, PLAN:CONFIGURATION, or (plan 0) a target's
 * name to resolve. */
static void parse_item(struct items *it, size_t i, json_t *errors)
{
    struct side *sd = &it->sd[i];
    const char *v = it->text[i];
    snprintf(sd->name, sizeof sd->name, "item \"%s\"", v);
    sd->arg = sd->name;
    size_t digits = strspn(v, "0123456789");
    const char *rest = v + digits;
    if (digits == 0 || (*rest != '\0' && *rest != ':'))
        return; /* a target's name */
    if (digits > 18 || v[0] == '0' || (*rest == ':' && rest[1] == '\0')) {
        hv_errors_add(errors, "items",
                      "%s must be a plan id, a plan id, ':' and a configuration name "
                      "(12, 12:vcpu_pin=on,thp=never) or a target's name",
                      sd->name);
        return;
    }
    sd->plan = strtoll(v, NULL, 10);
    snprintf(sd->config, sizeof sd->config, "%s", *rest == ':' ? rest + 1 : "");
}

/* Reads every item, a target's name becoming its latest done plan;
 * answers 404 (or the database's failure) and returns false when one is
 * not found. */
static bool load_items(struct hv_request *req, struct items *it)
{
    for (size_t i = 0; i < it->n; i++) {
        struct side *sd = &it->sd[i];
        if (sd->plan == 0) {
            enum hv_db_status s = hv_db_compare_target_plan(it->text[i], &sd->plan);
            char detail[1300];
            if (s == HV_DB_OK && sd->plan == 0)
                snprintf(detail, sizeof detail, "%s: target %s has no done plan", sd->name,
                         it->text[i]);
            else if (s == HV_DB_NONE)
                snprintf(detail, sizeof detail,
                         "%s: no target of that name, and not a plan id (12) or "
                         "PLAN:CONFIGURATION",
                         sd->name);
            if (s == HV_DB_NONE || (s == HV_DB_OK && sd->plan == 0)) {
                hv_reply_problem(req, HV_E_NOT_FOUND, detail, NULL);
                return false;
            }
            if (s != HV_DB_OK) {
                hv_reply_db_failure(req, s);
                return false;
            }
        }
        if (!load_side(req, sd))
            return false;
    }
    return true;
}

/* Whether a row's target is a guest (its kind; a group's "N guests"). */
static bool on_guest(const json_t *row)
{
    const char *k = json_string_value(json_object_get(row, "target_kind"));
    return k != NULL && strcmp(k, "guest") == 0;
}

/* Whether rows x and y are of one metric of one workload and, when
 * by_target, of one target (pass 0) or, for items on other machines, of
 * one side, host or guest (pass 1). */
static bool same_metric(const json_t *x, const json_t *y, bool by_target, int pass)
{
    if (!same_workload(x, y) || !same_str(x, y, "metric"))
        return false;
    if (!by_target)
        return true;
    return pass == 0 ? same_str(x, y, "target") : on_guest(x) == on_guest(y);
}

/* One metric across the items: their rows (NULL where an item has none). */
struct metric_rows {
    const json_t *row[ITEMS_MAX];
};

/* The comparisons of a metric's items against the baseline, verdicts
 * after Holm over the n − 1 of them (hv_family_verdicts: a better or worse
 * whose adjusted p exceeds the family's alpha becomes inconclusive; a
 * comparison without an interval counts with p = 1), as a new array with
 * null at the baseline. */
static json_t *metric_comparisons(const struct items *it, const struct metric_rows *mr, bool hib,
                                  double margin, json_t *values)
{
    struct hv_moments m[ITEMS_MAX];
    bool ok[ITEMS_MAX], have[ITEMS_MAX] = {false}, usable[ITEMS_MAX] = {false};
    struct hv_ratio r[ITEMS_MAX];
    bool hibs[ITEMS_MAX];
    enum hv_verdict v[ITEMS_MAX];
    double padj[ITEMS_MAX];
    size_t idx[ITEMS_MAX], k = 0;
    for (size_t i = 0; i < it->n; i++)
        json_array_append_new(values, side_json(mr->row[i], &m[i], &ok[i]));
    json_t *cmps = json_array();
    for (size_t i = 0; i < it->n; i++) {
        if (i == it->base) {
            json_array_append_new(cmps, json_null());
            continue;
        }
        json_t *c = json_object();
        if (ok[i] && ok[it->base])
            have[i] = compare_into(c, mr->row[it->base], mr->row[i], &m[it->base], &m[i], hib,
                                   margin, &r[k], &usable[i]);
        else
            no_comparison(c);
        if (!have[i]) {
            memset(&r[k], 0, sizeof r[k]);
            r[k].log.est = NAN; /* no interval: hv_margin_p's NaN, p = 1 */
            r[k].log.se = NAN;
        }
        hibs[k] = hib;
        idx[k++] = i;
        json_array_append_new(cmps, c);
    }
    if (hv_family_verdicts(r, k, margin, hibs, v, padj) != HV_STAT_OK) {
        json_decref(cmps);
        return NULL;
    }
    for (size_t j = 0; j < k; j++) {
        json_t *c = json_array_get(cmps, idx[j]);
        set_num(c, "p_margin", have[idx[j]] ? hv_margin_p(&r[j], margin) : NAN);
        set_num(c, "p_adjusted", have[idx[j]] ? padj[j] : NAN);
        if (have[idx[j]])
            json_object_set_new(
                c, "verdict",
                json_string(hv_verdict_name(usable[idx[j]] ? v[j] : HV_VERDICT_INCONCLUSIVE)));
    }
    return cmps;
}

/* How many items have figures for metric m. */
static size_t items_with_values(const json_t *m)
{
    size_t n = 0, i;
    const json_t *v;
    json_array_foreach(json_object_get(m, "values"), i, v) n += !json_is_null(v);
    return n;
}

/* A metric's place in the answer: its rank (the primary ones first, then
 * those more items have figures for), then its index (as the items listed
 * them), so the same question gives the same order. */
struct place {
    size_t rank, index;
};

static int by_place(const void *x, const void *y)
{
    const struct place *a = x, *b = y;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* list in the order of by_place, as a new array. Takes list. */
static json_t *primary_first(json_t *list)
{
    size_t n = json_array_size(list);
    struct place *at = malloc((n ? n : 1) * sizeof *at);
    json_t *out = at != NULL ? json_array() : NULL;
    for (size_t i = 0; out != NULL && i < n; i++) {
        const json_t *m = json_array_get(list, i);
        at[i] = (struct place){(json_is_true(json_object_get(m, "primary")) ? 0 : ITEMS_MAX + 1) +
                                   ITEMS_MAX - items_with_values(m),
                               i};
    }
    if (out != NULL)
        qsort(at, n, sizeof *at, by_place);
    for (size_t i = 0; out != NULL && i < n; i++)
        if (json_array_append(out, json_array_get(list, at[i].index)) != 0) {
            json_decref(out);
            out = NULL;
        }
    free(at);
    json_decref(list);
    return out;
}

/* The metrics of the items: every row of each item (the baseline's
 * first) with the matching rows of the others. */
static json_t *metrics_json(const struct items *it, double margin)
{
    bool by_target = false;
    for (size_t i = 0; i < it->n; i++)
        by_target = by_target || !it->sd[i].one_target;
    bool *used[ITEMS_MAX] = {NULL};
    json_t *list = json_array();
    bool fail = list == NULL;
    for (size_t i = 0; i < it->n && !fail; i++) {
        used[i] = calloc(json_array_size(json_object_get(it->sd[i].doc, "rows")) + 1, 1);
        fail = used[i] == NULL;
    }
    for (size_t o = 0; o < it->n && !fail; o++) {
        size_t i = o == 0 ? it->base : o <= it->base ? o - 1 : o;
        const json_t *rows = json_object_get(it->sd[i].doc, "rows");
        for (size_t x = 0; x < json_array_size(rows) && !fail; x++) {
            if (used[i][x])
                continue;
            struct metric_rows mr = {{NULL}};
            const json_t *row = json_array_get(rows, x);
            used[i][x] = true;
            mr.row[i] = row;
            for (size_t j = 0; j < it->n; j++) {
                const json_t *other = json_object_get(it->sd[j].doc, "rows");
                for (int pass = 0; pass < 2; pass++)
                    for (size_t y = 0; j != i && y < json_array_size(other) && !mr.row[j]; y++)
                        if (!used[j][y] &&
                            same_metric(row, json_array_get(other, y), by_target, pass)) {
                            used[j][y] = true;
                            mr.row[j] = json_array_get(other, y);
                        }
            }
            json_t *hib = json_object_get(row, "higher_is_better");
            bool primary =
                hv_engine_metric_primary(json_string_value(json_object_get(row, "kind")),
                                         json_string_value(json_object_get(row, "engine")),
                                         json_string_value(json_object_get(row, "metric")));
            json_t *values = json_array();
            json_t *cmps =
                values ? metric_comparisons(it, &mr, json_is_true(hib), margin, values) : NULL;
            json_t *m = json_pack(
                "{s:O,s:O,s:O,s:O,s:O,s:b,s:O,s:o,s:o}", "workload",
                json_object_get(row, "workload"), "params", json_object_get(row, "params"),
                "metric", json_object_get(row, "metric"), "unit", json_object_get(row, "unit"),
                "higher_is_better", hib, "primary", primary, "target",
                by_target ? json_object_get(row, "target") : json_null(), "values", values,
                "comparisons", cmps);
            fail = m == NULL || json_array_append_new(list, m) != 0;
        }
    }
    for (size_t i = 0; i < it->n; i++)
        free(used[i]);
    if (fail) {
        json_decref(list);
        return NULL;
    }
    return primary_first(list);
}

/* The overall geometric mean of each item's ratios against the baseline
 * over the primary metrics every item has a ratio of, a lower-is-better
 * metric's ratio inverted so above 1 is better everywhere. */
static json_t *geomean_json(const struct items *it, const json_t *metrics)
{
    double sum[ITEMS_MAX] = {0};
    json_t *names = json_array(), *inverted = json_array(), *values = json_array();
    size_t i;
    const json_t *m;
    json_array_foreach(metrics, i, m)
    {
        const json_t *cmps = json_object_get(m, "comparisons");
        bool all = json_is_true(json_object_get(m, "primary"));
        for (size_t j = 0; all && j < it->n; j++) {
            double r = num(json_array_get(cmps, j), "ratio");
            all = j == it->base || (isfinite(r) && r > 0.0);
        }
        if (!all)
            continue;
        bool hib = json_is_true(json_object_get(m, "higher_is_better"));
        for (size_t j = 0; j < it->n; j++)
            if (j != it->base) {
                double lr = log(num(json_array_get(cmps, j), "ratio"));
                sum[j] += hib ? lr : -lr;
            }
        json_array_append(names, json_object_get(m, "metric"));
        if (!hib)
            json_array_append(inverted, json_object_get(m, "metric"));
    }
    size_t k = json_array_size(names);
    for (size_t j = 0; j < it->n; j++)
        json_array_append_new(values, k == 0          ? json_null()
                                      : j == it->base ? json_real(1.0)
                                                      : json_real(exp(sum[j] / (double)k)));
    char text[400];
    snprintf(text, sizeof text,
             "the geometric mean of each item's ratios to the baseline over the %zu primary "
             "metric%s every item has; a lower-is-better metric's ratio is inverted "
             "(baseline / item), so above 1 is better",
             k, k == 1 ? "" : "s");
    return json_pack("{s:o,s:o,s:o,s:s}", "values", values, "metrics", names, "inverted", inverted,
                     "sentence", text);
}

/* The items' facts and their configurations' factor levels side by side. */
static json_t *side_by_side(const struct items *it, const char *key)
{
    const json_t *each[ITEMS_MAX];
    for (size_t i = 0; i < it->n; i++)
        each[i] = json_object_get(it->sd[i].doc, key);
    return hv_facts_side_by_side(each, it->n);
}

static void free_items(struct items *it)
{
    for (size_t i = 0; i < it->n; i++)
        json_decref(it->sd[i].doc);
}

/* GET /api/v1/compare?items=…: 2 to ITEMS_MAX items against a baseline. */
static void compare_items(struct hv_request *req, const char *v, json_t *errors)
{
    struct items *it = calloc(1, sizeof *it);
    if (it == NULL) {
        json_decref(errors);
        hv_reply_problem(req, HV_E_INTERNAL, "out of memory", NULL);
        return;
    }
    split_items(v, it, errors);
    for (size_t i = 0; i < it->n; i++)
        parse_item(it, i, errors);
    const char *base = NULL;
    hv_query_str(req, "baseline", 540, &base, errors);
    for (size_t i = 0; base != NULL && i < it->n && strcmp(it->text[i], base) != 0; i++)
        it->base = i + 1;
    if (base != NULL && it->n >= 2 && it->base >= it->n)
        hv_errors_add(errors, "baseline", "must be one of the items, as items= gives it");
    double margin = HV_MARGIN_PCT_DEFAULT;
    bool given = false;
    margin_arg(req, &margin, &given, errors);
    if (hv_query_failed(req, errors) || !load_items(req, it))
        goto done;
    if (!given) {
        double mb = num(it->sd[it->base].doc, "margin_pct");
        margin = isfinite(mb) ? mb : HV_MARGIN_PCT_DEFAULT;
    }
    char detail[1400];
    for (size_t i = 0; i < it->n; i++)
        if (i != it->base &&
            (workloads_differ(&it->sd[it->base], &it->sd[i], detail, sizeof detail) ||
             workloads_differ(&it->sd[i], &it->sd[it->base], detail, sizeof detail))) {
            hv_reply_problem(req, HV_E_CONFLICT, detail, NULL);
            goto done;
        }
    json_t *heads = json_array();
    for (size_t i = 0; heads != NULL && i < it->n; i++) {
        json_t *h = side_head(&it->sd[i]);
        json_object_set_new(h, "item", json_string(it->text[i]));
        json_object_set_new(h, "baseline", json_boolean(i == it->base));
        json_array_append_new(heads, h);
    }
    json_t *metrics = metrics_json(it, margin);
    json_t *answer = heads && metrics
                         ? json_pack("{s:o,s:I,s:f,s:o,s:o,s:o,s:o}", "items", heads, "baseline",
                                     (json_int_t)it->base, "margin_pct", margin, "metrics", metrics,
                                     "geomean", geomean_json(it, metrics), "settings",
                                     side_by_side(it, "levels"), "facts", side_by_side(it, "facts"))
                         : NULL;
    if (answer == NULL) {
        json_decref(heads);
        json_decref(metrics);
        hv_reply_problem(req, HV_E_INTERNAL, "out of memory", NULL);
    } else {
        hv_reply_json(req, 200, answer);
    }
done:
    free_items(it);
    free(it);
}

void hv_h_compare(struct hv_request *req)
{
    json_t *errors = json_array();
    const char *items = NULL;
    hv_query_str(req, "items", ITEMS_MAX * 540, &items, errors);
    if (items != NULL || hv_req_query(req, "items") != NULL) {
        if (hv_req_query(req, "a") != NULL || hv_req_query(req, "b") != NULL)
            hv_errors_add(errors, "items", "give items, or a and b, not both");
        if (items == NULL || json_array_size(errors) > 0) {
            hv_query_failed(req, errors);
            return;
        }
        compare_items(req, items, errors);
        return;
    }
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
