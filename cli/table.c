/* table.c — see table.h. */
#include "table.h"
#include "grow.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/** A table: the column descriptions and a growing array of rows, each row
 *  ncols malloc'd cells. */
struct cli_table {
    const struct cli_column *cols; /**< borrowed from the caller */
    size_t ncols;
    char ***rows; /**< rows[i][j]: cell j of row i, owned */
    size_t nrows;
    size_t cap; /**< allocated length of rows */
};

struct cli_table *cli_table_new(const struct cli_column *cols, size_t ncols)
{
    struct cli_table *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->cols = cols;
    t->ncols = ncols;
    return t;
}

void cli_table_free(struct cli_table *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->nrows; i++) {
        for (size_t j = 0; j < t->ncols; j++)
            free(t->rows[i][j]);
        free(t->rows[i]);
    }
    free(t->rows);
    free(t);
}

int cli_table_add(struct cli_table *t, const char *const *cells)
{
    if (hv_grow(&t->rows, &t->cap, t->nrows, sizeof *t->rows, 16) != 0)
        return -1;
    char **row = calloc(t->ncols, sizeof *row);
    if (row == NULL)
        return -1;
    for (size_t j = 0; j < t->ncols; j++) {
        row[j] = strdup(cells[j] != NULL ? cells[j] : "-");
        if (row[j] == NULL) {
            for (size_t k = 0; k < j; k++)
                free(row[k]);
            free(row);
            return -1;
        }
        cli_scrub(row[j]);
    }
    t->rows[t->nrows++] = row;
    return 0;
}

size_t cli_table_rows(const struct cli_table *t)
{
    return t->nrows;
}

void cli_scrub(char *s)
{
    unsigned char *r = (unsigned char *)s, *w = r;
    while (*r != '\0') {
        if (*r < 0x20 || *r == 0x7f) {
            *w++ = '?';
            r++;
        } else if (r[0] == 0xC2 && r[1] >= 0x80 && r[1] <= 0x9F) {
            /* U+0080..U+009F: one code point, two bytes; U+009B is CSI. */
            *w++ = '?';
            r += 2;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
}

size_t cli_display_width(const char *s)
{
    size_t n = 0;
    /* Continuation bytes (10xxxxxx) belong to the code point before them. */
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++)
        if ((*p & 0xC0) != 0x80)
            n++;
    return n;
}

/** Writes n spaces to f. */
static void put_spaces(FILE *f, size_t n)
{
    while (n-- > 0)
        fputc(' ', f);
}

/** Writes one line of cells padded to widths, then '\n'. Nothing is written
 *  after the last non-empty cell, so lines carry no trailing blanks. */
static void render_line(FILE *f, const struct cli_table *t, const char *const *cells,
                        const size_t *widths)
{
    size_t end = t->ncols;
    while (end > 0 && cells[end - 1][0] == '\0')
        end--;
    for (size_t j = 0; j < end; j++) {
        size_t w = cli_display_width(cells[j]);
        size_t pad = widths[j] > w ? widths[j] - w : 0;
        if (j > 0)
            fputs("  ", f);
        if (t->cols[j].align == CLI_RIGHT)
            put_spaces(f, pad);
        fputs(cells[j], f);
        if (t->cols[j].align == CLI_LEFT && j + 1 < end)
            put_spaces(f, pad);
    }
    fputc('\n', f);
}

char *cli_table_render(const struct cli_table *t)
{
    size_t *widths = calloc(t->ncols ? t->ncols : 1, sizeof *widths);
    const char **headers = calloc(t->ncols ? t->ncols : 1, sizeof *headers);
    char *out = NULL;
    size_t outlen = 0;
    FILE *f = NULL;
    if (widths == NULL || headers == NULL)
        goto done;
    for (size_t j = 0; j < t->ncols; j++) {
        headers[j] = t->cols[j].header;
        widths[j] = cli_display_width(headers[j]);
        for (size_t i = 0; i < t->nrows; i++) {
            size_t w = cli_display_width(t->rows[i][j]);
            if (w > widths[j])
                widths[j] = w;
        }
    }
    f = open_memstream(&out, &outlen);
    if (f == NULL)
        goto done;
    render_line(f, t, headers, widths);
    for (size_t j = 0; j < t->ncols; j++) {
        if (j > 0)
            fputs("  ", f);
        for (size_t k = 0; k < widths[j]; k++)
            fputc('-', f);
    }
    fputc('\n', f);
    for (size_t i = 0; i < t->nrows; i++)
        render_line(f, t, (const char *const *)t->rows[i], widths);
    if (fclose(f) != 0) {
        free(out);
        out = NULL;
    }
done:
    free(widths);
    free(headers);
    return out;
}

int cli_table_print(const struct cli_table *t, FILE *out)
{
    char *s = cli_table_render(t);
    if (s == NULL)
        return -1;
    int rc = fputs(s, out) < 0 ? -1 : 0;
    free(s);
    return rc;
}

/* Four significant digits with trailing zeros dropped ("10", not "10.00"). */
static void four_digits(char *out, size_t len, double a)
{
    int decimals = 3 - (int)floor(log10(a));
    if (decimals < 0)
        decimals = 0;
    snprintf(out, len, "%.*f", decimals, a);
    char *dot = strchr(out, '.');
    if (dot != NULL) {
        char *end = out + strlen(out);
        while (end > dot + 1 && end[-1] == '0')
            end--;
        if (end == dot + 1)
            end = dot;
        *end = '\0';
    }
}

char *cli_fmt_num(char *buf, size_t len, double v)
{
    if (isnan(v)) {
        snprintf(buf, len, "nan");
        return buf;
    }
    if (isinf(v)) {
        snprintf(buf, len, "%s", v > 0 ? "inf" : "-inf");
        return buf;
    }
    double a = fabs(v);
    if (a == 0) {
        snprintf(buf, len, "0");
        return buf;
    }
    if (a < 1e-4 || a >= 1e15) {
        snprintf(buf, len, "%.4g", v);
        return buf;
    }
    /* Large values get an SI suffix rather than digit groups: a comma
     * inside "[1,503, 1,543]" would be ambiguous, and "16.63M" reads
     * faster than 16629526. The suffix is chosen after rounding so that
     * 999960 becomes "1M", not "1000k". */
    static const struct {
        double scale;
        const char *suffix;
    } si[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e5, "k"}};
    char digits[64];
    for (size_t i = 0; i < sizeof si / sizeof si[0]; i++) {
        double rounded = strtod((snprintf(digits, sizeof digits, "%.4g", a), digits), NULL);
        if (rounded >= si[i].scale) {
            double scale = si[i].scale == 1e5 ? 1e3 : si[i].scale;
            four_digits(digits, sizeof digits, a / scale);
            snprintf(buf, len, "%s%s%s", v < 0 ? "-" : "", digits, si[i].suffix);
            return buf;
        }
    }
    four_digits(digits, sizeof digits, a);
    snprintf(buf, len, "%s%s", v < 0 ? "-" : "", digits);
    return buf;
}

char *cli_fmt_pct(char *buf, size_t len, double pct)
{
    double a = fabs(pct);
    if (a >= 10)
        snprintf(buf, len, "%.0f", pct);
    else if (a >= 0.1)
        snprintf(buf, len, "%.1f", pct);
    else
        snprintf(buf, len, "%.2g", pct);
    return buf;
}

char *cli_fmt_half_pct(char *buf, size_t len, bool has_ci, double pct)
{
    if (!has_ci || !isfinite(pct)) {
        snprintf(buf, len, "-");
        return buf;
    }
    char p[32];
    snprintf(buf, len, "±%s%%", cli_fmt_pct(p, sizeof p, pct));
    return buf;
}

char *cli_fmt_interval(char *buf, size_t len, bool has_ci, double low, double high)
{
    if (!has_ci) {
        snprintf(buf, len, "-");
        return buf;
    }
    char l[64], h[64];
    snprintf(buf, len, "[%s, %s]", cli_fmt_num(l, sizeof l, low), cli_fmt_num(h, sizeof h, high));
    return buf;
}

char *cli_fmt_duration(char *buf, size_t len, double seconds)
{
    long long s = isfinite(seconds) && seconds > 0 ? (long long)seconds : 0;
    if (s >= 3600)
        snprintf(buf, len, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(buf, len, "%lld:%02lld", s / 60, s % 60);
    return buf;
}

char *cli_fmt_bar(char *buf, size_t len, double fraction, int width)
{
    if (len < (size_t)width + 3 || width < 1) {
        if (len > 0)
            buf[0] = '\0';
        return buf;
    }
    if (!(fraction > 0))
        fraction = 0;
    if (fraction > 1)
        fraction = 1;
    int filled = (int)floor(fraction * width + 1e-9);
    char *p = buf;
    *p++ = '[';
    for (int i = 0; i < width; i++) {
        if (i < filled - 1 || (i == filled - 1 && fraction >= 1))
            *p++ = '=';
        else if (i == filled - 1)
            *p++ = '>';
        else
            *p++ = ' ';
    }
    *p++ = ']';
    *p = '\0';
    return buf;
}

int cli_percent(double fraction)
{
    if (!(fraction > 0))
        return 0;
    /* The epsilon keeps 0.29 * 100 = 28.999999999999996 from showing 28. */
    double p = floor(fraction * 100 + 1e-9);
    return p > 100 ? 100 : (int)p;
}

char *cli_fmt_time(char *buf, size_t len, const char *iso)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *p = strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm);
    if (p == NULL)
        goto verbatim;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++)
            ;
    long offset = 0;
    if (*p == 'Z') {
        p++;
    } else if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':') {
        int hh, mm;
        if (sscanf(p + 1, "%2d:%2d", &hh, &mm) != 2)
            goto verbatim;
        offset = (*p == '-' ? -1 : 1) * (hh * 3600L + mm * 60L);
        p += 6;
    } else {
        goto verbatim;
    }
    if (*p != '\0')
        goto verbatim;
    time_t t = timegm(&tm) - offset;
    struct tm local;
    if (localtime_r(&t, &local) == NULL || strftime(buf, len, "%Y-%m-%d %H:%M:%S", &local) == 0)
        goto verbatim;
    return buf;
verbatim:
    snprintf(buf, len, "%s", iso);
    return buf;
}
