/* params.c — the generic checker of engine descriptions' parameter rows
 * and the readers of normalised params; see params.h. The table of the
 * descriptions and the catalogue built from it are engines.c; the
 * descriptions live with their kind (params_cpu.c, params_disk.c,
 * params_net.c, params_custom.c) or their tool (lib/parse_<tool>.c).
 *
 * A parameter is a row; checking is one walk over the rows with one
 * normaliser per type. Only what a row cannot say (one param bounded by
 * another) lives in an engine's cross-field hook, which runs after every
 * row passed so it sees normalised values. */
#include "params.h"

#include "errors.h"
#include "jspec.h"
#include "units.h"

#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define KIB 1024.0
#define MIB (1024.0 * KIB)
#define GIB (1024.0 * MIB)
#define TIB (1024.0 * GIB)

bool hv_engine_def_sweepable(const struct hv_engine_def *e, const char *param)
{
    for (const char *const *s = e->sweepable; s != NULL && *s != NULL; s++)
        if (strcmp(*s, param) == 0)
            return true;
    return false;
}

static const char *const type_names[] = {
    [HV_PARAM_INT] = "int",       [HV_PARAM_NUMBER] = "number",     [HV_PARAM_BOOL] = "bool",
    [HV_PARAM_SIZE] = "size",     [HV_PARAM_DURATION] = "duration", [HV_PARAM_ENUM] = "enum",
    [HV_PARAM_STRING] = "string", [HV_PARAM_TARGET] = "target",     [HV_PARAM_LIST] = "list",
};

const char *hv_param_type_name(enum hv_param_type t)
{
    if ((unsigned)t >= sizeof type_names / sizeof type_names[0])
        return "unknown";
    return type_names[t];
}

int hv_engine_def_fit(const struct hv_engine_def *e, const json_t *params,
                      const struct hv_target_facts *t, const char *path, json_t *errors)
{
    if (e->fit == NULL || t == NULL || t->cpus <= 0 || !json_is_object(params))
        return 0;
    return e->fit(e, params, t, path, errors);
}

/* ---- reading normalised params ----------------------------------------- */

const struct hv_param_def *hv_engine_def_param(const struct hv_engine_def *e, const char *name)
{
    for (const struct hv_param_def *d = e->params_def; d->name != NULL; d++)
        if (strcmp(d->name, name) == 0)
            return d;
    return NULL;
}

long long hv_params_int(const json_t *params, const char *name)
{
    return (long long)json_integer_value(json_object_get(params, name));
}

double hv_params_num(const json_t *params, const char *name)
{
    return json_number_value(json_object_get(params, name));
}

bool hv_params_bool(const json_t *params, const char *name)
{
    return json_is_true(json_object_get(params, name));
}

const char *hv_params_str(const json_t *params, const char *name)
{
    return json_string_value(json_object_get(params, name));
}

long hv_params_count(const struct hv_engine_def *e, const json_t *params, const char *name,
                     long cpus)
{
    const json_t *v = json_object_get(params, name);
    if (!json_is_string(v))
        return (long)json_integer_value(v);
    const struct hv_param_def *d = hv_engine_def_param(e, name);
    long lo = d != NULL ? (long)d->min : 1, hi = d != NULL ? (long)d->max : cpus;
    lo = lo < 1 ? 1 : lo; /* the word means at least one */
    return cpus < lo ? lo : cpus > hi ? hi : cpus;
}

int hv_params_choice(const struct hv_engine_def *e, const json_t *params, const char *name)
{
    const struct hv_param_def *d = hv_engine_def_param(e, name);
    const char *s = hv_params_str(params, name);
    for (int i = 0; d != NULL && d->choices != NULL && s != NULL && d->choices[i] != NULL; i++)
        if (strcmp(d->choices[i], s) == 0)
            return i;
    return -1;
}

/* ---- normalisers, one per type ----------------------------------------- */

/* Each takes the value as the plan wrote it and returns a new reference to
 * the normalised value, or NULL after appending one error at path. */
typedef json_t *(*normalise_fn)(const struct hv_param_def *d, const json_t *v, const char *path,
                                json_t *errors);

/* "a, b, c" into buf. */
static void join(const char *const *list, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (const char *const *s = list; *s != NULL && n < len; s++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", *s);
}

/* Bytes the way operators write them: the largest binary suffix that
 * divides exactly ("256k", "16t", "1000"). */
static void fmt_size(double bytes, char *buf, size_t len)
{
    static const struct {
        char suffix;
        double factor;
    } units[] = {{'t', TIB}, {'g', GIB}, {'m', MIB}, {'k', KIB}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (bytes >= units[i].factor && fmod(bytes, units[i].factor) == 0) {
            snprintf(buf, len, "%.0f%c", bytes / units[i].factor, units[i].suffix);
            return;
        }
    }
    snprintf(buf, len, "%.0f", bytes);
}

/* Seconds the way operators write them ("24h", "5m", "1.5s"). */
static void fmt_duration(double s, char *buf, size_t len)
{
    if (s >= 3600 && fmod(s, 3600) == 0)
        snprintf(buf, len, "%gh", s / 3600);
    else if (s >= 60 && fmod(s, 60) == 0)
        snprintf(buf, len, "%gm", s / 60);
    else
        snprintf(buf, len, "%gs", s);
}

/* Appends the range error of d for value v (both in the row's unit). */
static json_t *range_error(const struct hv_param_def *d, double v, const char *path, json_t *errors)
{
    char lo[32], hi[32], got[32];
    void (*fmt)(double, char *, size_t) = d->type == HV_PARAM_SIZE       ? fmt_size
                                          : d->type == HV_PARAM_DURATION ? fmt_duration
                                                                         : NULL;
    if (fmt != NULL) {
        fmt(d->min, lo, sizeof lo);
        fmt(d->max, hi, sizeof hi);
        fmt(v, got, sizeof got);
    } else {
        snprintf(lo, sizeof lo, "%.15g", d->min);
        snprintf(hi, sizeof hi, "%.15g", d->max);
        snprintf(got, sizeof got, "%.15g", v);
    }
    hv_errors_add(errors, path, "must be between %s and %s, not %s", lo, hi, got);
    return NULL;
}

static bool out_of_range(const struct hv_param_def *d, double v)
{
    return d->min < d->max && (v < d->min || v > d->max);
}

static json_t *norm_int(const struct hv_param_def *d, const json_t *v, const char *path,
                        json_t *errors)
{
    if (d->word != NULL && json_is_string(v) && strcmp(json_string_value(v), d->word) == 0)
        return json_string(d->word);
    if (!json_is_integer(v)) {
        if (d->word != NULL)
            hv_errors_add(errors, path,
                          "must be an integer between %.15g and %.15g or \"%s\", not %s", d->min,
                          d->max, d->word, hv_jtype_name(v));
        else
            hv_errors_add(errors, path, "must be an integer between %.15g and %.15g, not %s",
                          d->min, d->max, hv_jtype_name(v));
        return NULL;
    }
    if (out_of_range(d, (double)json_integer_value(v)))
        return range_error(d, (double)json_integer_value(v), path, errors);
    return json_integer(json_integer_value(v));
}

static json_t *norm_number(const struct hv_param_def *d, const json_t *v, const char *path,
                           json_t *errors)
{
    if (!json_is_number(v)) {
        hv_errors_add(errors, path, "must be a number, not %s", hv_jtype_name(v));
        return NULL;
    }
    if (out_of_range(d, json_number_value(v)))
        return range_error(d, json_number_value(v), path, errors);
    return json_real(json_number_value(v));
}

static json_t *norm_bool(const struct hv_param_def *d, const json_t *v, const char *path,
                         json_t *errors)
{
    if (!json_is_boolean(v)) {
        hv_errors_add(errors, path, "must be true or false, not %s", hv_jtype_name(v));
        return NULL;
    }
    return json_boolean(json_is_true(v));
}

static json_t *norm_size(const struct hv_param_def *d, const json_t *v, const char *path,
                         json_t *errors)
{
    uint64_t bytes;
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        bytes = (uint64_t)json_integer_value(v);
    } else if (json_is_string(v)) {
        if (hv_parse_size(json_string_value(v), &bytes) != 0) {
            hv_errors_add(errors, path,
                          "\"%.64s\" is not a size: write bytes (4096) or a number with k, m, g "
                          "or t (\"256k\", \"1.5m\", \"8g\")",
                          json_string_value(v));
            return NULL;
        }
    } else if (json_is_integer(v)) {
        return range_error(d, (double)json_integer_value(v), path, errors);
    } else {
        hv_errors_add(errors, path,
                      "must be a whole number of bytes or a size such as \"256k\" or \"8g\", "
                      "not %s",
                      hv_jtype_name(v));
        return NULL;
    }
    if (out_of_range(d, (double)bytes))
        return range_error(d, (double)bytes, path, errors);
    if (d->multiple != 0 && bytes % d->multiple != 0) {
        char m[32];
        fmt_size(d->multiple, m, sizeof m);
        if (d->multiple < KIB)
            hv_errors_add(errors, path, "must be a multiple of %u bytes", d->multiple);
        else
            hv_errors_add(errors, path, "must be a multiple of %s (%u bytes)", m, d->multiple);
        return NULL;
    }
    return json_integer((json_int_t)bytes);
}

static json_t *norm_duration(const struct hv_param_def *d, const json_t *v, const char *path,
                             json_t *errors)
{
    double s;
    if (json_is_number(v)) {
        s = json_number_value(v);
    } else if (json_is_string(v)) {
        if (hv_parse_duration(json_string_value(v), &s) != 0) {
            hv_errors_add(errors, path,
                          "\"%.64s\" is not a duration: write seconds (30) or a number with "
                          "ms, s, m or h (\"500ms\", \"30s\", \"5m\", \"1h\")",
                          json_string_value(v));
            return NULL;
        }
    } else {
        hv_errors_add(errors, path,
                      "must be a number of seconds or a duration such as \"30s\" or \"5m\", "
                      "not %s",
                      hv_jtype_name(v));
        return NULL;
    }
    if (out_of_range(d, s))
        return range_error(d, s, path, errors);
    return json_real(s);
}

static json_t *norm_enum(const struct hv_param_def *d, const json_t *v, const char *path,
                         json_t *errors)
{
    char allowed[256];
    join(d->choices, allowed, sizeof allowed);
    if (json_is_string(v))
        for (const char *const *c = d->choices; *c != NULL; c++)
            if (strcmp(*c, json_string_value(v)) == 0)
                return json_string(*c);
    hv_errors_add(errors, path, "must be one of: %s", allowed);
    return NULL;
}

static json_t *norm_string(const struct hv_param_def *d, const json_t *v, const char *path,
                           json_t *errors)
{
    size_t max = d->max_len ? d->max_len : 256;
    if (!json_is_string(v)) {
        hv_errors_add(errors, path, "must be a string, not %s", hv_jtype_name(v));
        return NULL;
    }
    const char *s = json_string_value(v);
    const char *why = NULL;
    char too_long[64];
    if (json_string_length(v) == 0)
        why = "must not be empty";
    else if (strlen(s) != json_string_length(v))
        why = "must not contain NUL characters";
    else if (json_string_length(v) > max)
        why = too_long;
    else if (d->format != NULL)
        why = d->format(s);
    if (why == NULL)
        return json_string(s);
    if (why == too_long)
        snprintf(too_long, sizeof too_long, "must be at most %zu characters", max);
    hv_errors_add(errors, path, "%s", why);
    return NULL;
}

/* A list keeps the order of d->choices whatever order the plan used: the
 * engine runs the phases in that order anyway (reads need the file the
 * writes made), and one spelling per set keeps variants comparable. */
static json_t *norm_list(const struct hv_param_def *d, const json_t *v, const char *path,
                         json_t *errors)
{
    char allowed[256];
    join(d->choices, allowed, sizeof allowed);
    if (!json_is_array(v) || json_array_size(v) == 0) {
        hv_errors_add(errors, path, "must be a non-empty array of unique values from: %s%s%s",
                      allowed, json_is_array(v) ? "" : ", not ",
                      json_is_array(v) ? "" : hv_jtype_name(v));
        return NULL;
    }
    /* The error names the first bad entry by index, at the member's own
     * path like every other param error. */
    size_t i;
    const json_t *e;
    json_array_foreach(v, i, e)
    {
        bool known = false;
        for (const char *const *c = d->choices; json_is_string(e) && *c != NULL; c++)
            known |= strcmp(*c, json_string_value(e)) == 0;
        if (!known) {
            if (json_is_string(e))
                hv_errors_add(errors, path, "entry %zu (\"%.64s\") must be one of: %s", i,
                              json_string_value(e), allowed);
            else
                hv_errors_add(errors, path, "entry %zu must be one of: %s, not %s", i, allowed,
                              hv_jtype_name(e));
            return NULL;
        }
        for (size_t j = 0; j < i; j++) {
            if (json_equal(e, json_array_get(v, j))) {
                hv_errors_add(errors, path, "entry %zu repeats entry %zu (\"%s\")", i, j,
                              json_string_value(e));
                return NULL;
            }
        }
    }
    json_t *out = json_array();
    for (const char *const *c = d->choices; *c != NULL; c++)
        for (size_t k = 0; k < json_array_size(v); k++)
            if (strcmp(*c, json_string_value(json_array_get(v, k))) == 0)
                json_array_append_new(out, json_string(*c));
    return out;
}

static const normalise_fn normalisers[] = {
    [HV_PARAM_INT] = norm_int,           [HV_PARAM_NUMBER] = norm_number,
    [HV_PARAM_BOOL] = norm_bool,         [HV_PARAM_SIZE] = norm_size,
    [HV_PARAM_DURATION] = norm_duration, [HV_PARAM_ENUM] = norm_enum,
    [HV_PARAM_STRING] = norm_string,     [HV_PARAM_TARGET] = norm_string,
    [HV_PARAM_LIST] = norm_list,
};

/* ---- the generic checker ----------------------------------------------- */

/* "a, b, c": the names of the rows. */
static void known_names(const struct hv_param_def *rows, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (const struct hv_param_def *d = rows; d->name != NULL && n < len; d++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", d->name);
}

int hv_engine_def_check(const struct hv_engine_def *e, json_t *params, const char *path,
                        json_t *errors)
{
    char p[512];
    if (!json_is_object(params)) {
        hv_errors_add(errors, path, "must be an object, not %s", hv_jtype_name(params));
        return 1;
    }
    int problems = 0;
    const char *key;
    json_t *v;
    json_object_foreach(params, key, v)
    {
        const struct hv_param_def *d = e->params_def;
        while (d->name != NULL && strcmp(d->name, key) != 0)
            d++;
        if (d->name == NULL) {
            char known[512];
            known_names(e->params_def, known, sizeof known);
            hv_jpath(p, sizeof p, path, key);
            hv_errors_add(errors, p, "is not a known parameter of %s/%s; known: %s", e->kind,
                          e->engine, known);
            problems++;
        }
    }
    for (const struct hv_param_def *d = e->params_def; d->name != NULL; d++) {
        hv_jpath(p, sizeof p, path, d->name);
        json_t *given = json_object_get(params, d->name);
        json_t *parsed = NULL;
        if (given == NULL && d->def != NULL)
            given = parsed = json_loads(d->def, JSON_DECODE_ANY, NULL);
        if (given == NULL) {
            if (d->required) {
                hv_errors_add(errors, p, "is required: %s", d->description);
                problems++;
            }
            continue;
        }
        json_t *norm = normalisers[d->type](d, given, p, errors);
        json_decref(parsed);
        if (norm == NULL)
            problems++;
        else
            json_object_set_new(params, d->name, norm);
    }
    if (problems == 0 && e->cross != NULL)
        problems += e->cross(e, params, path, errors);
    return problems;
}
