/* db_plan_cancel.c — cancelling a plan (db_plans.h): its open jobs and
 * steps, and a fleet plan's children with it, in one transaction. */
#include "db_plans.h"

#include "db_steps.h"

#include <stdlib.h>

static const struct hv_stmt lock_plan = {
    "plan_lock", "SELECT cancelled FROM plans WHERE id = $1 FOR NO KEY UPDATE", 1};
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
    "UPDATE jobs SET status = 'cancelled', lease_until = NULL, "
    "error = 'plan cancelled' WHERE plan_id = $1 AND status IN ('queued', 'running')",
    1};

/* A fleet plan's children, cancelled with it: their ids. */
static const struct hv_stmt cancel_children = {
    "plan_cancel_children",
    "WITH c AS (UPDATE plans SET cancelled = true, cancelled_at = now(), updated_at = now() "
    " WHERE parent_id = $1 AND NOT cancelled RETURNING id), "
    "j AS (UPDATE jobs SET status = 'cancelled', lease_until = NULL, "
    " error = 'plan cancelled' WHERE plan_id IN (SELECT id FROM c) "
    " AND status IN ('queued', 'running') RETURNING 1) "
    "SELECT id FROM c ORDER BY id",
    1};

static enum hv_db_status cancel_txn(struct hv_db *db, void *arg)
{
    const char *const *params = arg;
    PGresult *r = NULL;
    enum hv_db_status s = hv_db_plan_lock(db, params[0]);
    if (s == HV_DB_OK)
        s = hv_db_exec(db, &lock_plan, params, &r);
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
