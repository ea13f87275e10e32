/* report_advice.c — how each configuration's repetitions stopped (the stop
 * rule of lib/adaptive.h read back), and the recommendations made of the
 * family verdicts; see report_int.h. */
#include "report_int.h"

#include "adaptive.h"
#include "factors.h"
#include "report_render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A series the stop rule judges: a primary summary of the report (one
 * configuration, workload, target and metric, as the server's rounds
 * decision reads it) with the figures hv_ci_reached reads. */
struct judged {
    const json_t *summary;
    struct hv_summary s;
};

/* The widest interval of a configuration in words: "cpu.score (cpu) on
 * g1 is ±3.4 %" or "... has no interval yet". */
static void widest_words(const struct hv_rctx *c, const struct judged *j, char *buf, size_t len)
{
    const json_t *o = j->summary;
    char label[160];
    hv_metric_label(json_string_value(json_object_get(o, "metric")), label, sizeof label);
    char subject[320];
    if (c->multi_workload)
        snprintf(subject, sizeof subject, "%s (%s) on %s", label,
                 json_string_value(json_object_get(o, "workload")),
                 json_string_value(json_object_get(o, "target")));
    else
        snprintf(subject, sizeof subject, "%s on %s", label,
                 json_string_value(json_object_get(o, "target")));
    if (j->s.scale == HV_CI_NONE || !isfinite(j->s.rel_half_pct))
        snprintf(buf, len, "%s has no interval yet", subject);
    else
        snprintf(buf, len, "%s is \xc2\xb1%.1f %%", subject, j->s.rel_half_pct);
}

/* The primary series of configuration name (every configuration's when
 * name is NULL) among summaries into j (room for all), as the stop rule
 * reads them; *rounds gets the most rounds among them. Returns how many. */
static size_t judged_of(const json_t *summaries, const char *name, struct judged *j, size_t *rounds)
{
    size_t k = 0, i;
    const json_t *o;
    *rounds = 0;
    json_array_foreach(summaries, i, o)
    {
        const char *cfg = json_string_value(json_object_get(o, "configuration"));
        if (!json_is_true(json_object_get(o, "primary")) ||
            (name != NULL && (cfg == NULL || strcmp(cfg, name) != 0)))
            continue;
        const json_t *iv = json_object_get(o, "interval");
        const json_t *h = json_object_get(iv, "rel_half_pct");
        size_t n = (size_t)json_integer_value(json_object_get(o, "n"));
        j[k].summary = o;
        j[k].s = (struct hv_summary){
            .n = n,
            .scale = json_is_object(iv) ? HV_CI_LINEAR : HV_CI_NONE,
            .rel_half_pct = json_is_number(h) ? json_number_value(h) : NAN,
        };
        k++;
        *rounds = n > *rounds ? n : *rounds;
    }
    return k;
}

/* The stop rule (lib/adaptive.h) on the summaries j[0..k) after rounds
 * rounds: *reached whether every one is within ci_pct, *widest the widest. */
static enum hv_adapt judge(const struct hv_rdata *d, const struct judged *j, size_t k,
                           size_t rounds, bool *reached, size_t *widest)
{
    struct hv_summary *s = malloc((k ? k : 1) * sizeof *s);
    *reached = false;
    *widest = 0;
    if (s == NULL)
        return HV_ADAPT_MORE;
    for (size_t i = 0; i < k; i++)
        s[i] = j[i].s;
    *reached = k > 0 && hv_ci_reached(s, k, d->ci_pct, widest);
    enum hv_adapt next = hv_adapt_next(s, k, d->ci_pct, (int)rounds, d->rep_min, d->rep_max);
    free(s);
    return next;
}

/* The repetitions entry of configuration x (j: room for every summary),
 * or NULL without values. */
static json_t *repetitions_of(struct hv_rctx *c, const json_t *summaries, size_t x,
                              struct judged *j)
{
    const struct hv_rdata *d = c->d;
    const char *name = d->configs[x].name;
    size_t rounds;
    size_t k = judged_of(summaries, name, j, &rounds);
    if (k == 0)
        return NULL;
    size_t widest;
    bool reached;
    enum hv_adapt next = judge(d, j, k, rounds, &reached, &widest);
    /* With comparisons, the plan's stop rule is theirs (hv_rcompare). */
    bool decided = c->n_cmps > 0 && c->after == HV_SEQ_DECIDED;
    const char *stop = decided                    ? "decided"
                       : next == HV_ADAPT_PRECISE ? "width"
                       : next == HV_ADAPT_MAX     ? "max"
                       : d->finished              ? "ended"
                                                  : "running";
    char wide[400], text[900];
    widest_words(c, &j[widest], wide, sizeof wide);
    if (decided)
        snprintf(text, sizeof text,
                 "%s: %zu round%s; every comparison of the plan is decided (better, worse or no "
                 "effect) at round %d's level",
                 name, rounds, rounds == 1 ? "" : "s", c->look);
    else if (reached)
        snprintf(text, sizeof text,
                 "%s: %zu round%s; every primary interval is within \xc2\xb1%g %% (the widest, "
                 "%s)",
                 name, rounds, rounds == 1 ? "" : "s", d->ci_pct, wide);
    else if (next == HV_ADAPT_MAX)
        snprintf(text, sizeof text,
                 "%s: stopped at the maximum of %d rounds without reaching the width asked "
                 "for (\xc2\xb1%g %%): %s",
                 name, d->rep_max, d->ci_pct, wide);
    else
        snprintf(text, sizeof text,
                 "%s: %s after %zu of at most %d rounds; %s, wider than the "
                 "\xc2\xb1%g %% asked for",
                 name, d->finished ? "the plan ended" : "still running", rounds, d->rep_max, wide,
                 d->ci_pct);
    if (!reached && !decided && d->finished)
        hv_rwarn(c, "width", "%s", text);
    const json_t *w = j[widest].summary;
    json_t *o = json_pack("{s:s,s:I,s:s,s:b,s:{s:O,s:O,s:O,s:O},s:s}", "configuration", name,
                          "rounds", (json_int_t)rounds, "stop", stop, "reached", reached, "widest",
                          "workload", json_object_get(w, "workload"), "target",
                          json_object_get(w, "target"), "side", json_object_get(w, "side"),
                          "metric", json_object_get(w, "metric"), "sentence", text);
    hv_rset_num(json_object_get(o, "widest"), "rel_half_pct",
                j[widest].s.scale == HV_CI_NONE ? NAN : j[widest].s.rel_half_pct);
    return o;
}

json_t *hv_rrepetitions(struct hv_rctx *c, const json_t *summaries)
{
    const struct hv_rdata *d = c->d;
    size_t n = json_array_size(summaries), rounds;
    struct judged *j = malloc((n ? n : 1) * sizeof *j);
    json_t *list = json_array();
    if (j == NULL || list == NULL) {
        free(j);
        json_decref(list);
        return NULL;
    }
    for (size_t x = 0; x < d->n_configs; x++) {
        json_t *o = repetitions_of(c, summaries, x, j);
        if (o != NULL)
            json_array_append_new(list, o);
    }
    /* The plan as a whole, as the server judges it after each round: every
     * primary series of every configuration within ci_pct. */
    size_t widest, k = judged_of(summaries, NULL, j, &rounds);
    bool reached;
    enum hv_adapt next = judge(d, j, k, rounds, &reached, &widest);
    json_t *wide = NULL;
    if (widest < k) {
        const json_t *w = j[widest].summary;
        wide = json_pack("{s:O,s:O,s:O,s:O}", "workload", json_object_get(w, "workload"), "target",
                         json_object_get(w, "target"), "side", json_object_get(w, "side"), "metric",
                         json_object_get(w, "metric"));
        hv_rset_num(wide, "half_pct",
                    j[widest].s.scale == HV_CI_NONE ? NAN : j[widest].s.rel_half_pct);
    }
    free(j);
    /* The stop rule's decision after the latest round, the one the server
     * takes (server/db_rounds.c reads it): with comparisons, the
     * group-sequential rule over them; without, every primary interval's
     * width. */
    const char *decision = c->n_cmps > 0 ? hv_seq_stop_name(c->after) : hv_adapt_name(next);
    const json_t *kept = json_object_get(d->summary, "rounds");
    return json_pack("{s:i,s:i,s:f,s:b,s:s,s:s,s:o,s:O,s:o}", "min", d->rep_min, "max", d->rep_max,
                     "ci_pct", d->ci_pct, "reached", reached, "rule",
                     c->n_cmps > 0 ? "sequential" : "width", "decision", decision, "widest",
                     wide != NULL ? wide : json_null(), "server",
                     json_is_object(kept) ? (json_t *)kept : json_null(), "configurations", list);
}

/* ---- recommendations ------------------------------------------------- */

/* The catalogue's apply snippet for level: its "{level}" (at most one)
 * replaced by the level recommended. */
static json_t *apply_of(const char *hint, const char *level)
{
    const char *at = strstr(hint, "{level}");
    if (at == NULL)
        return json_string(hint);
    size_t len = strlen(hint) - 7 + strlen(level) + 1;
    char *text = malloc(len);
    if (text == NULL)
        return NULL;
    snprintf(text, len, "%.*s%s%s", (int)(at - hint), hint, level, at + 7);
    json_t *s = json_string(text);
    free(text);
    return s;
}

/* The gain of a comparison in the metric's good direction, in %. */
static double gain_of(const struct hv_rcmp *m)
{
    return m->arm->higher_is_better ? m->r.pct : -m->r.pct;
}

/* One metric a level helps or hurts (or leaves alone), with a short
 * phrase: "cpu score in the guests +5.0 % [+3.9, +6.1] (n = 6 rounds)". */
static json_t *effect_json(const struct hv_rctx *c, const struct hv_rcmp *m)
{
    char subject[256], pct[48], iv[224], text[512];
    int dec = hv_change_decimals(m->r.pct, m->r.lo_pct, m->r.hi_pct);
    const char *note = json_string_value(json_object_get(m->json, "interval_note"));
    snprintf(text, sizeof text, "%s %s %s (n = %zu round%s)",
             hv_rsubject(c, m->arm, subject, sizeof subject),
             hv_fmt_change(pct, sizeof pct, m->r.pct, dec),
             hv_rchange_interval(iv, sizeof iv, m->usable, m->r.lo_pct, m->r.hi_pct, dec, note),
             m->r.log.n_min, m->r.log.n_min == 1 ? "" : "s");
    json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:b,s:I,s:s,s:s}", "workload",
                          c->d->workloads[m->arm->workload].id, "side", hv_rside_name(m->arm->side),
                          "metric", m->arm->metric, "unit", m->arm->unit, "higher_is_better",
                          m->arm->higher_is_better, "n", (json_int_t)m->r.log.n_min, "verdict",
                          hv_verdict_name(m->family), "sentence", text);
    hv_rset_num(o, "pct", m->r.pct);
    hv_rset_num(o, "lo_pct", m->r.lo_pct);
    hv_rset_num(o, "hi_pct", m->r.hi_pct);
    hv_rset_usable(o, m->usable, note);
    return o;
}

/* A level's findings: what it helps, hurts and leaves alone. */
struct finding {
    size_t factor, level;
    json_t *gains, *hurts, *jobs;
    size_t none, total;
    double gain;                /* the best gain, for ranking */
    const struct hv_rcmp *best; /* the comparison of the best gain */
    int risk;
};

static int cmp_ids(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Sorts a JSON array of job ids and drops repeats, in place. */
static void json_array_sort_ids(json_t *ids)
{
    size_t n = json_array_size(ids);
    int64_t *v = malloc((n ? n : 1) * sizeof *v);
    if (v == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        v[i] = (int64_t)json_integer_value(json_array_get(ids, i));
    qsort(v, n, sizeof *v, cmp_ids);
    json_array_clear(ids);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || v[i] != v[i - 1])
            json_array_append_new(ids, json_integer((json_int_t)v[i]));
    free(v);
}

/* Collects the comparisons of level l of factor f into *g. */
static void collect(const struct hv_rctx *c, size_t f, size_t l, struct finding *g)
{
    *g = (struct finding){.factor = f, .level = l, .gain = -INFINITY};
    g->gains = json_array();
    g->hurts = json_array();
    g->jobs = json_array();
    for (size_t i = 0; i < c->n_cmps; i++) {
        const struct hv_rcmp *m = &c->cmps[i];
        if (m->factor != f || m->level != l)
            continue;
        g->total++;
        g->none += m->family == HV_VERDICT_NO_EFFECT;
        if (m->family == HV_VERDICT_BETTER) {
            json_array_append_new(g->gains, effect_json(c, m));
            if (g->best == NULL || gain_of(m) > g->gain)
                g->best = m;
            g->gain = fmax(g->gain, gain_of(m));
            size_t j;
            json_t *id;
            json_array_foreach(json_object_get(m->json, "jobs"), j, id)
                json_array_append(g->jobs, id);
        } else if (m->family == HV_VERDICT_WORSE) {
            json_array_append_new(g->hurts, effect_json(c, m));
        }
    }
    json_array_sort_ids(g->jobs);
    while (json_array_size(g->jobs) > 100)
        json_array_remove(g->jobs, json_array_size(g->jobs) - 1);
    const struct hv_factor_def *def = hv_factor_find(c->d->factors[f].name);
    g->risk = def != NULL ? (int)def->risk_level : HV_RISK_AVAILABILITY + 1;
}

static void finding_free(struct finding *g)
{
    json_decref(g->gains);
    json_decref(g->hurts);
    json_decref(g->jobs);
}

static int cmp_findings(const void *a, const void *b)
{
    const struct finding *x = a, *y = b;
    if (x->gain != y->gain)
        return x->gain > y->gain ? -1 : 1;
    if (x->risk != y->risk)
        return x->risk < y->risk ? -1 : 1;
    return (x->factor > y->factor) - (x->factor < y->factor);
}

/* The sentence of a recommendation. */
static void recommend_sentence(const struct hv_rctx *c, const struct finding *g,
                               const struct hv_factor_def *def, char *buf, size_t len)
{
    const struct hv_rfactor *f = &c->d->factors[g->factor];
    size_t k = (size_t)snprintf(buf, len, "Set %s=%s (the plan's default is %s): ", f->name,
                                f->levels[g->level], f->levels[0]);
    size_t i;
    json_t *e;
    json_array_foreach(g->gains, i, e)
    {
        if (k < len)
            k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? ", " : "",
                                  json_string_value(json_object_get(e, "sentence")));
    }
    json_array_foreach(g->hurts, i, e)
    {
        if (k < len)
            k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? ", " : "; it hurts ",
                                  json_string_value(json_object_get(e, "sentence")));
    }
    if (k >= len)
        return;
    if (def == NULL)
        snprintf(buf + k, len - k, ".");
    else if (def->risk == NULL)
        snprintf(buf + k, len - k, ". Disruption: %s. Risk: %s.",
                 hv_disruption_name(def->disruption), hv_risk_level_name(def->risk_level));
    else
        snprintf(buf + k, len - k, ". Disruption: %s. Risk: %s (%s).",
                 hv_disruption_name(def->disruption), hv_risk_level_name(def->risk_level),
                 def->risk);
}

/* The recommendation object of finding g, ranked rank. */
static json_t *recommend_json(const struct hv_rctx *c, const struct finding *g, size_t rank)
{
    const struct hv_rfactor *f = &c->d->factors[g->factor];
    const struct hv_factor_def *def = hv_factor_find(f->name);
    char text[4096];
    recommend_sentence(c, g, def, text, sizeof text);
    json_t *links = json_array();
    size_t i;
    json_t *id;
    json_array_foreach(g->jobs, i, id)
    {
        char href[64];
        snprintf(href, sizeof href, "/api/v1/jobs/%lld", (long long)json_integer_value(id));
        json_array_append_new(links, json_string(href));
    }
    json_t *o =
        json_pack("{s:I,s:s,s:s,s:s,s:O,s:O,s:O,s:o,s:s}", "rank", (json_int_t)rank, "factor",
                  f->name, "level", f->levels[g->level], "default", f->levels[0], "gains", g->gains,
                  "hurts", g->hurts, "jobs", g->jobs, "links", links, "sentence", text);
    hv_rset_num(o, "gain_pct", g->gain);
    /* The best gain's metric and interval, in its good direction as
     * gain_pct is: what a kept recommendation promises (migrations/053). */
    const struct hv_rcmp *b = g->best;
    bool hib = b->arm->higher_is_better;
    json_t *iv = json_object();
    hv_rset_num(iv, "lo_pct", hib ? b->r.lo_pct : -b->r.hi_pct);
    hv_rset_num(iv, "hi_pct", hib ? b->r.hi_pct : -b->r.lo_pct);
    json_object_set_new(o, "gain_interval", iv);
    json_object_set_new(o, "workload", json_string(c->d->workloads[b->arm->workload].id));
    json_object_set_new(o, "metric", json_string(b->arm->metric));
    /* Its id once the plan ended done and kept it (null before). */
    char key[320];
    snprintf(key, sizeof key, "%s=%s", f->name, f->levels[g->level]);
    json_t *kept = json_object_get(c->d->recommendation_ids, key);
    json_object_set_new(o, "id", json_is_integer(kept) ? json_incref(kept) : json_null());
    json_object_set_new(o, "system_default", def ? json_string(def->system_default) : json_null());
    json_object_set_new(o, "disruption",
                        def ? json_string(hv_disruption_name(def->disruption)) : json_null());
    json_object_set_new(o, "scope",
                        def ? json_string(hv_factor_scope_name(def->scope)) : json_null());
    json_object_set_new(o, "risk_level",
                        def ? json_string(hv_risk_level_name(def->risk_level)) : json_null());
    json_object_set_new(o, "risk", def && def->risk ? json_string(def->risk) : json_null());
    json_object_set_new(o, "apply",
                        def ? apply_of(def->apply_hint, f->levels[g->level]) : json_null());
    return o;
}

/* The entry of a level that changes nothing beyond the margin. */
static json_t *ignore_json(const struct hv_rctx *c, size_t f, size_t l)
{
    const struct hv_rfactor *fac = &c->d->factors[f];
    json_t *metrics = json_array();
    for (size_t i = 0; i < c->n_cmps; i++)
        if (c->cmps[i].factor == f && c->cmps[i].level == l)
            json_array_append_new(metrics, effect_json(c, &c->cmps[i]));
    char text[512];
    snprintf(text, sizeof text,
             "%s=%s: no effect beyond \xc2\xb1%g %% on any of the %zu primary metric%s compared "
             "with %s=%s; safe to ignore",
             fac->name, fac->levels[l], c->d->margin_pct, json_array_size(metrics),
             json_array_size(metrics) == 1 ? "" : "s", fac->name, fac->levels[0]);
    return json_pack("{s:s,s:s,s:s,s:o,s:s}", "factor", fac->name, "level", fac->levels[l],
                     "default", fac->levels[0], "metrics", metrics, "sentence", text);
}

json_t *hv_rrecommend(struct hv_rctx *c, json_t **ignore)
{
    const struct hv_rdata *d = c->d;
    size_t cap = 0;
    for (size_t f = 0; f < d->n_factors; f++)
        cap += d->factors[f].n_levels;
    struct finding *wins = malloc((cap ? cap : 1) * sizeof *wins);
    json_t *list = json_array();
    *ignore = json_array();
    size_t n = 0;
    for (size_t f = 0; wins != NULL && f < d->n_factors; f++)
        for (size_t l = 1; l < d->factors[f].n_levels; l++) {
            struct finding g;
            collect(c, f, l, &g);
            if (json_array_size(g.gains) > 0) {
                wins[n++] = g;
                continue;
            }
            if (g.total > 0 && g.none == g.total)
                json_array_append_new(*ignore, ignore_json(c, f, l));
            finding_free(&g);
        }
    if (n > 1)
        qsort(wins, n, sizeof *wins, cmp_findings);
    for (size_t i = 0; i < n; i++) {
        json_array_append_new(list, recommend_json(c, &wins[i], i + 1));
        finding_free(&wins[i]);
    }
    free(wins);
    return list;
}
