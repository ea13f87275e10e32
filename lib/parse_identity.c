/* parse_identity.c — what a tool's output says was run (see parsers.h):
 * the identity of its runs, which an import records as the workload's
 * params so that each workload has a history of its own; the check that
 * the runs of one output repeat one workload; and params given beside an
 * output for what it does not say.
 *
 * Each tool's description names its identity as a table of info paths
 * (struct hv_identity_field); the same table makes the params and is
 * checked first when runs must be alike, so the two cannot drift apart. */
#include "parse_util.h"
#include "parsers.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- paths into info -------------------------------------------------- */

/* The member at the dotted path of v ("options.iodepth"), borrowed, or
 * NULL. */
static const json_t *member_at(const json_t *v, const char *path, size_t len)
{
    while (v != NULL && len > 0) {
        const char *dot = memchr(path, '.', len);
        size_t n = dot != NULL ? (size_t)(dot - path) : len;
        char key[64];
        if (n >= sizeof key)
            return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        v = json_object_get(v, key);
        path += n;
        len -= n;
        if (dot != NULL) {
            path++;
            len--;
        }
    }
    return v;
}

/* The value at one path of info (no '|'), a new reference: the member, or
 * for "ARRAY[].MEMBER" the array of each element's member (null where an
 * element lacks it); null when absent. */
static json_t *value_at(const json_t *info, const char *path, size_t len)
{
    const char *brackets = NULL;
    for (size_t i = 0; i + 3 <= len && brackets == NULL; i++)
        if (memcmp(path + i, "[].", 3) == 0)
            brackets = path + i;
    if (brackets == NULL) {
        const json_t *v = member_at(info, path, len);
        return v != NULL ? json_incref((json_t *)v) : json_null();
    }
    const json_t *a = member_at(info, path, (size_t)(brackets - path));
    if (!json_is_array(a))
        return json_null();
    const char *rest = brackets + 3;
    size_t rest_len = len - (size_t)(rest - path);
    json_t *out = json_array();
    size_t i;
    const json_t *e;
    json_array_foreach(a, i, e)
    {
        const json_t *v = member_at(e, rest, rest_len);
        json_array_append_new(out, v != NULL ? json_incref((json_t *)v) : json_null());
    }
    return out;
}

/* Whether v says something: not null, and not an array of nulls. */
static bool present(const json_t *v)
{
    if (json_is_array(v)) {
        size_t i;
        const json_t *e;
        json_array_foreach(v, i, e)
        {
            if (!json_is_null(e))
                return true;
        }
        return false;
    }
    return v != NULL && !json_is_null(v);
}

/* The value at path of info, a new reference: of the first alternative
 * ("a|b") that says something, else null. */
static json_t *path_value(const json_t *info, const char *path)
{
    while (*path != '\0') {
        size_t n = strcspn(path, "|");
        json_t *v = value_at(info, path, n);
        if (present(v))
            return v;
        json_decref(v);
        path += n + (path[n] == '|');
    }
    return json_null();
}

/* ---- normalising a value by its kind ------------------------------------ */

/* Each returns a new reference to v normalised, or NULL when it cannot
 * read v as its kind. */
typedef json_t *(*normalise_fn)(const json_t *v);

static json_t *norm_text(const json_t *v)
{
    if (!json_is_string(v))
        return NULL;
    char buf[HV_PARAMS_VALUE_MAX * 4];
    size_t n = json_string_length(v);
    if (n == 0 || n >= sizeof buf)
        return NULL;
    const char *s = json_string_value(v);
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)tolower((unsigned char)s[i]);
    return json_stringn(buf, n);
}

/* A whole number in [0, 2^53) from a number or the text of one. */
static bool whole(const json_t *v, double *out)
{
    double d;
    if (json_is_number(v))
        d = json_number_value(v);
    else if (!json_is_string(v) || hv_pnum_str(json_string_value(v), &d) != 0)
        return false;
    if (!(d >= 0 && d < 9007199254740992.0) || d != floor(d))
        return false;
    *out = d;
    return true;
}

static json_t *norm_count(const json_t *v)
{
    double d;
    return whole(v, &d) ? json_integer((json_int_t)d) : NULL;
}

/* A size as the tools print it: a number, blanks, a binary multiple
 * (k, m, g, t: 1024), then "b", "ib", "byte" or "bytes" — "4k", "1M",
 * "16KiB", "4.00 MByte (default)", "512 Bytes" — rounded to a byte;
 * whatever follows in brackets is left out. */
static bool size_text(const char *s, double *bytes)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || !isdigit((unsigned char)s[0]) || !isfinite(v) || v < 0)
        return false;
    while (*end == ' ')
        end++;
    static const char scales[] = "kmgt";
    const char *at = *end != '\0' ? strchr(scales, tolower((unsigned char)*end)) : NULL;
    double factor = 1;
    if (at != NULL) {
        for (const char *k = scales; k <= at; k++)
            factor *= 1024;
        end++;
    }
    size_t n = strcspn(end, " (");
    static const char *const units[] = {"", "b", "ib", "byte", "bytes"};
    bool unit = false;
    for (size_t i = 0; i < sizeof units / sizeof units[0] && !unit; i++)
        unit =
            strlen(units[i]) == n && strncasecmp(end, units[i], n) == 0 && (i != 2 || at != NULL);
    end += n;
    while (*end == ' ')
        end++;
    if (!unit || (*end != '\0' && *end != '('))
        return false;
    *bytes = round(v * factor);
    return *bytes < 9007199254740992.0;
}

static json_t *norm_size(const json_t *v)
{
    double d;
    if (json_is_number(v))
        return whole(v, &d) ? json_integer((json_int_t)d) : NULL;
    if (!json_is_string(v) || !size_text(json_string_value(v), &d))
        return NULL;
    return json_integer((json_int_t)d);
}

static json_t *norm_flag(const json_t *v)
{
    if (json_is_boolean(v))
        return json_incref((json_t *)v);
    if (json_is_integer(v) && (json_integer_value(v) == 0 || json_integer_value(v) == 1))
        return json_boolean(json_integer_value(v) == 1);
    static const char *const yes[] = {"1", "true", "yes", "on"}, *const no[] = {"0", "false", "no",
                                                                                "off"};
    const char *s = json_string_value(v);
    for (size_t i = 0; s != NULL && i < sizeof yes / sizeof yes[0]; i++) {
        if (strcasecmp(s, yes[i]) == 0)
            return json_true();
        if (strcasecmp(s, no[i]) == 0)
            return json_false();
    }
    return NULL;
}

static const normalise_fn normalisers[] = {
    [HV_ID_TEXT] = norm_text,
    [HV_ID_COUNT] = norm_count,
    [HV_ID_SIZE] = norm_size,
    [HV_ID_FLAG] = norm_flag,
};

/* v normalised as f's kind, a new reference: as it is when the kind cannot
 * read it, f's fallback when v is null (null without one). */
static json_t *normalise(const struct hv_identity_field *f, const json_t *v)
{
    json_t *fallback = NULL;
    if (json_is_null(v) && f->fallback != NULL)
        v = fallback = json_string(f->fallback);
    if (json_is_null(v))
        return json_null();
    json_t *n = normalisers[f->kind](v);
    json_decref(fallback);
    return n != NULL ? n : json_incref((json_t *)v);
}

static int by_text(const void *a, const void *b)
{
    char *x = json_dumps(*(json_t *const *)a, JSON_COMPACT | JSON_ENCODE_ANY);
    char *y = json_dumps(*(json_t *const *)b, JSON_COMPACT | JSON_ENCODE_ANY);
    int c = strcmp(x ? x : "", y ? y : "");
    free(x);
    free(y);
    return c;
}

/* The value of field f of info, a new reference; null when unknown. */
static json_t *field_value(const struct hv_identity_field *f, const json_t *info)
{
    json_t *raw = path_value(info, f->path);
    if (!json_is_array(raw) || strstr(f->path, "[].") == NULL) {
        json_t *v = normalise(f, raw);
        json_decref(raw);
        return v;
    }
    size_t n = json_array_size(raw);
    json_t **vals = calloc(n + 1, sizeof *vals);
    json_t *out = vals != NULL ? json_array() : NULL;
    bool same = true;
    for (size_t i = 0; out != NULL && i < n; i++) {
        vals[i] = normalise(f, json_array_get(raw, i));
        same = same && json_equal(vals[i], vals[0]);
    }
    if (out != NULL && f->list)
        qsort(vals, n, sizeof *vals, by_text);
    for (size_t i = 0; out != NULL && i < n; i++)
        json_array_append(out, vals[i]);
    if (out != NULL && !f->list && same && n > 0) {
        json_decref(out);
        out = json_incref(vals[0]);
    }
    for (size_t i = 0; vals != NULL && i < n; i++)
        json_decref(vals[i]);
    free(vals);
    json_decref(raw);
    return out != NULL ? out : json_null();
}

json_t *hv_parse_identity(const char *tool, const json_t *info)
{
    const struct hv_tool_parser *p = hv_parser_find(tool);
    json_t *out = json_object();
    for (const struct hv_identity_field *f = p ? p->identity : NULL; f && f->key && out; f++) {
        json_t *v = field_value(f, info);
        if (present(v))
            json_object_set_new(out, f->key, v);
        else
            json_decref(v);
    }
    return out;
}

/* ---- runs alike --------------------------------------------------------- */

/* v as a message shows it: JSON, sizes by their largest exact binary
 * multiple ("4G"), "none" when absent. */
static char *shown(char *buf, size_t len, const struct hv_identity_field *f, const json_t *v)
{
    if (v == NULL || json_is_null(v)) {
        snprintf(buf, len, "none");
        return buf;
    }
    if (f != NULL && f->kind == HV_ID_SIZE && json_is_integer(v) && json_integer_value(v) > 0) {
        static const char units[] = "KMGT";
        json_int_t b = json_integer_value(v);
        int u = -1;
        while (u < 3 && b % 1024 == 0) {
            b /= 1024;
            u++;
        }
        if (u >= 0) {
            snprintf(buf, len, "%lld%c", (long long)b, units[u]);
            return buf;
        }
    }
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    hv_pquote(buf, len, s ? s : "?", s ? strlen(s) : 1);
    free(s);
    return buf;
}

/* The first member of identity a and b that differs: 0, or -1 with what
 * each has in sa, sb and its key in *key. */
static int first_difference(const struct hv_tool_parser *p, const json_t *a, const json_t *b,
                            const char **key, char *sa, char *sb, size_t len)
{
    for (const struct hv_identity_field *f = p->identity; f != NULL && f->key != NULL; f++) {
        const json_t *x = json_object_get(a, f->key), *y = json_object_get(b, f->key);
        if ((x == NULL && y == NULL) || (x != NULL && y != NULL && json_equal(x, y)))
            continue;
        *key = f->key;
        shown(sa, len, f, x);
        shown(sb, len, f, y);
        return -1;
    }
    return 0;
}

/* The message of runs that are not alike. */
static int not_alike(const struct hv_tool_parser *p, size_t n, size_t k, const char *what,
                     const char *has, const char *had, char *err, size_t errlen)
{
    return hv_perr(err, errlen, p->display,
                   "the output holds %zu runs, and they are not runs of one workload: run %zu "
                   "has %s %s where run 1 has %s; an import keeps its runs as repetitions of "
                   "one workload: import each run on its own",
                   n, k + 1, what, has, had);
}

int hv_parse_runs_alike(const char *tool, const json_t *runs, char *err, size_t errlen)
{
    const struct hv_tool_parser *p = hv_parser_find(tool);
    size_t n = json_array_size(runs);
    if (p == NULL || n < 2)
        return 0;
    const json_t *first = json_object_get(json_array_get(runs, 0), "info");
    json_t *id1 = hv_parse_identity(tool, first);
    int rc = 0;
    for (size_t k = 1; k < n && rc == 0; k++) {
        const json_t *info = json_object_get(json_array_get(runs, k), "info");
        json_t *id = hv_parse_identity(tool, info);
        const char *key;
        char sa[64], sb[64];
        if (first_difference(p, id1, id, &key, sa, sb, sizeof sa) != 0)
            rc = not_alike(p, n, k, key, sb, sa, err, errlen);
        json_decref(id);
        for (const char *const *path = p->alike; rc == 0 && path && *path; path++) {
            json_t *a = path_value(first, *path), *b = path_value(info, *path);
            if (!json_equal(a, b))
                rc = not_alike(p, n, k, *path, shown(sb, sizeof sb, NULL, b),
                               shown(sa, sizeof sa, NULL, a), err, errlen);
            json_decref(a);
            json_decref(b);
        }
    }
    json_decref(id1);
    return rc;
}

/* ---- params given beside an output -------------------------------------- */

/* Whether s is a key of params: a-z first, then a-z 0-9 _. */
static bool key_ok(const char *s)
{
    size_t n = strlen(s);
    return n >= 1 && n <= HV_PARAMS_KEY_MAX && islower((unsigned char)s[0]) &&
           strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

/* Whether s is a value of params: printable ASCII or UTF-8 text without
 * control characters. */
static bool text_ok(const char *s, size_t n)
{
    if (n == 0 || n > HV_PARAMS_VALUE_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return false;
    return true;
}

/* Appends {"path": base/key, "message"} to errors. */
static void add_error(json_t *errors, const char *base, const char *key, const char *message)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", base, key);
    json_array_append_new(errors, json_pack("{s:s,s:s}", "path", path, "message", message));
}

int hv_params_given_check(const json_t *params, const char *path, json_t *errors)
{
    if (params == NULL)
        return 0;
    int bad = 0;
    char msg[160];
    if (!json_is_object(params)) {
        json_array_append_new(errors, json_pack("{s:s,s:s}", "path", path, "message",
                                                "must be an object of KEY: VALUE"));
        return 1;
    }
    if (json_object_size(params) > HV_PARAMS_MAX) {
        snprintf(msg, sizeof msg, "must hold at most %d members", HV_PARAMS_MAX);
        json_array_append_new(errors, json_pack("{s:s,s:s}", "path", path, "message", msg));
        return 1;
    }
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)params, key, v)
    {
        char q[48];
        if (!key_ok(key)) {
            snprintf(msg, sizeof msg,
                     "the key \"%s\" must be 1 to %d of a-z, 0-9 and _, starting with a letter",
                     hv_pquote(q, sizeof q, key, strlen(key)), HV_PARAMS_KEY_MAX);
            json_array_append_new(errors, json_pack("{s:s,s:s}", "path", path, "message", msg));
            bad++;
        } else if (!(json_is_number(v) && isfinite(json_number_value(v))) &&
                   !(json_is_string(v) && text_ok(json_string_value(v), json_string_length(v)))) {
            snprintf(msg, sizeof msg, "must be a number or a text of 1 to %d characters",
                     HV_PARAMS_VALUE_MAX);
            add_error(errors, path, key, msg);
            bad++;
        }
    }
    return bad;
}

/* The field of p's identity called key, or NULL. */
static const struct hv_identity_field *field_of(const struct hv_tool_parser *p, const char *key)
{
    for (const struct hv_identity_field *f = p->identity; f != NULL && f->key != NULL; f++)
        if (strcmp(f->key, key) == 0)
            return f;
    return NULL;
}

/* A given value normalised: by f's kind (NULL when it cannot read it),
 * or without a field, a string of a plain number as the number. */
static json_t *given_value(const struct hv_identity_field *f, const json_t *v)
{
    if (f != NULL)
        return normalisers[f->kind](v);
    double d;
    if (json_is_string(v) && hv_pnum_str(json_string_value(v), &d) == 0)
        return d == floor(d) && fabs(d) < 9007199254740992.0 ? json_integer((json_int_t)d)
                                                             : json_real(d);
    return json_incref((json_t *)v);
}

/* Sets info at f's first path to v, when that path is one member (or a
 * member of a member) that info may hold. */
static void fill(json_t *info, const struct hv_identity_field *f, json_t *v)
{
    char path[96];
    snprintf(path, sizeof path, "%.*s", (int)strcspn(f->path, "|"), f->path);
    if (strstr(path, "[]") != NULL)
        return;
    json_t *o = info;
    char *key = path;
    for (char *dot = strchr(key, '.'); dot != NULL && o != NULL; dot = strchr(key, '.')) {
        *dot = '\0';
        json_t *next = json_object_get(o, key);
        if (next == NULL)
            json_object_set_new(o, key, next = json_object());
        o = json_is_object(next) ? next : NULL;
        key = dot + 1;
    }
    if (o != NULL)
        json_object_set(o, key, v);
}

int hv_parse_identity_apply(const char *tool, json_t *runs, const json_t *given, json_t **params,
                            char *err, size_t errlen)
{
    *params = NULL;
    const struct hv_tool_parser *p = hv_parser_find(tool);
    if (p == NULL)
        return hv_perr(err, errlen, tool ? tool : "(null)", "unknown tool");
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)given, key, v)
    {
        const struct hv_identity_field *f = field_of(p, key);
        json_t *want = given_value(f, v);
        char q[64];
        if (want == NULL)
            return hv_perr(err, errlen, p->display, "the params' %s %s is not a %s", key,
                           shown(q, sizeof q, NULL, v),
                           f == NULL                ? "value"
                           : f->kind == HV_ID_SIZE  ? "size"
                           : f->kind == HV_ID_COUNT ? "whole number"
                           : f->kind == HV_ID_FLAG  ? "flag (true or false)"
                                                    : "text");
        size_t i;
        json_t *run;
        int rc = 0;
        json_array_foreach(runs, i, run)
        {
            json_t *info = json_object_get(run, "info");
            json_t *has = f != NULL ? field_value(f, info) : json_null();
            char qa[64], qb[64];
            if (present(has) && !json_equal(has, want))
                rc = hv_perr(err, errlen, p->display,
                             "the params say %s %s where the output%s says %s: a param may say "
                             "what the output does not, never the contrary",
                             key, shown(qa, sizeof qa, f, want), i > 0 ? "'s later run" : "",
                             shown(qb, sizeof qb, f, has));
            else if (f != NULL && !present(has) && json_is_object(info))
                fill(info, f, v);
            json_decref(has);
            if (rc != 0)
                break;
        }
        json_decref(want);
        if (rc != 0)
            return rc;
    }
    size_t i;
    json_t *run;
    json_array_foreach(runs, i, run)
    {
        json_t *info = json_object_get(run, "info");
        if (json_object_size(given) > 0 && json_is_object(info))
            json_object_set_new(info, "given", json_deep_copy(given));
    }
    json_t *out = hv_parse_identity(tool, json_object_get(json_array_get(runs, 0), "info"));
    json_object_foreach((json_t *)given, key, v)
    {
        if (out != NULL && json_object_get(out, key) == NULL)
            json_object_set_new(out, key, given_value(field_of(p, key), v));
    }
    if (out == NULL)
        return hv_perr(err, errlen, p->display, "out of memory");
    *params = out;
    return 0;
}
