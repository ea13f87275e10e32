/* db_webhooks.h — webhook subscriptions and their delivery queue
 * (migrations/011_webhooks.sql). Events are queued by the database itself,
 * in the transaction of the change they report; this module reads and
 * writes the subscriptions and hands due deliveries to the sender
 * (webhooks.c). */
#ifndef HV_SERVER_DB_WEBHOOKS_H
#define HV_SERVER_DB_WEBHOOKS_H

#include "db.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/** Stores a subscription; events is a PostgreSQL array literal. *out: the
 *  subscription as the API shows it, without its secret. */
enum hv_db_status hv_db_webhook_create(const char *url, const char *events, const char *description,
                                       const char *secret, bool allow_private, int64_t token_id,
                                       json_t **out);

/** Every live subscription, newest first, without secrets. */
enum hv_db_status hv_db_webhook_list(json_t **out);

/** One live subscription with counts of its deliveries by status;
 *  HV_DB_NONE when there is none. */
enum hv_db_status hv_db_webhook_get(int64_t id, json_t **out);

/** Deletes a subscription: it gets no new deliveries and its pending ones
 *  are dropped (kept in its log as failed). HV_DB_NONE when none. */
enum hv_db_status hv_db_webhook_delete(int64_t id, json_t **out);

/** The delivery log of a subscription, newest first, at most limit rows
 *  (before_id > 0: only older ones). HV_DB_NONE when the subscription does
 *  not exist. */
enum hv_db_status hv_db_webhook_deliveries(int64_t id, int limit, int64_t before_id, json_t **out);

/** Queues a "ping" for one subscription. HV_DB_NONE when none. */
enum hv_db_status hv_db_webhook_ping(int64_t id, json_t **out);

/** One delivery taken to be sent. */
struct hv_webhook_due {
    int64_t id;
    int attempts; /**< including this one */
    char *url, *secret, *event, *payload;
    bool allow_private;
};

/** Takes up to max due deliveries (locking each for lock_s seconds, so no
 *  other server sends it meanwhile) into due[]; *n is how many. Free each
 *  with hv_webhook_due_clear(). */
enum hv_db_status hv_db_webhook_take(struct hv_webhook_due *due, int max, int lock_s, int *n);

/** Records the outcome of one attempt: delivered (2xx), or failed with
 *  status (0: no answer) and error; a failed attempt is retried after
 *  retry_s seconds, or marked failed for good when retry_s < 0. */
enum hv_db_status hv_db_webhook_done(int64_t id, bool delivered, long status, const char *error,
                                     int retry_s);

/** Seconds until the next pending delivery is due (capped at cap), or cap
 *  when none is pending. */
double hv_db_webhook_next_in(double cap);

void hv_webhook_due_clear(struct hv_webhook_due *d);

#endif
