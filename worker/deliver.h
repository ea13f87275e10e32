/* deliver.h — getting a finished result to the server, whatever happens
 * on the way.
 *
 * A result is first fitted to the server's limits (announced at
 * registration): per-second samples past max_samples are averaged down,
 * the raw tool output is cut, measured after JSON escaping, with a marker
 * saying what was kept; observed records both. It is then written to the
 * outbox (state.h) and sent until the server answers: transport failures
 * and 5xx are retried with backoff (1 s doubling to 30 s) for as long as
 * it takes, also across a restart of the worker. A result that cannot be
 * kept on disk (a full disk) is held in memory, written again at every
 * try, and on a shutdown sent for up to 10 s more before it is given up
 * as lost; the log says "kept" only of a result that is durably on disk.
 * A refusal (400, 413)
 * ends the job at once with an error result naming the server's reason,
 * so the real cause reaches the plan instead of a lapsed lease. */
#ifndef HV_WORKER_DELIVER_H
#define HV_WORKER_DELIVER_H

#include "worker/client.h"

#include <jansson.h>
#include <stddef.h>

/** What the server accepts in one result upload. */
struct hv_result_limits {
    size_t max_bytes;   /**< the whole serialised body */
    size_t max_samples; /**< elements of "samples" */
    size_t max_raw;     /**< bytes of "raw" (unescaped) */
};

/** Limits of a server that did not announce any (the defaults of
 *  hvbench-server before it did). */
#define HV_RESULT_LIMITS_DEFAULT ((struct hv_result_limits){1u << 20, 200000, 1u << 20})

/** Sets the limits later deliveries fit results to. */
void hv_deliver_set_limits(const struct hv_result_limits *limits);

/** Fits body (a result upload, modified in place) to limits as described
 *  above. Returns 0 when it fits, -1 when it cannot be made to (then body
 *  is unchanged in its metrics; the caller sends an error result). */
int hv_result_fit(json_t *body, const struct hv_result_limits *limits);

/** How a delivery ended. */
enum hv_delivery {
    HV_DELIVERED,     /**< the server stored it (or had it already) */
    HV_REFUSED,       /**< refused; an error result with the reason was stored instead */
    HV_STALE,         /**< the attempt is no longer running (cancelled, re-queued) */
    HV_UNDELIVERABLE, /**< not this worker's attempt any more, or the job is gone;
                           kept on disk as *.undeliverable */
    HV_KEPT,          /**< a shutdown came first: it stays in the outbox for the next start */
    HV_LOST,          /**< a shutdown came first and it could not be kept on disk, nor
                           delivered within the grace the shutdown leaves: lost (logged);
                           the job runs again */
};

/** Fits body to the limits, keeps it in the outbox and sends it to
 *  POST /api/v1/jobs/{job_id}/result until the server answers. body is
 *  modified; still owned by the caller. */
enum hv_delivery hv_deliver(struct hv_client *c, long long job_id, int attempt, json_t *body);

/** Sends every result the outbox holds (left by a crash, an outage or a
 *  shutdown), oldest first. Returns 0 when the outbox is empty, -1 when a
 *  shutdown interrupted it. */
int hv_deliver_pending(struct hv_client *c);

#endif
