/* efficiency.c — see efficiency.h. */
#include "efficiency.h"

#include <math.h>

/* Adds item it to a contrast with weight w on its ln efficiency. */
static void add_item(struct hv_contrast_acc *acc, const struct hv_eff_item *it, double w)
{
    double sign = it->higher_is_better ? 1.0 : -1.0;
    hv_contrast_add(acc, &it->guest, sign * w, 0);
    hv_contrast_add(acc, &it->host, -sign * w, 0);
}

/* Finishes one efficiency from its accumulated contrast. */
static enum hv_stat_err finish(const struct hv_contrast_acc *acc, struct hv_eff *out)
{
    enum hv_stat_err e = hv_contrast_end(acc, 0.95, &out->log);
    if (e != HV_STAT_OK)
        return e;
    out->valid = true;
    out->eff = exp(out->log.est);
    out->lo = exp(out->log.lo);
    out->hi = exp(out->log.hi);
    return HV_STAT_OK;
}

/* Checks the arguments and counts each subsystem's items. */
static enum hv_stat_err check_args(const struct hv_eff_item *items, size_t n_items,
                                   const double *weights, size_t n_sub, struct hv_eff *per_sub)
{
    if (n_items == 0 || n_sub == 0)
        return HV_STAT_BAD_ARG;
    for (size_t s = 0; s < n_sub; s++) {
        per_sub[s] = (struct hv_eff){.eff = NAN, .lo = NAN, .hi = NAN};
        if (weights != NULL && !(isfinite(weights[s]) && weights[s] >= 0.0))
            return HV_STAT_BAD_ARG;
    }
    for (size_t i = 0; i < n_items; i++) {
        if (items[i].subsystem >= n_sub)
            return HV_STAT_BAD_ARG;
        per_sub[items[i].subsystem].items++;
    }
    return HV_STAT_OK;
}

enum hv_stat_err hv_efficiency(const struct hv_eff_item *items, size_t n_items,
                               const double *weights, size_t n_sub, struct hv_eff *per_sub,
                               struct hv_eff *overall)
{
    *overall = (struct hv_eff){.eff = NAN, .lo = NAN, .hi = NAN};
    enum hv_stat_err e = check_args(items, n_items, weights, n_sub, per_sub);
    if (e != HV_STAT_OK)
        return e;
    double total = 0.0;
    for (size_t s = 0; s < n_sub; s++)
        if (per_sub[s].items > 0)
            total += weights != NULL ? weights[s] : 1.0;
    if (!(total > 0.0))
        return HV_STAT_BAD_ARG;
    struct hv_contrast_acc all;
    hv_contrast_begin(&all);
    for (size_t s = 0; s < n_sub; s++) {
        struct hv_eff *sub = &per_sub[s];
        if (sub->items == 0)
            continue;
        sub->weight = (weights != NULL ? weights[s] : 1.0) / total;
        struct hv_contrast_acc one;
        hv_contrast_begin(&one);
        for (size_t i = 0; i < n_items; i++) {
            if (items[i].subsystem != s)
                continue;
            add_item(&one, &items[i], 1.0 / (double)sub->items);
            add_item(&all, &items[i], sub->weight / (double)sub->items);
        }
        e = finish(&one, sub);
        if (e != HV_STAT_OK)
            return e;
    }
    overall->items = n_items;
    overall->weight = 1.0;
    /* A subsystem of weight 0 adds no term, so it cannot make the overall
     * contrast empty unless every weight is 0, refused above. */
    return finish(&all, overall);
}
