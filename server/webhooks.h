/* webhooks.h — the sender of webhook deliveries.
 *
 * One thread takes due rows of the durable queue (db_webhooks.h), signs
 * each body and POSTs it to its subscription's URL through lib/'s HTTP
 * client: "Hvbench-Signature: t=UNIX,v1=HEX", HEX being HMAC-SHA256 with
 * the subscription's secret over "UNIX.BODY". A 2xx answer delivers it;
 * anything else is retried after 2, 4, 8 ... seconds (at most an hour),
 * HV_WEBHOOK_ATTEMPTS attempts in all. Several servers on one database
 * share the queue: a row is locked while one of them sends it. */
#ifndef HV_SERVER_WEBHOOKS_H
#define HV_SERVER_WEBHOOKS_H

#include <stddef.h>
#include <stdint.h>

/** Attempts per delivery before it is marked failed. */
#define HV_WEBHOOK_ATTEMPTS 10

/** Starts the sender thread. Returns 0, or -1 when it cannot start. */
int hv_webhooks_start(void);

/** Stops the sender (a send in flight is abandoned within a second and
 *  retried later, by this server or another). */
void hv_webhooks_stop(void);

/** Wakes the sender at once (a delivery was queued: main.c has the
 *  listener of waiters.c call this on the hv_webhooks notification). */
void hv_webhooks_wake(void);

/** Writes "t=UNIX,v1=HEX" for body signed with secret at time t into out
 *  (at least 96 bytes). Returns 0, or -1 when the digest fails. */
int hv_webhook_signature(const char *secret, int64_t t, const char *body, size_t len, char *out,
                         size_t out_len);

/** Seconds to wait before attempt number attempts + 1, after attempts
 *  failed ones: 2^attempts, at most 3600. */
int hv_webhook_backoff(int attempts);

/** Why url cannot be a webhook's or a url hook's address (not http(s),
 *  no host, blanks, credentials), or NULL when it can
 *  (server/h_webhooks.c). */
const char *hv_webhook_url_problem(const char *url);

#endif
