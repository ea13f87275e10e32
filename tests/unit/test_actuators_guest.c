/* test_actuators_guest.c — the guest actuators against libvirt's test
 * driver (test:///default, whose state lives while a connection to it is
 * open): every guest factor applied to two running domains and read back,
 * each domain restarted once; a second block that changes nothing
 * restarts nothing; a restore from a reopened journal gives back each
 * domain's definition byte for byte and its pinning and I/O limit; and the
 * refusals: restarts not allowed, io=native with a host cache, huge pages
 * not reserved, live levels on a stopped guest, unknown domains, no
 * libvirt; domains of other VM managers (nova, OpenNebula) refused unless
 * the plan names them and allows restarts. Also what the test driver lacks: the LIVE flag of
 * virDomainPinVcpuFlags, and a kernel to read affinity from. */
#include "tests/unit/check.h"
#include "worker/virt.h"
#include "worker/virt/actuator.h"

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#define URI "test:///default"

static char top[256], root[300];
static const struct hv_virt *lv;
static virConnectPtr keeper; /* keeps the test driver's state alive */

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void put(const char *rel, const char *text)
{
    char path[600], dir[600];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p != '\0'; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(dir, 0755);
            *p = '/';
        }
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

/* A test-driver domain: vcpus vCPUs, a system and a benchmark disk, a
 * virtio NIC; meta goes into <metadata>. */
static virDomainPtr define(const char *name, int vcpus, bool second_disk, const char *meta)
{
    char xml[4096];
    snprintf(xml, sizeof xml,
             "<domain type='test'><name>%s</name><memory unit='KiB'>1048576</memory>"
             "<vcpu>%d</vcpu>%s<os><type arch='x86_64'>hvm</type></os>"
             "<cpu mode='host-passthrough'/><devices>"
             "<disk type='file' device='disk'><driver name='qemu' type='raw'/>"
             "<source file='/var/lib/hvt/%s-sys.img'/><target dev='vda' bus='virtio'/></disk>%s"
             "<interface type='network'><source network='default'/><model type='virtio'/>"
             "</interface></devices></domain>",
             name, vcpus, meta, name,
             second_disk ? "<disk type='file' device='disk'><driver name='qemu' "
                           "type='raw' cache='writeback'/><source "
                           "file='/var/lib/hvt/bench.img'/><target dev='vdb' "
                           "bus='virtio'/></disk>"
                         : "");
    virDomainPtr d = lv->DomainDefineXML(keeper, xml);
    if (d == NULL) {
        fprintf(stderr, "define %s: %s\n", name, lv->GetLastErrorMessage());
        exit(99);
    }
    return d;
}

static char *persistent_xml(virDomainPtr d)
{
    return lv->DomainGetXMLDesc(d, VIR_DOMAIN_XML_INACTIVE | VIR_DOMAIN_XML_SECURE);
}

static struct hv_journal *journal(long long plan)
{
    char dir[400], err[512];
    snprintf(dir, sizeof dir, "%s/journal", top);
    struct hv_journal *j = hv_journal_open(dir, plan, err, sizeof err);
    if (j == NULL)
        exit(99);
    return j;
}

/* The domain's id now (a handle keeps the id it was looked up with). */
static int dom_id(const char *name)
{
    virDomainPtr d = lv->DomainLookupByName(keeper, name);
    int id = d != NULL ? (int)lv->DomainGetID(d) : -2;
    if (d != NULL)
        lv->DomainFree(d);
    return id;
}

static const char *rb(const json_t *settings, const char *factor)
{
    return json_string_value(json_object_get(json_object_get(settings, factor), "read_back"));
}

/* The live CPU list of vCPU v (or the emulator when v < 0). */
static unsigned pin_map(virDomainPtr d, int v)
{
    unsigned char maps[16] = {0};
    if (v < 0)
        lv->DomainGetEmulatorPinInfo(d, maps, 1, VIR_DOMAIN_AFFECT_LIVE);
    else
        lv->DomainGetVcpuPinInfo(d, v + 1, maps, 1, VIR_DOMAIN_AFFECT_LIVE);
    return maps[v < 0 ? 0 : v];
}

static unsigned long long iops(virDomainPtr d, const char *dev)
{
    int n = 0;
    lv->DomainGetBlockIoTune(d, dev, NULL, &n, VIR_DOMAIN_AFFECT_LIVE);
    virTypedParameterPtr p = calloc((size_t)n, sizeof *p);
    unsigned long long v = 0;
    lv->DomainGetBlockIoTune(d, dev, p, &n, VIR_DOMAIN_AFFECT_LIVE);
    lv->TypedParamsGetULLong(p, n, "total_iops_sec", &v);
    lv->TypedParamsFree(p, n);
    return v;
}

static const char *all_levels =
    "{\"vcpu_pin\": \"on\", \"emulator_pin\": \"on\", \"iothreads\": 2, \"iothread_pin\": \"on\", "
    "\"numa_tune\": \"interleave\", \"hugepages\": \"2m\", \"cpu_mode\": \"host-model\", "
    "\"disk_bus\": \"virtio-scsi\", \"disk_cache\": \"none\", \"io_mode\": \"native\", "
    "\"vhost_net\": \"off\", \"net_queues\": 4, \"guest_mtu\": 9000, \"blkio_iops\": 500}";

static void test_apply_restore(void)
{
    virDomainPtr a = define("hvt-a", 2, true, ""), b = define("hvt-b", 1, true, "");
    CHECK(lv->DomainCreate(a) == 0 && lv->DomainCreate(b) == 0);
    char *orig_a = persistent_xml(a), *orig_b = persistent_xml(b), err[8192];
    int id_a = dom_id("hvt-a");
    json_t *domains = check_json("[\"hvt-a\", \"hvt-b\"]"), *levels = check_json(all_levels);
    struct hv_journal *j = journal(20);
    struct hv_act_ctx ctx = {.root = root,
                             .libvirt_uri = URI,
                             .domains = domains,
                             .allow_restart = true,
                             .plan_id = 20,
                             .journal = j};
    json_t *settings;
    int rc = hv_actuators_apply(levels, &ctx, &settings, err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    const char *name;
    json_t *s;
    json_object_foreach(settings, name, s)
    {
        char want[32];
        snprintf(want, sizeof want, "%s", json_string_value(json_object_get(s, "level")));
        CHECK_MSG(rb(settings, name) != NULL && strcmp(rb(settings, name), want) == 0,
                  "%s reads back %s", name, rb(settings, name));
    }
    CHECK(json_object_size(settings) == 14);
    /* The test driver's host has 8 CPUs of which 0, 2 and 4 are online.
     * vCPUs are numbered over the plan's domains: a0 → the first online
     * CPU (0), a1 → the second (2), b0 → the third (4). */
    CHECK_MSG(pin_map(a, 0) == 0x01 && pin_map(a, 1) == 0x04 && pin_map(b, 0) == 0x10,
              "%02x %02x %02x", pin_map(a, 0), pin_map(a, 1), pin_map(b, 0));
    /* 3 vCPUs take the 3 online CPUs: the emulators get the last one */
    CHECK_MSG(pin_map(a, -1) == 0x10 && pin_map(b, -1) == 0x10, "%02x %02x", pin_map(a, -1),
              pin_map(b, -1));
    CHECK(iops(a, "sdb") == 500 && iops(b, "sdb") == 500);
    CHECK(dom_id("hvt-a") != id_a); /* restarted for its definition */
    char *live = lv->DomainGetXMLDesc(a, 0);
    static const char *const expect[] = {"<iothreads>2</iothreads>",
                                         "cache='none' io='native'",
                                         "bus='scsi'",
                                         "model='virtio-scsi'",
                                         "<mtu size='9000'/>",
                                         "queues='4'",
                                         "<driver name='qemu'",
                                         "mode='interleave' nodeset='0-1'",
                                         "<page size='2048' unit='KiB'/>",
                                         "mode='host-model'"};
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++)
        CHECK_MSG(strstr(live, expect[i]) != NULL, "live XML lacks %s", expect[i]);
    free(live);
    const json_t *vcpu = json_object_get(settings, "vcpu_pin");
    CHECK_MSG(strstr(json_string_value(json_object_get(vcpu, "source")), "the TEST driver's view"),
              "%s", json_string_value(json_object_get(vcpu, "source")));
    CHECK(hv_journal_count(j) == 10); /* per domain: definition, 3 pinnings, I/O limit */
    CHECK(json_array_size(ctx.changes) == 2 * 14);
    json_decref(settings);
    json_decref(ctx.changes);
    ctx.changes = NULL;

    /* The next block at the same levels changes and restarts nothing. */
    int id_now = dom_id("hvt-a");
    CHECK(hv_actuators_apply(levels, &ctx, &settings, err, sizeof err) == 0);
    CHECK(ctx.changes == NULL && dom_id("hvt-a") == id_now);
    json_decref(settings);

    /* The worker dies; a new one restores from the journal on disk. */
    hv_act_ctx_release(&ctx);
    hv_journal_close(j);
    j = journal(20);
    struct hv_act_ctx fresh = {.root = root, .libvirt_uri = URI, .plan_id = 20, .journal = j};
    CHECK_MSG(hv_actuators_restore(&fresh, err, sizeof err) == 0, "%s", err);
    CHECK(hv_journal_count(j) == 0);
    char *now_a = persistent_xml(a), *now_b = persistent_xml(b);
    CHECK_STR(now_a, orig_a);
    CHECK_STR(now_b, orig_b);
    CHECK(pin_map(a, 0) == 0xff && pin_map(b, 0) == 0xff && pin_map(a, -1) == 0xff);
    CHECK(iops(a, "vdb") == 0);
    CHECK(lv->DomainIsActive(a) == 1 && lv->DomainIsActive(b) == 1);
    json_decref(fresh.changes);
    hv_act_ctx_release(&fresh);
    hv_journal_close(j);
    free(orig_a), free(orig_b), free(now_a), free(now_b);
    json_decref(domains);
    json_decref(levels);
    lv->DomainFree(a);
    lv->DomainFree(b);
}

/* A context of plan 21 that changes domains d, of which it names those in
 * named, journalling into j. */
static struct hv_act_ctx plan21(const char *rootdir, const char *uri, const json_t *d,
                                const json_t *named, bool restart, struct hv_journal *j)
{
    return (struct hv_act_ctx){.root = rootdir,
                               .libvirt_uri = uri,
                               .domains = d,
                               .named = named,
                               .allow_restart = restart,
                               .plan_id = 21,
                               .journal = j};
}

/* Applies levels to domains, of which the plan names those in named (a
 * JSON array, or NULL), and expects a failure naming each needle and no
 * change to the first domain's definition or the journal. */
static void expect_fail_named(const char *domains, const char *named, const char *levels,
                              const char *uri, bool restart, const char *rootdir,
                              const char *const *needles)
{
    char err[8192];
    json_t *d = check_json(domains), *l = check_json(levels), *settings;
    json_t *nd = named != NULL ? check_json(named) : NULL;
    struct hv_journal *j = journal(21);
    struct hv_act_ctx ctx = plan21(rootdir, uri, d, nd, restart, j);
    virDomainPtr dom = lv->DomainLookupByName(keeper, json_string_value(json_array_get(d, 0)));
    char *before = dom != NULL ? persistent_xml(dom) : NULL;
    CHECK_MSG(hv_actuators_apply(l, &ctx, &settings, err, sizeof err) == -1, "%s applied", levels);
    for (const char *const *n = needles; *n != NULL; n++)
        CHECK_MSG(strstr(err, *n) != NULL, "%s: \"%s\" not in: %s", levels, *n, err);
    CHECK_MSG(hv_journal_count(j) == 0, "%s left %zu journal entries", levels, hv_journal_count(j));
    if (dom != NULL) {
        char *after = persistent_xml(dom);
        CHECK_MSG(strcmp(before, after) == 0, "%s changed the definition", levels);
        free(after);
        lv->DomainFree(dom);
    }
    free(before);
    json_decref(settings);
    json_decref(ctx.changes);
    hv_act_ctx_release(&ctx);
    hv_journal_close(j);
    json_decref(d);
    json_decref(nd);
    json_decref(l);
}

static void expect_fail(const char *domains, const char *levels, const char *uri, bool restart,
                        const char *rootdir, const char *const *needles)
{
    expect_fail_named(domains, NULL, levels, uri, restart, rootdir, needles);
}

static void test_refusals(void)
{
    virDomainPtr c = define("hvt-c", 1, true, ""), off = define("hvt-off", 1, true, "");
    virDomainPtr one = define("hvt-one", 1, false, "");
    CHECK(lv->DomainCreate(c) == 0 && lv->DomainCreate(one) == 0);
    expect_fail("[\"hvt-c\"]", "{\"disk_cache\": \"none\", \"iothreads\": 1}", URI, false, root,
                (const char *const[]){"disk_cache=none, iothreads=1: hvt-c runs and must restart",
                                      "allow_restart is false and hvt-c was not created by "
                                      "plan 21",
                                      "nothing was changed", NULL});
    expect_fail("[\"hvt-c\"]", "{\"io_mode\": \"native\", \"disk_cache\": \"writeback\"}", URI,
                true, root,
                (const char *const[]){"io_mode=native with disk_cache=writeback on hvt-c",
                                      "QEMU refuses io='native'", NULL});
    expect_fail("[\"hvt-c\"]", "{\"hugepages\": \"2m\"}", URI, true, top,
                (const char *const[]){"hugepages=2m: this host has no 2048 kB huge pages", NULL});
    put("sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages", "0\n");
    put("sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages", "0\n");
    expect_fail("[\"hvt-c\"]", "{\"hugepages\": \"1g\"}", URI, true, root,
                (const char *const[]){"hugepages=1g: hvt-c needs 1 huge pages of 1048576 kB and "
                                      "the host has 0 free; reserve them first: echo 1 > "
                                      "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages",
                                      NULL});
    expect_fail("[\"hvt-off\"]", "{\"vcpu_pin\": \"on\"}", URI, true, root,
                (const char *const[]){"vcpu_pin=on: hvt-off is not running", NULL});
    expect_fail("[\"hvt-one\"]", "{\"blkio_iops\": 100}", URI, true, root,
                (const char *const[]){"hvt-one has no second disk", NULL});
    expect_fail("[\"hvt-one\"]", "{\"disk_cache\": \"none\"}", URI, true, root,
                (const char *const[]){"disk_cache: hvt-one has no second disk", NULL});
    expect_fail("[\"hvt-c\", \"hvt-nope\"]", "{\"vcpu_pin\": \"on\"}", URI, true, root,
                (const char *const[]){"no domain hvt-nope at test:///default", NULL});
    expect_fail("[\"hvt-c\"]", "{\"vcpu_pin\": \"on\"}", NULL, true, root,
                (const char *const[]){"start the host worker with --libvirt URI", NULL});
    lv->DomainDestroy(c);
    lv->DomainDestroy(one);
    lv->DomainFree(c);
    lv->DomainFree(off);
    lv->DomainFree(one);
}

/* A domain the plan created may restart without allow_restart; one that
 * is not running is only redefined and read back from its definition. */
static void test_created_and_stopped(void)
{
    virDomainPtr p = define("hvt-plan", 1, true,
                            "<metadata><hvbench:plan xmlns:hvbench='urn:hvbench:plan'>22"
                            "</hvbench:plan></metadata>");
    virDomainPtr s = define("hvt-stopped", 1, true, "");
    CHECK(lv->DomainCreate(p) == 0);
    char *orig_s = persistent_xml(s), err[8192];
    json_t *d = check_json("[\"hvt-plan\", \"hvt-stopped\"]"),
           *l = check_json("{\"disk_cache\": \"directsync\"}"), *settings;
    struct hv_journal *j = journal(22);
    struct hv_act_ctx ctx = {
        .root = root, .libvirt_uri = URI, .domains = d, .plan_id = 22, .journal = j};
    int id = dom_id("hvt-plan");
    CHECK_MSG(hv_actuators_apply(l, &ctx, &settings, err, sizeof err) == 0, "%s", err);
    CHECK(dom_id("hvt-plan") != id);
    CHECK(lv->DomainIsActive(s) == 0);
    const json_t *detail = json_object_get(json_object_get(settings, "disk_cache"), "detail");
    const char *src =
        json_string_value(json_object_get(json_object_get(detail, "hvt-stopped"), "source"));
    CHECK_MSG(src != NULL && strstr(src, "persistent domain XML (not running) of hvt-stopped"),
              "%s", src);
    src = json_string_value(json_object_get(json_object_get(detail, "hvt-plan"), "source"));
    CHECK_MSG(src != NULL && strstr(src, "live domain XML of hvt-plan"), "%s", src);
    json_decref(settings);
    CHECK_MSG(hv_actuators_restore(&ctx, err, sizeof err) == 0, "%s", err);
    char *now_s = persistent_xml(s);
    CHECK_STR(now_s, orig_s);
    CHECK(lv->DomainIsActive(s) == 0 && lv->DomainIsActive(p) == 1);
    free(orig_s);
    free(now_s);
    json_decref(ctx.changes);
    hv_act_ctx_release(&ctx);
    hv_journal_close(j);
    json_decref(d);
    json_decref(l);
    lv->DomainDestroy(p);
    lv->DomainFree(p);
    lv->DomainFree(s);
}

/* Domains another VM manager owns (the metadata OpenStack nova and
 * OpenNebula write): refused unless the plan names them and allows
 * restarts, for live and restart rows alike; read back without either; a
 * clone's mark wins over the template's manager. */
static void test_other_managers(void)
{
    virDomainPtr nova =
        define("hvt-nova", 1, true,
               "<metadata><nova:instance xmlns:nova='http://openstack.org/xmlns/libvirt/nova/1.1'>"
               "<nova:name>tenant-vm</nova:name></nova:instance></metadata>");
    virDomainPtr one =
        define("hvt-one-vm", 1, true,
               "<metadata><one:vm xmlns:one='http://opennebula.org/xmlns/libvirt/1.0'>"
               "<one:id>42</one:id></one:vm></metadata>");
    virDomainPtr ours = define(
        "hvt-ours", 1, true,
        "<metadata><hvbench:plan xmlns:hvbench='urn:hvbench:plan'>21</hvbench:plan>"
        "<nova:instance xmlns:nova='http://openstack.org/xmlns/libvirt/nova/1.1'/></metadata>");
    CHECK(lv->DomainCreate(nova) == 0 && lv->DomainCreate(one) == 0 && lv->DomainCreate(ours) == 0);
    const char *nova_says =
        "hvt-nova is managed by OpenStack nova (its libvirt metadata is in "
        "http://openstack.org/xmlns/libvirt/nova/1.1): hvbench changes a domain "
        "another manager owns only when the plan names it in "
        "targets.guests.domains and sets allow_restart: true";
    expect_fail_named("[\"hvt-nova\"]", NULL, "{\"vcpu_pin\": \"on\"}", URI, false, root,
                      (const char *const[]){nova_says,
                                            "(the plan does not name it and allow_restart is "
                                            "false); nothing was changed on it",
                                            NULL});
    expect_fail_named("[\"hvt-nova\"]", "[\"hvt-nova\"]", "{\"blkio_iops\": 100}", URI, false, root,
                      (const char *const[]){nova_says, "(allow_restart is false)", NULL});
    expect_fail_named(
        "[\"hvt-one-vm\", \"hvt-nova\"]", "[\"hvt-nova\"]", "{\"disk_cache\": \"none\"}", URI, true,
        root,
        (const char *const[]){"hvt-one-vm is managed by OpenNebula (its libvirt "
                              "metadata is in http://opennebula.org/xmlns/libvirt/1.0)",
                              "(the plan does not name it)", NULL});
    CHECK_MSG(lv->DomainIsActive(one) == 1 && pin_map(one, 0) != 0, "hvt-one-vm was touched");

    /* Named and allowed: changed, restarted, and put back. */
    char *orig = persistent_xml(nova), err[8192];
    json_t *d = check_json("[\"hvt-nova\", \"hvt-ours\"]"), *named = check_json("[\"hvt-nova\"]"),
           *l = check_json("{\"disk_cache\": \"none\", \"vcpu_pin\": \"on\"}"), *settings;
    struct hv_journal *j = journal(21);
    struct hv_act_ctx ctx = plan21(root, URI, d, named, true, j);
    int id = dom_id("hvt-nova");
    CHECK_MSG(hv_actuators_apply(l, &ctx, &settings, err, sizeof err) == 0, "%s", err);
    CHECK_MSG(dom_id("hvt-nova") != id, "hvt-nova was not restarted");
    CHECK_STR(rb(settings, "disk_cache"), "none");
    json_decref(settings);
    CHECK_MSG(hv_actuators_restore(&ctx, err, sizeof err) == 0, "%s", err);
    char *now = persistent_xml(nova);
    CHECK_STR(now, orig);
    CHECK_MSG(strstr(now, "openstack.org/xmlns/libvirt/nova/1.1") != NULL, "%s", now);
    free(orig);
    free(now);
    json_decref(ctx.changes);
    hv_act_ctx_release(&ctx);
    hv_journal_close(j);

    /* Reading back changes nothing, so it needs neither. */
    json_t *lr = check_json("{\"disk_cache\": \"writeback\"}");
    struct hv_act_ctx rctx = {.root = root, .libvirt_uri = URI, .domains = d, .plan_id = 21};
    CHECK_MSG(hv_actuators_read_back(lr, &rctx, &settings, err, sizeof err) == 0, "%s", err);
    json_decref(settings);
    hv_act_ctx_release(&rctx);
    json_decref(lr);
    json_decref(d);
    json_decref(named);
    json_decref(l);
    virDomainPtr all[] = {nova, one, ours};
    for (size_t i = 0; i < 3; i++) {
        lv->DomainDestroy(all[i]);
        lv->DomainFree(all[i]);
    }
}

/* What the test driver cannot do, so the actuators do not rely on it. */
static void test_driver_gaps(void)
{
    virDomainPtr g = define("hvt-gap", 1, true, "");
    CHECK(lv->DomainCreate(g) == 0);
    unsigned char map[1] = {0x01};
    /* virDomainPinVcpuFlags with the LIVE flag: "unsupported flags (0x1)";
     * virDomainPinVcpu (live only on QEMU and Xen too) is what vcpu_pin uses. */
    CHECK(lv->DomainPinVcpuFlags(g, 0, map, 1, VIR_DOMAIN_AFFECT_LIVE) == -1);
    CHECK_MSG(strstr(lv->GetLastErrorMessage(), "unsupported flags") != NULL, "%s",
              lv->GetLastErrorMessage());
    CHECK(lv->DomainPinVcpu(g, 0, map, 1) == 0);
    /* No QEMU process: read-back is libvirt's own view, and says so. */
    json_t *d = check_json("[\"hvt-gap\"]"),
           *l = check_json("{\"emulator_pin\": \"off\", "
                           "\"vhost_net\": \"on\"}"),
           *settings;
    char err[4096];
    struct hv_act_ctx ctx = {.root = root, .libvirt_uri = URI, .domains = d};
    CHECK_MSG(hv_actuators_read_back(l, &ctx, &settings, err, sizeof err) == 0, "%s", err);
    CHECK_MSG(strstr(json_string_value(
                         json_object_get(json_object_get(settings, "emulator_pin"), "source")),
                     "virDomainGetEmulatorPinInfo") != NULL,
              "emulator_pin read from the kernel on the test driver?");
    CHECK_MSG(
        strstr(json_string_value(json_object_get(json_object_get(settings, "vhost_net"), "source")),
               "<driver name>") != NULL,
        "vhost_net read from QEMU's files on the test driver?");
    json_decref(settings);
    hv_act_ctx_release(&ctx);
    json_decref(d);
    json_decref(l);
    lv->DomainDestroy(g);
    lv->DomainFree(g);
}

int main(void)
{
    char err[512];
    lv = hv_virt_load(err, sizeof err);
    CHECK_MSG(lv != NULL, "%s", err);
    if (lv == NULL)
        return check_summary("test_actuators_guest");
    keeper = lv->ConnectOpen(URI);
    if (keeper == NULL)
        return 99;
    snprintf(top, sizeof top, "/tmp/hv-guest-XXXXXX");
    if (mkdtemp(top) == NULL)
        return 99;
    snprintf(root, sizeof root, "%s/root", top);
    put("sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "100000\n");
    put("sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "100000\n");
    test_apply_restore();
    test_refusals();
    test_created_and_stopped();
    test_other_managers();
    test_driver_gaps();
    lv->ConnectClose(keeper);
    nftw(top, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    return check_summary("test_actuators_guest");
}
