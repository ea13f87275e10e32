/* cmd_report.c — hvbench report: a plan's report (GET
 * /api/v1/plans/{id}/report) as tables and sentences, Markdown, CSV or
 * JSON. Markdown and CSV are rendered from the JSON by lib/report_render.c,
 * the code the server's ?format= uses, so both print the same text. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "cli/table.h"
#include "report_render.h"

static int cmd_report_exec(struct cli_ctx *ctx, int argc, char **argv);

const struct cli_command cli_cmd_report = {
    .name = "report",
    .usage = "[--format table|md|csv|json] [--all] ID",
    .summary = "show a plan's statistics, verdicts, overhead and recommendations",
    .help = "--format table (the default) opens with the answer: the ranked\n"
            "recommendations with their gains and intervals, the efficiency, how many\n"
            "comparisons are decided and how many more rounds would likely decide the\n"
            "others. Then one row per configuration, workload, target and primary\n"
            "metric (the centre: the geometric mean of a positive metric, with its 95%\n"
            "interval on logs, or in words why there is none; then the arithmetic mean\n"
            "and sd; ↑ higher is better, ↓ lower is better), the verdicts of every\n"
            "factor level against its default, the overhead against the baseline, the\n"
            "recommendations, the repetitions and the warnings. --all lists every\n"
            "metric and percentile, the whole overhead and the efficiency too.\n"
            "--format md (the answer first, then everything) and csv print the report\n"
            "as Markdown or CSV, --format json (or the global --json) as the server\n"
            "sent it.\n",
    .fn = cmd_report_exec,
};

/** The columns of the summary table, in the order of docs/cli.md. */
static const struct cli_column report_cols[] = {
    {"configuration", CLI_LEFT}, {"workload", CLI_LEFT}, {"target", CLI_LEFT},
    {"metric", CLI_LEFT},        {"n", CLI_RIGHT},       {"centre", CLI_RIGHT},
    {"95% interval", CLI_LEFT},  {"±", CLI_RIGHT},       {"arith. mean", CLI_RIGHT},
    {"sd", CLI_RIGHT},           {"unit", CLI_LEFT},
};

#define REPORT_NCOLS (sizeof report_cols / sizeof report_cols[0])

/** The columns of the verdicts table. */
static const struct cli_column verdict_cols[] = {
    {"workload", CLI_LEFT}, {"where", CLI_LEFT},   {"metric", CLI_LEFT},
    {"level", CLI_LEFT},    {"n", CLI_RIGHT},      {"change", CLI_RIGHT},
    {"interval", CLI_LEFT}, {"verdict", CLI_LEFT}, {"more rounds", CLI_RIGHT},
};

#define VERDICT_NCOLS (sizeof verdict_cols / sizeof verdict_cols[0])

/** The string member key of o, or "" when absent. */
static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s != NULL ? s : "";
}

/** Adds one summary (the report's summaries[]) to t. Returns 0 or -1 (out
 *  of memory). */
static int add_row(struct cli_table *t, const json_t *row)
{
    char metric[256], n[32], center[64], mean[64], sd[64], half[64], interval[256];
    const char *name = json_string_value(json_object_get(row, "metric"));
    /* The direction matters to read a comparison. */
    snprintf(metric, sizeof metric, "%s%s", name != NULL ? name : "-",
             cli_arrow(json_object_get(row, "higher_is_better")));

    const json_t *jn = json_object_get(row, "n");
    long long count = json_is_integer(jn) ? (long long)json_integer_value(jn) : 0;
    snprintf(n, sizeof n, "%lld", count);

    double c, low, high;
    const char *note;
    hv_summary_figures(row, &c, &low, &high, &note);
    double m = cli_num(row, "mean"), s = cli_num(row, "sd");
    if (note != NULL)
        snprintf(interval, sizeof interval, "%s", note);
    else
        cli_fmt_interval(interval, sizeof interval, true, low, high);
    const char *cells[REPORT_NCOLS] = {
        json_string_value(json_object_get(row, "configuration")),
        json_string_value(json_object_get(row, "workload")),
        json_string_value(json_object_get(row, "target")),
        metric,
        n,
        isnan(c) ? "-" : cli_fmt_num(center, sizeof center, c),
        interval,
        cli_fmt_half_pct(half, sizeof half, note == NULL,
                         cli_num(json_object_get(row, "interval"), "rel_half_pct")),
        isnan(m) ? "-" : cli_fmt_num(mean, sizeof mean, m),
        isnan(s) || count < 2 ? "-" : cli_fmt_num(sd, sizeof sd, s),
        json_string_value(json_object_get(row, "unit")),
    };
    return cli_table_add(t, cells);
}

/** Adds one comparison to the verdicts table. Returns 0 or -1. */
static int add_verdict(struct cli_table *t, const json_t *c)
{
    char metric[256], level[256], n[32], pct[48], iv[96], more[32];
    snprintf(metric, sizeof metric, "%s%s", str(c, "metric"),
             cli_arrow(json_object_get(c, "higher_is_better")));
    snprintf(level, sizeof level, "%s=%s vs %s", str(c, "factor"), str(c, "level"),
             str(c, "default"));
    snprintf(n, sizeof n, "%lld", (long long)json_integer_value(json_object_get(c, "n")));
    double p = cli_num(c, "pct"), lo, hi;
    const char *note = hv_change_bounds(c, "lo_pct", "hi_pct", &lo, &hi);
    int dec = hv_change_decimals(p, lo, hi);
    const json_t *m = json_object_get(c, "more_rounds");
    if (json_is_integer(m))
        snprintf(more, sizeof more, "%lld", (long long)json_integer_value(m));
    else
        snprintf(more, sizeof more,
                 json_is_true(json_object_get(c, "more_rounds_beyond_cap")) ? "> 1000" : "-");
    const char *cells[VERDICT_NCOLS] = {
        str(c, "workload"),
        str(c, "side"),
        metric,
        level,
        n,
        hv_fmt_change(pct, sizeof pct, p, dec),
        note == NULL ? hv_fmt_change_interval(iv, sizeof iv, lo, hi, dec) : note,
        str(c, "family_verdict"),
        more,
    };
    return cli_table_add(t, cells);
}

/** Prints a heading and one indented line per element's member field;
 *  nothing when the list is empty. */
static void print_lines(const char *heading, const json_t *list, const char *field)
{
    if (json_array_size(list) == 0)
        return;
    putchar('\n');
    cli_out("%s", heading);
    size_t i;
    const json_t *e;
    json_array_foreach(list, i, e) cli_out("  %s", str(e, field));
}

/** The recommendations: each with its apply snippet. */
static void print_recommendations(const json_t *body)
{
    const json_t *recs = json_object_get(body, "recommendations");
    putchar('\n');
    cli_out("Recommendations");
    if (json_array_size(recs) == 0)
        cli_out("  none: no factor level is better than its default on a primary metric");
    size_t i;
    const json_t *r;
    json_array_foreach(recs, i, r)
    {
        cli_out("  %zu. %s", i + 1, str(r, "sentence"));
        if (json_is_string(json_object_get(r, "apply")))
            cli_out("     apply: %s", str(r, "apply"));
    }
    print_lines("Safe to ignore", json_object_get(body, "safe_to_ignore"), "sentence");
}

/** True when text is the sentence of an element of list. */
static bool listed(const json_t *list, const char *field, const char *text)
{
    size_t i;
    const json_t *e;
    json_array_foreach(list, i, e) if (strcmp(str(e, field), text) == 0) return true;
    return false;
}

/** The warnings, less those the Repetitions section just said in the same
 *  words (an interval width that was not reached is both). */
static void print_warnings(const json_t *body, const json_t *repetitions)
{
    const json_t *warnings = json_object_get(body, "warnings");
    bool heading = false;
    size_t i;
    const json_t *w;
    json_array_foreach(warnings, i, w)
    {
        if (listed(repetitions, "sentence", str(w, "message")))
            continue;
        if (!heading) {
            putchar('\n');
            cli_out("Warnings");
            heading = true;
        }
        cli_out("  %s", str(w, "message"));
    }
}

/** The elements of list whose "primary" is true (all of them when all):
 *  a new array of borrowed rows; *hidden gets how many were left out. */
static json_t *primary_only(const json_t *list, bool all, size_t *hidden)
{
    json_t *kept = json_array();
    size_t i;
    const json_t *e;
    json_array_foreach(list, i, e)
    {
        if (all || json_is_true(json_object_get(e, "primary")))
            json_array_append(kept, (json_t *)e);
        else
            ++*hidden;
    }
    return kept;
}

/** The answer the report opens with (hv_report_lead). */
static void print_answer(const json_t *body)
{
    json_t *lines = hv_report_lead(body);
    if (json_array_size(lines) > 0) {
        putchar('\n');
        cli_out("Answer");
    }
    size_t i;
    const json_t *l;
    json_array_foreach(lines, i, l) cli_out("  %s", json_string_value(l));
    json_decref(lines);
}

/** The sections after the summary table; unless all, the overhead of
 *  primary metrics only (*hidden counts the rest) and no efficiency (the
 *  answer has it). */
static int print_sections(const json_t *body, bool all, size_t *hidden)
{
    const json_t *cmps = json_object_get(body, "comparisons");
    int rc = CLI_EXIT_OK;
    if (json_array_size(cmps) > 0) {
        putchar('\n');
        cli_out("Verdicts: %s", str(json_object_get(body, "family"), "sentence"));
        putchar('\n');
        rc = cli_print_rows(cmps, verdict_cols, VERDICT_NCOLS, add_verdict);
    }
    print_lines("Interactions", json_object_get(body, "interactions"), "sentence");
    json_t *overhead = primary_only(json_object_get(body, "overhead"), all, hidden);
    print_lines("Overhead", overhead, "sentence");
    json_decref(overhead);
    if (all) /* else the answer said it */
        print_lines("Efficiency", json_object_get(body, "efficiency"), "sentence");
    if (json_array_size(json_object_get(body, "comparisons")) > 0)
        print_recommendations(body);
    const json_t *reps = json_object_get(json_object_get(body, "repetitions"), "configurations");
    print_lines("Repetitions", reps, "sentence");
    print_warnings(body, reps);
    return rc;
}

/** A fleet plan's per-host view: one line per series and host against
 *  the fleet's median, then the outliers and what differs in their facts. */
static void print_hosts(const json_t *body)
{
    const json_t *h = json_object_get(body, "hosts");
    if (!json_is_object(h))
        return;
    putchar('\n');
    cli_out("Hosts: %zu, each against the fleet's median (outliers beyond +-%g %%)",
            json_array_size(json_object_get(h, "hosts")),
            json_number_value(json_object_get(h, "margin_pct")));
    cli_out("  %-20s %-20s %-24s %4s %12s %24s %s", "workload", "metric", "host", "n", "mean",
            "ratio (95 % interval)", "outlier");
    size_t i, k;
    const json_t *s, *x;
    json_array_foreach(json_object_get(h, "series"), i, s)
    {
        json_array_foreach(json_object_get(s, "hosts"), k, x)
        {
            char ratio[64];
            snprintf(ratio, sizeof ratio, "%.3f (%.3f-%.3f)",
                     json_number_value(json_object_get(x, "ratio")),
                     json_number_value(json_object_get(x, "ratio_lo")),
                     json_number_value(json_object_get(x, "ratio_hi")));
            cli_out("  %-20s %-20s %-24s %4lld %12.4g %24s %s", str(s, "workload"),
                    str(s, "metric"), str(x, "host"),
                    (long long)json_integer_value(json_object_get(x, "n")),
                    json_number_value(json_object_get(x, "mean")), ratio,
                    json_is_true(json_object_get(x, "outlier")) ? "yes" : "");
        }
    }
    const json_t *outliers = json_object_get(h, "outliers");
    putchar('\n');
    if (json_array_size(outliers) == 0)
        cli_out("Outliers: none");
    json_array_foreach(outliers, i, x)
    {
        char why[1024] = "";
        size_t n = 0;
        json_array_foreach(json_object_get(x, "differs"), k, s)
        {
            char *v = json_dumps(json_object_get(s, "value"), JSON_ENCODE_ANY | JSON_COMPACT);
            char *t = json_dumps(json_object_get(s, "typical"), JSON_ENCODE_ANY | JSON_COMPACT);
            if (n < sizeof why)
                n +=
                    (size_t)snprintf(why + n, sizeof why - n, "%s%s %s (typical %s)", n ? ", " : "",
                                     str(s, "fact"), v ? v : "null", t ? t : "null");
            free(v);
            free(t);
        }
        cli_out("Outlier %s: %zu series beyond the margin; %s%s", str(x, "host"),
                json_array_size(json_object_get(x, "series")),
                why[0] ? "differs in " : "facts as the typical host's", why);
    }
}

/** Prints the header line, the answer, the summary table and the
 *  sections: of primary metrics only unless all, with a last line saying
 *  how many rows --all would add. */
static int print_report(const json_t *body, bool all)
{
    const json_t *rows = json_object_get(body, "summaries");
    if (!json_is_array(rows)) {
        cli_err("the server's answer has no summaries[]");
        return CLI_EXIT_FAIL;
    }
    const char *name = json_string_value(json_object_get(body, "name"));
    const char *status = json_string_value(json_object_get(body, "status"));
    const json_t *id = json_object_get(body, "plan_id");
    cli_out("plan %lld %s: %s", json_is_integer(id) ? (long long)json_integer_value(id) : 0LL,
            name != NULL ? name : "", status != NULL ? status : "unknown");
    if (status != NULL && !cli_plan_finished(status))
        cli_out("(partial: the plan is still %s)", status);
    print_answer(body);
    print_hosts(body);
    if (json_array_size(rows) == 0) {
        if (json_object_get(body, "hosts") != NULL)
            return CLI_EXIT_OK;
        cli_err("no results yet");
        return CLI_EXIT_OK;
    }
    size_t hidden = 0;
    json_t *shown = primary_only(rows, all, &hidden);
    putchar('\n');
    int rc = cli_print_rows(shown, report_cols, REPORT_NCOLS, add_row);
    json_decref(shown);
    if (rc == CLI_EXIT_OK)
        rc = print_sections(body, all, &hidden);
    if (rc == CLI_EXIT_OK && hidden > 0) {
        putchar('\n');
        cli_out("%zu rows of other metrics and percentiles left out: --all lists them", hidden);
    }
    return rc;
}

/** Writes text (Markdown or CSV) to stdout with control characters other
 *  than line ends and tabs replaced by '?' (see cli_scrub()). */
static int print_text(char *text)
{
    if (text == NULL) {
        cli_err("out of memory");
        return CLI_EXIT_FAIL;
    }
    for (char *p = text; *p != '\0'; p++) {
        unsigned char ch = (unsigned char)*p;
        bool line_end = ch == '\n' || (ch == '\r' && p[1] == '\n');
        if ((ch < 0x20 && ch != '\t' && !line_end) || ch == 0x7f)
            *p = '?';
    }
    int rc = fputs(text, stdout) < 0 ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    free(text);
    return rc;
}

/** The output formats of --format. */
enum report_format { FMT_TABLE, FMT_MD, FMT_CSV, FMT_JSON };

/** Parses the options; returns -1 after a usage message. */
static int parse_format(int argc, char **argv, enum report_format *fmt, bool *all)
{
    static const struct option options[] = {
        {"format", required_argument, NULL, 'f'},
        {"all", no_argument, NULL, 'a'},
        {NULL, 0, NULL, 0},
    };
    static const char *const names[] = {"table", "md", "csv", "json"};
    int opt;
    while ((opt = getopt_long(argc, argv, "f:", options, NULL)) != -1) {
        if (opt == 'a') {
            *all = true;
            continue;
        }
        if (opt != 'f')
            return -1;
        size_t i = 0;
        while (i < 4 && strcmp(optarg, names[i]) != 0)
            i++;
        if (i == 4) {
            cli_err("--format must be one of table, md, csv, json");
            return -1;
        }
        *fmt = (enum report_format)i;
    }
    return 0;
}

/** hvbench report [--format F] [--all] ID */
static int cmd_report_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    enum report_format fmt = ctx->json ? FMT_JSON : FMT_TABLE;
    bool all = false;
    if (parse_format(argc, argv, &fmt, &all) != 0)
        return cli_usage(&cli_cmd_report);
    if (argc - optind != 1 || argv[optind][0] == '-')
        return cli_usage(&cli_cmd_report);
    long long id;
    if (cli_parse_id(argv[optind], &id) != 0)
        return CLI_EXIT_USAGE;
    char path[64];
    snprintf(path, sizeof path, "/api/v1/plans/%lld/report", id);
    struct hv_http_response resp;
    memset(&resp, 0, sizeof resp);
    int rc = cli_request(ctx, "GET", path, NULL, &resp);
    if (rc == CLI_EXIT_OK) {
        switch (fmt) {
        case FMT_JSON:
            rc = cli_print_json(resp.body) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
            break;
        case FMT_MD:
            rc = print_text(hv_report_md(resp.body));
            break;
        case FMT_CSV:
            rc = print_text(hv_report_csv(resp.body));
            break;
        case FMT_TABLE:
            rc = print_report(resp.body, all);
            break;
        }
    }
    hv_http_response_clear(&resp);
    return rc;
}
