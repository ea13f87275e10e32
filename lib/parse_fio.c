/* parse_fio.c — fio's JSON output (--output-format=json or json+).
 *
 * Each job's "rw" option (its own "job options", else the file's "global
 * options", else fio's default "read") names the operation its reads and
 * writes measure:
 *
 *   read → seq_read        randread → rand_read      rw, readwrite → rw_read, rw_write
 *   write → seq_write      randwrite → rand_write    randrw → randrw_read, randrw_write
 *
 * Per operation: disk.OP.mbps (bw_bytes / 1e6), disk.OP.iops, and from the
 * completion latency (clat_ns; fio 2's clat in µs) disk.OP.lat_p50_us,
 * lat_p95_us, lat_p99_us and lat_max_us — the names of the built-in disk
 * engine. Jobs of one group run at once (numjobs=N without group_reporting
 * gives N jobs): their throughput adds up and each latency is the largest
 * job's. The same operation in two groups (two stonewalled phases) is two
 * measurements of one metric and is refused. Trim jobs are listed in info
 * and not mapped. A job that ended with an error refuses the output.
 *
 * A job run with --steadystate has a "steadystate" object: fio's verdict
 * ("attained", over its steadystate_duration window) and the per-interval
 * figures of that window (data.bw in bytes/s and data.iops, oldest first,
 * the ramp_time left out). They become samples disk.OP.mbps and
 * disk.OP.iops (a mixed job's figures count both directions:
 * disk.rw.mbps, disk.randrw.mbps), added up over the jobs of a group, and
 * the verdict goes into the job's info. A window longer than the run
 * holds zeros after the intervals fio measured: the run's runtime says how
 * many were.
 *
 * A file may hold several reports one after another (`fio ... >> all.json`,
 * `cat a.json b.json`): each is one run, so the import keeps every one as
 * a repetition.
 *
 * The file ends with the tool's description, its line of lib/tools.def:
 * its engine, hv_engine_def_disk_fio, and hv_tool_parser_fio (the
 * parser, its signature, what its runs share). */
#include "params.h"
#include "parse_util.h"
#include "parsers.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL "fio"

/* The operations of fio's rw values, for reads and for writes. */
static const struct rw_map {
    const char *rw;
    const char *read_op, *write_op;
} rw_maps[] = {
    {"read", "seq_read", NULL},
    {"write", NULL, "seq_write"},
    {"randread", "rand_read", NULL},
    {"randwrite", NULL, "rand_write"},
    {"rw", "rw_read", "rw_write"},
    {"readwrite", "rw_read", "rw_write"},
    {"randrw", "randrw_read", "randrw_write"},
};

#define N_OPS 8 /* distinct operation names above */

/* What one operation adds up to over the jobs that measure it. */
struct op_sum {
    const char *op;
    long long group;
    const char *first_job;
    double mbps, iops;
    double pct[3]; /* p50, p95, p99 in µs; < 0 when fio printed none */
    double max_us; /* < 0 when unknown */
};

static const char *const pct_keys[3] = {"50.000000", "95.000000", "99.000000"};
static const char *const pct_names[3] = {"lat_p50_us", "lat_p95_us", "lat_p99_us"};

/* A latency field: hv_pjnum(), and refused when negative (fio prints 0
 * for a direction without IO, never less). */
static int latency_field(const json_t *obj, const char *key, const char *where, double *v,
                         char *err, size_t errlen)
{
    int rc = hv_pjnum(obj, key, where, v, TOOL, err, errlen);
    if (rc == 0 && *v < 0)
        return hv_perr(err, errlen, TOOL, "%s.%s is %.15g: a latency cannot be negative", where,
                       key, *v);
    return rc;
}

/* Reads the completion latency of one direction into s (largest so far). */
static int add_latency(const json_t *dir, const char *where, struct op_sum *s, char *err,
                       size_t errlen)
{
    const json_t *clat = json_object_get(dir, "clat_ns");
    double scale = 1e-3;
    if (clat == NULL) { /* fio before 3.0: microseconds */
        clat = json_object_get(dir, "clat");
        scale = 1.0;
    }
    if (clat == NULL)
        return 0;
    char w[160];
    snprintf(w, sizeof w, "%s.%s", where, scale < 1.0 ? "clat_ns" : "clat");
    if (!json_is_object(clat))
        return hv_perr(err, errlen, TOOL, "%s is not an object", w);
    double v;
    int rc = latency_field(clat, "max", w, &v, err, errlen);
    if (rc < 0)
        return -1;
    if (rc == 0 && v * scale > s->max_us)
        s->max_us = v * scale;
    const json_t *pct = json_object_get(clat, "percentile");
    if (pct == NULL)
        return 0;
    snprintf(w, sizeof w, "%s.%s.percentile", where, scale < 1.0 ? "clat_ns" : "clat");
    if (!json_is_object(pct))
        return hv_perr(err, errlen, TOOL, "%s is not an object", w);
    for (int k = 0; k < 3; k++) {
        rc = latency_field(pct, pct_keys[k], w, &v, err, errlen);
        if (rc < 0)
            return -1;
        if (rc == 0 && v * scale > s->pct[k])
            s->pct[k] = v * scale;
    }
    return 0;
}

/* Finds or starts the sum of op; refuses the same op in another group. */
static struct op_sum *op_slot(struct op_sum *sums, size_t *n, const char *op, long long group,
                              const char *job, char *err, size_t errlen)
{
    for (size_t i = 0; i < *n; i++) {
        if (strcmp(sums[i].op, op) != 0)
            continue;
        if (sums[i].group != group) {
            char a[48], b[48];
            hv_perr(err, errlen, TOOL,
                    "jobs '%s' (group %lld) and '%s' (group %lld) both measure %s in separate "
                    "phases; hvbench keeps one value per metric and run: give each phase its "
                    "own fio run",
                    hv_pquote(a, sizeof a, sums[i].first_job, strlen(sums[i].first_job)),
                    sums[i].group, hv_pquote(b, sizeof b, job, strlen(job)), group, op);
            return NULL;
        }
        return &sums[i];
    }
    struct op_sum *s = &sums[(*n)++];
    *s = (struct op_sum){op, group, job, 0, 0, {-1, -1, -1}, -1};
    return s;
}

/* Adds one direction ("read" or "write") of job to the sum of op.
 * *runtime_ms grows to the direction's runtime. */
static int add_direction(const json_t *job, const char *dir_name, const char *op, const char *where,
                         long long group, const char *name, struct op_sum *sums, size_t *n,
                         double *runtime_ms, char *err, size_t errlen)
{
    const json_t *dir = json_object_get(job, dir_name);
    char w[128];
    snprintf(w, sizeof w, "%s %s", where, dir_name);
    if (dir == NULL)
        return hv_perr(err, errlen, TOOL, "%s is missing", w);
    if (!json_is_object(dir))
        return hv_perr(err, errlen, TOOL, "%s is not an object", w);
    double io_bytes = 0, bw = 0, iops = 0, runtime = 0;
    int rc = hv_pjnum(dir, "io_bytes", w, &io_bytes, TOOL, err, errlen);
    if (rc != 0)
        return rc < 0 ? -1 : hv_perr(err, errlen, TOOL, "%s has no io_bytes", w);
    if (io_bytes <= 0)
        return hv_perr(err, errlen, TOOL, "%s moved no data (rw=%s%s)", w,
                       strncmp(op, "rand", 4) == 0 ? "rand" : "", dir_name);
    rc = hv_pjnum(dir, "bw_bytes", w, &bw, TOOL, err, errlen);
    if (rc < 0)
        return -1;
    if (rc == 0) {
        bw /= 1e6;
    } else { /* fio before 3.0: KiB/s */
        rc = hv_pjnum(dir, "bw", w, &bw, TOOL, err, errlen);
        if (rc != 0)
            return rc < 0 ? -1 : hv_perr(err, errlen, TOOL, "%s has no bw_bytes or bw", w);
        bw = bw * 1024.0 / 1e6;
    }
    rc = hv_pjnum(dir, "iops", w, &iops, TOOL, err, errlen);
    if (rc != 0)
        return rc < 0 ? -1 : hv_perr(err, errlen, TOOL, "%s has no iops", w);
    if (hv_pjnum(dir, "runtime", w, &runtime, TOOL, err, errlen) < 0)
        return -1;
    if (runtime > *runtime_ms)
        *runtime_ms = runtime;
    struct op_sum *s = op_slot(sums, n, op, group, name, err, errlen);
    if (s == NULL)
        return -1;
    s->mbps += bw;
    s->iops += iops;
    return add_latency(dir, w, s, err, errlen);
}

/* A direction took part when it moved data. */
static bool direction_used(const json_t *job, const char *dir_name)
{
    const json_t *v = json_object_get(json_object_get(job, dir_name), "io_bytes");
    return json_is_number(v) && json_number_value(v) > 0;
}

/* The job's options over the global ones, as one new object. */
static json_t *merged_options(const json_t *global, const json_t *own)
{
    json_t *o = json_is_object(global) ? json_deep_copy(global) : json_object();
    if (json_is_object(own))
        json_object_update(o, (json_t *)own);
    return o;
}

/* Reads one job; adds its operations to sums and its summary to jobs_info. */
static int read_job(const json_t *job, size_t index, const json_t *global, struct op_sum *sums,
                    size_t *n, json_t *jobs_info, double *runtime_ms, long long *group, char *err,
                    size_t errlen)
{
    char where[96];
    if (!json_is_object(job))
        return hv_perr(err, errlen, TOOL, "jobs[%zu] is not an object", index);
    const char *name = json_string_value(json_object_get(job, "jobname"));
    if (name == NULL)
        return hv_perr(err, errlen, TOOL, "jobs[%zu] has no jobname", index);
    char q[48];
    snprintf(where, sizeof where, "jobs[%zu] (%s)", index,
             hv_pquote(q, sizeof q, name, strlen(name)));
    double v = 0;
    if (hv_pjnum(job, "error", where, &v, TOOL, err, errlen) < 0)
        return -1;
    if (v != 0) {
        char buf[128];
        int code = v > 0 && v < 4096 ? (int)v : -1;
        const char *why = code > 0 ? strerror_r(code, buf, sizeof buf) : "unknown error";
        return hv_perr(err, errlen, TOOL, "%s failed with error %g (%s): nothing to import", where,
                       v, why);
    }
    v = 0;
    if (hv_pjnum(job, "groupid", where, &v, TOOL, err, errlen) < 0)
        return -1;
    if (!(v >= 0 && v < 1e9))
        return hv_perr(err, errlen, TOOL, "%s.groupid is not a group number", where);
    *group = (long long)v;
    json_t *opts = merged_options(global, json_object_get(job, "job options"));
    const char *rw_opt = json_string_value(json_object_get(opts, "rw"));
    if (rw_opt == NULL)
        rw_opt = json_string_value(json_object_get(opts, "readwrite"));
    char rw[32];
    /* "randread:8" (an offset modifier) is still randread. */
    snprintf(rw, sizeof rw, "%.*s", (int)strcspn(rw_opt ? rw_opt : "read", ":"),
             rw_opt ? rw_opt : "read");
    json_t *ji = json_pack("{s:s,s:I,s:s,s:o,s:[]}", "name", name, "group", (json_int_t)*group,
                           "rw", rw, "options", opts, "ops");
    json_array_append_new(jobs_info, ji);
    const struct rw_map *m = NULL;
    for (size_t i = 0; i < sizeof rw_maps / sizeof rw_maps[0]; i++)
        if (strcmp(rw, rw_maps[i].rw) == 0)
            m = &rw_maps[i];
    if (m == NULL) {
        json_object_set_new(ji, "skipped", json_string("rw is not a read or write pattern"));
        return 0;
    }
    const char *dirs[2] = {"read", "write"};
    const char *ops[2] = {m->read_op, m->write_op};
    for (int d = 0; d < 2; d++) {
        if (ops[d] == NULL)
            continue;
        /* A mixed job may do no writes at rwmixread=100; a pure job must
         * have done its one direction. */
        if (m->read_op && m->write_op && !direction_used(job, dirs[d]))
            continue;
        if (add_direction(job, dirs[d], ops[d], where, *group, name, sums, n, runtime_ms, err,
                          errlen) != 0)
            return -1;
        json_array_append_new(json_object_get(ji, "ops"), json_string(ops[d]));
    }
    return 0;
}

/* The per-interval figures of one series of samples, added up over the
 * jobs of a group. */
struct ss_sum {
    char prefix[24]; /* disk.PREFIX.mbps */
    long long group;
    double interval;
    double *bw, *iops; /* bytes/s, IO/s */
    size_t n;
};

#define N_SS (N_OPS + 2)

/* Reads data.NAME[0..n) of a steadystate object into out. */
static int ss_values(const json_t *data, const char *name, const char *where, double *out, size_t n,
                     char *err, size_t errlen)
{
    const json_t *a = json_object_get(data, name);
    if (!json_is_array(a) || json_array_size(a) < n)
        return hv_perr(err, errlen, TOOL, "%s.steadystate.data.%s is not an array of %zu numbers",
                       where, name, n);
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(a, i);
        if (!json_is_number(v) || !(json_number_value(v) >= 0))
            return hv_perr(err, errlen, TOOL, "%s.steadystate.data.%s[%zu] is not a number", where,
                           name, i);
        out[i] = json_number_value(v);
    }
    return 0;
}

/* How many intervals of a steadystate window of `len` fio measured: the
 * run's runtime in intervals, or more when fio filled more. */
static size_t ss_filled(const json_t *bw, const json_t *iops, size_t len, double runtime_ms,
                        double interval)
{
    size_t n = len;
    if (runtime_ms > 0) {
        double k = runtime_ms / 1000.0 / interval + 0.05;
        n = k < (double)len ? (size_t)k : len;
    }
    while (n < len && (json_number_value(json_array_get(bw, n)) != 0 ||
                       json_number_value(json_array_get(iops, n)) != 0))
        n++;
    return n;
}

/* Reads a job's steadystate object, when it has one: the verdict into ji,
 * the figures added to the series of its operation in sums. */
static int read_steady(const json_t *job, size_t index, json_t *ji, double runtime_ms,
                       struct ss_sum *sums, size_t *n_sums, char *err, size_t errlen)
{
    const json_t *ss = json_object_get(job, "steadystate");
    if (ss == NULL)
        return 0;
    char where[96], q[48];
    const char *name = json_string_value(json_object_get(ji, "name"));
    snprintf(where, sizeof where, "jobs[%zu] (%s)", index,
             hv_pquote(q, sizeof q, name, strlen(name)));
    const json_t *data = json_object_get(ss, "data");
    double dur = 0;
    if (!json_is_object(ss) || !json_is_object(data) ||
        hv_pjnum(ss, "duration", where, &dur, TOOL, err, errlen) != 0 || !(dur > 0))
        return hv_perr(err, errlen, TOOL,
                       "%s.steadystate has no duration and data (not fio's --steadystate "
                       "output)",
                       where);
    const json_t *bw = json_object_get(data, "bw"), *iops = json_object_get(data, "iops");
    size_t len = json_array_size(bw);
    if (len == 0 || json_array_size(iops) != len)
        return hv_perr(err, errlen, TOOL,
                       "%s.steadystate.data.bw and .iops are not arrays of one length", where);
    double interval = dur / (double)len;
    size_t n = ss_filled(bw, iops, len, runtime_ms, interval);
    json_t *verdict = json_object();
    json_object_set_new(ji, "steadystate", verdict);
    const json_t *crit = json_object_get(ss, "ss");
    if (json_is_string(crit))
        json_object_set(verdict, "ss", (json_t *)crit);
    json_object_set_new(verdict, "duration_s", json_real(dur));
    json_object_set_new(verdict, "attained",
                        json_boolean(json_number_value(json_object_get(ss, "attained")) != 0));
    const char *c = json_string_value(json_object_get(ss, "criterion"));
    double cv;
    size_t cl = c ? strlen(c) : 0;
    if (cl > 1 && c[cl - 1] == '%' && hv_pnum(c, cl - 1, &cv) == 0)
        json_object_set_new(verdict, "criterion_pct", json_real(cv));
    json_object_set_new(verdict, "intervals", json_integer((json_int_t)n));
    /* The series: the job's one operation, or its rw for a mixed job. */
    const json_t *ops = json_object_get(ji, "ops");
    const char *prefix = json_array_size(ops) == 1 ? json_string_value(json_array_get(ops, 0))
                                                   : json_string_value(json_object_get(ji, "rw"));
    if (json_array_size(ops) == 0 || n == 0)
        return 0;
    if (strcmp(prefix, "readwrite") == 0)
        prefix = "rw";
    long long group = json_integer_value(json_object_get(ji, "group"));
    struct ss_sum *s = NULL;
    for (size_t i = 0; i < *n_sums && s == NULL; i++)
        if (strcmp(sums[i].prefix, prefix) == 0 && sums[i].group == group)
            s = &sums[i];
    double *b = calloc(n, sizeof *b), *o = calloc(n, sizeof *o);
    int rc = b != NULL && o != NULL ? 0 : hv_perr(err, errlen, TOOL, "out of memory");
    if (rc == 0)
        rc = ss_values(data, "bw", where, b, n, err, errlen);
    if (rc == 0)
        rc = ss_values(data, "iops", where, o, n, err, errlen);
    if (rc == 0 && s == NULL && *n_sums < N_SS) {
        s = &sums[(*n_sums)++];
        *s = (struct ss_sum){.group = group, .interval = interval, .bw = b, .iops = o, .n = n};
        snprintf(s->prefix, sizeof s->prefix, "%s", prefix);
        return 0;
    }
    if (rc == 0 && s != NULL) {
        /* Jobs of one group ran at once: their intervals add up. */
        s->n = n < s->n ? n : s->n;
        for (size_t i = 0; i < s->n; i++) {
            s->bw[i] += b[i];
            s->iops[i] += o[i];
        }
    }
    free(b);
    free(o);
    return rc;
}

/* Appends the series as samples and releases them. */
static int emit_steady(struct ss_sum *sums, size_t n, json_t *run)
{
    int rc = 0;
    char name[64];
    for (size_t i = 0; i < n; i++) {
        const struct ss_sum *s = &sums[i];
        for (size_t k = 0; k < s->n && rc == 0; k++) {
            double t = (double)(k + 1) * s->interval;
            snprintf(name, sizeof name, "disk.%.23s.mbps", s->prefix);
            rc |= hv_prun_sample(run, name, t, s->bw[k] / 1e6);
            snprintf(name, sizeof name, "disk.%.23s.iops", s->prefix);
            rc |= hv_prun_sample(run, name, t, s->iops[k]);
        }
        free(sums[i].bw);
        free(sums[i].iops);
    }
    return rc;
}

/* Adds the metrics of every operation to the run. */
static int emit(const struct op_sum *sums, size_t n, json_t *metrics)
{
    char name[96];
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        const struct op_sum *s = &sums[i];
        snprintf(name, sizeof name, "disk.%s.mbps", s->op);
        rc |= hv_pmetric(metrics, name, s->mbps, "MB/s", true);
        snprintf(name, sizeof name, "disk.%s.iops", s->op);
        rc |= hv_pmetric(metrics, name, s->iops, "IO/s", true);
        for (int k = 0; k < 3; k++) {
            if (s->pct[k] < 0)
                continue;
            snprintf(name, sizeof name, "disk.%s.%s", s->op, pct_names[k]);
            rc |= hv_pmetric(metrics, name, s->pct[k], "us", false);
        }
        if (s->max_us >= 0) {
            snprintf(name, sizeof name, "disk.%s.lat_max_us", s->op);
            rc |= hv_pmetric(metrics, name, s->max_us, "us", false);
        }
    }
    return rc;
}

/* Records when the run took place: fio stamps its report when the jobs
 * are done, so the start is the stamp less the groups' runtimes. */
static void set_times(const json_t *doc, json_t *info, double seconds)
{
    double stamp = -1;
    const json_t *ms = json_object_get(doc, "timestamp_ms");
    const json_t *s = json_object_get(doc, "timestamp");
    if (json_is_number(ms))
        stamp = json_number_value(ms) / 1000.0;
    else if (json_is_number(s))
        stamp = json_number_value(s);
    json_object_set_new(info, "duration_s", json_real(seconds));
    char iso[32];
    if (stamp > 0 && hv_piso(stamp, iso, sizeof iso) == 0)
        json_object_set_new(info, "finished_at", json_string(iso));
    if (stamp > 0 && hv_piso(stamp - seconds, iso, sizeof iso) == 0)
        json_object_set_new(info, "started_at", json_string(iso));
}

/* fio prints a number it could not compute as a bare nan or -nan (its
 * steadystate slope over a one-interval window): not JSON. A copy of text
 * with those values (after ": ") written as null, or NULL when there is
 * none or memory runs out. Newlines stay where they were, so line numbers
 * in errors still point into the file. */
static char *nan_as_null(const char *text, size_t len, size_t *out_len)
{
    static const char *const bare[] = {"-nan", "nan", "-inf", "inf"};
    /* "nan" and "inf" grow by one byte each as "null": at most len / 3. */
    char *copy = malloc(len + len / 3 + 2), *w = copy;
    bool found = false;
    for (size_t i = 0; copy != NULL && i < len;) {
        size_t k = 0, tl = 0;
        if (i >= 2 && text[i - 2] == ':' && text[i - 1] == ' ')
            for (k = 0; k < 4; k++) {
                tl = strlen(bare[k]);
                if (i + tl <= len && memcmp(text + i, bare[k], tl) == 0 &&
                    (i + tl == len || strchr(",\n\r }", text[i + tl]) != NULL))
                    break;
            }
        if (k < 4 && i >= 2 && text[i - 2] == ':' && text[i - 1] == ' ') {
            memcpy(w, "null", 4);
            w += 4;
            i += tl;
            found = true;
        } else {
            *w++ = text[i++];
        }
    }
    if (!found) {
        free(copy);
        return NULL;
    }
    *w = '\0';
    *out_len = (size_t)(w - copy);
    return copy;
}

/* One fio report (one JSON document) into a new run of runs. */
static int read_report(const json_t *doc, const char *text, json_t *runs, char *err, size_t errlen)
{
    const json_t *jobs = json_object_get(doc, "jobs");
    if (!json_is_array(jobs))
        return hv_pnot_mine(text, "fio", TOOL, "no \"jobs\" array: not fio's JSON output", err,
                            errlen);
    json_t *run = hv_prun_new(runs, TOOL, "json");
    if (run == NULL)
        return hv_perr(err, errlen, TOOL, "out of memory");
    json_t *info = hv_prun_info(run);
    const char *version = json_string_value(json_object_get(doc, "fio version"));
    if (version != NULL)
        json_object_set_new(info, "tool_version", json_string(version));
    const json_t *global = json_object_get(doc, "global options");
    if (json_is_object(global))
        json_object_set(info, "global_options", (json_t *)global);
    json_t *jobs_info = json_array();
    json_object_set_new(info, "jobs", jobs_info);

    struct op_sum sums[N_OPS];
    struct ss_sum ss[N_SS];
    size_t n = 0, n_ss = 0;
    double total_ms = 0, group_ms = 0;
    long long last_group = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < json_array_size(jobs); i++) {
        double job_ms = 0;
        long long group = 0;
        rc = read_job(json_array_get(jobs, i), i, global, sums, &n, jobs_info, &job_ms, &group, err,
                      errlen);
        if (rc == 0)
            rc = read_steady(json_array_get(jobs, i), i, json_array_get(jobs_info, i), job_ms, ss,
                             &n_ss, err, errlen);
        /* Groups run one after the other; the jobs of a group at once. */
        if (i > 0 && group != last_group) {
            total_ms += group_ms;
            group_ms = 0;
        }
        last_group = group;
        if (job_ms > group_ms)
            group_ms = job_ms;
    }
    if (rc == 0 && json_array_size(jobs) == 0)
        rc = hv_perr(err, errlen, TOOL, "the \"jobs\" array is empty");
    if (rc == 0 && n == 0)
        rc = hv_perr(err, errlen, TOOL, "no job read or wrote anything hvbench measures");
    if (rc == 0 && emit(sums, n, hv_prun_metrics(run)) != 0)
        rc = hv_perr(err, errlen, TOOL, "a value is not a finite number");
    if (emit_steady(ss, n_ss, run) != 0 && rc == 0)
        rc = hv_perr(err, errlen, TOOL, "a steadystate value is not a finite number");
    if (rc == 0)
        set_times(doc, info, (total_ms + group_ms) / 1000.0);
    return rc;
}

/* Every report of text[0..len) into runs. */
static int read_reports(const char *t, size_t tl, const char *text, json_t *runs, char *err,
                        size_t errlen)
{
    size_t pos = 0;
    int rc = 0;
    for (size_t part = 0; rc == 0; part++) {
        json_t *doc = hv_pjson_next(t, tl, &pos, TOOL, err, errlen);
        if (doc == NULL && err[0] == '\0' && part > 0)
            break;
        if (doc == NULL && err[0] == '\0')
            rc = hv_pnot_mine(text, "fio", TOOL,
                              "no JSON object in the output: save fio's output with "
                              "--output-format=json",
                              err, errlen);
        else if (doc == NULL)
            rc = -1;
        else
            rc = read_report(doc, text, runs, err, errlen);
        json_decref(doc);
        if (rc != 0)
            hv_ppart_err(err, errlen, TOOL, part);
    }
    return rc;
}

static int parse_fio(const char *text, size_t len, json_t *runs, char *err, size_t errlen)
{
    /* A file may hold several reports one after another (fio run again
     * with >>): one run each. */
    int rc = read_reports(text, len, text, runs, err, errlen);
    if (rc == 0 || strstr(err, "bad JSON") == NULL)
        return rc;
    size_t fixed_len = 0;
    char *fixed = nan_as_null(text, len, &fixed_len);
    if (fixed == NULL)
        return rc;
    char first[HV_PARSE_ERR_MAX];
    snprintf(first, sizeof first, "%s", err);
    json_array_clear(runs);
    rc = read_reports(fixed, fixed_len, text, runs, err, errlen);
    free(fixed);
    /* Not fio's nan after all: the first reason stands. */
    if (rc != 0 && strstr(err, "bad JSON") != NULL)
        snprintf(err, errlen, "%s", first);
    return rc;
}

/* ---- the description (lib/tools.def) --------------------------------- */

#define MIB (1024.0 * 1024.0)
#define TIB (1024.0 * 1024.0 * MIB)

static const char *const fio_rw[] = {"read",      "write",  "randread", "randwrite",
                                     "readwrite", "randrw", NULL};
static const char *const fio_engines[] = {"libaio", "io_uring", "psync", "sync", NULL};

static const struct hv_param_def disk_fio_params[] = {
    {.name = "rw",
     .type = HV_PARAM_ENUM,
     .required = true,
     .choices = fio_rw,
     .description = "I/O pattern (fio --rw)"},
    {.name = "bs",
     .type = HV_PARAM_SIZE,
     .def = "\"4k\"",
     .min = 512,
     .max = 64 * MIB,
     .description = "block size (fio --bs)"},
    {.name = "size",
     .type = HV_PARAM_SIZE,
     .def = "\"1g\"",
     .min = 512,
     .max = 16 * TIB,
     .description = "bytes per job, at least bs (fio --size)"},
    {.name = "iodepth",
     .type = HV_PARAM_INT,
     .def = "1",
     .min = 1,
     .max = 1024,
     .description = "I/Os in flight per job (fio --iodepth)"},
    {.name = "ioengine",
     .type = HV_PARAM_ENUM,
     .def = "\"libaio\"",
     .choices = fio_engines,
     .description = "fio --ioengine"},
    {.name = "direct",
     .type = HV_PARAM_BOOL,
     .def = "true",
     .description = "O_DIRECT (fio --direct=1)"},
    {.name = "numjobs",
     .type = HV_PARAM_INT,
     .def = "1",
     .min = 1,
     .max = 256,
     .description = "parallel jobs (fio --numjobs, reported as one group)"},
    {.name = "runtime",
     .type = HV_PARAM_DURATION,
     .def = "30",
     .min = 1,
     .max = 86400,
     .description = "measured time (fio --runtime --time_based)"},
    HV_PARAM_PATH("file or block device (fio --filename); absent: a file in the worker's scratch "
                  "directory; a block device is overwritten"),
    HV_PARAM_WARMUP("I/O before the measured time, not counted (fio --ramp_time)"),
    {0},
};

static int cross_disk_fio(const struct hv_engine_def *e, const json_t *params, const char *path,
                          json_t *errors)
{
    (void)e;
    return hv_params_at_least(params, path, "size", "bs", errors);
}

static const char *const sweep_fio[] = {"bs", "iodepth", NULL};

/* By rw, in the order of its choices (the parser above names them). */
static const char *const fio_metrics[] = {"disk.seq_read.mbps",
                                          "disk.seq_write.mbps",
                                          "disk.rand_read.mbps",
                                          "disk.rand_write.mbps",
                                          "disk.rw_read.mbps",
                                          "disk.randrw_read.mbps",
                                          NULL};

const struct hv_engine_def hv_engine_def_disk_fio = {
    .kind = "disk",
    .engine = "fio",
    .summary = "fio, one job file built from the params, JSON output",
    .metrics = fio_metrics,
    .sweepable = sweep_fio,
    .external = true,
    .params_def = disk_fio_params,
    .cross = cross_disk_fio,
};

/* Its signatures (hv_parser_guess). */
static bool guess_fio(const char *text)
{
    return strstr(text, "\"fio version\"") != NULL;
}

/* What was run, as the engine's params name it; an option the output
 * leaves out has fio 3's default. Jobs that differ (a job file) give the
 * array of each job's value. */
static const struct hv_identity_field identity[] = {
    {"rw", "jobs[].rw", HV_ID_TEXT, NULL, false},
    {"bs", "jobs[].options.bs", HV_ID_SIZE, "4k", false},
    {"iodepth", "jobs[].options.iodepth", HV_ID_COUNT, "1", false},
    {"numjobs", "jobs[].options.numjobs", HV_ID_COUNT, "1", false},
    {"ioengine", "jobs[].options.ioengine", HV_ID_TEXT, "psync", false},
    {"direct", "jobs[].options.direct", HV_ID_FLAG, "0", false},
    {"size", "jobs[].options.size", HV_ID_SIZE, NULL, false},
    {0},
};

/* What else its runs share when they repeat one workload. */
static const char *const alike[] = {"global_options", "jobs[].name", "jobs[].rw", "jobs[].options",
                                    NULL};

const struct hv_tool_parser hv_tool_parser_fio = {
    .name = "fio",
    .display = "fio",
    .kind = "disk",
    .forms =
        "JSON (--output-format=json), with or without leading warnings; several one after another",
    .parse = parse_fio,
    .guess = guess_fio,
    .identity = identity,
    .alike = alike,
    .engine = &hv_engine_def_disk_fio,
};
