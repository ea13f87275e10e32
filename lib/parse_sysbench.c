/* parse_sysbench.c — the text sysbench prints for its cpu, memory and
 * fileio tests (sysbench 1.0; 0.4's wording of cpu and memory too).
 *
 * cpu: cpu.sysbench.events_per_s ("events per second", or 0.4's events over
 * total time). memory: mem.sysbench.mbps (its MiB/sec × 1.048576: MB/s as
 * hvbench counts them) and mem.sysbench.ops_per_s. fileio, by its
 * --file-test-mode ("Doing random read test"), the names of fio and the
 * built-in disk engine:
 *
 *   seqwr → seq_write    seqrewr → rewrite    seqrd → seq_read
 *   rndrd → rand_read    rndwr → rand_write   rndrw → randrw_read, randrw_write
 *
 * disk.OP.mbps (read or written MiB/s × 1.048576), disk.OP.iops (reads/s,
 * writes/s) and, for the modes that write, disk.fsync.ops_per_s. Every
 * test reports the latency of one event in ms: its min, avg, max and
 * percentile (95th unless --percentile) become TEST.lat_min_us,
 * lat_avg_us, lat_max_us and lat_p95_us, in µs, where TEST is
 * cpu.sysbench, mem.sysbench, or disk.OP (disk.randrw for rndrw, whose
 * events are reads and writes). sysbench ends every report with the
 * "Threads fairness" section; an output without it was cut off and is
 * refused, even when the figures are already there.
 *
 * --report-interval=N adds a line per interval ("[ 4s ] thds: 2 eps:
 * 7514.09 lat (ms,95%): 0.31", memory: "[ 4s ] 4024.33 MiB/sec", fileio:
 * "[ 1s ] reads: 198.03 MiB/s writes: 0.00 MiB/s ..."): samples of the
 * headline metrics. --report-checkpoints=W prints a whole report at W
 * seconds ("[ 2s ] Checkpoint report:") and starts counting anew, so the
 * final report covers the time after it: hvbench's warm-up. Interval lines
 * stamped at or before the last checkpoint are warm-up and left out
 * (sysbench prints them in either order around the checkpoint's report),
 * the others count from it. A checkpoint's report is not the result: an
 * output that ends after one, before the final report, was cut off.
 *
 * A file may hold several reports one after another (sysbench run again
 * with >>): each starts with sysbench's banner line ("sysbench 1.0.20
 * ...") and is one run.
 *
 * The file ends with the tool's description, its line of lib/tools.def:
 * its engine, hv_engine_def_cpu_sysbench, and hv_tool_parser_sysbench (the
 * parser, its signature, what its runs share). */
#include "params.h"
#include "parse_util.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL "sysbench"

/* The fileio test modes, as sysbench names them in its report. */
static const struct mode {
    const char *doing;    /* "Doing <doing> test" */
    const char *name;     /* --file-test-mode */
    const char *read_op;  /* disk.OP of its reads, or NULL */
    const char *write_op; /* of its writes, or NULL */
    const char *lat_op;   /* disk.OP of its latencies */
} modes[] = {
    {"sequential write (creation)", "seqwr", NULL, "seq_write", "seq_write"},
    {"sequential rewrite", "seqrewr", NULL, "rewrite", "rewrite"},
    {"sequential read", "seqrd", "seq_read", NULL, "seq_read"},
    {"random read", "rndrd", "rand_read", NULL, "rand_read"},
    {"random write", "rndwr", NULL, "rand_write", "rand_write"},
    {"random r/w", "rndrw", "randrw_read", "randrw_write", "randrw"},
};

#define N_MODES (sizeof modes / sizeof modes[0])

/* A figure of the report and whether it was seen. */
struct fig {
    bool seen;
    double v;
};

/* What the report said. */
struct report {
    int line0; /* line number of the report's first line in the file, less 1 */
    bool cpu, memory, complete;
    const struct mode *fileio;
    struct fig eps, events, seconds, ops_per_s, mib_per_s;
    struct fig reads, writes, fsyncs, read_mib, written_mib;
    struct fig lat_min, lat_avg, lat_max, lat_pct;
    double pct;                      /* the percentile of lat_pct: 95 */
    bool in_checkpoint;              /* between "Checkpoint report:" and its end */
    int checkpoints;                 /* checkpoint reports seen */
    double checkpoint_at;            /* the last one's stamp, seconds */
    double checkpoint_len;           /* its "total time" */
    double interval;                 /* --report-interval, seconds */
    struct hv_pseries series;        /* interval lines: events/s, MiB/s, fileio reads */
    struct hv_pseries writes_series; /* fileio's written MiB/s */
};

static int bad_number(int no, const char *what, const char *v, size_t vl, char *err, size_t errlen)
{
    char q[48];
    return hv_perr(err, errlen, TOOL, "line %d: %s is not a number: \"%s\"", no, what,
                   hv_pquote(q, sizeof q, v, vl));
}

/* "[ 4s ] ..." — an intermediate line: its stamp into *t, the rest into
 * rest. False for other lines. */
static bool stamped(const char *l, size_t n, double *t, const char **rest, size_t *rl)
{
    if (n < 5 || l[0] != '[')
        return false;
    const char *close = memchr(l, ']', n);
    if (close == NULL)
        return false;
    const char *a = l + 1, *b = close;
    while (a < b && *a == ' ')
        a++;
    while (b > a && b[-1] == ' ')
        b--;
    if (b == a || b[-1] != 's' || hv_pnum(a, (size_t)(b - a - 1), t) != 0)
        return false;
    *rest = close + 1;
    *rl = (size_t)(l + n - *rest);
    while (*rl > 0 && **rest == ' ')
        (*rest)++, (*rl)--;
    return true;
}

/* The number after label in s[0..sl) ("eps: 7514.09" with label " eps:"),
 * into *v. Returns 1 when the label is absent, 0, or -1 when what follows
 * is not a number (then *at and *al say what it was). */
static int after(const char *s, size_t sl, const char *label, double *v, const char **at,
                 size_t *al)
{
    size_t ll = strlen(label);
    const char *x = NULL;
    for (size_t i = 0; i + ll <= sl && x == NULL; i++)
        if (memcmp(s + i, label, ll) == 0)
            x = s + i + ll;
    if (x == NULL)
        return 1;
    while (x < s + sl && *x == ' ')
        x++;
    size_t xl = 0;
    while (x + xl < s + sl && x[xl] != ' ')
        xl++;
    *at = x;
    *al = xl;
    return hv_pnum(x, xl, v) == 0 && *v >= 0 ? 0 : -1;
}

/* One intermediate line into r: a checkpoint's start, or an interval. */
static int intermediate(const char *l, size_t n, int no, struct report *r, char *err, size_t errlen)
{
    double t, v, w = 0;
    const char *s, *at = NULL;
    size_t sl, al = 0;
    if (!stamped(l, n, &t, &s, &sl))
        return 1;
    char q[48];
    int rc;
    if (hv_pstarts(s, sl, "Checkpoint report:")) {
        r->in_checkpoint = true;
        r->complete = false;
        r->checkpoint_at = t;
        return 0;
    }
    if (hv_pstarts(s, sl, "thds:")) {
        if ((rc = after(s, sl, " eps:", &v, &at, &al)) > 0)
            return 0; /* another test's figures */
        if (rc < 0)
            return hv_perr(err, errlen, TOOL, "line %d: the interval's eps \"%s\" is not a number",
                           no, hv_pquote(q, sizeof q, at, al));
    } else if (hv_pstarts(s, sl, "reads:")) {
        if (after(s, sl, "reads:", &v, &at, &al) != 0 || after(s, sl, "writes:", &w, &at, &al) != 0)
            return hv_perr(err, errlen, TOOL,
                           "line %d: \"%s\" is not \"[ Ns ] reads: X MiB/s writes: Y MiB/s ...\"",
                           no, hv_pquote(q, sizeof q, l, n));
        if (hv_pseries_add(&r->writes_series, t - r->interval, t, w) != 0)
            return hv_perr(err, errlen, TOOL, "out of memory");
    } else if (hv_pcontains(s, sl, " MiB/sec")) {
        size_t vl = strcspn(s, " ");
        if (hv_pnum(s, vl, &v) != 0 || v < 0 || !hv_pstarts(s + vl, sl - vl, " MiB/sec"))
            return hv_perr(err, errlen, TOOL, "line %d: \"%s\" is not \"[ Ns ] X MiB/sec\"", no,
                           hv_pquote(q, sizeof q, l, n));
    } else {
        return 0;
    }
    if (hv_pseries_add(&r->series, t - r->interval, t, v) != 0)
        return hv_perr(err, errlen, TOOL, "out of memory");
    return 0;
}

/* "key: value" with blanks trimmed; false when the line has no colon. */
static bool key_value(const char *l, size_t n, const char **k, size_t *kl, const char **v,
                      size_t *vl)
{
    const char *colon = memchr(l, ':', n);
    if (colon == NULL)
        return false;
    const char *a = l, *b = colon;
    while (a < b && *a == ' ')
        a++;
    while (b > a && b[-1] == ' ')
        b--;
    const char *c = colon + 1, *d = l + n;
    while (c < d && *c == ' ')
        c++;
    while (d > c && d[-1] == ' ')
        d--;
    *k = a;
    *kl = (size_t)(b - a);
    *v = c;
    *vl = (size_t)(d - c);
    return true;
}

static bool key_is(const char *k, size_t kl, const char *name)
{
    return kl == strlen(name) && memcmp(k, name, kl) == 0;
}

/* A number, with the unit suffix given (e.g. "s" in "2.0004s") allowed. */
static int number(const char *v, size_t vl, const char *suffix, double *out)
{
    size_t sl = strlen(suffix);
    if (sl > 0 && vl > sl && memcmp(v + vl - sl, suffix, sl) == 0)
        vl -= sl;
    return hv_pnum(v, vl, out);
}

/* The number in "N (X per second)" / "N (X ops/sec)", X into *out. */
static int per_second(const char *v, size_t vl, double *out)
{
    const char *open = memchr(v, '(', vl);
    if (open == NULL)
        return -1;
    const char *x = open + 1, *e = x;
    while (e < v + vl && *e != ' ' && *e != ')')
        e++;
    return hv_pnum(x, (size_t)(e - x), out);
}

/* "44996.34 MiB transferred (4497.33 MiB/sec)" (0.4: "MB"; both MiB). */
static int transferred(const char *l, size_t n, double *out)
{
    const char *open = memchr(l, '(', n);
    if (open == NULL)
        return -1;
    const char *x = open + 1, *e = x;
    while (e < l + n && *e != ' ')
        e++;
    if (hv_pnum(x, (size_t)(e - x), out) != 0)
        return -1;
    return hv_pstarts(e, (size_t)(l + n - e), " MiB/sec)") ||
                   hv_pstarts(e, (size_t)(l + n - e), " MB/sec)")
               ? 0
               : -1;
}

/* Reads a figure that must be a number, not negative; what names it. */
static int read_fig(struct fig *f, const char *v, size_t vl, const char *suffix, int no,
                    const char *what, char *err, size_t errlen)
{
    if (number(v, vl, suffix, &f->v) != 0 || f->v < 0)
        return bad_number(no, what, v, vl, err, errlen);
    f->seen = true;
    return 0;
}

/* Report keys kept in info as they are written, and their names there. */
struct key_map {
    const char *key, *name;
};
static const struct key_map options[] = {
    {"block size", "block_size"},
    {"total size", "total_size"},
    {"operation", "operation"},
    {"scope", "scope"},
    {"Extra file open flags", "file_extra_flags"},
    {"Read/Write ratio for combined random IO test", "file_rw_ratio"},
    {NULL, NULL},
};

static const char *lookup(const struct key_map *map, const char *k, size_t kl)
{
    for (; map->key != NULL; map++)
        if (key_is(k, kl, map->key))
            return map->name;
    return NULL;
}

/* A line of the latency section ("min:", "95th percentile:"; 0.4:
 * "approx.  95 percentile: 0.25ms") into r. Returns 1 for other keys. */
static int latency(const char *k, size_t kl, const char *v, size_t vl, int no, struct report *r,
                   json_t *info, char *err, size_t errlen)
{
    static const struct {
        const char *key;
        size_t offset;
    } keys[] = {
        {"min", offsetof(struct report, lat_min)},
        {"avg", offsetof(struct report, lat_avg)},
        {"max", offsetof(struct report, lat_max)},
    };
    struct fig *f = NULL;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (key_is(k, kl, keys[i].key))
            f = (struct fig *)((char *)r + keys[i].offset);
    double pct = 0;
    if (f == NULL && kl > 11 && memcmp(k + kl - 11, " percentile", 11) == 0) {
        size_t e = kl - 11, b;
        if (e >= 2 && (memcmp(k + e - 2, "th", 2) == 0 || memcmp(k + e - 2, "st", 2) == 0 ||
                       memcmp(k + e - 2, "nd", 2) == 0 || memcmp(k + e - 2, "rd", 2) == 0))
            e -= 2;
        b = e;
        while (b > 0 && ((k[b - 1] >= '0' && k[b - 1] <= '9') || k[b - 1] == '.'))
            b--;
        if (hv_pnum(k + b, e - b, &pct) != 0 || !(pct > 0 && pct <= 100))
            return bad_number(no, "the latency percentile", k, kl, err, errlen);
        f = &r->lat_pct;
        r->pct = pct;
    }
    struct fig sum;
    if (f == NULL && key_is(k, kl, "sum"))
        f = &sum;
    if (f == NULL)
        return 1;
    if (read_fig(f, v, vl, "ms", no, "a latency", err, errlen) != 0)
        return -1;
    char name[24];
    if (f == &r->lat_pct)
        snprintf(name, sizeof name, "p%g", pct);
    else
        snprintf(name, sizeof name, "%.*s", (int)kl, k);
    json_object_set_new(json_object_get(info, "latency_ms"), name, json_real(f->v));
    return 0;
}

/* A fileio line: the test mode, the options without a colon, the File
 * operations and Throughput figures. Returns 1 for other lines. */
static int fileio_line(const char *l, size_t n, int no, struct report *r, json_t *info, char *err,
                       size_t errlen)
{
    char q[64];
    for (size_t i = 0; i < N_MODES; i++) {
        char doing[64];
        snprintf(doing, sizeof doing, "Doing %s test", modes[i].doing);
        if (n == strlen(doing) && memcmp(l, doing, n) == 0) {
            r->fileio = &modes[i];
            json_object_set_new(info, "file_test_mode", json_string(modes[i].name));
            return 0;
        }
    }
    /* The options fileio prints without a colon: "Block size 16KiB". */
    static const struct {
        const char *prefix, *contains, *suffix, *key;
    } opts[] = {
        {"Block size ", "", "", "file_block_size"},
        {"", " total file size", " total file size", "file_total_size"},
        {"", " files, ", "", "files"},
        {"Using ", " I/O mode", " mode", "file_io_mode"},
        {"Periodic FSYNC enabled, ", "", "", "file_fsync"},
    };
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        size_t pl = strlen(opts[i].prefix), sl = strlen(opts[i].suffix);
        if (!hv_pstarts(l, n, opts[i].prefix) || !hv_pcontains(l, n, opts[i].contains) ||
            n < pl + sl || memcmp(l + n - sl, opts[i].suffix, sl) != 0)
            continue;
        json_object_set_new(info, opts[i].key,
                            json_string(hv_pquote(q, sizeof q, l + pl, n - pl - sl)));
        return 0;
    }
    const char *k, *v;
    size_t kl, vl;
    if (!key_value(l, n, &k, &kl, &v, &vl))
        return 1;
    static const struct {
        const char *key, *what;
        size_t offset;
    } figs[] = {
        {"reads/s", "reads/s", offsetof(struct report, reads)},
        {"writes/s", "writes/s", offsetof(struct report, writes)},
        {"fsyncs/s", "fsyncs/s", offsetof(struct report, fsyncs)},
        {"read, MiB/s", "read MiB/s", offsetof(struct report, read_mib)},
        {"written, MiB/s", "written MiB/s", offsetof(struct report, written_mib)},
    };
    for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++)
        if (key_is(k, kl, figs[i].key))
            return read_fig((struct fig *)((char *)r + figs[i].offset), v, vl, "", no, figs[i].what,
                            err, errlen);
    return 1;
}

/* The lines that say which test ran and the totals of memory's report. */
static int test_line(const char *l, size_t n, int no, struct report *r, char *err, size_t errlen)
{
    char q[64];
    if (hv_pcontains(l, n, "Prime numbers limit") || hv_pstarts(l, n, "CPU speed:") ||
        hv_pcontains(l, n, "Doing CPU performance benchmark") ||
        hv_pcontains(l, n, "Maximum prime number checked"))
        r->cpu = true;
    if (hv_pcontains(l, n, "memory speed test") || hv_pcontains(l, n, "memory operations speed"))
        r->memory = true;
    if (!hv_pcontains(l, n, " transferred ("))
        return 1;
    if (transferred(l, n, &r->mib_per_s.v) != 0 || r->mib_per_s.v < 0)
        return hv_perr(err, errlen, TOOL,
                       "line %d: \"%s\" is not \"N MiB transferred (X MiB/sec)\"", no,
                       hv_pquote(q, sizeof q, l, n));
    r->mib_per_s.seen = r->memory = true;
    return 0;
}

/* One "key: value" line of the report into r and info. */
static int read_pair(const char *k, size_t kl, const char *v, size_t vl, int no, struct report *r,
                     json_t *info, char *err, size_t errlen)
{
    double x;
    char q[64];
    if (key_is(k, kl, "events per second"))
        return read_fig(&r->eps, v, vl, "", no, "events per second", err, errlen);
    if (key_is(k, kl, "total time")) {
        if (read_fig(&r->seconds, v, vl, "s", no, "total time", err, errlen) != 0)
            return -1;
        json_object_set_new(info, "duration_s", json_real(r->seconds.v));
    } else if (key_is(k, kl, "total number of events")) {
        return read_fig(&r->events, v, vl, "", no, "total number of events", err, errlen);
    } else if (key_is(k, kl, "Total operations") || key_is(k, kl, "Operations performed")) {
        if (per_second(v, vl, &r->ops_per_s.v) != 0 || r->ops_per_s.v < 0)
            return bad_number(no, "operations per second", v, vl, err, errlen);
        r->ops_per_s.seen = true;
    } else if (key_is(k, kl, "Number of threads")) {
        if (hv_pnum(v, vl, &x) != 0 || x < 0 || x > 1e9)
            return bad_number(no, "the number of threads", v, vl, err, errlen);
        json_object_set_new(info, "threads", json_integer((json_int_t)x));
    } else if (key_is(k, kl, "Prime numbers limit") ||
               key_is(k, kl, "Maximum prime number checked in CPU test")) {
        if (hv_pnum(v, vl, &x) != 0 || x < 0 || x > 1e15)
            return bad_number(no, "the prime numbers limit", v, vl, err, errlen);
        json_object_set_new(info, "max_prime", json_integer((json_int_t)x));
    } else if (lookup(options, k, kl) != NULL) {
        json_object_set_new(info, lookup(options, k, kl),
                            json_string(hv_pquote(q, sizeof q, v, vl)));
    } else if (key_is(k, kl, "execution time (avg/stddev)")) {
        /* The end of a report: a checkpoint's, or the final one. */
        if (r->in_checkpoint) {
            r->in_checkpoint = false;
            r->checkpoints++;
            r->checkpoint_len = r->seconds.v;
        } else {
            r->complete = true;
        }
    } else {
        return latency(k, kl, v, vl, no, r, info, err, errlen) < 0 ? -1 : 0;
    }
    return 0;
}

/* One line of the report into r and info. */
static int read_line(const char *l, size_t n, int no, struct report *r, json_t *info, char *err,
                     size_t errlen)
{
    char q[64];
    if (hv_pstarts(l, n, "FATAL:"))
        return hv_perr(err, errlen, TOOL, "the run failed: %s", hv_pquote(q, sizeof q, l, n));
    int rc = intermediate(l, n, no, r, err, errlen);
    if (rc <= 0)
        return rc;
    if (hv_pstarts(l, n, "sysbench ")) {
        size_t e = 9;
        while (e < n && l[e] != ' ' && l[e] != ':')
            e++;
        json_object_set_new(info, "tool_version",
                            json_string(hv_pquote(q, sizeof q, l + 9, e - 9)));
        return 0;
    }
    if (hv_pstarts(l, n, "Report intermediate results every ")) {
        const char *x = l + 34;
        size_t xl = 0;
        while (xl < n - 34 && x[xl] != ' ')
            xl++;
        if (hv_pnum(x, xl, &r->interval) != 0 || !(r->interval > 0))
            return bad_number(no, "the report interval", x, xl, err, errlen);
        return 0;
    }
    if ((rc = test_line(l, n, no, r, err, errlen)) <= 0)
        return rc;
    if ((rc = fileio_line(l, n, no, r, info, err, errlen)) <= 0)
        return rc;
    const char *k, *v;
    size_t kl, vl;
    if (!key_value(l, n, &k, &kl, &v, &vl))
        return 0;
    return read_pair(k, kl, v, vl, no, r, info, err, errlen);
}

/* Appends a metric lat_<what>_us of prefix when the report had it. */
static int lat_metric(json_t *m, const char *prefix, const char *what, const struct fig *f)
{
    char name[80];
    snprintf(name, sizeof name, "%s.lat_%s_us", prefix, what);
    return f->seen ? hv_pmetric(m, name, f->v * 1000.0, "us", false) : 0;
}

/* The latency metrics of the run: min, avg, max and the percentile. */
static int lat_metrics(json_t *m, const char *prefix, const struct report *r)
{
    char pct[16];
    snprintf(pct, sizeof pct, "p%g", r->pct);
    return lat_metric(m, prefix, "min", &r->lat_min) | lat_metric(m, prefix, "avg", &r->lat_avg) |
           lat_metric(m, prefix, "max", &r->lat_max) | lat_metric(m, prefix, pct, &r->lat_pct);
}

/* The metrics and samples of a fileio report. */
static int fileio_metrics(struct report *r, json_t *run, char *err, size_t errlen)
{
    const struct mode *md = r->fileio;
    json_t *m = hv_prun_metrics(run);
    json_object_set_new(hv_prun_info(run), "test", json_string("fileio"));
    /* A fileio output is a disk measurement whichever tool row read it. */
    json_object_set_new(hv_prun_info(run), "kind", json_string("disk"));
    if (!r->reads.seen || !r->writes.seen || !r->fsyncs.seen || !r->read_mib.seen ||
        !r->written_mib.seen)
        return hv_perr(err, errlen, TOOL,
                       "the fileio report lacks its \"File operations\" or \"Throughput\" figures "
                       "(sysbench 1.0's report is read)");
    char name[64];
    int rc = 0;
    double offset = r->checkpoints > 0 ? r->checkpoint_at : 0;
    for (int d = 0; d < 2; d++) {
        const char *op = d == 0 ? md->read_op : md->write_op;
        if (op == NULL)
            continue;
        snprintf(name, sizeof name, "disk.%s.mbps", op);
        rc |= hv_pmetric(m, name, (d == 0 ? r->read_mib.v : r->written_mib.v) * 1.048576, "MB/s",
                         true);
        snprintf(name, sizeof name, "disk.%s.iops", op);
        rc |= hv_pmetric(m, name, d == 0 ? r->reads.v : r->writes.v, "IO/s", true);
        snprintf(name, sizeof name, "disk.%s.mbps", op);
        if (hv_pseries_emit(d == 0 ? &r->series : &r->writes_series, run, name, offset, 1.048576) <
            0)
            rc = -1;
    }
    if (md->write_op != NULL)
        rc |= hv_pmetric(m, "disk.fsync.ops_per_s", r->fsyncs.v, "ops/s", true);
    snprintf(name, sizeof name, "disk.%s", md->lat_op);
    rc |= lat_metrics(m, name, r);
    return rc != 0 ? hv_perr(err, errlen, TOOL, "a value is not a finite number") : 0;
}

/* The metrics and samples of a cpu or memory report. */
static int cpu_memory_metrics(struct report *r, json_t *run, char *err, size_t errlen)
{
    json_t *m = hv_prun_metrics(run), *info = hv_prun_info(run);
    double offset = r->checkpoints > 0 ? r->checkpoint_at : 0;
    if (hv_pseries_emit(&r->series, run,
                        r->memory ? "mem.sysbench.mbps" : "cpu.sysbench.events_per_s", offset,
                        r->memory ? 1.048576 : 1.0) < 0)
        return hv_perr(err, errlen, TOOL, "an interval's value is not a finite number");
    int rc = 0;
    if (r->memory) {
        json_object_set_new(info, "test", json_string("memory"));
        if (!r->mib_per_s.seen)
            return hv_perr(err, errlen, TOOL, "no \"MiB transferred (X MiB/sec)\" line");
        rc |= hv_pmetric(m, "mem.sysbench.mbps", r->mib_per_s.v * 1.048576, "MB/s", true);
        if (r->ops_per_s.seen)
            rc |= hv_pmetric(m, "mem.sysbench.ops_per_s", r->ops_per_s.v, "ops/s", true);
        rc |= lat_metrics(m, "mem.sysbench", r);
    } else {
        json_object_set_new(info, "test", json_string("cpu"));
        if (!r->eps.seen && r->events.seen && r->seconds.seen && r->seconds.v > 0)
            r->eps = (struct fig){true, r->events.v / r->seconds.v};
        if (!r->eps.seen)
            return hv_perr(err, errlen, TOOL, "no \"events per second\" (nor events and time)");
        rc |= hv_pmetric(m, "cpu.sysbench.events_per_s", r->eps.v, "events/s", true);
        rc |= lat_metrics(m, "cpu.sysbench", r);
    }
    return rc != 0 ? hv_perr(err, errlen, TOOL, "a value is not a finite number") : 0;
}

/* Checks that the report is whole and appends its run. */
static int emit_report(const char *text, struct report *r, json_t *info, json_t *runs, char *err,
                       size_t errlen)
{
    if (!r->cpu && !r->memory && r->fileio == NULL)
        return hv_pnot_mine(text, "sysbench", TOOL,
                            "neither a cpu, a memory nor a fileio test report (only those are "
                            "read)",
                            err, errlen);
    if (!r->complete && r->checkpoints > 0)
        return hv_perr(err, errlen, TOOL,
                       "the output has the checkpoint's report (--report-checkpoints) but the "
                       "final report ends before its \"Threads fairness\" section (cut off?)");
    if (!r->complete)
        return hv_perr(err, errlen, TOOL,
                       "the report ends before its \"Threads fairness\" section (cut off?)");
    json_t *run = hv_prun_new(runs, TOOL, "text");
    if (run == NULL)
        return hv_perr(err, errlen, TOOL, "out of memory");
    json_object_update(hv_prun_info(run), info);
    if (r->checkpoints > 0) {
        json_object_set_new(hv_prun_info(run), "checkpoints", json_integer(r->checkpoints));
        json_object_set_new(hv_prun_info(run), "checkpoint_at_s", json_real(r->checkpoint_at));
        json_object_set_new(hv_prun_info(run), "warmup_s", json_real(r->checkpoint_len));
    }
    return r->fileio != NULL ? fileio_metrics(r, run, err, errlen)
                             : cpu_memory_metrics(r, run, err, errlen);
}

/* One report: the lines text[0..len) (a copy, NUL-terminated), the first
 * of which is line line0 + 1 of the file. */
static int read_report(const char *text, int line0, json_t *runs, char *err, size_t errlen)
{
    struct report r = {.line0 = line0, .interval = 1, .pct = 95};
    json_t *info = json_pack("{s:{}}", "latency_ms");
    struct hv_plines it;
    hv_plines_init(&it, text);
    int rc = info != NULL ? 0 : hv_perr(err, errlen, TOOL, "out of memory");
    while (rc == 0 && hv_plines_next(&it))
        rc = read_line(it.s, it.len, line0 + it.no, &r, info, err, errlen);
    if (rc == 0)
        rc = emit_report(text, &r, info, runs, err, errlen);
    json_decref(info);
    hv_pseries_free(&r.series);
    hv_pseries_free(&r.writes_series);
    return rc;
}

static int parse_sysbench(const char *text, size_t len, json_t *runs, char *err, size_t errlen)
{
    if (hv_pcheck_complete(text, len, TOOL, err, errlen) != 0)
        return -1;
    /* A report starts with sysbench's banner; a file of several holds
     * one banner each. */
    const char *start = text;
    int line0 = 0, rc = 0;
    size_t part = 0;
    while (rc == 0 && *start != '\0') {
        const char *next = start;
        int lines = 0;
        do {
            const char *nl = strchr(next, '\n');
            next = nl != NULL ? nl + 1 : next + strlen(next);
            lines++;
        } while (*next != '\0' &&
                 !(strncmp(next, "sysbench ", 9) == 0 && next[9] >= '0' && next[9] <= '9'));
        char *copy = strndup(start, (size_t)(next - start));
        rc = copy != NULL ? read_report(copy, line0, runs, err, errlen)
                          : hv_perr(err, errlen, TOOL, "out of memory");
        free(copy);
        if (rc != 0)
            hv_ppart_err(err, errlen, TOOL, part);
        part++;
        line0 += lines;
        start = next;
    }
    return rc;
}

/* ---- the description (lib/tools.def) --------------------------------- */

static const char *const sysbench_tests[] = {"cpu", "memory", NULL};

static const struct hv_param_def cpu_sysbench_params[] = {
    {.name = "test",
     .type = HV_PARAM_ENUM,
     .def = "\"cpu\"",
     .choices = sysbench_tests,
     .description = "sysbench test name"},
    {.name = "threads",
     .type = HV_PARAM_INT,
     .def = "1",
     .min = 1,
     .max = 1024,
     .word = "per-vcpu",
     .description = "sysbench --threads; \"per-vcpu\": one per CPU of the target"},
    HV_PARAM_SECONDS("sysbench --time"),
    {.name = "max_prime",
     .type = HV_PARAM_INT,
     .def = "20000",
     .min = 3,
     .max = 100000000,
     .description = "sysbench --cpu-max-prime (test cpu)"},
    HV_PARAM_WARMUP("whole seconds run before the measured time, not counted (sysbench "
                    "--report-checkpoints, --time warmup + seconds)"),
    {0},
};

/* By test, in the order of its choices. */
static const char *const sysbench_metrics[] = {"cpu.sysbench.events_per_s", "mem.sysbench.mbps",
                                               NULL};

const struct hv_engine_def hv_engine_def_cpu_sysbench = {
    .kind = "cpu",
    .engine = "sysbench",
    .summary = "sysbench cpu (primes) or memory test: events or MiB per second",
    .metrics = sysbench_metrics,
    .external = true,
    .params_def = cpu_sysbench_params,
};

/* Its signatures (hv_parser_guess). */
static bool guess_sysbench(const char *text)
{
    return strncmp(text, "sysbench ", 9) == 0 || strstr(text, "\nsysbench ") != NULL;
}

/* What was run: the test, its mode (fileio's --file-test-mode, memory's
 * --memory-oper), threads, block size (fileio's or memory's) and the cpu
 * test's --cpu-max-prime. */
static const struct hv_identity_field identity[] = {
    {"test", "test", HV_ID_TEXT, NULL, false},
    {"mode", "file_test_mode|operation", HV_ID_TEXT, NULL, false},
    {"threads", "threads", HV_ID_COUNT, NULL, false},
    {"block_size", "file_block_size|block_size", HV_ID_SIZE, NULL, false},
    {"max_prime", "max_prime", HV_ID_COUNT, NULL, false},
    {0},
};

/* What else its runs share when they repeat one workload. */
static const char *const alike[] = {"test",
                                    "threads",
                                    "max_prime",
                                    "block_size",
                                    "total_size",
                                    "operation",
                                    "scope",
                                    "file_test_mode",
                                    "file_block_size",
                                    "file_total_size",
                                    "files",
                                    "file_extra_flags",
                                    "file_rw_ratio",
                                    "file_io_mode",
                                    "file_fsync",
                                    NULL};

const struct hv_tool_parser hv_tool_parser_sysbench = {
    .name = "sysbench",
    .display = "sysbench",
    .kind = "cpu",
    .forms = "text of the cpu, memory or fileio test; several one after another",
    .parse = parse_sysbench,
    .guess = guess_sysbench,
    .identity = identity,
    .alike = alike,
    .engine = &hv_engine_def_cpu_sysbench,
};
