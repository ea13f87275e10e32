/* sequential.h — a group-sequential stop rule: after every round from
 * rep_min to rep_max a look at the plan's comparisons, each judged at the
 * look's own level, so that over all the looks the family-wise error of
 * the better/worse claims stays within alpha (two-sided: alpha/2 each way).
 *
 * Contract:
 * - Looks are the rounds r = rep_min..rep_max; look r has information
 *   fraction t = r/rep_max (the variance of a paired mean falls as 1/r).
 * - The error spent by fraction t follows a Lan–DeMets spending function
 *   (HV_SPEND_*); the boundaries z_r are the exact ones for a Brownian
 *   motion observed at the looks (recursive numerical integration):
 *   P(|Z_r'| >= z_r' at some look r' <= r | no effect) = spend(t_r).
 *   The level of look r is the two-sided normal tail a_r = 2·Q(z_r); a
 *   comparison's t statistic (its own df) is read at that nominal level
 *   (the usual way of carrying z boundaries to estimated variances).
 * - A plan of m comparisons: Holm over them at every look, each step a
 *   group-sequential design of its own share: the j-th smallest margin
 *   p-value is read at the level of a design spending alpha/(m − j + 1).
 *   Every intersection of hypotheses is then tested by a Bonferroni
 *   group-sequential test, so the closed test holds the family-wise error
 *   over every look and every comparison whatever their dependence.
 * - The verdict at a look, whatever stops the plan (decided, width, max),
 *   is read at that look's level: the error bound holds however early or
 *   late the plan stops.
 * Pure functions, thread safe; a design allocates its levels. */
#ifndef HV_SEQUENTIAL_H
#define HV_SEQUENTIAL_H

#include "adaptive.h"
#include "compare.h"

#include <stdbool.h>
#include <stddef.h>

/** The most looks a design takes (the plan's repetition limit). */
#define HV_SEQ_LOOKS_MAX 1000

/** The shape of a spending function: the share of alpha spent by
 *  information fraction t. */
enum hv_spend {
    /** Lan–DeMets O'Brien–Fleming type: 2 − 2Φ(z(1 − alpha/2)/√t). Spends
     *  almost nothing early (1.2e-5 of 0.05 by t = 0.2), so the last look
     *  reads nearly the fixed-sample level. */
    HV_SPEND_OBF = 0,
    /** Lan–DeMets Pocock type: alpha·ln(1 + (e − 1)·t). Spends evenly in
     *  information, so early looks can decide and the last look pays for
     *  it. */
    HV_SPEND_POCOCK,
};

/** The spending function of a plan's stop rule and its verdicts (the
 *  server's and the bench's): Pocock type, for why see docs/statistics.md
 *  ("Stopping that stays valid"). */
#define HV_SEQ_SPEND HV_SPEND_POCOCK
/** Its name in a report ("pocock"). */
#define HV_SEQ_SPEND_NAME "pocock"

/** The error spent by information fraction t (clamped to [0, 1]) of a
 *  two-sided alpha in (0, 1). */
double hv_spend(enum hv_spend shape, double alpha, double t);

/** The two-sided boundaries z[0..k) of looks at information fractions
 *  t[0..k) (0 < t[0] < ... < t[k-1] <= 1) spending alpha by shape. A look
 *  that may spend nothing (its increment below what doubles resolve) gets
 *  HV_SEQ_Z_NONE. Returns HV_STAT_BAD_ARG (k == 0, k > HV_SEQ_LOOKS_MAX,
 *  fractions out of order or range, alpha outside (0, 1)),
 *  HV_STAT_NO_MEMORY or HV_STAT_OK. */
enum hv_stat_err hv_seq_bounds(enum hv_spend shape, double alpha, const double *t, size_t k,
                               double *z);

/** The boundary of a look that spends nothing: no statistic reaches it. */
#define HV_SEQ_Z_NONE 12.0

/** A plan's design: the nominal two-sided level of every look for every
 *  Holm step. */
struct hv_seq_design {
    int rep_min, rep_max;
    int last;      /**< the last look computed (rep_max unless hv_seq_design_init_to) */
    size_t m;      /**< the plan's comparisons */
    double *level; /**< level[(j − 1)·looks + (r − rep_min)]: round r, share alpha/j */
};

/** Computes the design of a plan with repetitions rep_min..rep_max
 *  (1 <= rep_min <= rep_max <= HV_SEQ_LOOKS_MAX) and m >= 1 comparisons
 *  spending alpha by shape. Free with hv_seq_design_free. Returns
 *  HV_STAT_BAD_ARG, HV_STAT_NO_MEMORY or HV_STAT_OK. Cost: m designs of
 *  O(looks · grid · band); measured per design (one Holm share) about 1 ms
 *  at 8 looks, 7 ms at 48, 53 ms at 198 and 0.5 s at 998. */
enum hv_stat_err hv_seq_design_init(struct hv_seq_design *d, enum hv_spend shape, double alpha,
                                    int rep_min, int rep_max, size_t m);

/** hv_seq_design_init for the looks rep_min..last only (rep_min <= last
 *  <= rep_max; a last past rep_max is rep_max): a look's boundary depends
 *  on the looks before it alone, so these levels are the whole design's,
 *  at the cost of last − rep_min + 1 looks. hv_seq_level is 0 past last.
 *  What a report reads at its look: the cost follows the rounds run, not
 *  the plan's cap. */
enum hv_stat_err hv_seq_design_init_to(struct hv_seq_design *d, enum hv_spend shape, double alpha,
                                       int rep_min, int rep_max, int last, size_t m);

/** Frees what hv_seq_design_init allocated (d may be zeroed). */
void hv_seq_design_free(struct hv_seq_design *d);

/** The nominal two-sided level of look `rounds` for the Holm share
 *  alpha/j (1 <= j <= m); 0 outside rep_min..rep_max. */
double hv_seq_level(const struct hv_seq_design *d, int rounds, size_t j);

/** The verdicts of the plan's m == d->m comparisons r[0..m) at look
 *  `rounds`: a comparison whose 95 % interval is not usable
 *  (hv_contrast_note) is inconclusive; better/worse by Holm over the
 *  margin p-values (hv_margin_p) against the levels of the look's shares;
 *  no_effect when the interval at the look's full level (share alpha)
 *  lies within ±margin_pct. higher_is_better[i] per comparison. */
enum hv_stat_err hv_seq_verdicts(const struct hv_seq_design *d, int rounds,
                                 const struct hv_ratio *r, size_t m, double margin_pct,
                                 const bool *higher_is_better, enum hv_verdict *verdict);

/** What to do after a round under the sequential rule. */
enum hv_seq_stop {
    HV_SEQ_MORE = 0, /**< queue one more round */
    HV_SEQ_DECIDED,  /**< stop: every comparison decided at the look's level */
    HV_SEQ_PRECISE,  /**< stop: every interval is within ci_pct (hv_adapt_next) */
    HV_SEQ_MAX,      /**< stop: max rounds done */
};

/** "more", "decided", "precise" or "max" (static). */
const char *hv_seq_stop_name(enum hv_seq_stop s);

/** The decision after `rounds` complete rounds for the m == d->m
 *  comparisons r[0..m) and their verdicts v[0..m) (hv_seq_verdicts):
 *  before rep_min, more; decided when every one is better, worse or
 *  no_effect; precise when every undecided one's interval at the look's
 *  level (share alpha) has a relative half-width, 100·(e^h − 1) on logs,
 *  within ci_pct: as precise as asked while it straddles a margin;
 *  max at rep_max; else more. The width read is the comparison's, not
 *  each configuration's: a configuration's own interval can be narrow
 *  long before the comparison is decided at a look's level. */
enum hv_seq_stop hv_seq_next(const struct hv_seq_design *d, const struct hv_ratio *r,
                             const enum hv_verdict *v, size_t m, double ci_pct, int rounds);

#endif
