/* metrics.h — what the server counts about itself, and the Prometheus text
 * of it (GET /metrics, h_metrics.c).
 *
 * Every counter is a C11 atomic, so any thread of the pool adds to it
 * without a lock. A scrape reads each counter on its own: it is not a
 * snapshot across counters (a request that finishes during a scrape may
 * show in one and not yet in another), which Prometheus expects. Counters
 * start at 0 with the process; rate() and increase() handle restarts. */
#ifndef HV_SERVER_METRICS_H
#define HV_SERVER_METRICS_H

#include <stdbool.h>
#include <stddef.h>

/** Room for this many rows of the route table (routes.c checks at compile
 *  time that its table fits). */
#define HV_METRICS_MAX_ROUTES 64

/** The route of a request that is not a row of the route table. */
enum {
    HV_METRICS_ROUTE_WEB = -1,  /**< a file of the web page (static.c) */
    HV_METRICS_ROUTE_NONE = -2, /**< matched no route: 404, 405, or refused
                                     before routing (413, 414) */
};

/** Names the slot of route index i (0 <= i < HV_METRICS_MAX_ROUTES) by
 *  its method and path template (static strings), for the labels of
 *  /metrics. The HTTP layer names every row of the route table at start,
 *  so this registry needs nothing from the route table itself. Not thread
 *  safe: call before serving. */
void hv_metrics_name_route(size_t i, const char *method, const char *pattern);

/** Counts one answered request: route is its index in the route table
 *  (hv_route_index()) or one of the HV_METRICS_ROUTE_* values; status the
 *  HTTP status sent; seconds the time from its headers to its answer (a
 *  long poll's wait included). Thread safe, lock-free. */
void hv_metrics_request(int route, unsigned status, double seconds);

/** Counts one answered claim: got_job when it handed out a job, false when
 *  it answered 204 (nothing to run). */
void hv_metrics_claim(bool got_job);

/** A job handed out with a result's answer (?claim=true). */
void hv_metrics_claim_with_result(void);
/** Kinds of batch counted (enum hv_batch_kind of batch.h: 1 claim, 2 result). */
#define HV_METRICS_BATCH_KINDS 3
/** Counts one batch of kind (batch.h) and the requests it took. */
void hv_metrics_batch(int kind, size_t requests);

/** Counts one GET /api/v1/plans/{id} while answers are kept
 *  (--plan-cache-ms > 0): hit when a kept answer was sent, false when the
 *  plan was read from the database. */
void hv_metrics_plan_cache(bool hit);

/** Counts one result stored (not a replayed upload) with its samples. */
void hv_metrics_result_stored(size_t samples);

/** Counts the run time of a job whose result was stored: ok when the job
 *  succeeded; seconds from its started_at to its finished_at (a negative
 *  or NaN value is not counted). */
void hv_metrics_job_duration(bool ok, double seconds);

/** Counts one database connection of a server thread opened again after
 *  it was lost. */
void hv_metrics_db_reconnect(void);

/** Counts one transaction run again from the start on a new connection
 *  after a lost connection cut it before its COMMIT (hv_db_txn()). */
void hv_metrics_db_txn_retry(void);

/** Counts one transaction whose connection was lost once its COMMIT was
 *  sent: its outcome is unknown, and it is not run again. */
void hv_metrics_db_commit_unknown(void);

/** Counts one LISTEN connection (waiters.c) opened again after it was
 *  lost. */
void hv_metrics_listen_reconnect(void);

/** Why a connection was closed at once, without an answer (conns.h). */
enum hv_metrics_refusal {
    HV_REFUSED_ADDRESS, /**< its address held --max-per-address already */
    HV_REFUSED_ROOM,    /**< untrusted addresses held --max-connections already */
    HV_REFUSED_BODIES,  /**< its address was sending --max-bodies-per-address bodies */
};

/** Counts one connection refused at once. */
void hv_metrics_conn_refused(enum hv_metrics_refusal why);

/** Counts one request answered 503 at its head because its untrusted
 *  address was sending --max-bodies-per-address bodies already. */
void hv_metrics_body_refused(void);

/** Counts n connections shut down because a request head missed its
 *  deadline (--header-timeout). */
void hv_metrics_head_timeouts(unsigned n);

/** Counts n connections shut down (after a 408) because a request body
 *  did not arrive within --body-timeout. */
void hv_metrics_body_timeouts(unsigned n);

/** What became of one webhook delivery attempt (webhooks.c). */
enum hv_metrics_webhook {
    HV_WEBHOOK_DELIVERED, /**< the receiver answered 2xx */
    HV_WEBHOOK_RETRY,     /**< it did not; tried again later */
    HV_WEBHOOK_GAVE_UP,   /**< it did not, on the last attempt */
};

/** Counts one webhook delivery attempt by outcome. */
void hv_metrics_webhook(enum hv_metrics_webhook outcome);

/** What the database holds now, for a scrape (h_metrics.c reads it; a
 *  negative value: the database did not answer, the lines are left out). */
struct hv_metrics_db {
    long jobs_queued, jobs_running, workers_live, webhooks_pending;
};

/** The Prometheus text exposition format 0.0.4 of every metric: counters,
 *  the request duration histogram, the long polls waiting now
 *  (hv_waiters_count()), the connections open now (hv_conns_count()) and
 *  the build info. Returns a malloc'd,
 *  NUL-terminated string the caller frees, or NULL when memory runs out. */
char *hv_metrics_render(const struct hv_metrics_db *db);

#endif
