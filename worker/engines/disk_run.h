/* disk_run.h — the state of one run of the built-in disk engine, shared
 * by its files: disk.c (the phases and their I/O) and disk_target.c
 * (where the I/O goes). Nothing outside the engine needs it; the
 * engine's API is disk.h. */
#ifndef HV_WORKER_ENGINES_DISK_RUN_H
#define HV_WORKER_ENGINES_DISK_RUN_H

#include "worker/engines/disk.h"
#include "worker/engines/hist.h"

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** A phase as the engine runs it. */
struct hv_disk_op_def {
    const char *param;  /**< as in params.ops */
    const char *metric; /**< in metric names and observed.ops */
    bool write;
    bool random;
    bool extends; /**< creates or extends the file; every other op needs data */
};

/** The phases, indexed by enum hv_disk_op. */
extern const struct hv_disk_op_def hv_disk_op_defs[HV_DISK_N_OPS];

struct hv_disk_run;

/* One thread's share: its file (or region of the one file or device). */
struct hv_disk_job {
    struct hv_disk_run *run;
    char path[PATH_MAX]; /* the file or device, resolved */
    uint64_t base;       /* where the job's region starts */
    bool created;        /* this run created the file: remove it at the end */
    bool has_data;       /* the region holds data (laid out or written) */
    bool ours;           /* ... and this run wrote it: reads check offsets */
    unsigned char *buf;  /* qd buffers of block bytes */
    uint64_t rng, stamp;
    struct hv_hist *hist;
    /* Per phase. */
    pthread_t thread;
    int fd;
    uint64_t bytes; /* completed, timed; atomic (read by the sampler) */
    uint64_t ios;
    uint64_t t_end; /* when the job closed its file (ns) */
    bool failed;
    char error[400];
};

struct hv_disk_run {
    const struct hv_engine_ctx *ctx;
    struct hv_engine_result *out;
    struct hv_disk_settings p;
    uint64_t nblocks; /* per job */
    char scratch[PATH_MAX];
    bool device; /* the target is a block device */
    int claim;   /* an O_EXCL descriptor of the device while writing it, or -1 */
    struct hv_disk_job *jobs;
    /* Gate and completion. */
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC */
    long arrived, done;
    bool open;
    int abort; /* atomic: a job failed, every job stops */
    enum hv_disk_op op;
    uint64_t t0;   /* the run's start, for sample times */
    uint64_t gate; /* the phase's start */
};

/** Resolves the scratch directory into run->scratch. Returns 0, or -1
 *  with run->out's error set. */
int hv_disk_target_scratch(struct hv_disk_run *run);

/** Resolves params.path (or makes the scratch files) into the jobs' paths
 *  and regions, enforcing the allowlist. Returns 0, or -1 with run->out's
 *  error set. */
int hv_disk_target_setup(struct hv_disk_run *run);

/** Size, space, alignment (lbs: the logical block size, 0 unknown) and
 *  permission checks before anything is written; claims a block device
 *  for the run (run->claim). Returns 0, or -1 with run->out's error set. */
int hv_disk_target_check(struct hv_disk_run *run, uint64_t lbs);

/** Adds file, filesystem, device and scheduler to observed; returns the
 *  device's logical block size (0 when unknown). */
uint64_t hv_disk_target_describe(struct hv_disk_run *run);

/** Reads the first line of path into buf without its newline. Returns 0,
 *  or -1 when it cannot. */
int hv_disk_read_line(const char *path, char *buf, size_t len);

#endif
