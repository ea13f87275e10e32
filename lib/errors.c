/* errors.c — the error registry; see errors.h. */
#include "errors.h"

#include <stdarg.h>
#include <stdio.h>

/* One row per code, in enum order. A hint holds for every use of its
 * code: only codes whose cause can pass (503, 500) say "retry". */
static const struct hv_err_info registry[HV_E__COUNT] = {
    [HV_E_INTERNAL] = {"internal", 500, "Internal error",
                       "the server log has the details; retry later"},
    [HV_E_BAD_JSON] = {"bad_json", 400, "Malformed JSON",
                       "send one well-formed JSON document (UTF-8, no duplicate keys)"},
    [HV_E_INVALID_PLAN] = {"invalid_plan", 400, "Invalid plan",
                           "fix the fields named in errors[] and submit again"},
    [HV_E_IMPOSSIBLE_PLAN] = {"impossible_plan", 422, "Plan cannot be run",
                              "the plan is well formed but names something this "
                              "installation cannot do; see errors[]"},
    [HV_E_INVALID_REQUEST] = {"invalid_request", 400, "Invalid request",
                              "fix the fields named in errors[]"},
    [HV_E_BODY_TOO_LARGE] = {"body_too_large", 413, "Request body too large",
                             "send a smaller body; the limit is in the detail"},
    [HV_E_URI_TOO_LONG] = {"uri_too_long", 414, "URI too long", "use a shorter URL"},
    [HV_E_UNSUPPORTED_MEDIA] = {"unsupported_media_type", 415, "Unsupported media type",
                                "send Content-Type: application/json"},
    [HV_E_NOT_FOUND] = {"not_found", 404, "Not found", "check the URL and the id"},
    [HV_E_METHOD_NOT_ALLOWED] = {"method_not_allowed", 405, "Method not allowed",
                                 "see the Allow header for the methods of this resource"},
    [HV_E_UNAUTHORIZED] = {"unauthorized", 401, "Authentication required",
                           "send Authorization: Bearer <token>; tokens are made with "
                           "'hvbench-server token create'"},
    [HV_E_FORBIDDEN] = {"forbidden", 403, "Token lacks the role for this",
                        "use a token whose role allows this request"},
    /* The detail names the owner: the token to use instead. */
    [HV_E_NOT_OWNER] = {"not_owner", 403, "Plan belongs to another token",
                        "cancel or retry a plan with the token that submitted it (the detail "
                        "names it) or with an admin token; a plan without a submitter is an "
                        "admin's"},
    [HV_E_STALE_ATTEMPT] = {"stale_attempt", 409, "Job attempt is no longer yours",
                            "the lease expired or the job was cancelled; drop this "
                            "attempt and claim new work"},
    /* A plan that already ended, a token name taken, an output imported
     * before: none of them goes away by itself, so the hint must not
     * suggest retrying. */
    [HV_E_CONFLICT] = {"conflict", 409, "Conflict",
                       "the request contradicts what is stored (the detail says what); sending "
                       "it again unchanged gets the same answer"},
    [HV_E_IDEMPOTENCY_REUSED] = {"idempotency_key_reused", 409,
                                 "Idempotency key used for another request",
                                 "use a new Idempotency-Key for a different plan"},
    [HV_E_DB_UNAVAILABLE] = {"db_unavailable", 503, "Database unavailable",
                             "retry shortly; the server reconnects by itself"},
    [HV_E_NOT_READY] = {"not_ready", 503, "Not ready",
                        "run 'hvbench-server migrate' and check the database"},
    [HV_E_BUSY] = {"server_busy", 503, "Too many connections",
                   "retry after Retry-After seconds; spread workers over more servers or raise "
                   "--max-connections"},
    [HV_E_TARGET_HELD] = {"target_held", 409, "Target held by another worker",
                          "one worker holds a target at a time: stop the other worker (it signs "
                          "off on SIGTERM), wait until it has been silent for --worker-live "
                          "seconds, or free the target as an admin"},
    [HV_E_UNKNOWN_METRIC] = {"unknown_metric", 404, "Metric never measured",
                             "check the metric's name: metrics lists those the target has"},
    [HV_E_REQUEST_TIMEOUT] = {"request_timeout", 408, "Request body too slow",
                              "send the whole body within the server's --body-timeout of the "
                              "request's head; retry on a new connection"},
    [HV_E_NO_MATCHING_HOST] = {"no_matching_host", 422, "No host matches",
                               "check the selector or the names: GET /api/v1/targets?kind=host "
                               "lists the hosts with their labels"},
};

const struct hv_err_info *hv_err_info(enum hv_err code)
{
    if ((unsigned)code >= HV_E__COUNT)
        code = HV_E_INTERNAL;
    return &registry[code];
}

json_t *hv_problem_new(enum hv_err code, const char *detail, json_t *errors)
{
    const struct hv_err_info *info = hv_err_info(code);
    char type[128];
    snprintf(type, sizeof type, "https://hvbench.dev/problems/%s", info->name);
    json_t *p = json_object();
    json_object_set_new(p, "type", json_string(type));
    json_object_set_new(p, "title", json_string(info->title));
    json_object_set_new(p, "status", json_integer(info->http_status));
    json_object_set_new(p, "code", json_string(info->name));
    json_object_set_new(p, "hint", json_string(info->hint));
    if (detail != NULL)
        json_object_set_new(p, "detail", json_string(detail));
    if (errors != NULL)
        json_object_set_new(p, "errors", errors);
    return p;
}

void hv_errors_add(json_t *errors, const char *path, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *e = json_object();
    json_object_set_new(e, "path", json_string(path));
    json_object_set_new(e, "message", json_string(msg));
    json_array_append_new(errors, e);
}
