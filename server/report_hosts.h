/* report_hosts.h — a fleet plan's per-host view (lib/plan_fleet.h): for
 * each workload, metric and side (a host's bare metal, or its guests),
 * every host's centre with its interval against the fleet's median of that
 * side, and the outliers with the facts in which they differ
 * from the typical host. docs/api.md ("The per-host view") says what it
 * looks like, docs/statistics.md how it is computed. */
#ifndef HV_SERVER_REPORT_HOSTS_H
#define HV_SERVER_REPORT_HOSTS_H

#include "db.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/** The facts an outlier's differences are named in. */
#define HV_HOST_FACTS                                                                              \
    {                                                                                              \
        "kernel", "microcode", "bios", "thp", "cpu_model", "tuning"                                \
    }

/** Sets *parent to whether plan id is a fleet plan's parent (has child
 *  plans). */
enum hv_db_status hv_report_hosts_parent(int64_t id, bool *parent);

/** When plan id is a fleet plan's parent, adds "hosts" (the per-host view)
 *  to report; a plan without children is left as it is. HV_DB_ERROR also
 *  when memory runs out. */
enum hv_db_status hv_report_hosts_add(int64_t id, json_t *report);

/** The per-host view from its inputs, as a new JSON object: rows is an
 *  array of {"host", "where" ("host", the default, or "guests"),
 *  "workload", "metric", "unit", "higher_is_better", "kind", "engine",
 *  "values": [the side's per-round values]} ordered by workload, metric,
 *  where and host, of which only the engines' primary metrics count
 *  (every metric of a row without a known engine);
 *  hosts an array of {"host", "plan_id", "facts"}; margin_pct the
 *  outliers' margin (the plan's, else HV_MARGIN_PCT_DEFAULT). Pure: the unit tests call it. NULL
 * when memory runs out. */
json_t *hv_report_hosts_build(const json_t *rows, const json_t *hosts, double margin_pct);

#endif
