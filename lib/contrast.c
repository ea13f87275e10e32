/* contrast.c — see contrast.h. */
#include "contrast.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdint.h>

void hv_contrast_begin(struct hv_contrast_acc *a)
{
    *a = (struct hv_contrast_acc){.n_min = SIZE_MAX};
}

void hv_contrast_add(struct hv_contrast_acc *a, const struct hv_log_group *g, double coef,
                     size_t extra)
{
    if (a->err != HV_STAT_OK || coef == 0.0)
        return;
    size_t n = g->n + extra;
    if (n < 2) {
        a->err = HV_STAT_TOO_FEW;
        return;
    }
    if (!isfinite(coef) || !isfinite(g->mean) || !isfinite(g->var)) {
        a->err = HV_STAT_NOT_FINITE;
        return;
    }
    if (g->var < 0.0) {
        a->err = HV_STAT_BAD_ARG;
        return;
    }
    double term = coef * coef * g->var / (double)n;
    a->est += coef * g->mean;
    a->var += term;
    a->dfden += term * term / (double)(n - 1);
    /* Welch–Satterthwaite df never exceeds Σ (n_g − 1): the bound keeps
     * an underflowing denominator from giving an absurd df. */
    a->df_max += (double)(n - 1);
    a->runs += g->n;
    if (g->n < a->n_min)
        a->n_min = g->n;
    a->terms++;
}

/* The t quantile of a two-sided conf interval. */
static double t_crit(double conf, double df)
{
    return gsl_cdf_tdist_Pinv(0.5 + 0.5 * conf, df);
}

enum hv_stat_err hv_contrast_end(const struct hv_contrast_acc *a, double conf,
                                 struct hv_contrast *out)
{
    *out = (struct hv_contrast){.est = NAN, .se = NAN, .df = NAN, .lo = NAN, .hi = NAN};
    if (a->err != HV_STAT_OK)
        return a->err;
    if (a->terms == 0 || !(conf > 0.0 && conf < 1.0))
        return HV_STAT_BAD_ARG;
    out->est = a->est;
    out->se = sqrt(a->var);
    out->conf = conf;
    out->n_min = a->n_min;
    out->runs = a->runs;
    out->degenerate = a->var == 0.0;
    out->df = out->degenerate ? INFINITY : fmin(a->var * a->var / a->dfden, a->df_max);
    hv_contrast_interval(out, conf, &out->lo, &out->hi);
    return HV_STAT_OK;
}

void hv_contrast_interval(const struct hv_contrast *c, double conf, double *lo, double *hi)
{
    double half = c->degenerate ? 0.0 : t_crit(conf, c->df) * c->se;
    *lo = c->est - half;
    *hi = c->est + half;
}

double hv_contrast_p_above(const struct hv_contrast *c, double x)
{
    if (c->degenerate)
        return c->est > x ? 0.0 : 1.0;
    return gsl_cdf_tdist_Q((c->est - x) / c->se, c->df);
}

double hv_contrast_p_below(const struct hv_contrast *c, double x)
{
    if (c->degenerate)
        return c->est < x ? 0.0 : 1.0;
    return gsl_cdf_tdist_P((c->est - x) / c->se, c->df);
}

double hv_contrast_p_two_sided(const struct hv_contrast *c, double x)
{
    if (c->degenerate)
        return c->est == x ? 1.0 : 0.0;
    return fmin(1.0, 2.0 * gsl_cdf_tdist_Q(fabs(c->est - x) / c->se, c->df));
}
