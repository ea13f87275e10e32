/* db_plans.c — see db_plans.h. */
#include "db_plans.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct hv_stmt insert_plan = {
    "plan_insert", "INSERT INTO plans (name, spec, seed) VALUES ($1, $2::jsonb, $3) RETURNING id",
    3};
static const struct hv_stmt insert_configs = {
    "plan_insert_configs",
    "INSERT INTO configurations (plan_id, idx, name) "
    "SELECT $1, u.i - 1, u.n FROM unnest($2::text[]) WITH ORDINALITY AS u(n, i)",
    2};
/* The workload of each job is copied from the stored plan, so the job row
 * holds exactly what the worker will run. */
static const struct hv_stmt insert_jobs = {
    "plan_insert_jobs",
    "INSERT INTO jobs (plan_id, config_id, workload_id, workload, target_name, repetition, "
    "run_order) "
    "SELECT $1, c.id, p.spec->'workloads'->u.w->>'id', p.spec->'workloads'->u.w, $2, u.rep, u.ord "
    "FROM unnest($3::int[], $4::int[], $5::int[], $6::int[]) AS u(cfg, w, rep, ord) "
    "JOIN configurations c ON c.plan_id = $1 AND c.idx = u.cfg "
    "JOIN plans p ON p.id = $1",
    6};

#define SUMMARY_JSON                                                                               \
    "json_build_object('id', id, 'name', name, 'status', status, 'created_at', created_at, "       \
    "'updated_at', updated_at, 'seed', seed, 'jobs', json_build_object('total', total, "           \
    "'queued', queued, 'running', running, 'done', done, 'failed', failed, 'cancelled', "          \
    "cancelled_jobs), 'progress', CASE WHEN total = 0 THEN 0 ELSE round((done + failed + "         \
    "cancelled_jobs)::numeric / total, 4) END)"

static const struct hv_stmt get_plan = {
    "plan_get", "SELECT (" SUMMARY_JSON ")::text, spec::text FROM plan_summaries WHERE id = $1", 1};
static const struct hv_stmt list_plans = {
    "plan_list",
    "SELECT coalesce(json_agg(s.j ORDER BY s.created_at DESC, s.id DESC), '[]')::text FROM "
    "(SELECT " SUMMARY_JSON " AS j, created_at, id FROM plan_summaries "
    "ORDER BY created_at DESC, id DESC LIMIT $1) s",
    1};
static const struct hv_stmt plan_metrics = {
    "plan_metrics",
    "SELECT coalesce(json_agg(json_build_object('configuration', x.config, 'workload', "
    "x.workload_id, 'target', x.target_name, 'metric', x.metric, 'unit', x.unit, "
    "'higher_is_better', x.hib, 'n', x.n, 'mean', x.mean, 'sd', x.sd) "
    "ORDER BY x.config, x.workload_id, x.target_name, x.metric), '[]')::text FROM ("
    " SELECT c.name AS config, j.workload_id, j.target_name, m.name AS metric, "
    " min(m.unit) AS unit, bool_and(m.higher_is_better) AS hib, count(*) AS n, "
    " avg(m.value) AS mean, coalesce(stddev_samp(m.value), 0) AS sd "
    " FROM jobs j JOIN configurations c ON c.id = j.config_id "
    " JOIN results r ON r.job_id = j.id AND r.attempt = j.attempt AND r.status = 'ok' "
    " JOIN metrics m ON m.result_id = r.id "
    " WHERE j.plan_id = $1 AND j.status = 'done' "
    " GROUP BY c.name, j.workload_id, j.target_name, m.name) x",
    1};

/* Formats ints as a PostgreSQL array literal; caller frees. */
static char *int_array(const struct hv_job_spec *jobs, size_t n, size_t field)
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
                              : (long)jobs[i].run_order;
        k += (size_t)sprintf(out + k, i ? ",%ld" : "%ld", v);
    }
    out[k++] = '}';
    out[k] = '\0';
    return out;
}

struct create_args {
    const struct hv_plan *plan;
    const struct hv_job_spec *jobs;
    size_t n;
    int64_t id;
};

static enum hv_db_status create_txn(struct hv_db *db, void *arg)
{
    struct create_args *a = arg;
    char *spec = json_dumps(a->plan->doc, JSON_COMPACT);
    char seed[24], id[24];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)a->plan->seed);
    const char *p1[] = {a->plan->name, spec, seed};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &insert_plan, p1, &r);
    free(spec);
    if (s != HV_DB_OK)
        return s == HV_DB_NONE ? HV_DB_ERROR : s;
    a->id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    snprintf(id, sizeof id, "%lld", (long long)a->id);

    const char **names = calloc(a->plan->n_configs, sizeof *names);
    for (size_t i = 0; names && i < a->plan->n_configs; i++)
        names[i] = hv_plan_config_name(a->plan, i);
    char *config_arr = names ? hv_db_text_array(names, a->plan->n_configs) : NULL;
    free(names);
    const char *p2[] = {id, config_arr};
    s = config_arr ? hv_db_exec(db, &insert_configs, p2, NULL) : HV_DB_ERROR;
    free(config_arr);
    if (s != HV_DB_OK)
        return s == HV_DB_NONE ? HV_DB_ERROR : s;

    char *arr[4];
    for (size_t f = 0; f < 4; f++)
        arr[f] = int_array(a->jobs, a->n, f);
    const char *p3[] = {id, a->plan->host, arr[0], arr[1], arr[2], arr[3]};
    s = arr[0] && arr[1] && arr[2] && arr[3] ? hv_db_exec(db, &insert_jobs, p3, NULL) : HV_DB_ERROR;
    for (size_t f = 0; f < 4; f++)
        free(arr[f]);
    return s == HV_DB_NONE && a->n > 0 ? HV_DB_ERROR : s == HV_DB_NONE ? HV_DB_OK : s;
}

enum hv_db_status hv_db_plan_create(const struct hv_plan *plan, const struct hv_job_spec *jobs,
                                    size_t n, int64_t *id)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    struct create_args a = {plan, jobs, n, 0};
    enum hv_db_status s = hv_db_txn(db, create_txn, &a);
    *id = a.id;
    return s;
}

/* Runs a statement returning one JSON text cell and parses it. */
static enum hv_db_status json_cell(const struct hv_stmt *st, const char *const *params,
                                   json_t **out, json_t **second)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, st, params, &r);
    if (s == HV_DB_OK) {
        *out = json_loads(PQgetvalue(r, 0, 0), 0, NULL);
        if (second != NULL)
            *second = json_loads(PQgetvalue(r, 0, 1), 0, NULL);
        if (*out == NULL)
            s = HV_DB_ERROR;
    }
    PQclear(r);
    return s;
}

enum hv_db_status hv_db_plan_get(int64_t id, bool with_spec, json_t **out)
{
    char idtxt[24];
    snprintf(idtxt, sizeof idtxt, "%lld", (long long)id);
    const char *params[] = {idtxt};
    json_t *spec = NULL;
    enum hv_db_status s = json_cell(&get_plan, params, out, &spec);
    if (s == HV_DB_OK && with_spec)
        json_object_set_new(*out, "plan", spec);
    else
        json_decref(spec);
    return s;
}

enum hv_db_status hv_db_plan_list(int limit, json_t **out)
{
    char lim[16];
    snprintf(lim, sizeof lim, "%d", limit);
    const char *params[] = {lim};
    return json_cell(&list_plans, params, out, NULL);
}

enum hv_db_status hv_db_plan_metrics(int64_t id, json_t **out)
{
    char idtxt[24];
    snprintf(idtxt, sizeof idtxt, "%lld", (long long)id);
    const char *params[] = {idtxt};
    return json_cell(&plan_metrics, params, out, NULL);
}
