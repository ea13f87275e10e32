/* cmd_report.c — hvbench report: the statistics of a plan's results
 * (GET /api/v1/plans/{id}/report) as an aligned table. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "cli/table.h"

static int cmd_report_exec(struct cli_ctx *ctx, int argc, char **argv);

const struct cli_command cli_cmd_report = {
    .name = "report",
    .usage = "ID",
    .summary = "show mean, sd and 95% confidence interval per metric",
    .help = "One row per configuration, workload, target and metric. The metric\n"
            "carries an arrow: ↑ higher is better, ↓ lower is better. \"95% CI\" is the\n"
            "half width of the Student-t interval of the mean relative to the mean,\n"
            "\"interval\" its bounds; with n = 1 there is no interval and both show -.\n",
    .fn = cmd_report_exec,
};

/** The columns of the report, in the order of docs/cli.md. */
static const struct cli_column report_cols[] = {
    {"configuration", CLI_LEFT}, {"workload", CLI_LEFT}, {"target", CLI_LEFT},
    {"metric", CLI_LEFT},        {"n", CLI_RIGHT},       {"mean", CLI_RIGHT},
    {"sd", CLI_RIGHT},           {"95% CI", CLI_RIGHT},  {"interval", CLI_LEFT},
    {"unit", CLI_LEFT},
};

#define REPORT_NCOLS (sizeof report_cols / sizeof report_cols[0])

/** Returns the number member key of row, or NaN when it is absent or null
 *  (the server sends null for what cannot be computed). */
static double num(const json_t *row, const char *key)
{
    const json_t *v = json_object_get(row, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/** Returns the arrow for a higher_is_better member: ↑ higher is better, ↓
 *  lower is better, nothing when the server did not say. */
static const char *direction(const json_t *hib)
{
    if (json_is_true(hib))
        return " ↑";
    return json_is_false(hib) ? " ↓" : "";
}

/** Adds one report row to t. Returns 0 or -1 (out of memory). */
static int add_row(struct cli_table *t, const json_t *row)
{
    char metric[256], n[32], mean[64], sd[64], half[64], interval[160];
    const char *name = json_string_value(json_object_get(row, "metric"));
    /* The direction matters to read a comparison. */
    snprintf(metric, sizeof metric, "%s%s", name != NULL ? name : "-",
             direction(json_object_get(row, "higher_is_better")));

    const json_t *jn = json_object_get(row, "n");
    long long count = json_is_integer(jn) ? (long long)json_integer_value(jn) : 0;
    snprintf(n, sizeof n, "%lld", count);

    double m = num(row, "mean"), s = num(row, "sd");
    double low = num(row, "ci95_low"), high = num(row, "ci95_high");
    bool has_ci = count >= 2 && isfinite(low) && isfinite(high);
    const char *cells[REPORT_NCOLS] = {
        json_string_value(json_object_get(row, "configuration")),
        json_string_value(json_object_get(row, "workload")),
        json_string_value(json_object_get(row, "target")),
        metric,
        n,
        isnan(m) ? "-" : cli_fmt_num(mean, sizeof mean, m),
        isnan(s) || count < 2 ? "-" : cli_fmt_num(sd, sizeof sd, s),
        cli_fmt_half_pct(half, sizeof half, has_ci, num(row, "ci95_half_pct")),
        cli_fmt_interval(interval, sizeof interval, has_ci, low, high),
        json_string_value(json_object_get(row, "unit")),
    };
    return cli_table_add(t, cells);
}

/** Prints the header line and the table of the report body. */
static int print_report(const json_t *body)
{
    const json_t *rows = json_object_get(body, "rows");
    if (!json_is_array(rows)) {
        cli_err("the server's answer has no rows[]");
        return CLI_EXIT_FAIL;
    }
    const char *name = json_string_value(json_object_get(body, "name"));
    const char *status = json_string_value(json_object_get(body, "status"));
    const json_t *id = json_object_get(body, "plan_id");
    cli_out("plan %lld %s: %s", json_is_integer(id) ? (long long)json_integer_value(id) : 0LL,
            name != NULL ? name : "", status != NULL ? status : "unknown");
    if (status != NULL && !cli_plan_finished(status))
        cli_out("(partial: the plan is still %s)", status);
    if (json_array_size(rows) == 0) {
        cli_err("no results yet");
        return CLI_EXIT_OK;
    }
    struct cli_table *t = cli_table_new(report_cols, REPORT_NCOLS);
    if (t == NULL)
        return CLI_EXIT_FAIL;
    int rc = CLI_EXIT_OK;
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        if (add_row(t, row) != 0) {
            rc = CLI_EXIT_FAIL;
            break;
        }
    }
    putchar('\n');
    if (rc == CLI_EXIT_OK && cli_table_print(t, stdout) != 0)
        rc = CLI_EXIT_FAIL;
    cli_table_free(t);
    return rc;
}

/** hvbench report ID */
static int cmd_report_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    long long id;
    if (argc != 2 || argv[1][0] == '-')
        return cli_usage(&cli_cmd_report);
    if (cli_parse_id(argv[1], &id) != 0)
        return CLI_EXIT_USAGE;
    char path[64];
    snprintf(path, sizeof path, "/api/v1/plans/%lld/report", id);
    struct hv_http_response resp;
    memset(&resp, 0, sizeof resp);
    int rc = cli_request(ctx, "GET", path, NULL, &resp);
    if (rc == CLI_EXIT_OK)
        rc = ctx->json ? (cli_print_json(resp.body) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL)
                       : print_report(resp.body);
    hv_http_response_clear(&resp);
    return rc;
}
