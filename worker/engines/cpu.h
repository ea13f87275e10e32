/* cpu.h — the built-in CPU engine (kind "cpu", engine "builtin").
 *
 * Each copy is a thread that loops over a fixed suite of compute kernels
 * (integer hashing, double-precision n-body, dependent pointer chasing over
 * 64 MiB, quicksort) for the requested time. Every kernel iteration does a
 * fixed amount of work and verifies its own output, so a broken machine
 * fails the run instead of reporting a fast number.
 *
 * Params (lib/params_cpu.c, docs/catalog.md "cpu/builtin"): copies
 * ("per-vcpu" = online CPUs), seconds, pin (copy i on the i-th CPU, modulo
 * their number, of the process's affinity set).
 *
 * Metrics: cpu.score (sum over copies; per copy 1000 x the geometric mean
 * over kernels of rate / reference rate), cpu.score_per_copy, and
 * cpu.{int,fp,mem,branch}.rate (work units per second, summed over
 * copies). A sample of cpu.score over the last second, every second (every
 * ceil(seconds / 3600) s in runs over an hour, to bound the upload).
 *
 * Before the measured seconds each copy warms up for a tenth of seconds (at
 * most 1 s): whole verified kernel iterations that count nowhere, so caches,
 * TLBs and the CPU's clock have settled. observed.warmup says how long;
 * observed.steady_state judges the samples (hv_steady_state, engine.h).
 *
 * Memory: about 64 MiB per copy while running (96 MiB per copy during
 * setup). */
#ifndef HV_WORKER_ENGINE_CPU_H
#define HV_WORKER_ENGINE_CPU_H

#include "worker/engines/engine.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/** What one run does. */
struct hv_cpu_settings {
    long copies;    /**< "per-vcpu" resolved */
    double seconds; /**< measured, per copy */
    bool pin;
};

/** The settings of a job's params (NULL: all defaults) on a machine with
 *  cpus CPUs: the params checked and normalised by lib/params.h
 *  (hv_engine_params_check()), "per-vcpu" resolved. Does no I/O. Returns
 *  0, or -1 with err set ("invalid params: /params/NAME: why"). */
int hv_cpu_settings(const json_t *params, long cpus, struct hv_cpu_settings *s, char *err,
                    size_t len);

/** The engine's entry point; see hv_engine_run_fn. */
int hv_engine_cpu_run(const struct hv_engine *e, const struct hv_engine_ctx *ctx,
                      struct hv_engine_result *out);

/** The number of kernels in the suite. */
size_t hv_cpu_kernel_count(void);

/** The short name ("int", "fp", "mem", "branch") of kernel i, or NULL when
 *  i is out of range. Static string. */
const char *hv_cpu_kernel_name(size_t i);

/** Test hook: sets up the named kernel, optionally corrupts its input the
 *  way a faulty machine might (after the expected output was computed), and
 *  runs `iterations` verified iterations. Returns 0 when every iteration
 *  verified, -1 when one failed verification (err says why), -2 when the
 *  kernel is unknown or its setup failed. Runs in the calling thread. */
int hv_cpu_kernel_selftest(const char *name, bool corrupt, int iterations, char *err, size_t len);

#endif
