/* client.h — the worker's side of the worker protocol (docs/api.md,
 * "Worker protocol"): register, claim, heartbeat, release, result.
 *
 * Each call sends one request and sorts the answer into a status the
 * worker's loop acts on, so no caller looks at HTTP codes. A client is not
 * thread safe: the worker uses it from its main thread only. */
#ifndef HV_WORKER_CLIENT_H
#define HV_WORKER_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct hv_client;

/** What became of a call. */
enum hv_call {
    HV_CALL_OK,        /**< done (claim: a job was handed out) */
    HV_CALL_NO_WORK,   /**< claim only: nothing to do now (204) */
    HV_CALL_STALE,     /**< 409: the attempt is no longer this worker's */
    HV_CALL_RETRY,     /**< no answer, or a 5xx/429: try again later */
    HV_CALL_REJECTED,  /**< another 4xx: the request itself is wrong */
    HV_CALL_AUTH,      /**< 401/403: the token is missing, unknown or of the wrong role */
    HV_CALL_NOT_FOUND, /**< 404: e.g. the target id is unknown to the server */
};

/** A claimed job. Strings and params point into doc, which the job owns. */
struct hv_job {
    long long id;
    int attempt;
    long long plan_id;
    const char *configuration; /**< "" when absent */
    int lease_seconds;
    const char *workload_id; /**< the workload's id in the plan */
    const char *kind;
    const char *engine;   /**< "builtin" when absent */
    const json_t *params; /**< may be NULL */
    json_t *doc;          /**< the claim answer (owned) */
};

/** Creates a client of the server at base_url with a worker token. Returns
 *  NULL when memory runs out. The strings are copied. */
struct hv_client *hv_client_new(const char *base_url, const char *token);

/** Frees the client; NULL is allowed. */
void hv_client_free(struct hv_client *c);

/** A one-line description of the last call's failure (HTTP status and
 *  problem detail, or the transport error), for logs. Owned by the client,
 *  valid until the next call. */
const char *hv_client_last_error(const struct hv_client *c);

/** The HTTP status of the last call; 0 when it got no answer. */
long hv_client_last_status(const struct hv_client *c);

/** POST /api/v1/workers/register with name, kind, facts and fingerprint
 *  (borrowed). On HV_CALL_OK sets *target_id and copies the fingerprint
 *  the server answered with (possibly recomputed) into server_fp (at most
 *  fp_len bytes, "" when absent). */
enum hv_call hv_client_register(struct hv_client *c, const char *name, const char *kind,
                                const json_t *facts, const char *fingerprint, long long *target_id,
                                char *server_fp, size_t fp_len);

/** POST /api/v1/jobs/claim. On HV_CALL_OK fills *job (release it with
 *  hv_job_clear()); a 200 answer without a well-formed job counts as
 *  HV_CALL_RETRY (the server is not speaking the protocol we know). */
enum hv_call hv_client_claim(struct hv_client *c, long long target_id, struct hv_job *job);

/** Releases what a job holds; the struct may be reused. */
void hv_job_clear(struct hv_job *job);

/** POST /api/v1/jobs/{id}/heartbeat. On HV_CALL_OK sets *cancel from the
 *  answer and, when the answer has lease_seconds, *lease_seconds. */
enum hv_call hv_client_heartbeat(struct hv_client *c, const struct hv_job *job, bool *cancel,
                                 int *lease_seconds);

/** POST /api/v1/jobs/{id}/release with the reason. */
enum hv_call hv_client_release(struct hv_client *c, const struct hv_job *job, const char *reason);

/** POST /api/v1/jobs/{id}/result with body (borrowed; see
 *  hv_engine_result_to_json()). 200 (a repeated upload) counts as
 *  HV_CALL_OK like 201, so uploads can be retried safely. */
enum hv_call hv_client_upload_result(struct hv_client *c, const struct hv_job *job, json_t *body);

#endif
