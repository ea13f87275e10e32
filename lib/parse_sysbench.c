/* parse_sysbench.c — the text sysbench prints for its cpu and memory tests
 * (sysbench 1.0; 0.4's wording too).
 *
 * cpu: cpu.sysbench.events_per_s ("events per second", or 0.4's events over
 * total time). memory: mem.sysbench.mbps (its MiB/sec × 1.048576: MB/s as
 * hvbench counts them) and mem.sysbench.ops_per_s. sysbench ends every
 * report with the "Threads fairness" section; an output without it was
 * cut off and is refused, even when the figures are already there.
 *
 * --report-interval=N adds a line per interval ("[ 4s ] thds: 2 eps:
 * 7514.09 lat (ms,95%): 0.31", memory: "[ 4s ] 4024.33 MiB/sec"): samples
 * of the headline metric. --report-checkpoints=W prints a whole report
 * at W seconds ("[ 2s ] Checkpoint report:") and starts counting anew, so
 * the final report covers the time after it: hvbench's warm-up. Interval
 * lines stamped at or before the last checkpoint are warm-up and left out
 * (sysbench prints them in either order around the checkpoint's report),
 * the others count from it. A checkpoint's report is not the result: an
 * output that ends after one, before the final report, was cut off. */
#include "parse_util.h"

#include <stdio.h>
#include <string.h>

#define TOOL "sysbench"

/* What the report said. NaN-free: has_* tells what was seen. */
struct report {
    bool cpu, memory, complete;
    bool has_eps, has_events, has_time, has_ops, has_mib;
    double eps, events, seconds, ops_per_s, mib_per_s;
    bool in_checkpoint;       /* between "Checkpoint report:" and its end */
    int checkpoints;          /* checkpoint reports seen */
    double checkpoint_at;     /* the last one's stamp, seconds */
    double checkpoint_len;    /* its "total time" */
    double interval;          /* --report-interval, seconds */
    struct hv_pseries series; /* interval lines: cpu events/s or MiB/s */
};

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

/* One intermediate line into r: a checkpoint's start, or an interval. */
static int intermediate(const char *l, size_t n, int no, struct report *r, char *err, size_t errlen)
{
    double t, v;
    const char *s;
    size_t sl;
    if (!stamped(l, n, &t, &s, &sl))
        return 1;
    char q[48];
    if (hv_pstarts(s, sl, "Checkpoint report:")) {
        r->in_checkpoint = true;
        r->complete = false;
        r->checkpoint_at = t;
        return 0;
    }
    if (hv_pstarts(s, sl, "thds:")) {
        const char *eps = NULL;
        for (size_t i = 0; i + 5 <= sl && eps == NULL; i++)
            if (memcmp(s + i, " eps:", 5) == 0)
                eps = s + i + 5;
        if (eps == NULL)
            return 0; /* another test's figures */
        while (*eps == ' ')
            eps++;
        size_t el = strcspn(eps, " \n\r");
        if (hv_pnum(eps, el, &v) != 0)
            return hv_perr(err, errlen, TOOL, "line %d: the interval's eps \"%s\" is not a number",
                           no, hv_pquote(q, sizeof q, eps, el));
    } else if (hv_pcontains(s, sl, " MiB/sec")) {
        size_t vl = strcspn(s, " ");
        if (hv_pnum(s, vl, &v) != 0 || !hv_pstarts(s + vl, sl - vl, " MiB/sec"))
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

static int bad_number(int no, const char *what, const char *v, size_t vl, char *err, size_t errlen)
{
    char q[48];
    return hv_perr(err, errlen, TOOL, "line %d: %s is not a number: \"%s\"", no, what,
                   hv_pquote(q, sizeof q, v, vl));
}

/* Report keys kept in info, and their names there. */
struct key_map {
    const char *key, *name;
};
static const struct key_map options[] = {
    {"block size", "block_size"},
    {"total size", "total_size"},
    {"operation", "operation"},
    {"scope", "scope"},
    {NULL, NULL},
};
static const struct key_map latencies[] = {
    {"min", "min"}, {"avg", "avg"}, {"max", "max"}, {"95th percentile", "p95"},
    {"sum", "sum"}, {NULL, NULL},
};

static const char *lookup(const struct key_map *map, const char *k, size_t kl)
{
    for (; map->key != NULL; map++)
        if (key_is(k, kl, map->key))
            return map->name;
    return NULL;
}

/* One line of the report into r and info. */
static int read_line(const char *l, size_t n, int no, struct report *r, json_t *info, char *err,
                     size_t errlen)
{
    const char *k, *v;
    size_t kl, vl;
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
    if (hv_pcontains(l, n, "Prime numbers limit") || hv_pstarts(l, n, "CPU speed:") ||
        hv_pcontains(l, n, "Doing CPU performance benchmark") ||
        hv_pcontains(l, n, "Maximum prime number checked"))
        r->cpu = true;
    if (hv_pcontains(l, n, "memory speed test") || hv_pcontains(l, n, "memory operations speed"))
        r->memory = true;
    if (hv_pcontains(l, n, " transferred (")) {
        if (transferred(l, n, &r->mib_per_s) != 0)
            return hv_perr(err, errlen, TOOL,
                           "line %d: \"%s\" is not \"N MiB transferred (X "
                           "MiB/sec)\"",
                           no, hv_pquote(q, sizeof q, l, n));
        r->has_mib = r->memory = true;
        return 0;
    }
    if (!key_value(l, n, &k, &kl, &v, &vl))
        return 0;
    double x;
    if (key_is(k, kl, "events per second")) {
        if (hv_pnum(v, vl, &r->eps) != 0)
            return bad_number(no, "events per second", v, vl, err, errlen);
        r->has_eps = true;
    } else if (key_is(k, kl, "total time")) {
        if (number(v, vl, "s", &r->seconds) != 0)
            return bad_number(no, "total time", v, vl, err, errlen);
        r->has_time = true;
        json_object_set_new(info, "duration_s", json_real(r->seconds));
    } else if (key_is(k, kl, "total number of events")) {
        if (hv_pnum(v, vl, &r->events) != 0)
            return bad_number(no, "total number of events", v, vl, err, errlen);
        r->has_events = true;
    } else if (key_is(k, kl, "Total operations") || key_is(k, kl, "Operations performed")) {
        if (per_second(v, vl, &r->ops_per_s) != 0)
            return bad_number(no, "operations per second", v, vl, err, errlen);
        r->has_ops = true;
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
    } else if (lookup(latencies, k, kl) != NULL) {
        /* 1.0: "Latency (ms):" then plain numbers; 0.4: "0.23ms". */
        if (number(v, vl, "ms", &x) == 0)
            json_object_set_new(json_object_get(info, "latency_ms"), lookup(latencies, k, kl),
                                json_real(x));
    } else if (key_is(k, kl, "execution time (avg/stddev)")) {
        /* The end of a report: a checkpoint's, or the final one. */
        if (r->in_checkpoint) {
            r->in_checkpoint = false;
            r->checkpoints++;
            r->checkpoint_len = r->seconds;
        } else {
            r->complete = true;
        }
    }
    return 0;
}

int hv_parse_sysbench(const char *text, size_t len, json_t *runs, char *err, size_t errlen)
{
    if (hv_pcheck_complete(text, len, TOOL, err, errlen) != 0)
        return -1;
    struct report r = {.interval = 1};
    json_t *info = json_pack("{s:{}}", "latency_ms");
    struct hv_plines it;
    hv_plines_init(&it, text);
    int rc = 0;
    while (rc == 0 && hv_plines_next(&it))
        rc = read_line(it.s, it.len, it.no, &r, info, err, errlen);
    if (rc == 0 && !r.cpu && !r.memory)
        rc = hv_pnot_mine(text, "sysbench", TOOL,
                          "neither a cpu nor a memory test report (only those are read)", err,
                          errlen);
    if (rc == 0 && !r.complete && r.checkpoints > 0)
        rc = hv_perr(err, errlen, TOOL,
                     "the output has the checkpoint's report (--report-checkpoints) but the final "
                     "report ends before its \"Threads fairness\" section (cut off?)");
    else if (rc == 0 && !r.complete)
        rc = hv_perr(err, errlen, TOOL,
                     "the report ends before its \"Threads fairness\" section (cut off?)");
    json_t *run = NULL;
    if (rc == 0) {
        run = hv_prun_new(runs, TOOL, "text");
        json_object_update(hv_prun_info(run), info);
    }
    json_decref(info);
    if (rc != 0) {
        hv_pseries_free(&r.series);
        return -1;
    }
    info = hv_prun_info(run);
    if (r.checkpoints > 0) {
        json_object_set_new(info, "checkpoints", json_integer(r.checkpoints));
        json_object_set_new(info, "checkpoint_at_s", json_real(r.checkpoint_at));
        json_object_set_new(info, "warmup_s", json_real(r.checkpoint_len));
    }
    double offset = r.checkpoints > 0 ? r.checkpoint_at : 0;
    if (hv_pseries_emit(&r.series, run,
                        r.memory ? "mem.sysbench.mbps" : "cpu.sysbench.events_per_s", offset,
                        r.memory ? 1.048576 : 1.0) < 0)
        return hv_perr(err, errlen, TOOL, "an interval's value is not a finite number");
    json_t *m = hv_prun_metrics(run);
    if (r.memory) {
        json_object_set_new(info, "test", json_string("memory"));
        if (!r.has_mib)
            return hv_perr(err, errlen, TOOL, "no \"MiB transferred (X MiB/sec)\" line");
        rc |= hv_pmetric(m, "mem.sysbench.mbps", r.mib_per_s * 1.048576, "MB/s", true);
        if (r.has_ops)
            rc |= hv_pmetric(m, "mem.sysbench.ops_per_s", r.ops_per_s, "ops/s", true);
    } else {
        json_object_set_new(info, "test", json_string("cpu"));
        if (!r.has_eps && r.has_events && r.has_time && r.seconds > 0) {
            r.eps = r.events / r.seconds;
            r.has_eps = true;
        }
        if (!r.has_eps)
            return hv_perr(err, errlen, TOOL, "no \"events per second\" (nor events and time)");
        rc |= hv_pmetric(m, "cpu.sysbench.events_per_s", r.eps, "events/s", true);
    }
    return rc != 0 ? hv_perr(err, errlen, TOOL, "a value is not a finite number") : 0;
}
