/* db_plans.h — plans, their configurations, groups and jobs. Stored in
 * db_plan_create.c, read in db_plan_read.c (a plan's owner too),
 * cancelled in db_plan_cancel.c, locked in db_plan_lock.c; a report's
 * inputs in db_plan_report.c; a plan's jobs, one job and its results in
 * db_job_read.c. */
#ifndef HV_SERVER_DB_PLANS_H
#define HV_SERVER_DB_PLANS_H

#include "db.h"
#include "plan.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Takes plan id's lock (hv_plan_lock, migrations/045) for the rest of
 *  the transaction on db: whoever changes a plan's state or decides from
 *  it takes this first, before any row lock of the plan. */
enum hv_db_status hv_db_plan_lock(struct hv_db *db, const char *id);

/** A plan to store, with where it came from. */
struct hv_plan_submit {
    const struct hv_plan *plan;
    const struct hv_expansion *x;
    int64_t token_id;        /**< the submitting token */
    const char *idem_key;    /**< Idempotency-Key, or NULL */
    const char *body_sha256; /**< hex digest of the request body */
};

/** Stores the plan, its configurations, groups and jobs in one transaction;
 *  *id is the plan's id. With an idempotency key already used by the same
 *  token for the same body, stores nothing, sets *replayed and returns the
 *  first plan's id; for another body returns HV_DB_CONFLICT. */
enum hv_db_status hv_db_plan_create(const struct hv_plan_submit *s, int64_t *id, bool *replayed);

/** A fleet plan to store (lib/plan_fleet.h): the parent's normalised
 *  document and seed, and one parsed plan with its expansion per host. */
struct hv_fleet_submit {
    const json_t *doc;
    uint64_t seed;
    int max_parallel; /**< max_parallel_hosts, 0: every child at once */
    size_t n;
    const struct hv_plan *plans;
    const struct hv_expansion *xs;
    int64_t token_id;
    const char *idem_key;
    const char *body_sha256;
};

/** Stores a fleet plan in one transaction: the parent (no jobs of its
 *  own) and its children, each as hv_db_plan_create() stores a plan, with
 *  parent_id set; *id is the parent's. Idempotency keys as there. */
enum hv_db_status hv_db_fleet_create(const struct hv_fleet_submit *f, int64_t *id, bool *replayed);

/** The summary of plan id as a new JSON object in *out (see docs/api.md;
 *  a fleet plan's child adds "parent_id", its parent "max_parallel_hosts"
 *  and "children"); with_spec adds the normalised plan under "plan". HV_DB_NONE when there
 *  is no such plan. */
enum hv_db_status hv_db_plan_get(int64_t id, bool with_spec, json_t **out);

/** GET /api/v1/plans/{id}'s answer for plan id, as hv_db_plan_get() with
 *  with_spec and the plan's drain hooks under "hooks" when it has any give
 *  it, as JSON text read in one statement (two for a plan of a fleet or
 *  with drain hooks): a new string in *answer, the caller's to free.
 *  HV_DB_NONE when there is no such plan. */
enum hv_db_status hv_db_plan_read(int64_t id, char **answer);

/** Filters of a plan listing; NULL / 0 members do not filter. */
struct hv_plan_filter {
    const char *status;
    const char *target;
    const char *name;
    const char *since; /**< ISO 8601 */
    int64_t before_id; /**< the cursor: plans with a smaller id */
    int limit;
};

/** Plans matching f, newest first, as a new JSON array in *out. */
enum hv_db_status hv_db_plan_list(const struct hv_plan_filter *f, json_t **out);

/** Of the n target names, those no worker ever registered, in their
 *  order, as a new JSON array of strings in *out. */
enum hv_db_status hv_db_targets_unregistered(const char *const *names, size_t n, json_t **out);

/** Cancels plan id: its queued and running jobs become cancelled.
 *  HV_DB_NONE when there is no such plan, HV_DB_CONFLICT when it already
 *  ended (done or failed). Cancelling twice is not an error. */
enum hv_db_status hv_db_plan_cancel(int64_t id);

/** What a plan's report needs besides its values, as a new JSON object in
 *  *out: {"spec": the normalised plan, "configurations": [{"name",
 *  "levels"}] in the plan's order, "workloads": [{"id", "kind", "engine"}]
 *  (the variants its jobs run), "emulated": its guests whose domain is TCG,
 *  "digest": the report digest kept for the state version of the plan's
 *  done jobs (server/report.h), absent when none is or digest_wanted is
 *  false (always with a NULL version)}. The workloads are read from the
 *  digest's row when one is kept for version, wanted or not.
 *  HV_DB_NONE when there is no such plan. */
enum hv_db_status hv_db_plan_report_meta(int64_t id, const char *version, bool digest_wanted,
                                         json_t **out);

/** Keeps the report digest (JSON text) of plan id for the state version of
 *  its done jobs, replacing the one kept before (and the answer kept with
 *  it), with the answer rendered from it and its other inputs (both text,
 *  both may be NULL: no answer kept; server/report.h). */
enum hv_db_status hv_db_plan_report_digest_put(int64_t id, const char *version, const char *digest,
                                               const char *answer, const char *inputs);

/** The report answer kept for plan id at the state version of its done
 *  jobs and the other inputs inputs, as sent (a new string in *answer, the
 *  caller's to free); HV_DB_NONE when none is kept for them. */
enum hv_db_status hv_db_plan_report_answer(int64_t id, const char *version, const char *inputs,
                                           char **answer);

/** The report answer kept for plan id whatever the state of its jobs it is
 *  of, when its digest was computed less than seconds ago (a new string in
 *  *answer); HV_DB_NONE when none is. */
enum hv_db_status hv_db_plan_report_answer_recent(int64_t id, int seconds, char **answer);

/** Keeps answer for plan id's digest of state version, rendered with the
 *  other inputs inputs; nothing when no digest of that state is kept. */
enum hv_db_status hv_db_plan_report_answer_put(int64_t id, const char *version, const char *answer,
                                               const char *inputs);

/** One value of a plan's report: one round of one configuration, workload,
 *  target and metric. Guests that ran together (a group) are one value,
 *  the mean of theirs, and target names them "N guests". The value is
 *  mean_s · scale: mean_s is the mean of the values divided by scale, the
 *  largest magnitude among them, so no sum overflows in SQL. Strings are
 *  borrowed for the call. */
struct hv_db_obs {
    int config; /**< the configuration's index in the plan */
    const char *workload, *target, *metric, *unit;
    bool higher_is_better;
    int round;    /**< the repetition */
    long members; /**< results averaged */
    double scale, mean_s;
    const char *jobs; /**< their job ids as an array literal, "{41,42}" */
};

/** Called once per value: first the values of jobs that ran alone, then
 *  the groups', each part in order of configuration, workload, target and
 *  metric (a series may come in two parts; rounds need not come in order);
 *  a nonzero return stops the walk (HV_DB_ERROR). */
typedef int (*hv_db_obs_fn)(void *arg, const struct hv_db_obs *o);

/** Calls fn for every value of plan id: its done jobs' results (a net
 *  workload's server side left out). HV_DB_OK also when there is none. */
enum hv_db_status hv_db_plan_observations(int64_t id, hv_db_obs_fn fn, void *arg);

/** The jobs of plan id in run order after run_order `after` (-1 from the
 *  start), at most limit, with the given status (NULL: any), as a new JSON
 *  array. HV_DB_NONE when there is no such plan. */
enum hv_db_status hv_db_plan_jobs(int64_t id, const char *status, long after, int limit,
                                  json_t **out);

/** One job (with plan_id and its full workload), HV_DB_NONE when unknown. */
enum hv_db_status hv_db_job_get(int64_t id, json_t **out);

/** Every result of job id, oldest attempt first, with metrics, (when
 *  samples) samples and (when raw) the tool's raw output, as the text of
 *  a JSON array built by the database (an answer of 200,000 samples is
 *  sent as it is, never parsed here): free out->res with
 *  hv_db_text_free(). HV_DB_NONE when the job is unknown. */
enum hv_db_status hv_db_job_results(int64_t id, bool samples, bool raw, struct hv_db_text *out);

/** The per-second samples of one result of job id (attempt, or the
 *  latest when attempt is 0), per metric, those with t in [from, to]
 *  (each bound only when given): a metric with at most points of them
 *  as they are, one with more as points equal time buckets (mean time,
 *  mean, min, max, count of each non-empty one). The text of a JSON
 *  object, as hv_db_job_results() gives it; HV_DB_NONE when the job is
 *  unknown. */
enum hv_db_status hv_db_job_samples(int64_t id, int attempt, int points, const double *from,
                                    const double *to, struct hv_db_text *out);

/** The ids of the tuning plans (plans with factors) whose host is target
 *  and that have at least one job done, newest first, at most limit, as a
 *  new JSON array in *ids. HV_DB_NONE when no target has that name. */
enum hv_db_status hv_db_plans_tuned_on(const char *target, int limit, json_t **ids);

/** The owner of plan id (server/plan_owner.h): the token that submitted
 *  it, a fleet child's being its parent's, unless that token was revoked.
 *  Sets *token_id to its id and name (len bytes, truncated) to its name,
 *  or 0 and "" when the plan has no owner (an imported plan, or one whose
 *  token was revoked). HV_DB_NONE when there is no such plan. */
enum hv_db_status hv_db_plan_owner(int64_t id, int64_t *token_id, char *name, size_t len);

#endif
