/* adaptive.c — see adaptive.h. */
#include "adaptive.h"

#include <math.h>
#include <stdio.h>

const char *hv_adapt_name(enum hv_adapt a)
{
    switch (a) {
    case HV_ADAPT_PRECISE:
        return "precise";
    case HV_ADAPT_MAX:
        return "max";
    case HV_ADAPT_MORE:
        break;
    }
    return "more";
}

bool hv_ci_reached(const struct hv_summary *s, size_t k, double ci_pct, size_t *widest)
{
    bool reached = true;
    double worst = -1.0;
    if (widest != NULL)
        *widest = 0;
    for (size_t i = 0; i < k; i++) {
        double w =
            s[i].scale == HV_CI_NONE || isnan(s[i].rel_half_pct) ? INFINITY : s[i].rel_half_pct;
        if (w > worst) {
            worst = w;
            if (widest != NULL)
                *widest = i;
        }
        if (!(w <= ci_pct))
            reached = false;
    }
    return reached;
}

enum hv_adapt hv_adapt_next(const struct hv_summary *s, size_t k, double ci_pct, int rounds,
                            int rep_min, int rep_max)
{
    if (rounds < rep_min)
        return HV_ADAPT_MORE;
    if (hv_ci_reached(s, k, ci_pct, NULL))
        return HV_ADAPT_PRECISE;
    return rounds >= rep_max ? HV_ADAPT_MAX : HV_ADAPT_MORE;
}

/* The relative half-width (%) at n rounds of an interval whose spread is
 * sd_log (log scale) or cv_pct (linear): the formula of hv_summarize. */
static double half_at(const struct hv_summary *s, size_t n)
{
    double t = hv_t_quantile(0.975, (double)(n - 1)) / sqrt((double)n);
    return s->scale == HV_CI_LOG ? 100.0 * expm1(t * s->sd_log) : t * s->cv_pct;
}

size_t hv_rounds_for_width(const struct hv_summary *s, double ci_pct, size_t cap)
{
    bool spread = s->n >= 2 && (s->scale == HV_CI_LOG ? isfinite(s->sd_log) : isfinite(s->cv_pct));
    if (!spread || !(ci_pct > 0.0) || cap < s->n)
        return 0;
    if (half_at(s, s->n) <= ci_pct)
        return s->n;
    if (!(half_at(s, cap) <= ci_pct))
        return 0;
    /* The half-width falls as n grows: the first n within ci_pct. */
    size_t lo = s->n + 1, hi = cap;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (half_at(s, mid) <= ci_pct)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Why an interval of n rounds is not usable (has: it has finite bounds). */
static const char *unusable_why(size_t n, bool has)
{
    return n < HV_USABLE_MIN_N ? "too few rounds for an interval"
           : has               ? "the interval is too wide to use"
                               : "no interval";
}

bool hv_interval_note(const struct hv_summary *s, double ci_pct, char *note, size_t len)
{
    bool has = s->scale != HV_CI_NONE && isfinite(s->lo) && isfinite(s->hi);
    bool usable = has && s->n >= HV_USABLE_MIN_N && s->rel_half_pct <= HV_USABLE_HALF_PCT;
    if (len == 0)
        return usable;
    note[0] = '\0';
    if (usable)
        return true;
    int k = snprintf(note, len, "n = %zu: %s", s->n, unusable_why(s->n, has));
    size_t need = hv_rounds_for_width(s, ci_pct, 1000);
    if (k > 0 && (size_t)k < len && need > s->n)
        snprintf(note + k, len - (size_t)k, "; about %zu more would give \xc2\xb1%g %%",
                 need - s->n, ci_pct);
    return false;
}

bool hv_contrast_note(size_t n, double lo_pct, double hi_pct, char *note, size_t len)
{
    bool has = isfinite(lo_pct) && isfinite(hi_pct) && lo_pct <= hi_pct;
    bool usable = has && n >= HV_USABLE_MIN_N && (hi_pct - lo_pct) / 2.0 <= HV_USABLE_HALF_PCT;
    if (len == 0)
        return usable;
    note[0] = '\0';
    if (!usable)
        snprintf(note, len, "n = %zu: %s", n, unusable_why(n, has));
    return usable;
}
