/* db_telemetry.c — see db_telemetry.h. */
#include "db_telemetry.h"

#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The guests of job j's target whose domain runs on the host h: a guest
 * whose DMI product UUID is a domain h lists in facts.libvirt.domains, or
 * (clones made after h registered) a guest of a tuning plan held by h. The
 * domain's name is the one h lists, else the guest's (a clone's target is
 * named as its domain). */
#define GUEST_ON_HOST                                                                              \
    "JOIN targets g ON g.id = j.target_id AND g.id <> h.id AND g.dmi_uuid IS NOT NULL "            \
    "LEFT JOIN LATERAL (SELECT e AS d FROM "                                                       \
    "jsonb_array_elements(coalesce(h.facts->'libvirt'->'domains', '[]')) e "                       \
    "WHERE lower(e->>'uuid') = lower(g.dmi_uuid) LIMIT 1) dd ON true "
#define ON_HOST                                                                                    \
    "(dd.d IS NOT NULL OR EXISTS (SELECT 1 FROM plans hp WHERE hp.id = j.plan_id "                 \
    "AND hp.host_name = h.name))"

/* A job of a tuning plan held by this host carries what the host reads
 * back when it ends: the configuration's levels of the factors the block's
 * apply step read back (process_pin is the guest worker's own), the plan's
 * disk and NIC, and its guests' domains (a level such as vcpu_pin's CPUs
 * is read against all of them). */
static const struct hv_stmt running = {
    "telemetry_running",
    "SELECT coalesce(json_agg(json_build_object('job_id', j.id, 'attempt', j.attempt, 'target', "
    "g.name, 'domain', json_build_object('name', coalesce(dd.d->>'name', hv_domain_name(g.name)), "
    "'uuid', "
    "lower(g.dmi_uuid)), "
    "'claimed_at', j.claimed_at, 'tuning', (SELECT json_build_object('plan_id', p.id, 'levels', "
    "(SELECT coalesce(jsonb_object_agg(e.key, e.value), '{}') FROM jsonb_each(c.levels) e "
    " WHERE jsonb_typeof(s.settings->e.key->'read_back') = 'string' AND e.key <> 'process_pin'), "
    "'disk', p.spec->'tuning'->'disk', 'nic', p.spec->'tuning'->'nic', 'domains', (SELECT "
    "coalesce(json_agg(DISTINCT hv_domain_name(o.target_name)), '[]') FROM jobs o WHERE o.plan_id "
    "= p.id "
    "AND o.target_name <> p.host_name)) FROM plans p "
    "JOIN plan_steps s ON s.plan_id = p.id AND s.kind = 'apply' AND s.block = j.block "
    "JOIN configurations c ON c.id = j.config_id WHERE p.id = j.plan_id AND p.host_name = h.name "
    "AND s.settings IS NOT NULL)) ORDER BY j.id), '[]')::text "
    "FROM workers w JOIN targets h ON h.id = w.target_id "
    "JOIN jobs j ON j.status = 'running' " GUEST_ON_HOST
    "WHERE w.id = $1 AND w.ended_at IS NULL AND " ON_HOST,
    1};

/* Whether the job exists, its current attempt, and the caller's domain of
 * the job's guest (NULL when the caller is not that guest's host). */
static const struct hv_stmt link = {
    "telemetry_link",
    "SELECT j.attempt, (SELECT coalesce(dd.d->>'name', hv_domain_name(g.name)) FROM workers w "
    "JOIN targets h ON h.id = w.target_id " GUEST_ON_HOST
    "WHERE w.id = $2 AND w.ended_at IS NULL AND " ON_HOST " LIMIT 1), "
    "(SELECT w.target_id FROM workers w WHERE w.id = $2) FROM jobs j WHERE j.id = $1",
    2};

static const struct hv_stmt insert = {
    "telemetry_insert",
    "INSERT INTO telemetry (job_id, attempt, worker_id, host_target_id, domain, status, reason, "
    "t0, samples, observed) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::timestamptz, $9::jsonb, "
    "$10::jsonb) ON CONFLICT (job_id, attempt) DO NOTHING RETURNING 1",
    10};

/* The reading of the block's levels when attempt $2 of job $1 ended, on
 * domain $3, into the attempt's result: observed.settings[factor] gains
 * the configuration's level, the apply step's reading of that domain
 * (a guest factor's detail.DOMAIN.read_back, else its read_back), and
 * this one (under "host" when the guest's worker read the factor itself:
 * its side of net_queues, guest_mtu); $5 (what changed) fails the result
 * and the job if done.
 * Answers whether a result was there. */
static const struct hv_stmt merge = {
    "telemetry_settings_merge",
    "WITH x AS (SELECT c.levels, s.settings AS start FROM jobs j "
    " JOIN configurations c ON c.id = j.config_id LEFT JOIN plan_steps s ON s.plan_id = j.plan_id "
    " AND s.kind = 'apply' AND s.block = j.block WHERE j.id = $1), "
    "r AS (UPDATE results r SET observed = CASE WHEN $6::text IS NOT NULL THEN r.observed || "
    " jsonb_build_object('settings_missing', $6::text) ELSE r.observed END || "
    " jsonb_build_object('settings', coalesce(r.observed->'settings', '{}') || (SELECT "
    " coalesce(jsonb_object_agg(e.key, CASE WHEN jsonb_typeof(r.observed->'settings'->e.key) = "
    " 'object' THEN r.observed->'settings'->e.key || jsonb_build_object('host', h.v) ELSE h.v "
    " END), '{}') FROM x, jsonb_each(coalesce($4::jsonb, '{}')) e, LATERAL (SELECT "
    " jsonb_strip_nulls(jsonb_build_object('level', coalesce(x.levels->e.key, "
    " e.value->'level'), 'start', coalesce(x.start->e.key->'detail'->$3::text->'read_back', "
    " x.start->e.key->'read_back'), 'end', e.value->'read_back', 'read_back', "
    " e.value->'read_back', 'source', e.value->'source')) AS v) h "
    " WHERE jsonb_typeof(e.value) = 'object')), "
    " status = CASE WHEN $5::text IS NOT NULL THEN 'error' ELSE r.status END, "
    " error = CASE WHEN $5::text IS NOT NULL AND r.status = 'ok' THEN "
    " 'a setting changed under the job: ' || $5::text ELSE r.error END "
    " WHERE r.job_id = $1 AND r.attempt = $2 RETURNING r.id), "
    "j AS (UPDATE jobs SET status = 'failed', error = 'a setting changed under the job: ' || "
    " $5::text WHERE id = $1 AND attempt = $2 AND status = 'done' AND $5::text IS NOT NULL "
    " AND EXISTS (SELECT 1 FROM r) RETURNING id) "
    "SELECT (SELECT count(*) FROM r), (SELECT count(*) FROM j)",
    6};

/* The jobs that ran while the host was busy are found from the busy
 * telemetry (its partial index, migrations/019_telemetry_busy.sql), each
 * then looked up by its id, so a report reads none of the plan's other
 * jobs (joining each job of a plan of 100,000 to its telemetry took
 * 0.5-1.4 s a report). Bare-metal jobs say it in their own result
 * (observed.interference, worker/interference.h): the work beside them is
 * the host's own work, its share of all the CPU time times the CPUs in
 * percent of one CPU as host_busy's nonguest_cpu_pct is; a plain join, so
 * the planner goes through the plan's jobs or, given one, an index of the
 * busy results. A result the plan set aside as noisy (results.set_aside,
 * migrations/052) is no value of the report, so it is not among the busy
 * but listed under set_aside, with the reason and the signal that set it
 * aside. */
static const struct hv_stmt report_host = {
    "telemetry_report_host",
    "SELECT json_build_object('host', p.spec->'targets'->>'host', 'kvm_probe', (SELECT "
    "h.facts->'kvm_probe' FROM targets h WHERE h.name = p.spec->'targets'->>'host'), 'busy', "
    "(SELECT coalesce(json_agg(json_build_object('job_id', j.id, 'configuration', c.name, "
    "'target', j.target_name, 'workload', j.workload_id, 'others_cpu_pct', b.others, "
    "'steal_pct', b.steal, 'nonguest_cpu_pct', b.own) ORDER BY c.idx, j.id), '[]') "
    "FROM (SELECT tm.job_id, tm.attempt, tm.observed->'host_busy'->'others_cpu_pct' AS others, "
    "tm.observed->'host_busy'->'steal_pct' AS steal, "
    "tm.observed->'host_busy'->'nonguest_cpu_pct' AS own FROM telemetry tm "
    "WHERE tm.observed->'host_busy'->'busy' = 'true'::jsonb "
    "UNION ALL SELECT r.job_id, r.attempt, NULL, r.observed->'interference'->'steal_pct', "
    "to_jsonb(round((r.observed->'interference'->>'others_cpu_pct')::numeric * "
    "(r.observed->'interference'->>'ncpus')::numeric, 2)) FROM results r "
    "JOIN jobs rj ON rj.id = r.job_id AND rj.attempt = r.attempt AND rj.plan_id = $1 "
    "WHERE r.observed->'interference'->'busy' = 'true'::jsonb) b "
    "CROSS JOIN LATERAL (SELECT j.id, j.config_id, j.target_name, "
    "j.workload_id FROM jobs j WHERE j.id = b.job_id AND j.attempt = b.attempt "
    "AND j.plan_id = p.id AND j.status = 'done' AND NOT EXISTS (SELECT 1 FROM results ra "
    "WHERE ra.job_id = j.id AND ra.attempt = j.attempt AND ra.set_aside IS NOT NULL) OFFSET 0) j "
    "JOIN configurations c ON c.id = j.config_id), "
    "'noise', coalesce(p.spec->>'noise', 'keep'), 'set_aside', "
    "(SELECT json_build_object('count', count(*), 'reasons', coalesce((SELECT "
    "json_object_agg(x.why, x.n) FROM (SELECT r2.set_aside AS why, count(*) AS n FROM results r2 "
    "JOIN jobs j2 ON j2.id = r2.job_id AND j2.attempt = r2.attempt WHERE j2.plan_id = p.id "
    "AND j2.status = 'done' AND r2.set_aside IS NOT NULL GROUP BY 1) x), '{}'), 'jobs', "
    "coalesce(json_agg(json_build_object('job_id', sj.id, 'configuration', sc.name, 'target', "
    "sj.target_name, 'workload', sj.workload_id, 'round', sj.repetition, 'reason', sr.set_aside, "
    "'signal', coalesce(sr.observed->'interference', (SELECT tm.observed->'host_busy' "
    "FROM telemetry tm WHERE tm.job_id = sj.id AND tm.attempt = sj.attempt))) "
    "ORDER BY sc.idx, sj.id), '[]')) FROM results sr JOIN jobs sj ON sj.id = sr.job_id "
    "AND sj.attempt = sr.attempt AND sj.plan_id = p.id AND sj.status = 'done' "
    "JOIN configurations sc ON sc.id = sj.config_id WHERE sr.set_aside IS NOT NULL))::text "
    "FROM plans p WHERE p.id = $1",
    1};

enum hv_db_status hv_db_report_host(int64_t plan_id, json_t **out)
{
    char id[24];
    const char *params[] = {hv_db_int(id, sizeof id, plan_id)};
    return hv_db_json(&report_host, params, out, NULL);
}

enum hv_db_status hv_db_telemetry_running(int64_t worker_id, json_t **out)
{
    char id[24];
    const char *params[] = {hv_db_int(id, sizeof id, worker_id)};
    return hv_db_json(&running, params, out, NULL);
}

/* Puts the reading of u into the attempt's result (the telemetry row,
 * stored first, keeps it too). A failure here is logged: the telemetry
 * is stored all the same. */
static enum hv_db_status merge_settings(struct hv_db *db, const struct hv_telemetry_upload *u,
                                        const char *domain, const char *job, const char *att)
{
    char *settings = u->settings ? json_dumps(u->settings, JSON_COMPACT) : NULL;
    if (u->settings != NULL && settings == NULL)
        return HV_DB_ERROR;
    const char *mp[] = {job, att, domain, settings, u->settings_changed, u->settings_missing};
    PGresult *r = NULL;
    enum hv_db_status s = hv_db_exec(db, &merge, mp, &r);
    free(settings);
    if (s == HV_DB_OK && atoi(PQgetvalue(r, 0, 0)) == 0)
        hv_info("job %s attempt %s: no result yet for the reading of its settings (kept with its "
                "telemetry)",
                job, att);
    else if (s == HV_DB_OK && atoi(PQgetvalue(r, 0, 1)) > 0)
        hv_warn("job %s attempt %s failed: a setting changed under the job: %s", job, att,
                u->settings_changed);
    if (r != NULL)
        PQclear(r);
    if (s != HV_DB_OK)
        hv_warn("job %s attempt %s: the reading of its settings was not merged into its result",
                job, att);
    return HV_DB_OK;
}

enum hv_db_status hv_db_telemetry_store(const struct hv_telemetry_upload *u, bool *forbidden,
                                        bool *stored)
{
    *forbidden = false;
    *stored = false;
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char job[24], att[24], worker[24];
    const char *lp[] = {hv_db_int(job, sizeof job, u->job_id),
                        hv_db_int(worker, sizeof worker, u->worker_id)};
    PGresult *r = NULL;
    enum hv_db_status s = hv_db_exec(db, &link, lp, &r);
    if (s != HV_DB_OK) {
        if (r != NULL)
            PQclear(r);
        return s;
    }
    int current = atoi(PQgetvalue(r, 0, 0));
    bool linked = !PQgetisnull(r, 0, 1);
    char domain[256], host[24];
    snprintf(domain, sizeof domain, "%s", linked ? PQgetvalue(r, 0, 1) : "");
    snprintf(host, sizeof host, "%s", PQgetisnull(r, 0, 2) ? "0" : PQgetvalue(r, 0, 2));
    PQclear(r);
    if (!linked) {
        *forbidden = true;
        return HV_DB_CONFLICT;
    }
    if (u->attempt > current)
        return HV_DB_CONFLICT;
    char *samples = u->samples ? json_dumps(u->samples, JSON_COMPACT) : strdup("[]");
    /* The row keeps the reading of the settings beside host_busy. */
    json_t *obs = u->observed ? json_deep_copy(u->observed) : json_object();
    if (u->settings != NULL)
        json_object_set(obs, "settings", (json_t *)u->settings);
    if (u->settings_changed != NULL)
        json_object_set_new(obs, "settings_changed", json_string(u->settings_changed));
    if (u->settings_missing != NULL)
        json_object_set_new(obs, "settings_missing", json_string(u->settings_missing));
    char *observed = obs ? json_dumps(obs, JSON_COMPACT) : NULL;
    json_decref(obs);
    if (samples == NULL || observed == NULL) {
        free(samples);
        free(observed);
        return HV_DB_ERROR;
    }
    const char *ip[] = {job,       hv_db_int(att, sizeof att, u->attempt),
                        worker,    host,
                        domain,    u->status,
                        u->reason, u->t0,
                        samples,   observed};
    s = hv_db_exec(db, &insert, ip, &r);
    free(samples);
    free(observed);
    if (r != NULL)
        PQclear(r);
    if (s == HV_DB_NONE)
        return HV_DB_OK;
    if (s != HV_DB_OK)
        return s;
    *stored = true;
    if (u->settings == NULL && u->settings_changed == NULL && u->settings_missing == NULL)
        return HV_DB_OK;
    return merge_settings(db, u, domain, job, att);
}
