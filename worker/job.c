/* job.c — see job.h. */
#include "worker/job.h"

#include "log.h"
#include "timeutil.h"
#include "worker/engines/engine.h"
#include "worker/wake.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Upload tries on transport failures, and the first wait between them
 * (doubling): about 15 s in all, well inside the lease. */
#define UPLOAD_TRIES     5
#define UPLOAD_FIRST_GAP 1.0
/* How soon a failed heartbeat is tried again (at most; never later than
 * the regular interval). */
#define HEARTBEAT_RETRY 5.0

/* One engine run in its own thread. */
struct engine_run {
    const struct hv_engine *engine;
    struct hv_engine_ctx ctx;
    struct hv_engine_result result;
    volatile sig_atomic_t stop;
    int rc;
    int done; /* set (atomically) by the engine thread as it ends */
    double t_start, t_end;
    char started_at[32], finished_at[32];
    pthread_t thread;
};

static void *engine_main(void *arg)
{
    struct engine_run *r = arg;
    r->rc = r->engine->run(&r->ctx, &r->result);
    r->t_end = hv_monotonic();
    hv_now_iso8601(r->finished_at, sizeof r->finished_at);
    __atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
    hv_wake_notify();
    return NULL;
}

static bool engine_done(struct engine_run *r)
{
    return __atomic_load_n(&r->done, __ATOMIC_ACQUIRE) != 0;
}

/* Starts the engine thread with the shutdown signals blocked, so they
 * reach the main thread (the engine's own threads inherit the mask). */
static int engine_start(struct engine_run *r)
{
    sigset_t old;
    hv_signals_block(&old);
    r->t_start = hv_monotonic();
    hv_now_iso8601(r->started_at, sizeof r->started_at);
    int rc = pthread_create(&r->thread, NULL, engine_main, r);
    hv_signals_restore(&old);
    return rc;
}

static void engine_stop_and_join(struct engine_run *r)
{
    __atomic_store_n(&r->stop, 1, __ATOMIC_RELAXED);
    pthread_join(r->thread, NULL);
}

/* The headline (first) metric as "name = value unit", for the log. */
static void headline(const struct hv_engine_result *res, char *buf, size_t len)
{
    const json_t *m = json_array_get(res->metrics, 0);
    if (m == NULL) {
        snprintf(buf, len, "no metrics");
        return;
    }
    snprintf(buf, len, "%s = %.1f %s", json_string_value(json_object_get(m, "name")),
             json_number_value(json_object_get(m, "value")),
             json_string_value(json_object_get(m, "unit")));
}

/* Uploads body, retrying transport failures with the same attempt. */
static enum hv_job_outcome upload(struct hv_client *c, const struct hv_job *job, json_t *body)
{
    double gap = UPLOAD_FIRST_GAP;
    for (int i = 1; i <= UPLOAD_TRIES; i++) {
        enum hv_call call = hv_client_upload_result(c, job, body);
        if (call == HV_CALL_OK)
            return HV_JOB_UPLOADED;
        if (call == HV_CALL_STALE) {
            hv_warn("job %lld: result refused, the attempt is stale (%s)", job->id,
                    hv_client_last_error(c));
            return HV_JOB_ABANDONED;
        }
        if (call != HV_CALL_RETRY) {
            hv_error("job %lld: result refused: %s", job->id, hv_client_last_error(c));
            return HV_JOB_LOST;
        }
        hv_warn("job %lld: upload %d of %d failed: %s", job->id, i, UPLOAD_TRIES,
                hv_client_last_error(c));
        if (i < UPLOAD_TRIES) {
            hv_wake_wait(gap);
            gap *= 2;
        }
    }
    hv_error("job %lld: giving up on the upload; the lease will expire and the job be retried",
             job->id);
    return HV_JOB_LOST;
}

/* Builds and uploads the result of a finished run and logs the end. */
static enum hv_job_outcome finish(struct hv_client *c, const struct hv_job *job,
                                  struct engine_run *r)
{
    bool ok = r->rc == 0;
    json_t *body =
        hv_engine_result_to_json(&r->result, job->attempt, ok, r->started_at, r->finished_at);
    if (body == NULL) {
        hv_error("job %lld: out of memory building the result", job->id);
        return HV_JOB_LOST;
    }
    enum hv_job_outcome out = upload(c, job, body);
    json_decref(body);
    char main_metric[200];
    headline(&r->result, main_metric, sizeof main_metric);
    if (ok)
        hv_info("job %lld finished (plan %lld, workload %s) in %.1f s: %s%s", job->id, job->plan_id,
                job->workload_id, r->t_end - r->t_start, main_metric,
                out == HV_JOB_UPLOADED ? "" : " (not uploaded)");
    else
        hv_info("job %lld failed (plan %lld, workload %s) after %.1f s: %s%s", job->id,
                job->plan_id, job->workload_id, r->t_end - r->t_start, r->result.error,
                out == HV_JOB_UPLOADED ? "" : " (not uploaded)");
    return out;
}

static double heartbeat_interval(int lease_seconds)
{
    double s = lease_seconds / 3.0;
    return s < 1 ? 1 : s;
}

/* Heartbeats until the engine ends, the server withdraws the job or a
 * shutdown signal comes. Returns true when the engine ended on its own. */
static bool supervise(struct hv_client *c, const struct hv_job *job, struct engine_run *r,
                      enum hv_job_outcome *outcome)
{
    int lease = job->lease_seconds;
    double next = hv_monotonic() + heartbeat_interval(lease);
    bool failing = false;
    for (;;) {
        if (engine_done(r))
            return true;
        if (hv_shutdown_requested()) {
            engine_stop_and_join(r);
            enum hv_call call = hv_client_release(c, job, "worker shutting down");
            if (call == HV_CALL_OK)
                hv_info("job %lld released: worker shutting down", job->id);
            else
                hv_warn("job %lld: release failed (%s); its lease will expire", job->id,
                        hv_client_last_error(c));
            *outcome = HV_JOB_RELEASED;
            return false;
        }
        double now = hv_monotonic();
        if (now < next) {
            hv_wake_wait(next - now);
            continue;
        }
        bool cancel = false;
        enum hv_call call = hv_client_heartbeat(c, job, &cancel, &lease);
        if (call == HV_CALL_OK && cancel) {
            hv_info("job %lld cancelled by the server; stopping it", job->id);
        } else if (call == HV_CALL_STALE || call == HV_CALL_NOT_FOUND) {
            hv_warn("job %lld is no longer ours (%s); stopping it", job->id,
                    hv_client_last_error(c));
        } else {
            if (call != HV_CALL_OK && !failing)
                hv_warn("job %lld: heartbeat failed: %s; the job goes on", job->id,
                        hv_client_last_error(c));
            else if (call == HV_CALL_OK && failing)
                hv_info("job %lld: heartbeats get through again", job->id);
            failing = call != HV_CALL_OK;
            double gap = heartbeat_interval(lease);
            next = hv_monotonic() + (failing && gap > HEARTBEAT_RETRY ? HEARTBEAT_RETRY : gap);
            continue;
        }
        engine_stop_and_join(r);
        *outcome = HV_JOB_ABANDONED;
        return false;
    }
}

enum hv_job_outcome hv_job_run(struct hv_client *c, const struct hv_job *job)
{
    hv_info("job %lld started (plan %lld, workload %s: %s/%s, configuration %s, attempt %d)",
            job->id, job->plan_id, job->workload_id, job->kind, job->engine, job->configuration,
            job->attempt);
    struct engine_run r = {.engine = hv_engine_find(job->kind, job->engine)};
    r.ctx = (struct hv_engine_ctx){.params = job->params, .stop = &r.stop};
    if (hv_engine_result_init(&r.result) != 0) {
        hv_engine_result_clear(&r.result);
        hv_error("job %lld: out of memory", job->id);
        return HV_JOB_LOST;
    }
    enum hv_job_outcome outcome;
    if (r.engine == NULL) {
        /* Not ours to run: report it, so the plan shows why. */
        r.t_start = r.t_end = hv_monotonic();
        hv_now_iso8601(r.started_at, sizeof r.started_at);
        memcpy(r.finished_at, r.started_at, sizeof r.finished_at);
        r.rc = hv_engine_fail(&r.result, "this worker has no engine \"%s\" for kind \"%s\"",
                              job->engine, job->kind);
        outcome = finish(c, job, &r);
    } else if (engine_start(&r) != 0) {
        r.t_start = r.t_end = hv_monotonic();
        hv_now_iso8601(r.started_at, sizeof r.started_at);
        memcpy(r.finished_at, r.started_at, sizeof r.finished_at);
        r.rc = hv_engine_fail(&r.result, "cannot start the engine thread");
        outcome = finish(c, job, &r);
    } else if (supervise(c, job, &r, &outcome)) {
        pthread_join(r.thread, NULL);
        outcome = finish(c, job, &r);
    }
    hv_engine_result_clear(&r.result);
    return outcome;
}
