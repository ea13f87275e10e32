/* parse_bonnie_table.c — bonnie++'s human-readable table, as bonnie++
 * prints it (1.0x and 1.9x/2.0) and as bon_csv2txt renders a CSV, which is
 * the form mailing lists quote.
 *
 * A section is a title ("Sequential Output" or "Sequential Create"), its
 * column header ("K/sec %CP" or "/sec %CP"; when a report left it out, the
 * "-Per Chr- --Block--" line under the title), then one row per run, each
 * maybe followed by its "Latency" row (1.9x). A row is a label (machine
 * name and file size, or the file count) and cells: a rate and its %CP per
 * test, "+++++ +++" for a test too fast to time, nothing for a test that
 * did not run. Cells are read in order: bonnie++ 1.0x prints a K/s of six
 * digits or more wider than its column (123456 in a 5-wide field), which
 * pushes the rest of the row to the right, so a cell's place is not its
 * column. Only a row that lacks cells (-f, or tests not run) needs the
 * columns to know which tests it has; there each cell is placed in the
 * nearest column after the previous cell's, counting how far the wide
 * cells before it pushed it. The table rounds to three digits ("319m" is
 * 319 MiB/s); 1.0x prints plain K/s.
 *
 * Posts quote tables from the "------Sequential Output------" line on,
 * without the "Version" and "Machine Size" lines and without each row's
 * label: the label column cut off, or blanked. A row whose first cell
 * reaches into the first column has no label; its run's file size (or
 * file count) is unknown, said in info.notes. A post's last line often
 * lacks its newline: a result row is known whole when its last cell ends
 * under its column's "%CP", a latency row when its last cell reads as a
 * time. */
#include "parse_bonnie.h"
#include "parse_util.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL       HV_BONNIE_TOOL
#define N_BLOCKS   6
#define MAX_TOKENS 64

/* Where a section's six test columns end (one past the last character of
 * each "%CP"), and how wide a column is. */
struct columns {
    int end[N_BLOCKS];
    int width;
};

/* A blank-separated token of a line. */
struct tok {
    int start, end;
};

/* The tokens of line into t; more than max counts as max + 1. */
static int tokens(const char *line, struct tok *t, int max)
{
    int n = 0;
    for (int i = 0; line[i] != '\0';) {
        while (line[i] == ' ')
            i++;
        if (line[i] == '\0')
            break;
        if (n == max)
            return max + 1;
        t[n].start = i;
        while (line[i] != '\0' && line[i] != ' ')
            i++;
        t[n++].end = i;
    }
    return n;
}

static int tok_len(const struct tok *t)
{
    return t->end - t->start;
}

/* The six "%CP" of a column header. Returns 0, -1 when the line has none,
 * -2 when it has some but not six (a header cut short). */
static int header_columns(const char *line, struct columns *c)
{
    struct tok t[MAX_TOKENS];
    int n = tokens(line, t, MAX_TOKENS), k = 0;
    for (int i = 0; i < n && i < MAX_TOKENS; i++) {
        if (tok_len(&t[i]) != 3 || memcmp(line + t[i].start, "%CP", 3) != 0)
            continue;
        if (k < N_BLOCKS)
            c->end[k] = t[i].end;
        k++;
    }
    if (k == 0)
        return -1;
    if (k != N_BLOCKS)
        return -2;
    c->width = c->end[1] - c->end[0];
    return c->width > 4 ? 0 : -2;
}

/* The six groups of the line under a title ("-Per Chr- --Block-- ...",
 * "-Create-- --Read--- ..."), whose ends are the columns' ends. */
static int subtitle_columns(const char *line, struct columns *c)
{
    struct tok t[MAX_TOKENS];
    int n = tokens(line, t, MAX_TOKENS), k = 0;
    if (n > MAX_TOKENS)
        return -1; /* more words than any bonnie++ subtitle */
    for (int i = 0; i < n; i++) {
        if (line[t[i].start] != '-')
            continue;
        /* "-Per Chr-" is two tokens. */
        while (line[t[i].end - 1] != '-' && i + 1 < n)
            i++;
        if (k == N_BLOCKS)
            return -1;
        c->end[k++] = t[i].end;
    }
    if (k != N_BLOCKS)
        return -1;
    c->width = c->end[1] - c->end[0];
    return c->width > 4 ? 0 : -1;
}

/* "1G", "500M", "20000M", "1G:32k", "1G::8192:5": a file size as bonnie++
 * and bon_csv2txt print it (upper-case unit; rates are "317k"). */
static bool size_like(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && (isdigit((unsigned char)s[i]) || s[i] == '.'))
        i++;
    return i > 0 && i < n && strchr("KMGT", s[i]) != NULL && (i + 1 == n || s[i + 1] == ':');
}

/* "16", "1", "16:100000:1000/64": a file count. */
static bool count_like(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && isdigit((unsigned char)s[i]))
        i++;
    return i > 0 && (i == n || s[i] == ':');
}

/* How far a rate cell (value and %CP) wider than its column pushes the
 * cells after it to the right. */
static int wide(const struct columns *c, const struct tok *v, const struct tok *cpu)
{
    int vw = tok_len(v) - (c->width - 5), cw = tok_len(cpu) - 3;
    return (vw > 0 ? vw : 0) + (cw > 0 ? cw : 0);
}

/* Places the cells of a row, per tokens each (2: a rate and its %CP, 1: a
 * latency), into the six columns: slot[i] is the column of cell i. A row
 * with all six is read in order; otherwise each cell goes to the nearest
 * column after the previous one, where it would end had no wide value
 * before it (or in it) pushed it right. anchor is where the label ends
 * (-1: no anchor). Returns the number of cells, or -1 with *bad the first
 * cell that fits no column, or with *bad -1 when the last column is empty. */
static int place(const struct columns *c, const struct tok *cells, int m, int per, int anchor,
                 int *slot, int *bad)
{
    int count = m / per;
    *bad = 0;
    if (m % per != 0 || count > N_BLOCKS) {
        *bad = m % per != 0 ? m - 1 : N_BLOCKS * per;
        return -1;
    }
    for (int i = 0; count == N_BLOCKS && i < count; i++)
        slot[i] = i;
    if (count == N_BLOCKS)
        return count;
    int shift = anchor < 0 ? 0 : anchor - (c->end[0] - c->width), next = 0;
    for (int i = 0; i < count; i++) {
        const struct tok *v = &cells[i * per], *last = &cells[i * per + per - 1];
        int nominal = last->end - shift - (per == 2 ? wide(c, v, last) : 0), best = -1,
            dist = INT_MAX;
        for (int k = next; k < N_BLOCKS; k++)
            if (abs(c->end[k] - nominal) < dist) {
                dist = abs(c->end[k] - nominal);
                best = k;
            }
        if (best < 0 || 2 * dist >= c->width) {
            *bad = i * per;
            return -1;
        }
        slot[i] = best;
        shift = last->end - c->end[best];
        next = best + 1;
    }
    /* Every run has its last test (seeks, random deletes): a row without
     * it was cut. */
    if (count > 0 && slot[count - 1] != N_BLOCKS - 1) {
        *bad = -1;
        return -1;
    }
    return count;
}

/* Whether the last of the count rate cells of a row, placed in slot,
 * ends exactly under its column's "%CP" once the pushes of the wide cells
 * and of a wide label (ending at anchor, -1: none) are taken off: a row
 * that was not cut short. */
static bool ends_under_column(const struct columns *c, const struct tok *cells, int count,
                              int anchor, const int *slot)
{
    int shift = anchor < 0 ? 0 : anchor - (c->end[0] - c->width);
    for (int i = 0; i < count; i++)
        shift += wide(c, &cells[2 * i], &cells[2 * i + 1]);
    return count > 0 && cells[2 * count - 1].end - shift == c->end[slot[count - 1]];
}

/* A rate cell: "317k", "319m", "2.0g", plain K/s in 1.0x's "K/sec"
 * columns; per-second columns take plain numbers (and k, m). */
static int read_rate(const char *s, size_t n, enum hv_bonnie_rate rate, double *out)
{
    double mult = 1;
    char last = n > 0 ? (char)tolower((unsigned char)s[n - 1]) : 0;
    if (last == 'k' || last == 'm' || last == 'g') {
        bool kib = rate == HV_BONNIE_KIB_S;
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

/* One placed cell of a result row into res and info. */
static int result_cell(const char *row, const struct tok *v, const struct tok *cpu, int no,
                       int test, struct hv_bonnie_result *res, json_t *info, char *err,
                       size_t errlen)
{
    const struct hv_bonnie_test *d = &hv_bonnie_tests[test];
    const char *vs = row + v->start, *cs = row + cpu->start;
    char q[48];
    if (hv_bonnie_too_fast(vs, (size_t)tok_len(v)) ||
        hv_bonnie_too_fast(cs, (size_t)tok_len(cpu))) {
        json_array_append_new(json_object_get(info, "too_fast"), json_string(d->csv));
        return 0;
    }
    if (read_rate(vs, (size_t)tok_len(v), d->rate, &res->value[test]) != 0)
        return hv_perr(err, errlen, TOOL, "line %d: %s (%s) is not a number: \"%s\"", no, d->csv,
                       d->what, hv_pquote(q, sizeof q, vs, (size_t)tok_len(v)));
    res->has[test] = true;
    double x;
    if (hv_pnum(cs, (size_t)tok_len(cpu), &x) != 0 || x < 0)
        return hv_perr(err, errlen, TOOL, "line %d: the %%CP of %s is not a number: \"%s\"", no,
                       d->csv, hv_pquote(q, sizeof q, cs, (size_t)tok_len(cpu)));
    json_object_set_new(json_object_get(info, "cpu_pct"), d->csv, json_real(x));
    return 0;
}

/* A row pasted without its label: what it would have said is unknown. */
static void unlabelled(json_t *info, int first)
{
    json_object_set_new(info, first == 0 ? "file_size" : "num_files", json_null());
    json_t *notes = json_object_get(info, "notes");
    if (notes == NULL)
        json_object_set_new(info, "notes", notes = json_array());
    json_array_append_new(notes, json_string(first == 0 ? "the table was pasted without its "
                                                          "machine name and file size: the file "
                                                          "size is unknown"
                                                        : "the file tests were pasted without "
                                                          "their file count: the number of "
                                                          "files is unknown"));
}

/* One run's row of a section whose tests start at first: its label into
 * info, its cells into res. A row pasted without its label sets
 * *pasted; *whole (NULL unless the row is the last line, without a
 * newline) says whether it ends under its last column. */
static int result_row(const char *row, int no, const struct columns *c, int first,
                      struct hv_bonnie_result *res, json_t *info, bool *pasted, bool *whole,
                      char *err, size_t errlen)
{
    struct tok t[MAX_TOKENS];
    int n = tokens(row, t, MAX_TOKENS), label = -1;
    char q[48];
    if (n > MAX_TOKENS)
        return hv_perr(err, errlen, TOOL, "line %d has too many cells for a bonnie++ table", no);
    /* The label ends with the file size (or the file count); a name may
     * come before it. A row whose first word reaches into the first
     * column has none: a post quoted it without. */
    bool inside = n > 0 && t[0].end > c->end[0] - c->width;
    for (int i = 0; i < n && label < 0; i++)
        if (first == 0 ? size_like(row + t[i].start, (size_t)tok_len(&t[i]))
                       : !inside && count_like(row + t[i].start, (size_t)tok_len(&t[i])))
            label = i;
    if (label < 0 && !inside)
        return hv_perr(err, errlen, TOOL, "line %d: \"%s\" has no %s where a result row has it", no,
                       hv_pquote(q, sizeof q, row, strlen(row)),
                       first == 0 ? "file size (such as 1G)" : "file count");
    if (label < 0) {
        unlabelled(info, first);
        *pasted = true;
    } else {
        const char *lab = row + t[label].start;
        json_object_set_new(info, first == 0 ? "file_size" : "num_files",
                            json_stringn(lab, strcspn(lab, ": ")));
    }
    if (label > 0)
        json_object_set_new(
            info, "name",
            json_string(hv_pquote(q, sizeof q, row + t[0].start, (size_t)tok_len(&t[0]))));
    /* The cells: the tokens from c0 on. */
    int c0 = label + 1, anchor = label < 0 ? -1 : t[label].end, slot[N_BLOCKS], bad;
    int cells = place(c, &t[c0], n - c0, 2, anchor, slot, &bad);
    if (cells < 0 && bad < 0)
        return hv_perr(err, errlen, TOOL, "line %d ends before the table's last column (cut off?)",
                       no);
    if (cells < 0) {
        const struct tok *b = &t[c0 + bad];
        return hv_perr(err, errlen, TOOL, "line %d: \"%s\" is outside the table's columns", no,
                       hv_pquote(q, sizeof q, row + b->start, (size_t)tok_len(b)));
    }
    for (int i = 0; i < cells; i++)
        if (result_cell(row, &t[c0 + 2 * i], &t[c0 + 1 + 2 * i], no, first + slot[i], res, info,
                        err, errlen) != 0)
            return -1;
    if (whole != NULL)
        *whole = ends_under_column(c, &t[c0], cells, anchor, slot);
    return 0;
}

/* Whether line is a "Latency" row: the word and times, or the times
 * alone (a post cut the word off with the label column). */
static bool latency_like(const char *line)
{
    while (*line == ' ')
        line++;
    size_t n = strcspn(line, " ");
    double us;
    return (n == 7 && strncmp(line, "Latency", 7) == 0) || hv_bonnie_latency(line, n, &us) == 0;
}

/* A "Latency" row: the slowest operation of each test (1.9x). Each cell
 * ends with its unit, so a row cut short fails to read: *whole (NULL
 * unless the row is the last line, without a newline) is set when it
 * reads. */
static int latency_row(const char *row, int no, const struct columns *c, int first,
                       struct hv_bonnie_result *res, bool *whole, char *err, size_t errlen)
{
    struct tok t[MAX_TOKENS];
    int n = tokens(row, t, MAX_TOKENS), slot[N_BLOCKS], bad;
    int skip = n > 0 && tok_len(&t[0]) == 7 && memcmp(row + t[0].start, "Latency", 7) == 0;
    char q[48];
    int cells = n > MAX_TOKENS ? -1 : place(c, t + skip, n - skip, 1, -1, slot, &bad);
    if (cells < 0 && bad < 0 && n <= MAX_TOKENS)
        return hv_perr(err, errlen, TOOL, "line %d ends before the table's last column (cut off?)",
                       no);
    if (cells < 0) {
        const struct tok *b = &t[n > MAX_TOKENS ? skip : skip + bad];
        return hv_perr(err, errlen, TOOL,
                       "line %d: the latency \"%s\" is outside the table's columns", no,
                       hv_pquote(q, sizeof q, row + b->start, (size_t)tok_len(b)));
    }
    for (int i = 0; i < cells; i++) {
        const char *s = row + t[skip + i].start;
        size_t len = (size_t)tok_len(&t[skip + i]);
        int test = first + slot[i];
        if (res->has_lat[test])
            return hv_perr(err, errlen, TOOL, "line %d: a second latency row for one run", no);
        if (hv_bonnie_too_fast(s, len))
            continue;
        if (hv_bonnie_latency(s, len, &res->lat_us[test]) != 0)
            return hv_perr(err, errlen, TOOL,
                           "line %d: the latency of %s is not a time such as 8107us: \"%s\"", no,
                           hv_bonnie_tests[test].csv, hv_pquote(q, sizeof q, s, len));
        res->has_lat[test] = true;
    }
    if (whole != NULL)
        *whole = true;
    return 0;
}

/* The columns of the section whose title is line ti: its header within
 * three lines, else the line under the title. *rows is the first line
 * after them. */
static int section_columns(const struct hv_bonnie_lines *lines, int ti, struct columns *c,
                           int *rows, char *err, size_t errlen)
{
    for (int h = ti + 1; h < lines->n && h <= ti + 3; h++) {
        int rc = header_columns(lines->line[h], c);
        if (rc == 0) {
            *rows = h + 1;
            return 0;
        }
        if (rc == -2)
            break;
    }
    bool cut = ti + 1 >= lines->n;
    for (int h = ti + 1; h < lines->n && h <= ti + 3; h++)
        cut |= strstr(lines->line[h], "%CP") != NULL;
    /* A report that left the header out: the groups under the title. */
    if (!cut && subtitle_columns(lines->line[ti + 1], c) == 0) {
        *rows = ti + 2;
        return 0;
    }
    return hv_perr(err, errlen, TOOL,
                   "line %d: no \"/sec %%CP\" column header follows the title (cut off?)",
                   lines->no[ti]);
}

/* A run's info as the table starts it. */
static json_t *new_info(const char *version)
{
    json_t *info = json_pack("{s:{},s:[]}", "cpu_pct", "too_fast");
    if (info != NULL && version != NULL)
        json_object_set_new(info, "tool_version", json_string(version));
    return info;
}

/* Where a section's runs go: a "Sequential Output" section starts new
 * runs; a "Sequential Create" section fills those of the output section
 * before it, or starts its own (-s 0). */
struct book {
    struct hv_bonnie_result *res;
    json_t *info[HV_BONNIE_MAXRUNS];
    int total;         /* runs so far */
    int io_base, io_n; /* the runs of the last output section */
    bool io_open;      /* no file section read for them yet */
    char version[16];  /* the last "Version" line's */
};

/* Reads the rows of the section at line *i into the book, and where its
 * table starts into found. */
static int read_section(const struct hv_bonnie_lines *lines, int *i, bool io, struct book *b,
                        struct hv_bonnie_found *found, char *err, size_t errlen)
{
    struct columns c;
    int r = 0, rows = 0, first = io ? 0 : HV_BONNIE_IO;
    if (section_columns(lines, *i, &c, &r, err, errlen) != 0)
        return -1;
    int base = io || !b->io_open ? b->total : b->io_base;
    for (; r < lines->n; r++) {
        const char *l = lines->line[r];
        bool *whole = lines->open_end && r == lines->n - 1 ? &found->end_whole : NULL;
        if (strstr(l, "------") != NULL || strncmp(l, "Version", 7) == 0 || hv_bonnie_csv_like(l) ||
            hv_bonnie_chatter(l))
            break;
        if (latency_like(l)) {
            if (rows == 0)
                return hv_perr(err, errlen, TOOL, "line %d: a latency row without a result row",
                               lines->no[r]);
            if (latency_row(l, lines->no[r], &c, first, &b->res[base + rows - 1], whole, err,
                            errlen))
                return -1;
            continue;
        }
        if (base + rows == HV_BONNIE_MAXRUNS)
            return hv_perr(err, errlen, TOOL, "more than %d runs in the output", HV_BONNIE_MAXRUNS);
        json_t **info = &b->info[base + rows];
        if (*info == NULL)
            *info = new_info(b->version[0] ? b->version : NULL);
        if (*info == NULL)
            return hv_perr(err, errlen, TOOL, "out of memory");
        if (result_row(l, lines->no[r], &c, first, &b->res[base + rows], *info, &found->pasted,
                       whole, err, errlen) != 0)
            return -1;
        rows++;
    }
    if (rows == 0)
        return hv_perr(err, errlen, TOOL, "line %d: the table has no result row (cut off?)",
                       lines->no[*i]);
    if (!io && b->io_open && rows != b->io_n)
        return hv_perr(err, errlen, TOOL,
                       "line %d: the table has %d rows of block I/O but %d of file tests (cut "
                       "off?)",
                       lines->no[*i], b->io_n, rows);
    if (io) {
        b->io_base = base;
        b->io_n = rows;
    }
    if (io || !b->io_open) {
        found->first[found->tables++] = base;
        b->total = base + rows;
    }
    b->io_open = io;
    *i = r;
    return 0;
}

int hv_bonnie_tables(const struct hv_bonnie_lines *lines, json_t *runs,
                     struct hv_bonnie_found *found, char *err, size_t errlen)
{
    struct book b = {.res = calloc(HV_BONNIE_MAXRUNS, sizeof *b.res)};
    int rc = b.res != NULL ? 0 : hv_perr(err, errlen, TOOL, "out of memory");
    memset(found, 0, sizeof *found);
    for (int i = 0; rc == 0 && i < lines->n;) {
        const char *l = lines->line[i];
        struct tok t[2];
        if (strncmp(l, "Version", 7) == 0 && tokens(l, t, 2) >= 2 && l[t[1].start] != '-')
            snprintf(b.version, sizeof b.version, "%.*s", tok_len(&t[1]) < 15 ? tok_len(&t[1]) : 15,
                     l + t[1].start);
        bool io = strstr(l, "Sequential Output") != NULL;
        if (!io && strstr(l, "Sequential Create") == NULL) {
            i++;
            continue;
        }
        rc = read_section(lines, &i, io, &b, found, err, errlen);
        found->sections++;
    }
    for (int k = 0; rc == 0 && k < b.total; k++)
        if (hv_bonnie_emit(runs, &b.res[k], b.info[k], "table") != 0)
            rc = hv_perr(err, errlen, TOOL, "a value is not a finite number");
    for (int k = 0; k < HV_BONNIE_MAXRUNS; k++)
        json_decref(b.info[k]);
    free(b.res);
    return rc;
}
