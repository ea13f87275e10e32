/* compare.c — see compare.h. */
#include "compare.h"

#include "adaptive.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *hv_verdict_name(enum hv_verdict v)
{
    switch (v) {
    case HV_VERDICT_BETTER:
        return "better";
    case HV_VERDICT_WORSE:
        return "worse";
    case HV_VERDICT_NO_EFFECT:
        return "no_effect";
    case HV_VERDICT_INCONCLUSIVE:
        break;
    }
    return "inconclusive";
}

/* A ratio that holds no figure: every number NaN. */
static struct hv_ratio no_ratio(size_t cells)
{
    struct hv_ratio r = {.cells = cells, .pct = NAN, .lo_pct = NAN, .hi_pct = NAN, .p = NAN};
    r.log = (struct hv_contrast){.est = NAN, .se = NAN, .df = NAN, .lo = NAN, .hi = NAN};
    return r;
}

/* The main-effect contrast with every n raised by extra. */
static enum hv_stat_err effect_contrast(const struct hv_log_group *level,
                                        const struct hv_log_group *base, size_t cells, size_t extra,
                                        struct hv_contrast *out)
{
    struct hv_contrast_acc acc;
    hv_contrast_begin(&acc);
    double w = 1.0 / (double)cells;
    for (size_t c = 0; c < cells; c++) {
        hv_contrast_add(&acc, &level[c], w, extra);
        hv_contrast_add(&acc, &base[c], -w, extra);
    }
    return hv_contrast_end(&acc, 0.95, out);
}

/* The % figures of a ratio whose contrast out->log is computed. */
static void ratio_figures(struct hv_ratio *out)
{
    out->pct = 100.0 * expm1(out->log.est);
    out->lo_pct = 100.0 * expm1(out->log.lo);
    out->hi_pct = 100.0 * expm1(out->log.hi);
    out->p = hv_contrast_p_two_sided(&out->log, 0.0);
}

enum hv_stat_err hv_effect(const struct hv_log_group *level, const struct hv_log_group *base,
                           size_t cells, struct hv_ratio *out)
{
    *out = no_ratio(cells);
    if (cells == 0)
        return HV_STAT_BAD_ARG;
    enum hv_stat_err e = effect_contrast(level, base, cells, 0, &out->log);
    if (e != HV_STAT_OK)
        return e;
    ratio_figures(out);
    return HV_STAT_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The one-sample trimmed t of d[0..n) (n >= 2), which it sorts, as a
 * log group whose plain one-sample t it is: the trimmed mean of the
 * h = n − 2g middle values (g = floor(n·TRIM/100)), n = h so that
 * df = h − 1, and var such that var/h = (n − 1)·s_w²/(h·(h − 1)) (Yuen's
 * se²), s_w² the sample variance of d winsorized at the same g. With
 * g = 0 it is the plain mean, variance and t. */
static struct hv_log_group trimmed_group(double *d, size_t n)
{
    qsort(d, n, sizeof *d, cmp_double);
    size_t g = n * HV_PAIRED_TRIM_PCT / 100, h = n - 2 * g;
    double lo = d[g], hi = d[n - 1 - g], sum = 0.0;
    for (size_t i = g; i < n - g; i++)
        sum += d[i];
    struct hv_moments w;
    hv_moments_init(&w);
    for (size_t i = 0; i < n; i++)
        (void)hv_moments_add(&w, fmin(fmax(d[i], lo), hi));
    double s2w = w.m2 / (double)(n - 1);
    return (struct hv_log_group){
        .n = h, .mean = sum / (double)h, .var = (double)(n - 1) * s2w / (double)(h - 1)};
}

bool hv_rounds_complete(const int *a, size_t na, const int *b, size_t nb)
{
    return na >= 2 && na == nb && a != NULL && b != NULL && memcmp(a, b, na * sizeof *a) == 0;
}

enum hv_stat_err hv_effect_paired(const double *level, const double *base, size_t cells,
                                  size_t rounds, struct hv_ratio *out)
{
    *out = no_ratio(cells);
    if (cells == 0)
        return HV_STAT_BAD_ARG;
    if (rounds < 2)
        return HV_STAT_TOO_FEW;
    double *d = malloc(rounds * sizeof *d);
    if (d == NULL)
        return HV_STAT_NO_MEMORY;
    for (size_t r = 0; r < rounds; r++) {
        double sum = 0.0;
        for (size_t c = 0; c < cells; c++) {
            double a = level[c * rounds + r], b = base[c * rounds + r];
            enum hv_stat_err bad = !isfinite(a) || !isfinite(b) ? HV_STAT_NOT_FINITE
                                   : !(a > 0.0 && b > 0.0)      ? HV_STAT_NOT_POSITIVE
                                                                : HV_STAT_OK;
            if (bad != HV_STAT_OK) {
                free(d);
                return bad;
            }
            sum += log(a) - log(b);
        }
        d[r] = sum / (double)cells;
    }
    /* The one-sample t of a contrast of one group with coefficient 1
     * (est = mean, se² = var/n, df = n − 1) is the trimmed t on that
     * group. */
    struct hv_log_group g = trimmed_group(d, rounds);
    free(d);
    struct hv_contrast_acc acc;
    hv_contrast_begin(&acc);
    hv_contrast_add(&acc, &g, 1.0, 0);
    enum hv_stat_err e = hv_contrast_end(&acc, 0.95, &out->log);
    if (e != HV_STAT_OK)
        return e;
    out->log.n_min = rounds;
    out->log.runs = 2 * cells * rounds;
    ratio_figures(out);
    return HV_STAT_OK;
}

enum hv_stat_err hv_compare(const double *a, size_t na, const double *b, size_t nb,
                            struct hv_ratio *out)
{
    *out = no_ratio(1);
    struct hv_log_group ga, gb;
    enum hv_stat_err e = hv_log_group_of(a, na, &ga);
    if (e == HV_STAT_OK)
        e = hv_log_group_of(b, nb, &gb);
    if (e != HV_STAT_OK)
        return e;
    return hv_effect(&ga, &gb, 1, out);
}

enum hv_verdict hv_verdict_of(const struct hv_ratio *r, double margin_pct, bool higher_is_better)
{
    double m = margin_pct;
    if (isnan(r->lo_pct) || isnan(r->hi_pct))
        return HV_VERDICT_INCONCLUSIVE;
    if (r->lo_pct > m)
        return higher_is_better ? HV_VERDICT_BETTER : HV_VERDICT_WORSE;
    if (r->hi_pct < -m)
        return higher_is_better ? HV_VERDICT_WORSE : HV_VERDICT_BETTER;
    if (r->lo_pct >= -m && r->hi_pct <= m)
        return HV_VERDICT_NO_EFFECT;
    return HV_VERDICT_INCONCLUSIVE;
}

enum hv_verdict hv_verdict_usable(const struct hv_ratio *r, size_t n, double margin_pct,
                                  bool higher_is_better, bool *usable, char *note, size_t len)
{
    bool ok = hv_contrast_note(n, r->lo_pct, r->hi_pct, note, len);
    enum hv_verdict v = hv_verdict_of(r, margin_pct, higher_is_better);
    if (usable != NULL)
        *usable = ok;
    if (ok)
        return v;
    size_t used = len > 0 ? strlen(note) : 0;
    if (v != HV_VERDICT_INCONCLUSIVE && used < len)
        snprintf(note + used, len - used, ", so the verdict is inconclusive");
    return HV_VERDICT_INCONCLUSIVE;
}

double hv_margin_p(const struct hv_ratio *r, double margin_pct)
{
    if (isnan(r->log.est) || isnan(r->log.se))
        return NAN;
    double up = log1p(margin_pct / 100.0), down = log1p(-margin_pct / 100.0);
    double p = fmin(hv_contrast_p_above(&r->log, up), hv_contrast_p_below(&r->log, down));
    return fmin(1.0, 2.0 * p);
}

/* The distance the estimate must clear: to the margin it lies past, or to
 * the nearer margin from inside. <= 0 on a margin. */
static double decide_gap(double est, double margin_pct)
{
    double up = log1p(margin_pct / 100.0), down = log1p(-margin_pct / 100.0);
    if (est > up)
        return est - up;
    if (est < down)
        return down - est;
    return fmin(up - est, est - down);
}

/* The smallest k in 1..cap for which likely(arg, k) holds (likely is
 * monotone in k: se_k and t_k fall as k grows) into *out; beyond_cap
 * when even cap does not do, or when the gap is none (possible false). */
static void fewest_rounds(bool (*likely)(const void *arg, size_t k), const void *arg, bool possible,
                          size_t cap, struct hv_more *out)
{
    if (!possible || cap == 0 || !likely(arg, cap)) {
        out->rounds = cap;
        out->beyond_cap = true;
        return;
    }
    size_t lo = 1, hi = cap;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (likely(arg, mid))
            hi = mid;
        else
            lo = mid + 1;
    }
    out->rounds = lo;
}

/* What "k more rounds likely decide" reads of a Welch comparison. */
struct welch_need {
    const struct hv_log_group *level, *base;
    size_t cells;
    double gap, z;
};

/* Whether k more rounds likely decide: (t + z)·se_k <= gap. */
static bool welch_decides(const void *arg, size_t k)
{
    const struct welch_need *w = arg;
    struct hv_contrast c;
    if (effect_contrast(w->level, w->base, w->cells, k, &c) != HV_STAT_OK)
        return false;
    if (c.degenerate)
        return true;
    return (gsl_cdf_tdist_Pinv(0.975, c.df) + w->z) * c.se <= w->gap;
}

enum hv_stat_err hv_rounds_to_decide(const struct hv_log_group *level,
                                     const struct hv_log_group *base, size_t cells,
                                     double margin_pct, size_t cap, struct hv_more *out)
{
    *out = (struct hv_more){0};
    if (!(margin_pct >= 0.0 && margin_pct < 100.0) || cap > HV_DECIDE_CAP_MAX)
        return HV_STAT_BAD_ARG;
    struct hv_ratio r;
    enum hv_stat_err e = hv_effect(level, base, cells, &r);
    if (e != HV_STAT_OK)
        return e;
    if (hv_verdict_of(&r, margin_pct, true) != HV_VERDICT_INCONCLUSIVE)
        return HV_STAT_OK;
    struct welch_need w = {level, base, cells, decide_gap(r.log.est, margin_pct),
                           gsl_cdf_ugaussian_Pinv(HV_DECIDE_POWER)};
    fewest_rounds(welch_decides, &w, w.gap > 0.0, cap, out);
    return HV_STAT_OK;
}

/* What "k more rounds likely decide" reads of a paired comparison. */
struct paired_need {
    const struct hv_contrast *c;
    double level, gap, z;
};

/* Whether k more paired rounds likely decide at the two-sided level. */
static bool paired_decides(const void *arg, size_t k)
{
    const struct paired_need *p = arg;
    double n = (double)p->c->n_min;
    double se = p->c->se * sqrt(n / (n + (double)k));
    return (gsl_cdf_tdist_Qinv(p->level / 2.0, p->c->df + (double)k) + p->z) * se <= p->gap;
}

enum hv_stat_err hv_rounds_to_decide_paired(const struct hv_ratio *r, double margin_pct,
                                            double level, size_t cap, struct hv_more *out)
{
    *out = (struct hv_more){0};
    const struct hv_contrast *c = &r->log;
    if (!(margin_pct >= 0.0 && margin_pct < 100.0) || cap > HV_DECIDE_CAP_MAX ||
        !(level > 0.0 && level < 1.0) || isnan(c->est) || isnan(c->se) || !(c->df > 0.0) ||
        c->n_min < 1)
        return HV_STAT_BAD_ARG;
    /* Decided already at the level (no power asked): none. */
    struct paired_need now = {c, level, decide_gap(c->est, margin_pct), 0.0};
    if (c->degenerate || paired_decides(&now, 0))
        return HV_STAT_OK;
    struct paired_need p = now;
    p.z = gsl_cdf_ugaussian_Pinv(HV_DECIDE_POWER);
    fewest_rounds(paired_decides, &p, p.gap > 0.0, cap, out);
    return HV_STAT_OK;
}

/* A p-value and where it came from, for sorting. */
struct ranked {
    double p;
    size_t i;
};

static int cmp_ranked(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    if (x->p != y->p)
        return x->p < y->p ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

enum hv_stat_err hv_p_order(const double *p, size_t m, size_t *order)
{
    struct ranked *r = malloc((m > 0 ? m : 1) * sizeof *r);
    if (r == NULL)
        return HV_STAT_NO_MEMORY;
    for (size_t i = 0; i < m; i++)
        r[i] = (struct ranked){p[i], i};
    qsort(r, m, sizeof *r, cmp_ranked);
    for (size_t i = 0; i < m; i++)
        order[i] = r[i].i;
    free(r);
    return HV_STAT_OK;
}

enum hv_stat_err hv_holm(const double *p, size_t m, double alpha, double *p_adj, bool *significant)
{
    for (size_t i = 0; i < m; i++)
        if (!(p[i] >= 0.0 && p[i] <= 1.0))
            return HV_STAT_BAD_ARG;
    if (m == 0)
        return HV_STAT_OK;
    struct ranked *r = malloc(m * sizeof *r);
    if (r == NULL)
        return HV_STAT_NO_MEMORY;
    for (size_t i = 0; i < m; i++)
        r[i] = (struct ranked){p[i], i};
    qsort(r, m, sizeof *r, cmp_ranked);
    /* The j-th smallest (0-based) is compared with alpha/(m − j), i.e.
     * adjusted to (m − j)·p; the running maximum keeps the order. */
    double run = 0.0;
    for (size_t j = 0; j < m; j++) {
        run = fmax(run, fmin(1.0, (double)(m - j) * r[j].p));
        if (p_adj != NULL)
            p_adj[r[j].i] = run;
        if (significant != NULL)
            significant[r[j].i] = run <= alpha;
    }
    free(r);
    return HV_STAT_OK;
}

enum hv_stat_err hv_family_verdicts(const struct hv_ratio *r, size_t m, double margin_pct,
                                    const bool *higher_is_better, enum hv_verdict *verdict,
                                    double *p_adj)
{
    if (!(margin_pct >= 0.0 && margin_pct < 100.0))
        return HV_STAT_BAD_ARG;
    if (m == 0)
        return HV_STAT_OK;
    double *p = malloc(2 * m * sizeof *p);
    if (p == NULL)
        return HV_STAT_NO_MEMORY;
    double *adj = p + m;
    for (size_t i = 0; i < m; i++) {
        p[i] = hv_margin_p(&r[i], margin_pct);
        if (isnan(p[i]))
            p[i] = 1.0; /* a comparison without an interval claims nothing */
    }
    enum hv_stat_err e = hv_holm(p, m, HV_FAMILY_ALPHA, adj, NULL);
    for (size_t i = 0; e == HV_STAT_OK && i < m; i++) {
        verdict[i] = hv_verdict_of(&r[i], margin_pct, higher_is_better[i]);
        bool directional = verdict[i] == HV_VERDICT_BETTER || verdict[i] == HV_VERDICT_WORSE;
        if (directional && adj[i] > HV_FAMILY_ALPHA)
            verdict[i] = HV_VERDICT_INCONCLUSIVE;
        if (p_adj != NULL)
            p_adj[i] = adj[i];
    }
    free(p);
    return e;
}
