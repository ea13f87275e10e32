/* db_compare.h — one side of a comparison: a configuration of a plan
 * with its metrics' moments (GET /api/v1/compare). */
#ifndef HV_SERVER_DB_COMPARE_H
#define HV_SERVER_DB_COMPARE_H

#include "db.h"

#include <jansson.h>
#include <stdint.h>

/** Reads configuration (NULL: the plan's default, its first) of plan_id as
 *  a new JSON object in *out: {"plan_id", "plan_name", "margin_pct" (the
 *  plan's, or null), "configurations" (every name, in order),
 *  "configuration" (the one found, null when the plan has none of that
 *  name), "levels" (its factor levels, {"FACTOR": "LEVEL"}), "facts"
 *  ({"host": FACTS, "guest": FACTS}: the facts the workers last reported
 *  of the plan's targets, the first by name of each kind), "rows": per workload id and params,
 * target and metric of its done jobs (the server side of net workloads left out), ordered so,
 *  {"workload", "params", "target", "target_kind" ("host" or "guest": the
 *  target's kind; "guest" for a group's "N guests"), "metric", "unit", "higher_is_better",
 *  "kind", "engine" (the workload's), "n", "mean", "sd", "log_mean", "log_sd", "n_nonpos",
 * "excluded"} with the moments of its rounds' values (hv_round_values, migrations/042: n counts
 * rounds) and of the logarithms of the positive ones (lib/stats.h, hv_moments_set)}. HV_DB_NONE: no
 * such plan. */
enum hv_db_status hv_db_compare_side(int64_t plan_id, const char *configuration, json_t **out);

/** The latest done plan of the target named target (the one that ended
 *  last among the done plans with a job on it) in *plan_id, 0 when it has
 *  none. HV_DB_NONE: no such target. */
enum hv_db_status hv_db_compare_target_plan(const char *target, int64_t *plan_id);

#endif
