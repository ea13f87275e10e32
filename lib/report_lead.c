/* report_lead.c — the answer a report opens with: the ranked
 * recommendations, the efficiency, how many comparisons are decided and
 * what would decide the rest; see report_render.h. Every figure and verdict
 * is read from the report's JSON (the server decided them), none is
 * recomputed here. */
#include "report_render.h"

#include "plan.h"

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The undecided comparisons listed one by one; the rest are counted. */
#define ANSWER_UNDECIDED_MAX 5

/* A member as a string, "" when absent. */
static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s != NULL ? s : "";
}

/* Appends a new string line to lines (printf-like, truncated at 2 KiB). */
__attribute__((format(printf, 2, 3))) static void line(json_t *lines, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    json_array_append_new(lines, json_string(buf));
}

/* One line per recommendation, in rank order: the level and each gain (and
 * hurt) with its interval, as the server phrased them. */
static void recommendations(json_t *lines, const json_t *report)
{
    const json_t *recs = json_object_get(report, "recommendations");
    if (json_array_size(recs) == 0) {
        line(lines, "Recommended: nothing; no factor level is better than its default on a "
                    "primary metric");
        return;
    }
    size_t i, j;
    const json_t *r, *e;
    json_array_foreach(recs, i, r)
    {
        char gains[1536] = "";
        size_t k = 0;
        json_array_foreach(json_object_get(r, "gains"), j, e) if (k < sizeof gains) k +=
            (size_t)snprintf(gains + k, sizeof gains - k, "%s%s", j ? "; " : "",
                             str(e, "sentence"));
        json_array_foreach(json_object_get(r, "hurts"), j, e) if (k < sizeof gains) k +=
            (size_t)snprintf(gains + k, sizeof gains - k, "%s%s", j ? "; " : "; but hurts ",
                             str(e, "sentence"));
        line(lines, "Recommended %zu: %s=%s: %s", i + 1, str(r, "factor"), str(r, "level"), gains);
    }
}

/* Whether a comparison's verdict after Holm decides it. */
static bool decided(const json_t *c)
{
    const char *v = str(c, "family_verdict");
    return strcmp(v, "better") == 0 || strcmp(v, "worse") == 0 || strcmp(v, "no_effect") == 0;
}

/* The order of undecided comparisons: fewest further rounds first, those
 * beyond the cap next, those without an estimate last. */
static long long more_key(const json_t *c)
{
    const json_t *m = json_object_get(c, "more_rounds");
    if (json_is_integer(m))
        return (long long)json_integer_value(m);
    return json_is_true(json_object_get(c, "more_rounds_beyond_cap")) ? LLONG_MAX - 1 : LLONG_MAX;
}

/* What would decide comparison c, in words, into buf. rep_max is the
 * plan's most rounds (0 when unknown), n_cmps the family's size. */
static void deciding_words(const json_t *c, long long rep_max, size_t n_cmps, char *buf, size_t len)
{
    const json_t *m = json_object_get(c, "more_rounds");
    long long n = (long long)json_integer_value(json_object_get(c, "n"));
    const char *alone = str(c, "verdict");
    if (json_is_integer(m)) {
        long long more = (long long)json_integer_value(m);
        bool interval = json_is_number(json_object_get(c, "pct"));
        int k = snprintf(buf, len,
                         interval ? "about %lld more round%s would likely decide it"
                                  : "at least %lld more round%s needed for an interval",
                         more, more == 1 ? "" : "s");
        if (k > 0 && (size_t)k < len && rep_max > 0 && n + more > rep_max)
            snprintf(buf + k, len - (size_t)k, ", beyond the plan's max of %lld rounds", rep_max);
    } else if (json_is_true(json_object_get(c, "more_rounds_beyond_cap"))) {
        snprintf(buf, len, "more than %d further rounds would be needed", HV_PLAN_MAX_REPETITIONS);
    } else if (strcmp(alone, "inconclusive") != 0) {
        snprintf(buf, len, "%s on its own, not after Holm's correction over %zu comparisons", alone,
                 n_cmps);
    } else {
        const char *why = json_string_value(json_object_get(c, "reason"));
        snprintf(buf, len, "%s", why != NULL ? why : str(c, "interval_note"));
    }
}

static int cmp_more(const void *a, const void *b)
{
    long long x = more_key(*(const json_t *const *)a), y = more_key(*(const json_t *const *)b);
    return (x > y) - (x < y);
}

struct hv_report_decided hv_report_decided(const json_t *report)
{
    struct hv_report_decided d = {0};
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(report, "comparisons"), i, c)
    {
        const char *v = str(c, "family_verdict");
        d.comparisons++;
        d.better += strcmp(v, "better") == 0;
        d.worse += strcmp(v, "worse") == 0;
        d.no_effect += strcmp(v, "no_effect") == 0;
        d.inconclusive += !decided(c);
    }
    return d;
}

json_t *hv_report_decided_json(const json_t *report)
{
    struct hv_report_decided d = hv_report_decided(report);
    return json_pack("{s:I,s:I,s:I,s:I,s:I}", "comparisons", (json_int_t)d.comparisons, "better",
                     (json_int_t)d.better, "worse", (json_int_t)d.worse, "no_effect",
                     (json_int_t)d.no_effect, "inconclusive", (json_int_t)d.inconclusive);
}

/* How many comparisons are decided, and what would decide the others. */
static void verdicts(json_t *lines, const json_t *report)
{
    const json_t *cmps = json_object_get(report, "comparisons");
    size_t n = json_array_size(cmps), i;
    const json_t *c;
    const json_t **open = malloc((n ? n : 1) * sizeof *open);
    if (open == NULL)
        return;
    size_t k = 0;
    json_array_foreach(cmps, i, c) if (!decided(c)) open[k++] = c;
    struct hv_report_decided d = hv_report_decided(report);
    line(lines,
         "Decided: %zu of %zu comparison%s (%zu better, %zu worse, %zu no effect); %zu "
         "inconclusive",
         d.comparisons - d.inconclusive, d.comparisons, d.comparisons == 1 ? "" : "s", d.better,
         d.worse, d.no_effect, d.inconclusive);
    qsort(open, k, sizeof *open, cmp_more);
    const json_t *max = json_object_get(json_object_get(report, "repetitions"), "max");
    long long rep_max = json_is_integer(max) ? (long long)json_integer_value(max) : 0;
    for (i = 0; i < k && i < ANSWER_UNDECIDED_MAX; i++) {
        char label[160], words[256];
        hv_metric_label(str(open[i], "metric"), label, sizeof label);
        deciding_words(open[i], rep_max, n, words, sizeof words);
        line(lines, "Undecided: %s=%s on %s (%s, %s): %s", str(open[i], "factor"),
             str(open[i], "level"), label, str(open[i], "workload"), str(open[i], "side"), words);
    }
    if (k > ANSWER_UNDECIDED_MAX)
        line(lines, "Undecided: %zu more, listed under Verdicts", k - ANSWER_UNDECIDED_MAX);
    free(open);
}

json_t *hv_report_lead(const json_t *report)
{
    json_t *lines = json_array();
    if (lines == NULL)
        return NULL;
    bool compared = json_array_size(json_object_get(report, "comparisons")) > 0;
    if (compared)
        recommendations(lines, report);
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(report, "efficiency"), i, e)
        line(lines, "Efficiency: %s", str(e, "sentence"));
    if (compared)
        verdicts(lines, report);
    return lines;
}
