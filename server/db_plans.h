/* db_plans.h — plans, their configurations and jobs. */
#ifndef HV_SERVER_DB_PLANS_H
#define HV_SERVER_DB_PLANS_H

#include "db.h"
#include "plan.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/** Stores plan, its configurations and its n expanded jobs in one
 *  transaction; *id is the new plan's id. */
enum hv_db_status hv_db_plan_create(const struct hv_plan *plan, const struct hv_job_spec *jobs,
                                    size_t n, int64_t *id);

/** The summary of plan id as a new JSON object in *out (see docs/api.md);
 *  with_spec adds the normalised plan under "plan". HV_DB_NONE when there
 *  is no such plan. */
enum hv_db_status hv_db_plan_get(int64_t id, bool with_spec, json_t **out);

/** The newest limit plans, newest first, as a new JSON array in *out. */
enum hv_db_status hv_db_plan_list(int limit, json_t **out);

/** Per configuration, workload, target and metric of plan id: n, mean and
 *  sd over its done jobs, as a new JSON array of row objects in *out. */
enum hv_db_status hv_db_plan_metrics(int64_t id, json_t **out);

#endif
