/* routes.h — the route table: every endpoint of the server in one place. */
#ifndef HV_SERVER_ROUTES_H
#define HV_SERVER_ROUTES_H

#include "request.h"

/** Who may call a route. */
enum hv_access {
    HV_ACCESS_OPEN,   /**< anyone (health checks) */
    HV_ACCESS_READ,   /**< anyone, or any token when --read-auth token */
    HV_ACCESS_SUBMIT, /**< submit or admin */
    HV_ACCESS_WORKER, /**< worker or admin */
    HV_ACCESS_JOB,    /**< a registered worker's own credential (hvw_...) only */
    HV_ACCESS_ADMIN,  /**< admin */
};

typedef void (*hv_handler)(struct hv_request *req);

struct hv_route {
    const char *method;
    const char *pattern; /**< path; "{id}" segments match a positive integer */
    hv_handler handler;
    enum hv_access access;
};

/** Whether route's calls go through a batch (batch.h), whose thread looks
 *  their worker credentials up: a claim, a result. */
bool hv_route_batched(const struct hv_route *route);

/** Finds the route for method and path, filling req->ids. Returns NULL
 *  when none matches; then *allow is set to the methods the path has (a
 *  static string) or NULL when the path is unknown. */
const struct hv_route *hv_route_find(const char *method, const char *path, struct hv_request *req,
                                     const char **allow);

/** The largest body a request for method and path may send:
 *  --max-result-body as given for result uploads, host telemetry and plan
 *  imports (even when it is below --max-body), else --max-body. */
size_t hv_route_body_limit(const char *method, const char *path);

/** Number of rows in the route table. */
size_t hv_route_count(void);

/** Row i of the route table (i < hv_route_count()). */
const struct hv_route *hv_route_at(size_t i);

/** The index in the route table of a row hv_route_find() returned. */
int hv_route_index(const struct hv_route *route);

/** Whether a caller with role may use a route of access; worker_credential
 *  says the caller authenticated with a worker credential (hvw_...). */
bool hv_access_allows(enum hv_access access, enum hv_role role, bool worker_credential,
                      bool read_needs_token);

#endif
