/* db_steps.h — tuning plans in blocks: apply and restore steps on the
 * plan's host, and the record of what they changed
 * (migrations/007_tuning.sql).
 *
 * A plan with factors runs one block (round x configuration) at a time:
 * the block's apply step is claimed by the host's worker, which applies
 * every level and reads it back; only then are the block's jobs
 * claimable; once they all ended the next block's apply step is queued,
 * and after the last block (or on cancel) a restore step. One tuning plan
 * holds a host at a time. */
#ifndef HV_SERVER_DB_STEPS_H
#define HV_SERVER_DB_STEPS_H

#include "db.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/** Cuts the jobs of plan_id (just inserted, inside the creating
 *  transaction on db) into blocks, one per (repetition, configuration),
 *  shuffled per round from seed when randomized, renumbers their run
 *  order block by block, and creates the plan's steps on host: the first
 *  apply step queued, the rest waiting, and the restore step. */
enum hv_db_status hv_db_steps_create(struct hv_db *db, const char *plan_id, const char *host,
                                     const char *seed, bool randomized);

/** Moves tuning plans on: expires step leases (a worker that held one and
 *  was not seen for lease_s seconds, the server's lease, is lost:
 *  migrations/050, hv_worker_lost), fails the jobs of a block whose apply
 *  step failed, and queues the next block's apply step (or the restore
 *  step) of every plan whose current block ended. Run before claims when
 *  hv_db_sweeps_due() says a tick is due. */
enum hv_db_status hv_db_steps_tick(int lease_s);

/* Step s (of plan p) is an apply step that is not to run any more: its
 * plan was cancelled (it was running then: s.cancelled) or ended
 * (migrations/048_cancel_apply.sql). Never claimed; one left queued is
 * no open step, the tick's advance cancels it. */
#define HV_SQL_APPLY_DROPPED                                                                       \
    "(s.kind = 'apply' AND (s.cancelled OR p.cancelled OR p.state IN ('done', 'failed', "          \
    "'cancelled')))"

/* Plan p's current block ended: no open job in it, no open step. */
#define HV_SQL_BLOCK_ENDED                                                                         \
    "p.current_block IS NOT NULL AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.plan_id = p.id AND " \
    "j.block = p.current_block AND j.status IN ('queued', 'running')) AND NOT EXISTS (SELECT 1 "   \
    "FROM plan_steps s WHERE s.plan_id = p.id AND s.status IN ('queued', 'running', "              \
    "'waiting_for_operator') AND NOT (s.status = 'queued' AND " HV_SQL_APPLY_DROPPED "))"

/* The two sweeps' questions as two boolean columns, asked without any
 * lock: whether a running job's lease ran out (its earliest lease is the
 * first entry of jobs_lease_idx: an EXISTS may be planned as a scan of
 * every job, on a guess that one is found soon), and whether a tick is due
 * (a step's lease ran out, or a block ended). */
#define HV_SQL_SWEEPS_DUE                                                                          \
    "coalesce((SELECT min(lease_until) FROM jobs WHERE status = 'running') < now(), false), "      \
    "EXISTS (SELECT 1 FROM plan_steps WHERE status = 'running' AND lease_until < now()) OR "       \
    "EXISTS (SELECT 1 FROM plan_steps WHERE status = 'waiting_for_operator' AND lease_until < "    \
    "now()) OR EXISTS (SELECT 1 FROM plans p WHERE " HV_SQL_BLOCK_ENDED ")"

/** What a claim of target_id has to do before it looks for a job, asked
 *  in one statement: *leases, a running job's lease ran out
 *  (hv_db_leases_expire); *tick, a step's lease ran out or a block ended
 *  (hv_db_steps_tick); *steps, the target has a queued step
 *  (hv_db_step_claim). All true when the database could not say. */
enum hv_db_status hv_db_sweeps_due(int64_t target_id, bool *leases, bool *tick, bool *steps);

/** Claims the next queued step of target_id for worker_id, unless another
 *  plan holds the host. *step is a new JSON object (the step as the
 *  worker protocol describes it); HV_DB_NONE when there is none. */
enum hv_db_status hv_db_step_claim(int64_t target_id, int64_t worker_id, int lease_s,
                                   json_t **step);

/** Whether worker_id claimed (step id, attempt): HV_DB_OK when it did,
 *  HV_DB_NONE when there is no such step, HV_DB_CONFLICT when it did not. */
enum hv_db_status hv_db_step_owner(int64_t id, int attempt, int64_t worker_id);

/** Extends the lease of a running step (id, attempt); *cancel tells
 *  whether its plan was cancelled (an apply step should stop; a restore
 *  step never is). HV_DB_NONE when the attempt is not running. */
enum hv_db_status hv_db_step_heartbeat(int64_t id, int attempt, int lease_s, bool *cancel);

/** A step's outcome as its worker reports it. JSON texts may be NULL. */
struct hv_step_result {
    int64_t id;
    int attempt;
    bool ok;
    const char *error;    /**< when not ok */
    const char *settings; /**< {"factor": {"level", "read_back", "source"}} */
    const char *changes;  /**< [{"factor", "scope", "object", "from", "to", "at"}] */
    /** An apply step that waits for the operator (ok is false): the
     *  reboot-class levels the host is not at, [{"factor", "level",
     *  "value", "file", "command"}]; NULL otherwise. */
    const char *waiting;
    /** A drain hook's answer: {"exit_status", "output"} or {"error"}, or
     *  NULL. */
    const char *answer;
    /** A before_host hook said "not yet" (exit status 75), error its
     *  words: hv_db_hook_not_yet(). Any other step: a failure. */
    bool not_yet;
};

/** Seconds after which a step waiting for the operator is offered to its
 *  host worker again (which reads the module parameters again). */
#define HV_STEP_OPERATOR_RECHECK_S 10

/** Stores a step's outcome in one transaction: an apply step that
 *  succeeded releases its block's jobs; one that failed fails them with
 *  the reason; one that waits for the operator (waiting set) becomes
 *  waiting_for_operator, sets the plan's waiting (reason
 *  waiting_for_operator, with the commands) and leaves its jobs queued;
 *  hv_db_steps_tick() queues it again after HV_STEP_OPERATOR_RECHECK_S.
 *  A restore step releases the host and marks the changes it reports
 *  restored (at their times, how 'step'), then, when it succeeded, the
 *  plan's other open changes (now). HV_DB_CONFLICT when the attempt is not running (a
 *  second report of the same attempt is HV_DB_OK with *replayed set). */
enum hv_db_status hv_db_step_result(const struct hv_step_result *r, bool *replayed);

/** Cancels the waiting and queued apply steps of plan id (inside the
 *  cancelling transaction on db) and queues its restore step when the
 *  plan holds or may hold its host; else cancels that too. */
enum hv_db_status hv_db_steps_cancel(struct hv_db *db, const char *plan_id);

/** The steps of plan id, in order, as a new JSON array in *out. */
enum hv_db_status hv_db_plan_steps(int64_t id, json_t **out);

/** Marks restored the changes worker_id's host worker put back itself
 *  from its journal, at its start or for `hvbench-worker --restore`:
 *  entries is a JSON array [{"plan_id", "factor", "scope", "object",
 *  "at", "how"}] (checked by the caller); each entry marks the open
 *  changes of its plan on the worker's target of that factor, scope and
 *  object recorded no later than it (hv_change_restored), and one that
 *  matches none marks nothing. *marked: how many changes were marked. */
enum hv_db_status hv_db_changes_restored(int64_t worker_id, const char *entries, int64_t *marked);

/** What plans changed on target id, newest first (at most limit), as a
 *  new JSON array in *out. HV_DB_NONE when there is no such target. */
enum hv_db_status hv_db_target_changes(int64_t id, int limit, json_t **out);

#endif
