/* result.c — see result.h. */
#include "result.h"

#include "errors.h"
#include "jspec.h"
#include "metric_natures.h"
#include "timeutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Past this many problems the rest of a body is not looked at: one bad
 * sample generator would otherwise produce 200,000 of them. */
#define MAX_ERRORS 50
/* Room for a path down to a sample's member under a plan import's result
 * ("/jobs/123/results/2/samples/199999/value"). */
#define JPATH_LEN 160

static const char *const result_statuses[] = {"ok", "error", NULL};

static const struct hv_jfield result_fields[] = {
    {.name = "attempt", .type = HV_J_INTEGER, .required = true, .min = 1, .max = 1e9},
    {.name = "status", .type = HV_J_STRING, .required = true, .choices = result_statuses},
    {.name = "error", .type = HV_J_STRING, .max_len = 4096},
    {.name = "started_at", .type = HV_J_STRING, .max_len = 40},
    {.name = "finished_at", .type = HV_J_STRING, .max_len = 40},
    {.name = "metrics", .type = HV_J_ARRAY, .max_len = HV_RESULT_MAX_METRICS},
    {.name = "samples", .type = HV_J_ARRAY, .max_len = HV_RESULT_MAX_SAMPLES},
    {.name = "observed", .type = HV_J_OBJECT},
    {.name = "raw", .type = HV_J_STRING, .max_len = HV_RESULT_MAX_RAW},
    {0},
};

static const struct hv_jfield metric_fields[] = {
    {.name = "name", .type = HV_J_STRING, .required = true, .max_len = HV_METRIC_NAME_MAX},
    {.name = "value", .type = HV_J_NUMBER, .required = true},
    {.name = "unit", .type = HV_J_STRING, .max_len = 32},
    {.name = "higher_is_better", .type = HV_J_BOOL},
    {0},
};

const struct hv_jfield hv_result_sample_fields[] = {
    {.name = "metric", .type = HV_J_STRING, .required = true, .max_len = HV_METRIC_NAME_MAX},
    {.name = "t", .type = HV_J_NUMBER, .required = true, .min = -1e6, .max = 1e8},
    {.name = "value", .type = HV_J_NUMBER, .required = true},
    {0},
};

/* Units of quantities that cannot be negative, and what they are; name
 * endings that say the same when a unit is missing (metric_natures.h).
 * A unit ending in "/s" is a rate whatever its numerator. */
struct nature {
    const char *text;
    const char *nature;
};

#define AS_ROW(text, nature) {text, nature},
#define NONE(text, nature)
static const struct nature nonnegative_units[] = {HV_METRIC_NATURES(AS_ROW, NONE)};
static const struct nature nonnegative_names[] = {HV_METRIC_NATURES(NONE, AS_ROW)};
#undef AS_ROW
#undef NONE

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The nature of a metric that cannot be negative, or NULL. */
static const char *nonnegative_nature(const char *name, const char *unit)
{
    if (unit != NULL) {
        if (ends_with(unit, "/s"))
            return "rate";
        for (size_t i = 0; i < sizeof nonnegative_units / sizeof nonnegative_units[0]; i++)
            if (strcmp(unit, nonnegative_units[i].text) == 0)
                return nonnegative_units[i].nature;
    }
    /* A unit of its own (e.g. "offset") is the author's word: a name
     * ending is only read when no unit was given. */
    if (name != NULL && (unit == NULL || *unit == '\0'))
        for (size_t i = 0; i < sizeof nonnegative_names / sizeof nonnegative_names[0]; i++)
            if (ends_with(name, nonnegative_names[i].text))
                return nonnegative_names[i].nature;
    return NULL;
}

bool hv_metric_value_check(const char *name, const char *unit, double value, char *why, size_t len)
{
    if (!isfinite(value)) {
        snprintf(why, len, "must be a finite number");
        return false;
    }
    if (fabs(value) > HV_METRIC_MAX_ABS) {
        snprintf(why, len, "%g is out of range: a metric's magnitude is at most %g", value,
                 HV_METRIC_MAX_ABS);
        return false;
    }
    const char *nature = nonnegative_nature(name, unit);
    if (value < 0 && nature != NULL) {
        snprintf(why, len, "%g must not be negative for a %s%s%s%s", value, nature,
                 unit && *unit ? " (" : "", unit && *unit ? unit : "", unit && *unit ? ")" : "");
        return false;
    }
    return true;
}

bool hv_metric_name_check(const char *name, char *why, size_t len)
{
    size_t n = name != NULL ? strlen(name) : 0;
    if (n == 0) {
        snprintf(why, len, "a metric's name must not be empty");
        return false;
    }
    if (n > HV_METRIC_NAME_MAX) {
        snprintf(why, len, "a metric's name is at most %d bytes", HV_METRIC_NAME_MAX);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c < 0x20 || c == 0x7f) {
            snprintf(why, len, "a metric's name must not hold control characters (byte %zu)", i);
            return false;
        }
    }
    if (name[0] == ' ' || name[n - 1] == ' ') {
        snprintf(why, len, "a metric's name must not begin or end with a blank");
        return false;
    }
    return true;
}

/* Adds an error at path/member when the name in member of row is not a
 * metric's name; returns whether it is one. */
static bool check_name(const json_t *row, const char *path, const char *member, json_t *errors)
{
    char why[160];
    if (hv_metric_name_check(json_string_value(json_object_get(row, member)), why, sizeof why))
        return true;
    char p[JPATH_LEN];
    hv_jpath(p, sizeof p, path, member);
    hv_errors_add(errors, p, "%s", why);
    return false;
}

/* Adds an error for the value member of row at path when it is not
 * acceptable. */
static void check_value(const json_t *row, const char *path, const char *name, const char *unit,
                        json_t *errors)
{
    char why[160];
    if (hv_metric_value_check(name, unit, json_number_value(json_object_get(row, "value")), why,
                              sizeof why))
        return;
    char p[JPATH_LEN];
    hv_jpath(p, sizeof p, path, "value");
    hv_errors_add(errors, p, "%s", why);
}

/* Checks the metrics under base; fills units (name -> unit string) for
 * the samples' check. */
static void check_metrics(const json_t *list, const char *base, json_t *units, json_t *errors)
{
    char at[JPATH_LEN], path[JPATH_LEN];
    hv_jpath(at, sizeof at, base, "metrics");
    size_t i;
    const json_t *row;
    json_array_foreach(list, i, row)
    {
        if (json_array_size(errors) > MAX_ERRORS)
            return;
        hv_jpath_index(path, sizeof path, at, i);
        if (hv_jspec_check(row, path, metric_fields, errors) > 0 ||
            !check_name(row, path, "name", errors))
            continue;
        const char *name = json_string_value(json_object_get(row, "name"));
        const char *unit = json_string_value(json_object_get(row, "unit"));
        if (json_object_get(units, name) != NULL) {
            char p[JPATH_LEN];
            hv_jpath(p, sizeof p, path, "name");
            hv_errors_add(errors, p, "metric \"%s\" appears more than once in this result", name);
            continue;
        }
        json_object_set_new(units, name, unit ? json_string(unit) : json_null());
        check_value(row, path, name, unit, errors);
    }
}

static void check_samples(const json_t *list, const char *base, const json_t *units, json_t *errors)
{
    char at[JPATH_LEN], path[JPATH_LEN];
    hv_jpath(at, sizeof at, base, "samples");
    size_t i;
    const json_t *row;
    json_array_foreach(list, i, row)
    {
        if (json_array_size(errors) > MAX_ERRORS)
            return;
        hv_jpath_index(path, sizeof path, at, i);
        if (hv_jspec_check(row, path, hv_result_sample_fields, errors) > 0 ||
            !check_name(row, path, "metric", errors))
            continue;
        const char *name = json_string_value(json_object_get(row, "metric"));
        check_value(row, path, name, json_string_value(json_object_get(units, name)), errors);
    }
}

/* The observed object is bounded like the raw output: its size is that of
 * its compact JSON, measured without writing it. */
static void check_observed(const json_t *observed, const char *base, json_t *errors)
{
    if (observed == NULL)
        return;
    size_t size = json_dumpb(observed, NULL, 0, JSON_COMPACT | JSON_ENCODE_ANY);
    if (size <= HV_RESULT_MAX_OBSERVED)
        return;
    char p[JPATH_LEN];
    hv_jpath(p, sizeof p, base, "observed");
    hv_errors_add(errors, p, "is %zu bytes as JSON; at most %u are kept", size,
                  HV_RESULT_MAX_OBSERVED);
}

int hv_result_data_check(const json_t *result, const char *path, json_t *errors)
{
    size_t before = json_array_size(errors);
    json_t *units = json_object();
    if (units == NULL) {
        hv_errors_add(errors, path, "out of memory");
        return 1;
    }
    check_metrics(json_object_get(result, "metrics"), path, units, errors);
    check_samples(json_object_get(result, "samples"), path, units, errors);
    json_decref(units);
    check_observed(json_object_get(result, "observed"), path, errors);
    return (int)(json_array_size(errors) - before);
}

int hv_result_body_check(const json_t *doc, json_t *errors)
{
    size_t before = json_array_size(errors);
    if (hv_jspec_check(doc, "", result_fields, errors) > 0)
        return (int)(json_array_size(errors) - before);
    hv_result_data_check(doc, "", errors);
    const char *status = json_string_value(json_object_get(doc, "status"));
    if (strcmp(status, "ok") == 0 && json_array_size(json_object_get(doc, "metrics")) == 0)
        hv_errors_add(errors, "/metrics", "an ok result needs at least one metric");
    static const char *const stamps[] = {"started_at", "finished_at"};
    for (size_t k = 0; k < 2; k++) {
        const json_t *v = json_object_get(doc, stamps[k]);
        if (v != NULL && !hv_iso8601_valid(json_string_value(v))) {
            char p[32];
            snprintf(p, sizeof p, "/%s", stamps[k]);
            hv_errors_add(errors, p, "must be an ISO 8601 UTC time such as 2026-11-29T18:40:12.5Z");
        }
    }
    return (int)(json_array_size(errors) - before);
}
