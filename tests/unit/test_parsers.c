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
 *   - each fixture given to every other tool's parser is refused.
 *
 * Run from the top of the tree (tests/run.sh does), or set HV_FIXTURES. */
#include "parsers.h"

#include "check.h"

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
/* Good fixtures and their metrics */

struct m {
    const char *name;
    double value;
};

#define MAX_M 20

struct good {
    const char *tool, *file;
    int run;                     /* which run of the output */
    int runs;                    /* how many the output holds */
    const char *format;          /* info.format */
    const char *version;         /* info.tool_version, NULL when absent */
    const char *started_at;      /* info.started_at, NULL when absent */
    struct m metrics[MAX_M + 1]; /* every metric of the run */
};

#define MB(bytes_per_s) ((bytes_per_s) / 1e6)
#define KIB(kib_per_s)  ((kib_per_s)*1024.0 / 1e6) /* bonnie++ K/s to MB/s */
#define MIB(mib_per_s)  ((mib_per_s)*1048576.0 / 1e6)
#define GIB(gib_per_s)  ((gib_per_s)*1073741824.0 / 1e6)
#define US(ns)          ((ns) / 1e3)
#define G(bits_per_s)   ((bits_per_s) / 1e9)

static const struct good goods[] = {
    /* fio: bw_bytes, iops, clat_ns percentiles 50/95/99 and max. */
    {"fio",
     "seq-write.json",
     0,
     1,
     "json",
     "fio-3.33",
     "2026-11-29T19:38:50.109Z",
     {{"disk.seq_write.mbps", MB(390167813)},
      {"disk.seq_write.iops", 372.093023},
      {"disk.seq_write.lat_p50_us", US(1155072)},
      {"disk.seq_write.lat_p95_us", US(5734400)},
      {"disk.seq_write.lat_p99_us", US(17432576)},
      {"disk.seq_write.lat_max_us", US(17321099)}}},
    {"fio",
     "randread-qd8.json",
     0,
     1,
     "json",
     "fio-3.33",
     "2026-11-29T19:38:51.237Z",
     {{"disk.rand_read.mbps", MB(64025582)},
      {"disk.rand_read.iops", 15631.245836},
      {"disk.rand_read.lat_p50_us", US(201728)},
      {"disk.rand_read.lat_p95_us", US(2244608)},
      {"disk.rand_read.lat_p99_us", US(5996544)},
      {"disk.rand_read.lat_max_us", US(24558485)}}},
    /* A job file: rw from the job's options, global options beside. */
    {"fio",
     "jobfile-seqread-randrw.json",
     0,
     1,
     "json",
     "fio-3.33",
     NULL,
     {{"disk.seq_read.mbps", MB(657930039)},
      {"disk.seq_read.iops", 627.45098},
      {"disk.seq_read.lat_p50_us", US(864256)},
      {"disk.seq_read.lat_p95_us", US(4947968)},
      {"disk.seq_read.lat_p99_us", US(11075584)},
      {"disk.seq_read.lat_max_us", US(11035122)},
      {"disk.randrw_read.mbps", MB(16207960)},
      {"disk.randrw_read.iops", 3957.021489},
      {"disk.randrw_read.lat_p50_us", US(146432)},
      {"disk.randrw_read.lat_p95_us", US(1204224)},
      {"disk.randrw_read.lat_p99_us", US(5079040)},
      {"disk.randrw_read.lat_max_us", US(22590987)},
      {"disk.randrw_write.mbps", MB(16404469)},
      {"disk.randrw_write.iops", 4004.997501},
      {"disk.randrw_write.lat_p50_us", US(189440)},
      {"disk.randrw_write.lat_p95_us", US(3293184)},
      {"disk.randrw_write.lat_p99_us", US(7962624)},
      {"disk.randrw_write.lat_max_us", US(17154990)}}},
    /* numjobs=2, one group: throughput adds up, latency is the worse job's. */
    {"fio",
     "randwrite-numjobs2.json",
     0,
     1,
     "json",
     "fio-3.33",
     NULL,
     {{"disk.rand_write.mbps", MB(17700205.0 + 17204837.0)},
      {"disk.rand_write.iops", 4321.33933 + 4200.3998},
      {"disk.rand_write.lat_p50_us", US(150528)},
      {"disk.rand_write.lat_p95_us", US(2146304)},
      {"disk.rand_write.lat_p99_us", US(5603328)},
      {"disk.rand_write.lat_max_us", US(16462981)}}},
    /* fio's note on the same stream, before the JSON. */
    {"fio",
     "stderr-mixed-sync-read.json",
     0,
     1,
     "json",
     "fio-3.33",
     NULL,
     {{"disk.seq_read.mbps", MB(1677721600)},
      {"disk.seq_read.iops", 25600},
      {"disk.seq_read.lat_p50_us", US(5152)},
      {"disk.seq_read.lat_p95_us", US(33024)},
      {"disk.seq_read.lat_p99_us", US(1089536)},
      {"disk.seq_read.lat_max_us", US(3653581)}}},
    /* --steadystate and --ramp_time: the totals as without them. */
    {"fio",
     "randread-ss6-ramp2.json",
     0,
     1,
     "json",
     "fio-3.33",
     "2026-11-29T22:09:40.852Z",
     {{"disk.rand_read.mbps", MB(138062506)},
      {"disk.rand_read.iops", 33706.0},
      {"disk.rand_read.lat_p50_us", US(70144)},
      {"disk.rand_read.lat_p95_us", US(166912)},
      {"disk.rand_read.lat_p99_us", US(329728)},
      {"disk.rand_read.lat_max_us", US(18043526)}}},
    {"fio",
     "seqwrite-ss4-partial.json",
     0,
     1,
     "json",
     "fio-3.33",
     "2026-11-29T22:09:48.327Z",
     {{"disk.seq_write.mbps", MB(1381628417)},
      {"disk.seq_write.iops", 1317.623536},
      {"disk.seq_write.lat_p50_us", US(518144)},
      {"disk.seq_write.lat_p95_us", US(839680)},
      {"disk.seq_write.lat_p99_us", US(3031040)},
      {"disk.seq_write.lat_max_us", US(7760513)}}},
    /* A one-second window: fio prints its slope as a bare -nan. */
    {"fio",
     "write-ss1-nan.json",
     0,
     1,
     "json",
     "fio-3.33",
     "2026-11-29T22:15:48.203Z",
     {{"disk.seq_write.mbps", MB(1365040079)},
      {"disk.seq_write.iops", 333261.738262},
      {"disk.seq_write.lat_p50_us", US(1992)},
      {"disk.seq_write.lat_p95_us", US(2640)},
      {"disk.seq_write.lat_p99_us", US(3440)},
      {"disk.seq_write.lat_max_us", US(390121)}}},

    /* iperf3: end.sum_received.bits_per_second, sum_sent.retransmits. */
    {"iperf3",
     "client-tcp-P1.json",
     0,
     1,
     "json",
     "iperf 3.12",
     "2026-11-29T19:39:52.000Z",
     {{"net.tcp.gbps", G(5075640284.515892)}, {"net.tcp.retransmits", 49}}},
    {"iperf3",
     "client-tcp-P4.json",
     0,
     1,
     "json",
     "iperf 3.12",
     "2026-11-29T19:39:49.000Z",
     {{"net.tcp.gbps", G(5582678696.122478)}, {"net.tcp.retransmits", 9}}},
    {"iperf3",
     "server-P4.json",
     0,
     1,
     "json",
     "iperf 3.12",
     "2026-11-29T19:39:49.000Z",
     {{"net.tcp.gbps", G(5582678696.122478)}}},
    {"iperf3",
     "client-tcp-P2-omit1.json",
     0,
     1,
     "json",
     "iperf 3.12",
     "2026-11-29T22:09:57.000Z",
     {{"net.tcp.gbps", G(12859613380.16337)}, {"net.tcp.retransmits", 36}}},
    {"iperf3",
     "server-omit1.json",
     0,
     1,
     "json",
     "iperf 3.12",
     "2026-11-29T22:09:57.000Z",
     {{"net.tcp.gbps", G(12859613380.16337)}}},
    {"iperf3",
     "client-udp-omit1.json",
     0,
     1,
     "json",
     "iperf 3.12",
     "2026-11-29T22:10:04.000Z",
     {{"net.udp.gbps", G(199672118.39446926)},
      {"net.udp.jitter_ms", 0.03257411343293678},
      {"net.udp.loss_pct", 0.163826998689384}}},
    {"iperf3",
     "client-udp.json",
     0,
     1,
     "json",
     "iperf 3.12",
     "2026-11-29T19:39:55.000Z",
     {{"net.udp.gbps", G(197615768.343837)},
      {"net.udp.jitter_ms", 0.34405035433070547},
      {"net.udp.loss_pct", 1.1795543905635648}}},

    /* iperf 2 CSV: the whole-test line per stream (no sum line in 2.1.8). */
    {"iperf", "client-P1.csv", 0, 1, "csv", NULL, NULL, {{"net.tcp.gbps", G(5050573170)}}},
    {"iperf",
     "client-P2.csv",
     0,
     1,
     "csv",
     NULL,
     NULL,
     {{"net.tcp.gbps", G(4937813558.0 + 2034642070.0)}}},
    {"iperf",
     "client-interval-w256k.csv",
     0,
     1,
     "csv",
     NULL,
     NULL,
     {{"net.tcp.gbps", G(4620933390)}}},
    {"iperf",
     "client-P2-enhanced.csv",
     0,
     1,
     "csv",
     NULL,
     NULL,
     {{"net.tcp.gbps", G(4037648890.0 + 3782447019.0)}}},
    {"iperf", "udp-client.csv", 0, 1, "csv", NULL, NULL, {{"net.udp.gbps", G(104868122)}}},
    /* -i 1 -P 2: per-second lines of each stream, then the whole test. */
    {"iperf",
     "client-P2-i1-t6.csv",
     0,
     1,
     "csv",
     NULL,
     NULL,
     {{"net.tcp.gbps", G(10333077015.0 + 11181222842.0)}}},
    {"iperf",
     "server-P2-i1.csv",
     0,
     1,
     "csv",
     NULL,
     NULL,
     {{"net.tcp.gbps", G(11197573851.0 + 10364084640.0)}}},
    {"iperf",
     "udp-server.csv",
     0,
     1,
     "csv",
     NULL,
     NULL,
     {{"net.udp.gbps", G(104885060)}, {"net.udp.jitter_ms", 0.001}, {"net.udp.loss_pct", 0}}},
    /* iperf 2 text: the [SUM] line, else the stream's line. */
    {"iperf", "client-P1.txt", 0, 1, "text", NULL, NULL, {{"net.tcp.gbps", 4.44}}},
    {"iperf", "client-P2.txt", 0, 1, "text", NULL, NULL, {{"net.tcp.gbps", 13.0}}},
    {"iperf", "client-P2-i1.txt", 0, 1, "text", NULL, NULL, {{"net.tcp.gbps", 16.0}}},
    {"iperf", "server-P2.txt", 0, 1, "text", NULL, NULL, {{"net.tcp.gbps", 8.51}}},
    {"iperf",
     "udp-client.txt",
     0,
     1,
     "text",
     NULL,
     NULL,
     {{"net.udp.gbps", 105e6 / 1e9}, {"net.udp.jitter_ms", 0.004}, {"net.udp.loss_pct", 0.13}}},
    {"iperf",
     "udp-server.txt",
     0,
     1,
     "text",
     NULL,
     NULL,
     {{"net.udp.gbps", 105e6 / 1e9}, {"net.udp.jitter_ms", 0.004}, {"net.udp.loss_pct", 0.13}}},

    /* bonnie++ CSV: K/s (KiB) fields, latencies as printed. */
    {"bonnie",
     "f-s4096-r2048.csv",
     0,
     1,
     "csv",
     "2.00a",
     NULL,
     {{"disk.seq_write.mbps", KIB(326856)},
      {"disk.seq_write.lat_max_us", 38170},
      {"disk.rewrite.mbps", KIB(688664)},
      {"disk.rewrite.lat_max_us", 20177},
      {"disk.seq_read.mbps", KIB(2078996)},
      {"disk.seq_read.lat_max_us", 9997},
      {"disk.seeks.iops", 4543},
      {"disk.seeks.lat_max_us", 34942}}},
    /* The same run as bonnie++'s table and as bon_csv2txt's. */
    {"bonnie",
     "f-s4096-r2048.txt",
     0,
     1,
     "table",
     "2.00a",
     NULL,
     {{"disk.seq_write.mbps", MIB(319)},
      {"disk.seq_write.lat_max_us", 38170},
      {"disk.rewrite.mbps", MIB(673)},
      {"disk.rewrite.lat_max_us", 20177},
      {"disk.seq_read.mbps", GIB(2.0)},
      {"disk.seq_read.lat_max_us", 9997},
      {"disk.seeks.iops", 4543},
      {"disk.seeks.lat_max_us", 34942}}},
    {"bonnie",
     "f-s4096-r2048.csv2txt.txt",
     0,
     1,
     "table",
     "2.00a",
     NULL,
     {{"disk.seq_write.mbps", MIB(319)},
      {"disk.seq_write.lat_max_us", 38170},
      {"disk.rewrite.mbps", MIB(673)},
      {"disk.rewrite.lat_max_us", 20177},
      {"disk.seq_read.mbps", GIB(2.0)},
      {"disk.seq_read.lat_max_us", 9997},
      {"disk.seeks.iops", 4543},
      {"disk.seeks.lat_max_us", 34942}}},
    /* Too small a file: "+++++" everywhere but the per-char tests. */
    {"bonnie",
     "s64-r32.csv",
     0,
     1,
     "csv",
     "2.00a",
     NULL,
     {{"disk.seq_write_char.mbps", KIB(317)},
      {"disk.seq_write_char.lat_max_us", 94805},
      {"disk.seq_write.lat_max_us", 2497},
      {"disk.rewrite.lat_max_us", 4073},
      {"disk.seq_read_char.mbps", KIB(418)},
      {"disk.seq_read_char.lat_max_us", 41908},
      {"disk.seq_read.lat_max_us", 6611},
      {"disk.seeks.lat_max_us", 44121}}},
    {"bonnie",
     "s64-r32.txt",
     0,
     1,
     "table",
     "2.00a",
     NULL,
     {{"disk.seq_write_char.mbps", KIB(317)},
      {"disk.seq_write_char.lat_max_us", 94805},
      {"disk.seq_write.lat_max_us", 2497},
      {"disk.rewrite.lat_max_us", 4073},
      {"disk.seq_read_char.mbps", KIB(418)},
      {"disk.seq_read_char.lat_max_us", 41908},
      {"disk.seq_read.lat_max_us", 6611},
      {"disk.seeks.lat_max_us", 44121}}},
    /* bon_csv2txt prints a too-fast test as "0k +++": no metric. */
    {"bonnie",
     "s64-r32.csv2txt.txt",
     0,
     1,
     "table",
     "2.00a",
     NULL,
     {{"disk.seq_write_char.mbps", KIB(317)},
      {"disk.seq_write_char.lat_max_us", 94805},
      {"disk.seq_write.lat_max_us", 2497},
      {"disk.rewrite.lat_max_us", 4073},
      {"disk.seq_read_char.mbps", KIB(418)},
      {"disk.seq_read_char.lat_max_us", 41908},
      {"disk.seq_read.lat_max_us", 6611},
      {"disk.seeks.lat_max_us", 44121}}},
    {"bonnie",
     "D-f-s1024-r512.csv",
     0,
     1,
     "csv",
     "2.00a",
     NULL,
     {{"disk.seq_write.mbps", KIB(75329)},
      {"disk.seq_write.lat_max_us", 20159},
      {"disk.rewrite.mbps", KIB(212758)},
      {"disk.rewrite.lat_max_us", 16412},
      {"disk.seq_read.lat_max_us", 10041},
      {"disk.seeks.iops", 14168},
      {"disk.seeks.lat_max_us", 20344}}},
    {"bonnie",
     "D-f-s1024-r512.txt",
     0,
     1,
     "table",
     "2.00a",
     NULL,
     {{"disk.seq_write.mbps", MIB(73.6)},
      {"disk.seq_write.lat_max_us", 20159},
      {"disk.rewrite.mbps", MIB(208)},
      {"disk.rewrite.lat_max_us", 16412},
      {"disk.seq_read.lat_max_us", 10041},
      {"disk.seeks.iops", 14168},
      {"disk.seeks.lat_max_us", 20344}}},
    {"bonnie",
     "D-f-s1024-r512.csv2txt.txt",
     0,
     1,
     "table",
     "2.00a",
     NULL,
     {{"disk.seq_write.mbps", MIB(73.6)},
      {"disk.seq_write.lat_max_us", 20159},
      {"disk.rewrite.mbps", MIB(208)},
      {"disk.rewrite.lat_max_us", 16412},
      {"disk.seq_read.lat_max_us", 10041},
      {"disk.seeks.iops", 14168},
      {"disk.seeks.lat_max_us", 20344}}},
    /* With the file tests (all too fast; their latencies measured). */
    {"bonnie",
     "f-s1024-r512-n1.csv",
     0,
     1,
     "csv",
     "2.00a",
     NULL,
     {{"disk.seq_write.mbps", KIB(309880)},
      {"disk.seq_write.lat_max_us", 8107},
      {"disk.rewrite.mbps", KIB(604586)},
      {"disk.rewrite.lat_max_us", 8087},
      {"disk.seq_read.lat_max_us", 4093},
      {"disk.seeks.lat_max_us", 28125},
      {"disk.file_seq_create.lat_max_us", 539},
      {"disk.file_seq_stat.lat_max_us", 4236},
      {"disk.file_seq_delete.lat_max_us", 656},
      {"disk.file_rand_create.lat_max_us", 1586},
      {"disk.file_rand_stat.lat_max_us", 115},
      {"disk.file_rand_delete.lat_max_us", 118}}},
    {"bonnie",
     "f-s1024-r512-n1.txt",
     0,
     1,
     "table",
     "2.00a",
     NULL,
     {{"disk.seq_write.mbps", MIB(303)},
      {"disk.seq_write.lat_max_us", 8107},
      {"disk.rewrite.mbps", MIB(590)},
      {"disk.rewrite.lat_max_us", 8087},
      {"disk.seq_read.lat_max_us", 4093},
      {"disk.seeks.lat_max_us", 28125},
      {"disk.file_seq_create.lat_max_us", 539},
      {"disk.file_seq_stat.lat_max_us", 4236},
      {"disk.file_seq_delete.lat_max_us", 656},
      {"disk.file_rand_create.lat_max_us", 1586},
      {"disk.file_rand_stat.lat_max_us", 115},
      {"disk.file_rand_delete.lat_max_us", 118}}},
    {"bonnie",
     "f-s1024-r512-n1.csv2txt.txt",
     0,
     1,
     "table",
     "2.00a",
     NULL,
     {{"disk.seq_write.mbps", MIB(303)},
      {"disk.seq_write.lat_max_us", 8107},
      {"disk.rewrite.mbps", MIB(590)},
      {"disk.rewrite.lat_max_us", 8087},
      {"disk.seq_read.lat_max_us", 4093},
      {"disk.seeks.lat_max_us", 28125},
      {"disk.file_seq_create.lat_max_us", 539},
      {"disk.file_seq_stat.lat_max_us", 4236},
      {"disk.file_seq_delete.lat_max_us", 656},
      {"disk.file_rand_create.lat_max_us", 1586},
      {"disk.file_rand_stat.lat_max_us", 115},
      {"disk.file_rand_delete.lat_max_us", 118}}},
    /* -x 2: a header line and two runs; bon_csv2txt renders both. */
    {"bonnie",
     "x2-D-f-s1024-r512.csv",
     0,
     2,
     "csv",
     "2.00a",
     NULL,
     {{"disk.seq_write.mbps", KIB(30884)},
      {"disk.seq_write.lat_max_us", 49555},
      {"disk.rewrite.mbps", KIB(223555)},
      {"disk.rewrite.lat_max_us", 15493},
      {"disk.seq_read.mbps", KIB(1969249)},
      {"disk.seq_read.lat_max_us", 6190},
      {"disk.seeks.iops", 7545},
      {"disk.seeks.lat_max_us", 22537}}},
    {"bonnie",
     "x2-D-f-s1024-r512.csv",
     1,
     2,
     "csv",
     "2.00a",
     NULL,
     {{"disk.seq_write.mbps", KIB(29591)},
      {"disk.seq_write.lat_max_us", 63236},
      {"disk.rewrite.mbps", KIB(107582)},
      {"disk.rewrite.lat_max_us", 36391},
      {"disk.seq_read.mbps", KIB(783039)},
      {"disk.seq_read.lat_max_us", 22529},
      {"disk.seeks.iops", 9418},
      {"disk.seeks.lat_max_us", 34076}}},
    {"bonnie",
     "x2-D-f-s1024-r512.csv2txt.txt",
     0,
     2,
     "table",
     "2.00a",
     NULL,
     {{"disk.seq_write.mbps", MIB(30.2)},
      {"disk.seq_write.lat_max_us", 49555},
      {"disk.rewrite.mbps", MIB(218)},
      {"disk.rewrite.lat_max_us", 15493},
      {"disk.seq_read.mbps", GIB(1.9)},
      {"disk.seq_read.lat_max_us", 6190},
      {"disk.seeks.iops", 7545},
      {"disk.seeks.lat_max_us", 22537}}},
    {"bonnie",
     "x2-D-f-s1024-r512.csv2txt.txt",
     1,
     2,
     "table",
     "2.00a",
     NULL,
     {{"disk.seq_write.mbps", MIB(28.9)},
      {"disk.seq_write.lat_max_us", 63236},
      {"disk.rewrite.mbps", MIB(105)},
      {"disk.rewrite.lat_max_us", 36391},
      {"disk.seq_read.mbps", MIB(765)},
      {"disk.seq_read.lat_max_us", 22529},
      {"disk.seeks.iops", 9418},
      {"disk.seeks.lat_max_us", 34076}}},

    /* sysbench: events per second; MiB/sec and operations per second. */
    {"sysbench",
     "cpu-t2.txt",
     0,
     1,
     "text",
     "1.0.20",
     NULL,
     {{"cpu.sysbench.events_per_s", 3362.67}}},
    {"sysbench",
     "cpu-threads2-prime10000.txt",
     0,
     1,
     "text",
     "1.0.20",
     NULL,
     {{"cpu.sysbench.events_per_s", 3434.57}}},
    {"sysbench",
     "memory.txt",
     0,
     1,
     "text",
     "1.0.20",
     NULL,
     {{"mem.sysbench.mbps", MIB(4497.33)}, {"mem.sysbench.ops_per_s", 4605268.77}}},
    /* After a checkpoint: the final report, not the checkpoint's. */
    {"sysbench",
     "cpu-t2-warm2-interval1.txt",
     0,
     1,
     "text",
     "1.0.20",
     NULL,
     {{"cpu.sysbench.events_per_s", 5999.63}}},
    {"sysbench",
     "memory-warm1-interval1.txt",
     0,
     1,
     "text",
     "1.0.20",
     NULL,
     {{"mem.sysbench.mbps", MIB(4444.48)}, {"mem.sysbench.ops_per_s", 4551148.09}}},
    {"sysbench",
     "memory-read-1M.txt",
     0,
     1,
     "text",
     "1.0.20",
     NULL,
     {{"mem.sysbench.mbps", MIB(39334.36)}, {"mem.sysbench.ops_per_s", 39334.36}}},

    /* stress-ng: bogo ops/s over real time and over usr+sys time. */
    {"stress-ng",
     "cpu1-t2.yaml",
     0,
     1,
     "yaml",
     "0.15.06",
     "2026-11-29T19:43:04.000Z",
     {{"cpu.stressng.cpu.bogo_ops_per_s", 1339.607633},
      {"cpu.stressng.cpu.bogo_ops_per_cpu_s", 1645.548791}}},
    {"stress-ng",
     "cpu1-t2.log",
     0,
     1,
     "text",
     NULL,
     NULL,
     {{"cpu.stressng.cpu.bogo_ops_per_s", 1339.61},
      {"cpu.stressng.cpu.bogo_ops_per_cpu_s", 1645.55}}},
    {"stress-ng",
     "matrix2-cache1-t2.yaml",
     0,
     1,
     "yaml",
     "0.15.06",
     "2026-11-29T19:43:06.000Z",
     {{"cpu.stressng.matrix.bogo_ops_per_s", 3390.545209},
      {"cpu.stressng.matrix.bogo_ops_per_cpu_s", 4780.543400},
      {"cpu.stressng.cache.bogo_ops_per_s", 143368.015585},
      {"cpu.stressng.cache.bogo_ops_per_cpu_s", 597009.952942}}},
    {"stress-ng",
     "matrix2-cache1-t2.log",
     0,
     1,
     "text",
     NULL,
     NULL,
     {{"cpu.stressng.matrix.bogo_ops_per_s", 3390.55},
      {"cpu.stressng.matrix.bogo_ops_per_cpu_s", 4780.54},
      {"cpu.stressng.cache.bogo_ops_per_s", 143368.02},
      {"cpu.stressng.cache.bogo_ops_per_cpu_s", 597009.95}}},
    {"stress-ng",
     "cpu1-t2-metrics.yaml",
     0,
     1,
     "yaml",
     "0.15.06",
     "2026-11-29T19:43:08.000Z",
     {{"cpu.stressng.cpu.bogo_ops_per_s", 624.537671},
      {"cpu.stressng.cpu.bogo_ops_per_cpu_s", 1202.120939}}},
    {"stress-ng",
     "cpu1-t2-metrics.log",
     0,
     1,
     "text",
     NULL,
     NULL,
     {{"cpu.stressng.cpu.bogo_ops_per_s", 624.54},
      {"cpu.stressng.cpu.bogo_ops_per_cpu_s", 1202.12}}},
};

#define N_GOODS (sizeof goods / sizeof goods[0])

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
    CHECK(json_object_size(m) == 4);
}

static void check_good(const struct good *g)
{
    size_t len;
    char *text = slurp(g->tool, g->file, &len);
    json_t *runs = NULL;
    char err[HV_PARSE_ERR_MAX] = "";
    int rc = hv_parse_tool_runs(g->tool, text, len, &runs, err, sizeof err);
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
    /* Every line: a format that shows its end refuses all but the whole. */
    for (size_t cut = 0; cut < len; cut++) {
        if (text[cut] != '\n' || text[cut + 1 + strspn(text + cut + 1, " \n")] == '\0')
            continue; /* not a line's end, or only blank lines follow */
        int rc = parse_cleanly(tool, text, cut + 1);
        if (self_delimited(tool, file) && rc == 0) {
            fprintf(stderr, "%s/%s: the first %zu bytes parse\n", tool, file, cut + 1);
            CHECK(rc != 0);
        }
    }
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

/* Every good fixture has its row in goods[]. */
static void check_listed(const char *tool, const char *file)
{
    if (strncmp(file, "bad/", 4) == 0)
        return;
    bool listed = false;
    for (size_t i = 0; i < N_GOODS; i++)
        listed |= strcmp(goods[i].tool, tool) == 0 && strcmp(goods[i].file, file) == 0;
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
    CHECK(json_array_size(metrics) == 1);
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
    for (size_t i = 0; i < N_GOODS; i++)
        check_good(&goods[i]);
    for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++)
        check_bad(&bads[i]);
    for (size_t i = 0; i < sizeof sampleds / sizeof sampleds[0]; i++)
        check_sampled(&sampleds[i]);
    check_steady_info();
    each_fixture(check_listed);
    each_fixture(check_cuts);
    each_fixture(check_cross);
    return check_summary("test_parsers");
}
