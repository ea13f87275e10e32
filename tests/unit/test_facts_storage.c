/* test_facts_storage.c — the storage facts (facts.storage) from outputs
 * captured on a real machine (tests/fixtures/storage/, README.md says
 * how): its mountinfo as the kernel wrote it, and a sysfs tree rebuilt
 * from its /sys/block; then the same mountinfo over trees with
 * partitions and a device-mapper holder, the state folder's mount,
 * hostile mountinfo lines, and the PostgreSQL data directories of a
 * process tree. */
#include "worker/facts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tests/unit/check.h"
#include "tests/unit/tree.h"

#define FIX "tests/fixtures/storage"

/* A block device's files: sys/block/REL/{dev,size,queue/rotational}. */
static void put_dev(const char *root, const char *rel, const char *dev, const char *size,
                    const char *rot)
{
    char p[512], v[64];
    snprintf(p, sizeof p, "/sys/block/%s/dev", rel);
    snprintf(v, sizeof v, "%s\n", dev);
    tree_put(root, p, v);
    snprintf(p, sizeof p, "/sys/block/%s/size", rel);
    snprintf(v, sizeof v, "%s\n", size);
    tree_put(root, p, v);
    if (rot != NULL) {
        snprintf(p, sizeof p, "/sys/block/%s/queue/rotational", rel);
        snprintf(v, sizeof v, "%s\n", rot);
        tree_put(root, p, v);
    }
}

static void rm_tree(const char *root)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK_SAY(system(cmd) == 0, "temporary tree %s removed", root);
}

/* The device called name among facts.storage.block_devices, or NULL. */
static const json_t *device(const json_t *facts, const char *name)
{
    const json_t *list = json_object_get(json_object_get(facts, "storage"), "block_devices");
    size_t i;
    const json_t *d;
    json_array_foreach(list, i, d)
    {
        if (strcmp(json_string_value(json_object_get(d, "name")), name) == 0)
            return d;
    }
    return NULL;
}

/* The strings of an array joined with ' ' into buf. */
static const char *joined(const json_t *a, char *buf, size_t len)
{
    size_t n = 0, i;
    const json_t *s;
    buf[0] = '\0';
    json_array_foreach(a, i, s)
    {
        if (n < len)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? " " : "",
                                  json_is_string(s) ? json_string_value(s) : "?");
    }
    return buf;
}

/* The captured mountinfo: 20 entries, / on 254:0 (ext4, /dev/vda), the
 * escapes-free lines read whole. */
static void test_mountinfo_fixture(void)
{
    char *text = check_slurp(FIX "/mountinfo");
    json_t *m = hv_facts_parse_mountinfo(text);
    free(text);
    CHECK_SAY(json_array_size(m) == 20, "20 mounts (%zu)", json_array_size(m));
    const json_t *root = NULL;
    size_t i;
    const json_t *e;
    json_array_foreach(m, i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "mount")), "/") == 0)
            root = e;
    }
    CHECK_SAY(root != NULL, "/ is among them");
    const char *dev = json_string_value(json_object_get(root, "dev"));
    const char *fs = json_string_value(json_object_get(root, "fstype"));
    const char *src = json_string_value(json_object_get(root, "source"));
    CHECK_SAY(dev && fs && src && strcmp(dev, "254:0") == 0 && strcmp(fs, "ext4") == 0 &&
                  strcmp(src, "/dev/vda") == 0,
              "/ is 254:0 ext4 /dev/vda (%s %s %s)", dev, fs, src);
    const json_t *last = json_array_get(m, 19);
    CHECK_SAY(strcmp(json_string_value(json_object_get(last, "mount")), "/sys/fs/cgroup/unified") ==
                      0 &&
                  strcmp(json_string_value(json_object_get(last, "fstype")), "cgroup2") == 0,
              "the last line is cgroup2 on /sys/fs/cgroup/unified");
    json_decref(m);
}

/* Lines the parser must skip or decode: escapes, optional fields, a
 * missing separator, a bad device number, an empty text. */
static void test_mountinfo_edges(void)
{
    json_t *m = hv_facts_parse_mountinfo(
        "36 35 98:0 /mnt1 /mnt\\040two rw,noatime master:1 shared:2 - ext3 /dev/root rw\n"
        "37 35 8:1 / /no-separator rw ext4 /dev/sda1 rw\n"
        "38 35 x:y / /bad rw - ext4 /dev/sda1 rw\n"
        "\n"
        "39 35 0:40 / /data rw - btrfs /dev/sdb2 rw");
    CHECK_SAY(json_array_size(m) == 2, "two lines are entries (%zu)", json_array_size(m));
    const char *mp = json_string_value(json_object_get(json_array_get(m, 0), "mount"));
    CHECK_SAY(mp && strcmp(mp, "/mnt two") == 0, "\\040 is a space (%s)", mp);
    const char *src = json_string_value(json_object_get(json_array_get(m, 1), "source"));
    CHECK_SAY(src && strcmp(src, "/dev/sdb2") == 0, "a last line without newline (%s)", src);
    json_decref(m);
    m = hv_facts_parse_mountinfo("");
    CHECK_SAY(json_is_array(m) && json_array_size(m) == 0, "empty text: no mounts");
    json_decref(m);
    m = hv_facts_parse_mountinfo(NULL);
    CHECK_SAY(json_is_array(m) && json_array_size(m) == 0, "no text: no mounts");
    json_decref(m);
}

/* The machine's /sys/block as captured (sys-block.txt: name, dev, size in
 * sectors, rotational) under a temporary root, with its mountinfo. */
static void test_captured_machine(void)
{
    char root[] = "/tmp/hv-storage-XXXXXX";
    if (mkdtemp(root) == NULL) {
        CHECK_SAY(0, "mkdtemp");
        return;
    }
    FILE *f = fopen(FIX "/sys-block.txt", "r");
    CHECK_SAY(f != NULL, "the sys-block fixture opens");
    char name[64], dev[32], size[32], rot[8];
    int n = 0;
    while (f != NULL && fscanf(f, "%63s %31s %31s %7s", name, dev, size, rot) == 4) {
        put_dev(root, name, dev, size, rot);
        n++;
    }
    if (f != NULL)
        fclose(f);
    CHECK_SAY(n == 10, "10 devices captured (%d)", n);
    json_t *facts = json_object();
    hv_facts_add_storage(facts, root, FIX "/mountinfo", "/var/lib/hvbench-worker");
    const json_t *list = json_object_get(json_object_get(facts, "storage"), "block_devices");
    CHECK_SAY(json_array_size(list) == 1, "the unused loop and zram devices are left out (%zu)",
              json_array_size(list));
    const json_t *vda = device(facts, "vda");
    char buf[256];
    CHECK_SAY(vda != NULL, "vda is listed");
    CHECK_SAY(json_integer_value(json_object_get(vda, "size_bytes")) == 536870912LL * 512,
              "its size: 536870912 sectors of 512 bytes");
    CHECK_SAY(json_is_true(json_object_get(vda, "rotational")), "rotational, as the kernel says");
    CHECK_SAY(strcmp(joined(json_object_get(vda, "mounts"), buf, sizeof buf), "/") == 0,
              "it holds / (%s)", buf);
    CHECK_SAY(json_array_size(json_object_get(vda, "partitions")) == 0 &&
                  json_array_size(json_object_get(vda, "holders")) == 0,
              "no partitions or holders");
    const json_t *sd = json_object_get(json_object_get(facts, "storage"), "state_dir");
    CHECK_SAY(strcmp(json_string_value(json_object_get(sd, "mount")), "/") == 0 &&
                  strcmp(json_string_value(json_object_get(sd, "device")), "vda") == 0,
              "the state folder (not made yet) is on / of vda");
    json_decref(facts);
    rm_tree(root);
}

/* The same mountinfo over a disk whose partition is 254:0, then a disk
 * whose partition holds a device-mapper device 254:0. */
static void test_partitions_and_holders(void)
{
    char root[] = "/tmp/hv-storage-XXXXXX";
    if (mkdtemp(root) == NULL) {
        CHECK_SAY(0, "mkdtemp");
        return;
    }
    put_dev(root, "sda", "8:0", "1000", "0");
    put_dev(root, "sda/sda1", "8:1", "100", NULL);
    tree_put(root, "/sys/block/sda/sda1/partition", "1\n");
    put_dev(root, "sda/sda2", "254:0", "800", NULL);
    tree_put(root, "/sys/block/sda/sda2/partition", "2\n");
    put_dev(root, "sdb", "8:16", "2000", NULL);
    json_t *facts = json_object();
    hv_facts_add_storage(facts, root, FIX "/mountinfo", NULL);
    const json_t *sda = device(facts, "sda"), *sdb = device(facts, "sdb");
    char buf[256];
    CHECK_SAY(sda != NULL && sdb != NULL, "both disks listed");
    CHECK_SAY(strcmp(joined(json_object_get(sda, "partitions"), buf, sizeof buf), "sda1 sda2") == 0,
              "sda's partitions (%s)", buf);
    CHECK_SAY(strcmp(joined(json_object_get(sda, "mounts"), buf, sizeof buf), "/") == 0,
              "a partition's mount is its disk's (%s)", buf);
    CHECK_SAY(json_is_false(json_object_get(sda, "rotational")), "sda is not rotational");
    CHECK_SAY(json_is_null(json_object_get(sdb, "rotational")), "sdb says nothing: null");
    CHECK_SAY(json_array_size(json_object_get(sdb, "mounts")) == 0, "nothing on sdb");
    CHECK_SAY(json_object_get(json_object_get(facts, "storage"), "state_dir") == NULL,
              "no state folder given: none reported");
    json_decref(facts);
    rm_tree(root);

    if (mkdtemp(strcpy(root, "/tmp/hv-storage-XXXXXX")) == NULL) {
        CHECK_SAY(0, "mkdtemp");
        return;
    }
    put_dev(root, "nvme0n1", "259:0", "4000", "0");
    put_dev(root, "nvme0n1/nvme0n1p1", "259:1", "3000", NULL);
    tree_put(root, "/sys/block/nvme0n1/nvme0n1p1/partition", "1\n");
    tree_put(root, "/sys/block/nvme0n1/nvme0n1p1/holders/dm-0", "");
    put_dev(root, "dm-0", "254:0", "3000", "0");
    facts = json_object();
    hv_facts_add_storage(facts, root, FIX "/mountinfo", "/srv/state");
    const json_t *nv = device(facts, "nvme0n1"), *dm = device(facts, "dm-0");
    CHECK_SAY(nv != NULL && dm != NULL, "the disk and the dm device are listed");
    CHECK_SAY(strcmp(joined(json_object_get(nv, "holders"), buf, sizeof buf), "dm-0") == 0,
              "the partition's holder is the disk's (%s)", buf);
    CHECK_SAY(strcmp(joined(json_object_get(nv, "mounts"), buf, sizeof buf), "/") == 0,
              "a holder's mount is the disk's (%s)", buf);
    const json_t *sd = json_object_get(json_object_get(facts, "storage"), "state_dir");
    CHECK_SAY(strcmp(json_string_value(json_object_get(sd, "device")), "dm-0") == 0,
              "the state folder's device: the first listed holding / (dm-0, by name)");
    json_decref(facts);
    rm_tree(root);
}

/* A process: ROOT/proc/PID/stat and, when cwd is not NULL, its cwd
 * link. */
static void put_proc(const char *root, int pid, const char *comm, int ppid, const char *cwd)
{
    char p[512], v[256];
    snprintf(p, sizeof p, "/proc/%d/stat", pid);
    snprintf(v, sizeof v, "%d (%s) S %d %d %d 0 -1 4194560 100 0 0 0\n", pid, comm, ppid, pid, pid);
    tree_put(root, p, v);
    if (cwd != NULL) {
        snprintf(p, sizeof p, "%s/proc/%d/cwd", root, pid);
        CHECK_SAY(symlink(cwd, p) == 0, "link %s", p);
    }
}

/* Postmasters among other processes: a postgres process whose parent is
 * not one (systemd's, or a parent gone) is listed with the folder it runs
 * in, its disk and mount; its backends, other commands and a process
 * whose folder cannot be read are not. */
static void test_databases(void)
{
    char root[] = "/tmp/hv-storage-XXXXXX";
    if (mkdtemp(root) == NULL) {
        CHECK_SAY(0, "mkdtemp");
        return;
    }
    put_dev(root, "sda", "8:0", "1000", "0");
    put_dev(root, "sda/sda1", "8:1", "1000", NULL);
    tree_put(root, "/sys/block/sda/sda1/partition", "1\n");
    put_dev(root, "sdb", "8:16", "2000", "1");
    tree_put(root, "/proc/self/mountinfo",
             "26 1 8:1 / / rw - ext4 /dev/sda1 rw\n27 26 8:16 / /srv rw - xfs /dev/sdb rw\n");
    put_proc(root, 1, "systemd", 0, "/");
    put_proc(root, 900, "postgres", 1, "/var/lib/postgresql/15/main");
    put_proc(root, 901, "postgres", 900, "/var/lib/postgresql/15/main");
    put_proc(root, 902, "postgres", 900, "/var/lib/postgresql/15/main");
    put_proc(root, 77, "postmaster", 5, "/srv/pg/data"); /* parent 5 gone */
    put_proc(root, 78, "postgres", 77, "/srv/pg/data");
    put_proc(root, 300, "bash", 1, "/srv/pg");
    put_proc(root, 301, "postgres (x)", 1, "/srv/other");
    put_proc(root, 400, "postgres", 1, NULL); /* another user's: no cwd */
    put_proc(root, 500, "postgres", 1, "/srv/gone (deleted)");
    tree_put(root, "/proc/600/stat", "600 no parentheses S 1\n");
    tree_put(root, "/proc/self/stat", "1234 (postgres) S 1\n");
    char mi[600];
    snprintf(mi, sizeof mi, "%s/proc/self/mountinfo", root);
    json_t *facts = json_object();
    hv_facts_add_storage(facts, root, mi, NULL);
    const json_t *dbs = json_object_get(json_object_get(facts, "storage"), "databases");
    CHECK_SAY(json_array_size(dbs) == 2, "two postmasters (%zu)", json_array_size(dbs));
    char *got = json_dumps(dbs, JSON_COMPACT);
    CHECK_SAY(got != NULL &&
                  strcmp(got, "[{\"path\":\"/srv/pg/data\",\"mount\":\"/srv\",\"device\":"
                              "\"sdb\"},{\"path\":\"/var/lib/postgresql/15/main\","
                              "\"mount\":\"/\",\"device\":\"sda\"}]") == 0,
              "their data directories by path, with mount and disk (%s)", got);
    free(got);
    json_decref(facts);
    rm_tree(root);
}

/* No sysfs tree and no mountinfo: empty facts, not a failure. */
static void test_nothing_readable(void)
{
    json_t *facts = json_object();
    hv_facts_add_storage(facts, "/nonexistent-hv-root", "/nonexistent-hv-root/mountinfo", "/x");
    const json_t *st = json_object_get(facts, "storage");
    CHECK_SAY(json_array_size(json_object_get(st, "block_devices")) == 0,
              "no devices without a tree");
    CHECK_SAY(json_is_null(json_object_get(json_object_get(st, "state_dir"), "mount")),
              "no mount without a mountinfo");
    CHECK_SAY(json_is_array(json_object_get(st, "databases")) &&
                  json_array_size(json_object_get(st, "databases")) == 0,
              "no processes: no databases");
    json_decref(facts);
}

int main(void)
{
    test_mountinfo_fixture();
    test_mountinfo_edges();
    test_captured_machine();
    test_partitions_and_holders();
    test_databases();
    test_nothing_readable();
    return check_summary("facts_storage");
}
