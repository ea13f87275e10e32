/* db_compare.c — see db_compare.h. */
#include "db_compare.h"

#include "db_values.h"

/* The configuration $2 of the plan (its first when NULL). */
#define CONFIG_MATCH "CASE WHEN $2::text IS NULL THEN c.idx = 0 ELSE c.name = $2::text END"

/* Per workload id and params (an imported workload's identity: two
 * imports of one tool share the id), target and metric of the
 * configuration's rounds (hv_round_values, migrations/042: one value per
 * round, a group's members one), the moments of the values
 * HV_SQL_METRIC_OK keeps and the count of the others (a value stored
 * before the doors checked it must not overflow a sum of squares), and
 * the positive kept values by round ({"1": v, ...}: a comparison of two
 * configurations of one plan pairs them, as the plan's report does). */
#define SIDE_ROWS                                                                                  \
    "WITH wps AS (SELECT DISTINCT ON (workload_id) workload_id AS wid, "                           \
    " coalesce(workload->'params', '{}') AS wp FROM jobs WHERE plan_id = $1 "                      \
    " ORDER BY workload_id, id), "                                                                 \
    "v AS (SELECT m.workload_id AS wid, wps.wp, m.target AS tn, m.metric, m.unit, "                \
    " m.higher_is_better AS hib, m.kind, m.engine, m.value, m.round, " HV_SQL_METRIC_OK " AS ok "  \
    " FROM (SELECT rv.*, rv.metric AS name FROM hv_round_values($1) rv) m "                        \
    " JOIN wps ON wps.wid = m.workload_id "                                                        \
    " JOIN configurations c ON c.plan_id = $1 AND c.idx = m.config_idx "                           \
    " WHERE " CONFIG_MATCH "), "                                                                   \
    "x AS (SELECT wid, wp, tn, metric, min(unit) AS unit, bool_and(hib) AS hib, "                  \
    " min(kind) AS kind, min(engine) AS engine, "                                                  \
    " count(*) FILTER (WHERE ok) AS n, avg(value) FILTER (WHERE ok) AS mean, "                     \
    " stddev_samp(value) FILTER (WHERE ok) AS sd, "                                                \
    " avg(ln(value)) FILTER (WHERE ok AND value > 0) AS lm, "                                      \
    " stddev_samp(ln(value)) FILTER (WHERE ok AND value > 0) AS ls, "                              \
    " count(*) FILTER (WHERE ok AND value <= 0) AS np, count(*) FILTER (WHERE NOT ok) AS ex, "     \
    " json_object_agg(round, value) FILTER (WHERE ok AND value > 0) AS rv "                        \
    " FROM v GROUP BY 1, 2, 3, 4) "

static const struct hv_stmt side = {
    "compare_side",
    SIDE_ROWS
    "SELECT json_build_object('plan_id', p.id, 'plan_name', p.name, 'margin_pct', "
    "CASE WHEN jsonb_typeof(p.spec->'margin_pct') = 'number' THEN p.spec->'margin_pct' END, "
    "'configurations', (SELECT coalesce(json_agg(c.name ORDER BY c.idx), '[]') "
    " FROM configurations c WHERE c.plan_id = p.id), "
    "'configuration', (SELECT c.name FROM configurations c WHERE c.plan_id = p.id "
    " AND " CONFIG_MATCH " ORDER BY c.idx LIMIT 1), "
    "'levels', (SELECT c.levels FROM configurations c WHERE c.plan_id = p.id "
    " AND " CONFIG_MATCH " ORDER BY c.idx LIMIT 1), "
    "'facts', (SELECT coalesce(json_object_agg(f.kind, f.facts), '{}') FROM "
    " (SELECT DISTINCT ON (t.kind) t.kind, t.facts FROM targets t WHERE t.name IN "
    " (SELECT j.target_name FROM jobs j WHERE j.plan_id = p.id) ORDER BY t.kind, t.name) f), "
    "'excluded', (SELECT coalesce(sum(x.ex), 0) FROM x), "
    "'rows', (SELECT coalesce(json_agg(json_build_object('workload', x.wid, 'params', x.wp, "
    " 'target', x.tn, "
    " 'target_kind', coalesce((SELECT t.kind FROM targets t WHERE t.name = x.tn), 'guest'), "
    " 'metric', x.metric, 'unit', x.unit, 'higher_is_better', x.hib, 'kind', x.kind, "
    " 'engine', x.engine, 'n', x.n, 'mean', x.mean, "
    " 'sd', x.sd, 'log_mean', x.lm, 'log_sd', x.ls, 'n_nonpos', x.np, 'excluded', x.ex, "
    " 'plan_id', $1::bigint, 'rounds', x.rv) "
    " ORDER BY x.wid, x.metric, x.tn, x.wp::text), '[]') FROM x))::text "
    "FROM plans p WHERE p.id = $1",
    2};

enum hv_db_status hv_db_compare_side(int64_t plan_id, const char *configuration, json_t **out)
{
    char pid[24];
    const char *p[] = {hv_db_int(pid, sizeof pid, plan_id), configuration};
    return hv_db_json(&side, p, out, NULL);
}

/* The target's latest done plan: the one that ended last among the done
 * plans with a job on it. */
static const struct hv_stmt target_plan = {
    "compare_target_plan",
    "SELECT json_build_object('plan_id', (SELECT p.id FROM plans p WHERE p.state = 'done' "
    " AND EXISTS (SELECT 1 FROM jobs j WHERE j.plan_id = p.id AND j.target_name = t.name) "
    " ORDER BY p.ended_at DESC NULLS LAST, p.id DESC LIMIT 1))::text "
    "FROM targets t WHERE t.name = $1",
    1};

enum hv_db_status hv_db_compare_target_plan(const char *target, int64_t *plan_id)
{
    const char *p[] = {target};
    json_t *o = NULL;
    enum hv_db_status s = hv_db_json(&target_plan, p, &o, NULL);
    *plan_id = s == HV_DB_OK ? (int64_t)json_integer_value(json_object_get(o, "plan_id")) : 0;
    json_decref(o);
    return s;
}
