/* interference.c — see interference.h. */
#include "worker/interference.h"

#include "fileio.h"
#include "timeutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The most read of each file: /proc/stat's cpu line is its first, and a
 * machine with many CPUs or interrupts writes far more after it. */
#define READ_MAX 8192

int hv_proc_cpu_parse(const char *text, struct hv_proc_cpu *out)
{
    /* The fields after the command name: state (3) ... utime (14), stime,
     * cutime, cstime (17). */
    const char *p = strrchr(text, ')');
    if (p == NULL)
        return -1;
    unsigned long long v[4];
    if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu", &v[0],
               &v[1], &v[2], &v[3]) != 4)
        return -1;
    *out = (struct hv_proc_cpu){.utime = v[0], .stime = v[1], .cutime = v[2], .cstime = v[3]};
    return 0;
}

/* Reads root/proc/name into a malloc'd string, NULL when it cannot. */
static char *read_proc(const char *root, const char *name)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/proc/%s", strcmp(root, "/") == 0 ? "" : root, name);
    size_t len;
    return hv_read_file(path, READ_MAX, HV_READ_TRUNCATE, &len);
}

void hv_interference_mark(const char *root, struct hv_interference_mark *m)
{
    *m = (struct hv_interference_mark){
        .procs_running = -1, .mono = hv_monotonic(), .ncpus = sysconf(_SC_NPROCESSORS_ONLN)};
    char *stat = read_proc(root, "stat"), *self = read_proc(root, "self/stat"),
         *load = read_proc(root, "loadavg");
    m->have_cpu = stat != NULL && self != NULL && hv_cpu_times_parse(stat, &m->cpu) == 0 &&
                  hv_proc_cpu_parse(self, &m->self) == 0;
    double load1;
    if (load == NULL || hv_loadavg_parse(load, &load1, &m->procs_running) != 0)
        m->procs_running = -1;
    free(stat);
    free(self);
    free(load);
}

static unsigned long long self_ticks(const struct hv_proc_cpu *p)
{
    return p->utime + p->stime + p->cutime + p->cstime;
}

int hv_interference_compute(const struct hv_interference_mark *a,
                            const struct hv_interference_mark *b, struct hv_interference *out)
{
    double user, sys, iowait, steal;
    if (!a->have_cpu || !b->have_cpu ||
        hv_cpu_times_pct(&a->cpu, &b->cpu, &user, &sys, &iowait, &steal) != 0)
        return -1;
    double total = (double)(hv_cpu_times_total(&b->cpu) - hv_cpu_times_total(&a->cpu));
    unsigned long long sa = self_ticks(&a->self), sb = self_ticks(&b->self);
    double own = sb >= sa ? 100.0 * (double)(sb - sa) / total : 0.0;
    /* Busy time (guest time is in user) less the worker's own; the two
     * files are read a moment apart, so clamp to what can be. */
    double others = user + sys - own;
    others = others < 0 ? 0 : others > 100 ? 100 : others;
    long ncpus = b->ncpus > 0 ? b->ncpus : 1;
    *out = (struct hv_interference){
        .others_cpu_pct = others,
        .steal_pct = steal,
        .procs_running = a->procs_running > b->procs_running ? a->procs_running : b->procs_running,
        .others_threshold_pct = HV_BUSY_NONGUEST_PCT / (double)ncpus,
        .seconds = b->mono - a->mono};
    out->busy = out->seconds >= HV_INTERFERENCE_MIN_S &&
                (others >= out->others_threshold_pct || steal >= HV_BUSY_STEAL_PCT);
    return 0;
}

/* v to two decimals: the counters tick at 1/100 s. */
static double two(double v)
{
    return round(v * 100.0) / 100.0;
}

json_t *hv_interference_json(const struct hv_interference_mark *a,
                             const struct hv_interference_mark *b)
{
    struct hv_interference in;
    if (hv_interference_compute(a, b, &in) != 0)
        return NULL;
    json_t *o =
        json_pack("{s:b, s:f, s:f, s:I, s:f, s:f, s:f, s:f}", "busy", in.busy, "others_cpu_pct",
                  two(in.others_cpu_pct), "steal_pct", two(in.steal_pct), "ncpus",
                  (json_int_t)(b->ncpus > 0 ? b->ncpus : 1), "seconds", two(in.seconds),
                  "others_threshold_pct", two(in.others_threshold_pct), "steal_threshold_pct",
                  HV_BUSY_STEAL_PCT, "min_seconds", HV_INTERFERENCE_MIN_S);
    if (o != NULL)
        json_object_set_new(o, "procs_running",
                            in.procs_running >= 0 ? json_integer(in.procs_running) : json_null());
    return o;
}
