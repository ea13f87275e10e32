/* batch.h — the claims and the results of many workers, each kind in one
 * transaction.
 *
 * A claim or result handler that may batch sets req->batch (the kind) and
 * req->park and returns; the HTTP layer suspends the connection and
 * queues it here. A thread of the kind, on a PostgreSQL connection of
 * its own, takes everything queued (up to --batch), looks up the
 * requests' worker credentials (hv_auth_resolve_many; http.c only hashed
 * them), does the database work of all of it at once
 * (hv_db_job_claim_many, hv_db_result_store_many) and resumes the
 * connections; each handler runs again and answers from
 * req->batch_outcome. While one batch runs, the next one gathers: the
 * busier the queue, the more requests share a statement and a commit, and
 * an idle server runs each request at once. A batch that follows one of
 * several requests waits up to --batch-linger-us until as many are
 * queued. Results have --result-lanes threads taking from their queue,
 * each on a connection of its own: while one lane waits for its commit
 * another stores the next batch. A stored result that also claims its
 * worker's next job (req->claim_next, ?claim=true) gets
 * req->claim_outcome from the lane that stored it, in one statement with
 * the batch's others. A large read (a result with its samples: seconds of
 * PostgreSQL) goes to a lane of its own, one request at a time, so a pool
 * thread never holds the other connections it serves (a health probe)
 * while such a statement runs. */
#ifndef HV_SERVER_BATCH_H
#define HV_SERVER_BATCH_H

#include "request.h"

#include <stdbool.h>

/** The kinds of batch (req->batch). */
enum hv_batch_kind {
    HV_BATCH_NONE,
    HV_BATCH_CLAIM,  /**< a claim: req->worker_target, req->worker_id */
    HV_BATCH_RESULT, /**< a result: req->batch_item is a struct hv_result_item */
    HV_BATCH_READ,   /**< a large read: its lane runs req->batch_run(req), one at a time */
    HV_BATCH_KINDS
};

/** The most threads that store results (--result-lanes). */
#define HV_BATCH_LANES_MAX 8

/** Starts a thread per kind, --result-lanes of them for results. Returns 0, or -1 when one cannot
 * start. */
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
