/* report_compare.c — every factor level against its factor's default, per
 * workload, side and primary metric: the % change with its 95 % interval,
 * the verdict against the margin, the rounds likely to decide, Holm over
 * the family; see report_int.h and docs/statistics.md.
 *
 * A comparison pools the cells that differ only in the factor: the
 * configurations at the level and the same ones at the default. In a full
 * factorial that is the main effect over every combination of the other
 * factors; in a one-at-a-time design it is the one pair. */
#include "report_int.h"

#include "plan.h"
#include "report_render.h"
#include "sequential.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The cells of a comparison: arms at the level and at the default. */
struct cells {
    size_t n; /**< pairs found */
    const struct hv_arm **lev, **base;
    size_t usable; /**< pairs with n >= 2 and positive values each */
    struct hv_log_group *gl, *gb;
    size_t n_min; /**< the fewest rounds of an arm in any pair */
};

static void cells_free(struct cells *k)
{
    free(k->lev);
    free(k->base);
    free(k->gl);
    free(k->gb);
}

static bool usable(const struct hv_arm *a)
{
    return a->positive && a->n >= 2;
}

/* Finds the pairs (X at level l of factor f, X at its default) of arm a's
 * workload, metric and side. Returns 0 or -1. */
static int find_cells(const struct hv_rctx *c, const struct hv_arm *a, size_t f, size_t l,
                      struct cells *k)
{
    const struct hv_rdata *d = c->d;
    size_t nc = d->n_configs ? d->n_configs : 1;
    *k = (struct cells){.n_min = SIZE_MAX};
    k->lev = calloc(nc, sizeof *k->lev);
    k->base = calloc(nc, sizeof *k->base);
    k->gl = calloc(nc, sizeof *k->gl);
    k->gb = calloc(nc, sizeof *k->gb);
    size_t *levels = calloc(d->n_factors + 1, sizeof *levels);
    int rc = k->lev && k->base && k->gl && k->gb && levels ? 0 : -1;
    for (size_t x = 0; rc == 0 && x < d->n_configs; x++) {
        if (d->configs[x].level[f] != l)
            continue;
        memcpy(levels, d->configs[x].level, d->n_factors * sizeof *levels);
        levels[f] = 0;
        size_t y = hv_rconfig_find(c, levels);
        const struct hv_arm *ax = hv_rarm_find(c, x, a->workload, a->metric, a->side);
        const struct hv_arm *ay =
            y != SIZE_MAX ? hv_rarm_find(c, y, a->workload, a->metric, a->side) : NULL;
        if (ax == NULL || ay == NULL)
            continue;
        k->lev[k->n] = ax;
        k->base[k->n++] = ay;
        k->n_min = ax->n < k->n_min ? ax->n : k->n_min;
        k->n_min = ay->n < k->n_min ? ay->n : k->n_min;
        if (usable(ax) && usable(ay)) {
            k->gl[k->usable] = ax->log;
            k->gb[k->usable++] = ay->log;
        }
    }
    free(levels);
    return rc;
}

/* Every job behind the cells, at most 1000 of them. */
static json_t *cells_jobs(const struct cells *k)
{
    json_t *jobs = json_array();
    for (size_t i = 0; i < k->n; i++)
        for (int side = 0; side < 2; side++) {
            const struct hv_arm *a = side ? k->base[i] : k->lev[i];
            for (size_t j = 0; j < a->n_jobs && json_array_size(jobs) < 1000; j++)
                json_array_append_new(jobs, json_integer((json_int_t)a->jobs[j]));
        }
    return jobs;
}

/* The configurations compared: [{"level", "default"}] per cell. */
static json_t *cells_json(const struct hv_rctx *c, const struct cells *k)
{
    json_t *list = json_array();
    for (size_t i = 0; i < k->n; i++)
        json_array_append_new(list,
                              json_pack("{s:s,s:s}", "level", c->d->configs[k->lev[i]->config].name,
                                        "default", c->d->configs[k->base[i]->config].name));
    return list;
}

/* Why a comparison has no interval. */
static const char *no_ratio_reason(const struct cells *k)
{
    for (size_t i = 0; i < k->n; i++) {
        bool enough = k->lev[i]->n >= 2 && k->base[i]->n >= 2;
        if (enough && (!k->lev[i]->positive || !k->base[i]->positive))
            return "a value is 0 or negative, so there is no log ratio";
    }
    return "an interval needs at least 2 rounds of each configuration";
}

/* The paired comparison of the cells when their rounds are complete:
 * every pair has values of the same rounds, none missing, none of them
 * unusable. Returns whether *r holds it (else Welch is the comparison). */
static bool compare_paired(const struct cells *k, struct hv_ratio *r)
{
    if (k->n == 0 || k->usable < k->n)
        return false;
    size_t rounds = k->lev[0]->n;
    for (size_t i = 0; i < k->n; i++)
        for (int side = 0; side < 2; side++) {
            const struct hv_arm *a = side ? k->base[i] : k->lev[i];
            if (!hv_rounds_complete(a->rounds, a->n, k->lev[0]->rounds, rounds))
                return false;
        }
    double *lv = malloc(2 * k->n * rounds * sizeof *lv);
    if (lv == NULL)
        return false;
    double *bv = lv + k->n * rounds;
    for (size_t i = 0; i < k->n; i++) {
        memcpy(lv + i * rounds, k->lev[i]->values, rounds * sizeof *lv);
        memcpy(bv + i * rounds, k->base[i]->values, rounds * sizeof *bv);
    }
    bool ok = hv_effect_paired(lv, bv, k->n, rounds, r) == HV_STAT_OK;
    free(lv);
    return ok;
}

/* Computes the comparison of the cells into *m and its JSON object. */
static json_t *compare_cells(struct hv_rctx *c, const struct cells *k, struct hv_rcmp *m)
{
    const struct hv_rdata *d = c->d;
    const struct hv_arm *a = m->arm;
    struct hv_more more = {0};
    m->r = (struct hv_ratio){.pct = NAN, .lo_pct = NAN, .hi_pct = NAN, .p = NAN};
    m->r.log = (struct hv_contrast){.est = NAN, .se = NAN, .df = NAN, .lo = NAN, .hi = NAN};
    m->paired = compare_paired(k, &m->r);
    if (m->paired || (k->usable > 0 && hv_effect(k->gl, k->gb, k->usable, &m->r) == HV_STAT_OK))
        m->has_ratio = true;
    size_t n = m->has_ratio ? m->r.log.n_min : k->n_min;
    char note[160];
    m->verdict = hv_verdict_usable(&m->r, n, d->margin_pct, a->higher_is_better, &m->usable, note,
                                   sizeof note);
    bool decide = m->has_ratio && m->verdict == HV_VERDICT_INCONCLUSIVE &&
                  hv_rounds_to_decide(k->gl, k->gb, k->usable, d->margin_pct,
                                      HV_PLAN_MAX_REPETITIONS, &more) == HV_STAT_OK;
    const struct hv_rfactor *f = &d->factors[m->factor];
    json_t *o =
        json_pack("{s:s,s:s,s:s,s:s,s:b,s:s,s:s,s:s,s:o,s:I,s:I,s:I,s:s,s:o}", "workload",
                  d->workloads[a->workload].id, "side", hv_rside_name(a->side), "metric", a->metric,
                  "unit", a->unit, "higher_is_better", a->higher_is_better, "factor", f->name,
                  "level", f->levels[m->level], "default", f->levels[0], "configurations",
                  cells_json(c, k), "cells", (json_int_t)(m->has_ratio ? k->usable : k->n), "n",
                  (json_int_t)n, "runs", (json_int_t)(m->has_ratio ? m->r.log.runs : 0), "verdict",
                  hv_verdict_name(m->verdict), "jobs", cells_jobs(k));
    hv_rset_num(o, "pct", m->r.pct);
    hv_rset_num(o, "lo_pct", m->r.lo_pct);
    hv_rset_num(o, "hi_pct", m->r.hi_pct);
    hv_rset_num(o, "p", m->r.p);
    hv_rset_num(o, "p_margin", hv_margin_p(&m->r, d->margin_pct));
    hv_rset_usable(o, m->usable, note);
    json_object_set_new(o, "more_rounds",
                        decide && !more.beyond_cap ? json_integer((json_int_t)more.rounds)
                        : !m->has_ratio && n < 2   ? json_integer((json_int_t)(2 - n))
                                                   : json_null());
    json_object_set_new(o, "more_rounds_beyond_cap", json_boolean(decide && more.beyond_cap));
    json_object_set_new(o, "analysis",
                        !m->has_ratio ? json_null() : json_string(m->paired ? "paired" : "welch"));
    json_object_set_new(o, "reason", m->has_ratio ? json_null() : json_string(no_ratio_reason(k)));
    if (m->has_ratio && k->usable < k->n)
        hv_rwarn(c, "cells",
                 "%s=%s on %s (%s): %zu of %zu cells have at least 2 rounds of positive values; "
                 "the effect pools those",
                 f->name, f->levels[m->level], a->metric, d->workloads[a->workload].id, k->usable,
                 k->n);
    return o;
}

/* Appends the comparisons of arm a's workload, metric and side (a is the
 * first arm of that key) to list and c->cmps. Returns 0 or -1. */
static int compare_key(struct hv_rctx *c, const struct hv_arm *a, json_t *list, size_t *cap)
{
    const struct hv_rdata *d = c->d;
    for (size_t f = 0; f < d->n_factors; f++)
        for (size_t l = 1; l < d->factors[f].n_levels; l++) {
            struct cells k;
            if (find_cells(c, a, f, l, &k) != 0) {
                cells_free(&k);
                return -1;
            }
            if (k.n > 0) {
                if (c->n_cmps == *cap) {
                    *cap = *cap ? 2 * *cap : 16;
                    struct hv_rcmp *grown = realloc(c->cmps, *cap * sizeof *grown);
                    if (grown == NULL) {
                        cells_free(&k);
                        return -1;
                    }
                    c->cmps = grown;
                }
                struct hv_rcmp *m = &c->cmps[c->n_cmps++];
                *m = (struct hv_rcmp){.arm = a, .factor = f, .level = l};
                m->json = compare_cells(c, &k, m);
                json_array_append_new(list, m->json);
            }
            cells_free(&k);
        }
    return 0;
}

/* The verdict in words, for the end of a comparison's sentence. */
static void verdict_words(const struct hv_rctx *c, const struct hv_rcmp *m, char *buf, size_t len)
{
    const json_t *more = json_object_get(m->json, "more_rounds");
    if (!m->has_ratio && json_is_integer(more))
        snprintf(buf, len, "no interval yet; at least %lld more round%s needed",
                 (long long)json_integer_value(more),
                 json_integer_value(more) == 1 ? " is" : "s are");
    else if (!m->has_ratio)
        snprintf(buf, len, "no interval: %s",
                 json_string_value(json_object_get(m->json, "reason")));
    else if (m->family != m->verdict)
        snprintf(buf, len, "%s on its own, but not after Holm's correction over %zu comparisons",
                 hv_verdict_name(m->verdict), c->n_cmps);
    else if (m->verdict == HV_VERDICT_NO_EFFECT)
        snprintf(buf, len, "no effect (within \xc2\xb1%g %%)", c->d->margin_pct);
    else if (m->verdict != HV_VERDICT_INCONCLUSIVE)
        snprintf(buf, len, "%s", hv_verdict_name(m->verdict));
    else if (json_is_integer(more))
        snprintf(buf, len, "inconclusive; about %lld more round%s would likely decide it",
                 (long long)json_integer_value(more), json_integer_value(more) == 1 ? "" : "s");
    else
        snprintf(buf, len, "inconclusive; more than %d more rounds would be needed",
                 HV_PLAN_MAX_REPETITIONS);
}

/* The sentence of a comparison, once its family verdict is known. */
static void compare_sentence(const struct hv_rctx *c, const struct hv_rcmp *m)
{
    const struct hv_rfactor *f = &c->d->factors[m->factor];
    char subject[256], words[160], pct[48], iv[224], n[96];
    hv_rsubject(c, m->arm, subject, sizeof subject);
    verdict_words(c, m, words, sizeof words);
    long long rounds = (long long)json_integer_value(json_object_get(m->json, "n"));
    long long cells = (long long)json_integer_value(json_object_get(m->json, "cells"));
    if (m->paired && cells > 1)
        snprintf(n, sizeof n, "n = %lld rounds, paired within each, over %lld cells", rounds,
                 cells);
    else if (m->paired)
        snprintf(n, sizeof n, "n = %lld rounds, paired within each", rounds);
    else if (cells > 1)
        snprintf(n, sizeof n, "n = %lld round%s per configuration, pooled over %lld cells", rounds,
                 rounds == 1 ? "" : "s", cells);
    else
        snprintf(n, sizeof n, "n = %lld round%s each", rounds, rounds == 1 ? "" : "s");
    char text[768];
    if (m->has_ratio) {
        int dec = hv_change_decimals(m->r.pct, m->r.lo_pct, m->r.hi_pct);
        const char *note = json_string_value(json_object_get(m->json, "interval_note"));
        snprintf(text, sizeof text, "%s with %s=%s: %s %s vs %s=%s (%s): %s", subject, f->name,
                 f->levels[m->level], hv_fmt_change(pct, sizeof pct, m->r.pct, dec),
                 hv_rchange_interval(iv, sizeof iv, m->usable, m->r.lo_pct, m->r.hi_pct, dec, note),
                 f->name, f->levels[0], n, words);
    } else {
        snprintf(text, sizeof text, "%s with %s=%s vs %s=%s (%s): %s", subject, f->name,
                 f->levels[m->level], f->name, f->levels[0], n, words);
    }
    json_object_set_new(m->json, "sentence", json_string(text));
}

/* The latest round with values among the arms: the look a report reads. */
static int latest_round(const struct hv_rctx *c)
{
    int latest = 0;
    for (size_t i = 0; i < c->n_arms; i++) {
        const struct hv_arm *a = &c->arms[i];
        if (a->n > 0 && a->rounds[a->n - 1] > latest)
            latest = a->rounds[a->n - 1];
    }
    return latest;
}

/* The family verdicts, read as the stop rule reads them: Holm over every
 * comparison at each look of the plan's group-sequential design
 * (lib/sequential.h), at the look of the plan's latest round (kept within
 * repetitions min..max); c->after the stop rule's decision there. The
 * adjusted p is Holm's over the margin p-values at the fixed-sample
 * level. */
static int family_verdicts(struct hv_rctx *c)
{
    const struct hv_rdata *d = c->d;
    size_t m = c->n_cmps;
    struct hv_ratio *r = malloc((m ? m : 1) * sizeof *r);
    bool *hib = malloc((m ? m : 1) * sizeof *hib);
    enum hv_verdict *v = malloc((m ? m : 1) * sizeof *v);
    double *p = malloc(2 * (m ? m : 1) * sizeof *p);
    struct hv_seq_design design = {0};
    int rc = r && hib && v && p ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < m; i++) {
        r[i] = c->cmps[i].r;
        hib[i] = c->cmps[i].arm->higher_is_better;
        p[m + i] = hv_margin_p(&r[i], d->margin_pct);
        if (isnan(p[m + i]))
            p[m + i] = 1.0; /* a comparison without an interval claims nothing */
    }
    int latest = latest_round(c);
    c->look = latest < d->rep_min ? d->rep_min : latest > d->rep_max ? d->rep_max : latest;
    if (rc == 0 && m > 0 &&
        (hv_seq_design_init_to(&design, HV_SEQ_SPEND, HV_FAMILY_ALPHA, d->rep_min, d->rep_max,
                               c->look, m) != HV_STAT_OK ||
         hv_seq_verdicts(&design, c->look, r, m, d->margin_pct, hib, v) != HV_STAT_OK ||
         hv_holm(p + m, m, HV_FAMILY_ALPHA, p, NULL) != HV_STAT_OK))
        rc = -1;
    if (rc == 0 && m > 0) {
        c->look_level = hv_seq_level(&design, c->look, 1);
        c->after = hv_seq_next(&design, r, v, m, d->ci_pct, latest);
    }
    for (size_t i = 0; rc == 0 && i < m; i++) {
        struct hv_rcmp *k = &c->cmps[i];
        k->family = k->usable ? v[i] : HV_VERDICT_INCONCLUSIVE;
        /* A paired comparison's further rounds: its round ratios' spread,
         * read at the look's level. */
        struct hv_more more;
        if (k->paired && k->family == HV_VERDICT_INCONCLUSIVE && c->look_level > 0.0 &&
            hv_rounds_to_decide_paired(&k->r, d->margin_pct, c->look_level, HV_PLAN_MAX_REPETITIONS,
                                       &more) == HV_STAT_OK) {
            json_object_set_new(k->json, "more_rounds",
                                more.beyond_cap
                                    ? json_null()
                                    : json_integer((json_int_t)(more.rounds ? more.rounds : 1)));
            json_object_set_new(k->json, "more_rounds_beyond_cap", json_boolean(more.beyond_cap));
        }
        k->p_adj = p[i];
        json_object_set_new(k->json, "family_verdict", json_string(hv_verdict_name(k->family)));
        hv_rset_num(k->json, "p_adjusted", p[i]);
        compare_sentence(c, k);
    }
    hv_seq_design_free(&design);
    free(r);
    free(hib);
    free(v);
    free(p);
    return rc;
}

json_t *hv_rcompare(struct hv_rctx *c, json_t **family)
{
    json_t *list = json_array();
    size_t cap = 0;
    *family = NULL;
    for (size_t i = 0; list != NULL && i < c->n_arms; i++) {
        const struct hv_arm *a = &c->arms[i], *prev = i > 0 ? &c->arms[i - 1] : NULL;
        bool first = prev == NULL || prev->workload != a->workload || prev->side != a->side ||
                     strcmp(prev->metric, a->metric) != 0;
        if (first && a->primary && compare_key(c, a, list, &cap) != 0) {
            json_decref(list);
            return NULL;
        }
    }
    if (list == NULL || family_verdicts(c) != 0) {
        json_decref(list);
        return NULL;
    }
    const struct hv_rdata *d = c->d;
    char text[800], looks[400] = "";
    if (d->rep_max > d->rep_min)
        snprintf(looks, sizeof looks,
                 ", over every look the plan may stop at (rounds %d to %d, a group-sequential "
                 "design spending it evenly); at round %d a comparison is decided at the "
                 "two-sided level %.4f",
                 d->rep_min, d->rep_max, c->look, c->look_level);
    snprintf(text, sizeof text,
             "%zu comparison%s of a factor level with its default feed%s the recommendations; "
             "Holm's method holds the chance of any false better or worse among them at %g %%%s",
             c->n_cmps, c->n_cmps == 1 ? "" : "s", c->n_cmps == 1 ? "s" : "",
             100.0 * HV_FAMILY_ALPHA, looks);
    *family =
        json_pack("{s:I,s:s,s:f,s:f,s:s,s:i,s:f,s:i,s:i,s:s}", "comparisons", (json_int_t)c->n_cmps,
                  "method", "holm", "alpha", HV_FAMILY_ALPHA, "margin_pct", d->margin_pct,
                  "spending", HV_SEQ_SPEND_NAME, "look", c->look, "look_level", c->look_level,
                  "looks_from", d->rep_min, "looks_to", d->rep_max, "sentence", text);
    return list;
}
