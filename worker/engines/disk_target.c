/* disk_target.c — where the built-in disk engine's I/O goes and what it
 * goes to: the scratch files or the path a plan names (within the
 * allowlist of storage.c), the checks before anything is written, and the
 * filesystem, device and scheduler it records; see disk_run.h. */
#include "worker/engines/disk_run.h"

#include "worker/engines/storage.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

/* The scratch directory, resolved. */
int hv_disk_target_scratch(struct hv_disk_run *run)
{
    return hv_scratch_dir(run->scratch, sizeof run->scratch, run->out);
}

/* Creates a file that must not exist yet, never following a symlink
 * (scratch directories such as /var/tmp are shared). */
static int create_file(struct hv_disk_run *run, const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return hv_engine_fail(run->out, "cannot create %s: %s", path, strerror(errno));
    close(fd);
    return 0;
}

/* Resolves params.path (or makes the scratch files) into the jobs' paths
 * and regions, enforcing the allowlist. */
int hv_disk_target_setup(struct hv_disk_run *run)
{
    const struct hv_disk_settings *p = &run->p;
    if (p->path[0] == '\0') {
        for (long i = 0; i < p->threads; i++) {
            struct hv_disk_job *j = &run->jobs[i];
            if (snprintf(j->path, sizeof j->path, "%s/hvbench-disk-%ld-%ld.dat", run->scratch,
                         (long)getpid(), i) >= (int)sizeof j->path)
                return hv_engine_fail(run->out, "the scratch directory's path is too long");
            if (create_file(run, j->path) != 0)
                return -1;
            j->created = true;
        }
        return 0;
    }
    char real[PATH_MAX];
    struct stat st;
    bool exists = stat(p->path, &st) == 0;
    if (!exists && errno != ENOENT)
        return hv_engine_fail(run->out, "cannot use path %s: %s", p->path, strerror(errno));
    if (exists) {
        if (realpath(p->path, real) == NULL)
            return hv_engine_fail(run->out, "cannot resolve path %s: %s", p->path, strerror(errno));
    } else {
        /* A new file: its directory must resolve under the scratch one. */
        char dir[PATH_MAX], rdir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", p->path);
        char *slash = strrchr(dir, '/');
        const char *base = p->path + (slash - dir) + 1;
        *slash = '\0';
        if (realpath(dir[0] ? dir : "/", rdir) == NULL)
            return hv_engine_fail(run->out, "cannot use path %s: its directory: %s", p->path,
                                  strerror(errno));
        if (base[0] == '\0' || snprintf(real, sizeof real, "%s/%s", strcmp(rdir, "/") ? rdir : "",
                                        base) >= (int)sizeof real)
            return hv_engine_fail(run->out, "path %s names no file", p->path);
    }
    bool device = exists && S_ISBLK(st.st_mode);
    if (exists && !device && !S_ISREG(st.st_mode))
        return hv_engine_fail(run->out, "path %s is neither a regular file nor a block device",
                              p->path);
    if (device ? !hv_device_allowed(real) : !hv_path_within(real, run->scratch, false))
        return hv_engine_fail(
            run->out,
            "path %s%s%s is %s; the worker writes only to files under its scratch directory %s "
            "($HVBENCH_SCRATCH) and to block devices listed in $HVBENCH_DISK_DEVICES "
            "(colon-separated, set by the worker's administrator)",
            p->path, strcmp(real, p->path) ? " -> " : "", strcmp(real, p->path) ? real : "",
            device ? "a block device not listed in $HVBENCH_DISK_DEVICES"
                   : "outside the scratch directory",
            run->scratch);
    if (!exists && create_file(run, real) != 0)
        return -1;
    run->device = device;
    for (long i = 0; i < p->threads; i++) {
        struct hv_disk_job *j = &run->jobs[i];
        snprintf(j->path, sizeof j->path, "%s", real);
        j->base = (uint64_t)i * p->size;
        j->created = i == 0 && !exists; /* one file, removed once */
        /* A device's data is there (whatever it is); a file's when it is
         * long enough. */
        j->has_data = device || (exists && (uint64_t)st.st_size >= j->base + p->size);
    }
    return 0;
}

/* Size, space and alignment checks before anything is written. */
int hv_disk_target_check(struct hv_disk_run *run, uint64_t lbs)
{
    const struct hv_disk_settings *p = &run->p;
    const char *path = run->jobs[0].path;
    uint64_t need = (uint64_t)p->threads * p->size;
    if (run->device) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        uint64_t bytes = 0;
        if (fd < 0 || ioctl(fd, BLKGETSIZE64, &bytes) != 0) {
            int e = errno;
            if (fd >= 0)
                close(fd);
            return hv_engine_fail(run->out, "cannot read the size of %s: %s", path, strerror(e));
        }
        close(fd);
        if (bytes < need)
            return hv_engine_fail(run->out, "%s holds %llu bytes; threads x size needs %llu", path,
                                  (unsigned long long)bytes, (unsigned long long)need);
        bool writes = false;
        for (size_t i = 0; i < p->n_ops; i++)
            writes |= hv_disk_op_defs[p->ops[i]].write;
        if (!writes)
            return 0;
        /* Claimed for the whole run: open(O_EXCL) of a block device fails
         * with EBUSY while it is mounted or held (md, dm, swap), and while
         * we hold it nobody can mount it. */
        run->claim = open(path, O_RDONLY | O_EXCL | O_CLOEXEC);
        if (run->claim < 0)
            return hv_engine_fail(run->out,
                                  "%s is in use (mounted, or held by md, device-mapper or swap): "
                                  "%s; the engine writes only to devices nobody else uses",
                                  path, strerror(errno));
        if (hv_device_check_signatures(path, run->out) != 0)
            return -1;
    } else {
        struct statvfs vfs;
        uint64_t have = 0;
        for (long i = 0; i < p->threads; i++) {
            struct stat st;
            if (stat(run->jobs[i].path, &st) == 0 && (i == 0 || p->path[0] == '\0'))
                have += (uint64_t)st.st_size;
        }
        /* Filesystems that report no size (ramfs, some FUSE) are not
         * checked. */
        if (statvfs(path, &vfs) == 0 && vfs.f_blocks > 0 && need > have &&
            (double)vfs.f_bavail * (double)vfs.f_frsize < (double)(need - have))
            return hv_engine_fail(
                run->out, "%s has %.0f MiB free; the run needs %.0f MiB more (threads x size)",
                run->p.path[0] ? path : run->scratch,
                (double)vfs.f_bavail * (double)vfs.f_frsize / 1048576.0,
                (double)(need - have) / 1048576.0);
    }
    if (p->direct) {
        /* Filesystems without O_DIRECT (ramfs, some FUSE) refuse it in
         * open(2); the test is the open itself. */
        int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
        if (fd < 0 && errno == EINVAL)
            return hv_engine_fail(run->out,
                                  "O_DIRECT refused (EINVAL) on %s: its filesystem does not "
                                  "support direct I/O; use direct: false (with drop_caches: "
                                  "true to keep reads off the page cache) or another path",
                                  path);
        if (fd < 0)
            return hv_engine_fail(run->out, "cannot open %s: %s", path, strerror(errno));
        close(fd);
        if (lbs > 0 && p->block % lbs != 0)
            return hv_engine_fail(run->out,
                                  "block (%llu bytes) is not a multiple of the logical block "
                                  "size of the device under %s (%llu bytes), which O_DIRECT "
                                  "needs",
                                  (unsigned long long)p->block, path, (unsigned long long)lbs);
    }
    if (p->drop_caches) {
        int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            return hv_engine_fail(run->out,
                                  "drop_caches needs root: cannot open /proc/sys/vm/drop_caches "
                                  "for writing: %s",
                                  strerror(errno));
        close(fd);
    }
    return 0;
}

/* What the target is: filesystem, device, scheduler. */

static const struct {
    unsigned long magic;
    const char *name;
} fs_types[] = {
    {0xEF53, "ext4"},         {0x58465342, "xfs"},      {0x9123683E, "btrfs"},
    {0x01021994, "tmpfs"},    {0x858458F6, "ramfs"},    {0x794C7630, "overlay"},
    {0x65735546, "fuse"},     {0x6969, "nfs"},          {0x2FC12FC1, "zfs"},
    {0xF2F52010, "f2fs"},     {0x4D44, "vfat"},         {0x5346544E, "ntfs"},
    {0x01021997, "9p"},       {0xFF534D42, "cifs"},     {0xFE534D42, "smb2"},
    {0xCA451A4E, "bcachefs"}, {0xE0F5E1E2, "erofs"},    {0x73717368, "squashfs"},
    {0x3153464A, "jfs"},      {0x52654973, "reiserfs"}, {0x1021994, "tmpfs"},
};

/* Reads the first line of path into buf without its newline; 0 or -1. */
int hv_disk_read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return -1;
    bool ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    if (!ok)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

/* Reads queue/NAME of the block device dev (a partition's parent when dev
 * is a partition). 0 or -1. */
static int queue_attr(dev_t dev, const char *name, char *buf, size_t len)
{
    char link[64], real[PATH_MAX], attr[PATH_MAX + 64];
    snprintf(link, sizeof link, "/sys/dev/block/%u:%u", major(dev), minor(dev));
    if (realpath(link, real) == NULL)
        return -1;
    snprintf(attr, sizeof attr, "%s/queue/%s", real, name);
    if (hv_disk_read_line(attr, buf, len) == 0)
        return 0;
    snprintf(attr, sizeof attr, "%s/../queue/%s", real, name);
    return hv_disk_read_line(attr, buf, len);
}

/* Adds file, filesystem, device and scheduler to observed; returns the
 * device's logical block size (0 when unknown). */
uint64_t hv_disk_target_describe(struct hv_disk_run *run)
{
    json_t *obs = run->out->observed;
    const struct hv_disk_job *j = &run->jobs[0];
    json_object_set_new(obs, "file", json_string(j->path));
    if (run->p.path[0] == '\0' && run->p.threads > 1) {
        json_t *files = json_array();
        for (long i = 0; i < run->p.threads; i++)
            json_array_append_new(files, json_string(run->jobs[i].path));
        json_object_set_new(obs, "files", files);
    }
    json_object_set_new(obs, "target", json_string(run->device ? "block device" : "file"));
    struct stat st;
    if (stat(j->path, &st) != 0)
        return 0;
    dev_t dev = run->device ? st.st_rdev : st.st_dev;
    if (!run->device) {
        struct statfs fs;
        if (statfs(j->path, &fs) == 0) {
            const char *name = NULL;
            for (size_t i = 0; i < sizeof fs_types / sizeof fs_types[0] && !name; i++)
                if ((unsigned long)fs.f_type == fs_types[i].magic)
                    name = fs_types[i].name;
            char hex[32];
            snprintf(hex, sizeof hex, "0x%lx", (unsigned long)fs.f_type);
            json_object_set_new(obs, "filesystem", json_string(name ? name : hex));
        }
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%u:%u", major(dev), minor(dev));
    json_object_set_new(obs, "device", json_string(buf));
    if (queue_attr(dev, "scheduler", buf, sizeof buf) == 0) {
        /* "none [mq-deadline] kyber": the bracketed one is in use. */
        char *open = strchr(buf, '['), *close = open ? strchr(open, ']') : NULL;
        if (open && close) {
            *close = '\0';
            json_object_set_new(obs, "scheduler", json_string(open + 1));
        } else {
            json_object_set_new(obs, "scheduler", json_string(buf));
        }
    }
    uint64_t lbs = 0;
    if (run->device) {
        int fd = open(j->path, O_RDONLY | O_CLOEXEC), sz = 0;
        if (fd >= 0 && ioctl(fd, BLKSSZGET, &sz) == 0 && sz > 0)
            lbs = (uint64_t)sz;
        if (fd >= 0)
            close(fd);
    } else if (queue_attr(dev, "logical_block_size", buf, sizeof buf) == 0) {
        lbs = strtoull(buf, NULL, 10);
    }
    if (lbs > 0)
        json_object_set_new(obs, "logical_block_size", json_integer((json_int_t)lbs));
    return lbs;
}
