/* db_jobs.c — see db_jobs.h. */
#include "db_jobs.h"

#include "db_admit.h"
#include "db_rounds.h"
#include "db_steps.h"
#include "log.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lost workers: a running job whose lease ran out goes back to the queue
 * (or fails after max_failures). The other running members of its group
 * go back too, without a failure, and the group starts over; when the lost
 * member failed for good, so do they. */
static const struct hv_stmt expire = {
    "leases_expire",
    "WITH expired AS ("
    " UPDATE jobs SET failures = failures + 1, lease_until = NULL, ready_at = NULL, "
    " lapsed_attempt = attempt, "
    " status = CASE WHEN failures + 1 >= max_failures THEN 'failed' ELSE 'queued' END, "
    " error = 'lease expired on attempt ' || attempt || ' (worker lost or too slow)' "
    " WHERE status = 'running' AND lease_until < now() RETURNING id, group_id, status), "
    "groups AS ("
    " UPDATE job_groups g SET start_at = NULL, aborts = aborts + 1 "
    " WHERE g.id IN (SELECT group_id FROM expired WHERE group_id IS NOT NULL) "
    " RETURNING g.id, EXISTS (SELECT 1 FROM expired e WHERE e.group_id = g.id "
    "  AND e.status = 'failed') AS failed), "
    "peers AS ("
    " UPDATE jobs j SET lease_until = NULL, ready_at = NULL, "
    " status = CASE WHEN groups.failed THEN 'failed' ELSE 'queued' END, "
    " error = 'group aborted: a member''s lease expired' "
    " FROM groups WHERE j.group_id = groups.id AND j.status IN ('running', 'queued') "
    " AND j.id NOT IN (SELECT id FROM expired) RETURNING j.id) "
    "SELECT (SELECT count(*) FROM expired) + (SELECT count(*) FROM peers)",
    0};

/* The target's name is looked up first so the partial index of queued
 * jobs (jobs_queue_idx) serves the claim: a join on targets made the
 * planner walk every job ever run. A job of a tuning plan is claimable
 * only in its plan's current block, once that block's configuration was
 * applied (db_steps.h), and only while no job of its plan runs on another
 * of the plan's targets, which share one hypervisor (a group's members
 * excepted: they run together; migrations/009_one_job_per_hypervisor.sql).
 * A guest job is not given to a worker whose DMI product UUID is not the
 * UUID of the domain its target names: the UUID the plan's host worker
 * reported when it made the clone (its change "template" from "absent"),
 * else the one its facts list for a domain of that name; a guest whose
 * domain is unknown is not checked. A guest of a known host ("HOST/NAME")
 * also takes the jobs that name it NAME in plans on that host, resolved
 * before it registered, while no target is called NAME. */
#define JOB_ADMITTED HV_SQL_PLAN_ADMITTED("j.plan_id")
/* A long poll parked before its worker signed off (a guest powering off)
 * takes nothing: its answer would go nowhere and the job would wait for
 * its lease. A fleet plan's child waits for a slot among its siblings
 * (migrations/022_fleet_plans.sql). Nothing of a plan runs before its
 * before_host hook succeeded. */
#define CLAIM_WHERE(target)                                                                        \
    " AND j.status = 'queued'"                                                                     \
    " AND " JOB_ADMITTED " AND (j.block IS NULL OR EXISTS (SELECT 1 FROM plans p"                  \
    "  WHERE p.id = j.plan_id AND p.current_block = j.block AND p.block_ready))"                   \
    " AND NOT EXISTS (SELECT 1 FROM plan_steps h WHERE h.plan_id = j.plan_id"                      \
    "  AND h.kind = 'before_host' AND h.status IN ('waiting', 'queued', 'running'))"               \
    " AND NOT EXISTS (SELECT 1 FROM targets me, plans p, LATERAL (SELECT coalesce("                \
    "  (SELECT c.to_value FROM target_changes c WHERE c.plan_id = p.id AND c.factor = 'template'"  \
    "   AND c.object = hv_domain_name(j.target_name) AND c.from_value = 'absent' ORDER BY c.id "   \
    "DESC LIMIT 1), "                                                                              \
    "  (SELECT d->>'uuid' FROM targets h, jsonb_array_elements(coalesce(h.facts->'libvirt'->"      \
    "   'domains', '[]')) d WHERE h.name = p.spec->'targets'->>'host' AND d->>'name' = "           \
    "   hv_domain_name(j.target_name) LIMIT 1)) AS uuid) dom "                                     \
    "  WHERE me.id = " target                                                                      \
    " AND p.id = j.plan_id AND j.target_name <> p.spec->'targets'->>'host' "                       \
    "  AND dom.uuid IS NOT NULL AND lower(dom.uuid) IS DISTINCT FROM lower(me.dmi_uuid))"
/* No job of the plan runs on another of its targets (a group's members
 * excepted): asked by the single claim only, since the batch takes jobs
 * of plans on one target alone. */
#define CLAIM_NOT_ELSEWHERE                                                                        \
    " AND NOT EXISTS (SELECT 1 FROM jobs o WHERE o.plan_id = j.plan_id AND o.status = 'running'"   \
    "  AND o.target_name <> j.target_name"                                                         \
    "  AND (j.group_id IS NULL OR o.group_id IS DISTINCT FROM j.group_id))"
#define CLAIM_CONDITIONS                                                                           \
    CLAIM_WHERE("$1")                                                                              \
    CLAIM_NOT_ELSEWHERE                                                                            \
    " AND EXISTS (SELECT 1 FROM workers w WHERE w.id = $3 AND w.ended_at IS NULL)"                 \
    " ORDER BY j.plan_id, j.run_order LIMIT 1 FOR UPDATE OF j SKIP LOCKED"

/* The document a worker gets for the job j (of configuration c) it
 * claimed. A job on its tuning plan's host also carries what the block's
 * apply step read back, the plan's disk and NIC and its guests' domains,
 * so the worker reads the levels again when the job ends. */
#define JOB_DOC                                                                                    \
    "json_build_object('id', j.id, "                                                               \
    "'attempt', j.attempt, 'plan_id', j.plan_id, 'configuration', c.name, 'levels', c.levels, "    \
    "'repetition', j.repetition, 'workload', j.workload, 'role', j.role, 'group', "                \
    "(SELECT json_build_object('id', g.id, 'size', g.size) FROM job_groups g "                     \
    "WHERE g.id = j.group_id), 'tuning', (SELECT json_build_object('settings', s.settings, "       \
    "'disk', p.spec->'tuning'->'disk', 'nic', p.spec->'tuning'->'nic', 'domains', "                \
    "(SELECT coalesce(json_agg(DISTINCT hv_domain_name(o.target_name)), '[]') FROM jobs o "        \
    "WHERE o.plan_id = p.id AND o.target_name <> p.host_name)) "                                   \
    "FROM plans p JOIN plan_steps s ON s.plan_id = p.id "                                          \
    "AND s.kind = 'apply' AND s.block = j.block WHERE p.id = j.plan_id "                           \
    "AND p.host_name = j.target_name AND s.settings IS NOT NULL))::text"

/* What a claim does to the job it found, leased for lease seconds. */
#define CLAIM_SET(lease)                                                                           \
    "UPDATE jobs j SET status = 'running', attempt = j.attempt + 1, "                              \
    "lease_until = now() + make_interval(secs => " lease "::int), claimed_at = now(), "            \
    "ready_at = NULL, "                                                                            \
    "lapsed_attempt = NULL, target_id = "

/* What a claim does with the job it found (next): runs it, under the
 * claim's lease, records who has it, and answers the job's document and
 * whether the plan has jobs on another target (its kept counts,
 * migrations/016, read by their key: the view plan_job_counts would sum
 * every plan's shards first): only then can two claims overlap
 * (claim_txn). */
#define CLAIM_TAIL                                                                                 \
    ", claimed AS (" CLAIM_SET(                                                                    \
        "$2") "$1 FROM next, configurations c "                                                    \
              "WHERE j.id = next.id AND c.id = j.config_id "                                       \
              "RETURNING j.id, j.attempt, j.plan_id, j.target_name, " JOB_DOC " AS doc), "         \
              "mine AS (INSERT INTO job_claims (job_id, attempt, worker_id) "                      \
              " SELECT id, attempt, $3 FROM claimed), "                                            \
              "answer AS (SELECT doc, EXISTS (SELECT 1 FROM plan_job_count_shards k "              \
              " WHERE k.plan_id = claimed.plan_id AND k.target_name <> claimed.target_name) AS "   \
              "shared "                                                                            \
              " FROM claimed) "

/* A target that is not a guest of a known host takes only jobs of its own
 * name: compared with one value, the partial index of queued jobs hands
 * them out in claim order and the first one admitted ends the scan (a list
 * of names, as a guest's below, makes the planner collect and sort every
 * queued job of the target on each claim: some 18 ms a claim with 2,700
 * queued). Its one row says, when no job was found, whether the target is
 * a guest of a known host, which claim_guest serves. */
static const struct hv_stmt claim = {
    "job_claim",
    "WITH next AS ("
    " SELECT j.id FROM jobs j"
    " WHERE j.target_name = (SELECT name FROM targets WHERE id = $1 AND host_id IS "
    "NULL)" CLAIM_CONDITIONS ")" CLAIM_TAIL
    "SELECT a.doc, a.shared, t.host_id IS NOT NULL FROM targets t LEFT JOIN answer a ON true "
    "WHERE t.id = $1",
    3};

/* A guest of a known host also takes the jobs that name it by its short
 * name in plans on its host (they are few). */
static const struct hv_stmt claim_guest = {
    "job_claim_guest",
    "WITH next AS ("
    " SELECT j.id FROM jobs j"
    " WHERE j.target_name IN (SELECT name FROM targets WHERE id = $1 UNION ALL SELECT g.short_name"
    "  FROM targets g WHERE g.id = $1 AND g.host_id IS NOT NULL"
    "  AND NOT EXISTS (SELECT 1 FROM targets o WHERE o.name = g.short_name))"
    " AND (j.target_name = (SELECT name FROM targets WHERE id = $1) OR EXISTS (SELECT 1"
    "  FROM plans hp, targets g JOIN targets h ON h.id = g.host_id WHERE g.id = $1"
    "  AND hp.id = j.plan_id AND hp.spec->'targets'->>'host' = h.name))" CLAIM_CONDITIONS
    ")" CLAIM_TAIL "SELECT doc, shared FROM answer",
    3};

/* The claims of many workers in one statement (batch.h), which also asks
 * the sweeps' questions (HV_SQL_SWEEPS_DUE) for the batch: $1 their
 * targets and $2 the workers, one entry each in the order they asked, $3
 * the lease, $4 the most entries of one target. It does only what a
 * claim of one target alone would do: a guest of a known host, a target
 * with a step queued, and the jobs of plans on more than one target (whose
 * claims look again under the plan's lock, claim_txn) are left to the
 * single claim above. Each target's first admitted jobs in claim order
 * (up to $4, FOR UPDATE SKIP LOCKED) go to its entries by rank, which
 * gives each entry at most one job and no job two entries. One row an
 * entry, in order: the job's document or NULL, and whether the entry still
 * needs the single claim (its target is one left to it, or has queued
 * jobs this statement did not take), and in every row the two answers of
 * HV_SQL_SWEEPS_DUE. */
static const struct hv_stmt claim_many = {
    "job_claim_many",
    "WITH w AS (SELECT e.target_id, e.worker_id, e.i, "
    " row_number() OVER (PARTITION BY e.target_id ORDER BY e.i) AS k"
    " FROM unnest($1::bigint[], $2::bigint[]) WITH ORDINALITY AS e(target_id, worker_id, i)"
    " WHERE EXISTS (SELECT 1 FROM workers wk WHERE wk.id = e.worker_id AND wk.ended_at IS NULL)), "
    "t AS (SELECT t.id, t.name FROM targets t WHERE t.id = ANY ($1::bigint[]) AND t.host_id IS NULL"
    " AND NOT EXISTS (SELECT 1 FROM plan_steps s WHERE s.status = 'queued'"
    "  AND s.target_name = t.name)), "
    "next AS (SELECT t.id AS target_id, x.id, "
    " row_number() OVER (PARTITION BY t.id ORDER BY x.plan_id, x.run_order) AS k"
    " FROM t CROSS JOIN LATERAL (SELECT j.id, j.plan_id, j.run_order FROM jobs j"
    " WHERE j.target_name = t.name" CLAIM_WHERE(
        "t.id") " AND NOT EXISTS (SELECT 1 FROM plan_job_count_shards pk WHERE pk.plan_id = "
                "j.plan_id"
                "  AND pk.target_name <> j.target_name)"
                " ORDER BY j.plan_id, j.run_order LIMIT $4 FOR UPDATE OF j SKIP LOCKED) x), "
                "pick AS (SELECT next.id, next.target_id, w.worker_id, w.i FROM next"
                " JOIN w ON w.target_id = next.target_id AND w.k = next.k), "
                "claimed AS (" CLAIM_SET(
                    "$3") "pick.target_id FROM pick, configurations c "
                          "WHERE j.id = pick.id AND c.id = j.config_id "
                          "RETURNING pick.i, pick.worker_id, j.id, j.attempt, " JOB_DOC " AS doc), "
                          "mine AS (INSERT INTO job_claims (job_id, attempt, worker_id) "
                          " SELECT id, attempt, worker_id FROM claimed) "
                          /* A target's queued job the batch did not take,
                           * looked for in its queue's index order: as an
                           * EXISTS, PostgreSQL may expect one soon in a scan
                           * of every job, which an empty queue reads whole. */
                          "SELECT c.doc, c.doc IS NULL AND (t.id IS NULL OR (SELECT q.id "
                          "FROM jobs q WHERE q.target_name = t.name AND q.status = 'queued' "
                          "AND q.id NOT IN (SELECT id FROM pick) "
                          "ORDER BY q.plan_id, q.run_order LIMIT 1) IS NOT NULL), due.*"
                          " FROM unnest($1::bigint[]) WITH ORDINALITY AS e(target_id, i)"
                          " CROSS JOIN (SELECT " HV_SQL_SWEEPS_DUE ") due"
                          " LEFT JOIN t ON t.id = e.target_id LEFT JOIN claimed c ON c.i = e.i "
                          "ORDER BY e.i",
    4};

/* A cancelled job answers with cancel = true instead of a conflict, so
 * its worker stops the engine rather than treating it as a lost lease. */
static const struct hv_stmt heartbeat = {
    "job_heartbeat",
    "UPDATE jobs SET lease_until = CASE WHEN status = 'running' "
    "THEN now() + make_interval(secs => $3::int) ELSE lease_until END "
    "WHERE id = $1 AND attempt = $2 AND status IN ('running', 'cancelled') "
    "RETURNING status = 'cancelled'",
    3};

/* A released job goes back without a failure; so do the running members
 * of its group, whose barrier can no longer complete. */
static const struct hv_stmt release = {
    "job_release",
    "WITH me AS ("
    " UPDATE jobs SET status = 'queued', lease_until = NULL, ready_at = NULL, error = $3 "
    " WHERE id = $1 AND attempt = $2 AND status = 'running' RETURNING id, group_id), "
    "g AS (UPDATE job_groups SET start_at = NULL, aborts = aborts + 1 "
    " WHERE id = (SELECT group_id FROM me) RETURNING id) "
    "UPDATE jobs j SET status = 'queued', lease_until = NULL, ready_at = NULL, "
    "error = 'group aborted: a member was released' FROM g "
    "WHERE j.group_id = g.id AND j.status = 'running' AND j.id <> $1 "
    "RETURNING (SELECT count(*) FROM me)",
    3};
static const struct hv_stmt release_check = {
    "job_release_check",
    "SELECT 1 FROM jobs WHERE id = $1 AND attempt = $2 AND status = "
    "'queued' AND error = $3",
    3};

/* The group barrier: lock the member, mark it ready, then lock the group
 * row (so two members readying at once count each other) and start the
 * group when the last member is ready. */
static const struct hv_stmt ready_member = {
    "group_ready_member",
    "UPDATE jobs SET ready_at = coalesce(ready_at, now()), "
    "lease_until = now() + make_interval(secs => $3::int), "
    "endpoint = coalesce($4::jsonb, endpoint) "
    "WHERE id = $1 AND attempt = $2 AND status = 'running' AND group_id IS NOT NULL "
    "RETURNING group_id",
    4};
static const struct hv_stmt ready_endpoints = {
    "group_ready_endpoints",
    "SELECT coalesce(json_agg(json_build_object('job_id', id, 'role', role, 'target', "
    "target_name, 'host', endpoint->>'host', 'port', (endpoint->>'port')::int) ORDER BY id), "
    "'[]')::text FROM jobs WHERE group_id = $1 AND status = 'running' AND endpoint IS NOT NULL",
    1};
static const struct hv_stmt ready_group = {
    "group_ready_count",
    "WITH g AS (SELECT id, size, start_at FROM job_groups WHERE id = $1 FOR UPDATE) "
    "SELECT g.size, (SELECT count(*) FROM jobs j WHERE j.group_id = g.id "
    " AND j.status = 'running' AND j.ready_at IS NOT NULL), "
    "to_char(g.start_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') FROM g",
    1};
static const struct hv_stmt ready_start = {
    "group_ready_start",
    "UPDATE job_groups SET start_at = now() + make_interval(secs => $2::float8) WHERE id = $1 "
    "RETURNING to_char(start_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), "
    "pg_notify('hv_group', id::text)",
    2};

/* A member that failed for good takes the rest of its group with it: the
 * group can never run complete again. */
static const struct hv_stmt fail_group = {
    "group_fail_peers",
    "UPDATE jobs SET status = 'failed', lease_until = NULL, finished_at = now(), "
    "error = 'group member ' || $1 || ' failed' "
    "WHERE group_id = (SELECT group_id FROM jobs WHERE id = $1) AND id <> $1 "
    "AND status IN ('queued', 'running')",
    1};

/* A lapsed attempt (its lease ran out, nothing claimed it since) of a job
 * outside a group may still deliver: the measurement is whole, and only
 * its heartbeats were lost. In a group the peers were sent back already.
 * The same row says who claimed the attempt (only its claimer may store,
 * migrations/005) and whether its result is stored already (a replayed
 * upload). */
static const struct hv_stmt lock_job = {
    "result_lock_job",
    "SELECT status, attempt, status IN ('queued', 'failed') AND lapsed_attempt = attempt "
    "AND group_id IS NULL, (SELECT r.id FROM results r WHERE r.job_id = $1 AND r.attempt = $2), "
    "(SELECT c.worker_id FROM job_claims c WHERE c.job_id = $1 AND c.attempt = $2) = $3 "
    "FROM jobs WHERE id = $1 FOR UPDATE",
    3};
/* A job of a tuning plan carries the levels its host worker read back
 * when it applied the block's configuration (observed.host_settings),
 * beside what the job's own worker read (observed.settings). */
/* The result and its metrics (four arrays: names, values, units, whether
 * higher is better), in one statement. */
/* What the block's apply step read back for the job whose id job gives
 * (observed.host_settings), as a jsonb object, else {}. */
#define HOST_SETTINGS(job)                                                                         \
    "coalesce((SELECT jsonb_build_object('host_settings', s.settings) FROM jobs j "                \
    " JOIN plan_steps s ON s.plan_id = j.plan_id AND s.kind = 'apply' AND s.block = j.block "      \
    " WHERE j.id = " job " AND s.settings IS NOT NULL), '{}')"
static const struct hv_stmt insert_result = {
    "result_insert",
    "WITH r AS (INSERT INTO results (job_id, attempt, status, error, started_at, finished_at, "
    "observed, raw) "
    "SELECT $1, $2, $3, $4, $5::timestamptz, $6::timestamptz, coalesce($7::jsonb, '{}') "
    "|| " HOST_SETTINGS(
        "$1") ", $8 "
              "RETURNING id), "
              "m AS (INSERT INTO metrics (result_id, name, value, unit, higher_is_better) "
              "SELECT r.id, u.n, u.v, u.u, u.h "
              "FROM r, unnest($9::text[], $10::float8[], $11::text[], $12::bool[]) AS u(n, v, u, "
              "h)) "
              "SELECT id FROM r",
    12};
/* A job's end: done or failed as its result says, with that error. */
#define FINISH_SET(status, error)                                                                  \
    "status = CASE WHEN " status " = 'ok' THEN 'done' ELSE 'failed' END, "                         \
    "lease_until = NULL, finished_at = now(), error = " error ", "                                 \
    "failures = CASE WHEN lapsed_attempt = attempt THEN greatest(failures - 1, 0) "                \
    " ELSE failures END, lapsed_attempt = NULL "
static const struct hv_stmt finish_job = {
    "result_finish_job",
    "UPDATE jobs SET " FINISH_SET("$2",
                                  "$3") "WHERE id = $1 RETURNING " HV_SQL_ROUND_MAY_DECIDE("jobs"),
    3};

/* The same three for many results at once (hv_db_result_store_many),
 * their jobs' rows locked in the order given (ascending ids, so two
 * batches never wait on each other in a circle). The lock says too
 * whether each job's end may decide its plan's round: the job is of the
 * plan's latest round then, and a round only ever comes after it (the
 * decision looks again under the plan's lock). */
static const struct hv_stmt lock_many = {
    "result_lock_many",
    "SELECT j.status, j.attempt, j.status IN ('queued', 'failed') AND j.lapsed_attempt = j.attempt "
    "AND j.group_id IS NULL, (SELECT r.id FROM results r WHERE r.job_id = e.job_id "
    "AND r.attempt = e.attempt), (SELECT c.worker_id FROM job_claims c WHERE c.job_id = e.job_id "
    "AND c.attempt = e.attempt) = e.worker_id, " HV_SQL_ROUND_MAY_DECIDE(
        "j") " "
             "FROM unnest($1::bigint[], $2::int[], $3::bigint[]) WITH ORDINALITY AS e(job_id, "
             "attempt, "
             "worker_id, i) LEFT JOIN LATERAL (SELECT status, attempt, lapsed_attempt, group_id, "
             "plan_id, "
             "repetition FROM jobs WHERE id = e.job_id FOR UPDATE) j ON true ORDER BY e.i",
    3};
static const struct hv_stmt insert_many = {
    "result_insert_many",
    "WITH e AS (SELECT * FROM unnest($1::bigint[], $2::int[], $3::text[], $4::text[], "
    "$5::timestamptz[], $6::timestamptz[], $7::jsonb[], $8::text[]) AS e(job_id, attempt, status, "
    "error, started_at, finished_at, observed, raw)), "
    "r AS (INSERT INTO results (job_id, attempt, status, error, started_at, finished_at, "
    "observed, raw) "
    "SELECT e.job_id, e.attempt, e.status, e.error, e.started_at, e.finished_at, "
    "coalesce(e.observed, '{}') || " HOST_SETTINGS(
        "e.job_id") ", e.raw FROM e "
                    "RETURNING id, job_id), "
                    "m AS (INSERT INTO metrics (result_id, name, value, unit, higher_is_better) "
                    "SELECT r.id, u.n, u.v, u.u, u.h FROM unnest($9::bigint[], $10::text[], "
                    "$11::float8[], "
                    "$12::text[], $13::bool[]) WITH ORDINALITY AS u(job_id, n, v, u, h, k) "
                    "JOIN r ON r.job_id = u.job_id ORDER BY u.k) "
                    "SELECT job_id, id FROM r",
    13};
static const struct hv_stmt finish_many = {
    "result_finish_many",
    "UPDATE jobs SET " FINISH_SET(
        "e.status", "e.error") "FROM unnest($1::bigint[], $2::text[], "
                               "$3::text[]) AS e(id, status, error) WHERE jobs.id = e.id "
                               "RETURNING jobs.id, jobs.plan_id",
    3};

enum hv_db_status hv_db_sweeps_run(bool leases_due, bool tick_due)
{
    long expired = 0;
    enum hv_db_status s = leases_due ? hv_db_leases_expire(&expired) : HV_DB_OK;
    if (expired > 0)
        hv_info("%ld job%s back in the queue after an expired lease", expired,
                expired == 1 ? "" : "s");
    if (s == HV_DB_OK && tick_due)
        s = hv_db_steps_tick();
    return s;
}

enum hv_db_status hv_db_claim_sweeps(int64_t target_id, bool *steps)
{
    bool leases_due, tick_due, steps_queued;
    enum hv_db_status s = hv_db_sweeps_due(target_id, &leases_due, &tick_due, &steps_queued);
    if (s == HV_DB_OK)
        s = hv_db_sweeps_run(leases_due, tick_due);
    *steps = steps_queued || tick_due;
    return s;
}

enum hv_db_status hv_db_leases_expire(long *n)
{
    *n = 0;
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &expire, NULL, &r);
    *n = s == HV_DB_OK ? atol(PQgetvalue(r, 0, 0)) : 0;
    PQclear(r);
    return s == HV_DB_NONE ? HV_DB_OK : s;
}

/* Two claims of one plan from two of its targets may run at the same
 * moment (a job that ends wakes both), each seeing in its snapshot no job
 * of the plan running. So after its claim statement a claim takes the
 * plan's claim lock (a transaction-scoped advisory lock, which nothing
 * else takes) and looks again with a fresh snapshot: the claim that comes
 * second sees the first one's job running on another target and is
 * rolled back. A plan whose jobs all run on one target (most, and every
 * host of a fleet) has no other target to overlap with: its claims take
 * neither, so they do not queue on the lock until each commits. */
static const struct hv_stmt claim_lock = {
    "job_claim_lock",
    "SELECT pg_advisory_xact_lock(742199, (SELECT plan_id FROM jobs WHERE id = $1)::int)", 1};
static const struct hv_stmt claim_overlap = {
    "job_claim_overlap",
    "SELECT 1 FROM jobs me, jobs o WHERE me.id = $1 AND o.plan_id = me.plan_id "
    "AND o.status = 'running' AND o.id <> me.id AND o.target_name <> me.target_name "
    "AND (me.group_id IS NULL OR o.group_id IS DISTINCT FROM me.group_id) LIMIT 1",
    1};

struct claim_args {
    const char *const *params;
    json_t *job;
};

static enum hv_db_status claim_txn(struct hv_db *db, void *arg)
{
    struct claim_args *a = arg;
    json_decref(a->job);
    a->job = NULL;
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &claim, a->params, &r);
    if (s == HV_DB_OK && PQgetisnull(r, 0, 0)) {
        bool guest = PQgetvalue(r, 0, 2)[0] == 't';
        PQclear(r);
        r = NULL;
        s = guest ? hv_db_exec(db, &claim_guest, a->params, &r) : HV_DB_NONE;
    }
    bool shared = false;
    if (s == HV_DB_OK) {
        a->job = json_loads(PQgetvalue(r, 0, 0), 0, NULL);
        shared = PQgetvalue(r, 0, 1)[0] == 't';
        if (a->job == NULL)
            s = HV_DB_ERROR;
    }
    PQclear(r);
    if (s != HV_DB_OK || !shared)
        return s; /* a plan of one target: no other target's claim to look for */
    char idtxt[24];
    const char *id[] = {
        hv_db_int(idtxt, sizeof idtxt, json_integer_value(json_object_get(a->job, "id")))};
    s = hv_db_exec(db, &claim_lock, id, NULL);
    if (s == HV_DB_OK)
        s = hv_db_exec(db, &claim_overlap, id, NULL);
    if (s == HV_DB_OK) {
        /* Another target of the plan got there first: undo this claim. */
        json_decref(a->job);
        a->job = NULL;
        return HV_DB_CONFLICT;
    }
    return s == HV_DB_NONE ? HV_DB_OK : s;
}

enum hv_db_status hv_db_job_claim(int64_t target_id, int64_t worker_id, int lease_s, json_t **job)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char tid[24], lease[16], wid[24];
    snprintf(tid, sizeof tid, "%lld", (long long)target_id);
    snprintf(lease, sizeof lease, "%d", lease_s);
    const char *params[] = {tid, lease, hv_db_int(wid, sizeof wid, worker_id)};
    struct claim_args a = {.params = params};
    enum hv_db_status s = hv_db_txn(db, claim_txn, &a);
    if (s == HV_DB_CONFLICT)
        s = HV_DB_NONE; /* nothing to run now; the running job's end wakes us */
    if (s == HV_DB_OK)
        *job = a.job;
    else
        json_decref(a.job);
    return s;
}

/* Appends v to the array literal being built in buf ("{1,2,3}"). */
static void array_add(char *buf, size_t size, size_t *len, int64_t v, bool last)
{
    int n = snprintf(buf + *len, size - *len, "%lld%s", (long long)v, last ? "}" : ",");
    *len += n > 0 ? (size_t)n : 0;
}

enum hv_db_status hv_db_job_claim_many(struct hv_claim_entry *e, size_t n, int lease_s,
                                       bool *leases_due, bool *tick_due)
{
    *leases_due = *tick_due = false;
    for (size_t i = 0; i < n; i++) {
        e[i].outcome = HV_CLAIM_SINGLE;
        e[i].job = NULL;
    }
    if (n == 0 || n > HV_CLAIM_MANY_MAX)
        return n == 0 ? HV_DB_OK : HV_DB_ERROR;
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    /* Each id takes at most 20 digits and a separator. */
    char targets[HV_CLAIM_MANY_MAX * 21 + 2] = "{", workers[sizeof targets] = "{";
    size_t tl = 1, wl = 1;
    long most = 1;
    for (size_t i = 0; i < n; i++) {
        array_add(targets, sizeof targets, &tl, e[i].target_id, i + 1 == n);
        array_add(workers, sizeof workers, &wl, e[i].worker_id, i + 1 == n);
        long same = 0;
        for (size_t k = 0; k < n; k++)
            same += e[k].target_id == e[i].target_id;
        if (same > most)
            most = same;
    }
    char lease[16], most_txt[16];
    const char *params[] = {targets, workers, hv_db_int(lease, sizeof lease, lease_s),
                            hv_db_int(most_txt, sizeof most_txt, most)};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &claim_many, params, &r);
    if (s == HV_DB_OK && (size_t)PQntuples(r) != n)
        s = HV_DB_ERROR;
    if (s == HV_DB_OK) {
        *leases_due = PQgetvalue(r, 0, 2)[0] == 't';
        *tick_due = PQgetvalue(r, 0, 3)[0] == 't';
    }
    for (size_t i = 0; s == HV_DB_OK && i < n; i++) {
        if (!PQgetisnull(r, (int)i, 0)) {
            e[i].job = json_loads(PQgetvalue(r, (int)i, 0), 0, NULL);
            /* A document that does not parse goes to the single claim, which
             * reports it; the job waits for its lease. */
            e[i].outcome = e[i].job != NULL ? HV_CLAIM_JOB : HV_CLAIM_SINGLE;
        } else {
            e[i].outcome = PQgetvalue(r, (int)i, 1)[0] == 't' ? HV_CLAIM_SINGLE : HV_CLAIM_NONE;
        }
    }
    PQclear(r);
    return s;
}

enum hv_db_status hv_db_job_heartbeat(int64_t id, int attempt, int lease_s, bool *cancel)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char idtxt[24], att[16], lease[16];
    snprintf(idtxt, sizeof idtxt, "%lld", (long long)id);
    snprintf(att, sizeof att, "%d", attempt);
    snprintf(lease, sizeof lease, "%d", lease_s);
    const char *params[] = {idtxt, att, lease};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &heartbeat, params, &r);
    if (s == HV_DB_OK)
        *cancel = PQgetvalue(r, 0, 0)[0] == 't';
    PQclear(r);
    return s;
}

static enum hv_db_status release_txn(struct hv_db *db, void *arg)
{
    const char *const *params = arg;
    enum hv_db_status s = hv_db_exec(db, &release, params, NULL);
    if (s != HV_DB_OK && s != HV_DB_NONE)
        return s;
    /* The statement returns rows only for group peers; whether this job was
     * released shows in its new state. */
    return hv_db_exec(db, &release_check, params, NULL);
}

enum hv_db_status hv_db_job_release(int64_t id, int attempt, const char *reason)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char idtxt[24], att[16];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id), hv_db_int(att, sizeof att, attempt),
                            reason};
    return hv_db_txn(db, release_txn, (void *)params);
}

struct ready_args {
    const char *const *params; /* id, attempt, lease, endpoint */
    double delay;
    struct hv_group_state *out;
};

static enum hv_db_status ready_txn(struct hv_db *db, void *arg)
{
    struct ready_args *a = arg;
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &ready_member, a->params, &r);
    if (s != HV_DB_OK) {
        PQclear(r);
        return s;
    }
    char gid[24];
    snprintf(gid, sizeof gid, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
    a->out->group_id = strtoll(gid, NULL, 10);
    const char *p1[] = {gid};
    s = hv_db_exec(db, &ready_group, p1, &r);
    if (s != HV_DB_OK) {
        PQclear(r);
        return hv_db_must(s);
    }
    a->out->size = atoi(PQgetvalue(r, 0, 0));
    a->out->ready = atoi(PQgetvalue(r, 0, 1));
    snprintf(a->out->start_at, sizeof a->out->start_at, "%s", PQgetvalue(r, 0, 2));
    PQclear(r);
    json_t *eps = NULL;
    s = hv_db_json(&ready_endpoints, p1, &eps, NULL);
    if (s != HV_DB_OK) {
        json_decref(eps);
        return hv_db_must(s);
    }
    json_decref(a->out->endpoints);
    a->out->endpoints = eps;
    if (a->out->start_at[0] != '\0' || a->out->ready < a->out->size)
        return HV_DB_OK;
    char delay[32];
    snprintf(delay, sizeof delay, "%.3f", a->delay);
    const char *p2[] = {gid, delay};
    s = hv_db_exec(db, &ready_start, p2, &r);
    if (s == HV_DB_OK)
        snprintf(a->out->start_at, sizeof a->out->start_at, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
    return hv_db_must(s);
}

enum hv_db_status hv_db_job_ready(int64_t id, int attempt, int lease_s, double delay,
                                  const char *endpoint_json, struct hv_group_state *out)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char idtxt[24], att[16], lease[16];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id), hv_db_int(att, sizeof att, attempt),
                            hv_db_int(lease, sizeof lease, lease_s), endpoint_json};
    memset(out, 0, sizeof *out);
    struct ready_args a = {params, delay, out};
    return hv_db_txn(db, ready_txn, &a);
}

/* Appends text to a COPY text-format line, escaping what COPY treats
 * specially. */
static size_t copy_escape(char *out, size_t cap, const char *s)
{
    size_t k = 0;
    for (; *s && k + 2 < cap; s++) {
        switch (*s) {
        case '\\':
            out[k++] = '\\';
            out[k++] = '\\';
            break;
        case '\t':
            out[k++] = '\\';
            out[k++] = 't';
            break;
        case '\n':
            out[k++] = '\\';
            out[k++] = 'n';
            break;
        case '\r':
            out[k++] = '\\';
            out[k++] = 'r';
            break;
        default:
            out[k++] = *s;
        }
    }
    out[k] = '\0';
    return k;
}

/* Loads the samples with COPY: far cheaper than INSERTs for thousands of
 * rows, and still inside the result's transaction. */
static enum hv_db_status copy_samples(struct hv_db *db, const char *result_id,
                                      const json_t *samples)
{
    PGconn *c = hv_db_pg(db);
    PGresult *r = PQexec(c, "COPY samples (result_id, metric, t, value) FROM STDIN");
    if (PQresultStatus(r) != PGRES_COPY_IN) {
        hv_error("database: COPY samples: %s", PQresultErrorMessage(r));
        PQclear(r);
        return HV_DB_ERROR;
    }
    PQclear(r);
    char buf[65536];
    size_t k = 0;
    int ok = 1;
    for (size_t i = 0; i < json_array_size(samples) && ok; i++) {
        const json_t *smp = json_array_get(samples, i);
        char metric[300];
        copy_escape(metric, sizeof metric, json_string_value(json_object_get(smp, "metric")));
        if (k + 512 > sizeof buf) {
            ok = PQputCopyData(c, buf, (int)k) == 1;
            k = 0;
        }
        k += (size_t)snprintf(buf + k, sizeof buf - k, "%s\t%s\t%.17g\t%.17g\n", result_id, metric,
                              json_number_value(json_object_get(smp, "t")),
                              json_number_value(json_object_get(smp, "value")));
    }
    if (ok && k > 0)
        ok = PQputCopyData(c, buf, (int)k) == 1;
    if (PQputCopyEnd(c, ok ? NULL : "client error") != 1)
        ok = 0;
    r = PQgetResult(c);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        hv_error("database: COPY samples: %s", PQresultErrorMessage(r));
        ok = 0;
    }
    PQclear(r);
    while ((r = PQgetResult(c)) != NULL)
        PQclear(r);
    return ok ? HV_DB_OK : HV_DB_ERROR;
}

/* The metrics of the n uploads u as five PostgreSQL array literals
 * (malloc'd): the job each belongs to, names, values, units, whether
 * higher is better. Returns 0, or -1 without memory. */
static int metric_arrays(const struct hv_result_upload *const *u, size_t n, char *arrays[5])
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += json_array_size(u[i]->metrics);
    const char **jobs = calloc(total + 1, sizeof *jobs), **names = calloc(total + 1, sizeof *names);
    const char **units = calloc(total + 1, sizeof *units), **vals = calloc(total + 1, sizeof *vals);
    const char **hib = calloc(total + 1, sizeof *hib);
    char(*numbuf)[32] = calloc(total + 1, sizeof *numbuf);
    char(*idbuf)[24] = calloc(n + 1, sizeof *idbuf);
    int rc = -1;
    if (jobs && names && units && vals && hib && numbuf && idbuf) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            hv_db_int(idbuf[i], sizeof idbuf[i], u[i]->job_id);
            for (size_t j = 0; j < json_array_size(u[i]->metrics); j++, k++) {
                const json_t *m = json_array_get(u[i]->metrics, j);
                jobs[k] = idbuf[i];
                names[k] = json_string_value(json_object_get(m, "name"));
                const char *unit = json_string_value(json_object_get(m, "unit"));
                units[k] = unit ? unit : "";
                snprintf(numbuf[k], sizeof numbuf[k], "%.17g",
                         json_number_value(json_object_get(m, "value")));
                vals[k] = numbuf[k];
                hib[k] = json_is_false(json_object_get(m, "higher_is_better")) ? "f" : "t";
            }
        }
        arrays[0] = hv_db_text_array(jobs, total);
        arrays[1] = hv_db_text_array(names, total);
        arrays[2] = hv_db_text_array(vals, total);
        arrays[3] = hv_db_text_array(units, total);
        arrays[4] = hv_db_text_array(hib, total);
        rc = arrays[0] && arrays[1] && arrays[2] && arrays[3] && arrays[4] ? 0 : -1;
    }
    free(jobs);
    free(names);
    free(units);
    free(vals);
    free(hib);
    free(numbuf);
    free(idbuf);
    return rc;
}

struct store_args {
    const struct hv_result_upload *u;
    struct hv_result_stored *out;
};

/* Whether row k of lock_job or lock_many read a job that is no longer
 * running at the upload's attempt and no result of it: when the lock
 * waited for another transaction storing the same result, the job's row
 * is read as that transaction left it but the result through the
 * statement's older snapshot. Read again (the lock is held now), a
 * replay is then seen as one. */
static bool read_again(PGresult *r, int k, int attempt)
{
    return !PQgetisnull(r, k, 0) && PQgetisnull(r, k, 3) &&
           strcmp(PQgetvalue(r, k, 0), "running") != 0 && atoi(PQgetvalue(r, k, 1)) == attempt;
}

static enum hv_db_status store_txn(struct hv_db *db, void *arg)
{
    struct store_args *a = arg;
    const struct hv_result_upload *u = a->u;
    char id[24], att[16], wid[24];
    snprintf(id, sizeof id, "%lld", (long long)u->job_id);
    snprintf(att, sizeof att, "%d", u->attempt);
    *a->out = (struct hv_result_stored){0};

    PGresult *r;
    const char *p1[] = {id};
    const char *p2[] = {id, att, hv_db_int(wid, sizeof wid, u->worker_id)};
    enum hv_db_status s = hv_db_exec(db, &lock_job, p2, &r);
    if (s == HV_DB_OK && read_again(r, 0, u->attempt)) {
        PQclear(r);
        s = hv_db_exec(db, &lock_job, p2, &r);
    }
    if (s != HV_DB_OK) {
        PQclear(r);
        return s;
    }
    bool running = strcmp(PQgetvalue(r, 0, 0), "running") == 0;
    int current = atoi(PQgetvalue(r, 0, 1));
    bool lapsed = PQgetvalue(r, 0, 2)[0] == 't';
    if (PQgetvalue(r, 0, 4)[0] != 't') {
        a->out->not_claimer = true;
        PQclear(r);
        return HV_DB_CONFLICT;
    }
    if (!PQgetisnull(r, 0, 3)) {
        a->out->result_id = strtoll(PQgetvalue(r, 0, 3), NULL, 10);
        a->out->replayed = true;
        PQclear(r);
        return HV_DB_OK;
    }
    PQclear(r);
    if (!(running || lapsed) || current != u->attempt)
        return HV_DB_CONFLICT;

    /* Without samples the job's end goes with its result in one round
     * trip; samples are copied between the two. */
    bool with_samples = json_array_size(u->samples) > 0;
    const char *p4[] = {id, u->status, u->error};
    const struct hv_stmt *sts[] = {&insert_result, &finish_job};
    PGresult *rs[2] = {NULL, NULL};
    char *observed = u->observed ? json_dumps(u->observed, JSON_COMPACT) : NULL;
    char *arrays[5] = {NULL, NULL, NULL, NULL, NULL};
    if (metric_arrays(&u, 1, arrays) == 0) {
        const char *p3[] = {id,       att,    u->status, u->error,  u->started_at, u->finished_at,
                            observed, u->raw, arrays[1], arrays[2], arrays[3],     arrays[4]};
        const char *const *ps[] = {p3, p4};
        s = hv_db_exec_all(db, with_samples ? 1 : 2, sts, ps, rs);
    } else {
        s = HV_DB_ERROR;
    }
    free(observed);
    for (int i = 0; i < 5; i++)
        free(arrays[i]);
    if (rs[0] == NULL || PQntuples(rs[0]) == 0 || (s != HV_DB_OK && s != HV_DB_NONE)) {
        PQclear(rs[0]);
        PQclear(rs[1]);
        return s == HV_DB_OK ? HV_DB_ERROR : hv_db_must(s);
    }
    a->out->result_id = strtoll(PQgetvalue(rs[0], 0, 0), NULL, 10);
    PQclear(rs[0]);
    if (with_samples) {
        char rid[24];
        snprintf(rid, sizeof rid, "%lld", (long long)a->out->result_id);
        s = copy_samples(db, rid, u->samples);
        if (s != HV_DB_OK && s != HV_DB_NONE)
            return s;
        s = hv_db_exec(db, &finish_job, p4, &rs[1]);
    }
    bool may_decide = s == HV_DB_OK && PQgetvalue(rs[1], 0, 0)[0] == 't';
    PQclear(rs[1]);
    if (s == HV_DB_NONE)
        return HV_DB_ERROR;
    if (s == HV_DB_OK && strcmp(u->status, "ok") != 0) {
        s = hv_db_exec(db, &fail_group, p1, NULL);
        s = s == HV_DB_NONE ? HV_DB_OK : s;
    }
    /* The job that ends a round decides whether another round follows
     * (finish_job said whether it may). */
    return s == HV_DB_OK && may_decide ? hv_db_round_decide(db, id) : s;
}

enum hv_db_status hv_db_result_store(const struct hv_result_upload *u, struct hv_result_stored *out)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    struct store_args a = {u, out};
    return hv_db_txn(db, store_txn, &a);
}

void hv_result_item_free(void *item)
{
    struct hv_result_item *it = item;
    if (it == NULL)
        return;
    json_decref(it->doc);
    free(it);
}

/* Frees the n strings of a and a. */
static void free_strings(char **a, size_t n)
{
    for (size_t i = 0; a != NULL && i < n; i++)
        free(a[i]);
    free(a);
}

struct store_many_args {
    struct hv_result_item **items; /* those the batch stores, by ascending job id */
    size_t n;
};

/* Sets it's outcome from its row k of lock_many; returns whether its
 * result is to be written (what store_txn decides for one). */
static bool lock_outcome(struct hv_result_item *it, PGresult *r, int k)
{
    if (PQgetisnull(r, k, 0)) {
        it->status = HV_DB_NONE;
        return false;
    }
    if (PQgetvalue(r, k, 4)[0] != 't') {
        it->stored.not_claimer = true;
        it->status = HV_DB_CONFLICT;
        return false;
    }
    if (!PQgetisnull(r, k, 3)) {
        it->stored.result_id = strtoll(PQgetvalue(r, k, 3), NULL, 10);
        it->stored.replayed = true;
        it->status = HV_DB_OK;
        return false;
    }
    bool running = strcmp(PQgetvalue(r, k, 0), "running") == 0;
    bool lapsed = PQgetvalue(r, k, 2)[0] == 't';
    if (!(running || lapsed) || atoi(PQgetvalue(r, k, 1)) != it->u.attempt) {
        it->status = HV_DB_CONFLICT;
        return false;
    }
    return true;
}

/* The columns of the items w as the array literals insert_many ($1-$8)
 * and finish_many take. */
static int write_arrays(struct hv_result_item *const *w, size_t n, char *cols[8])
{
    const char **v[8];
    char(*nums)[2][24] = calloc(n + 1, sizeof *nums);
    char **observed = calloc(n + 1, sizeof *observed);
    int rc = nums && observed ? 0 : -1;
    for (int c = 0; c < 8; c++) {
        v[c] = calloc(n + 1, sizeof *v[c]);
        rc = v[c] == NULL ? -1 : rc;
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const struct hv_result_upload *u = &w[i]->u;
        v[0][i] = hv_db_int(nums[i][0], sizeof nums[i][0], u->job_id);
        v[1][i] = hv_db_int(nums[i][1], sizeof nums[i][1], u->attempt);
        v[2][i] = u->status;
        v[3][i] = u->error;
        v[4][i] = u->started_at;
        v[5][i] = u->finished_at;
        observed[i] = u->observed ? json_dumps(u->observed, JSON_COMPACT) : NULL;
        v[6][i] = observed[i];
        v[7][i] = u->raw;
    }
    for (int c = 0; c < 8; c++) {
        cols[c] = rc == 0 ? hv_db_text_array(v[c], n) : NULL;
        rc = cols[c] == NULL ? -1 : rc;
        free(v[c]);
    }
    free(nums);
    free_strings(observed, n);
    return rc;
}

static enum hv_db_status store_many_txn(struct hv_db *db, void *arg)
{
    struct store_many_args *a = arg;
    size_t n = a->n;
    for (size_t i = 0; i < n; i++) {
        a->items[i]->status = HV_DB_ERROR;
        a->items[i]->stored = (struct hv_result_stored){0};
    }
    /* Lock the jobs, and see which results are to be written. */
    char(*nums)[3][24] = calloc(n, sizeof *nums);
    const char **ids = calloc(n, sizeof *ids), **atts = calloc(n, sizeof *atts);
    const char **wids = calloc(n, sizeof *wids);
    struct hv_result_item **w = calloc(n, sizeof *w);
    char *lock_arrays[3] = {NULL, NULL, NULL}, *cols[8] = {0}, *metrics[5] = {0};
    enum hv_db_status s = HV_DB_ERROR;
    PGresult *r = NULL, *rs[2] = {NULL, NULL};
    size_t nw = 0;
    if (nums == NULL || ids == NULL || atts == NULL || wids == NULL || w == NULL)
        goto out;
    for (size_t i = 0; i < n; i++) {
        const struct hv_result_upload *u = &a->items[i]->u;
        ids[i] = hv_db_int(nums[i][0], sizeof nums[i][0], u->job_id);
        atts[i] = hv_db_int(nums[i][1], sizeof nums[i][1], u->attempt);
        wids[i] = hv_db_int(nums[i][2], sizeof nums[i][2], u->worker_id);
    }
    lock_arrays[0] = hv_db_text_array(ids, n);
    lock_arrays[1] = hv_db_text_array(atts, n);
    lock_arrays[2] = hv_db_text_array(wids, n);
    if (lock_arrays[0] == NULL || lock_arrays[1] == NULL || lock_arrays[2] == NULL)
        goto out;
    s = hv_db_exec(db, &lock_many, (const char *const *)lock_arrays, &r);
    bool again = false;
    for (size_t i = 0; s == HV_DB_OK && (size_t)PQntuples(r) == n && i < n; i++)
        again = again || read_again(r, (int)i, a->items[i]->u.attempt);
    if (again) {
        PQclear(r);
        s = hv_db_exec(db, &lock_many, (const char *const *)lock_arrays, &r);
    }
    if (s != HV_DB_OK || (size_t)PQntuples(r) != n) {
        s = s == HV_DB_OK ? HV_DB_ERROR : hv_db_must(s);
        goto out;
    }
    /* Whether a job written needs more than its end: a failed member
     * takes its group with it, a round's end decides the next. */
    bool more = false, decide[HV_CLAIM_MANY_MAX];
    for (size_t i = 0; i < n && i < HV_CLAIM_MANY_MAX; i++) {
        if (lock_outcome(a->items[i], r, (int)i)) {
            decide[nw] = PQgetvalue(r, (int)i, 5)[0] == 't';
            more = more || decide[nw] || strcmp(a->items[i]->u.status, "ok") != 0;
            w[nw++] = a->items[i];
        }
    }
    if (nw == 0)
        goto out; /* s is HV_DB_OK: nothing to write */
    /* The results, their metrics and their jobs' ends in one round trip,
     * with the COMMIT when nothing more is to be done. */
    const struct hv_result_upload *us[HV_CLAIM_MANY_MAX];
    for (size_t i = 0; i < nw && i < HV_CLAIM_MANY_MAX; i++)
        us[i] = &w[i]->u;
    if (nw > HV_CLAIM_MANY_MAX || write_arrays(w, nw, cols) != 0 ||
        metric_arrays(us, nw, metrics) != 0) {
        s = HV_DB_ERROR;
        goto out;
    }
    const char *p_ins[] = {cols[0],    cols[1],    cols[2],   cols[3],    cols[4],
                           cols[5],    cols[6],    cols[7],   metrics[0], metrics[1],
                           metrics[2], metrics[3], metrics[4]};
    const char *p_fin[] = {cols[0], cols[2], cols[3]};
    const struct hv_stmt *sts[] = {&insert_many, &finish_many};
    const char *const *ps[] = {p_ins, p_fin};
    s = more ? hv_db_exec_all(db, 2, sts, ps, rs) : hv_db_exec_all_commit(db, 2, sts, ps, rs);
    if (s != HV_DB_OK || (size_t)PQntuples(rs[0]) != nw || (size_t)PQntuples(rs[1]) != nw) {
        s = s == HV_DB_OK || s == HV_DB_NONE ? HV_DB_ERROR : s;
        goto out;
    }
    for (size_t k = 0; k < nw; k++) {
        int64_t job = strtoll(PQgetvalue(rs[0], (int)k, 0), NULL, 10);
        for (size_t i = 0; i < nw; i++)
            if (w[i]->u.job_id == job)
                w[i]->stored.result_id = strtoll(PQgetvalue(rs[0], (int)k, 1), NULL, 10);
    }
    /* What store_txn does after a job's end: a failed member takes its
     * group with it; the job that ends a round decides the next. The
     * batch may end the last jobs of a round together: each then sees
     * the round ended, and the plan is decided once, after the first.
     * Without either, the transaction is committed already. */
    int64_t decided[HV_CLAIM_MANY_MAX];
    size_t nd = 0;
    for (size_t k = 0; s == HV_DB_OK && k < nw; k++) {
        const char *id = PQgetvalue(rs[1], (int)k, 0);
        struct hv_result_item *it = NULL;
        bool may_decide = false;
        for (size_t i = 0; i < nw && it == NULL; i++) {
            if (w[i]->u.job_id == strtoll(id, NULL, 10)) {
                it = w[i];
                may_decide = decide[i];
            }
        }
        if (it == NULL || it->stored.result_id == 0) {
            s = HV_DB_ERROR;
            break;
        }
        if (strcmp(it->u.status, "ok") != 0) {
            const char *p1[] = {id};
            s = hv_db_exec(db, &fail_group, p1, NULL);
            s = s == HV_DB_NONE ? HV_DB_OK : s;
        }
        if (s == HV_DB_OK && may_decide) {
            int64_t plan = strtoll(PQgetvalue(rs[1], (int)k, 1), NULL, 10);
            bool seen = false;
            for (size_t d = 0; d < nd && !seen; d++)
                seen = decided[d] == plan;
            if (!seen) {
                decided[nd++] = plan;
                s = hv_db_round_decide(db, id);
            }
        }
        it->status = HV_DB_OK;
    }
out:
    PQclear(r);
    PQclear(rs[0]);
    PQclear(rs[1]);
    for (int c = 0; c < 3; c++)
        free(lock_arrays[c]);
    for (int c = 0; c < 8; c++)
        free(cols[c]);
    for (int c = 0; c < 5; c++)
        free(metrics[c]);
    free(nums);
    free(ids);
    free(atts);
    free(wids);
    free(w);
    return s;
}

static int by_job(const void *x, const void *y)
{
    const struct hv_result_item *a = *(struct hv_result_item *const *)x;
    const struct hv_result_item *b = *(struct hv_result_item *const *)y;
    return (a->u.job_id > b->u.job_id) - (a->u.job_id < b->u.job_id);
}

enum hv_db_status hv_db_result_store_many(struct hv_result_item *const *items, size_t n)
{
    struct hv_result_item *sorted[HV_CLAIM_MANY_MAX];
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        items[i]->single = true;
        items[i]->status = HV_DB_ERROR;
    }
    if (n == 0 || n > HV_CLAIM_MANY_MAX)
        return n == 0 ? HV_DB_OK : HV_DB_ERROR;
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    for (size_t i = 0; i < n; i++)
        sorted[i] = items[i];
    qsort(sorted, n, sizeof sorted[0], by_job);
    /* A second upload of a job in the batch is stored after it, alone:
     * it is then a replay (or a stale attempt) of what the batch wrote. */
    for (size_t i = 0; i < n; i++)
        if (m == 0 || sorted[m - 1]->u.job_id != sorted[i]->u.job_id)
            sorted[m++] = sorted[i];
    struct store_many_args a = {sorted, m};
    enum hv_db_status s = hv_db_txn(db, store_many_txn, &a);
    for (size_t i = 0; i < m && s == HV_DB_OK; i++)
        sorted[i]->single = false;
    return s;
}
