/* parse_bonnie.c — bonnie++: its CSV line (format 1.9x, bonnie++ 1.93 to
 * 2.0; one line per run of -x N, after a header line) and its
 * human-readable table, as bonnie++ prints it and as bon_csv2txt renders a
 * CSV (also several runs), which is the form mailing lists quote.
 *
 * Each test is one row of `tests` below: block write, rewrite and block
 * read give disk.seq_write.mbps, disk.rewrite.mbps, disk.seq_read.mbps
 * (bonnie++'s K/s are KiB: × 1024 / 1e6 gives MB/s as the built-in engine
 * counts them), random seeks disk.seeks.iops, the per-character tests
 * disk.seq_write_char.mbps and disk.seq_read_char.mbps, the file tests
 * disk.file_<seq|rand>_<create|stat|delete>.ops_per_s. bonnie++'s latency
 * of a test is its slowest operation: disk.<test>.lat_max_us. A test that
 * did not run (empty) or ran too fast to measure ("+++++"; bon_csv2txt
 * prints "0k +++") gives no metric and is listed in info.too_fast. The
 * table rounds to three digits ("319m" is 319 MiB/s). */
#include "parse_util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL       "bonnie++"
#define CSV_FIELDS 50
#define N_TESTS    12
#define N_IO       6 /* the first six tests: the "Sequential Output" table */

enum rate { KIB_S, SEEKS_S, OPS_S };

/* The tests in the order of bonnie++'s CSV and tables; the numbers are
 * the 0-based CSV fields of the result, its %CPU and its latency. */
static const struct test {
    const char *csv;    /* bonnie++'s field name */
    const char *what;   /* for messages */
    const char *metric; /* disk.METRIC.<unit> */
    enum rate rate;
    int value, cpu, latency;
} tests[N_TESTS] = {
    {"putc", "per-char write K/s", "seq_write_char", KIB_S, 9, 10, 38},
    {"put_block", "block write K/s", "seq_write", KIB_S, 11, 12, 39},
    {"rewrite", "rewrite K/s", "rewrite", KIB_S, 13, 14, 40},
    {"getc", "per-char read K/s", "seq_read_char", KIB_S, 15, 16, 41},
    {"get_block", "block read K/s", "seq_read", KIB_S, 17, 18, 42},
    {"seeks", "random seeks/s", "seeks", SEEKS_S, 19, 20, 43},
    {"seq_create", "sequential creates/s", "file_seq_create", OPS_S, 26, 27, 44},
    {"seq_stat", "sequential stats/s", "file_seq_stat", OPS_S, 28, 29, 45},
    {"seq_del", "sequential deletes/s", "file_seq_delete", OPS_S, 30, 31, 46},
    {"ran_create", "random creates/s", "file_rand_create", OPS_S, 32, 33, 47},
    {"ran_stat", "random stats/s", "file_rand_stat", OPS_S, 34, 35, 48},
    {"ran_del", "random deletes/s", "file_rand_delete", OPS_S, 36, 37, 49},
};

/* The CSV fields that are not results, for info and messages. */
static const struct {
    int index;
    const char *name;
} csv_info[] = {
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
};

/* One run being read: the results of its tests. */
struct result {
    bool has[N_TESTS], has_lat[N_TESTS];
    double value[N_TESTS]; /* K/s or per second */
    double lat_us[N_TESTS];
};

/* "+++++" (or "+++"): bonnie++ measured the test as too fast. */
static bool too_fast(const char *s, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] != '+')
            return false;
    return true;
}

/* A latency such as "8107us", "12ms", "1.5s", "900ns" in µs. */
static int read_latency(const char *s, size_t n, double *us)
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

/* Adds the metrics and info of one run. */
static int emit_run(json_t *runs, const struct result *res, json_t *info, const char *format)
{
    json_t *run = hv_prun_new(runs, TOOL, format);
    if (run == NULL)
        return -1;
    json_object_update(hv_prun_info(run), info);
    json_t *m = hv_prun_metrics(run);
    char name[64];
    int rc = 0;
    for (int t = 0; t < N_TESTS; t++) {
        const struct test *d = &tests[t];
        if (res->has[t]) {
            static const char *const suffix[] = {"mbps", "iops", "ops_per_s"};
            static const char *const unit[] = {"MB/s", "IO/s", "ops/s"};
            double v = d->rate == KIB_S ? res->value[t] * 1024.0 / 1e6 : res->value[t];
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

/* Reads one CSV line of format 1.9x into res and info. */
static int csv_line(char *line, int no, struct result *res, json_t *info, char *err, size_t errlen)
{
    char *f[CSV_FIELDS + 1];
    size_t nf = 0;
    for (char *p = line; nf <= CSV_FIELDS;) {
        f[nf++] = p;
        p = strchr(p, ',');
        if (p == NULL)
            break;
        *p++ = '\0';
    }
    if (nf != CSV_FIELDS)
        return hv_perr(err, errlen, TOOL,
                       "line %d has %s%zu fields; a bonnie++ 1.9x CSV line has %d%s", no,
                       nf > CSV_FIELDS ? "more than " : "", nf, CSV_FIELDS,
                       nf < CSV_FIELDS ? " (cut off?)" : "");
    char q[40];
    for (size_t i = 0; i < sizeof csv_info / sizeof csv_info[0]; i++) {
        const char *v = f[csv_info[i].index];
        if (*v != '\0')
            json_object_set_new(info, csv_info[i].name,
                                json_string(hv_pquote(q, sizeof q, v, strlen(v))));
    }
    json_object_set(info, "tool_version", json_object_get(info, "bonnie_version"));
    json_t *cpu = json_object(), *fast = json_array();
    json_object_set_new(info, "cpu_pct", cpu);
    json_object_set_new(info, "too_fast", fast);
    for (int t = 0; t < N_TESTS; t++) {
        const struct test *d = &tests[t];
        const char *v = f[d->value], *c = f[d->cpu], *l = f[d->latency];
        double x;
        if (too_fast(v, strlen(v))) {
            json_array_append_new(fast, json_string(d->csv));
        } else if (*v != '\0') {
            if (hv_pnum_str(v, &res->value[t]) != 0 || res->value[t] < 0)
                return hv_perr(err, errlen, TOOL,
                               "line %d, field %d (%s: %s) is not a number: \"%s\"", no,
                               d->value + 1, d->csv, d->what, hv_pquote(q, sizeof q, v, strlen(v)));
            res->has[t] = true;
        }
        if (*c != '\0' && !too_fast(c, strlen(c))) {
            if (hv_pnum_str(c, &x) != 0)
                return hv_perr(err, errlen, TOOL,
                               "line %d, field %d (%s_cpu: %%CPU) is not a number: \"%s\"", no,
                               d->cpu + 1, d->csv, hv_pquote(q, sizeof q, c, strlen(c)));
            json_object_set_new(cpu, d->csv, json_real(x));
        }
        if (*l != '\0' && !too_fast(l, strlen(l))) {
            if (read_latency(l, strlen(l), &res->lat_us[t]) != 0)
                return hv_perr(err, errlen, TOOL,
                               "line %d, field %d (%s_latency) is not a latency such as 8107us: "
                               "\"%s\"",
                               no, d->latency + 1, d->csv, hv_pquote(q, sizeof q, l, strlen(l)));
            res->has_lat[t] = true;
        }
    }
    return 0;
}

static int parse_csv(const char *text, json_t *runs, char *err, size_t errlen)
{
    struct hv_plines it;
    hv_plines_init(&it, text);
    char buf[2048];
    while (hv_plines_next(&it)) {
        if (it.len == 0 || hv_pstarts(it.s, it.len, "format_version,"))
            continue;
        if (!hv_pstarts(it.s, it.len, "1.9") || it.len >= sizeof buf)
            return hv_perr(err, errlen, TOOL,
                           "line %d is not a bonnie++ CSV line (format 1.9x, as bonnie++ 1.93 "
                           "to 2.0 print them)",
                           it.no);
        memcpy(buf, it.s, it.len);
        buf[it.len] = '\0';
        struct result res = {0};
        json_t *info = json_object();
        int rc = csv_line(buf, it.no, &res, info, err, errlen);
        if (rc == 0 && emit_run(runs, &res, info, "csv") != 0)
            rc = hv_perr(err, errlen, TOOL, "line %d: a value is not a finite number", it.no);
        json_decref(info);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* The human-readable table */

#define MAX_LINE 512
#define N_BLOCKS 6

/* Where the six test columns of a table section are: from the header line
 * whose columns read "/sec %CP" (1.03: "K/sec %CP"). A cell belongs to the
 * column its last character falls into; values are right-aligned. */
struct columns {
    int first;         /* where the first column starts */
    int end[N_BLOCKS]; /* one past the last character of each "%CP" */
};

/* A whitespace-separated token of a line. */
struct tok {
    int start, end;
};

static int tokens(const char *line, struct tok *t, int max)
{
    int n = 0;
    for (int i = 0; line[i] != '\0' && n < max;) {
        while (line[i] == ' ')
            i++;
        if (line[i] == '\0')
            break;
        t[n].start = i;
        while (line[i] != '\0' && line[i] != ' ')
            i++;
        t[n++].end = i;
    }
    return n;
}

static int read_columns(const char *line, struct columns *c)
{
    struct tok t[32];
    int n = tokens(line, t, 32), k = 0;
    for (int i = 0; i < n && k < N_BLOCKS; i++) {
        if (t[i].end - t[i].start != 3 || memcmp(line + t[i].start, "%CP", 3) != 0)
            continue;
        if (k == 0)
            c->first = i > 0 ? t[i - 1].start : t[i].start;
        c->end[k++] = t[i].end;
    }
    return k == N_BLOCKS ? 0 : -1;
}

/* The column of a token, -1 left of the columns, N_BLOCKS right of them. */
static int column_of(const struct columns *c, const struct tok *t)
{
    if (t->end <= c->first)
        return -1;
    for (int k = 0; k < N_BLOCKS; k++)
        if (t->end <= c->end[k])
            return k;
    return N_BLOCKS;
}

/* A rate cell: "317k", "319m", "2.0g", plain K/s in 1.03's "K/sec"
 * columns; per-second columns take plain numbers (and k, m). */
static int read_rate(const char *s, size_t n, enum rate rate, double *out)
{
    double mult = 1;
    char last = n > 0 ? (char)tolower((unsigned char)s[n - 1]) : 0;
    if (last == 'k' || last == 'm' || last == 'g') {
        bool kib = rate == KIB_S;
        mult = last == 'k'   ? (kib ? 1 : 1e3)
               : last == 'm' ? (kib ? 1024 : 1e6)
                             : (kib ? 1048576 : 1e9);
        n--;
    }
    if (hv_pnum(s, n, out) != 0 || *out < 0)
        return -1;
    *out *= mult;
    return 0;
}

/* One run's row, and its latency row when one follows, of a section whose
 * tests start at tests[first]. */
static int table_row(const char *row, int no, const struct columns *c, int first,
                     struct result *res, json_t *info, char *err, size_t errlen)
{
    struct tok t[40];
    int n = tokens(row, t, 40);
    const char *cell[N_BLOCKS][2] = {{0}};
    int cl[N_BLOCKS][2] = {{0}}, nc[N_BLOCKS] = {0};
    char q[48];
    json_t *names = json_array();
    for (int i = 0; i < n; i++) {
        int k = column_of(c, &t[i]);
        if (k < 0) {
            json_array_append_new(names, json_string(hv_pquote(q, sizeof q, row + t[i].start,
                                                               (size_t)(t[i].end - t[i].start))));
            continue;
        }
        if (k == N_BLOCKS || nc[k] == 2) {
            json_decref(names);
            return hv_perr(
                err, errlen, TOOL, "line %d: \"%s\" is outside the table's columns", no,
                hv_pquote(q, sizeof q, row + t[i].start, (size_t)(t[i].end - t[i].start)));
        }
        cell[k][nc[k]] = row + t[i].start;
        cl[k][nc[k]++] = t[i].end - t[i].start;
    }
    /* Left of the columns: "name size" (a file count in the file
     * section), or nothing in bonnie++'s own file section. */
    size_t nn = json_array_size(names);
    if (nn > 0) {
        /* bon_csv2txt writes "4G::8192:5": size, chunk, seeks, seekers. */
        const char *last = json_string_value(json_array_get(names, nn - 1));
        json_object_set_new(info, first == 0 ? "file_size" : "num_files",
                            json_stringn(last, strcspn(last, ":")));
        if (nn > 1)
            json_object_set(info, "name", json_array_get(names, 0));
    }
    json_decref(names);
    json_t *cpu = json_object_get(info, "cpu_pct"), *fast = json_object_get(info, "too_fast");
    for (int k = 0; k < N_BLOCKS; k++) {
        const struct test *d = &tests[first + k];
        if (nc[k] == 0)
            continue;
        bool cpu_fast = nc[k] == 2 && too_fast(cell[k][1], (size_t)cl[k][1]);
        if (too_fast(cell[k][0], (size_t)cl[k][0]) || cpu_fast) {
            json_array_append_new(fast, json_string(d->csv));
            continue;
        }
        if (read_rate(cell[k][0], (size_t)cl[k][0], d->rate, &res->value[first + k]) != 0)
            return hv_perr(err, errlen, TOOL, "line %d: %s (%s) is not a number: \"%s\"", no,
                           d->csv, d->what, hv_pquote(q, sizeof q, cell[k][0], (size_t)cl[k][0]));
        res->has[first + k] = true;
        double x;
        if (nc[k] == 2) {
            if (hv_pnum(cell[k][1], (size_t)cl[k][1], &x) != 0)
                return hv_perr(err, errlen, TOOL, "line %d: the %%CP of %s is not a number: \"%s\"",
                               no, d->csv, hv_pquote(q, sizeof q, cell[k][1], (size_t)cl[k][1]));
            json_object_set_new(cpu, d->csv, json_real(x));
        }
    }
    return 0;
}

static int latency_row(const char *row, int no, const struct columns *c, int first,
                       struct result *res, char *err, size_t errlen)
{
    struct tok t[40];
    int n = tokens(row, t, 40);
    char q[48];
    for (int i = 1; i < n; i++) { /* t[0] is "Latency" */
        int k = column_of(c, &t[i]);
        const char *s = row + t[i].start;
        size_t len = (size_t)(t[i].end - t[i].start);
        if (k < 0 || k == N_BLOCKS || res->has_lat[first + k])
            return hv_perr(err, errlen, TOOL,
                           "line %d: the latency \"%s\" is outside the "
                           "table's columns",
                           no, hv_pquote(q, sizeof q, s, len));
        if (too_fast(s, len))
            continue;
        if (read_latency(s, len, &res->lat_us[first + k]) != 0)
            return hv_perr(err, errlen, TOOL,
                           "line %d: the latency of %s is not a time such as 8107us: \"%s\"", no,
                           tests[first + k].csv, hv_pquote(q, sizeof q, s, len));
        res->has_lat[first + k] = true;
    }
    return 0;
}

/* The table's lines, tabs expanded, NUL-terminated, trailing blanks cut. */
struct table {
    char (*line)[MAX_LINE];
    int *no;
    int n;
};

static int read_lines(const char *text, struct table *tb, char *err, size_t errlen)
{
    struct hv_plines it;
    hv_plines_init(&it, text);
    int cap = 0;
    while (hv_plines_next(&it)) {
        if (tb->n == cap) {
            cap = cap ? cap * 2 : 64;
            void *l = realloc(tb->line, (size_t)cap * sizeof *tb->line);
            if (l != NULL)
                tb->line = l;
            void *no = realloc(tb->no, (size_t)cap * sizeof *tb->no);
            if (no != NULL)
                tb->no = no;
            if (l == NULL || no == NULL)
                return hv_perr(err, errlen, TOOL, "out of memory");
        }
        char *out = tb->line[tb->n];
        size_t k = 0;
        for (size_t i = 0; i < it.len; i++) {
            if (k + 9 >= MAX_LINE)
                return hv_perr(err, errlen, TOOL, "line %d is too long for a bonnie++ table",
                               it.no);
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
        tb->no[tb->n++] = it.no;
    }
    return 0;
}

/* Reads the section that starts at line *i (its "Sequential Output" or
 * "Sequential Create" title): the header with the columns, then rows, each
 * maybe followed by its "Latency" row. *i ends after the section. */
static int table_section(const struct table *tb, int *i, int first, struct result *res,
                         json_t **infos, int max_rows, int *rows, char *err, size_t errlen)
{
    struct columns c = {0};
    int h = *i + 1;
    while (h < tb->n && h <= *i + 3 && read_columns(tb->line[h], &c) != 0)
        h++;
    if (h >= tb->n || h > *i + 3)
        return hv_perr(err, errlen, TOOL,
                       "line %d: no \"/sec %%CP\" column header follows the title (cut off?)",
                       tb->no[*i]);
    *rows = 0;
    int r = h + 1;
    for (; r < tb->n; r++) {
        const char *l = tb->line[r];
        if (l[0] == '\0' || strstr(l, "------") != NULL || strncmp(l, "Version", 7) == 0)
            break;
        if (strncmp(l, "Latency", 7) == 0) {
            if (*rows == 0)
                return hv_perr(err, errlen, TOOL, "line %d: a latency row without a result row",
                               tb->no[r]);
            if (latency_row(l, tb->no[r], &c, first, &res[*rows - 1], err, errlen) != 0)
                return -1;
            continue;
        }
        if (*rows == max_rows)
            return hv_perr(err, errlen, TOOL, "more than %d runs in one table", max_rows);
        if (table_row(l, tb->no[r], &c, first, &res[*rows], infos[*rows], err, errlen) != 0)
            return -1;
        (*rows)++;
    }
    if (*rows == 0)
        return hv_perr(err, errlen, TOOL, "line %d: the table has no result row (cut off?)",
                       tb->no[h]);
    *i = r;
    return 0;
}

#define MAX_RUNS 256

static int parse_table(const char *text, json_t *runs, char *err, size_t errlen)
{
    struct table tb = {0};
    struct result *res = calloc(MAX_RUNS, sizeof *res);
    json_t *infos[MAX_RUNS];
    for (int k = 0; k < MAX_RUNS; k++)
        infos[k] = json_pack("{s:{},s:[]}", "cpu_pct", "too_fast");
    int rc = res != NULL ? read_lines(text, &tb, err, errlen)
                         : hv_perr(err, errlen, TOOL, "out of memory");
    int io_rows = -1, file_rows = -1;
    const char *version = NULL;
    for (int i = 0; rc == 0 && i < tb.n;) {
        const char *l = tb.line[i];
        if (strncmp(l, "Version", 7) == 0) {
            struct tok t[4];
            if (tokens(l, t, 2) == 2 && t[1].end - t[1].start < 16 && l[t[1].start] != '-')
                version = l + t[1].start;
        }
        bool io = strstr(l, "Sequential Output") != NULL;
        bool files = strstr(l, "Sequential Create") != NULL;
        if (!io && !files) {
            i++;
            continue;
        }
        if ((io && io_rows >= 0) || (files && file_rows >= 0)) {
            rc = hv_perr(err, errlen, TOOL, "line %d: a second %s table", tb.no[i],
                         io ? "\"Sequential Output\"" : "\"Sequential Create\"");
            break;
        }
        rc = table_section(&tb, &i, io ? 0 : N_IO, res, infos, MAX_RUNS, io ? &io_rows : &file_rows,
                           err, errlen);
    }
    if (rc == 0 && io_rows < 0 && file_rows < 0)
        rc = hv_pnot_mine(text, "bonnie", TOOL,
                          "neither a CSV line nor a table with \"Sequential Output\" or "
                          "\"Sequential Create\": not bonnie++'s output",
                          err, errlen);
    if (rc == 0 && io_rows >= 0 && file_rows >= 0 && io_rows != file_rows)
        rc = hv_perr(err, errlen, TOOL,
                     "the table has %d rows of block I/O but %d of file tests (cut off?)", io_rows,
                     file_rows);
    int nruns = io_rows > file_rows ? io_rows : file_rows;
    for (int k = 0; rc == 0 && k < nruns; k++) {
        if (version != NULL) {
            char v[16];
            snprintf(v, sizeof v, "%.*s", (int)strcspn(version, " "), version);
            json_object_set_new(infos[k], "tool_version", json_string(v));
        }
        if (emit_run(runs, &res[k], infos[k], "table") != 0)
            rc = hv_perr(err, errlen, TOOL, "a value is not a finite number");
    }
    for (int k = 0; k < MAX_RUNS; k++)
        json_decref(infos[k]);
    free(res);
    free(tb.line);
    free(tb.no);
    return rc;
}

/* ------------------------------------------------------------------ */

int hv_parse_bonnie(const char *text, size_t len, json_t *runs, char *err, size_t errlen)
{
    if (hv_pcheck_complete(text, len, TOOL, err, errlen) != 0)
        return -1;
    /* The CSV is a "1.9x," line, maybe after the header line of -x. */
    const char *p = text;
    while (*p == '\n' || *p == '\r')
        p++;
    if (strncmp(p, "format_version,", 15) == 0 ||
        (strncmp(p, "1.9", 3) == 0 && isdigit((unsigned char)p[3]) && p[4] == ','))
        return parse_csv(text, runs, err, errlen);
    size_t commas = 0;
    for (const char *c = p; *c != '\0' && *c != '\n'; c++)
        commas += *c == ',';
    if (commas >= 20)
        return hv_perr(err, errlen, TOOL,
                       "the first line is a CSV line of another format (bonnie++ 1.03?); "
                       "format 1.9x (bonnie++ 1.93 to 2.0) and the table are read");
    return parse_table(text, runs, err, errlen);
}
