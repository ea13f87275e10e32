/* adoption.h — whether a recommendation, once adopted on hosts, delivered
 * the gain its plan predicted.
 *
 * Each adopted host is compared with itself: d_h = mean ln(after) − mean
 * ln(before), its values of the recommendation's metric after the
 * adoption against those before. Hosts that did not adopt it (controls)
 * give the same difference over the same periods, d_c: what moved on
 * every host meanwhile (a kernel update of the whole fleet, a change of
 * load). The effect is the difference in differences, mean d_h − mean d_c,
 * with a Welch interval over the hosts (lib/contrast.h: the groups are
 * the adopted hosts' d_h and the controls' d_c). With fewer than two
 * controls it is mean d_h alone (before/after only, said in `controlled`),
 * and with one adopted host the Welch comparison of its own after and
 * before values. Hosts lacking values on either side are left out.
 *
 * The verdict compares the observed gain's 95 % interval [lo, hi] (in the
 * metric's good direction, as a recommendation's gain_pct) with the
 * predicted interval [plo, phi] of the plan that made it and the plan's
 * margin m (a change within ±m is no change, as for every verdict of
 * lib/compare.h):
 *   regressed  hi < −m: the hosts got worse beyond the margin;
 *   delivered  lo > m and hi >= plo: a gain, as large as predicted (or
 *              larger);
 *   partial    lo > m and hi < plo: a gain, smaller than predicted;
 *   none       lo <= m and hi < plo: no gain beyond the margin shown, and
 *              the predicted one ruled out;
 *   pending    anything else: too few hosts or values, or an interval
 *              still too wide to tell.
 * Pure functions: thread safe. */
#ifndef HV_ADOPTION_H
#define HV_ADOPTION_H

#include "stats.h"

#include <stdbool.h>
#include <stddef.h>

/** One host's values of the metric before and after the adoption (for a
 *  control: before and after the same moment). Values must be positive. */
struct hv_adoption_host {
    const double *before;
    size_t n_before;
    const double *after;
    size_t n_after;
};

/** What the verdict is asked about. */
struct hv_adoption_input {
    const struct hv_adoption_host *adopted;
    size_t n_adopted;
    const struct hv_adoption_host *controls;
    size_t n_controls;
    bool higher_is_better;
    double predicted_lo, predicted_hi; /**< the predicted gain, %, good direction */
    double margin_pct;                 /**< the plan's margin, >= 0 */
};

enum hv_adoption_state {
    HV_ADOPTION_PENDING,
    HV_ADOPTION_DELIVERED,
    HV_ADOPTION_PARTIAL,
    HV_ADOPTION_NONE,
    HV_ADOPTION_REGRESSED,
};

/** The verdict and what it rests on. */
struct hv_adoption_result {
    enum hv_adoption_state state;
    bool estimated;        /**< gain_pct, lo_pct, hi_pct hold an estimate */
    double gain_pct;       /**< observed gain, % in the good direction */
    double lo_pct, hi_pct; /**< its 95 % interval */
    size_t hosts;          /**< adopted hosts with values on both sides */
    size_t controls;       /**< controls used (0: before/after only) */
    bool controlled;       /**< a difference in differences against controls */
    char why[160];         /**< for pending: what is missing, in words */
};

/** The verdict of in (see the header). Returns HV_STAT_BAD_ARG for a NULL
 *  argument, a predicted interval that is not finite and ordered or a
 *  negative margin,
 *  HV_STAT_NOT_POSITIVE / HV_STAT_NOT_FINITE for a bad value, else
 *  HV_STAT_OK with *out filled (state pending when the data do not
 *  suffice, why saying what is missing). */
enum hv_stat_err hv_adoption_verdict(const struct hv_adoption_input *in,
                                     struct hv_adoption_result *out);

/** "pending", "delivered", "partial", "none", "regressed". */
const char *hv_adoption_state_name(enum hv_adoption_state s);

#endif
