/* cmd_admin.c — retention and recovery: hvbench delete (an ended plan),
 * hvbench purge (old plans, samples, raw output), hvbench retry (a failed
 * plan's failed jobs), hvbench export (a plan with all its results, for
 * hvbench import --plan on another server). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"

static int cmd_delete_exec(struct cli_ctx *ctx, int argc, char **argv);
static int cmd_retry_exec(struct cli_ctx *ctx, int argc, char **argv);
static int cmd_purge_exec(struct cli_ctx *ctx, int argc, char **argv);
static int cmd_export_exec(struct cli_ctx *ctx, int argc, char **argv);

const struct cli_command cli_cmd_export = {
    .name = "export",
    .usage = "ID [-o FILE]",
    .summary = "write an ended plan with all its results as one JSON document",
    .help = "The document holds the plan, its configurations and groups, and per\n"
            "job its results with their metrics, samples, observations and raw\n"
            "output; `hvbench import --plan FILE` stores it as a new plan on any\n"
            "hvbench server (apply/restore steps, host telemetry and the targets'\n"
            "facts stay where they were measured). -o writes FILE instead of\n"
            "standard output. A plan that has not ended is refused (exit 1).\n",
    .fn = cmd_export_exec,
};

const struct cli_command cli_cmd_delete = {
    .name = "delete",
    .usage = "ID",
    .summary = "delete an ended plan with its results (admin token)",
    .help = "Deletes the plan, its jobs, results, metrics, samples and host telemetry,\n"
            "and prints what was removed. A plan that has not ended (or whose host\n"
            "was not restored yet) is refused (exit 1): cancel it first.\n",
    .fn = cmd_delete_exec,
};

const struct cli_command cli_cmd_retry = {
    .name = "retry",
    .usage = "ID",
    .summary = "queue a failed plan's failed jobs again",
    .help = "The failed jobs go back to the queue with fresh failure counts; the\n"
            "plan runs again until they end. Only a failed plan without tuning\n"
            "blocks can be retried (a tuning plan's host was restored after its\n"
            "blocks: submit it again).\n",
    .fn = cmd_retry_exec,
};

const struct cli_command cli_cmd_purge = {
    .name = "purge",
    .usage = "--before TIME [--plans] [--samples] [--raw] [--dry-run]",
    .summary = "delete old plans, samples and raw output (admin token)",
    .help = "--plans deletes every ended plan created before TIME; --samples the\n"
            "per-second samples and host telemetry of results that ended before\n"
            "TIME (their summary metrics stay); --raw the raw tool output of those\n"
            "results. --dry-run counts without deleting. Prints the counts and the\n"
            "bytes the removed data took in the database (PostgreSQL reuses that\n"
            "space; VACUUM FULL returns it to the file system).\n"
            "TIME: ISO 8601, e.g. 2026-06-30T00:00:00Z.\n",
    .fn = cmd_purge_exec,
};

static long long num(const json_t *o, const char *key)
{
    return (long long)json_integer_value(json_object_get(o, key));
}

static int print_deleted(const json_t *answer)
{
    const json_t *d = json_object_get(answer, "deleted");
    cli_out("plan %lld deleted: %lld jobs, %lld results, %lld samples, %lld bytes", num(d, "plan"),
            num(d, "jobs"), num(d, "results"), num(d, "samples"), num(d, "bytes"));
    return CLI_EXIT_OK;
}

static int print_retried(const json_t *answer)
{
    cli_out("plan %lld: %lld failed job%s queued again", num(answer, "plan_id"),
            num(answer, "retried"), num(answer, "retried") == 1 ? "" : "s");
    return CLI_EXIT_OK;
}

static int print_purged(const json_t *a)
{
    bool dry = json_is_true(json_object_get(a, "dry_run"));
    cli_out("%s before %s: %lld plans (%lld results, %lld of their samples), %lld samples, "
            "%lld telemetry rows, %lld raw outputs; %lld bytes",
            dry ? "would purge" : "purged", json_string_value(json_object_get(a, "before")),
            num(a, "plans"), num(a, "results"), num(a, "plan_samples"), num(a, "samples"),
            num(a, "telemetry"), num(a, "raw_outputs"), num(a, "bytes"));
    return CLI_EXIT_OK;
}

/* "/api/v1/plans/ID" + suffix, ID being the only argument. */
static int id_path(const struct cli_command *cmd, int argc, char **argv, const char *suffix,
                   char *path, size_t len)
{
    long long id;
    if (argc != 2 || argv[1][0] == '-')
        return cli_usage(cmd);
    if (cli_parse_id(argv[1], &id) != 0)
        return CLI_EXIT_USAGE;
    snprintf(path, len, "/api/v1/plans/%lld%s", id, suffix);
    return CLI_EXIT_OK;
}

static int cmd_delete_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    char path[64];
    int rc = id_path(&cli_cmd_delete, argc, argv, "", path, sizeof path);
    return rc != CLI_EXIT_OK ? rc : cli_call(ctx, "DELETE", path, NULL, print_deleted);
}

static int cmd_retry_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    char path[64];
    int rc = id_path(&cli_cmd_retry, argc, argv, "/retry", path, sizeof path);
    return rc != CLI_EXIT_OK ? rc : cli_call(ctx, "POST", path, NULL, print_retried);
}

static int cmd_purge_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    enum { O_BEFORE = 256, O_PLANS, O_SAMPLES, O_RAW, O_DRY };
    static const struct option options[] = {
        {"before", required_argument, NULL, O_BEFORE}, {"plans", no_argument, NULL, O_PLANS},
        {"samples", no_argument, NULL, O_SAMPLES},     {"raw", no_argument, NULL, O_RAW},
        {"dry-run", no_argument, NULL, O_DRY},         {NULL, 0, NULL, 0},
    };
    json_t *body = json_object();
    int opt;
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        if (opt == O_BEFORE) {
            json_object_set_new(body, "before", json_string(optarg));
            continue;
        }
        const char *key = opt == O_PLANS     ? "plans"
                          : opt == O_SAMPLES ? "samples"
                          : opt == O_RAW     ? "raw"
                          : opt == O_DRY     ? "dry_run"
                                             : NULL;
        if (key == NULL) {
            json_decref(body);
            return cli_usage(&cli_cmd_purge);
        }
        json_object_set_new(body, key, json_true());
    }
    if (optind != argc || json_object_get(body, "before") == NULL) {
        json_decref(body);
        return cli_usage(&cli_cmd_purge);
    }
    int rc = cli_call(ctx, "POST", "/api/v1/purge", body, print_purged);
    json_decref(body);
    return rc;
}

static int cmd_export_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    const char *file = NULL;
    if (argc == 4 && strcmp(argv[2], "-o") == 0) {
        file = argv[3];
        argc -= 2;
    }
    char path[64];
    int rc = id_path(&cli_cmd_export, argc, argv, "/export", path, sizeof path);
    if (rc != CLI_EXIT_OK)
        return rc;
    struct hv_http_response resp;
    memset(&resp, 0, sizeof resp);
    rc = cli_request(ctx, "GET", path, NULL, &resp);
    if (rc == CLI_EXIT_OK) {
        FILE *f = file != NULL ? fopen(file, "w") : stdout;
        if (f == NULL || json_dumpf(resp.body, f, JSON_COMPACT) != 0 || fputc('\n', f) == EOF ||
            (file != NULL && fclose(f) != 0)) {
            cli_err("cannot write %s", file != NULL ? file : "standard output");
            rc = CLI_EXIT_FAIL;
        } else if (file != NULL) {
            cli_note("plan written to %s", file);
        }
    }
    hv_http_response_clear(&resp);
    return rc;
}
