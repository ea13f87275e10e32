/* storage.c — see storage.h. */
#include "worker/engines/storage.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bytes read from a device to look for signatures: past Btrfs's at 64 KiB. */
#define SIGNATURE_SPAN (68 * 1024)

int hv_scratch_dir(char *out, size_t len, struct hv_engine_result *r)
{
    const char *s = getenv("HVBENCH_SCRATCH");
    if (s == NULL || s[0] == '\0')
        s = HV_DEFAULT_SCRATCH;
    char real[PATH_MAX];
    struct stat st;
    errno = 0;
    if (realpath(s, real) == NULL || stat(real, &st) != 0 || !S_ISDIR(st.st_mode))
        return hv_engine_fail(r,
                              "the scratch directory %s ($HVBENCH_SCRATCH, default %s) is not "
                              "a directory: %s",
                              s, HV_DEFAULT_SCRATCH, errno ? strerror(errno) : "not a directory");
    if (strlen(real) >= len)
        return hv_engine_fail(r, "the scratch directory %s has too long a path", real);
    memcpy(out, real, strlen(real) + 1);
    return 0;
}

bool hv_path_within(const char *path, const char *dir, bool or_equal)
{
    size_t n = strlen(dir);
    if (strcmp(path, dir) == 0)
        return or_equal;
    if (n == 1) /* "/" */
        return path[0] == '/';
    return strncmp(path, dir, n) == 0 && path[n] == '/';
}

bool hv_device_allowed(const char *real)
{
    const char *list = getenv("HVBENCH_DISK_DEVICES");
    if (list == NULL)
        return false;
    char *copy = strdup(list), *save = NULL;
    bool ok = false;
    for (char *e = copy ? strtok_r(copy, ":", &save) : NULL; e != NULL && !ok;
         e = strtok_r(NULL, ":", &save)) {
        char r[PATH_MAX];
        struct stat st;
        ok = realpath(e, r) != NULL && strcmp(r, real) == 0 && stat(r, &st) == 0 &&
             S_ISBLK(st.st_mode);
    }
    free(copy);
    return ok;
}

/* Signatures a device must not carry before it is written (blkid's most
 * common ones). The data the disk engine writes has no byte above 0x7f, so
 * it never forms the binary ones itself. */
static const struct {
    size_t offset;
    const char *magic;
    size_t len;
    const char *what;
} signatures[] = {
    {0, "XFSB", 4, "an XFS filesystem"},
    {0, "LUKS\xba\xbe", 6, "a LUKS volume"},
    {510, "\x55\xaa", 2, "a DOS partition table or boot sector"},
    {512, "EFI PART", 8, "a GPT partition table"},
    {512, "LABELONE", 8, "an LVM physical volume"},
    {1024, "\x10\x20\xf5\xf2", 4, "an F2FS filesystem"},
    {1080, "\x53\xef", 2, "an ext2/3/4 filesystem"},
    {4086, "SWAPSPACE2", 10, "swap space"},
    {32769, "CD001", 5, "an ISO 9660 filesystem"},
    {65600, "_BHRfS_M", 8, "a Btrfs filesystem"},
};

int hv_device_check_signatures(const char *dev, struct hv_engine_result *r)
{
    int fd = open(dev, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return hv_engine_fail(r, "cannot open %s: %s", dev, strerror(errno));
    unsigned char *buf = malloc(SIGNATURE_SPAN);
    ssize_t n = buf ? pread(fd, buf, SIGNATURE_SPAN, 0) : -1;
    int saved = buf ? errno : ENOMEM;
    close(fd);
    if (n < 0) {
        free(buf);
        return hv_engine_fail(r, "cannot read %s: %s", dev, strerror(saved));
    }
    for (size_t i = 0; i < sizeof signatures / sizeof signatures[0]; i++)
        if ((size_t)n >= signatures[i].offset + signatures[i].len &&
            memcmp(buf + signatures[i].offset, signatures[i].magic, signatures[i].len) == 0) {
            free(buf);
            return hv_engine_fail(r,
                                  "%s carries %s (signature at byte %zu); the engine only "
                                  "writes to devices without one: run `wipefs -a %s` first if "
                                  "its data may go",
                                  dev, signatures[i].what, signatures[i].offset, dev);
        }
    free(buf);
    return 0;
}
