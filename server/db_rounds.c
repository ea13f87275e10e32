/* db_rounds.c — see db_rounds.h. */
#include "db_rounds.h"

#include "adaptive.h"
#include "log.h"
#include "params.h"
#include "stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The plan's lock (hv_db_plan_lock) for the job's plan, taken before its
 * row's. */
static const struct hv_stmt lock_take = {"round_lock_take",
                                         "SELECT hv_plan_lock(plan_id) FROM jobs WHERE id = $1", 1};

/* The plan of the job, locked so that the block advance and this
 * decision do not interleave, nor two transactions that end a round's last
 * jobs at once (two servers' batches): the second waits here for the first
 * to commit, and its next statement, with a snapshot taken after that,
 * sees the round ended. */
static const struct hv_stmt lock_plan = {"round_lock_plan",
                                         "SELECT p.id FROM jobs j JOIN plans p ON p.id = j.plan_id "
                                         "WHERE j.id = $1 FOR NO KEY UPDATE OF p",
                                         1};

/* Whether the job's round was its plan's latest and ended. */
static const struct hv_stmt state = {
    "round_state",
    "SELECT j.plan_id, j.repetition, (SELECT max(x.repetition) FROM jobs x WHERE x.plan_id = "
    "j.plan_id), EXISTS (SELECT 1 FROM jobs x WHERE x.plan_id = j.plan_id AND x.repetition = "
    "j.repetition AND x.status IN ('queued', 'running')), p.cancelled, "
    "coalesce((p.spec->'repetitions'->>'min')::int, 1), "
    "coalesce((p.spec->'repetitions'->>'max')::int, 1), "
    "coalesce((p.spec->'repetitions'->>'ci_pct')::float8, 0), p.seed::text, "
    "coalesce(p.spec->>'order', 'randomized') <> 'sequential' "
    "FROM jobs j JOIN plans p ON p.id = j.plan_id WHERE j.id = $1",
    1};

/* One value per series and round (hv_round_values, migrations/042): the
 * series' configuration, workload, target and metric, the workload's kind
 * and engine, the round and the value; a group's members are one value. */
static const struct hv_stmt values = {
    "round_values",
    "SELECT v.config_idx, v.workload_id, v.target, v.metric, v.kind, v.engine, v.round, v.value "
    "FROM hv_round_values($1) v ORDER BY 1, 2, 3, 4, 7",
    1};

static const struct hv_stmt record = {
    "round_record", "UPDATE plans SET adaptive = $2::jsonb, updated_at = now() WHERE id = $1", 2};

/* Round $2 is round 1 again: the same configurations, workloads, targets,
 * roles and group layout, with fresh groups, run after everything queued,
 * and (in a tuning plan) blocks of its own in a seeded order. */
static const struct hv_stmt next_round = {
    "round_insert",
    "WITH src AS (SELECT j.*, c.idx AS cidx FROM jobs j JOIN configurations c "
    " ON c.id = j.config_id WHERE j.plan_id = $1 AND j.repetition = 1), "
    "gmax AS (SELECT coalesce(max(idx), -1) AS m FROM job_groups WHERE plan_id = $1), "
    "gsrc AS (SELECT g.id AS old, g.size, gmax.m + row_number() OVER (ORDER BY g.id) AS idx "
    " FROM job_groups g, gmax WHERE g.id IN (SELECT group_id FROM src)), "
    "gnew AS (INSERT INTO job_groups (plan_id, idx, size) SELECT $1, idx, size FROM gsrc "
    " RETURNING id, idx), "
    "gmap AS (SELECT gsrc.old, gnew.id AS new FROM gsrc JOIN gnew ON gnew.idx = gsrc.idx), "
    "bmax AS (SELECT max(block) AS m, max(run_order) AS o FROM jobs WHERE plan_id = $1), "
    "blk AS (SELECT DISTINCT cidx FROM src), "
    "bnew AS (SELECT cidx, dense_rank() OVER (ORDER BY CASE WHEN $4::bool "
    " THEN md5($3 || ':' || $2 || ':' || cidx) ELSE lpad(cidx::text, 10, '0') END) - 1 AS b "
    " FROM blk), "
    "ins AS (INSERT INTO jobs (plan_id, config_id, workload_id, workload, target_name, "
    " repetition, run_order, role, group_id, block) "
    " SELECT $1, s.config_id, s.workload_id, s.workload, s.target_name, $2::int, bmax.o + "
    " row_number() OVER (ORDER BY bnew.b, s.run_order), s.role, gmap.new, "
    " CASE WHEN s.block IS NULL THEN NULL ELSE bmax.m + 1 + bnew.b END "
    " FROM src s JOIN bnew ON bnew.cidx = s.cidx LEFT JOIN gmap ON gmap.old = s.group_id, bmax "
    " RETURNING block, config_id) "
    "INSERT INTO plan_steps (plan_id, kind, block, config_id, target_name, status) "
    "SELECT DISTINCT $1, 'apply', i.block, i.config_id, p.host_name, 'waiting' "
    "FROM ins i JOIN plans p ON p.id = $1 WHERE i.block IS NOT NULL",
    4};

/* The noisy job's result set aside and its configuration queued again
 * in its round, or NULL (migrations/052). */
static const struct hv_stmt noise_repeat = {"round_noise_repeat", "SELECT hv_noise_repeat($1)", 1};

/* Whether metric is one the workload's engine judges by (its primary
 * metrics); a site benchmark's one declared metric always is. */
static bool primary(const char *kind, const char *engine, const char *metric)
{
    const struct hv_engine_def *e = hv_engine_def_find(kind, engine);
    if (e == NULL || e->metrics == NULL)
        return true;
    for (const char *const *m = e->metrics; *m != NULL; m++)
        if (strcmp(*m, metric) == 0)
            return true;
    return false;
}

/* The series of r's rows, summarised: a growing array of summaries of the
 * primary metrics, and the key of each for the record. */
struct series_set {
    struct hv_summary *s;
    json_t *keys; /* [{configuration index, workload, target, metric}] */
    size_t n, cap;
};

static int series_add(struct series_set *set, PGresult *r, int first, const double *x, size_t n)
{
    if (set->n == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 32;
        struct hv_summary *s = realloc(set->s, cap * sizeof *s);
        if (s == NULL)
            return -1;
        set->s = s;
        set->cap = cap;
    }
    enum hv_stat_err e = hv_summarize_scaled(x, n, &set->s[set->n]);
    if (e == HV_STAT_NO_MEMORY)
        return -1;
    if (e != HV_STAT_OK)
        return 0; /* nothing to judge by */
    json_array_append_new(
        set->keys, json_pack("{s:i,s:s,s:s,s:s}", "configuration", atoi(PQgetvalue(r, first, 0)),
                             "workload", PQgetvalue(r, first, 1), "target", PQgetvalue(r, first, 2),
                             "metric", PQgetvalue(r, first, 3)));
    set->n++;
    return 0;
}

/* Whether rows a and b belong to one series. */
static bool same_series(PGresult *r, int a, int b)
{
    for (int c = 0; c < 4; c++)
        if (strcmp(PQgetvalue(r, a, c), PQgetvalue(r, b, c)) != 0)
            return false;
    return true;
}

static int collect(PGresult *r, struct series_set *set)
{
    int rows = PQntuples(r);
    double *x = malloc(((size_t)rows + 1) * sizeof *x);
    if (x == NULL)
        return -1;
    for (int first = 0; first < rows;) {
        int end = first;
        size_t n = 0;
        for (; end < rows && same_series(r, first, end); end++)
            x[n++] = strtod(PQgetvalue(r, end, 7), NULL);
        if (primary(PQgetvalue(r, first, 4), PQgetvalue(r, first, 5), PQgetvalue(r, first, 3)) &&
            series_add(set, r, first, x, n) != 0) {
            free(x);
            return -1;
        }
        first = end;
    }
    free(x);
    return 0;
}

/* Decides after `round` rounds and records it; *more says whether to
 * queue another. */
static enum hv_db_status decide(struct hv_db *db, const char *plan, int round, int rmin, int rmax,
                                double ci_pct, bool *more)
{
    const char *p[] = {plan};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &values, p, &r);
    if (s != HV_DB_OK && s != HV_DB_NONE) {
        PQclear(r);
        return s;
    }
    struct series_set set = {.keys = json_array()};
    if (s == HV_DB_OK && collect(r, &set) != 0)
        s = HV_DB_ERROR;
    PQclear(r);
    size_t widest = 0;
    enum hv_adapt a = HV_ADAPT_MAX;
    if (s != HV_DB_ERROR) {
        a = hv_adapt_next(set.s, set.n, ci_pct, round, rmin, rmax);
        hv_ci_reached(set.s, set.n, ci_pct, &widest);
    }
    json_t *rec = json_pack("{s:i,s:s,s:f,s:i}", "rounds", round, "decision", hv_adapt_name(a),
                            "ci_pct", ci_pct, "series", (int)set.n);
    if (widest < set.n && rec != NULL) {
        json_t *w = json_deep_copy(json_array_get(set.keys, widest));
        double h = set.s[widest].rel_half_pct;
        json_object_set_new(w, "half_pct", h == h ? json_real(h) : json_null());
        json_object_set_new(rec, "widest", w);
    }
    free(set.s);
    json_decref(set.keys);
    char *text = rec ? json_dumps(rec, JSON_COMPACT) : NULL;
    json_decref(rec);
    if (s != HV_DB_ERROR && text != NULL) {
        const char *p2[] = {plan, text};
        s = hv_db_exec(db, &record, p2, NULL);
    } else {
        s = HV_DB_ERROR;
    }
    free(text);
    *more = a == HV_ADAPT_MORE;
    if (s == HV_DB_OK)
        hv_info("plan %s: after %d round%s: %s", plan, round, round == 1 ? "" : "s",
                a == HV_ADAPT_MORE      ? "an interval is still too wide, one more round"
                : a == HV_ADAPT_PRECISE ? "every interval is within the width asked for"
                                        : "max rounds done");
    return s == HV_DB_NONE ? HV_DB_OK : s;
}

enum hv_db_status hv_db_noise_repeat(struct hv_db *db, const char *job_id, bool *repeated)
{
    const char *p[] = {job_id};
    PGresult *r = NULL;
    enum hv_db_status s = hv_db_exec(db, &noise_repeat, p, &r);
    bool did = s == HV_DB_OK && !PQgetisnull(r, 0, 0);
    if (did)
        hv_info("job %s ran beside other work (%s): set aside, its configuration runs again in "
                "its round",
                job_id, PQgetvalue(r, 0, 0));
    PQclear(r);
    if (repeated != NULL)
        *repeated = did;
    return s == HV_DB_NONE ? HV_DB_OK : s;
}

enum hv_db_status hv_db_round_decide(struct hv_db *db, const char *job_id)
{
    const char *p[] = {job_id};
    PGresult *r = NULL;
    enum hv_db_status s = hv_db_exec(db, &lock_take, p, NULL);
    if (s == HV_DB_OK)
        s = hv_db_exec(db, &lock_plan, p, NULL);
    if (s == HV_DB_OK)
        s = hv_db_exec(db, &state, p, &r);
    if (s != HV_DB_OK) {
        PQclear(r);
        return s == HV_DB_NONE ? HV_DB_OK : s;
    }
    char plan[24], seed[32];
    snprintf(plan, sizeof plan, "%s", PQgetvalue(r, 0, 0));
    snprintf(seed, sizeof seed, "%s", PQgetvalue(r, 0, 8));
    int round = atoi(PQgetvalue(r, 0, 1)), latest = atoi(PQgetvalue(r, 0, 2));
    bool open = PQgetvalue(r, 0, 3)[0] == 't', cancelled = PQgetvalue(r, 0, 4)[0] == 't';
    int rmin = atoi(PQgetvalue(r, 0, 5)), rmax = atoi(PQgetvalue(r, 0, 6));
    double ci_pct = strtod(PQgetvalue(r, 0, 7), NULL);
    bool randomized = PQgetvalue(r, 0, 9)[0] == 't';
    PQclear(r);
    if (open || cancelled || round != latest || rmin < 1 || rmax < rmin)
        return HV_DB_OK;
    bool more = false;
    s = decide(db, plan, round, rmin, rmax, ci_pct, &more);
    if (s != HV_DB_OK || !more)
        return s;
    char next[16];
    snprintf(next, sizeof next, "%d", round + 1);
    const char *pn[] = {plan, next, seed, randomized ? "t" : "f"};
    s = hv_db_exec(db, &next_round, pn, NULL);
    return s == HV_DB_NONE ? HV_DB_OK : s;
}
