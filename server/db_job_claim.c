/* db_job_claim.c — claiming jobs (db_jobs.h): one worker's claim, with the
 * look again under the plan's lock when two targets of one plan may
 * overlap, and the claims of many workers in one statement. */
#include "db_jobs.h"

#include "db_admit.h"
#include "db_steps.h"

#include <stdio.h>

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
