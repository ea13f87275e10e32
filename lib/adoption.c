/* adoption.c — see adoption.h. */
#include "adoption.h"

#include "compare.h"
#include "contrast.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define CONF 0.95

const char *hv_adoption_state_name(enum hv_adoption_state s)
{
    switch (s) {
    case HV_ADOPTION_DELIVERED:
        return "delivered";
    case HV_ADOPTION_PARTIAL:
        return "partial";
    case HV_ADOPTION_NONE:
        return "none";
    case HV_ADOPTION_REGRESSED:
        return "regressed";
    case HV_ADOPTION_PENDING:
        break;
    }
    return "pending";
}

/* A host's change on logs, mean ln(after) − mean ln(before), into *d;
 * false (and *d untouched) when a side has no value. */
static enum hv_stat_err host_change(const struct hv_adoption_host *h, bool *has, double *d)
{
    *has = false;
    if (h->n_before == 0 || h->n_after == 0)
        return HV_STAT_OK;
    if (h->before == NULL || h->after == NULL)
        return HV_STAT_BAD_ARG;
    struct hv_log_group b, a;
    enum hv_stat_err e = hv_log_group_of(h->before, h->n_before, &b);
    if (e == HV_STAT_OK)
        e = hv_log_group_of(h->after, h->n_after, &a);
    if (e != HV_STAT_OK)
        return e;
    if (!isfinite(a.mean) || !isfinite(b.mean))
        return HV_STAT_NOT_FINITE;
    *d = a.mean - b.mean;
    *has = true;
    return HV_STAT_OK;
}

/* The log group of the hosts' changes: n, their mean and sample variance
 * (Welford). hv_contrast takes it as it takes a group of logarithms. */
static enum hv_stat_err changes_group(const struct hv_adoption_host *hosts, size_t n,
                                      struct hv_log_group *g)
{
    double mean = 0.0, m2 = 0.0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool has;
        double d;
        enum hv_stat_err e = host_change(&hosts[i], &has, &d);
        if (e != HV_STAT_OK)
            return e;
        if (!has)
            continue;
        k++;
        double delta = d - mean;
        mean += delta / (double)k;
        m2 += delta * (d - mean);
    }
    g->n = k;
    g->mean = k > 0 ? mean : NAN;
    g->var = k >= 2 ? m2 / (double)(k - 1) : 0.0;
    return HV_STAT_OK;
}

/* The one adopted host's own after against before (Welch), as a
 * contrast on logs. */
static enum hv_stat_err single_host(const struct hv_adoption_host *hosts, size_t n,
                                    struct hv_contrast *c, char *why, size_t why_len)
{
    const struct hv_adoption_host *h = NULL;
    for (size_t i = 0; i < n && h == NULL; i++)
        if (hosts[i].n_before > 0 && hosts[i].n_after > 0)
            h = &hosts[i];
    if (h == NULL || h->n_before < 2 || h->n_after < 2) {
        snprintf(why, why_len,
                 "one adopted host needs at least 2 values before and 2 after "
                 "its adoption");
        return HV_STAT_TOO_FEW;
    }
    struct hv_ratio r;
    enum hv_stat_err e = hv_compare(h->after, h->n_after, h->before, h->n_before, &r);
    if (e == HV_STAT_OK)
        *c = r.log;
    return e;
}

enum hv_stat_err hv_adoption_verdict(const struct hv_adoption_input *in,
                                     struct hv_adoption_result *out)
{
    if (in == NULL || out == NULL || (in->n_adopted > 0 && in->adopted == NULL) ||
        (in->n_controls > 0 && in->controls == NULL) || !isfinite(in->predicted_lo) ||
        !isfinite(in->predicted_hi) || in->predicted_lo > in->predicted_hi ||
        !(in->margin_pct >= 0.0) || !isfinite(in->margin_pct))
        return HV_STAT_BAD_ARG;
    memset(out, 0, sizeof *out);
    out->state = HV_ADOPTION_PENDING;
    out->gain_pct = out->lo_pct = out->hi_pct = NAN;

    struct hv_log_group a, c;
    enum hv_stat_err e = changes_group(in->adopted, in->n_adopted, &a);
    if (e == HV_STAT_OK)
        e = changes_group(in->controls, in->n_controls, &c);
    if (e != HV_STAT_OK)
        return e;
    out->hosts = a.n;
    struct hv_contrast k;
    if (a.n == 0) {
        snprintf(out->why, sizeof out->why,
                 "no adopted host has values both before and after "
                 "its adoption");
        return HV_STAT_OK;
    } else if (a.n == 1) {
        e = single_host(in->adopted, in->n_adopted, &k, out->why, sizeof out->why);
        if (e == HV_STAT_TOO_FEW)
            return HV_STAT_OK;
        if (e != HV_STAT_OK)
            return e;
    } else {
        struct hv_contrast_acc acc;
        hv_contrast_begin(&acc);
        hv_contrast_add(&acc, &a, 1.0, 0);
        /* Controls only from two on: one control's change has no spread
         * of its own to weigh it by. */
        if (c.n >= 2) {
            hv_contrast_add(&acc, &c, -1.0, 0);
            out->controls = c.n;
            out->controlled = true;
        }
        e = hv_contrast_end(&acc, CONF, &k);
        if (e != HV_STAT_OK)
            return e;
    }
    /* The gain in the good direction, as a recommendation's gain_pct: the
     * % change, negated for a metric where lower is better. */
    double pct = 100.0 * expm1(k.est), lo = 100.0 * expm1(k.lo), hi = 100.0 * expm1(k.hi);
    if (in->higher_is_better) {
        out->gain_pct = pct, out->lo_pct = lo, out->hi_pct = hi;
    } else {
        out->gain_pct = -pct, out->lo_pct = -hi, out->hi_pct = -lo;
    }
    out->estimated = true;

    double plo = in->predicted_lo, m = in->margin_pct;
    if (out->hi_pct < -m)
        out->state = HV_ADOPTION_REGRESSED;
    else if (out->lo_pct > m)
        out->state = out->hi_pct >= plo ? HV_ADOPTION_DELIVERED : HV_ADOPTION_PARTIAL;
    else if (out->hi_pct < plo)
        out->state = HV_ADOPTION_NONE;
    else
        snprintf(out->why, sizeof out->why,
                 "the interval [%+.1f, %+.1f] %% still holds both no gain (within ±%g %%) "
                 "and the predicted %+.1f %%: more rounds on the hosts",
                 out->lo_pct, out->hi_pct, m, plo);
    return HV_STAT_OK;
}
