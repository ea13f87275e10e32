/* test_clone.c — guest template clones (worker/virt/clone.c) against
 * libvirt's test driver (test:///default): two clones of a template with
 * two writable disks, a read-only one and a file serial and console; each
 * gets its name (also on the kernel command line), a fresh UUID and MAC,
 * the plan's mark, overlays in the clone folder next to the template's
 * disks (qcow2 over the template's raw file) and a log of its own; the
 * journal holds each before it exists; a second create keeps it; a
 * domain of that name the plan did not make is refused; the restore from
 * a reopened journal removes the domains, volumes, pool and folder and
 * leaves the template as it was. */
#include "tests/unit/check.h"
#include "worker/virt.h"
#include "worker/virt/actuator.h"
#include "worker/virt/clone.h"

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#define URI  "test:///default"
#define PLAN 41

static char top[256], disks[300], clones[400];
static const struct hv_virt *lv;
static virConnectPtr keeper; /* keeps the test driver's state alive */

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void make_file(const char *path, off_t size)
{
    FILE *f = fopen(path, "w");
    if (f == NULL || ftruncate(fileno(f), size) != 0)
        exit(99);
    fclose(f);
}

static struct hv_journal *journal(void)
{
    char dir[400], err[512];
    snprintf(dir, sizeof dir, "%s/journal", top);
    struct hv_journal *j = hv_journal_open(dir, PLAN, err, sizeof err);
    if (j == NULL)
        exit(99);
    return j;
}

static char *persistent_xml(const char *name)
{
    virDomainPtr d = lv->DomainLookupByName(keeper, name);
    if (d == NULL)
        return NULL;
    char *x = lv->DomainGetXMLDesc(d, VIR_DOMAIN_XML_INACTIVE | VIR_DOMAIN_XML_SECURE);
    lv->DomainFree(d);
    return x;
}

static void uuid_of(const char *name, char *buf)
{
    buf[0] = '\0';
    virDomainPtr d = lv->DomainLookupByName(keeper, name);
    if (d != NULL) {
        lv->DomainGetUUIDString(d, buf);
        lv->DomainFree(d);
    }
}

static bool has(const char *text, const char *needle)
{
    return text != NULL && strstr(text, needle) != NULL;
}

static void define_template(void)
{
    char xml[4096];
    snprintf(xml, sizeof xml,
             "<domain type='test'><name>tmpl</name>"
             "<uuid>11111111-2222-3333-4444-555555555555</uuid>"
             "<memory unit='KiB'>1048576</memory><vcpu>2</vcpu>"
             "<os><type arch='x86_64'>hvm</type><kernel>/boot/vmlinuz</kernel>"
             "<cmdline>console=ttyS0 hvbench.name=tmpl hvbench.disk=fs</cmdline></os>"
             "<devices>"
             "<disk type='file' device='disk'><driver name='qemu' type='raw'/>"
             "<source file='%s/state.raw'/><target dev='vda' bus='virtio'/></disk>"
             "<disk type='file' device='disk'><driver name='qemu' type='raw'/>"
             "<source file='%s/bench.raw'/><target dev='vdb' bus='virtio'/></disk>"
             "<disk type='file' device='disk'><driver name='qemu' type='raw'/>"
             "<source file='%s/tools.raw'/><target dev='vdc' bus='virtio'/><readonly/></disk>"
             "<interface type='network'><mac address='52:54:00:aa:bb:cc'/>"
             "<source network='default'/><model type='virtio'/></interface>"
             "<serial type='file'><source path='%s/serial.log'/><target port='0'/></serial>"
             "</devices></domain>",
             disks, disks, disks, disks);
    virDomainPtr d = lv->DomainDefineXML(keeper, xml);
    if (d == NULL) {
        fprintf(stderr, "define tmpl: %s\n", lv->GetLastErrorMessage());
        exit(99);
    }
    lv->DomainFree(d);
}

static void test_clone_and_restore(void)
{
    char err[2048], path[600];
    char *before = persistent_xml("tmpl");
    struct hv_journal *j = journal();
    struct hv_act_ctx ctx = {.libvirt_uri = URI, .plan_id = PLAN, .journal = j};

    CHECK_MSG(hv_clone_create(&ctx, "tmpl", "g-p41-1", err, sizeof err) == 1, "%s", err);
    CHECK_MSG(hv_clone_create(&ctx, "tmpl", "g-p41-2", err, sizeof err) == 1, "%s", err);
    CHECK(hv_journal_count(j) == 2);
    CHECK(hv_clone_journalled(j, "g-p41-1") && hv_clone_journalled(j, "g-p41-2"));
    CHECK(!hv_clone_journalled(j, "tmpl"));
    CHECK_MSG(hv_clone_create(&ctx, "tmpl", "g-p41-1", err, sizeof err) == 0,
              "a second create keeps the clone: %s", err);
    CHECK(hv_journal_count(j) == 2);

    char *x1 = persistent_xml("g-p41-1"), *x2 = persistent_xml("g-p41-2");
    CHECK(x1 != NULL && x2 != NULL);
    CHECK(has(x1, "<name>g-p41-1</name>"));
    CHECK_MSG(has(x1, "hvbench.name=g-p41-1 hvbench.disk=fs"), "the kernel command line: %s", x1);
    CHECK(has(x1, "urn:hvbench:plan") && has(x1, ">41</hvbench:plan>"));
    char u0[VIR_UUID_STRING_BUFLEN], u1[VIR_UUID_STRING_BUFLEN], u2[VIR_UUID_STRING_BUFLEN];
    uuid_of("tmpl", u0);
    uuid_of("g-p41-1", u1);
    uuid_of("g-p41-2", u2);
    CHECK(u1[0] != '\0' && strcmp(u1, u0) != 0 && strcmp(u1, u2) != 0);
    CHECK_MSG(!has(x1, "52:54:00:aa:bb:cc") && !has(x2, "52:54:00:aa:bb:cc"), "fresh MACs: %s", x1);
    const char *m1 = strstr(x1, "<mac address='"), *m2 = strstr(x2, "<mac address='");
    CHECK(m1 != NULL && m2 != NULL && strncmp(m1, m2, 32) != 0);
    snprintf(path, sizeof path, "<source file='%s/g-p41-1-vda.qcow2'", clones);
    CHECK_MSG(has(x1, path), "the overlay of vda: %s", x1);
    snprintf(path, sizeof path, "<source file='%s/g-p41-1-vdb.qcow2'", clones);
    CHECK(has(x1, path));
    CHECK(has(x1, "type='qcow2'"));
    snprintf(path, sizeof path, "<source file='%s/tools.raw'", disks);
    CHECK_MSG(has(x1, path), "the read-only disk is shared");
    snprintf(path, sizeof path, "<source path='%s/g-p41-1-serial.log'", clones);
    CHECK_MSG(has(x1, path), "a serial log of its own: %s", x1);
    struct stat st;
    CHECK_MSG(stat(clones, &st) == 0 && (st.st_mode & 0777) == 0755, "the clone folder, 0755");

    /* the volumes are in the pool of the clone folder */
    snprintf(path, sizeof path, "%s/g-p41-2-vdb.qcow2", clones);
    virStorageVolPtr v = lv->StorageVolLookupByPath(keeper, path);
    CHECK_MSG(v != NULL, "the overlay volume %s", path);
    if (v != NULL)
        lv->StorageVolFree(v);

    const json_t *e = hv_journal_find(j, HV_CLONE_KIND, "g-p41-1");
    CHECK(json_array_size(json_object_get(e, "overlays")) == 2);
    CHECK(json_array_size(json_object_get(e, "files")) == 1);
    CHECK(strcmp(json_string_value(json_object_get(e, "template")), "tmpl") == 0);
    CHECK(json_array_size(json_object_get(e, "pools")) == 1);
    char pool[64];
    snprintf(pool, sizeof pool, "%s",
             json_string_value(json_array_get(json_object_get(e, "pools"), 0)));
    virStoragePoolPtr p = lv->StoragePoolLookupByName(keeper, pool);
    CHECK_MSG(p != NULL, "the pool %s", pool);
    if (p != NULL)
        lv->StoragePoolFree(p);

    const json_t *c0 = json_array_get(ctx.changes, 0);
    CHECK_MSG(json_array_size(ctx.changes) == 2, "one change per clone made");
    CHECK(strcmp(json_string_value(json_object_get(c0, "factor")), "template") == 0);
    CHECK(strcmp(json_string_value(json_object_get(c0, "object")), "g-p41-1") == 0);
    CHECK(strcmp(json_string_value(json_object_get(c0, "from")), "absent") == 0);
    CHECK_MSG(strcmp(json_string_value(json_object_get(c0, "to")), u1) == 0,
              "the change carries the clone's UUID");
    CHECK_MSG(hv_clone_start(&ctx, "g-p41-1", err, sizeof err) == 0, "%s", err);
    CHECK_MSG(hv_clone_start(&ctx, "g-p41-1", err, sizeof err) == 0, "started twice: %s", err);
    CHECK(json_array_size(json_object_get(e, "backing")) == 2);
    hv_act_ctx_release(&ctx);
    hv_journal_close(j);

    /* libvirt hands backing files to the QEMU user; the restore gives
     * them back */
    char state[400];
    snprintf(state, sizeof state, "%s/state.raw", disks);
    struct stat orig;
    stat(state, &orig);
    bool chowned = geteuid() == 0 && chown(state, 1, 1) == 0;
    json_decref(ctx.changes);
    ctx.changes = NULL;
    /* a restore from the journal as a restarted worker finds it */
    j = journal();
    struct hv_act_ctx r = {.libvirt_uri = URI, .plan_id = PLAN, .journal = j};
    CHECK_MSG(hv_actuators_restore(&r, err, sizeof err) == 0, "%s", err);
    CHECK(hv_journal_count(j) == 0);
    CHECK(json_array_size(r.changes) == 2);
    CHECK(persistent_xml("g-p41-1") == NULL && persistent_xml("g-p41-2") == NULL);
    v = lv->StorageVolLookupByPath(keeper, path);
    CHECK_MSG(v == NULL, "the overlays are gone");
    p = lv->StoragePoolLookupByName(keeper, pool);
    CHECK_MSG(p == NULL, "the pool is gone");
    CHECK_MSG(access(clones, F_OK) != 0, "the clone folder is gone");
    struct stat now;
    CHECK_MSG(!chowned || (stat(state, &now) == 0 && now.st_uid == orig.st_uid &&
                           now.st_gid == orig.st_gid),
              "the template's disk has its owner back");
    char *after = persistent_xml("tmpl");
    CHECK_MSG(before != NULL && after != NULL && strcmp(before, after) == 0,
              "the template is as it was");
    free(before);
    free(after);
    free(x1);
    free(x2);
    json_decref(r.changes);
    hv_act_ctx_release(&r);
    hv_journal_close(j);
}

static void test_refusals(void)
{
    char err[2048];
    struct hv_journal *j = journal();
    struct hv_act_ctx ctx = {.libvirt_uri = URI, .plan_id = PLAN, .journal = j};
    /* test:///default comes with a domain called "test" */
    CHECK(hv_clone_create(&ctx, "tmpl", "test", err, sizeof err) == -1);
    CHECK_MSG(has(err, "did not create"), "%s", err);
    CHECK(hv_clone_create(&ctx, "no-such-template", "g-p41-9", err, sizeof err) == -1);
    CHECK_MSG(has(err, "no-such-template"), "%s", err);
    CHECK(hv_journal_count(j) == 0);
    CHECK(persistent_xml("test") != NULL);
    hv_act_ctx_release(&ctx);
    hv_journal_close(j);
}

int main(void)
{
    char err[512];
    lv = hv_virt_load(err, sizeof err);
    CHECK_MSG(lv != NULL, "%s", err);
    if (lv == NULL)
        return check_summary("test_clone");
    keeper = lv->ConnectOpen(URI);
    if (keeper == NULL)
        return 99;
    snprintf(top, sizeof top, "/tmp/hv-clone-XXXXXX");
    if (mkdtemp(top) == NULL)
        return 99;
    snprintf(disks, sizeof disks, "%s/guests", top);
    snprintf(clones, sizeof clones, "%s/" HV_CLONE_DIR, disks);
    mkdir(disks, 0755);
    char path[400];
    snprintf(path, sizeof path, "%s/state.raw", disks);
    make_file(path, 32 << 20);
    snprintf(path, sizeof path, "%s/bench.raw", disks);
    make_file(path, 64 << 20);
    snprintf(path, sizeof path, "%s/tools.raw", disks);
    make_file(path, 1 << 20);
    define_template();
    test_clone_and_restore();
    test_refusals();
    lv->ConnectClose(keeper);
    nftw(top, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    return check_summary("test_clone");
}
