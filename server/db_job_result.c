/* db_job_result.c — storing results (db_jobs.h): one upload (result,
 * metrics, samples by COPY, the job's end) or a batch of them in one
 * transaction, only by the attempt's claimer, replays answered as such;
 * a failed member's group and a round's end follow. */
#include "db_jobs.h"

#include "db_rounds.h"
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A member that failed for good takes the rest of its group with it: the
 * group can never run complete again. */
static const struct hv_stmt fail_group = {
    "group_fail_peers",
    "UPDATE jobs SET status = 'failed', lease_until = NULL, "
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
    "(SELECT c.worker_id FROM job_claims c WHERE c.job_id = $1 AND c.attempt = $2) = "
    "$3, " HV_SQL_NOISE_MAY_REPEAT("jobs") " FROM jobs WHERE id = $1 FOR UPDATE",
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
    "lease_until = NULL, error = " error ", "                                                      \
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
        "j") ", " HV_SQL_NOISE_MAY_REPEAT("j") " "
                                               "FROM unnest($1::bigint[], $2::int[], $3::bigint[]) "
                                               "WITH ORDINALITY AS e(job_id, "
                                               "attempt, "
                                               "worker_id, i) LEFT JOIN LATERAL (SELECT status, "
                                               "attempt, lapsed_attempt, group_id, "
                                               "plan_id, "
                                               "repetition, role FROM jobs WHERE id = e.job_id FOR "
                                               "UPDATE) j ON true ORDER BY e.i",
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
    bool may_repeat = PQgetvalue(r, 0, 5)[0] == 't';
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
    /* A noisy job done is set aside and repeated first, which keeps its
     * round open; the job that ends a round decides whether another round
     * follows (finish_job said whether it may). */
    if (s == HV_DB_OK && may_repeat && strcmp(u->status, "ok") == 0)
        s = hv_db_noise_repeat(db, id, NULL);
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
    bool more = false, decide[HV_CLAIM_MANY_MAX], repeat[HV_CLAIM_MANY_MAX];
    for (size_t i = 0; i < n && i < HV_CLAIM_MANY_MAX; i++) {
        if (lock_outcome(a->items[i], r, (int)i)) {
            bool ok = strcmp(a->items[i]->u.status, "ok") == 0;
            decide[nw] = PQgetvalue(r, (int)i, 5)[0] == 't';
            repeat[nw] = ok && PQgetvalue(r, (int)i, 6)[0] == 't';
            more = more || decide[nw] || repeat[nw] || !ok;
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
    /* Noisy jobs are set aside and repeated before any round is decided,
     * so a round that one of them keeps open is not decided ended. */
    for (size_t i = 0; s == HV_DB_OK && i < nw; i++) {
        if (repeat[i]) {
            char id[24];
            s = hv_db_noise_repeat(db, hv_db_int(id, sizeof id, w[i]->u.job_id), NULL);
        }
    }
    /* What store_txn does after a job's end: a failed member takes its
     * group with it; the job that ends a round decides the next. The
     * batch may end the last jobs of a round together: each then sees
     * the round ended, and the plan is decided once, after the first.
     * Without any of these, the transaction is committed already. */
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
