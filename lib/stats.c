/* stats.c — see stats.h. */
#include "stats.h"

#include <gsl/gsl_cdf.h>
#include <math.h>

double hv_t_quantile(double p, double df)
{
    return gsl_cdf_tdist_Pinv(p, df);
}

void hv_summarize_moments(size_t n, double mean, double sd, struct hv_summary *out)
{
    out->n = n;
    out->mean = mean;
    out->sd = n >= 2 ? sd : 0.0;
    out->has_ci = n >= 2;
    out->ci_low = out->ci_high = out->half_pct = NAN;
    if (!out->has_ci)
        return;
    double half = hv_t_quantile(0.975, (double)(n - 1)) * out->sd / sqrt((double)n);
    out->ci_low = mean - half;
    out->ci_high = mean + half;
    out->half_pct = mean != 0.0 ? 100.0 * half / fabs(mean) : NAN;
}

void hv_summarize(const double *x, size_t n, struct hv_summary *out)
{
    double mean = 0.0, m2 = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = x[i] - mean;
        mean += d / (double)(i + 1);
        m2 += d * (x[i] - mean);
    }
    hv_summarize_moments(n, n > 0 ? mean : NAN, n >= 2 ? sqrt(m2 / (double)(n - 1)) : 0.0, out);
}
