/* job.c — see job.h. */
#include "worker/job.h"

#include "log.h"
#include "params.h"
#include "timeutil.h"
#include "worker/clock.h"
#include "worker/deliver.h"
#include "worker/engines/engine.h"
#include "factors.h"
#include "fault.h"
#include "worker/interference.h"
#include "worker/virt/actuator.h"
#include "worker/virt/guestnic.h"
#include "worker/virt/procpin.h"
#include "worker/wake.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* How soon a failed heartbeat is tried again (at most; never later than
 * the regular interval). */
#define HEARTBEAT_RETRY 5.0
/* The ready long poll: at most this long, and at most half the lease (the
 * call extends the lease only when it starts and when it answers). */
#define READY_WAIT_MAX 25.0
/* Longest pause between ready calls that got no answer. */
#define READY_RETRY_MAX 5.0
/* A long poll answered faster than this was not held (a server that does
 * not long-poll): pause that long before the next call, never spin. */
#define LONG_POLL_MIN 1.0
/* Before a group starts, extra heartbeats sample the clock while the best
 * round trip is above CLOCK_GOOD_RTT, at most CLOCK_PROBES of them, and
 * only while more than CLOCK_PROBE_LEFT seconds remain before the start. */
#define CLOCK_PROBES     3
#define CLOCK_GOOD_RTT   0.002
#define CLOCK_PROBE_LEFT 0.25
/* The last stretch before the start is slept with clock_nanosleep on the
 * real-time clock rather than poll's millisecond timeout. */
#define START_PRECISE 0.005
/* No heartbeat this close to the start (its round trip would delay the
 * start); a heartbeat falling due then is sent once the engine runs,
 * still well inside the lease. */
#define START_GUARD 0.5
/* An engine may run at most RUN_LIMIT_FACTOR times the time its
 * parameters give (warm-up plus seconds or runtime) plus run_slack for
 * laying out files and starting tools; past that the job fails. One
 * that does not end within STOP_GRACE of being told to stop is stuck (an
 * I/O the device never completes): the job fails and the worker exits. */
#define RUN_LIMIT_FACTOR 3.0
#define STOP_GRACE       15.0
/* The worker's exit status when an engine thread cannot be stopped
 * (EX_SOFTWARE). */
#define EXIT_STUCK 70

/* One engine run in its own thread. */
struct engine_run {
    const struct hv_engine *engine;
    struct hv_engine_ctx ctx;
    struct hv_engine_result result;
    volatile sig_atomic_t stop;
    int rc;
    int done; /* set (atomically) by the engine thread as it ends */
    double t_start, t_end;
    double t_start_real; /* CLOCK_REALTIME at the start, for the start skew */
    char started_at[32], finished_at[32];
    json_t *observed;          /* the worker's own additions to result.observed */
    struct hv_process_pin pin; /* the job's process_pin level */
    json_t *nic_settings;      /* a guest's NIC levels as set before the engine (guestnic.h) */
    bool nic_failed;           /* they could not be set: the engine did not run */
    const char *proc_root;     /* a bare-metal job's host files (--sysfs-root), else NULL */
    struct hv_interference_mark mark0; /* the host's counters as the engine started */
    pthread_t thread;
};

static void *engine_main(void *arg)
{
    struct engine_run *r = arg;
    hv_fault("engine.run");
    if (hv_process_pin_enter(&r->pin) != 0) {
        snprintf(r->result.error, sizeof r->result.error, "%s", r->pin.error);
        r->rc = -1;
    } else {
        r->rc = r->engine->run(r->engine, &r->ctx, &r->result);
    }
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
    hv_now_iso8601(r->started_at, sizeof r->started_at);
    r->t_start = hv_monotonic();
    r->t_start_real = hv_realtime();
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

/* Delivers body (deliver.h) and says what that means for the job. */
static enum hv_job_outcome upload(struct hv_client *c, const struct hv_job *job, json_t *body)
{
    switch (hv_deliver(c, job->id, job->attempt, body)) {
    case HV_DELIVERED:
    case HV_REFUSED:
        return HV_JOB_UPLOADED;
    case HV_STALE:
        return HV_JOB_ABANDONED;
    case HV_UNDELIVERABLE:
    case HV_KEPT:
    case HV_LOST:
        break;
    }
    return HV_JOB_LOST;
}

/* The levels of a job on its tuning plan's host that the block's apply
 * step read back (process_pin is the job's own: procpin.c), as a new
 * object factor → level; NULL when there are none. Guest factors are read
 * on the plan's guests' domains (the claim's tuning.domains), host ones on
 * the host. */
static json_t *host_levels(const struct hv_job *job)
{
    const json_t *start = json_object_get(job->tuning, "settings");
    if (!json_is_object(job->levels) || !json_is_object(start))
        return NULL;
    json_t *levels = json_object();
    const char *f;
    json_t *level;
    json_object_foreach((json_t *)job->levels, f, level)
    {
        const struct hv_factor_def *d = hv_factor_find(f);
        bool here = d != NULL && strcmp(f, "process_pin") != 0 &&
                    (d->scope == HV_SCOPE_HOST ||
                     json_array_size(json_object_get(job->tuning, "domains")) > 0);
        if ((here || hv_site_factor_is(f)) &&
            json_is_string(json_object_get(json_object_get(start, f), "read_back")))
            json_object_set(levels, f, level);
    }
    if (json_object_size(levels) == 0) {
        json_decref(levels);
        return NULL;
    }
    return levels;
}

/* Reads the block's levels again now that the engine ended: each goes
 * to observed.settings as {"level", "start" (the apply step's reading),
 * "end" (this one), "read_back" (the same), "source"}, and a level that no
 * longer reads back fails the job, naming the factor, the level expected
 * and the value read. */
static void check_settings(const struct hv_job *job, const struct hv_step_env *env,
                           struct engine_run *r)
{
    json_t *levels = env != NULL ? host_levels(job) : NULL;
    if (levels == NULL || !json_is_object(r->result.observed)) {
        json_decref(levels);
        return;
    }
    const json_t *start = json_object_get(job->tuning, "settings");
    struct hv_act_ctx ctx = {.root = env->root,
                             .libvirt_uri = env->libvirt_uri,
                             .disk = json_string_value(json_object_get(job->tuning, "disk")),
                             .nic = json_string_value(json_object_get(job->tuning, "nic")),
                             .domains = json_object_get(job->tuning, "domains"),
                             .plan_id = job->plan_id};
    json_t *end = NULL;
    char err[4096] = "";
    int rc = hv_actuators_read_back(levels, &ctx, &end, err, sizeof err);
    hv_act_ctx_release(&ctx);
    json_t *settings = json_object_get(r->result.observed, "settings");
    if (!json_is_object(settings)) {
        settings = json_object();
        json_object_set_new(r->result.observed, "settings", settings);
    }
    const char *f;
    json_t *level;
    json_object_foreach(levels, f, level)
    {
        const json_t *e = json_object_get(end, f);
        json_t *now = json_object_get(e, "read_back");
        json_object_set_new(settings, f,
                            json_pack("{s:O, s:O, s:O?, s:O?, s:O?}", "level", level, "start",
                                      json_object_get(json_object_get(start, f), "read_back"),
                                      "end", now, "read_back", now, "source",
                                      json_object_get(e, "source")));
    }
    json_decref(end);
    json_decref(levels);
    if (rc != 0) {
        hv_warn("job %lld: a setting changed under the job: %s", job->id, err);
        if (r->rc == 0 || r->result.error[0] == '\0')
            snprintf(r->result.error, sizeof r->result.error, "a setting changed under the job: %s",
                     err);
        r->rc = -1;
    }
}

/* A guest's NIC levels (net_queues, guest_mtu) read again now that the
 * job ended, into observed.settings like the host's levels; a level that
 * moved fails the job. */
static void check_guest_nic(const struct hv_job *job, const struct hv_step_env *env,
                            struct engine_run *r)
{
    if (r->nic_settings == NULL || !json_is_object(r->result.observed))
        return;
    char err[2048] = "";
    int rc = r->nic_failed
                 ? 0
                 : hv_guest_nic_check(env->root, env->guest_nic, r->nic_settings, err, sizeof err);
    json_t *settings = json_object_get(r->result.observed, "settings");
    if (!json_is_object(settings)) {
        settings = json_object();
        json_object_set_new(r->result.observed, "settings", settings);
    }
    json_object_update(settings, r->nic_settings);
    if (rc != 0) {
        hv_warn("job %lld: a setting changed under the job: %s", job->id, err);
        if (r->rc == 0 || r->result.error[0] == '\0')
            snprintf(r->result.error, sizeof r->result.error, "a setting changed under the job: %s",
                     err);
        r->rc = -1;
    }
}

/* Builds and uploads the result of a finished run and logs the end. */
static enum hv_job_outcome finish(struct hv_client *c, const struct hv_job *job,
                                  struct engine_run *r, const struct hv_step_env *env)
{
    check_settings(job, env, r);
    bool ok = r->rc == 0;
    if (r->observed != NULL)
        json_object_update(r->result.observed, r->observed);
    check_guest_nic(job, env, r);
    hv_process_pin_observe(&r->pin, r->result.observed);
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

/* Gives the job back because the worker is shutting down. */
static enum hv_job_outcome release_job(struct hv_client *c, const struct hv_job *job)
{
    enum hv_call call = hv_client_release(c, job, "worker shutting down");
    if (call == HV_CALL_OK)
        hv_info("job %lld released: worker shutting down", job->id);
    else
        hv_warn("job %lld: release failed (%s); its lease will expire", job->id,
                hv_client_last_error(c));
    return HV_JOB_RELEASED;
}

double hv_job_run_limit(const json_t *params, double run_slack)
{
    double t = hv_params_num(params, "seconds");
    if (!(t > 0))
        t = hv_params_num(params, "runtime");
    if (!(t > 0))
        return 0;
    double w = hv_params_num(params, "warmup");
    return RUN_LIMIT_FACTOR * (t + (w > 0 ? w : 0)) + run_slack;
}

/* How supervise() ended. */
enum supervised {
    RUN_ENDED, /* the engine ended on its own (or was stopped at its limit: rc, error say) */
    RUN_OUT,   /* the job is gone (cancelled, lease lost, shutdown): *outcome says how */
    RUN_STUCK, /* past its limit the engine did not stop: r is still the engine's */
};

/* Tells the engine to stop after it ran past limit; waits STOP_GRACE for
 * it. Returns RUN_ENDED with the job's error saying why, or RUN_STUCK. */
static enum supervised stop_overrun(const struct hv_job *job, struct engine_run *r, double limit,
                                    double run_slack)
{
    hv_warn("job %lld: the engine has run %.0f s, past its limit of %.0f s; stopping it", job->id,
            hv_monotonic() - r->t_start, limit);
    __atomic_store_n(&r->stop, 1, __ATOMIC_RELAXED);
    double until = hv_monotonic() + STOP_GRACE;
    while (!engine_done(r) && hv_monotonic() < until)
        hv_wake_wait(0.5);
    if (!engine_done(r))
        return RUN_STUCK;
    pthread_join(r->thread, NULL);
    /* The engine's own error, if any, after the reason. */
    char msg[sizeof r->result.error + 200];
    snprintf(msg, sizeof msg,
             "the engine ran past its limit of %.0f s (%.0f times its parameters' time plus "
             "%.0f s) and was stopped%s%s",
             limit, RUN_LIMIT_FACTOR, run_slack, r->result.error[0] ? ": " : "", r->result.error);
    size_t n = strnlen(msg, sizeof r->result.error - 1);
    memcpy(r->result.error, msg, n);
    r->result.error[n] = '\0';
    r->rc = -1;
    return RUN_ENDED;
}

/* Heartbeats until the engine ends, passes its limit (hv_job_run_limit
 * with run_slack), the server withdraws the job or a shutdown signal
 * comes; the lease was last extended at last_extend (monotonic). */
static enum supervised supervise(struct hv_client *c, const struct hv_job *job,
                                 struct engine_run *r, struct hv_clock *clock, double last_extend,
                                 double run_slack, enum hv_job_outcome *outcome)
{
    int lease = job->lease_seconds;
    double next = last_extend + heartbeat_interval(lease);
    double limit = hv_job_run_limit(job->params, run_slack);
    bool failing = false;
    for (;;) {
        if (engine_done(r)) {
            pthread_join(r->thread, NULL);
            return RUN_ENDED;
        }
        if (hv_shutdown_requested()) {
            engine_stop_and_join(r);
            *outcome = release_job(c, job);
            return RUN_OUT;
        }
        double now = hv_monotonic();
        if (limit > 0 && now - r->t_start >= limit)
            return stop_overrun(job, r, limit, run_slack);
        if (now < next) {
            double wait = next - now;
            if (limit > 0 && r->t_start + limit - now < wait)
                wait = r->t_start + limit - now;
            hv_wake_wait(wait);
            continue;
        }
        bool cancel = false;
        enum hv_call call = hv_client_heartbeat(c, job, &cancel, &lease, clock);
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
        return RUN_OUT;
    }
}

/* How a group's start barrier ended. */
enum barrier {
    BARRIER_GO,   /* start the engine now */
    BARRIER_OUT,  /* the job is gone (released, cancelled, stale): *outcome says how */
    BARRIER_FAIL, /* the server refused the protocol: fail the job with error */
};

/* A group member's way to its start. */
struct group_start {
    json_t *endpoint;   /* where this member listens ({"host","port"}), or NULL */
    json_t *endpoints;  /* the last ready answer's endpoints, or NULL */
    char start_at[40];  /* as the server wrote it */
    double start_srv;   /* start_at in seconds since the epoch, server clock */
    double last_extend; /* monotonic time the lease was last extended */
    char error[512];
};

/* A heartbeat while waiting for the start. Returns BARRIER_GO to go on
 * (also when it got no answer: the lease may still hold), BARRIER_OUT with
 * *outcome when the server withdrew the job. */
static enum barrier barrier_heartbeat(struct hv_client *c, const struct hv_job *job,
                                      struct hv_clock *clock, struct group_start *g,
                                      enum hv_job_outcome *outcome)
{
    bool cancel = false;
    int lease = job->lease_seconds;
    double t0 = hv_monotonic();
    enum hv_call call = hv_client_heartbeat(c, job, &cancel, &lease, clock);
    if (call == HV_CALL_OK && cancel) {
        hv_info("job %lld cancelled by the server before its start", job->id);
    } else if (call == HV_CALL_STALE || call == HV_CALL_NOT_FOUND) {
        hv_warn("job %lld is no longer ours (%s); dropping it", job->id, hv_client_last_error(c));
    } else {
        if (call == HV_CALL_OK)
            g->last_extend = t0;
        else
            hv_debug("job %lld: heartbeat failed: %s", job->id, hv_client_last_error(c));
        return BARRIER_GO;
    }
    *outcome = HV_JOB_ABANDONED;
    return BARRIER_OUT;
}

/* Calls ready until the server names the group's start time. Each call
 * extends the lease and samples the clock. */
static enum barrier await_group(struct hv_client *c, const struct hv_job *job,
                                struct hv_clock *clock, struct group_start *g,
                                enum hv_job_outcome *outcome)
{
    double wait = job->lease_seconds / 2.0;
    if (wait > READY_WAIT_MAX)
        wait = READY_WAIT_MAX;
    double gap = 0;
    int last_ready = -1;
    for (;;) {
        if (hv_shutdown_requested()) {
            *outcome = release_job(c, job);
            return BARRIER_OUT;
        }
        double t0 = hv_monotonic();
        int ready = 0;
        enum hv_call call = hv_client_ready(c, job, wait, g->endpoint, clock, g->start_at,
                                            sizeof g->start_at, &ready, &g->endpoints);
        if (call == HV_CALL_OK) {
            g->last_extend = t0;
            if (gap > 0)
                hv_info("job %lld: ready calls get through again", job->id);
            gap = 0;
            if (g->start_at[0] != '\0' && hv_iso8601_parse(g->start_at, &g->start_srv) == 0)
                return BARRIER_GO;
            if (ready != last_ready)
                hv_debug("job %lld: %d of %d members of group %lld ready", job->id, ready,
                         job->group_size, job->group_id);
            last_ready = ready;
            if (hv_monotonic() - t0 < LONG_POLL_MIN)
                hv_wake_wait(LONG_POLL_MIN);
            continue;
        }
        if (hv_shutdown_requested())
            continue; /* the long poll was aborted: release above */
        if (call == HV_CALL_STALE || call == HV_CALL_NOT_FOUND) {
            hv_warn("job %lld: group %lld was called off or the attempt is stale (%s); dropping "
                    "the job",
                    job->id, job->group_id, hv_client_last_error(c));
            *outcome = HV_JOB_ABANDONED;
            return BARRIER_OUT;
        }
        if (call != HV_CALL_RETRY) {
            snprintf(g->error, sizeof g->error, "the server refused the ready call: %s",
                     hv_client_last_error(c));
            return BARRIER_FAIL;
        }
        if (gap == 0)
            hv_warn("job %lld: ready call failed: %s; retrying", job->id, hv_client_last_error(c));
        gap = gap == 0 ? 1 : gap * 2 > READY_RETRY_MAX ? READY_RETRY_MAX : gap * 2;
        hv_wake_wait(gap);
    }
}

/* Sleeps until g->start_srv on the server's clock (by the estimate),
 * heartbeating if the wait is long and waking for a shutdown signal.
 * Samples the clock a few more times first when the estimate is coarse
 * (the ready answers were held, so their round trips are long). */
static enum barrier wait_for_start(struct hv_client *c, const struct hv_job *job,
                                   struct hv_clock *clock, struct group_start *g,
                                   enum hv_job_outcome *outcome)
{
    for (int i = 0; i < CLOCK_PROBES && (!clock->valid || clock->rtt > CLOCK_GOOD_RTT); i++) {
        if (g->start_srv - hv_clock_server_now(clock) < CLOCK_PROBE_LEFT || hv_shutdown_requested())
            break;
        if (barrier_heartbeat(c, job, clock, g, outcome) != BARRIER_GO)
            return BARRIER_OUT;
    }
    for (;;) {
        if (hv_shutdown_requested()) {
            *outcome = release_job(c, job);
            return BARRIER_OUT;
        }
        double left = g->start_srv - hv_clock_server_now(clock);
        if (left <= START_PRECISE)
            break;
        double now = hv_monotonic();
        double due = g->last_extend + heartbeat_interval(job->lease_seconds);
        if (left <= START_GUARD)
            due = INFINITY;
        if (now >= due) {
            if (barrier_heartbeat(c, job, clock, g, outcome) != BARRIER_GO)
                return BARRIER_OUT;
            if (g->last_extend < now) /* failed: try again soon */
                g->last_extend = now - heartbeat_interval(job->lease_seconds) + HEARTBEAT_RETRY;
            continue;
        }
        double nap = left - START_PRECISE;
        hv_wake_wait(due - now < nap ? due - now : nap);
    }
    double target = g->start_srv - (clock->valid ? clock->offset : 0);
    if (hv_realtime() < target) {
        double whole = floor(target);
        long ns = (long)((target - whole) * 1e9);
        struct timespec ts = {.tv_sec = (time_t)whole, .tv_nsec = ns > 999999999 ? 999999999 : ns};
        while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
    }
    return BARRIER_GO;
}

/* What the worker adds to the result's observed for a job: its role and
 * group. NULL when memory runs out. */
static json_t *job_observed(const struct hv_job *job)
{
    json_t *o = json_object();
    if (o == NULL)
        return NULL;
    json_t *role = job->role != NULL ? json_string(job->role) : json_null();
    if (job->role != NULL)
        json_object_set(o, "role", role);
    if (job->group_id != 0)
        json_object_set_new(o, "group",
                            json_pack("{s:I, s:i, s:O}", "id", (json_int_t)job->group_id, "size",
                                      job->group_size, "role", role));
    json_decref(role);
    return o;
}

/* Notes how well a group member hit its start: start_at, the clock
 * estimate used and the skew of the actual start on the server's clock. */
static void note_start(const struct hv_job *job, struct engine_run *r, const struct hv_clock *clock,
                       const struct group_start *g)
{
    double offset = clock->valid ? clock->offset : 0;
    double skew_ms = (r->t_start_real + offset - g->start_srv) * 1000;
    json_object_set_new(r->observed, "start_at", json_string(g->start_at));
    json_object_set_new(r->observed, "clock_offset_ms",
                        clock->valid ? json_real(round(clock->offset * 1e4) / 10) : json_null());
    json_object_set_new(r->observed, "clock_rtt_ms",
                        clock->valid ? json_real(round(clock->rtt * 1e4) / 10) : json_null());
    json_object_set_new(r->observed, "start_skew_ms", json_real(round(skew_ms * 1000) / 1000));
    if (clock->valid)
        hv_info("job %lld: group %lld started at %s, skew %+.3f ms (clock offset %+.1f ms, "
                "round trip %.1f ms)",
                job->id, job->group_id, g->start_at, skew_ms, clock->offset * 1000,
                clock->rtt * 1000);
    else
        hv_warn("job %lld: group %lld started at %s by the local clock (the server sent no "
                "server_time), skew %+.3f ms",
                job->id, job->group_id, g->start_at, skew_ms);
}

/* Adds to a bare-metal job's observed what else ran on the host while its
 * engine ran (interference.h), from the mark taken as it started to now
 * that its thread, and with it every tool it ran, has ended. Logged when
 * the host was busy; nothing is added when the counters cannot be read. */
static void note_interference(const struct hv_job *job, struct engine_run *r)
{
    if (r->proc_root == NULL)
        return;
    struct hv_interference_mark end;
    hv_interference_mark(r->proc_root, &end);
    json_t *in = hv_interference_json(&r->mark0, &end);
    if (in == NULL)
        return;
    if (json_is_true(json_object_get(in, "busy")))
        hv_warn("job %lld: the host was busy with other work while it ran (others %.1f %% of its "
                "CPU time, steal %.1f %%)",
                job->id, json_number_value(json_object_get(in, "others_cpu_pct")),
                json_number_value(json_object_get(in, "steal_pct")));
    json_object_set_new(r->observed, "interference", in);
}

/* For the server side of a two-sided workload: lets the engine start
 * listening and builds the endpoint the ready calls announce, filling in
 * this worker's own address when the engine left the host empty. Returns
 * 0 (g->endpoint set, and noted in observed), or -1 with why set (nothing
 * left prepared). */
static int prepare_server(struct hv_client *c, const struct hv_job *job, struct engine_run *r,
                          struct group_start *g, char *why, size_t len)
{
    struct hv_endpoint ep = {0};
    if (r->engine->prepare(r->engine, &r->ctx, &ep, &r->result) != 0) {
        snprintf(why, len, "%s", r->result.error[0] ? r->result.error : "the engine cannot listen");
        return -1;
    }
    if (ep.host[0] == '\0' && hv_client_local_address(c, ep.host, sizeof ep.host) != 0) {
        snprintf(why, len, "cannot tell the address the clients should connect to: %s", ep.host);
        if (r->engine->unprepare != NULL)
            r->engine->unprepare(r->engine, &r->ctx);
        return -1;
    }
    g->endpoint = json_pack("{s:s, s:i}", "host", ep.host, "port", ep.port);
    if (g->endpoint == NULL) {
        snprintf(why, len, "out of memory");
        if (r->engine->unprepare != NULL)
            r->engine->unprepare(r->engine, &r->ctx);
        return -1;
    }
    json_object_set(r->observed, "endpoint", g->endpoint);
    hv_info("job %lld: listening on %s port %d for the group's clients", job->id, ep.host, ep.port);
    return 0;
}

/* Releases what prepare_server() left when the engine will not run. */
static void unprepare_server(struct engine_run *r, const struct group_start *g)
{
    if (g->endpoint != NULL && r->engine->unprepare != NULL)
        r->engine->unprepare(r->engine, &r->ctx);
}

/* Fails the job without running the engine. */
static void fail_now(struct engine_run *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void fail_now(struct engine_run *r, const char *fmt, ...)
{
    r->t_start = r->t_end = hv_monotonic();
    hv_now_iso8601(r->started_at, sizeof r->started_at);
    memcpy(r->finished_at, r->started_at, sizeof r->finished_at);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->result.error, sizeof r->result.error, fmt, ap);
    va_end(ap);
    r->rc = -1;
}

/* The engine of r did not stop: fails the job with a result of its own
 * (r's result is still the engine thread's) and ends the worker, which
 * cannot join that thread; its supervisor starts it again. */
static _Noreturn void fail_stuck(struct hv_client *c, const struct hv_job *job,
                                 struct engine_run *r, const struct hv_step_env *env, double limit)
{
    struct engine_run f = {.t_start = r->t_start, .pin = r->pin};
    memcpy(f.started_at, r->started_at, sizeof f.started_at);
    f.observed = json_incref(r->observed);
    if (hv_engine_result_init(&f.result) == 0) {
        fail_now(&f,
                 "the engine ran past its limit of %.0f s and did not stop within %.0f s of "
                 "being told to (an I/O or a call that never returns); the worker exits",
                 limit, STOP_GRACE);
        memcpy(f.started_at, r->started_at, sizeof f.started_at);
        f.t_end = hv_monotonic();
        finish(c, job, &f, env);
    }
    hv_error("job %lld: the engine thread cannot be stopped; the worker exits (status %d)", job->id,
             EXIT_STUCK);
    _exit(EXIT_STUCK);
}

enum hv_job_outcome hv_job_run(struct hv_client *c, const struct hv_job *job,
                               const struct hv_step_env *env, double run_slack)
{
    char group[96] = "";
    if (job->group_id != 0)
        snprintf(group, sizeof group, ", group %lld of %d%s%s", job->group_id, job->group_size,
                 job->role ? " as " : "", job->role ? job->role : "");
    else if (job->role != NULL)
        snprintf(group, sizeof group, ", as %s", job->role);
    hv_info("job %lld started (plan %lld, workload %s: %s/%s, configuration %s, attempt %d%s)",
            job->id, job->plan_id, job->workload_id, job->kind, job->engine, job->configuration,
            job->attempt, group);
    struct engine_run r = {.engine = hv_engine_find(job->kind, job->engine)};
    hv_process_pin_begin(&r.pin, job->levels, job->kind, job->engine, job->params);
    r.ctx = (struct hv_engine_ctx){.params = hv_process_pin_params(&r.pin),
                                   .stop = &r.stop,
                                   .role = job->role,
                                   .peer = job->peer,
                                   .job_id = job->id,
                                   .group_size = job->group_size};
    r.observed = job_observed(job);
    r.proc_root = env != NULL && !env->guest ? env->root : NULL;
    if (hv_engine_result_init(&r.result) != 0 || r.observed == NULL) {
        hv_engine_result_clear(&r.result);
        json_decref(r.observed);
        hv_process_pin_end(&r.pin);
        hv_error("job %lld: out of memory", job->id);
        return HV_JOB_LOST;
    }
    struct hv_clock clock = job->clock;
    double last_extend = hv_monotonic(); /* the claim leased it just now */
    enum hv_job_outcome outcome;
    if (r.engine != NULL && env != NULL && env->guest && hv_guest_nic_wanted(job->levels)) {
        char err[2048];
        if (hv_guest_nic_apply(job->levels, env->root, env->guest_nic, &r.nic_settings, err,
                               sizeof err) != 0) {
            fail_now(&r, "the guest's NIC cannot be set to the configuration's levels: %s", err);
            r.nic_failed = true;
        } else {
            char *text = json_dumps(r.nic_settings, JSON_COMPACT);
            hv_info("job %lld: the guest's NIC is set: %s", job->id, text ? text : "");
            free(text);
        }
    }
    if (r.engine == NULL || r.nic_failed) {
        /* Not ours to run: report it, so the plan shows why (a group
         * member fails its group at once rather than after the barrier). */
        if (!r.nic_failed)
            fail_now(&r, "this worker has no engine \"%s\" for kind \"%s\"", job->engine,
                     job->kind);
        outcome = finish(c, job, &r, env);
    } else {
        struct group_start g = {.last_extend = last_extend};
        enum barrier b = BARRIER_GO;
        bool server = job->role != NULL && strcmp(job->role, "server") == 0;
        if (server && r.engine->prepare != NULL &&
            prepare_server(c, job, &r, &g, g.error, sizeof g.error) != 0)
            b = BARRIER_FAIL; /* before the barrier: the group fails with it */
        if (b == BARRIER_GO && job->group_id != 0) {
            hv_info("job %lld: waiting for the %d members of group %lld to be ready", job->id,
                    job->group_size, job->group_id);
            b = await_group(c, job, &clock, &g, &outcome);
            if (b == BARRIER_GO)
                b = wait_for_start(c, job, &clock, &g, &outcome);
            last_extend = g.last_extend;
        }
        r.ctx.endpoints = g.endpoints;
        if (b == BARRIER_FAIL) {
            unprepare_server(&r, &g);
            fail_now(&r, "%s", g.error);
            outcome = finish(c, job, &r, env);
        } else if (b == BARRIER_OUT) {
            /* outcome set by the barrier */
            unprepare_server(&r, &g);
        } else if (engine_start(&r) != 0) {
            unprepare_server(&r, &g);
            fail_now(&r, "cannot start the engine thread");
            outcome = finish(c, job, &r, env);
        } else {
            /* From here the engine's run() owns what prepare() left. */
            if (r.proc_root != NULL)
                hv_interference_mark(r.proc_root, &r.mark0);
            if (job->group_id != 0)
                note_start(job, &r, &clock, &g);
            enum supervised how = supervise(c, job, &r, &clock, last_extend, run_slack, &outcome);
            if (how == RUN_STUCK)
                fail_stuck(c, job, &r, env, hv_job_run_limit(job->params, run_slack));
            if (how == RUN_ENDED) {
                note_interference(job, &r);
                outcome = finish(c, job, &r, env);
            }
        }
        json_decref(g.endpoint);
        json_decref(g.endpoints);
    }
    hv_engine_result_clear(&r.result);
    json_decref(r.observed);
    json_decref(r.nic_settings);
    hv_process_pin_end(&r.pin);
    return outcome;
}
