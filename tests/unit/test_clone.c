/* test_clone.c — guest template clones (worker/virt/clone.c) against
 * libvirt's test driver (test:///default): two clones of a template with
 * two writable disks, a read-only one and a file serial and console; each
 * gets its name (also on the kernel command line), a fresh UUID and MAC,
 * the plan's mark, overlays in the clone folder next to the template's
 * disks (qcow2 over the template's raw file) and a log of its own; the
 * journal holds each before it exists; a second create keeps it; a
 * domain of that name the plan did not make is refused; the restore from
 * a reopened journal removes the domains, volumes, pool and folder and
 * leaves the template as it was. Names that are not host-safe (markup,
 * quotes, a kernel parameter, paths, a newline, a NUL, 129 characters,
 * look-alike letters), handed straight to the clone code and to an apply
 * step as a server that skipped its check would, are refused before
 * anything exists; a template whose disks live in a folder named with
 * '&' and '<' gets its pool and volumes all the same (their XML is
 * built, not printed). */
#include "tests/unit/check.h"
#include "worker/virt.h"
#include "worker/virt/actuator.h"
#include "worker/virt/clone.h"
#include "worker/virt/step.h"

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#define URI  "test:///default"
#define PLAN 41

static char top[256], disks[300], clones[400];
static char clone_pool[64]; /* the pool of the clone folder, once made */
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
             /* a template another manager owns: its clones are hvbench's */
             "<metadata><nova:instance xmlns:nova='http://openstack.org/xmlns/libvirt/nova/1.1'>"
             "<nova:name>golden</nova:name></nova:instance></metadata>"
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
    CHECK_MSG(!has(x1, "openstack.org") && has(before, "openstack.org/xmlns/libvirt/nova/1.1"),
              "the clone keeps the template's manager: %s", x1);
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
    snprintf(clone_pool, sizeof clone_pool, "%s", pool);
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
    char *kept = persistent_xml("test");
    CHECK(kept != NULL);
    free(kept);
    hv_act_ctx_release(&ctx);
    hv_journal_close(j);
}

/* Counts the files and folders under top (top itself included). */
static size_t n_entries;
static int count_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)path, (void)st, (void)flag, (void)ftw;
    n_entries++;
    return 0;
}

static size_t entries(void)
{
    n_entries = 0;
    nftw(top, count_one, 16, FTW_PHYS);
    return n_entries;
}

static int n_domains(void)
{
    virDomainPtr *all = NULL;
    int n = lv->ConnectListAllDomains(keeper, &all, 0);
    for (int i = 0; i < n; i++)
        lv->DomainFree(all[i]);
    free(all);
    return n;
}

/* What a server that skipped its check could hand on: markup, an entity,
 * quotes, a kernel parameter, a way up, a path, a newline, 129
 * characters, full-width letters and a Cyrillic "а" (U+0430). */
static const char *const hostile[] = {
    "x</name><uuid>0</uuid><name>y",
    "a<b",
    "a&amp;b",
    "a\"b",
    "a'b",
    "a init=/bin/sh ",
    "../../etc/x",
    "a/b",
    "a\nb",
    "-rf",
    ".hidden",
    "\xef\xbd\x88\xef\xbd\x96"
    "01",
    "vm\xd0\xb0",
    "",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
};

static void test_hostile_names(void)
{
    char err[2048];
    CHECK(strlen(hostile[sizeof hostile / sizeof hostile[0] - 1]) == 129);
    int domains = n_domains();
    size_t files = entries();
    struct hv_journal *j = journal();
    struct hv_act_ctx ctx = {.libvirt_uri = URI, .plan_id = PLAN, .journal = j};
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
        err[0] = '\0';
        CHECK_MSG(hv_clone_create(&ctx, "tmpl", hostile[i], err, sizeof err) == -1,
                  "clone name %zu refused", i);
        CHECK_MSG(has(err, "host-safe name"), "clone name %zu: %s", i, err);
        err[0] = '\0';
        CHECK_MSG(hv_clone_create(&ctx, hostile[i], "g-p41-7", err, sizeof err) == -1,
                  "template name %zu refused", i);
        CHECK_MSG(has(err, "host-safe name"), "template name %zu: %s", i, err);
    }
    CHECK(hv_journal_count(j) == 0);
    CHECK(json_array_size(ctx.changes) == 0);
    CHECK_MSG(n_domains() == domains, "no domain defined");
    CHECK(persistent_xml("g-p41-7") == NULL);
    CHECK_MSG(access(clones, F_OK) != 0, "no clone folder, so no volume or log file");
    virStoragePoolPtr p = lv->StoragePoolLookupByName(keeper, clone_pool);
    CHECK_MSG(clone_pool[0] != '\0' && p == NULL, "no pool %s", clone_pool);
    if (p != NULL)
        lv->StoragePoolFree(p);
    hv_act_ctx_release(&ctx);
    hv_journal_close(j);

    /* An apply step naming them: refused before its journal is opened. */
    char jdir[400];
    snprintf(jdir, sizeof jdir, "%s/step-journal", top);
    struct hv_step_env env = {.root = top, .libvirt_uri = URI, .journal_dir = jdir};
    json_t *levels = json_object();
    for (size_t i = 0; i <= sizeof hostile / sizeof hostile[0]; i++) {
        /* the last one: a NUL inside, as "\u0000" gives it */
        json_t *bad = i < sizeof hostile / sizeof hostile[0] ? json_string(hostile[i])
                                                             : json_stringn("vm\0x", 4);
        json_t *domains_a = json_pack("[s, O]", "vm1", bad);
        for (int as_template = 0; as_template < 2; as_template++) {
            struct hv_step step = {.id = 1,
                                   .attempt = 1,
                                   .plan_id = PLAN,
                                   .kind = "apply",
                                   .configuration = "",
                                   .levels = levels,
                                   .domains = as_template ? json_array() : domains_a,
                                   .template_domain =
                                       as_template && json_string_length(bad) ==
                                                          strlen(json_string_value(bad))
                                           ? json_string_value(bad)
                                           : NULL};
            if (as_template && step.template_domain == NULL) {
                json_decref((json_t *)step.domains);
                continue;
            }
            json_t *body = hv_step_execute(&step, &env, NULL, NULL);
            const char *status = json_string_value(json_object_get(body, "status"));
            const char *why = json_string_value(json_object_get(body, "error"));
            CHECK_MSG(status != NULL && strcmp(status, "error") == 0, "step %zu/%d: %s", i,
                      as_template, status);
            CHECK_MSG(has(why, "host-safe name"), "step %zu/%d: %s", i, as_template, why);
            CHECK(json_array_size(json_object_get(body, "changes")) == 0);
            json_decref(body);
            if (as_template)
                json_decref((json_t *)step.domains);
        }
        json_decref(domains_a);
        json_decref(bad);
    }
    json_decref(levels);
    CHECK_MSG(access(jdir, F_OK) != 0, "no step journal");
    CHECK_MSG(entries() == files, "nothing new under the scratch root (%zu entries, %zu before)",
              entries(), files);
    CHECK_MSG(n_domains() == domains, "still no domain defined");
}

/* A template whose disk lives in a folder named with '&' and '<': the
 * pool's and the overlay's XML carry the path as text. */
static void test_odd_folder(void)
{
    char dir[400], file[500], xml[2048], err[2048], path[700];
    snprintf(dir, sizeof dir, "%s/odd&<dir>", top);
    mkdir(dir, 0755);
    snprintf(file, sizeof file, "%s/d.raw", dir);
    make_file(file, 1 << 20);
    snprintf(xml, sizeof xml,
             "<domain type='test'><name>tmpl2</name><memory unit='KiB'>1048576</memory>"
             "<vcpu>1</vcpu><os><type arch='x86_64'>hvm</type></os><devices>"
             "<disk type='file' device='disk'><driver name='qemu' type='raw'/>"
             "<source file='%s/odd&amp;&lt;dir&gt;/d.raw'/><target dev='vda' bus='virtio'/>"
             "</disk></devices></domain>",
             top);
    virDomainPtr d = lv->DomainDefineXML(keeper, xml);
    CHECK_MSG(d != NULL, "define tmpl2: %s", lv->GetLastErrorMessage());
    if (d == NULL)
        return;
    lv->DomainFree(d);
    struct hv_journal *j = journal();
    struct hv_act_ctx ctx = {.libvirt_uri = URI, .plan_id = PLAN, .journal = j};
    CHECK_MSG(hv_clone_create(&ctx, "tmpl2", "o-p41-1", err, sizeof err) == 1, "%s", err);
    snprintf(path, sizeof path, "%s/" HV_CLONE_DIR "/o-p41-1-vda.qcow2", dir);
    virStorageVolPtr v = lv->StorageVolLookupByPath(keeper, path);
    CHECK_MSG(v != NULL, "the overlay volume %s", path);
    if (v != NULL)
        lv->StorageVolFree(v);
    CHECK_MSG(hv_actuators_restore(&ctx, err, sizeof err) == 0, "%s", err);
    CHECK(persistent_xml("o-p41-1") == NULL);
    v = lv->StorageVolLookupByPath(keeper, path);
    CHECK_MSG(v == NULL, "the overlay is gone");
    json_decref(ctx.changes);
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
    test_hostile_names();
    test_odd_folder();
    lv->ConnectClose(keeper);
    nftw(top, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    return check_summary("test_clone");
}
