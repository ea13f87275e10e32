/* cmd_submit.c — hvbench submit: send a plan file to POST /api/v1/plans. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"

static int cmd_submit_exec(struct cli_ctx *ctx, int argc, char **argv);

const struct cli_command cli_cmd_submit = {
    .name = "submit",
    .usage = "[--quiet] [--dry-run] [--wait] [--idempotency-key KEY] PLAN.json",
    .summary = "submit a plan (a file, or - for standard input)",
    .help = "  -q, --quiet    print only the id of the new plan\n"
            "  -n, --dry-run  ask the server to check the plan without storing it,\n"
            "                 and print its answer: the expansion and, under\n"
            "                 \"actions\", the host files it writes, the restarts\n"
            "                 of each guest, the operator pauses (reboot-class\n"
            "                 factors), an estimated duration and warnings (also\n"
            "                 on standard error)\n"
            "  -w, --wait     then follow the plan until it ends, as 'hvbench watch'\n"
            "                 does (a progress line on a terminal, a line per change\n"
            "                 otherwise); the exit code is the plan's outcome: 0 done,\n"
            "                 1 failed or cancelled, 130 interrupted\n"
            "  -k, --idempotency-key KEY\n"
            "                 send Idempotency-Key: KEY (1..128 printable ASCII\n"
            "                 characters); submitting again with the same key and\n"
            "                 token returns the plan stored the first time\n"
            "\n"
            "The file is checked for JSON syntax before it is sent; errors name\n"
            "file:line:column. Errors the server finds are listed with the JSON path\n"
            "of each bad field.\n",
    .fn = cmd_submit_exec,
};

/* The server's bound on an Idempotency-Key (docs/api.md). */
#define IDEMPOTENCY_KEY_MAX 128

/** True when key is 1..128 printable ASCII characters, what the server
 *  accepts; checked here so that a typo is a usage error. */
static bool valid_key(const char *key)
{
    size_t n = strlen(key);
    if (n < 1 || n > IDEMPOTENCY_KEY_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (key[i] < 0x20 || key[i] >= 0x7f)
            return false;
    return true;
}

/** Prints what a normal (not dry-run) submission created, or found already
 *  created under its Idempotency-Key (a 200 answer marked replayed). */
static int print_created(const struct cli_ctx *ctx, const struct hv_http_response *resp, bool quiet)
{
    struct cli_plan p;
    if (cli_plan_parse(resp->body, &p) != 0) {
        cli_err("the server accepted the plan but its answer has no plan id");
        if (ctx->json)
            cli_print_json(resp->body);
        return CLI_EXIT_FAIL;
    }
    /* What the server stored but expects to wait (a target that never
     * registered), on standard error whatever the output's form. */
    size_t i;
    const json_t *w;
    json_array_foreach(json_object_get(resp->body, "warnings"), i, w)
    {
        cli_err("warning: %s: %s", json_string_value(json_object_get(w, "path")),
                json_string_value(json_object_get(w, "message")));
    }
    if (ctx->json) {
        cli_print_json(resp->body);
    } else if (quiet) {
        printf("%lld\n", p.id);
    } else if (resp->replayed || resp->status == 200) {
        /* 201 creates; 200 returns the plan this key created before. */
        cli_out("plan %lld already submitted with this key", p.id);
        cli_out("%s/#/plans/%lld", ctx->server, p.id);
    } else {
        cli_out("plan %lld submitted: %lld job%s (%s)", p.id, p.jobs.total,
                p.jobs.total == 1 ? "" : "s", p.status[0] != '\0' ? p.status : "queued");
        cli_out("%s/#/plans/%lld", ctx->server, p.id);
    }
    return CLI_EXIT_OK;
}

/** hvbench submit [--quiet] [--dry-run] [--idempotency-key KEY] PLAN.json */
static int cmd_submit_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    static const struct option options[] = {
        {"quiet", no_argument, NULL, 'q'},
        {"dry-run", no_argument, NULL, 'n'},
        {"idempotency-key", required_argument, NULL, 'k'},
        {"wait", no_argument, NULL, 'w'},
        {NULL, 0, NULL, 0},
    };
    bool quiet = false, dry_run = false, wait = false;
    const char *key = NULL;
    int opt;
    while ((opt = getopt_long(argc, argv, "qnwk:", options, NULL)) != -1) {
        switch (opt) {
        case 'w':
            wait = true;
            break;
        case 'q':
            quiet = true;
            break;
        case 'n':
            dry_run = true;
            break;
        case 'k':
            if (!valid_key(optarg)) {
                cli_err("--idempotency-key must be 1 to %d printable ASCII characters",
                        IDEMPOTENCY_KEY_MAX);
                return CLI_EXIT_USAGE;
            }
            key = optarg;
            break;
        default:
            return cli_usage(&cli_cmd_submit);
        }
    }
    if (argc - optind != 1)
        return cli_usage(&cli_cmd_submit);
    if (wait && dry_run) {
        cli_err("--wait and --dry-run exclude each other: a dry run stores no plan to wait for");
        return CLI_EXIT_USAGE;
    }

    int rc = CLI_EXIT_OK;
    json_t *plan = cli_load_plan(argv[optind], &rc);
    if (plan == NULL)
        return rc;
    char *key_header = NULL;
    if (key != NULL && asprintf(&key_header, "Idempotency-Key: %s", key) < 0) {
        json_decref(plan);
        cli_err("out of memory");
        return CLI_EXIT_FAIL;
    }
    const char *headers[] = {key_header, NULL};
    struct hv_http_response resp;
    memset(&resp, 0, sizeof resp);
    rc = cli_request_headers(ctx, "POST", dry_run ? "/api/v1/plans?dry_run=1" : "/api/v1/plans",
                             plan, headers, &resp);
    free(key_header);
    json_decref(plan);
    if (rc != CLI_EXIT_OK) {
        hv_http_response_clear(&resp);
        return rc;
    }
    if (dry_run) {
        /* A server without dry-run support ignores the query and stores the
         * plan: 201 is the sign. Say so, since the user asked for the
         * opposite. */
        struct cli_plan p;
        if (resp.status == 201 && cli_plan_parse(resp.body, &p) == 0)
            cli_err("warning: the server does not support --dry-run; plan %lld was created", p.id);
        const json_t *warnings =
            resp.status == 200 ? json_object_get(json_object_get(resp.body, "actions"), "warnings")
                               : NULL;
        for (size_t i = 0; i < json_array_size(warnings); i++)
            cli_err("warning: %s", json_string_value(json_array_get(warnings, i)));
        cli_print_json(resp.body);
    } else {
        rc = print_created(ctx, &resp, quiet);
    }
    struct cli_plan p;
    if (rc == CLI_EXIT_OK && wait && !dry_run && cli_plan_parse(resp.body, &p) == 0) {
        hv_http_response_clear(&resp);
        return cli_watch_plan(ctx, p.id, 0);
    }
    hv_http_response_clear(&resp);
    return rc;
}
