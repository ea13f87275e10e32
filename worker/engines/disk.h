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
 * Params (docs/catalog.md, "disk/builtin"; normalised by the server: sizes
 * integer bytes, durations seconds): ops, block, size, direct, sync
 * (none | fsync | osync), qd, threads (or "per-vcpu"), path, seconds,
 * drop_caches, warmup. Any other member is an error.
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
 * about 30 KiB of latency histogram per thread. */
#ifndef HV_WORKER_ENGINE_DISK_H
#define HV_WORKER_ENGINE_DISK_H

#include "worker/engines/engine.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** The engine's entry point; see hv_engine_run_fn. */
int hv_engine_disk_run(const struct hv_engine_ctx *ctx, struct hv_engine_result *out);

/** Buckets of a latency histogram: values below 128 exactly, above that
 *  64 sub-buckets per power of two (each at most 1/64 of its value wide),
 *  up to 2^64 - 1. */
#define HV_DISK_HIST_BUCKETS (128 + 57 * 64)

/** A log-linear (HDR-like) histogram of latencies in nanoseconds: a
 *  percentile is exact below 128 ns and within 0.8% above, min and max are
 *  exact. About 30 KiB; not thread safe. */
struct hv_disk_hist {
    uint64_t count; /**< values added */
    uint64_t min;   /**< smallest value added (UINT64_MAX when none) */
    uint64_t max;   /**< largest value added (0 when none) */
    uint64_t bucket[HV_DISK_HIST_BUCKETS];
};

/** Empties *h. */
void hv_disk_hist_reset(struct hv_disk_hist *h);

/** Adds one value. */
void hv_disk_hist_add(struct hv_disk_hist *h, uint64_t value);

/** Adds every value of from to into. */
void hv_disk_hist_merge(struct hv_disk_hist *into, const struct hv_disk_hist *from);

/** The pct-th percentile (0 < pct <= 100) by nearest rank: the middle of
 *  the bucket holding the ceil(pct/100 x count)-th smallest value, clamped
 *  to [min, max], so 100 gives max exactly. 0 when h is empty. */
uint64_t hv_disk_hist_percentile(const struct hv_disk_hist *h, double pct);

#endif
