/* parse_iperf.c — iperf 2: its CSV report (-y C) or its text report, of
 * the client or the server, TCP or UDP.
 *
 * A run's figure is its whole-test line: the "[SUM]" line (-P N) whose
 * interval starts at 0 and ends last, else the sum of every stream's
 * whole-test line (iperf 2.1's CSV prints no sum line; the interval lines
 * of -i are left out). TCP gives net.tcp.gbps; UDP gives net.udp.gbps and,
 * from the receiver's report (the server's, or the "Server Report" the
 * client prints), net.udp.jitter_ms and net.udp.loss_pct. The text report
 * rounds to three digits ("13.0 Gbits/sec"); the CSV has bits per second.
 * A report of several tests one after the other (a server's log, or
 * reports saved into one file) is refused, naming the line where the next
 * test starts: its streams would add up as if they ran at once.
 *
 * The interval lines of -i become samples of the headline metric: the
 * "[SUM]" interval lines when there are any, else every stream's lines of
 * one interval added up (iperf 2.1's CSV has no sum lines). iperf 2 has no
 * warm-up of its own, so t counts from the start of the test; a worker
 * drops its warm-up itself.
 *
 * The file ends with the tool's description, its line of lib/tools.def:
 * its engine, hv_engine_def_net_iperf, and hv_tool_parser_iperf (the
 * parser, its signature, what its runs share). */
#include "params.h"
#include "parse_util.h"
#include "grow.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL        "iperf"
#define MAX_STREAMS 1024

/* The whole-test figure of one stream (or of the sum). */
struct stream {
    long id; /* -1 for the sum */
    double end, bytes, bps;
    bool udp; /* jitter and loss known */
    double jitter_ms, loss_pct;
    double lport, rport; /* the connection's ports (CSV), 0 when unknown */
};

/* One result line: a stream's (or the sum's) figure over an interval. */
struct line {
    long id;
    double start, end, bps;
    double lport, rport; /* as in struct stream */
    bool udp;
    int no; /* its line in the file */
};

struct report {
    struct stream streams[MAX_STREAMS];
    size_t n;
    struct stream sum;
    bool has_sum;
    int results;        /* result lines seen, whole-test or interval */
    struct line *lines; /* every result line, for the samples */
    size_t n_lines, cap_lines;
};

/* Remembers a result line for the samples. */
static int remember(struct report *r, const struct stream *s, double start, int no)
{
    if (hv_grow(&r->lines, &r->cap_lines, r->n_lines, sizeof *r->lines, 64) != 0)
        return -1;
    r->lines[r->n_lines++] =
        (struct line){s->id, start, s->end, s->bps, s->lport, s->rport, s->udp, no};
    return 0;
}

/* The earlier CSV line that says what line does: the same stream of the
 * same connection over the same interval, from the same side (a UDP
 * sender's line and the receiver's report differ in that). iperf prints
 * each once, so a repeat is a second report pasted into the file. NULL
 * when there is none, or for the text report, whose lines name no
 * connection. */
static const struct line *repeated(const struct report *r, const struct stream *s, double start)
{
    for (size_t i = 0; i < r->n_lines && s->lport > 0; i++) {
        const struct line *l = &r->lines[i];
        if (l->id == s->id && l->lport == s->lport && l->rport == s->rport && l->udp == s->udp &&
            l->start == start && l->end == s->end)
            return l;
    }
    return NULL;
}

/* Keeps line as the whole-test figure of its stream when it is one: the
 * interval starts at 0, and it ends no earlier than what was kept (a later
 * line wins a tie). A receiver's UDP line beats a sender's. */
static int keep(struct report *r, const struct stream *line, double start, int no, char *err,
                size_t errlen)
{
    /* A stream of one test keeps its connection; the same stream number
     * on another connection is the next test of a file that holds
     * several. */
    for (size_t i = 0; i < r->n && line->lport > 0; i++)
        if (r->streams[i].id == line->id && r->streams[i].lport > 0 &&
            (r->streams[i].lport != line->lport || r->streams[i].rport != line->rport))
            return hv_perr(err, errlen, TOOL,
                           "line %d starts another test (stream %ld again, on another "
                           "connection): the file holds several iperf 2 reports; import each "
                           "test on its own",
                           no, line->id);
    const struct line *twice = repeated(r, line, start);
    if (twice != NULL)
        return hv_perr(err, errlen, TOOL,
                       "line %d repeats line %d (stream %ld, %g-%g s, the same connection): "
                       "the file holds a second report of one test; import it once",
                       no, twice->no, line->id, start, line->end);
    r->results++;
    if (remember(r, line, start, no) != 0)
        return hv_perr(err, errlen, TOOL, "out of memory");
    if (start != 0)
        return 0;
    struct stream *slot = NULL;
    if (line->id < 0) {
        slot = &r->sum;
        if (!r->has_sum) {
            r->has_sum = true;
            *slot = *line;
            return 0;
        }
    } else {
        for (size_t i = 0; i < r->n && slot == NULL; i++)
            if (r->streams[i].id == line->id)
                slot = &r->streams[i];
        if (slot == NULL) {
            if (r->n == MAX_STREAMS)
                return hv_perr(err, errlen, TOOL, "more than %d streams", MAX_STREAMS);
            r->streams[r->n++] = *line;
            return 0;
        }
    }
    if ((line->udp && !slot->udp) || (line->udp == slot->udp && line->end >= slot->end))
        *slot = *line;
    return 0;
}

/* Splits s at commas into at most max fields (pointers into s, which is
 * modified). Returns the count. */
static size_t split_csv(char *s, char **fields, size_t max)
{
    size_t n = 0;
    for (char *p = s; n < max;) {
        fields[n++] = p;
        p = strchr(p, ',');
        if (p == NULL)
            break;
        *p++ = '\0';
    }
    return n;
}

/* Reads "a-b" (spaces allowed around the numbers) into start and end. */
static int read_interval(const char *s, size_t n, double *start, double *end)
{
    const char *dash = memchr(s + 1, '-', n > 1 ? n - 1 : 0);
    if (dash == NULL)
        return -1;
    const char *a = s, *b = dash + 1, *stop = s + n;
    while (a < dash && *a == ' ')
        a++;
    const char *ae = dash;
    while (ae > a && ae[-1] == ' ')
        ae--;
    while (b < stop && *b == ' ')
        b++;
    const char *be = stop;
    while (be > b && be[-1] == ' ')
        be--;
    return hv_pnum(a, (size_t)(ae - a), start) == 0 && hv_pnum(b, (size_t)(be - b), end) == 0 ? 0
                                                                                              : -1;
}

static const char *const csv_names[] = {
    "timestamp",      "local address", "local port", "remote address",  "remote port",
    "stream id",      "interval",      "bytes",      "bits per second", "jitter (ms)",
    "lost datagrams", "datagrams",     "loss %",
};

/* One CSV line into r. */
static int csv_line(char *line, int no, struct report *r, char *err, size_t errlen)
{
    char *f[32];
    size_t nf = split_csv(line, f, 32);
    if (nf < 9)
        return hv_perr(err, errlen, TOOL,
                       "line %d has %zu fields; iperf's CSV lines have at least 9 (cut off?)", no,
                       nf);
    double v[14] = {0};
    char q[40];
    struct stream s = {0};
    double start = 0;
    /* Fields 6 (stream id) to 9 (bits per second), 10 to 13 for UDP. */
    for (size_t i = 5; i < (nf >= 14 ? 13 : 9); i++) {
        int bad =
            i == 6 ? read_interval(f[i], strlen(f[i]), &start, &s.end) : hv_pnum_str(f[i], &v[i]);
        if (bad)
            return hv_perr(err, errlen, TOOL, "line %d, field %zu (%s) is not %s: \"%s\"", no,
                           i + 1, csv_names[i], i == 6 ? "an interval a-b" : "a number",
                           hv_pquote(q, sizeof q, f[i], strlen(f[i])));
    }
    if (!(v[5] >= -1 && v[5] < 1e9))
        return hv_perr(err, errlen, TOOL, "line %d, field 6 (stream id) is out of range", no);
    s.id = (long)v[5];
    s.bytes = v[7];
    s.bps = v[8];
    if (hv_pnum_str(f[2], &s.lport) != 0 || hv_pnum_str(f[4], &s.rport) != 0)
        s.lport = s.rport = 0;
    /* The sender's UDP line says -1 datagrams: it cannot know the loss. */
    if (nf >= 14 && v[11] > 0) {
        s.udp = true;
        s.jitter_ms = v[9];
        s.loss_pct = v[12];
    }
    return keep(r, &s, start, no, err, errlen);
}

/* Multipliers of iperf's units: bits in 1000s, bytes in 1024s. */
static int rate_unit(const char *u, size_t n, double *mult)
{
    static const struct {
        const char *unit;
        double mult;
    } units[] = {
        {"bits/sec", 1},        {"Kbits/sec", 1e3},        {"Mbits/sec", 1e6},
        {"Gbits/sec", 1e9},     {"Tbits/sec", 1e12},       {"Bytes/sec", 8},
        {"KBytes/sec", 8192.0}, {"MBytes/sec", 8388608.0}, {"GBytes/sec", 8589934592.0},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strlen(units[i].unit) == n && memcmp(units[i].unit, u, n) == 0) {
            *mult = units[i].mult;
            return 0;
        }
    return -1;
}

/* The next blank-separated token of line[*pos..len). */
static bool token(const char *line, size_t len, size_t *pos, const char **tok, size_t *tlen)
{
    while (*pos < len && isspace((unsigned char)line[*pos]))
        (*pos)++;
    if (*pos >= len)
        return false;
    *tok = line + *pos;
    while (*pos < len && !isspace((unsigned char)line[*pos]))
        (*pos)++;
    *tlen = (size_t)(line + *pos - *tok);
    return true;
}

/* One result line of the text report: "[  1] 0.0000-2.0073 sec  1.04 GBytes
 * 4.44 Gbits/sec", "[SUM] ...", and for UDP "... 0.004 ms 24/17836
 * (0.13%)". Other lines in brackets (connections, "Sent N datagrams") are
 * not results. Returns 1 for a line that is not a result. */
static int text_line(const char *line, size_t len, int no, struct report *r, char *err,
                     size_t errlen)
{
    const char *close = memchr(line, ']', len);
    const char *sec = NULL;
    for (size_t i = close ? (size_t)(close - line) : len; i + 4 <= len && sec == NULL; i++)
        if (memcmp(line + i, " sec", 4) == 0 && (i + 4 == len || line[i + 4] == ' '))
            sec = line + i;
    if (close == NULL || sec == NULL)
        return 1;
    struct stream s = {0};
    double start = 0;
    const char *id = line + 1;
    while (*id == ' ')
        id++;
    char q[48];
    if (strncmp(id, "SUM", 3) == 0) {
        s.id = -1;
    } else {
        double v;
        if (hv_pnum(id, (size_t)(close - id), &v) != 0 || v < 0 || v >= 1e9)
            return 1;
        s.id = (long)v;
    }
    if (read_interval(close + 1, (size_t)(sec - close - 1), &start, &s.end) != 0)
        return hv_perr(err, errlen, TOOL, "line %d: the interval \"%s\" is not a-b", no,
                       hv_pquote(q, sizeof q, close + 1, (size_t)(sec - close - 1)));
    size_t pos = (size_t)(sec - line) + 4;
    const char *t[4];
    size_t tl[4];
    for (int k = 0; k < 4; k++)
        if (!token(line, len, &pos, &t[k], &tl[k]))
            return hv_perr(err, errlen, TOOL, "line %d ends before its bandwidth (cut off?)", no);
    double mult, transfer;
    if (hv_pnum(t[0], tl[0], &transfer) != 0)
        return hv_perr(err, errlen, TOOL, "line %d: the transfer \"%s\" is not a number", no,
                       hv_pquote(q, sizeof q, t[0], tl[0]));
    if (hv_pnum(t[2], tl[2], &s.bps) != 0)
        return hv_perr(err, errlen, TOOL, "line %d: the bandwidth \"%s\" is not a number", no,
                       hv_pquote(q, sizeof q, t[2], tl[2]));
    if (rate_unit(t[3], tl[3], &mult) != 0)
        return hv_perr(err, errlen, TOOL, "line %d: \"%s\" is not a unit of bandwidth", no,
                       hv_pquote(q, sizeof q, t[3], tl[3]));
    s.bps *= mult;
    /* A UDP receiver goes on with "0.004 ms 24/17836 (0.13%)"; other
     * columns (iperf 2.1's -e: writes, retries, cwnd) are not read. */
    const char *u, *ms;
    size_t ul, msl;
    if (token(line, len, &pos, &u, &ul) && token(line, len, &pos, &ms, &msl) && msl == 2 &&
        memcmp(ms, "ms", 2) == 0) {
        if (hv_pnum(u, ul, &s.jitter_ms) != 0)
            return hv_perr(err, errlen, TOOL, "line %d: the jitter \"%s\" is not a number", no,
                           hv_pquote(q, sizeof q, u, ul));
        const char *pct = NULL;
        size_t pl = 0;
        while (token(line, len, &pos, &u, &ul))
            if (ul >= 4 && u[0] == '(' && memcmp(u + ul - 2, "%)", 2) == 0) {
                pct = u;
                pl = ul;
            }
        if (pct == NULL || hv_pnum(pct + 1, pl - 3, &s.loss_pct) != 0)
            return hv_perr(err, errlen, TOOL, "line %d has a jitter but no loss \"(N%%)\"", no);
        s.udp = true;
    }
    return keep(r, &s, start, no, err, errlen);
}

/* The rest of a header line after "key:", trimmed, into info[name]. */
static void header_value(const char *line, size_t len, const char *key, json_t *info,
                         const char *name)
{
    size_t k = strlen(key);
    while (k < len && line[k] == ' ')
        k++;
    char q[64];
    json_object_set_new(info, name, json_string(hv_pquote(q, sizeof q, line + k, len - k)));
}

/* The iperf 2 CSV timestamp: 14 digits (".000" with -e), a comma. */
static bool is_csv(const char *line, size_t len)
{
    size_t d = 0;
    while (d < len && line[d] >= '0' && line[d] <= '9')
        d++;
    return d == 14 && d < len && (line[d] == ',' || line[d] == '.');
}

static int parse_text(const char *text, struct report *r, json_t *info, const char **protocol,
                      char *err, size_t errlen)
{
    struct hv_plines it;
    hv_plines_init(&it, text);
    while (hv_plines_next(&it)) {
        const char *l = it.s;
        size_t n = it.len;
        if (hv_pstarts(l, n, "Client connecting to ") || hv_pstarts(l, n, "Server listening on ")) {
            json_object_set_new(info, "role", json_string(l[0] == 'C' ? "client" : "server"));
            if (hv_pcontains(l, n, "UDP port"))
                *protocol = "UDP";
        } else if (hv_pstarts(l, n, "TCP window size:")) {
            header_value(l, n, "TCP window size:", info, "window");
        } else if (hv_pstarts(l, n, "UDP buffer size:")) {
            header_value(l, n, "UDP buffer size:", info, "window");
        } else if (n > 0 && l[0] == '[') {
            if (hv_pcontains(l, n, " connected with ") && r->results > 0)
                return hv_perr(err, errlen, TOOL,
                               "line %d starts another test after results (a server's log?): "
                               "import each test on its own",
                               it.no);
            if (text_line(l, n, it.no, r, err, errlen) < 0)
                return -1;
        }
    }
    return 0;
}

static int parse_csv(const char *text, struct report *r, bool *udp, char *err, size_t errlen)
{
    struct hv_plines it;
    hv_plines_init(&it, text);
    char buf[1024];
    while (hv_plines_next(&it)) {
        if (it.len == 0)
            continue;
        if (!is_csv(it.s, it.len) || it.len >= sizeof buf)
            return hv_perr(err, errlen, TOOL, "line %d is not a line of iperf's CSV report", it.no);
        memcpy(buf, it.s, it.len);
        buf[it.len] = '\0';
        int commas = 0;
        for (size_t i = 0; i < it.len; i++)
            commas += buf[i] == ',';
        *udp |= commas >= 13;
        if (csv_line(buf, it.no, r, err, errlen) != 0)
            return -1;
    }
    return 0;
}

/* Whether line l is a whole-test line of its stream (or of the sum): it
 * starts at 0 and ends near where the kept one does. A UDP client prints
 * two (its own and the server's report), which end a little apart. */
static bool whole_test(const struct report *r, const struct line *l)
{
    if (l->start != 0)
        return false;
    double end = 0;
    if (l->id < 0)
        end = r->has_sum ? r->sum.end : 0;
    for (size_t i = 0; i < r->n && l->id >= 0; i++)
        if (r->streams[i].id == l->id)
            end = r->streams[i].end;
    return l->end >= 0.9 * end;
}

static int by_interval(const void *a, const void *b)
{
    const struct line *x = a, *y = b;
    if (x->end != y->end)
        return (x->end > y->end) - (x->end < y->end);
    return (x->start > y->start) - (x->start < y->start);
}

/* The interval lines into samples of metric: the sum's lines, or the
 * streams' lines of each interval added up. Returns the count, or -1. */
static long interval_samples(struct report *r, json_t *run, const char *metric)
{
    bool sums = false;
    size_t k = 0;
    for (size_t i = 0; i < r->n_lines; i++)
        if (!whole_test(r, &r->lines[i]))
            r->lines[k++] = r->lines[i];
    r->n_lines = k;
    for (size_t i = 0; i < r->n_lines; i++)
        sums |= r->lines[i].id < 0;
    if (r->n_lines > 1)
        qsort(r->lines, r->n_lines, sizeof *r->lines, by_interval);
    struct hv_pseries series = {0};
    for (size_t i = 0; i < r->n_lines; i++) {
        const struct line *l = &r->lines[i];
        if (sums != (l->id < 0))
            continue;
        struct hv_pinterval *last = series.n > 0 ? &series.v[series.n - 1] : NULL;
        if (last != NULL && last->start == l->start && last->end == l->end)
            last->value += l->bps;
        else if (hv_pseries_add(&series, l->start, l->end, l->bps) != 0) {
            hv_pseries_free(&series);
            return -1;
        }
    }
    return hv_pseries_emit(&series, run, metric, 0, 1e-9);
}

static int parse_iperf(const char *text, size_t len, json_t *runs, char *err, size_t errlen)
{
    if (hv_pcheck_complete(text, len, TOOL, err, errlen) != 0)
        return -1;
    struct hv_plines it;
    hv_plines_init(&it, text);
    while (hv_plines_next(&it) && it.len == 0)
        ;
    bool csv = is_csv(it.s, it.len), udp = false;
    const char *protocol = "TCP";
    struct report *r = calloc(1, sizeof *r);
    if (r == NULL)
        return hv_perr(err, errlen, TOOL, "out of memory");
    json_t *info = json_object();
    int rc = csv ? parse_csv(text, r, &udp, err, errlen)
                 : parse_text(text, r, info, &protocol, err, errlen);
    if (rc == 0 && r->n == 0 && !r->has_sum)
        rc = hv_pnot_mine(text, "iperf", TOOL,
                          csv ? "no whole-test line (an interval starting at 0) in the CSV"
                              : "no result line (\"[  1] 0.0-10.0 sec ... bits/sec\"): not "
                                "iperf 2's report, or cut off",
                          err, errlen);
    if (rc != 0) {
        free(r->lines);
        free(r);
        json_decref(info);
        return rc;
    }
    if (udp)
        protocol = "UDP";
    struct stream total = r->sum;
    if (!r->has_sum) {
        total = (struct stream){.id = -1};
        for (size_t i = 0; i < r->n; i++) {
            const struct stream *s = &r->streams[i];
            total.bps += s->bps;
            total.bytes += s->bytes;
            total.end = s->end > total.end ? s->end : total.end;
            total.udp |= s->udp;
            total.jitter_ms = s->jitter_ms > total.jitter_ms ? s->jitter_ms : total.jitter_ms;
            total.loss_pct = s->loss_pct > total.loss_pct ? s->loss_pct : total.loss_pct;
        }
    }
    json_t *run = hv_prun_new(runs, TOOL, csv ? "csv" : "text");
    json_object_update(hv_prun_info(run), info);
    json_decref(info);
    info = hv_prun_info(run);
    json_object_set_new(info, "protocol", json_string(protocol));
    json_object_set_new(info, "streams", json_integer(r->n > 0 ? (json_int_t)r->n : 1));
    json_object_set_new(info, "duration_s", json_real(total.end));
    json_object_set_new(info, "sum_line", json_boolean(r->has_sum));
    json_t *detail = json_array();
    for (size_t i = 0; i < r->n; i++)
        json_array_append_new(detail,
                              json_pack("{s:I,s:f,s:f}", "id", (json_int_t)r->streams[i].id, "gbps",
                                        r->streams[i].bps / 1e9, "seconds", r->streams[i].end));
    json_object_set_new(info, "stream_results", detail);
    json_t *metrics = hv_prun_metrics(run);
    bool is_udp = strcmp(protocol, "UDP") == 0;
    rc = hv_pmetric(metrics, is_udp ? "net.udp.gbps" : "net.tcp.gbps", total.bps / 1e9, "Gbit/s",
                    true);
    if (is_udp && total.udp) {
        rc |= hv_pmetric(metrics, "net.udp.jitter_ms", total.jitter_ms, "ms", false);
        rc |= hv_pmetric(metrics, "net.udp.loss_pct", total.loss_pct, "%", false);
    }
    if (rc == 0 && interval_samples(r, run, is_udp ? "net.udp.gbps" : "net.tcp.gbps") < 0)
        rc = -1;
    free(r->lines);
    free(r);
    return rc != 0 ? hv_perr(err, errlen, TOOL, "a value is not a finite number") : 0;
}

/* ---- the description (lib/tools.def) --------------------------------- */

static const char *const sweep_streams[] = {"streams", NULL};

static const struct hv_param_def net_iperf_params[] = {
    HV_PARAM_NET_PEER,
    HV_PARAM_NET_STREAMS,
    HV_PARAM_NET_WINDOW,
    HV_PARAM_NET_SECONDS,
    HV_PARAM_WARMUP("whole seconds of traffic before the measured time (iperf -t warmup + "
                    "seconds); their -i 1 intervals are left out of the samples"),
    {0},
};

static const char *const iperf_metrics[] = {"net.tcp.gbps", NULL};

const struct hv_engine_def hv_engine_def_net_iperf = {
    .kind = "net",
    .engine = "iperf",
    .summary = "iperf 2 client against an iperf 2 server on the peer",
    .metrics = iperf_metrics,
    .sweepable = sweep_streams,
    .needs_peer = true,
    .external = true,
    .params_def = net_iperf_params,
};

/* Whether text has a line that starts with 14 digits and a comma (or the
 * ".000" of -e): the timestamp of iperf 2's CSV report. */
static bool iperf_csv_line(const char *text)
{
    for (const char *p = text; p != NULL && *p != '\0';) {
        size_t digits = strspn(p, "0123456789");
        if (digits == 14 && (p[14] == ',' || p[14] == '.'))
            return true;
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    return false;
}

/* Its signatures (hv_parser_guess). */
static bool guess_iperf(const char *text)
{
    return strstr(text, "Client connecting to ") != NULL ||
           strstr(text, "Server listening on ") != NULL || iperf_csv_line(text);
}

static const char *const aliases[] = {"iperf2", NULL};

/* What was run, as far as the report prints it: the side that saved it
 * (the text report's header), protocol, streams, and the TCP window or
 * UDP buffer the text report's header gives ("4.00 MByte (default)"). */
static const struct hv_identity_field identity[] = {
    {"role", "role", HV_ID_TEXT, NULL, false},
    {"protocol", "protocol", HV_ID_TEXT, NULL, false},
    {"streams", "streams", HV_ID_COUNT, NULL, false},
    {"window", "window", HV_ID_SIZE, NULL, false},
    {0},
};

const struct hv_tool_parser hv_tool_parser_iperf = {
    .name = "iperf",
    .display = "iperf",
    .kind = "net",
    .forms = "CSV (-y C) or the text report of the client or the server",
    .parse = parse_iperf,
    .aliases = aliases,
    .guess = guess_iperf,
    .identity = identity,
    .engine = &hv_engine_def_net_iperf,
};
