/* cmd_import.c — hvbench import: upload a saved output of fio, iperf3,
 * iperf 2, bonnie++, sysbench or stress-ng (POST /api/v1/imports) and show
 * the metrics the server read from it; with --study, several outputs under
 * labels as one study whose report compares the labels.
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
#include "fileio.h"
#include "cli/table.h"
#include "parsers.h"
#include "timeutil.h"

static int cmd_import_exec(struct cli_ctx *ctx, int argc, char **argv);

const struct cli_command cli_cmd_import = {
    .name = "import",
    .usage = "--tool TOOL --target NAME [--at TIME] [--label KEY=VALUE ...] [--name NAME] "
             "[--table N] [--params KEY=VALUE ...] FILE\n"
             "       hvbench import --study NAME --baseline LABEL --target NAME "
             "[--tool TOOL] "
             "[--at TIME] [--label KEY=VALUE ...] [--name NAME] [--params KEY=VALUE ...] "
             "LABEL[:TOOL]=FILE...\n"
             "       hvbench import --plan FILE",
    .summary = "import a saved output of fio, iperf3, iperf, bonnie++, sysbench or stress-ng",
    .help = "  -t, --tool TOOL         fio, iperf3, iperf (iperf 2), bonnie (bonnie++),\n"
            "                          sysbench or stress-ng\n"
            "  -T, --target NAME       the machine the output was measured on; a name\n"
            "                          no worker registered becomes a host without facts\n"
            "  -a, --at TIME           when the (first) run started (ISO 8601 UTC, e.g.\n"
            "                          2010-03-01T10:00:00Z); default: the time the output\n"
            "                          records (fio, iperf3, stress-ng YAML), else now\n"
            "  -L, --label KEY=VALUE   a label of the import (repeatable): study=kvm-2010\n"
            "  -n, --name NAME         the plan's name (default \"import: TOOL DATE\", or\n"
            "                          \"study: NAME\")\n"
            "      --table N           import only the N-th table (from 1) of a post that\n"
            "                          quotes several bonnie++ tables\n"
            "  -p, --params KEY=VALUE  what the output does not say of its workload\n"
            "                          (repeatable): size=4G for a pasted bonnie++ table;\n"
            "                          refused when the output says otherwise\n"
            "  -s, --study NAME        import a study: each argument LABEL[:TOOL]=FILE is\n"
            "                          an output under a label (TOOL defaults to --tool)\n"
            "  -b, --baseline LABEL    the study's label the others are compared with\n"
            "      --plan FILE         a plan as hvbench export wrote it (from this or\n"
            "                          another server): stored here as a new plan\n"
            "\n"
            "FILE is the tool's output as it saved it (- for standard input):\n"
            "  fio        --output-format=json\n"
            "  iperf3     -J, client or server\n"
            "  iperf      -y C, or the text report, client or server\n"
            "  bonnie     the CSV line(s), the table (bonnie++'s or bon_csv2txt's, or as\n"
            "             a post quotes it: from \"Sequential Output\" on, the rows\n"
            "             without machine name and size), or both as bonnie++ prints\n"
            "             them without -q; 1.0x or 1.9x/2.0; -x N gives N runs\n"
            "  sysbench   the report of the cpu, memory or fileio test\n"
            "  stress-ng  the --yaml file, or the log of --metrics-brief\n"
            "\n"
            "The server reads the output and stores it as a finished plan: one job per\n"
            "run, on TARGET, with the metrics printed here; 'hvbench report ID' shows\n"
            "it like any plan. A file of several outputs of one workload (a tool run\n"
            "again with >>, files joined with cat; not iperf) gives one run each,\n"
            "stored as repetitions; outputs of different workloads in one file are\n"
            "refused, naming how many runs it holds and where they differ. A post of\n"
            "several bonnie++ tables quoted without their rows' labels is refused\n"
            "unless --table picks one (import each table on its own). The workload's\n"
            "params are what the output says was run (fio's rw, bs, iodepth; iperf3's\n"
            "streams, direction, MSS; docs/catalog.md lists them per tool) and\n"
            "--params: each workload has a history of its own. An output\n"
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
    char *buf = is_stdin ? hv_read_stream(stdin, IMPORT_MAX_BYTES, 0, len)
                         : hv_read_file(path, IMPORT_MAX_BYTES, 0, len);
    if (buf == NULL && errno == EFBIG)
        cli_err("%s is larger than %zu MiB", is_stdin ? "<stdin>" : path, IMPORT_MAX_BYTES >> 20);
    else if (buf == NULL)
        cli_err("cannot read %s: %s", is_stdin ? "<stdin>" : path, strerror(errno));
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

/** Adds "KEY=VALUE" of --params to params: a plain decimal number as a
 *  number, anything else as text. Returns 0, or -1 after a message. */
static int add_param(json_t *params, const char *arg)
{
    const char *eq = strchr(arg, '=');
    char key[HV_PARAMS_KEY_MAX + 1];
    if (eq == NULL || eq == arg || eq[1] == '\0' || (size_t)(eq - arg) >= sizeof key) {
        cli_err("--params '%s' must be KEY=VALUE (a key of at most %d characters)", arg,
                HV_PARAMS_KEY_MAX);
        return -1;
    }
    snprintf(key, sizeof key, "%.*s", (int)(eq - arg), arg);
    if (json_object_get(params, key) != NULL) {
        cli_err("--params %s is given twice", key);
        return -1;
    }
    const char *v = eq + 1;
    size_t digits = strspn(v + (v[0] == '-'), "0123456789");
    const char *rest = v + (v[0] == '-') + digits;
    bool number = digits > 0 && digits < 16 &&
                  (*rest == '\0' || (*rest == '.' && rest[1] != '\0' &&
                                     strspn(rest + 1, "0123456789") == strlen(rest + 1)));
    json_t *value = !number        ? json_string(v)
                    : *rest == '.' ? json_real(strtod(v, NULL))
                                   : json_integer(strtoll(v, NULL, 10));
    if (value == NULL || json_object_set_new(params, key, value) != 0) {
        cli_err("--params '%s' is not UTF-8 text", arg);
        return -1;
    }
    json_t *errors = json_array();
    int bad = hv_params_given_check(params, "--params", errors);
    if (bad > 0)
        cli_err("--params '%s': %s", arg,
                json_string_value(json_object_get(json_array_get(errors, 0), "message")));
    json_decref(errors);
    return bad > 0 ? -1 : 0;
}

/** Reads the plan id and the runs of an import's answer. Returns 0, or -1
 *  after a message. */
static int answer_runs(const json_t *body, long long *id, const json_t **runs)
{
    const json_t *plan = json_object_get(body, "plan_id");
    *runs = json_object_get(body, "runs");
    if (!json_is_integer(plan) || !json_is_array(*runs)) {
        cli_err("the server's answer has no plan_id or runs[]");
        return -1;
    }
    *id = (long long)json_integer_value(plan);
    return 0;
}

/** Adds the row of metric m of run (number i, from 0). Returns 0 or -1. */
typedef int (*metric_row_fn)(struct cli_table *t, size_t i, const json_t *run, const json_t *m);

/** Prints a table of the ncols columns cols with the row add makes of each
 *  metric of each run, then the plan's page. Returns an exit code. */
static int print_runs(const struct cli_ctx *ctx, long long id, const json_t *runs,
                      const struct cli_column *cols, size_t ncols, metric_row_fn add)
{
    struct cli_table *t = cli_table_new(cols, ncols);
    int rc = t != NULL ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    size_t i, k;
    const json_t *run, *m;
    json_array_foreach(runs, i, run)
    {
        json_array_foreach(json_object_get(run, "metrics"), k, m)
        {
            if (rc == CLI_EXIT_OK && add(t, i, run, m) != 0)
                rc = CLI_EXIT_FAIL;
        }
    }
    putchar('\n');
    rc = cli_table_flush(t, rc);
    putchar('\n');
    cli_out("%s/#/plans/%lld", ctx->server, id);
    return rc;
}

/** A row of an import's table: run, metric (with its arrow), value, unit. */
static int add_import_row(struct cli_table *t, size_t i, const json_t *run, const json_t *m)
{
    char no[24], metric[160], value[64];
    snprintf(no, sizeof no, "%zu", i + 1);
    const char *name = json_string_value(json_object_get(m, "name"));
    snprintf(metric, sizeof metric, "%s%s", name != NULL ? name : "-",
             cli_arrow(json_object_get(m, "higher_is_better")));
    const char *cells[4] = {
        no, metric,
        cli_fmt_num(value, sizeof value, json_number_value(json_object_get(m, "value"))),
        json_string_value(json_object_get(m, "unit"))};
    return cli_table_add(t, cells);
}

/** Prints what the server stored: a line about the plan, then the metrics
 *  of each run. */
static int print_import(const struct cli_ctx *ctx, const json_t *body)
{
    long long id;
    const json_t *runs;
    if (answer_runs(body, &id, &runs) != 0)
        return CLI_EXIT_FAIL;
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
    char *params = json_dumps(json_object_get(body, "params"), JSON_COMPACT | JSON_SORT_KEYS);
    if (params != NULL)
        cli_out("workload: %s", params);
    free(params);
    static const struct cli_column cols[] = {
        {"run", CLI_RIGHT}, {"metric", CLI_LEFT}, {"value", CLI_RIGHT}, {"unit", CLI_LEFT}};
    return print_runs(ctx, id, runs, cols, 4, add_import_row);
}

/** A row of a study's table: label, repetition, workload, metric, value,
 *  unit. */
static int add_study_row(struct cli_table *t, size_t i, const json_t *run, const json_t *m)
{
    char rep[24], value[64];
    snprintf(rep, sizeof rep, "%lld",
             (long long)json_integer_value(json_object_get(run, "repetition")));
    const char *cells[6] = {
        json_string_value(json_object_get(run, "label")),
        rep,
        json_string_value(json_object_get(run, "workload")),
        json_string_value(json_object_get(m, "name")),
        cli_fmt_num(value, sizeof value, json_number_value(json_object_get(m, "value"))),
        json_string_value(json_object_get(m, "unit"))};
    return cli_table_add(t, cells);
}

/** Prints what the server stored of a study: a line about the plan, its
 *  labels' configurations, then the metrics of each run. */
static int print_study(const struct cli_ctx *ctx, const json_t *body)
{
    long long id;
    const json_t *runs;
    if (answer_runs(body, &id, &runs) != 0)
        return CLI_EXIT_FAIL;
    size_t n = json_array_size(runs), i;
    cli_out("imported study %s for %s as plan %lld: %zu run%s, baseline %s%s",
            json_string_value(json_object_get(body, "study")),
            json_string_value(json_object_get(body, "target")), id, n, n == 1 ? "" : "s",
            json_string_value(json_object_get(body, "baseline")),
            json_is_true(json_object_get(body, "target_created"))
                ? " (new target: no worker registered it)"
                : "");
    const json_t *c;
    json_array_foreach(json_object_get(body, "configurations"), i, c)
    {
        cli_out("  label %s: configuration %s", json_string_value(json_object_get(c, "label")),
                json_string_value(json_object_get(c, "configuration")));
    }
    static const struct cli_column cols[] = {{"label", CLI_LEFT},    {"rep", CLI_RIGHT},
                                             {"workload", CLI_LEFT}, {"metric", CLI_LEFT},
                                             {"value", CLI_RIGHT},   {"unit", CLI_LEFT}};
    return print_runs(ctx, id, runs, cols, 6, add_study_row);
}

/** The command line of an import. */
struct import_args {
    const char *tool, *target, *at, *name, *study, *baseline;
    int table; /* --table N, 0 when not given */
    json_t *labels;
    json_t *params; /* --params: what the output does not say */
};

/** Reads path as the text of an output: a new JSON string, or NULL after
 *  a message. */
static json_t *output_text(const char *path)
{
    size_t len = 0;
    char *text = read_file(path, &len);
    if (text == NULL)
        return NULL;
    size_t bad = first_non_text(text, len);
    json_t *s = bad == len ? json_stringn(text, len) : NULL;
    if (bad < len)
        cli_err("%s: byte %zu is not UTF-8 text (convert the file, e.g. iconv -f latin1 "
                "-t utf-8)",
                path, bad);
    free(text);
    return s;
}

/** The tool called name as the server names it (aliases such as bonnie++
 *  and iperf2 resolved), or NULL after a message. */
static const char *tool_name(const char *name, const char *what)
{
    const struct hv_tool_parser *p = hv_parser_find(name);
    if (p == NULL) {
        char names[256] = "";
        size_t n = 0;
        for (const char *const *t = hv_parser_names(); *t != NULL && n < sizeof names; t++)
            n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", n > 0 ? ", " : "", *t);
        cli_err("%s '%s' is not one of %s", what, name, names);
    }
    return p != NULL ? p->name : NULL;
}

/** The body of a single import of file. NULL after a message. */
static json_t *single_body(const struct import_args *a, const char *file)
{
    const char *tool = a->tool ? tool_name(a->tool, "--tool") : NULL;
    if (a->tool == NULL || a->target == NULL) {
        cli_err("--tool and --target are required");
        cli_usage(&cli_cmd_import);
        return NULL;
    }
    json_t *text = tool != NULL ? output_text(file) : NULL;
    if (text == NULL)
        return NULL;
    json_t *body = json_pack("{s:s,s:s,s:o,s:O}", "tool", tool, "target", a->target, "output", text,
                             "labels", a->labels);
    if (body != NULL && a->at != NULL)
        json_object_set_new(body, "at", json_string(a->at));
    if (body != NULL && a->name != NULL)
        json_object_set_new(body, "name", json_string(a->name));
    if (body != NULL && a->table > 0)
        json_object_set_new(body, "table", json_integer(a->table));
    if (body != NULL && json_object_size(a->params) > 0)
        json_object_set(body, "params", a->params);
    if (body == NULL)
        cli_err("--target and --name must be UTF-8 text");
    return body;
}

/** One output of a study from "LABEL[:TOOL]=FILE". NULL after a message. */
static json_t *study_output(const struct import_args *a, const char *arg)
{
    const char *eq = strchr(arg, '=');
    char label[80], tool_arg[40];
    size_t n = eq != NULL ? (size_t)(eq - arg) : 0;
    const char *colon = eq != NULL ? memchr(arg, ':', n) : NULL;
    size_t ln = colon != NULL ? (size_t)(colon - arg) : n;
    if (eq == NULL || ln == 0 || ln >= sizeof label || eq[1] == '\0' ||
        (colon != NULL && (size_t)(eq - colon - 1) >= sizeof tool_arg)) {
        cli_err("'%s' must be LABEL=FILE or LABEL:TOOL=FILE", arg);
        return NULL;
    }
    snprintf(label, sizeof label, "%.*s", (int)ln, arg);
    if (colon != NULL)
        snprintf(tool_arg, sizeof tool_arg, "%.*s", (int)(eq - colon - 1), colon + 1);
    else if (a->tool == NULL) {
        cli_err("'%s' names no tool: give --tool, or write LABEL:TOOL=FILE", arg);
        return NULL;
    }
    const char *tool =
        tool_name(colon != NULL ? tool_arg : a->tool, colon != NULL ? "the tool" : "--tool");
    json_t *text = tool != NULL ? output_text(eq + 1) : NULL;
    if (text == NULL)
        return NULL;
    json_t *o = json_pack("{s:s,s:s,s:o}", "label", label, "tool", tool, "output", text);
    if (o != NULL && a->at != NULL)
        json_object_set_new(o, "at", json_string(a->at));
    if (o != NULL && json_object_size(a->params) > 0)
        json_object_set(o, "params", a->params);
    if (o == NULL)
        cli_err("the label of '%s' must be UTF-8 text", arg);
    return o;
}

/** The body of a study of the outputs args[0..n). NULL after a message. */
static json_t *study_body(const struct import_args *a, char **args, int n)
{
    if (a->target == NULL || a->baseline == NULL || n < 2) {
        cli_err("a study needs --target, --baseline and two LABEL=FILE arguments or more");
        return NULL;
    }
    json_t *outputs = json_array();
    for (int i = 0; i < n && outputs != NULL; i++) {
        json_t *o = study_output(a, args[i]);
        if (o == NULL) {
            json_decref(outputs);
            outputs = NULL;
        } else {
            json_array_append_new(outputs, o);
        }
    }
    if (outputs == NULL)
        return NULL;
    json_t *body = json_pack("{s:s,s:s,s:s,s:O,s:o}", "study", a->study, "target", a->target,
                             "baseline", a->baseline, "labels", a->labels, "outputs", outputs);
    if (body != NULL && a->name != NULL)
        json_object_set_new(body, "name", json_string(a->name));
    if (body == NULL)
        cli_err("--study, --target, --baseline and --name must be UTF-8 text");
    return body;
}

/** --table N into *table: a whole number from 1. Returns 0, or -1 after a
 *  message. */
static int parse_table(const char *arg, int *table)
{
    char *end;
    errno = 0;
    long n = strtol(arg, &end, 10);
    if (errno != 0 || end == arg || *end != '\0' || n < 1 || n > 1000) {
        cli_err("--table '%s' must be a table's number, 1 to 1000", arg);
        return -1;
    }
    *table = (int)n;
    return 0;
}

/** Parses the options into *a; returns an exit code. */
static int parse_args(struct import_args *a, int argc, char **argv)
{
    static const struct option options[] = {
        {"tool", required_argument, NULL, 't'},     {"target", required_argument, NULL, 'T'},
        {"at", required_argument, NULL, 'a'},       {"label", required_argument, NULL, 'L'},
        {"name", required_argument, NULL, 'n'},     {"study", required_argument, NULL, 's'},
        {"baseline", required_argument, NULL, 'b'}, {"table", required_argument, NULL, 'N'},
        {"params", required_argument, NULL, 'p'},   {NULL, 0, NULL, 0},
    };
    int opt;
    while ((opt = getopt_long(argc, argv, "t:T:a:L:n:s:b:p:", options, NULL)) != -1) {
        const char **dest = opt == 't'   ? &a->tool
                            : opt == 'T' ? &a->target
                            : opt == 'a' ? &a->at
                            : opt == 'n' ? &a->name
                            : opt == 's' ? &a->study
                            : opt == 'b' ? &a->baseline
                                         : NULL;
        if (dest != NULL) {
            *dest = optarg;
        } else if (opt == 'N') {
            if (parse_table(optarg, &a->table) != 0)
                return CLI_EXIT_USAGE;
        } else if (opt == 'p') {
            if (add_param(a->params, optarg) != 0)
                return CLI_EXIT_USAGE;
        } else if (opt != 'L') {
            return cli_usage(&cli_cmd_import);
        } else if (add_label(a->labels, optarg) != 0) {
            return CLI_EXIT_USAGE;
        }
    }
    if (a->study == NULL && (argc - optind != 1 || a->baseline != NULL))
        return cli_usage(&cli_cmd_import);
    if (a->study != NULL && a->table > 0) {
        cli_err("--table picks a table of one output; a study takes each table as an output "
                "of its own");
        return CLI_EXIT_USAGE;
    }
    if (a->at != NULL && !hv_iso8601_valid(a->at)) {
        cli_err("--at '%s' must be an ISO 8601 UTC time such as 2010-03-01T10:00:00Z", a->at);
        return CLI_EXIT_USAGE;
    }
    return CLI_EXIT_OK;
}

/** hvbench import --plan FILE: an exported plan stored as a new plan. */
static int import_plan(struct cli_ctx *ctx, const char *path)
{
    size_t len;
    char *text = read_file(path, &len);
    if (text == NULL)
        return CLI_EXIT_USAGE;
    json_error_t jerr;
    json_t *doc = json_loadb(text, len, 0, &jerr);
    free(text);
    if (doc == NULL) {
        cli_err("%s is not JSON: %s (line %d)", path, jerr.text, jerr.line);
        return CLI_EXIT_USAGE;
    }
    struct hv_http_response resp;
    memset(&resp, 0, sizeof resp);
    int rc = cli_request(ctx, "POST", "/api/v1/plans/import", doc, &resp);
    if (rc == CLI_EXIT_OK && ctx->json) {
        rc = cli_print_json(resp.body) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    } else if (rc == CLI_EXIT_OK) {
        long long id = (long long)json_integer_value(json_object_get(resp.body, "id"));
        const char *name = json_string_value(json_object_get(json_object_get(doc, "plan"), "name"));
        /* 200: the same document was imported before, as this plan. */
        cli_out("plan %lld %s (%s): hvbench report %lld", id,
                resp.status == 200 ? "was imported before" : "imported", name != NULL ? name : "?",
                id);
    }
    json_decref(doc);
    hv_http_response_clear(&resp);
    return rc;
}

/** hvbench import --tool TOOL --target NAME [--at TIME] [--label K=V ...]
 *  [--name NAME] [--params K=V ...] FILE, or with --study NAME --baseline LABEL, LABEL=FILE
 *  arguments */
static int cmd_import_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--plan") == 0)
        return argc == 3 ? import_plan(ctx, argv[2]) : cli_usage(&cli_cmd_import);
    struct import_args a = {.labels = json_object(), .params = json_object()};
    int rc = a.labels != NULL && a.params != NULL ? parse_args(&a, argc, argv) : CLI_EXIT_FAIL;
    json_t *body = NULL;
    if (rc == CLI_EXIT_OK) {
        body = a.study != NULL ? study_body(&a, argv + optind, argc - optind)
                               : single_body(&a, argv[optind]);
        if (body == NULL)
            rc = CLI_EXIT_USAGE;
    }
    json_decref(a.labels);
    json_decref(a.params);
    if (rc != CLI_EXIT_OK)
        return rc;
    struct hv_http_response resp;
    memset(&resp, 0, sizeof resp);
    rc = cli_request(ctx, "POST", "/api/v1/imports", body, &resp);
    json_decref(body);
    if (rc == CLI_EXIT_OK && ctx->json)
        rc = cli_print_json(resp.body) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    else if (rc == CLI_EXIT_OK)
        rc = a.study != NULL ? print_study(ctx, resp.body) : print_import(ctx, resp.body);
    hv_http_response_clear(&resp);
    return rc;
}
