/* db_history.c — see db_history.h. */
#include "db_history.h"

#include "db_targets.h"
#include "db_values.h"
#include "facts_diff.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The points of a series: the target's value of the metric $2 in each
 * round (hv_round_parts, migrations/047: the definition the report reads,
 * so a job alone is its done job's ok result and the client members of a
 * group on the target one point, their mean; the server side of a net
 * workload measures nothing of its own), in each plan's default
 * configuration ($3 NULL) or in those named $3, of workload id $4 when
 * given. A point is when its round ran (its first result's started_at, or
 * when it arrived), its result the first stored of its round's (the
 * lowest id); m.results_max and m.results_sum are over all of them, for
 * the state of the points. The view is read in a lateral subquery that
 * OFFSET 0 keeps whole, with every filter inside it, so the target,
 * metric, configuration and workload filter its scans of jobs and metrics
 * (the target's index) rather than the rows it made. m.name is the
 * metric, as HV_SQL_METRIC_OK reads it. */
#define POINTS_FROM                                                                                \
    "FROM targets t CROSS JOIN LATERAL (SELECT p.*, p.metric AS name FROM hv_round_parts p "       \
    "WHERE p.target = t.name AND p.metric = $2 "                                                   \
    "AND CASE WHEN $3::text IS NULL THEN p.config_idx = 0 ELSE p.configuration = $3::text END "    \
    "AND ($4::text IS NULL OR p.workload_id = $4::text) OFFSET 0) m "
#define POINTS_OF_SERIES "WHERE t.id = $1 "
/* A value no measurement can have, stored before the doors refused it,
 * is no point (db_values.h): means, buckets and change points are of the
 * others, and EXCLUDED counts it for the answer. */
#define POINTS_WHERE POINTS_OF_SERIES "AND " HV_SQL_METRIC_OK " "
#define EXCLUDED     "(SELECT count(*) " POINTS_FROM POINTS_OF_SERIES "AND NOT " HV_SQL_METRIC_OK ")"
#define POINT_AT     "m.at"
/* What the state of a series' points is of besides their results: the
 * definition of a round's value (hv_round_parts' text), so a migration
 * changing it makes every kept state stale. */
#define ROUND_RULE "(SELECT left(md5(pg_get_viewdef('hv_round_parts'::regclass)), 12))"
#define STATE(s)   ROUND_RULE " || ':' || " s ".n || ':' || " s ".mx || ':' || " s ".sm"

/* A change point as the API shows it: its figures, its status and its
 * context (facts_before, facts_after, facts_changed, tuning ...). */
#define CP_JSON                                                                                    \
    "(cp.context || jsonb_build_object('id', cp.id, 'at', cp.at, 'before_at', cp.before_at, "      \
    "'index', cp.idx, 'n_before', cp.n_before, 'n_after', cp.n_after, 'mean_before', "             \
    "cp.mean_before, 'mean_after', cp.mean_after, 'change_pct', 100 * cp.rel_change, 'q', cp.q, "  \
    "'p', cp.p, 'plan_id', cp.plan_id, 'result_id', cp.result_id, 'status', CASE WHEN "            \
    "cp.acknowledged_at IS NULL THEN 'new' ELSE 'acknowledged' END, 'detected_at', "               \
    "cp.detected_at, 'acknowledged_at', cp.acknowledged_at, 'acknowledged_by', tk.name))"
#define CP_LIST(series)                                                                            \
    "coalesce((SELECT json_agg(" CP_JSON " ORDER BY cp.at) FROM change_points cp "                 \
    "LEFT JOIN tokens tk ON tk.id = cp.acknowledged_by WHERE cp.series_id = " series               \
    " AND cp.active), '[]')"

/* The series kept for the target and metric ($1, $2) in the
 * configuration asked for ($3). */
#define KEPT                                                                                       \
    "hs AS (SELECT * FROM history_series WHERE target_id = $1 AND metric = $2 "                    \
    "AND configuration = coalesce($3::text, '')) "
/* A series as hv_db_history_read gives it, from s (key sk, n, t0, t1, mx,
 * sm, unit, hib, job: a job of it) and hs (what was kept of it), with its
 * points as POINTS. */
#define SERIES_JSON(POINTS)                                                                        \
    "json_build_object('key', s.sk, 'workload', (SELECT jw.workload - 'id' - 'workload' "          \
    "FROM jobs jw WHERE jw.id = s.job), 'unit', s.unit, 'higher_is_better', s.hib, 'n', s.n, "     \
    "'first', s.t0, 'last', s.t1, 'state', " STATE(                                                \
        "s") ", 'downsampled', "                                                                   \
             "s.n > $5, 'points', " POINTS ", 'series_id', hs.id, 'cached_state', hs.state, "      \
             "'change_points', " CP_LIST("hs.id") ")"
#define SERIES_LIST(POINTS)                                                                        \
    "SELECT json_build_object('target', t.name, 'excluded', " EXCLUDED ", "                        \
    "'series', coalesce((SELECT json_agg(" SERIES_JSON(                                            \
        POINTS) " ORDER BY s.sk) FROM s LEFT JOIN hs ON hs.series_key = s.sk), "                   \
                "'[]'))::text FROM targets t WHERE t.id = $1"

/* Per series of the buckets in agg (sk, bk, c, a0, a1, mean, lo, hi, plan,
 * rid, mx, sm, unit, hib, job), its points: a bucket of one point is that
 * point; then the series as SERIES_LIST gives them. */
#define SERIES_OF_BUCKETS                                                                          \
    "s AS (SELECT sk, sum(c) AS n, min(a0) AS t0, max(a1) AS t1, max(mx) AS mx, sum(sm) AS sm, "   \
    " min(unit) AS unit, bool_and(hib) AS hib, min(job) AS job, json_agg(CASE WHEN c = 1 THEN "    \
    " json_build_object('at', a0, 'value', mean, 'n', 1, 'plan_id', plan, 'result_id', rid) "      \
    " ELSE json_build_object('at', a0, 'until', a1, 'n', c, 'value', mean, 'min', lo, 'max', hi) " \
    " END ORDER BY a0, bk) AS points FROM agg GROUP BY sk) " SERIES_LIST("s.points")

/* Every series of the metric on the target, in one pass over its points
 * (the work of a GROUP BY of them): per series and bucket, grouped by the
 * series' key (jobs.series_key) and a bucket that is the point itself up
 * to $5 points, else one of $5 equal parts of the time range kept with
 * the series (a point outside it falls in a bucket of its own past either
 * end; the caller reads again once it stored the new range). Then per
 * series its points, the state of its points and what was kept of it. */
static const struct hv_stmt read_series = {
    "history_read",
    "WITH " KEPT ", "
    "agg AS (SELECT m.series_key AS sk, CASE WHEN hs.n IS NULL OR hs.n <= $5 THEN m.result_id "
    " ELSE width_bucket(extract(epoch FROM " POINT_AT ")::float8, "
    " extract(epoch FROM hs.first_at)::float8, extract(epoch FROM hs.last_at)::float8 + 0.001, "
    " $5::int) END AS bk, count(*) AS c, min(" POINT_AT ") AS a0, max(" POINT_AT ") AS a1, "
    " avg(m.value) AS mean, min(m.value) AS lo, max(m.value) AS hi, min(m.plan_id) AS plan, "
    " min(m.result_id) AS rid, max(m.results_max) AS mx, sum(m.results_sum) AS sm, "
    " min(m.unit) AS unit, bool_and(m.higher_is_better) AS hib, min(m.jobs[1]) AS job " POINTS_FROM
    " LEFT JOIN hs ON hs.series_key = m.series_key " POINTS_WHERE
    " GROUP BY 1, 2), " SERIES_OF_BUCKETS,
    5};

/* The series' points between $6 and $7 (either NULL: open), a zoom into
 * a long history: per series, its points in that window, or when there
 * are more than $5 of them, $5 equal buckets of the window (from $6, or
 * the series' first point in it, to $7, or its last). Change points as
 * for the whole series. Nothing here is kept: a window is read from the
 * points each time. */
static const struct hv_stmt read_window = {
    "history_read_window",
    "WITH " KEPT ", "
    "pts AS (SELECT m.series_key AS sk, " POINT_AT " AS at, m.value, m.result_id AS rid, "
    " m.results_max AS rmx, m.results_sum AS rsm, m.plan_id, m.unit, m.higher_is_better AS hib, "
    " m.jobs[1] AS job " POINTS_FROM POINTS_WHERE " AND " POINT_AT
    " >= coalesce($6::timestamptz, '-infinity') "
    " AND " POINT_AT " <= coalesce($7::timestamptz, 'infinity')), "
    "rng AS (SELECT sk, count(*) AS n, extract(epoch FROM coalesce($6::timestamptz, min(at))) AS "
    "e0, "
    " extract(epoch FROM coalesce($7::timestamptz, max(at))) AS e1 FROM pts GROUP BY sk), "
    "agg AS (SELECT p.sk, CASE WHEN g.n <= $5 THEN p.rid ELSE width_bucket("
    " extract(epoch FROM p.at)::float8, g.e0::float8, g.e1::float8 + 0.001, $5::int) END AS bk, "
    " count(*) AS c, min(p.at) AS a0, max(p.at) AS a1, avg(p.value) AS mean, min(p.value) AS lo, "
    " max(p.value) AS hi, min(p.plan_id) AS plan, min(p.rid) AS rid, max(p.rmx) AS mx, "
    " sum(p.rsm) AS sm, min(p.unit) AS unit, bool_and(p.hib) AS hib, min(p.job) AS job "
    " FROM pts p JOIN rng g ON g.sk = p.sk GROUP BY 1, 2), " SERIES_OF_BUCKETS,
    7};

/* The same without grouping the points by bucket: a first row with the
 * target, then a row per series (in the order of hv_db_history_read) with
 * the series without its points and the points kept for it, when they
 * were kept for its present state and $5 (else null). The kept text is
 * passed on as it is, never parsed. */
static const struct hv_stmt quick_series = {
    "history_quick",
    "WITH " KEPT ", "
    "s AS (SELECT m.series_key AS sk, count(*) AS n, min(" POINT_AT ") AS t0, "
    " max(" POINT_AT ") AS t1, max(m.results_max) AS mx, sum(m.results_sum) AS sm, "
    " min(m.unit) AS unit, bool_and(m.higher_is_better) AS hib, min(m.jobs[1]) AS job " POINTS_FROM
        POINTS_WHERE " GROUP BY 1) "
    "SELECT 0::bigint AS o, json_build_object('target', t.name, 'excluded', " EXCLUDED
    ")::text, NULL::text "
    "FROM targets t WHERE t.id = $1 "
    "UNION ALL SELECT row_number() OVER (ORDER BY s.sk), " SERIES_JSON(
        "NULL::json") "::text, "
                      " CASE WHEN hs.points_max = $5 AND hs.points_state = " STATE(
                          "s") " THEN hs.points END FROM s LEFT JOIN hs ON hs.series_key = s.sk "
                               "WHERE EXISTS (SELECT 1 FROM targets t WHERE t.id = $1) ORDER BY 1",
    5};

/* The target's name and its history mark (migrations/028; the sum of the
 * target's shards, 034): what changes whenever anything its history
 * answers read may have changed. */
static const struct hv_stmt read_mark = {
    "history_mark",
    "SELECT t.name || ':' || coalesce((SELECT sum(h.mark) FROM history_marks h "
    "WHERE h.target_name = t.name), 0) FROM targets t WHERE t.id = $1",
    1};

static const struct hv_stmt keep_points = {
    "history_keep_points",
    "UPDATE history_series SET points_max = $2, points_state = $3, points = $4 WHERE id = $1", 4};

static const struct hv_stmt read_values = {
    "history_values",
    "SELECT extract(epoch FROM " POINT_AT ")::float8, m.value, m.result_id, m.plan_id, "
    "m.results_max, m.results_sum, " ROUND_RULE " " POINTS_FROM POINTS_WHERE
    "AND m.series_key = $5 ORDER BY " POINT_AT ", m.result_id",
    5};

/* Takes the series' row (created on first use) and holds it until the
 * transaction ends: two readers storing at once store one after the
 * other. */
static const struct hv_stmt series_take = {
    "history_series_take",
    "INSERT INTO history_series (target_id, series_key, workload, metric, configuration) "
    "VALUES ($1, $2, $5::jsonb, $3, coalesce($4::text, '')) "
    "ON CONFLICT (target_id, series_key, metric, configuration) "
    "DO UPDATE SET workload = EXCLUDED.workload RETURNING id",
    5};
static const struct hv_stmt cp_kept = {
    "history_cp_kept",
    "SELECT id, extract(epoch FROM at)::float8 FROM change_points WHERE series_id = $1 "
    "ORDER BY at, id",
    1};

/* The target's facts versions in force at $2 and at $3 (seconds since
 * 1970), how many began in between, and the tuning changes between the
 * two times: made and still in force at $3 ("applied"), or in force at $2
 * and put back by $3 ("restored"). */
#define FACTS_AT(t)                                                                                \
    "(SELECT json_build_object('id', v.id, 'fingerprint', v.fingerprint, 'first_seen', "           \
    "v.first_seen, 'facts', v.facts) FROM target_facts v WHERE v.target_id = $1 "                  \
    "AND v.first_seen <= to_timestamp(" t ") ORDER BY v.first_seen DESC, v.id DESC LIMIT 1)"
static const struct hv_stmt cp_context = {
    "history_cp_context",
    "SELECT json_build_object('before', " FACTS_AT("$2") ", 'after', " FACTS_AT(
        "$3") ", "
              "'versions_between', (SELECT count(*) FROM target_facts v WHERE v.target_id = $1 "
              " AND v.first_seen > to_timestamp($2) AND v.first_seen <= to_timestamp($3)), "
              "'tuning', (SELECT coalesce(json_agg(json_build_object('event', CASE WHEN "
              "c.changed_at > "
              " to_timestamp($2) THEN 'applied' ELSE 'restored' END, 'factor', c.factor, 'scope', "
              " c.scope, 'object', c.object, 'from', c.from_value, 'to', c.to_value, 'changed_at', "
              " c.changed_at, 'restored_at', c.restored_at, 'plan_id', c.plan_id) "
              " ORDER BY coalesce(c.restored_at, c.changed_at), c.id), '[]') "
              " FROM target_changes c JOIN targets t ON t.name = c.target_name WHERE t.id = $1 AND "
              " ((c.changed_at > to_timestamp($2) AND c.changed_at <= to_timestamp($3) "
              "   AND (c.restored_at IS NULL OR c.restored_at > to_timestamp($3))) "
              "  OR (c.changed_at <= to_timestamp($2) AND c.restored_at > to_timestamp($2) "
              "   AND c.restored_at <= to_timestamp($3)))))::text",
    3};

#define CP_COLUMNS                                                                                 \
    "at = to_timestamp($2), before_at = to_timestamp($3), result_id = $4, plan_id = $5, "          \
    "idx = $6, n_before = $7, n_after = $8, mean_before = $9, mean_after = $10, "                  \
    "rel_change = $11, q = $12, p = $13, context = $14::jsonb"
static const struct hv_stmt cp_update = {
    "history_cp_update", "UPDATE change_points SET " CP_COLUMNS ", active = true WHERE id = $1",
    14};
static const struct hv_stmt cp_insert = {
    "history_cp_insert",
    "INSERT INTO change_points (series_id, at, before_at, result_id, plan_id, idx, n_before, "
    "n_after, mean_before, mean_after, rel_change, q, p, context) VALUES ($1, to_timestamp($2), "
    "to_timestamp($3), $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14::jsonb)",
    14};
static const struct hv_stmt cp_retire = {
    "history_cp_retire",
    "UPDATE change_points SET active = false WHERE series_id = $1 AND active "
    "AND NOT (id = ANY ($2::bigint[]))",
    2};
static const struct hv_stmt series_done = {
    "history_series_done",
    "UPDATE history_series SET state = $2, n = $3, first_at = to_timestamp($4), "
    "last_at = to_timestamp($5), scanned_at = now() WHERE id = $1 "
    "RETURNING " CP_LIST("$1") "::text",
    5};

static const struct hv_stmt cp_ack = {
    "history_cp_ack",
    "WITH a AS (UPDATE change_points SET acknowledged_at = coalesce(acknowledged_at, now()), "
    " acknowledged_by = CASE WHEN acknowledged_at IS NULL THEN $2::bigint "
    " ELSE acknowledged_by END WHERE id = $1 RETURNING *) "
    "SELECT (" CP_JSON " || jsonb_build_object('active', cp.active, 'series', "
    " jsonb_build_object('target', t.name, 'target_id', t.id, 'metric', s.metric, 'workload', "
    " s.workload, 'configuration', nullif(s.configuration, ''))))::text "
    "FROM a cp JOIN history_series s ON s.id = cp.series_id JOIN targets t ON t.id = s.target_id "
    "LEFT JOIN tokens tk ON tk.id = cp.acknowledged_by",
    2};

static const struct hv_stmt facts_history = {
    "history_target_facts",
    "SELECT coalesce((SELECT json_agg(json_build_object('id', v.id, 'fingerprint', "
    "v.fingerprint, 'facts', v.facts, 'first_seen', v.first_seen, 'last_seen', v.last_seen) "
    "ORDER BY v.first_seen DESC, v.id DESC) FROM target_facts v WHERE v.target_id = t.id), "
    "'[]')::text FROM targets t WHERE t.id = $1",
    1};

/* The metrics target $1 has a value of in any result of its jobs (the
 * server side of a net workload aside, as in POINTS_FROM), whatever the
 * job's or result's status, configuration or workload: whether $2 is one,
 * how many there are and the first $3 by name. */
static const struct hv_stmt target_metrics = {
    "history_target_metrics",
    "WITH n AS (SELECT DISTINCT m.name FROM targets t JOIN jobs j ON j.target_name = t.name "
    "JOIN results r ON r.job_id = j.id JOIN metrics m ON m.result_id = r.id "
    "WHERE t.id = $1 AND j.role IS DISTINCT FROM 'server') "
    "SELECT json_build_object('measured', EXISTS (SELECT 1 FROM n WHERE n.name = $2), "
    "'total', (SELECT count(*) FROM n), 'metrics', coalesce((SELECT json_agg(f.name ORDER BY "
    "f.name COLLATE \"C\") FROM (SELECT n.name FROM n ORDER BY n.name COLLATE \"C\" LIMIT $3) f), "
    "'[]'))::text",
    3};

/* The parameters $1..$5 (and the window's $6, $7) of every series
 * statement. */
struct q_params {
    char target[24], points[24];
    const char *p[8];
};

static void q_params(const struct hv_history_query *q, struct q_params *qp)
{
    qp->p[0] = hv_db_int(qp->target, sizeof qp->target, q->target_id);
    qp->p[1] = q->metric;
    qp->p[2] = q->configuration;
    qp->p[3] = q->workload;
    qp->p[4] = hv_db_int(qp->points, sizeof qp->points, q->max_points);
    qp->p[5] = q->from;
    qp->p[6] = q->to;
    qp->p[7] = NULL;
}

enum hv_db_status hv_db_history_read(const struct hv_history_query *q, json_t **out)
{
    struct q_params qp;
    q_params(q, &qp);
    bool window = q->from != NULL || q->to != NULL;
    return hv_db_json(window ? &read_window : &read_series, qp.p, out, NULL);
}

void hv_history_kept_free(struct hv_history_kept *k)
{
    for (size_t i = 0; i < k->n; i++)
        free(k->points[i]);
    free(k->points);
    k->points = NULL;
    k->n = 0;
}

/* Builds hv_db_history_quick's answers from its rows. */
static enum hv_db_status quick_rows(PGresult *r, json_t **out, struct hv_history_kept *kept)
{
    int rows = PQntuples(r);
    *out = json_loads(PQgetvalue(r, 0, 1), 0, NULL);
    json_t *list = json_array();
    kept->points = calloc((size_t)rows, sizeof *kept->points);
    if (*out == NULL || list == NULL || kept->points == NULL ||
        json_object_set_new(*out, "series", list) != 0)
        return HV_DB_ERROR;
    for (int i = 1; i < rows; i++) {
        json_t *series = json_loads(PQgetvalue(r, i, 1), 0, NULL);
        if (series == NULL || json_array_append_new(list, series) != 0)
            return HV_DB_ERROR;
        if (!PQgetisnull(r, i, 2) && (kept->points[i - 1] = strdup(PQgetvalue(r, i, 2))) == NULL)
            return HV_DB_ERROR;
        kept->n = (size_t)i;
    }
    return HV_DB_OK;
}

enum hv_db_status hv_db_history_quick(const struct hv_history_query *q, json_t **out,
                                      struct hv_history_kept *kept)
{
    *out = NULL;
    memset(kept, 0, sizeof *kept);
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    struct q_params qp;
    q_params(q, &qp);
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &quick_series, qp.p, &r);
    if (s == HV_DB_OK)
        s = quick_rows(r, out, kept);
    PQclear(r);
    if (s != HV_DB_OK) {
        json_decref(*out);
        *out = NULL;
        hv_history_kept_free(kept);
    }
    return s;
}

enum hv_db_status hv_db_history_mark(int64_t target_id, char **mark)
{
    *mark = NULL;
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char tid[24];
    const char *p[] = {hv_db_int(tid, sizeof tid, target_id)};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &read_mark, p, &r);
    if (s == HV_DB_OK && (*mark = strdup(PQgetvalue(r, 0, 0))) == NULL)
        s = HV_DB_ERROR;
    PQclear(r);
    return s;
}

enum hv_db_status hv_db_history_keep_points(int64_t series_id, long max_points, const char *state,
                                            const json_t *points)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char *text = json_dumps(points, JSON_COMPACT);
    if (text == NULL)
        return HV_DB_ERROR;
    char sid[24], max[24];
    const char *p[] = {hv_db_int(sid, sizeof sid, series_id),
                       hv_db_int(max, sizeof max, max_points), state, text};
    enum hv_db_status s = hv_db_exec(db, &keep_points, p, NULL);
    free(text);
    return s == HV_DB_NONE ? HV_DB_OK : s;
}

void hv_history_values_free(struct hv_history_values *v)
{
    free(v->t);
    free(v->value);
    free(v->result_id);
    free(v->plan_id);
    v->t = v->value = NULL;
    v->result_id = v->plan_id = NULL;
    v->n = 0;
}

enum hv_db_status hv_db_history_values(const struct hv_history_query *q, const char *key,
                                       struct hv_history_values *out)
{
    memset(out, 0, sizeof *out);
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    struct q_params qp;
    q_params(q, &qp);
    qp.p[4] = key;
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &read_values, qp.p, &r);
    if (s != HV_DB_OK) {
        PQclear(r);
        return s;
    }
    size_t n = (size_t)PQntuples(r);
    out->t = malloc(n * sizeof *out->t);
    out->value = malloc(n * sizeof *out->value);
    out->result_id = malloc(n * sizeof *out->result_id);
    out->plan_id = malloc(n * sizeof *out->plan_id);
    if (!out->t || !out->value || !out->result_id || !out->plan_id) {
        PQclear(r);
        hv_history_values_free(out);
        return HV_DB_ERROR;
    }
    long long sum = 0, max = 0;
    for (size_t i = 0; i < n; i++) {
        out->t[i] = strtod(PQgetvalue(r, (int)i, 0), NULL);
        out->value[i] = strtod(PQgetvalue(r, (int)i, 1), NULL);
        out->result_id[i] = strtoll(PQgetvalue(r, (int)i, 2), NULL, 10);
        out->plan_id[i] = strtoll(PQgetvalue(r, (int)i, 3), NULL, 10);
        long long rmax = strtoll(PQgetvalue(r, (int)i, 4), NULL, 10);
        sum += strtoll(PQgetvalue(r, (int)i, 5), NULL, 10);
        if (rmax > max)
            max = rmax;
    }
    out->n = n;
    /* As STATE: the rule's mark, the count, the largest and the sum of the
     * points' results. */
    snprintf(out->state, sizeof out->state, "%s:%zu:%lld:%lld", n > 0 ? PQgetvalue(r, 0, 6) : "", n,
             max, sum);
    PQclear(r);
    return HV_DB_OK;
}

/* The context of a change point between before_at and at, as a new JSON
 * object: the facts versions in force at each (without their facts), the
 * facts that differ, how many versions began in between, and the tuning
 * changes. */
static enum hv_db_status cp_context_json(struct hv_db *db, const char *target, double before_at,
                                         double at, json_t **out)
{
    char b[40], a[40];
    snprintf(b, sizeof b, "%.6f", before_at);
    snprintf(a, sizeof a, "%.6f", at);
    const char *p[] = {target, b, a};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &cp_context, p, &r);
    json_t *doc = s == HV_DB_OK ? json_loads(PQgetvalue(r, 0, 0), 0, NULL) : NULL;
    PQclear(r);
    if (doc == NULL)
        return s == HV_DB_OK || s == HV_DB_NONE ? HV_DB_ERROR : s;
    json_t *before = json_object_get(doc, "before"), *after = json_object_get(doc, "after");
    /* Without a version on each side nothing is known to have changed. */
    json_t *changed =
        json_is_object(before) && json_is_object(after)
            ? hv_facts_diff(json_object_get(before, "facts"), json_object_get(after, "facts"))
            : json_array();
    if (json_is_object(before))
        json_object_del(before, "facts");
    if (json_is_object(after))
        json_object_del(after, "facts");
    *out = json_pack("{s:O,s:O,s:o,s:O,s:O}", "facts_before", before, "facts_after", after,
                     "facts_changed", changed ? changed : json_array(), "facts_versions_between",
                     json_object_get(doc, "versions_between"), "tuning",
                     json_object_get(doc, "tuning"));
    json_decref(doc);
    return *out != NULL ? HV_DB_OK : HV_DB_ERROR;
}

/* Writes found change point f: over kept change point keep (> 0), else as
 * a new one of series. */
static enum hv_db_status cp_write(struct hv_db *db, const char *target, const char *series,
                                  int64_t keep, const struct hv_history_cp *f)
{
    json_t *context = NULL;
    enum hv_db_status s = cp_context_json(db, target, f->before_at, f->at, &context);
    if (s != HV_DB_OK)
        return s;
    char *ctx = json_dumps(context, JSON_COMPACT);
    json_decref(context);
    if (ctx == NULL)
        return HV_DB_ERROR;
    char id[24], at[40], bat[40], rid[24], pid[24], idx[24], nb[24], na[24], mb[40], ma[40],
        rel[40], q[40], p[40];
    snprintf(at, sizeof at, "%.6f", f->at);
    snprintf(bat, sizeof bat, "%.6f", f->before_at);
    snprintf(mb, sizeof mb, "%.17g", f->mean_before);
    snprintf(ma, sizeof ma, "%.17g", f->mean_after);
    snprintf(rel, sizeof rel, "%.17g", f->rel_change);
    snprintf(q, sizeof q, "%.17g", f->q);
    snprintf(p, sizeof p, "%.17g", f->p);
    const char *params[] = {keep > 0 ? hv_db_int(id, sizeof id, keep) : series,
                            at,
                            bat,
                            hv_db_int(rid, sizeof rid, f->result_id),
                            hv_db_int(pid, sizeof pid, f->plan_id),
                            hv_db_int(idx, sizeof idx, (long long)f->index),
                            hv_db_int(nb, sizeof nb, (long long)f->n_before),
                            hv_db_int(na, sizeof na, (long long)f->n_after),
                            mb,
                            ma,
                            isfinite(f->rel_change) ? rel : NULL,
                            q,
                            p,
                            ctx};
    s = hv_db_exec(db, keep > 0 ? &cp_update : &cp_insert, params, NULL);
    free(ctx);
    return hv_db_must(s);
}

/* The kept change points of a series: ids and times. */
struct kept {
    size_t n;
    int64_t *id;
    double *at;
    bool *used;
};

static enum hv_db_status kept_read(struct hv_db *db, const char *series, struct kept *k)
{
    memset(k, 0, sizeof *k);
    const char *p[] = {series};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &cp_kept, p, &r);
    if (s == HV_DB_NONE) {
        PQclear(r);
        return HV_DB_OK;
    }
    if (s != HV_DB_OK)
        return s;
    size_t n = (size_t)PQntuples(r);
    k->id = malloc(n * sizeof *k->id);
    k->at = malloc(n * sizeof *k->at);
    k->used = calloc(n, sizeof *k->used);
    if (k->id && k->at && k->used) {
        for (size_t i = 0; i < n; i++) {
            k->id[i] = strtoll(PQgetvalue(r, (int)i, 0), NULL, 10);
            k->at[i] = strtod(PQgetvalue(r, (int)i, 1), NULL);
        }
        k->n = n;
    } else {
        s = HV_DB_ERROR;
    }
    PQclear(r);
    return s;
}

/* The kept change point that found change point f is, or 0: the nearest
 * unused one within f's match range. */
static int64_t kept_match(struct kept *k, const struct hv_history_cp *f)
{
    size_t best = k->n;
    for (size_t i = 0; i < k->n; i++) {
        if (k->used[i] || k->at[i] < f->match_lo || k->at[i] > f->match_hi)
            continue;
        if (best == k->n || fabs(k->at[i] - f->at) < fabs(k->at[best] - f->at))
            best = i;
    }
    if (best == k->n)
        return 0;
    k->used[best] = true;
    return k->id[best];
}

struct store_args {
    const struct hv_history_query *q;
    const struct hv_history_series *series;
    const struct hv_history_values *v;
    const struct hv_history_cp *found;
    size_t n;
    json_t **out;
};

/* Retires the kept change points of series that none of found[0..n)
 * matches, then writes every found one over its match or as a new one. */
static enum hv_db_status write_found(struct hv_db *db, const struct store_args *a,
                                     const char *target, const char *series)
{
    struct kept k;
    enum hv_db_status s = kept_read(db, series, &k);
    int64_t *match = calloc(a->n + 1, sizeof *match);
    size_t cap = 3 + 24 * (a->n + 1), len = 0;
    char *ids = malloc(cap);
    if (s == HV_DB_OK && (match == NULL || ids == NULL))
        s = HV_DB_ERROR;
    if (s == HV_DB_OK) {
        len = (size_t)snprintf(ids, cap, "{");
        for (size_t i = 0; i < a->n; i++) {
            match[i] = kept_match(&k, &a->found[i]);
            if (match[i] > 0)
                len += (size_t)snprintf(ids + len, cap - len, "%s%lld", len > 1 ? "," : "",
                                        (long long)match[i]);
        }
        snprintf(ids + len, cap - len, "}");
        const char *pr[] = {series, ids};
        s = hv_db_exec(db, &cp_retire, pr, NULL);
        s = s == HV_DB_NONE ? HV_DB_OK : s;
    }
    for (size_t i = 0; s == HV_DB_OK && i < a->n; i++)
        s = cp_write(db, target, series, match[i], &a->found[i]);
    free(k.id);
    free(k.at);
    free(k.used);
    free(match);
    free(ids);
    return s;
}

static enum hv_db_status store_txn(struct hv_db *db, void *arg)
{
    struct store_args *a = arg;
    json_decref(*a->out);
    *a->out = NULL;
    char target[24], series[24];
    hv_db_int(target, sizeof target, a->q->target_id);
    const char *pt[] = {target, a->series->key, a->q->metric, a->q->configuration,
                        a->series->workload};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &series_take, pt, &r);
    if (s == HV_DB_OK)
        snprintf(series, sizeof series, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
    if (s != HV_DB_OK)
        return hv_db_must(s);
    s = write_found(db, a, target, series);
    if (s != HV_DB_OK)
        return s;
    char n[24], first[40], last[40];
    const struct hv_history_values *v = a->v;
    snprintf(first, sizeof first, "%.6f", v->n > 0 ? v->t[0] : 0.0);
    snprintf(last, sizeof last, "%.6f", v->n > 0 ? v->t[v->n - 1] : 0.0);
    const char *pd[] = {series, v->state, hv_db_int(n, sizeof n, (long long)v->n),
                        v->n > 0 ? first : NULL, v->n > 0 ? last : NULL};
    s = hv_db_exec(db, &series_done, pd, &r);
    if (s == HV_DB_OK)
        *a->out = json_loads(PQgetvalue(r, 0, 0), 0, NULL);
    PQclear(r);
    if (s != HV_DB_OK)
        return hv_db_must(s);
    return *a->out != NULL ? HV_DB_OK : HV_DB_ERROR;
}

enum hv_db_status hv_db_history_store(const struct hv_history_query *q,
                                      const struct hv_history_series *series,
                                      const struct hv_history_values *v,
                                      const struct hv_history_cp *found, size_t n, json_t **out)
{
    *out = NULL;
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    struct store_args a = {q, series, v, found, n, out};
    enum hv_db_status s = hv_db_txn(db, store_txn, &a);
    if (s != HV_DB_OK) {
        json_decref(*out);
        *out = NULL;
    }
    return s;
}

enum hv_db_status hv_db_change_point_ack(int64_t id, int64_t token_id, json_t **out)
{
    char cid[24], tok[24];
    const char *p[] = {hv_db_int(cid, sizeof cid, id),
                       token_id > 0 ? hv_db_int(tok, sizeof tok, token_id) : NULL};
    return hv_db_json(&cp_ack, p, out, NULL);
}

enum hv_db_status hv_db_target_facts_history(int64_t target_id, json_t **out)
{
    char tid[24];
    const char *p[] = {hv_db_int(tid, sizeof tid, target_id)};
    return hv_db_json(&facts_history, p, out, NULL);
}

enum hv_db_status hv_db_history_metrics(int64_t target_id, const char *metric, size_t max,
                                        json_t **out)
{
    char tid[24], lim[24];
    const char *p[] = {hv_db_int(tid, sizeof tid, target_id), metric,
                       hv_db_int(lim, sizeof lim, (int64_t)max)};
    return hv_db_json(&target_metrics, p, out, NULL);
}

/* The host targets a fleet history reads: those whose labels (the
 * worker's and the administrator's) hold the selector $1. */
#define FLEET_HOSTS HV_SQL_SELECTED_HOSTS

/* How many hosts, and what moves whenever a fleet history of them may
 * answer otherwise: which hosts (their count and ids) and their history
 * marks (migrations/028: results, imports, change points found or
 * acknowledged). */
static const struct hv_stmt fleet_mark = {
    "fleet_mark",
    "SELECT json_build_array(count(*), count(*) || ':' || coalesce(sum(t.id), 0) || ':' || "
    "coalesce(sum((SELECT sum(h.mark) FROM history_marks h WHERE h.target_name = t.name)), 0))"
    "::text " FLEET_HOSTS,
    1};

/* A workload as answers show it: without the ids a plan gave it. */
#define FLEET_WORKLOAD(job)                                                                        \
    "(SELECT jw.workload - 'id' - 'workload' FROM jobs jw WHERE jw.id = " job ")"

/* The fleet's history ($1 selector, $2 metric, $3/$4 the window in seconds
 * since 1970, $5 a series key or NULL, $6 the bucket in seconds, $7 the
 * margin in %): each host's points as a target's history reads them
 * (POINTS_FROM: hv_round_parts, each plan's default configuration), in
 * one pass; the series most hosts have unless $5 names one; per host and
 * bucket the mean, per bucket the median and quartiles over the hosts,
 * per host the median of its ratios to the bucket's median. The medians
 * are looked up in an array by bucket (ma): a join of the host buckets to
 * the bucket medians, estimated at a row each, ran as a nested loop of
 * 45,000 × 90 rows at 500 hosts × 90 days. */
static const struct hv_stmt fleet_read = {
    "fleet_history",
    "WITH h AS (SELECT t.id, t.name " FLEET_HOSTS "), "
    "pts AS (SELECT h.id AS tid, m.series_key AS sk, m.at, m.value, m.unit, "
    " m.higher_is_better AS hib, m.jobs[1] AS job FROM h CROSS JOIN LATERAL (SELECT p.*, "
    " p.metric AS name FROM hv_round_parts p WHERE p.target = h.name AND p.metric = $2 "
    " AND p.config_idx = 0 AND p.at >= to_timestamp($3::float8) "
    " AND p.at <= to_timestamp($4::float8) OFFSET 0) m WHERE " HV_SQL_METRIC_OK "), "
    "keys AS (SELECT sk, count(DISTINCT tid) AS hosts, count(*) AS n, min(unit) AS unit, "
    " bool_and(hib) AS hib, min(job) AS job FROM pts GROUP BY sk), "
    "pick AS (SELECT * FROM keys WHERE $5::text IS NULL OR sk = $5::text "
    " ORDER BY hosts DESC, n DESC, sk LIMIT 1), "
    "b AS (SELECT p.tid, floor((extract(epoch FROM p.at) - $3::float8) / $6::float8)::bigint AS "
    "bk, "
    " avg(p.value) AS v, count(*) AS c FROM pts p JOIN pick k ON k.sk = p.sk GROUP BY 1, 2), "
    "med AS (SELECT bk, percentile_cont(0.5) WITHIN GROUP (ORDER BY v) AS p50, "
    " percentile_cont(0.25) WITHIN GROUP (ORDER BY v) AS p25, "
    " percentile_cont(0.75) WITHIN GROUP (ORDER BY v) AS p75, count(*) AS n FROM b GROUP BY bk), "
    "ma AS (SELECT array_agg(m.p50 ORDER BY g) AS a FROM generate_series(0, "
    " ceil(($4::float8 - $3::float8) / $6::float8)::int) g LEFT JOIN med m ON m.bk = g), "
    "hr AS (SELECT b.tid, percentile_cont(0.5) WITHIN GROUP (ORDER BY b.v / "
    " nullif((SELECT a FROM ma)[b.bk + 1], 0)) AS ratio, json_agg(json_build_array($3::float8 "
    " + b.bk * $6::float8, b.v, b.c) ORDER BY b.bk) AS pts FROM b GROUP BY b.tid), "
    "cps AS (SELECT hs.target_id AS tid, json_agg(json_build_object('id', cp.id, 'at', cp.at, "
    " 'change_pct', 100 * cp.rel_change, 'status', CASE WHEN cp.acknowledged_at IS NULL "
    " THEN 'new' ELSE 'acknowledged' END) ORDER BY cp.at) AS list FROM history_series hs "
    " JOIN change_points cp ON cp.series_id = hs.id AND cp.active "
    " WHERE hs.target_id IN (SELECT id FROM h) AND hs.metric = $2 AND hs.configuration = '' "
    " AND hs.series_key = (SELECT sk FROM pick) AND cp.at >= to_timestamp($3::float8) "
    " AND cp.at <= to_timestamp($4::float8) GROUP BY 1), "
    "hj AS (SELECT h.name, hr.ratio, coalesce(abs(hr.ratio - 1) * 100 > $7::float8, false) AS o, "
    " json_build_object('id', h.id, 'name', h.name, 'ratio', hr.ratio, 'outlier', "
    " coalesce(abs(hr.ratio - 1) * 100 > $7::float8, false), 'points', coalesce(hr.pts, '[]'), "
    " 'change_points', coalesce(c.list, '[]')) AS j "
    " FROM h LEFT JOIN hr ON hr.tid = h.id LEFT JOIN cps c ON c.tid = h.id) "
    "SELECT json_build_object('from', to_timestamp($3::float8), 'to', to_timestamp($4::float8), "
    " 'bucket_s', $6::bigint, 'metric', $2::text, 'margin_pct', $7::float8, "
    " 'key', (SELECT sk FROM pick), 'workload', " FLEET_WORKLOAD(
        "(SELECT job FROM pick)") ", "
                                  " 'unit', (SELECT unit FROM pick), 'higher_is_better', (SELECT "
                                  "hib FROM pick), "
                                  " 'series_keys', coalesce((SELECT "
                                  "json_agg(json_build_object('key', k.sk, "
                                  "'workload', " FLEET_WORKLOAD(
                                      "k.job") ", 'hosts', k.hosts, 'points', k.n) "
                                               " ORDER BY k.hosts DESC, k.n DESC, k.sk) FROM keys "
                                               "k), '[]'), "
                                               " 'hosts', coalesce((SELECT json_agg(j ORDER BY o "
                                               "DESC, ratio IS NULL, abs(ratio - 1) DESC, "
                                               " name) FROM hj), '[]'), "
                                               " 'median', coalesce((SELECT "
                                               "json_agg(json_build_array($3::float8 + bk * "
                                               "$6::float8, p50, p25, "
                                               " p75, n) ORDER BY bk) FROM med), '[]'))::text",
    7};

enum hv_db_status hv_db_fleet_mark(const json_t *selector, long *n, char **mark)
{
    char *sel = json_dumps(selector, JSON_COMPACT);
    if (sel == NULL)
        return HV_DB_ERROR;
    const char *p[] = {sel};
    json_t *v = NULL;
    enum hv_db_status s = hv_db_json(&fleet_mark, p, &v, NULL);
    free(sel);
    const char *m = json_string_value(json_array_get(v, 1));
    if (s == HV_DB_OK && m == NULL)
        s = HV_DB_ERROR;
    if (s == HV_DB_OK) {
        *n = (long)json_integer_value(json_array_get(v, 0));
        *mark = strdup(m);
        if (*mark == NULL)
            s = HV_DB_ERROR;
    }
    json_decref(v);
    return s;
}

enum hv_db_status hv_db_fleet_history(const struct hv_fleet_history_query *q,
                                      struct hv_db_text *out)
{
    char *sel = json_dumps(q->selector, JSON_COMPACT);
    if (sel == NULL)
        return HV_DB_ERROR;
    char from[32], to[32], bucket[24], margin[32];
    snprintf(from, sizeof from, "%.3f", q->from);
    snprintf(to, sizeof to, "%.3f", q->to);
    snprintf(margin, sizeof margin, "%.17g", q->margin_pct);
    const char *p[] = {
        sel, q->metric, from, to, q->key, hv_db_int(bucket, sizeof bucket, q->bucket_s), margin};
    enum hv_db_status s = hv_db_text(&fleet_read, p, out);
    free(sel);
    return s;
}
