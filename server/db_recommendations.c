/* db_recommendations.c — see db_recommendations.h. */
#include "db_recommendations.h"

#include "db_targets.h"
#include "db_values.h"

#include <stdlib.h>

/* What the report says of a recommendation, kept as it says it: the best
 * gain's workload, metric and interval (the report's "gain_interval"),
 * the whole object besides. The plan's state is the one definition's
 * (hv_plan_state_due): rows are kept only when its jobs end it done. */
static const struct hv_stmt keep = {
    "recommendations_keep",
    "INSERT INTO recommendations (plan_id, factor, level, default_level, scope, workload, "
    " metric, gain_pct, gain_lo_pct, gain_hi_pct, risk_level, risk, rank, detail) "
    "SELECT p.id, r->>'factor', r->>'level', r->>'default', "
    " CASE WHEN p.host_name IS NULL THEN '{}'::text[] ELSE ARRAY[p.host_name] END, "
    " r->>'workload', r->>'metric', (r->>'gain_pct')::float8, "
    " (r->'gain_interval'->>'lo_pct')::float8, (r->'gain_interval'->>'hi_pct')::float8, "
    " r->>'risk_level', r->>'risk', (r->>'rank')::int, r "
    "FROM plans p, jsonb_array_elements($2::jsonb) r "
    "WHERE p.id = $1 AND hv_plan_state_due(p.id) = 'done' "
    "ON CONFLICT (plan_id, factor, level) DO NOTHING",
    2};

/* A recommendation as answers show it (r: its row); its state is its
 * verdict once one is given (delivered, partial, none, regressed), else
 * adopted while a host carries it (an open adoption), else proposed. */
#define REC_JSON                                                                                   \
    "json_build_object('id', r.id, 'plan_id', r.plan_id, 'plan', p.name, 'factor', r.factor, "     \
    "'level', r.level, 'default', r.default_level, 'scope', to_json(r.scope), 'workload', "        \
    "r.workload, 'metric', r.metric, 'gain_pct', r.gain_pct, 'gain_interval', "                    \
    "json_build_object('lo_pct', r.gain_lo_pct, 'hi_pct', r.gain_hi_pct), 'risk_level', "          \
    "r.risk_level, 'risk', r.risk, 'rank', r.rank, 'sentence', r.detail->>'sentence', 'apply', "   \
    "r.detail->'apply', 'created_at', r.created_at, 'state', " REC_STATE ", 'adopted', "           \
    "json_build_object('hosts', a.hosts, 'names', coalesce(a.names, '[]'), 'since', a.since), "    \
    "'verdict', r.verdict_detail)"
#define REC_STATE                                                                                  \
    "CASE WHEN r.verdict IS NOT NULL AND r.verdict <> 'pending' THEN r.verdict WHEN a.hosts > 0 "  \
    "THEN 'adopted' ELSE 'proposed' END"
#define REC_FROM                                                                                   \
    "FROM recommendations r JOIN plans p ON p.id = r.plan_id CROSS JOIN LATERAL (SELECT "          \
    "count(*) AS hosts, json_agg(t.name ORDER BY t.name) AS names, min(x.since) AS since FROM "    \
    "recommendation_adoptions x JOIN targets t ON t.id = x.target_id WHERE x.recommendation_id "   \
    "= r.id AND x.until IS NULL) a "

static const struct hv_stmt list = {
    "recommendations_list",
    "SELECT coalesce(json_agg(s.j ORDER BY s.id DESC), '[]')::text FROM (SELECT " REC_JSON
    " AS j, r.id " REC_FROM "WHERE ($1::bigint IS NULL OR r.id < $1::bigint) AND ($2::text IS "
    "NULL OR $2 = " REC_STATE ") ORDER BY r.id DESC LIMIT $3) s",
    3};

static const struct hv_stmt get = {
    "recommendation_get",
    "SELECT (" REC_JSON "::jsonb || jsonb_build_object('adoptions', (SELECT "
    "coalesce(jsonb_agg(jsonb_build_object('id', x.id, 'target', t.name, 'target_id', t.id, "
    "'since', x.since, 'until', x.until, 'source', x.source, 'created_by', k.name) ORDER BY x.id), "
    "'[]') FROM recommendation_adoptions x JOIN targets t ON t.id = x.target_id LEFT JOIN tokens k "
    "ON k.id = x.created_by WHERE x.recommendation_id = r.id)))::text " REC_FROM "WHERE r.id = $1",
    1};

/* The hosts $1 (a selector) picks, and those $2 names; nothing is
 * recorded when a name is no host's (u); an open adoption stays (the
 * partial unique index of migrations/053). */
static const struct hv_stmt adopt = {
    "recommendation_adopt",
    "WITH r AS (SELECT id FROM recommendations WHERE id = $3), "
    "h AS (SELECT t.id, t.name " HV_SQL_SELECTED_HOSTS " UNION SELECT t.id, t.name FROM targets t "
    " WHERE t.kind = 'host' AND t.name = ANY ($2::text[])), "
    "u AS (SELECT n FROM unnest(coalesce($2::text[], '{}')) n WHERE n NOT IN (SELECT name FROM "
    "h)), "
    "ins AS (INSERT INTO recommendation_adoptions (recommendation_id, target_id, since, source, "
    " created_by) SELECT r.id, h.id, now(), 'declared', $4 FROM r, h "
    " WHERE NOT EXISTS (SELECT 1 FROM u) ON CONFLICT DO NOTHING RETURNING id) "
    "SELECT json_build_object('matched', (SELECT coalesce(json_agg(name ORDER BY name), '[]') "
    "FROM h), 'unknown', (SELECT coalesce(json_agg(n ORDER BY n), '[]') FROM u), 'added', "
    "(SELECT count(*) FROM ins))::text FROM r",
    4};

/* What recommendation $1's verdict rests on (lib/adoption.h): its
 * workload's series (the key its plan's jobs of that workload have) and
 * metric on every host, from configurations that leave its factor as the
 * host has it (a plan that sets the factor measures the plan's level, not
 * the host's), each round's value as every report reads it
 * (hv_round_parts; a guest's values count for its host). A host that
 * adopted it is split at its first adoption (and its values after the
 * adoption ended are left out); the others, the controls, at the first
 * adoption of all. Also the plan's margin and tuning disk, and the
 * recommendation as its report gave it, for the rollback. */
static const struct hv_stmt inputs = {
    "recommendation_inputs",
    "WITH r AS (SELECT r.*, p.name AS plan_name, p.spec FROM recommendations r JOIN plans p ON "
    " p.id = r.plan_id WHERE r.id = $1), "
    "k AS (SELECT DISTINCT j.series_key FROM jobs j, r WHERE j.plan_id = r.plan_id AND "
    " j.workload_id = r.workload), "
    "ad AS (SELECT x.target_id, min(x.since) AS since, CASE WHEN bool_or(x.until IS NULL) THEN "
    " NULL ELSE max(x.until) END AS until FROM recommendation_adoptions x, r WHERE "
    " x.recommendation_id = r.id GROUP BY x.target_id), "
    "cut AS (SELECT min(since) AS at FROM ad), "
    "pts AS (SELECT coalesce(t.host_id, t.id) AS host, m.value, m.at, m.higher_is_better "
    " FROM r, k, (SELECT v.*, v.metric AS name FROM hv_round_parts v) m JOIN targets t ON "
    " t.name = m.target JOIN configurations c ON "
    " c.plan_id = m.plan_id AND c.idx = m.config_idx WHERE m.series_key = k.series_key AND "
    " m.metric = r.metric AND NOT (c.levels ? r.factor) AND m.value > 0 AND " HV_SQL_METRIC_OK "), "
    "hs AS (SELECT h.id, h.name, ad.target_id IS NOT NULL AS adopted, "
    " coalesce(ad.since, cut.at) AS at, ad.until FROM targets h JOIN (SELECT DISTINCT host FROM "
    " pts) u ON u.host = h.id CROSS JOIN cut LEFT JOIN ad ON ad.target_id = h.id) "
    "SELECT json_build_object('id', r.id, 'plan_id', r.plan_id, 'plan', r.plan_name, 'margin_pct', "
    " r.spec->'margin_pct', 'disk', r.spec->'tuning'->'disk', 'gain_interval', "
    " json_build_object('lo_pct', r.gain_lo_pct, 'hi_pct', r.gain_hi_pct), 'recommendation', "
    " r.detail, 'cut', (SELECT at FROM cut), 'higher_is_better', (SELECT bool_and("
    " higher_is_better) FROM pts), 'hosts', (SELECT coalesce(json_agg(json_build_object("
    " 'target', hs.name, 'adopted', hs.adopted, 'before', (SELECT coalesce(json_agg(p.value "
    " ORDER BY p.at), '[]') FROM pts p WHERE p.host = hs.id AND p.at < hs.at), 'after', (SELECT "
    " coalesce(json_agg(p.value ORDER BY p.at), '[]') FROM pts p WHERE p.host = hs.id AND p.at >= "
    " hs.at AND (hs.until IS NULL OR p.at < hs.until))) ORDER BY hs.name), '[]') FROM hs "
    " WHERE hs.at IS NOT NULL))::text FROM r",
    1};

/* The recommendations with an adoption, and what moves when anything
 * their verdicts rest on may have: the newest result, adoption and end of
 * an adoption. */
static const struct hv_stmt to_judge = {
    "recommendations_to_judge",
    "SELECT json_build_object('mark', concat_ws(':', (SELECT max(id) FROM results), (SELECT "
    "max(id) FROM recommendation_adoptions), (SELECT count(until) FROM recommendation_adoptions), "
    "(SELECT max(id) FROM recommendations)), 'ids', (SELECT coalesce(json_agg(DISTINCT "
    "recommendation_id), '[]') FROM recommendation_adoptions))::text",
    0};

static const struct hv_stmt judged = {
    "recommendation_judged", "SELECT hv_recommendation_judged($1, $2, $3::jsonb)::text", 3};

static const struct hv_stmt settings_put = {
    "target_settings_put",
    "SELECT hv_target_settings_put(t.id, $2::jsonb)::text FROM targets t WHERE t.id = $1 "
    "AND t.kind = 'host'",
    2};

enum hv_db_status hv_db_recommendations_keep(struct hv_db *db, const char *plan,
                                             const json_t *recommendations)
{
    if (json_array_size(recommendations) == 0)
        return HV_DB_OK;
    char *text = json_dumps(recommendations, JSON_COMPACT);
    if (text == NULL)
        return HV_DB_ERROR;
    const char *params[] = {plan, text};
    enum hv_db_status s = hv_db_exec(db, &keep, params, NULL);
    free(text);
    return s == HV_DB_NONE ? HV_DB_OK : s;
}

enum hv_db_status hv_db_recommendations_list(const char *state, int64_t before_id, int limit,
                                             json_t **out)
{
    char before[24], lim[16];
    const char *params[] = {before_id > 0 ? hv_db_int(before, sizeof before, before_id) : NULL,
                            state, hv_db_int(lim, sizeof lim, limit)};
    return hv_db_json(&list, params, out, NULL);
}

enum hv_db_status hv_db_recommendation_get(int64_t id, json_t **out)
{
    char idtxt[24];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id)};
    return hv_db_json(&get, params, out, NULL);
}

/* A JSON array of strings as a PostgreSQL array literal (malloc'd). */
static char *names_array(const json_t *names)
{
    size_t n = json_array_size(names);
    const char **v = calloc(n ? n : 1, sizeof *v);
    if (v == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        v[i] = json_string_value(json_array_get(names, i));
    char *text = hv_db_text_array(v, n);
    free(v);
    return text;
}

enum hv_db_status hv_db_recommendation_adopt(int64_t id, const json_t *selector,
                                             const json_t *targets, int64_t token_id, json_t **out)
{
    *out = NULL;
    char *sel = selector != NULL ? json_dumps(selector, JSON_COMPACT) : NULL;
    char *names = targets != NULL ? names_array(targets) : NULL;
    enum hv_db_status s = HV_DB_ERROR;
    if ((selector == NULL || sel != NULL) && (targets == NULL || names != NULL)) {
        char idtxt[24], tok[24];
        const char *params[] = {sel, names, hv_db_int(idtxt, sizeof idtxt, id),
                                token_id > 0 ? hv_db_int(tok, sizeof tok, token_id) : NULL};
        s = hv_db_json(&adopt, params, out, NULL);
    }
    free(sel);
    free(names);
    return s;
}

enum hv_db_status hv_db_target_settings_put(int64_t target_id, const char *settings)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char tid[24];
    const char *params[] = {hv_db_int(tid, sizeof tid, target_id), settings};
    return hv_db_exec(db, &settings_put, params, NULL);
}

enum hv_db_status hv_db_recommendation_inputs(int64_t id, json_t **out)
{
    char idtxt[24];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id)};
    return hv_db_json(&inputs, params, out, NULL);
}

enum hv_db_status hv_db_recommendations_to_judge(json_t **out)
{
    return hv_db_json(&to_judge, NULL, out, NULL);
}

enum hv_db_status hv_db_recommendation_judged(int64_t id, const char *state, const json_t *detail)
{
    char *text = json_dumps(detail, JSON_COMPACT);
    if (text == NULL)
        return HV_DB_ERROR;
    char idtxt[24];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id), state, text};
    json_t *changed = NULL;
    enum hv_db_status s = hv_db_json(&judged, params, &changed, NULL);
    json_decref(changed);
    free(text);
    return s;
}
