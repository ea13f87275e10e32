/* db_admin.c — see db_admin.h. */
#include "db_admin.h"
#include "db_hooks.h"
#include "db_plans.h"
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The plan locked, with whether it ended and still holds its host. */
static const struct hv_stmt plan_state = {
    "admin_plan_state",
    "SELECT s.status, p.holds_host, p.current_block IS NOT NULL FROM plans p "
    "JOIN plan_summaries s ON s.id = p.id WHERE p.id = $1 FOR NO KEY UPDATE OF p",
    1};

/* What a set of plans holds ($1: an array of plan ids). */
#define PLAN_SIZES                                                                                 \
    "WITH j AS (SELECT * FROM jobs WHERE plan_id = ANY ($1::bigint[])), "                          \
    "r AS (SELECT r.* FROM results r JOIN j ON j.id = r.job_id) "                                  \
    "SELECT json_build_object('plans', cardinality($1::bigint[]), 'jobs', (SELECT count(*) FROM "  \
    "j), 'results', (SELECT count(*) FROM r), 'samples', (SELECT count(*) FROM samples s JOIN r "  \
    "ON r.id = s.result_id), 'bytes', coalesce((SELECT sum(pg_column_size(j.*)) FROM j), 0) + "    \
    "coalesce((SELECT sum(pg_column_size(r.*)) FROM r), 0) + coalesce((SELECT "                    \
    "sum(pg_column_size(s.*)) FROM samples s JOIN r ON r.id = s.result_id), 0) + "                 \
    "coalesce((SELECT sum(pg_column_size(m.*)) FROM metrics m JOIN r ON r.id = m.result_id), 0) "  \
    "+ coalesce((SELECT sum(pg_column_size(t.*)) FROM telemetry t JOIN j ON j.id = t.job_id), "    \
    "0))::text"

static const struct hv_stmt plan_sizes = {"admin_plan_sizes", PLAN_SIZES, 1};

static const struct hv_stmt delete_plans = {"admin_delete_plans",
                                            "DELETE FROM plans WHERE id = ANY ($1::bigint[])", 1};

/* Plans that ended before $1 and hold no host, as an array literal. */
static const struct hv_stmt old_plans = {
    "admin_old_plans",
    "SELECT coalesce(array_agg(s.id ORDER BY s.id), '{}')::text FROM plan_summaries s "
    "JOIN plans p ON p.id = s.id WHERE s.created_at < $1::timestamptz "
    "AND s.status IN ('done', 'failed', 'cancelled') AND NOT p.holds_host "
    "AND p.current_block IS NULL",
    1};

/* Samples, telemetry and raw outputs of results that ended before $1,
 * outside the plans $2 (deleted whole). */
static const struct hv_stmt data_sizes = {
    "admin_data_sizes",
    "WITH r AS (SELECT r.id, r.job_id, r.raw FROM results r JOIN jobs j ON j.id = r.job_id "
    " WHERE coalesce(r.finished_at, r.received_at) < $1::timestamptz "
    " AND NOT (j.plan_id = ANY ($2::bigint[]))) "
    "SELECT (SELECT count(*) FROM samples s JOIN r ON r.id = s.result_id), "
    "(SELECT coalesce(sum(pg_column_size(s.*)), 0) FROM samples s JOIN r ON r.id = s.result_id), "
    "(SELECT count(*) FROM telemetry t WHERE t.received_at < $1::timestamptz "
    " AND t.samples <> '[]'::jsonb AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = t.job_id "
    " AND j.plan_id = ANY ($2::bigint[]))), "
    "(SELECT coalesce(sum(pg_column_size(t.samples)), 0) FROM telemetry t WHERE t.received_at < "
    " $1::timestamptz AND t.samples <> '[]'::jsonb AND NOT EXISTS (SELECT 1 FROM jobs j WHERE "
    " j.id = t.job_id AND j.plan_id = ANY ($2::bigint[]))), "
    "(SELECT count(*) FROM r WHERE r.raw IS NOT NULL), "
    "(SELECT coalesce(sum(pg_column_size(r.raw)), 0) FROM r WHERE r.raw IS NOT NULL)",
    2};

static const struct hv_stmt purge_samples = {
    "admin_purge_samples",
    "WITH r AS (SELECT r.id FROM results r WHERE coalesce(r.finished_at, r.received_at) < "
    " $1::timestamptz), "
    "t AS (UPDATE telemetry SET samples = '[]'::jsonb WHERE received_at < $1::timestamptz "
    " AND samples <> '[]'::jsonb) "
    "DELETE FROM samples s USING r WHERE s.result_id = r.id",
    1};

static const struct hv_stmt purge_raw = {"admin_purge_raw",
                                         "UPDATE results SET raw = NULL WHERE raw IS NOT NULL "
                                         "AND coalesce(finished_at, received_at) < $1::timestamptz",
                                         1};

static const struct hv_stmt retry = {
    "admin_plan_retry",
    "UPDATE jobs SET status = 'queued', failures = 0, error = NULL, "
    "lease_until = NULL WHERE plan_id = $1 AND status = 'failed'",
    1};

static const struct hv_stmt wake = {"admin_wake", "SELECT pg_notify('hv_jobs', '')", 0};

struct delete_args {
    const char *id;
    json_t *out;
};

/* The plan's status, or NONE / CONFLICT (not ended, host held). */
static enum hv_db_status lock_ended(struct hv_db *db, const char *id, char *status, size_t len)
{
    const char *p[] = {id};
    PGresult *r = NULL;
    enum hv_db_status s = hv_db_plan_lock(db, id);
    if (s == HV_DB_OK)
        s = hv_db_exec(db, &plan_state, p, &r);
    if (s != HV_DB_OK) {
        PQclear(r);
        return s;
    }
    snprintf(status, len, "%s", PQgetvalue(r, 0, 0));
    bool held = PQgetvalue(r, 0, 1)[0] == 't' || PQgetvalue(r, 0, 2)[0] == 't';
    PQclear(r);
    if (strcmp(status, "queued") == 0 || strcmp(status, "running") == 0 || held)
        return HV_DB_CONFLICT;
    return HV_DB_OK;
}

static enum hv_db_status delete_txn(struct hv_db *db, void *arg)
{
    struct delete_args *a = arg;
    json_decref(a->out);
    a->out = NULL;
    char status[32];
    enum hv_db_status s = lock_ended(db, a->id, status, sizeof status);
    if (s != HV_DB_OK)
        return s;
    char ids[48];
    snprintf(ids, sizeof ids, "{%s}", a->id);
    const char *p[] = {ids};
    s = hv_db_json_in(db, &plan_sizes, p, &a->out);
    if (s == HV_DB_OK)
        s = hv_db_exec(db, &delete_plans, p, NULL);
    return s == HV_DB_NONE ? HV_DB_OK : s;
}

enum hv_db_status hv_db_plan_delete(int64_t id, json_t **out)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char buf[24];
    struct delete_args a = {hv_db_int(buf, sizeof buf, id), NULL};
    enum hv_db_status s = hv_db_txn(db, delete_txn, &a);
    if (s != HV_DB_OK) {
        json_decref(a.out);
        return s;
    }
    json_object_del(a.out, "plans");
    json_object_set_new(a.out, "plan", json_integer(id));
    *out = a.out;
    return HV_DB_OK;
}

struct purge_args {
    const struct hv_purge *p;
    json_t *out;
};

static long long cell(PGresult *r, int col)
{
    return strtoll(PQgetvalue(r, 0, col), NULL, 10);
}

static enum hv_db_status purge_txn(struct hv_db *db, void *arg)
{
    struct purge_args *a = arg;
    const struct hv_purge *p = a->p;
    json_decref(a->out);
    a->out = json_object();
    if (a->out == NULL)
        return HV_DB_ERROR;
    PGresult *r;
    char *plans = strdup("{}");
    const char *p1[] = {p->before};
    enum hv_db_status s = plans != NULL ? HV_DB_OK : HV_DB_ERROR;
    if (s == HV_DB_OK && p->plans) {
        s = hv_db_exec(db, &old_plans, p1, &r);
        if (s == HV_DB_OK) {
            free(plans);
            plans = strdup(PQgetvalue(r, 0, 0));
            s = plans != NULL ? HV_DB_OK : HV_DB_ERROR;
        }
        PQclear(r);
    }
    long long bytes = 0;
    if (s == HV_DB_OK) {
        const char *pp[] = {plans};
        json_t *sizes;
        s = hv_db_json_in(db, &plan_sizes, pp, &sizes);
        if (sizes != NULL) {
            json_object_set(a->out, "plans", json_object_get(sizes, "plans"));
            json_object_set(a->out, "results", json_object_get(sizes, "results"));
            bytes += json_integer_value(json_object_get(sizes, "bytes"));
            json_object_set(a->out, "plan_samples", json_object_get(sizes, "samples"));
            json_decref(sizes);
        }
    }
    if (s == HV_DB_OK) {
        const char *pd[] = {p->before, plans};
        s = hv_db_exec(db, &data_sizes, pd, &r);
        if (s == HV_DB_OK) {
            json_object_set_new(a->out, "samples", json_integer(p->samples ? cell(r, 0) : 0));
            json_object_set_new(a->out, "telemetry", json_integer(p->samples ? cell(r, 2) : 0));
            json_object_set_new(a->out, "raw_outputs", json_integer(p->raw ? cell(r, 4) : 0));
            bytes += (p->samples ? cell(r, 1) + cell(r, 3) : 0) + (p->raw ? cell(r, 5) : 0);
        }
        PQclear(r);
    }
    json_object_set_new(a->out, "bytes", json_integer(bytes));
    if (s == HV_DB_OK && !p->dry_run) {
        const char *pp[] = {plans};
        if (p->plans)
            s = hv_db_exec(db, &delete_plans, pp, NULL);
        if ((s == HV_DB_OK || s == HV_DB_NONE) && p->samples)
            s = hv_db_exec(db, &purge_samples, p1, NULL);
        if ((s == HV_DB_OK || s == HV_DB_NONE) && p->raw)
            s = hv_db_exec(db, &purge_raw, p1, NULL);
    }
    free(plans);
    return s == HV_DB_NONE ? HV_DB_OK : s;
}

enum hv_db_status hv_db_purge(const struct hv_purge *p, json_t **out)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    struct purge_args a = {p, NULL};
    enum hv_db_status s = hv_db_txn(db, purge_txn, &a);
    if (s != HV_DB_OK) {
        json_decref(a.out);
        return s;
    }
    *out = a.out;
    return HV_DB_OK;
}

struct retry_args {
    const char *id;
    long n;
};

static enum hv_db_status retry_txn(struct hv_db *db, void *arg)
{
    struct retry_args *a = arg;
    char status[32];
    enum hv_db_status s = lock_ended(db, a->id, status, sizeof status);
    if (s != HV_DB_OK)
        return s;
    if (strcmp(status, "failed") != 0)
        return HV_DB_CONFLICT;
    const char *p[] = {a->id};
    PGresult *r;
    /* A tuning plan's jobs run in blocks after its host's apply steps;
     * those ran, and its host was restored. */
    static const struct hv_stmt blocks = {
        "admin_plan_blocks", "SELECT 1 FROM jobs WHERE plan_id = $1 AND block IS NOT NULL LIMIT 1",
        1};
    s = hv_db_exec(db, &blocks, p, NULL);
    if (s == HV_DB_OK)
        return HV_DB_CONFLICT;
    if (s != HV_DB_NONE)
        return s;
    /* Its drain hooks run again around the retried jobs, once its
     * after_host ended. */
    s = hv_db_hooks_rearm(db, a->id);
    if (s != HV_DB_OK)
        return s;
    s = hv_db_exec(db, &retry, p, &r);
    a->n = s == HV_DB_OK ? atol(PQcmdTuples(r)) : 0;
    PQclear(r);
    if (s == HV_DB_OK)
        s = hv_db_exec(db, &wake, NULL, NULL);
    return s == HV_DB_NONE ? HV_DB_OK : s;
}

enum hv_db_status hv_db_plan_retry(int64_t id, long *retried)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char buf[24];
    struct retry_args a = {hv_db_int(buf, sizeof buf, id), 0};
    enum hv_db_status s = hv_db_txn(db, retry_txn, &a);
    *retried = a.n;
    return s;
}

static const struct hv_stmt export_plan = {
    "admin_plan_export",
    "SELECT s.status IN ('done', 'failed', 'cancelled'), hv_plan_export(s.id)::text "
    "FROM plan_summaries s WHERE s.id = $1",
    1};

static const struct hv_stmt import_plan = {
    "admin_plan_import", "SELECT pid, created FROM hv_plan_import_once($1::jsonb, $2::bigint, $3)",
    3};

enum hv_db_status hv_db_plan_export(int64_t id, char **out)
{
    *out = NULL;
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char buf[24];
    const char *p[] = {hv_db_int(buf, sizeof buf, id)};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &export_plan, p, &r);
    if (s == HV_DB_OK && PQgetvalue(r, 0, 0)[0] != 't')
        s = HV_DB_CONFLICT;
    if (s == HV_DB_OK) {
        *out = strdup(PQgetvalue(r, 0, 1));
        s = *out != NULL ? HV_DB_OK : HV_DB_ERROR;
    }
    PQclear(r);
    return s;
}

enum hv_db_status hv_db_plan_import(const char *doc, int64_t token_id, const char *digest,
                                    int64_t *id, bool *created)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char tok[24];
    const char *p[] = {doc, hv_db_int(tok, sizeof tok, token_id), digest};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &import_plan, p, &r);
    if (s == HV_DB_OK) {
        *id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
        *created = PQgetvalue(r, 0, 1)[0] == 't';
    } else if (s == HV_DB_CONFLICT) {
        /* The handler checks every rule it knows of first: a constraint
         * met here is one it missed. */
        hv_warn("plan import: a constraint refused the document: %s", hv_db_last_error(db));
    }
    PQclear(r);
    return hv_db_must(s);
}
