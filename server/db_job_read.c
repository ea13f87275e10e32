/* db_job_read.c — reading jobs (declared in db_plans.h): a plan's jobs,
 * one job, its results and its per-second samples as the API shows them. */
#include "db_plans.h"

#include <stdio.h>

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
 * join the guest's, on the result's axis (hv_result_host_samples,
 * migrations/048); observed gains the host's host_busy verdict; telemetry says
 * "present" or "missing" with the reason; set_aside why the result is in no
 * figure (migrations/052), or null. */
static const struct hv_stmt job_results = {
    "job_results",
    "SELECT coalesce(json_agg(json_build_object('result_id', r.id, 'attempt', r.attempt, "
    "'status', r.status, 'error', r.error, 'set_aside', r.set_aside, 'started_at', r.started_at, "
    "'finished_at', "
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
    "WHERE s.result_id = r.id UNION ALL SELECT h.metric, h.t, h.value "
    "FROM hv_result_host_samples(r.id) h) x) "
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
 * Ties in t keep the columns alike (ordered by t, then value). The host
 * worker's host.* samples of the attempt (hv_result_host_samples,
 * migrations/048) are series like the others, counted as they are read
 * (sample_series holds the result's own samples; a metric of both is one
 * series). */
#define SAMPLES_OF_R                                                                               \
    "(SELECT s0.metric, s0.t, s0.value FROM samples s0 WHERE s0.result_id = (SELECT id FROM r) "   \
    "UNION ALL SELECT h.metric, h.t, h.value FROM hv_result_host_samples((SELECT id FROM r)) h) "  \
    "s WHERE ($4::float8 IS NULL OR s.t >= $4::float8) AND ($5::float8 IS NULL OR s.t <= "         \
    "$5::float8)"
static const struct hv_stmt job_samples = {
    "job_samples",
    "WITH r AS (SELECT id, attempt FROM results WHERE job_id = $1::bigint AND ($2::int = 0 OR "
    " attempt = $2::int) ORDER BY attempt DESC LIMIT 1), "
    "m AS (SELECT u.metric, min(u.lo) AS lo, max(u.hi) AS hi, sum(u.n)::bigint AS n FROM ("
    " SELECT k.metric, k.t_first AS lo, k.t_last AS hi, k.n FROM sample_series k WHERE "
    " k.result_id = (SELECT id FROM r) AND $4::float8 IS NULL AND $5::float8 IS NULL "
    " UNION ALL SELECT h.metric, min(h.t), max(h.t), count(*) FROM "
    " hv_result_host_samples((SELECT id FROM r)) h WHERE $4::float8 IS NULL AND $5::float8 IS NULL "
    " GROUP BY h.metric"
    " UNION ALL SELECT s.metric, min(s.t), max(s.t), count(*) FROM " SAMPLES_OF_R
    " AND NOT ($4::float8 IS NULL AND $5::float8 IS NULL) GROUP BY s.metric) u GROUP BY u.metric), "
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
