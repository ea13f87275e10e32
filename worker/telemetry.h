/* telemetry.h — what the host does while its guests run jobs.
 *
 * A host worker started with --libvirt runs a telemetry thread beside its
 * claim loop. Once a second it asks the server which of its domains run a
 * guest job (GET /api/v1/workers/telemetry, docs/worker.md "Telemetry")
 * and, while any does, samples the host (/proc/stat, /proc/loadavg) and
 * every domain (virConnectGetAllDomainStats). Each running job collects
 * host.* samples on its own time axis; when the job leaves the server's
 * list its samples, and whether the host was busy with other work, are
 * uploaded once (POST /api/v1/jobs/{id}/telemetry). A job of a tuning
 * plan held by this host also has its block's levels read back on its
 * domain (and the host) when it leaves the list
 * (hv_actuators_read_back()), sent with that upload: the server puts the
 * reading into the job's result and fails the job when a level moved.
 * Telemetry never fails a job otherwise: a failed sample is skipped, a
 * job that got none is uploaded as "missing" with the reason, a reading
 * that could not be taken is sent as settings_missing, a failed upload is
 * logged and dropped.
 *
 * The parsers below do no I/O of their own beyond the file named, so the
 * unit tests feed them temporary files and hand-made libvirt records. */
#ifndef HV_WORKER_TELEMETRY_H
#define HV_WORKER_TELEMETRY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* When work other than the one measured makes a job's figures noisy: the
 * host telemetry's host_busy for a guest job, and a bare-metal job's own
 * observed.interference (worker/interference.h), which reads the host's
 * own work with the same threshold. Other domains' CPU (percent of one
 * CPU, mean over the job) or steal (percent of the host's CPU time) at or
 * past these make a host busy. */
#define HV_BUSY_OTHERS_PCT 25.0
#define HV_BUSY_STEAL_PCT  2.0
/* CPU the host spent outside what is measured (outside every domain for a
 * guest job; outside the worker and its tools for a bare-metal job: other
 * users' work), percent of one CPU, at or past this is busy too. */
#define HV_BUSY_NONGUEST_PCT 50.0

/** The aggregate "cpu" line of /proc/stat, in clock ticks. */
struct hv_cpu_times {
    unsigned long long user, nice, system, idle, iowait, irq, softirq, steal;
};

/** Parses the first "cpu " line of text (the contents of /proc/stat).
 *  Returns 0, or -1 when there is none or it has fewer than 4 fields
 *  (missing later fields, as on old kernels, count 0). */
int hv_cpu_times_parse(const char *text, struct hv_cpu_times *out);

/** All the CPU time the line counts (every field summed), in clock ticks. */
unsigned long long hv_cpu_times_total(const struct hv_cpu_times *t);

/** Reads path (/proc/stat) and parses it. */
int hv_cpu_times_read(const char *path, struct hv_cpu_times *out);

/** The shares of the interval from a to b, in percent of all CPU time:
 *  user (user + nice), system (system + irq + softirq), iowait, steal.
 *  Returns -1 when no tick passed (or the counters went back). */
int hv_cpu_times_pct(const struct hv_cpu_times *a, const struct hv_cpu_times *b, double *user,
                     double *system, double *iowait, double *steal);

/** Parses text (the contents of /proc/loadavg, "0.52 0.58 0.59 3/512
 *  4242"): the 1-minute load into *load1 and, when running is not NULL,
 *  the count of runnable tasks (the first number of the fourth field; the
 *  task reading the file is one of them) into *running. Returns 0, or -1
 *  when a field is missing or malformed. */
int hv_loadavg_parse(const char *text, double *load1, int *running);

/** Reads the 1-minute load from path (/proc/loadavg). */
int hv_loadavg_read(const char *path, double *load1);

/** One domain's cumulative counters, summed over its disks and NICs. */
struct hv_dom_stats {
    char uuid[40]; /**< lowercase */
    char name[128];
    bool have_cpu;               /**< cpu.time was present */
    bool have_block;             /**< a block.N counter was present */
    bool have_net;               /**< a net.N counter was present */
    unsigned long long cpu_ns;   /**< cpu.time */
    unsigned long long rd_bytes; /**< block.N.rd.bytes */
    unsigned long long wr_bytes; /**< block.N.wr.bytes */
    unsigned long long rd_reqs;  /**< block.N.rd.reqs */
    unsigned long long wr_reqs;  /**< block.N.wr.reqs */
    unsigned long long rx_bytes; /**< net.N.rx.bytes */
    unsigned long long tx_bytes; /**< net.N.tx.bytes */
    unsigned long long rx_drops; /**< net.N.rx.drop */
    unsigned long long tx_drops; /**< net.N.tx.drop */
};

/** Fills the counters of *out from one record's typed parameters (names
 *  as virConnectGetAllDomainStats gives them; unknown names are skipped).
 *  params is a virTypedParameterPtr, passed as void * so that callers
 *  need no libvirt header. uuid and name are left as they are. */
void hv_dom_stats_from_params(const void *params, int nparams, struct hv_dom_stats *out);

/** Collects the stats of every active domain of the libvirt connection
 *  uri into a malloc'd array (*out, *n). Returns 0, or -1 with the reason
 *  in err. */
int hv_dom_stats_collect(const char *uri, struct hv_dom_stats **out, size_t *n, char *err,
                         size_t errlen);

/** What the end of a guest job's reading says for the job's domain: end
 *  is what hv_actuators_read_back() filled on the plan's domains (factor
 *  → {"level", "read_back", "source", "detail": {DOMAIN: {"read_back",
 *  "source", "error"}}}; a host factor has no domain in its detail), err
 *  its error text. Returns a new object {"settings": factor → {"level",
 *  "read_back", "source"} of domain's reading (the host's for a host
 *  factor)} with "settings_changed" naming each level that reads back
 *  another value ("vcpu_pin=on: vm1 reads back off (...)", "; " between
 *  them), else "settings_missing" naming each that could not be read;
 *  other domains' readings are left out. */
json_t *hv_telemetry_reading(const json_t *end, const char *domain, const char *err);

/** Where the thread reads and sends. Strings are borrowed for the life of
 *  the process. */
struct hv_telemetry_config {
    const char *server;     /**< base URL */
    const char *libvirt;    /**< --libvirt URI */
    const char *proc_root;  /**< "/" (tests may point elsewhere) */
    const char *sysfs_root; /**< where host levels are read (--sysfs-root) */
};

/** Starts the telemetry thread (once; later calls do nothing). It sends
 *  the worker credential kept in the state folder, so call it after the
 *  first registration. It stops at the shutdown signal, uploading what
 *  it holds. Returns 0, or -1 when the thread cannot start. */
int hv_telemetry_start(const struct hv_telemetry_config *cfg);

/** Has the thread ask the server for its running guest jobs now, and
 *  read back and upload those that ended, and waits for that pass (at
 *  most timeout seconds). A step calls it first, so the next block's
 *  apply (or the restore) changes no domain before the previous block's
 *  last jobs were read back. Does nothing when the thread does not run. */
void hv_telemetry_sync(double timeout);

/** Stops the thread, uploading what it holds, and waits for it. */
void hv_telemetry_stop(void);

#endif
