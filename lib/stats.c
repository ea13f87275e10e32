/* stats.c — see stats.h. */
#include "stats.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>

const char *hv_stat_err_str(enum hv_stat_err err)
{
    switch (err) {
    case HV_STAT_OK:
        return "ok";
    case HV_STAT_NOT_FINITE:
        return "a value is NaN or infinite";
    case HV_STAT_TOO_FEW:
        return "too few observations";
    case HV_STAT_NOT_POSITIVE:
        return "a value is zero or negative, so it has no logarithm";
    case HV_STAT_BAD_ARG:
        return "an argument is out of range";
    case HV_STAT_NO_MEMORY:
        return "out of memory";
    }
    return "unknown error";
}

const char *hv_ci_scale_name(enum hv_ci_scale scale)
{
    switch (scale) {
    case HV_CI_LOG:
        return "log";
    case HV_CI_LINEAR:
        return "linear";
    case HV_CI_NONE:
        break;
    }
    return "none";
}

double hv_t_quantile(double p, double df)
{
    return gsl_cdf_tdist_Pinv(p, df);
}

/* Sets the arithmetic members and a LINEAR (or NONE) reported interval. */
static void fill_linear(size_t n, double mean, double sd, struct hv_summary *out)
{
    out->n = n;
    out->mean = n > 0 ? mean : NAN;
    out->sd = n >= 2 ? sd : 0.0;
    out->has_ci = n >= 2;
    out->cv_pct = n >= 2 && mean != 0.0 ? 100.0 * out->sd / fabs(mean) : NAN;
    out->ci_low = out->ci_high = out->half_pct = NAN;
    out->scale = HV_CI_NONE;
    out->center = out->lo = out->hi = out->rel_half_pct = NAN;
    out->mean_log = out->sd_log = NAN;
    out->lo_clamped = false;
    if (!out->has_ci)
        return;
    double half = hv_t_quantile(0.975, (double)(n - 1)) * out->sd / sqrt((double)n);
    out->ci_low = mean - half;
    out->ci_high = mean + half;
    out->half_pct = mean != 0.0 ? 100.0 * half / fabs(mean) : NAN;
    out->scale = HV_CI_LINEAR;
    out->center = mean;
    out->lo = out->ci_low;
    out->hi = out->ci_high;
    out->rel_half_pct = out->half_pct;
}

/* Replaces the reported interval by the back-transformed log interval. */
static void fill_log(double mean_log, double sd_log, struct hv_summary *out)
{
    out->mean_log = mean_log;
    out->sd_log = sd_log;
    double h = hv_t_quantile(0.975, (double)(out->n - 1)) * sd_log / sqrt((double)out->n);
    out->scale = HV_CI_LOG;
    out->center = exp(mean_log);
    out->lo = exp(mean_log - h);
    out->hi = exp(mean_log + h);
    out->rel_half_pct = 100.0 * expm1(h);
}

void hv_summary_nonneg(struct hv_summary *s)
{
    if (s->scale == HV_CI_LINEAR && s->lo < 0.0) {
        s->lo = 0.0;
        s->lo_clamped = true;
    }
}

/* Multiplies every absolute figure of s by scale (relative ones stay). */
static void unscale(struct hv_summary *s, double scale)
{
    double *abs_figures[] = {&s->mean, &s->sd, &s->ci_low, &s->ci_high, &s->center, &s->lo, &s->hi};
    for (size_t i = 0; i < sizeof abs_figures / sizeof abs_figures[0]; i++)
        *abs_figures[i] *= scale;
    s->mean_log += log(scale);
}

enum hv_stat_err hv_summarize_scaled(const double *x, size_t n, struct hv_summary *out)
{
    double scale = 0.0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]))
            scale = fmax(scale, fabs(x[i]));
    double *y = malloc((n ? n : 1) * sizeof *y);
    if (y == NULL)
        return HV_STAT_NO_MEMORY;
    for (size_t i = 0; i < n; i++)
        y[i] = scale > 0.0 ? x[i] / scale : x[i];
    enum hv_stat_err e = n > 0 ? hv_summarize(y, n, out) : hv_summarize(NULL, 0, out);
    free(y);
    if (e == HV_STAT_OK && scale > 0.0)
        unscale(out, scale);
    return e;
}

void hv_summarize_moments(size_t n, double mean, double sd, struct hv_summary *out)
{
    fill_linear(n, mean, sd, out);
}

void hv_moments_init(struct hv_moments *m)
{
    *m = (struct hv_moments){0};
}

enum hv_stat_err hv_moments_add(struct hv_moments *m, double x)
{
    if (!isfinite(x))
        return HV_STAT_NOT_FINITE;
    m->n++;
    double d = x - m->mean;
    m->mean += d / (double)m->n;
    m->m2 += d * (x - m->mean);
    if (x <= 0.0) {
        m->n_nonpos++;
        return HV_STAT_OK;
    }
    size_t np = m->n - m->n_nonpos;
    double l = log(x), dl = l - m->log_mean;
    m->log_mean += dl / (double)np;
    m->log_m2 += dl * (l - m->log_mean);
    return HV_STAT_OK;
}

/* Chan et al.: the mean and m2 of the union of two samples. */
static void merge_pair(size_t na, double *mean, double *m2, size_t nb, double mean_b, double m2_b)
{
    if (nb == 0)
        return;
    if (na == 0) {
        *mean = mean_b;
        *m2 = m2_b;
        return;
    }
    double n = (double)(na + nb), d = mean_b - *mean;
    *mean += d * (double)nb / n;
    *m2 += m2_b + d * d * (double)na * (double)nb / n;
}

void hv_moments_merge(struct hv_moments *dst, const struct hv_moments *src)
{
    size_t pa = dst->n - dst->n_nonpos, pb = src->n - src->n_nonpos;
    merge_pair(dst->n, &dst->mean, &dst->m2, src->n, src->mean, src->m2);
    merge_pair(pa, &dst->log_mean, &dst->log_m2, pb, src->log_mean, src->log_m2);
    dst->n += src->n;
    dst->n_nonpos += src->n_nonpos;
}

enum hv_stat_err hv_moments_set(struct hv_moments *m, size_t n, double mean, double sd,
                                double log_mean, double log_sd, size_t n_nonpos)
{
    if (n_nonpos > n || sd < 0.0 || log_sd < 0.0)
        return HV_STAT_BAD_ARG;
    if (n > 0 && (!isfinite(mean) || !isfinite(sd)))
        return HV_STAT_NOT_FINITE;
    size_t np = n - n_nonpos;
    if (np > 0 && (!isfinite(log_mean) || !isfinite(log_sd)))
        return HV_STAT_NOT_FINITE;
    m->n = n;
    m->mean = n > 0 ? mean : 0.0;
    m->m2 = n >= 2 ? sd * sd * (double)(n - 1) : 0.0;
    m->n_nonpos = n_nonpos;
    m->log_mean = np > 0 ? log_mean : 0.0;
    m->log_m2 = np >= 2 ? log_sd * log_sd * (double)(np - 1) : 0.0;
    return HV_STAT_OK;
}

void hv_moments_summary(const struct hv_moments *m, struct hv_summary *out)
{
    double sd = m->n >= 2 ? sqrt(m->m2 / (double)(m->n - 1)) : 0.0;
    fill_linear(m->n, m->mean, sd, out);
    if (m->n >= 2 && m->n_nonpos == 0)
        fill_log(m->log_mean, sqrt(m->log_m2 / (double)(m->n - 1)), out);
}

enum hv_stat_err hv_moments_log_group(const struct hv_moments *m, struct hv_log_group *g)
{
    if (m->n_nonpos > 0)
        return HV_STAT_NOT_POSITIVE;
    g->n = m->n;
    g->mean = m->n > 0 ? m->log_mean : NAN;
    g->var = m->n >= 2 ? m->log_m2 / (double)(m->n - 1) : 0.0;
    return HV_STAT_OK;
}

enum hv_stat_err hv_log_group_of(const double *x, size_t n, struct hv_log_group *g)
{
    struct hv_moments m;
    hv_moments_init(&m);
    for (size_t i = 0; i < n; i++)
        if (hv_moments_add(&m, x[i]) != HV_STAT_OK)
            return HV_STAT_NOT_FINITE;
    return hv_moments_log_group(&m, g);
}

enum hv_stat_err hv_summarize(const double *x, size_t n, struct hv_summary *out)
{
    struct hv_moments m;
    hv_moments_init(&m);
    for (size_t i = 0; i < n; i++)
        if (hv_moments_add(&m, x[i]) != HV_STAT_OK) {
            fill_linear(0, NAN, 0.0, out);
            out->n = n;
            return HV_STAT_NOT_FINITE;
        }
    hv_moments_summary(&m, out);
    return HV_STAT_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n), n >= 1; sorts v. */
static double median_sorting(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

enum hv_stat_err hv_outliers(const double *x, size_t n, double *score, bool *flag,
                             size_t *n_flagged)
{
    if (n_flagged != NULL)
        *n_flagged = 0;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return HV_STAT_NOT_FINITE;
    if (n == 0)
        return HV_STAT_OK;
    double *v = malloc(n * sizeof *v);
    if (v == NULL)
        return HV_STAT_NO_MEMORY;
    for (size_t i = 0; i < n; i++)
        v[i] = x[i];
    double med = median_sorting(v, n), mean_ad = 0.0;
    for (size_t i = 0; i < n; i++) {
        v[i] = fabs(x[i] - med);
        mean_ad += v[i] / (double)n;
    }
    double mad = median_sorting(v, n);
    free(v);
    /* 0.6745 is the 75th percentile of the standard normal: MAD/0.6745
     * estimates sigma. 1.253314 = sqrt(pi/2) does the same for MeanAD. */
    double scale = mad > 0.0 ? mad / 0.6745 : 1.253314 * mean_ad;
    for (size_t i = 0; i < n; i++) {
        double m = scale > 0.0 ? (x[i] - med) / scale : 0.0;
        bool out = fabs(m) > HV_OUTLIER_Z;
        if (score != NULL)
            score[i] = m;
        if (flag != NULL)
            flag[i] = out;
        if (out && n_flagged != NULL)
            (*n_flagged)++;
    }
    return HV_STAT_OK;
}
