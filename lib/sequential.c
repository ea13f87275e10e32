/* sequential.c — see sequential.h.
 *
 * The boundaries follow Armitage, McPherson and Rowe's recursion on the
 * score scale: W_r = Z_r·√t_r is a Brownian motion observed at the looks,
 * its increments independent N(0, t_r − t_(r−1)) under no effect. The
 * density of W at look r among the paths that crossed no earlier
 * boundary lives on (−b_r, b_r), b_r = z_r·√t_r, sampled on a Simpson
 * grid; the next look's crossing probability is the integral of that
 * density times the normal tails beyond ±b, and z is the root of
 * "crossing probability = the error this look may spend". */
#include "sequential.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* Grid points per sd of a look's increment, and the kernel's reach in sds:
 * the neglected tail (Q(8) ≈ 6e-16) is below what the spent errors need. */
#define PER_SD 6.0
#define REACH  8.0

double hv_spend(enum hv_spend shape, double alpha, double t)
{
    if (!(t > 0.0))
        return 0.0;
    if (t > 1.0)
        t = 1.0;
    switch (shape) {
    case HV_SPEND_POCOCK:
        return alpha * log1p((M_E - 1.0) * t);
    case HV_SPEND_OBF:
        break;
    }
    return 2.0 * gsl_cdf_ugaussian_Q(gsl_cdf_ugaussian_Qinv(alpha / 2.0) / sqrt(t));
}

/* The density of W at one look on a Simpson grid over [−b, b]. */
struct grid {
    size_t g; /* points, odd */
    double b, h;
    double *x, *f, *w; /* positions, density, Simpson weights times f */
};

/* Lays out g's points over [−b, b] at spacing at most hmax. */
static void grid_layout(struct grid *gr, double b, double hmax)
{
    size_t half = (size_t)ceil(b / hmax);
    if (half < 2)
        half = 2;
    gr->g = 2 * half + 1;
    gr->b = b;
    gr->h = b / (double)half;
    for (size_t i = 0; i < gr->g; i++)
        gr->x[i] = -b + (double)i * gr->h;
}

/* Simpson weights times the density, for the integrals over the grid. */
static void grid_weigh(struct grid *gr)
{
    for (size_t i = 0; i < gr->g; i++) {
        double c = (i == 0 || i == gr->g - 1) ? 1.0 : (i % 2 ? 4.0 : 2.0);
        gr->w[i] = c * gr->h / 3.0 * gr->f[i];
    }
}

/* What one root search needs: the previous look's grid, the increment's
 * sd, the look's √t and the error it may spend. */
struct cross_arg {
    const struct grid *gr;
    double s, sqrt_t, spend;
};

/* P(no earlier crossing, |W_r| >= z·√t_r) − spend. */
static double cross_gap(double z, void *p)
{
    const struct cross_arg *a = p;
    double bnew = z * a->sqrt_t, sum = 0.0;
    for (size_t i = 0; i < a->gr->g; i++) {
        double u = a->gr->x[i];
        sum += a->gr->w[i] *
               (gsl_cdf_ugaussian_Q((bnew - u) / a->s) + gsl_cdf_ugaussian_Q((bnew + u) / a->s));
    }
    return sum - a->spend;
}

/* The z in [0, HV_SEQ_Z_NONE] at which cross_gap is 0 (Brent). */
static double solve_z(struct cross_arg *a)
{
    if (cross_gap(HV_SEQ_Z_NONE, a) >= 0.0)
        return HV_SEQ_Z_NONE;
    gsl_function fn = {.function = cross_gap, .params = a};
    gsl_root_fsolver *s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
    if (s == NULL)
        return NAN;
    double z = NAN;
    if (gsl_root_fsolver_set(s, &fn, 0.0, HV_SEQ_Z_NONE) == GSL_SUCCESS) {
        for (int it = 0; it < 100; it++) {
            if (gsl_root_fsolver_iterate(s) != GSL_SUCCESS)
                break;
            z = gsl_root_fsolver_root(s);
            double lo = gsl_root_fsolver_x_lower(s), hi = gsl_root_fsolver_x_upper(s);
            if (gsl_root_test_interval(lo, hi, 1e-10, 0.0) == GSL_SUCCESS)
                break;
        }
    }
    gsl_root_fsolver_free(s);
    return z;
}

/* The density at the next look on `to` (laid out), from `from`: the
 * convolution with the increment's normal density of sd s. */
static void convolve(const struct grid *from, struct grid *to, double s)
{
    double reach = REACH * s, norm = 1.0 / (s * sqrt(2.0 * M_PI));
    for (size_t i = 0; i < to->g; i++) {
        double w = to->x[i], sum = 0.0;
        double lo = (w - reach - from->x[0]) / from->h, hi = (w + reach - from->x[0]) / from->h;
        size_t a = lo > 0.0 ? (size_t)lo : 0;
        size_t b = hi < (double)(from->g - 1) ? (size_t)hi + 1 : from->g;
        for (size_t l = a; l < b; l++) {
            double d = (w - from->x[l]) / s;
            sum += from->w[l] * exp(-0.5 * d * d);
        }
        to->f[i] = sum * norm;
    }
}

enum hv_stat_err hv_seq_bounds(enum hv_spend shape, double alpha, const double *t, size_t k,
                               double *z)
{
    if (k == 0 || k > HV_SEQ_LOOKS_MAX || !(alpha > 0.0 && alpha < 1.0))
        return HV_STAT_BAD_ARG;
    double hmax = INFINITY;
    for (size_t r = 0; r < k; r++) {
        double prev = r ? t[r - 1] : 0.0;
        if (!(t[r] > prev && t[r] <= 1.0))
            return HV_STAT_BAD_ARG;
        hmax = fmin(hmax, sqrt(t[r] - prev) / PER_SD);
    }
    /* The widest region: HV_SEQ_Z_NONE·√1. */
    size_t cap = 2 * (size_t)ceil(HV_SEQ_Z_NONE / hmax) + 5;
    double *mem = malloc(6 * cap * sizeof *mem);
    if (mem == NULL)
        return HV_STAT_NO_MEMORY;
    struct grid g[2] = {{.x = mem, .f = mem + cap, .w = mem + 2 * cap},
                        {.x = mem + 3 * cap, .f = mem + 4 * cap, .w = mem + 5 * cap}};
    struct grid *cur = &g[0], *next = &g[1];
    enum hv_stat_err e = HV_STAT_OK;
    /* Look 1: W is N(0, t_1); the boundary is the normal quantile. */
    double spent = hv_spend(shape, alpha, t[0]);
    z[0] = spent > 0.0 ? fmin(gsl_cdf_ugaussian_Qinv(spent / 2.0), HV_SEQ_Z_NONE) : HV_SEQ_Z_NONE;
    grid_layout(cur, z[0] * sqrt(t[0]), hmax);
    for (size_t i = 0; i < cur->g; i++)
        cur->f[i] = exp(-0.5 * cur->x[i] * cur->x[i] / t[0]) / sqrt(2.0 * M_PI * t[0]);
    grid_weigh(cur);
    for (size_t r = 1; r < k; r++) {
        double now = hv_spend(shape, alpha, t[r]);
        struct cross_arg a = {
            .gr = cur, .s = sqrt(t[r] - t[r - 1]), .sqrt_t = sqrt(t[r]), .spend = now - spent};
        z[r] = a.spend > 0.0 ? solve_z(&a) : HV_SEQ_Z_NONE;
        if (isnan(z[r])) {
            e = HV_STAT_NO_MEMORY;
            break;
        }
        spent = now;
        if (r + 1 == k)
            break;
        grid_layout(next, z[r] * a.sqrt_t, hmax);
        convolve(cur, next, a.s);
        grid_weigh(next);
        struct grid *swap = cur;
        cur = next;
        next = swap;
    }
    free(mem);
    return e;
}

enum hv_stat_err hv_seq_design_init(struct hv_seq_design *d, enum hv_spend shape, double alpha,
                                    int rep_min, int rep_max, size_t m)
{
    return hv_seq_design_init_to(d, shape, alpha, rep_min, rep_max, rep_max, m);
}

enum hv_stat_err hv_seq_design_init_to(struct hv_seq_design *d, enum hv_spend shape, double alpha,
                                       int rep_min, int rep_max, int last, size_t m)
{
    if (last > rep_max)
        last = rep_max;
    *d = (struct hv_seq_design){.rep_min = rep_min, .rep_max = rep_max, .last = last, .m = m};
    if (rep_min < 1 || rep_max < rep_min || rep_max > HV_SEQ_LOOKS_MAX || last < rep_min ||
        m == 0 || m > SIZE_MAX / HV_SEQ_LOOKS_MAX)
        return HV_STAT_BAD_ARG;
    size_t looks = (size_t)(last - rep_min + 1);
    double *t = malloc(2 * looks * sizeof *t);
    d->level = malloc(m * looks * sizeof *d->level);
    if (t == NULL || d->level == NULL) {
        free(t);
        hv_seq_design_free(d);
        return HV_STAT_NO_MEMORY;
    }
    double *z = t + looks;
    for (size_t i = 0; i < looks; i++)
        t[i] = (double)(rep_min + (int)i) / (double)rep_max;
    enum hv_stat_err e = HV_STAT_OK;
    for (size_t j = 1; e == HV_STAT_OK && j <= m; j++) {
        e = hv_seq_bounds(shape, alpha / (double)j, t, looks, z);
        for (size_t i = 0; e == HV_STAT_OK && i < looks; i++)
            d->level[(j - 1) * looks + i] = 2.0 * gsl_cdf_ugaussian_Q(z[i]);
    }
    free(t);
    if (e != HV_STAT_OK)
        hv_seq_design_free(d);
    return e;
}

void hv_seq_design_free(struct hv_seq_design *d)
{
    free(d->level);
    d->level = NULL;
}

double hv_seq_level(const struct hv_seq_design *d, int rounds, size_t j)
{
    if (d->level == NULL || rounds < d->rep_min || rounds > d->last || j < 1 || j > d->m)
        return 0.0;
    size_t looks = (size_t)(d->last - d->rep_min + 1);
    return d->level[(j - 1) * looks + (size_t)(rounds - d->rep_min)];
}

/* Whether r's interval at two-sided level a lies within ±margin_pct: both
 * one-sided tests of equivalence at a/2 (the interval at 1 − a). */
static bool within_margin(const struct hv_ratio *r, double margin_pct, double a)
{
    double up = log1p(margin_pct / 100.0), down = log1p(-margin_pct / 100.0);
    return hv_contrast_p_below(&r->log, up) <= a / 2.0 &&
           hv_contrast_p_above(&r->log, down) <= a / 2.0;
}

enum hv_stat_err hv_seq_verdicts(const struct hv_seq_design *d, int rounds,
                                 const struct hv_ratio *r, size_t m, double margin_pct,
                                 const bool *higher_is_better, enum hv_verdict *verdict)
{
    if (m != d->m || d->level == NULL || !(margin_pct >= 0.0 && margin_pct < 100.0))
        return HV_STAT_BAD_ARG;
    double *p = calloc(m, sizeof *p + sizeof(size_t));
    if (p == NULL)
        return HV_STAT_NO_MEMORY;
    size_t *order = (size_t *)(p + m);
    for (size_t i = 0; i < m; i++) {
        bool usable = hv_contrast_note(r[i].log.n_min, r[i].lo_pct, r[i].hi_pct, NULL, 0);
        p[i] = usable ? hv_margin_p(&r[i], margin_pct) : NAN;
        if (isnan(p[i]))
            p[i] = 2.0; /* no interval: claims nothing */
        verdict[i] = HV_VERDICT_INCONCLUSIVE;
        if (usable && within_margin(&r[i], margin_pct, hv_seq_level(d, rounds, 1)))
            verdict[i] = HV_VERDICT_NO_EFFECT;
    }
    if (hv_p_order(p, m, order) != HV_STAT_OK) {
        free(p);
        return HV_STAT_NO_MEMORY;
    }
    /* Step down: the j-th smallest (0-based) at the share alpha/(m − j);
     * the first that fails stops every larger one. */
    for (size_t j = 0; j < m; j++) {
        size_t i = order[j];
        if (!(p[i] <= hv_seq_level(d, rounds, m - j)))
            break;
        bool up = r[i].log.est > 0.0;
        verdict[i] = up == higher_is_better[i] ? HV_VERDICT_BETTER : HV_VERDICT_WORSE;
    }
    free(p);
    return HV_STAT_OK;
}

const char *hv_seq_stop_name(enum hv_seq_stop s)
{
    switch (s) {
    case HV_SEQ_DECIDED:
        return "decided";
    case HV_SEQ_PRECISE:
        return "precise";
    case HV_SEQ_MAX:
        return "max";
    case HV_SEQ_MORE:
        break;
    }
    return "more";
}

enum hv_seq_stop hv_seq_next(const struct hv_seq_design *d, const struct hv_ratio *r,
                             const enum hv_verdict *v, size_t m, double ci_pct, int rounds)
{
    if (rounds < d->rep_min)
        return HV_SEQ_MORE;
    double level = hv_seq_level(d, rounds, 1);
    bool decided = m > 0, precise = m > 0;
    for (size_t i = 0; i < m; i++) {
        if (v[i] != HV_VERDICT_INCONCLUSIVE)
            continue;
        decided = false;
        double half = NAN;
        if (level > 0.0 && !isnan(r[i].log.se))
            half = r[i].log.degenerate ? 0.0
                                       : gsl_cdf_tdist_Qinv(level / 2.0, r[i].log.df) * r[i].log.se;
        precise = precise && 100.0 * expm1(half) <= ci_pct;
    }
    if (decided)
        return HV_SEQ_DECIDED;
    if (precise)
        return HV_SEQ_PRECISE;
    return rounds >= d->rep_max ? HV_SEQ_MAX : HV_SEQ_MORE;
}
