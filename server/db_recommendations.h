/* db_recommendations.h — recommendations kept with stable ids
 * (migrations/053), their adoption on hosts, declared by a user or
 * observed in the host settings a host worker reports, and those
 * settings. */
#ifndef HV_SERVER_DB_RECOMMENDATIONS_H
#define HV_SERVER_DB_RECOMMENDATIONS_H

#include "db.h"

#include <jansson.h>
#include <stdint.h>

/** Keeps the recommendations of plan (its id as text), the array
 *  "recommendations" of the report the caller built, as rows with stable
 *  ids, on db inside the caller's transaction, when the plan's jobs say
 *  it ends done (hv_plan_state_due); nothing otherwise. A recommendation
 *  kept before stays as it was (one row per plan, factor and level). */
enum hv_db_status hv_db_recommendations_keep(struct hv_db *db, const char *plan,
                                             const json_t *recommendations);

/** Kept recommendations, newest first, as a new JSON array in *out: at most
 *  limit, with an id below before_id when it is positive, in state
 *  ("proposed": no host carries it; "adopted": one does, no verdict yet;
 *  "delivered", "partial", "none", "regressed": its verdict) unless NULL. Each
 *  as hv_db_recommendation_get() gives it, less its adoptions. */
enum hv_db_status hv_db_recommendations_list(const char *state, int64_t before_id, int limit,
                                             json_t **out);

/** Recommendation id with its state and every adoption, as a new JSON
 *  object in *out; HV_DB_NONE when there is none. */
enum hv_db_status hv_db_recommendation_get(int64_t id, json_t **out);

/** Declares recommendation id adopted since now on every host target whose
 *  labels hold selector (a JSON object, or NULL) and every host target
 *  named in targets (a JSON array of names, or NULL), by token token_id; a
 *  host with an open adoption of it keeps that one. *out (new) holds
 *  "matched" (the hosts' names), "unknown" (names in targets that are no
 *  host; then nothing is recorded) and "added" (how many adoptions were
 *  opened). HV_DB_NONE when
 *  there is no such recommendation. */
enum hv_db_status hv_db_recommendation_adopt(int64_t id, const json_t *selector,
                                             const json_t *targets, int64_t token_id, json_t **out);

/** Stores the host settings ({factor: level}, JSON text) the worker of
 *  host target target_id read just now, and opens and ends its observed
 *  adoptions accordingly (hv_target_settings_put, migrations/053): the one
 *  path for settings, at registration and from POST
 *  /api/v1/workers/settings. HV_DB_NONE when the target is no host. */
enum hv_db_status hv_db_target_settings_put(int64_t target_id, const char *settings);

/** What recommendation id's verdict rests on, as a new JSON object in
 *  *out: "id", "plan_id", "plan", "margin_pct" (the plan's, or null),
 *  "disk" (its tuning disk, or null), "gain_interval" (the predicted one),
 *  "recommendation" (as the report gave it), "cut" (the first adoption,
 *  null without one), "higher_is_better", and "hosts": [{"target",
 *  "adopted", "before", "after"}] with every host's round values of the
 *  recommendation's workload and metric before and after its split (its
 *  own first adoption, else the cut), oldest first. HV_DB_NONE: no such
 *  recommendation. */
enum hv_db_status hv_db_recommendation_inputs(int64_t id, json_t **out);

/** The ids of the recommendations with an adoption ("ids") and a "mark"
 *  that moves whenever a verdict may have (a new result, adoption or end
 *  of one), as a new JSON object in *out. */
enum hv_db_status hv_db_recommendations_to_judge(json_t **out);

/** Stores recommendation id's verdict (state, and detail: the "verdict"
 *  answers show) through hv_recommendation_judged (migrations/055), which
 *  alone sends recommendation.verdict. */
enum hv_db_status hv_db_recommendation_judged(int64_t id, const char *state, const json_t *detail);

#endif
