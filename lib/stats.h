/* stats.h — summary statistics with Student-t confidence intervals.
 *
 * Pure functions, thread safe. Quantiles come from GSL. */
#ifndef HV_STATS_H
#define HV_STATS_H

#include <stdbool.h>
#include <stddef.h>

/** The summary of n observations of one metric. */
struct hv_summary {
    size_t n;
    double mean;
    double sd;     /**< sample standard deviation (n-1); 0 when n < 2 */
    bool has_ci;   /**< false when n < 2: no interval can be given */
    double ci_low; /**< 95 % confidence interval of the mean */
    double ci_high;
    double half_pct; /**< CI half-width as % of |mean| (NaN when mean == 0) */
};

/** Two-sided Student-t quantile: the t with P(T <= t) = p for df degrees of
 *  freedom (df > 0). */
double hv_t_quantile(double p, double df);

/** Summarises x[0..n) (Welford's algorithm: stable for large means). */
void hv_summarize(const double *x, size_t n, struct hv_summary *out);

/** Summarises from moments already computed elsewhere (e.g. by SQL's avg
 *  and stddev_samp). sd is ignored when n < 2. */
void hv_summarize_moments(size_t n, double mean, double sd, struct hv_summary *out);

#endif
