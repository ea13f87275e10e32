/* cmd_status.c — hvbench status: one look at a plan (GET /api/v1/plans/{id}). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "cli/table.h"

static int cmd_status_exec(struct cli_ctx *ctx, int argc, char **argv);

const struct cli_command cli_cmd_status = {
    .name = "status",
    .usage = "ID",
    .summary = "show a plan's status, job counts and progress",
    .help = NULL,
    .fn = cmd_status_exec,
};

/** Prints the summary as "key  value" lines. */
static void print_status(const struct cli_plan *p)
{
    char created[64], updated[64], bar[16];
    cli_out("plan %lld: %s", p->id, p->name);
    cli_out("status    %s", p->status);
    cli_out("created   %s", cli_fmt_time(created, sizeof created, p->created_at));
    if (p->updated_at[0] != '\0')
        cli_out("updated   %s", cli_fmt_time(updated, sizeof updated, p->updated_at));
    cli_out("jobs      %lld: %lld done, %lld running, %lld queued, %lld failed, %lld cancelled",
            p->jobs.total, p->jobs.done, p->jobs.running, p->jobs.queued, p->jobs.failed,
            p->jobs.cancelled);
    cli_out("progress  %d%%  %s", cli_percent(p->progress),
            cli_fmt_bar(bar, sizeof bar, p->progress, 10));
}

/** hvbench status ID */
static int cmd_status_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    long long id;
    if (argc != 2 || argv[1][0] == '-')
        return cli_usage(&cli_cmd_status);
    if (cli_parse_id(argv[1], &id) != 0)
        return CLI_EXIT_USAGE;
    char path[64];
    snprintf(path, sizeof path, "/api/v1/plans/%lld", id);
    struct hv_http_response resp;
    memset(&resp, 0, sizeof resp);
    int rc = cli_request(ctx, "GET", path, NULL, &resp);
    if (rc == CLI_EXIT_OK) {
        struct cli_plan p;
        if (ctx->json) {
            cli_print_json(resp.body);
        } else if (cli_plan_parse(resp.body, &p) == 0) {
            print_status(&p);
        } else {
            cli_err("the server's answer is not a plan summary");
            rc = CLI_EXIT_FAIL;
        }
    }
    hv_http_response_clear(&resp);
    return rc;
}
