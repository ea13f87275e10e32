/* db_hooks.c — see db_hooks.h. */
#include "db_hooks.h"

#include "db_admit.h"

#include <stdlib.h>
#include <string.h>

static const struct hv_stmt create = {
    "hooks_create",
    "WITH ins AS (INSERT INTO plan_steps (plan_id, kind, target_name, status, hook) "
    " SELECT $1, k.kind, $2, CASE WHEN k.kind = 'before_host' THEN 'queued' ELSE 'waiting' END, "
    " $3::jsonb -> k.kind FROM (VALUES ('before_host'), ('after_host')) k(kind) "
    " WHERE $3::jsonb ? k.kind RETURNING kind) "
    "UPDATE plans SET waiting = jsonb_build_object('reason', 'before_host_hook', 'since', now(), "
    " 'detail', 'waiting for before_host hook (drain) on ' || $2) "
    "WHERE id = $1 AND EXISTS (SELECT 1 FROM ins WHERE kind = 'before_host')",
    3};

static const struct hv_stmt after_due = {"hooks_after_due", "SELECT hv_hooks_after_due()", 0};

#define HOOK_ADMITTED HV_SQL_PLAN_ADMITTED("s.plan_id")
static const struct hv_stmt take = {
    "hooks_take",
    "WITH due AS (SELECT s.id FROM plan_steps s WHERE s.hook ? 'url' "
    /* A fleet plan's child drains its host only once it has a slot. */
    " AND (s.kind <> 'before_host' OR " HOOK_ADMITTED ") AND ((s.status = 'queued' "
    " AND (s.not_before IS NULL OR s.not_before <= now())) OR (s.status = 'running' "
    " AND s.lease_until < now())) ORDER BY s.id LIMIT $1 "
    " FOR UPDATE SKIP LOCKED), "
    "t AS (UPDATE plan_steps s SET status = 'running', attempt = s.attempt + 1, worker_id = NULL, "
    " lease_until = now() + make_interval(secs => $2::int), claimed_at = now() FROM due "
    " WHERE s.id = due.id RETURNING s.*) "
    "SELECT t.id, t.attempt, t.kind, t.hook->>'url', json_build_object('event', 'hook.' || "
    "t.kind, 'at', now(), 'plan', json_build_object('id', p.id, 'name', p.name, 'status', "
    "ps.status), 'host', t.target_name, 'hook_id', t.id, 'attempt', t.attempt)::text "
    "FROM t JOIN plans p ON p.id = t.plan_id JOIN plan_summaries ps ON ps.id = p.id ORDER BY t.id",
    2};

static const struct hv_stmt done = {
    "hooks_done",
    "WITH u AS (UPDATE plan_steps SET status = CASE WHEN $2::bool THEN 'done' WHEN $5::int < 0 "
    " THEN 'failed' ELSE 'queued' END, lease_until = NULL, finished_at = CASE WHEN $2::bool OR "
    " $5::int < 0 THEN now() END, not_before = CASE WHEN NOT $2::bool AND $5::int >= 0 THEN now() "
    " + make_interval(secs => $5::int) END, error = CASE WHEN $2::bool THEN NULL ELSE $3 END, "
    " answer = $4::jsonb WHERE id = $1 AND attempt = $6 AND status = 'running' "
    " RETURNING id, kind, status) "
    "SELECT hv_hook_before_ended(u.id) FROM u WHERE u.kind = 'before_host' "
    "AND u.status IN ('done', 'failed')",
    6};

enum hv_db_status hv_db_hooks_create(struct hv_db *db, const char *plan_id, const char *host,
                                     const char *hooks)
{
    const char *p[] = {plan_id, host, hooks};
    enum hv_db_status s = hv_db_exec(db, &create, p, NULL);
    return s == HV_DB_NONE ? HV_DB_OK : s;
}

void hv_hook_due_clear(struct hv_hook_due *d)
{
    free(d->kind);
    free(d->url);
    free(d->payload);
    memset(d, 0, sizeof *d);
}

enum hv_db_status hv_db_hooks_take(struct hv_hook_due *due, int max, int lock_s, int *n)
{
    *n = 0;
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &after_due, NULL, &r);
    PQclear(r);
    if (s != HV_DB_OK && s != HV_DB_NONE)
        return s;
    char m[16], l[16];
    const char *p[] = {hv_db_int(m, sizeof m, max), hv_db_int(l, sizeof l, lock_s)};
    s = hv_db_exec(db, &take, p, &r);
    if (s != HV_DB_OK) {
        PQclear(r);
        return s == HV_DB_NONE ? HV_DB_OK : s;
    }
    for (int i = 0; i < PQntuples(r) && i < max; i++) {
        struct hv_hook_due *d = &due[*n];
        d->id = strtoll(PQgetvalue(r, i, 0), NULL, 10);
        d->attempt = atoi(PQgetvalue(r, i, 1));
        d->kind = strdup(PQgetvalue(r, i, 2));
        d->url = strdup(PQgetvalue(r, i, 3));
        d->payload = strdup(PQgetvalue(r, i, 4));
        if (d->kind == NULL || d->url == NULL || d->payload == NULL) {
            hv_hook_due_clear(d);
            continue; /* its lease runs out and it is taken again */
        }
        (*n)++;
    }
    PQclear(r);
    return HV_DB_OK;
}

enum hv_db_status hv_db_hook_done(int64_t id, int attempt, bool ok, const char *error,
                                  const char *answer, int retry_s)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char ib[24], rb[16], ab[16];
    const char *p[] = {hv_db_int(ib, sizeof ib, id),
                       ok ? "t" : "f",
                       error,
                       answer,
                       hv_db_int(rb, sizeof rb, retry_s),
                       hv_db_int(ab, sizeof ab, attempt)};
    enum hv_db_status s = hv_db_exec(db, &done, p, NULL);
    return s == HV_DB_NONE ? HV_DB_OK : s;
}

/* The local hooks the target's worker declares (facts.hooks, names). */
static const struct hv_stmt target_hooks = {
    "target_hooks",
    "SELECT coalesce(t.facts->'hooks', 'null'::jsonb)::text FROM targets t WHERE t.name = $1", 1};

enum hv_db_status hv_db_target_hooks(const char *name, json_t **out)
{
    const char *p[] = {name};
    return hv_db_json(&target_hooks, p, out, NULL);
}

static const struct hv_stmt hooks_busy = {
    "hooks_busy",
    "SELECT 1 FROM plan_steps WHERE plan_id = $1 AND kind IN ('before_host', 'after_host') "
    "AND status IN ('queued', 'running')",
    1};

/* The hooks run again: before_host queued (the plan waits for it),
 * after_host waiting, their log cleared. */
static const struct hv_stmt rearm = {
    "hooks_rearm",
    "WITH h AS (UPDATE plan_steps SET status = CASE WHEN kind = 'before_host' THEN 'queued' "
    " ELSE 'waiting' END, attempt = 0, failures = 0, not_before = NULL, lease_until = NULL, "
    " claimed_at = NULL, finished_at = NULL, error = NULL, answer = NULL "
    " WHERE plan_id = $1 AND kind IN ('before_host', 'after_host') RETURNING kind, target_name) "
    "UPDATE plans p SET waiting = jsonb_build_object('reason', 'before_host_hook', 'since', now(), "
    " 'detail', 'waiting for before_host hook (drain) on ' || h.target_name) "
    "FROM h WHERE p.id = $1 AND h.kind = 'before_host'",
    1};

enum hv_db_status hv_db_hooks_rearm(struct hv_db *db, const char *plan_id)
{
    const char *p[] = {plan_id};
    enum hv_db_status s = hv_db_exec(db, &hooks_busy, p, NULL);
    if (s == HV_DB_OK)
        return HV_DB_CONFLICT;
    if (s != HV_DB_NONE)
        return s;
    s = hv_db_exec(db, &rearm, p, NULL);
    return s == HV_DB_NONE ? HV_DB_OK : s;
}
