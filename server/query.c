/* query.c — see query.h. */
#include "query.h"

#include "timeutil.h"

#include <stdlib.h>
#include <string.h>

void hv_query_int(struct hv_request *req, const char *key, long min, long max, long def, long *out,
                  json_t *errors)
{
    *out = def;
    const char *v = hv_req_query(req, key);
    if (v == NULL)
        return;
    char *end;
    long n = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || n < min || n > max)
        hv_errors_add(errors, key, "must be an integer between %ld and %ld", min, max);
    else
        *out = n;
}

void hv_query_enum(struct hv_request *req, const char *key, const char *const *choices,
                   const char **out, json_t *errors)
{
    *out = NULL;
    const char *v = hv_req_query(req, key);
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
    *out = hv_req_query(req, key);
    if (*out != NULL && (strlen(*out) == 0 || strlen(*out) > max_len)) {
        hv_errors_add(errors, key, "must have 1 to %zu characters", max_len);
        *out = NULL;
    }
}

void hv_query_time(struct hv_request *req, const char *key, const char **out, json_t *errors)
{
    *out = hv_req_query(req, key);
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
    const char *v = hv_req_query(req, key);
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
