/* domain.c — see domain.h. */
#include "worker/virt/domain.h"

#include "worker/virt/owner.h"
#include "worker/virt/xml.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* libvirt's errors are reported by the worker, once, in its own words. */
static void quiet_errors(void *data, virErrorPtr e)
{
    (void)data;
    (void)e;
}

const char *hv_act_virt_error(const struct hv_act_ctx *ctx)
{
    const char *m = ctx->virt != NULL ? ctx->virt->lv->GetLastErrorMessage() : NULL;
    return m != NULL ? m : "unknown error";
}

/* Learns the host's online CPUs and NUMA nodes from libvirt (the test
 * driver makes up a host of its own, so the machine's are not used). */
static int learn_host(struct hv_act_virt *v, const char *uri, char *err, size_t len)
{
    unsigned char *map = NULL;
    unsigned int n_online = 0;
    int n = v->lv->NodeGetCPUMap(v->conn, &map, &n_online, 0);
    if (n <= 0) {
        snprintf(err, len, "cannot read the host's CPUs from libvirt at %s: %s", uri,
                 v->lv->GetLastErrorMessage());
        return -1;
    }
    v->ncpus = n > HV_CPUMAP_MAX ? HV_CPUMAP_MAX : n;
    v->maplen = VIR_CPU_MAPLEN(v->ncpus);
    for (int c = 0; c < v->ncpus; c++)
        if (VIR_CPU_USABLE(map, v->maplen, 0, c))
            v->online[v->n_online++] = c;
    free(map);
    if (v->n_online == 0) {
        snprintf(err, len, "libvirt at %s reports no online host CPU", uri);
        return -1;
    }
    virNodeInfo info;
    v->nodes = v->lv->NodeGetInfo(v->conn, &info) == 0 && info.nodes > 0 ? (int)info.nodes : 1;
    return 0;
}

/* Where a local QEMU driver behind uri keeps its domains' pid files; ""
 * when QEMU does not run here (a remote URI). */
static void pid_dir(const char *uri, char *buf, size_t len)
{
    static const char embed[] = "qemu:///embed?root=";
    const char *rt = getenv("XDG_RUNTIME_DIR");
    buf[0] = '\0';
    if (strcmp(uri, "qemu:///system") == 0)
        snprintf(buf, len, "/run/libvirt/qemu");
    else if (strcmp(uri, "qemu:///session") == 0 && rt != NULL && rt[0] == '/')
        snprintf(buf, len, "%s/libvirt/qemu/run", rt);
    else if (strncmp(uri, embed, sizeof embed - 1) == 0 && uri[sizeof embed - 1] == '/')
        snprintf(buf, len, "%.*s/run/qemu", (int)strcspn(uri + sizeof embed - 1, "&"),
                 uri + sizeof embed - 1);
}

int hv_act_virt_open(struct hv_act_ctx *ctx, char *err, size_t len)
{
    if (ctx->virt != NULL)
        return 0;
    if (ctx->libvirt_uri == NULL || ctx->libvirt_uri[0] == '\0') {
        snprintf(err, len,
                 "guest factors need libvirt: start the host worker with --libvirt URI "
                 "(e.g. qemu:///system)");
        return -1;
    }
    struct hv_act_virt *v = calloc(1, sizeof *v);
    if (v == NULL) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    v->lv = hv_virt_load(err, len);
    if (v->lv == NULL) {
        free(v);
        return -1;
    }
    v->lv->SetErrorFunc(NULL, quiet_errors);
    v->conn = v->lv->ConnectOpen(ctx->libvirt_uri);
    if (v->conn == NULL) {
        snprintf(err, len, "cannot connect to libvirt at %s read-write: %s", ctx->libvirt_uri,
                 v->lv->GetLastErrorMessage());
        free(v);
        return -1;
    }
    v->lv->ConnSetErrorFunc(v->conn, NULL, quiet_errors);
    const char *type = v->lv->ConnectGetType(v->conn);
    snprintf(v->type, sizeof v->type, "%s", type != NULL ? type : "unknown");
    const char *u = ctx->libvirt_uri;
    if (strcmp(v->type, "QEMU") == 0)
        pid_dir(u, v->pid_dir, sizeof v->pid_dir);
    if (learn_host(v, u, err, len) != 0) {
        v->lv->ConnectClose(v->conn);
        free(v);
        return -1;
    }
    ctx->virt = v;
    return 0;
}

void hv_act_ctx_release(struct hv_act_ctx *ctx)
{
    if (ctx->virt == NULL)
        return;
    ctx->virt->lv->ConnectClose(ctx->virt->conn);
    free(ctx->virt);
    ctx->virt = NULL;
}

void hv_act_note_start(struct hv_act_ctx *ctx, const char *name, virDomainPtr d)
{
    char uuid[VIR_UUID_STRING_BUFLEN];
    if (ctx->registration == NULL || ctx->virt == NULL ||
        ctx->virt->lv->DomainGetUUIDString(d, uuid) != 0)
        return;
    if (ctx->started == NULL && (ctx->started = json_object()) == NULL)
        return;
    struct hv_guest_registration before;
    if (ctx->registration(ctx->registration_arg, uuid, &before) != 0)
        before = (struct hv_guest_registration){.worker_id = 0};
    json_object_set_new(ctx->started, name,
                        json_pack("{s:s, s:I, s:s}", "uuid", uuid, "before",
                                  (json_int_t)before.worker_id, "before_boot", before.boot_id));
}

/* Whether /proc/PID/cmdline is QEMU's for domain name: libvirt starts it
 * with "-name guest=NAME,debug-threads=on". */
static bool is_qemu_of(pid_t pid, const char *name)
{
    char path[64], buf[8192];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char want[300];
    int w = snprintf(want, sizeof want, "guest=%s", name);
    for (size_t i = 0; i + (size_t)w <= n; i++) {
        if (memcmp(buf + i, want, (size_t)w) == 0 && (buf[i + w] == ',' || buf[i + w] == '\0') &&
            (i == 0 || buf[i - 1] == '\0'))
            return true;
    }
    return false;
}

/* The QEMU process of a running domain, when it runs on this machine and
 * its pid file is readable; else 0. */
static pid_t qemu_pid(const struct hv_act_virt *v, const char *name)
{
    if (v->pid_dir[0] == '\0')
        return 0;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.pid", v->pid_dir, name);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return 0;
    long pid = 0;
    if (fscanf(f, "%ld", &pid) != 1)
        pid = 0;
    fclose(f);
    return pid > 1 && is_qemu_of((pid_t)pid, name) ? (pid_t)pid : 0;
}

void hv_act_domain_refresh(struct hv_act_ctx *ctx, struct hv_act_domain *d)
{
    const struct hv_virt *lv = ctx->virt->lv;
    virDomainInfo info;
    d->active = lv->DomainIsActive(d->dom) == 1;
    if (lv->DomainGetInfo(d->dom, &info) == 0)
        d->nvcpus = info.nrVirtCpu;
    d->pid = d->active ? qemu_pid(ctx->virt, d->name) : 0;
}

int hv_act_domains_open(struct hv_act_ctx *ctx, struct hv_act_domain **out, size_t *n, char *err,
                        size_t len)
{
    *out = NULL;
    *n = 0;
    size_t count = json_array_size(ctx->domains);
    if (count == 0)
        return hv_act_fail(err, len, "guest factors need the step's domains, and it names none");
    if (hv_act_virt_open(ctx, err, len) != 0)
        return -1;
    struct hv_act_domain *d = calloc(count, sizeof *d);
    if (d == NULL)
        return hv_act_fail(err, len, "out of memory");
    int vcpus = 0;
    size_t used = 0;
    err[0] = '\0';
    for (size_t i = 0; i < count; i++) {
        const char *name = json_string_value(json_array_get(ctx->domains, i));
        virDomainPtr dom =
            name != NULL ? ctx->virt->lv->DomainLookupByName(ctx->virt->conn, name) : NULL;
        if (dom == NULL) {
            size_t k = strlen(err);
            snprintf(err + k, len - k, "%sno domain %s at %s", k ? "; " : "",
                     name != NULL ? name : "(not a string)", ctx->libvirt_uri);
            continue;
        }
        /* A context that changes domains (it has a journal) passes the
         * owner's door for each; reading back does not. */
        char why[1024];
        if (ctx->journal != NULL && hv_act_domain_owner_ok(ctx, name, dom, why, sizeof why) != 0) {
            size_t k = strlen(err);
            snprintf(err + k, len - k, "%s%s", k ? "; " : "", why);
            ctx->virt->lv->DomainFree(dom);
            continue;
        }
        d[used] = (struct hv_act_domain){.name = name, .dom = dom, .first_vcpu = vcpus};
        hv_act_domain_refresh(ctx, &d[used]);
        vcpus += d[used].nvcpus;
        used++;
    }
    if (err[0] != '\0') {
        hv_act_domains_free(ctx, d, used);
        return -1;
    }
    for (size_t i = 0; i < used; i++)
        d[i].plan_vcpus = vcpus;
    *out = d;
    *n = used;
    return 0;
}

void hv_act_domains_free(struct hv_act_ctx *ctx, struct hv_act_domain *d, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ctx->virt->lv->DomainFree(d[i].dom);
        hv_xml_free(d[i].xml);
    }
    free(d);
}

int hv_act_pin_cpu(const struct hv_act_virt *v, int k)
{
    return v->online[k % v->n_online];
}

void hv_act_map_online(const struct hv_act_virt *v, unsigned char *map)
{
    memset(map, 0, (size_t)v->maplen);
    for (int i = 0; i < v->n_online; i++)
        VIR_USE_CPU(map, v->online[i]);
}

void hv_act_map_free(const struct hv_act_virt *v, int total_vcpus, unsigned char *map)
{
    memset(map, 0, (size_t)v->maplen);
    if (total_vcpus >= v->n_online) {
        VIR_USE_CPU(map, v->online[v->n_online - 1]);
        return;
    }
    for (int i = total_vcpus; i < v->n_online; i++)
        VIR_USE_CPU(map, v->online[i]);
}

void hv_act_map_string(const unsigned char *map, int maplen, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    int bits = maplen * 8;
    for (int c = 0; c < bits && n < len; c++) {
        if (!VIR_CPU_USED(map, c))
            continue;
        int end = c;
        while (end + 1 < bits && VIR_CPU_USED(map, end + 1))
            end++;
        if (end == c)
            n += (size_t)snprintf(buf + n, len - n, "%s%d", n ? "," : "", c);
        else
            n += (size_t)snprintf(buf + n, len - n, "%s%d-%d", n ? "," : "", c, end);
        c = end;
    }
}

int hv_act_map_parse(const char *s, unsigned char *map, int maplen)
{
    memset(map, 0, (size_t)maplen);
    const char *p = s;
    while (*p != '\0') {
        char *end;
        long lo = strtol(p, &end, 10), hi = lo;
        if (end == p || lo < 0)
            return -1;
        p = end;
        if (*p == '-') {
            hi = strtol(p + 1, &end, 10);
            if (end == p + 1 || hi < lo)
                return -1;
            p = end;
        }
        if (hi >= maplen * 8L)
            return -1;
        for (long c = lo; c <= hi; c++)
            VIR_USE_CPU(map, c);
        if (*p == ',')
            p++;
        else if (*p != '\0')
            return -1;
    }
    return 0;
}

void hv_act_map_from_set(const cpu_set_t *set, unsigned char *map, int maplen)
{
    memset(map, 0, (size_t)maplen);
    for (int c = 0; c < maplen * 8 && c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, set))
            VIR_USE_CPU(map, c);
}

int hv_act_qemu_threads(pid_t pid, const char *prefix, pid_t *tids, char (*names)[16], int max)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *dir = opendir(path);
    if (dir == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    size_t plen = strlen(prefix);
    while ((e = readdir(dir)) != NULL && n < max) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);
        if (*end != '\0' || tid <= 0)
            continue;
        char comm_path[96], comm[16] = "";
        snprintf(comm_path, sizeof comm_path, "/proc/%d/task/%ld/comm", (int)pid, tid);
        FILE *f = fopen(comm_path, "re");
        if (f == NULL)
            continue;
        if (fgets(comm, sizeof comm, f) == NULL)
            comm[0] = '\0';
        fclose(f);
        comm[strcspn(comm, "\n")] = '\0';
        if (strncmp(comm, prefix, plen) != 0)
            continue;
        tids[n] = (pid_t)tid;
        memcpy(names[n], comm, sizeof comm);
        n++;
    }
    closedir(dir);
    return n;
}
