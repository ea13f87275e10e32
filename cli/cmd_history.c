/* cmd_history.c — hvbench history: a metric's history on a target across
 * plans and imports, with its change points and what changed on the
 * target around each (GET /api/v1/targets/{id}/history); hvbench ack:
 * acknowledge change points (POST /api/v1/change-points/{id}/ack).
 *
 * history exits CLI_EXIT_CHANGE when a change point nobody acknowledged is
 * found, so a CI pipeline can stop on a regression and a person can
 * acknowledge it. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "cli/table.h"

static int cmd_history_exec(struct cli_ctx *ctx, int argc, char **argv);
static int cmd_ack_exec(struct cli_ctx *ctx, int argc, char **argv);

const struct cli_command cli_cmd_history = {
    .name = "history",
    .usage = "[--workload ID] [--configuration NAME] [--max-points N] [--from TIME] [--to TIME]\n"
             "       [--points] TARGET METRIC",
    .summary = "show a metric's history on a target and its change points",
    .help = "  -w, --workload ID         only the jobs of this workload id\n"
            "  -c, --configuration NAME  the configurations of this name (default: each\n"
            "                            plan's default configuration)\n"
            "  -m, --max-points N        past N points a series is cut into N time\n"
            "                            buckets (mean, min, max); default 2000\n"
            "  -f, --from TIME           only the points from TIME (ISO 8601)\n"
            "  -t, --to TIME             only the points until TIME\n"
            "  -p, --points              print the points too\n"
            "\n"
            "TARGET is a target's name or id. Every plan and import that measured METRIC\n"
            "on it counts, in the order the measurements ran (an import's own date). One\n"
            "series per workload (kind, engine and params). A change point (E-Divisive\n"
            "means) is where the level moved; each lists the facts of the target that\n"
            "differ between the points around it (kernel, QEMU, libvirt ...) and the\n"
            "tuning changed in between. 'hvbench ack ID' acknowledges one.\n"
            "\n"
            "Exit status 4 when a change point nobody acknowledged is found (0 when\n"
            "none is), for CI pipelines; 3 still means the server could not be reached.\n",
    .fn = cmd_history_exec,
};

const struct cli_command cli_cmd_ack = {
    .name = "ack",
    .usage = "ID...",
    .summary = "acknowledge change points, so history reports them as new no more",
    .help = "ID is a change point's id as 'hvbench history' prints it. Acknowledging\n"
            "one twice keeps the first acknowledgement.\n",
    .fn = cmd_ack_exec,
};

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s != NULL ? s : "-";
}

/** A JSON value as text for a line: strings bare, anything else as JSON. */
static void value_text(char *buf, size_t len, const json_t *v)
{
    if (json_is_string(v)) {
        snprintf(buf, len, "%s", json_string_value(v));
        return;
    }
    char *text = v != NULL ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    snprintf(buf, len, "%s", text != NULL ? text : "null");
    free(text);
}

/** Parses a positive id; returns 0, or -1 after a message naming what. */
static int parse_id(const char *s, const char *what, long long *id)
{
    char *end = (char *)s;
    long long v = s[0] >= '1' && s[0] <= '9' ? strtoll(s, &end, 10) : 0;
    if (v <= 0 || *end != '\0' || strlen(s) > 18) {
        cli_err("'%s' is not a %s id (a positive integer)", s, what);
        return -1;
    }
    *id = v;
    return 0;
}

/** Finds the id of the target called name (GET /api/v1/targets): a guest
 *  by its name alone when no other host has a guest of that name. */
static int target_id(struct cli_ctx *ctx, const char *name, long long *id)
{
    if (name[0] >= '1' && name[0] <= '9' && strspn(name, "0123456789") == strlen(name))
        return parse_id(name, "target", id) == 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    char full[300];
    int rc = cli_target_name(ctx, name, full, sizeof full, id);
    if (rc == CLI_EXIT_OK && *id == 0) {
        cli_err("no target called '%s' (hvbench targets lists them)", name);
        rc = CLI_EXIT_FAIL;
    }
    return rc;
}

/** Prints one change point: a line, then what changed on the target. */
static void print_change_point(const json_t *cp, const char *unit)
{
    char when[64], before[64], after[64], pct[32];
    cli_fmt_time(when, sizeof when, str(cp, "at"));
    double change = cli_num(cp, "change_pct");
    if (isfinite(change))
        snprintf(pct, sizeof pct, "%+.1f %%", change);
    else
        snprintf(pct, sizeof pct, "change");
    cli_out("change point %lld (%s) at %s: %s (%s -> %s %s, %lld and %lld points, p %.3g)",
            (long long)json_integer_value(json_object_get(cp, "id")), str(cp, "status"), when, pct,
            cli_fmt_num(before, sizeof before, cli_num(cp, "mean_before")),
            cli_fmt_num(after, sizeof after, cli_num(cp, "mean_after")), unit,
            (long long)json_integer_value(json_object_get(cp, "n_before")),
            (long long)json_integer_value(json_object_get(cp, "n_after")), cli_num(cp, "p"));
    if (json_is_null(json_object_get(cp, "facts_before")))
        cli_out("  facts before it: not known (no worker had registered the target)");
    size_t i;
    const json_t *f;
    json_array_foreach(json_object_get(cp, "facts_changed"), i, f)
    {
        char b[256], a[256];
        value_text(b, sizeof b, json_object_get(f, "before"));
        value_text(a, sizeof a, json_object_get(f, "after"));
        cli_out("  %s: %s -> %s", str(f, "fact"), b, a);
    }
    json_array_foreach(json_object_get(cp, "tuning"), i, f)
    {
        char b[256], a[256];
        value_text(b, sizeof b, json_object_get(f, "from"));
        value_text(a, sizeof a, json_object_get(f, "to"));
        cli_out("  tuning %s %s (%s): %s -> %s", str(f, "event"), str(f, "factor"),
                str(f, "object"), b, a);
    }
}

/** Adds the row of one point of a series. */
static int add_point(struct cli_table *t, const json_t *p)
{
    char at[64], v[64], n[24], lo[64], hi[64], plan[24];
    long long count = (long long)json_integer_value(json_object_get(p, "n"));
    snprintf(n, sizeof n, "%lld", count);
    snprintf(plan, sizeof plan, "%lld",
             (long long)json_integer_value(json_object_get(p, "plan_id")));
    const char *cells[6] = {cli_fmt_time(at, sizeof at, str(p, "at")),
                            cli_fmt_num(v, sizeof v, cli_num(p, "value")),
                            n,
                            count > 1 ? cli_fmt_num(lo, sizeof lo, cli_num(p, "min")) : NULL,
                            count > 1 ? cli_fmt_num(hi, sizeof hi, cli_num(p, "max")) : NULL,
                            count == 1 ? plan : NULL};
    return cli_table_add(t, cells);
}

/** Prints the points of a series as a table. */
static int print_points(const json_t *points)
{
    static const struct cli_column cols[] = {{"at", CLI_LEFT},   {"value", CLI_RIGHT},
                                             {"n", CLI_RIGHT},   {"min", CLI_RIGHT},
                                             {"max", CLI_RIGHT}, {"plan", CLI_RIGHT}};
    return cli_print_rows(points, cols, 6, add_point);
}

/** Prints one series: a headline, the points when asked, its change
 *  points. */
static int print_series(const json_t *body, const json_t *s, bool points)
{
    char first[64], last[64], *workload;
    workload = json_dumps(json_object_get(s, "workload"), JSON_COMPACT | JSON_SORT_KEYS);
    const json_t *hib = json_object_get(s, "higher_is_better");
    cli_out("%s%s on %s: %lld points from %s to %s; workload %s", str(body, "metric"),
            cli_arrow(hib), str(body, "target"),
            (long long)json_integer_value(json_object_get(s, "n")),
            cli_fmt_time(first, sizeof first, str(s, "first")),
            cli_fmt_time(last, sizeof last, str(s, "last")), workload ? workload : "?");
    free(workload);
    int rc = points ? print_points(json_object_get(s, "points")) : CLI_EXIT_OK;
    const json_t *cps = json_object_get(s, "change_points");
    if (json_array_size(cps) == 0)
        cli_out("no change point");
    size_t i;
    const json_t *cp;
    json_array_foreach(cps, i, cp)
    {
        print_change_point(cp, str(s, "unit"));
    }
    return rc;
}

/** hvbench history [options] TARGET METRIC */
static int cmd_history_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    static const struct option options[] = {
        {"workload", required_argument, NULL, 'w'},
        {"configuration", required_argument, NULL, 'c'},
        {"max-points", required_argument, NULL, 'm'},
        {"points", no_argument, NULL, 'p'},
        {"from", required_argument, NULL, 'f'},
        {"to", required_argument, NULL, 't'},
        {NULL, 0, NULL, 0},
    };
    const char *workload = NULL, *config = NULL, *max_points = NULL, *from = NULL, *to = NULL;
    bool points = false;
    int opt;
    while ((opt = getopt_long(argc, argv, "w:c:m:pf:t:", options, NULL)) != -1) {
        switch (opt) {
        case 'f':
            from = optarg;
            break;
        case 't':
            to = optarg;
            break;
        case 'w':
            workload = optarg;
            break;
        case 'c':
            config = optarg;
            break;
        case 'm':
            max_points = optarg;
            break;
        case 'p':
            points = true;
            break;
        default:
            return cli_usage(&cli_cmd_history);
        }
    }
    if (argc - optind != 2)
        return cli_usage(&cli_cmd_history);
    long long id;
    int rc = target_id(ctx, argv[optind], &id);
    if (rc != CLI_EXIT_OK)
        return rc;
    char path[2048];
    snprintf(path, sizeof path, "/api/v1/targets/%lld/history", id);
    if (cli_add_query(path, sizeof path, "metric", argv[optind + 1]) != 0 ||
        (workload && cli_add_query(path, sizeof path, "workload", workload) != 0) ||
        (config && cli_add_query(path, sizeof path, "configuration", config) != 0) ||
        (max_points && cli_add_query(path, sizeof path, "max_points", max_points) != 0) ||
        (from && cli_add_query(path, sizeof path, "from", from) != 0) ||
        (to && cli_add_query(path, sizeof path, "to", to) != 0)) {
        cli_err("the arguments are too long");
        return CLI_EXIT_USAGE;
    }
    struct hv_http_response resp;
    memset(&resp, 0, sizeof resp);
    rc = cli_request(ctx, "GET", path, NULL, &resp);
    if (rc == CLI_EXIT_OK) {
        const json_t *series = json_object_get(resp.body, "series");
        if (ctx->json) {
            rc = cli_print_json(resp.body) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
        } else if (json_array_size(series) == 0) {
            /* A metric the target never measured is a 404 (exit 1); here it
             * did, outside what the options select. */
            cli_out("no %s on %s in this workload, configuration or window", argv[optind + 1],
                    str(resp.body, "target"));
        }
        size_t i;
        const json_t *s;
        json_array_foreach(ctx->json ? NULL : series, i, s)
        {
            if (i > 0)
                putchar('\n');
            if (print_series(resp.body, s, points) != CLI_EXIT_OK)
                rc = CLI_EXIT_FAIL;
        }
        json_int_t fresh = json_integer_value(json_object_get(resp.body, "new_change_points"));
        if (rc == CLI_EXIT_OK && fresh > 0) {
            cli_err("%lld change point%s not acknowledged (hvbench ack ID)", (long long)fresh,
                    fresh == 1 ? "" : "s");
            rc = CLI_EXIT_CHANGE;
        }
    }
    hv_http_response_clear(&resp);
    return rc;
}

/** hvbench ack ID... */
static int cmd_ack_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    if (argc < 2)
        return cli_usage(&cli_cmd_ack);
    int rc = CLI_EXIT_OK;
    for (int i = 1; i < argc && rc != CLI_EXIT_UNREACHABLE; i++) {
        long long id;
        if (parse_id(argv[i], "change point", &id) != 0) {
            rc = CLI_EXIT_USAGE;
            continue;
        }
        char path[64];
        snprintf(path, sizeof path, "/api/v1/change-points/%lld/ack", id);
        struct hv_http_response resp;
        memset(&resp, 0, sizeof resp);
        int one = cli_request(ctx, "POST", path, NULL, &resp);
        if (one == CLI_EXIT_OK && ctx->json) {
            cli_print_json(resp.body);
        } else if (one == CLI_EXIT_OK) {
            char when[64];
            const json_t *series = json_object_get(resp.body, "series");
            cli_out("change point %lld of %s on %s: acknowledged by %s at %s", id,
                    str(series, "metric"), str(series, "target"), str(resp.body, "acknowledged_by"),
                    cli_fmt_time(when, sizeof when, str(resp.body, "acknowledged_at")));
        }
        if (one != CLI_EXIT_OK && rc == CLI_EXIT_OK)
            rc = one;
        hv_http_response_clear(&resp);
    }
    return rc;
}
