/* request.h — one HTTP request as handlers see it, and the ways to answer
 * (request.c).
 *
 * The HTTP layer (http.c) accumulates the body, captures the query and the
 * headers, routes the request and checks its token; a handler reads what
 * it needs from struct hv_request and sets exactly one answer with
 * hv_reply_json() or hv_reply_problem(). The answer is queued on the final
 * access-handler call, so keep-alive stays on. Nothing here touches
 * libmicrohttpd: a unit test builds a request and calls a handler. */
#ifndef HV_SERVER_REQUEST_H
#define HV_SERVER_REQUEST_H

#include "errors.h"
#include "jspec.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct MHD_Connection;

/** Key/value pairs of a request (query arguments or headers), captured
 *  once: the strings are borrowed (from libmicrohttpd, valid until the
 *  request completes; in tests, from the test). */
struct hv_kv_list {
    const char **items; /**< key0, value0, key1, value1 ... (owned array) */
    size_t n;           /**< pairs */
    size_t cap;
};

/** Token roles, in no particular order; admin may do everything. */
enum hv_role {
    HV_ROLE_NONE = 0, /**< no (valid) token */
    HV_ROLE_READ,
    HV_ROLE_WORKER,
    HV_ROLE_SUBMIT,
    HV_ROLE_ADMIN,
};

#define HV_MAX_PATH_IDS 2

struct hv_request {
    struct MHD_Connection *conn; /**< the HTTP layer's; NULL in unit tests */
    const char *method;
    const char *url;
    struct hv_kv_list query;   /**< query arguments, decoded */
    struct hv_kv_list headers; /**< request headers (names compared without case) */
    char *body;                /**< the request body, NUL-terminated; owned by the layer */
    size_t body_len;
    size_t body_cap;
    size_t body_limit;            /**< the route's body cap (hv_route_body_limit) */
    bool too_large;               /**< the body passed the cap */
    int64_t ids[HV_MAX_PATH_IDS]; /**< {id} segments of the path, in order */
    enum hv_role role;            /**< the caller's role (after auth) */
    int64_t token_id;             /**< the caller's token, 0 without */
    int64_t worker_id;            /**< with a worker credential (hvw_...): the worker, else 0 */
    int64_t worker_target;        /**< and the target it holds */
    /* The answer. */
    unsigned status;
    json_t *reply;                 /**< owned; NULL for an empty body */
    char *text;                    /**< owned; a text body instead of reply (hv_reply_text) */
    struct hv_kept_text *kept;     /**< owned; or a JSON text kept elsewhere (hv_reply_kept) */
    struct hv_fixed_answer *fixed; /**< or a fixed answer (hv_reply_fixed) */
    const char *content_type;      /**< static string */
    char location[128];            /**< Location header when not empty */
    const char *allow;             /**< Allow header for 405 */
    /* Long-polling (waiters.h): a handler with nothing to answer yet sets
     * park_kind/park_key, keeps wait_deadline and returns; the HTTP layer
     * suspends the connection and runs the handler again when woken. */
    const void *route;      /**< the matched route, kept for re-runs */
    bool park;              /**< the handler asks to wait */
    bool parked;            /**< currently waiting (waiters.c) */
    int park_kind;          /**< enum hv_wait_kind */
    int64_t park_key;       /**< group id for HV_WAIT_GROUP */
    double wait_deadline;   /**< monotonic deadline; 0 before the first run */
    unsigned long wait_seq; /**< notification counter at the last look */
    /* A request handed to a batch (batch.h): the handler sets batch with
     * park; when it runs again, batch_outcome says what came of it. */
    int batch;                                 /**< enum hv_batch_kind; 0: none */
    int batch_outcome;                         /**< 0 until the batch answered */
    json_t *batch_job;                         /**< owned: the job a claim got */
    int64_t batch_target;                      /**< the target a claim's body names, 0: none */
    void *batch_item;                          /**< owned: what a result's batch stores */
    void (*batch_item_free)(void *item);       /**< frees batch_item */
    void (*batch_run)(struct hv_request *req); /**< HV_BATCH_READ: the lane's work */
    bool claim_next;   /**< a result that also claims the next job (?claim=true) */
    int claim_outcome; /**< its claim's enum hv_claim_outcome once a claim batch ran, else 0 */
    /* A worker credential whose lookup waits for the request's batch
     * (auth.h, hv_auth_defer): until then only its hash is known. */
    bool auth_deferred;            /**< not looked up yet */
    char auth_hash[67];            /**< its hash ("\\x...") */
    int auth_refused;              /**< 0, or the enum hv_auth_result the batch's lookup came to */
    char auth_detail[192];         /**< why, with HV_AUTH_ENDED */
    struct hv_request *batch_next; /**< the batch's queue */
    const char *extra_header;      /**< one more header name (a static string) */
    const char *extra_value;       /**< and its value */
    bool close;                    /**< close the connection after the answer */
    double started;                /**< hv_monotonic() when the headers came (for /metrics) */
};

/** Parses the body as one JSON document (duplicate keys refused). On
 *  failure answers 400 and returns NULL. The result is a new reference. */
json_t *hv_req_json(struct hv_request *req);

/** A handler's checks of a body beyond its jspec table: called with the
 *  object, the values bound from it (dest) and the problems found so far
 *  (none when the table's checks passed); appends problems to errors. */
typedef void hv_body_check_fn(const json_t *doc, const void *dest, json_t *errors);

/** Checks doc against fields and binds its values into dest
 *  (hv_jspec_parse), then runs more (NULL for none) when doc is an object.
 *  When any problem was found, answers 400 invalid_request with detail
 *  and the problems, and returns false. */
bool hv_req_fits(struct hv_request *req, const json_t *doc, const struct hv_jfield *fields,
                 void *dest, hv_body_check_fn *more, const char *detail);

/** hv_req_json(), then hv_req_fits(). Returns the body, which holds the
 *  strings and values bound into dest (json_decref it after their last
 *  use), or NULL when an answer was set. */
json_t *hv_req_body(struct hv_request *req, const struct hv_jfield *fields, void *dest,
                    hv_body_check_fn *more, const char *detail);

/** The value of a query argument, or NULL. Borrowed (see hv_kv_list). */
const char *hv_req_query(struct hv_request *req, const char *key);

/** The value of a request header (name compared without case), or NULL.
 *  Borrowed (see hv_kv_list). */
const char *hv_req_header(struct hv_request *req, const char *name);

/** Appends key and value (borrowed) to list. Returns 0, or -1 when memory
 *  runs out. */
int hv_req_kv_add(struct hv_kv_list *list, const char *key, const char *value);

/** Frees what a request owns (body, answer, captured lists) and req
 *  itself, which must come from calloc. NULL is fine. */
void hv_request_free(struct hv_request *req);

/** Answers status with body (stolen; NULL for no body). */
void hv_reply_json(struct hv_request *req, unsigned status, json_t *body);

/** An answer that is the same every time (status, type and text all
 *  static): the HTTP layer builds its response once, on first use, keeps
 *  it in response and sends that one to every request (http.c). */
struct hv_fixed_answer {
    unsigned status;
    const char *content_type;
    const char *text;
    void *_Atomic response; /**< the HTTP layer's; NULL until first sent */
};

/** Answers with the fixed answer a. */
void hv_reply_fixed(struct hv_request *req, struct hv_fixed_answer *a);

/** Answers status with text (stolen, NUL-terminated) as the body, of
 *  content_type (a static string): for the few answers that are not JSON. */
void hv_reply_text(struct hv_request *req, unsigned status, const char *content_type, char *text);

/** A JSON answer whose text is kept elsewhere (a database result): sent
 *  as prefix, then len bytes of text, then suffix, without copying it. */
struct hv_kept_text {
    const char *prefix;           /**< static string */
    const char *text;             /**< borrowed from owner */
    size_t len;                   /**< bytes of text */
    const char *suffix;           /**< static string */
    void (*release)(void *owner); /**< frees owner, and so text; any thread */
    void *owner;
};

/** Answers status with the JSON text k describes (copied; k->owner is
 *  released once the answer is sent or replaced, or at once when memory
 *  runs out). */
void hv_reply_kept(struct hv_request *req, unsigned status, const struct hv_kept_text *k);

/** Frees k: releases its owner, then k itself. NULL is fine. */
void hv_kept_text_free(struct hv_kept_text *k);

/** Answers with the problem document of code. detail may be NULL; errors
 *  (stolen) is an array of {"path","message"} or NULL. */
void hv_reply_problem(struct hv_request *req, enum hv_err code, const char *detail, json_t *errors);

/** Answers 503/500 for a failed database call. */
void hv_reply_db_failure(struct hv_request *req, int db_status);

/** Answers a lookup by its database status: 200 with obj (stolen), 404
 *  not_found with detail what (HV_DB_NONE), or the failure. */
void hv_reply_one(struct hv_request *req, int db_status, json_t *obj, const char *what);

/** Answers a list by its database status: 200 with {"items": items}
 *  (stolen), 404 not_found with detail what (HV_DB_NONE, when what is not
 *  NULL), or the failure. */
void hv_reply_items(struct hv_request *req, int db_status, json_t *items, const char *what);

/** Answers a page of items read with one row more than limit: that row
 *  tells a next page exists, whose cursor ("next_cursor", else null) is
 *  the member key of the page's last item. 200 with {"items",
 *  "next_cursor"}; takes items. */
void hv_reply_page(struct hv_request *req, json_t *items, long limit, const char *key);

/** Answers a heartbeat (of a job or a step) by its database status: 200
 *  with lease_seconds, cancel and the server's time; HV_DB_NONE: 409
 *  stale_attempt with detail stale; else the failure. */
void hv_reply_heartbeat(struct hv_request *req, int db_status, int lease_seconds, bool cancel,
                        const char *stale);

#endif
