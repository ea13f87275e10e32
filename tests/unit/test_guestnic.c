/* test_guestnic.c — the guest's side of net_queues and guest_mtu
 * (worker/virt/guestnic.c): which NIC, the read-back and the writes
 * against a temporary sysfs tree (the worker's --sysfs-root), then against
 * the real kernel on a dummy NIC the test makes and removes: its MTU is
 * set and read back, and its queues cannot be (dummy has no channels),
 * which must fail naming the factor, the level and why. */
#include "worker/virt/guestnic.h"

#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char top[256];

static void make_parents(const char *path)
{
    char p[600];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
}

static void put(const char *root, const char *rel, const char *text)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    make_parents(path);
    FILE *f = fopen(path, "w");
    CHECK_MSG(f != NULL, "cannot write %s", path);
    if (f != NULL) {
        fputs(text, f);
        fclose(f);
    }
}

static const char *get(const char *root, const char *rel)
{
    static char buf[256];
    char path[600];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return "<missing>";
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static int run(const char *const *argv)
{
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 1);
        dup2(fd, 2);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) < 0)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static const char *member(const json_t *settings, const char *f, const char *m)
{
    return json_string_value(json_object_get(json_object_get(settings, f), m));
}

#define ROUTE_HEAD                                                                                 \
    "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"

/* A guest's tree: lo, eth0 (2 queues, MTU 1500) with the default route,
 * eth1 on a local network only. */
static void make_tree(char *root, size_t n)
{
    snprintf(root, n, "%s/tree", top);
    put(root, "proc/net/route",
        ROUTE_HEAD "eth1\t0002000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
                   "eth0\t00000000\t0202000A\t0003\t0\t0\t0\t00000000\t0\t0\t0\n");
    put(root, "sys/class/net/lo/mtu", "65536\n");
    put(root, "sys/class/net/eth0/mtu", "1500\n");
    put(root, "sys/class/net/eth0/queues/rx-0/rps_cpus", "0\n");
    put(root, "sys/class/net/eth0/queues/rx-1/rps_cpus", "0\n");
    put(root, "sys/class/net/eth0/queues/tx-0/xps_cpus", "0\n");
    put(root, "sys/class/net/eth0/queues/tx-1/xps_cpus", "0\n");
    put(root, "sys/class/net/eth1/mtu", "1500\n");
    put(root, "sys/class/net/eth1/queues/rx-0/rps_cpus", "0\n");
}

static void test_find(void)
{
    char root[400], nic[16], err[1024];
    make_tree(root, sizeof root);
    CHECK_MSG(hv_guest_nic_find(root, NULL, nic, sizeof nic, err, sizeof err) == 0, "%s", err);
    CHECK_STR(nic, "eth0"); /* the default route's, not the first listed */
    CHECK(hv_guest_nic_find(root, "eth1", nic, sizeof nic, err, sizeof err) == 0);
    CHECK_STR(nic, "eth1"); /* --nic wins */
    CHECK(hv_guest_nic_find(root, "eth7", nic, sizeof nic, err, sizeof err) == -1);
    CHECK_MSG(strstr(err, "the NIC eth7 that --nic names does not exist") != NULL, "%s", err);
    CHECK(hv_guest_nic_find(root, "../eth0", nic, sizeof nic, err, sizeof err) == -1);
    CHECK_STR(err, "\"../eth0\" is not an interface name");
    /* No default route (user networking not up yet, or only lo). */
    char bare[400];
    snprintf(bare, sizeof bare, "%s/bare", top);
    put(bare, "proc/net/route",
        ROUTE_HEAD "lo\t00000000\t00000000\t0001\t0\t0\t0\t00000000\t0\t0\t0\n");
    CHECK(hv_guest_nic_find(bare, NULL, nic, sizeof nic, err, sizeof err) == -1);
    CHECK_MSG(strstr(err, "no interface but lo has a default route") != NULL &&
                  strstr(err, "name the NIC with --nic") != NULL,
              "%s", err);
}

static void test_tree_read_back(void)
{
    char root[400], value[64], source[300], err[1024];
    make_tree(root, sizeof root);
    CHECK(hv_guest_nic_read(root, "eth0", "guest_mtu", value, sizeof value, source, sizeof source,
                            err, sizeof err) == 0);
    CHECK_STR(value, "1500");
    CHECK_STR(source, "/sys/class/net/eth0/mtu");
    CHECK(hv_guest_nic_read(root, "eth0", "net_queues", value, sizeof value, source, sizeof source,
                            err, sizeof err) == 0);
    CHECK_STR(value, "2");
    CHECK_STR(source, "/sys/class/net/eth0/queues/rx-* (2)");
    CHECK(hv_guest_nic_read(root, "eth1", "net_queues", value, sizeof value, source, sizeof source,
                            err, sizeof err) == 0);
    CHECK_STR(value, "1");
    CHECK(hv_guest_nic_read(root, "eth9", "guest_mtu", value, sizeof value, source, sizeof source,
                            err, sizeof err) == -1);
    CHECK_MSG(strstr(err, "sys/class/net/eth9/mtu: No such file or directory") != NULL, "%s", err);

    /* Apply: the MTU file is written, the queues already read 2. */
    json_t *levels = json_pack("{s:s, s:s, s:s}", "guest_mtu", "9000", "net_queues", "2",
                               "vcpu_pin", "on"),
           *settings = NULL;
    CHECK(hv_guest_nic_wanted(levels));
    CHECK_MSG(hv_guest_nic_apply(levels, root, NULL, &settings, err, sizeof err) == 0, "%s", err);
    CHECK_STR(get(root, "sys/class/net/eth0/mtu"), "9000");
    CHECK(json_object_size(settings) == 2); /* vcpu_pin is the host's */
    CHECK_STR(member(settings, "guest_mtu", "level"), "9000");
    CHECK_STR(member(settings, "guest_mtu", "read_back"), "9000");
    CHECK_STR(member(settings, "guest_mtu", "source"), "/sys/class/net/eth0/mtu");
    CHECK_STR(member(settings, "net_queues", "read_back"), "2");
    CHECK_STR(member(settings, "net_queues", "source"), "/sys/class/net/eth0/queues/rx-* (2)");

    /* Nothing moved: the end reads the same. */
    CHECK_MSG(hv_guest_nic_check(root, NULL, settings, err, sizeof err) == 0, "%s", err);
    CHECK_STR(member(settings, "guest_mtu", "start"), "9000");
    CHECK_STR(member(settings, "guest_mtu", "end"), "9000");
    /* The MTU changed under the job. */
    put(root, "sys/class/net/eth0/mtu", "1500\n");
    CHECK(hv_guest_nic_check(root, NULL, settings, err, sizeof err) == -1);
    CHECK_STR(err, "guest_mtu=9000: reads back 1500 (/sys/class/net/eth0/mtu)");
    CHECK_STR(member(settings, "guest_mtu", "start"), "9000");
    CHECK_STR(member(settings, "guest_mtu", "end"), "1500");
    CHECK_STR(member(settings, "guest_mtu", "read_back"), "1500");
    json_decref(settings);
    json_decref(levels);

    /* More queues than the tree shows: the ioctl acts on the running
     * kernel only. */
    levels = json_pack("{s:s}", "net_queues", "4");
    CHECK(hv_guest_nic_apply(levels, root, NULL, &settings, err, sizeof err) == -1);
    CHECK_MSG(strstr(err, "net_queues=4: eth0's channels are set by an ioctl on the running "
                          "kernel, not under ") != NULL,
              "%s", err);
    CHECK_STR(member(settings, "net_queues", "read_back"), "2");
    json_decref(settings);
    json_decref(levels);

    /* No NIC at all: every factor is named with its level. */
    levels = json_pack("{s:s, s:s}", "guest_mtu", "1500", "net_queues", "1");
    CHECK(hv_guest_nic_apply(levels, root, "eth5", &settings, err, sizeof err) == -1);
    CHECK_MSG(strstr(err, "net_queues=1: no NIC to set in the guest: the NIC eth5") != NULL &&
                  strstr(err, "; guest_mtu=1500: no NIC to set in the guest") != NULL,
              "%s", err);
    json_decref(settings);
    json_decref(levels);
    levels = json_pack("{s:s}", "vcpu_pin", "on");
    CHECK(!hv_guest_nic_wanted(levels));
    json_decref(levels);
}

/* The real kernel, on a dummy NIC made for the test (a veth pair where
 * the kernel has no dummy driver; never the machine's own): the MTU
 * through sysfs, the queues refused by the driver (dummy has no channel
 * calls, veth no combined channels). */
static void test_live_dummy(void)
{
    char nic[16], peer[16], err[2048], rel[64];
    snprintf(nic, sizeof nic, "hvbt%d", (int)getpid() % 100000);
    snprintf(peer, sizeof peer, "hvbp%d", (int)getpid() % 100000);
    bool dummy = run((const char *const[]){"ip", "link", "add", nic, "type", "dummy", NULL}) == 0;
    if (!dummy && run((const char *const[]){"ip", "link", "add", nic, "type", "veth", "peer",
                                            "name", peer, NULL}) != 0) {
        CHECK_MSG(geteuid() != 0, "cannot create a test NIC %s (dummy or veth) as root", nic);
        printf("live: skipped (no test NIC: not root)\n");
        return;
    }
    snprintf(rel, sizeof rel, "sys/class/net/%s/mtu", nic);
    CHECK_STR(get("", rel), "1500\n");
    json_t *levels = json_pack("{s:s}", "guest_mtu", "9000"), *settings = NULL;
    CHECK_MSG(hv_guest_nic_apply(levels, "/", nic, &settings, err, sizeof err) == 0, "%s", err);
    CHECK_STR(get("", rel), "9000\n");
    CHECK_STR(member(settings, "guest_mtu", "read_back"), "9000");
    CHECK_MSG(hv_guest_nic_check("/", nic, settings, err, sizeof err) == 0, "%s", err);
    json_decref(settings);
    json_decref(levels);

    /* dummy has one queue and no channels to set. */
    char value[64], source[300];
    CHECK(hv_guest_nic_read("/", nic, "net_queues", value, sizeof value, source, sizeof source, err,
                            sizeof err) == 0);
    CHECK_STR(value, "1");
    levels = json_pack("{s:s}", "net_queues", "2");
    CHECK(hv_guest_nic_apply(levels, "/", nic, &settings, err, sizeof err) == -1);
    char want[200];
    if (dummy)
        snprintf(want, sizeof want, "net_queues=2: the driver of %s has no channels to set (", nic);
    else
        snprintf(want, sizeof want,
                 "net_queues=2: %s has no combined channels to set (ETHTOOL_GCHANNELS: at most ",
                 nic);
    CHECK_MSG(strncmp(err, want, strlen(want)) == 0, "%s", err);
    CHECK_STR(member(settings, "net_queues", "read_back"), "1");
    printf("live: %s (%s): %s\n", nic, dummy ? "dummy" : "veth", err);
    json_decref(settings);
    json_decref(levels);
    /* The level it already has needs no call. */
    levels = json_pack("{s:s}", "net_queues", "1");
    CHECK_MSG(hv_guest_nic_apply(levels, "/", nic, &settings, err, sizeof err) == 0, "%s", err);
    json_decref(settings);
    json_decref(levels);
    CHECK(run((const char *const[]){"ip", "link", "del", nic, NULL}) == 0);
}

int main(void)
{
    snprintf(top, sizeof top, "/tmp/hv-guestnic-XXXXXX");
    if (mkdtemp(top) == NULL)
        return 99;
    test_find();
    test_tree_read_back();
    test_live_dummy();
    const char *const rm[] = {"rm", "-rf", top, NULL};
    run(rm);
    return check_summary("test_guestnic");
}
