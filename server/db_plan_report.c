/* db_plan_report.c — what a plan's report reads and keeps (db_plans.h):
 * its meta (spec, configurations, workloads, emulated guests, the ids of
 * its kept recommendations), the report
 * digest and answer kept per state of its done jobs, and its observations,
 * the values the report is computed from. */
#include "db_plans.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The report's view of a plan besides its values. The caller names the
 * state of the plan's done jobs in $2 (NULL: no digest wanted); a digest
 * kept for that very state comes along (migrations/015), and with it the
 * plan's workload variants and targets as they were kept, so a report read
 * from a digest scans none of the plan's jobs here. The digest comes as
 * its own column, the text kept: made part of the JSON here, PostgreSQL
 * would parse and print its 740 kB (a plan of 100,000 results) again. */
#define REPORT_WORKLOADS                                                                           \
    "(SELECT coalesce(json_agg(w.j ORDER BY w.id), '[]') FROM (SELECT DISTINCT ON "                \
    "(j.workload_id) j.workload_id AS id, json_build_object('id', j.workload_id, 'kind', "         \
    "j.workload->>'kind', 'engine', j.workload->>'engine') AS j FROM jobs j WHERE j.plan_id = "    \
    "p.id ORDER BY j.workload_id) w)"
#define REPORT_TARGETS                                                                             \
    "(SELECT coalesce(json_agg(DISTINCT j.target_name ORDER BY j.target_name), '[]') FROM jobs j " \
    "WHERE j.plan_id = p.id)"
static const struct hv_stmt report_meta = {
    "plan_report_meta",
    "SELECT json_build_object('spec', p.spec, 'configurations', "
    "(SELECT coalesce(json_agg(json_build_object('name', c.name, 'levels', c.levels) ORDER BY "
    "c.idx), '[]') FROM configurations c WHERE c.plan_id = p.id), 'workloads', CASE WHEN "
    "rd.plan_id IS NOT NULL THEN rd.workloads ELSE " REPORT_WORKLOADS " END, "
    /* The guests whose domain the host's worker lists as type 'qemu':
     * QEMU's TCG emulation rather than KVM. */
    "'emulated', (SELECT coalesce(json_agg(DISTINCT t.name ORDER BY t.name), '[]') FROM "
    "json_array_elements_text(t.targets) t(name), targets h, "
    "jsonb_array_elements(coalesce(h.facts->'libvirt'->'domains', '[]')) d "
    "WHERE h.name = p.spec->'targets'->>'host' AND t.name <> h.name AND d->>'name' = "
    "hv_domain_name(t.name) "
    "AND d->>'type' = 'qemu'), "
    /* The ids of the recommendations kept when the plan ended done. */
    "'recommendation_ids', (SELECT coalesce(json_object_agg(r.factor || '=' || r.level, r.id), "
    "'{}') FROM recommendations r WHERE r.plan_id = p.id))::text, "
    "CASE WHEN $3 THEN rd.digest END "
    "FROM plans p LEFT JOIN report_digests rd ON rd.plan_id = p.id AND rd.version = $2, "
    "LATERAL (SELECT CASE WHEN rd.plan_id IS NOT NULL THEN rd.targets ELSE " REPORT_TARGETS
    " END AS targets) t WHERE p.id = $1",
    3};

/* Keeps a report's digest for the state it was computed from, with the
 * plan's workload variants and targets as the report reads them, and the
 * answer rendered from it with the md5 of its other inputs (both may be
 * NULL; migrations/026). */
static const struct hv_stmt report_digest_put = {
    "plan_report_digest_put",
    "INSERT INTO report_digests (plan_id, version, digest, workloads, targets, answer, inputs) "
    "SELECT p.id, $2, $3, " REPORT_WORKLOADS ", " REPORT_TARGETS ", $4, md5($5) FROM plans p "
    "WHERE p.id = $1 ON CONFLICT (plan_id) DO UPDATE SET version = EXCLUDED.version, "
    "digest = EXCLUDED.digest, workloads = EXCLUDED.workloads, targets = EXCLUDED.targets, "
    "answer = EXCLUDED.answer, inputs = EXCLUDED.inputs, computed_at = now()",
    5};

/* The answer kept for a state of the plan's jobs and the md5 of the other
 * inputs, as its text: never parsed here nor in PostgreSQL. */
static const struct hv_stmt report_answer = {
    "plan_report_answer",
    "SELECT answer FROM report_digests WHERE plan_id = $1 AND version = $2 AND inputs = md5($3) "
    "AND answer IS NOT NULL",
    3};

/* The answer kept for a running plan whatever the state it is of, when its
 * digest was computed less than $2 seconds ago. */
static const struct hv_stmt report_answer_recent = {
    "plan_report_answer_recent",
    "SELECT answer FROM report_digests WHERE plan_id = $1 AND answer IS NOT NULL "
    "AND computed_at > now() - make_interval(secs => $2::int)",
    2};

/* An answer rendered from the digest kept for that state, the other
 * inputs having changed. */
static const struct hv_stmt report_answer_put = {
    "plan_report_answer_put",
    "UPDATE report_digests SET answer = $3, inputs = md5($4) WHERE plan_id = $1 AND version = $2",
    4};

/* The rounds of groups (hv_round_values, migrations/042): one row per
 * round of each configuration, workload, target and metric, the client
 * members of a group one observation, the mean of their values. The value
 * is given as its magnitude and sign (mean_s · scale of hv_db_obs). */
static const struct hv_stmt plan_observations = {
    "plan_observations",
    "SELECT v.config_idx, v.workload_id, v.target, v.metric, v.unit, v.higher_is_better, "
    "v.round, v.members, abs(v.value), sign(v.value), v.jobs::text "
    "FROM hv_round_values($1) v WHERE v.grouped ORDER BY 1, 2, 3, 4, 7",
    1};

/* The jobs that ran alone (most of a plan's), from the same definition:
 * one row per configuration, workload, target and metric with its rounds,
 * values and job ids as three arrays in the same order, so a plan of
 * 100,000 results gives its values in a few hundred rows rather than one
 * row each. */
static const struct hv_stmt plan_observations_alone = {
    "plan_observations_alone",
    "SELECT v.config_idx, v.workload_id, v.target, v.metric, min(v.unit), "
    "bool_and(v.higher_is_better), array_agg(v.round)::text, array_agg(v.value)::text, "
    "array_agg(v.jobs[1])::text FROM hv_round_values($1) v WHERE NOT v.grouped "
    "GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4",
    1};

enum hv_db_status hv_db_plan_report_meta(int64_t id, const char *version, bool digest_wanted,
                                         json_t **out)
{
    char idtxt[24];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id), version,
                            digest_wanted ? "true" : "false"};
    json_t *digest = NULL;
    enum hv_db_status s = hv_db_json(&report_meta, params, out, &digest);
    /* Set only with the answer, which json_object_set_new takes even when
     * it fails. */
    if (digest != NULL && json_object_set_new(*out, "digest", digest) != 0)
        s = HV_DB_ERROR;
    return s;
}

enum hv_db_status hv_db_plan_report_digest_put(int64_t id, const char *version, const char *digest,
                                               const char *answer, const char *inputs)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char idtxt[24];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id), version, digest, answer, inputs};
    return hv_db_exec(db, &report_digest_put, params, NULL);
}

/* The text of the one cell statement st answers into *answer. */
static enum hv_db_status answer_text(const struct hv_stmt *st, const char *const *params,
                                     char **answer)
{
    *answer = NULL;
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    PGresult *r = NULL;
    enum hv_db_status s = hv_db_exec(db, st, params, &r);
    if (s == HV_DB_OK) {
        /* The response frees what it sends: a copy of libpq's buffer. */
        size_t len = (size_t)PQgetlength(r, 0, 0);
        *answer = malloc(len + 1);
        if (*answer != NULL)
            memcpy(*answer, PQgetvalue(r, 0, 0), len + 1);
        else
            s = HV_DB_ERROR;
    }
    PQclear(r);
    return s;
}

enum hv_db_status hv_db_plan_report_answer(int64_t id, const char *version, const char *inputs,
                                           char **answer)
{
    char idtxt[24];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id), version, inputs};
    return answer_text(&report_answer, params, answer);
}

enum hv_db_status hv_db_plan_report_answer_recent(int64_t id, int seconds, char **answer)
{
    char idtxt[24], secs[16];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id),
                            hv_db_int(secs, sizeof secs, seconds)};
    return answer_text(&report_answer_recent, params, answer);
}

enum hv_db_status hv_db_plan_report_answer_put(int64_t id, const char *version, const char *answer,
                                               const char *inputs)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char idtxt[24];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id), version, answer, inputs};
    return hv_db_exec(db, &report_answer_put, params, NULL);
}

/* The next element of an array literal ("{1,2.5,NaN}") from *p: its text
 * into *out, *p past it. Returns false at the end. */
static bool next_elem(const char **p, char *out, size_t len)
{
    const char *s = *p;
    while (*s == '{' || *s == ',' || *s == ' ')
        s++;
    size_t n = strcspn(s, ",}");
    if (n == 0 || n >= len)
        return false;
    memcpy(out, s, n);
    out[n] = '\0';
    *p = s + n;
    return true;
}

/* The series of row i of either observations query: its first six
 * columns (configuration, workload, target, metric, unit, direction). */
static struct hv_db_obs series_of(PGresult *r, int i)
{
    return (struct hv_db_obs){
        .config = atoi(PQgetvalue(r, i, 0)),
        .workload = PQgetvalue(r, i, 1),
        .target = PQgetvalue(r, i, 2),
        .metric = PQgetvalue(r, i, 3),
        .unit = PQgetvalue(r, i, 4),
        .higher_is_better = PQgetvalue(r, i, 5)[0] == 't',
    };
}

/* Calls fn for every value of one row of plan_observations_alone. */
static enum hv_db_status walk_alone(PGresult *r, int i, hv_db_obs_fn fn, void *arg)
{
    const char *rounds = PQgetvalue(r, i, 6), *values = PQgetvalue(r, i, 7),
               *ids = PQgetvalue(r, i, 8);
    struct hv_db_obs o = series_of(r, i);
    o.members = 1;
    char round[24], value[64], job[24];
    while (next_elem(&rounds, round, sizeof round)) {
        if (!next_elem(&values, value, sizeof value) || !next_elem(&ids, job, sizeof job))
            return HV_DB_ERROR;
        double v = strtod(value, NULL);
        /* mean_s · scale is v itself: ±1 (or 0) times its magnitude. */
        o.round = atoi(round);
        o.scale = fabs(v);
        o.mean_s = v > 0.0 ? 1.0 : v < 0.0 ? -1.0 : 0.0;
        o.jobs = job;
        if (fn(arg, &o) != 0)
            return HV_DB_ERROR;
    }
    return HV_DB_OK;
}

enum hv_db_status hv_db_plan_observations(int64_t id, hv_db_obs_fn fn, void *arg)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char idtxt[24];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id)};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &plan_observations_alone, params, &r);
    if (s == HV_DB_NONE)
        s = HV_DB_OK;
    for (int i = 0; s == HV_DB_OK && r != NULL && i < PQntuples(r); i++)
        s = walk_alone(r, i, fn, arg);
    PQclear(r);
    if (s != HV_DB_OK)
        return s;
    s = hv_db_exec(db, &plan_observations, params, &r);
    if (s == HV_DB_NONE)
        s = HV_DB_OK;
    for (int i = 0; s == HV_DB_OK && r != NULL && i < PQntuples(r); i++) {
        struct hv_db_obs o = series_of(r, i);
        o.round = atoi(PQgetvalue(r, i, 6));
        o.members = atol(PQgetvalue(r, i, 7));
        o.scale = strtod(PQgetvalue(r, i, 8), NULL);
        o.mean_s = strtod(PQgetvalue(r, i, 9), NULL);
        o.jobs = PQgetvalue(r, i, 10);
        if (fn(arg, &o) != 0)
            s = HV_DB_ERROR;
    }
    PQclear(r);
    return s;
}
