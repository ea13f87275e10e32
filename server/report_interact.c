/* report_interact.c — two-factor interactions of a full factorial design:
 * how much more (or less) two non-default levels do together than their
 * two effects alone; see report_int.h.
 *
 * On logs, for levels a of f and b of g, per cell (one combination of the
 * other factors) the contrast
 *   ȳ(a, b) − ȳ(a, b₀) − ȳ(a₀, b) + ȳ(a₀, b₀)
 * is the log of (ratio of a with b) / (ratio of a without b); the
 * interaction is its mean over the cells, with Welch–Satterthwaite df
 * (lib/contrast.h), shown as a % like a change. */
#include "report_int.h"

#include "contrast.h"
#include "report_render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One level of each of two factors. */
struct pair {
    size_t f, a, g, b;
};

/* The four arms of the cell of configuration x, or false when one is
 * missing or has too few or non-positive values. */
static bool cell_arms(const struct hv_rctx *c, const struct hv_arm *key, const struct pair *p,
                      size_t x, size_t *levels, const struct hv_arm *out[4])
{
    const struct hv_rdata *d = c->d;
    /* (a, b), (a0, b), (a, b0), (a0, b0) */
    for (int k = 0; k < 4; k++) {
        memcpy(levels, d->configs[x].level, d->n_factors * sizeof *levels);
        if (k & 1)
            levels[p->f] = 0;
        if (k & 2)
            levels[p->g] = 0;
        size_t y = hv_rconfig_find(c, levels);
        out[k] = y != SIZE_MAX ? hv_rarm_find(c, y, key->workload, key->metric, key->side) : NULL;
        if (out[k] == NULL || !out[k]->positive || out[k]->n < 2)
            return false;
    }
    return true;
}

/* The interaction contrast of p on key's workload, metric and side, over
 * every usable cell; *cells gets their count (0: nothing to show). */
static enum hv_stat_err interaction(const struct hv_rctx *c, const struct hv_arm *key,
                                    const struct pair *p, struct hv_contrast *out, size_t *cells)
{
    const struct hv_rdata *d = c->d;
    size_t *levels = calloc(d->n_factors + 1, sizeof *levels);
    const struct hv_arm **arms = calloc(4 * (d->n_configs + 1), sizeof *arms);
    *cells = 0;
    if (levels == NULL || arms == NULL) {
        free(levels);
        free(arms);
        return HV_STAT_NO_MEMORY;
    }
    for (size_t x = 0; x < d->n_configs; x++)
        if (d->configs[x].level[p->f] == p->a && d->configs[x].level[p->g] == p->b &&
            cell_arms(c, key, p, x, levels, arms + 4 * *cells))
            (*cells)++;
    enum hv_stat_err e = HV_STAT_TOO_FEW;
    if (*cells > 0) {
        struct hv_contrast_acc acc;
        hv_contrast_begin(&acc);
        double w = 1.0 / (double)*cells;
        static const double sign[4] = {1.0, -1.0, -1.0, 1.0};
        for (size_t i = 0; i < 4 * *cells; i++)
            hv_contrast_add(&acc, &arms[i]->log, sign[i % 4] * w, 0);
        e = hv_contrast_end(&acc, 0.95, out);
    }
    free(levels);
    free(arms);
    return e;
}

/* The interaction's JSON object with its verdict and sentence. */
static json_t *interaction_json(const struct hv_rctx *c, const struct hv_arm *key,
                                const struct pair *p, const struct hv_contrast *k, size_t cells)
{
    const struct hv_rdata *d = c->d;
    const struct hv_rfactor *f = &d->factors[p->f], *g = &d->factors[p->g];
    struct hv_ratio r = {.log = *k,
                         .cells = cells,
                         .pct = 100.0 * expm1(k->est),
                         .lo_pct = 100.0 * expm1(k->lo),
                         .hi_pct = 100.0 * expm1(k->hi),
                         .p = hv_contrast_p_two_sided(k, 0.0)};
    char note[160];
    bool usable;
    enum hv_verdict v =
        hv_verdict_usable(&r, k->n_min, d->margin_pct, true, &usable, note, sizeof note);
    const char *verdict = v == HV_VERDICT_NO_EFFECT      ? "none"
                          : v == HV_VERDICT_INCONCLUSIVE ? "inconclusive"
                                                         : "present";
    char subject[256], pct[48], iv[192], text[768];
    int dec = hv_change_decimals(r.pct, r.lo_pct, r.hi_pct);
    snprintf(text, sizeof text,
             "%s: %s=%s and %s=%s together %s %s beyond their two effects (n = %zu round%s, %zu "
             "cell%s): %s",
             hv_rsubject(c, key, subject, sizeof subject), f->name, f->levels[p->a], g->name,
             g->levels[p->b], hv_fmt_change(pct, sizeof pct, r.pct, dec),
             hv_rchange_interval(iv, sizeof iv, usable, r.lo_pct, r.hi_pct, dec, note), k->n_min,
             k->n_min == 1 ? "" : "s", cells, cells == 1 ? "" : "s",
             v == HV_VERDICT_NO_EFFECT      ? "no interaction beyond the margin"
             : v == HV_VERDICT_INCONCLUSIVE ? "inconclusive"
                                            : "an interaction");
    json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:b,s:[s,s],s:[s,s],s:I,s:I,s:s,s:s}", "workload",
                          d->workloads[key->workload].id, "side", hv_rside_name(key->side),
                          "metric", key->metric, "unit", key->unit, "higher_is_better",
                          key->higher_is_better, "factors", f->name, g->name, "levels",
                          f->levels[p->a], g->levels[p->b], "cells", (json_int_t)cells, "n",
                          (json_int_t)k->n_min, "verdict", verdict, "sentence", text);
    hv_rset_num(o, "pct", r.pct);
    hv_rset_num(o, "lo_pct", r.lo_pct);
    hv_rset_num(o, "hi_pct", r.hi_pct);
    hv_rset_num(o, "p", r.p);
    hv_rset_usable(o, usable, note);
    return o;
}

/* Appends every interaction of key's workload, metric and side. */
static void interactions_of(const struct hv_rctx *c, const struct hv_arm *key, json_t *list)
{
    const struct hv_rdata *d = c->d;
    for (size_t f = 0; f < d->n_factors; f++)
        for (size_t g = f + 1; g < d->n_factors; g++)
            for (size_t a = 1; a < d->factors[f].n_levels; a++)
                for (size_t b = 1; b < d->factors[g].n_levels; b++) {
                    struct pair p = {f, a, g, b};
                    struct hv_contrast k;
                    size_t cells;
                    if (interaction(c, key, &p, &k, &cells) == HV_STAT_OK)
                        json_array_append_new(list, interaction_json(c, key, &p, &k, cells));
                }
}

json_t *hv_rinteractions(struct hv_rctx *c)
{
    json_t *list = json_array();
    if (list == NULL || !c->d->full || c->d->n_factors < 2)
        return list;
    for (size_t i = 0; i < c->n_arms; i++) {
        const struct hv_arm *a = &c->arms[i], *prev = i > 0 ? &c->arms[i - 1] : NULL;
        bool first = prev == NULL || prev->workload != a->workload || prev->side != a->side ||
                     strcmp(prev->metric, a->metric) != 0;
        if (first && a->primary)
            interactions_of(c, a, list);
    }
    return list;
}
