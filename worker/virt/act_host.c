/* act_host.c — host actuators: sysfs knobs, the NIC's MTU, and the
 * reboot-class KVM module parameters, which are only ever read.
 *
 * A knob is written with one write(2) of the value and a newline, as `echo
 * VALUE > FILE` does, and only after its original is in the journal. The
 * file is opened for writing before the journal entry is made, so a knob
 * the kernel keeps read-only fails without leaving an entry that could
 * never be restored. A knob the kernel lacks fails naming the factor, the
 * level and the missing file. */
#include "worker/virt/rows.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

/* What a knob row knows about its file. */
struct knob {
    /* Under the root; for disk knobs the file under sys/block/DISK/queue/. */
    const char *rel;
    bool disk;   /* a knob of the step's disk */
    bool choice; /* the kernel shows every choice, the current one in brackets */
    /* Pairs of a value read and the level it stands for, NULL-terminated
     * (ksm: 2, "stop and unmerge", is "off" too). NULL: the value is the
     * level. What a level writes is the catalogue's hv_factor_host_value,
     * as the advice forms write it. */
    const char *const *map;
    const char *missing; /* what a missing file means */
};

/* A reboot-class module parameter. */
struct module_param {
    const char *module, *param;
};

static const char *const ksm_map[] = {"0", "off", "1", "on", "2", "off", NULL};

static const struct knob thp_knob = {
    .rel = "sys/kernel/mm/transparent_hugepage/enabled",
    .choice = true,
    .missing = "this kernel has no transparent huge pages (CONFIG_TRANSPARENT_HUGEPAGE)"};
static const struct knob ksm_knob = {.rel = "sys/kernel/mm/ksm/run",
                                     .map = ksm_map,
                                     .missing = "this kernel has no KSM (CONFIG_KSM)"};
static const struct knob halt_poll_knob = {
    .rel = "sys/module/kvm/parameters/halt_poll_ns",
    .missing = "the kvm module is not loaded, or this kernel's KVM has no halt polling"};
static const struct knob scheduler_knob = {
    .rel = "scheduler", .disk = true, .choice = true, .missing = "the disk has no I/O scheduler"};
static const struct knob readahead_knob = {
    .rel = "read_ahead_kb", .disk = true, .missing = "the disk has no read-ahead setting"};

static const struct module_param ept_param = {"kvm_intel", "ept"};
static const struct module_param npt_param = {"kvm_amd", "npt"};

static void join(const struct hv_act_ctx *ctx, const char *rel, char *buf, size_t len)
{
    hv_act_path(ctx, rel, buf, len);
}

/* Reads a whole small file into buf. Returns 0 or -1 with errno. */
static int read_text(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, len - 1);
    int e = errno;
    close(fd);
    if (n < 0) {
        errno = e;
        return -1;
    }
    buf[n] = '\0';
    return 0;
}

/* The kernel name of the whole disk holding ctx->disk: a /dev path is
 * looked up by its device number (/sys/dev/block/MAJ:MIN), a name under
 * /sys/class/block; a partition leads to its parent. */
static int whole_disk(const struct hv_act_ctx *ctx, char *name, size_t n, char *err, size_t len)
{
    char rel[300], path[1200], real[1200];
    const char *disk = ctx->disk;
    if (disk == NULL || disk[0] == '\0')
        return hv_act_fail(err, len, "the step names no disk");
    if (disk[0] == '/') {
        struct stat st;
        if (stat(disk, &st) != 0)
            return hv_act_fail(err, len, "cannot find the disk %s: %s", disk, strerror(errno));
        if (!S_ISBLK(st.st_mode))
            return hv_act_fail(err, len, "%s is not a block device", disk);
        snprintf(rel, sizeof rel, "sys/dev/block/%u:%u", major(st.st_rdev), minor(st.st_rdev));
    } else if (strchr(disk, '/') != NULL || strcmp(disk, "..") == 0 || strcmp(disk, ".") == 0) {
        return hv_act_fail(err, len, "\"%s\" is not a disk name", disk);
    } else {
        snprintf(rel, sizeof rel, "sys/class/block/%s", disk);
    }
    join(ctx, rel, path, sizeof path);
    if (realpath(path, real) == NULL)
        return hv_act_fail(err, len, "no block device %s (%s: %s)", disk, path, strerror(errno));
    char part[1300];
    snprintf(part, sizeof part, "%s/partition", real);
    if (access(part, F_OK) == 0)
        *strrchr(real, '/') = '\0'; /* a partition's folder is inside its disk's */
    snprintf(name, n, "%s", strrchr(real, '/') + 1);
    return 0;
}

/* The knob's file relative to the root ("sys/block/sda/queue/scheduler"). */
static int knob_rel(const struct hv_act_ctx *ctx, const struct knob *k, char *rel, size_t n,
                    char *err, size_t len)
{
    if (!k->disk) {
        snprintf(rel, n, "%s", k->rel);
        return 0;
    }
    char disk[256];
    if (whole_disk(ctx, disk, sizeof disk, err, len) != 0)
        return -1;
    snprintf(rel, n, "sys/block/%s/queue/%s", disk, k->rel);
    return 0;
}

/* The value a knob's text shows: the bracketed word of a choice file (or
 * its only word, in a tree that is not sysfs), else the first word. */
static void shown_value(const char *text, bool choice, char *out, size_t n)
{
    const char *open = choice ? strchr(text, '[') : NULL;
    const char *close = open != NULL ? strchr(open, ']') : NULL;
    const char *p = open != NULL && close != NULL ? open + 1 : text + strspn(text, " \t\n");
    size_t w = open != NULL && close != NULL ? (size_t)(close - p) : strcspn(p, " \t\n");
    snprintf(out, n, "%.*s", (int)(w < n ? w : n - 1), p);
}

/* The level a value stands for (map), else the value itself. */
static const char *level_of(const struct knob *k, const char *value)
{
    for (const char *const *m = k->map; m != NULL && m[0] != NULL; m += 2)
        if (strcmp(m[0], value) == 0)
            return m[1];
    return value;
}

/* The value written for a level of factor: the catalogue's. */
static const char *value_of(const char *factor, const char *level)
{
    const struct hv_factor_def *def = hv_factor_find(factor);
    return def != NULL ? hv_factor_host_value(def, level) : level;
}

/* The state of a knob: its file, text, shown value and level. */
struct knob_state {
    char rel[320], path[1400], text[4096], value[128], level[128];
};

static int knob_read_state(const struct hv_actuator *a, const struct hv_act_ctx *ctx,
                           struct knob_state *s, const char *level, char *err, size_t len)
{
    const struct knob *k = a->data;
    char why[600];
    if (knob_rel(ctx, k, s->rel, sizeof s->rel, why, sizeof why) != 0)
        return level != NULL ? hv_act_fail(err, len, "%s=%s: %s", a->factor, level, why)
                             : hv_act_fail(err, len, "%s: %s", a->factor, why);
    join(ctx, s->rel, s->path, sizeof s->path);
    if (read_text(s->path, s->text, sizeof s->text) != 0) {
        const char *hint = errno == ENOENT ? k->missing : NULL;
        return hv_act_fail(err, len, "%s%s%s: cannot read /%s: %s%s%s%s", a->factor,
                           level ? "=" : "", level ? level : "", s->rel, strerror(errno),
                           hint ? " (" : "", hint ? hint : "", hint ? ")" : "");
    }
    shown_value(s->text, k->choice, s->value, sizeof s->value);
    snprintf(s->level, sizeof s->level, "%s", level_of(k, s->value));
    return 0;
}

/* Whether a choice file offers word: "none [mq-deadline] kyber" offers
 * kyber. A file without brackets (not sysfs) lists nothing: any word. */
static bool offers(const char *text, const char *word)
{
    if (strchr(text, '[') == NULL)
        return true;
    size_t w = strlen(word);
    for (const char *p = text; *p != '\0';) {
        p += strspn(p, " \t\n[]");
        size_t n = strcspn(p, " \t\n[]");
        if (n == w && strncmp(p, word, n) == 0)
            return true;
        p += n;
    }
    return false;
}

/* Writes value and a newline into the open knob fd in one write. */
static int write_value(int fd, const char *value)
{
    char buf[4200];
    int n = snprintf(buf, sizeof buf, "%s", value);
    if (n > 0 && buf[n - 1] != '\n' && (size_t)n + 1 < sizeof buf) {
        buf[n++] = '\n';
        buf[n] = '\0';
    }
    /* A regular file (a test's tree) must lose its old text; sysfs ignores
     * the truncation. */
    (void)ftruncate(fd, 0);
    ssize_t w = pwrite(fd, buf, (size_t)n, 0);
    return w == n ? 0 : -1;
}

static int knob_apply(const struct hv_actuator *a, struct hv_act_ctx *ctx, struct hv_act_domain *d,
                      const char *level, char *err, size_t len)
{
    (void)d;
    const struct knob *k = a->data;
    struct knob_state s;
    if (knob_read_state(a, ctx, &s, level, err, len) != 0)
        return -1;
    const char *value = value_of(a->factor, level);
    if (k->choice && !offers(s.text, value))
        return hv_act_fail(err, len, "%s=%s: /%s offers only %.200s", a->factor, level, s.rel,
                           strtok(s.text, "\n"));
    if (strcmp(s.level, level) == 0)
        return 0;
    int fd = open(s.path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return hv_act_fail(err, len, "%s=%s: cannot open /%s for writing: %s", a->factor, level,
                           s.rel, strerror(errno));
    char object[330];
    snprintf(object, sizeof object, "/%s", s.rel);
    int added = hv_act_journal(ctx,
                               json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "kind", a->kind,
                                         "factor", a->factor, "scope", "host", "object", object,
                                         "original", s.level, "value", s.value, "text", s.text),
                               err, len);
    if (added < 0) {
        close(fd);
        return -1;
    }
    int rc = write_value(fd, value);
    int e = errno;
    close(fd);
    if (rc != 0) {
        if (added == 1)
            hv_act_unjournal(ctx, a->kind, object);
        return hv_act_fail(err, len, "%s=%s: cannot write \"%s\" to %s: %s", a->factor, level,
                           value, object, strerror(e));
    }
    hv_act_note_change(ctx, a->factor, "host", object, s.level, level);
    return 0;
}

static int knob_read_back(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                          struct hv_act_domain *d, struct hv_reading *r, char *err, size_t len)
{
    (void)d;
    struct knob_state s;
    if (knob_read_state(a, ctx, &s, NULL, err, len) != 0)
        return -1;
    snprintf(r->value, sizeof r->value, "%s", s.level);
    snprintf(r->source, sizeof r->source, "/%.250s", s.rel);
    s.text[strcspn(s.text, "\n")] = '\0';
    r->detail = json_pack("{s:s}", "text", s.text);
    return 0;
}

/* Whether fd is a sysfs file: there the kernel takes a value, elsewhere
 * (a copy of the tree, a test's) the journalled text goes back byte for
 * byte. */
static bool on_sysfs(int fd)
{
    struct statfs sf;
    return fstatfs(fd, &sf) == 0 && sf.f_type == SYSFS_MAGIC;
}

static int knob_revert(const struct hv_actuator *a, struct hv_act_ctx *ctx, const json_t *entry,
                       char *err, size_t len)
{
    const struct knob *k = a->data;
    const char *object = json_string_value(json_object_get(entry, "object"));
    const char *value = json_string_value(json_object_get(entry, "value"));
    const char *text = json_string_value(json_object_get(entry, "text"));
    const char *original = json_string_value(json_object_get(entry, "original"));
    if (object == NULL || object[0] != '/' || value == NULL || text == NULL || original == NULL)
        return hv_act_fail(err, len, "%s: the journal entry lacks object, value or text",
                           a->factor);
    char path[1400], before[4096] = "", shown[128] = "?";
    join(ctx, object + 1, path, sizeof path);
    if (read_text(path, before, sizeof before) == 0)
        shown_value(before, k->choice, shown, sizeof shown);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return hv_act_fail(err, len, "%s: cannot open %s to restore \"%s\": %s", a->factor, object,
                           original, strerror(errno));
    int rc = write_value(fd, on_sysfs(fd) ? value : text);
    int e = errno;
    close(fd);
    if (rc != 0)
        return hv_act_fail(err, len, "%s: cannot restore \"%s\" to %s: %s", a->factor, value,
                           object, strerror(e));
    if (strcmp(level_of(k, shown), original) != 0)
        hv_act_note_change(ctx, a->factor, "host", object, level_of(k, shown), original);
    return 0;
}

/* A knob of the host (not of the step's disk) can work when its file
 * exists and may be written. */
static int knob_probe(const struct hv_actuator *a, const struct hv_act_ctx *ctx, char *why,
                      size_t len)
{
    const struct knob *k = a->data;
    char path[1200];
    join(ctx, k->rel, path, sizeof path);
    if (access(path, F_OK) != 0)
        return hv_act_fail(why, len, "/%s missing (%s)", k->rel, k->missing);
    if (access(path, W_OK) != 0)
        return hv_act_fail(why, len, "/%s is not writable: %s", k->rel, strerror(errno));
    return 0;
}

/* ---- reboot class: KVM module parameters ------------------------------- */

/* "Y"/"1" → on, "N"/"0" → off; anything else as it is. */
static const char *param_level(const char *v)
{
    if (strcmp(v, "Y") == 0 || strcmp(v, "y") == 0 || strcmp(v, "1") == 0)
        return "on";
    if (strcmp(v, "N") == 0 || strcmp(v, "n") == 0 || strcmp(v, "0") == 0)
        return "off";
    return v;
}

/* The command that brings the module to level. */
static void reload_command(const struct module_param *m, const char *level, char *buf, size_t len)
{
    snprintf(buf, len, "modprobe -r %s && modprobe %s %s=%d", m->module, m->module, m->param,
             strcmp(level, "on") == 0);
}

/* Reads the parameter's level into value. */
static int param_read(const struct hv_actuator *a, const struct hv_act_ctx *ctx, const char *level,
                      char *value, size_t n, char *rel, size_t reln, char *err, size_t len)
{
    const struct module_param *m = a->data;
    char path[1200], text[64], cmd[160];
    snprintf(rel, reln, "sys/module/%s/parameters/%s", m->module, m->param);
    join(ctx, rel, path, sizeof path);
    if (read_text(path, text, sizeof text) == 0) {
        text[strcspn(text, " \n")] = '\0';
        snprintf(value, n, "%s", param_level(text));
        return 0;
    }
    int e = errno;
    char mod[600];
    snprintf(mod, sizeof mod, "sys/module/%s", m->module);
    join(ctx, mod, path, sizeof path);
    reload_command(m, level != NULL ? level : "on", cmd, sizeof cmd);
    if (access(path, F_OK) != 0)
        return hv_act_fail(err, len,
                           "%s%s%s: /%s does not exist: %s is not loaded (no %s KVM on this "
                           "host); with it, the level needs: %s",
                           a->factor, level ? "=" : "", level ? level : "", rel, m->module,
                           strcmp(m->module, "kvm_intel") == 0 ? "Intel" : "AMD", cmd);
    return hv_act_fail(err, len, "%s%s%s: cannot read /%s: %s", a->factor, level ? "=" : "",
                       level ? level : "", rel, strerror(e));
}

static int param_apply(const struct hv_actuator *a, struct hv_act_ctx *ctx, struct hv_act_domain *d,
                       const char *level, char *err, size_t len)
{
    (void)d;
    const struct module_param *m = a->data;
    char value[64], rel[200], cmd[160];
    if (param_read(a, ctx, level, value, sizeof value, rel, sizeof rel, err, len) != 0)
        return -1;
    if (strcmp(value, level) == 0)
        return 0;
    reload_command(m, level, cmd, sizeof cmd);
    return hv_act_fail(err, len,
                       "%s=%s needs a reload of %s, which is left to the operator: the host has "
                       "%s=%s; stop every guest, then run: %s (to keep it across reboots: echo "
                       "'options %s %s=%d' > /etc/modprobe.d/hvbench-%s.conf)",
                       a->factor, level, m->module, m->param, value, cmd, m->module, m->param,
                       strcmp(level, "on") == 0, m->param);
}

static int param_read_back(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                           struct hv_act_domain *d, struct hv_reading *r, char *err, size_t len)
{
    (void)d;
    const struct module_param *m = a->data;
    char rel[200], on[160], off[160];
    if (param_read(a, ctx, NULL, r->value, sizeof r->value, rel, sizeof rel, err, len) != 0)
        return -1;
    snprintf(r->source, sizeof r->source, "/%s", rel);
    reload_command(m, "on", on, sizeof on);
    reload_command(m, "off", off, sizeof off);
    r->detail = json_pack("{s:{s:s, s:s}}", "commands", "on", on, "off", off);
    return 0;
}

/* A module parameter can be read when its module is loaded; its level
 * changes only by the operator's reload. */
static int param_probe(const struct hv_actuator *a, const struct hv_act_ctx *ctx, char *why,
                       size_t len)
{
    const struct module_param *m = a->data;
    char rel[200], path[1200];
    snprintf(rel, sizeof rel, "sys/module/%s/parameters/%s", m->module, m->param);
    join(ctx, rel, path, sizeof path);
    if (access(path, R_OK) != 0)
        return hv_act_fail(why, len, "/%s missing (%s is not loaded)", rel, m->module);
    return 0;
}

/* ---- the NIC's MTU -------------------------------------------------- */

/* Gets (set == false) or sets the MTU of nic. Returns 0 or -1 with errno. */
static int mtu_call(const char *nic, bool set, int *mtu)
{
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    if (strlen(nic) >= sizeof ifr.ifr_name) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(ifr.ifr_name, nic, strlen(nic));
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    ifr.ifr_mtu = *mtu;
    int rc = ioctl(fd, set ? SIOCSIFMTU : SIOCGIFMTU, &ifr);
    int e = errno;
    close(fd);
    if (rc == 0 && !set)
        *mtu = ifr.ifr_mtu;
    errno = e;
    return rc;
}

static int mtu_get(const struct hv_actuator *a, const struct hv_act_ctx *ctx, const char *level,
                   int *mtu, char *err, size_t len)
{
    if (ctx->nic == NULL || ctx->nic[0] == '\0')
        return hv_act_fail(err, len, "%s%s%s: the step names no NIC", a->factor, level ? "=" : "",
                           level ? level : "");
    if (mtu_call(ctx->nic, false, mtu) != 0)
        return hv_act_fail(err, len, "%s%s%s: %s %s (SIOCGIFMTU: %s)", a->factor, level ? "=" : "",
                           level ? level : "",
                           errno == ENODEV ? "no network interface" : "cannot read the MTU of",
                           ctx->nic, strerror(errno));
    return 0;
}

static int mtu_apply(const struct hv_actuator *a, struct hv_act_ctx *ctx, struct hv_act_domain *d,
                     const char *level, char *err, size_t len)
{
    (void)d;
    int mtu, want = atoi(level);
    if (mtu_get(a, ctx, level, &mtu, err, len) != 0)
        return -1;
    if (mtu == want)
        return 0;
    char from[16];
    snprintf(from, sizeof from, "%d", mtu);
    int added =
        hv_act_journal(ctx,
                       json_pack("{s:s, s:s, s:s, s:s, s:s}", "kind", a->kind, "factor", a->factor,
                                 "scope", "host", "object", ctx->nic, "original", from),
                       err, len);
    if (added < 0)
        return -1;
    if (mtu_call(ctx->nic, true, &want) != 0) {
        int e = errno;
        if (added == 1)
            hv_act_unjournal(ctx, a->kind, ctx->nic);
        return hv_act_fail(err, len, "%s=%s: cannot set the MTU of %s (SIOCSIFMTU: %s)", a->factor,
                           level, ctx->nic, strerror(e));
    }
    hv_act_note_change(ctx, a->factor, "host", ctx->nic, from, level);
    return 0;
}

static int mtu_read_back(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                         struct hv_act_domain *d, struct hv_reading *r, char *err, size_t len)
{
    (void)d;
    int mtu;
    if (mtu_get(a, ctx, NULL, &mtu, err, len) != 0)
        return -1;
    snprintf(r->value, sizeof r->value, "%d", mtu);
    snprintf(r->source, sizeof r->source, "SIOCGIFMTU on %s (the MTU ip link shows)", ctx->nic);
    return 0;
}

static int mtu_revert(const struct hv_actuator *a, struct hv_act_ctx *ctx, const json_t *entry,
                      char *err, size_t len)
{
    const char *nic = json_string_value(json_object_get(entry, "object"));
    const char *original = json_string_value(json_object_get(entry, "original"));
    if (nic == NULL || original == NULL)
        return hv_act_fail(err, len, "%s: the journal entry lacks object or original", a->factor);
    int before = 0, mtu = atoi(original);
    mtu_call(nic, false, &before);
    if (mtu_call(nic, true, &mtu) != 0)
        return hv_act_fail(err, len, "%s: cannot restore the MTU of %s to %s: %s", a->factor, nic,
                           original, strerror(errno));
    char from[16];
    snprintf(from, sizeof from, "%d", before);
    hv_act_note_change(ctx, a->factor, "host", nic, from, original);
    return 0;
}

const struct hv_actuator hv_host_rows[] = {
    {"thp", "sysfs", knob_apply, knob_read_back, knob_revert, &thp_knob},
    {"ksm", "sysfs", knob_apply, knob_read_back, knob_revert, &ksm_knob},
    {"halt_poll_ns", "sysfs", knob_apply, knob_read_back, knob_revert, &halt_poll_knob},
    {"io_scheduler", "sysfs", knob_apply, knob_read_back, knob_revert, &scheduler_knob},
    {"readahead_kb", "sysfs", knob_apply, knob_read_back, knob_revert, &readahead_knob},
    {"nic_mtu", "nic_mtu", mtu_apply, mtu_read_back, mtu_revert, NULL},
    {"kvm_ept", "module_param", param_apply, param_read_back, NULL, &ept_param},
    {"kvm_npt", "module_param", param_apply, param_read_back, NULL, &npt_param},
    /* Applied by the worker that runs each job (procpin.h). */
    {"process_pin", "process_pin", NULL, NULL, NULL, NULL},
};

const size_t hv_host_nrows = sizeof hv_host_rows / sizeof hv_host_rows[0];

int hv_host_row_probe(const struct hv_actuator *a, const struct hv_act_ctx *ctx, char *why,
                      size_t len)
{
    if (a->apply == knob_apply && !((const struct knob *)a->data)->disk)
        return knob_probe(a, ctx, why, len);
    if (a->apply == param_apply)
        return param_probe(a, ctx, why, len);
    return 0;
}
