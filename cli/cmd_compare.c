/* cmd_compare.c — hvbench compare A B: two plans, or two configurations of
 * plans, side by side metric by metric, with B's % change against A, its
 * 95 % interval and a verdict (GET /api/v1/compare). */
#include <getopt.h>
#include <math.h>
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
    .usage = "[--margin PCT] A B",
    .summary = "compare two plans or configurations metric by metric",
    .help =
        "  -m, --margin PCT   the equivalence margin of the verdicts (default: B's\n"
        "                     plan's margin_pct, else A's, else 1)\n"
        "\n"
        "A and B are each a plan id (its default configuration) or PLAN:CONFIGURATION,\n"
        "the configuration's name as 'hvbench report' prints it, '=' and ',' and all:\n"
        "  hvbench compare 12 12:vcpu_pin=on,thp=never\n"
        "  hvbench compare 40 41          (a host's import against a guest's)\n"
        "Rows pair the same workload and metric (and target, unless each side ran on\n"
        "one target). A and B are each side's centre, the geometric mean, with its\n"
        "95 % interval on logs. \"change\" is B against A: the ratio of geometric means as a %,\n"
        "with its 95 % interval (Welch, on logs) when both sides have 3 runs or more and\n"
        "it is within +-100 %, else the words why there is none; the verdict reads it\n"
        "against the margin, the arrow of the metric giving the good direction: better,\n"
        "worse, no_effect or inconclusive (always, without a usable interval).\n",
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

/** hvbench compare [--margin PCT] A B */
static int cmd_compare_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    static const struct option options[] = {
        {"margin", required_argument, NULL, 'm'},
        {NULL, 0, NULL, 0},
    };
    const char *margin = NULL;
    int opt;
    while ((opt = getopt_long(argc, argv, "m:", options, NULL)) != -1) {
        if (opt != 'm')
            return cli_usage(&cli_cmd_compare);
        margin = optarg;
    }
    if (argc - optind != 2)
        return cli_usage(&cli_cmd_compare);
    char path[2400] = "/api/v1/compare";
    if (cli_add_query(path, sizeof path, "a", argv[optind]) != 0 ||
        cli_add_query(path, sizeof path, "b", argv[optind + 1]) != 0 ||
        (margin != NULL && cli_add_query(path, sizeof path, "margin_pct", margin) != 0)) {
        cli_err("the arguments are too long");
        return CLI_EXIT_USAGE;
    }
    struct hv_http_response resp;
    memset(&resp, 0, sizeof resp);
    int rc = cli_request(ctx, "GET", path, NULL, &resp);
    if (rc == CLI_EXIT_OK)
        rc = ctx->json ? (cli_print_json(resp.body) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL)
                       : print_compare(resp.body);
    hv_http_response_clear(&resp);
    return rc;
}
