/* cmd_jobs.c — hvbench jobs: the jobs of a plan in run order
 * (GET /api/v1/plans/{id}/jobs), one page or, with --all, every page. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "cli/table.h"

/* The server's bounds (docs/api.md); checked here so that a typo is a
 * usage error rather than a round trip. */
#define JOBS_LIMIT_MAX 1000

/* Code points of an error shown in the table; --json has it whole. */
#define ERROR_WIDTH 40

static int cmd_jobs_exec(struct cli_ctx *ctx, int argc, char **argv);

const struct cli_command cli_cmd_jobs = {
    .name = "jobs",
    .usage = "[--status S] [--limit N] [--all] ID",
    .summary = "list a plan's jobs in run order",
    .help = "  -s, --status S  only jobs in status S: queued, running, done, failed,\n"
            "                  cancelled\n"
            "  -l, --limit N   at most N jobs per request (1..1000, default: the\n"
            "                  server's, 100)\n"
            "  -a, --all       follow the pages to the last job\n"
            "\n"
            "Without --all only the first page is shown, and a line on standard error\n"
            "says when there are more. The error column is cut at 40 characters;\n"
            "--json prints the whole answer.\n",
    .fn = cmd_jobs_exec,
};

static const char *const job_states[] = {"queued", "running", "done", "failed", "cancelled", NULL};

/** Returns the string member key of obj, or NULL. */
static const char *str(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

/** Writes the integer member key of obj into buf, or "-" when it is absent
 *  or null. Returns buf. */
static const char *int_cell(char *buf, size_t len, const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    if (json_is_integer(v))
        snprintf(buf, len, "%lld", (long long)json_integer_value(v));
    else
        snprintf(buf, len, "-");
    return buf;
}

/** Copies s (NULL: "") into buf, cut to width code points, the last of
 *  them "…", when it is longer; a cut never splits a UTF-8 sequence. */
static const char *truncate_cell(char *buf, size_t len, const char *s, size_t width)
{
    if (s == NULL || cli_display_width(s) <= width) {
        snprintf(buf, len, "%s", s != NULL ? s : "");
        return buf;
    }
    /* end: the byte where code point number width - 1 (0-based) starts. */
    size_t end = 0, points = 0;
    for (; s[end] != '\0'; end++)
        if (((unsigned char)s[end] & 0xC0) != 0x80 && points++ == width - 1)
            break;
    snprintf(buf, len, "%.*s…", (int)end, s);
    return buf;
}

/** Adds the items of one page to t. Returns 0 or -1 (out of memory). */
static int add_jobs(struct cli_table *t, const json_t *items)
{
    size_t i;
    const json_t *job;
    json_array_foreach(items, i, job)
    {
        char id[32], rep[32], group[32], attempt[32], error[256];
        const char *cells[] = {
            int_cell(id, sizeof id, job, "id"),
            str(job, "configuration"),
            str(job, "workload"),
            str(job, "target"),
            int_cell(rep, sizeof rep, job, "repetition"),
            int_cell(group, sizeof group, job, "group"),
            str(job, "role"),
            str(job, "status"),
            int_cell(attempt, sizeof attempt, job, "attempt"),
            truncate_cell(error, sizeof error, str(job, "error"), ERROR_WIDTH),
        };
        if (cli_table_add(t, cells) != 0)
            return -1;
    }
    return 0;
}

/** What the options of "hvbench jobs" asked for. */
struct jobs_opts {
    long long id;
    const char *status; /**< a job state, or NULL for all */
    long limit;         /**< jobs per request, 0: the server's default */
    bool all;           /**< follow the pages to the last job */
};

/** Parses the options and the plan id into o. Returns CLI_EXIT_OK, or the
 *  exit code of a usage error (said). */
static int parse_jobs_options(int argc, char **argv, struct jobs_opts *o)
{
    static const struct option options[] = {
        {"status", required_argument, NULL, 's'},
        {"limit", required_argument, NULL, 'l'},
        {"all", no_argument, NULL, 'a'},
        {NULL, 0, NULL, 0},
    };
    *o = (struct jobs_opts){0};
    int opt;
    while ((opt = getopt_long(argc, argv, "s:l:a", options, NULL)) != -1) {
        switch (opt) {
        case 's':
            o->status = NULL;
            for (size_t i = 0; job_states[i] != NULL; i++)
                if (strcmp(optarg, job_states[i]) == 0)
                    o->status = job_states[i];
            if (o->status == NULL) {
                cli_err("--status must be one of queued, running, done, failed, cancelled");
                return CLI_EXIT_USAGE;
            }
            break;
        case 'l': {
            char *end;
            errno = 0;
            o->limit = strtol(optarg, &end, 10);
            if (optarg[0] == '\0' || *end != '\0' || errno != 0 || o->limit < 1 ||
                o->limit > JOBS_LIMIT_MAX) {
                cli_err("--limit must be an integer from 1 to %d", JOBS_LIMIT_MAX);
                return CLI_EXIT_USAGE;
            }
            break;
        }
        case 'a':
            o->all = true;
            break;
        default:
            return cli_usage(&cli_cmd_jobs);
        }
    }
    if (argc - optind != 1 || argv[optind][0] == '-')
        return cli_usage(&cli_cmd_jobs);
    if (cli_parse_id(argv[optind], &o->id) != 0)
        return CLI_EXIT_USAGE;
    /* With --all, large pages: fewer round trips for a 100,000-job plan. */
    if (o->all && o->limit == 0)
        o->limit = JOBS_LIMIT_MAX;
    return CLI_EXIT_OK;
}

/** Fetches the first page of the plan's jobs, or with --all every page:
 *  rows into t, or with --json --all items into collected, or with --json
 *  alone the page printed. Sets *more when the server has more than was
 *  fetched. Returns an exit code. */
static int fetch_jobs(struct cli_ctx *ctx, const struct jobs_opts *o, struct cli_table *t,
                      json_t *collected, bool *more)
{
    int rc = CLI_EXIT_OK;
    char *cursor = NULL;
    for (;;) {
        char path[512], num[32];
        snprintf(path, sizeof path, "/api/v1/plans/%lld/jobs", o->id);
        snprintf(num, sizeof num, "%ld", o->limit);
        if ((o->status != NULL && cli_add_query(path, sizeof path, "status", o->status) != 0) ||
            (o->limit > 0 && cli_add_query(path, sizeof path, "limit", num) != 0) ||
            (cursor != NULL && cli_add_query(path, sizeof path, "cursor", cursor) != 0)) {
            cli_err("the server's cursor is too long");
            rc = CLI_EXIT_FAIL;
            break;
        }
        struct hv_http_response resp;
        memset(&resp, 0, sizeof resp);
        rc = cli_request(ctx, "GET", path, NULL, &resp);
        if (rc != CLI_EXIT_OK) {
            hv_http_response_clear(&resp);
            break;
        }
        json_t *items = json_object_get(resp.body, "items");
        const char *next = str(resp.body, "next_cursor");
        if (!json_is_array(items)) {
            cli_err("the server's answer has no items[]");
            rc = CLI_EXIT_FAIL;
        } else if (ctx->json && !o->all) {
            cli_print_json(resp.body);
        } else if (ctx->json) {
            json_array_extend(collected, items);
        } else if (add_jobs(t, items) != 0) {
            cli_err("out of memory");
            rc = CLI_EXIT_FAIL;
        }
        /* A server handing back an empty page with a cursor, or the
         * cursor it was sent, would keep --all going for ever. */
        bool stuck = next != NULL &&
                     (json_array_size(items) == 0 || (cursor != NULL && strcmp(next, cursor) == 0));
        free(cursor);
        cursor = next != NULL && rc == CLI_EXIT_OK ? strdup(next) : NULL;
        hv_http_response_clear(&resp);
        *more = cursor != NULL;
        if (rc == CLI_EXIT_OK && o->all && stuck) {
            cli_err("the server's pages do not advance; stopping");
            rc = CLI_EXIT_FAIL;
        }
        if (rc != CLI_EXIT_OK || !o->all || cursor == NULL)
            break;
    }
    free(cursor);
    return rc;
}

/** hvbench jobs [--status S] [--limit N] [--all] ID */
static int cmd_jobs_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    struct jobs_opts o;
    int rc = parse_jobs_options(argc, argv, &o);
    if (rc != CLI_EXIT_OK)
        return rc;
    static const struct cli_column cols[] = {
        {"id", CLI_RIGHT},    {"configuration", CLI_LEFT}, {"workload", CLI_LEFT},
        {"target", CLI_LEFT}, {"rep", CLI_RIGHT},          {"group", CLI_RIGHT},
        {"role", CLI_LEFT},   {"status", CLI_LEFT},        {"attempt", CLI_RIGHT},
        {"error", CLI_LEFT},
    };
    struct cli_table *t = cli_table_new(cols, sizeof cols / sizeof cols[0]);
    json_t *collected = json_array();
    if (t == NULL || collected == NULL) {
        cli_table_free(t);
        json_decref(collected);
        cli_err("out of memory");
        return CLI_EXIT_FAIL;
    }
    bool more = false;
    rc = fetch_jobs(ctx, &o, t, collected, &more);
    if (rc == CLI_EXIT_OK && ctx->json && o.all) {
        json_t *body = json_pack("{s:O,s:n}", "items", collected, "next_cursor");
        if (body == NULL || cli_print_json(body) != 0)
            rc = CLI_EXIT_FAIL;
        json_decref(body);
    } else if (rc == CLI_EXIT_OK && !ctx->json) {
        if (cli_table_rows(t) == 0)
            cli_err("no jobs");
        else if (cli_table_print(t, stdout) != 0)
            rc = CLI_EXIT_FAIL;
        if (more && !o.all)
            cli_note("(more jobs: use --all, or a larger --limit)");
    }
    cli_table_free(t);
    json_decref(collected);
    return rc;
}
