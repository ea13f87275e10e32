/* db_telemetry.c — see db_telemetry.h. */
#include "db_telemetry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The domains of the host held by worker $1 that are guests' domains. */
#define LINKED                                                                                     \
    "FROM workers w JOIN targets h ON h.id = w.target_id "                                         \
    "CROSS JOIN jsonb_array_elements(coalesce(h.facts->'libvirt'->'domains', '[]')) d "            \
    "JOIN targets g ON g.dmi_uuid IS NOT NULL AND g.id <> h.id "                                   \
    " AND lower(d->>'uuid') = lower(g.dmi_uuid) "

static const struct hv_stmt running = {
    "telemetry_running",
    "SELECT coalesce(json_agg(json_build_object('job_id', j.id, 'attempt', j.attempt, 'target', "
    "g.name, 'domain', json_build_object('name', d->>'name', 'uuid', lower(d->>'uuid')), "
    "'claimed_at', j.claimed_at) ORDER BY j.id), '[]')::text " LINKED
    "JOIN jobs j ON j.target_id = g.id AND j.status = 'running' "
    "WHERE w.id = $1 AND w.ended_at IS NULL",
    1};

/* Whether the job exists, its current attempt, and the caller's domain of
 * the job's guest (NULL when the caller is not that guest's host). */
static const struct hv_stmt link = {
    "telemetry_link",
    "SELECT j.attempt, (SELECT d->>'name' " LINKED
    " WHERE w.id = $2 AND w.ended_at IS NULL AND g.id = j.target_id LIMIT 1), "
    "(SELECT w.target_id FROM workers w WHERE w.id = $2) FROM jobs j WHERE j.id = $1",
    2};

static const struct hv_stmt insert = {
    "telemetry_insert",
    "INSERT INTO telemetry (job_id, attempt, worker_id, host_target_id, domain, status, reason, "
    "t0, samples, observed) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::timestamptz, $9::jsonb, "
    "$10::jsonb) ON CONFLICT (job_id, attempt) DO NOTHING RETURNING 1",
    10};

/* The jobs that ran while the host was busy are found from the busy
 * telemetry (its partial index, migrations/019_telemetry_busy.sql), each
 * then looked up by its id, so a report reads none of the plan's other
 * jobs (joining each job of a plan of 100,000 to its telemetry took
 * 0.5-1.4 s a report). */
static const struct hv_stmt report_host = {
    "telemetry_report_host",
    "SELECT json_build_object('host', p.spec->'targets'->>'host', 'kvm_probe', (SELECT "
    "h.facts->'kvm_probe' FROM targets h WHERE h.name = p.spec->'targets'->>'host'), 'busy', "
    "(SELECT coalesce(json_agg(json_build_object('job_id', j.id, 'configuration', c.name, "
    "'target', j.target_name, 'workload', j.workload_id, 'others_cpu_pct', "
    "tm.observed->'host_busy'->'others_cpu_pct', 'steal_pct', "
    "tm.observed->'host_busy'->'steal_pct', 'nonguest_cpu_pct', "
    "tm.observed->'host_busy'->'nonguest_cpu_pct') ORDER BY c.idx, j.id), '[]') "
    "FROM telemetry tm CROSS JOIN LATERAL (SELECT j.id, j.config_id, j.target_name, "
    "j.workload_id FROM jobs j WHERE j.id = tm.job_id AND j.attempt = tm.attempt "
    "AND j.plan_id = p.id AND j.status = 'done' OFFSET 0) j "
    "JOIN configurations c ON c.id = j.config_id "
    "WHERE tm.observed->'host_busy'->'busy' = 'true'::jsonb))::text FROM plans p WHERE p.id = $1",
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
    char *observed = u->observed ? json_dumps(u->observed, JSON_COMPACT) : strdup("{}");
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
    if (s == HV_DB_OK)
        *stored = true;
    else if (s == HV_DB_NONE)
        s = HV_DB_OK;
    return s;
}
