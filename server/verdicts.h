/* verdicts.h — whether an adopted recommendation delivered what its plan
 * predicted: its verdict (lib/adoption.h) over the round values its
 * hosts measured before and after they adopted it, against the hosts
 * that did not (db_recommendations.h hv_db_recommendation_inputs), kept
 * with the recommendation through the one function that sends
 * recommendation.verdict (migrations/055).
 *
 * Judged by the sweeper whenever a new result, adoption or end of an
 * adoption may have moved a verdict, and by GET
 * /api/v1/recommendations/{id} before it answers. */
#ifndef HV_SERVER_VERDICTS_H
#define HV_SERVER_VERDICTS_H

#include "db.h"

#include <jansson.h>
#include <stdint.h>

/** Judges recommendation id and stores its verdict: {"state", "gain_pct",
 *  "lo_pct", "hi_pct" (the observed gain and its 95 % interval, % in the
 *  metric's good direction; null while pending without an estimate),
 *  "hosts", "controls", "controlled", "why" (pending: what is missing),
 *  "predicted" ({lo_pct, hi_pct}), "margin_pct", "split_at", "per_host"
 *  ([{target, adopted, before, after}]: how many values on each side),
 *  and for regressed "rollback" ({tuned, ansible, puppet, shell}: the
 *  recommendation in every form of lib/advice_format.h, whose rollback
 *  part undoes it)}. A recommendation no host adopted is left unjudged.
 *  HV_DB_NONE: no such recommendation. */
enum hv_db_status hv_verdict_judge(int64_t id);

/** Judges every adopted recommendation when anything a verdict rests on
 *  moved since the last call (the mark of hv_db_recommendations_to_judge).
 *  For the sweeper's thread only: the last mark is its own. */
enum hv_db_status hv_verdicts_judge_due(void);

#endif
