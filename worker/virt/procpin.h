/* procpin.h — the process_pin factor, applied by the worker that runs a
 * job (bare metal, or anything a plan runs under process_pin=on).
 *
 * On: the engine's benchmark threads and processes are pinned to host CPU
 * i, the i-th CPU of the worker's affinity set (sched_setaffinity), the
 * mechanism the cpu engine's own `pin` parameter uses:
 *   - cpu/builtin gets pin=true, so copy i runs on CPU i (modulo the CPUs);
 *   - every other engine runs in a thread pinned to the first CPU, and
 *     what it starts (its threads, an external tool's processes) inherits
 *     that affinity: one benchmark process, CPU 0.
 * Off: nothing is pinned. Either way the engine thread reads its affinity
 * back (sched_getaffinity) and the result records it under
 * observed.settings.process_pin. */
#ifndef HV_WORKER_VIRT_PROCPIN_H
#define HV_WORKER_VIRT_PROCPIN_H

#include <jansson.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

/** One job's process pinning. */
struct hv_process_pin {
    bool asked;         /**< the job's levels name process_pin */
    bool on;            /**< process_pin=on */
    bool engine_pins;   /**< the engine pins its copies itself (cpu/builtin) */
    int cpu;            /**< the CPU the engine thread is pinned to, or -1 */
    json_t *params;     /**< the params the engine gets (new reference) */
    bool read;          /**< affinity was read back */
    cpu_set_t affinity; /**< the engine thread's affinity as read back */
    char error[256];    /**< why pinning failed, or "" */
};

/** Prepares the pinning of a job: levels (the claim's, may be NULL), the
 *  workload's kind, engine and params (may be NULL). Never fails: a level
 *  that is not on or off is reported when the engine thread starts. */
void hv_process_pin_begin(struct hv_process_pin *p, const json_t *levels, const char *kind,
                          const char *engine, const json_t *params);

/** The params the engine should get: params with pin=true for cpu/builtin
 *  under process_pin=on, else the job's own. Borrowed from p. */
const json_t *hv_process_pin_params(const struct hv_process_pin *p);

/** Called first thing in the engine thread: pins it (on, engines that do
 *  not pin themselves) and reads its affinity back. Returns 0, or -1 with
 *  p->error set (the job then fails instead of running unpinned). */
int hv_process_pin_enter(struct hv_process_pin *p);

/** Adds observed.settings.process_pin to observed (the result's): level,
 *  read_back ("on" when the affinity is what the level asks, "off" when
 *  unpinned, else the CPU list), source and detail (the CPUs; for the cpu
 *  engine its copies' CPUs from observed.cpus). Nothing when the job's
 *  levels have no process_pin. */
void hv_process_pin_observe(const struct hv_process_pin *p, json_t *observed);

/** Releases p. */
void hv_process_pin_end(struct hv_process_pin *p);

#endif
