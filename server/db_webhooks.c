/* db_webhooks.c — see db_webhooks.h. */
#include "db_webhooks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOOK_JSON                                                                                  \
    "json_build_object('id', w.id, 'url', w.url, 'events', w.events, 'description', "              \
    "w.description, 'allow_private', w.allow_private, 'created_at', w.created_at)"

static const struct hv_stmt create = {
    "webhook_create",
    "INSERT INTO webhooks AS w (url, events, description, secret, allow_private, token_id) "
    "VALUES ($1, $2::text[], $3, $4, $5::bool, nullif($6::bigint, 0)) RETURNING (" HOOK_JSON
    ")::text",
    6};

static const struct hv_stmt list = {"webhook_list",
                                    "SELECT coalesce(json_agg(" HOOK_JSON
                                    " ORDER BY w.id DESC), '[]')::text FROM webhooks w "
                                    "WHERE w.deleted_at IS NULL",
                                    0};

static const struct hv_stmt get = {
    "webhook_get",
    "SELECT (" HOOK_JSON "::jsonb || jsonb_build_object('deliveries', (SELECT jsonb_build_object("
    "'pending', count(*) FILTER (WHERE d.status = 'pending'), 'delivered', count(*) FILTER "
    "(WHERE d.status = 'delivered'), 'failed', count(*) FILTER (WHERE d.status = 'failed')) "
    "FROM webhook_deliveries d WHERE d.webhook_id = w.id)))::text FROM webhooks w "
    "WHERE w.id = $1 AND w.deleted_at IS NULL",
    1};

static const struct hv_stmt del = {
    "webhook_delete",
    "WITH w AS (UPDATE webhooks SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL "
    " RETURNING *), "
    "d AS (UPDATE webhook_deliveries SET status = 'failed', last_error = 'subscription deleted' "
    " WHERE webhook_id = (SELECT id FROM w) AND status = 'pending') "
    "SELECT (" HOOK_JSON ")::text FROM w",
    1};

static const struct hv_stmt deliveries = {
    "webhook_deliveries",
    "SELECT (SELECT coalesce(json_agg(json_build_object('id', d.id, 'event', d.event, 'status', "
    "d.status, 'attempts', d.attempts, 'next_at', CASE WHEN d.status = 'pending' THEN d.next_at "
    "END, 'last_status', d.last_status, 'last_error', d.last_error, 'created_at', d.created_at, "
    "'delivered_at', d.delivered_at, 'payload', d.payload) ORDER BY d.id DESC), '[]') FROM "
    "(SELECT * FROM webhook_deliveries WHERE webhook_id = w.id AND ($3::bigint = 0 OR id < $3) "
    " ORDER BY id DESC LIMIT $2) d)::text FROM webhooks w WHERE w.id = $1",
    3};

static const struct hv_stmt ping = {
    "webhook_ping",
    "WITH w AS (SELECT id FROM webhooks WHERE id = $1 AND deleted_at IS NULL), "
    "n AS (SELECT pg_notify('hv_webhooks', '') FROM w) "
    "INSERT INTO webhook_deliveries (webhook_id, event, payload) SELECT w.id, 'ping', "
    "jsonb_build_object('event', 'ping', 'at', now(), 'webhook_id', w.id) FROM w, n "
    "RETURNING json_build_object('delivery_id', id, 'event', event)::text",
    1};

/* The due rows, locked for a while: a row whose lock ran out (its server
 * died while sending) is due again. */
static const struct hv_stmt take = {
    "webhook_take",
    "WITH due AS (SELECT d.id FROM webhook_deliveries d WHERE d.status = 'pending' "
    " AND d.next_at <= now() AND (d.locked_until IS NULL OR d.locked_until < now()) "
    " ORDER BY d.next_at, d.id LIMIT $1 FOR UPDATE SKIP LOCKED), "
    "t AS (UPDATE webhook_deliveries d SET attempts = d.attempts + 1, "
    " locked_until = now() + make_interval(secs => $2::int) FROM due WHERE d.id = due.id "
    " RETURNING d.*) "
    "SELECT t.id, t.attempts, w.url, w.secret, t.event, t.payload::text, w.allow_private "
    "FROM t JOIN webhooks w ON w.id = t.webhook_id ORDER BY t.next_at, t.id",
    2};

static const struct hv_stmt done = {
    "webhook_done",
    "UPDATE webhook_deliveries SET locked_until = NULL, last_status = nullif($3::int, 0), "
    "last_error = $4, status = CASE WHEN $2::bool THEN 'delivered' WHEN $5::int < 0 "
    "THEN 'failed' ELSE 'pending' END, delivered_at = CASE WHEN $2::bool THEN now() END, "
    "next_at = CASE WHEN $5::int >= 0 THEN now() + make_interval(secs => $5::int) "
    "ELSE next_at END WHERE id = $1 AND status = 'pending'",
    5};

static const struct hv_stmt next_in = {
    "webhook_next_in",
    "SELECT extract(epoch FROM min(greatest(next_at, coalesce(locked_until, next_at))) - now()) "
    "FROM webhook_deliveries WHERE status = 'pending'",
    0};

enum hv_db_status hv_db_webhook_create(const char *url, const char *events, const char *description,
                                       const char *secret, bool allow_private, int64_t token_id,
                                       json_t **out)
{
    char tid[24];
    const char *p[] = {url,
                       events,
                       description,
                       secret,
                       allow_private ? "t" : "f",
                       hv_db_int(tid, sizeof tid, token_id)};
    return hv_db_must(hv_db_json(&create, p, out, NULL));
}

enum hv_db_status hv_db_webhook_list(json_t **out)
{
    return hv_db_must(hv_db_json(&list, NULL, out, NULL));
}

enum hv_db_status hv_db_webhook_get(int64_t id, json_t **out)
{
    char buf[24];
    const char *p[] = {hv_db_int(buf, sizeof buf, id)};
    return hv_db_json(&get, p, out, NULL);
}

enum hv_db_status hv_db_webhook_delete(int64_t id, json_t **out)
{
    char buf[24];
    const char *p[] = {hv_db_int(buf, sizeof buf, id)};
    return hv_db_json(&del, p, out, NULL);
}

enum hv_db_status hv_db_webhook_deliveries(int64_t id, int limit, int64_t before_id, json_t **out)
{
    char buf[24], lim[16], before[24];
    const char *p[] = {hv_db_int(buf, sizeof buf, id), hv_db_int(lim, sizeof lim, limit),
                       hv_db_int(before, sizeof before, before_id)};
    return hv_db_json(&deliveries, p, out, NULL);
}

enum hv_db_status hv_db_webhook_ping(int64_t id, json_t **out)
{
    char buf[24];
    const char *p[] = {hv_db_int(buf, sizeof buf, id)};
    return hv_db_json(&ping, p, out, NULL);
}

static char *dup_cell(PGresult *r, int row, int col)
{
    return strdup(PQgetvalue(r, row, col));
}

void hv_webhook_due_clear(struct hv_webhook_due *d)
{
    free(d->url);
    free(d->secret);
    free(d->event);
    free(d->payload);
    memset(d, 0, sizeof *d);
}

enum hv_db_status hv_db_webhook_take(struct hv_webhook_due *due, int max, int lock_s, int *n)
{
    *n = 0;
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char m[16], l[16];
    const char *p[] = {hv_db_int(m, sizeof m, max), hv_db_int(l, sizeof l, lock_s)};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &take, p, &r);
    if (s != HV_DB_OK) {
        PQclear(r); /* HV_DB_NONE keeps its (empty) result */
        return s == HV_DB_NONE ? HV_DB_OK : s;
    }
    int rows = PQntuples(r);
    for (int i = 0; i < rows && i < max; i++) {
        struct hv_webhook_due *d = &due[*n];
        d->id = strtoll(PQgetvalue(r, i, 0), NULL, 10);
        d->attempts = atoi(PQgetvalue(r, i, 1));
        d->url = dup_cell(r, i, 2);
        d->secret = dup_cell(r, i, 3);
        d->event = dup_cell(r, i, 4);
        d->payload = dup_cell(r, i, 5);
        d->allow_private = PQgetvalue(r, i, 6)[0] == 't';
        if (d->url == NULL || d->secret == NULL || d->event == NULL || d->payload == NULL) {
            hv_webhook_due_clear(d);
            continue; /* its lock runs out and it is taken again */
        }
        (*n)++;
    }
    PQclear(r);
    return HV_DB_OK;
}

enum hv_db_status hv_db_webhook_done(int64_t id, bool delivered, long status, const char *error,
                                     int retry_s)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char ib[24], sb[24], rb[16];
    const char *p[] = {hv_db_int(ib, sizeof ib, id), delivered ? "t" : "f",
                       hv_db_int(sb, sizeof sb, status), error, hv_db_int(rb, sizeof rb, retry_s)};
    enum hv_db_status s = hv_db_exec(db, &done, p, NULL);
    return s == HV_DB_NONE ? HV_DB_OK : s;
}

double hv_db_webhook_next_in(double cap)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return cap;
    PGresult *r;
    if (hv_db_exec(db, &next_in, NULL, &r) != HV_DB_OK) {
        PQclear(r);
        return cap;
    }
    double v = PQgetisnull(r, 0, 0) ? cap : strtod(PQgetvalue(r, 0, 0), NULL);
    PQclear(r);
    return v < 0 ? 0 : v > cap ? cap : v;
}
