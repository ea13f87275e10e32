/* interference.h — what else ran on a bare-metal host while its job did.
 *
 * A guest job has the host telemetry's host_busy (telemetry.h); a job run
 * by a host worker reads its own signal: a mark of the host's CPU counters
 * as the engine starts and another once it has ended, with no sampling
 * thread, and from the two observed.interference = {"busy",
 * "others_cpu_pct", "steal_pct", "procs_running", ...}. What the worker
 * did in the interval is its own CPU time from ROOT/proc/self/stat:
 * utime + stime cover every thread of the process (the engine's threads
 * too), cutime + cstime every child it reaped (an external tool, which the
 * engine waits for before it returns, with the descendants the tool itself
 * waited for). A process that left the worker's tree (a daemon that
 * double-forked) counts as other work.
 *
 * The parsers take the files' text and the arithmetic takes two marks, so
 * the unit tests feed them files captured on a real machine. */
#ifndef HV_WORKER_INTERFERENCE_H
#define HV_WORKER_INTERFERENCE_H

#include "worker/telemetry.h"

#include <jansson.h>
#include <stdbool.h>

/** A process's CPU time from its /proc/PID/stat, in clock ticks. */
struct hv_proc_cpu {
    unsigned long long utime, stime;   /**< its own threads */
    unsigned long long cutime, cstime; /**< the children it waited for */
};

/** Parses text (the contents of /proc/PID/stat; its command name, in
 *  parentheses, may hold spaces and parentheses). Returns 0, or -1 when
 *  the fields up to cstime are not there. */
int hv_proc_cpu_parse(const char *text, struct hv_proc_cpu *out);

/* The shortest interval that may say busy, in seconds. The counters tick
 * at 1/100 s per CPU and the marks are read a moment apart from the
 * engine's start and end, so over a short run a few ticks of anyone (the
 * server answering the claim, PostgreSQL committing it, when they run on
 * the same machine) are a large share: a 0.1 s run on 2 CPUs has 20 ticks,
 * 5 of them past the threshold. From 0.5 s (100 ticks on 2 CPUs, 25 the
 * threshold) a moment's work no longer reaches it, while one CPU's busy
 * loop beside the job (100 % of one CPU, twice the threshold) still does.
 * A shorter run reports its figures but is never busy. */
#define HV_INTERFERENCE_MIN_S 0.5

/** The host's counters at one moment. */
struct hv_interference_mark {
    bool have_cpu;           /**< cpu and self were read */
    struct hv_cpu_times cpu; /**< /proc/stat's cpu line */
    struct hv_proc_cpu self; /**< /proc/self/stat */
    int procs_running;       /**< /proc/loadavg's runnable tasks; -1: unread */
    double mono;             /**< monotonic seconds when taken */
    long ncpus;              /**< CPUs online */
};

/** Takes a mark from root/proc (root "/" or "" for the real one; tests may
 *  point elsewhere, as --sysfs-root does). Reads three small files; what
 *  cannot be read is left marked unread. */
void hv_interference_mark(const char *root, struct hv_interference_mark *m);

/** What the interval from a to b says. */
struct hv_interference {
    double others_cpu_pct;       /**< CPU time of everything but this process and its children,
                                      percent of all the CPU time of the interval (ncpus x wall) */
    double steal_pct;            /**< steal, percent of the same */
    int procs_running;           /**< the larger of the two marks' runnable tasks; -1: unread */
    double others_threshold_pct; /**< HV_BUSY_NONGUEST_PCT (of one CPU) in the same unit */
    double seconds;              /**< the interval's length */
    /** the interval lasted HV_INTERFERENCE_MIN_S or more, and others_cpu_pct >=
     *  others_threshold_pct or steal_pct >= HV_BUSY_STEAL_PCT */
    bool busy;
};

/** Computes the interval from a to b into *out. Returns 0, or -1 when
 *  either mark lacks the CPU counters or no tick passed. */
int hv_interference_compute(const struct hv_interference_mark *a,
                            const struct hv_interference_mark *b, struct hv_interference *out);

/** The interval from a to b as observed.interference: a new object
 *  {"busy", "others_cpu_pct", "steal_pct", "procs_running" (null when
 *  unread), "ncpus", "seconds", "others_threshold_pct",
 *  "steal_threshold_pct", "min_seconds"}, or NULL when it cannot be computed. */
json_t *hv_interference_json(const struct hv_interference_mark *a,
                             const struct hv_interference_mark *b);

#endif
