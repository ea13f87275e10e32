/* contrast.h — a linear contrast of several groups' mean logarithms: its
 * estimate, standard error, Welch–Satterthwaite degrees of freedom, a
 * Student-t interval at any confidence level, and one-sided p-values.
 *
 * For groups g with n_g values, mean log m_g, sample variance of logs v_g
 * and coefficients c_g:
 *   est = Σ c_g·m_g,  se² = Σ a_g with a_g = c_g²·v_g/n_g,
 *   df  = (Σ a_g)² / Σ (a_g²/(n_g − 1))                (Welch–Satterthwaite)
 * A ratio of two configurations is the contrast (+1, −1); a factorial main
 * effect and an efficiency score are others. The groups are taken as
 * independent. Every group with a nonzero coefficient needs n >= 2.
 *
 * Usage: hv_contrast_begin, hv_contrast_add per group, hv_contrast_end.
 * Pure functions on caller-owned structs: thread safe. */
#ifndef HV_CONTRAST_H
#define HV_CONTRAST_H

#include "stats.h"

#include <stdbool.h>
#include <stddef.h>

/** A contrast being accumulated; its members are private to contrast.c. */
struct hv_contrast_acc {
    double est, var, dfden, df_max;
    size_t n_min, runs, terms;
    enum hv_stat_err err; /**< the first problem met by hv_contrast_add */
};

/** A finished contrast. */
struct hv_contrast {
    double est;      /**< Σ c_g·m_g (on logs) */
    double se;       /**< its standard error */
    double df;       /**< Welch–Satterthwaite; INFINITY when degenerate */
    double conf;     /**< the confidence level of lo..hi */
    double lo, hi;   /**< est ∓ t·se */
    size_t n_min;    /**< the smallest n of a group in the contrast: the rounds */
    size_t runs;     /**< Σ n_g over the groups in the contrast */
    bool degenerate; /**< se == 0 (no group has spread): lo == hi == est */
};

/** Starts an empty contrast. */
void hv_contrast_begin(struct hv_contrast_acc *a);

/** Adds group g with coefficient coef, as if it had extra more values of the
 *  same mean and variance (extra = 0 for the data as they are; > 0 to ask
 *  how the interval would shrink). A zero coef is ignored. A problem (n + extra
 *  < 2, a non-finite member, a negative variance) is kept in a->err for
 *  hv_contrast_end to return. */
void hv_contrast_add(struct hv_contrast_acc *a, const struct hv_log_group *g, double coef,
                     size_t extra);

/** Finishes the contrast with a conf (0 < conf < 1, e.g. 0.95) two-sided
 *  interval. Returns the first error hv_contrast_add met, HV_STAT_BAD_ARG
 *  for no group or a bad conf, else HV_STAT_OK. */
enum hv_stat_err hv_contrast_end(const struct hv_contrast_acc *a, double conf,
                                 struct hv_contrast *out);

/** The conf two-sided interval of a finished contrast at another level
 *  (e.g. 1 − 0.05/m for a Bonferroni family). */
void hv_contrast_interval(const struct hv_contrast *c, double conf, double *lo, double *hi);

/** The one-sided p-value of the claim "the true contrast exceeds x":
 *  P(T_df >= (est − x)/se). When degenerate: 0 if est > x, else 1. */
double hv_contrast_p_above(const struct hv_contrast *c, double x);

/** The one-sided p-value of the claim "the true contrast is below x". */
double hv_contrast_p_below(const struct hv_contrast *c, double x);

/** The two-sided p-value of "the true contrast differs from x" (the Welch
 *  test when the contrast is a difference of two groups). */
double hv_contrast_p_two_sided(const struct hv_contrast *c, double x);

#endif
