/* cmd_compare.c — hvbench compare A B [C …]: two plans, or two
 * configurations of plans, side by side metric by metric, with B's %
 * change against A, its 95 % interval and a verdict (GET
 * /api/v1/compare?a=&b=); three to twelve items (or two with --baseline)
 * against a baseline, a table per metric and the overall geometric mean
 * (GET /api/v1/compare?items=). */
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "cli/table.h"
#include "report_render.h"

static int cmd_compare_exec(struct cli_ctx *ctx, int argc, char **argv);

const struct cli_command cli_cmd_compare = {
    .name = "compare",
    .usage = "[--margin PCT] [--baseline ITEM] A B [C ...]",
    .summary = "compare plans or configurations metric by metric",
    .help =
        "  -m, --margin PCT   the equivalence margin of the verdicts (default: B's\n"
        "                     plan's margin_pct, else A's, else 1; with three items\n"
        "                     or more the baseline's plan's, else 1)\n"
        "  -b, --baseline ITEM  with three to twelve items, the one the others are\n"
        "                     compared with, as given (default: the first)\n"
        "\n"
        "A and B are each a plan id (its default configuration) or PLAN:CONFIGURATION,\n"
        "the configuration's name as 'hvbench report' prints it, '=' and ',' and all:\n"
        "  hvbench compare 12 12:vcpu_pin=on,thp=never\n"
        "  hvbench compare 40 41          (a host's import against a guest's)\n"
        "Rows pair the same workload and metric (and target, unless each side ran on\n"
        "one target). A and B are each side's centre, the geometric mean, with its\n"
        "95 % interval on logs. \"change\" is B against A: the ratio of geometric means as a %,\n"
        "with its 95 % interval on logs (paired within rounds for two configurations of\n"
        "one plan, as its report compares them; Welch otherwise) when both sides have 3\n"
        "runs or more and it is within +-100 %, else the words why there is none; the\n"
        "verdict reads it\n"
        "against the margin, the arrow of the metric giving the good direction: better,\n"
        "worse, no_effect or inconclusive (always, without a usable interval).\n"
        "\n"
        "With three to twelve items (or --baseline), each also a target's name (its\n"
        "latest done plan): a table per metric, an item a line with its centre and\n"
        "interval, its change against the baseline and the verdict after Holm's\n"
        "correction over the comparisons of that metric, then the geometric mean of\n"
        "each item's ratios over the primary metrics every item has (a lower-is-\n"
        "better metric's ratio inverted, so above 1 is better):\n"
        "  hvbench compare 12 12:vcpu_pin=on 12:vcpu_pin=on,thp=never host-b\n",
    .fn = cmd_compare_exec,
};

/** One side of a row as the API computed it: "centre [lo, hi] (n=N)", the
 *  centre the geometric mean of a positive metric; without a usable
 *  interval the words why in its place; "-" when the side has none. */
static const char *side_text(char *buf, size_t len, const json_t *side)
{
    if (!json_is_object(side))
        return "-";
    char v[64], iv[160];
    double c, lo, hi;
    const char *note;
    hv_summary_figures(side, &c, &lo, &hi, &note);
    long long n = (long long)json_integer_value(json_object_get(side, "n"));
    if (note != NULL)
        snprintf(buf, len, "%s (%s)", cli_fmt_num(v, sizeof v, c), note);
    else
        snprintf(buf, len, "%s %s (n=%lld)", cli_fmt_num(v, sizeof v, c),
                 cli_fmt_interval(iv, sizeof iv, true, lo, hi), n);
    return buf;
}

/** The target column: one name, or "A -> B" when the sides differ. */
static const char *targets_text(char *buf, size_t len, const json_t *row)
{
    const char *a = json_string_value(json_object_get(json_object_get(row, "a"), "target"));
    const char *b = json_string_value(json_object_get(json_object_get(row, "b"), "target"));
    if (a != NULL && b != NULL && strcmp(a, b) != 0)
        snprintf(buf, len, "%s -> %s", a, b);
    else
        snprintf(buf, len, "%s", a != NULL ? a : b != NULL ? b : "-");
    return buf;
}

static int add_row(struct cli_table *t, const json_t *row)
{
    char metric[200], target[300], a[320], b[320], change[32], interval[200];
    const json_t *hib = json_object_get(row, "higher_is_better");
    snprintf(metric, sizeof metric, "%s%s", json_string_value(json_object_get(row, "metric")),
             cli_arrow(hib));
    double pct = cli_num(row, "change_pct"), lo, hi;
    const char *note = hv_change_bounds(row, "lo_pct", "hi_pct", &lo, &hi);
    snprintf(change, sizeof change, isfinite(pct) ? "%+.2f%%" : "-", pct);
    if (note == NULL)
        snprintf(interval, sizeof interval, "[%+.2f%%, %+.2f%%]", lo, hi);
    else
        snprintf(interval, sizeof interval, "%s", isfinite(pct) ? note : "-");
    const char *verdict = json_string_value(json_object_get(row, "verdict"));
    const char *cells[8] = {json_string_value(json_object_get(row, "workload")),
                            metric,
                            targets_text(target, sizeof target, row),
                            side_text(a, sizeof a, json_object_get(row, "a")),
                            side_text(b, sizeof b, json_object_get(row, "b")),
                            change,
                            interval,
                            verdict != NULL ? verdict : "-"};
    return cli_table_add(t, cells);
}

static void print_side(const char *which, const json_t *side)
{
    cli_out("%s: plan %lld \"%s\", configuration %s", which,
            (long long)json_integer_value(json_object_get(side, "plan_id")),
            json_string_value(json_object_get(side, "plan_name")),
            json_string_value(json_object_get(side, "configuration")));
}

static int print_compare(const json_t *body)
{
    static const struct cli_column cols[] = {
        {"workload", CLI_LEFT},     {"metric", CLI_LEFT},  {"target", CLI_LEFT},
        {"A", CLI_RIGHT},           {"B", CLI_RIGHT},      {"change", CLI_RIGHT},
        {"95% interval", CLI_LEFT}, {"verdict", CLI_LEFT},
    };
    print_side("A", json_object_get(body, "a"));
    print_side("B", json_object_get(body, "b"));
    cli_out("margin %g %%", cli_num(body, "margin_pct"));
    putchar('\n');
    return cli_print_rows(json_object_get(body, "rows"), cols, 8, add_row);
}

/** The line of item i of a metric: its centre and interval, its change
 *  against the baseline with its interval and the verdict after Holm. */
static int add_item_line(struct cli_table *t, const json_t *item, const json_t *value,
                         const json_t *cmp)
{
    char name[600], v[320], change[32], interval[200];
    snprintf(name, sizeof name, "%s%s", json_string_value(json_object_get(item, "item")),
             json_is_true(json_object_get(item, "baseline")) ? " (baseline)" : "");
    double pct = cli_num(cmp, "change_pct"), lo, hi;
    snprintf(change, sizeof change, isfinite(pct) ? "%+.2f%%" : "-", pct);
    const char *note =
        json_is_object(cmp) ? hv_change_bounds(cmp, "lo_pct", "hi_pct", &lo, &hi) : "-";
    if (note == NULL)
        snprintf(interval, sizeof interval, "[%+.2f%%, %+.2f%%]", lo, hi);
    else
        snprintf(interval, sizeof interval, "%s", isfinite(pct) ? note : "-");
    const char *verdict = json_string_value(json_object_get(cmp, "verdict"));
    const char *cells[5] = {name, side_text(v, sizeof v, value), change, interval,
                            verdict != NULL ? verdict : "-"};
    return cli_table_add(t, cells);
}

/** A table per metric, then the geometric means. */
static int print_items(const json_t *body)
{
    static const struct cli_column cols[] = {
        {"item", CLI_LEFT},         {"centre [95%] (n)", CLI_RIGHT}, {"change", CLI_RIGHT},
        {"95% interval", CLI_LEFT}, {"verdict (Holm)", CLI_LEFT},
    };
    const json_t *items = json_object_get(body, "items");
    cli_out(
        "margin %g %%; each item against the baseline %s", cli_num(body, "margin_pct"),
        json_string_value(json_object_get(
            json_array_get(items, (size_t)json_integer_value(json_object_get(body, "baseline"))),
            "item")));
    size_t i;
    const json_t *m;
    json_array_foreach(json_object_get(body, "metrics"), i, m)
    {
        const char *target = json_string_value(json_object_get(m, "target"));
        const char *unit = json_string_value(json_object_get(m, "unit"));
        putchar('\n');
        cli_out("%s %s%s%s%s%s%s", json_string_value(json_object_get(m, "workload")),
                json_string_value(json_object_get(m, "metric")),
                cli_arrow(json_object_get(m, "higher_is_better")), unit ? " " : "",
                unit ? unit : "", target ? " on " : "", target ? target : "");
        struct cli_table *t = cli_table_new(cols, 5);
        int rc = t ? CLI_EXIT_OK : CLI_EXIT_FAIL;
        for (size_t k = 0; rc == CLI_EXIT_OK && k < json_array_size(items); k++)
            if (add_item_line(t, json_array_get(items, k),
                              json_array_get(json_object_get(m, "values"), k),
                              json_array_get(json_object_get(m, "comparisons"), k)) != 0)
                rc = CLI_EXIT_FAIL;
        if ((rc = cli_table_flush(t, rc)) != CLI_EXIT_OK)
            return rc;
    }
    const json_t *g = json_object_get(body, "geomean");
    putchar('\n');
    cli_out("geometric mean (%s):", json_string_value(json_object_get(g, "sentence")));
    for (size_t k = 0; k < json_array_size(items); k++) {
        char v[64];
        double x = json_number_value(json_array_get(json_object_get(g, "values"), k));
        cli_out("  %s %s", json_string_value(json_object_get(json_array_get(items, k), "item")),
                json_is_number(json_array_get(json_object_get(g, "values"), k))
                    ? cli_fmt_num(v, sizeof v, x)
                    : "-");
    }
    return CLI_EXIT_OK;
}

/** Adds items=A,B,… (and baseline=) to path; -1 when too long. */
static int items_query(char *path, size_t len, char **items, int n, const char *baseline)
{
    char list[2400] = "";
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        int w = snprintf(list + used, sizeof list - used, "%s%s", i ? "," : "", items[i]);
        if (w < 0 || (size_t)w >= sizeof list - used)
            return -1;
        used += (size_t)w;
    }
    return cli_add_query(path, len, "items", list) != 0 ||
                   (baseline != NULL && cli_add_query(path, len, "baseline", baseline) != 0)
               ? -1
               : 0;
}

/** hvbench compare [--margin PCT] [--baseline ITEM] A B [C …] */
static int cmd_compare_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    static const struct option options[] = {
        {"margin", required_argument, NULL, 'm'},
        {"baseline", required_argument, NULL, 'b'},
        {NULL, 0, NULL, 0},
    };
    const char *margin = NULL, *baseline = NULL;
    int opt;
    while ((opt = getopt_long(argc, argv, "m:b:", options, NULL)) != -1) {
        if (opt == 'm')
            margin = optarg;
        else if (opt == 'b')
            baseline = optarg;
        else
            return cli_usage(&cli_cmd_compare);
    }
    int n = argc - optind;
    if (n < 2 || n > 12)
        return cli_usage(&cli_cmd_compare);
    bool many = n > 2 || baseline != NULL;
    char path[8000] = "/api/v1/compare";
    if ((many ? items_query(path, sizeof path, argv + optind, n, baseline)
              : cli_add_query(path, sizeof path, "a", argv[optind]) != 0 ||
                    cli_add_query(path, sizeof path, "b", argv[optind + 1]) != 0) ||
        (margin != NULL && cli_add_query(path, sizeof path, "margin_pct", margin) != 0)) {
        cli_err("the arguments are too long");
        return CLI_EXIT_USAGE;
    }
    struct hv_http_response resp;
    memset(&resp, 0, sizeof resp);
    int rc = cli_request(ctx, "GET", path, NULL, &resp);
    if (rc == CLI_EXIT_OK)
        rc = ctx->json ? (cli_print_json(resp.body) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL)
             : many    ? print_items(resp.body)
                       : print_compare(resp.body);
    hv_http_response_clear(&resp);
    return rc;
}
