/* db_steps.c — see db_steps.h. */
#include "db_steps.h"

#include "db_admit.h"
#include "db_hooks.h"
#include "db_plans.h"
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Blocks: one per (repetition, configuration). Randomized plans shuffle
 * the configurations of each round by a hash of the seed, the round and
 * the configuration, so the order is fixed by the seed and drift hits
 * every configuration alike. */
static const struct hv_stmt set_blocks = {
    "steps_set_blocks",
    "WITH b AS (SELECT r.repetition, c.id AS config_id, c.idx, "
    " row_number() OVER (ORDER BY r.repetition, CASE WHEN $3::bool "
    "  THEN md5($2 || ':' || r.repetition || ':' || c.idx) ELSE lpad(c.idx::text, 10, '0') END) "
    "  - 1 AS block "
    " FROM (SELECT DISTINCT repetition FROM jobs WHERE plan_id = $1) r, "
    " configurations c WHERE c.plan_id = $1) "
    "UPDATE jobs j SET block = b.block FROM b "
    "WHERE j.plan_id = $1 AND j.config_id = b.config_id AND j.repetition = b.repetition",
    3};

/* Run order block by block, keeping the order within a block. Run orders
 * are not unique in the schema, so renumbering in place is safe. */
static const struct hv_stmt renumber = {
    "steps_renumber",
    "UPDATE jobs j SET run_order = x.n FROM (SELECT id, row_number() OVER "
    "(ORDER BY block, run_order) - 1 AS n FROM jobs WHERE plan_id = $1) x "
    "WHERE j.id = x.id",
    1};

static const struct hv_stmt insert_steps = {
    "steps_insert",
    "WITH blocks AS (SELECT DISTINCT block, config_id FROM jobs WHERE plan_id = $1), "
    "ins AS (INSERT INTO plan_steps (plan_id, kind, block, config_id, target_name, status) "
    " SELECT $1, 'apply', block, config_id, $2, CASE WHEN block = 0 THEN 'queued' ELSE 'waiting' "
    " END FROM blocks UNION ALL SELECT $1, 'restore', NULL, NULL, $2, 'waiting' RETURNING 1) "
    "UPDATE plans SET host_name = $2, current_block = 0 WHERE id = $1",
    2};

/* A running step whose lease ran out goes back (or fails after three
 * losses); an apply step that failed so fails its block's jobs. An apply
 * step whose plan was cancelled while it ran (cancelled) ends instead:
 * its plan applies nothing any more, its restore step is queued. The
 * worker that held a lapsed step is lost when it is stale too
 * (hv_worker_lost, migrations/050, with the lease $1 as the window). */
static const struct hv_stmt expire = {
    "steps_expire",
    "WITH lost AS (UPDATE plan_steps SET lease_until = NULL, failures = failures + 1, "
    " status = CASE WHEN cancelled THEN 'cancelled' WHEN failures + 1 >= 3 THEN 'failed' "
    " ELSE 'queued' END, finished_at = CASE WHEN cancelled THEN now() ELSE finished_at END, "
    " error = 'the host worker was lost during the step (lease expired)' "
    " WHERE status = 'running' AND lease_until < now() RETURNING *), "
    "failed AS (UPDATE jobs j SET status = 'failed', error = 'configuration ' || "
    " c.name || ' could not be applied on ' || l.target_name || ': ' || l.error "
    " FROM lost l JOIN configurations c ON c.id = l.config_id "
    " WHERE l.status = 'failed' AND l.kind = 'apply' AND j.plan_id = l.plan_id "
    " AND j.block = l.block AND j.status = 'queued' RETURNING 1), "
    "gone AS (SELECT hv_worker_lost(worker_id, array_agg(DISTINCT plan_id), $1::int) FROM lost "
    " WHERE worker_id IS NOT NULL GROUP BY worker_id) "
    "SELECT (SELECT count(*) FROM lost), (SELECT count(*) FROM gone)",
    1};

/* An apply step waiting for the operator goes back to its host worker
 * once its time came (lease_until holds when), to read the module
 * parameters again. */
static const struct hv_stmt recheck = {
    "steps_operator_recheck",
    "UPDATE plan_steps SET status = 'queued', lease_until = NULL "
    "WHERE status = 'waiting_for_operator' AND lease_until < now()",
    0};

/* A plan whose current block ended moves to the next block's apply step,
 * or to its restore step after the last block; an apply step of its left
 * queued though its plan was cancelled or ended is cancelled. */
static const struct hv_stmt advance = {
    "steps_advance",
    "WITH due AS (SELECT p.id, p.current_block AS k FROM plans p WHERE " HV_SQL_BLOCK_ENDED
    " FOR UPDATE OF p SKIP LOCKED), "
    "nxt AS (SELECT d.id, d.k, EXISTS (SELECT 1 FROM plan_steps s WHERE s.plan_id = d.id "
    " AND s.kind = 'apply' AND s.block = d.k + 1) AS more FROM due d), "
    "moved AS (UPDATE plans p SET current_block = CASE WHEN n.more THEN n.k + 1 END, "
    " block_ready = false, updated_at = now() FROM nxt n WHERE p.id = n.id RETURNING p.id) "
    "UPDATE plan_steps s SET status = CASE WHEN s.status = 'queued' THEN 'cancelled' ELSE 'queued' "
    " END, finished_at = CASE WHEN s.status = 'queued' THEN now() END "
    "FROM nxt n JOIN plans p ON p.id = n.id WHERE s.plan_id = n.id "
    "AND ((s.status = 'waiting' AND ((n.more AND s.kind = 'apply' AND s.block = n.k + 1) "
    " OR (NOT n.more AND s.kind = 'restore'))) "
    " OR (s.status = 'queued' AND " HV_SQL_APPLY_DROPPED "))",
    0};

#define STEP_ADMITTED HV_SQL_PLAN_ADMITTED("s.plan_id")
/* The steps target $1's worker may claim (ordered by the statement: a
 * restore step first, then by plan and block). A fleet plan's child
 * waiting for a slot neither drains nor tunes its host yet; what puts a
 * host back always runs; an apply step of a plan cancelled or ended never
 * does. */
#define STEP_CLAIMABLE                                                                             \
    " FROM plan_steps s JOIN plans p ON p.id = s.plan_id "                                         \
    " WHERE s.target_name = (SELECT name FROM targets WHERE id = $1) AND s.status = 'queued' "     \
    " AND (s.hook IS NULL OR s.hook ? 'local') AND NOT " HV_SQL_APPLY_DROPPED                      \
    " AND (s.not_before IS NULL OR s.not_before <= now()) "                                        \
    " AND (s.kind IN ('after_host', 'restore') OR " STEP_ADMITTED ") "                             \
    " AND (s.kind IN ('before_host', 'after_host') OR (NOT EXISTS (SELECT 1 FROM plans q "         \
    "  WHERE q.host_name = s.target_name AND q.holds_host AND q.id <> s.plan_id) "                 \
    "  AND NOT EXISTS (SELECT 1 FROM plan_steps h WHERE h.plan_id = s.plan_id "                    \
    "  AND h.kind = 'before_host' AND h.status IN ('waiting', 'queued', 'running')))) "

/* The step a claim would take, looked at without a lock: its id, its plan
 * and whether it is an apply step. */
static const struct hv_stmt claim_peek = {
    "step_claim_peek",
    "SELECT s.id, s.plan_id, s.kind = 'apply'" STEP_CLAIMABLE
    " ORDER BY (s.kind = 'restore') DESC, s.plan_id, s.block LIMIT 1",
    1};

/* Claims step $4 if it is still the target's to claim. */
static const struct hv_stmt claim = {
    "step_claim",
    "WITH next AS (SELECT s.id" STEP_CLAIMABLE " AND s.id = $4 FOR UPDATE OF s SKIP LOCKED), "
    "c AS (UPDATE plan_steps s SET status = 'running', attempt = s.attempt + 1, worker_id = $2, "
    " lease_until = now() + make_interval(secs => $3::int), claimed_at = now() "
    " FROM next WHERE s.id = next.id RETURNING s.*) "
    "SELECT json_build_object('id', c.id, 'kind', c.kind, 'plan_id', c.plan_id, 'attempt', "
    "c.attempt, 'block', c.block, 'configuration', cf.name, 'levels', "
    "coalesce(cf.levels, '{}'::jsonb), 'domains', (SELECT coalesce(json_agg(DISTINCT "
    "hv_domain_name(j.target_name)), "
    "'[]') FROM jobs j WHERE j.plan_id = c.plan_id AND j.target_name <> c.target_name), 'disk', "
    "p.spec->'tuning'->'disk', 'nic', p.spec->'tuning'->'nic', 'allow_restart', "
    "coalesce((p.spec->>'allow_restart')::bool, false), 'named_domains', "
    "p.spec->'targets'->'guests'->'domains', 'template', "
    "p.spec->'targets'->'guests'->'template'->>'domain', 'hook', c.hook, 'host', "
    "c.target_name, 'labels', (SELECT g.labels || g.admin_labels FROM targets g WHERE g.id = $1))"
    "::text "
    "FROM c JOIN plans p ON p.id = c.plan_id LEFT JOIN configurations cf ON cf.id = c.config_id",
    4};

/* The plan's hold on its host (migrations/046_lifecycle_effects.sql):
 * taken when its apply step is claimed, let go when its restore step ran
 * (whether before or after a cancel). */
static const struct hv_stmt hold = {"step_hold", "SELECT hv_plan_hold($1::bigint, true, 'apply')",
                                    1};
static const struct hv_stmt release_hold = {
    "step_release_hold",
    "SELECT hv_plan_hold(plan_id, false, 'restored') FROM plan_steps WHERE id = $1", 1};

/* The lock of the step's plan (hv_plan_lock, migrations/045), taken before
 * the step's row is: its plan_id never changes, so it is read unlocked. */
static const struct hv_stmt step_plan_lock = {
    "step_plan_lock", "SELECT hv_plan_lock(plan_id) FROM plan_steps WHERE id = $1", 1};

static const struct hv_stmt owner = {
    "step_owner", "SELECT attempt = $2 AND worker_id = $3 FROM plan_steps WHERE id = $1", 3};

static const struct hv_stmt heartbeat = {
    "step_heartbeat",
    "UPDATE plan_steps s SET lease_until = now() + make_interval(secs => $3::int) FROM plans p "
    "WHERE s.id = $1 AND s.attempt = $2 AND s.status = 'running' AND p.id = s.plan_id "
    "RETURNING p.cancelled AND s.kind = 'apply'",
    3};

/* The step's row, locked, and whether it is an apply step that is not to
 * run any more (HV_SQL_APPLY_DROPPED). */
static const struct hv_stmt lock_step = {
    "step_lock",
    "SELECT s.status, s.attempt, s.kind, " HV_SQL_APPLY_DROPPED
    " FROM plan_steps s JOIN plans p ON p.id = s.plan_id WHERE s.id = $1 FOR UPDATE OF s",
    1};

/* An apply step of a cancelled plan answered after the plan's restore
 * step ended: what it changed must be put back too, so the restore step
 * is queued again and the plan holds its host again. */
static const struct hv_stmt restore_again = {
    "step_restore_again",
    "WITH r AS (UPDATE plan_steps r SET status = 'queued', finished_at = NULL, lease_until = NULL "
    " FROM plan_steps a WHERE a.id = $1 AND r.plan_id = a.plan_id AND r.kind = 'restore' "
    " AND r.status IN ('done', 'failed') RETURNING r.plan_id) "
    "SELECT hv_plan_hold(plan_id, true, 'applied after its restore') FROM r",
    1};

static const struct hv_stmt finish = {
    "step_finish",
    "UPDATE plan_steps SET status = CASE WHEN $2 THEN 'done' ELSE 'failed' END, lease_until = "
    "NULL, finished_at = now(), error = $3, settings = $4::jsonb, answer = " HV_SQL_HOOK_ANSWER(
        "$5") " WHERE id = $1",
    5};

/* An apply step the operator must act for: offered again in $3 seconds;
 * the plan says what it waits for (the wait's start kept while it goes
 * on). */
static const struct hv_stmt wait_operator = {
    "step_wait_operator",
    "WITH s AS (UPDATE plan_steps SET status = 'waiting_for_operator', lease_until = now() + "
    " make_interval(secs => $3::int), error = $2 WHERE id = $1 RETURNING plan_id, target_name) "
    "UPDATE plans p SET waiting = jsonb_build_object('reason', 'waiting_for_operator', 'since', "
    " CASE WHEN p.waiting->>'reason' = 'waiting_for_operator' THEN p.waiting->'since' "
    " ELSE to_jsonb(now()) END, 'detail', 'waiting for the operator on ' || s.target_name || ': ' "
    " || $2, 'operator', $4::jsonb), updated_at = now() FROM s WHERE p.id = s.plan_id",
    4};

/* The plan no longer waits for the operator once the step ended. */
static const struct hv_stmt operator_done = {
    "step_operator_done",
    "UPDATE plans p SET waiting = NULL FROM plan_steps s WHERE s.id = $1 AND p.id = s.plan_id "
    "AND p.waiting->>'reason' = 'waiting_for_operator'",
    1};

/* An applied block is released: its jobs become claimable now. */
static const struct hv_stmt release_block = {
    "step_release_block",
    "UPDATE plans p SET block_ready = true, updated_at = now() FROM plan_steps s "
    "WHERE s.id = $1 AND p.id = s.plan_id AND p.current_block = s.block "
    "RETURNING pg_notify('hv_jobs', '')",
    1};

static const struct hv_stmt fail_block = {
    "step_fail_block",
    "UPDATE jobs j SET status = 'failed', error = 'configuration ' || "
    "c.name || ' could not be applied on ' || s.target_name || ': ' || coalesce(s.error, '') "
    "FROM plan_steps s JOIN configurations c ON c.id = s.config_id "
    "WHERE s.id = $1 AND j.plan_id = s.plan_id AND j.block = s.block AND j.status = 'queued'",
    1};

/* A before_host hook ended: the plan's jobs go, or fail with its answer
 * (migrations/024_drain_hooks.sql). */
static const struct hv_stmt before_ended = {"step_before_ended", "SELECT hv_hook_before_ended($1)",
                                            1};

static const struct hv_stmt record_changes = {
    "step_record_changes",
    "INSERT INTO target_changes (target_name, plan_id, step_id, factor, scope, object, "
    "from_value, to_value, changed_at) "
    "SELECT s.target_name, s.plan_id, s.id, c->>'factor', coalesce(c->>'scope', ''), "
    "coalesce(c->>'object', ''), c->>'from', c->>'to', coalesce((c->>'at')::timestamptz, now()) "
    "FROM plan_steps s, jsonb_array_elements(coalesce($2::jsonb, '[]')) c "
    "WHERE s.id = $1 AND s.kind = 'apply' AND c->>'factor' IS NOT NULL",
    2};

/* The changes a restore put back, each as its restorer reported it
 * ($2: [{"plan_id", "factor", "scope", "object", "at", "how"}]), marked
 * restored by hv_change_restored (migrations/049_restored_how.sql),
 * oldest first: those of restore step $4 (its target and plan, how
 * 'step': $3), or those worker $1 put back itself (its target, each
 * entry's plan and how; $3 and $4 NULL). Entries that match no open
 * change mark nothing. The number of changes marked. */
static const struct hv_stmt restored_each = {
    "changes_restored_each",
    "SELECT coalesce(sum(n), 0) FROM (SELECT hv_change_restored(coalesce(s.target_name, "
    " (SELECT t.name FROM workers w JOIN targets t ON t.id = w.target_id WHERE w.id = $1)), "
    " coalesce(s.plan_id, (c->>'plan_id')::bigint), c->>'factor', coalesce(c->>'scope', ''), "
    " coalesce(c->>'object', ''), coalesce((c->>'at')::timestamptz, now()), "
    " coalesce($3, c->>'how'), s.id) AS n "
    " FROM jsonb_array_elements(coalesce($2::jsonb, '[]')) WITH ORDINALITY e(c, i) "
    " LEFT JOIN plan_steps s ON s.id = $4 WHERE c->>'factor' IS NOT NULL "
    " ORDER BY (c->>'at')::timestamptz NULLS LAST, e.i) x",
    4};

/* A restore step that ran (even one that failed: its worker keeps what
 * it could not put back in its journal and retries at its next start)
 * ends the plan's hold on the host (release_hold, before this). One that
 * succeeded put back everything the plan changed: the changes it did not
 * report one by one (restored_each, before this) are marked restored now
 * by it. */
static const struct hv_stmt restored = {
    "step_restored",
    "WITH p AS (UPDATE plans p SET current_block = NULL, updated_at = now() "
    " FROM plan_steps s WHERE s.id = $1 AND p.id = s.plan_id RETURNING p.id, s.target_name) "
    "SELECT hv_change_restored(p.target_name, p.id, NULL, NULL, NULL, now(), 'step', $1) "
    "FROM p WHERE $2",
    2};

/* A plan's cancel (server/db_plan_cancel.c, under the plan's lock): its
 * apply steps not running end, one running is marked (cancelled: the end
 * of its lease ends it, its result releases no block); its restore step
 * is queued when an apply step was ever claimed (the host may hold some
 * of the plan's changes), else cancelled with it. */
static const struct hv_stmt cancel_steps = {
    "steps_cancel",
    "WITH c AS (UPDATE plan_steps SET cancelled = true, status = CASE WHEN status = 'running' "
    " THEN status ELSE 'cancelled' END, finished_at = CASE WHEN status <> 'running' THEN now() "
    " END, lease_until = CASE WHEN status = 'running' THEN lease_until END "
    " WHERE plan_id = $1 AND kind = 'apply' AND status IN ('waiting', 'queued', "
    " 'waiting_for_operator', 'running') RETURNING 1), "
    "w AS (UPDATE plans SET waiting = NULL WHERE id = $1 AND waiting->>'reason' IN "
    " ('waiting_for_operator', 'before_host_hook') RETURNING 1), "
    "h AS (UPDATE plan_steps SET status = 'cancelled', finished_at = now() WHERE plan_id = $1 "
    " AND kind = 'before_host' AND status IN ('waiting', 'queued') RETURNING 1) "
    "UPDATE plan_steps s SET status = CASE WHEN x.ran THEN 'queued' ELSE 'cancelled' END, "
    "finished_at = CASE WHEN x.ran THEN NULL ELSE now() END "
    "FROM plans p CROSS JOIN LATERAL (SELECT p.holds_host OR EXISTS (SELECT 1 FROM plan_steps a "
    " WHERE a.plan_id = p.id AND a.kind = 'apply' AND a.attempt > 0) AS ran) x "
    "WHERE s.plan_id = $1 AND p.id = s.plan_id AND s.kind = 'restore' AND s.status = 'waiting'",
    1};

static const struct hv_stmt list = {
    "plan_steps_list",
    "SELECT coalesce(json_agg(json_build_object('id', s.id, 'kind', s.kind, 'block', s.block, "
    "'configuration', c.name, 'target', s.target_name, 'status', s.status, 'attempt', "
    "s.attempt, 'claimed_at', s.claimed_at, 'finished_at', s.finished_at, 'error', s.error, "
    "'settings', s.settings) ORDER BY s.kind = 'restore', s.block), '[]')::text "
    "FROM plan_steps s LEFT JOIN configurations c ON c.id = s.config_id WHERE s.plan_id = $1 "
    "AND s.kind IN ('apply', 'restore')",
    1};

static const struct hv_stmt changes = {
    "target_changes_list",
    "SELECT (SELECT coalesce(json_agg(x ORDER BY x.changed_at DESC, x.id DESC), '[]') FROM "
    "(SELECT c.id, c.plan_id, c.step_id, c.factor, c.scope, c.object, c.from_value AS from, "
    "c.to_value AS to, c.changed_at, c.restored_at, c.restored_by, c.restored_how "
    "FROM target_changes c "
    "WHERE c.target_name = t.name ORDER BY c.changed_at DESC, c.id DESC LIMIT $2) x)::text "
    "FROM targets t WHERE t.id = $1",
    2};

enum hv_db_status hv_db_steps_create(struct hv_db *db, const char *plan_id, const char *host,
                                     const char *seed, bool randomized)
{
    const char *p1[] = {plan_id, seed, randomized ? "t" : "f"};
    enum hv_db_status s = hv_db_exec(db, &set_blocks, p1, NULL);
    const char *p2[] = {plan_id};
    if (s == HV_DB_OK)
        s = hv_db_exec(db, &renumber, p2, NULL);
    const char *p3[] = {plan_id, host};
    if (s == HV_DB_OK)
        s = hv_db_exec(db, &insert_steps, p3, NULL);
    return hv_db_must(s);
}

/* Ticks run one at a time. Without this, two ticks that both found a
 * plan's block ended would both advance it: the second, finding the plan
 * row changed under it by the first, re-checks only that row (Read
 * Committed's recheck does not run the NOT EXISTS anti-joins again), so
 * it advanced from the new block too, skipping a block whose jobs then
 * stayed queued for good. Taken first, the lock makes the advance's
 * snapshot include every earlier tick. */
static const struct hv_stmt tick_lock = {"steps_tick_lock",
                                         "SELECT pg_advisory_xact_lock(742199, 0)", 0};

/* What a claim's sweeps have to do, asked first in one statement without
 * any lock (HV_SQL_SWEEPS_DUE): both sweeps are UPDATEs of jobs, whose
 * statement triggers run even when they change no row, and a tick takes a
 * lock, all for the steps of tuning and hooked plans, which most claims
 * have none of. A change this does not see yet commits later and wakes
 * the claims that ask again. */
static const struct hv_stmt sweeps_due = {
    "claim_sweeps_due",
    "SELECT " HV_SQL_SWEEPS_DUE ", "
    "EXISTS (SELECT 1 FROM plan_steps WHERE status = 'queued' AND target_name = "
    "(SELECT name FROM targets WHERE id = $1))",
    1};

static enum hv_db_status tick_txn(struct hv_db *db, void *arg)
{
    const char *const *lease = arg;
    enum hv_db_status s = hv_db_exec(db, &tick_lock, NULL, NULL);
    if (s != HV_DB_OK)
        return s;
    s = hv_db_exec(db, &expire, lease, NULL);
    if (s == HV_DB_OK || s == HV_DB_NONE)
        s = hv_db_exec(db, &recheck, NULL, NULL);
    if (s == HV_DB_OK || s == HV_DB_NONE)
        s = hv_db_exec(db, &advance, NULL, NULL);
    return s == HV_DB_NONE ? HV_DB_OK : s;
}

enum hv_db_status hv_db_steps_tick(int lease_s)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char lease[16];
    const char *params[] = {hv_db_int(lease, sizeof lease, lease_s)};
    return hv_db_txn(db, tick_txn, (void *)params);
}

enum hv_db_status hv_db_sweeps_due(int64_t target_id, bool *leases, bool *tick, bool *steps)
{
    *leases = *tick = *steps = true;
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char tid[24];
    const char *p[] = {hv_db_int(tid, sizeof tid, target_id)};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &sweeps_due, p, &r);
    if (s == HV_DB_OK) {
        *leases = PQgetvalue(r, 0, 0)[0] == 't';
        *tick = PQgetvalue(r, 0, 1)[0] == 't';
        *steps = PQgetvalue(r, 0, 2)[0] == 't';
    }
    PQclear(r);
    return s;
}

struct claim_args {
    const char *target, *worker, *lease;
    json_t *step;
};

/* The plan's lock comes before any row lock of the plan (migrations/045):
 * the step is looked at first, its plan locked when it is an apply step
 * (whose claim takes the plan's hold on the host, hv_plan_hold), and
 * then claimed if it still may be. Taken the other way round (the step's
 * row locked, then the plan's lock in hv_plan_hold), a claim would wait
 * for a cancel of the plan (server/db_plan_cancel.c) that holds the
 * plan's lock and waits for the queued step's row to cancel it. A step
 * another claim took meanwhile, or no longer claimable once the lock was
 * granted, gives HV_DB_NONE; the worker asks again. */
static enum hv_db_status claim_txn(struct hv_db *db, void *arg)
{
    struct claim_args *a = arg;
    json_decref(a->step);
    a->step = NULL;
    const char *p1[] = {a->target};
    PGresult *r = NULL;
    enum hv_db_status s = hv_db_exec(db, &claim_peek, p1, &r);
    if (s != HV_DB_OK) {
        PQclear(r);
        return s;
    }
    char sid[24], pid[24];
    snprintf(sid, sizeof sid, "%s", PQgetvalue(r, 0, 0));
    snprintf(pid, sizeof pid, "%s", PQgetvalue(r, 0, 1));
    bool apply = PQgetvalue(r, 0, 2)[0] == 't';
    PQclear(r);
    const char *pp[] = {pid};
    if (apply) {
        s = hv_db_plan_lock(db, pid);
        if (s != HV_DB_OK)
            return s;
    }
    const char *p2[] = {a->target, a->worker, a->lease, sid};
    s = hv_db_json_in(db, &claim, p2, &a->step);
    if (s == HV_DB_OK && apply)
        s = hv_db_must(hv_db_exec(db, &hold, pp, NULL));
    return s;
}

enum hv_db_status hv_db_step_claim(int64_t target_id, int64_t worker_id, int lease_s, json_t **step)
{
    *step = NULL;
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char tid[24], wid[24], lease[16];
    struct claim_args a = {hv_db_int(tid, sizeof tid, target_id),
                           hv_db_int(wid, sizeof wid, worker_id),
                           hv_db_int(lease, sizeof lease, lease_s), NULL};
    enum hv_db_status s = hv_db_txn(db, claim_txn, &a);
    if (s == HV_DB_OK)
        *step = a.step;
    else
        json_decref(a.step);
    return s;
}

enum hv_db_status hv_db_step_owner(int64_t id, int attempt, int64_t worker_id)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char sid[24], att[16], wid[24];
    const char *p[] = {hv_db_int(sid, sizeof sid, id), hv_db_int(att, sizeof att, attempt),
                       hv_db_int(wid, sizeof wid, worker_id)};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &owner, p, &r);
    if (s == HV_DB_OK && PQgetvalue(r, 0, 0)[0] != 't')
        s = HV_DB_CONFLICT;
    PQclear(r);
    return s;
}

enum hv_db_status hv_db_step_heartbeat(int64_t id, int attempt, int lease_s, bool *cancel)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char sid[24], att[16], lease[16];
    const char *p[] = {hv_db_int(sid, sizeof sid, id), hv_db_int(att, sizeof att, attempt),
                       hv_db_int(lease, sizeof lease, lease_s)};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &heartbeat, p, &r);
    if (s == HV_DB_OK)
        *cancel = PQgetvalue(r, 0, 0)[0] == 't';
    PQclear(r);
    return s;
}

struct result_args {
    const struct hv_step_result *r;
    bool replayed;
};

static enum hv_db_status result_txn(struct hv_db *db, void *arg)
{
    struct result_args *a = arg;
    const struct hv_step_result *res = a->r;
    char sid[24], att[16];
    hv_db_int(sid, sizeof sid, res->id);
    hv_db_int(att, sizeof att, res->attempt);
    a->replayed = false;
    const char *p1[] = {sid};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &step_plan_lock, p1, NULL);
    if (s != HV_DB_OK)
        return s;
    s = hv_db_exec(db, &lock_step, p1, &r);
    if (s != HV_DB_OK) {
        PQclear(r);
        return s;
    }
    bool running = strcmp(PQgetvalue(r, 0, 0), "running") == 0;
    bool ended = strcmp(PQgetvalue(r, 0, 0), "done") == 0 ||
                 strcmp(PQgetvalue(r, 0, 0), "failed") == 0 ||
                 strcmp(PQgetvalue(r, 0, 0), "waiting_for_operator") == 0;
    int current = atoi(PQgetvalue(r, 0, 1));
    bool restore = strcmp(PQgetvalue(r, 0, 2), "restore") == 0;
    bool before = strcmp(PQgetvalue(r, 0, 2), "before_host") == 0;
    bool hook = before || strcmp(PQgetvalue(r, 0, 2), "after_host") == 0;
    /* An apply step of a cancelled plan: its result is taken (what it
     * changed is recorded, the restore step puts it back), nothing more
     * is applied or released. */
    bool dropped = PQgetvalue(r, 0, 3)[0] == 't';
    PQclear(r);
    if (current == res->attempt && ended) {
        a->replayed = true;
        return HV_DB_OK;
    }
    if (!running || current != res->attempt)
        return HV_DB_CONFLICT;
    if (res->waiting != NULL && !restore && !hook && !dropped) {
        char recheck_s[16];
        const char *pw[] = {sid, res->error,
                            hv_db_int(recheck_s, sizeof recheck_s, HV_STEP_OPERATOR_RECHECK_S),
                            res->waiting};
        s = hv_db_exec(db, &wait_operator, pw, NULL);
        return s == HV_DB_NONE ? HV_DB_OK : s;
    }
    if (res->not_yet && before)
        return hv_db_hook_not_yet(db, res->id, res->attempt, res->error, res->answer, 0);
    /* A dropped apply step does not wait for the operator: it ends. */
    bool ok = res->ok && !(dropped && res->waiting != NULL);
    const char *p2[] = {sid, ok ? "t" : "f", ok ? NULL : res->error, res->settings, res->answer};
    s = hv_db_exec(db, &finish, p2, NULL);
    if (s == HV_DB_OK && hook) {
        if (before)
            s = hv_db_exec(db, &before_ended, p1, NULL);
        return s == HV_DB_NONE ? HV_DB_OK : s;
    }
    if (s == HV_DB_OK && !restore)
        s = hv_db_exec(db, &operator_done, p1, NULL);
    if ((s == HV_DB_OK || s == HV_DB_NONE) && !restore) {
        const char *pc[] = {sid, res->changes};
        s = hv_db_exec(db, &record_changes, pc, NULL);
        if ((s == HV_DB_OK || s == HV_DB_NONE) && dropped)
            s = hv_db_exec(db, &restore_again, p1, NULL);
        else if (s == HV_DB_OK || s == HV_DB_NONE)
            s = hv_db_exec(db, res->ok ? &release_block : &fail_block, p1, NULL);
    } else if (s == HV_DB_OK) {
        const char *pr[] = {sid, res->ok ? "t" : "f"};
        const char *pe[] = {NULL, res->changes, "step", sid};
        s = hv_db_exec(db, &release_hold, p1, NULL);
        if (s == HV_DB_OK)
            s = hv_db_exec(db, &restored_each, pe, NULL);
        if (s == HV_DB_OK)
            s = hv_db_exec(db, &restored, pr, NULL);
    }
    return s == HV_DB_NONE ? HV_DB_OK : s;
}

enum hv_db_status hv_db_step_result(const struct hv_step_result *r, bool *replayed)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    struct result_args a = {r, false};
    enum hv_db_status s = hv_db_txn(db, result_txn, &a);
    *replayed = a.replayed;
    return s;
}

enum hv_db_status hv_db_steps_cancel(struct hv_db *db, const char *plan_id)
{
    const char *p[] = {plan_id};
    enum hv_db_status s = hv_db_exec(db, &cancel_steps, p, NULL);
    return s == HV_DB_NONE ? HV_DB_OK : s;
}

enum hv_db_status hv_db_plan_steps(int64_t id, json_t **out)
{
    char pid[24];
    const char *p[] = {hv_db_int(pid, sizeof pid, id)};
    return hv_db_json(&list, p, out, NULL);
}

enum hv_db_status hv_db_target_changes(int64_t id, int limit, json_t **out)
{
    char tid[24], lim[16];
    const char *p[] = {hv_db_int(tid, sizeof tid, id), hv_db_int(lim, sizeof lim, limit)};
    return hv_db_json(&changes, p, out, NULL);
}

enum hv_db_status hv_db_changes_restored(int64_t worker_id, const char *entries, int64_t *marked)
{
    *marked = 0;
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char wid[24];
    const char *p[] = {hv_db_int(wid, sizeof wid, worker_id), entries, NULL, NULL};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &restored_each, p, &r);
    if (s == HV_DB_OK)
        *marked = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return s;
}
