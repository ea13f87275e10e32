/* cmd_list.c — hvbench list: the newest plans (GET /api/v1/plans). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "cli/table.h"

/* The bounds the server accepts (docs/api.md); checked here so that a typo
 * is a usage error rather than a round trip. */
#define LIST_LIMIT_MAX 500

static int cmd_list_exec(struct cli_ctx *ctx, int argc, char **argv);

const struct cli_command cli_cmd_list = {
    .name = "list",
    .usage = "[--limit N]",
    .summary = "list the newest plans",
    .help = "  -l, --limit N  show at most N plans (1..500, default: the server's, 50)\n",
    .fn = cmd_list_exec,
};

/** Prints the items as a table; returns an exit code. */
static int print_plans(json_t *items)
{
    static const struct cli_column cols[] = {
        {"id", CLI_RIGHT},         {"name", CLI_LEFT},    {"status", CLI_LEFT},
        {"done/total", CLI_RIGHT}, {"created", CLI_LEFT},
    };
    struct cli_table *t = cli_table_new(cols, sizeof cols / sizeof cols[0]);
    if (t == NULL)
        return CLI_EXIT_FAIL;
    int rc = CLI_EXIT_OK;
    size_t i;
    json_t *item;
    json_array_foreach(items, i, item)
    {
        struct cli_plan p;
        if (cli_plan_parse(item, &p) != 0)
            continue; /* not a plan: nothing sensible to show */
        char id[32], counts[64], created[64];
        snprintf(id, sizeof id, "%lld", p.id);
        snprintf(counts, sizeof counts, "%lld/%lld", p.jobs.done, p.jobs.total);
        const char *cells[] = {id, p.name, p.status, counts,
                               cli_fmt_time(created, sizeof created, p.created_at)};
        if (cli_table_add(t, cells) != 0) {
            rc = CLI_EXIT_FAIL;
            break;
        }
    }
    if (rc == CLI_EXIT_OK && cli_table_rows(t) == 0)
        cli_err("no plans");
    else if (rc == CLI_EXIT_OK && cli_table_print(t, stdout) != 0)
        rc = CLI_EXIT_FAIL;
    cli_table_free(t);
    return rc;
}

/** hvbench list [--limit N] */
static int cmd_list_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    static const struct option options[] = {
        {"limit", required_argument, NULL, 'l'},
        {NULL, 0, NULL, 0},
    };
    long limit = 0; /* 0: let the server choose */
    int opt;
    while ((opt = getopt_long(argc, argv, "l:", options, NULL)) != -1) {
        if (opt != 'l')
            return cli_usage(&cli_cmd_list);
        char *end;
        errno = 0;
        limit = strtol(optarg, &end, 10);
        if (optarg[0] == '\0' || *end != '\0' || errno != 0 || limit < 1 ||
            limit > LIST_LIMIT_MAX) {
            cli_err("--limit must be an integer from 1 to %d", LIST_LIMIT_MAX);
            return CLI_EXIT_USAGE;
        }
    }
    if (optind != argc)
        return cli_usage(&cli_cmd_list);

    char path[64] = "/api/v1/plans";
    if (limit > 0)
        snprintf(path, sizeof path, "/api/v1/plans?limit=%ld", limit);
    struct hv_http_response resp;
    memset(&resp, 0, sizeof resp);
    int rc = cli_request(ctx, "GET", path, NULL, &resp);
    if (rc == CLI_EXIT_OK) {
        json_t *items = json_object_get(resp.body, "items");
        if (ctx->json) {
            cli_print_json(resp.body);
        } else if (!json_is_array(items)) {
            cli_err("the server's answer has no items[]");
            rc = CLI_EXIT_FAIL;
        } else {
            rc = print_plans(items);
        }
    }
    hv_http_response_clear(&resp);
    return rc;
}
