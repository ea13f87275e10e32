/* db_plan_create.c — storing a plan (db_plans.h): its row, configurations,
 * groups and jobs in one transaction, with its steps and drain hooks; a
 * fleet plan's parent and children; replays of an idempotency key. */
#include "db_plans.h"

#include "db_hooks.h"
#include "db_steps.h"

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

static const struct hv_stmt set_fleet = {
    "plan_set_fleet", "UPDATE plans SET parent_id = $2, max_parallel_hosts = $3 WHERE id = $1", 3};

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
