/* parse_bonnie.c — bonnie++: its CSV lines and its human-readable table
 * (parse_bonnie_table.c), of bonnie++ 1.0x and 1.9x/2.0, alone or as
 * bonnie++ prints them together without -q (the table, then the CSV line).
 *
 * The CSV: format 1.9x (bonnie++ 1.93 to 2.0; "1.98,2.00a,..." with 50
 * fields, one line per run of -x N after a header line) and 1.0x
 * ("name,size,putc,..." with 27 fields, no latencies). When an output has
 * both a table and CSV lines, the CSV gives the values (the table rounds
 * "319m") and the table must show as many runs. Lines bonnie++ prints
 * while it works ("Writing intelligently...done") are passed over.
 *
 * Each test is one row of hv_bonnie_tests below: block write, rewrite and
 * block read give disk.seq_write.mbps, disk.rewrite.mbps,
 * disk.seq_read.mbps (bonnie++'s K/s are KiB: × 1024 / 1e6 gives MB/s as
 * the built-in engine counts them), random seeks disk.seeks.iops, the
 * per-character tests disk.seq_write_char.mbps and disk.seq_read_char.mbps,
 * the file tests disk.file_<seq|rand>_<create|stat|delete>.ops_per_s.
 * bonnie++'s latency of a test is its slowest operation:
 * disk.<test>.lat_max_us. A test that did not run (empty) or ran too fast
 * to measure ("+++++"; bon_csv2txt prints "0k +++") gives no metric and is
 * listed in info.too_fast. Several runs (-x N, rows of one table, outputs
 * one after another in a file) are several runs, in order.
 *
 * Posts quote tables without their rows' labels (parse_bonnie_table.c),
 * often several in one post, one per setting compared: such a post is
 * refused unless a table is picked (hv_parse_tool_table_runs(), "table"
 * of an import), since nothing says its tables are runs of one workload;
 * whole tables one after another stay runs in order. The picked table's
 * runs are the output's runs; the others are read, and must read, but
 * dropped. A post's last line may lack its newline when it is a whole
 * table row; any other output without its final newline is refused as
 * cut off.
 *
 * The file ends with the tool's description, its line of lib/tools.def:
 * its engine, hv_engine_def_disk_bonnie, and hv_tool_parser_bonnie (the
 * parser, its signature, what its runs share). */
#include "parse_bonnie.h"
#include "params.h"
#include "errors.h"
#include "jspec.h"
#include "parse_util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL HV_BONNIE_TOOL

const struct hv_bonnie_test hv_bonnie_tests[HV_BONNIE_TESTS] = {
    {"putc", "per-char write K/s", "seq_write_char", HV_BONNIE_KIB_S, 9, 38, 2},
    {"put_block", "block write K/s", "seq_write", HV_BONNIE_KIB_S, 11, 39, 4},
    {"rewrite", "rewrite K/s", "rewrite", HV_BONNIE_KIB_S, 13, 40, 6},
    {"getc", "per-char read K/s", "seq_read_char", HV_BONNIE_KIB_S, 15, 41, 8},
    {"get_block", "block read K/s", "seq_read", HV_BONNIE_KIB_S, 17, 42, 10},
    {"seeks", "random seeks/s", "seeks", HV_BONNIE_SEEKS_S, 19, 43, 12},
    {"seq_create", "sequential creates/s", "file_seq_create", HV_BONNIE_OPS_S, 26, 44, 15},
    {"seq_stat", "sequential stats/s", "file_seq_stat", HV_BONNIE_OPS_S, 28, 45, 17},
    {"seq_del", "sequential deletes/s", "file_seq_delete", HV_BONNIE_OPS_S, 30, 46, 19},
    {"ran_create", "random creates/s", "file_rand_create", HV_BONNIE_OPS_S, 32, 47, 21},
    {"ran_stat", "random stats/s", "file_rand_stat", HV_BONNIE_OPS_S, 34, 48, 23},
    {"ran_del", "random deletes/s", "file_rand_delete", HV_BONNIE_OPS_S, 36, 49, 25},
};

/* The CSV formats: their field count and the fields that are not results,
 * for info and messages. */
struct csv_field {
    int index;
    const char *name;
};
static const struct csv_field info_19[] = {
    {0, "format_version"},
    {1, "bonnie_version"},
    {2, "name"},
    {3, "concurrency"},
    {4, "seed"},
    {5, "file_size"},
    {6, "chunk_size"},
    {7, "seeks"},
    {8, "seek_proc_count"},
    {21, "num_files"},
    {22, "max_size"},
    {23, "min_size"},
    {24, "num_dirs"},
    {25, "file_chunk_size"},
    {-1, NULL},
};
static const struct csv_field info_10[] = {
    {0, "name"},
    {1, "file_size"},
    {14, "num_files"},
    {-1, NULL},
};
static const struct csv_format {
    const char *name; /* for messages */
    int fields;
    bool v19;
    const struct csv_field *info;
} csv_19 = {"1.9x", 50, true, info_19}, csv_10 = {"1.0x", 27, false, info_10};

#define MAX_FIELDS 64

bool hv_bonnie_too_fast(const char *s, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] != '+')
            return false;
    return true;
}

int hv_bonnie_latency(const char *s, size_t n, double *us)
{
    static const struct {
        const char *unit;
        double mult;
    } units[] = {{"ns", 1e-3}, {"us", 1}, {"ms", 1e3}, {"s", 1e6}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        size_t ul = strlen(units[i].unit);
        if (n > ul && memcmp(s + n - ul, units[i].unit, ul) == 0 &&
            (s[n - ul - 1] >= '0' && s[n - ul - 1] <= '9') && hv_pnum(s, n - ul, us) == 0) {
            *us *= units[i].mult;
            return *us >= 0 ? 0 : -1;
        }
    }
    return -1;
}

bool hv_bonnie_csv_like(const char *line)
{
    size_t commas = 0;
    for (const char *c = line; *c != '\0'; c++)
        commas += *c == ',';
    return commas >= 20;
}

int hv_bonnie_emit(json_t *runs, const struct hv_bonnie_result *res, const json_t *info,
                   const char *format)
{
    json_t *run = hv_prun_new(runs, TOOL, format);
    if (run == NULL)
        return -1;
    json_object_update(hv_prun_info(run), (json_t *)info);
    json_t *m = hv_prun_metrics(run);
    char name[64];
    int rc = 0;
    for (int t = 0; t < HV_BONNIE_TESTS; t++) {
        const struct hv_bonnie_test *d = &hv_bonnie_tests[t];
        if (res->has[t]) {
            static const char *const suffix[] = {"mbps", "iops", "ops_per_s"};
            static const char *const unit[] = {"MB/s", "IO/s", "ops/s"};
            double v = d->rate == HV_BONNIE_KIB_S ? res->value[t] * 1024.0 / 1e6 : res->value[t];
            snprintf(name, sizeof name, "disk.%s.%s", d->metric, suffix[d->rate]);
            rc |= hv_pmetric(m, name, v, unit[d->rate], true);
        }
        if (res->has_lat[t]) {
            snprintf(name, sizeof name, "disk.%s.lat_max_us", d->metric);
            rc |= hv_pmetric(m, name, res->lat_us[t], "us", false);
        }
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* CSV */

/* Which CSV format line is: 1.9x ("1.98,..."), 1.0x (27 fields, the second
 * a size), or NULL. */
static const struct csv_format *csv_format_of(const char *line)
{
    /* "1.98," (2.00a), "1.93c," */
    size_t v = strncmp(line, "1.9", 3) == 0 && isdigit((unsigned char)line[3]) ? 4 : 0;
    if (v > 0 && isalpha((unsigned char)line[v]))
        v++;
    if (v > 0 && line[v] == ',')
        return &csv_19;
    if (strncmp(line, "format_version,", 15) == 0 || !hv_bonnie_csv_like(line))
        return NULL;
    return &csv_10;
}

/* One test's fields of a CSV line into res and info. */
static int csv_test(char **f, int no, const struct csv_format *fmt, int t,
                    struct hv_bonnie_result *res, json_t *info, char *err, size_t errlen)
{
    const struct hv_bonnie_test *d = &hv_bonnie_tests[t];
    int vi = fmt->v19 ? d->v19 : d->v10;
    const char *v = f[vi], *c = f[vi + 1], *l = fmt->v19 ? f[d->latency] : "";
    char q[40];
    double x;
    if (hv_bonnie_too_fast(v, strlen(v))) {
        json_array_append_new(json_object_get(info, "too_fast"), json_string(d->csv));
    } else if (*v != '\0') {
        if (hv_pnum_str(v, &res->value[t]) != 0 || res->value[t] < 0)
            return hv_perr(err, errlen, TOOL, "line %d, field %d (%s: %s) is not a number: \"%s\"",
                           no, vi + 1, d->csv, d->what, hv_pquote(q, sizeof q, v, strlen(v)));
        res->has[t] = true;
    }
    if (*c != '\0' && !hv_bonnie_too_fast(c, strlen(c))) {
        if (hv_pnum_str(c, &x) != 0 || x < 0)
            return hv_perr(err, errlen, TOOL,
                           "line %d, field %d (%s_cpu: %%CPU) is not a number: \"%s\"", no, vi + 2,
                           d->csv, hv_pquote(q, sizeof q, c, strlen(c)));
        json_object_set_new(json_object_get(info, "cpu_pct"), d->csv, json_real(x));
    }
    if (*l != '\0' && !hv_bonnie_too_fast(l, strlen(l))) {
        if (hv_bonnie_latency(l, strlen(l), &res->lat_us[t]) != 0)
            return hv_perr(err, errlen, TOOL,
                           "line %d, field %d (%s_latency) is not a latency such as 8107us: "
                           "\"%s\"",
                           no, d->latency + 1, d->csv, hv_pquote(q, sizeof q, l, strlen(l)));
        res->has_lat[t] = true;
    }
    return 0;
}

/* Reads one CSV line of fmt (a copy: it is cut into fields) into a run. */
static int csv_line(char *line, int no, const struct csv_format *fmt, json_t *runs, char *err,
                    size_t errlen)
{
    char *f[MAX_FIELDS + 1];
    int nf = 0;
    for (char *p = line; nf <= MAX_FIELDS;) {
        f[nf++] = p;
        p = strchr(p, ',');
        if (p == NULL)
            break;
        *p++ = '\0';
    }
    if (nf != fmt->fields && fmt->v19)
        return hv_perr(err, errlen, TOOL,
                       "line %d has %s%d fields; a bonnie++ 1.9x CSV line has %d%s", no,
                       nf > fmt->fields ? "more than " : "", nf, fmt->fields,
                       nf < fmt->fields ? " (cut off?)" : "");
    if (nf != fmt->fields)
        return hv_perr(err, errlen, TOOL,
                       "line %d is a CSV line of %d fields: neither bonnie++ 1.0x's (27 fields) "
                       "nor 1.9x's (50 fields, starting with its format version such as 1.98)",
                       no, nf);
    struct hv_bonnie_result res = {0};
    json_t *info = json_pack("{s:{},s:[]}", "cpu_pct", "too_fast");
    char q[40];
    for (const struct csv_field *i = fmt->info; info != NULL && i->name != NULL; i++)
        if (*f[i->index] != '\0')
            json_object_set_new(
                info, i->name,
                json_string(hv_pquote(q, sizeof q, f[i->index], strlen(f[i->index]))));
    if (info != NULL && fmt->v19)
        json_object_set(info, "tool_version", json_object_get(info, "bonnie_version"));
    int rc = info != NULL ? 0 : hv_perr(err, errlen, TOOL, "out of memory");
    for (int t = 0; rc == 0 && t < HV_BONNIE_TESTS; t++)
        rc = csv_test(f, no, fmt, t, &res, info, err, errlen);
    if (rc == 0 && hv_bonnie_emit(runs, &res, info, "csv") != 0)
        rc = hv_perr(err, errlen, TOOL, "line %d: a value is not a finite number", no);
    json_decref(info);
    return rc;
}

bool hv_bonnie_chatter(const char *l)
{
    static const char *const prefixes[] = {
        "Using uid:",   "Writing ",   "Rewriting",    "Reading ", "start 'em",
        "Create files", "Stat files", "Delete files", "Seeker ",  "format_version,",
    };
    while (*l == ' ')
        l++;
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(l, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    return *l == '\0';
}

/* Every CSV line into runs; *n counts them. */
static int read_csv(const struct hv_bonnie_lines *lines, json_t *runs, int *n, char *err,
                    size_t errlen)
{
    *n = 0;
    for (int i = 0; i < lines->n; i++) {
        const struct csv_format *fmt = csv_format_of(lines->line[i]);
        if (fmt == NULL)
            continue;
        char *copy = strdup(lines->line[i]);
        int rc = copy != NULL ? csv_line(copy, lines->no[i], fmt, runs, err, errlen)
                              : hv_perr(err, errlen, TOOL, "out of memory");
        free(copy);
        if (rc != 0)
            return -1;
        ++*n;
    }
    return 0;
}

/* ------------------------------------------------------------------ */

/* The lines of text[0..len), for the table and the CSV. */
static int read_lines(const char *text, size_t len, struct hv_bonnie_lines *lines, char *err,
                      size_t errlen)
{
    struct hv_plines it;
    hv_plines_init(&it, text);
    int cap = 0;
    while (hv_plines_next(&it)) {
        if (lines->n == cap) {
            cap = cap ? cap * 2 : 64;
            char **l = realloc(lines->line, (size_t)cap * sizeof *l);
            if (l != NULL)
                lines->line = l;
            int *no = realloc(lines->no, (size_t)cap * sizeof *no);
            if (no != NULL)
                lines->no = no;
            if (l == NULL || no == NULL)
                return hv_perr(err, errlen, TOOL, "out of memory");
        }
        char *out = malloc(it.len * 8 + 1);
        if (out == NULL)
            return hv_perr(err, errlen, TOOL, "out of memory");
        size_t k = 0;
        for (size_t i = 0; i < it.len; i++) {
            char ch = it.s[i];
            if (ch == '\t') {
                do
                    out[k++] = ' ';
                while (k % 8 != 0);
            } else {
                out[k++] = (unsigned char)ch < 0x20 ? ' ' : ch;
            }
        }
        while (k > 0 && out[k - 1] == ' ')
            k--;
        out[k] = '\0';
        lines->line[lines->n] = out;
        lines->no[lines->n++] = it.no;
    }
    lines->open_end = len > 0 && text[len - 1] != '\n';
    return 0;
}

static void free_lines(struct hv_bonnie_lines *lines)
{
    for (int i = 0; i < lines->n; i++)
        free(lines->line[i]);
    free(lines->line);
    free(lines->no);
}

/* Which of the n runs read are the output's: [*from, *to), those of the
 * table-th table when one is picked (from 1; 0: all). */
static int pick(const struct hv_bonnie_found *f, int table, size_t n, size_t *from, size_t *to,
                char *err, size_t errlen)
{
    *from = 0;
    *to = n;
    if (table == 0 && f->tables > 1 && f->pasted)
        return hv_perr(err, errlen, TOOL,
                       "the output holds %d tables quoted without their rows' machine names and "
                       "sizes, as a post quotes the runs it compares; import one table at a time "
                       "(hvbench import --table N, \"table\" in the API), or each on its own as "
                       "an output of a study",
                       f->tables);
    if (table == 0)
        return 0;
    if (table > f->tables)
        return hv_perr(err, errlen, TOOL, "there is no table %d: the output holds %d table%s%s",
                       table, f->tables, f->tables == 1 ? "" : "s",
                       f->tables == 0 ? " (only CSV lines)" : "");
    *from = (size_t)f->first[table - 1];
    *to = table < f->tables ? (size_t)f->first[table] : n;
    return 0;
}

/* Chooses between the CSV runs and the table runs of one output and
 * appends the chosen ones (of the table-th table, 0: all) to runs. */
static int choose(const struct hv_bonnie_lines *lines, json_t *csv, int n_csv, json_t *table,
                  const struct hv_bonnie_found *found, int pick_table, json_t *runs,
                  const char *text, char *err, size_t errlen)
{
    int tables = found->sections;
    if (n_csv == 0 && tables == 0)
        return hv_pnot_mine(text, "bonnie", TOOL,
                            "neither a CSV line nor a table with \"Sequential Output\" or "
                            "\"Sequential Create\": not bonnie++'s output",
                            err, errlen);
    if (n_csv > 0 && tables > 0 && json_array_size(table) != (size_t)n_csv)
        return hv_perr(err, errlen, TOOL,
                       "the tables show %zu run%s but the output has %d CSV line%s; bonnie++ "
                       "prints one per run (cut off, or pasted in part?)",
                       json_array_size(table), json_array_size(table) == 1 ? "" : "s", n_csv,
                       n_csv == 1 ? "" : "s");
    for (int i = 0; n_csv > 0 && tables == 0 && i < lines->n; i++)
        if (csv_format_of(lines->line[i]) == NULL && !hv_bonnie_chatter(lines->line[i]))
            return hv_perr(err, errlen, TOOL,
                           "line %d is not a bonnie++ CSV line (format 1.9x, as bonnie++ 1.93 to "
                           "2.0 print them, or 1.0x)",
                           lines->no[i]);
    size_t i, from, to;
    json_t *run;
    if (pick(found, pick_table, json_array_size(n_csv > 0 ? csv : table), &from, &to, err,
             errlen) != 0)
        return -1;
    json_array_foreach(n_csv > 0 ? csv : table, i, run)
    {
        if (i < from || i >= to)
            continue;
        /* A 1.0x CSV line names no version; its table does. */
        json_t *info = hv_prun_info(run);
        const json_t *v = json_object_get(hv_prun_info(json_array_get(table, i)), "tool_version");
        if (json_object_get(info, "tool_version") == NULL && v != NULL)
            json_object_set(info, "tool_version", (json_t *)v);
        if (n_csv > 0 && tables > 0)
            json_object_set_new(info, "table", json_true());
        json_array_append(runs, run);
    }
    return 0;
}

static int parse_bonnie_table(const char *text, size_t len, int pick_table, json_t *runs, char *err,
                              size_t errlen)
{
    struct hv_bonnie_lines lines = {0};
    struct hv_bonnie_found found = {0};
    json_t *csv = json_array(), *table = json_array();
    int n_csv = 0;
    int rc = csv != NULL && table != NULL ? read_lines(text, len, &lines, err, errlen)
                                          : hv_perr(err, errlen, TOOL, "out of memory");
    if (rc == 0)
        rc = read_csv(&lines, csv, &n_csv, err, errlen);
    if (rc == 0)
        rc = hv_bonnie_tables(&lines, table, &found, err, errlen);
    /* Without its final newline, only a whole table row ends a file. */
    if (lines.open_end && (rc != 0 || !found.end_whole))
        rc = hv_pcheck_complete(text, len, TOOL, err, errlen);
    if (rc == 0)
        rc = choose(&lines, csv, n_csv, table, &found, pick_table, runs, text, err, errlen);
    free_lines(&lines);
    json_decref(csv);
    json_decref(table);
    return rc;
}

static int parse_bonnie(const char *text, size_t len, json_t *runs, char *err, size_t errlen)
{
    return parse_bonnie_table(text, len, 0, runs, err, errlen);
}

/* ---- the description (lib/tools.def) --------------------------------- */

#define MIB (1024.0 * 1024.0)
#define TIB (1024.0 * 1024.0 * MIB)

static const struct hv_param_def disk_bonnie_params[] = {
    {.name = "size",
     .type = HV_PARAM_SIZE,
     .min = MIB,
     .max = 16 * TIB,
     .multiple = 1048576,
     .description = "file size in whole MiB (bonnie++ -s); absent: bonnie++'s twice the RAM"},
    {.name = "ram_mb",
     .type = HV_PARAM_INT,
     .min = 1,
     .max = 16777216,
     .description = "RAM bonnie++ assumes, in MiB (bonnie++ -r); absent: the target's"},
    HV_PARAM_PATH("directory to test in (bonnie++ -d); absent: the worker's scratch directory"),
    {.name = "fast",
     .type = HV_PARAM_BOOL,
     .def = "false",
     .description = "skip the per-character tests (bonnie++ -f)"},
    {0},
};

/* bonnie++ refuses a file smaller than twice the RAM it assumes; say so
 * at submission instead of in a failed job. */
static int cross_disk_bonnie(const struct hv_engine_def *e, const json_t *params, const char *path,
                             json_t *errors)
{
    (void)e;
    json_t *size = json_object_get(params, "size"), *ram = json_object_get(params, "ram_mb");
    if (size == NULL || ram == NULL ||
        (double)json_integer_value(size) >= 2.0 * MIB * (double)json_integer_value(ram))
        return 0;
    char p[512];
    hv_jpath(p, sizeof p, path, "size");
    hv_errors_add(errors, p, "must be at least twice ram_mb (%" JSON_INTEGER_FORMAT " MiB)",
                  2 * json_integer_value(ram));
    return 1;
}

static const char *const bonnie_metrics[] = {"disk.seq_write.mbps", NULL};

const struct hv_engine_def hv_engine_def_disk_bonnie = {
    .kind = "disk",
    .engine = "bonnie",
    .summary = "bonnie++: block write, rewrite, read, seeks, file creation",
    .metrics = bonnie_metrics,
    .external = true,
    .params_def = disk_bonnie_params,
    .cross = cross_disk_bonnie,
};

/* Whether text has a line of bonnie++ 1.0x's CSV report: 27 fields, the
 * second a file size ("raid0,2G,83720,95,..."). */
static bool bonnie10_csv_line(const char *text)
{
    for (const char *p = text; p != NULL && *p != '\0';) {
        size_t len = strcspn(p, "\n"), commas = 0;
        for (size_t i = 0; i < len; i++)
            commas += p[i] == ',';
        const char *size = memchr(p, ',', len);
        size_t digits = size != NULL ? strspn(size + 1, "0123456789") : 0;
        if (commas == 26 && digits > 0 && strchr("KMGT", size[1 + digits]) != NULL &&
            size[1 + digits] != '\0')
            return true;
        p = p[len] == '\n' ? p + len + 1 : NULL;
    }
    return false;
}

/* Its signatures (hv_parser_guess). */
static bool guess_bonnie(const char *text)
{
    return strstr(text, "Sequential Output") != NULL || strstr(text, "Sequential Create") != NULL ||
           strstr(text, "format_version,bonnie_version") != NULL ||
           (strncmp(text, "1.9", 3) == 0 && text[3] >= '0' && text[3] <= '9' && text[4] == ',') ||
           bonnie10_csv_line(text);
}

static const char *const aliases[] = {"bonnie++", NULL};

/* What was run: the file size (-s; unknown in a table pasted without its
 * rows' labels, where an import may give it) and the chunk size the 1.9x
 * CSV prints. */
static const struct hv_identity_field identity[] = {
    {"size", "file_size", HV_ID_SIZE, NULL, false},
    {"chunk", "chunk_size", HV_ID_SIZE, NULL, false},
    {0},
};

/* What else its runs share when they repeat one workload. */
static const char *const alike[] = {
    "name",     "file_size", "chunk_size", "concurrency",     "num_files",
    "max_size", "min_size",  "num_dirs",   "file_chunk_size", NULL};

const struct hv_tool_parser hv_tool_parser_bonnie = {
    .name = "bonnie",
    .display = "bonnie++",
    .kind = "disk",
    .forms = "CSV (1.0x, 1.9x/2.0, also -x N), the human-readable table (1.0x, 1.9x/2.0, "
             "bon_csv2txt's, also as posts quote it), or both as bonnie++ prints them; several "
             "one after another",
    .parse = parse_bonnie,
    .parse_table = parse_bonnie_table,
    .aliases = aliases,
    .guess = guess_bonnie,
    .identity = identity,
    .alike = alike,
    .engine = &hv_engine_def_disk_bonnie,
};
