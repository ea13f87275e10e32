/* hist.h — a latency histogram for the built-in engines: the disk
 * engine's per-I/O completion times and the net engine's rr round trips.
 * Log-linear (HDR-like): fixed memory, constant-time adds, percentiles
 * within 0.8%, so a thread can keep one per run without allocating. */
#ifndef HV_WORKER_ENGINES_HIST_H
#define HV_WORKER_ENGINES_HIST_H

#include <stddef.h>
#include <stdint.h>

/** Buckets of a latency histogram: values below 128 exactly, above that
 *  64 sub-buckets per power of two (each at most 1/64 of its value wide),
 *  up to 2^64 - 1. */
#define HV_HIST_BUCKETS (128 + 57 * 64)

/** A log-linear (HDR-like) histogram of latencies in nanoseconds: a
 *  percentile is exact below 128 ns and within 0.8% above, min and max are
 *  exact. About 30 KiB; not thread safe. */
struct hv_hist {
    uint64_t count; /**< values added */
    uint64_t min;   /**< smallest value added (UINT64_MAX when none) */
    uint64_t max;   /**< largest value added (0 when none) */
    uint64_t bucket[HV_HIST_BUCKETS];
};

/** Empties *h. */
void hv_hist_reset(struct hv_hist *h);

/** Adds one value. */
void hv_hist_add(struct hv_hist *h, uint64_t value);

/** Adds every value of from to into. */
void hv_hist_merge(struct hv_hist *into, const struct hv_hist *from);

/** The pct-th percentile (0 < pct <= 100) by nearest rank: the middle of
 *  the bucket holding the ceil(pct/100 x count)-th smallest value, clamped
 *  to [min, max], so 100 gives max exactly. 0 when h is empty. */
uint64_t hv_hist_percentile(const struct hv_hist *h, double pct);

#endif
