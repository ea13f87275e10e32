/* disk.h — the built-in disk engine (kind "disk", engine "builtin").
 *
 * Iozone-like phases over one file per thread (or one region per thread of
 * a given file or block device): seq-write (creates or extends the file),
 * rewrite, seq-read, reread (sequential, block by block), rand-read and
 * rand-write (uniformly random block-aligned offsets from a fixed-seed
 * PRNG, size / block I/Os, or fewer when `seconds` runs out first). Each
 * phase's time runs from the moment every thread starts until the last one
 * has closed its file, fsync included when sync is "fsync" (iozone -c -e).
 *
 * Params (lib/params_disk.c, docs/catalog.md "disk/builtin"): ops, block,
 * size, direct, sync (none | fsync | osync), qd, threads (or "per-vcpu"),
 * path, seconds, drop_caches, warmup.
 *
 * Where it writes. Without `path`: a new file per thread in the scratch
 * directory ($HVBENCH_SCRATCH, else /var/tmp), removed afterwards. A
 * `path` must be a file under the scratch directory (created and removed
 * afterwards when it did not exist; left in place, its data overwritten,
 * when it did) or a block device listed in $HVBENCH_DISK_DEVICES (a
 * colon-separated list the worker's administrator sets; symlinks such as
 * /dev/disk/by-id/... are resolved on both sides). Anything else fails the
 * job: plans are written by other people than the worker's administrator.
 * A listed device is written to only when it is not mounted or otherwise
 * held (it is opened O_EXCL) and carries no filesystem, swap, LVM, LUKS or
 * partition-table signature in its first 68 KiB (run `wipefs -a DEVICE`
 * first); threads use consecutive regions of `size` bytes of it.
 *
 * Caches: direct uses O_DIRECT (refused with a clear error where the
 * filesystem does not support it, e.g. ramfs); otherwise drop_caches
 * writes 3 to /proc/sys/vm/drop_caches before every read phase (needs
 * root); otherwise nothing, and observed.cache_warning says reads may come
 * from the page cache. observed.cache_method says which ("direct",
 * "drop_caches", "none").
 *
 * Metrics, per op in the order run (op names with '_': seq_write, rewrite,
 * seq_read, reread, rand_read, rand_write): disk.<op>.mbps (MB/s, 10^6
 * bytes), disk.<op>.iops, disk.<op>.lat_{p50,p95,p99,max}_us (per-I/O
 * completion latency, from submission to completion; lower is better).
 * A sample of disk.<op>.mbps every second while the phase runs (every 2 s
 * after 600 samples, 4 s after 1200, ...), and one for the remainder of a
 * phase shorter than a second. observed.ops.<op> holds the phase's bytes,
 * I/Os, seconds and its steady-state verdict (hv_steady_state, engine.h).
 *
 * Memory: threads x qd x block of I/O buffers (at most 1 GiB in all) and
 * a latency histogram (hist.h, about 30 KiB) per thread. */
#ifndef HV_WORKER_ENGINE_DISK_H
#define HV_WORKER_ENGINE_DISK_H

#include "worker/engines/engine.h"

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** The phases, in the order a run takes them. */
enum hv_disk_op {
    HV_DISK_SEQ_WRITE,
    HV_DISK_REWRITE,
    HV_DISK_SEQ_READ,
    HV_DISK_REREAD,
    HV_DISK_RAND_READ,
    HV_DISK_RAND_WRITE,
    HV_DISK_N_OPS
};

/** When written data must reach the device. */
enum hv_disk_sync { HV_DISK_SYNC_NONE, HV_DISK_SYNC_FSYNC, HV_DISK_SYNC_OSYNC };

/** What one run does, from its params. */
struct hv_disk_settings {
    enum hv_disk_op ops[HV_DISK_N_OPS];
    size_t n_ops;
    uint64_t block, size;
    bool direct;
    enum hv_disk_sync sync;
    long qd, threads;
    char path[PATH_MAX]; /**< as the params give it; "": scratch files */
    double seconds;      /**< bounds random phases; 0: not bounded */
    bool drop_caches;
    double warmup;
};

/** The settings of a job's params (NULL: all defaults) on a machine with
 *  cpus CPUs: the params checked and normalised by lib/params.h
 *  (hv_engine_params_check(), with the limit threads x qd x block of a
 *  "per-vcpu" run), "per-vcpu" resolved, size cut to whole blocks. Does
 *  no I/O. Returns 0, or -1 with err set ("invalid params: /params/NAME:
 *  why"). */
int hv_disk_settings(const json_t *params, long cpus, struct hv_disk_settings *s, char *err,
                     size_t len);

/** The engine's entry point; see hv_engine_run_fn. */
int hv_engine_disk_run(const struct hv_engine *e, const struct hv_engine_ctx *ctx,
                       struct hv_engine_result *out);

#endif
