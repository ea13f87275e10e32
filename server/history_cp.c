/* history_cp.c — see history_cp.h. */
#include "history_cp.h"

#include "changepoint.h"

#include <math.h>
#include <stdlib.h>

/* The first point of run i of m over n points. */
static size_t run_start(size_t i, size_t n, size_t m)
{
    return (size_t)((unsigned long long)i * n / m);
}

/* The change point of the points of runs c - 2 .. c + 1 (around the
 * border before run c), or that border when their search finds none. */
static size_t place(const double *x, size_t n, size_t m, size_t c)
{
    size_t border = run_start(c, n, m);
    size_t from = run_start(c >= 2 ? c - 2 : 0, n, m);
    size_t to = run_start(c + 2 <= m ? c + 2 : m, n, m);
    struct hv_changepoint one;
    size_t k = 0;
    if (hv_changepoints(x + from, to - from, NULL, &one, 1, &k) != HV_STAT_OK || k == 0)
        return border;
    return from + one.index;
}

/* Fills the figures of out[0..k) (indices set, ascending) from v. */
static void describe(const struct hv_history_values *v, struct hv_history_cp *out, size_t k,
                     size_t w)
{
    size_t n = v->n;
    for (size_t c = 0; c < k; c++) {
        size_t from = c > 0 ? out[c - 1].index : 0;
        size_t to = c + 1 < k ? out[c + 1].index : n;
        size_t at = out[c].index;
        double before = 0.0, after = 0.0;
        for (size_t i = from; i < at; i++)
            before += v->value[i];
        for (size_t i = at; i < to; i++)
            after += v->value[i];
        struct hv_history_cp *o = &out[c];
        o->n_before = at - from;
        o->n_after = to - at;
        o->mean_before = before / (double)o->n_before;
        o->mean_after = after / (double)o->n_after;
        o->rel_change = o->mean_before != 0.0 ? o->mean_after / o->mean_before - 1.0 : NAN;
        o->at = v->t[at];
        o->before_at = v->t[at - 1];
        o->result_id = v->result_id[at];
        o->plan_id = v->plan_id[at];
        o->match_lo = v->t[at > w ? at - w : 0];
        o->match_hi = v->t[at + w < n ? at + w : n - 1];
    }
}

enum hv_stat_err hv_history_detect(const struct hv_history_values *v, struct hv_history_cp *out,
                                   size_t cap, size_t *found)
{
    *found = 0;
    size_t n = v->n, m = n <= HV_HISTORY_DETECT_MAX ? n : HV_HISTORY_DETECT_MAX;
    if (cap > HV_HISTORY_MAX_CP)
        cap = HV_HISTORY_MAX_CP;
    if (n < 2 * HV_CP_MIN_WINDOW || cap == 0)
        return HV_STAT_OK;
    double *x = m < n ? malloc(m * sizeof *x) : NULL;
    struct hv_changepoint *cp = malloc(cap * sizeof *cp);
    if ((m < n && x == NULL) || cp == NULL) {
        free(x);
        free(cp);
        return HV_STAT_NO_MEMORY;
    }
    for (size_t i = 0; x != NULL && i < m; i++) {
        size_t a = run_start(i, n, m), b = run_start(i + 1, n, m);
        double sum = 0.0;
        for (size_t j = a; j < b; j++)
            sum += v->value[j];
        x[i] = sum / (double)(b - a);
    }
    size_t k = 0;
    enum hv_stat_err e = hv_changepoints(x != NULL ? x : v->value, m, NULL, cp, cap, &k);
    for (size_t c = 0; e == HV_STAT_OK && c < k; c++) {
        out[c] = (struct hv_history_cp){.q = cp[c].q, .p = cp[c].p};
        out[c].index = m == n ? cp[c].index : place(v->value, n, m, cp[c].index);
    }
    if (e == HV_STAT_OK) {
        /* One run of points per search value, rounded up. */
        size_t w = HV_CP_MIN_WINDOW * ((n + m - 1) / m);
        describe(v, out, k, w);
        *found = k;
    }
    free(x);
    free(cp);
    return e;
}
