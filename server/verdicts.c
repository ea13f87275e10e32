/* verdicts.c — see verdicts.h. */
#include "verdicts.h"

#include "adoption.h"
#include "advice_format.h"
#include "compare.h"
#include "db_recommendations.h"
#include "log.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One host's values as lib/adoption.h takes them (arrays owned here). */
struct host_values {
    double *before, *after;
    size_t nb, na;
};

/* The numbers of JSON array a (a new array, *n set; NULL for none). */
static double *numbers(const json_t *a, size_t *n)
{
    *n = json_array_size(a);
    if (*n == 0)
        return NULL;
    double *v = malloc(*n * sizeof *v);
    if (v == NULL) {
        *n = 0;
        return NULL;
    }
    for (size_t i = 0; i < *n; i++)
        v[i] = json_number_value(json_array_get(a, i));
    return v;
}

/* A figure for JSON: null when not finite. */
static json_t *figure(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

/* The recommendation in every form of lib/advice_format.h, as a report of
 * that one recommendation: what a site rolls back with. */
static json_t *rollback_forms(const json_t *in)
{
    json_t *report = json_pack("{s:O, s:O, s:b, s:[O]}", "plan_id", json_object_get(in, "plan_id"),
                               "name", json_object_get(in, "plan"), "partial", 0, "recommendations",
                               json_object_get(in, "recommendation"));
    json_t *out = json_object();
    const char *disk = json_string_value(json_object_get(in, "disk"));
    for (size_t i = 0; report != NULL && out != NULL && hv_advice_formats[i] != NULL; i++) {
        char *text = hv_advice_render(report, disk, hv_advice_formats[i]);
        json_object_set_new(out, hv_advice_formats[i],
                            text != NULL ? json_string(text) : json_null());
        free(text);
    }
    json_decref(report);
    return out;
}

/* The verdict of inputs in (hv_db_recommendation_inputs) as the object
 * answers show. */
static json_t *judge(const json_t *in)
{
    const json_t *hosts = json_object_get(in, "hosts");
    size_t n = json_array_size(hosts), na = 0, nc = 0;
    struct host_values *v = calloc(n ? n : 1, sizeof *v);
    struct hv_adoption_host *adopted = calloc(n ? n : 1, sizeof *adopted);
    struct hv_adoption_host *controls = calloc(n ? n : 1, sizeof *controls);
    json_t *per_host = json_array();
    json_t *out = NULL;
    if (v == NULL || adopted == NULL || controls == NULL || per_host == NULL)
        goto done;
    for (size_t i = 0; i < n; i++) {
        const json_t *h = json_array_get(hosts, i);
        v[i].before = numbers(json_object_get(h, "before"), &v[i].nb);
        v[i].after = numbers(json_object_get(h, "after"), &v[i].na);
        struct hv_adoption_host x = {v[i].before, v[i].nb, v[i].after, v[i].na};
        bool is_adopted = json_is_true(json_object_get(h, "adopted"));
        if (is_adopted)
            adopted[na++] = x;
        else
            controls[nc++] = x;
        json_array_append_new(per_host, json_pack("{s:O, s:b, s:I, s:I}", "target",
                                                  json_object_get(h, "target"), "adopted",
                                                  is_adopted, "before", (json_int_t)v[i].nb,
                                                  "after", (json_int_t)v[i].na));
    }
    const json_t *gi = json_object_get(in, "gain_interval");
    const json_t *margin = json_object_get(in, "margin_pct");
    const json_t *hib = json_object_get(in, "higher_is_better");
    struct hv_adoption_input a = {
        .adopted = adopted,
        .n_adopted = na,
        .controls = controls,
        .n_controls = nc,
        .higher_is_better = !json_is_false(hib),
        .predicted_lo = json_is_number(json_object_get(gi, "lo_pct"))
                            ? json_number_value(json_object_get(gi, "lo_pct"))
                            : NAN,
        .predicted_hi = json_is_number(json_object_get(gi, "hi_pct"))
                            ? json_number_value(json_object_get(gi, "hi_pct"))
                            : NAN,
        .margin_pct = json_is_number(margin) ? json_number_value(margin) : HV_MARGIN_PCT_DEFAULT,
    };
    struct hv_adoption_result r;
    enum hv_stat_err e = hv_adoption_verdict(&a, &r);
    if (e != HV_STAT_OK) {
        memset(&r, 0, sizeof r);
        r.state = HV_ADOPTION_PENDING;
        r.gain_pct = r.lo_pct = r.hi_pct = NAN;
        snprintf(r.why, sizeof r.why, "%s",
                 e == HV_STAT_BAD_ARG ? "the plan gave the recommendation no predicted interval"
                                      : hv_stat_err_str(e));
    }
    out =
        json_pack("{s:s, s:o, s:o, s:o, s:I, s:I, s:b, s:o, s:{s:o, s:o}, s:f, s:O, s:O}", "state",
                  hv_adoption_state_name(r.state), "gain_pct", figure(r.gain_pct), "lo_pct",
                  figure(r.lo_pct), "hi_pct", figure(r.hi_pct), "hosts", (json_int_t)r.hosts,
                  "controls", (json_int_t)r.controls, "controlled", r.controlled, "why",
                  r.why[0] ? json_string(r.why) : json_null(), "predicted", "lo_pct",
                  figure(a.predicted_lo), "hi_pct", figure(a.predicted_hi), "margin_pct",
                  a.margin_pct, "split_at", json_object_get(in, "cut"), "per_host", per_host);
    if (out != NULL && r.state == HV_ADOPTION_REGRESSED)
        json_object_set_new(out, "rollback", rollback_forms(in));
done:
    for (size_t i = 0; v != NULL && i < n; i++) {
        free(v[i].before);
        free(v[i].after);
    }
    free(v);
    free(adopted);
    free(controls);
    json_decref(per_host);
    return out;
}

enum hv_db_status hv_verdict_judge(int64_t id)
{
    json_t *in = NULL;
    enum hv_db_status s = hv_db_recommendation_inputs(id, &in);
    if (s != HV_DB_OK)
        return s;
    if (json_is_null(json_object_get(in, "cut"))) {
        json_decref(in);
        return HV_DB_OK;
    }
    json_t *verdict = judge(in);
    json_decref(in);
    if (verdict == NULL)
        return HV_DB_ERROR;
    s = hv_db_recommendation_judged(id, json_string_value(json_object_get(verdict, "state")),
                                    verdict);
    json_decref(verdict);
    return s;
}

enum hv_db_status hv_verdicts_judge_due(void)
{
    /* The sweeper's thread alone calls this. */
    static char last[256];
    json_t *due = NULL;
    enum hv_db_status s = hv_db_recommendations_to_judge(&due);
    if (s != HV_DB_OK)
        return s;
    const char *mark = json_string_value(json_object_get(due, "mark"));
    bool moved = mark == NULL || strcmp(mark, last) != 0;
    size_t i;
    json_t *id;
    json_array_foreach(moved ? json_object_get(due, "ids") : NULL, i, id)
    {
        enum hv_db_status j = hv_verdict_judge(json_integer_value(id));
        if (j != HV_DB_OK && j != HV_DB_NONE)
            s = j;
    }
    /* A mark is kept only once every verdict under it was stored: a
     * failure is tried again at the next call. */
    if (moved && s == HV_DB_OK && mark != NULL)
        snprintf(last, sizeof last, "%s", mark);
    json_decref(due);
    return s;
}
