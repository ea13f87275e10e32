/* adaptive.h — the stop rule of adaptive repetitions.
 *
 * After each round of a plan with repetitions {min, max, ci_pct}, the
 * caller summarises every primary metric of every configuration
 * (stats.h) and asks whether to queue one more round:
 *   - fewer rounds than min: more;
 *   - max rounds done: stop, whatever the widths;
 *   - otherwise more while any summary's interval is wider than ci_pct
 *     (relative half-width, rel_half_pct: on logs for positive metrics)
 *     or has none (n < 2, or a mean of 0 whose relative width is
 *     undefined); stop when every one is within ci_pct.
 * Pure functions, thread safe. */
#ifndef HV_ADAPTIVE_H
#define HV_ADAPTIVE_H

#include "stats.h"

#include <stdbool.h>
#include <stddef.h>

/** What to do after a round. */
enum hv_adapt {
    HV_ADAPT_MORE = 0, /**< queue one more round */
    HV_ADAPT_PRECISE,  /**< stop: every interval is within ci_pct */
    HV_ADAPT_MAX,      /**< stop: max rounds done, some interval still wider */
};

/** "more", "precise" or "max" (static). */
const char *hv_adapt_name(enum hv_adapt a);

/** Whether every summary s[0..k) has an interval with rel_half_pct <=
 *  ci_pct. *widest (may be NULL) gets the index of the widest one (the
 *  first without an interval, if any); k == 0 is reached. */
bool hv_ci_reached(const struct hv_summary *s, size_t k, double ci_pct, size_t *widest);

/** The decision after `rounds` complete rounds, for plan repetitions
 *  rep_min..rep_max (1 <= rep_min <= rep_max) and target ci_pct. */
enum hv_adapt hv_adapt_next(const struct hv_summary *s, size_t k, double ci_pct, int rounds,
                            int rep_min, int rep_max);

#endif
