/* cmd_import.c — hvbench import: upload a saved output of fio, iperf3,
 * iperf 2, bonnie++, sysbench or stress-ng (POST /api/v1/imports) and show
 * the metrics the server read from it.
 *
 * The server parses the output, not the CLI: a file that does not parse is
 * refused there with the reason, and nothing is stored. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "cli/table.h"
#include "parsers.h"
#include "timeutil.h"

static int cmd_import_exec(struct cli_ctx *ctx, int argc, char **argv);

const struct cli_command cli_cmd_import = {
    .name = "import",
    .usage = "--tool TOOL --target NAME [--at TIME] [--label KEY=VALUE ...] [--name NAME] "
             "FILE",
    .summary = "import a saved output of fio, iperf3, iperf, bonnie++, sysbench or stress-ng",
    .help = "  -t, --tool TOOL         fio, iperf3, iperf (iperf 2), bonnie (bonnie++),\n"
            "                          sysbench or stress-ng\n"
            "  -T, --target NAME       the machine the output was measured on; a name\n"
            "                          no worker registered becomes a host without facts\n"
            "  -a, --at TIME           when the (first) run started (ISO 8601 UTC, e.g.\n"
            "                          2010-03-01T10:00:00Z); default: the time the output\n"
            "                          records (fio, iperf3, stress-ng YAML), else now\n"
            "  -L, --label KEY=VALUE   a label of the import (repeatable): study=kvm-2010\n"
            "  -n, --name NAME         the plan's name (default \"import: TOOL DATE\")\n"
            "\n"
            "FILE is the tool's output as it saved it (- for standard input):\n"
            "  fio        --output-format=json\n"
            "  iperf3     -J, client or server\n"
            "  iperf      -y C, or the text report, client or server\n"
            "  bonnie     the CSV line(s), the table (bonnie++'s or bon_csv2txt's), or\n"
            "             both as bonnie++ prints them without -q; 1.0x or 1.9x/2.0;\n"
            "             -x N gives N runs\n"
            "  sysbench   the report of the cpu, memory or fileio test\n"
            "  stress-ng  the --yaml file, or the log of --metrics-brief\n"
            "\n"
            "The server reads the output and stores it as a finished plan: one job per\n"
            "run, on TARGET, with the metrics printed here; 'hvbench report ID' shows\n"
            "it like any plan. A file of several outputs of one workload (a tool run\n"
            "again with >>, files joined with cat; not iperf) gives one run each,\n"
            "stored as repetitions; outputs of different workloads in one file are\n"
            "refused, naming how many runs it holds and where they differ. An output\n"
            "cut short or damaged is refused with the reason and nothing is stored;\n"
            "so is one imported before for the same target (exit 1).\n",
    .fn = cmd_import_exec,
};

/* Beyond any body cap a server would accept; the server answers 413 below. */
#define IMPORT_MAX_BYTES ((size_t)256 << 20)

/** Reads all of path ("-": standard input) into a malloc'd buffer. Returns
 *  it and sets *len, or NULL after a message. */
static char *read_file(const char *path, size_t *len)
{
    bool is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (f == NULL) {
        cli_err("cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        if (cap - n < 2) {
            char *bigger = cap < IMPORT_MAX_BYTES ? realloc(buf, cap * 2) : NULL;
            if (bigger == NULL) {
                cli_err("%s is too large", is_stdin ? "<stdin>" : path);
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) {
                cli_err("cannot read %s: %s", is_stdin ? "<stdin>" : path, strerror(errno));
                free(buf);
                buf = NULL;
            }
            break;
        }
    }
    if (!is_stdin)
        fclose(f);
    if (buf != NULL) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

/** The offset of the first byte of text[0..len) that is not part of valid
 *  UTF-8 (or is NUL), or len when there is none. */
static size_t first_non_text(const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < len;) {
        unsigned char c = s[i];
        size_t n = c < 0x80             ? 1
                   : (c & 0xe0) == 0xc0 ? 2
                   : (c & 0xf0) == 0xe0 ? 3
                   : (c & 0xf8) == 0xf0 ? 4
                                        : 0;
        if (c == 0 || n == 0 || i + n > len || (n == 2 && c < 0xc2))
            return i;
        for (size_t k = 1; k < n; k++)
            if ((s[i + k] & 0xc0) != 0x80)
                return i;
        i += n;
    }
    return len;
}

/** Adds "KEY=VALUE" to labels; returns 0, or -1 after a message. */
static int add_label(json_t *labels, const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (eq == NULL || eq == arg) {
        cli_err("--label '%s' must be KEY=VALUE", arg);
        return -1;
    }
    char key[80];
    if ((size_t)(eq - arg) >= sizeof key) {
        cli_err("--label '%s': the key is too long", arg);
        return -1;
    }
    snprintf(key, sizeof key, "%.*s", (int)(eq - arg), arg);
    if (json_object_get(labels, key) != NULL) {
        cli_err("--label %s is given twice", key);
        return -1;
    }
    json_t *v = json_string(eq + 1);
    if (v == NULL || json_object_set_new(labels, key, v) != 0) {
        cli_err("--label '%s' is not UTF-8 text", arg);
        return -1;
    }
    return 0;
}

/** Prints what the server stored: a line about the plan, then the metrics
 *  of each run. */
static int print_import(const struct cli_ctx *ctx, const json_t *body)
{
    const json_t *runs = json_object_get(body, "runs");
    const json_t *plan = json_object_get(body, "plan_id");
    if (!json_is_integer(plan) || !json_is_array(runs)) {
        cli_err("the server's answer has no plan_id or runs[]");
        return CLI_EXIT_FAIL;
    }
    long long id = (long long)json_integer_value(plan);
    size_t n = json_array_size(runs);
    char when[64];
    const char *started = json_string_value(json_object_get(body, "started_at"));
    cli_fmt_time(when, sizeof when, started != NULL ? started : "");
    cli_out("imported %s output for %s as plan %lld: %zu run%s, started %s%s",
            json_string_value(json_object_get(body, "tool")),
            json_string_value(json_object_get(body, "target")), id, n, n == 1 ? "" : "s", when,
            json_is_true(json_object_get(body, "target_created"))
                ? " (new target: no worker registered it)"
                : "");
    static const struct cli_column cols[] = {
        {"run", CLI_RIGHT}, {"metric", CLI_LEFT}, {"value", CLI_RIGHT}, {"unit", CLI_LEFT}};
    struct cli_table *t = cli_table_new(cols, 4);
    if (t == NULL)
        return CLI_EXIT_FAIL;
    int rc = CLI_EXIT_OK;
    size_t i, k;
    const json_t *run, *m;
    json_array_foreach(runs, i, run)
    {
        json_array_foreach(json_object_get(run, "metrics"), k, m)
        {
            char no[24], metric[160], value[64];
            snprintf(no, sizeof no, "%zu", i + 1);
            const char *name = json_string_value(json_object_get(m, "name"));
            const json_t *hib = json_object_get(m, "higher_is_better");
            snprintf(metric, sizeof metric, "%s%s", name != NULL ? name : "-",
                     json_is_true(hib)    ? " ↑"
                     : json_is_false(hib) ? " ↓"
                                          : "");
            const char *cells[4] = {
                no, metric,
                cli_fmt_num(value, sizeof value, json_number_value(json_object_get(m, "value"))),
                json_string_value(json_object_get(m, "unit"))};
            if (cli_table_add(t, cells) != 0)
                rc = CLI_EXIT_FAIL;
        }
    }
    putchar('\n');
    if (rc == CLI_EXIT_OK && cli_table_print(t, stdout) != 0)
        rc = CLI_EXIT_FAIL;
    cli_table_free(t);
    putchar('\n');
    cli_out("%s/#/plans/%lld", ctx->server, id);
    return rc;
}

/** hvbench import --tool TOOL --target NAME [--at TIME] [--label K=V ...]
 *  [--name NAME] FILE */
static int cmd_import_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    static const struct option options[] = {
        {"tool", required_argument, NULL, 't'}, {"target", required_argument, NULL, 'T'},
        {"at", required_argument, NULL, 'a'},   {"label", required_argument, NULL, 'L'},
        {"name", required_argument, NULL, 'n'}, {NULL, 0, NULL, 0},
    };
    const char *tool = NULL, *target = NULL, *at = NULL, *name = NULL;
    json_t *labels = json_object();
    int opt, rc = CLI_EXIT_OK;
    while (rc == CLI_EXIT_OK &&
           (opt = getopt_long(argc, argv, "t:T:a:L:n:", options, NULL)) != -1) {
        switch (opt) {
        case 't':
            tool = optarg;
            break;
        case 'T':
            target = optarg;
            break;
        case 'a':
            at = optarg;
            break;
        case 'L':
            if (add_label(labels, optarg) != 0)
                rc = CLI_EXIT_USAGE;
            break;
        case 'n':
            name = optarg;
            break;
        default:
            rc = cli_usage(&cli_cmd_import);
        }
    }
    if (rc == CLI_EXIT_OK && (argc - optind != 1 || tool == NULL || target == NULL)) {
        if (argc - optind == 1)
            cli_err("--tool and --target are required");
        rc = cli_usage(&cli_cmd_import);
    }
    /* Aliases (bonnie++, iperf2) become the name the server knows. */
    const struct hv_tool_parser *p = rc == CLI_EXIT_OK ? hv_parser_find(tool) : NULL;
    if (rc == CLI_EXIT_OK && p == NULL) {
        cli_err("--tool '%s' is not one of fio, iperf3, iperf, bonnie, sysbench, stress-ng", tool);
        rc = CLI_EXIT_USAGE;
    }
    if (rc == CLI_EXIT_OK && at != NULL && !hv_iso8601_valid(at)) {
        cli_err("--at '%s' must be an ISO 8601 UTC time such as 2010-03-01T10:00:00Z", at);
        rc = CLI_EXIT_USAGE;
    }
    size_t len = 0;
    char *text = rc == CLI_EXIT_OK ? read_file(argv[optind], &len) : NULL;
    if (rc == CLI_EXIT_OK && text == NULL)
        rc = CLI_EXIT_USAGE;
    if (rc == CLI_EXIT_OK) {
        size_t bad = first_non_text(text, len);
        if (bad < len) {
            cli_err("%s: byte %zu is not UTF-8 text (convert the file, e.g. iconv -f latin1 "
                    "-t utf-8)",
                    argv[optind], bad);
            rc = CLI_EXIT_USAGE;
        }
    }
    json_t *body = NULL;
    if (rc == CLI_EXIT_OK) {
        body = json_pack("{s:s,s:s,s:s%,s:O}", "tool", p->name, "target", target, "output", text,
                         len, "labels", labels);
        if (at != NULL)
            json_object_set_new(body, "at", json_string(at));
        if (name != NULL)
            json_object_set_new(body, "name", json_string(name));
        if (body == NULL) {
            cli_err("--target and --name must be UTF-8 text");
            rc = CLI_EXIT_USAGE;
        }
    }
    free(text);
    json_decref(labels);
    if (rc != CLI_EXIT_OK)
        return rc;
    struct hv_http_response resp;
    memset(&resp, 0, sizeof resp);
    rc = cli_request(ctx, "POST", "/api/v1/imports", body, &resp);
    json_decref(body);
    if (rc == CLI_EXIT_OK)
        rc = ctx->json ? (cli_print_json(resp.body) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL)
                       : print_import(ctx, resp.body);
    hv_http_response_clear(&resp);
    return rc;
}
