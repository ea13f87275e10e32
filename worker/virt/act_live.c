/* act_live.c — live-class guest actuators: vCPU, emulator and I/O thread
 * pinning, and the benchmark disk's IOPS limit, set on the running domain
 * (libvirt's live state; the persistent definition is left alone, so a
 * restart of the guest ends them and a restore finds nothing to undo).
 *
 * vCPUs are pinned with virDomainPinVcpu, which changes only the running
 * domain: the QEMU and Xen drivers implement it as virDomainPinVcpuFlags
 * with VIR_DOMAIN_AFFECT_LIVE, and the test driver accepts only this form
 * (it refuses the LIVE flag). The other calls pass VIR_DOMAIN_AFFECT_LIVE.
 *
 * Read-back prefers the kernel (domain.h): the affinity of QEMU's own
 * threads. Without a local QEMU it is libvirt's answer: for vCPUs
 * virDomainGetVcpus, whose CPU maps the QEMU driver itself takes from the
 * vCPU threads' affinity. */
#include "worker/virt/rows.h"

#include "log.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 512

/* Fails a live row on a domain that is not running. */
static int need_running(const struct hv_actuator *a, const struct hv_act_domain *d,
                        const char *level, char *err, size_t len)
{
    if (d->active)
        return 0;
    return hv_act_fail(err, len, "%s%s%s: %s is not running (a live setting needs a running guest)",
                       a->factor, level ? "=" : "", level ? level : "", d->name);
}

/* The map a pinning level asks for: on → on_map, off → every online CPU. */
static void level_map(const struct hv_act_virt *v, const char *level, const unsigned char *on_map,
                      unsigned char *out)
{
    if (strcmp(level, "on") == 0)
        memcpy(out, on_map, (size_t)v->maplen);
    else
        hv_act_map_online(v, out);
}

/* Whether map holds every CPU of all. */
static bool holds(const unsigned char *map, const unsigned char *all, size_t ml)
{
    for (size_t i = 0; i < ml; i++)
        if ((map[i] & all[i]) != all[i])
            return false;
    return true;
}

/* The level a set of maps shows: "on" when each equals its on-map, "off"
 * when each holds every online CPU (an unpinned thread may also name CPUs
 * that are offline), else "custom". When both fit (one host CPU), the
 * expected level. */
static void classify(const struct hv_act_virt *v, const unsigned char *maps,
                     const unsigned char *on_maps, int n, const char *expected, char *out,
                     size_t len)
{
    unsigned char all[HV_CPUMAP_MAX / 8];
    hv_act_map_online(v, all);
    bool on = true, off = true;
    size_t ml = (size_t)v->maplen;
    for (int i = 0; i < n; i++) {
        on = on && memcmp(maps + i * ml, on_maps + i * ml, ml) == 0;
        off = off && holds(maps + i * ml, all, ml);
    }
    if (on && off)
        snprintf(out, len, "%s", expected[0] != '\0' ? expected : "on");
    else if (on || off)
        snprintf(out, len, "%s", on ? "on" : "off");
    else
        snprintf(out, len, "custom");
}

/* The CPU lists of n maps as a JSON array and as one "0 1" string. */
static json_t *map_lists(const struct hv_act_virt *v, const unsigned char *maps, int n,
                         char *joined, size_t len)
{
    json_t *list = json_array();
    size_t k = 0;
    if (joined != NULL)
        joined[0] = '\0';
    for (int i = 0; i < n; i++) {
        char s[512];
        hv_act_map_string(maps + (size_t)i * (size_t)v->maplen, v->maplen, s, sizeof s);
        json_array_append_new(list, json_string(s));
        if (joined != NULL && k < len)
            k += (size_t)snprintf(joined + k, len - k, "%s%s", i ? " " : "", s);
    }
    return list;
}

/* The affinity of thread tid as a map. Returns 0 or -1. */
static int thread_map(const struct hv_act_virt *v, pid_t tid, unsigned char *map)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(tid, sizeof set, &set) != 0)
        return -1;
    hv_act_map_from_set(&set, map, v->maplen);
    return 0;
}

/* ---- vcpu_pin --------------------------------------------------------- */

/* The maps vcpu_pin=on gives d's vCPUs: vCPU j → the plan's vCPU number
 * first_vcpu + j. */
static void vcpu_on_maps(const struct hv_act_virt *v, const struct hv_act_domain *d,
                         unsigned char *maps)
{
    memset(maps, 0, (size_t)d->nvcpus * (size_t)v->maplen);
    for (int j = 0; j < d->nvcpus; j++)
        VIR_USE_CPU(maps + (size_t)j * (size_t)v->maplen, hv_act_pin_cpu(v, d->first_vcpu + j));
}

static int vcpu_pin_apply(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                          struct hv_act_domain *d, const char *level, char *err, size_t len)
{
    const struct hv_act_virt *v = ctx->virt;
    if (need_running(a, d, level, err, len) != 0)
        return -1;
    size_t ml = (size_t)v->maplen, n = (size_t)d->nvcpus;
    unsigned char *cur = calloc(n, ml), *want = calloc(n, ml), *on = calloc(n, ml);
    int rc = -1;
    if (cur == NULL || want == NULL || on == NULL) {
        hv_act_fail(err, len, "out of memory");
        goto out;
    }
    if (v->lv->DomainGetVcpuPinInfo(d->dom, d->nvcpus, cur, v->maplen, VIR_DOMAIN_AFFECT_LIVE) <
        0) {
        hv_act_fail(err, len, "%s=%s: cannot read the vCPU pinning of %s: %s", a->factor, level,
                    d->name, hv_act_virt_error(ctx));
        goto out;
    }
    vcpu_on_maps(v, d, on);
    for (size_t j = 0; j < n; j++)
        level_map(v, level, on + j * ml, want + j * ml);
    rc = 0;
    if (memcmp(cur, want, n * ml) == 0)
        goto out;
    char from[2048], to[2048];
    json_t *original = map_lists(v, cur, d->nvcpus, from, sizeof from);
    json_decref(map_lists(v, want, d->nvcpus, to, sizeof to));
    rc = hv_act_journal(ctx,
                        json_pack("{s:s, s:s, s:s, s:s, s:o}", "kind", a->kind, "factor", a->factor,
                                  "scope", "guest", "object", d->name, "original", original),
                        err, len) < 0
             ? -1
             : 0;
    for (size_t j = 0; rc == 0 && j < n; j++) {
        if (memcmp(cur + j * ml, want + j * ml, ml) != 0 &&
            v->lv->DomainPinVcpu(d->dom, (unsigned)j, want + j * ml, v->maplen) != 0)
            rc = hv_act_fail(err, len, "%s=%s: cannot pin vCPU %zu of %s: %s", a->factor, level, j,
                             d->name, hv_act_virt_error(ctx));
    }
    if (rc == 0)
        hv_act_note_change(ctx, a->factor, "guest", d->name, from, to);
out:
    free(cur);
    free(want);
    free(on);
    return rc;
}

/* Reads each vCPU thread's affinity from /proc; fills maps and the thread
 * ids. Returns 0, or -1 when a vCPU's thread is not found. */
static int vcpu_maps_from_threads(const struct hv_act_virt *v, const struct hv_act_domain *d,
                                  unsigned char *maps, json_t *threads)
{
    pid_t tids[MAX_THREADS];
    char names[MAX_THREADS][16];
    int n = hv_act_qemu_threads(d->pid, "CPU ", tids, names, MAX_THREADS);
    int found = 0;
    for (int i = 0; i < n; i++) {
        int j;
        if (sscanf(names[i], "CPU %d/", &j) != 1 || j < 0 || j >= d->nvcpus ||
            thread_map(v, tids[i], maps + (size_t)j * (size_t)v->maplen) != 0)
            continue;
        json_array_append_new(threads, json_pack("{s:i, s:i, s:s}", "vcpu", j, "tid", (int)tids[i],
                                                 "name", names[i]));
        found++;
    }
    return found == d->nvcpus ? 0 : -1;
}

static int vcpu_pin_read_back(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                              struct hv_act_domain *d, struct hv_reading *r, char *err, size_t len)
{
    const struct hv_act_virt *v = ctx->virt;
    if (need_running(a, d, NULL, err, len) != 0)
        return -1;
    size_t ml = (size_t)v->maplen, n = (size_t)d->nvcpus;
    unsigned char *maps = calloc(n, ml), *on = calloc(n, ml);
    virVcpuInfoPtr info = calloc(n, sizeof *info);
    json_t *threads = json_array();
    int rc = 0;
    if (maps == NULL || on == NULL || info == NULL) {
        rc = hv_act_fail(err, len, "out of memory");
    } else if (d->pid > 0 && vcpu_maps_from_threads(v, d, maps, threads) == 0) {
        snprintf(r->source, sizeof r->source,
                 "sched_getaffinity of QEMU's vCPU threads (pid %d, \"CPU N/...\")", (int)d->pid);
    } else if (v->lv->DomainGetVcpus(d->dom, info, d->nvcpus, maps, v->maplen) < 0) {
        rc = hv_act_fail(err, len, "%s: cannot read the vCPU affinity of %s: %s", a->factor,
                         d->name, hv_act_virt_error(ctx));
    } else {
        json_array_clear(threads);
        snprintf(r->source, sizeof r->source,
                 "libvirt virDomainGetVcpus (the %s driver's view; QEMU's is the vCPU threads' "
                 "affinity)",
                 v->type);
    }
    if (rc == 0) {
        vcpu_on_maps(v, d, on);
        char expected[128];
        snprintf(expected, sizeof expected, "%s", r->value);
        classify(v, maps, on, d->nvcpus, expected, r->value, sizeof r->value);
        r->detail = json_pack("{s:o}", "vcpus", map_lists(v, maps, d->nvcpus, NULL, 0));
        if (json_array_size(threads) > 0)
            json_object_set(r->detail, "threads", threads);
    }
    json_decref(threads);
    free(maps);
    free(on);
    free(info);
    return rc;
}

/* The running domain an entry names, or NULL when it no longer runs (its
 * live settings ended with it). Returns -1 with err on a libvirt failure. */
static int entry_domain(struct hv_act_ctx *ctx, const json_t *entry, virDomainPtr *dom, char *err,
                        size_t len)
{
    *dom = NULL;
    const char *name = json_string_value(json_object_get(entry, "object"));
    if (name == NULL)
        return hv_act_fail(err, len, "the journal entry names no domain");
    if (hv_act_virt_open(ctx, err, len) != 0)
        return -1;
    virDomainPtr d = ctx->virt->lv->DomainLookupByName(ctx->virt->conn, name);
    if (d != NULL && ctx->virt->lv->DomainIsActive(d) == 1) {
        *dom = d;
        return 0;
    }
    if (d != NULL)
        ctx->virt->lv->DomainFree(d);
    return 0;
}

/* Notes that a live setting of a domain that stopped needs no restore. */
static void note_ended(struct hv_act_ctx *ctx, const char *factor, const json_t *entry)
{
    const char *name = json_string_value(json_object_get(entry, "object"));
    hv_act_note_change(ctx, factor, "guest", name, "(live setting of a run that ended)",
                       "(the definition's)");
}

static int vcpu_pin_revert(const struct hv_actuator *a, struct hv_act_ctx *ctx, const json_t *entry,
                           char *err, size_t len)
{
    virDomainPtr dom;
    if (entry_domain(ctx, entry, &dom, err, len) != 0)
        return -1;
    if (dom == NULL) {
        note_ended(ctx, a->factor, entry);
        return 0;
    }
    const struct hv_act_virt *v = ctx->virt;
    const json_t *original = json_object_get(entry, "original");
    const char *name = json_string_value(json_object_get(entry, "object"));
    unsigned char map[HV_CPUMAP_MAX / 8];
    char to[2048] = "";
    size_t k = 0;
    int rc = 0;
    for (size_t j = 0; rc == 0 && j < json_array_size(original); j++) {
        const char *s = json_string_value(json_array_get(original, j));
        if (s == NULL || hv_act_map_parse(s, map, v->maplen) != 0)
            rc = hv_act_fail(err, len, "%s: the journal's CPU list for vCPU %zu of %s is unusable",
                             a->factor, j, name);
        else if (v->lv->DomainPinVcpu(dom, (unsigned)j, map, v->maplen) != 0)
            rc = hv_act_fail(err, len, "%s: cannot pin vCPU %zu of %s back to %s: %s", a->factor, j,
                             name, s, hv_act_virt_error(ctx));
        else if (k < sizeof to)
            k += (size_t)snprintf(to + k, sizeof to - k, "%s%s", j ? " " : "", s);
    }
    if (rc == 0)
        hv_act_note_change(ctx, a->factor, "guest", name, "(plan's pinning)", to);
    v->lv->DomainFree(dom);
    return rc;
}

/* ---- emulator_pin ----------------------------------------------------- */

static int emulator_pin_apply(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                              struct hv_act_domain *d, const char *level, char *err, size_t len)
{
    const struct hv_act_virt *v = ctx->virt;
    if (need_running(a, d, level, err, len) != 0)
        return -1;
    unsigned char cur[HV_CPUMAP_MAX / 8] = {0}, want[HV_CPUMAP_MAX / 8], on[HV_CPUMAP_MAX / 8];
    if (v->lv->DomainGetEmulatorPinInfo(d->dom, cur, v->maplen, VIR_DOMAIN_AFFECT_LIVE) < 0)
        return hv_act_fail(err, len, "%s=%s: cannot read the emulator pinning of %s: %s", a->factor,
                           level, d->name, hv_act_virt_error(ctx));
    hv_act_map_free(v, d->plan_vcpus, on);
    level_map(v, level, on, want);
    if (memcmp(cur, want, (size_t)v->maplen) == 0)
        return 0;
    char from[512], to[512];
    hv_act_map_string(cur, v->maplen, from, sizeof from);
    hv_act_map_string(want, v->maplen, to, sizeof to);
    if (hv_act_journal(ctx,
                       json_pack("{s:s, s:s, s:s, s:s, s:s}", "kind", a->kind, "factor", a->factor,
                                 "scope", "guest", "object", d->name, "original", from),
                       err, len) < 0)
        return -1;
    if (v->lv->DomainPinEmulator(d->dom, want, v->maplen, VIR_DOMAIN_AFFECT_LIVE) != 0)
        return hv_act_fail(err, len, "%s=%s: cannot pin the emulator threads of %s to %s: %s",
                           a->factor, level, d->name, to, hv_act_virt_error(ctx));
    hv_act_note_change(ctx, a->factor, "guest", d->name, from, to);
    return 0;
}

static int emulator_pin_read_back(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                                  struct hv_act_domain *d, struct hv_reading *r, char *err,
                                  size_t len)
{
    const struct hv_act_virt *v = ctx->virt;
    if (need_running(a, d, NULL, err, len) != 0)
        return -1;
    unsigned char map[HV_CPUMAP_MAX / 8] = {0}, on[HV_CPUMAP_MAX / 8];
    if (d->pid > 0 && thread_map(v, d->pid, map) == 0)
        snprintf(r->source, sizeof r->source, "sched_getaffinity of QEMU's main thread (pid %d)",
                 (int)d->pid);
    else if (v->lv->DomainGetEmulatorPinInfo(d->dom, map, v->maplen, VIR_DOMAIN_AFFECT_LIVE) >= 0)
        snprintf(r->source, sizeof r->source,
                 "libvirt virDomainGetEmulatorPinInfo (live; the %s driver's view)", v->type);
    else
        return hv_act_fail(err, len, "%s: cannot read the emulator pinning of %s: %s", a->factor,
                           d->name, hv_act_virt_error(ctx));
    hv_act_map_free(v, d->plan_vcpus, on);
    char expected[128], cpus[512];
    snprintf(expected, sizeof expected, "%s", r->value);
    classify(v, map, on, 1, expected, r->value, sizeof r->value);
    hv_act_map_string(map, v->maplen, cpus, sizeof cpus);
    r->detail = json_pack("{s:s}", "cpus", cpus);
    return 0;
}

static int emulator_pin_revert(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                               const json_t *entry, char *err, size_t len)
{
    virDomainPtr dom;
    if (entry_domain(ctx, entry, &dom, err, len) != 0)
        return -1;
    if (dom == NULL) {
        note_ended(ctx, a->factor, entry);
        return 0;
    }
    const struct hv_act_virt *v = ctx->virt;
    const char *name = json_string_value(json_object_get(entry, "object"));
    const char *s = json_string_value(json_object_get(entry, "original"));
    unsigned char map[HV_CPUMAP_MAX / 8];
    int rc = 0;
    if (s == NULL || hv_act_map_parse(s, map, v->maplen) != 0)
        rc =
            hv_act_fail(err, len, "%s: the journal's CPU list for %s is unusable", a->factor, name);
    else if (v->lv->DomainPinEmulator(dom, map, v->maplen, VIR_DOMAIN_AFFECT_LIVE) != 0)
        rc = hv_act_fail(err, len, "%s: cannot pin the emulator threads of %s back to %s: %s",
                         a->factor, name, s, hv_act_virt_error(ctx));
    else
        hv_act_note_change(ctx, a->factor, "guest", name, "(plan's pinning)", s);
    v->lv->DomainFree(dom);
    return rc;
}

/* ---- iothread_pin ----------------------------------------------------- */

/* The domain's I/O threads (live): *info and their number, or -1. */
static int iothreads(const struct hv_act_ctx *ctx, virDomainPtr dom,
                     virDomainIOThreadInfoPtr **info)
{
    *info = NULL;
    return ctx->virt->lv->DomainGetIOThreadInfo(dom, info, VIR_DOMAIN_AFFECT_LIVE);
}

static void iothreads_free(const struct hv_act_ctx *ctx, virDomainIOThreadInfoPtr *info, int n)
{
    for (int i = 0; i < n; i++)
        ctx->virt->lv->DomainIOThreadInfoFree(info[i]);
    free(info);
}

/* Copies a libvirt map of any width into a map of v->maplen bytes. */
static void fit_map(const struct hv_act_virt *v, const unsigned char *src, int srclen,
                    unsigned char *dst)
{
    memset(dst, 0, (size_t)v->maplen);
    memcpy(dst, src, (size_t)(srclen < v->maplen ? srclen : v->maplen));
}

static int iothread_pin_apply(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                              struct hv_act_domain *d, const char *level, char *err, size_t len)
{
    const struct hv_act_virt *v = ctx->virt;
    if (need_running(a, d, level, err, len) != 0)
        return -1;
    virDomainIOThreadInfoPtr *info;
    int n = iothreads(ctx, d->dom, &info);
    if (n < 0)
        return hv_act_fail(err, len, "%s=%s: cannot list the I/O threads of %s: %s", a->factor,
                           level, d->name, hv_act_virt_error(ctx));
    unsigned char want[HV_CPUMAP_MAX / 8], on[HV_CPUMAP_MAX / 8], cur[HV_CPUMAP_MAX / 8];
    hv_act_map_free(v, d->plan_vcpus, on);
    level_map(v, level, on, want);
    char to[512];
    hv_act_map_string(want, v->maplen, to, sizeof to);
    json_t *original = json_array();
    bool differ = false;
    for (int i = 0; i < n; i++) {
        char s[512];
        fit_map(v, info[i]->cpumap, info[i]->cpumaplen, cur);
        hv_act_map_string(cur, v->maplen, s, sizeof s);
        json_array_append_new(original, json_pack("{s:I, s:s}", "iothread",
                                                  (json_int_t)info[i]->iothread_id, "cpus", s));
        differ = differ || memcmp(cur, want, (size_t)v->maplen) != 0;
    }
    int rc = 0;
    if (differ &&
        hv_act_journal(ctx,
                       json_pack("{s:s, s:s, s:s, s:s, s:O}", "kind", a->kind, "factor", a->factor,
                                 "scope", "guest", "object", d->name, "original", original),
                       err, len) < 0)
        rc = -1;
    for (int i = 0; differ && rc == 0 && i < n; i++)
        if (v->lv->DomainPinIOThread(d->dom, info[i]->iothread_id, want, v->maplen,
                                     VIR_DOMAIN_AFFECT_LIVE) != 0)
            rc = hv_act_fail(err, len, "%s=%s: cannot pin I/O thread %u of %s: %s", a->factor,
                             level, info[i]->iothread_id, d->name, hv_act_virt_error(ctx));
    if (differ && rc == 0) {
        char *from = json_dumps(original, JSON_COMPACT);
        hv_act_note_change(ctx, a->factor, "guest", d->name, from != NULL ? from : "?", to);
        free(from);
    }
    json_decref(original);
    iothreads_free(ctx, info, n);
    return rc;
}

/* The affinity of I/O thread id from QEMU's thread "IO iothreadID". */
static int iothread_map_from_thread(const struct hv_act_virt *v, const struct hv_act_domain *d,
                                    unsigned id, unsigned char *map)
{
    pid_t tids[MAX_THREADS];
    char names[MAX_THREADS][16], want[16];
    snprintf(want, sizeof want, "IO iothread%u", id);
    int n = hv_act_qemu_threads(d->pid, "IO ", tids, names, MAX_THREADS);
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], want) == 0)
            return thread_map(v, tids[i], map);
    return -1;
}

static int iothread_pin_read_back(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                                  struct hv_act_domain *d, struct hv_reading *r, char *err,
                                  size_t len)
{
    const struct hv_act_virt *v = ctx->virt;
    if (need_running(a, d, NULL, err, len) != 0)
        return -1;
    virDomainIOThreadInfoPtr *info;
    int n = iothreads(ctx, d->dom, &info);
    if (n < 0)
        return hv_act_fail(err, len, "%s: cannot list the I/O threads of %s: %s", a->factor,
                           d->name, hv_act_virt_error(ctx));
    size_t ml = (size_t)v->maplen;
    unsigned char *maps = calloc((size_t)n + 1, ml), *on = calloc((size_t)n + 1, ml);
    bool kernel = d->pid > 0;
    for (int i = 0; i < n && maps != NULL && on != NULL; i++) {
        hv_act_map_free(v, d->plan_vcpus, on + (size_t)i * ml);
        if (!kernel ||
            iothread_map_from_thread(v, d, info[i]->iothread_id, maps + (size_t)i * ml) != 0) {
            kernel = false;
            fit_map(v, info[i]->cpumap, info[i]->cpumaplen, maps + (size_t)i * ml);
        }
    }
    if (kernel && n > 0)
        snprintf(r->source, sizeof r->source,
                 "sched_getaffinity of QEMU's I/O threads (pid %d, \"IO iothreadN\")", (int)d->pid);
    else
        snprintf(r->source, sizeof r->source,
                 "libvirt virDomainGetIOThreadInfo (live; the %s driver's view)", v->type);
    char expected[128];
    snprintf(expected, sizeof expected, "%s", r->value);
    if (n == 0)
        snprintf(r->value, sizeof r->value, "%s", expected[0] ? expected : "off");
    else if (maps != NULL && on != NULL)
        classify(v, maps, on, n, expected, r->value, sizeof r->value);
    r->detail = json_pack("{s:i, s:o}", "iothreads", n, "cpus",
                          maps != NULL ? map_lists(v, maps, n, NULL, 0) : json_array());
    if (n == 0)
        json_object_set_new(r->detail, "note",
                            json_string("the domain has no I/O threads: nothing to pin"));
    free(maps);
    free(on);
    iothreads_free(ctx, info, n);
    return 0;
}

static int iothread_pin_revert(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                               const json_t *entry, char *err, size_t len)
{
    virDomainPtr dom;
    if (entry_domain(ctx, entry, &dom, err, len) != 0)
        return -1;
    if (dom == NULL) {
        note_ended(ctx, a->factor, entry);
        return 0;
    }
    const struct hv_act_virt *v = ctx->virt;
    const char *name = json_string_value(json_object_get(entry, "object"));
    const json_t *original = json_object_get(entry, "original");
    unsigned char map[HV_CPUMAP_MAX / 8];
    int rc = 0;
    size_t i;
    json_t *t;
    json_array_foreach(original, i, t)
    {
        const char *s = json_string_value(json_object_get(t, "cpus"));
        json_int_t id = json_integer_value(json_object_get(t, "iothread"));
        if (s == NULL || hv_act_map_parse(s, map, v->maplen) != 0) {
            rc = hv_act_fail(err, len, "%s: the journal's CPU list for %s is unusable", a->factor,
                             name);
            break;
        }
        if (v->lv->DomainPinIOThread(dom, (unsigned)id, map, v->maplen, VIR_DOMAIN_AFFECT_LIVE) !=
            0) {
            rc = hv_act_fail(err, len, "%s: cannot pin I/O thread %lld of %s back to %s: %s",
                             a->factor, (long long)id, name, s, hv_act_virt_error(ctx));
            break;
        }
    }
    if (rc == 0) {
        char *to = json_dumps(original, JSON_COMPACT);
        hv_act_note_change(ctx, a->factor, "guest", name, "(plan's pinning)", to ? to : "?");
        free(to);
    }
    v->lv->DomainFree(dom);
    return rc;
}

/* ---- blkio_iops -------------------------------------------------------- */

/* Reads the live total_iops_sec and total_iops_sec_max of disk dev. */
static int iotune_get(const struct hv_act_ctx *ctx, virDomainPtr dom, const char *dev,
                      unsigned long long *total, unsigned long long *max)
{
    const struct hv_virt *lv = ctx->virt->lv;
    int n = 0;
    *total = *max = 0;
    if (lv->DomainGetBlockIoTune(dom, dev, NULL, &n, VIR_DOMAIN_AFFECT_LIVE) != 0 || n <= 0)
        return -1;
    virTypedParameterPtr p = calloc((size_t)n, sizeof *p);
    if (p == NULL)
        return -1;
    int rc = lv->DomainGetBlockIoTune(dom, dev, p, &n, VIR_DOMAIN_AFFECT_LIVE);
    if (rc == 0) {
        lv->TypedParamsGetULLong(p, n, VIR_DOMAIN_BLOCK_IOTUNE_TOTAL_IOPS_SEC, total);
        lv->TypedParamsGetULLong(p, n, VIR_DOMAIN_BLOCK_IOTUNE_TOTAL_IOPS_SEC_MAX, max);
    }
    lv->TypedParamsClear(p, n);
    free(p);
    return rc;
}

/* Sets the live total_iops_sec and total_iops_sec_max of disk dev. */
static int iotune_set(const struct hv_act_ctx *ctx, virDomainPtr dom, const char *dev,
                      unsigned long long total, unsigned long long max)
{
    const struct hv_virt *lv = ctx->virt->lv;
    virTypedParameterPtr p = NULL;
    int n = 0, cap = 0;
    if (lv->TypedParamsAddULLong(&p, &n, &cap, VIR_DOMAIN_BLOCK_IOTUNE_TOTAL_IOPS_SEC, total) !=
            0 ||
        lv->TypedParamsAddULLong(&p, &n, &cap, VIR_DOMAIN_BLOCK_IOTUNE_TOTAL_IOPS_SEC_MAX, max) !=
            0) {
        lv->TypedParamsFree(p, n);
        return -1;
    }
    int rc = lv->DomainSetBlockIoTune(dom, dev, p, n, VIR_DOMAIN_AFFECT_LIVE);
    lv->TypedParamsFree(p, n);
    return rc;
}

static int blkio_iops_apply(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                            struct hv_act_domain *d, const char *level, char *err, size_t len)
{
    char dev[64];
    if (need_running(a, d, level, err, len) != 0)
        return -1;
    if (hv_xml_bench_disk_dev(ctx, d, dev, sizeof dev, err, len) != 0)
        return -1;
    unsigned long long total, max, want = strtoull(level, NULL, 10);
    if (iotune_get(ctx, d->dom, dev, &total, &max) != 0)
        return hv_act_fail(err, len, "%s=%s: cannot read the I/O limits of %s's disk %s: %s",
                           a->factor, level, d->name, dev, hv_act_virt_error(ctx));
    if (total == want)
        return 0;
    if (hv_act_journal(ctx,
                       json_pack("{s:s, s:s, s:s, s:s, s:s, s:{s:I, s:I}}", "kind", a->kind,
                                 "factor", a->factor, "scope", "guest", "object", d->name, "disk",
                                 dev, "original", "total_iops_sec", (json_int_t)total,
                                 "total_iops_sec_max", (json_int_t)max),
                       err, len) < 0)
        return -1;
    /* The burst limit is set to the limit: no burst above it (and the
     * test driver refuses a limit above an unset burst limit). */
    if (iotune_set(ctx, d->dom, dev, want, want) != 0)
        return hv_act_fail(err, len, "%s=%s: cannot limit %s's disk %s: %s", a->factor, level,
                           d->name, dev, hv_act_virt_error(ctx));
    char from[32];
    snprintf(from, sizeof from, "%llu", total);
    char object[160];
    snprintf(object, sizeof object, "%s %s", d->name, dev);
    hv_act_note_change(ctx, a->factor, "guest", object, from, level);
    return 0;
}

static int blkio_iops_read_back(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                                struct hv_act_domain *d, struct hv_reading *r, char *err,
                                size_t len)
{
    char dev[64];
    if (need_running(a, d, NULL, err, len) != 0 ||
        hv_xml_bench_disk_dev(ctx, d, dev, sizeof dev, err, len) != 0)
        return -1;
    unsigned long long total, max;
    if (iotune_get(ctx, d->dom, dev, &total, &max) != 0)
        return hv_act_fail(err, len, "%s: cannot read the I/O limits of %s's disk %s: %s",
                           a->factor, d->name, dev, hv_act_virt_error(ctx));
    snprintf(r->value, sizeof r->value, "%llu", total);
    snprintf(r->source, sizeof r->source,
             "libvirt virDomainGetBlockIoTune (live; the %s driver's view, QEMU's own throttle "
             "settings on QEMU)",
             ctx->virt->type);
    r->detail = json_pack("{s:s, s:I}", "disk", dev, "total_iops_sec_max", (json_int_t)max);
    return 0;
}

static int blkio_iops_revert(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                             const json_t *entry, char *err, size_t len)
{
    virDomainPtr dom;
    if (entry_domain(ctx, entry, &dom, err, len) != 0)
        return -1;
    if (dom == NULL) {
        note_ended(ctx, a->factor, entry);
        return 0;
    }
    const char *name = json_string_value(json_object_get(entry, "object"));
    const char *dev = json_string_value(json_object_get(entry, "disk"));
    const json_t *o = json_object_get(entry, "original");
    json_int_t total = json_integer_value(json_object_get(o, "total_iops_sec"));
    json_int_t max = json_integer_value(json_object_get(o, "total_iops_sec_max"));
    int rc = 0;
    if (dev == NULL)
        rc = hv_act_fail(err, len, "%s: the journal entry names no disk", a->factor);
    else if (iotune_set(ctx, dom, dev, (unsigned long long)total, (unsigned long long)max) != 0)
        rc = hv_act_fail(err, len, "%s: cannot put back the I/O limits of %s's disk %s: %s",
                         a->factor, name, dev, hv_act_virt_error(ctx));
    if (rc == 0) {
        char object[160], to[32];
        snprintf(object, sizeof object, "%s %s", name, dev);
        snprintf(to, sizeof to, "%lld", (long long)total);
        hv_act_note_change(ctx, a->factor, "guest", object, "(plan's limit)", to);
    }
    ctx->virt->lv->DomainFree(dom);
    return rc;
}

const struct hv_actuator hv_live_rows[] = {
    {"vcpu_pin", "vcpu_pin", vcpu_pin_apply, vcpu_pin_read_back, vcpu_pin_revert, NULL},
    {"emulator_pin", "emulator_pin", emulator_pin_apply, emulator_pin_read_back,
     emulator_pin_revert, NULL},
    {"iothread_pin", "iothread_pin", iothread_pin_apply, iothread_pin_read_back,
     iothread_pin_revert, NULL},
    {"blkio_iops", "blkio_iops", blkio_iops_apply, blkio_iops_read_back, blkio_iops_revert, NULL},
};

const size_t hv_live_nrows = sizeof hv_live_rows / sizeof hv_live_rows[0];
