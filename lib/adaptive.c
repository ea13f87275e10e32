/* adaptive.c — see adaptive.h. */
#include "adaptive.h"

#include <math.h>

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
