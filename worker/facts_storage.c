/* facts_storage.c — the block devices of a host and what is mounted on
 * them; see facts.h.
 *
 * Three sources: sysfs (ROOT/sys/block/NAME/{dev,size,queue/rotational},
 * the partitions below it, the holders of either), a mountinfo file
 * (proc(5)) and the processes of ROOT/proc (PostgreSQL postmasters and
 * the folders they run in). A mount is on a disk when its device number is the disk's, a
 * partition's or a holder's (LVM, dm-crypt), or, for file systems that
 * report an anonymous device number (btrfs), when its source is
 * /dev/NAME of one of them. Every list is bounded: a machine past a bound
 * is reported in part, never refused. */
#include "worker/facts.h"

#include "fileio.h"

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MOUNTINFO_MAX_BYTES (4u << 20) /* a host with 10,000 mounts has ~1.5 MiB */
#define MOUNTS_MAX          4096       /* mountinfo entries read */
#define DEVICES_MAX         256        /* block devices listed */
#define PARTS_MAX           128        /* partitions and holders of one disk */
#define DISK_MOUNTS_MAX     64         /* mount points listed per disk */
#define NAME_MAX_LEN        64         /* a kernel block device name */
#define DATABASES_MAX       32         /* PostgreSQL data directories listed */
#define PROCS_MAX           65536      /* ROOT/proc entries looked at */

/* Copies the space-delimited field at *p into out (len bytes), undoing
 * mountinfo's octal escapes (\040 space, \011 tab, \012 newline, \134
 * backslash), and moves *p past it. Returns false when the field is empty
 * or too long. */
static bool take_field(const char **p, char *out, size_t len)
{
    const char *s = *p;
    while (*s == ' ')
        s++;
    size_t n = 0;
    bool ok = true;
    while (*s != '\0' && *s != ' ' && *s != '\n') {
        char c = *s++;
        if (c == '\\' && s[0] >= '0' && s[0] <= '3' && s[1] >= '0' && s[1] <= '7' && s[2] >= '0' &&
            s[2] <= '7') {
            c = (char)((s[0] - '0') * 64 + (s[1] - '0') * 8 + (s[2] - '0'));
            s += 3;
        }
        if (n + 1 < len)
            out[n++] = c;
        else
            ok = false;
    }
    out[n] = '\0';
    *p = s;
    return ok && n > 0;
}

/* Whether s is "MAJOR:MINOR", decimal. */
static bool is_devno(const char *s)
{
    unsigned maj, min;
    int used = 0;
    return sscanf(s, "%u:%u%n", &maj, &min, &used) == 2 && s[used] == '\0';
}

/* One mountinfo line into a new {"dev", "mount", "fstype", "source"}, or
 * NULL when it is not one. */
static json_t *mount_entry(const char *line)
{
    char id[24], parent[24], dev[32], root[PATH_MAX], mount[PATH_MAX], opts[1024], field[PATH_MAX];
    const char *p = line;
    if (!take_field(&p, id, sizeof id) || !take_field(&p, parent, sizeof parent) ||
        !take_field(&p, dev, sizeof dev) || !is_devno(dev) || !take_field(&p, root, sizeof root) ||
        !take_field(&p, mount, sizeof mount) || !take_field(&p, opts, sizeof opts))
        return NULL;
    /* Optional fields ("shared:1", "master:2") up to the lone "-". */
    bool sep = false;
    for (int i = 0; i < 16 && !sep; i++) {
        if (!take_field(&p, field, sizeof field))
            return NULL;
        sep = strcmp(field, "-") == 0;
    }
    char fstype[64], source[PATH_MAX];
    if (!sep || !take_field(&p, fstype, sizeof fstype))
        return NULL;
    if (!take_field(&p, source, sizeof source))
        snprintf(source, sizeof source, "none");
    return json_pack("{s:s, s:s, s:s, s:s}", "dev", dev, "mount", mount, "fstype", fstype, "source",
                     source);
}

json_t *hv_facts_parse_mountinfo(const char *text)
{
    json_t *out = json_array();
    if (out == NULL || text == NULL)
        return out;
    const char *line = text;
    while (*line != '\0' && json_array_size(out) < MOUNTS_MAX) {
        const char *end = strchr(line, '\n');
        size_t n = end != NULL ? (size_t)(end - line) : strlen(line);
        /* A line longer than any field allows is not one. */
        if (n < 4 * PATH_MAX) {
            char *copy = strndup(line, n);
            json_t *e = copy != NULL ? mount_entry(copy) : NULL;
            free(copy);
            if (e != NULL)
                json_array_append_new(out, e);
        }
        if (end == NULL)
            break;
        line = end + 1;
    }
    return out;
}

/* The first line of ROOT/sys/block/REL into buf, without its newline. */
static bool sys_line(const char *root, const char *rel, char *buf, size_t len)
{
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/sys/block/%s", root, rel) >= sizeof path)
        return false;
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return false;
    bool ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    return ok && buf[0] != '\0';
}

/* A name the kernel could give a block device: no '/', not "." or "..". */
static bool plain_name(const char *n)
{
    return n[0] != '.' && strchr(n, '/') == NULL && strlen(n) < NAME_MAX_LEN;
}

/* One device of a disk: its name and device number. */
struct member {
    char name[NAME_MAX_LEN];
    char dev[32];
    bool partition; /* else the disk itself or a holder */
};

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct member *)a)->name, ((const struct member *)b)->name);
}

/* Adds the holders of ROOT/sys/block/REL/holders (dm-0 ...) to m[*n]. */
static void add_holders(const char *root, const char *rel, struct member *m, size_t *n)
{
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/sys/block/%s/holders", root, rel) >= sizeof path)
        return;
    DIR *d = opendir(path);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && *n < PARTS_MAX) {
        char dev_rel[2 * NAME_MAX_LEN + 8];
        if (!plain_name(e->d_name))
            continue;
        snprintf(dev_rel, sizeof dev_rel, "%s/dev", e->d_name);
        if (sys_line(root, dev_rel, m[*n].dev, sizeof m[*n].dev) && is_devno(m[*n].dev)) {
            snprintf(m[*n].name, sizeof m[*n].name, "%s", e->d_name);
            (*n)++;
        }
    }
    closedir(d);
}

/* The disk, its partitions (a folder of the disk's holding a "partition"
 * file) and the holders of either into m; returns how many, the disk
 * first. */
static size_t disk_members(const char *root, const char *disk, const char *dev, struct member *m)
{
    size_t n = 0;
    snprintf(m[n].name, sizeof m[n].name, "%s", disk);
    snprintf(m[n].dev, sizeof m[n].dev, "%s", dev);
    n++;
    size_t parts_from = n;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/sys/block/%s", root, disk);
    DIR *d = opendir(path);
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL && n < PARTS_MAX) {
        char rel[2 * NAME_MAX_LEN + 16], buf[32];
        if (!plain_name(e->d_name))
            continue;
        snprintf(rel, sizeof rel, "%s/%s/partition", disk, e->d_name);
        if (!sys_line(root, rel, buf, sizeof buf))
            continue;
        snprintf(rel, sizeof rel, "%s/%s/dev", disk, e->d_name);
        if (sys_line(root, rel, m[n].dev, sizeof m[n].dev) && is_devno(m[n].dev)) {
            snprintf(m[n].name, sizeof m[n].name, "%s", e->d_name);
            m[n++].partition = true;
        }
    }
    if (d != NULL)
        closedir(d);
    size_t parts_to = n;
    qsort(m + parts_from, parts_to - parts_from, sizeof *m, by_name);
    add_holders(root, disk, m, &n);
    for (size_t i = parts_from; i < parts_to; i++) {
        char rel[2 * NAME_MAX_LEN + 8];
        snprintf(rel, sizeof rel, "%s/%s", disk, m[i].name);
        add_holders(root, rel, m, &n);
    }
    return n;
}

/* Whether mount entry e is on one of the n members: by device number, or
 * by a source /dev/NAME naming one. */
static bool on_members(const json_t *e, const struct member *m, size_t n)
{
    const char *dev = json_string_value(json_object_get(e, "dev"));
    const char *src = json_string_value(json_object_get(e, "source"));
    const char *base = src != NULL && strncmp(src, "/dev/", 5) == 0 ? src + 5 : NULL;
    for (size_t i = 0; i < n; i++)
        if ((dev != NULL && strcmp(dev, m[i].dev) == 0) ||
            (base != NULL && strcmp(base, m[i].name) == 0))
            return true;
    return false;
}

/* One disk's entry, or NULL when it has no size (an unused loop or zram
 * device). */
static json_t *disk_json(const char *root, const char *name, const json_t *mounts)
{
    char dev[32], size[32], rot[8];
    char rel[NAME_MAX_LEN + 32];
    snprintf(rel, sizeof rel, "%s/dev", name);
    if (!sys_line(root, rel, dev, sizeof dev) || !is_devno(dev))
        return NULL;
    snprintf(rel, sizeof rel, "%s/size", name);
    char *end;
    long long sectors = sys_line(root, rel, size, sizeof size) ? strtoll(size, &end, 10) : 0;
    if (sectors <= 0)
        return NULL;
    json_t *d = json_pack("{s:s, s:s, s:I}", "name", name, "dev", dev, "size_bytes",
                          (json_int_t)sectors * 512);
    snprintf(rel, sizeof rel, "%s/queue/rotational", name);
    json_object_set_new(d, "rotational",
                        sys_line(root, rel, rot, sizeof rot) ? json_boolean(strcmp(rot, "1") == 0)
                                                             : json_null());
    struct member *m = calloc(PARTS_MAX, sizeof *m);
    json_t *parts = json_array(), *holders = json_array(), *on = json_array();
    size_t n = m != NULL ? disk_members(root, name, dev, m) : 0;
    for (size_t i = 1; i < n; i++)
        json_array_append_new(m[i].partition ? parts : holders, json_string(m[i].name));
    size_t i;
    const json_t *e;
    json_array_foreach(mounts, i, e)
    {
        if (json_array_size(on) >= DISK_MOUNTS_MAX)
            break;
        if (on_members(e, m, n))
            json_array_append(on, json_object_get(e, "mount"));
    }
    free(m);
    json_object_set_new(d, "partitions", parts);
    json_object_set_new(d, "holders", holders);
    json_object_set_new(d, "mounts", on);
    return d;
}

/* The mount entry holding path (the longest mount point that is path or
 * one of its parents; the last mounted of equals, as the kernel resolves
 * them), or NULL. */
static const json_t *mount_of(const json_t *mounts, const char *path)
{
    const json_t *best = NULL;
    size_t best_len = 0, i;
    const json_t *e;
    json_array_foreach(mounts, i, e)
    {
        const char *mp = json_string_value(json_object_get(e, "mount"));
        size_t n = strlen(mp);
        bool under = strcmp(mp, "/") == 0 ||
                     (strncmp(path, mp, n) == 0 && (path[n] == '/' || path[n] == '\0'));
        if (under && n >= best_len) {
            best = e;
            best_len = n;
        }
    }
    return best;
}

/* {"path", "mount", "device"} of a folder whose resolved path is real:
 * mount the mount point holding real, or null; device the name of the
 * first listed disk whose mounts hold that mount, else null. */
static json_t *place_json(const char *path, const char *real, const json_t *mounts,
                          const json_t *disks)
{
    const json_t *m = mount_of(mounts, real);
    const char *mp = json_string_value(json_object_get(m, "mount"));
    json_t *out = json_pack("{s:s}", "path", path);
    json_object_set_new(out, "mount", mp != NULL ? json_string(mp) : json_null());
    const char *device = NULL;
    size_t i;
    const json_t *d;
    json_array_foreach(disks, i, d)
    {
        size_t k;
        const json_t *on;
        json_array_foreach(json_object_get(d, "mounts"), k, on)
        {
            if (device == NULL && mp != NULL && strcmp(json_string_value(on), mp) == 0)
                device = json_string_value(json_object_get(d, "name"));
        }
    }
    json_object_set_new(out, "device", device != NULL ? json_string(device) : json_null());
    return out;
}

/* place_json of the state folder. The folder may not exist yet (the
 * worker makes it): its nearest existing parent counts. */
static json_t *state_dir_json(const char *state_dir, const json_t *mounts, const json_t *disks)
{
    char real[PATH_MAX], probe[PATH_MAX];
    snprintf(probe, sizeof probe, "%s", state_dir);
    while (realpath(probe, real) == NULL) {
        char *slash = strrchr(probe, '/');
        if (slash == NULL || slash == probe) {
            snprintf(real, sizeof real, "/");
            break;
        }
        *slash = '\0';
    }
    return place_json(state_dir, real, mounts, disks);
}

/* The command name and parent of process pid from ROOT/proc/PID/stat
 * ("PID (COMM) STATE PPID ...", proc(5); COMM may hold spaces and
 * parentheses: it ends at the last ')'). False when it cannot be read. */
static bool proc_stat(const char *root, const char *pid, char *comm, size_t len, long *ppid)
{
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/proc/%s/stat", root, pid) >= sizeof path)
        return false;
    size_t n;
    char *buf = hv_read_file(path, 512, HV_READ_TRUNCATE, &n);
    if (buf == NULL)
        return false;
    const char *open = strchr(buf, '('), *close = strrchr(buf, ')');
    char state;
    bool ok = open != NULL && close != NULL && close > open &&
              sscanf(close + 1, " %c %ld", &state, ppid) == 2;
    if (ok)
        snprintf(comm, len, "%.*s", (int)(close - open - 1), open + 1);
    free(buf);
    return ok;
}

static bool is_postgres(const char *comm)
{
    return strcmp(comm, "postgres") == 0 || strcmp(comm, "postmaster") == 0;
}

/* Whether process pid is a PostgreSQL postmaster: called postgres (or
 * postmaster), its parent not (a backend's parent is its postmaster). */
static bool is_postmaster(const char *root, const char *pid)
{
    char comm[64], parent[24];
    long ppid;
    if (!proc_stat(root, pid, comm, sizeof comm, &ppid) || !is_postgres(comm))
        return false;
    snprintf(parent, sizeof parent, "%ld", ppid);
    return ppid <= 0 || !proc_stat(root, parent, comm, sizeof comm, &ppid) || !is_postgres(comm);
}

static int by_path(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* place_json of the data directory of each PostgreSQL postmaster under
 * ROOT/proc (the folder it runs in, ROOT/proc/PID/cwd, as the postmaster
 * chdirs to it), by path, at most DATABASES_MAX. A process whose files
 * cannot be read (another user's, without the right to) is left out. */
static json_t *databases_json(const char *root, const json_t *mounts, const json_t *disks)
{
    json_t *out = json_array();
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/proc", root);
    DIR *d = opendir(path);
    if (d == NULL || out == NULL) {
        if (d != NULL)
            closedir(d);
        return out;
    }
    char *dirs[DATABASES_MAX];
    size_t n = 0, seen = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < DATABASES_MAX && seen++ < PROCS_MAX) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9' ||
            strspn(e->d_name, "0123456789") != strlen(e->d_name) || strlen(e->d_name) > 16 ||
            !is_postmaster(root, e->d_name))
            continue;
        char link[PATH_MAX], cwd[PATH_MAX];
        snprintf(link, sizeof link, "%s/proc/%s/cwd", root, e->d_name);
        ssize_t len = readlink(link, cwd, sizeof cwd - 1);
        if (len <= 0 || cwd[0] != '/')
            continue;
        cwd[len] = '\0';
        /* A removed folder: no disk holds it any more. */
        if (len > 10 && strcmp(cwd + len - 10, " (deleted)") == 0)
            continue;
        if ((dirs[n] = strdup(cwd)) != NULL)
            n++;
    }
    closedir(d);
    qsort(dirs, n, sizeof *dirs, by_path);
    for (size_t i = 0; i < n; i++) {
        json_array_append_new(out, place_json(dirs[i], dirs[i], mounts, disks));
        free(dirs[i]);
    }
    return out;
}

/* The disk names under ROOT/sys/block, sorted (readdir's order is the
 * file system's), at most DEVICES_MAX, into a new array (free it) of *n;
 * NULL when there is no such folder. */
static struct member *disk_names(const char *root, size_t *n)
{
    *n = 0;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/sys/block", root);
    DIR *d = opendir(path);
    if (d == NULL)
        return NULL;
    struct member *names = calloc(DEVICES_MAX, sizeof *names);
    struct dirent *e;
    while (names != NULL && (e = readdir(d)) != NULL && *n < DEVICES_MAX)
        if (plain_name(e->d_name))
            snprintf(names[(*n)++].name, NAME_MAX_LEN, "%s", e->d_name);
    closedir(d);
    if (names != NULL)
        qsort(names, *n, sizeof *names, by_name);
    return names;
}

void hv_facts_add_storage(json_t *facts, const char *root, const char *mountinfo,
                          const char *state_dir)
{
    if (root == NULL || strcmp(root, "/") == 0)
        root = "";
    size_t len = 0;
    char *text = hv_read_file(mountinfo, MOUNTINFO_MAX_BYTES, HV_READ_TRUNCATE, &len);
    json_t *mounts = hv_facts_parse_mountinfo(text);
    free(text);
    json_t *disks = json_array();
    size_t n;
    struct member *names = disk_names(root, &n);
    for (size_t i = 0; i < n; i++) {
        json_t *d = disk_json(root, names[i].name, mounts);
        if (d != NULL)
            json_array_append_new(disks, d);
    }
    free(names);
    json_t *storage = json_pack("{s:O}", "block_devices", disks);
    if (state_dir != NULL && storage != NULL)
        json_object_set_new(storage, "state_dir", state_dir_json(state_dir, mounts, disks));
    if (storage != NULL)
        json_object_set_new(storage, "databases", databases_json(root, mounts, disks));
    json_decref(disks);
    json_decref(mounts);
    if (storage != NULL)
        json_object_set_new(facts, "storage", storage);
}
