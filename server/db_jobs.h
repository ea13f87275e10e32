/* db_jobs.h — the job queue: claims (db_job_claim.c), leases, sweeps,
 * releases and group barriers (db_job_lease.c) and results
 * (db_job_result.c). Reads of jobs: db_plans.h. */
#ifndef HV_SERVER_DB_JOBS_H
#define HV_SERVER_DB_JOBS_H

#include "db.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/** Puts running jobs whose lease expired back in the queue (or fails them
 *  after max_failures) and returns how many changed in *n. A worker that
 *  held one and was not seen for lease_s seconds (the server's lease) is
 *  lost: its plans wait for it (migrations/050, hv_worker_lost). Run when
 *  hv_db_sweeps_due() (db_steps.h) says a lease ran out. */
enum hv_db_status hv_db_leases_expire(int lease_s, long *n);

/** Runs the sweeps that are due (db_steps.h): expires leases when
 *  leases_due (logging the jobs whose lease ran out), ticks the steps when
 *  tick_due; lease_s is the server's lease (hv_db_leases_expire()). */
enum hv_db_status hv_db_sweeps_run(bool leases_due, bool tick_due, int lease_s);

/** Runs what a claim of target_id does before it looks (db_steps.h): the
 *  sweeps hv_db_sweeps_due() says are due, logging the jobs whose lease
 *  ran out. *steps says whether the claim should look for a step first
 *  (the target has one queued, or the tick may have queued one). */
enum hv_db_status hv_db_claim_sweeps(int64_t target_id, int lease_s, bool *steps);

/** Claims the next queued job of target_id for worker_id (recorded in
 *  job_claims: only that worker may touch the attempt), leasing it for
 *  lease_s seconds, in one statement (FOR UPDATE SKIP LOCKED: no two callers get
 *  the same job). *job is a new JSON object {id, attempt, plan_id,
 *  configuration, workload}; HV_DB_NONE when there is no work. */
enum hv_db_status hv_db_job_claim(int64_t target_id, int64_t worker_id, int lease_s, json_t **job);

/** What a claim in a batch came to. */
enum hv_claim_outcome {
    HV_CLAIM_JOB = 1, /**< a job was claimed: hv_claim_entry.job */
    HV_CLAIM_NONE,    /**< nothing queued for the target */
    HV_CLAIM_SINGLE,  /**< left to hv_db_job_claim() (guests, steps, shared plans) */
};

/** One worker's claim in a batch. */
struct hv_claim_entry {
    int64_t target_id;
    int64_t worker_id;
    enum hv_claim_outcome outcome; /**< set by hv_db_job_claim_many() */
    json_t *job;                   /**< with HV_CLAIM_JOB: the job, owned by the caller */
};

/** The most entries hv_db_job_claim_many() takes at once. */
#define HV_CLAIM_MANY_MAX 64

/** Claims for n workers in one statement, each as hv_db_job_claim()
 *  would for its own target, where that claim needs nothing but the
 *  target's queue: the rest (a guest's target, a target with a step
 *  queued, jobs of plans on several targets, an ended worker) gets
 *  HV_CLAIM_SINGLE, for hv_db_job_claim(). On a failure every entry has
 *  HV_CLAIM_SINGLE and no job was claimed. The same statement asks
 *  whether the sweeps are due (hv_db_sweeps_due()'s *leases and *tick):
 *  the caller runs them after (hv_db_sweeps_run()), and an entry that got
 *  no job then claims alone, after them. */
enum hv_db_status hv_db_job_claim_many(struct hv_claim_entry *e, size_t n, int lease_s,
                                       bool *leases_due, bool *tick_due);

/** Extends the lease of (id, attempt) while it is running; *cancel tells
 *  whether its plan was cancelled. HV_DB_NONE when the attempt is stale. */
enum hv_db_status hv_db_job_heartbeat(int64_t id, int attempt, int lease_s, bool *cancel);

/** Puts (id, attempt) back in the queue without counting a failure, with
 *  the running members of its group (whose start can no longer happen).
 *  HV_DB_NONE when the attempt is stale. */
enum hv_db_status hv_db_job_release(int64_t id, int attempt, const char *reason);

/** Where a group stands after a member reported ready. */
struct hv_group_state {
    int64_t group_id;
    int size;          /**< members */
    int ready;         /**< members running and ready */
    char start_at[32]; /**< ISO 8601 UTC, "" until every member is ready */
    json_t *endpoints; /**< members' announced endpoints (owned; may be NULL) */
};

/** Marks (id, attempt) ready in its group, records the endpoint it
 *  announces (JSON text {"host","port"}, or NULL) and extends its lease;
 *  when it is the last member, sets the group's start time delay seconds
 *  from now and notifies the waiting members. out->endpoints lists the
 *  members' endpoints (free it with json_decref). HV_DB_NONE when the
 *  attempt is stale or the job has no group. */
enum hv_db_status hv_db_job_ready(int64_t id, int attempt, int lease_s, double delay,
                                  const char *endpoint_json, struct hv_group_state *out);

/** A result upload, validated by the handler. Strings may be NULL. */
struct hv_result_upload {
    int64_t job_id;
    int attempt;
    int64_t worker_id;  /**< the caller: only the attempt's claimer stores */
    const char *status; /**< "ok" or "error" */
    const char *error;
    const char *started_at, *finished_at;
    const json_t *metrics; /**< array of {name, value, unit, higher_is_better} */
    const json_t *samples; /**< array of {metric, t, value} */
    const json_t *observed;
    const char *raw;
};

/** What storing a result came to. */
struct hv_result_stored {
    int64_t result_id;
    bool replayed;    /**< this (job, attempt) was stored before: nothing written */
    bool not_claimer; /**< the caller did not claim this attempt: nothing written */
};

/** Stores a result in one transaction (result, metrics, samples by COPY,
 *  job state), once the job's row, locked, says that u->worker_id claimed
 *  this attempt (out->not_claimer otherwise, with HV_DB_CONFLICT).
 *  HV_DB_NONE when the job does not exist, HV_DB_CONFLICT when the attempt
 *  is stale. */
enum hv_db_status hv_db_result_store(const struct hv_result_upload *u,
                                     struct hv_result_stored *out);

/** A result handed to hv_db_result_store_many(): the upload (its strings
 *  and JSON point into doc), and what came of it. */
struct hv_result_item {
    struct hv_result_upload u;
    json_t *doc;                    /**< the body u points into (owned) */
    enum hv_db_status status;       /**< what hv_db_result_store() would return */
    struct hv_result_stored stored; /**< and what it would say */
    bool single;                    /**< not handled: store it with hv_db_result_store() */
};

/** Stores the results of n items (at most HV_CLAIM_MANY_MAX, none with
 *  samples) in one transaction: their jobs' rows locked in ascending id
 *  order, then the results and metrics in one statement and the jobs'
 *  ends in another, sent with the COMMIT when no job needs more (a failed
 *  group member, a round to decide; a plan is decided once). Each item's
 *  status and stored say what hv_db_result_store() would have said for it
 *  alone. A second upload of
 *  a job in the same batch, and every item when the transaction fails
 *  (nothing is written then; the return says why), have single set. */
enum hv_db_status hv_db_result_store_many(struct hv_result_item *const *items, size_t n);

/** Frees a struct hv_result_item and its doc (for req->batch_item_free). */
void hv_result_item_free(void *item);

#endif
