/* parse_util.c — see parse_util.h. */
#include "parse_util.h"

#include "parsers.h"
#include "grow.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int hv_perr(char *err, size_t errlen, const char *tool, const char *fmt, ...)
{
    if (err == NULL || errlen == 0)
        return -1;
    int n = snprintf(err, errlen, "%s: ", tool);
    if (n < 0 || (size_t)n >= errlen)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

int hv_pnum(const char *s, size_t n, double *out)
{
    size_t i = 0, digits = 0;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        i++;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
        digits++;
    if (i < n && s[i] == '.')
        for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            digits++;
    if (digits == 0)
        return -1;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t e = ++i, edigits = 0;
        if (i < n && (s[i] == '-' || s[i] == '+'))
            i++;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            edigits++;
        if (edigits == 0 || i - e > 6)
            return -1;
    }
    if (i != n || n >= 64)
        return -1;
    char buf[64];
    memcpy(buf, s, n);
    buf[n] = '\0';
    double v = strtod(buf, NULL);
    if (!isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int hv_pnum_str(const char *s, double *out)
{
    return s == NULL ? -1 : hv_pnum(s, strlen(s), out);
}

char *hv_pquote(char *buf, size_t len, const char *s, size_t n)
{
    if (len == 0)
        return buf;
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < len; i++) {
        unsigned char c = (unsigned char)s[i];
        buf[k++] = c < 0x20 || c >= 0x7f ? '?' : (char)c;
    }
    /* Long quotes end in "..." so the reader knows there was more. */
    if (n >= len && len > 4) {
        memcpy(buf + len - 4, "...", 3);
        k = len - 1;
    }
    buf[k] = '\0';
    return buf;
}

void hv_plines_init(struct hv_plines *it, const char *text)
{
    memset(it, 0, sizeof *it);
    it->next = text;
}

bool hv_plines_next(struct hv_plines *it)
{
    if (it->next == NULL || *it->next == '\0')
        return false;
    const char *s = it->next;
    const char *nl = strchr(s, '\n');
    size_t len = nl != NULL ? (size_t)(nl - s) : strlen(s);
    it->s = s;
    it->newline = nl != NULL;
    it->next = nl != NULL ? nl + 1 : s + len;
    if (len > 0 && s[len - 1] == '\r')
        len--;
    it->len = len;
    it->no++;
    return true;
}

bool hv_pstarts(const char *line, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && memcmp(line, prefix, n) == 0;
}

bool hv_pcontains(const char *line, size_t len, const char *word)
{
    size_t n = strlen(word);
    if (n == 0)
        return true;
    for (size_t i = 0; i + n <= len; i++)
        if (memcmp(line + i, word, n) == 0)
            return true;
    return false;
}

int hv_pcheck_complete(const char *text, size_t len, const char *tool, char *err, size_t errlen)
{
    if (len == 0 || text[len - 1] == '\n')
        return 0;
    int lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    return hv_perr(err, errlen, tool,
                   "the output ends in the middle of line %d, without a newline (cut off? "
                   "if the file is complete, add the final newline)",
                   lines);
}

int hv_pnot_mine(const char *text, const char *self, const char *tool, const char *what, char *err,
                 size_t errlen)
{
    (void)text;
    (void)self;
    hv_perr(err, errlen, tool, "%s", what);
    return HV_PARSE_NOT_MINE;
}

/* The line number of offset off in text. */
static int line_of(const char *text, size_t off)
{
    int line = 1;
    for (size_t i = 0; i < off; i++)
        line += text[i] == '\n';
    return line;
}

json_t *hv_pjson_next(const char *text, size_t len, size_t *pos, const char *tool, char *err,
                      size_t errlen)
{
    if (errlen > 0)
        err[0] = '\0';
    /* The document starts at the first line whose first non-blank
     * character is '{'. */
    size_t start = *pos;
    bool found = false;
    while (start < len) {
        size_t i = start;
        while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r'))
            i++;
        if (i < len && text[i] == '{') {
            start = i;
            found = true;
            break;
        }
        const char *nl = memchr(text + start, '\n', len - start);
        if (nl == NULL)
            break;
        start = (size_t)(nl - text) + 1;
    }
    if (!found) {
        *pos = len;
        return NULL;
    }
    json_error_t je;
    json_t *doc = json_loadb(text + start, len - start, JSON_DISABLE_EOF_CHECK, &je);
    if (doc != NULL) {
        *pos = start + (size_t)je.position;
        if (json_is_object(doc))
            return doc;
        json_decref(doc);
        hv_perr(err, errlen, tool, "the JSON document is not an object");
        return NULL;
    }
    size_t at = je.position > 0 ? (size_t)je.position : 0;
    if (at >= len - start)
        hv_perr(err, errlen, tool, "the JSON ends early at line %d (cut off?)", line_of(text, len));
    else
        hv_perr(err, errlen, tool, "bad JSON at line %d, column %d: %s",
                line_of(text, start) + (je.line > 0 ? je.line - 1 : 0), je.column, je.text);
    return NULL;
}

json_t *hv_pjson_load(const char *text, size_t len, const char *tool, char *err, size_t errlen)
{
    size_t pos = 0;
    json_t *doc = hv_pjson_next(text, len, &pos, tool, err, errlen);
    if (doc == NULL && err[0] == '\0')
        hv_perr(err, errlen, tool, "no JSON object in the output (is it %s's JSON output?)", tool);
    return doc;
}

int hv_ppart_err(char *err, size_t errlen, const char *tool, size_t part)
{
    size_t tl = strlen(tool);
    if (part == 0 || errlen == 0 || strncmp(err, tool, tl) != 0 || err[tl] != ':')
        return -1;
    char msg[HV_PARSE_ERR_MAX];
    snprintf(msg, sizeof msg, "%s", err + tl + 1 + (err[tl + 1] == ' '));
    return hv_perr(err, errlen, tool, "output %zu of the file: %s", part + 1, msg);
}

int hv_pjnum(const json_t *obj, const char *key, const char *where, double *out, const char *tool,
             char *err, size_t errlen)
{
    const json_t *v = json_object_get(obj, key);
    if (v == NULL || json_is_null(v))
        return 1;
    if (!json_is_number(v) || !isfinite(json_number_value(v)))
        return hv_perr(err, errlen, tool, "%s.%s is not a number", where, key);
    *out = json_number_value(v);
    return 0;
}

int hv_pmetric(json_t *metrics, const char *name, double value, const char *unit,
               bool higher_is_better)
{
    if (!isfinite(value))
        return -1;
    size_t i;
    json_t *m;
    json_array_foreach(metrics, i, m)
    {
        if (strcmp(json_string_value(json_object_get(m, "name")), name) == 0)
            return -1;
    }
    json_t *o = json_pack("{s:s,s:f,s:s,s:b}", "name", name, "value", value, "unit", unit,
                          "higher_is_better", higher_is_better);
    return o != NULL ? json_array_append_new(metrics, o) : -1;
}

json_t *hv_prun_new(json_t *runs, const char *tool, const char *format)
{
    json_t *run =
        json_pack("{s:[],s:{s:s,s:s}}", "metrics", "info", "tool", tool, "format", format);
    if (run == NULL || json_array_append_new(runs, run) != 0)
        return NULL;
    return run;
}

json_t *hv_prun_metrics(json_t *run)
{
    return json_object_get(run, "metrics");
}

json_t *hv_prun_info(json_t *run)
{
    return json_object_get(run, "info");
}

int hv_prun_sample(json_t *run, const char *metric, double t, double value)
{
    if (!isfinite(t) || !isfinite(value))
        return -1;
    json_t *samples = json_object_get(run, "samples");
    if (samples == NULL) {
        samples = json_array();
        if (samples == NULL || json_object_set_new(run, "samples", samples) != 0)
            return -1;
    }
    json_t *o = json_pack("{s:s,s:f,s:f}", "metric", metric, "t", t, "value", value);
    return o != NULL ? json_array_append_new(samples, o) : -1;
}

json_t *hv_prun_samples(json_t *run)
{
    return json_object_get(run, "samples");
}

int hv_pseries_add(struct hv_pseries *s, double start, double end, double value)
{
    if (hv_grow(&s->v, &s->cap, s->n, sizeof *s->v, 64) != 0)
        return -1;
    s->v[s->n++] = (struct hv_pinterval){start, end, value};
    return 0;
}

static int by_end(const void *a, const void *b)
{
    double x = ((const struct hv_pinterval *)a)->end, y = ((const struct hv_pinterval *)b)->end;
    return (x > y) - (x < y);
}

long hv_pseries_emit(struct hv_pseries *s, json_t *run, const char *metric, double offset,
                     double scale)
{
    if (s->n > 1)
        qsort(s->v, s->n, sizeof *s->v, by_end);
    double longest = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].end - s->v[i].start > longest)
            longest = s->v[i].end - s->v[i].start;
    long n = 0;
    for (size_t i = 0; i < s->n && n >= 0; i++) {
        const struct hv_pinterval *p = &s->v[i];
        if (p->end - p->start < longest / 2 || p->end <= offset + 1e-9)
            continue;
        n = hv_prun_sample(run, metric, p->end - offset, p->value * scale) == 0 ? n + 1 : -1;
    }
    hv_pseries_free(s);
    return n;
}

void hv_pseries_free(struct hv_pseries *s)
{
    free(s->v);
    *s = (struct hv_pseries){0};
}

int hv_piso(double epoch, char *buf, size_t len)
{
    if (!(epoch >= 0 && epoch < 253402300800.0))
        return -1;
    /* Whole milliseconds, rounded: 1795981130.281 - 0.172 is .109, not
     * the .108999 a double holds. */
    long long ms = llround(epoch * 1000.0);
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    if (gmtime_r(&secs, &tm) == NULL)
        return -1;
    snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
    return 0;
}
