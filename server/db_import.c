/* db_import.c — see db_import.h. */
#include "db_import.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ISO_UTC(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"

static const struct hv_stmt find_import = {
    "import_find",
    "SELECT plan_id FROM imports WHERE target_name = $1 AND tool = $2 AND output_sha256 = $3", 3};
/* The target's id, and whether this statement created it. A target a
 * concurrent import is creating is neither inserted nor visible here: no
 * row, and the transaction is run again. */
static const struct hv_stmt ensure_target = {
    "import_target",
    "WITH ins AS (INSERT INTO targets (name, kind) VALUES ($1, 'host') "
    "ON CONFLICT (name) DO NOTHING RETURNING id) "
    "SELECT id, true FROM ins UNION ALL SELECT id, false FROM targets WHERE name = $1",
    1};
static const struct hv_stmt insert_plan = {
    "import_plan",
    "INSERT INTO plans (name, spec, seed, token_id) VALUES ($1, $2::jsonb, 0, $3) RETURNING id", 3};
static const struct hv_stmt insert_configs = {
    "import_configs",
    "INSERT INTO configurations (plan_id, idx, name, levels) "
    "SELECT $1, u.i - 1, u.c->>'name', u.c->'levels' "
    "FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS u(c, i) RETURNING id, idx",
    2};
static const struct hv_stmt insert_job = {
    "import_job",
    "INSERT INTO jobs (plan_id, config_id, workload_id, workload, target_name, target_id, "
    "repetition, run_order, status, attempt, claimed_at, finished_at) "
    "VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7::int, $11::int, 'done', 1, "
    "$8::timestamptz + make_interval(secs => $10::float8), "
    "$8::timestamptz + make_interval(secs => $10::float8 + $9::float8)) RETURNING id",
    11};
static const struct hv_stmt insert_result = {
    "import_result",
    "INSERT INTO results (job_id, attempt, status, started_at, finished_at, observed, raw) "
    "VALUES ($1, 1, 'ok', $2::timestamptz + make_interval(secs => $6::float8), "
    "$2::timestamptz + make_interval(secs => $6::float8 + $3::float8), "
    "$4::jsonb, $5) RETURNING id, " ISO_UTC("started_at") ", " ISO_UTC("finished_at"),
    6};
static const struct hv_stmt insert_metrics = {
    "import_metrics",
    "INSERT INTO metrics (result_id, name, value, unit, higher_is_better) "
    "SELECT $1, m.name, m.value, coalesce(m.unit, ''), coalesce(m.higher_is_better, true) "
    "FROM jsonb_to_recordset($2::jsonb) AS m(name text, value float8, unit text, "
    "higher_is_better boolean)",
    2};
/* The per-second samples some outputs carry (fio --steadystate, iperf3
 * intervals, iperf -i, sysbench --report-interval). An import is at most
 * one request body, so one statement is enough; uploads use COPY. */
static const struct hv_stmt insert_samples = {
    "import_samples",
    "INSERT INTO samples (result_id, metric, t, value) "
    "SELECT $1, s.metric, s.t, s.value FROM jsonb_to_recordset($2::jsonb) "
    "AS s(metric text, t float8, value float8)",
    2};
static const struct hv_stmt insert_import = {
    "import_insert",
    "INSERT INTO imports (plan_id, tool, target_name, output_sha256, token_id) "
    "VALUES ($1, $2, $3, $4, $5)",
    5};

struct store_args {
    const struct hv_import *im;
    struct hv_import_receipt *out;
};

/* Runs st and reads the first cell of its one row as an integer. */
static enum hv_db_status exec_id(struct hv_db *db, const struct hv_stmt *st,
                                 const char *const *params, int64_t *id, PGresult **keep)
{
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, st, params, &r);
    if (s == HV_DB_OK)
        *id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    if (s == HV_DB_OK && keep != NULL)
        *keep = r;
    else
        PQclear(r);
    return hv_db_must(s);
}

/* One run: its job, its result, its metrics and samples. config_ids
 * holds the configurations' ids by index. */
static enum hv_db_status store_run(struct hv_db *db, const struct hv_import *im, const char *plan,
                                   const int64_t *config_ids, const char *target_id, size_t i,
                                   json_t *receipt)
{
    const json_t *entry = json_array_get(im->runs, i);
    const json_t *run = json_object_get(entry, "run");
    const json_t *wl = json_object_get(entry, "workload");
    const char *at = json_string_value(json_object_get(entry, "at"));
    const char *raw = im->outputs[json_integer_value(json_object_get(entry, "output"))];
    char rep[24], secs[32], job[24], result[24], after[32], config[24], order[24];
    hv_db_int(rep, sizeof rep, json_integer_value(json_object_get(entry, "repetition")));
    hv_db_int(order, sizeof order, (long long)i);
    hv_db_int(config, sizeof config,
              config_ids[json_integer_value(json_object_get(entry, "config"))]);
    snprintf(secs, sizeof secs, "%.3f", json_number_value(json_object_get(entry, "seconds")));
    snprintf(after, sizeof after, "%.3f", json_number_value(json_object_get(entry, "after_s")));
    char *workload = json_dumps(wl, JSON_COMPACT);
    const char *wid = json_string_value(json_object_get(wl, "id"));
    const char *pj[] = {plan, config, wid,  workload, im->target, target_id,
                        rep,  at,     secs, after,    order};
    int64_t job_id = 0, result_id = 0;
    enum hv_db_status s = workload ? exec_id(db, &insert_job, pj, &job_id, NULL) : HV_DB_ERROR;
    free(workload);
    if (s != HV_DB_OK)
        return s;
    char *observed = json_dumps(json_object_get(run, "info"), JSON_COMPACT);
    const char *pr[] = {hv_db_int(job, sizeof job, job_id), at, secs, observed, raw, after};
    PGresult *r = NULL;
    s = observed ? exec_id(db, &insert_result, pr, &result_id, &r) : HV_DB_ERROR;
    free(observed);
    if (s != HV_DB_OK)
        return s;
    json_array_append_new(receipt,
                          json_pack("{s:I,s:I,s:s,s:s}", "job_id", (json_int_t)job_id, "result_id",
                                    (json_int_t)result_id, "started_at", PQgetvalue(r, 0, 1),
                                    "finished_at", PQgetvalue(r, 0, 2)));
    PQclear(r);
    char *metrics = json_dumps(json_object_get(run, "metrics"), JSON_COMPACT);
    const char *pm[] = {hv_db_int(result, sizeof result, result_id), metrics};
    s = metrics ? hv_db_exec(db, &insert_metrics, pm, NULL) : HV_DB_ERROR;
    free(metrics);
    if (s != HV_DB_OK && s != HV_DB_NONE)
        return s;
    const json_t *samples = json_object_get(run, "samples");
    if (json_array_size(samples) == 0)
        return HV_DB_OK;
    char *text = json_dumps(samples, JSON_COMPACT);
    const char *ps[] = {result, text};
    s = text ? hv_db_exec(db, &insert_samples, ps, NULL) : HV_DB_ERROR;
    free(text);
    return s == HV_DB_NONE ? HV_DB_OK : s;
}

/* The plan's configurations; config_ids[idx] gets each one's id. */
static enum hv_db_status store_configs(struct hv_db *db, const struct hv_import *im,
                                       const char *plan, int64_t *config_ids)
{
    char *configs = json_dumps(im->configs, JSON_COMPACT);
    if (configs == NULL)
        return HV_DB_ERROR;
    const char *pc[] = {plan, configs};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &insert_configs, pc, &r);
    free(configs);
    size_t n = json_array_size(im->configs);
    if (s == HV_DB_OK && (size_t)PQntuples(r) != n)
        s = HV_DB_ERROR;
    for (int i = 0; s == HV_DB_OK && i < PQntuples(r); i++) {
        long idx = strtol(PQgetvalue(r, i, 1), NULL, 10);
        if (idx < 0 || (size_t)idx >= n)
            s = HV_DB_ERROR;
        else
            config_ids[idx] = strtoll(PQgetvalue(r, i, 0), NULL, 10);
    }
    PQclear(r);
    return hv_db_must(s);
}

static enum hv_db_status store_txn(struct hv_db *db, void *arg)
{
    struct store_args *a = arg;
    const struct hv_import *im = a->im;
    struct hv_import_receipt *out = a->out;
    /* The runner may call this again: start from nothing each time. */
    json_decref(out->runs);
    out->runs = json_array();
    out->plan_id = out->existing_plan_id = 0;
    out->target_created = false;

    const char *pf[] = {im->target, im->tool, im->output_sha256};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &find_import, pf, &r);
    if (s == HV_DB_OK)
        out->existing_plan_id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    if (s != HV_DB_NONE)
        return s == HV_DB_OK ? HV_DB_CONFLICT : s;

    const char *pt[] = {im->target};
    s = hv_db_exec(db, &ensure_target, pt, &r);
    if (s == HV_DB_NONE) {
        PQclear(r);
        return HV_DB_RETRY;
    }
    if (s != HV_DB_OK) {
        PQclear(r);
        return s;
    }
    char target_id[24];
    snprintf(target_id, sizeof target_id, "%s", PQgetvalue(r, 0, 0));
    out->target_created = PQgetvalue(r, 0, 1)[0] == 't';
    PQclear(r);

    char tok[24], plan[24];
    char *spec = json_dumps(im->spec, JSON_COMPACT);
    const char *pp[] = {im->plan_name, spec,
                        im->token_id > 0 ? hv_db_int(tok, sizeof tok, im->token_id) : NULL};
    s = spec ? exec_id(db, &insert_plan, pp, &out->plan_id, NULL) : HV_DB_ERROR;
    free(spec);
    if (s != HV_DB_OK)
        return s;
    hv_db_int(plan, sizeof plan, out->plan_id);
    int64_t *config_ids = calloc(json_array_size(im->configs) + 1, sizeof *config_ids);
    s = config_ids != NULL ? store_configs(db, im, plan, config_ids) : HV_DB_ERROR;
    for (size_t i = 0; s == HV_DB_OK && i < json_array_size(im->runs); i++)
        s = store_run(db, im, plan, config_ids, target_id, i, out->runs);
    free(config_ids);
    if (s != HV_DB_OK)
        return s;
    const char *pi[] = {plan, im->tool, im->target, im->output_sha256, pp[2]};
    s = hv_db_exec(db, &insert_import, pi, NULL);
    return s == HV_DB_NONE ? HV_DB_OK : s;
}

enum hv_db_status hv_db_import_store(const struct hv_import *im, struct hv_import_receipt *out)
{
    memset(out, 0, sizeof *out);
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    struct store_args a = {im, out};
    enum hv_db_status s = hv_db_txn(db, store_txn, &a);
    if (s == HV_DB_CONFLICT && out->existing_plan_id == 0) {
        /* Two imports of one output raced; the other one committed first:
         * look again, to name its plan. */
        const char *pf[] = {im->target, im->tool, im->output_sha256};
        PGresult *r;
        if (hv_db_exec(db, &find_import, pf, &r) == HV_DB_OK)
            out->existing_plan_id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
        PQclear(r);
    }
    if (s != HV_DB_OK) {
        json_decref(out->runs);
        out->runs = NULL;
    }
    return s;
}
