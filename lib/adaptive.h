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

/** The width (relative half-width, %) a plan's repetitions ask for unless
 *  it sets ci_pct (lib/plan.c). */
#define HV_CI_PCT_DEFAULT 2.0

/** The fewest rounds an interval is worth printing with: below it (or past
 *  HV_USABLE_HALF_PCT) a surface says how many more rounds would give one
 *  (hv_interval_note) instead of printing bounds. */
#define HV_USABLE_MIN_N 3

/** The widest relative half-width (%) an interval is printed with. */
#define HV_USABLE_HALF_PCT 100.0

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

/** The smallest number of rounds n' >= s->n at which s's interval, with
 *  its spread as observed (the sd of the logs on a log scale, the CV on a
 *  linear one), would have a relative half-width (rel_half_pct, the stop
 *  rule's measure) of at most ci_pct; 0 when s has no spread to go by
 *  (n < 2, a zero mean) or none up to cap rounds would. */
size_t hv_rounds_for_width(const struct hv_summary *s, double ci_pct, size_t cap);

/** Whether s's interval is worth printing: it has one, n >= HV_USABLE_MIN_N
 *  and its relative half-width is within HV_USABLE_HALF_PCT. When not,
 *  note (len bytes) gets the words to print instead, e.g. "n = 2: too few
 *  rounds for an interval; about 6 more would give \u00b12 %" (ci_pct
 *  the width the plan asks for); when it is, note is "". */
bool hv_interval_note(const struct hv_summary *s, double ci_pct, char *note, size_t len);

/** Whether the 95 % interval [lo_pct, hi_pct] of a % change (a ratio of
 *  geometric means, a difference, an efficiency against 100 %) is worth
 *  printing, judged as hv_interval_note judges a summary's: both bounds
 *  finite, n (the rounds of the smaller side) >= HV_USABLE_MIN_N and a
 *  half-width, (hi_pct - lo_pct) / 2, within HV_USABLE_HALF_PCT. When
 *  not, note (len bytes) gets the words to print instead: "n = 2: too few
 *  rounds for an interval", "n = 4: the interval is too wide to use" or
 *  "n = 1: no interval"; when it is, note is "". A verdict read from an
 *  interval that is not usable is inconclusive. */
bool hv_contrast_note(size_t n, double lo_pct, double hi_pct, char *note, size_t len);

#endif
