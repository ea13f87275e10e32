/* db_admit.h — whether a plan's jobs and steps may be claimed now, as an
 * SQL condition the claims of db_job_claim.c, db_steps.c and db_hooks.c
 * share. */
#ifndef HV_SERVER_DB_ADMIT_H
#define HV_SERVER_DB_ADMIT_H

/** An SQL condition: whether the plan whose id the SQL expression plan
 *  gives may run now. A fleet plan's child may while fewer than its
 *  parent's max_parallel_hosts older siblings have queued or running jobs
 *  (migrations/022_fleet_plans.sql, hv_plan_admitted); any other plan
 *  always. Written out rather than calling hv_plan_admitted(): a claim
 *  evaluates it for each candidate row, and the SQL function was planned
 *  again on every call, where this is an anti-join of two primary-key
 *  lookups for a plan outside a fleet. */
#define HV_SQL_PLAN_ADMITTED(plan)                                                                 \
    "NOT EXISTS (SELECT 1 FROM plans adm_c JOIN plans adm_q ON adm_q.id = adm_c.parent_id WHERE "  \
    "adm_c.id = " plan " AND adm_q.max_parallel_hosts <= (SELECT count(*) FROM plans adm_s WHERE " \
    "adm_s.parent_id = adm_c.parent_id AND adm_s.id < adm_c.id AND NOT adm_s.cancelled AND "       \
    "EXISTS (SELECT 1 FROM plan_job_counts adm_k WHERE adm_k.plan_id = adm_s.id AND "              \
    "adm_k.queued + adm_k.running > 0)))"

#endif
