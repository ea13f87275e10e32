/* booting.c — see booting.h. */
#include "worker/virt/booting.h"

#include "log.h"
#include "timeutil.h"
#include "worker/clock.h"
#include "worker/virt/domain.h"
#include "worker/wake.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The most guests booting at once that are remembered; past it the
 * oldest start is forgotten (that guest then counts as up). */
#define MAX_BOOTING 64
/* How often the server is asked, seconds. */
#define ASK_EVERY 2.0

/* A guest started by this worker, by its UUID, with when (wall clock). */
static struct {
    char uuid[VIR_UUID_STRING_BUFLEN];
    double started;
} booting[MAX_BOOTING];

/* The slot of uuid, or -1. */
static int find(const char *uuid)
{
    for (int i = 0; i < MAX_BOOTING; i++)
        if (booting[i].uuid[0] != '\0' && strcasecmp(booting[i].uuid, uuid) == 0)
            return i;
    return -1;
}

void hv_booting_note(struct hv_act_ctx *ctx, virDomainPtr d)
{
    char uuid[VIR_UUID_STRING_BUFLEN];
    if (ctx->virt == NULL || ctx->virt->lv->DomainGetUUIDString(d, uuid) != 0)
        return;
    int slot = find(uuid);
    for (int i = 0; slot < 0 && i < MAX_BOOTING; i++)
        if (booting[i].uuid[0] == '\0')
            slot = i;
    if (slot < 0) {
        slot = 0;
        for (int i = 1; i < MAX_BOOTING; i++)
            if (booting[i].started < booting[slot].started)
                slot = i;
    }
    snprintf(booting[slot].uuid, sizeof booting[slot].uuid, "%s", uuid);
    booting[slot].started = hv_realtime();
}

void hv_booting_done(const char *uuid)
{
    int slot = find(uuid);
    if (slot >= 0)
        booting[slot].uuid[0] = '\0';
}

/* Whether g is a registration of the boot started at started (wall
 * clock): live, and made after that start. */
static bool up_since(const struct hv_guest_registration *g, double started)
{
    return g->worker_id != 0 && g->live && g->age >= 0 && hv_realtime() - g->age > started;
}

void hv_booting_await(struct hv_act_ctx *ctx, const char *name, virDomainPtr d)
{
    char uuid[VIR_UUID_STRING_BUFLEN];
    if (ctx->registration == NULL || ctx->virt == NULL ||
        ctx->virt->lv->DomainGetUUIDString(d, uuid) != 0)
        return;
    int slot = find(uuid);
    if (slot < 0)
        return;
    double limit = ctx->up_wait > 0 ? ctx->up_wait : HV_ACT_UP_WAIT;
    double t0 = hv_monotonic(), started = booting[slot].started;
    struct hv_guest_registration g;
    bool logged = false;
    for (;;) {
        if (ctx->registration(ctx->registration_arg, uuid, &g) == 0 && up_since(&g, started)) {
            hv_booting_done(uuid);
            if (logged)
                hv_info("%s is up: its worker registered %.0f s after its start (boot %.8s); "
                        "powering it off",
                        name, hv_realtime() - g.age - started, g.boot_id[0] ? g.boot_id : "?");
            return;
        }
        if (hv_monotonic() - t0 >= limit || hv_shutdown_requested())
            break;
        if (!logged)
            hv_info("%s is still booting (started %.0f s ago, its worker has not registered "
                    "since); waiting up to %.0f s for it before powering it off",
                    name, hv_realtime() - started, limit);
        logged = true;
        if (ctx->tick != NULL)
            ctx->tick(ctx->tick_arg);
        hv_wake_wait(ASK_EVERY);
    }
    hv_booting_done(uuid);
    hv_warn("%s did not come up within %.0f s (its worker did not register after its start, "
            "%.0f s ago); powering it off anyway",
            name, limit, hv_realtime() - started);
}
