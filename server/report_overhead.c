/* report_overhead.c — every metric against the plan's baseline (the host,
 * or a configuration) as a % change with its interval, and the
 * virtualization efficiency per subsystem and overall (lib/efficiency.h);
 * see report_int.h. */
#include "report_int.h"

#include "adaptive.h"
#include "efficiency.h"
#include "report_render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the configurations are measured against. */
struct base {
    bool host;           /**< baseline "host": the host's runs */
    size_t config;       /**< the baseline's configuration */
    enum hv_side side_x; /**< where the compared values were measured */
    enum hv_side side_b; /**< where the baseline's were */
    const char *name;    /**< "host" or the configuration's name */
};

/* Reads the baseline of the plan; false when there is nothing to compare
 * with it. */
static bool find_base(const struct hv_rctx *c, struct base *b)
{
    const struct hv_rdata *d = c->d;
    bool guests = false, host = false;
    for (size_t i = 0; i < c->n_arms; i++) {
        guests |= c->arms[i].side == HV_SIDE_GUESTS;
        host |= c->arms[i].side == HV_SIDE_HOST;
    }
    *b = (struct base){.name = d->baseline};
    if (strcmp(d->baseline, "host") == 0) {
        /* The host runs the baseline under the first configuration. */
        *b = (struct base){true, 0, HV_SIDE_GUESTS, HV_SIDE_HOST, "host"};
        return guests && host && d->n_configs > 0;
    }
    for (size_t x = 0; x < d->n_configs; x++)
        if (strcmp(d->configs[x].name, d->baseline) == 0)
            b->config = x;
    b->side_x = b->side_b = guests ? HV_SIDE_GUESTS : HV_SIDE_HOST;
    return d->n_configs > 1;
}

/* "vs the host" or "vs default". */
static void against_words(const struct base *b, char *buf, size_t len)
{
    snprintf(buf, len, b->host ? "the host" : "%s", b->name);
}

/* The overhead entry of arm x against arm y (the baseline's). */
static json_t *ratio_json(const struct hv_rctx *c, const struct base *b, const struct hv_arm *x,
                          const struct hv_arm *y)
{
    const struct hv_rdata *d = c->d;
    struct hv_ratio r = {.pct = NAN, .lo_pct = NAN, .hi_pct = NAN, .p = NAN};
    bool ok = x->positive && y->positive && x->n >= 2 && y->n >= 2 &&
              hv_effect(&x->log, &y->log, 1, &r) == HV_STAT_OK;
    char note[160];
    bool usable;
    enum hv_verdict v = hv_verdict_usable(&r, x->n < y->n ? x->n : y->n, d->margin_pct,
                                          x->higher_is_better, &usable, note, sizeof note);
    char subject[256], with[160] = "", against[160], pct[48], iv[192], n[64], text[768];
    hv_rsubject(c, x, subject, sizeof subject);
    if (!b->host || x->config != 0)
        snprintf(with, sizeof with, " with %s", d->configs[x->config].name);
    against_words(b, against, sizeof against);
    if (x->n == y->n)
        snprintf(n, sizeof n, "n = %zu each", x->n);
    else
        snprintf(n, sizeof n, "n = %zu and %zu", x->n, y->n);
    int dec = hv_change_decimals(r.pct, r.lo_pct, r.hi_pct);
    if (ok)
        snprintf(text, sizeof text, "%s%s: %s %s vs %s (%s)", subject, with,
                 hv_fmt_change(pct, sizeof pct, r.pct, dec),
                 hv_rchange_interval(iv, sizeof iv, usable, r.lo_pct, r.hi_pct, dec, note), against,
                 n);
    else
        snprintf(text, sizeof text, "%s%s vs %s (%s): no interval (%s)", subject, with, against, n,
                 x->n < 2 || y->n < 2 ? "it needs 2 rounds of each" : "a value is 0 or negative");
    json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:b,s:b,s:I,s:I,s:s,s:s}", "configuration",
                          d->configs[x->config].name, "against", b->name, "workload",
                          d->workloads[x->workload].id, "side", hv_rside_name(x->side), "metric",
                          x->metric, "unit", x->unit, "higher_is_better", x->higher_is_better,
                          "primary", x->primary, "n", (json_int_t)x->n, "n_baseline",
                          (json_int_t)y->n, "verdict", hv_verdict_name(v), "sentence", text);
    hv_rset_num(o, "pct", r.pct);
    hv_rset_num(o, "lo_pct", r.lo_pct);
    hv_rset_num(o, "hi_pct", r.hi_pct);
    hv_rset_usable(o, usable, note);
    return o;
}

/* An efficiency as {"efficiency", "lo", "hi", "n", "items", "weight"}. */
static json_t *eff_json(const struct hv_eff *e)
{
    json_t *o =
        json_pack("{s:I,s:I}", "items", (json_int_t)e->items, "n", (json_int_t)e->log.n_min);
    hv_rset_num(o, "efficiency", e->eff);
    hv_rset_num(o, "lo", e->lo);
    hv_rset_num(o, "hi", e->hi);
    hv_rset_num(o, "weight", e->weight);
    /* Judged as the % change against full efficiency it is. */
    char note[160];
    hv_rusable_change(o, e->log.n_min, 100.0 * (e->lo - 1.0), 100.0 * (e->hi - 1.0), note,
                      sizeof note);
    return o;
}

/* The sentence of an efficiency entry. */
static void eff_sentence(const struct hv_rctx *c, const struct base *b, size_t x,
                         const struct hv_eff *sub, const struct hv_eff *all, char *buf, size_t len)
{
    char with[192] = "", parts[256] = "", against[160], iv[192];
    size_t k = 0;
    if (!b->host || x != 0)
        snprintf(with, sizeof with, "with %s, ", c->d->configs[x].name);
    for (int s = 0; s < HV_SUB_COUNT; s++)
        if (sub[s].valid && k < sizeof parts)
            k += (size_t)snprintf(parts + k, sizeof parts - k, "%s%s %.1f %%", k ? ", " : "",
                                  hv_subsys_name((enum hv_subsys)s), 100.0 * sub[s].eff);
    against_words(b, against, sizeof against);
    char note[160];
    if (hv_contrast_note(all->log.n_min, 100.0 * (all->lo - 1.0), 100.0 * (all->hi - 1.0), note,
                         sizeof note))
        snprintf(iv, sizeof iv, "[%.1f, %.1f]", 100.0 * all->lo, 100.0 * all->hi);
    else
        snprintf(iv, sizeof iv, "(%s)", note);
    snprintf(buf, len, "%s%s %s %.1f %% %s of %s's performance overall (%s; n = %zu)", with,
             b->side_x == HV_SIDE_GUESTS ? "the guests" : "the host", b->host ? "keep" : "reach",
             100.0 * all->eff, iv, against, parts, all->log.n_min);
}

/* The efficiency of configuration x against the baseline, or NULL when no
 * item has the values for one. */
static json_t *efficiency_of(struct hv_rctx *c, const struct base *b, size_t x)
{
    const struct hv_rdata *d = c->d;
    struct hv_eff_item *items = calloc(c->n_arms ? c->n_arms : 1, sizeof *items);
    size_t n = 0;
    for (size_t i = 0; items != NULL && i < c->n_arms; i++) {
        const struct hv_arm *a = &c->arms[i];
        enum hv_subsys s = hv_subsys_of(d->workloads[a->workload].kind);
        if (a->config != x || a->side != b->side_x || !a->primary || s == HV_SUB_COUNT)
            continue;
        const struct hv_arm *y = hv_rarm_find(c, b->config, a->workload, a->metric, b->side_b);
        if (y == NULL || !a->positive || !y->positive || a->n < 2 || y->n < 2)
            continue;
        items[n++] = (struct hv_eff_item){s, a->log, y->log, a->higher_is_better};
    }
    struct hv_eff sub[HV_SUB_COUNT], all;
    enum hv_stat_err e =
        n > 0 ? hv_efficiency(items, n, d->weights, HV_SUB_COUNT, sub, &all) : HV_STAT_TOO_FEW;
    free(items);
    if (e != HV_STAT_OK) {
        if (n > 0)
            hv_rwarn(c, "efficiency", "no overall efficiency for %s: %s", d->configs[x].name,
                     hv_stat_err_str(e));
        return NULL;
    }
    json_t *subs = json_array();
    for (int s = 0; s < HV_SUB_COUNT; s++)
        if (sub[s].valid) {
            json_t *o = eff_json(&sub[s]);
            json_object_set_new(o, "subsystem", json_string(hv_subsys_name((enum hv_subsys)s)));
            json_array_append_new(subs, o);
        }
    char text[768];
    eff_sentence(c, b, x, sub, &all, text, sizeof text);
    return json_pack("{s:s,s:s,s:s,s:o,s:o,s:s}", "configuration", d->configs[x].name, "against",
                     b->name, "side", hv_rside_name(b->side_x), "subsystems", subs, "overall",
                     eff_json(&all), "sentence", text);
}

json_t *hv_roverhead(struct hv_rctx *c, json_t **efficiency)
{
    json_t *list = json_array();
    *efficiency = json_array();
    struct base b;
    if (list == NULL || *efficiency == NULL || !find_base(c, &b))
        return list;
    const struct hv_rdata *d = c->d;
    for (size_t x = 0; x < d->n_configs; x++) {
        if (!b.host && x == b.config)
            continue;
        for (size_t i = 0; i < c->n_arms; i++) {
            const struct hv_arm *a = &c->arms[i];
            if (a->config != x || a->side != b.side_x)
                continue;
            const struct hv_arm *y = hv_rarm_find(c, b.config, a->workload, a->metric, b.side_b);
            if (y != NULL)
                json_array_append_new(list, ratio_json(c, &b, a, y));
        }
        json_t *e = efficiency_of(c, &b, x);
        if (e != NULL)
            json_array_append_new(*efficiency, e);
    }
    return list;
}
