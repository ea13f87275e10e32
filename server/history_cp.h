/* history_cp.h — the change points of one series of a target's history,
 * found with lib/changepoint.h (E-Divisive means) and placed on its
 * points.
 *
 * A long series is not searched point by point: the permutation test
 * costs O(len²) per shuffle, some 20 s at 10,000 points. Past
 * HV_HISTORY_DETECT_MAX points the series is cut into that many runs of
 * consecutive points of (nearly) equal count and the search runs on their
 * means — equal counts keep the means exchangeable when nothing changed,
 * so the permutation test holds — then each change point found between
 * two runs is placed on the points by a search of the points of the runs
 * around it (kept at the runs' border when that finds nothing). Pure,
 * deterministic, thread safe. */
#ifndef HV_SERVER_HISTORY_CP_H
#define HV_SERVER_HISTORY_CP_H

#include "db_history.h"
#include "stats.h"

#include <stddef.h>

/** The most values a search looks at: about 30 ms with a change. */
#define HV_HISTORY_DETECT_MAX 250
/** The most change points reported per series. */
#define HV_HISTORY_MAX_CP 64

/** Finds the change points of v (its values in time order) into
 *  out[0..*found), at most cap, in time order: index, times, result and
 *  plan of the first point of the new regime, the means and counts of the
 *  points since the previous and until the next change point, the
 *  search's q and p, and the time range within which a change point kept
 *  from an earlier search is this one found again (HV_CP_MIN_WINDOW runs
 *  either side). Returns lib/stats.h's error of the search. */
enum hv_stat_err hv_history_detect(const struct hv_history_values *v, struct hv_history_cp *out,
                                   size_t cap, size_t *found);

#endif
