/* cmd_list.c — hvbench list: the newest plans (GET /api/v1/plans). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

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

/** Adds the row of one plan summary; an item that is not one is left out:
 *  there is nothing sensible to show for it. */
static int add_plan(struct cli_table *t, json_t *item)
{
    struct cli_plan p;
    if (cli_plan_parse(item, &p) != 0)
        return 0;
    char id[32], counts[64], created[64];
    snprintf(id, sizeof id, "%lld", p.id);
    snprintf(counts, sizeof counts, "%lld/%lld", p.jobs.done, p.jobs.total);
    /* What a queued or running plan waits for, in words: a plan for a
     * target that never registered looks like any queued plan otherwise. */
    const json_t *w = json_object_get(item, "waiting");
    const char *why = json_string_value(json_object_get(w, "detail"));
    if (why == NULL)
        why = json_string_value(json_object_get(w, "reason"));
    const char *cells[] = {id,
                           p.name,
                           p.status,
                           counts,
                           cli_fmt_time(created, sizeof created, p.created_at),
                           why ? why : ""};
    return cli_table_add(t, cells);
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
    static const struct cli_column cols[] = {
        {"id", CLI_RIGHT},         {"name", CLI_LEFT},    {"status", CLI_LEFT},
        {"done/total", CLI_RIGHT}, {"created", CLI_LEFT}, {"waiting", CLI_LEFT},
    };
    return cli_list_table(ctx, path, cols, sizeof cols / sizeof cols[0], add_plan, "plans");
}
