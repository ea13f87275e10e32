/* job.h — runs one claimed job from start to upload.
 *
 * A member of a group first passes the start barrier: it calls ready
 * (long polls that extend the lease) until the server names the group's
 * start_at, estimates the server's clock offset from the answers'
 * server_time (see clock.h), sleeps until start_at on the server's clock
 * and starts the engine; observed then records the group, start_at, the
 * clock estimate and the start skew achieved. A 409 at the barrier drops
 * the job (the server re-queues the group); a shutdown signal releases it.
 *
 * The engine runs in its own thread while the calling (main) thread
 * heartbeats the lease every lease_seconds / 3 and watches for shutdown.
 * A cancel or a lost lease stops the engine and drops the result; a
 * shutdown signal stops it and releases the job; otherwise the result is
 * delivered (deliver.h: fitted to the server's limits, kept on disk and
 * retried with the same attempt until the server answers; the server
 * stores it once). A job this worker has no engine for is reported
 * failed at once, before any barrier. */
#ifndef HV_WORKER_JOB_H
#define HV_WORKER_JOB_H

#include "worker/client.h"
#include "worker/virt/step.h"

/** How a job ended, from the worker's side. */
enum hv_job_outcome {
    HV_JOB_UPLOADED,  /**< the server has the result (status ok or error) */
    HV_JOB_ABANDONED, /**< cancelled by the server, the lease was lost or the
                           group was called off */
    HV_JOB_RELEASED,  /**< a shutdown signal came: the job went back (or
                           the release failed and the lease will expire) */
    HV_JOB_LOST,      /**< the upload did not get through (kept for the next start,
                           or undeliverable) */
};

/** Runs job with client c (used from this thread only). Logs the start
 *  and the end at info level. Returns how it ended. A job on its tuning
 *  plan's host (job->tuning) has the block's host levels read again under
 *  env->root when the engine ended: a level that moved fails the job, and
 *  observed.settings holds each one as read at the start and at the end.
 *  env may be NULL (nothing is read back). An engine that runs past
 *  hv_job_run_limit() is told to stop and the job fails saying so; one
 *  that then does not stop within 15 s fails the job and ends the
 *  process with status 70 (its thread cannot be joined). */
enum hv_job_outcome hv_job_run(struct hv_client *c, const struct hv_job *job,
                               const struct hv_step_env *env, double run_slack);

/** The default of the worker's --run-slack, in seconds. */
#define HV_JOB_RUN_SLACK 300.0

/** How long (seconds from its start) the engine of a job with these
 *  params may run: 3 × (warmup + seconds, or runtime) + run_slack (the
 *  worker's --run-slack); 0 when the params bound no time (no limit; a
 *  tool's own timeout applies). */
double hv_job_run_limit(const json_t *params, double run_slack);

#endif
