/* db_hooks.c — see db_hooks.h. */
#include "db_hooks.h"

#include "db_admit.h"
#include "plan.h"

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
/* The labels of the hook's target, its own and its administrator's (the
 * latter winning), so a site maps hvbench's names to its own. */
#define HOOK_LABELS                                                                                \
    "coalesce((SELECT g.labels || g.admin_labels FROM targets g WHERE g.name = t.target_name), "   \
    "'{}'::jsonb)"
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
    "ps.status), 'host', t.target_name, 'target', t.target_name, 'labels', " HOOK_LABELS
    ", 'hook_id', t.id, 'attempt', t.attempt)::text, "
    "t.attempt - coalesce((t.answer->'not_yet'->>'calls')::int, 0) "
    "FROM t JOIN plans p ON p.id = t.plan_id JOIN plan_summaries ps ON ps.id = p.id ORDER BY t.id",
    2};

static const struct hv_stmt done = {
    "hooks_done",
    "WITH u AS (UPDATE plan_steps SET status = CASE WHEN $2::bool THEN 'done' WHEN $5::int < 0 "
    " THEN 'failed' ELSE 'queued' END, lease_until = NULL, finished_at = CASE WHEN $2::bool OR "
    " $5::int < 0 THEN now() END, not_before = CASE WHEN NOT $2::bool AND $5::int >= 0 THEN now() "
    " + make_interval(secs => $5::int) END, error = CASE WHEN $2::bool THEN NULL ELSE $3 END, "
    " answer = " HV_SQL_HOOK_ANSWER(
        "$4") " WHERE id = $1 AND attempt = $6 AND status = 'running' "
              " RETURNING id, kind, status) "
              "SELECT hv_hook_before_ended(u.id) FROM u WHERE u.kind = 'before_host' "
              "AND u.status IN ('done', 'failed')",
    6};

/* A before_host hook said "not yet" ($3 its words, $4 its answer): it is
 * asked again after $5 seconds (0: the plan's hooks.interval, default $7),
 * never later than hooks.timeout (default $6) after its first "not yet",
 * and the plan's waiting carries its words; past that it failed. */
static const struct hv_stmt not_yet = {
    "hooks_not_yet",
    "WITH s AS (SELECT s.id, s.plan_id, coalesce((s.answer->'not_yet'->>'since')::timestamptz, "
    " now()) AS since, coalesce((s.answer->'not_yet'->>'calls')::int, 0) + 1 AS calls, "
    " coalesce((p.spec->'hooks'->>'timeout')::int, $6::int) AS timeout_s, CASE WHEN $5::int > 0 "
    " THEN $5::int ELSE coalesce((p.spec->'hooks'->>'interval')::int, $7::int) END AS every_s "
    " FROM plan_steps s JOIN plans p ON p.id = s.plan_id WHERE s.id = $1 AND s.attempt = $2 "
    " AND s.status = 'running' AND s.kind = 'before_host' FOR UPDATE OF s), "
    "d AS (SELECT s.*, s.since + make_interval(secs => s.timeout_s) AS deadline, "
    " now() < s.since + make_interval(secs => s.timeout_s) AS again FROM s), "
    "u AS (UPDATE plan_steps t SET status = CASE WHEN d.again THEN 'queued' ELSE 'failed' END, "
    " lease_until = NULL, not_before = CASE WHEN d.again THEN least(now() + "
    " make_interval(secs => d.every_s), d.deadline) END, finished_at = CASE WHEN d.again "
    " THEN NULL ELSE now() END, error = CASE WHEN d.again THEN $3 ELSE 'not ready within "
    "hooks.timeout (' || d.timeout_s || ' s): ' || $3 END, answer = coalesce($4::jsonb, '{}') "
    " || jsonb_build_object('not_yet', jsonb_build_object('since', d.since, 'calls', d.calls, "
    " 'reason', $3)) FROM d WHERE t.id = d.id RETURNING t.id, t.plan_id, t.status, t.not_before), "
    "w AS (UPDATE plans p SET waiting = jsonb_build_object('reason', 'before_host_hook', 'since', "
    " coalesce(p.waiting->'since', to_jsonb(now())), 'detail', $3, 'retry_at', u.not_before), "
    " updated_at = now() FROM u WHERE p.id = u.plan_id AND u.status = 'queued' "
    " AND p.waiting->>'reason' = 'before_host_hook' RETURNING 1) "
    "SELECT hv_hook_before_ended(u.id) FROM u WHERE u.status = 'failed'",
    7};

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
        d->tries = atoi(PQgetvalue(r, i, 5));
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

enum hv_db_status hv_db_hook_not_yet(struct hv_db *db, int64_t id, int attempt, const char *reason,
                                     const char *answer, int retry_s)
{
    if (db == NULL && (db = hv_db_thread()) == NULL)
        return HV_DB_UNAVAILABLE;
    char ib[24], ab[16], rb[16], tb[16], eb[16];
    const char *p[] = {hv_db_int(ib, sizeof ib, id),
                       hv_db_int(ab, sizeof ab, attempt),
                       reason,
                       answer,
                       hv_db_int(rb, sizeof rb, retry_s > 0 ? retry_s : 0),
                       hv_db_int(tb, sizeof tb, HV_PLAN_HOOK_TIMEOUT_DEFAULT),
                       hv_db_int(eb, sizeof eb, HV_PLAN_HOOK_INTERVAL_DEFAULT)};
    enum hv_db_status s = hv_db_exec(db, &not_yet, p, NULL);
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
