/* cmd_submit.c — hvbench submit: send a plan file to POST /api/v1/plans. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"

/* Far above any plan a person writes; it only stops "submit /dev/zero"
 * from eating the memory. The server has its own, smaller cap. */
#define PLAN_MAX_BYTES (64u << 20)

static int cmd_submit_exec(struct cli_ctx *ctx, int argc, char **argv);

const struct cli_command cli_cmd_submit = {
    .name = "submit",
    .usage = "[--quiet] [--dry-run] PLAN.json",
    .summary = "submit a plan (a file, or - for standard input)",
    .help = "  -q, --quiet    print only the id of the new plan\n"
            "  -n, --dry-run  ask the server to check the plan without storing it,\n"
            "                 and print its answer\n"
            "\n"
            "The file is checked for JSON syntax before it is sent; errors name\n"
            "file:line:column. Errors the server finds are listed with the JSON path\n"
            "of each bad field.\n",
    .fn = cmd_submit_exec,
};

/** Reads all of f into a malloc'd, NUL-terminated buffer. Returns it and
 *  sets *len, or returns NULL with errno set (EFBIG past PLAN_MAX_BYTES). */
static char *read_all(FILE *f, size_t *len)
{
    size_t cap = 8192, n = 0;
    char *buf = malloc(cap);
    if (buf == NULL)
        return NULL;
    for (;;) {
        if (cap - n < 2) {
            if (cap >= PLAN_MAX_BYTES) {
                free(buf);
                errno = EFBIG;
                return NULL;
            }
            char *bigger = realloc(buf, cap * 2);
            if (bigger == NULL) {
                free(buf);
                return NULL;
            }
            buf = bigger;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) {
                int saved = errno;
                free(buf);
                errno = saved != 0 ? saved : EIO;
                return NULL;
            }
            break;
        }
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/** Reads and parses the plan named by path ("-" is standard input). Returns
 *  a new reference, or NULL after a message with *rc set: CLI_EXIT_USAGE
 *  when the file cannot be read, CLI_EXIT_FAIL when it is not JSON. */
static json_t *load_plan(const char *path, int *rc)
{
    bool is_stdin = strcmp(path, "-") == 0;
    const char *name = is_stdin ? "<stdin>" : path;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (f == NULL) {
        cli_err("cannot open %s: %s", path, strerror(errno));
        *rc = CLI_EXIT_USAGE;
        return NULL;
    }
    size_t len = 0;
    char *text = read_all(f, &len);
    int saved = errno;
    if (!is_stdin)
        fclose(f);
    if (text == NULL) {
        cli_err("cannot read %s: %s", name, strerror(saved));
        *rc = CLI_EXIT_USAGE;
        return NULL;
    }
    json_error_t err;
    /* Duplicate keys are refused because the server refuses them too, and
     * saying so here points at the line. */
    json_t *plan = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
    free(text);
    if (plan == NULL) {
        /* The compiler-style prefix lets editors jump to the spot. */
        cli_note("%s:%d:%d: %s", name, err.line, err.column, err.text);
        *rc = CLI_EXIT_FAIL;
    }
    return plan;
}

/** Prints what a normal (not dry-run) submission created. */
static int print_created(const struct cli_ctx *ctx, const struct hv_http_response *resp, bool quiet)
{
    struct cli_plan p;
    if (cli_plan_parse(resp->body, &p) != 0) {
        cli_err("the server accepted the plan but its answer has no plan id");
        if (ctx->json)
            cli_print_json(resp->body);
        return CLI_EXIT_FAIL;
    }
    if (ctx->json) {
        cli_print_json(resp->body);
    } else if (quiet) {
        printf("%lld\n", p.id);
    } else {
        cli_out("plan %lld submitted: %lld job%s (%s)", p.id, p.jobs.total,
                p.jobs.total == 1 ? "" : "s", p.status[0] != '\0' ? p.status : "queued");
        cli_out("%s/#/plans/%lld", ctx->server, p.id);
    }
    return CLI_EXIT_OK;
}

/** hvbench submit [--quiet] [--dry-run] PLAN.json */
static int cmd_submit_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    static const struct option options[] = {
        {"quiet", no_argument, NULL, 'q'},
        {"dry-run", no_argument, NULL, 'n'},
        {NULL, 0, NULL, 0},
    };
    bool quiet = false, dry_run = false;
    int opt;
    while ((opt = getopt_long(argc, argv, "qn", options, NULL)) != -1) {
        switch (opt) {
        case 'q':
            quiet = true;
            break;
        case 'n':
            dry_run = true;
            break;
        default:
            return cli_usage(&cli_cmd_submit);
        }
    }
    if (argc - optind != 1)
        return cli_usage(&cli_cmd_submit);

    int rc = CLI_EXIT_OK;
    json_t *plan = load_plan(argv[optind], &rc);
    if (plan == NULL)
        return rc;
    struct hv_http_response resp;
    memset(&resp, 0, sizeof resp);
    rc = cli_request(ctx, "POST", dry_run ? "/api/v1/plans?dry_run=1" : "/api/v1/plans", plan,
                     &resp);
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
        cli_print_json(resp.body);
    } else {
        rc = print_created(ctx, &resp, quiet);
    }
    hv_http_response_clear(&resp);
    return rc;
}
