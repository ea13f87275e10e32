/* act_xml.c — restart-class guest actuators: each reads its level from a
 * domain definition and edits it there (act_restart.c defines the edited
 * XML and restarts the domain once for all of them).
 *
 * What "the guest's disk" and "NIC" mean: disk_cache, io_mode and
 * disk_bus change the benchmark disk (the domain's second disk, vdb, the
 * one the disk workloads use), not the system disk; iothreads spread every
 * virtio disk over the threads; vhost_net, net_queues and guest_mtu change
 * every virtio NIC. An attribute libvirt leaves out reads as what QEMU
 * then does: no cache mode is writeback, no io mode is threads, no queues
 * is 1, no MTU is 1500, no driver name is vhost. */
#include "worker/virt/rows.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* Fills the reading's source: which definition of which domain, and the
 * element. */
static void xml_source(struct hv_reading *r, const struct hv_act_domain *d, const char *what)
{
    snprintf(r->source, sizeof r->source, "%s of %s: %s", d->xml_what, d->name, what);
}

static xmlNodePtr devices(const struct hv_act_domain *d)
{
    return hv_xml_child(hv_xml_root(d->xml), "devices");
}

xmlNodePtr hv_domxml_bench_disk(xmlNodePtr root)
{
    int seen = 0;
    xmlNodePtr devs = hv_xml_child(root, "devices");
    for (xmlNodePtr n = hv_xml_child(devs, "disk"); n != NULL; n = hv_xml_next(n, "disk")) {
        const char *device = hv_xml_attr(n, "device");
        if ((device == NULL || strcmp(device, "disk") == 0) && ++seen == 2)
            return n;
    }
    return NULL;
}

/* The benchmark disk, or -1 with err. */
static int bench_disk(const struct hv_actuator *a, const struct hv_act_domain *d, xmlNodePtr *disk,
                      char *err, size_t len)
{
    *disk = hv_domxml_bench_disk(hv_xml_root(d->xml));
    if (*disk != NULL)
        return 0;
    return hv_act_fail(
        err, len, "%s: %s has no second disk (the benchmark disk, vdb, that disk workloads use)",
        a->factor, d->name);
}

/* The disk's <driver>, created as <driver name='qemu'/> when asked. */
static xmlNodePtr disk_driver(xmlNodePtr disk, bool create)
{
    xmlNodePtr drv = hv_xml_child(disk, "driver");
    if (drv == NULL && create && (drv = hv_xml_add(disk, "driver")) != NULL)
        hv_xml_set_attr(drv, "name", "qemu");
    return drv;
}

/* Whether an <interface> is a virtio NIC. */
static bool virtio_nic(xmlNodePtr nic)
{
    const char *model = hv_xml_attr(hv_xml_child(nic, "model"), "type");
    return model != NULL && strcmp(model, "virtio") == 0;
}

/* The first virtio NIC, or -1 with err. */
static int first_nic(const struct hv_actuator *a, const struct hv_act_domain *d, xmlNodePtr *nic,
                     char *err, size_t len)
{
    for (xmlNodePtr n = hv_xml_child(devices(d), "interface"); n != NULL;
         n = hv_xml_next(n, "interface"))
        if (virtio_nic(n)) {
            *nic = n;
            return 0;
        }
    return hv_act_fail(err, len, "%s: %s has no virtio NIC", a->factor, d->name);
}

/* ---- iothreads -------------------------------------------------------- */

static int iothreads_read(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                          struct hv_act_domain *d, struct hv_reading *r, char *err, size_t len)
{
    (void)a, (void)ctx, (void)err, (void)len;
    xmlNodePtr n = hv_xml_child(hv_xml_root(d->xml), "iothreads");
    snprintf(r->value, sizeof r->value, "%ld", n != NULL ? strtol(hv_xml_content(n), NULL, 10) : 0);
    xml_source(r, d, "<iothreads>");
    return 0;
}

/* Gives each virtio disk of d, and each virtio-scsi controller, I/O
 * thread k mod n + 1 (none when n is 0). */
static int spread_iothreads(struct hv_act_domain *d, long n)
{
    long k = 0;
    int rc = 0;
    for (xmlNodePtr x = hv_xml_child(devices(d), NULL); x != NULL; x = hv_xml_next(x, NULL)) {
        bool disk = strcmp((const char *)x->name, "disk") == 0;
        bool ctl = strcmp((const char *)x->name, "controller") == 0;
        const char *bus = disk ? hv_xml_attr(hv_xml_child(x, "target"), "bus") : NULL;
        const char *model = ctl ? hv_xml_attr(x, "model") : NULL;
        bool takes = (bus != NULL && strcmp(bus, "virtio") == 0) ||
                     (model != NULL && strcmp(model, "virtio-scsi") == 0);
        if (!disk && !ctl)
            continue;
        if (!takes || n == 0) {
            rc |= hv_xml_set_attr(hv_xml_child(x, "driver"), "iothread", NULL);
            continue;
        }
        char id[24];
        snprintf(id, sizeof id, "%ld", k++ % n + 1);
        xmlNodePtr drv = disk ? disk_driver(x, true) : hv_xml_ensure(x, "driver");
        rc |= drv != NULL ? hv_xml_set_attr(drv, "iothread", id) : -1;
    }
    return rc;
}

static int iothreads_edit(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                          struct hv_act_domain *d, const char *level, char *err, size_t len)
{
    (void)ctx;
    xmlNodePtr root = hv_xml_root(d->xml);
    long n = strtol(level, NULL, 10);
    /* libvirt numbers the threads 1..n itself once <iothreadids> is gone;
     * pinning of threads that no longer exist would be refused. */
    hv_xml_remove(hv_xml_child(root, "iothreadids"));
    xmlNodePtr tune = hv_xml_child(root, "cputune");
    for (xmlNodePtr p = hv_xml_child(tune, "iothreadpin"), next; p != NULL; p = next) {
        next = hv_xml_next(p, "iothreadpin");
        const char *id = hv_xml_attr(p, "iothread");
        if (id == NULL || strtol(id, NULL, 10) > n)
            hv_xml_remove(p);
    }
    int rc = 0;
    if (n == 0) {
        hv_xml_remove(hv_xml_child(root, "iothreads"));
    } else {
        xmlNodePtr t = hv_xml_ensure(root, "iothreads");
        rc = t != NULL ? hv_xml_set_content(t, level) : -1;
    }
    if (rc != 0 || spread_iothreads(d, n) != 0)
        return hv_act_fail(err, len, "%s=%s: out of memory editing %s", a->factor, level, d->name);
    return 0;
}

/* ---- numa_tune -------------------------------------------------------- */

static int numa_read(const struct hv_actuator *a, struct hv_act_ctx *ctx, struct hv_act_domain *d,
                     struct hv_reading *r, char *err, size_t len)
{
    (void)a, (void)ctx, (void)err, (void)len;
    xmlNodePtr mem = hv_xml_child(hv_xml_child(hv_xml_root(d->xml), "numatune"), "memory");
    const char *mode = hv_xml_attr(mem, "mode");
    /* libvirt's default mode is strict */
    snprintf(r->value, sizeof r->value, "%s", mem == NULL ? "off" : mode ? mode : "strict");
    const char *nodeset = hv_xml_attr(mem, "nodeset");
    if (nodeset != NULL)
        r->detail = json_pack("{s:s}", "nodeset", nodeset);
    xml_source(r, d, "<numatune><memory mode>");
    return 0;
}

static int numa_edit(const struct hv_actuator *a, struct hv_act_ctx *ctx, struct hv_act_domain *d,
                     const char *level, char *err, size_t len)
{
    xmlNodePtr root = hv_xml_root(d->xml);
    xmlNodePtr tune = hv_xml_child(root, "numatune");
    if (strcmp(level, "off") == 0) {
        hv_xml_remove(hv_xml_child(tune, "memory"));
        if (tune != NULL && hv_xml_child(tune, NULL) == NULL)
            hv_xml_remove(tune);
        return 0;
    }
    /* strict and preferred: node 0 (preferred takes one node); interleave:
     * every node of the host. */
    char nodeset[32] = "0";
    if (strcmp(level, "interleave") == 0 && ctx->virt->nodes > 1)
        snprintf(nodeset, sizeof nodeset, "0-%d", ctx->virt->nodes - 1);
    xmlNodePtr mem = tune != NULL ? hv_xml_ensure(tune, "memory")
                                  : hv_xml_add(hv_xml_add(root, "numatune"), "memory");
    if (mem == NULL || hv_xml_set_attr(mem, "mode", level) != 0 ||
        hv_xml_set_attr(mem, "nodeset", nodeset) != 0 ||
        hv_xml_set_attr(mem, "placement", NULL) != 0)
        return hv_act_fail(err, len, "%s=%s: out of memory editing %s", a->factor, level, d->name);
    return 0;
}

/* ---- hugepages -------------------------------------------------------- */

static int hugepages_read(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                          struct hv_act_domain *d, struct hv_reading *r, char *err, size_t len)
{
    (void)a, (void)ctx, (void)err, (void)len;
    xmlNodePtr hp = hv_xml_child(hv_xml_child(hv_xml_root(d->xml), "memoryBacking"), "hugepages");
    xmlNodePtr page = hv_xml_child(hp, "page");
    const char *size = hv_xml_attr(page, "size");
    const char *unit = hv_xml_attr(page, "unit");
    long kib = size != NULL ? strtol(size, NULL, 10) : 0;
    if (unit != NULL && (strcasecmp(unit, "M") == 0 || strcasecmp(unit, "MiB") == 0))
        kib *= 1024;
    else if (unit != NULL && (strcasecmp(unit, "G") == 0 || strcasecmp(unit, "GiB") == 0))
        kib *= 1048576;
    if (hp == NULL)
        snprintf(r->value, sizeof r->value, "off");
    else if (page == NULL || kib == 2048) /* no size: the host's default, 2 MiB on x86 */
        snprintf(r->value, sizeof r->value, "2m");
    else if (kib == 1048576)
        snprintf(r->value, sizeof r->value, "1g");
    else
        snprintf(r->value, sizeof r->value, "%ldKiB", kib);
    xml_source(r, d, "<memoryBacking><hugepages><page size>");
    return 0;
}

static int hugepages_edit(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                          struct hv_act_domain *d, const char *level, char *err, size_t len)
{
    (void)ctx;
    xmlNodePtr root = hv_xml_root(d->xml);
    xmlNodePtr mb = hv_xml_child(root, "memoryBacking");
    hv_xml_remove(hv_xml_child(mb, "hugepages"));
    if (strcmp(level, "off") == 0) {
        if (mb != NULL && hv_xml_child(mb, NULL) == NULL)
            hv_xml_remove(mb);
        return 0;
    }
    xmlNodePtr page = hv_xml_add(
        hv_xml_add(mb != NULL ? mb : hv_xml_add(root, "memoryBacking"), "hugepages"), "page");
    if (page == NULL ||
        hv_xml_set_attr(page, "size", strcmp(level, "1g") == 0 ? "1048576" : "2048") != 0 ||
        hv_xml_set_attr(page, "unit", "KiB") != 0)
        return hv_act_fail(err, len, "%s=%s: out of memory editing %s", a->factor, level, d->name);
    return 0;
}

/* ---- cpu_mode --------------------------------------------------------- */

static int cpu_mode_read(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                         struct hv_act_domain *d, struct hv_reading *r, char *err, size_t len)
{
    (void)a, (void)ctx, (void)err, (void)len;
    char expected[128];
    snprintf(expected, sizeof expected, "%s", r->value);
    xmlNodePtr cpu = hv_xml_child(hv_xml_root(d->xml), "cpu");
    const char *mode = hv_xml_attr(cpu, "mode");
    const char *model = hv_xml_content(hv_xml_child(cpu, "model"));
    xml_source(r, d, "<cpu mode>");
    if (cpu == NULL) {
        snprintf(r->value, sizeof r->value, "custom");
        r->detail = json_pack("{s:s}", "note", "no <cpu>: QEMU's default model");
        return 0;
    }
    snprintf(r->value, sizeof r->value, "%s", mode != NULL ? mode : "custom");
    if (model[0] != '\0')
        r->detail = json_pack("{s:s}", "model", model);
    /* A running domain shows host-model expanded into the model libvirt
     * chose: mode='custom' with that model. */
    if (strcmp(r->value, "custom") == 0 && strcmp(expected, "host-model") == 0 &&
        strncmp(d->xml_what, "live", 4) == 0 && strcmp(model, HV_CUSTOM_CPU_MODEL) != 0)
        snprintf(r->value, sizeof r->value, "host-model");
    return 0;
}

static int cpu_mode_edit(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                         struct hv_act_domain *d, const char *level, char *err, size_t len)
{
    (void)ctx;
    xmlNodePtr cpu = hv_xml_ensure(hv_xml_root(d->xml), "cpu");
    if (cpu == NULL)
        return hv_act_fail(err, len, "%s=%s: out of memory editing %s", a->factor, level, d->name);
    /* The model and its features go; topology, NUMA cells and caches stay. */
    static const char *const drop[] = {"model", "vendor", "feature"};
    for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++)
        for (xmlNodePtr n = hv_xml_child(cpu, drop[i]); n != NULL; n = hv_xml_child(cpu, drop[i]))
            hv_xml_remove(n);
    int rc = hv_xml_set_attr(cpu, "mode", level);
    rc |= hv_xml_set_attr(cpu, "check", NULL);
    rc |= hv_xml_set_attr(cpu, "match", strcmp(level, "custom") == 0 ? "exact" : NULL);
    if (strcmp(level, "custom") == 0) {
        xmlNodePtr model = hv_xml_add(cpu, "model");
        rc |= model != NULL ? hv_xml_set_attr(model, "fallback", "allow") |
                                  hv_xml_set_content(model, HV_CUSTOM_CPU_MODEL)
                            : -1;
    }
    if (rc != 0)
        return hv_act_fail(err, len, "%s=%s: out of memory editing %s", a->factor, level, d->name);
    return 0;
}

/* ---- disk_bus --------------------------------------------------------- */

/* The controller a scsi disk sits on (its address's controller, else 0). */
static xmlNodePtr scsi_controller(const struct hv_act_domain *d, xmlNodePtr disk)
{
    const char *want = hv_xml_attr(hv_xml_child(disk, "address"), "controller");
    for (xmlNodePtr c = hv_xml_child(devices(d), "controller"); c != NULL;
         c = hv_xml_next(c, "controller")) {
        const char *type = hv_xml_attr(c, "type"), *index = hv_xml_attr(c, "index");
        if (type != NULL && strcmp(type, "scsi") == 0 &&
            strcmp(index != NULL ? index : "0", want != NULL ? want : "0") == 0)
            return c;
    }
    return NULL;
}

static int disk_bus_read(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                         struct hv_act_domain *d, struct hv_reading *r, char *err, size_t len)
{
    (void)ctx;
    xmlNodePtr disk;
    if (bench_disk(a, d, &disk, err, len) != 0)
        return -1;
    xmlNodePtr target = hv_xml_child(disk, "target");
    const char *bus = hv_xml_attr(target, "bus"), *dev = hv_xml_attr(target, "dev");
    if (bus == NULL)
        bus = "?";
    if (strcmp(bus, "virtio") == 0) {
        snprintf(r->value, sizeof r->value, "virtio-blk");
    } else if (strcmp(bus, "scsi") == 0) {
        const char *model = hv_xml_attr(scsi_controller(d, disk), "model");
        snprintf(r->value, sizeof r->value, "%s",
                 model != NULL && strcmp(model, "virtio-scsi") == 0 ? "virtio-scsi" : "scsi");
    } else {
        snprintf(r->value, sizeof r->value, "%s", bus);
    }
    r->detail = json_pack("{s:s}", "disk", dev != NULL ? dev : "?");
    xml_source(r, d, "the benchmark disk's <target bus>");
    return 0;
}

/* The first free device name with prefix ("vd", "sd") among d's disks. */
static void free_dev_name(const struct hv_act_domain *d, xmlNodePtr self, const char *prefix,
                          char *out, size_t n)
{
    for (char c = 'b'; c <= 'z'; c++) {
        snprintf(out, n, "%s%c", prefix, c);
        bool used = false;
        for (xmlNodePtr x = hv_xml_child(devices(d), "disk"); x != NULL && !used;
             x = hv_xml_next(x, "disk")) {
            const char *dev = hv_xml_attr(hv_xml_child(x, "target"), "dev");
            used = x != self && dev != NULL && strcmp(dev, out) == 0;
        }
        if (!used)
            return;
    }
}

/* Adds a virtio-scsi controller unless the disk's controller is one. */
static int ensure_virtio_scsi(const struct hv_actuator *a, struct hv_act_domain *d, xmlNodePtr disk,
                              char *err, size_t len)
{
    xmlNodePtr c = scsi_controller(d, disk);
    const char *model = hv_xml_attr(c, "model");
    if (c != NULL && model != NULL && strcmp(model, "virtio-scsi") == 0)
        return 0;
    if (c != NULL)
        return hv_act_fail(err, len,
                           "%s=virtio-scsi: %s's SCSI controller %s is a %s, not virtio-scsi; "
                           "change it by hand",
                           a->factor, d->name,
                           hv_xml_attr(c, "index") ? hv_xml_attr(c, "index") : "0",
                           model != NULL ? model : "default model");
    c = hv_xml_add(devices(d), "controller");
    if (c == NULL || hv_xml_set_attr(c, "type", "scsi") != 0 ||
        hv_xml_set_attr(c, "index", "0") != 0 || hv_xml_set_attr(c, "model", "virtio-scsi") != 0)
        return hv_act_fail(err, len, "%s=virtio-scsi: out of memory editing %s", a->factor,
                           d->name);
    return 0;
}

static int disk_bus_edit(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                         struct hv_act_domain *d, const char *level, char *err, size_t len)
{
    (void)ctx;
    xmlNodePtr disk;
    if (bench_disk(a, d, &disk, err, len) != 0)
        return -1;
    bool virtio = strcmp(level, "virtio-blk") == 0, scsi = strcmp(level, "virtio-scsi") == 0;
    /* A stale address would tie the disk to its old bus; libvirt assigns
     * a new one. */
    hv_xml_remove(hv_xml_child(disk, "address"));
    if (scsi && ensure_virtio_scsi(a, d, disk, err, len) != 0)
        return -1;
    char dev[16];
    free_dev_name(d, disk, virtio ? "vd" : "sd", dev, sizeof dev);
    xmlNodePtr target = hv_xml_ensure(disk, "target");
    int rc = target != NULL ? 0 : -1;
    if (rc == 0)
        rc = hv_xml_set_attr(target, "bus",
                             virtio ? "virtio"
                             : scsi ? "scsi"
                                    : "sata") |
             hv_xml_set_attr(target, "dev", dev);
    /* virtio-blk's own driver options mean nothing on another bus */
    if (!virtio)
        rc |= hv_xml_set_attr(hv_xml_child(disk, "driver"), "queues", NULL) |
              hv_xml_set_attr(hv_xml_child(disk, "driver"), "iothread", NULL);
    if (rc != 0)
        return hv_act_fail(err, len, "%s=%s: out of memory editing %s", a->factor, level, d->name);
    return 0;
}

/* ---- disk_cache, io_mode: attributes of the benchmark disk's driver -- */

/* The attribute and what its absence means. */
struct driver_attr {
    const char *attr, *absent;
};

static const struct driver_attr cache_attr = {"cache", "writeback"};
static const struct driver_attr io_attr = {"io", "threads"};

static int driver_attr_read(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                            struct hv_act_domain *d, struct hv_reading *r, char *err, size_t len)
{
    (void)ctx;
    const struct driver_attr *da = a->data;
    xmlNodePtr disk;
    if (bench_disk(a, d, &disk, err, len) != 0)
        return -1;
    const char *v = hv_xml_attr(disk_driver(disk, false), da->attr);
    snprintf(r->value, sizeof r->value, "%s", v != NULL ? v : da->absent);
    const char *dev = hv_xml_attr(hv_xml_child(disk, "target"), "dev");
    r->detail = json_pack("{s:s}", "disk", dev != NULL ? dev : "?");
    if (v == NULL)
        json_object_set_new(r->detail, "note", json_string("no attribute: QEMU's default"));
    char what[96];
    snprintf(what, sizeof what, "the benchmark disk's <driver %s>", da->attr);
    xml_source(r, d, what);
    return 0;
}

static int driver_attr_edit(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                            struct hv_act_domain *d, const char *level, char *err, size_t len)
{
    (void)ctx;
    const struct driver_attr *da = a->data;
    xmlNodePtr disk;
    if (bench_disk(a, d, &disk, err, len) != 0)
        return -1;
    xmlNodePtr drv = disk_driver(disk, true);
    if (drv == NULL || hv_xml_set_attr(drv, da->attr, level) != 0)
        return hv_act_fail(err, len, "%s=%s: out of memory editing %s", a->factor, level, d->name);
    return 0;
}

/* ---- vhost_net, net_queues, guest_mtu: the virtio NICs ---------------- */

/* How many of QEMU's file descriptors are /dev/vhost-net; -1 when they
 * cannot be read. */
static int vhost_fds(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *dir = opendir(path);
    if (dir == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        char link[320], target[256];
        snprintf(link, sizeof link, "%s/%s", path, e->d_name);
        ssize_t k = readlink(link, target, sizeof target - 1);
        if (k > 0) {
            target[k] = '\0';
            n += strcmp(target, "/dev/vhost-net") == 0;
        }
    }
    closedir(dir);
    return n;
}

static int vhost_read(const struct hv_actuator *a, struct hv_act_ctx *ctx, struct hv_act_domain *d,
                      struct hv_reading *r, char *err, size_t len)
{
    (void)ctx;
    xmlNodePtr nic;
    if (first_nic(a, d, &nic, err, len) != 0)
        return -1;
    int fds = strncmp(d->xml_what, "live", 4) == 0 && d->pid > 0 ? vhost_fds(d->pid) : -1;
    if (fds >= 0) {
        snprintf(r->value, sizeof r->value, "%s", fds > 0 ? "on" : "off");
        snprintf(r->source, sizeof r->source,
                 "QEMU's open files (pid %d): /dev/vhost-net held %d time%s", (int)d->pid, fds,
                 fds == 1 ? "" : "s");
        return 0;
    }
    const char *name = hv_xml_attr(hv_xml_child(nic, "driver"), "name");
    snprintf(r->value, sizeof r->value, "%s",
             name != NULL && strcmp(name, "qemu") == 0 ? "off" : "on");
    if (name == NULL)
        r->detail = json_pack("{s:s}", "note", "no driver name: libvirt uses vhost when it can");
    xml_source(r, d, "the first virtio NIC's <driver name>");
    return 0;
}

static int queues_read(const struct hv_actuator *a, struct hv_act_ctx *ctx, struct hv_act_domain *d,
                       struct hv_reading *r, char *err, size_t len)
{
    (void)ctx;
    xmlNodePtr nic;
    if (first_nic(a, d, &nic, err, len) != 0)
        return -1;
    const char *q = hv_xml_attr(hv_xml_child(nic, "driver"), "queues");
    snprintf(r->value, sizeof r->value, "%s", q != NULL ? q : "1");
    xml_source(r, d, "the first virtio NIC's <driver queues>");
    return 0;
}

static int mtu_read(const struct hv_actuator *a, struct hv_act_ctx *ctx, struct hv_act_domain *d,
                    struct hv_reading *r, char *err, size_t len)
{
    (void)ctx;
    xmlNodePtr nic;
    if (first_nic(a, d, &nic, err, len) != 0)
        return -1;
    const char *size = hv_xml_attr(hv_xml_child(nic, "mtu"), "size");
    snprintf(r->value, sizeof r->value, "%s", size != NULL ? size : "1500");
    xml_source(r, d, "the first virtio NIC's <mtu size>");
    return 0;
}

/* Sets one thing on every virtio NIC of d. */
static int nic_edit(const struct hv_actuator *a, struct hv_act_domain *d, const char *level,
                    char *err, size_t len)
{
    int rc = 0, seen = 0;
    for (xmlNodePtr nic = hv_xml_child(devices(d), "interface"); nic != NULL;
         nic = hv_xml_next(nic, "interface")) {
        if (!virtio_nic(nic))
            continue;
        seen++;
        if (strcmp(a->factor, "guest_mtu") == 0) {
            if (strcmp(level, "1500") == 0)
                hv_xml_remove(hv_xml_child(nic, "mtu"));
            else
                rc |= hv_xml_set_attr(hv_xml_ensure(nic, "mtu"), "size", level);
            continue;
        }
        xmlNodePtr drv = hv_xml_ensure(nic, "driver");
        if (drv == NULL)
            rc = -1;
        else if (strcmp(a->factor, "vhost_net") == 0)
            rc |= hv_xml_set_attr(drv, "name", strcmp(level, "on") == 0 ? "vhost" : "qemu");
        else
            rc |= hv_xml_set_attr(drv, "queues", strcmp(level, "1") == 0 ? NULL : level);
    }
    if (seen == 0)
        return hv_act_fail(err, len, "%s=%s: %s has no virtio NIC", a->factor, level, d->name);
    if (rc != 0)
        return hv_act_fail(err, len, "%s=%s: out of memory editing %s", a->factor, level, d->name);
    return 0;
}

static int nic_edit_row(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                        struct hv_act_domain *d, const char *level, char *err, size_t len)
{
    (void)ctx;
    return nic_edit(a, d, level, err, len);
}

/* In the order they are applied: the disk's bus before the I/O threads,
 * which go only to disks that can take them. */
const struct hv_actuator hv_xml_rows[] = {
    {"disk_bus", "domain_xml", disk_bus_edit, disk_bus_read, hv_xml_revert_domain, NULL},
    {"disk_cache", "domain_xml", driver_attr_edit, driver_attr_read, hv_xml_revert_domain,
     &cache_attr},
    {"io_mode", "domain_xml", driver_attr_edit, driver_attr_read, hv_xml_revert_domain, &io_attr},
    {"iothreads", "domain_xml", iothreads_edit, iothreads_read, hv_xml_revert_domain, NULL},
    {"numa_tune", "domain_xml", numa_edit, numa_read, hv_xml_revert_domain, NULL},
    {"hugepages", "domain_xml", hugepages_edit, hugepages_read, hv_xml_revert_domain, NULL},
    {"cpu_mode", "domain_xml", cpu_mode_edit, cpu_mode_read, hv_xml_revert_domain, NULL},
    {"vhost_net", "domain_xml", nic_edit_row, vhost_read, hv_xml_revert_domain, NULL},
    {"net_queues", "domain_xml", nic_edit_row, queues_read, hv_xml_revert_domain, NULL},
    {"guest_mtu", "domain_xml", nic_edit_row, mtu_read, hv_xml_revert_domain, NULL},
};

const size_t hv_xml_nrows = sizeof hv_xml_rows / sizeof hv_xml_rows[0];
