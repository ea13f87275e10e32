/* actuators_qemu.c — the guest actuators against real QEMU guests (TCG,
 * no OS: SeaBIOS finds nothing to boot and waits), through libvirt's
 * embedded QEMU driver (qemu:///embed?root=DIR: the driver runs in this
 * process with all its state under DIR, so no libvirtd is needed and the
 * machine's own is left alone). Read-back here is the kernel's: the
 * affinity of QEMU's "CPU N/TCG", "IO iothreadN" and main threads, QEMU's
 * open files; pinning is checked again by this program from /proc.
 *
 *   make e2e-qemu      (needs qemu-system-x86 and libvirt-daemon-driver-qemu)
 *
 * Not part of `make check`: it starts real QEMU processes, about 40 s of
 * them (longer where libvirt's capability probes of QEMU are slow: each
 * definition is validated against them). The guests have no OS and ignore
 * ACPI, so each restart ends in a destroy after 2 s. */
#include "tests/unit/check.h"
#include "worker/virt.h"
#include "worker/virt/actuator.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#define QEMU "/usr/bin/qemu-system-x86_64"

static char top[256], uri[400], root[300];
static const struct hv_virt *lv;
static virConnectPtr keeper;
static int (*event_run)(void);

static void *event_loop(void *arg)
{
    (void)arg;
    for (;;)
        event_run();
    return NULL;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static virDomainPtr define(const char *name, int vcpus)
{
    char xml[4096], img[2][400];
    for (int i = 0; i < 2; i++) {
        snprintf(img[i], sizeof img[i], "%s/%s-%d.img", top, name, i);
        int fd = open(img[i], O_CREAT | O_WRONLY, 0600);
        if (fd < 0 || ftruncate(fd, 16 << 20) != 0)
            exit(99);
        close(fd);
    }
    snprintf(xml, sizeof xml,
             "<domain type='qemu'><name>%s</name><memory unit='KiB'>131072</memory>"
             "<vcpu>%d</vcpu><os><type arch='x86_64'>hvm</type></os>"
             "<features><acpi/></features><devices>"
             "<disk type='file' device='disk'><driver name='qemu' type='raw'/>"
             "<source file='%s'/><target dev='vda' bus='virtio'/></disk>"
             "<disk type='file' device='disk'><driver name='qemu' type='raw'/>"
             "<source file='%s'/><target dev='vdb' bus='virtio'/></disk>"
             "<interface type='user'><model type='virtio'/></interface>"
             "<serial type='null'/></devices></domain>",
             name, vcpus, img[0], img[1]);
    virDomainPtr d = lv->DomainDefineXML(keeper, xml);
    if (d == NULL || lv->DomainCreate(d) != 0) {
        fprintf(stderr, "%s: %s\n", name, lv->GetLastErrorMessage());
        exit(99);
    }
    return d;
}

static char *persistent_xml(const char *name)
{
    virDomainPtr d = lv->DomainLookupByName(keeper, name);
    char *x = lv->DomainGetXMLDesc(d, VIR_DOMAIN_XML_INACTIVE | VIR_DOMAIN_XML_SECURE);
    lv->DomainFree(d);
    return x;
}

/* QEMU's pid for name, from the embedded driver's pid file. */
static pid_t qemu_pid(const char *name)
{
    char path[600];
    snprintf(path, sizeof path, "%s/run/qemu/%s.pid", root, name);
    FILE *f = fopen(path, "r");
    long pid = 0;
    if (f != NULL) {
        if (fscanf(f, "%ld", &pid) != 1)
            pid = 0;
        fclose(f);
    }
    return (pid_t)pid;
}

/* The CPUs thread `comm` of name's QEMU may run on, as "0" or "0-1";
 * comm NULL: the main thread. */
static const char *affinity(const char *name, const char *comm)
{
    static char out[64];
    pid_t pid = qemu_pid(name), tid = comm == NULL ? pid : 0;
    char path[128];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = comm != NULL ? opendir(path) : NULL;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL && tid == 0) {
        char cpath[512], c[32] = "";
        snprintf(cpath, sizeof cpath, "%s/%s/comm", path, e->d_name);
        FILE *f = fopen(cpath, "r");
        if (f == NULL)
            continue;
        if (fgets(c, sizeof c, f) != NULL && strncmp(c, comm, strlen(comm)) == 0)
            tid = (pid_t)atoi(e->d_name);
        fclose(f);
    }
    if (d != NULL)
        closedir(d);
    cpu_set_t set;
    if (tid <= 0 || sched_getaffinity(tid, sizeof set, &set) != 0)
        return "?";
    int first = -1, last = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) {
            first = first < 0 ? c : first;
            last = c;
        }
    snprintf(out, sizeof out, first == last ? "%d" : "%d-%d", first, last);
    return out;
}

static const char *rb(const json_t *settings, const char *factor)
{
    return json_string_value(json_object_get(json_object_get(settings, factor), "read_back"));
}

static const char *source(const json_t *settings, const char *factor)
{
    const char *s = json_string_value(json_object_get(json_object_get(settings, factor), "source"));
    return s != NULL ? s : "";
}

static int apply(const char *domains, const char *levels, struct hv_journal *j, json_t **settings,
                 char *err, size_t len)
{
    json_t *d = check_json(domains), *l = check_json(levels);
    struct hv_act_ctx ctx = {.root = "/",
                             .libvirt_uri = uri,
                             .domains = d,
                             .allow_restart = true,
                             .plan_id = 30,
                             .journal = j,
                             .shutdown_timeout = 2};
    int rc = hv_actuators_apply(l, &ctx, settings, err, len);
    printf("apply %s to %s: %s%s\n", levels, domains, rc == 0 ? "ok" : "error: ", rc ? err : "");
    json_decref(ctx.changes);
    hv_act_ctx_release(&ctx);
    json_decref(d);
    json_decref(l);
    return rc;
}

/* Starts the embedded driver's event loop and connects; 0 or -1. */
static int connect_embedded(void)
{
    char err[512];
    lv = hv_virt_load(err, sizeof err);
    CHECK_MSG(lv != NULL, "%s", err);
    CHECK_MSG(access(QEMU, X_OK) == 0, "%s is not installed (qemu-system-x86)", QEMU);
    if (lv == NULL || access(QEMU, X_OK) != 0)
        return -1;
    void *h = dlopen("libvirt.so.0", RTLD_NOW | RTLD_NOLOAD);
    int (*event_register)(void) = h != NULL ? dlsym(h, "virEventRegisterDefaultImpl") : NULL;
    event_run = h != NULL ? dlsym(h, "virEventRunDefaultImpl") : NULL;
    if (event_register == NULL || event_run == NULL || event_register() != 0)
        return -1;
    pthread_t loop;
    pthread_create(&loop, NULL, event_loop, NULL);
    pthread_detach(loop);
    snprintf(top, sizeof top, "/tmp/hv-qemu-XXXXXX");
    /* QEMU runs as libvirt's qemu user: it must reach its files here */
    if (mkdtemp(top) == NULL || chmod(top, 0755) != 0)
        return -1;
    snprintf(root, sizeof root, "%s/root", top);
    snprintf(uri, sizeof uri, "qemu:///embed?root=%s", root);
    keeper = lv->ConnectOpen(uri);
    CHECK_MSG(keeper != NULL, "%s", lv->GetLastErrorMessage());
    return keeper != NULL ? 0 : -1;
}

/* Live levels on both guests: pinning and the IOPS limit. */
static void live_levels(struct hv_journal *j)
{
    char err[8192];
    json_t *s;
    int rc = apply("[\"hvq0\", \"hvq1\"]",
                   "{\"vcpu_pin\": \"on\", \"emulator_pin\": \"on\", \"blkio_iops\": 300}", j, &s,
                   err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    printf("  vcpu_pin: %s (%s)\n  emulator_pin: %s (%s)\n  blkio_iops: %s (%s)\n",
           rb(s, "vcpu_pin"), source(s, "vcpu_pin"), rb(s, "emulator_pin"),
           source(s, "emulator_pin"), rb(s, "blkio_iops"), source(s, "blkio_iops"));
    CHECK(strstr(source(s, "vcpu_pin"), "sched_getaffinity of QEMU's vCPU threads") != NULL);
    CHECK(strstr(source(s, "emulator_pin"), "sched_getaffinity of QEMU's main thread") != NULL);
    json_decref(s);
    /* vCPUs numbered over both guests: hvq0's 0 and 1, then hvq1's 0 */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    char c1[8], c2[8];
    snprintf(c1, sizeof c1, "%ld", 1 % ncpu);
    snprintf(c2, sizeof c2, "%ld", 2 % ncpu);
    CHECK_STR(affinity("hvq0", "CPU 0/"), "0");
    CHECK_STR(affinity("hvq0", "CPU 1/"), c1);
    CHECK_STR(affinity("hvq1", "CPU 0/"), c2);
}

/* Restart-class levels, one restart per guest. */
static void restart_levels(struct hv_journal *j)
{
    char err[8192];
    json_t *s;
    pid_t before = qemu_pid("hvq0");
    int rc = apply("[\"hvq0\"]",
                   "{\"disk_cache\": \"none\", \"io_mode\": \"native\", \"iothreads\": 1, "
                   "\"iothread_pin\": \"on\", \"vhost_net\": \"off\"}",
                   j, &s, err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    CHECK(qemu_pid("hvq0") != before && qemu_pid("hvq0") > 0);
    printf("  iothread_pin: %s (%s)\n  vhost_net: %s (%s)\n", rb(s, "iothread_pin"),
           source(s, "iothread_pin"), rb(s, "vhost_net"), source(s, "vhost_net"));
    CHECK(strstr(source(s, "iothread_pin"), "sched_getaffinity of QEMU's I/O threads") != NULL);
    CHECK(strstr(source(s, "vhost_net"), "QEMU's open files") != NULL);
    json_decref(s);
    before = qemu_pid("hvq1");
    rc = apply("[\"hvq1\"]",
               "{\"disk_bus\": \"sata\", \"numa_tune\": \"strict\", \"cpu_mode\": "
               "\"custom\"}",
               j, &s, err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    CHECK(qemu_pid("hvq1") != before && qemu_pid("hvq1") > 0);
    json_decref(s);
}

/* What this machine cannot do, and says so. */
static void refusals(struct hv_journal *j)
{
    char err[8192];
    json_t *s;
    int rc = apply("[\"hvq1\"]", "{\"vhost_net\": \"on\"}", j, &s, err, sizeof err);
    CHECK_MSG(rc == -1 && strstr(err, "vhost_net=on: hvq1 reads back off"), "%s", err);
    json_decref(s);
    rc = apply("[\"hvq1\"]", "{\"hugepages\": \"2m\"}", j, &s, err, sizeof err);
    CHECK_MSG(rc == -1 && strstr(err, "reserve them first"), "%s", err);
    json_decref(s);
    rc = apply("[\"hvq1\"]", "{\"guest_mtu\": 9000}", j, &s, err, sizeof err);
    CHECK_MSG(rc == -1 && strstr(err, "setting MTU on interface type user is not supported"), "%s",
              err);
    json_decref(s);
    /* Last: levels QEMU refuses at start; the guests stay off until the
     * restore starts them again. */
    rc = apply("[\"hvq0\"]", "{\"cpu_mode\": \"host-passthrough\"}", j, &s, err, sizeof err);
    CHECK_MSG(rc == -1 && strstr(err, "hvq0 does not start with its new definition") &&
                  strstr(err, "host-passthrough"),
              "%s", err);
    json_decref(s);
    rc = apply("[\"hvq1\"]", "{\"net_queues\": 2}", j, &s, err, sizeof err);
    CHECK_MSG(rc == -1 && strstr(err, "hvq1 does not start with its new definition") &&
                  strstr(err, "multiqueue is not supported for network interfaces of type user"),
              "%s", err);
    json_decref(s);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (connect_embedded() != 0)
        return check_summary("actuators_qemu");
    virDomainPtr q0 = define("hvq0", 2), q1 = define("hvq1", 1);
    char *orig0 = persistent_xml("hvq0"), *orig1 = persistent_xml("hvq1"), err[8192], dir[400];
    snprintf(dir, sizeof dir, "%s/journal", top);
    struct hv_journal *j = hv_journal_open(dir, 30, err, sizeof err);
    live_levels(j);
    restart_levels(j);
    refusals(j);

    /* Everything back: definitions byte for byte, both guests running,
     * their threads on every CPU again. */
    struct hv_act_ctx ctx = {
        .root = "/", .libvirt_uri = uri, .plan_id = 30, .journal = j, .shutdown_timeout = 2};
    int rc = hv_actuators_restore(&ctx, err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    char *now0 = persistent_xml("hvq0"), *now1 = persistent_xml("hvq1");
    CHECK_STR(now0, orig0);
    CHECK_STR(now1, orig1);
    CHECK(lv->DomainIsActive(q0) == 1 && lv->DomainIsActive(q1) == 1);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    char all[16];
    snprintf(all, sizeof all, ncpu > 1 ? "0-%ld" : "0", ncpu - 1);
    CHECK_STR(affinity("hvq1", "CPU 0/"), all);
    CHECK_STR(affinity("hvq0", NULL), all);
    json_decref(ctx.changes);
    hv_act_ctx_release(&ctx);
    hv_journal_close(j);
    free(orig0), free(orig1), free(now0), free(now1);
    lv->DomainDestroy(q0);
    lv->DomainDestroy(q1);
    lv->DomainFree(q0);
    lv->DomainFree(q1);
    lv->ConnectClose(keeper);
    nftw(top, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    return check_summary("actuators_qemu");
}
