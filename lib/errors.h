/* errors.h — the closed set of error codes hvbench answers with.
 *
 * Every failure a client can see maps to one code; each code has an HTTP
 * status, a stable name (the "code" member of a problem document), a title
 * and a hint that tells the operator what to do. Problem documents follow
 * RFC 9457. */
#ifndef HV_ERRORS_H
#define HV_ERRORS_H

#include <jansson.h>

enum hv_err {
    HV_E_INTERNAL = 0,
    HV_E_BAD_JSON,
    HV_E_INVALID_PLAN,
    HV_E_IMPOSSIBLE_PLAN,
    HV_E_INVALID_REQUEST,
    HV_E_BODY_TOO_LARGE,
    HV_E_URI_TOO_LONG,
    HV_E_UNSUPPORTED_MEDIA,
    HV_E_NOT_FOUND,
    HV_E_METHOD_NOT_ALLOWED,
    HV_E_UNAUTHORIZED,
    HV_E_FORBIDDEN,
    HV_E_NOT_OWNER,
    HV_E_STALE_ATTEMPT,
    HV_E_CONFLICT,
    HV_E_IDEMPOTENCY_REUSED,
    HV_E_DB_UNAVAILABLE,
    HV_E_NOT_READY,
    HV_E_BUSY,
    HV_E_TARGET_HELD,
    HV_E_UNKNOWN_METRIC,
    HV_E_REQUEST_TIMEOUT,
    HV_E_NO_MATCHING_HOST,
    HV_E__COUNT
};

/** What is known about one code. All strings are static. */
struct hv_err_info {
    const char *name;     /**< stable machine name, e.g. "invalid_plan" */
    unsigned http_status; /**< the status the server answers with */
    const char *title;    /**< short human summary */
    const char *hint;     /**< what the client should do about it */
};

/** Returns the description of code (never NULL; out-of-range codes give
 *  the description of HV_E_INTERNAL). */
const struct hv_err_info *hv_err_info(enum hv_err code);

/** Builds a problem document for code. detail may be NULL. errors, when not
 *  NULL, is an array of {"path","message"} objects and is stolen. Returns a
 *  new reference. */
json_t *hv_problem_new(enum hv_err code, const char *detail, json_t *errors);

/** Appends {"path": path, "message": printf(fmt, ...)} to the array errors. */
void hv_errors_add(json_t *errors, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
