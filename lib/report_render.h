/* report_render.h — a plan's report (GET /api/v1/plans/{id}/report, the
 * JSON document docs/api.md describes) as Markdown or CSV, and the number
 * formats its sentences use.
 *
 * The server renders ?format=md and ?format=csv with these, and hvbench
 * report --format md|csv renders the JSON it fetched with the same code,
 * so both print the same text. Pure functions of their arguments: thread
 * safe; the renderers allocate the text they return. */
#ifndef HV_REPORT_RENDER_H
#define HV_REPORT_RENDER_H

#include <jansson.h>
#include <stddef.h>

/** The report as a Markdown document: the plan, the answer
 *  (hv_report_lead), warnings, recommendations, verdicts, overhead and
 *  efficiency, interactions, repetitions, then the summaries of every
 *  metric with their per-run values. Returns a malloc'd string the
 *  caller frees, or NULL when memory runs out. */
char *hv_report_md(const json_t *report);

/** The answer a report opens with (hvbench report and the Markdown print
 *  it first), as lines of text: one per recommendation in rank order
 *  ("Recommended 1: vcpu_pin=on: <each gain with its interval>"), one per
 *  efficiency entry ("Efficiency: <its sentence>"), then how many
 *  comparisons are decided after Holm (better, worse, no_effect against
 *  inconclusive) and, for the first few undecided ones, fewest further
 *  rounds first, what would decide each: the comparison's more_rounds
 *  ("about 17 more rounds would likely decide it", with ", beyond the
 *  plan's max of N rounds" when n + more_rounds exceeds
 *  repetitions.max), or why there is no estimate. A plan without
 *  comparisons answers with its efficiency alone. Everything is read from
 *  the report; nothing is recomputed. Returns a new JSON array of
 *  strings, or NULL when memory runs out. */
json_t *hv_report_lead(const json_t *report);

/** How a report's comparisons[] stand after Holm's correction: how many
 *  there are, how many have the family_verdict better, worse and
 *  no_effect (decided), and how many do not (inconclusive, or no verdict).
 *  The counts hv_report_lead's "Decided:" line prints and the report's
 *  `decided` member holds. */
struct hv_report_decided {
    size_t comparisons;  /**< every element of comparisons[] */
    size_t better;       /**< family_verdict "better" */
    size_t worse;        /**< family_verdict "worse" */
    size_t no_effect;    /**< family_verdict "no_effect" */
    size_t inconclusive; /**< the rest: comparisons − better − worse − no_effect */
};

/** The counts of report's comparisons (all 0 without any). */
struct hv_report_decided hv_report_decided(const json_t *report);

/** hv_report_decided as the report's `decided` member: a new object
 *  {comparisons, better, worse, no_effect, inconclusive}, or NULL when
 *  memory runs out. */
json_t *hv_report_decided_json(const json_t *report);

/** The report as one CSV table (RFC 4180, header line first) with a row
 *  per summary, run, comparison, interaction, overhead, efficiency and
 *  recommendation; the column "section" says which. Returns a malloc'd
 *  string the caller frees, or NULL when memory runs out. */
char *hv_report_csv(const json_t *report);

/** The figures every surface prints of one summary (an element of the
 *  report's summaries[], or a side of GET /api/v1/compare's rows): the
 *  centre, its interval's (the geometric mean for a positive metric) or,
 *  without an interval, the mean (the one value of n = 1); the 95 %
 *  bounds when the interval is usable ("usable", or, from an answer that
 *  predates it, whether there is an interval), else NaN with *note (may
 *  be NULL) the words to print instead: the summary's interval_note, or
 *  "no interval". *note is NULL when the bounds are usable; borrowed from
 *  s. */
void hv_summary_figures(const json_t *s, double *center, double *lo, double *hi, const char **note);

/** The 95 % bounds every surface prints of a % change or ratio (a
 *  report's comparison, interaction, overhead, efficiency or host entry,
 *  or a row of GET /api/v1/compare), read from o's members lo_key and
 *  hi_key: into *lo and *hi when the interval is usable ("usable", or,
 *  from an answer that predates it, whether both are numbers), else NaN.
 *  Returns NULL when usable, else the words to print instead: o's
 *  interval_note, or "no interval" (borrowed from o). */
const char *hv_change_bounds(const json_t *o, const char *lo_key, const char *hi_key, double *lo,
                             double *hi);

/** The label of a metric in sentences: its name's parts joined by spaces,
 *  '_' as '-', a trailing unit part ("mbps", "gbps") left out:
 *  "disk.seq_write.mbps" is "disk seq-write". Writes into buf and
 *  returns it. */
char *hv_metric_label(const char *metric, char *buf, size_t len);

/** The decimals to show a % change and its interval with: 1, or 2 when
 *  every figure is below 1 in magnitude. */
int hv_change_decimals(double pct, double lo, double hi);

/** A % change with its sign and a real minus: "+5.0 %", "−10.2 %"; "-"
 *  when pct is not finite. Returns buf. */
char *hv_fmt_change(char *buf, size_t len, double pct, int decimals);

/** An interval of % changes: "[−12.9, −7.4]" ("[-]" bounds when not
 *  finite). Returns buf. */
char *hv_fmt_change_interval(char *buf, size_t len, double lo, double hi, int decimals);

/** A measured value with 4 significant digits ("1523", "0.0125",
 *  "1.7e+308"); "-" when not finite. Returns buf. */
char *hv_fmt_value(char *buf, size_t len, double v);

#endif
