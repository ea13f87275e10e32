/* db_hooks.h — a plan's drain hooks, before_host and after_host
 * (migrations/024_drain_hooks.sql): steps of the plan on its host
 * (plan_steps), a url hook called by the server (hooks.h), a local one
 * claimed by the host worker as db_steps.h describes. */
#ifndef HV_SERVER_DB_HOOKS_H
#define HV_SERVER_DB_HOOKS_H

#include "db.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/** Creates the hooks of plan_id (inside the creating transaction on db)
 *  on host from hooks, the plan's "hooks" member as JSON text: before_host
 *  queued (the plan waits for it: its waiting says so), after_host
 *  waiting until the plan ended. */
enum hv_db_status hv_db_hooks_create(struct hv_db *db, const char *plan_id, const char *host,
                                     const char *hooks);

/** A url hook the server calls now. Strings owned. */
struct hv_hook_due {
    int64_t id;
    int attempt;
    char *kind;    /**< before_host or after_host */
    char *url;     /**< the plan's url */
    char *payload; /**< the JSON body to send */
    int tries;     /**< attempt, not counting the calls answered "not yet" */
};

void hv_hook_due_clear(struct hv_hook_due *d);

/** Queues the after_host hooks that are due, then takes at most max url
 *  hooks due now (each marked running for lock_s seconds, its attempt
 *  counted) into due; *n says how many. */
enum hv_db_status hv_db_hooks_take(struct hv_hook_due *due, int max, int lock_s, int *n);

/** Records attempt of url hook id: ok, or failed with error, answer
 *  ({"http_status", "body"} or {"error"}, JSON text) either way; a failed
 *  one is queued again after retry_s seconds, or fails for good when
 *  retry_s < 0. A before_host hook that ended releases its plan's jobs,
 *  or fails them. */
enum hv_db_status hv_db_hook_done(int64_t id, int attempt, bool ok, const char *error,
                                  const char *answer, int retry_s);

/** Records that attempt of before_host hook id answered "not yet" (a
 *  local hook's exit status 75, a url hook's 503) with reason, its words,
 *  and answer (JSON text, as hv_db_hook_done() takes it): the hook is
 *  queued again after retry_s seconds (0 or less: the plan's
 *  hooks.interval, HV_PLAN_HOOK_INTERVAL_DEFAULT when it has none), at the
 *  latest when hooks.timeout (HV_PLAN_HOOK_TIMEOUT_DEFAULT) seconds passed
 *  since its first "not yet", and the plan's waiting detail is reason.
 *  An answer after that fails the hook ("not ready within
 *  hooks.timeout (N s): reason") as any failure does. The answer keeps
 *  {"not_yet": {"since", "calls", "reason"}}. db NULL: this thread's
 *  connection, else inside the caller's transaction on db. */
enum hv_db_status hv_db_hook_not_yet(struct hv_db *db, int64_t id, int attempt, const char *reason,
                                     const char *answer, int retry_s);

/** SQL: a hook's new answer, the JSON text of parameter param, keeping
 *  the record of the "not yet" answers before it (its "not_yet"). */
#define HV_SQL_HOOK_ANSWER(param)                                                                  \
    "CASE WHEN answer ? 'not_yet' THEN coalesce(" param "::jsonb, '{}') || "                       \
    "jsonb_build_object('not_yet', answer->'not_yet') ELSE " param "::jsonb END"

/** Arms plan_id's hooks again for a retry (inside its transaction on
 *  db): before_host queued, after_host waiting, their log cleared.
 *  HV_DB_CONFLICT while one of them is queued or running (the plan's
 *  after_host has not ended yet). HV_DB_OK for a plan without hooks. */
enum hv_db_status hv_db_hooks_rearm(struct hv_db *db, const char *plan_id);

/** The names of the local hooks the worker of target name declares
 *  (facts.hooks; JSON null when it says nothing) as a new reference in
 *  *out; HV_DB_NONE when no worker registered the target. */
enum hv_db_status hv_db_target_hooks(const char *name, json_t **out);

#endif
