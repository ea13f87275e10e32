/* db_rounds.h — adaptive repetitions.
 *
 * A plan asks for repetitions {min, max, ci_pct}. Its first min rounds are
 * queued when it is submitted; whenever a round ends, the server builds
 * the plan's report over the rounds so far and takes its stop rule's
 * decision (the repetitions section, server/report_advice.c: the
 * group-sequential rule over the plan's comparisons, lib/sequential.h, or
 * without comparisons the width of every primary interval,
 * lib/adaptive.h). While it says "more" and fewer than max rounds ran, one
 * more whole round is queued: every configuration again, in the plan's
 * seeded order, as blocks of its own in a tuning plan. The decision is
 * kept with the plan (plans.adaptive) for the report and the API. */
#ifndef HV_SERVER_DB_ROUNDS_H
#define HV_SERVER_DB_ROUNDS_H

#include "db.h"

#include <stdbool.h>

/** An SQL condition over the jobs row job (an alias or the table's name):
 *  whether the job's round is the plan's latest and the plan's
 *  repetitions allow a decision, so that its end may call for one. Asked
 *  without a lock, so the results of every round but a plan's latest (all
 *  of a fixed-repetition plan's) do not queue on the plan's row: a later
 *  round exists or the spec rules a decision out, and no concurrent result
 *  changes either. */
#define HV_SQL_ROUND_MAY_DECIDE(job)                                                               \
    "(" job ".repetition = (SELECT max(x.repetition) FROM jobs x WHERE x.plan_id = " job           \
    ".plan_id) AND (SELECT coalesce((p.spec->'repetitions'->>'min')::int, 1) >= 1 AND "            \
    "coalesce((p.spec->'repetitions'->>'max')::int, 1) >= coalesce((p.spec->'repetitions'->>"      \
    "'min')::int, 1) FROM plans p WHERE p.id = " job ".plan_id))"

/** An SQL condition over the jobs row job: whether its end may set its
 *  result aside as noisy and repeat it (hv_noise_repeat, migrations/052):
 *  its plan's noise is "repeat" and it ran alone (no group, no net role).
 *  Read when the job is locked, so that a batch whose jobs cannot repeat
 *  commits with its results. */
#define HV_SQL_NOISE_MAY_REPEAT(job)                                                               \
    "(" job ".group_id IS NULL AND " job ".role IS NULL AND coalesce((SELECT p.spec->>'noise' = "  \
    "'repeat' FROM plans p WHERE p.id = " job ".plan_id), false))"

/** Called inside the transaction that just ended job job_id done, for a
 *  job whose HV_SQL_NOISE_MAY_REPEAT was true, before
 *  hv_db_round_decide(): when what ran beside it made it noisy (its
 *  observed.interference or its host's telemetry says busy) and its round
 *  may take another job of its configuration, sets its result aside and
 *  queues that job in the same round (hv_noise_repeat, migrations/052),
 *  which keeps the round open. *repeated (may be NULL) says whether it
 *  did. Returns HV_DB_OK (also when nothing was due) or a failure of the
 *  transaction. */
enum hv_db_status hv_db_noise_repeat(struct hv_db *db, const char *job_id, bool *repeated);

/** Called inside the transaction that just ended job job_id, for a job
 *  whose HV_SQL_ROUND_MAY_DECIDE was true: when that ended the plan's
 *  latest round, decides whether to queue another and does it; when none
 *  is due and the plan's jobs end it done, keeps the recommendations of
 *  the report that decided (hv_db_recommendations_keep). Returns
 *  HV_DB_OK (also when nothing was due) or a failure of the transaction. */
enum hv_db_status hv_db_round_decide(struct hv_db *db, const char *job_id);

#endif
