/* db_job_lease.c — a claimed job's lease and its group (db_jobs.h): the
 * sweeps (expired leases, the steps' tick), heartbeats, releases and the
 * group barrier a member reports ready to. */
#include "db_jobs.h"

#include "db_steps.h"
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lost workers: a running job whose lease ran out goes back to the queue
 * (or fails after max_failures). The other running members of its group
 * go back too, without a failure, and the group starts over; when the lost
 * member failed for good, so do they. The worker that held each lapsed
 * attempt is lost when it is stale too (hv_worker_lost, migrations/050,
 * with the lease $1 as the window): its plans wait for it. */
static const struct hv_stmt expire = {
    "leases_expire",
    "WITH expired AS ("
    " UPDATE jobs SET failures = failures + 1, lease_until = NULL, ready_at = NULL, "
    " lapsed_attempt = attempt, "
    " status = CASE WHEN failures + 1 >= max_failures THEN 'failed' ELSE 'queued' END, "
    " error = 'lease expired on attempt ' || attempt || ' (worker lost or too slow)' "
    " WHERE status = 'running' AND lease_until < now() "
    " RETURNING id, group_id, status, plan_id, lapsed_attempt), "
    "lost AS (SELECT hv_worker_lost(c.worker_id, array_agg(DISTINCT e.plan_id), $1::int) "
    " FROM expired e JOIN job_claims c ON c.job_id = e.id AND c.attempt = e.lapsed_attempt "
    " GROUP BY c.worker_id), "
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
    "SELECT (SELECT count(*) FROM expired) + (SELECT count(*) FROM peers), "
    "(SELECT count(*) FROM lost)",
    1};

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

enum hv_db_status hv_db_sweeps_run(bool leases_due, bool tick_due, int lease_s)
{
    long expired = 0;
    enum hv_db_status s = leases_due ? hv_db_leases_expire(lease_s, &expired) : HV_DB_OK;
    if (expired > 0)
        hv_info("%ld job%s back in the queue after an expired lease", expired,
                expired == 1 ? "" : "s");
    if (s == HV_DB_OK && tick_due)
        s = hv_db_steps_tick(lease_s);
    return s;
}

enum hv_db_status hv_db_claim_sweeps(int64_t target_id, int lease_s, bool *steps)
{
    bool leases_due, tick_due, steps_queued;
    enum hv_db_status s = hv_db_sweeps_due(target_id, &leases_due, &tick_due, &steps_queued);
    if (s == HV_DB_OK)
        s = hv_db_sweeps_run(leases_due, tick_due, lease_s);
    *steps = steps_queued || tick_due;
    return s;
}

enum hv_db_status hv_db_leases_expire(int lease_s, long *n)
{
    *n = 0;
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char lease[16];
    const char *params[] = {hv_db_int(lease, sizeof lease, lease_s)};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &expire, params, &r);
    *n = s == HV_DB_OK ? atol(PQgetvalue(r, 0, 0)) : 0;
    PQclear(r);
    return s == HV_DB_NONE ? HV_DB_OK : s;
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
