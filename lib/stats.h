/* stats.h — the summary of one metric's values: n, mean, sd, CV, a 95 %
 * interval, and outlier flags.
 *
 * Contract:
 * - Every figure carries its n.
 * - A positive metric's interval is computed on logarithms: the geometric
 *   mean and the Student-t interval of the mean log, back-transformed, so
 *   its lower bound is never negative. When any value is <= 0 the interval
 *   falls back to the arithmetic mean ± t·sd/√n, and the summary says so
 *   (scale HV_CI_LINEAR); for a quantity that cannot be negative the
 *   caller then lets hv_summary_nonneg raise a negative lower bound to 0.
 * - NaN and infinite values are refused (HV_STAT_NOT_FINITE), never
 *   skipped.
 * - Outliers are flagged by the modified z-score (Iglewicz–Hoaglin,
 *   |M| > 3.5); nothing is ever dropped.
 * - A server can keep running aggregates (struct hv_moments: add, merge,
 *   or fill from SQL's avg and stddev_samp) and summarise them without the
 *   values.
 * Pure functions, no I/O, no global state: thread safe. Quantiles come from
 * GSL. */
#ifndef HV_STATS_H
#define HV_STATS_H

#include <stdbool.h>
#include <stddef.h>

/** Why a statistic could not be computed. */
enum hv_stat_err {
    HV_STAT_OK = 0,
    HV_STAT_NOT_FINITE,   /**< an input value is NaN or infinite */
    HV_STAT_TOO_FEW,      /**< fewer observations than the method needs */
    HV_STAT_NOT_POSITIVE, /**< a log-scale method met a value <= 0 */
    HV_STAT_BAD_ARG,      /**< an argument outside its documented range */
    HV_STAT_NO_MEMORY,    /**< an allocation failed */
};

/** A short English phrase for err (static; never NULL). */
const char *hv_stat_err_str(enum hv_stat_err err);

/** The scale of the interval a summary reports. */
enum hv_ci_scale {
    HV_CI_NONE = 0, /**< n < 2: no interval */
    HV_CI_LOG,      /**< every value > 0: geometric mean, interval on logs */
    HV_CI_LINEAR,   /**< some value <= 0, or only mean and sd known */
};

/** The name of a scale: "none", "log" or "linear" (static). */
const char *hv_ci_scale_name(enum hv_ci_scale scale);

/** The summary of n observations of one metric. */
struct hv_summary {
    size_t n;
    double mean;   /**< arithmetic mean; NaN when n == 0 */
    double sd;     /**< sample standard deviation (n-1); 0 when n < 2 */
    double cv_pct; /**< 100·sd/|mean|; NaN when n < 2 or mean == 0 */
    /* The arithmetic 95 % interval of the mean, whatever the scale below. */
    bool has_ci;   /**< false when n < 2: no interval can be given */
    double ci_low; /**< 95 % confidence interval of the mean */
    double ci_high;
    double half_pct; /**< CI half-width as % of |mean| (NaN when mean == 0) */
    /* The interval to report. */
    enum hv_ci_scale scale; /**< which interval lo..hi is */
    double center;          /**< geometric mean (LOG), mean (LINEAR), NaN (NONE) */
    double lo, hi;          /**< 95 % interval of center; NaN when scale is NONE */
    double rel_half_pct;    /**< its relative half-width: 100·(e^h − 1) for LOG
                                 (the wider, upper side), half_pct for LINEAR */
    bool lo_clamped;        /**< lo was raised to 0 by hv_summary_nonneg */
    double mean_log;        /**< mean of ln x (LOG only, else NaN) */
    double sd_log;          /**< sample sd of ln x (LOG only, else NaN) */
};

/** Running aggregates of a metric's values: enough to summarise them and to
 *  compare them on logs without keeping the values. m2 and log_m2 are sums
 *  of squared deviations from the mean (Welford), so large values keep
 *  their precision. The log members cover every value only while
 *  n_nonpos == 0. */
struct hv_moments {
    size_t n;
    double mean, m2;         /**< of the values */
    size_t n_nonpos;         /**< values <= 0 (they have no logarithm) */
    double log_mean, log_m2; /**< of ln x over the positive values */
};

/** One group's logarithms as n, mean and sample variance: what the
 *  comparisons of compare.h and efficiency.h take. */
struct hv_log_group {
    size_t n;
    double mean; /**< mean of ln x */
    double var;  /**< sample variance of ln x (n-1); 0 when n < 2 */
};

/** Two-sided Student-t quantile: the t with P(T <= t) = p for df degrees of
 *  freedom (df > 0). */
double hv_t_quantile(double p, double df);

/** Summarises x[0..n) (Welford's algorithm: stable for large means). Every
 *  member of *out is set. Returns HV_STAT_NOT_FINITE when a value is NaN or
 *  infinite (then *out holds n and NaNs only), HV_STAT_OK otherwise (n may
 *  be 0 or 1: no interval, scale HV_CI_NONE). */
enum hv_stat_err hv_summarize(const double *x, size_t n, struct hv_summary *out);

/** hv_summarize on x[0..n) divided by their largest finite magnitude, the
 *  absolute figures multiplied back (relative ones, CV and rel_half_pct,
 *  are as they are): no square overflows whatever the values. What every
 *  caller that judges a series (the stop rule, the report) uses, so they
 *  read the same widths. HV_STAT_NO_MEMORY when memory runs out. */
enum hv_stat_err hv_summarize_scaled(const double *x, size_t n, struct hv_summary *out);

/** Summarises from a mean and sd computed elsewhere (e.g. by SQL's avg and
 *  stddev_samp): the arithmetic interval only (scale HV_CI_LINEAR when
 *  n >= 2). sd is ignored when n < 2. */
void hv_summarize_moments(size_t n, double mean, double sd, struct hv_summary *out);

/** For a quantity that cannot be negative (a rate, a time, a size: what
 *  lib/result.c refuses below 0): raises a LINEAR interval's negative lower
 *  bound to 0 and sets lo_clamped. The true mean lies in [0, ∞), so the
 *  interval keeps at least its coverage. A LOG interval is never negative
 *  and is left alone. */
void hv_summary_nonneg(struct hv_summary *s);

/** Empties *m. */
void hv_moments_init(struct hv_moments *m);

/** Adds one value; refuses (HV_STAT_NOT_FINITE, *m unchanged) NaN or
 *  infinity. */
enum hv_stat_err hv_moments_add(struct hv_moments *m, double x);

/** Adds every value of src to dst (Chan et al.'s pairwise update), as if
 *  they had been added one by one. */
void hv_moments_merge(struct hv_moments *dst, const struct hv_moments *src);

/** Fills *m from figures SQL gives directly: count, avg(x),
 *  stddev_samp(x), avg(ln x) and stddev_samp(ln x) over the positive
 *  values, and the count of values <= 0. NULL-valued (undefined) sds are
 *  passed as 0. Returns HV_STAT_NOT_FINITE or HV_STAT_BAD_ARG (negative sd,
 *  n_nonpos > n) without touching *m. */
enum hv_stat_err hv_moments_set(struct hv_moments *m, size_t n, double mean, double sd,
                                double log_mean, double log_sd, size_t n_nonpos);

/** Summarises running aggregates exactly as hv_summarize would the values
 *  (the log interval when every value was positive). */
void hv_moments_summary(const struct hv_moments *m, struct hv_summary *out);

/** The logarithms of the values added to m, for compare.h. Returns
 *  HV_STAT_NOT_POSITIVE when a value was <= 0. */
enum hv_stat_err hv_moments_log_group(const struct hv_moments *m, struct hv_log_group *g);

/** The log group of x[0..n): HV_STAT_NOT_FINITE or HV_STAT_NOT_POSITIVE
 *  when a value has no finite logarithm. */
enum hv_stat_err hv_log_group_of(const double *x, size_t n, struct hv_log_group *g);

/** The outlier threshold of the modified z-score (Iglewicz and Hoaglin). */
#define HV_OUTLIER_Z 3.5

/** Modified z-scores of x[0..n): M_i = 0.6745·(x_i − median)/MAD, where MAD
 *  is the median absolute deviation. When MAD is 0 (more than half the
 *  values equal) the mean absolute deviation stands in:
 *  M_i = (x_i − median)/(1.253314·MeanAD); when that is 0 too every score
 *  is 0. flag[i] is set when |M_i| > HV_OUTLIER_Z. score and flag may each
 *  be NULL; *n_flagged (may be NULL) gets the count. Allocates a scratch
 *  copy of x. Returns HV_STAT_NOT_FINITE, HV_STAT_NO_MEMORY or HV_STAT_OK
 *  (n == 0 included). */
enum hv_stat_err hv_outliers(const double *x, size_t n, double *score, bool *flag,
                             size_t *n_flagged);

#endif
