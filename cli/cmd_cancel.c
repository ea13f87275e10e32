/* cmd_cancel.c — hvbench cancel: stop a plan (POST /api/v1/plans/{id}/cancel). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"

static int cmd_cancel_exec(struct cli_ctx *ctx, int argc, char **argv);

const struct cli_command cli_cmd_cancel = {
    .name = "cancel",
    .usage = "ID",
    .summary = "cancel a plan: its queued and running jobs stop",
    .help = "Queued jobs are cancelled at once; running jobs too, and their workers\n"
            "stop the engine at their next heartbeat and upload nothing. Cancelling a\n"
            "cancelled plan succeeds again; a plan that already ended (done, failed)\n"
            "cannot be cancelled (exit 1).\n",
    .fn = cmd_cancel_exec,
};

/** hvbench cancel ID */
static int cmd_cancel_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    long long id;
    if (argc != 2 || argv[1][0] == '-')
        return cli_usage(&cli_cmd_cancel);
    if (cli_parse_id(argv[1], &id) != 0)
        return CLI_EXIT_USAGE;
    char path[64];
    snprintf(path, sizeof path, "/api/v1/plans/%lld/cancel", id);
    struct hv_http_response resp;
    memset(&resp, 0, sizeof resp);
    int rc = cli_request(ctx, "POST", path, NULL, &resp);
    if (rc == CLI_EXIT_OK) {
        struct cli_plan p;
        if (ctx->json) {
            cli_print_json(resp.body);
        } else if (cli_plan_parse(resp.body, &p) == 0) {
            cli_out("plan %lld %s: %lld job%s cancelled", p.id,
                    p.status[0] != '\0' ? p.status : "cancelled", p.jobs.cancelled,
                    p.jobs.cancelled == 1 ? "" : "s");
        } else {
            cli_err("the server's answer is not a plan summary");
            rc = CLI_EXIT_FAIL;
        }
    }
    hv_http_response_clear(&resp);
    return rc;
}
