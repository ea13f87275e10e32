/* cpu_kernels.h — the suite of the built-in CPU engine: a table of
 * kernels, each with a fixed amount of verified work per iteration and a
 * reference rate its score is divided by. cpu.c runs them; the test hooks
 * of cpu.h reach them one at a time. */
#ifndef HV_WORKER_ENGINES_CPU_KERNELS_H
#define HV_WORKER_ENGINES_CPU_KERNELS_H

#include <stddef.h>

/** The kernels of the suite: int, fp, mem, branch. */
#define HV_CPU_N_KERNELS 4

/** One kernel of the suite. */
struct hv_cpu_kernel {
    const char *name;      /**< short name, in observed.kernels */
    const char *metric;    /**< the rate metric */
    const char *work_unit; /**< what one unit of work is */
    double units;          /**< work units per iteration */
    double reference_rate; /**< units/s of the reference core (cpu_kernels.c) */
    /** Builds the kernel's input; NULL with err set when it cannot. */
    void *(*setup)(char *err, size_t len);
    /** One iteration; 0 when its output verified, else -1 with err set. */
    int (*iterate)(void *state, char *err, size_t len);
    /** Test hook: corrupts the input as a faulty machine might. */
    void (*corrupt)(void *state);
    void (*teardown)(void *state);
};

/** The suite, in the order observed.kernels lists it. */
extern const struct hv_cpu_kernel hv_cpu_kernels[HV_CPU_N_KERNELS];

#endif
