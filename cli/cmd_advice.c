/* cmd_advice.c — hvbench advice: a plan's recommendations as the change a
 * site applies (a tuned profile, an Ansible playbook, a Puppet manifest or
 * a shell script). The report and the plan (its disk) are fetched and
 * rendered by lib/advice_format.c, the code behind the server's GET
 * /api/v1/plans/{id}/recommendations/apply, so both print the same text. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice_format.h"
#include "cli/cli.h"
#include "cli/common.h"

static int cmd_advice_exec(struct cli_ctx *ctx, int argc, char **argv);

const struct cli_command cli_cmd_advice = {
    .name = "advice",
    .usage = "--format tuned|ansible|puppet|shell ID",
    .summary = "print a plan's recommendations as a tuned profile, playbook, manifest or script",
    .help = "The best level of each recommended factor as the change a site applies:\n"
            "--format tuned a tuned.conf including virtual-host, ansible a playbook of\n"
            "ansible.builtin tasks with a rollback play (--tags rollback), puppet a\n"
            "manifest of file and exec resources (FACTER_hvbench_ensure=absent rolls it\n"
            "back), shell a script (sh FILE apply|rollback; ROOT prefixes every path).\n"
            "Each opens with the evidence as comments: the plan, each gain with its\n"
            "interval, the risk, the disruption and the rollback. Settings a form cannot\n"
            "express (domain XML in tuned, a NIC's MTU) are comments saying so.\n",
    .fn = cmd_advice_exec,
};

/** Prints the JSON member key of the answer to GET path into *out (a new
 *  reference); returns an exit code. */
static int fetch(struct cli_ctx *ctx, const char *path, const char *key, json_t **out)
{
    struct hv_http_response resp;
    memset(&resp, 0, sizeof resp);
    int rc = cli_request(ctx, "GET", path, NULL, &resp);
    if (rc == CLI_EXIT_OK)
        *out = key != NULL ? json_incref(json_object_get(resp.body, key)) : json_incref(resp.body);
    hv_http_response_clear(&resp);
    return rc;
}

/** hvbench advice --format F ID */
static int cmd_advice_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    static const struct option options[] = {
        {"format", required_argument, NULL, 'f'},
        {NULL, 0, NULL, 0},
    };
    const char *format = NULL;
    int opt;
    while ((opt = getopt_long(argc, argv, "f:", options, NULL)) != -1) {
        if (opt != 'f')
            return cli_usage(&cli_cmd_advice);
        format = optarg;
    }
    if (format == NULL || argc - optind != 1 || argv[optind][0] == '-')
        return cli_usage(&cli_cmd_advice);
    if (hv_advice_media_type(format) == NULL) {
        cli_err("--format must be one of tuned, ansible, puppet, shell");
        return CLI_EXIT_USAGE;
    }
    long long id;
    if (cli_parse_id(argv[optind], &id) != 0)
        return CLI_EXIT_USAGE;
    char path[64];
    json_t *plan = NULL, *report = NULL;
    snprintf(path, sizeof path, "/api/v1/plans/%lld", id);
    int rc = fetch(ctx, path, "plan", &plan);
    if (rc == CLI_EXIT_OK) {
        snprintf(path, sizeof path, "/api/v1/plans/%lld/report", id);
        rc = fetch(ctx, path, NULL, &report);
    }
    if (rc == CLI_EXIT_OK) {
        const json_t *tuning = json_object_get(plan, "tuning");
        char *text =
            hv_advice_render(report, json_string_value(json_object_get(tuning, "disk")), format);
        if (text == NULL) {
            cli_err("out of memory");
            rc = CLI_EXIT_FAIL;
        } else if (fputs(text, stdout) < 0) {
            rc = CLI_EXIT_FAIL;
        }
        free(text);
    }
    json_decref(plan);
    json_decref(report);
    return rc;
}
