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
    .usage = "[--status S] [--target NAME] [--name NAME] [--since TIME] [--limit N]",
    .summary = "list the newest plans",
    .help = "  -s, --status S     only plans in state S (queued, running, done, failed,\n"
            "                     cancelled)\n"
            "  -t, --target NAME  only plans with a job on the target NAME (a guest's\n"
            "                     name, or HOST/GUEST when guests of several hosts\n"
            "                     share it)\n"
            "  -n, --name NAME    only plans called NAME (exact)\n"
            "      --since TIME   only plans created at or after TIME (YYYY-MM-DD or\n"
            "                     YYYY-MM-DDTHH:MM:SSZ)\n"
            "  -l, --limit N      show at most N plans (1..500, default: the server's, 50)\n"
            "The server checks the filters: a wrong one is refused with its reason.\n",
    .fn = cmd_list_exec,
};

/** Adds the row of one plan summary; an item that is not one is left out:
 *  there is nothing sensible to show for it. */
static int add_plan(struct cli_table *t, const json_t *item)
{
    struct cli_plan p;
    if (cli_plan_parse(item, &p) != 0)
        return 0;
    char id[32], counts[64], created[64], host[300] = "";
    snprintf(id, sizeof id, "%lld", p.id);
    /* A fleet's child: its host and its parent, so the children of one
     * fleet plan (all of the same name) are told apart. */
    const char *h = json_string_value(json_object_get(item, "host"));
    json_int_t parent = json_integer_value(json_object_get(item, "parent_id"));
    if (parent > 0)
        snprintf(host, sizeof host, "%s, child of #%lld", h != NULL ? h : "?", (long long)parent);
    snprintf(counts, sizeof counts, "%lld/%lld", p.jobs.done, p.jobs.total);
    /* What a queued or running plan waits for, in words: a plan for a
     * target that never registered looks like any queued plan otherwise. */
    const json_t *w = json_object_get(item, "waiting");
    const char *why = json_string_value(json_object_get(w, "detail"));
    if (why == NULL)
        why = json_string_value(json_object_get(w, "reason"));
    const char *cells[] = {id,
                           p.name,
                           host,
                           p.status,
                           counts,
                           cli_fmt_time(created, sizeof created, p.created_at),
                           why ? why : ""};
    return cli_table_add(t, cells);
}

/** hvbench list [--status S] [--target NAME] [--name NAME] [--since TIME]
 *  [--limit N] */
static int cmd_list_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    enum { OPT_SINCE = 256 };
    static const struct option options[] = {
        {"limit", required_argument, NULL, 'l'},       {"status", required_argument, NULL, 's'},
        {"target", required_argument, NULL, 't'},      {"name", required_argument, NULL, 'n'},
        {"since", required_argument, NULL, OPT_SINCE}, {NULL, 0, NULL, 0},
    };
    /* The query names in the order they are sent; values from the options. */
    const char *names[] = {"status", "target", "name", "since", "limit"};
    const char *values[5] = {NULL, NULL, NULL, NULL, NULL};
    int opt;
    while ((opt = getopt_long(argc, argv, "l:s:t:n:", options, NULL)) != -1) {
        switch (opt) {
        case 's':
            values[0] = optarg;
            break;
        case 't':
            values[1] = optarg;
            break;
        case 'n':
            values[2] = optarg;
            break;
        case OPT_SINCE:
            values[3] = optarg;
            break;
        case 'l': {
            char *end;
            errno = 0;
            long limit = strtol(optarg, &end, 10);
            if (optarg[0] == '\0' || *end != '\0' || errno != 0 || limit < 1 ||
                limit > LIST_LIMIT_MAX) {
                cli_err("--limit must be an integer from 1 to %d", LIST_LIMIT_MAX);
                return CLI_EXIT_USAGE;
            }
            values[4] = optarg;
            break;
        }
        default:
            return cli_usage(&cli_cmd_list);
        }
    }
    if (optind != argc)
        return cli_usage(&cli_cmd_list);
    /* A guest's name alone means the one guest of that name on any host. */
    char target[300];
    if (values[1] != NULL) {
        int rc = cli_target_name(ctx, values[1], target, sizeof target, NULL);
        if (rc != CLI_EXIT_OK)
            return rc;
        values[1] = target;
    }

    char path[1024] = "/api/v1/plans";
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (values[i] != NULL && cli_add_query(path, sizeof path, names[i], values[i]) != 0) {
            cli_err("--%s is too long", names[i]);
            return CLI_EXIT_USAGE;
        }
    }
    static const struct cli_column cols[] = {
        {"id", CLI_RIGHT},     {"name", CLI_LEFT},        {"host", CLI_LEFT},
        {"status", CLI_LEFT},  {"done/total", CLI_RIGHT}, {"created", CLI_LEFT},
        {"waiting", CLI_LEFT},
    };
    return cli_list_table(ctx, path, cols, sizeof cols / sizeof cols[0], add_plan, "plans");
}
