/* h_telemetry.c — host telemetry of guest jobs: the host worker asks which
 * of its domains run a job (GET /api/v1/workers/telemetry) and uploads
 * what it sampled while each attempt ran (POST /api/v1/jobs/{id}/telemetry).
 * Telemetry never decides a job's outcome: an attempt without it is shown
 * with telemetry "missing" and the reason (server/db_job_read.c). The levels
 * of the job's block that the host read back when the job ended come with
 * it and go into the result's observed.settings; a level that no longer
 * reads back (settings_changed) fails the job (db_telemetry.c). */
#include "db_telemetry.h"
#include "handlers.h"
#include "jspec.h"
#include "log.h"
#include "result.h"
#include "timeutil.h"

#include <stdio.h>
#include <string.h>

static const char *const statuses[] = {"ok", "missing", NULL};

/* The body goes straight into the upload. */
#define TO(field) HV_JTO(struct hv_telemetry_upload, field)

static const struct hv_jfield telemetry_fields[] = {
    {.name = "attempt", .type = HV_J_INTEGER, .required = true, .min = 1, .max = 1e9, TO(attempt)},
    {.name = "status", .type = HV_J_STRING, .required = true, .choices = statuses, TO(status)},
    {.name = "reason", .type = HV_J_STRING, .max_len = 1024, TO(reason)},
    {.name = "t0", .type = HV_J_STRING, .max_len = 40, TO(t0)},
    {.name = "samples", .type = HV_J_ARRAY, .max_len = HV_RESULT_MAX_SAMPLES, TO(samples)},
    {.name = "observed", .type = HV_J_OBJECT, TO(observed)},
    {.name = "settings", .type = HV_J_OBJECT, TO(settings)},
    {.name = "settings_changed", .type = HV_J_STRING, .max_len = 4096, TO(settings_changed)},
    {.name = "settings_missing", .type = HV_J_STRING, .max_len = 1024, TO(settings_missing)},
    {0},
};

/* The members of a sample the checks read (hv_result_sample_fields checks
 * them). */
struct sample_row {
    const char *metric;
    double value;
};

static const struct hv_jfield sample_binding[] = {
    {.name = "metric", HV_JTO(struct sample_row, metric)},
    {.name = "value", HV_JTO(struct sample_row, value)},
    {0},
};

/* Checks the body beyond its members: each sample (a host.* metric with
 * an acceptable value), and t0 when samples are given. */
static void check_body(const json_t *doc, const void *dest, json_t *errors)
{
    const struct hv_telemetry_upload *u = dest;
    if (json_array_size(errors) > 0)
        return;
    const json_t *samples = u->samples;
    if (u->t0 != NULL && !hv_iso8601_valid(u->t0))
        hv_errors_add(errors, "/t0", "must be an ISO 8601 UTC time such as 2026-11-29T18:40:12.5Z");
    if (u->t0 == NULL && json_array_size(samples) > 0)
        hv_errors_add(errors, "/t0", "samples need t0, the time of t = 0");
    size_t i;
    const json_t *row;
    char path[64];
    json_array_foreach(samples, i, row)
    {
        if (json_array_size(errors) > 50)
            return;
        hv_jpath_index(path, sizeof path, "/samples", i);
        if (hv_jspec_check(row, path, hv_result_sample_fields, errors) > 0)
            continue;
        struct sample_row r;
        hv_jspec_bind(row, sample_binding, &r);
        const char *name = r.metric;
        char p[80], why[160];
        if (strncmp(name, "host.", 5) != 0) {
            snprintf(p, sizeof p, "%s/metric", path);
            hv_errors_add(errors, p, "telemetry metrics are named host.*");
        } else if (!hv_metric_value_check(name, NULL, r.value, why, sizeof why)) {
            snprintf(p, sizeof p, "%s/value", path);
            hv_errors_add(errors, p, "%s", why);
        }
    }
}

void hv_h_telemetry_jobs(struct hv_request *req)
{
    json_t *jobs = NULL;
    enum hv_db_status s = hv_db_telemetry_running(req->worker_id, &jobs);
    if (s != HV_DB_OK) {
        hv_reply_db_failure(req, s);
        return;
    }
    char now[32];
    hv_now_iso8601(now, sizeof now);
    hv_reply_json(req, 200, json_pack("{s:s,s:o}", "server_time", now, "jobs", jobs));
}

void hv_h_job_telemetry(struct hv_request *req)
{
    struct hv_telemetry_upload u = {.job_id = req->ids[0], .worker_id = req->worker_id};
    json_t *doc = hv_req_body(req, telemetry_fields, &u, check_body, "the telemetry does not fit");
    if (doc == NULL)
        return;
    bool forbidden = false, stored = false;
    enum hv_db_status s = hv_db_telemetry_store(&u, &forbidden, &stored);
    if (s == HV_DB_NONE)
        hv_reply_problem(req, HV_E_NOT_FOUND, "no job with this id", NULL);
    else if (s == HV_DB_CONFLICT && forbidden)
        hv_reply_problem(req, HV_E_FORBIDDEN,
                         "only the worker of the host whose domain runs this job's guest may "
                         "send its telemetry",
                         NULL);
    else if (s == HV_DB_CONFLICT)
        hv_reply_problem(req, HV_E_STALE_ATTEMPT, "this attempt of the job was never claimed",
                         NULL);
    else if (s != HV_DB_OK)
        hv_reply_db_failure(req, s);
    else {
        hv_info("job %lld attempt %d: telemetry %s (%zu samples)%s%s%s", (long long)u.job_id,
                u.attempt, u.status, json_array_size(u.samples),
                stored ? "" : ", already stored: nothing stored",
                stored && u.settings_changed != NULL ? "; a setting changed under the job: " : "",
                stored && u.settings_changed != NULL ? u.settings_changed : "");
        hv_reply_json(req, stored ? 201 : 200,
                      json_pack("{s:I,s:i,s:b}", "job_id", (json_int_t)u.job_id, "attempt",
                                u.attempt, "stored", stored));
    }
    json_decref(doc);
}
