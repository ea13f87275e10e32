/* test_parsers.c — the tool parsers (lib/parsers.h) on outputs the tools
 * really printed (tests/fixtures/<tool>/, each README.md says the version
 * and the command):
 *
 *   - every metric of every good fixture, with the value read by hand from
 *     the file (written below as the file's number and its conversion),
 *     its unit and direction, and nothing more;
 *   - every bad fixture refused with the reason it was made for;
 *   - outputs whose format has an end (JSON, sysbench's last section,
 *     stress-ng's "..." and "run completed") refused at every line before
 *     it; every fixture cut at every 97th byte parses or is refused with a
 *     message, never crashes (run it under make SANITIZE=address,undefined);
 *   - each fixture given to every other tool's parser is refused;
 *   - a file of several outputs (x2-*: two runs joined with cat) reads as
 *     one run each, and a cut between them as the runs before it; runs of
 *     different workloads in one file (two fixtures joined here) are
 *     refused by hv_parse_runs_alike, naming the count and the difference;
 *   - each tool's identity (hv_parse_identity) of its fixtures, the params
 *     an import records, and params given beside an output: filling what
 *     it does not say, refused when it says otherwise.
 *   - bonnie++ tables as posts quote them (no labels, maybe no final
 *     newline) read as the tables they were cut from; a post of several
 *     is refused unless one table is picked.
 *
 * Run from the top of the tree (tests/run.sh does), or set HV_FIXTURES. */
#include "parsers.h"

#include "check.h"
#include "parsers_expect.h"
#include "parsers_goods_disk.h"
#include "parsers_goods_other.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *fixtures = "tests/fixtures";

/* The file's bytes, NUL-terminated; exits when it cannot be read. */
static char *slurp(const char *tool, const char *file, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s/%s", fixtures, tool, file);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s (run from the top of the tree)\n", path);
        exit(1);
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (size_t got; buf != NULL && (got = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (cap - n - 1 == 0) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    fclose(f);
    if (buf == NULL)
        exit(1);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* ------------------------------------------------------------------ */
/* Good fixtures and their metrics (parsers_goods_*.h) */

static const struct {
    const struct good *v;
    size_t n;
} good_tables[] = {
    {goods_disk, sizeof goods_disk / sizeof goods_disk[0]},
    {goods_other, sizeof goods_other / sizeof goods_other[0]},
};

/* The unit and direction each metric name's ending implies. */
static const struct {
    const char *suffix, *unit;
    bool hib;
} units[] = {
    {".mbps", "MB/s", true},
    {".iops", "IO/s", true},
    {"_us", "us", false},
    {".gbps", "Gbit/s", true},
    {".retransmits", "count", false},
    {".jitter_ms", "ms", false},
    {".loss_pct", "%", false},
    {".events_per_s", "events/s", true},
    {".ops_per_s", "ops/s", true},
    {".bogo_ops_per_s", "bogo-ops/s", true},
    {".bogo_ops_per_cpu_s", "bogo-ops/s", true},
    {".stream_gbps_min", "Gbit/s", true},
    {".stream_gbps_max", "Gbit/s", true},
    {".mss_bytes", "bytes", true},
};

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static void check_metric_shape(const json_t *m, const char *where)
{
    const char *name = json_string_value(json_object_get(m, "name"));
    const char *unit = json_string_value(json_object_get(m, "unit"));
    const json_t *hib = json_object_get(m, "higher_is_better");
    bool known = false;
    for (size_t i = 0; name && i < sizeof units / sizeof units[0]; i++) {
        if (!ends_with(name, units[i].suffix))
            continue;
        known = true;
        CHECK_STR(unit, units[i].unit);
        CHECK(json_is_boolean(hib) && json_is_true(hib) == units[i].hib);
        break;
    }
    if (!known)
        fprintf(stderr, "%s: metric %s has no known unit suffix\n", where, name ? name : "?");
    CHECK(known);
    CHECK(json_is_number(json_object_get(m, "value")));
    /* Rates, counts, latencies, sizes: none is negative. */
    CHECK_MSG(json_number_value(json_object_get(m, "value")) >= 0, "%s: %s is negative", where,
              name ? name : "?");
    CHECK(json_object_size(m) == 4);
}

/* The run of g, read from its table-th table (0: the whole output). */
static void check_good(const struct good *g, int table)
{
    size_t len;
    char *text = slurp(g->tool, g->file, &len);
    json_t *runs = NULL;
    char err[HV_PARSE_ERR_MAX] = "";
    int rc = hv_parse_tool_table_runs(g->tool, text, len, table, &runs, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "%s/%s: %s\n", g->tool, g->file, err);
    CHECK(rc == 0);
    CHECK(json_array_size(runs) == (size_t)g->runs);
    json_t *run = json_array_get(runs, (size_t)g->run);
    json_t *metrics = json_object_get(run, "metrics"), *info = json_object_get(run, "info");
    size_t expected = 0;
    while (expected < MAX_M && g->metrics[expected].name != NULL)
        expected++;
    if (json_array_size(metrics) != expected)
        fprintf(stderr, "%s/%s run %d: %zu metrics, expected %zu\n", g->tool, g->file, g->run,
                json_array_size(metrics), expected);
    CHECK(json_array_size(metrics) == expected);
    for (size_t k = 0; k < expected; k++) {
        const json_t *found = NULL;
        size_t i;
        json_t *m;
        json_array_foreach(metrics, i, m)
        {
            if (strcmp(json_string_value(json_object_get(m, "name")), g->metrics[k].name) == 0)
                found = m;
        }
        if (found == NULL)
            fprintf(stderr, "%s/%s: no metric %s\n", g->tool, g->file, g->metrics[k].name);
        CHECK(found != NULL);
        if (found == NULL)
            continue;
        double want = g->metrics[k].value;
        double got = json_number_value(json_object_get(found, "value"));
        if (!(fabs(got - want) <= 1e-9 * (fabs(want) > 1 ? fabs(want) : 1)))
            fprintf(stderr, "%s/%s: %s = %.12g, expected %.12g\n", g->tool, g->file,
                    g->metrics[k].name, got, want);
        CHECK_NEAR(got, want, 1e-9 * (fabs(want) > 1 ? fabs(want) : 1));
        check_metric_shape(found, g->file);
    }
    /* Every run says what read it. */
    CHECK_STR(json_string_value(json_object_get(info, "tool")), hv_parser_find(g->tool)->display);
    CHECK_STR(json_string_value(json_object_get(info, "format")), g->format);
    const char *version = json_string_value(json_object_get(info, "tool_version"));
    if (g->version != NULL)
        CHECK_STR(version, g->version);
    else
        CHECK(version == NULL);
    if (g->started_at != NULL)
        CHECK_STR(json_string_value(json_object_get(info, "started_at")), g->started_at);
    json_decref(runs);
    free(text);
}

/* ------------------------------------------------------------------ */
/* Samples: the per-interval figures of the outputs that have them */

#define MAX_S 8

struct sampled {
    const char *tool, *file;
    const char *metric;        /* the series checked */
    size_t count;              /* its samples */
    double t[MAX_S], v[MAX_S]; /* the first min(count, MAX_S) */
    size_t total;              /* samples of every metric */
};

static const struct sampled sampleds[] = {
    /* fio --steadystate_duration=6 --runtime=6 --ramp_time=2: data.bw in
     * bytes/s, data.iops; the ramp is not in them. */
    {"fio",
     "randread-ss6-ramp2.json",
     "disk.rand_read.mbps",
     6,
     {1, 2, 3, 4, 5, 6},
     {MB(124809216), MB(161347139), MB(155467776), MB(128520192), MB(116824152), MB(141810162)},
     12},
    {"fio",
     "randread-ss6-ramp2.json",
     "disk.rand_read.iops",
     6,
     {1, 2, 3, 4, 5, 6},
     {30471, 39391, 37956, 31377, 28521, 34621},
     12},
    /* A 4 s window over 3.5 s: three intervals measured, a zero after. */
    {"fio",
     "seqwrite-ss4-partial.json",
     "disk.seq_write.mbps",
     3,
     {1, 2, 3},
     {MB(1394260395), MB(1423292348), MB(1405091840)},
     6},
    {"fio", "write-ss1-nan.json", "disk.seq_write.iops", 1, {1}, {333595}, 2},
    /* iperf3 -O 1: the omitted first interval is left out, the times
     * restart after it. */
    {"iperf3",
     "client-tcp-P2-omit1.json",
     "net.tcp.gbps",
     5,
     {1.001011, 1.999915, 3.000475, 4.000122, 5.001134},
     {G(13867461340.52694), G(10948647509.435556), G(11873716261.6991), G(13825111650.025507),
      G(13753884393.807888)},
     5},
    /* The server's last 1 ms interval is a ragged end, left out. */
    {"iperf3",
     "server-omit1.json",
     "net.tcp.gbps",
     5,
     {1.000101, 1.999867, 2.999896, 4.001088, 4.99964},
     {G(13841441577.929487), G(10989550969.034151), G(11887361760.600122), G(13801683284.69912),
      G(13776216169.363012)},
     5},
    {"iperf3",
     "client-udp-omit1.json",
     "net.udp.gbps",
     4,
     {1.000036, 2.000027, 3.000093, 4.000022},
     {G(200006072.69886693), G(200017672.2193275), G(200002663.43481934), G(200030071.96116793)},
     4},
    /* iperf 2 -i 1 -P 2: the two streams' lines of each second added. */
    {"iperf",
     "client-P2-i1-t6.csv",
     "net.tcp.gbps",
     6,
     {1, 2, 3, 4, 5, 6},
     {G(5904812432.0 + 5347457584.0), G(8908427264.0 + 8919461888.0),
      G(11215863808.0 + 10666868736.0), G(14189101056.0 + 14212628480.0),
      G(14575796224.0 + 14406844416.0), G(10653007872.0 + 10342629376.0)},
     6},
    {"iperf",
     "server-P2-i1.csv",
     "net.tcp.gbps",
     6,
     {1, 2, 3, 4, 5, 6},
     {G(4807695152.0 + 6427771360.0), G(9092228784.0 + 8731997560.0),
      G(10773069824.0 + 11088159704.0), G(12788432896.0 + 15698257584.0),
      G(13295943680.0 + 15773728768.0), G(11398021120.0 + 9454587405.0)},
     6},
    /* The text report's [SUM] interval lines. */
    {"iperf", "client-P2-i1.txt", "net.tcp.gbps", 2, {1, 2}, {18.9, 13.1}, 2},
    /* No -i: no samples. */
    {"iperf", "client-P2.csv", "net.tcp.gbps", 0, {0}, {0}, 0},
    /* sysbench: the lines stamped after the checkpoint at 3 s (asked for
     * 2; a stalled machine), counted from it. */
    {"sysbench",
     "cpu-t2-warm2-interval1.txt",
     "cpu.sysbench.events_per_s",
     4,
     {1, 2, 3, 4},
     {7514.09, 6957.84, 3506.96, 5889.28},
     4},
    {"sysbench",
     "memory-warm1-interval1.txt",
     "mem.sysbench.mbps",
     4,
     {1, 2, 3, 4},
     {MIB(3934.93), MIB(3887.43), MIB(4024.33), MIB(4979.59)},
     4},
    {"sysbench", "cpu-t2.txt", "cpu.sysbench.events_per_s", 0, {0}, {0}, 0},
    /* fileio: the "reads:" MiB/s of each interval; a read test has no
     * written series. */
    {"sysbench",
     "fileio-rndrd-direct-t2-interval1.txt",
     "disk.rand_read.mbps",
     3,
     {1, 2, 3},
     {MIB(198.03), MIB(169.24), MIB(151.09)},
     3},
};

static void check_sampled(const struct sampled *c)
{
    size_t len;
    char *text = slurp(c->tool, c->file, &len);
    json_t *runs = NULL;
    char err[HV_PARSE_ERR_MAX] = "";
    CHECK(hv_parse_tool_runs(c->tool, text, len, &runs, err, sizeof err) == 0);
    json_t *samples = json_object_get(json_array_get(runs, 0), "samples");
    CHECK(c->total > 0 ? json_is_array(samples) : samples == NULL);
    if (json_array_size(samples) != c->total)
        fprintf(stderr, "%s/%s: %zu samples, expected %zu\n", c->tool, c->file,
                json_array_size(samples), c->total);
    CHECK(json_array_size(samples) == c->total);
    size_t i, k = 0;
    json_t *s;
    double prev = 0;
    json_array_foreach(samples, i, s)
    {
        CHECK(json_object_size(s) == 3);
        if (strcmp(json_string_value(json_object_get(s, "metric")), c->metric) != 0)
            continue;
        double t = json_number_value(json_object_get(s, "t"));
        double v = json_number_value(json_object_get(s, "value"));
        CHECK(t > prev); /* oldest first */
        prev = t;
        if (k < MAX_S && k < c->count) {
            if (fabs(v - c->v[k]) > 1e-9 * fabs(c->v[k]) || fabs(t - c->t[k]) > 1e-9)
                fprintf(stderr,
                        "%s/%s: sample %zu of %s is (%.9g, %.12g), expected (%.9g, %.12g)\n",
                        c->tool, c->file, k, c->metric, t, v, c->t[k], c->v[k]);
            CHECK_NEAR(t, c->t[k], 1e-9);
            CHECK_NEAR(v, c->v[k], 1e-9 * fabs(c->v[k]));
        }
        k++;
    }
    CHECK(k == c->count);
    json_decref(runs);
    free(text);
}

/* What the outputs say about the warm-up and fio's own verdict. */
static void check_steady_info(void)
{
    size_t len;
    json_t *run;
    char err[HV_PARSE_ERR_MAX] = "";
    char *text = slurp("fio", "randread-ss6-ramp2.json", &len);
    CHECK(hv_parse_tool_run("fio", text, len, &run, err, sizeof err) == 0);
    json_t *job = json_array_get(json_object_get(json_object_get(run, "info"), "jobs"), 0);
    json_t *ss = json_object_get(job, "steadystate");
    CHECK_STR(json_string_value(json_object_get(ss, "ss")), "iops_slope:2.000000%");
    CHECK(json_is_true(json_object_get(ss, "attained")));
    CHECK_NEAR(json_number_value(json_object_get(ss, "criterion_pct")), -1.562270, 1e-12);
    CHECK(json_integer_value(json_object_get(ss, "intervals")) == 6);
    CHECK_STR(json_string_value(json_object_get(json_object_get(job, "options"), "ramp_time")),
              "2");
    json_decref(run);
    free(text);
    text = slurp("fio", "seqwrite-ss4-partial.json", &len);
    CHECK(hv_parse_tool_run("fio", text, len, &run, err, sizeof err) == 0);
    job = json_array_get(json_object_get(json_object_get(run, "info"), "jobs"), 0);
    ss = json_object_get(job, "steadystate");
    CHECK(json_is_false(json_object_get(ss, "attained")));
    CHECK(json_integer_value(json_object_get(ss, "intervals")) == 3);
    CHECK_NEAR(json_number_value(json_object_get(ss, "duration_s")), 4, 0);
    json_decref(run);
    free(text);

    text = slurp("iperf3", "client-tcp-P2-omit1.json", &len);
    CHECK(hv_parse_tool_run("iperf3", text, len, &run, err, sizeof err) == 0);
    CHECK(json_integer_value(json_object_get(json_object_get(run, "info"), "omitted_intervals")) ==
          1);
    json_decref(run);
    free(text);

    text = slurp("sysbench", "cpu-t2-warm2-interval1.txt", &len);
    CHECK(hv_parse_tool_run("sysbench", text, len, &run, err, sizeof err) == 0);
    json_t *info = json_object_get(run, "info");
    CHECK(json_integer_value(json_object_get(info, "checkpoints")) == 1);
    CHECK_NEAR(json_number_value(json_object_get(info, "checkpoint_at_s")), 3, 0);
    CHECK_NEAR(json_number_value(json_object_get(info, "warmup_s")), 2.7788, 1e-12);
    CHECK_NEAR(json_number_value(json_object_get(info, "duration_s")), 7.0029, 1e-12);
    json_decref(run);
    free(text);

    /* Several runs are not one run. */
    text = slurp("bonnie", "x2-D-f-s1024-r512.csv", &len);
    run = (json_t *)1;
    CHECK(hv_parse_tool_run("bonnie", text, len, &run, err, sizeof err) == -1);
    CHECK(run == NULL);
    CHECK_STR(err, "bonnie++: the output holds 2 runs; one was expected");
    free(text);
}

/* ------------------------------------------------------------------ */
/* Files of several outputs: repetitions of one workload, or refused */

/* The two fixtures of tool one after another, as `cat a b` makes them. */
static char *cat2(const char *tool, const char *a, const char *b, size_t *len)
{
    size_t la, lb;
    char *ta = slurp(tool, a, &la), *tb = slurp(tool, b, &lb);
    char *both = malloc(la + lb + 1);
    if (both == NULL)
        exit(1);
    memcpy(both, ta, la);
    memcpy(both + la, tb, lb + 1);
    free(ta);
    free(tb);
    *len = la + lb;
    return both;
}

/* Parses text as tool into runs and checks whether they are alike: the
 * error must hold want, or want is NULL and they are. */
static void check_alike_text(const char *tool, const char *what, const char *text, size_t len,
                             size_t runs_expected, const char *want)
{
    json_t *runs = NULL;
    char err[HV_PARSE_ERR_MAX] = "";
    int rc = hv_parse_tool_runs(tool, text, len, &runs, err, sizeof err);
    CHECK_MSG(rc == 0, "%s: %s", what, err);
    CHECK_MSG(json_array_size(runs) == runs_expected, "%s: %zu runs", what, json_array_size(runs));
    err[0] = '\0';
    rc = hv_parse_runs_alike(tool, runs, err, sizeof err);
    if (want == NULL)
        CHECK_MSG(rc == 0, "%s: %s", what, err);
    else
        CHECK_MSG(rc == -1 && strstr(err, want) != NULL, "%s: \"%s\", expected \"%s\"", what, err,
                  want);
    json_decref(runs);
}

static void check_alike(void)
{
    static const struct {
        const char *tool, *file;
        size_t runs;
        const char *want; /* NULL: the runs are alike */
    } files[] = {
        {"fio", "x2-randread-qd4.json", 2, NULL},
        {"iperf3", "x2-client-tcp-P2.json", 2, NULL},
        {"sysbench", "x2-cpu-t2.txt", 2, NULL},
        {"stress-ng", "x2-cpu1-t2.yaml", 2, NULL},
        {"stress-ng", "x2-cpu1-t2.log", 2, NULL},
        {"bonnie", "x2-D-f-s1024-r512.csv", 2, NULL},
        {"bonnie", "x2-normal-f-s1024-r512-n1.txt", 2, NULL},
        {"bonnie", "lkml-2003-04-17-1.02b-x2-csv2txt.txt", 2, NULL},
        {"fio", "seq-write.json", 1, NULL},
        /* Two machines (NPTL and LinuxThreads) in one table. */
        {"bonnie", "lkml-2003-11-04-1.03-wide.txt", 2,
         "bonnie++: the output holds 2 runs, and they are not runs of one workload: run 2 has "
         "name \"LinuxThreads\" where run 1 has \"NPTL\"; an import keeps its runs as "
         "repetitions of one workload: import each run on its own"},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        size_t len;
        char *text = slurp(files[i].tool, files[i].file, &len);
        check_alike_text(files[i].tool, files[i].file, text, len, files[i].runs, files[i].want);
        free(text);
    }
    /* Outputs of different workloads joined with cat: refused, naming
     * the count and the first difference. */
    static const struct {
        const char *tool, *a, *b, *want;
    } mixed[] = {
        {"fio", "seq-write.json", "randread-qd8.json",
         "fio: the output holds 2 runs, and they are not runs of one workload: run 2 has "
         "rw \"randread\" where run 1 has \"write\""},
        {"fio", "randread-qd1.json", "randread-qd32.json",
         "run 2 has iodepth 32 where run 1 has 1"},
        {"iperf3", "client-tcp-P1.json", "client-tcp-P4.json",
         "iperf3: the output holds 2 runs, and they are not runs of one workload: run 2 has "
         "streams 4 where run 1 has 1"},
        /* -M 1400 against the socket's default MSS: not one workload. */
        {"iperf3", "client-tcp-P1.json", "client-tcp-M1400.json",
         "run 2 has mss 1400 where run 1 has 32768"},
        {"iperf3", "client-tcp-P4.json", "server-P4.json",
         "run 2 has role \"server\" where run 1 has \"client\""},
        {"sysbench", "cpu-t2.txt", "memory.txt",
         "run 2 has test \"memory\" where run 1 has "
         "\"cpu\""},
        {"sysbench", "fileio-seqwr.txt", "fileio-seqrd.txt",
         "run 2 has mode \"seqrd\" where run 1 has \"seqwr\""},
        {"sysbench", "cpu-t2.txt", "cpu-threads2-prime10000.txt",
         "run 2 has threads 2 where run 1 has 1"},
        {"stress-ng", "cpu1-t2.yaml", "matrix2-cache1-t2.yaml",
         "run 2 has stressors [\"cache\",\"matrix\"] where run 1 has [\"cpu\"]"},
        {"bonnie", "s64-r32.csv", "f-s4096-r2048.csv", "run 2 has size 4G where run 1 has 64M"},
    };
    for (size_t i = 0; i < sizeof mixed / sizeof mixed[0]; i++) {
        size_t len;
        char *text = cat2(mixed[i].tool, mixed[i].a, mixed[i].b, &len);
        check_alike_text(mixed[i].tool, mixed[i].b, text, len, 2, mixed[i].want);
        free(text);
    }
    /* One run is alike with itself; an unknown tool has nothing to say. */
    json_t *none = json_array();
    char err[HV_PARSE_ERR_MAX];
    CHECK(hv_parse_runs_alike("fio", none, err, sizeof err) == 0);
    CHECK(hv_parse_runs_alike("iozone", none, err, sizeof err) == 0);
    json_decref(none);
}

/* Parses a fixture into runs; exits the check when it does not parse. */
static json_t *runs_of(const char *tool, const char *file)
{
    size_t len;
    char *text = slurp(tool, file, &len);
    json_t *runs = NULL;
    char err[HV_PARSE_ERR_MAX] = "";
    int rc = hv_parse_tool_runs(tool, text, len, &runs, err, sizeof err);
    CHECK_MSG(rc == 0, "%s/%s: %s", tool, file, err);
    free(text);
    return runs;
}

/* Each tool's identity of its fixtures, as an import records it in the
 * workload's params: sizes in bytes, counts as numbers, text in lower
 * case, fio's defaults for what its output leaves out. */
static void check_identity(void)
{
    static const struct {
        const char *tool, *file, *params; /* params: compact JSON, keys sorted */
    } ids[] = {
        {"fio", "randread-qd1.json",
         "{\"bs\":4096,\"direct\":true,\"iodepth\":1,\"ioengine\":\"libaio\",\"numjobs\":1,"
         "\"rw\":\"randread\",\"size\":33554432}"},
        {"fio", "randread-qd32.json",
         "{\"bs\":4096,\"direct\":true,\"iodepth\":32,\"ioengine\":\"libaio\",\"numjobs\":1,"
         "\"rw\":\"randread\",\"size\":33554432}"},
        {"fio", "randwrite-numjobs2.json",
         "{\"bs\":4096,\"direct\":true,\"iodepth\":2,\"ioengine\":\"libaio\",\"numjobs\":2,"
         "\"rw\":\"randwrite\",\"size\":33554432}"},
        /* No ioengine, bs or iodepth given: fio 3's psync, 4k, 1. */
        {"fio", "write-ss1-nan.json",
         "{\"bs\":4096,\"direct\":false,\"iodepth\":1,\"ioengine\":\"psync\",\"numjobs\":1,"
         "\"rw\":\"write\",\"size\":1048576}"},
        /* A job file of two jobs: what differs is per job. */
        {"fio", "jobfile-seqread-randrw.json",
         "{\"bs\":[1048576,4096],\"direct\":true,\"iodepth\":[1,4],\"ioengine\":\"libaio\","
         "\"numjobs\":1,\"rw\":[\"read\",\"randrw\"],\"size\":33554432}"},
        {"iperf3", "client-tcp-P4.json",
         "{\"bitrate\":0,\"direction\":\"forward\",\"mss\":32768,\"protocol\":\"tcp\","
         "\"role\":\"client\",\"streams\":4}"},
        {"iperf3", "client-tcp-M1400.json",
         "{\"bitrate\":0,\"direction\":\"forward\",\"mss\":1400,\"protocol\":\"tcp\","
         "\"role\":\"client\",\"streams\":1}"},
        {"iperf3", "client-udp.json",
         "{\"bitrate\":200000000,\"direction\":\"forward\",\"protocol\":\"udp\","
         "\"role\":\"client\",\"streams\":1}"},
        {"iperf3", "server-P4.json",
         "{\"bitrate\":0,\"direction\":\"forward\",\"protocol\":\"tcp\",\"role\":\"server\","
         "\"streams\":4}"},
        {"iperf", "client-P2.txt",
         "{\"protocol\":\"tcp\",\"role\":\"client\",\"streams\":2,\"window\":4194304}"},
        {"iperf", "udp-server.txt",
         "{\"protocol\":\"udp\",\"role\":\"server\",\"streams\":1,\"window\":212992}"},
        /* The CSV says neither the side nor the window. */
        {"iperf", "client-P2.csv", "{\"protocol\":\"tcp\",\"streams\":2}"},
        {"sysbench", "cpu-threads2-prime10000.txt",
         "{\"max_prime\":10000,\"test\":\"cpu\",\"threads\":2}"},
        {"sysbench", "memory-read-1M.txt",
         "{\"block_size\":1048576,\"mode\":\"read\",\"test\":\"memory\",\"threads\":1}"},
        {"sysbench", "fileio-rndrd-direct-t2-interval1.txt",
         "{\"block_size\":16384,\"mode\":\"rndrd\",\"test\":\"fileio\",\"threads\":2}"},
        {"bonnie", "D-f-s1024-r512.csv", "{\"size\":1073741824}"},
        {"bonnie", "lkml-2004-03-19-1.03.txt", "{\"size\":20971520000}"},
        {"bonnie", "pasted-1.03e-s256-r128-n1.txt", "{}"},
        {"stress-ng", "matrix2-cache1-t2.yaml", "{\"stressors\":[\"cache\",\"matrix\"]}"},
        {"stress-ng", "cpu1-t2.log", "{\"stressors\":[\"cpu\"]}"},
    };
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        json_t *runs = runs_of(ids[i].tool, ids[i].file);
        json_t *id =
            hv_parse_identity(ids[i].tool, json_object_get(json_array_get(runs, 0), "info"));
        char *got = json_dumps(id, JSON_COMPACT | JSON_SORT_KEYS);
        CHECK_MSG(got != NULL && strcmp(got, ids[i].params) == 0, "%s/%s: %s, expected %s",
                  ids[i].tool, ids[i].file, got ? got : "NULL", ids[i].params);
        /* Given nothing, the params are the identity. */
        json_t *params = NULL;
        char err[HV_PARSE_ERR_MAX] = "";
        CHECK_MSG(hv_parse_identity_apply(ids[i].tool, runs, NULL, &params, err, sizeof err) == 0,
                  "%s", err);
        CHECK(json_equal(params, id));
        free(got);
        json_decref(params);
        json_decref(id);
        json_decref(runs);
    }
    json_t *none = hv_parse_identity("iozone", NULL);
    CHECK(json_object_size(none) == 0);
    json_decref(none);
}

/* Applies given (JSON) to the runs of a fixture: the params it records
 * (compact, keys sorted) or the error, and the first run's info. */
static char *apply_given(const char *tool, const char *file, const char *given, json_t **info)
{
    json_t *runs = runs_of(tool, file);
    json_t *g = json_loads(given, 0, NULL), *params = NULL;
    char err[HV_PARSE_ERR_MAX] = "";
    char *out = hv_parse_identity_apply(tool, runs, g, &params, err, sizeof err) == 0
                    ? json_dumps(params, JSON_COMPACT | JSON_SORT_KEYS)
                    : strdup(err);
    if (info != NULL)
        *info = json_incref(json_object_get(json_array_get(runs, 0), "info"));
    json_decref(params);
    json_decref(g);
    json_decref(runs);
    return out;
}

/* Params given beside an output: what it does not say fills its identity
 * (and its info), what it says otherwise is refused naming both values;
 * keys and values are checked. */
static void check_given(void)
{
    json_t *info = NULL;
    /* A pasted bonnie++ table has no size: --params size=4G gives it. */
    char *got = apply_given("bonnie", "pasted-1.03e-s256-r128-n1.txt", "{\"size\":\"4G\"}", &info);
    CHECK_STR(got, "{\"size\":4294967296}");
    CHECK_STR(json_string_value(json_object_get(info, "file_size")), "4G");
    CHECK_STR(json_string_value(json_object_get(json_object_get(info, "given"), "size")), "4G");
    free(got);
    json_decref(info);
    static const struct {
        const char *tool, *file, *given, *want; /* want: the params, or the error */
    } cases[] = {
        /* The size the output says, written another way, is no contradiction. */
        {"bonnie", "D-f-s1024-r512.csv", "{\"size\":\"1024M\"}", "{\"size\":1073741824}"},
        {"bonnie", "D-f-s1024-r512.csv", "{\"size\":\"4G\"}",
         "bonnie++: the params say size 4G where the output says 1G: a param may say what the "
         "output does not, never the contrary"},
        /* The MSS iperf3 printed is its identity. */
        {"iperf3", "client-tcp-P1.json", "{\"mss\":1400}",
         "iperf3: the params say mss 1400 where the output says 32768: a param may say what the "
         "output does not, never the contrary"},
        {"iperf3", "client-tcp-M1400.json", "{\"mss\":\"1400\"}",
         "{\"bitrate\":0,\"direction\":\"forward\",\"mss\":1400,\"protocol\":\"tcp\","
         "\"role\":\"client\",\"streams\":1}"},
        {"fio", "randread-qd1.json", "{\"iodepth\":\"deep\"}",
         "fio: the params' iodepth \"deep\" is not a whole number"},
        /* What the tool never prints: kept as given, a plain number as one. */
        {"iperf", "client-P1.csv", "{\"direction\":\"Reverse\",\"mss\":\"1448\"}",
         "{\"direction\":\"Reverse\",\"mss\":1448,\"protocol\":\"tcp\",\"streams\":1}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        got = apply_given(cases[i].tool, cases[i].file, cases[i].given, NULL);
        CHECK_STR(got, cases[i].want);
        free(got);
    }
    /* Keys and values. */
    json_t *errors = json_array();
    json_t *bad = json_loads("{\"Size\":\"4G\",\"ok\":[1],\"fine\":\"x\",\"n\":2.5}", 0, NULL);
    CHECK(hv_params_given_check(bad, "/params", errors) == 2);
    CHECK_STR(json_string_value(json_object_get(json_array_get(errors, 0), "path")), "/params");
    CHECK_STR(json_string_value(json_object_get(json_array_get(errors, 1), "path")), "/params/ok");
    json_t *long_value = json_pack("{s:s}", "v",
                                   "12345678901234567890123456789012345678901234567890"
                                   "123456789012345");
    CHECK(hv_params_given_check(long_value, "/params", errors) == 1);
    CHECK(hv_params_given_check(NULL, "/params", errors) == 0);
    json_decref(long_value);
    json_decref(bad);
    json_decref(errors);
}

/* What the new readings keep beside the metrics. */
static void check_kept_info(void)
{
    size_t len;
    json_t *run, *runs;
    char err[HV_PARSE_ERR_MAX] = "";
    /* iperf3: the streams whole, the MSS. */
    char *text = slurp("iperf3", "client-tcp-P4.json", &len);
    CHECK(hv_parse_tool_run("iperf3", text, len, &run, err, sizeof err) == 0);
    json_t *info = json_object_get(run, "info");
    CHECK(json_array_size(json_object_get(info, "streams")) == 4);
    CHECK(json_integer_value(json_object_get(info, "mss")) == 32768);
    CHECK(json_integer_value(json_object_get(
              json_object_get(json_array_get(json_object_get(info, "streams"), 2), "sender"),
              "max_snd_cwnd")) ==
          json_integer_value(json_object_get(
              json_object_get(json_array_get(json_object_get(info, "streams"), 2), "sender"),
              "max_snd_cwnd")));
    json_decref(run);
    free(text);
    text = slurp("iperf3", "client-udp.json", &len);
    CHECK(hv_parse_tool_run("iperf3", text, len, &run, err, sizeof err) == 0);
    CHECK(json_array_size(json_object_get(json_object_get(run, "info"), "streams")) == 1);
    json_decref(run);
    free(text);
    /* Each output of a file keeps its own samples and time. */
    text = slurp("iperf3", "x2-client-tcp-P2.json", &len);
    CHECK(hv_parse_tool_runs("iperf3", text, len, &runs, err, sizeof err) == 0);
    CHECK(json_array_size(json_object_get(json_array_get(runs, 0), "samples")) == 2);
    CHECK(json_array_size(json_object_get(json_array_get(runs, 1), "samples")) == 2);
    json_decref(runs);
    free(text);
    /* sysbench: the latencies in ms as printed; fileio is a disk
     * measurement with its options. */
    text = slurp("sysbench", "fileio-rndrw.txt", &len);
    CHECK(hv_parse_tool_run("sysbench", text, len, &run, err, sizeof err) == 0);
    info = json_object_get(run, "info");
    CHECK_STR(json_string_value(json_object_get(info, "kind")), "disk");
    CHECK_STR(json_string_value(json_object_get(info, "test")), "fileio");
    CHECK_STR(json_string_value(json_object_get(info, "file_test_mode")), "rndrw");
    CHECK_STR(json_string_value(json_object_get(info, "file_block_size")), "16KiB");
    CHECK_STR(json_string_value(json_object_get(info, "file_total_size")), "64MiB");
    CHECK_NEAR(json_number_value(json_object_get(json_object_get(info, "latency_ms"), "sum")),
               2989.73, 1e-9);
    CHECK_NEAR(json_number_value(json_object_get(json_object_get(info, "latency_ms"), "p95")), 0.01,
               1e-12);
    json_decref(run);
    free(text);
    /* bonnie++: a table beside the CSV is said; 1.0x CSV takes the
     * table's version. */
    text = slurp("bonnie", "lkml-2004-03-19-1.03.txt", &len);
    CHECK(hv_parse_tool_run("bonnie", text, len, &run, err, sizeof err) == 0);
    info = json_object_get(run, "info");
    CHECK(json_is_true(json_object_get(info, "table")));
    CHECK_STR(json_string_value(json_object_get(info, "name")), "dynamic-109.harddata.net");
    CHECK_STR(json_string_value(json_object_get(info, "file_size")), "20000M");
    CHECK_STR(json_string_value(json_object_get(info, "num_files")), "16");
    json_decref(run);
    free(text);
}

/* ------------------------------------------------------------------ */
/* bonnie++ tables as posts quote them */

/* Parses text[0..len) as bonnie++'s table-th table; returns the runs, or
 * NULL with err set. */
static json_t *bonnie_runs(const char *text, size_t len, int table, char *err, size_t errlen)
{
    json_t *runs = NULL;
    if (hv_parse_tool_table_runs("bonnie", text, len, table, &runs, err, errlen) != 0)
        return NULL;
    return runs;
}

/* Checks that text[0..len) as the table-th table is refused with an error
 * holding want. */
static void check_refused(const char *what, const char *tool, const char *text, size_t len,
                          int table, const char *want)
{
    json_t *runs = (json_t *)1;
    char err[HV_PARSE_ERR_MAX] = "";
    int rc = hv_parse_tool_table_runs(tool, text, len, table, &runs, err, sizeof err);
    CHECK_MSG(rc == -1 && runs == NULL && strstr(err, want) != NULL,
              "%s (table %d): \"%s\", expected \"%s\"", what, table, err, want);
}

/* Checks that file, cut anywhere inside its last line (line no) and left
 * without a newline, is refused as cut off. */
static void check_cut_last_line(const char *file, int no)
{
    size_t len;
    char *text = slurp("bonnie", file, &len);
    size_t end = text[len - 1] == '\n' ? len - 1 : len, last = end;
    while (last > 0 && text[last - 1] != '\n')
        last--;
    char want[96];
    snprintf(want, sizeof want, "bonnie++: the output ends in the middle of line %d, without", no);
    for (size_t cut = last + 1; cut < end; cut++)
        check_refused(file, "bonnie", text, cut, 0, want);
    free(text);
}

static void check_pasted(void)
{
    char err[HV_PARSE_ERR_MAX] = "";
    size_t len, wlen;
    /* The pasted table reads as the table it was cut from: the same
     * metrics as the CSV line bonnie++ printed under it (1.0x prints
     * whole K/s in both); what the cut took is unknown. */
    char *text = slurp("bonnie", "pasted-1.03e-s256-r128-n1.txt", &len);
    char *whole = slurp("bonnie", "1.03e-s256-r128-n1.txt", &wlen);
    json_t *runs = bonnie_runs(text, len, 0, err, sizeof err);
    json_t *wruns = bonnie_runs(whole, wlen, 0, err, sizeof err);
    CHECK_MSG(runs != NULL && wruns != NULL, "%s", err);
    json_t *run = json_array_get(runs, 0), *info = json_object_get(run, "info");
    CHECK(json_equal(json_object_get(run, "metrics"),
                     json_object_get(json_array_get(wruns, 0), "metrics")));
    CHECK(json_is_null(json_object_get(info, "file_size")));
    CHECK(json_is_null(json_object_get(info, "num_files")));
    CHECK(json_object_get(info, "name") == NULL);
    CHECK(json_array_size(json_object_get(info, "notes")) == 2);
    CHECK(strstr(json_string_value(json_array_get(json_object_get(info, "notes"), 0)),
                 "the file size is unknown") != NULL);
    /* +++++ is too fast to time: no metric, named in too_fast. */
    json_t *fast = json_pack("[s,s,s,s,s,s,s,s]", "get_block", "seeks", "seq_create", "seq_stat",
                             "seq_del", "ran_create", "ran_stat", "ran_del");
    CHECK(json_equal(json_object_get(info, "too_fast"), fast));
    json_decref(fast);
    CHECK_NEAR(json_number_value(json_object_get(json_object_get(info, "cpu_pct"), "put_block")),
               23, 0);
    /* Without its final newline the last row reads the same ... */
    json_t *open = bonnie_runs(text, len - 1, 0, err, sizeof err);
    CHECK_MSG(open != NULL && json_equal(open, runs), "%s", err);
    json_decref(open);
    /* ... but cut anywhere inside it, it is refused as cut off; so is a
     * latency row (1.9x). */
    check_cut_last_line("pasted-1.03e-s256-r128-n1.txt", 8);
    check_cut_last_line("pasted-2.00a-f-s1024-r512-n1-no-newline.txt", 10);
    json_decref(runs);
    json_decref(wruns);
    free(whole);
    free(text);

    /* The 1.02b table without its final newline reads as with it. */
    text = slurp("bonnie", "pasted-1.02b-s256-r128-n1-no-newline.txt", &len);
    CHECK(text[len - 1] != '\n');
    runs = bonnie_runs(text, len, 0, err, sizeof err);
    text = realloc(text, len + 2);
    memcpy(text + len, "\n", 2);
    json_t *closed = bonnie_runs(text, len + 1, 0, err, sizeof err);
    CHECK_MSG(runs != NULL && closed != NULL && json_equal(runs, closed), "%s", err);
    json_decref(runs);
    json_decref(closed);
    free(text);

    /* A post of two tables: refused unless one is picked. */
    text = slurp("bonnie", "pasted-1.03e-two-tables.txt", &len);
    check_refused("pasted-1.03e-two-tables.txt", "bonnie", text, len, 0,
                  "bonnie++: the output holds 2 tables quoted without their rows' machine names "
                  "and sizes, as a post quotes the runs it compares; import one table at a time "
                  "(hvbench import --table N, \"table\" in the API)");
    check_refused("pasted-1.03e-two-tables.txt", "bonnie", text, len, 3,
                  "bonnie++: there is no table 3: the output holds 2 tables");
    check_refused("pasted-1.03e-two-tables.txt", "bonnie", text, len, -1,
                  "bonnie++: table -1: tables count from 1");
    check_refused("pasted-1.03e-two-tables.txt", "fio", text, len, 1,
                  "fio: its outputs hold no tables to pick from (table 1)");
    free(text);
    text = slurp("bonnie", "s64-r32.csv", &len);
    check_refused("s64-r32.csv", "bonnie", text, len, 1,
                  "bonnie++: there is no table 1: the output holds 0 tables (only CSV lines)");
    free(text);

    /* Whole tables pick as well: of two outputs joined with cat (tables
     * and CSV lines), the second alone is the whole file's second run. */
    text = slurp("bonnie", "x2-normal-f-s1024-r512-n1.txt", &len);
    runs = bonnie_runs(text, len, 0, err, sizeof err);
    json_t *second = bonnie_runs(text, len, 2, err, sizeof err);
    CHECK_MSG(runs != NULL && second != NULL, "%s", err);
    CHECK(json_array_size(runs) == 2 && json_array_size(second) == 1);
    CHECK(json_equal(json_array_get(second, 0), json_array_get(runs, 1)));
    json_decref(runs);
    json_decref(second);
    free(text);
    /* One table of two rows (-x 2) is one table of two runs. */
    text = slurp("bonnie", "lkml-2003-04-17-1.02b-x2-csv2txt.txt", &len);
    runs = bonnie_runs(text, len, 1, err, sizeof err);
    CHECK_MSG(runs != NULL && json_array_size(runs) == 2, "%s", err);
    json_decref(runs);
    check_refused("lkml-2003-04-17-1.02b-x2-csv2txt.txt", "bonnie", text, len, 2,
                  "bonnie++: there is no table 2: the output holds 1 table");
    free(text);
}

/* ------------------------------------------------------------------ */
/* Bad fixtures */

static const struct bad {
    const char *tool, *file;
    const char *message; /* a part of the error */
    bool add_newline;    /* give it the final newline it lacks */
} bads[] = {
    {"fio", "bad/error-proc.json", "fio: jobs[0] (badpath) failed with error 2 (No such file", 0},
    {"fio", "bad/normal-output.txt", "fio: no JSON object in the output", 0},
    {"fio", "bad/seq-write-truncated.json", "fio: the JSON ends early at line 128 (cut off?)", 0},
    {"fio", "bad/seq-write-bw-not-number.json",
     "fio: jobs[0] (seqwrite) write.bw_bytes is not a number", 0},
    {"fio", "bad/wrong-format-iperf3.json", "looks like iperf3 output", 0},
    {"fio", "bad/randread-qd8-p99-negative.json",
     "fio: jobs[0] (randread) read.clat_ns.percentile.99.000000 is -5996544: a latency cannot "
     "be negative",
     0},
    {"fio", "bad/randread-ss6-ramp2-truncated.json", "fio: the JSON ends early at line 282", 0},
    {"fio", "bad/randread-ss6-ramp2-ss-bw-not-number.json",
     "fio: jobs[0] (hvbench).steadystate.data.bw[2] is not a number", 0},
    {"iperf3", "bad/refused.json",
     "iperf3: the run failed: unable to connect to server: Connection refused", 0},
    {"iperf3", "bad/client-tcp-P4-truncated.json", "iperf3: the JSON ends early at line 170", 0},
    {"iperf3", "bad/client-tcp-P1-bps-not-number.json",
     "iperf3: end.sum_received.bits_per_second is not a number", 0},
    {"iperf3", "bad/wrong-format-sysbench.txt", "looks like sysbench output", 0},
    {"iperf", "bad/client-P2-truncated.csv", "iperf: the output ends in the middle of line 1", 0},
    {"iperf", "bad/client-P2-bps-not-number.csv",
     "iperf: line 1, field 9 (bits per second) is not a number: \"4.9e9bps\"", 0},
    {"iperf", "bad/client-P2-truncated.txt", "iperf: the output ends in the middle of line 5", 0},
    {"iperf", "bad/client-P2-truncated.txt", "iperf: no result line", 1},
    {"iperf", "bad/wrong-format-fio.json", "looks like fio output", 0},
    {"iperf", "bad/client-P1-line-twice.csv",
     "iperf: line 2 repeats line 1 (stream 1, 0-2 s, the same connection): the file holds a "
     "second report of one test; import it once",
     0},
    {"bonnie", "bad/f-s4096-r2048-truncated.csv",
     "bonnie++: the output ends in the middle of line 1", 0},
    {"bonnie", "bad/f-s4096-r2048-truncated.csv",
     "line 1 has 18 fields; a bonnie++ 1.9x CSV line has 50 (cut off?)", 1},
    {"bonnie", "bad/f-s4096-r2048-put-block-not-number.csv",
     "bonnie++: line 1, field 12 (put_block: block write K/s) is not a number: \"326x56\"", 0},
    {"bonnie", "bad/f-s4096-r2048-truncated.txt",
     "bonnie++: the output ends in the middle of line 3", 0},
    {"bonnie", "bad/f-s4096-r2048-truncated.txt", "no \"/sec %CP\" column header", 1},
    {"bonnie", "bad/f-s4096-r2048-block-not-number.txt",
     "bonnie++: line 4: put_block (block write K/s) is not a number: \"3l9m\"", 0},
    {"bonnie", "bad/wrong-format-iperf.csv", "looks like iperf output", 0},
    {"sysbench", "bad/cpu-t2-truncated.txt", "sysbench: the output ends in the middle of line 19",
     0},
    {"sysbench", "bad/cpu-t2-truncated.txt", "ends before its \"Threads fairness\" section", 1},
    {"sysbench", "bad/memory-truncated.txt", "sysbench: the output ends in the middle of line 24",
     0},
    {"sysbench", "bad/memory-truncated.txt", "line 24: total time is not a number: \"\"", 1},
    {"sysbench", "bad/cpu-t2-eps-not-number.txt",
     "sysbench: line 15: events per second is not a number: \"3362,67x\"", 0},
    {"sysbench", "bad/wrong-format-stress-ng.log", "looks like stress-ng output", 0},
    {"sysbench", "bad/cpu-warm2-interval1-truncated.txt",
     "sysbench: the output has the checkpoint's report (--report-checkpoints) but the final "
     "report ends before its \"Threads fairness\" section",
     0},
    {"stress-ng", "bad/cpu1-t2-truncated.yaml",
     "stress-ng: the output ends in the middle of line 19", 0},
    {"stress-ng", "bad/cpu1-t2-truncated.yaml", "ends before its end marker \"...\"", 1},
    {"stress-ng", "bad/cpu1-t2-truncated.log", "stress-ng: the output ends in the middle of line 4",
     0},
    {"stress-ng", "bad/cpu1-t2-truncated.log", "ends before \"successful run completed\"", 1},
    {"stress-ng", "bad/cpu1-t2-rate-not-number.yaml",
     "stress-ng: line 31: bogo-ops-per-second-real-time of cpu is not a number: \"fast\"", 0},
    {"stress-ng", "bad/wrong-format-sysbench.txt", "looks like sysbench output", 0},
    /* Files of several outputs: the damaged one is named. */
    {"fio", "bad/x2-randread-qd4-truncated.json",
     "fio: output 2 of the file: the JSON ends early at line 363 (cut off?)", 0},
    {"iperf3", "bad/x2-client-tcp-P2-truncated.json",
     "iperf3: output 2 of the file: the JSON ends early at line 294 (cut off?)", 0},
    {"iperf", "bad/x2-client-P1-P2.csv",
     "iperf: line 2 starts another test (stream 1 again, on another connection): the file "
     "holds several iperf 2 reports; import each test on its own",
     0},
    {"stress-ng", "bad/x2-cpu1-t2-truncated.log",
     "stress-ng: output 2 of the file: the log ends before \"successful run completed\"", 0},
    {"sysbench", "bad/x2-cpu-t2-truncated.txt",
     "sysbench: output 2 of the file: the report ends before its \"Threads fairness\" section", 0},
    {"sysbench", "bad/fileio-rndrw-truncated.txt",
     "sysbench: the output ends in the middle of line 26", 0},
    {"sysbench", "bad/fileio-rndrw-truncated.txt",
     "sysbench: the report ends before its \"Threads fairness\" section", 1},
    {"sysbench", "bad/fileio-rndrw-reads-not-number.txt",
     "sysbench: line 24: reads/s is not a number: \"3291,36\"", 0},
    {"bonnie", "bad/x2-normal-one-csv-line.txt",
     "bonnie++: the tables show 2 runs but the output has 1 CSV line", 0},
    {"bonnie", "bad/normal-f-s1024-r512-n1-truncated.txt",
     "bonnie++: the output ends in the middle of line 20", 0},
    {"bonnie", "bad/normal-f-s1024-r512-n1-truncated.txt",
     "bonnie++: line 20 ends before the table's last column (cut off?)", 1},
    {"bonnie", "bad/lkml-2003-11-04-1.03-wide-not-number.txt",
     "bonnie++: line 3: put_block (block write K/s) is not a number: \"127O68\"", 0},
    {"bonnie", "bad/lkml-2004-03-19-1.03-26-fields.csv",
     "bonnie++: line 1 is a CSV line of 26 fields: neither bonnie++ 1.0x's (27 fields)", 0},
};

static void check_bad(const struct bad *b)
{
    size_t len;
    char *text = slurp(b->tool, b->file, &len);
    if (b->add_newline) {
        text = realloc(text, len + 2);
        text[len++] = '\n';
        text[len] = '\0';
    }
    json_t *runs = (json_t *)1;
    char err[HV_PARSE_ERR_MAX] = "";
    int rc = hv_parse_tool_runs(b->tool, text, len, &runs, err, sizeof err);
    CHECK(rc == -1);
    CHECK(runs == NULL);
    if (strstr(err, b->message) == NULL)
        fprintf(stderr, "%s/%s%s: error \"%s\", expected \"%s\"\n", b->tool, b->file,
                b->add_newline ? " + newline" : "", err, b->message);
    CHECK(strstr(err, b->message) != NULL);
    free(text);
}

/* ------------------------------------------------------------------ */
/* Cut outputs, other tools' outputs */

/* Parses text[0..len) as tool: either runs with metrics, or an error that
 * names the tool. Returns the outcome (0 parsed, -1 refused). */
static int parse_cleanly(const char *tool, const char *text, size_t len)
{
    json_t *runs = NULL;
    char err[HV_PARSE_ERR_MAX] = "";
    int rc = hv_parse_tool_runs(tool, text, len, &runs, err, sizeof err);
    const char *display = hv_parser_find(tool)->display;
    if (rc == 0) {
        CHECK(json_array_size(runs) >= 1);
        CHECK(json_array_size(json_object_get(json_array_get(runs, 0), "metrics")) >= 1);
    } else {
        CHECK(runs == NULL);
        CHECK(strncmp(err, display, strlen(display)) == 0 && err[strlen(display)] == ':');
    }
    json_decref(runs);
    return rc;
}

/* Formats whose end shows: a JSON document, sysbench's last section,
 * stress-ng's YAML end marker and "run completed". */
static bool self_delimited(const char *tool, const char *file)
{
    return ends_with(file, ".json") || strcmp(tool, "sysbench") == 0 ||
           strcmp(tool, "stress-ng") == 0;
}

/* Whether the first n runs of a are the runs of b, metric for metric. */
static bool same_runs(const json_t *a, const json_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!json_equal(json_object_get(json_array_get(a, i), "metrics"),
                        json_object_get(json_array_get(b, i), "metrics")))
            return false;
    return true;
}

static void check_cuts(const char *tool, const char *file)
{
    size_t len;
    char *text = slurp(tool, file, &len);
    /* Every 97th byte: a copy of exactly that many bytes, so ASan sees a
     * read past the cut. */
    for (size_t cut = 0; cut < len; cut += 97) {
        char *copy = malloc(cut ? cut : 1);
        memcpy(copy, text, cut);
        parse_cleanly(tool, copy, cut);
        free(copy);
    }
    /* Every line: a format that shows its end refuses all but whole
     * outputs: a file of several may be cut between two of them, and
     * then reads as the runs before the cut, unchanged. */
    json_t *whole = NULL;
    char err[HV_PARSE_ERR_MAX];
    if (hv_parse_tool_runs(tool, text, len, &whole, err, sizeof err) != 0)
        whole = NULL;
    for (size_t cut = 0; cut < len; cut++) {
        if (text[cut] != '\n' || text[cut + 1 + strspn(text + cut + 1, " \n")] == '\0')
            continue; /* not a line's end, or only blank lines follow */
        if (!self_delimited(tool, file)) {
            parse_cleanly(tool, text, cut + 1);
            continue;
        }
        json_t *runs = NULL;
        int rc = hv_parse_tool_runs(tool, text, cut + 1, &runs, err, sizeof err);
        size_t n = json_array_size(runs);
        /* A damaged file of several outputs (bad/x2-*) reads as the
         * outputs before the damage when cut between them. */
        bool ok =
            rc != 0 || (whole != NULL ? n < json_array_size(whole) && same_runs(runs, whole, n)
                                      : strncmp(file, "bad/x2-", 7) == 0);
        if (!ok)
            fprintf(stderr, "%s/%s: the first %zu bytes parse as %zu run(s)\n", tool, file, cut + 1,
                    n);
        CHECK(ok);
        if (rc != 0)
            CHECK(strncmp(err, hv_parser_find(tool)->display,
                          strlen(hv_parser_find(tool)->display)) == 0);
        json_decref(runs);
    }
    json_decref(whole);
    free(text);
}

/* Every fixture of one tool given to every other tool's parser. */
static void check_cross(const char *tool, const char *file)
{
    size_t len;
    char *text = slurp(tool, file, &len);
    /* bad/wrong-format-* are other tools' good outputs. */
    for (const char *const *other = hv_parser_names(); *other != NULL; other++) {
        if (strcmp(*other, tool) == 0 || strncmp(file, "bad/wrong-format-", 17) == 0)
            continue;
        int rc = parse_cleanly(*other, text, len);
        if (rc == 0)
            fprintf(stderr, "%s/%s parses as %s output\n", tool, file, *other);
        CHECK(rc != 0);
    }
    /* ... and the guess names the right tool for good outputs. */
    if (strncmp(file, "bad/", 4) != 0) {
        const char *g = hv_parser_guess(text);
        if (g == NULL || strcmp(g, tool) != 0)
            fprintf(stderr, "%s/%s: guessed as %s\n", tool, file, g ? g : "nothing");
        CHECK(g != NULL && strcmp(g, tool) == 0);
    }
    free(text);
}

/* Runs fn on every file of fixtures/<tool>/ and fixtures/<tool>/bad/ but
 * the READMEs and fio's job file. */
static void each_fixture(void (*fn)(const char *tool, const char *file))
{
    static const char *const subdirs[] = {"", "bad/"};
    int seen = 0;
    for (const char *const *tool = hv_parser_names(); *tool != NULL; tool++) {
        for (size_t s = 0; s < 2; s++) {
            char dir[512];
            snprintf(dir, sizeof dir, "%s/%s/%s", fixtures, *tool, subdirs[s]);
            DIR *d = opendir(dir);
            CHECK(d != NULL);
            struct dirent *e;
            while (d != NULL && (e = readdir(d)) != NULL) {
                if (e->d_name[0] == '.' || strcmp(e->d_name, "bad") == 0 ||
                    ends_with(e->d_name, ".md") || ends_with(e->d_name, ".fio"))
                    continue;
                char file[300];
                snprintf(file, sizeof file, "%s%s", subdirs[s], e->d_name);
                fn(*tool, file);
                seen++;
            }
            if (d != NULL)
                closedir(d);
        }
    }
    CHECK(seen >= 60);
}

/* Every good fixture has its rows in parsers_goods_*.h. */
static void check_listed(const char *tool, const char *file)
{
    if (strncmp(file, "bad/", 4) == 0)
        return;
    bool listed = false;
    for (size_t t = 0; t < sizeof good_tables / sizeof good_tables[0]; t++)
        for (size_t i = 0; i < good_tables[t].n; i++)
            listed |= strcmp(good_tables[t].v[i].tool, tool) == 0 &&
                      strcmp(good_tables[t].v[i].file, file) == 0;
    for (size_t i = 0; i < sizeof goods_disk_tables / sizeof goods_disk_tables[0]; i++)
        listed |= strcmp(goods_disk_tables[i].g.tool, tool) == 0 &&
                  strcmp(goods_disk_tables[i].g.file, file) == 0;
    if (!listed)
        fprintf(stderr, "%s/%s has no expected metrics in test_parsers.c\n", tool, file);
    CHECK(listed);
}

/* ------------------------------------------------------------------ */

static void check_api(void)
{
    /* The table, its names and aliases. */
    const char *const *names = hv_parser_names();
    static const char *const expected[] = {"fio",    "iperf3",   "iperf",
                                           "bonnie", "sysbench", "stress-ng"};
    for (size_t i = 0; i < 6; i++)
        CHECK_STR(names[i], expected[i]);
    CHECK(names[6] == NULL);
    CHECK(hv_parser_find("bonnie++") == hv_parser_find("bonnie"));
    CHECK(hv_parser_find("iperf2") == hv_parser_find("iperf"));
    CHECK(hv_parser_find("iozone") == NULL);
    CHECK(hv_parser_find(NULL) == NULL);
    CHECK_STR(hv_parser_find("bonnie")->kind, "disk");
    CHECK_STR(hv_parser_find("iperf3")->kind, "net");
    CHECK_STR(hv_parser_find("stress-ng")->kind, "cpu");

    json_t *runs = (json_t *)1, *metrics = (json_t *)1, *info = (json_t *)1;
    char err[HV_PARSE_ERR_MAX];
    CHECK(hv_parse_tool_runs("iozone", "x\n", 2, &runs, err, sizeof err) == -1);
    CHECK(runs == NULL);
    CHECK(strstr(err, "iozone: unknown tool; hvbench reads fio, iperf3, iperf, bonnie, "
                      "sysbench, stress-ng") != NULL);
    CHECK(hv_parse_tool_runs("fio", "", 0, &runs, err, sizeof err) == -1);
    CHECK_STR(err, "fio: the output is empty");
    CHECK(hv_parse_tool_runs("fio", NULL, 5, &runs, err, sizeof err) == -1);
    CHECK_STR(err, "fio: the output is empty");
    CHECK(hv_parse_tool_runs("sysbench", " \n\t\n", 4, &runs, err, sizeof err) == -1);
    CHECK_STR(err, "sysbench: the output is empty");
    CHECK(hv_parse_tool_runs("iperf", "ab\0cd\n", 6, &runs, err, sizeof err) == -1);
    CHECK_STR(err, "iperf: the output holds a NUL byte at offset 2: not a text output");
    /* A tiny error buffer is cut, not overrun. */
    char tiny[8];
    CHECK(hv_parse_tool_runs("fio", "{}", 2, &runs, tiny, sizeof tiny) == -1);
    CHECK(strlen(tiny) == 7);

    /* One run: metrics and info; several runs are refused there. */
    size_t len;
    char *text = slurp("sysbench", "cpu-t2.txt", &len);
    CHECK(hv_parse_tool_output("sysbench", text, len, &metrics, &info, err, sizeof err) == 0);
    CHECK(json_array_size(metrics) == 5);
    CHECK_STR(json_string_value(json_object_get(info, "test")), "cpu");
    CHECK(json_integer_value(json_object_get(info, "threads")) == 1);
    json_decref(metrics);
    json_decref(info);
    free(text);
    text = slurp("bonnie", "x2-D-f-s1024-r512.csv", &len);
    CHECK(hv_parse_tool_output("bonnie++", text, len, &metrics, &info, err, sizeof err) == -1);
    CHECK(metrics == NULL && info == NULL);
    CHECK_STR(err, "bonnie++: the output holds 2 runs; one was expected");
    free(text);

    /* What the newline rule is for: the cut CSV with a newline added
     * looks like a complete one-stream run. */
    text = slurp("iperf", "bad/client-P2-truncated.csv", &len);
    text = realloc(text, len + 2);
    memcpy(text + len, "\n", 2);
    CHECK(hv_parse_tool_output("iperf", text, len + 1, &metrics, &info, err, sizeof err) == 0);
    CHECK_NEAR(json_number_value(json_object_get(json_array_get(metrics, 0), "value")),
               G(4937813558.0), 1e-12);
    json_decref(metrics);
    json_decref(info);
    free(text);

    /* fio: the start is the report's stamp less the runtime. */
    text = slurp("fio", "jobfile-seqread-randrw.json", &len);
    CHECK(hv_parse_tool_output("fio", text, len, &metrics, &info, err, sizeof err) == 0);
    CHECK_NEAR(json_number_value(json_object_get(info, "duration_s")), (51 + 2001) / 1000.0, 1e-12);
    CHECK_STR(json_string_value(json_object_get(info, "finished_at")), "2026-11-29T19:39:02.760Z");
    CHECK_STR(json_string_value(json_object_get(info, "started_at")), "2026-11-29T19:39:00.708Z");
    CHECK_STR(
        json_string_value(json_object_get(json_array_get(json_object_get(info, "jobs"), 1), "rw")),
        "randrw");
    CHECK_STR(
        json_string_value(json_object_get(json_object_get(info, "global_options"), "ioengine")),
        "libaio");
    json_decref(metrics);
    json_decref(info);
    free(text);
}

int main(void)
{
    const char *env = getenv("HV_FIXTURES");
    if (env != NULL && env[0] != '\0')
        fixtures = env;
    check_api();
    for (size_t t = 0; t < sizeof good_tables / sizeof good_tables[0]; t++)
        for (size_t i = 0; i < good_tables[t].n; i++)
            check_good(&good_tables[t].v[i], 0);
    for (size_t i = 0; i < sizeof goods_disk_tables / sizeof goods_disk_tables[0]; i++)
        check_good(&goods_disk_tables[i].g, goods_disk_tables[i].table);
    for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++)
        check_bad(&bads[i]);
    for (size_t i = 0; i < sizeof sampleds / sizeof sampleds[0]; i++)
        check_sampled(&sampleds[i]);
    check_steady_info();
    check_alike();
    check_identity();
    check_given();
    check_kept_info();
    check_pasted();
    each_fixture(check_listed);
    each_fixture(check_cuts);
    each_fixture(check_cross);
    return check_summary("test_parsers");
}
