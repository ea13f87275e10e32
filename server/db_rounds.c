/* db_rounds.c — see db_rounds.h. */
#include "db_rounds.h"

#include "db_recommendations.h"
#include "log.h"
#include "report.h"

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
    "p.seed::text, "
    "coalesce(p.spec->>'order', 'randomized') <> 'sequential' "
    "FROM jobs j JOIN plans p ON p.id = j.plan_id WHERE j.id = $1",
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

/* The plan's report as the stop rule reads it: its repetitions section's
 * decision (server/report_advice.c) after the latest round, with what the
 * record keeps of it. Read on this transaction's connection (the report's
 * reads use the thread's, db), so the result that ended the round is in. */
static enum hv_db_status decide(struct hv_db *db, const char *plan, int round, int rmax, bool *more)
{
    *more = false;
    struct hv_rdata d;
    hv_rdata_init(&d);
    d.runs_all = true; /* the values themselves, never a digest */
    enum hv_db_status s = hv_report_load(strtoll(plan, NULL, 10), &d);
    json_t *report = s == HV_DB_OK ? hv_report_build(&d) : NULL;
    hv_rdata_free(&d);
    if (s != HV_DB_OK || report == NULL) {
        json_decref(report);
        return s == HV_DB_OK ? HV_DB_ERROR : s;
    }
    const json_t *reps = json_object_get(report, "repetitions");
    const json_t *family = json_object_get(report, "family");
    const char *decision = json_string_value(json_object_get(reps, "decision"));
    const char *rule = json_string_value(json_object_get(reps, "rule"));
    /* The report counts the rounds with values; a round whose jobs all
     * failed still counts towards max. */
    if (decision == NULL || (round >= rmax && strcmp(decision, "more") == 0))
        decision = "max";
    json_t *rec =
        json_pack("{s:i,s:s,s:s,s:O,s:O?}", "rounds", round, "rule", rule ? rule : "width",
                  "decision", decision, "ci_pct", json_object_get(reps, "ci_pct"), "widest",
                  json_object_get(reps, "widest"));
    if (rec != NULL && rule != NULL && strcmp(rule, "sequential") == 0) {
        /* The report's own count (hv_report_decided). */
        const json_t *counts = json_object_get(report, "decided");
        json_int_t all = json_integer_value(json_object_get(counts, "comparisons"));
        json_int_t open = json_integer_value(json_object_get(counts, "inconclusive"));
        json_object_set(rec, "comparisons", json_object_get(family, "comparisons"));
        json_object_set_new(rec, "decided", json_integer(all - open));
        json_object_set(rec, "look_level", json_object_get(family, "look_level"));
    }
    char said[16];
    snprintf(said, sizeof said, "%s", decision);
    /* No more rounds: the plan ends with this transaction, and when it
     * ends done, its recommendations are kept from this very report. */
    if (strcmp(said, "more") != 0)
        s = hv_db_recommendations_keep(db, plan, json_object_get(report, "recommendations"));
    json_decref(report);
    if (s != HV_DB_OK)
        return s;
    char *text = rec ? json_dumps(rec, JSON_COMPACT) : NULL;
    json_decref(rec);
    if (text == NULL)
        return HV_DB_ERROR;
    const char *p2[] = {plan, text};
    s = hv_db_exec(db, &record, p2, NULL);
    free(text);
    *more = strcmp(said, "more") == 0;
    if (s == HV_DB_OK || s == HV_DB_NONE)
        hv_info("plan %s: after %d round%s: %s", plan, round, round == 1 ? "" : "s",
                *more                          ? "not decided yet, one more round"
                : strcmp(said, "decided") == 0 ? "every comparison is decided"
                : strcmp(said, "precise") == 0 ? "every interval is within the width asked for"
                                               : "max rounds done");
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
    snprintf(seed, sizeof seed, "%s", PQgetvalue(r, 0, 7));
    int round = atoi(PQgetvalue(r, 0, 1)), latest = atoi(PQgetvalue(r, 0, 2));
    bool open = PQgetvalue(r, 0, 3)[0] == 't', cancelled = PQgetvalue(r, 0, 4)[0] == 't';
    int rmin = atoi(PQgetvalue(r, 0, 5)), rmax = atoi(PQgetvalue(r, 0, 6));
    bool randomized = PQgetvalue(r, 0, 8)[0] == 't';
    PQclear(r);
    if (open || cancelled || round != latest || rmin < 1 || rmax < rmin)
        return HV_DB_OK;
    bool more = false;
    s = decide(db, plan, round, rmax, &more);
    if (s != HV_DB_OK || !more)
        return s;
    char next[16];
    snprintf(next, sizeof next, "%d", round + 1);
    const char *pn[] = {plan, next, seed, randomized ? "t" : "f"};
    s = hv_db_exec(db, &next_round, pn, NULL);
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
