/* compare.h — one configuration against another, on logs: the % change
 * with a 95 % Welch interval, a verdict against an equivalence margin, the
 * rounds likely to decide an inconclusive verdict, a factorial main
 * effect, and Holm's family-wise control over many comparisons.
 *
 * Contract:
 * - Values must be positive (metrics of speed, time, size): the ratio of
 *   geometric means is exp(mean ln a − mean ln b); its interval is the
 *   Welch interval of that difference (Welch–Satterthwaite df),
 *   back-transformed, so a % change is never below −100 %.
 * - A verdict reads the 95 % interval of the % change against ±margin_pct
 *   (strictly past the margin: better or worse; within it, ends
 *   included: no_effect; otherwise inconclusive). higher_is_better gives
 *   the direction.
 * - A main effect in a full factorial is the mean over the other factors'
 *   cells of the per-cell log ratio (each cell weighs the same, as in the
 *   textbook main effect of a balanced design); its variance sums the
 *   per-cell Welch variances, so differences between cells are not counted
 *   as noise. Its n is the rounds (the smallest per-cell count), not the
 *   runs.
 * - NaN and infinite values are refused, as are values <= 0.
 * Pure functions, thread safe; hv_holm and hv_family_verdicts allocate
 * scratch memory. */
#ifndef HV_COMPARE_H
#define HV_COMPARE_H

#include "contrast.h"
#include "stats.h"

#include <stdbool.h>
#include <stddef.h>

/** The equivalence margin a plan's margin_pct defaults to. */
#define HV_MARGIN_PCT_DEFAULT 1.0
/** The family-wise error rate Holm's procedure holds (the level of the
 *  95 % intervals the verdicts read). */
#define HV_FAMILY_ALPHA 0.05
/** The power hv_rounds_to_decide asks for (see there). */
#define HV_DECIDE_POWER 0.80
/** The share of the rounds hv_effect_paired trims from each end of the
 *  round ratios (floor(rounds·HV_PAIRED_TRIM_PCT/100)): 20 %, the usual
 *  choice for the trimmed t (docs/statistics.md says why). */
#define HV_PAIRED_TRIM_PCT 20
/** The largest cap hv_rounds_to_decide takes. */
#define HV_DECIDE_CAP_MAX 1000000

/** The verdict of a comparison. */
enum hv_verdict {
    HV_VERDICT_INCONCLUSIVE = 0,
    HV_VERDICT_BETTER,    /**< the whole interval lies past the margin, the good way */
    HV_VERDICT_WORSE,     /**< the whole interval lies past the margin, the bad way */
    HV_VERDICT_NO_EFFECT, /**< the whole interval lies within ±margin */
};

/** "better", "worse", "no_effect" or "inconclusive" (static). */
const char *hv_verdict_name(enum hv_verdict v);

/** A ratio of geometric means (a over b), or a main effect. */
struct hv_ratio {
    struct hv_contrast log; /**< the difference of mean logs, se, df, n */
    size_t cells;           /**< 1 for two samples; cells pooled for a main effect */
    double pct;             /**< 100·(e^est − 1): the % change of a against b */
    double lo_pct, hi_pct;  /**< its 95 % interval */
    double p;               /**< two-sided Welch p-value of "no change" */
};

/** Compares sample a[0..na) against b[0..nb): *out is the % change of a's
 *  geometric mean over b's. Needs na, nb >= 2. Returns HV_STAT_TOO_FEW,
 *  HV_STAT_NOT_FINITE, HV_STAT_NOT_POSITIVE or HV_STAT_OK. */
enum hv_stat_err hv_compare(const double *a, size_t na, const double *b, size_t nb,
                            struct hv_ratio *out);

/** The main effect of a factor level against the factor's default, pooled
 *  over cells: level[c] and base[c] are the log groups of the level and of
 *  the default in cell c (one combination of the other factors' levels).
 *  With cells == 1 it is the plain comparison. Every group needs n >= 2. */
enum hv_stat_err hv_effect(const struct hv_log_group *level, const struct hv_log_group *base,
                           size_t cells, struct hv_ratio *out);

/** The main effect of a level against the default from complete rounds,
 *  paired within each round: level[c·rounds + r] and base[c·rounds + r]
 *  are the values of the level and of the default in cell c (cells >= 1,
 *  as for hv_effect) and round r, every cell run once in every round. Each
 *  round's log ratio d_r = (1/cells)·Σ_c (ln level − ln base) removes what
 *  the round shares (drift common to every configuration of the round).
 *  The effect is the trimmed mean of the d_r with the one-sample trimmed
 *  t (Tukey and McLaughlin; Yuen's standard error and df): with
 *  g = floor(rounds·HV_PAIRED_TRIM_PCT/100) rounds off each end of their
 *  order and h = rounds − 2g kept, est is the mean of the h middle d_r,
 *  se² = (rounds − 1)·s_w²/(h·(h − 1)) with s_w² the sample variance of
 *  the d_r winsorized at the same g, df = h − 1, and the 95 % interval
 *  est ± t(0.975, df)·se, back-transformed as hv_effect's. So a round
 *  whose ratio a burst on one run threw off (one run in ten) moves
 *  neither the estimate nor its spread; below 5 rounds nothing is trimmed
 *  (g = 0: the paired t). It estimates the centre of the d_r: the effect
 *  when their spread is symmetric about it, as it is when bursts hit
 *  either configuration alike. *out has hv_effect's members: log.n_min
 *  is the rounds (not h), log.runs every value, p the trimmed t test
 *  of "no change". Needs rounds >= 2; values must be positive and finite.
 *  Allocates scratch (HV_STAT_NO_MEMORY). For rounds that are not
 *  complete (a configuration missing from a round, imported results)
 *  hv_effect is the comparison. */
enum hv_stat_err hv_effect_paired(const double *level, const double *base, size_t cells,
                                  size_t rounds, struct hv_ratio *out);

/** Whether two sides' values are of complete rounds, the condition for
 *  hv_effect_paired (else hv_effect is the comparison): the same round
 *  numbers, in the same order, at least 2. a and b list each side's round
 *  numbers in the order of its values. Every comparison of two
 *  configurations asks this: a plan's report, and compare. */
bool hv_rounds_complete(const int *a, size_t na, const int *b, size_t nb);

/** The verdict of r against ±margin_pct (>= 0). */
enum hv_verdict hv_verdict_of(const struct hv_ratio *r, double margin_pct, bool higher_is_better);

/** The verdict of r (its rounds n, the smaller side's) as every surface
 *  states it: hv_verdict_of when its interval is usable
 *  (hv_contrast_note, lib/adaptive.h), else inconclusive, since an
 *  interval too short or too wide to print decides nothing. *usable (may
 *  be NULL) gets the judgement and note (len bytes) hv_contrast_note's
 *  words, with ", so the verdict is inconclusive" added where the
 *  interval alone would have decided. */
enum hv_verdict hv_verdict_usable(const struct hv_ratio *r, size_t n, double margin_pct,
                                  bool higher_is_better, bool *usable, char *note, size_t len);

/** The p-value of the claim "the change lies past the margin" (either way,
 *  two-sided): 2·min(P(T > (d − U)/se), P(T < (d − L)/se)) with
 *  U = ln(1 + margin/100), L = ln(1 − margin/100). It is below 0.05
 *  exactly when hv_verdict_of says better or worse. NaN when r holds no
 *  interval (its comparison failed). */
double hv_margin_p(const struct hv_ratio *r, double margin_pct);

/** How many more rounds an inconclusive comparison likely needs. */
struct hv_more {
    size_t rounds;   /**< 0 when the verdict is already decided */
    bool beyond_cap; /**< no k <= cap would do: "more than cap" */
};

/** The further rounds (one more run of every group each) likely to decide
 *  the comparison of hv_effect(level, base, cells): the smallest k with
 *    (t(0.975, df_k) + z(HV_DECIDE_POWER))·se_k <= gap
 *  where se_k and df_k are the contrast's with every n raised by k (the
 *  logs' variances as now), and gap is the distance of the current estimate
 *  to the margin it must clear (past a margin: to that margin; inside:
 *  to the nearer one). That is the n at which the interval would decide
 *  with 80 % probability if the current estimate and spread were the
 *  truth: an estimate, not a promise. Estimates on a margin never decide
 *  (beyond_cap). margin_pct must be in [0, 100), cap at most
 *  HV_DECIDE_CAP_MAX. */
enum hv_stat_err hv_rounds_to_decide(const struct hv_log_group *level,
                                     const struct hv_log_group *base, size_t cells,
                                     double margin_pct, size_t cap, struct hv_more *out);

/** The further rounds likely to decide a paired comparison r
 *  (hv_effect_paired over r->log.n_min complete rounds) read at the
 *  two-sided level `level` in (0, 1): the smallest k with
 *    (t(1 − level/2, df + k) + z(HV_DECIDE_POWER))·se·√(n/(n + k)) <= gap
 *  (the spread of the round ratios as now, gap as hv_rounds_to_decide's).
 *  An estimate, not a promise; already past the margin at that level: 0.
 *  Returns HV_STAT_BAD_ARG (margin_pct outside [0, 100), cap above
 *  HV_DECIDE_CAP_MAX, level outside (0, 1), r without an interval) or
 *  HV_STAT_OK. */
enum hv_stat_err hv_rounds_to_decide_paired(const struct hv_ratio *r, double margin_pct,
                                            double level, size_t cap, struct hv_more *out);

/** order[0..m) gets the indices of p[0..m) from the smallest p to the
 *  largest, ties by index (Holm's order). Returns HV_STAT_NO_MEMORY or
 *  HV_STAT_OK. */
enum hv_stat_err hv_p_order(const double *p, size_t m, size_t *order);

/** Holm's step-down adjustment of m p-values (each in [0, 1]): p_adj[i]
 *  (may be NULL) gets the adjusted p-value, significant[i] (may be NULL)
 *  whether p_adj[i] <= alpha. The family-wise error rate is at most alpha
 *  whatever the dependence between the tests. Returns HV_STAT_BAD_ARG for
 *  a p outside [0, 1] (NaN included), HV_STAT_NO_MEMORY, or HV_STAT_OK. */
enum hv_stat_err hv_holm(const double *p, size_t m, double alpha, double *p_adj, bool *significant);

/** The verdicts of a family of m comparisons with the family-wise error of
 *  their better/worse claims held at HV_FAMILY_ALPHA: each comparison's
 *  hv_margin_p is Holm-adjusted over the m, and a better or worse whose
 *  adjusted p exceeds HV_FAMILY_ALPHA becomes inconclusive. no_effect
 *  verdicts stand as they are. higher_is_better[i] per comparison;
 *  p_adj (may be NULL) gets the adjusted p-values. */
enum hv_stat_err hv_family_verdicts(const struct hv_ratio *r, size_t m, double margin_pct,
                                    const bool *higher_is_better, enum hv_verdict *verdict,
                                    double *p_adj);

#endif
