/* test_interference.c — a bare-metal job's interference signal on files
 * captured on a real machine (tests/fixtures/proc/, README.md says how):
 * /proc/PID/stat's CPU times, /proc/loadavg's runnable tasks, the marks
 * taken under a root folder and the percentages of the interval. */
#include "worker/interference.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tests/unit/check.h"

#define FIX "tests/fixtures/proc"

static void test_parsers(void)
{
    char *self0 = check_slurp(FIX "/self-stat.0"), *self1 = check_slurp(FIX "/self-stat.1");
    struct hv_proc_cpu a, b;
    CHECK_MSG(hv_proc_cpu_parse(self0, &a) == 0 && a.utime == 0 && a.stime == 0 && a.cutime == 0 &&
                  a.cstime == 0,
              "the spinning shell's stat at the start: %llu %llu %llu %llu", a.utime, a.stime,
              a.cutime, a.cstime);
    CHECK_MSG(hv_proc_cpu_parse(self1, &b) == 0 && b.utime == 28 && b.stime == 13 &&
                  b.cutime == 2 && b.cstime == 0,
              "at the end: utime %llu stime %llu cutime %llu (its cat children) cstime %llu",
              b.utime, b.stime, b.cutime, b.cstime);
    struct hv_proc_cpu odd;
    CHECK_MSG(hv_proc_cpu_parse("7 (a) b (c)) R 1 7 7 0 -1 0 0 0 0 0 11 12 13 14 20 0\n", &odd) ==
                      0 &&
                  odd.utime == 11 && odd.cstime == 14,
              "a command name holding spaces and parentheses: utime %llu cstime %llu", odd.utime,
              odd.cstime);
    CHECK_MSG(hv_proc_cpu_parse("7 (a) R 1 7 7 0 -1 0 0 0 0 0 11 12\n", &odd) == -1,
              "fields missing: -1");
    CHECK_MSG(hv_proc_cpu_parse("no command name", &odd) == -1, "no parentheses: -1");

    char *load0 = check_slurp(FIX "/loadavg.0"), *load1 = check_slurp(FIX "/loadavg.1");
    double l1 = 0;
    int run = 0;
    CHECK_MSG(hv_loadavg_parse(load0, &l1, &run) == 0 && fabs(l1 - 7.46) < 1e-9 && run == 5,
              "loadavg.0: load1 %g, %d runnable", l1, run);
    CHECK_MSG(hv_loadavg_parse(load1, &l1, &run) == 0 && run == 4, "loadavg.1: %d runnable", run);
    CHECK_MSG(hv_loadavg_parse("1.0 2.0 3.0\n", &l1, &run) == -1, "no task counts: -1");
    free(self0);
    free(self1);
    free(load0);
    free(load1);
}

/* Copies fixture name to root/proc/to. */
static void put(const char *root, const char *name, const char *to)
{
    char *text = check_slurp(name);
    char path[256];
    snprintf(path, sizeof path, "%s/proc/%s", root, to);
    FILE *f = fopen(path, "w");
    CHECK_MSG(f != NULL && text != NULL, "%s written", path);
    if (f != NULL) {
        fputs(text != NULL ? text : "", f);
        fclose(f);
    }
    free(text);
}

/* A mark taken under a root holding the Nth capture. */
static void mark_of(const char *root, int n, struct hv_interference_mark *m)
{
    char name[64];
    snprintf(name, sizeof name, FIX "/stat.%d", n);
    put(root, name, "stat");
    snprintf(name, sizeof name, FIX "/self-stat.%d", n);
    put(root, name, "self/stat");
    snprintf(name, sizeof name, FIX "/loadavg.%d", n);
    put(root, name, "loadavg");
    hv_interference_mark(root, m);
}

static void test_captured_interval(void)
{
    char root[] = "/tmp/hv-interf-XXXXXX", dir[128];
    CHECK(mkdtemp(root) != NULL);
    snprintf(dir, sizeof dir, "%s/proc", root);
    mkdir(dir, 0700);
    snprintf(dir, sizeof dir, "%s/proc/self", root);
    mkdir(dir, 0700);
    struct hv_interference_mark a, b;
    mark_of(root, 0, &a);
    mark_of(root, 1, &b);
    CHECK_MSG(a.have_cpu && b.have_cpu && a.procs_running == 5 && b.procs_running == 4,
              "the marks read the root's files: %d and %d runnable", a.procs_running,
              b.procs_running);
    /* The capture's machine had 2 CPUs. */
    a.ncpus = b.ncpus = 2;
    a.mono = 10.0;
    b.mono = 12.0;
    struct hv_interference in;
    /* /proc/stat: user +146, system +109, nothing idle: 255 ticks, all
     * busy; the shell took 28 + 13 and its children 2: 212 others. */
    CHECK_MSG(hv_interference_compute(&a, &b, &in) == 0, "the interval computes");
    CHECK_NEAR(in.others_cpu_pct, 100.0 * 212 / 255, 1e-9);
    CHECK_NEAR(in.steal_pct, 0.0, 1e-12);
    CHECK_MSG(in.procs_running == 5, "the larger runnable count: %d", in.procs_running);
    CHECK_NEAR(in.others_threshold_pct, HV_BUSY_NONGUEST_PCT / 2, 1e-12);
    CHECK_MSG(in.busy, "83 %% of the CPU time went to others: busy");

    json_t *o = hv_interference_json(&a, &b);
    char *text =
        o != NULL ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(10)) : NULL;
    CHECK_STR(text != NULL ? text : "",
              "{\"busy\":true,\"min_seconds\":0.5,\"ncpus\":2,\"others_cpu_pct\":83.14,"
              "\"others_threshold_pct\":25.0,\"procs_running\":5,\"seconds\":2.0,"
              "\"steal_pct\":0.0,\"steal_threshold_pct\":2.0}");
    free(text);
    json_decref(o);

    /* The same counters over a run shorter than HV_INTERFERENCE_MIN_S: a
     * moment's work of anyone is a large share of so few ticks, so the
     * figures are said but not busy; at the bound it is busy again. */
    struct hv_interference_mark s = b;
    s.mono = a.mono + 0.3;
    CHECK(hv_interference_compute(&a, &s, &in) == 0);
    CHECK_NEAR(in.others_cpu_pct, 100.0 * 212 / 255, 1e-9);
    CHECK_MSG(!in.busy && in.seconds < HV_INTERFERENCE_MIN_S, "0.3 s run: not busy");
    s.mono = a.mono + HV_INTERFERENCE_MIN_S;
    CHECK(hv_interference_compute(&a, &s, &in) == 0);
    CHECK_MSG(in.busy, "a run of %.1f s: busy", HV_INTERFERENCE_MIN_S);

    /* The same worker time on a quiet host: 43 of 1000 ticks busy, all its
     * own, and 30 stolen. */
    struct hv_interference_mark q = b;
    q.cpu.user = a.cpu.user + 28 + 2;
    q.cpu.system = a.cpu.system + 13;
    q.cpu.idle = a.cpu.idle + 927;
    q.cpu.steal = a.cpu.steal + 30;
    CHECK(hv_interference_compute(&a, &q, &in) == 0);
    CHECK_NEAR(in.others_cpu_pct, 0.0, 1e-12);
    CHECK_NEAR(in.steal_pct, 3.0, 1e-9);
    CHECK_MSG(in.busy, "3 %% steal is past %.1f %%: busy", HV_BUSY_STEAL_PCT);
    q.cpu.steal = a.cpu.steal + 10;
    q.cpu.idle += 20;
    CHECK(hv_interference_compute(&a, &q, &in) == 0);
    CHECK_MSG(!in.busy && in.steal_pct < HV_BUSY_STEAL_PCT, "1 %% steal, no others: not busy");

    CHECK_MSG(hv_interference_compute(&a, &a, &in) == -1, "no tick passed: -1");
    struct hv_interference_mark none;
    hv_interference_mark("/nonexistent-hv-root", &none);
    CHECK_MSG(!none.have_cpu && none.procs_running == -1, "nothing to read: nothing marked");
    CHECK_MSG(hv_interference_compute(&a, &none, &in) == -1 &&
                  hv_interference_json(&a, &none) == NULL,
              "an unread mark computes nothing");

    const char *files[] = {"proc/stat", "proc/self/stat", "proc/loadavg", "proc/self", "proc"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(dir, sizeof dir, "%s/%s", root, files[i]);
        remove(dir);
    }
    rmdir(root);
}

static void test_this_machine(void)
{
    struct hv_interference_mark a, b;
    hv_interference_mark("/", &a);
    /* Some work of our own, so at least a tick may pass. */
    volatile double x = 0;
    for (int i = 0; i < 20000000; i++)
        x += i;
    hv_interference_mark("", &b);
    CHECK_MSG(a.have_cpu && b.have_cpu && a.ncpus >= 1, "this machine's counters read");
    CHECK_MSG(a.procs_running >= 1 && b.procs_running >= 1,
              "the reader is one of the runnable tasks (%d, %d)", a.procs_running, b.procs_running);
    struct hv_interference in;
    if (hv_interference_compute(&a, &b, &in) == 0)
        CHECK_MSG(in.others_cpu_pct >= 0 && in.others_cpu_pct <= 100 && in.steal_pct >= 0 &&
                      in.steal_pct <= 100,
                  "percentages in range: others %.2f steal %.2f", in.others_cpu_pct, in.steal_pct);
}

int main(void)
{
    test_parsers();
    test_captured_interval();
    test_this_machine();
    return check_summary("interference");
}
