/* waiters.h — long-polling: requests that wait for something to happen.
 *
 * A handler that finds nothing to answer yet (no job to claim, a group
 * not yet complete) parks its request here with a deadline; libmicrohttpd
 * suspends the connection, so no thread is held. One listener thread owns
 * a dedicated PostgreSQL connection that LISTENs on hv_jobs and hv_group;
 * a notification resumes the matching requests, which then run their
 * handler again. A slow fallback tick resumes claim waiters every few
 * seconds (leases expire without a notification) and expired waiters
 * answer with "nothing yet". A lost LISTEN connection (a database restart
 * or failover) is opened again every half second, to whichever server the
 * connection string finds; once it is, every parked request is woken to
 * look again, since what was notified meanwhile is lost. */
#ifndef HV_SERVER_WAITERS_H
#define HV_SERVER_WAITERS_H

#include "request.h"

#include <stdbool.h>
#include <stdint.h>

/** What a waiting request waits for. */
enum hv_wait_kind {
    HV_WAIT_JOBS,  /**< any job becoming claimable */
    HV_WAIT_GROUP, /**< a change in group `key` */
};

/** Starts the listener thread on its own connection to conninfo. Returns
 *  0, or -1 when the thread cannot start (a lost database connection is
 *  retried in the background, with the fallback tick still running). */
int hv_waiters_start(const char *conninfo);

/** Has the listener also LISTEN on hv_webhooks and call fn on each of its
 *  notifications (the webhook sender's wake-up). Call before
 *  hv_waiters_start(). */
void hv_waiters_on_webhooks(void (*fn)(void));

/** Resumes every waiting request and stops the listener. */
void hv_waiters_stop(void);

/** Parks req, whose connection the HTTP layer has just suspended, until a
 *  matching notification, the fallback tick or deadline (CLOCK_MONOTONIC
 *  seconds, see hv_monotonic()); then resumes it, and the HTTP layer runs
 *  its handler again. Handlers do not call this: they set req->park_* and
 *  return without an answer. */
void hv_waiters_park(struct hv_request *req, enum hv_wait_kind kind, int64_t key, double deadline);

/** The notification counter of kind: read it before looking in the
 *  database and store it in req->wait_seq, so hv_waiters_park() can tell
 *  that a notification slipped in between. */
unsigned long hv_waiters_seq(enum hv_wait_kind kind);

/** Whether the server is shutting down (handlers then answer at once). */
bool hv_waiters_stopping(void);

/** Forgets req if it is parked (its connection is going away). */
void hv_waiters_forget(struct hv_request *req);

/** Number of parked requests (for /metrics and tests). */
unsigned hv_waiters_count(void);

#endif
