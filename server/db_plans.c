/* db_plans.c — see db_plans.h. */
#include "db_plans.h"

#include "db_hooks.h"
#include "db_steps.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct hv_stmt find_idem = {
    "plan_find_idem",
    "SELECT id, body_sha256 FROM plans WHERE token_id = $1 AND idempotency_key = $2", 2};
static const struct hv_stmt insert_plan = {
    "plan_insert",
    "INSERT INTO plans (name, spec, seed, token_id, idempotency_key, body_sha256) "
    "VALUES ($1, $2::jsonb, $3, $4, $5, $6) RETURNING id",
    6};
static const struct hv_stmt insert_configs = {
    "plan_insert_configs",
    "INSERT INTO configurations (plan_id, idx, name, levels) "
    "SELECT $1, u.i - 1, u.n, ($3::jsonb)->(u.i::int - 1) "
    "FROM unnest($2::text[]) WITH ORDINALITY AS u(n, i)",
    3};
static const struct hv_stmt insert_groups = {
    "plan_insert_groups",
    "INSERT INTO job_groups (plan_id, idx, size) "
    "SELECT $1, u.i - 1, u.s FROM unnest($2::int[]) WITH ORDINALITY AS u(s, i)",
    2};
/* The workload variants travel once as a JSON array ($9) and each job
 * takes its element, so a large plan does not repeat them per job. A
 * template clone's name gets the plan's id (HV_PLAN_ID_MARK). */
static const struct hv_stmt insert_jobs = {
    "plan_insert_jobs",
    "INSERT INTO jobs (plan_id, config_id, workload_id, workload, target_name, repetition, "
    "run_order, role, group_id) "
    "SELECT $1, c.id, ($9::jsonb)->u.w->>'id', ($9::jsonb)->u.w, "
    "replace(u.t, '" HV_PLAN_ID_MARK "', 'p' || $1::text), u.rep, u.ord, u.role, "
    "g.id FROM unnest($2::int[], $3::int[], $4::int[], $5::int[], $6::text[], $7::text[], "
    "$8::int[]) AS u(cfg, w, rep, ord, t, role, grp) "
    "JOIN configurations c ON c.plan_id = $1 AND c.idx = u.cfg "
    "LEFT JOIN job_groups g ON g.plan_id = $1 AND g.idx = u.grp",
    9};

/* What a plan waits for when nothing set plans.waiting: the targets of its
 * queued jobs that no worker ever registered (five named, then a count). */
#define WAITING_UNREGISTERED                                                                       \
    "CASE WHEN cardinality(unregistered) > 0 THEN json_build_object('reason', "                    \
    "'target_unregistered', 'since', created_at, 'detail', 'waiting for target' || CASE WHEN "     \
    "cardinality(unregistered) > 1 THEN 's ' ELSE ' ' END || "                                     \
    "array_to_string(unregistered[1:5], ', ') || CASE WHEN cardinality(unregistered) > 5 THEN "    \
    "' and ' || (cardinality(unregistered) - 5) || ' more' ELSE '' END || ' (never "               \
    "registered)') END"

/* What a fleet plan's child waits for while older siblings hold every
 * slot (migrations/022_fleet_plans.sql): first, for nothing of it (its
 * before_host hook, its apply steps, its jobs) starts before that. */
#define WAITING_SLOT                                                                               \
    "CASE WHEN slot_wait IS NOT NULL THEN json_build_object('reason', 'waiting_for_slot', "        \
    "'since', created_at, 'detail', slot_wait) END"

/* A plan's share of jobs ended. */
#define PROGRESS                                                                                   \
    "CASE WHEN total = 0 THEN 0 ELSE round((done + failed + cancelled_jobs)::numeric / total, 4) " \
    "END"

/* Joins the owner of plan row p (its id and parent_id; server/plan_owner.h)
 * as columns owner_id and owner (the token's name), both NULL when the
 * plan has none: the token that submitted it, a fleet child's being its
 * parent's, while that token is not revoked. A plan imported from another
 * server records no token. Only those two names come into the row's
 * scope, so the statements it joins keep naming their own columns
 * unqualified. */
#define OWNER_JOIN                                                                                 \
    " LEFT JOIN LATERAL (SELECT t.id AS owner_id, t.name AS owner FROM plans o JOIN tokens t ON "  \
    "t.id = o.token_id WHERE o.id = coalesce(p.parent_id, p.id) AND t.revoked_at IS NULL) own ON " \
    "true "

/* A plan as the API shows it (a row of plan_summaries). updated_at moves
 * with every job's change of state; finished_at is the last one's time
 * once the plan ended (the cancellation's for a cancelled plan); owner
 * comes from OWNER_JOIN, which the statement joins. plan_read below
 * gives the same members as columns. */
#define SUMMARY_JSON "json_build_object(" SUMMARY_MEMBERS ")"
#define SUMMARY_MEMBERS                                                                            \
    "'id', id, 'name', name, 'status', status, 'created_at', created_at, "                         \
    "'updated_at', greatest(updated_at, state_at), 'started_at', started_at, 'finished_at', "      \
    "CASE WHEN status IN ('done', 'failed', 'cancelled') THEN coalesce(cancelled_at, state_at, "   \
    "finished_max, updated_at) END, 'cancelled_at', cancelled_at, 'seed', seed, 'owner', owner, "  \
    "'jobs', "                                                                                     \
    "json_build_object('total', total, 'queued', queued, 'running', running, 'done', done, "       \
    "'failed', failed, 'cancelled', cancelled_jobs), 'progress', " PROGRESS ", 'waiting', CASE "   \
    "WHEN status IN ('queued', 'running') THEN coalesce(" WAITING_SLOT                             \
    ", waiting::json, " WAITING_UNREGISTERED ") END, 'rounds', adaptive"

/* Whether plan p is a fleet's parent: its targets.host is a label
 * selector (lib/plan_fleet.h). */
#define FLEET_PARENT "jsonb_typeof(p.spec->'targets'->'host') = 'object'"

/* One plan's row with plan_summaries's columns (those a summary reads),
 * read from the plan and its kept counts (migrations/016) alone, a fleet
 * parent's being its children's: the queued targets instead of the
 * unregistered ones, and a fleet child's slot asked for only when it can
 * wait for one. No subquery: PostgreSQL sets up every subquery of a
 * statement each time it runs it, run or not, and for a read that was
 * most of its cost; what only some plans need is a function
 * (migrations/030), which costs nothing where it is not called. */
#define PLAN_ROW                                                                                   \
    "SELECT p.id, p.name, p.spec, p.seed, p.cancelled, p.created_at, p.updated_at, "               \
    "p.cancelled_at, p.waiting, p.adaptive, p.parent_id, p.max_parallel_hosts, c.*, "              \
    "p.state AS status, " FLEET_PARENT                                                             \
    " AS fleet_parent, CASE WHEN p.parent_id IS NOT NULL AND NOT "                                 \
    "p.cancelled AND c.queued > 0 AND c.running = 0 THEN hv_plan_slot_wait(p.id) END AS "          \
    "slot_wait FROM plans p CROSS JOIN LATERAL (SELECT coalesce(sum(k.total), 0)::bigint AS "      \
    "total, coalesce(sum(k.queued), 0)::bigint AS queued, coalesce(sum(k.running), 0)::bigint AS " \
    "running, coalesce(sum(k.done), 0)::bigint AS done, coalesce(sum(k.failed), 0)::bigint AS "    \
    "failed, coalesce(sum(k.cancelled), 0)::bigint AS cancelled_jobs, min(k.started_at) AS "       \
    "started_at, max(k.state_at) AS state_at, max(k.finished_max) AS finished_max, "               \
    "array_agg(k.target_name) FILTER (WHERE k.queued > 0) AS queued_targets FROM plan_job_counts " \
    "k WHERE k.plan_id = ANY (CASE WHEN " FLEET_PARENT " THEN hv_plan_children(p.id) ELSE "        \
    "ARRAY[p.id] END)) c WHERE p.id = $1"

/* GET /api/v1/plans/{id}'s answer, in one statement: the summary's members
 * as columns of JSON text (timestamps and the name through to_json, so
 * their text is what json_build_object gives), a fleet's side of it
 * (migrations/030, hv_plan_fleet) for a plan of a fleet, the plan as stored
 * and its drain hooks for a plan that has any, and last its owner's name.
 * hv_db_plan_read() joins the texts into the answer: built here, one
 * json_build_object of thirty members cost PostgreSQL more than everything
 * else the read does. */
static const struct hv_stmt plan_read = {
    "plan_read",
    "SELECT id, to_json(name)::text, status, to_json(created_at)::text, to_json(greatest("
    "updated_at, state_at))::text, to_json(started_at)::text, CASE WHEN status IN ('done', "
    "'failed', 'cancelled') THEN to_json(coalesce(cancelled_at, state_at, finished_max, "
    "updated_at))::text END, to_json(cancelled_at)::text, seed, total, queued, running, done, "
    "failed, cancelled_jobs, " PROGRESS ", CASE WHEN status IN ('queued', 'running') THEN "
    "coalesce(" WAITING_SLOT ", waiting::json, hv_plan_waiting_unregistered(created_at, "
    "queued_targets))::text END, adaptive::text, CASE WHEN parent_id IS NOT NULL OR "
    "fleet_parent THEN nullif(btrim(hv_plan_fleet(id)::text, '{} '), '') END, spec::text, CASE "
    "WHEN spec ? "
    "'hooks' THEN "
    "hv_plan_hooks(id)::text END, to_json(owner)::text FROM (" PLAN_ROW ") p" OWNER_JOIN,
    1};

/* GET /api/v1/plans/{id}'s answer for a plan outside a fleet and without
 * drain hooks (most plans), as rows instead of aggregates: first the
 * plan's own row (its first column true), then its shard rows of the kept
 * counts (migrations/034) in target order, each saying whether its target
 * is one no worker ever registered; hv_db_plan_read() sums them. Ten aggregates
 * and the function that looked the unregistered targets up cost
 * PostgreSQL, set up on every execution, about three times what this
 * does. A plan of a fleet or with hooks (the last column of its row says
 * so) is read with plan_read above. */
#define PLAN_NEEDS_FULL "p.parent_id IS NOT NULL OR " FLEET_PARENT " OR p.spec ? 'hooks'"
static const struct hv_stmt plan_read_rows = {
    "plan_read_rows",
    "SELECT true, p.id, to_json(p.name)::text, p.seed, p.state, to_json(p.created_at)::text, "
    "to_json(p.updated_at)::text, to_json(p.cancelled_at)::text, p.waiting::text, "
    "p.adaptive::text, p.spec::text, " PLAN_NEEDS_FULL ", NULL::bigint, NULL::bigint, "
    "NULL::bigint, NULL::bigint, NULL::bigint, NULL::bigint, NULL::text, NULL::text, NULL::text, "
    "NULL::text, NULL::bool, to_json(own.owner)::text FROM plans p" OWNER_JOIN
    "WHERE p.id = $1 UNION ALL (SELECT false, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
    "NULL, NULL, NULL, k.total, k.queued, k.running, k.done, k.failed, k.cancelled, "
    "to_json(k.started_at)::text, to_json(k.state_at)::text, to_json(k.finished_max)::text, "
    "k.target_name, t.id IS NULL, NULL FROM plan_job_count_shards k LEFT JOIN targets t ON "
    "t.name = k.target_name WHERE k.plan_id = $1 ORDER BY k.target_name)",
    1};

/* plan_read_rows's columns. */
enum {
    PR_IS_PLAN,
    PR_ID,
    PR_NAME,
    PR_SEED,
    PR_STATE,
    PR_CREATED_AT,
    PR_UPDATED_AT,
    PR_CANCELLED_AT,
    PR_WAITING,
    PR_ADAPTIVE,
    PR_SPEC,
    PR_NEEDS_FULL,
    PR_TOTAL,
    PR_QUEUED,
    PR_RUNNING,
    PR_DONE,
    PR_FAILED,
    PR_CANCELLED_JOBS,
    PR_STARTED_AT,
    PR_STATE_AT,
    PR_FINISHED_MAX,
    PR_TARGET,
    PR_UNREGISTERED,
    PR_OWNER,
};

static const struct hv_stmt get_plan = {
    "plan_get",
    "SELECT (" SUMMARY_JSON ")::text, spec::text FROM plan_summaries p" OWNER_JOIN "WHERE id = $1",
    1};

/* A list item is a summary with, for a fleet's child, its host and its
 * parent (both null for any other plan), so a list tells the children of
 * one fleet apart. */
static const struct hv_stmt list_plans = {
    "plan_list",
    "SELECT coalesce(json_agg(s.j ORDER BY s.id DESC), '[]')::text FROM "
    "(SELECT json_build_object(" SUMMARY_MEMBERS ", 'host', CASE WHEN parent_id IS NOT NULL "
    "THEN spec->'targets'->>'host' END, 'parent_id', parent_id) AS j, id FROM plan_summaries "
    "p" OWNER_JOIN "WHERE ($1::text IS NULL OR p.status = $1) "
    " AND ($2::text IS NULL OR EXISTS (SELECT 1 FROM jobs j WHERE j.plan_id = p.id "
    "      AND j.target_name = $2)) "
    " AND ($3::text IS NULL OR p.name = $3) "
    " AND ($4::timestamptz IS NULL OR p.created_at >= $4::timestamptz) "
    " AND ($5::bigint IS NULL OR p.id < $5::bigint) "
    " ORDER BY id DESC LIMIT $6) s",
    6};

static const struct hv_stmt unregistered = {
    "targets_unregistered",
    "SELECT coalesce(json_agg(u.n ORDER BY u.i), '[]')::text FROM unnest($1::text[]) "
    "WITH ORDINALITY AS u(n, i) WHERE NOT EXISTS (SELECT 1 FROM targets t WHERE t.name = u.n)",
    1};

static const struct hv_stmt lock_plan = {"plan_lock",
                                         "SELECT cancelled FROM plans WHERE id = $1 FOR UPDATE", 1};
static const struct hv_stmt open_jobs = {
    "plan_open_jobs",
    "SELECT count(*) FILTER (WHERE status IN ('queued', 'running')), count(*) FROM jobs "
    "WHERE plan_id = $1 OR plan_id IN (SELECT id FROM plans WHERE parent_id = $1)",
    1};
static const struct hv_stmt cancel_plan = {
    "plan_cancel",
    "UPDATE plans SET cancelled = true, cancelled_at = now(), updated_at = now() WHERE id = $1", 1};
static const struct hv_stmt cancel_jobs = {
    "plan_cancel_jobs",
    "UPDATE jobs SET status = 'cancelled', lease_until = NULL, finished_at = now(), "
    "error = 'plan cancelled' WHERE plan_id = $1 AND status IN ('queued', 'running')",
    1};

/* A fleet plan's children, cancelled with it: their ids. */
static const struct hv_stmt cancel_children = {
    "plan_cancel_children",
    "WITH c AS (UPDATE plans SET cancelled = true, cancelled_at = now(), updated_at = now() "
    " WHERE parent_id = $1 AND NOT cancelled RETURNING id), "
    "j AS (UPDATE jobs SET status = 'cancelled', lease_until = NULL, finished_at = now(), "
    " error = 'plan cancelled' WHERE plan_id IN (SELECT id FROM c) "
    " AND status IN ('queued', 'running') RETURNING 1) "
    "SELECT id FROM c ORDER BY id",
    1};

/* A fleet plan's side of its summary (migrations/030, hv_plan_fleet). */
static const struct hv_stmt fleet_of = {"plan_fleet_of", "SELECT hv_plan_fleet($1)::text", 1};

static const struct hv_stmt set_fleet = {
    "plan_set_fleet", "UPDATE plans SET parent_id = $2, max_parallel_hosts = $3 WHERE id = $1", 3};

/* The report's view of a plan besides its values. The caller names the
 * state of the plan's done jobs in $2 (NULL: no digest wanted); a digest
 * kept for that very state comes along (migrations/015), and with it the
 * plan's workload variants and targets as they were kept, so a report read
 * from a digest scans none of the plan's jobs here. The digest comes as
 * its own column, the text kept: made part of the JSON here, PostgreSQL
 * would parse and print its 740 kB (a plan of 100,000 results) again. */
#define REPORT_WORKLOADS                                                                           \
    "(SELECT coalesce(json_agg(w.j ORDER BY w.id), '[]') FROM (SELECT DISTINCT ON "                \
    "(j.workload_id) j.workload_id AS id, json_build_object('id', j.workload_id, 'kind', "         \
    "j.workload->>'kind', 'engine', j.workload->>'engine') AS j FROM jobs j WHERE j.plan_id = "    \
    "p.id ORDER BY j.workload_id) w)"
#define REPORT_TARGETS                                                                             \
    "(SELECT coalesce(json_agg(DISTINCT j.target_name ORDER BY j.target_name), '[]') FROM jobs j " \
    "WHERE j.plan_id = p.id)"
static const struct hv_stmt report_meta = {
    "plan_report_meta",
    "SELECT json_build_object('spec', p.spec, 'configurations', "
    "(SELECT coalesce(json_agg(json_build_object('name', c.name, 'levels', c.levels) ORDER BY "
    "c.idx), '[]') FROM configurations c WHERE c.plan_id = p.id), 'workloads', CASE WHEN "
    "rd.plan_id IS NOT NULL THEN rd.workloads ELSE " REPORT_WORKLOADS " END, "
    /* The guests whose domain the host's worker lists as type 'qemu':
     * QEMU's TCG emulation rather than KVM. */
    "'emulated', (SELECT coalesce(json_agg(DISTINCT t.name ORDER BY t.name), '[]') FROM "
    "json_array_elements_text(t.targets) t(name), targets h, "
    "jsonb_array_elements(coalesce(h.facts->'libvirt'->'domains', '[]')) d "
    "WHERE h.name = p.spec->'targets'->>'host' AND t.name <> h.name AND d->>'name' = "
    "hv_domain_name(t.name) "
    "AND d->>'type' = 'qemu'))::text, CASE WHEN $3 THEN rd.digest END "
    "FROM plans p LEFT JOIN report_digests rd ON rd.plan_id = p.id AND rd.version = $2, "
    "LATERAL (SELECT CASE WHEN rd.plan_id IS NOT NULL THEN rd.targets ELSE " REPORT_TARGETS
    " END AS targets) t WHERE p.id = $1",
    3};

/* Keeps a report's digest for the state it was computed from, with the
 * plan's workload variants and targets as the report reads them, and the
 * answer rendered from it with the md5 of its other inputs (both may be
 * NULL; migrations/026). */
static const struct hv_stmt report_digest_put = {
    "plan_report_digest_put",
    "INSERT INTO report_digests (plan_id, version, digest, workloads, targets, answer, inputs) "
    "SELECT p.id, $2, $3, " REPORT_WORKLOADS ", " REPORT_TARGETS ", $4, md5($5) FROM plans p "
    "WHERE p.id = $1 ON CONFLICT (plan_id) DO UPDATE SET version = EXCLUDED.version, "
    "digest = EXCLUDED.digest, workloads = EXCLUDED.workloads, targets = EXCLUDED.targets, "
    "answer = EXCLUDED.answer, inputs = EXCLUDED.inputs, computed_at = now()",
    5};

/* The answer kept for a state of the plan's jobs and the md5 of the other
 * inputs, as its text: never parsed here nor in PostgreSQL. */
static const struct hv_stmt report_answer = {
    "plan_report_answer",
    "SELECT answer FROM report_digests WHERE plan_id = $1 AND version = $2 AND inputs = md5($3) "
    "AND answer IS NOT NULL",
    3};

/* The answer kept for a running plan whatever the state it is of, when its
 * digest was computed less than $2 seconds ago. */
static const struct hv_stmt report_answer_recent = {
    "plan_report_answer_recent",
    "SELECT answer FROM report_digests WHERE plan_id = $1 AND answer IS NOT NULL "
    "AND computed_at > now() - make_interval(secs => $2::int)",
    2};

/* An answer rendered from the digest kept for that state, the other
 * inputs having changed. */
static const struct hv_stmt report_answer_put = {
    "plan_report_answer_put",
    "UPDATE report_digests SET answer = $3, inputs = md5($4) WHERE plan_id = $1 AND version = $2",
    4};

/* The rounds of groups (hv_round_values, migrations/042): one row per
 * round of each configuration, workload, target and metric, the client
 * members of a group one observation, the mean of their values. The value
 * is given as its magnitude and sign (mean_s · scale of hv_db_obs). */
static const struct hv_stmt plan_observations = {
    "plan_observations",
    "SELECT v.config_idx, v.workload_id, v.target, v.metric, v.unit, v.higher_is_better, "
    "v.round, v.members, abs(v.value), sign(v.value), v.jobs::text "
    "FROM hv_round_values($1) v WHERE v.grouped ORDER BY 1, 2, 3, 4, 7",
    1};

/* The jobs that ran alone (most of a plan's), from the same definition:
 * one row per configuration, workload, target and metric with its rounds,
 * values and job ids as three arrays in the same order, so a plan of
 * 100,000 results gives its values in a few hundred rows rather than one
 * row each. */
static const struct hv_stmt plan_observations_alone = {
    "plan_observations_alone",
    "SELECT v.config_idx, v.workload_id, v.target, v.metric, min(v.unit), "
    "bool_and(v.higher_is_better), array_agg(v.round)::text, array_agg(v.value)::text, "
    "array_agg(v.jobs[1])::text FROM hv_round_values($1) v WHERE NOT v.grouped "
    "GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4",
    1};

/* A job as the API shows it. */
#define JOB_JSON                                                                                   \
    "json_build_object('id', j.id, 'configuration', c.name, 'workload', j.workload_id, "           \
    "'target', j.target_name, 'target_id', j.target_id, 'repetition', j.repetition, 'run_order', " \
    "j.run_order, "                                                                                \
    "'group', g.idx, 'role', j.role, 'status', j.status, 'attempt', j.attempt, 'failures', "       \
    "j.failures, 'claimed_at', j.claimed_at, 'finished_at', j.finished_at, 'error', j.error)"

static const struct hv_stmt plan_exists = {"plan_exists", "SELECT '1' FROM plans WHERE id = $1", 1};
static const struct hv_stmt plan_jobs = {
    "plan_jobs",
    "SELECT coalesce(json_agg(x.j ORDER BY x.run_order), '[]')::text FROM (SELECT " JOB_JSON
    " AS j, j.run_order FROM jobs j JOIN configurations c ON c.id = j.config_id "
    "LEFT JOIN job_groups g ON g.id = j.group_id "
    "WHERE j.plan_id = $1 AND ($2::text IS NULL OR j.status = $2) AND j.run_order > $3 "
    "ORDER BY j.run_order LIMIT $4) x",
    4};
static const struct hv_stmt job_get = {
    "job_get",
    "SELECT (" JOB_JSON "::jsonb || jsonb_build_object('plan_id', j.plan_id, 'workload', "
    "j.workload_id, 'spec', j.workload))::text FROM jobs j "
    "JOIN configurations c ON c.id = j.config_id LEFT JOIN job_groups g ON g.id = j.group_id "
    "WHERE j.id = $1",
    1};
static const struct hv_stmt job_exists = {"job_exists", "SELECT '1' FROM jobs WHERE id = $1", 1};
/* A result with its host telemetry (migrations/009): the host's samples
 * join the guest's, shifted onto the result's axis (t seconds after
 * started_at); observed gains the host's host_busy verdict; telemetry says
 * "present" or "missing" with the reason. */
static const struct hv_stmt job_results = {
    "job_results",
    "SELECT coalesce(json_agg(json_build_object('result_id', r.id, 'attempt', r.attempt, "
    "'status', r.status, 'error', r.error, 'started_at', r.started_at, 'finished_at', "
    "r.finished_at, 'received_at', r.received_at, 'observed', r.observed || CASE WHEN "
    "tm.observed ? 'host_busy' THEN jsonb_build_object('host_busy', tm.observed->'host_busy') "
    "ELSE '{}' END, 'telemetry', CASE WHEN tm.status = 'ok' THEN 'present' ELSE 'missing' END, "
    "'telemetry_reason', CASE WHEN tm.status = 'ok' THEN NULL WHEN tm.job_id IS NOT NULL THEN "
    "tm.reason WHEN tg.kind IS DISTINCT FROM 'guest' THEN 'not a guest job: host telemetry is "
    "taken for guests only' ELSE 'no host worker sent telemetry for this attempt (no live "
    "worker holds the host of the guest''s domain, or it could not sample)' END, 'metrics', "
    "(SELECT coalesce(json_agg(json_build_object('name', m.name, 'value', m.value, 'unit', "
    "m.unit, 'higher_is_better', m.higher_is_better) ORDER BY m.name), '[]') FROM metrics m "
    "WHERE m.result_id = r.id), 'samples', CASE WHEN $2 THEN (SELECT "
    "coalesce(json_agg(json_build_object('metric', x.metric, 't', x.t, 'value', x.value) "
    "ORDER BY x.metric, x.t), '[]') FROM (SELECT s.metric, s.t, s.value FROM samples s "
    "WHERE s.result_id = r.id UNION ALL SELECT e->>'metric', (e->>'t')::float8 + "
    "coalesce(extract(epoch FROM tm.t0 - r.started_at)::float8, 0), (e->>'value')::float8 "
    "FROM jsonb_array_elements(CASE WHEN tm.status = 'ok' THEN tm.samples ELSE '[]' END) e) x) "
    "END, 'raw', CASE WHEN $3 THEN r.raw END) ORDER BY r.attempt), '[]')::text FROM results r "
    "JOIN jobs j ON j.id = r.job_id LEFT JOIN targets tg ON tg.id = j.target_id "
    "LEFT JOIN telemetry tm ON tm.job_id = r.job_id AND tm.attempt = r.attempt "
    "WHERE r.job_id = $1",
    3};

/* One result's samples per metric, bucketed past $3 per metric: the
 * buckets are $3 equal spans of the metric's time range (within $4..$5),
 * width_bucket puts the last sample (t = hi) in bucket $3 + 1, least()
 * takes it back into the last one. A metric whose samples all share one t
 * is one bucket. Each metric's range and count come from sample_series
 * (kept as samples are written) when no window is asked, else from the
 * samples within it; the samples are then read once, grouped per metric
 * (LATERAL, so the grouping key is the bucket alone and hashes in memory).
 * Ties in t keep the columns alike (ordered by t, then value). */
#define SAMPLES_OF_R                                                                               \
    "samples s WHERE s.result_id = (SELECT id FROM r) AND ($4::float8 IS NULL OR s.t >= "          \
    "$4::float8) AND ($5::float8 IS NULL OR s.t <= $5::float8)"
static const struct hv_stmt job_samples = {
    "job_samples",
    "WITH r AS (SELECT id, attempt FROM results WHERE job_id = $1::bigint AND ($2::int = 0 OR "
    " attempt = $2::int) ORDER BY attempt DESC LIMIT 1), "
    "m AS (SELECT k.metric, k.t_first AS lo, k.t_last AS hi, k.n FROM sample_series k WHERE "
    " k.result_id = (SELECT id FROM r) AND $4::float8 IS NULL AND $5::float8 IS NULL "
    " UNION ALL SELECT s.metric, min(s.t), max(s.t), count(*) FROM " SAMPLES_OF_R
    " AND NOT ($4::float8 IS NULL AND $5::float8 IS NULL) GROUP BY s.metric), "
    "b AS (SELECT m.metric, g.* FROM m CROSS JOIN LATERAL (SELECT avg(s.t) AS t, avg(s.value) AS "
    "v, "
    " min(s.value) AS vmin, max(s.value) AS vmax, count(*) AS c FROM " SAMPLES_OF_R
    " AND s.metric = m.metric GROUP BY CASE WHEN m.hi > m.lo THEN least(width_bucket(s.t, m.lo, "
    " m.hi, $3::int), $3::int) ELSE 1 END) g WHERE m.n > $3::int "
    " UNION ALL SELECT s.metric, s.t, s.value, s.value, s.value, 1 FROM " SAMPLES_OF_R
    " AND s.metric IN (SELECT metric FROM m WHERE m.n <= $3::int)), "
    "x AS (SELECT metric, json_agg(t ORDER BY t, v) AS t, json_agg(v ORDER BY t, v) AS v, "
    " json_agg(vmin ORDER BY t, v) AS vmin, json_agg(vmax ORDER BY t, v) AS vmax, "
    " json_agg(c ORDER BY t, v) AS c FROM b GROUP BY metric) "
    "SELECT json_build_object('job_id', $1::bigint, 'result_id', r.id, 'attempt', r.attempt, "
    " 'points', $3::int, 'from', $4::float8, 'to', $5::float8, 'series', (SELECT "
    " coalesce(json_agg(json_build_object('metric', m.metric, 'n', m.n, 'downsampled', m.n > "
    "$3::int, "
    " 'first', m.lo, 'last', m.hi, 't', x.t, 'value', x.v, 'min', CASE WHEN m.n > $3::int THEN "
    " x.vmin END, 'max', CASE WHEN m.n > $3::int THEN x.vmax END, 'count', CASE WHEN m.n > "
    " $3::int THEN x.c END) ORDER BY m.metric), '[]') FROM m JOIN x USING (metric)))::text "
    "FROM (SELECT 1) one LEFT JOIN r ON true",
    5};
#undef SAMPLES_OF_R

/* Formats one int field of each job as a PostgreSQL array literal; caller
 * frees. A negative group is SQL NULL. */
static char *int_array(const struct hv_job_spec *jobs, size_t n, int field)
{
    char *out = malloc(n * 12 + 3);
    if (out == NULL)
        return NULL;
    size_t k = 0;
    out[k++] = '{';
    for (size_t i = 0; i < n; i++) {
        long v = field == 0   ? (long)jobs[i].config
                 : field == 1 ? (long)jobs[i].workload
                 : field == 2 ? (long)jobs[i].repetition
                 : field == 3 ? (long)jobs[i].run_order
                              : jobs[i].group;
        if (i > 0)
            out[k++] = ',';
        k += (size_t)(field == 4 && v < 0 ? sprintf(out + k, "NULL") : sprintf(out + k, "%ld", v));
    }
    out[k++] = '}';
    out[k] = '\0';
    return out;
}

/* The workload variants as the JSON array the jobs index into. */
static char *variants_json(const struct hv_plan *plan)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < plan->n_workloads; i++) {
        const struct hv_workload *w = &plan->workloads[i];
        json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:O}", "id", w->id, "workload", w->base_id, "kind",
                              w->kind, "engine", w->engine, "params", w->params);
        if (w->peer != NULL)
            json_object_set_new(o, "peer", json_string(w->peer));
        json_array_append_new(arr, o);
    }
    char *text = json_dumps(arr, JSON_COMPACT);
    json_decref(arr);
    return text;
}

struct create_args {
    const struct hv_plan_submit *s;
    int64_t id;
    bool replayed;
};

/* Returns the stored plan of an idempotency key: HV_DB_OK (replay),
 * HV_DB_CONFLICT (key used for another body) or HV_DB_NONE. */
static enum hv_db_status find_replay(struct hv_db *db, struct create_args *a, const char *tok)
{
    const char *p[] = {tok, a->s->idem_key};
    PGresult *r;
    enum hv_db_status st = hv_db_exec(db, &find_idem, p, &r);
    if (st == HV_DB_OK) {
        a->id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
        a->replayed = true;
        if (strcmp(PQgetvalue(r, 0, 1), a->s->body_sha256) != 0)
            st = HV_DB_CONFLICT;
    }
    PQclear(r);
    return st;
}

static enum hv_db_status insert_rows(struct hv_db *db, struct create_args *a, const char *id)
{
    const struct hv_plan *plan = a->s->plan;
    const struct hv_expansion *x = a->s->x;
    enum hv_db_status st = HV_DB_ERROR;

    const char **names = calloc(plan->n_configs, sizeof *names);
    json_t *levels = json_array();
    for (size_t i = 0; names && i < plan->n_configs; i++) {
        names[i] = plan->configs[i].name;
        json_array_append(levels, plan->configs[i].levels);
    }
    char *config_arr = names ? hv_db_text_array(names, plan->n_configs) : NULL;
    char *levels_text = json_dumps(levels, JSON_COMPACT);
    json_decref(levels);
    free(names);
    const char *p2[] = {id, config_arr, levels_text};
    if (config_arr && levels_text)
        st = hv_db_exec(db, &insert_configs, p2, NULL);
    free(config_arr);
    free(levels_text);
    if (st != HV_DB_OK)
        return hv_db_must(st);

    if (x->n_groups > 0) {
        char *sizes = malloc(x->n_groups * 12 + 3);
        size_t k = 0;
        if (sizes == NULL)
            return HV_DB_ERROR;
        sizes[k++] = '{';
        for (size_t i = 0; i < x->n_groups; i++)
            k += (size_t)sprintf(sizes + k, i ? ",%d" : "%d", x->group_sizes[i]);
        sizes[k++] = '}';
        sizes[k] = '\0';
        const char *p3[] = {id, sizes};
        st = hv_db_exec(db, &insert_groups, p3, NULL);
        free(sizes);
        if (st != HV_DB_OK)
            return hv_db_must(st);
    }

    const char **targets = calloc(x->n_jobs ? x->n_jobs : 1, sizeof *targets);
    const char **roles = calloc(x->n_jobs ? x->n_jobs : 1, sizeof *roles);
    for (size_t i = 0; targets && roles && i < x->n_jobs; i++) {
        targets[i] = x->jobs[i].target;
        roles[i] = x->jobs[i].role;
    }
    char *arr[5];
    for (int f = 0; f < 5; f++)
        arr[f] = int_array(x->jobs, x->n_jobs, f);
    char *t_arr = targets ? hv_db_text_array(targets, x->n_jobs) : NULL;
    char *r_arr = roles ? hv_db_text_array(roles, x->n_jobs) : NULL;
    char *variants = variants_json(plan);
    const char *p4[] = {id, arr[0], arr[1], arr[2], arr[3], t_arr, r_arr, arr[4], variants};
    bool ok = t_arr && r_arr && variants;
    for (int f = 0; f < 5; f++)
        ok = ok && arr[f] != NULL;
    st = ok ? hv_db_exec(db, &insert_jobs, p4, NULL) : HV_DB_ERROR;
    for (int f = 0; f < 5; f++)
        free(arr[f]);
    free(t_arr);
    free(r_arr);
    free(variants);
    free(targets);
    free(roles);
    if (st == HV_DB_NONE)
        st = x->n_jobs > 0 ? HV_DB_ERROR : HV_DB_OK;
    return st;
}

/* Inserts the plans row of spec (JSON text): *id its id. */
static enum hv_db_status insert_plan_row(struct hv_db *db, const char *name, const char *spec,
                                         uint64_t seed_v, const char *tok, const char *key,
                                         const char *sha, int64_t *id)
{
    char seed[24];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)seed_v);
    const char *p1[] = {name, spec, seed, tok, key, sha};
    PGresult *r;
    enum hv_db_status st = hv_db_exec(db, &insert_plan, p1, &r);
    if (st != HV_DB_OK) {
        PQclear(r);
        return hv_db_must(st);
    }
    *id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return HV_DB_OK;
}

/* Stores a->s's plan with its configurations, groups, jobs and steps;
 * a->id is its id. */
static enum hv_db_status insert_one(struct hv_db *db, struct create_args *a, const char *tok,
                                    const char *key)
{
    const struct hv_plan_submit *s = a->s;
    char seed[24], id[24];
    char *spec = json_dumps(s->plan->doc, JSON_COMPACT);
    if (spec == NULL)
        return HV_DB_ERROR;
    enum hv_db_status st =
        insert_plan_row(db, s->plan->name, spec, s->plan->seed, tok, key, s->body_sha256, &a->id);
    free(spec);
    if (st != HV_DB_OK)
        return st;
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)s->plan->seed);
    st = insert_rows(db, a, hv_db_int(id, sizeof id, a->id));
    /* A plan with factors runs in blocks, each applied on its host first. */
    if (st == HV_DB_OK && json_object_size(json_object_get(s->plan->doc, "factors")) > 0 &&
        s->plan->host != NULL)
        st = hv_db_steps_create(db, id, s->plan->host, seed, s->plan->randomized);
    /* Its drain hooks: before_host gates everything of the plan. */
    const json_t *hooks = json_object_get(s->plan->doc, "hooks");
    if (st == HV_DB_OK && json_object_size(hooks) > 0 && s->plan->host != NULL) {
        char *text = json_dumps(hooks, JSON_COMPACT);
        st = text != NULL ? hv_db_hooks_create(db, id, s->plan->host, text) : HV_DB_ERROR;
        free(text);
    }
    return st;
}

static enum hv_db_status create_txn(struct hv_db *db, void *arg)
{
    struct create_args *a = arg;
    const struct hv_plan_submit *s = a->s;
    char tok[24];
    hv_db_int(tok, sizeof tok, s->token_id);
    a->replayed = false;
    if (s->idem_key != NULL) {
        enum hv_db_status st = find_replay(db, a, tok);
        if (st != HV_DB_NONE)
            return st;
    }
    return insert_one(db, a, s->token_id > 0 ? tok : NULL, s->idem_key);
}

struct fleet_args {
    const struct hv_fleet_submit *f;
    struct create_args a;
};

/* The parent (no jobs of its own), then one child per host. */
static enum hv_db_status fleet_txn(struct hv_db *db, void *arg)
{
    struct fleet_args *fa = arg;
    const struct hv_fleet_submit *f = fa->f;
    struct hv_plan_submit head = {NULL, NULL, f->token_id, f->idem_key, f->body_sha256};
    char tok[24], pid[24], cid[24], maxp[16];
    hv_db_int(tok, sizeof tok, f->token_id);
    fa->a = (struct create_args){&head, 0, false};
    if (f->idem_key != NULL) {
        enum hv_db_status st = find_replay(db, &fa->a, tok);
        if (st != HV_DB_NONE)
            return st;
    }
    char *spec = json_dumps(f->doc, JSON_COMPACT);
    if (spec == NULL)
        return HV_DB_ERROR;
    int64_t parent = 0;
    enum hv_db_status st =
        insert_plan_row(db, json_string_value(json_object_get(f->doc, "name")), spec, f->seed,
                        f->token_id > 0 ? tok : NULL, f->idem_key, f->body_sha256, &parent);
    free(spec);
    hv_db_int(pid, sizeof pid, parent);
    const char *pp[] = {pid, NULL,
                        f->max_parallel > 0 ? hv_db_int(maxp, sizeof maxp, f->max_parallel) : NULL};
    if (st == HV_DB_OK)
        st = hv_db_must(hv_db_exec(db, &set_fleet, pp, NULL));
    for (size_t i = 0; st == HV_DB_OK && i < f->n; i++) {
        struct hv_plan_submit child = {&f->plans[i], &f->xs[i], f->token_id, NULL, f->body_sha256};
        struct create_args ca = {&child, 0, false};
        st = insert_one(db, &ca, f->token_id > 0 ? tok : NULL, NULL);
        const char *cp[] = {hv_db_int(cid, sizeof cid, ca.id), pid, NULL};
        if (st == HV_DB_OK)
            st = hv_db_must(hv_db_exec(db, &set_fleet, cp, NULL));
    }
    fa->a.id = parent;
    return st;
}

enum hv_db_status hv_db_fleet_create(const struct hv_fleet_submit *f, int64_t *id, bool *replayed)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    struct fleet_args fa = {f, {NULL, 0, false}};
    enum hv_db_status st = hv_db_txn(db, fleet_txn, &fa);
    if (st == HV_DB_CONFLICT && f->idem_key != NULL && !fa.a.replayed)
        st = hv_db_txn(db, fleet_txn, &fa);
    *id = fa.a.id;
    *replayed = fa.a.replayed;
    return st;
}

enum hv_db_status hv_db_plan_create(const struct hv_plan_submit *s, int64_t *id, bool *replayed)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    struct create_args a = {s, 0, false};
    enum hv_db_status st = hv_db_txn(db, create_txn, &a);
    if (st == HV_DB_CONFLICT && s->idem_key != NULL && !a.replayed) {
        /* Two submissions with one key raced; the other stored first. */
        st = hv_db_txn(db, create_txn, &a);
    }
    *id = a.id;
    *replayed = a.replayed;
    return st;
}

enum hv_db_status hv_db_plan_get(int64_t id, bool with_spec, json_t **out)
{
    char idtxt[24];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id)};
    json_t *spec = NULL;
    enum hv_db_status s = hv_db_json(&get_plan, params, out, &spec);
    json_t *fleet = NULL;
    if (s == HV_DB_OK)
        s = hv_db_json(&fleet_of, params, &fleet, NULL);
    if (s == HV_DB_OK)
        json_object_update(*out, fleet);
    json_decref(fleet);
    if (s == HV_DB_OK && with_spec)
        json_object_set_new(*out, "plan", spec);
    else
        json_decref(spec);
    return s;
}

enum hv_db_status hv_db_plan_list(const struct hv_plan_filter *f, json_t **out)
{
    char before[24], lim[16];
    const char *params[] = {f->status,
                            f->target,
                            f->name,
                            f->since,
                            f->before_id > 0 ? hv_db_int(before, sizeof before, f->before_id)
                                             : NULL,
                            hv_db_int(lim, sizeof lim, f->limit)};
    return hv_db_json(&list_plans, params, out, NULL);
}

enum hv_db_status hv_db_targets_unregistered(const char *const *names, size_t n, json_t **out)
{
    char *arr = hv_db_text_array(names, n);
    if (arr == NULL)
        return HV_DB_ERROR;
    const char *params[] = {arr};
    enum hv_db_status s = hv_db_json(&unregistered, params, out, NULL);
    free(arr);
    return s;
}

static enum hv_db_status cancel_txn(struct hv_db *db, void *arg)
{
    const char *const *params = arg;
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &lock_plan, params, &r);
    if (s != HV_DB_OK) {
        PQclear(r);
        return s;
    }
    bool cancelled = PQgetvalue(r, 0, 0)[0] == 't';
    PQclear(r);
    if (cancelled)
        return HV_DB_OK;
    s = hv_db_exec(db, &open_jobs, params, &r);
    if (s != HV_DB_OK) {
        PQclear(r);
        return hv_db_must(s);
    }
    long open = atol(PQgetvalue(r, 0, 0)), total = atol(PQgetvalue(r, 0, 1));
    PQclear(r);
    if (total > 0 && open == 0)
        return HV_DB_CONFLICT;
    s = hv_db_exec(db, &cancel_plan, params, NULL);
    if (s == HV_DB_OK)
        s = hv_db_exec(db, &cancel_jobs, params, NULL);
    if (s == HV_DB_OK || s == HV_DB_NONE)
        s = hv_db_steps_cancel(db, params[0]);
    if (s == HV_DB_OK || s == HV_DB_NONE) {
        /* A fleet plan's children go with it. */
        s = hv_db_exec(db, &cancel_children, params, &r);
        for (int i = 0; s == HV_DB_OK && i < PQntuples(r); i++) {
            enum hv_db_status c = hv_db_steps_cancel(db, PQgetvalue(r, i, 0));
            s = c == HV_DB_NONE ? HV_DB_OK : c;
        }
        PQclear(r);
    }
    return s == HV_DB_NONE ? HV_DB_OK : s;
}

enum hv_db_status hv_db_plan_cancel(int64_t id)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char idtxt[24];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id)};
    return hv_db_txn(db, cancel_txn, (void *)params);
}

enum hv_db_status hv_db_plan_report_meta(int64_t id, const char *version, bool digest_wanted,
                                         json_t **out)
{
    char idtxt[24];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id), version,
                            digest_wanted ? "true" : "false"};
    json_t *digest = NULL;
    enum hv_db_status s = hv_db_json(&report_meta, params, out, &digest);
    /* Set only with the answer, which json_object_set_new takes even when
     * it fails. */
    if (digest != NULL && json_object_set_new(*out, "digest", digest) != 0)
        s = HV_DB_ERROR;
    return s;
}

enum hv_db_status hv_db_plan_report_digest_put(int64_t id, const char *version, const char *digest,
                                               const char *answer, const char *inputs)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char idtxt[24];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id), version, digest, answer, inputs};
    return hv_db_exec(db, &report_digest_put, params, NULL);
}

/* The text of the one cell statement st answers into *answer. */
static enum hv_db_status answer_text(const struct hv_stmt *st, const char *const *params,
                                     char **answer)
{
    *answer = NULL;
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    PGresult *r = NULL;
    enum hv_db_status s = hv_db_exec(db, st, params, &r);
    if (s == HV_DB_OK) {
        /* The response frees what it sends: a copy of libpq's buffer. */
        size_t len = (size_t)PQgetlength(r, 0, 0);
        *answer = malloc(len + 1);
        if (*answer != NULL)
            memcpy(*answer, PQgetvalue(r, 0, 0), len + 1);
        else
            s = HV_DB_ERROR;
    }
    PQclear(r);
    return s;
}

/* Cell c of row 0 of r, or "null" for an SQL NULL. */
static const char *cell(const PGresult *r, int c)
{
    return PQgetisnull(r, 0, c) ? "null" : PQgetvalue(r, 0, c);
}

/* Writes plan_read's row r as the answer's JSON to f. */
/* The summary's first members, as both writers of a plan read print them:
 * id, name, status, created, updated, started, finished, cancelled, seed,
 * owner. */
#define SUMMARY_HEAD                                                                               \
    "{\"id\":%s,\"name\":%s,\"status\":\"%s\",\"created_at\":%s,\"updated_at\":%s,"                \
    "\"started_at\":%s,\"finished_at\":%s,\"cancelled_at\":%s,\"seed\":%s,\"owner\":%s,"

static void plan_read_json(FILE *f, const PGresult *r)
{
    fprintf(f, SUMMARY_HEAD, cell(r, 0), cell(r, 1), cell(r, 2), cell(r, 3), cell(r, 4), cell(r, 5),
            cell(r, 6), cell(r, 7), cell(r, 8), cell(r, 21));
    fprintf(f,
            "\"jobs\":{\"total\":%s,\"queued\":%s,\"running\":%s,\"done\":%s,\"failed\":%s,"
            "\"cancelled\":%s},\"progress\":%s,\"waiting\":%s,\"rounds\":%s",
            cell(r, 9), cell(r, 10), cell(r, 11), cell(r, 12), cell(r, 13), cell(r, 14),
            cell(r, 15), cell(r, 16), cell(r, 17));
    /* A fleet's members, without their braces (none outside a fleet). */
    if (!PQgetisnull(r, 0, 18))
        fprintf(f, ",%s", PQgetvalue(r, 0, 18));
    fprintf(f, ",\"plan\":%s", cell(r, 19));
    if (!PQgetisnull(r, 0, 20))
        fprintf(f, ",\"hooks\":%s", PQgetvalue(r, 0, 20));
    fputc('}', f);
}

/* A plan's count rows summed: what plan_read's lateral aggregate gives. */
struct plan_sums {
    long long total, queued, running, done, failed, cancelled;
    const char *started_at, *state_at, *finished_max; /* JSON text; NULL: none */
    int unregistered; /* targets waited for that no worker ever registered */
};

/* Whether JSON timestamp a is later than b. Both are to_json texts of a
 * timestamptz in UTC (the server's sessions: db.c), so their order is
 * that of the text: the fraction, when there is one, is longer than the
 * '+' of the offset that ends one without. */
static bool ts_later(const char *a, const char *b)
{
    return strcmp(a, b) > 0;
}

/* Whether count row i of r is the first of its target's shard rows, and
 * the target, never registered, has queued jobs (the sum of its rows). */
static bool waits_unregistered(const PGresult *r, int i)
{
    const char *target = PQgetvalue(r, i, PR_TARGET);
    if (PQgetvalue(r, i, PR_UNREGISTERED)[0] != 't' ||
        (i > 1 && strcmp(PQgetvalue(r, i - 1, PR_TARGET), target) == 0))
        return false;
    long long queued = 0;
    for (int k = i; k < PQntuples(r) && strcmp(PQgetvalue(r, k, PR_TARGET), target) == 0; k++)
        queued += strtoll(PQgetvalue(r, k, PR_QUEUED), NULL, 10);
    return queued > 0;
}

/* Adds count row i of r to *sum. */
static void sum_row(struct plan_sums *sum, const PGresult *r, int i)
{
    long long *to[] = {&sum->total, &sum->queued, &sum->running,
                       &sum->done,  &sum->failed, &sum->cancelled};
    for (int c = 0; c < 6; c++)
        *to[c] += strtoll(PQgetvalue(r, i, PR_TOTAL + c), NULL, 10);
    if (!PQgetisnull(r, i, PR_STARTED_AT) &&
        (sum->started_at == NULL || ts_later(sum->started_at, PQgetvalue(r, i, PR_STARTED_AT))))
        sum->started_at = PQgetvalue(r, i, PR_STARTED_AT);
    if (!PQgetisnull(r, i, PR_STATE_AT) &&
        (sum->state_at == NULL || ts_later(PQgetvalue(r, i, PR_STATE_AT), sum->state_at)))
        sum->state_at = PQgetvalue(r, i, PR_STATE_AT);
    if (!PQgetisnull(r, i, PR_FINISHED_MAX) &&
        (sum->finished_max == NULL ||
         ts_later(PQgetvalue(r, i, PR_FINISHED_MAX), sum->finished_max)))
        sum->finished_max = PQgetvalue(r, i, PR_FINISHED_MAX);
    if (waits_unregistered(r, i))
        sum->unregistered++;
}

/* Writes s as a JSON string's inside, escaped as PostgreSQL's json
 * escapes it (so the text is what json_build_object gave). */
static void put_json_chars(FILE *f, const char *s)
{
    /* The characters written as a backslash and a letter, and the letters. */
    static const char special[] = "\"\\\b\f\n\r\t", letter[] = "\"\\bfnrt";
    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;
        const char *at = strchr(special, ch);
        if (at != NULL)
            fprintf(f, "\\%c", letter[at - special]);
        else if (ch < ' ')
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
}

/* The waiting member of a plan whose queued jobs name targets no worker
 * ever registered (rows 1.. of r, in target order): as
 * hv_plan_waiting_unregistered (migrations/030) builds it. */
static void put_unregistered(FILE *f, const PGresult *r, const struct plan_sums *sum)
{
    fprintf(
        f,
        "{\"reason\" : \"target_unregistered\", \"since\" : %s, \"detail\" : \"waiting for target",
        PQgetvalue(r, 0, PR_CREATED_AT));
    fputs(sum->unregistered > 1 ? "s " : " ", f);
    int named = 0;
    for (int i = 1; i < PQntuples(r) && named < 5; i++) {
        if (!waits_unregistered(r, i))
            continue;
        if (named++ > 0)
            fputs(", ", f);
        put_json_chars(f, PQgetvalue(r, i, PR_TARGET));
    }
    if (sum->unregistered > 5)
        fprintf(f, " and %d more", sum->unregistered - 5);
    fputs(" (never registered)\"}", f);
}

/* Writes plan_read_rows's rows r as the answer's JSON to f: the same text
 * plan_read_json() writes for plan_read's row of the same plan. */
static void plan_rows_json(FILE *f, const PGresult *r)
{
    struct plan_sums sum = {0};
    for (int i = 1; i < PQntuples(r); i++)
        sum_row(&sum, r, i);
    /* The plan's stored state (migrations/041_lifecycle.sql). */
    const char *status = PQgetvalue(r, 0, PR_STATE);
    bool ended = strcmp(status, "queued") != 0 && strcmp(status, "running") != 0;
    const char *updated = PQgetvalue(r, 0, PR_UPDATED_AT);
    const char *cancelled_at = cell(r, PR_CANCELLED_AT);
    const char *finished = "null";
    if (ended)
        finished = !PQgetisnull(r, 0, PR_CANCELLED_AT) ? cancelled_at
                   : sum.state_at != NULL              ? sum.state_at
                   : sum.finished_max != NULL          ? sum.finished_max
                                                       : updated;
    fprintf(f, SUMMARY_HEAD, cell(r, PR_ID), cell(r, PR_NAME), status, cell(r, PR_CREATED_AT),
            sum.state_at != NULL && ts_later(sum.state_at, updated) ? sum.state_at : updated,
            sum.started_at != NULL ? sum.started_at : "null", finished, cancelled_at,
            cell(r, PR_SEED), cell(r, PR_OWNER));
    fprintf(
        f,
        "\"jobs\":{\"total\":%lld,\"queued\":%lld,\"running\":%lld,\"done\":%lld,\"failed\":%lld,"
        "\"cancelled\":%lld},\"progress\":",
        sum.total, sum.queued, sum.running, sum.done, sum.failed, sum.cancelled);
    /* round(ended::numeric / total, 4): halves away from zero. */
    if (sum.total == 0) {
        fputc('0', f);
    } else {
        long long ended_jobs = sum.done + sum.failed + sum.cancelled;
        long long q = (2 * ended_jobs * 10000 + sum.total) / (2 * sum.total);
        fprintf(f, "%lld.%04lld", q / 10000, q % 10000);
    }
    fputs(",\"waiting\":", f);
    if (ended)
        fputs("null", f);
    else if (!PQgetisnull(r, 0, PR_WAITING))
        fputs(PQgetvalue(r, 0, PR_WAITING), f);
    else if (sum.unregistered > 0)
        put_unregistered(f, r, &sum);
    else
        fputs("null", f);
    fprintf(f, ",\"rounds\":%s,\"plan\":%s}", cell(r, PR_ADAPTIVE), cell(r, PR_SPEC));
}

/* Whether plan_read_rows's rows r come as asked: the plan's own row,
 * then its count rows (an Append runs its parts in turn; were that ever
 * not so, the plan is read with plan_read instead). */
static bool rows_in_order(const PGresult *r)
{
    if (PQgetvalue(r, 0, PR_IS_PLAN)[0] != 't')
        return false;
    for (int i = 1; i < PQntuples(r); i++)
        if (PQgetvalue(r, i, PR_IS_PLAN)[0] != 'f')
            return false;
    return true;
}

/* Runs st for plan id and writes its answer with to_json into *answer.
 * With full (plan_read_rows), nothing is written when *full comes back
 * true: the plan is to be read with plan_read. */
static enum hv_db_status read_answer(struct hv_db *db, const struct hv_stmt *st, int64_t id,
                                     void (*to_json)(FILE *, const PGresult *), char **answer,
                                     bool *full)
{
    char idtxt[24];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id)};
    PGresult *r = NULL;
    enum hv_db_status s = hv_db_exec(db, st, params, &r);
    if (s == HV_DB_OK && full != NULL)
        *full = !rows_in_order(r) || PQgetvalue(r, 0, PR_NEEDS_FULL)[0] == 't';
    if (s == HV_DB_OK && (full == NULL || !*full)) {
        size_t len = 0;
        FILE *f = open_memstream(answer, &len);
        if (f != NULL) {
            to_json(f, r);
            if (fclose(f) != 0) {
                free(*answer);
                *answer = NULL;
            }
        }
        if (*answer == NULL)
            s = HV_DB_ERROR;
    }
    PQclear(r);
    return s;
}

enum hv_db_status hv_db_plan_read(int64_t id, char **answer)
{
    *answer = NULL;
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    bool full = false;
    enum hv_db_status s = read_answer(db, &plan_read_rows, id, plan_rows_json, answer, &full);
    if (s == HV_DB_OK && full)
        s = read_answer(db, &plan_read, id, plan_read_json, answer, NULL);
    return s;
}

enum hv_db_status hv_db_plan_report_answer(int64_t id, const char *version, const char *inputs,
                                           char **answer)
{
    char idtxt[24];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id), version, inputs};
    return answer_text(&report_answer, params, answer);
}

enum hv_db_status hv_db_plan_report_answer_recent(int64_t id, int seconds, char **answer)
{
    char idtxt[24], secs[16];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id),
                            hv_db_int(secs, sizeof secs, seconds)};
    return answer_text(&report_answer_recent, params, answer);
}

enum hv_db_status hv_db_plan_report_answer_put(int64_t id, const char *version, const char *answer,
                                               const char *inputs)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char idtxt[24];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id), version, answer, inputs};
    return hv_db_exec(db, &report_answer_put, params, NULL);
}

/* The next element of an array literal ("{1,2.5,NaN}") from *p: its text
 * into *out, *p past it. Returns false at the end. */
static bool next_elem(const char **p, char *out, size_t len)
{
    const char *s = *p;
    while (*s == '{' || *s == ',' || *s == ' ')
        s++;
    size_t n = strcspn(s, ",}");
    if (n == 0 || n >= len)
        return false;
    memcpy(out, s, n);
    out[n] = '\0';
    *p = s + n;
    return true;
}

/* The series of row i of either observations query: its first six
 * columns (configuration, workload, target, metric, unit, direction). */
static struct hv_db_obs series_of(PGresult *r, int i)
{
    return (struct hv_db_obs){
        .config = atoi(PQgetvalue(r, i, 0)),
        .workload = PQgetvalue(r, i, 1),
        .target = PQgetvalue(r, i, 2),
        .metric = PQgetvalue(r, i, 3),
        .unit = PQgetvalue(r, i, 4),
        .higher_is_better = PQgetvalue(r, i, 5)[0] == 't',
    };
}

/* Calls fn for every value of one row of plan_observations_alone. */
static enum hv_db_status walk_alone(PGresult *r, int i, hv_db_obs_fn fn, void *arg)
{
    const char *rounds = PQgetvalue(r, i, 6), *values = PQgetvalue(r, i, 7),
               *ids = PQgetvalue(r, i, 8);
    struct hv_db_obs o = series_of(r, i);
    o.members = 1;
    char round[24], value[64], job[24];
    while (next_elem(&rounds, round, sizeof round)) {
        if (!next_elem(&values, value, sizeof value) || !next_elem(&ids, job, sizeof job))
            return HV_DB_ERROR;
        double v = strtod(value, NULL);
        /* mean_s · scale is v itself: ±1 (or 0) times its magnitude. */
        o.round = atoi(round);
        o.scale = fabs(v);
        o.mean_s = v > 0.0 ? 1.0 : v < 0.0 ? -1.0 : 0.0;
        o.jobs = job;
        if (fn(arg, &o) != 0)
            return HV_DB_ERROR;
    }
    return HV_DB_OK;
}

enum hv_db_status hv_db_plan_observations(int64_t id, hv_db_obs_fn fn, void *arg)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char idtxt[24];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id)};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &plan_observations_alone, params, &r);
    if (s == HV_DB_NONE)
        s = HV_DB_OK;
    for (int i = 0; s == HV_DB_OK && r != NULL && i < PQntuples(r); i++)
        s = walk_alone(r, i, fn, arg);
    PQclear(r);
    if (s != HV_DB_OK)
        return s;
    s = hv_db_exec(db, &plan_observations, params, &r);
    if (s == HV_DB_NONE)
        s = HV_DB_OK;
    for (int i = 0; s == HV_DB_OK && r != NULL && i < PQntuples(r); i++) {
        struct hv_db_obs o = series_of(r, i);
        o.round = atoi(PQgetvalue(r, i, 6));
        o.members = atol(PQgetvalue(r, i, 7));
        o.scale = strtod(PQgetvalue(r, i, 8), NULL);
        o.mean_s = strtod(PQgetvalue(r, i, 9), NULL);
        o.jobs = PQgetvalue(r, i, 10);
        if (fn(arg, &o) != 0)
            s = HV_DB_ERROR;
    }
    PQclear(r);
    return s;
}

/* Whether the row named by id exists (HV_DB_OK) or not (HV_DB_NONE). */
static enum hv_db_status exists(const struct hv_stmt *st, const char *id)
{
    json_t *one = NULL;
    const char *params[] = {id};
    enum hv_db_status s = hv_db_json(st, params, &one, NULL);
    json_decref(one);
    return s;
}

enum hv_db_status hv_db_plan_jobs(int64_t id, const char *status, long after, int limit,
                                  json_t **out)
{
    char idtxt[24], aft[24], lim[16];
    hv_db_int(idtxt, sizeof idtxt, id);
    enum hv_db_status s = exists(&plan_exists, idtxt);
    if (s != HV_DB_OK)
        return s;
    const char *params[] = {idtxt, status, hv_db_int(aft, sizeof aft, after),
                            hv_db_int(lim, sizeof lim, limit)};
    return hv_db_json(&plan_jobs, params, out, NULL);
}

/* Tuning plans whose host is the target, newest first, that have ended
 * or produced results: the plans recommendations come from. */
static const struct hv_stmt tuned_on = {
    "plans_tuned_on",
    "SELECT (SELECT coalesce(json_agg(x.id ORDER BY x.id DESC), '[]') FROM (SELECT p.id "
    " FROM plans p WHERE p.spec->'targets'->>'host' = t.name AND p.spec->'factors' <> '{}' "
    " AND EXISTS (SELECT 1 FROM jobs j WHERE j.plan_id = p.id AND j.status = 'done') "
    " ORDER BY p.id DESC LIMIT $2) x)::text FROM targets t WHERE t.name = $1",
    2};

enum hv_db_status hv_db_plans_tuned_on(const char *target, int limit, json_t **ids)
{
    char lim[16];
    const char *p[] = {target, hv_db_int(lim, sizeof lim, limit)};
    return hv_db_json(&tuned_on, p, ids, NULL);
}

enum hv_db_status hv_db_job_get(int64_t id, json_t **out)
{
    char idtxt[24];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id)};
    return hv_db_json(&job_get, params, out, NULL);
}

enum hv_db_status hv_db_job_results(int64_t id, bool samples, bool raw, struct hv_db_text *out)
{
    char idtxt[24];
    hv_db_int(idtxt, sizeof idtxt, id);
    out->res = NULL;
    enum hv_db_status s = exists(&job_exists, idtxt);
    if (s != HV_DB_OK)
        return s;
    const char *params[] = {idtxt, samples ? "true" : "false", raw ? "true" : "false"};
    return hv_db_text(&job_results, params, out);
}

enum hv_db_status hv_db_job_samples(int64_t id, int attempt, int points, const double *from,
                                    const double *to, struct hv_db_text *out)
{
    char idtxt[24], att[16], pts[16], lo[32], hi[32];
    hv_db_int(idtxt, sizeof idtxt, id);
    out->res = NULL;
    enum hv_db_status s = exists(&job_exists, idtxt);
    if (s != HV_DB_OK)
        return s;
    /* %.17g: the bound PostgreSQL compares is the double the client sent. */
    if (from != NULL)
        snprintf(lo, sizeof lo, "%.17g", *from);
    if (to != NULL)
        snprintf(hi, sizeof hi, "%.17g", *to);
    const char *params[] = {idtxt, hv_db_int(att, sizeof att, attempt),
                            hv_db_int(pts, sizeof pts, points), from ? lo : NULL, to ? hi : NULL};
    return hv_db_text(&job_samples, params, out);
}

/* ---- A plan's owner, for the check before an action on it
 * (server/plan_owner.h). One statement of its own, apart from the reads
 * above: the rule is OWNER_JOIN's, the same the answers show. ---- */

static const struct hv_stmt owner_of = {
    "plan_owner", "SELECT owner_id, owner FROM plans p" OWNER_JOIN "WHERE p.id = $1", 1};

enum hv_db_status hv_db_plan_owner(int64_t id, int64_t *token_id, char *name, size_t len)
{
    *token_id = 0;
    if (len > 0)
        name[0] = '\0';
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char idtxt[24];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id)};
    PGresult *r = NULL;
    enum hv_db_status s = hv_db_exec(db, &owner_of, params, &r);
    if (s == HV_DB_OK && !PQgetisnull(r, 0, 0)) {
        *token_id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
        snprintf(name, len, "%s", PQgetvalue(r, 0, 1));
    }
    PQclear(r);
    return s;
}
