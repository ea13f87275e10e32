/* efficiency.h — virtualization efficiency: how much of the host's
 * performance a guest keeps, per subsystem (cpu, disk, net, ...) and as
 * one overall score, each with a 95 % interval.
 *
 * Contract:
 * - An item is one metric measured on the guest and on the host. Its
 *   efficiency is GM(guest)/GM(host) when higher is better and
 *   GM(host)/GM(guest) when lower is better (a latency), so 1 means no
 *   overhead and 0.9 means the guest keeps 90 %.
 * - A subsystem's efficiency is the geometric mean of its items'.
 * - The overall score is the weighted geometric mean of the subsystems'
 *   (HEPscore style): exp(Σ w_s·ln e_s / Σ w_s) over the subsystems that
 *   have an item; equal weights unless given.
 * - Every efficiency is a linear contrast of mean logs (contrast.h), so
 *   its standard error is exact for independent groups (the delta method
 *   on logs is exact here) and the interval is Student t with
 *   Welch–Satterthwaite df, back-transformed. Items measured in the same
 *   runs (two metrics of one tool) are correlated; the interval then
 *   takes them as independent.
 * Pure functions, thread safe, no allocation. */
#ifndef HV_EFFICIENCY_H
#define HV_EFFICIENCY_H

#include "contrast.h"
#include "stats.h"

#include <stdbool.h>
#include <stddef.h>

/** One metric on the guest and on the host. */
struct hv_eff_item {
    size_t subsystem;          /**< index into the subsystems, < n_sub */
    struct hv_log_group guest; /**< logs of the guest's values */
    struct hv_log_group host;  /**< logs of the host's values */
    bool higher_is_better;
};

/** An efficiency and its interval. */
struct hv_eff {
    bool valid;             /**< false when the subsystem has no item */
    size_t items;           /**< items it pools */
    double weight;          /**< its share of the overall score (sums to 1) */
    double eff;             /**< 1 = as fast as the host */
    double lo, hi;          /**< 95 % interval of eff */
    struct hv_contrast log; /**< ln eff with se, df and n (the rounds) */
};

/** Computes per_sub[0..n_sub) and *overall from items[0..n_items).
 *  weights[s] >= 0 per subsystem, or NULL for equal weights; only
 *  subsystems with an item share the overall weight. Returns
 *  HV_STAT_BAD_ARG (no item, a subsystem index out of range, a negative or
 *  non-finite weight, zero total weight), or the first error of a group
 *  (HV_STAT_TOO_FEW when one has n < 2). */
enum hv_stat_err hv_efficiency(const struct hv_eff_item *items, size_t n_items,
                               const double *weights, size_t n_sub, struct hv_eff *per_sub,
                               struct hv_eff *overall);

#endif
