/* changepoint.c — see changepoint.h. */
#include "changepoint.h"

#include "rng.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A segment [s, e) of the history with its best split, once tested. */
struct seg {
    size_t s, e;
    bool tested;
    size_t tau; /* absolute index of the best split; 0 when none */
    double q, p;
};

void hv_cp_defaults(struct hv_cp_opts *opts)
{
    *opts = (struct hv_cp_opts){HV_CP_MIN_WINDOW, HV_CP_ALPHA, HV_CP_PERMUTATIONS, 0};
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Σ_{i<j} |v_i − v_j| from the sorted values: the k-th smallest is
 * subtracted by the n−1−k above it and added by the k below. Sorts v. */
static double pair_sum(double *v, size_t len)
{
    qsort(v, len, sizeof *v, cmp_double);
    double sum = 0.0;
    for (size_t k = 0; k < len; k++)
        sum += (2.0 * (double)k - (double)len + 1.0) * v[k];
    return sum;
}

/* The largest Q over the splits of v[0..len) with >= w on each side (len >=
 * 2w, w >= 2); *tau gets the split (the left side's length). total is
 * Σ_{i<j} |v_i − v_j|, the same for every order of v. */
static double best_split(const double *v, size_t len, size_t w, double total, size_t *tau)
{
    double within_l = 0.0, within_r = total, between = 0.0, best = -INFINITY;
    for (size_t t = 0; t + w < len; t++) {
        /* v[t] moves from the right side to the left. */
        double dl = 0.0, dr = 0.0;
        for (size_t j = 0; j < t; j++)
            dl += fabs(v[j] - v[t]);
        for (size_t j = t + 1; j < len; j++)
            dr += fabs(v[j] - v[t]);
        within_l += dl;
        within_r -= dr;
        between += dr - dl;
        double nl = (double)(t + 1), nr = (double)(len - t - 1);
        if (t + 1 < w)
            continue;
        double q = nl * nr / (nl + nr) *
                   (2.0 * between / (nl * nr) - 2.0 * within_l / (nl * (nl - 1.0)) -
                    2.0 * within_r / (nr * (nr - 1.0)));
        if (q > best) {
            best = q;
            *tau = t + 1;
        }
    }
    return best;
}

/* Tests segment g of x: its best split and permutation p-value. work holds
 * at least g->e − g->s doubles. */
static void test_segment(const double *x, struct seg *g, const struct hv_cp_opts *o, double *work)
{
    size_t len = g->e - g->s;
    g->tested = true;
    g->tau = 0;
    g->q = 0.0;
    g->p = 1.0;
    if (len < 2 * o->min_window)
        return;
    memcpy(work, x + g->s, len * sizeof *work);
    double total = pair_sum(work, len);
    size_t tau = 0;
    g->q = best_split(x + g->s, len, o->min_window, total, &tau);
    g->tau = g->s + tau;
    /* Seeded by the bounds: the same segment gets the same shuffles. */
    uint64_t state = o->seed ^ ((uint64_t)g->s * 0x9e3779b97f4a7c15ULL) ^
                     ((uint64_t)g->e * 0xc2b2ae3d27d4eb4fULL);
    double limit = o->alpha * (1.0 + (double)o->permutations);
    double threshold = g->q - 1e-12 * fabs(g->q); /* rounding of equal splits */
    unsigned count = 0;
    for (unsigned k = 0; k < o->permutations && 1.0 + count <= limit; k++) {
        for (size_t i = len; i > 1; i--) {
            size_t j = hv_rng_below(&state, i);
            double t = work[i - 1];
            work[i - 1] = work[j];
            work[j] = t;
        }
        size_t ignored;
        if (best_split(work, len, o->min_window, total, &ignored) >= threshold)
            count++;
    }
    g->p = (1.0 + count) / (1.0 + o->permutations);
}

/* Fills the means around each change point of out[0..k) (sorted). */
static void describe(const double *x, size_t n, struct hv_changepoint *out, size_t k)
{
    for (size_t c = 0; c < k; c++) {
        size_t from = c > 0 ? out[c - 1].index : 0;
        size_t to = c + 1 < k ? out[c + 1].index : n;
        size_t at = out[c].index;
        double before = 0.0, after = 0.0;
        for (size_t i = from; i < at; i++)
            before += x[i];
        for (size_t i = at; i < to; i++)
            after += x[i];
        out[c].n_before = at - from;
        out[c].n_after = to - at;
        out[c].mean_before = before / (double)(at - from);
        out[c].mean_after = after / (double)(to - at);
        out[c].rel_change =
            out[c].mean_before != 0.0 ? out[c].mean_after / out[c].mean_before - 1.0 : NAN;
    }
}

static int cmp_cp(const void *a, const void *b)
{
    const struct hv_changepoint *x = a, *y = b;
    return (x->index > y->index) - (x->index < y->index);
}

/* Binary segmentation: splits the most significant segment while its p <=
 * alpha. segs has room for cap + 1 segments. Returns the points found. */
static size_t segment(const double *x, size_t n, const struct hv_cp_opts *o, struct seg *segs,
                      double *work, struct hv_changepoint *out, size_t cap)
{
    size_t n_segs = 1, found = 0;
    segs[0] = (struct seg){.s = 0, .e = n};
    while (found < cap) {
        size_t best = 0;
        for (size_t i = 0; i < n_segs; i++) {
            if (!segs[i].tested)
                test_segment(x, &segs[i], o, work);
            if (segs[i].p < segs[best].p || (segs[i].p == segs[best].p && segs[i].q > segs[best].q))
                best = i;
        }
        struct seg *g = &segs[best];
        if (g->tau == 0 || g->p > o->alpha)
            break;
        out[found++] = (struct hv_changepoint){.index = g->tau, .q = g->q, .p = g->p};
        segs[n_segs++] = (struct seg){.s = g->tau, .e = g->e};
        *g = (struct seg){.s = g->s, .e = g->tau};
    }
    return found;
}

enum hv_stat_err hv_changepoints(const double *x, size_t n, const struct hv_cp_opts *opts,
                                 struct hv_changepoint *out, size_t cap, size_t *found)
{
    struct hv_cp_opts o;
    if (opts != NULL)
        o = *opts;
    else
        hv_cp_defaults(&o);
    *found = 0;
    if (o.min_window < 2 || !(o.alpha > 0.0 && o.alpha < 1.0) || o.permutations < 1)
        return HV_STAT_BAD_ARG;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return HV_STAT_NOT_FINITE;
    if (n < 2 * o.min_window || cap == 0)
        return HV_STAT_OK;
    /* Each point splits one segment in two, both >= min_window long. */
    size_t most = n / o.min_window;
    if (cap > most)
        cap = most;
    struct seg *segs = malloc((cap + 1) * sizeof *segs);
    double *work = malloc(n * sizeof *work);
    if (segs == NULL || work == NULL) {
        free(segs);
        free(work);
        return HV_STAT_NO_MEMORY;
    }
    size_t k = segment(x, n, &o, segs, work, out, cap);
    free(segs);
    free(work);
    qsort(out, k, sizeof *out, cmp_cp);
    describe(x, n, out, k);
    *found = k;
    return HV_STAT_OK;
}
