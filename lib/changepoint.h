/* changepoint.h — change points in a metric's history by E-Divisive means
 * (Matteson and James 2014, with exponent 1, as in MongoDB's
 * signal-processing-algorithms and Apache Otava).
 *
 * Method: within a segment [s, e) each split τ with at least min_window
 * points on either side scores
 *   Q(τ) = (nL·nR/(nL+nR)) · (2/(nL·nR)·Σ|x_i − x_j|  [i left, j right]
 *                            − Σ|x_i − x_k| / C(nL,2) [both left]
 *                            − Σ|x_j − x_k| / C(nR,2) [both right])
 * (the energy distance between the two sides, scaled). The segment's best
 * split is tested by permutation: the values of the segment are shuffled
 * `permutations` times and p = (1 + #{best Q of a shuffle >= observed}) /
 * (1 + permutations). The most significant split over all segments is
 * kept while p <= alpha, and its two halves become segments in turn
 * (binary segmentation). The permutation test stops early once p can no
 * longer reach alpha, so a p above alpha is a lower bound.
 *
 * Cost: O(len²) per shuffle of a segment of len points; a 60-point history
 * with 199 shuffles takes about a millisecond. Memory: O(n).
 *
 * Contract: deterministic given opts->seed (each segment's shuffles are
 * seeded from the seed and the segment's bounds, so the result does not
 * depend on the order segments are visited); NaN and infinite values are
 * refused; nothing global: thread safe. */
#ifndef HV_CHANGEPOINT_H
#define HV_CHANGEPOINT_H

#include "stats.h"

#include <stddef.h>
#include <stdint.h>

/** Points a side of a split needs at least, by default. */
#define HV_CP_MIN_WINDOW 5
/** The significance level, by default: strict enough that a null history
 *  of a few dozen points raises a change point in about 1 % of cases. */
#define HV_CP_ALPHA 0.01
/** Shuffles per test, by default: p resolves to 1/200, alpha to 2 counts. */
#define HV_CP_PERMUTATIONS 199

/** How to search. */
struct hv_cp_opts {
    size_t min_window;     /**< >= 2 */
    double alpha;          /**< in (0, 1) */
    unsigned permutations; /**< >= 1 */
    uint64_t seed;         /**< of the shuffles */
};

/** The defaults above, seed 0. */
void hv_cp_defaults(struct hv_cp_opts *opts);

/** A change point: the regime changes at index (its first point). */
struct hv_changepoint {
    size_t index;
    size_t n_before, n_after; /**< points since the previous / until the next one */
    double mean_before;       /**< mean of x[previous change point .. index) */
    double mean_after;        /**< mean of x[index .. next change point) */
    double rel_change;        /**< mean_after/mean_before − 1; NaN when mean_before == 0 */
    double q;                 /**< E-statistic of the split where it was found */
    double p;                 /**< permutation p-value of that split */
};

/** Finds the change points of x[0..n): at most cap, stored in
 *  out[0..*found) in index order. opts may be NULL for the defaults.
 *  A history shorter than 2·min_window has none. Returns
 *  HV_STAT_NOT_FINITE, HV_STAT_BAD_ARG (bad opts), HV_STAT_NO_MEMORY or
 *  HV_STAT_OK. */
enum hv_stat_err hv_changepoints(const double *x, size_t n, const struct hv_cp_opts *opts,
                                 struct hv_changepoint *out, size_t cap, size_t *found);

#endif
