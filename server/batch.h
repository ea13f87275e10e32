/* batch.h — the claims and the results of many workers, each kind in one
 * transaction.
 *
 * A claim or result handler that may batch sets req->batch (the kind) and
 * req->park and returns; the HTTP layer suspends the connection and
 * queues it here. One thread a kind, on a PostgreSQL connection of its
 * own, takes everything queued (up to --batch), looks up the requests'
 * worker credentials (hv_auth_resolve_many; http.c only hashed them),
 * does the database work of all of it at once (hv_db_job_claim_many,
 * hv_db_result_store_many) and resumes the connections; each handler runs again and answers from
 * req->batch_outcome. While one batch runs, the next one gathers: the
 * busier the queue, the more requests share a statement and a commit, and
 * an idle server runs each request at once. A batch that follows one of
 * several requests waits up to --batch-linger-us until as many are
 * queued. A stored result that also claims its worker's next job
 * (req->claim_next, ?claim=true) goes on from the result thread to the
 * claim thread, which gives its handler req->claim_outcome. */
#ifndef HV_SERVER_BATCH_H
#define HV_SERVER_BATCH_H

#include "request.h"

#include <stdbool.h>

/** The kinds of batch (req->batch). */
enum hv_batch_kind {
    HV_BATCH_NONE,
    HV_BATCH_CLAIM,  /**< a claim: req->worker_target, req->worker_id */
    HV_BATCH_RESULT, /**< a result: req->batch_item is a struct hv_result_item */
    HV_BATCH_KINDS
};

/** Starts a thread per kind. Returns 0, or -1 when one cannot start. */
int hv_batch_start(void);

/** Whether requests of kind go through a batch: started, not stopping,
 *  and --batch above 1. */
bool hv_batch_on(enum hv_batch_kind kind);

/** Queues req (of kind req->batch), whose connection the HTTP layer has
 *  just suspended; its thread resumes it once req->batch_outcome is set. */
void hv_batch_enqueue(struct hv_request *req);

/** Answers what is queued and stops the threads. */
void hv_batch_stop(void);

#endif
