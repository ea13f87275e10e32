/* query.c — see query.h. */
#include "query.h"

#include "timeutil.h"

#include <stdlib.h>
#include <string.h>

/* Whether s is well-formed UTF-8 as PostgreSQL takes it: no overlong
 * forms, no surrogates, nothing past U+10FFFF. */
static bool utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p != '\0') {
        unsigned c = *p;
        size_t n = c < 0x80                 ? 0
                   : c >= 0xC2 && c <= 0xDF ? 1
                   : c >= 0xE0 && c <= 0xEF ? 2
                   : c >= 0xF0 && c <= 0xF4 ? 3
                                            : 4;
        if (n == 4)
            return false;
        /* The second byte's range rules out overlongs, surrogates and
         * code points past U+10FFFF. */
        unsigned lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
        unsigned hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
        for (size_t i = 1; i <= n; i++, lo = 0x80, hi = 0xBF)
            if (p[i] < lo || p[i] > hi)
                return false;
        p += n + 1;
    }
    return true;
}

/* The value of argument key, NULL when absent. A value that is not UTF-8
 * is named in errors and read as absent: every query value a handler sees
 * comes through here (hv_req_query has no other caller), so none that
 * PostgreSQL would refuse gets that far. */
static const char *value(struct hv_request *req, const char *key, json_t *errors)
{
    const char *v = hv_req_query(req, key);
    if (v != NULL && !utf8_valid(v)) {
        hv_errors_add(errors, key, "must be UTF-8 text");
        return NULL;
    }
    return v;
}

void hv_query_int(struct hv_request *req, const char *key, long min, long max, long def, long *out,
                  json_t *errors)
{
    *out = def;
    const char *v = value(req, key, errors);
    if (v == NULL)
        return;
    char *end;
    long n = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || n < min || n > max)
        hv_errors_add(errors, key, "must be an integer between %ld and %ld", min, max);
    else
        *out = n;
}

void hv_query_number(struct hv_request *req, const char *key, double min, double max, double def,
                     double *out, bool *present, json_t *errors)
{
    *out = def;
    *present = false;
    const char *v = value(req, key, errors);
    if (v == NULL)
        return;
    char *end;
    double x = strtod(v, &end);
    /* isfinite without libm: NaN fails both comparisons. */
    if (*v == '\0' || *end != '\0' || !(x >= min && x <= max))
        hv_errors_add(errors, key, "must be a number between %g and %g", min, max);
    else {
        *out = x;
        *present = true;
    }
}

void hv_query_enum(struct hv_request *req, const char *key, const char *const *choices,
                   const char **out, json_t *errors)
{
    *out = NULL;
    const char *v = value(req, key, errors);
    if (v == NULL)
        return;
    for (const char *const *c = choices; *c != NULL; c++)
        if (strcmp(*c, v) == 0) {
            *out = *c;
            return;
        }
    char list[256] = "";
    for (const char *const *c = choices; *c != NULL; c++) {
        strncat(list, c == choices ? "" : ", ", sizeof list - strlen(list) - 1);
        strncat(list, *c, sizeof list - strlen(list) - 1);
    }
    hv_errors_add(errors, key, "must be one of: %s", list);
}

void hv_query_str(struct hv_request *req, const char *key, size_t max_len, const char **out,
                  json_t *errors)
{
    *out = value(req, key, errors);
    if (*out != NULL && (strlen(*out) == 0 || strlen(*out) > max_len)) {
        hv_errors_add(errors, key, "must have 1 to %zu characters", max_len);
        *out = NULL;
    }
}

void hv_query_time(struct hv_request *req, const char *key, const char **out, json_t *errors)
{
    *out = value(req, key, errors);
    if (*out != NULL && !hv_iso8601_valid(*out)) {
        hv_errors_add(errors, key,
                      "must be an ISO 8601 UTC time such as 2026-11-01 or "
                      "2026-11-01T08:00:00Z");
        *out = NULL;
    }
}

void hv_query_bool(struct hv_request *req, const char *key, bool def, bool *out, json_t *errors)
{
    *out = def;
    const char *v = value(req, key, errors);
    if (v == NULL)
        return;
    if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0)
        *out = true;
    else if (strcmp(v, "0") == 0 || strcmp(v, "false") == 0)
        *out = false;
    else
        hv_errors_add(errors, key, "must be 1, true, 0 or false");
}

bool hv_query_failed(struct hv_request *req, json_t *errors)
{
    if (json_array_size(errors) == 0) {
        json_decref(errors);
        return false;
    }
    hv_reply_problem(req, HV_E_INVALID_REQUEST, "bad query arguments", errors);
    return true;
}
