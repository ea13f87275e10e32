/* guestnic.c — see guestnic.h. */
#include "worker/virt/guestnic.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *const factors[] = {"net_queues", "guest_mtu"};

bool hv_guest_nic_wanted(const json_t *levels)
{
    for (size_t i = 0; i < sizeof factors / sizeof factors[0]; i++)
        if (json_object_get(levels, factors[i]) != NULL)
            return true;
    return false;
}

static int fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* Appends "; " and text to err (the problems of several factors). */
static void append(char *err, size_t len, const char *text)
{
    size_t k = strlen(err);
    if (k + 3 < len)
        snprintf(err + k, len - k, "%s%s", k > 0 ? "; " : "", text);
}

/* root joined with rel into buf ("/" + "sys/..." gives "/sys/..."). */
static void join(const char *root, const char *rel, char *buf, size_t n)
{
    size_t r = strlen(root);
    snprintf(buf, n, "%s%s%s", root, r > 0 && root[r - 1] == '/' ? "" : "/", rel);
}

static bool real_kernel(const char *root)
{
    return strcmp(root, "/") == 0;
}

static bool name_ok(const char *s)
{
    if (s[0] == '\0' || strlen(s) >= IFNAMSIZ || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
        return false;
    for (; *s; s++)
        if (*s <= ' ' || *s > '~' || *s == '/' || *s == ':')
            return false;
    return true;
}

int hv_guest_nic_find(const char *root, const char *named, char *ifname, size_t n, char *err,
                      size_t len)
{
    char rel[64], path[1200];
    if (named != NULL) {
        if (!name_ok(named))
            return fail(err, len, "\"%s\" is not an interface name", named);
        snprintf(rel, sizeof rel, "sys/class/net/%s", named);
        join(root, rel, path, sizeof path);
        if (access(path, F_OK) != 0)
            return fail(err, len, "the NIC %s that --nic names does not exist (%s: %s)", named,
                        path, strerror(errno));
        snprintf(ifname, n, "%s", named);
        return 0;
    }
    join(root, "proc/net/route", path, sizeof path);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return fail(err, len, "cannot read %s: %s", path, strerror(errno));
    char line[512];
    bool found = false;
    while (!found && fgets(line, sizeof line, f) != NULL) {
        char iface[64], dest[16], gw[16], mask[16];
        unsigned flags;
        /* Iface Destination Gateway Flags RefCnt Use Metric Mask ... */
        if (sscanf(line, "%63s %15s %15s %x %*s %*s %*s %15s", iface, dest, gw, &flags, mask) != 5)
            continue;
        if (strcmp(dest, "00000000") == 0 && strcmp(mask, "00000000") == 0 && (flags & 1) != 0 &&
            strcmp(iface, "lo") != 0 && name_ok(iface)) {
            snprintf(ifname, n, "%s", iface);
            found = true;
        }
    }
    fclose(f);
    if (!found)
        return fail(err, len,
                    "no interface but lo has a default route (%s); name the NIC with --nic", path);
    return 0;
}

/* Reads the first line of root/rel into buf, trimmed. */
static int read_file(const char *root, const char *rel, char *buf, size_t n, char *path, size_t pn)
{
    join(root, rel, path, pn);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    bool ok = fgets(buf, (int)n, f) != NULL;
    int e = errno;
    fclose(f);
    if (!ok) {
        errno = e != 0 ? e : EIO;
        return -1;
    }
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

/* SIOCETHTOOL with cmd on ifname: fills *ch. Returns 0 or -1 with errno. */
static int channels_call(const char *ifname, struct ethtool_channels *ch)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -1;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    memcpy(ifr.ifr_name, ifname, strlen(ifname) + 1);
    ifr.ifr_data = (char *)ch;
    int rc = ioctl(s, SIOCETHTOOL, &ifr);
    int e = errno;
    close(s);
    errno = e;
    return rc;
}

/* The count of root/sys/class/net/IF/queues/rx-*, or -1 with errno. */
static int rx_queues(const char *root, const char *ifname, char *path, size_t pn)
{
    char rel[96];
    snprintf(rel, sizeof rel, "sys/class/net/%s/queues", ifname);
    join(root, rel, path, pn);
    DIR *d = opendir(path);
    if (d == NULL)
        return -1;
    int count = 0;
    const struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "rx-", 3) == 0)
            count++;
    closedir(d);
    return count;
}

int hv_guest_nic_read(const char *root, const char *ifname, const char *factor, char *value,
                      size_t vn, char *source, size_t sn, char *err, size_t len)
{
    char path[1200];
    if (strcmp(factor, "guest_mtu") == 0) {
        char rel[96], text[64];
        snprintf(rel, sizeof rel, "sys/class/net/%s/mtu", ifname);
        if (read_file(root, rel, text, sizeof text, path, sizeof path) != 0)
            return fail(err, len, "cannot read %s: %s", path, strerror(errno));
        snprintf(value, vn, "%s", text);
        snprintf(source, sn, "/%s", rel);
        return 0;
    }
    if (strcmp(factor, "net_queues") != 0)
        return fail(err, len, "%s is not a factor of the guest's NIC", factor);
    if (real_kernel(root)) {
        struct ethtool_channels ch = {.cmd = ETHTOOL_GCHANNELS};
        if (channels_call(ifname, &ch) == 0 && ch.max_combined > 0) {
            snprintf(value, vn, "%u", ch.combined_count);
            snprintf(source, sn, "ETHTOOL_GCHANNELS on %s (combined, at most %u)", ifname,
                     ch.max_combined);
            return 0;
        }
    }
    int count = rx_queues(root, ifname, path, sizeof path);
    if (count < 0)
        return fail(err, len, "cannot read %s: %s", path, strerror(errno));
    snprintf(value, vn, "%d", count);
    snprintf(source, sn, "/sys/class/net/%s/queues/rx-* (%d)", ifname, count);
    return 0;
}

/* Sets the MTU by writing the mtu file. */
static int set_mtu(const char *root, const char *ifname, const char *level, char *err, size_t len)
{
    char rel[96], path[1200];
    snprintf(rel, sizeof rel, "sys/class/net/%s/mtu", ifname);
    join(root, rel, path, sizeof path);
    int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0)
        return fail(err, len, "guest_mtu=%s: cannot open %s for writing: %s%s", level, path,
                    strerror(errno),
                    errno == EACCES || errno == EPERM ? " (the guest's worker must run as root)"
                                                      : "");
    ssize_t w = write(fd, level, strlen(level));
    int e = errno;
    close(fd);
    if (w != (ssize_t)strlen(level))
        return fail(err, len, "guest_mtu=%s: %s refuses it: %s%s", level, path,
                    w < 0 ? strerror(e) : "short write",
                    w < 0 && e == EINVAL
                        ? " (above the NIC's maximum: the domain's <mtu size> sets it for virtio)"
                        : "");
    return 0;
}

/* Sets the combined channels with ETHTOOL_SCHANNELS. */
static int set_queues(const char *root, const char *ifname, const char *level, char *err,
                      size_t len)
{
    if (!real_kernel(root))
        return fail(err, len,
                    "net_queues=%s: %s's channels are set by an ioctl on the running kernel, "
                    "not under %s",
                    level, ifname, root);
    unsigned want = (unsigned)strtoul(level, NULL, 10);
    struct ethtool_channels ch = {.cmd = ETHTOOL_GCHANNELS};
    if (channels_call(ifname, &ch) != 0)
        return fail(err, len,
                    "net_queues=%s: the driver of %s has no channels to set (ETHTOOL_GCHANNELS: "
                    "%s)",
                    level, ifname, strerror(errno));
    if (ch.max_combined == 0)
        return fail(err, len,
                    "net_queues=%s: %s has no combined channels to set (ETHTOOL_GCHANNELS: at "
                    "most %u rx and %u tx)",
                    level, ifname, ch.max_rx, ch.max_tx);
    if (ch.max_combined < want)
        return fail(err, len,
                    "net_queues=%s: %s offers at most %u combined channel%s (the domain's NIC "
                    "needs <driver queues='%s'/>, which user-mode networking cannot have)",
                    level, ifname, ch.max_combined, ch.max_combined == 1 ? "" : "s", level);
    ch.cmd = ETHTOOL_SCHANNELS;
    ch.combined_count = want;
    if (channels_call(ifname, &ch) != 0)
        return fail(err, len, "net_queues=%s: ETHTOOL_SCHANNELS on %s: %s%s", level, ifname,
                    strerror(errno),
                    errno == EPERM ? " (the guest's worker must run as root)" : "");
    return 0;
}

int hv_guest_nic_apply(const json_t *levels, const char *root, const char *named, json_t **settings,
                       char *err, size_t len)
{
    *settings = json_object();
    err[0] = '\0';
    char ifname[IFNAMSIZ], why[512];
    if (hv_guest_nic_find(root, named, ifname, sizeof ifname, why, sizeof why) != 0) {
        for (size_t i = 0; i < sizeof factors / sizeof factors[0]; i++) {
            const char *level = json_string_value(json_object_get(levels, factors[i]));
            if (level == NULL)
                continue;
            char one[800];
            snprintf(one, sizeof one, "%s=%s: no NIC to set in the guest: %s", factors[i], level,
                     why);
            append(err, len, one);
        }
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < sizeof factors / sizeof factors[0]; i++) {
        const char *f = factors[i];
        const char *level = json_string_value(json_object_get(levels, f));
        if (level == NULL)
            continue;
        char value[64] = "", source[300] = "", one[1024];
        int got = hv_guest_nic_read(root, ifname, f, value, sizeof value, source, sizeof source,
                                    why, sizeof why);
        if (got != 0 || strcmp(value, level) != 0) {
            int set = strcmp(f, "guest_mtu") == 0
                          ? set_mtu(root, ifname, level, one, sizeof one)
                          : set_queues(root, ifname, level, one, sizeof one);
            if (set != 0) {
                append(err, len, one);
                rc = -1;
            }
            got = hv_guest_nic_read(root, ifname, f, value, sizeof value, source, sizeof source,
                                    why, sizeof why);
            if (set == 0 && got != 0) {
                snprintf(one, sizeof one, "%s=%s: %s", f, level, why);
                append(err, len, one);
                rc = -1;
            } else if (set == 0 && strcmp(value, level) != 0) {
                snprintf(one, sizeof one, "%s=%s: reads back %s (%s)", f, level, value, source);
                append(err, len, one);
                rc = -1;
            }
        }
        json_object_set_new(*settings, f,
                            json_pack("{s:s, s:s?, s:s?}", "level", level, "read_back",
                                      got == 0 ? value : NULL, "source", got == 0 ? source : NULL));
    }
    return rc;
}

int hv_guest_nic_check(const char *root, const char *named, json_t *settings, char *err, size_t len)
{
    err[0] = '\0';
    char ifname[IFNAMSIZ], why[512], one[1024];
    if (hv_guest_nic_find(root, named, ifname, sizeof ifname, why, sizeof why) != 0) {
        snprintf(err, len, "the guest's NIC cannot be read again: %s", why);
        return -1;
    }
    int rc = 0;
    const char *f;
    json_t *s;
    json_object_foreach(settings, f, s)
    {
        const char *level = json_string_value(json_object_get(s, "level"));
        json_t *start = json_object_get(s, "read_back");
        json_object_set(s, "start", start != NULL ? start : json_null());
        char value[64] = "", source[300] = "";
        if (hv_guest_nic_read(root, ifname, f, value, sizeof value, source, sizeof source, why,
                              sizeof why) != 0) {
            snprintf(one, sizeof one, "%s=%s: %s", f, level, why);
            append(err, len, one);
            json_object_set_new(s, "end", json_null());
            json_object_set_new(s, "read_back", json_null());
            rc = -1;
            continue;
        }
        json_object_set_new(s, "end", json_string(value));
        json_object_set_new(s, "read_back", json_string(value));
        json_object_set_new(s, "source", json_string(source));
        if (level == NULL || strcmp(level, value) != 0) {
            snprintf(one, sizeof one, "%s=%s: reads back %s (%s)", f, level ? level : "?", value,
                     source);
            append(err, len, one);
            rc = -1;
        }
    }
    return rc;
}
