/* booting.h — which guests this worker started and are still booting, so
 * a restart waits for a guest to be up before powering it off.
 *
 * Internal to worker/virt/. A guest counts as booting from the moment
 * this worker process started it (an apply or restore step, a clone's
 * first start) until the server shows a registration of its worker made
 * after that start (hv_act_ctx.registration). Powering off a booting
 * guest is what goes wrong: it ignores the ACPI request, is destroyed
 * after the shutdown timeout, and the registration its boot sends late
 * passes for the next boot's. A guest this process did not start counts
 * as up. Steps run on one thread; this state is that thread's. */
#ifndef HV_WORKER_VIRT_BOOTING_H
#define HV_WORKER_VIRT_BOOTING_H

#include "worker/virt.h"
#include "worker/virt/actuator.h"

/** How long a restart waits for a booting guest to come up before it
 *  powers it off anyway, when ctx->up_wait is 0; seconds. */
#define HV_ACT_UP_WAIT 300.0

/** Notes that domain d was just started by this worker: it boots. */
void hv_booting_note(struct hv_act_ctx *ctx, virDomainPtr d);

/** Forgets that the guest of DMI product UUID uuid boots: its worker
 *  registered from the boot this worker started. */
void hv_booting_done(const char *uuid);

/** Before domain d (named name) is powered off: when it boots (it was
 *  started by this worker and its worker has not registered since), waits
 *  until it has, asking ctx->registration every 2 s and calling ctx->tick,
 *  for at most ctx->up_wait seconds, logging what it waits for and how it
 *  ended; the caller powers it off either way. Returns at once without
 *  ctx->registration. */
void hv_booting_await(struct hv_act_ctx *ctx, const char *name, virDomainPtr d);

#endif
