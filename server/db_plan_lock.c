/* db_plan_lock.c — a plan's lock (db_plans.h): hv_plan_lock,
 * migrations/045, taken before any row lock of the plan by whoever changes
 * its state or decides from it. */
#include "db_plans.h"

static const struct hv_stmt plan_lock = {"plan_lock_take", "SELECT hv_plan_lock($1::bigint)", 1};

enum hv_db_status hv_db_plan_lock(struct hv_db *db, const char *id)
{
    const char *p[] = {id};
    enum hv_db_status s = hv_db_exec(db, &plan_lock, p, NULL);
    return s == HV_DB_NONE ? HV_DB_OK : s;
}
