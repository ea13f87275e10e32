/* report_render.c — a plan's report as Markdown and as CSV; see
 * report_render.h. Both read only the report's JSON, so the server's
 * ?format= and the CLI's --format print the same text. */
#include "report_render.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A growing string; a failed allocation sets oom and stops appending. */
struct sb {
    char *s;
    size_t len, cap;
    bool oom;
};

static void sb_add(struct sb *b, const char *text, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *grown = realloc(b->s, cap);
        if (grown == NULL) {
            b->oom = true;
            return;
        }
        b->s = grown;
        b->cap = cap;
    }
    memcpy(b->s + b->len, text, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void sb_puts(struct sb *b, const char *text)
{
    sb_add(b, text, strlen(text));
}

__attribute__((format(printf, 2, 3))) static void sb_printf(struct sb *b, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof buf) {
        sb_add(b, buf, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (big == NULL) {
        b->oom = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb_add(b, big, (size_t)n);
    free(big);
}

/* The builder's text, or NULL when memory ran out. */
static char *sb_done(struct sb *b)
{
    if (b->oom || b->s == NULL) {
        free(b->s);
        return b->oom ? NULL : strdup("");
    }
    return b->s;
}

/* A member as a string, "" when absent. */
static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s != NULL ? s : "";
}

/* A member as a number, NaN when absent or null. */
static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* ---- Markdown ----------------------------------------------------------- */

/* Appends text on one line: line breaks as spaces, and '|' escaped when
 * it goes into a table cell. */
static void md_text(struct sb *b, const char *text, bool cell)
{
    for (const char *p = text; *p != '\0'; p++) {
        if (cell && *p == '|')
            sb_puts(b, "\\|");
        else if (*p == '\n' || *p == '\r')
            sb_puts(b, " ");
        else
            sb_add(b, p, 1);
    }
}

/* Appends text as a table cell. */
static void md_cell(struct sb *b, const char *text)
{
    sb_puts(b, " ");
    md_text(b, text, true);
    sb_puts(b, " |");
}

/* Appends a table row of n cells. */
static void md_row(struct sb *b, const char *const *cells, size_t n)
{
    sb_puts(b, "|");
    for (size_t k = 0; k < n; k++)
        md_cell(b, cells[k]);
    sb_puts(b, "\n");
}

/* Appends a table header line and its rule. */
static void md_head(struct sb *b, const char *const *cols)
{
    sb_puts(b, "\n|");
    for (const char *const *c = cols; *c != NULL; c++)
        md_cell(b, *c);
    sb_puts(b, "\n|");
    for (const char *const *c = cols; *c != NULL; c++)
        sb_puts(b, "---|");
    sb_puts(b, "\n");
}

/* Appends one bullet per element of key's array: its "sentence" (or the
 * member named by field). */
static void md_bullets(struct sb *b, const json_t *report, const char *key, const char *field)
{
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(report, key), i, e)
    {
        sb_puts(b, "- ");
        md_text(b, str(e, field), false);
        sb_puts(b, "\n");
    }
}

static void md_recommendations(struct sb *b, const json_t *report)
{
    const json_t *recs = json_object_get(report, "recommendations");
    sb_puts(b, "\n## Recommendations\n\n");
    if (json_array_size(recs) == 0)
        sb_puts(b, "No factor level is better than its default on a primary metric.\n");
    size_t i, j;
    const json_t *r, *link;
    json_array_foreach(recs, i, r)
    {
        sb_printf(b, "%zu. **%s=%s** (risk: %s, disruption: %s). %s\n", i + 1, str(r, "factor"),
                  str(r, "level"), str(r, "risk_level"), str(r, "disruption"), str(r, "sentence"));
        if (json_is_string(json_object_get(r, "apply")))
            sb_printf(b, "   Apply: `%s`\n", str(r, "apply"));
        sb_puts(b, "   Evidence:");
        json_array_foreach(json_object_get(r, "links"), j, link)
        {
            const char *href = json_string_value(link), *slash = href ? strrchr(href, '/') : NULL;
            if (j < 20 && slash != NULL)
                sb_printf(b, "%s [job %s](%s)", j ? "," : "", slash + 1, href);
        }
        if (j > 20)
            sb_printf(b, " and %zu more", j - 20);
        sb_puts(b, "\n");
    }
    if (json_array_size(json_object_get(report, "safe_to_ignore")) > 0) {
        sb_puts(b, "\n### Safe to ignore\n\n");
        md_bullets(b, report, "safe_to_ignore", "sentence");
    }
}

static void md_comparisons(struct sb *b, const json_t *report)
{
    static const char *const cols[] = {"workload", "where",      "metric",      "level",
                                       "vs",       "n",          "change",      "95 % interval",
                                       "verdict",  "after Holm", "more rounds", NULL};
    const json_t *list = json_object_get(report, "comparisons");
    sb_puts(b, "\n## Verdicts\n\n");
    sb_printf(b, "%s.\n", str(json_object_get(report, "family"), "sentence"));
    if (json_array_size(list) == 0)
        return;
    md_head(b, cols);
    size_t i;
    const json_t *c;
    json_array_foreach(list, i, c)
    {
        char level[160], vs[160], n[24], pct[48], iv[96], more[32];
        double p = num(c, "pct"), lo, hi;
        const char *note = hv_change_bounds(c, "lo_pct", "hi_pct", &lo, &hi);
        int dec = hv_change_decimals(p, lo, hi);
        snprintf(level, sizeof level, "%s=%s", str(c, "factor"), str(c, "level"));
        snprintf(vs, sizeof vs, "%s=%s", str(c, "factor"), str(c, "default"));
        snprintf(n, sizeof n, "%lld", (long long)json_integer_value(json_object_get(c, "n")));
        const json_t *m = json_object_get(c, "more_rounds");
        snprintf(more, sizeof more, json_is_integer(m) ? "%lld" : "-",
                 (long long)json_integer_value(m));
        const char *cells[] = {str(c, "workload"),
                               str(c, "side"),
                               str(c, "metric"),
                               level,
                               vs,
                               n,
                               hv_fmt_change(pct, sizeof pct, p, dec),
                               note == NULL ? hv_fmt_change_interval(iv, sizeof iv, lo, hi, dec)
                                            : note,
                               str(c, "verdict"),
                               str(c, "family_verdict"),
                               more};
        md_row(b, cells, sizeof cells / sizeof cells[0]);
    }
    sb_puts(b, "\n");
    md_bullets(b, report, "comparisons", "sentence");
}

static void md_efficiency(struct sb *b, const json_t *report)
{
    static const char *const cols[] = {"configuration", "against",       "cpu", "disk", "net",
                                       "overall",       "95 % interval", "n",   NULL};
    const json_t *list = json_object_get(report, "efficiency");
    if (json_array_size(list) == 0)
        return;
    sb_puts(b, "\n### Efficiency\n");
    md_head(b, cols);
    size_t i, j;
    const json_t *e, *s;
    json_array_foreach(list, i, e)
    {
        char sub[3][32] = {"-", "-", "-"}, all[32], iv[192], n[24];
        json_array_foreach(json_object_get(e, "subsystems"), j, s)
        {
            const char *name = str(s, "subsystem");
            int k = strcmp(name, "cpu") == 0 ? 0 : strcmp(name, "disk") == 0 ? 1 : 2;
            snprintf(sub[k], sizeof sub[k], "%.1f %%", 100.0 * num(s, "efficiency"));
        }
        const json_t *o = json_object_get(e, "overall");
        snprintf(all, sizeof all, "%.1f %%", 100.0 * num(o, "efficiency"));
        double lo, hi;
        const char *note = hv_change_bounds(o, "lo", "hi", &lo, &hi);
        if (note == NULL)
            snprintf(iv, sizeof iv, "[%.1f, %.1f]", 100.0 * lo, 100.0 * hi);
        else
            snprintf(iv, sizeof iv, "%s", note);
        snprintf(n, sizeof n, "%lld", (long long)json_integer_value(json_object_get(o, "n")));
        const char *cells[] = {
            str(e, "configuration"), str(e, "against"), sub[0], sub[1], sub[2], all, iv, n};
        md_row(b, cells, sizeof cells / sizeof cells[0]);
    }
    sb_puts(b, "\n");
    md_bullets(b, report, "efficiency", "sentence");
}

static void md_summaries(struct sb *b, const json_t *report)
{
    static const char *const cols[] = {
        "configuration", "workload",        "target", "metric", "unit",     "n", "centre",
        "95 % interval", "arithmetic mean", "sd",     "CV %",   "outliers", NULL};
    sb_puts(b, "\n## Summaries\n\nThe centre is the geometric mean with its interval on logs "
               "for a positive metric (scale `log`), else the mean (`linear`).\n");
    md_head(b, cols);
    size_t i;
    const json_t *s;
    json_array_foreach(json_object_get(report, "summaries"), i, s)
    {
        char metric[192], n[24], center[32], mean[32], sd[32], cv[32], iv[256], out[24];
        const json_t *ci = json_object_get(s, "interval");
        snprintf(metric, sizeof metric, "%s%s", str(s, "metric"),
                 json_is_true(json_object_get(s, "primary")) ? " (primary)" : "");
        snprintf(n, sizeof n, "%lld", (long long)json_integer_value(json_object_get(s, "n")));
        snprintf(out, sizeof out, "%lld",
                 (long long)json_integer_value(json_object_get(s, "outliers")));
        double c, lo, hi;
        const char *note;
        hv_summary_figures(s, &c, &lo, &hi, &note);
        if (note == NULL) {
            char l[32], h[32];
            snprintf(iv, sizeof iv, "[%s, %s] (%s)", hv_fmt_value(l, sizeof l, lo),
                     hv_fmt_value(h, sizeof h, hi), str(ci, "scale"));
        } else {
            snprintf(iv, sizeof iv, "%s", note);
        }
        const char *cells[] = {str(s, "configuration"),
                               str(s, "workload"),
                               str(s, "target"),
                               metric,
                               str(s, "unit"),
                               n,
                               hv_fmt_value(center, sizeof center, c),
                               iv,
                               hv_fmt_value(mean, sizeof mean, num(s, "mean")),
                               hv_fmt_value(sd, sizeof sd, num(s, "sd")),
                               hv_fmt_value(cv, sizeof cv, num(s, "cv_pct")),
                               out};
        md_row(b, cells, sizeof cells / sizeof cells[0]);
    }
}

static void md_runs(struct sb *b, const json_t *report)
{
    static const char *const cols[] = {"configuration", "workload", "target",  "metric", "round",
                                       "value",         "z",        "outlier", "jobs",   NULL};
    sb_puts(b, "\n### Per-run values\n");
    size_t i, j, k;
    const json_t *s, *r, *id;
    json_array_foreach(json_object_get(report, "summaries"), i, s)
    {
        if (json_object_get(s, "runs_listed") != NULL) {
            sb_puts(b, "\nSeries of more than 100 rounds list only their flagged runs.\n");
            break;
        }
    }
    md_head(b, cols);
    json_array_foreach(json_object_get(report, "summaries"), i, s)
    {
        json_array_foreach(json_object_get(s, "runs"), j, r)
        {
            char round[24], value[32], z[32], jobs[256] = "";
            size_t len = 0;
            snprintf(round, sizeof round, "%lld",
                     (long long)json_integer_value(json_object_get(r, "round")));
            json_array_foreach(json_object_get(r, "jobs"), k, id)
            {
                if (len < sizeof jobs - 24)
                    len += (size_t)snprintf(jobs + len, sizeof jobs - len, "%s%lld", k ? " " : "",
                                            (long long)json_integer_value(id));
            }
            const char *cells[] = {str(s, "configuration"),
                                   str(s, "workload"),
                                   str(s, "target"),
                                   str(s, "metric"),
                                   round,
                                   hv_fmt_value(value, sizeof value, num(r, "value")),
                                   hv_fmt_value(z, sizeof z, num(r, "z")),
                                   json_is_true(json_object_get(r, "outlier")) ? "yes" : "",
                                   jobs};
            md_row(b, cells, sizeof cells / sizeof cells[0]);
        }
    }
}

/* A JSON value as text ("null" for null, a string bare) into buf. */
static const char *value_text(const json_t *v, char *buf, size_t len)
{
    if (json_is_string(v))
        return json_string_value(v);
    char *t = v != NULL ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    snprintf(buf, len, "%s", t != NULL ? t : "null");
    free(t);
    return buf;
}

/* A fleet plan's per-host view: each host against the fleet's median,
 * then the outliers with the facts in which they differ. */
/* The jobs set aside as noisy (the report's set_aside): how many, why,
 * and that n leaves them out. */
static void md_set_aside(struct sb *b, const json_t *report)
{
    const json_t *sa = json_object_get(report, "set_aside");
    json_int_t n = json_integer_value(json_object_get(sa, "count"));
    if (n <= 0)
        return;
    sb_printf(b, "\nSet aside as noisy: %lld job%s (", (long long)n, n == 1 ? "" : "s");
    const char *reason;
    const json_t *count;
    size_t k = 0;
    json_object_foreach((json_t *)json_object_get(sa, "reasons"), reason, count)
    {
        sb_printf(b, "%s%lld ", k++ > 0 ? ", " : "", (long long)json_integer_value(count));
        md_text(b, reason, false);
    }
    sb_puts(b, "), each run again in its round; n counts none of them.\n");
}

static void md_hosts(struct sb *b, const json_t *report)
{
    const json_t *h = json_object_get(report, "hosts");
    if (!json_is_object(h))
        return;
    sb_printf(b,
              "\n## Hosts\n\n%zu hosts, each against the fleet's median; an outlier's interval "
              "lies wholly beyond \xc2\xb1%g %% of it.\n",
              json_array_size(json_object_get(h, "hosts")), num(h, "margin_pct"));
    static const char *const cols[] = {"workload",      "metric",          "host",    "n", "mean",
                                       "95 % interval", "ratio to median", "outlier", NULL};
    md_head(b, cols);
    size_t i, k;
    const json_t *s, *x;
    json_array_foreach(json_object_get(h, "series"), i, s)
    {
        json_array_foreach(json_object_get(s, "hosts"), k, x)
        {
            char n[24], mean[32], ci[224], ratio[64];
            snprintf(n, sizeof n, "%lld", (long long)json_integer_value(json_object_get(x, "n")));
            snprintf(mean, sizeof mean, "%.4g", num(x, "mean"));
            double lo, hi, rlo, rhi;
            const char *note = hv_change_bounds(x, "lo", "hi", &lo, &hi);
            hv_change_bounds(x, "ratio_lo", "ratio_hi", &rlo, &rhi);
            if (note == NULL) {
                snprintf(ci, sizeof ci, "%.4g to %.4g", lo, hi);
                snprintf(ratio, sizeof ratio, "%.3f (%.3f to %.3f)", num(x, "ratio"), rlo, rhi);
            } else {
                snprintf(ci, sizeof ci, "%s", note);
                snprintf(ratio, sizeof ratio, "%.3f", num(x, "ratio"));
            }
            const char *cells[] = {str(s, "workload"),
                                   str(s, "metric"),
                                   str(x, "host"),
                                   n,
                                   mean,
                                   ci,
                                   ratio,
                                   json_is_true(json_object_get(x, "outlier")) ? "yes" : ""};
            md_row(b, cells, sizeof cells / sizeof cells[0]);
        }
    }
    const json_t *outliers = json_object_get(h, "outliers");
    sb_puts(b, "\n### Outliers\n\n");
    if (json_array_size(outliers) == 0)
        sb_puts(b, "None.\n");
    json_array_foreach(outliers, i, x)
    {
        sb_printf(b, "- %s:", str(x, "host"));
        json_array_foreach(json_object_get(x, "series"), k, s)
            sb_printf(b, "%s %s %s %s the median (ratio %.3f, %.3f to %.3f)", k ? ";" : "",
                      str(s, "workload"), str(s, "metric"), str(s, "side"), num(s, "ratio"),
                      num(s, "ratio_lo"), num(s, "ratio_hi"));
        const json_t *d = json_object_get(x, "differs");
        if (json_array_size(d) == 0)
            sb_puts(b, ". Its facts are the typical host's");
        json_array_foreach(d, k, s)
        {
            char v1[256], v2[256];
            sb_printf(b, "%s %s %s (typical %s)", k ? "," : ". Differs in", str(s, "fact"),
                      value_text(json_object_get(s, "value"), v1, sizeof v1),
                      value_text(json_object_get(s, "typical"), v2, sizeof v2));
        }
        sb_puts(b, ".\n");
    }
}

char *hv_report_md(const json_t *report)
{
    struct sb b = {0};
    sb_printf(&b, "# Report of plan %lld: %s (%s)\n\n",
              (long long)json_integer_value(json_object_get(report, "plan_id")),
              str(report, "name"), str(report, "status"));
    sb_printf(&b,
              "Design %s, baseline %s, equivalence margin \xc2\xb1%g %%, 95 %% intervals; n "
              "counts rounds.\n",
              str(report, "design"), str(report, "baseline"), num(report, "margin_pct"));
    json_t *answer = hv_report_lead(report);
    if (answer == NULL)
        b.oom = true;
    if (json_array_size(answer) > 0)
        sb_puts(&b, "\n## Answer\n\n");
    size_t i;
    const json_t *l;
    json_array_foreach(answer, i, l)
    {
        sb_puts(&b, "- ");
        md_text(&b, json_string_value(l), false);
        sb_puts(&b, "\n");
    }
    json_decref(answer);
    if (json_array_size(json_object_get(report, "warnings")) > 0) {
        sb_puts(&b, "\n## Warnings\n\n");
        md_bullets(&b, report, "warnings", "message");
    }
    md_recommendations(&b, report);
    md_comparisons(&b, report);
    if (json_array_size(json_object_get(report, "interactions")) > 0) {
        sb_puts(&b, "\n## Interactions\n\n");
        md_bullets(&b, report, "interactions", "sentence");
    }
    if (json_array_size(json_object_get(report, "overhead")) > 0) {
        sb_puts(&b, "\n## Overhead\n\n");
        md_bullets(&b, report, "overhead", "sentence");
    }
    md_efficiency(&b, report);
    sb_puts(&b, "\n## Repetitions\n\n");
    md_bullets(&b, json_object_get(report, "repetitions"), "configurations", "sentence");
    md_set_aside(&b, report);
    md_hosts(&b, report);
    md_summaries(&b, report);
    md_runs(&b, report);
    return sb_done(&b);
}

/* ---- CSV ---------------------------------------------------------------- */

/* The columns of the CSV, one table for every section. */
enum csv_col {
    C_SECTION,
    C_CONFIG,
    C_AGAINST,
    C_LEVEL,
    C_WORKLOAD,
    C_TARGET,
    C_SIDE,
    C_METRIC,
    C_UNIT,
    C_HIB,
    C_ROUND,
    C_N,
    C_ESTIMATE,
    C_LO,
    C_HI,
    C_SD,
    C_CV,
    C_VERDICT,
    C_SENTENCE,
    C_COUNT
};

static const char *const csv_names[C_COUNT] = {
    "section", "configuration",    "against", "level", "workload", "target", "side", "metric",
    "unit",    "higher_is_better", "round",   "n",     "estimate", "lo",     "hi",   "sd",
    "cv_pct",  "verdict",          "sentence"};

/* One CSV line being filled: each cell text or NULL (empty). */
struct csv_row {
    char cell[C_COUNT][96];
    const char *text[C_COUNT];
};

static void csv_set(struct csv_row *r, enum csv_col c, const char *text)
{
    r->text[c] = text;
}

static void csv_num(struct csv_row *r, enum csv_col c, double v)
{
    if (!isfinite(v))
        return;
    snprintf(r->cell[c], sizeof r->cell[c], "%.17g", v);
    r->text[c] = r->cell[c];
}

static void csv_int(struct csv_row *r, enum csv_col c, const json_t *v)
{
    if (!json_is_integer(v))
        return;
    snprintf(r->cell[c], sizeof r->cell[c], "%lld", (long long)json_integer_value(v));
    r->text[c] = r->cell[c];
}

/* Appends one field: quoted when it holds a comma, quote or line break
 * (RFC 4180); a text that a spreadsheet would run as a formula (leading
 * = + - @) gets a leading apostrophe. Numbers are written by csv_num and
 * never start that way but with '-', which is left alone. */
static void csv_field(struct sb *b, const char *text, bool number)
{
    if (text == NULL)
        return;
    bool quote = strpbrk(text, ",\"\r\n") != NULL;
    if (quote)
        sb_puts(b, "\"");
    if (!number && text[0] != '\0' && strchr("=+-@", text[0]) != NULL)
        sb_puts(b, "'");
    for (const char *p = text; *p != '\0'; p++) {
        if (*p == '"')
            sb_puts(b, "\"\"");
        else
            sb_add(b, p, 1);
    }
    if (quote)
        sb_puts(b, "\"");
}

static void csv_line(struct sb *b, const struct csv_row *r)
{
    for (int c = 0; c < C_COUNT; c++) {
        if (c > 0)
            sb_puts(b, ",");
        bool number = r->text[c] == r->cell[c];
        csv_field(b, r->text[c], number);
    }
    sb_puts(b, "\r\n");
}

/* The members every metric section shares. */
static void csv_metric(struct csv_row *r, const json_t *o)
{
    csv_set(r, C_WORKLOAD, json_string_value(json_object_get(o, "workload")));
    csv_set(r, C_SIDE, json_string_value(json_object_get(o, "side")));
    csv_set(r, C_METRIC, json_string_value(json_object_get(o, "metric")));
    csv_set(r, C_UNIT, json_string_value(json_object_get(o, "unit")));
    const json_t *hib = json_object_get(o, "higher_is_better");
    if (json_is_boolean(hib))
        csv_set(r, C_HIB, json_is_true(hib) ? "true" : "false");
    csv_int(r, C_N, json_object_get(o, "n"));
    csv_set(r, C_SENTENCE, json_string_value(json_object_get(o, "sentence")));
}

/* The columns a summary's line and its runs' lines share: section, then
 * the summary s's configuration, target and metric. */
static void csv_summary_cells(struct csv_row *r, const char *section, const json_t *s)
{
    csv_set(r, C_SECTION, section);
    csv_set(r, C_CONFIG, str(s, "configuration"));
    csv_set(r, C_TARGET, str(s, "target"));
    csv_metric(r, s);
}

static void csv_summaries(struct sb *b, const json_t *report)
{
    size_t i, j;
    const json_t *s, *run;
    json_array_foreach(json_object_get(report, "summaries"), i, s)
    {
        struct csv_row r = {0};
        csv_summary_cells(&r, "summary", s);
        double c, lo, hi;
        const char *note;
        hv_summary_figures(s, &c, &lo, &hi, &note);
        csv_num(&r, C_ESTIMATE, c);
        csv_num(&r, C_LO, lo);
        csv_num(&r, C_HI, hi);
        csv_set(&r, C_SENTENCE, note);
        csv_num(&r, C_SD, num(s, "sd"));
        csv_num(&r, C_CV, num(s, "cv_pct"));
        csv_line(b, &r);
        json_array_foreach(json_object_get(s, "runs"), j, run)
        {
            struct csv_row v = {0};
            csv_summary_cells(&v, "run", s);
            v.text[C_N] = NULL;
            csv_int(&v, C_ROUND, json_object_get(run, "round"));
            csv_num(&v, C_ESTIMATE, num(run, "value"));
            csv_set(&v, C_VERDICT,
                    json_is_true(json_object_get(run, "outlier")) ? "outlier" : NULL);
            csv_line(b, &v);
        }
    }
}

/* Comparisons, interactions and overheads: a % change with its interval. */
static void csv_changes(struct sb *b, const json_t *report, const char *key, const char *section)
{
    size_t i;
    const json_t *o;
    json_array_foreach(json_object_get(report, key), i, o)
    {
        struct csv_row r = {0};
        char level[200] = "";
        const json_t *f = json_object_get(o, "factors");
        if (json_is_array(f))
            snprintf(level, sizeof level, "%s=%s,%s=%s", json_string_value(json_array_get(f, 0)),
                     json_string_value(json_array_get(json_object_get(o, "levels"), 0)),
                     json_string_value(json_array_get(f, 1)),
                     json_string_value(json_array_get(json_object_get(o, "levels"), 1)));
        else if (json_is_string(json_object_get(o, "factor")))
            snprintf(level, sizeof level, "%s=%s", str(o, "factor"), str(o, "level"));
        csv_set(&r, C_SECTION, section);
        csv_set(&r, C_CONFIG, json_string_value(json_object_get(o, "configuration")));
        csv_set(&r, C_AGAINST, json_string_value(json_object_get(o, "against")));
        csv_set(&r, C_LEVEL, level[0] ? level : NULL);
        csv_metric(&r, o);
        double lo, hi;
        hv_change_bounds(o, "lo_pct", "hi_pct", &lo, &hi);
        csv_num(&r, C_ESTIMATE, num(o, "pct"));
        csv_num(&r, C_LO, lo);
        csv_num(&r, C_HI, hi);
        const char *v = json_string_value(json_object_get(o, "family_verdict"));
        csv_set(&r, C_VERDICT, v ? v : json_string_value(json_object_get(o, "verdict")));
        csv_line(b, &r);
    }
}

/* One efficiency (a subsystem's or the overall one) as a row. */
static void csv_eff(struct sb *b, const json_t *e, const json_t *x, const char *what,
                    const char *sentence)
{
    struct csv_row r = {0};
    csv_set(&r, C_SECTION, "efficiency");
    csv_set(&r, C_CONFIG, str(e, "configuration"));
    csv_set(&r, C_AGAINST, str(e, "against"));
    csv_set(&r, C_SIDE, str(e, "side"));
    csv_set(&r, C_METRIC, what);
    csv_int(&r, C_N, json_object_get(x, "n"));
    csv_num(&r, C_ESTIMATE, num(x, "efficiency"));
    double lo, hi;
    const char *note = hv_change_bounds(x, "lo", "hi", &lo, &hi);
    csv_num(&r, C_LO, lo);
    csv_num(&r, C_HI, hi);
    csv_set(&r, C_SENTENCE, sentence != NULL ? sentence : note);
    csv_line(b, &r);
}

static void csv_efficiency(struct sb *b, const json_t *report)
{
    size_t i, j;
    const json_t *e, *s;
    json_array_foreach(json_object_get(report, "efficiency"), i, e)
    {
        json_array_foreach(json_object_get(e, "subsystems"), j, s)
            csv_eff(b, e, s, str(s, "subsystem"), NULL);
        csv_eff(b, e, json_object_get(e, "overall"), "overall", str(e, "sentence"));
    }
}

static void csv_recommendations(struct sb *b, const json_t *report)
{
    size_t i;
    const json_t *o;
    json_array_foreach(json_object_get(report, "recommendations"), i, o)
    {
        struct csv_row r = {0};
        char level[200];
        snprintf(level, sizeof level, "%s=%s", str(o, "factor"), str(o, "level"));
        csv_set(&r, C_SECTION, "recommendation");
        csv_set(&r, C_LEVEL, level);
        csv_num(&r, C_ESTIMATE, num(o, "gain_pct"));
        csv_set(&r, C_VERDICT, str(o, "risk_level"));
        csv_set(&r, C_SENTENCE, str(o, "sentence"));
        csv_line(b, &r);
    }
}

char *hv_report_csv(const json_t *report)
{
    struct sb b = {0};
    for (int c = 0; c < C_COUNT; c++)
        sb_printf(&b, "%s%s", c ? "," : "", csv_names[c]);
    sb_puts(&b, "\r\n");
    csv_summaries(&b, report);
    csv_changes(&b, report, "comparisons", "comparison");
    csv_changes(&b, report, "interactions", "interaction");
    csv_changes(&b, report, "overhead", "overhead");
    csv_efficiency(&b, report);
    csv_recommendations(&b, report);
    return sb_done(&b);
}
