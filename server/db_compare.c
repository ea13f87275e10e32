/* db_compare.c — see db_compare.h. */
#include "db_compare.h"

/* The configuration $2 of the plan (its first when NULL). */
#define CONFIG_MATCH "CASE WHEN $2::text IS NULL THEN c.idx = 0 ELSE c.name = $2::text END"

/* A side: the plan, its configurations, the one named, and per workload,
 * target and metric the moments of its rounds' values (hv_round_values,
 * migrations/042: one value per round, a group's members one). */
static const struct hv_stmt side = {
    "compare_side",
    "SELECT json_build_object('plan_id', p.id, 'plan_name', p.name, 'margin_pct', "
    "CASE WHEN jsonb_typeof(p.spec->'margin_pct') = 'number' THEN p.spec->'margin_pct' END, "
    "'configurations', (SELECT coalesce(json_agg(c.name ORDER BY c.idx), '[]') "
    " FROM configurations c WHERE c.plan_id = p.id), "
    "'configuration', (SELECT c.name FROM configurations c WHERE c.plan_id = p.id "
    " AND " CONFIG_MATCH " ORDER BY c.idx LIMIT 1), "
    "'rows', (SELECT coalesce(json_agg(json_build_object('workload', x.wid, 'target', x.tn, "
    " 'metric', x.metric, 'unit', x.unit, 'higher_is_better', x.hib, 'n', x.n, 'mean', x.mean, "
    " 'sd', x.sd, 'log_mean', x.lm, 'log_sd', x.ls, 'n_nonpos', x.np) "
    " ORDER BY x.wid, x.metric, x.tn), '[]') FROM ("
    "  SELECT v.workload_id AS wid, v.target AS tn, v.metric, min(v.unit) AS unit, "
    "  bool_and(v.higher_is_better) AS hib, count(*) AS n, avg(v.value) AS mean, "
    "  stddev_samp(v.value) AS sd, avg(ln(CASE WHEN v.value > 0 THEN v.value END)) AS lm, "
    "  stddev_samp(ln(CASE WHEN v.value > 0 THEN v.value END)) AS ls, "
    "  count(*) FILTER (WHERE v.value <= 0) AS np "
    "  FROM hv_round_values(p.id) v JOIN configurations c ON c.plan_id = p.id "
    "  AND c.idx = v.config_idx WHERE " CONFIG_MATCH " GROUP BY 1, 2, 3) x))::text "
    "FROM plans p WHERE p.id = $1",
    2};

enum hv_db_status hv_db_compare_side(int64_t plan_id, const char *configuration, json_t **out)
{
    char pid[24];
    const char *p[] = {hv_db_int(pid, sizeof pid, plan_id), configuration};
    return hv_db_json(&side, p, out, NULL);
}
