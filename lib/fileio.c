/* fileio.c — reading a whole file or stream into memory, replacing a
 * file durably (fileio.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"

char *hv_read_stream(FILE *f, size_t max, int flags, size_t *len)
{
    size_t cap = 8192, n = 0;
    char *buf = malloc(cap);
    if (buf == NULL)
        return NULL;
    for (;;) {
        if (n == max) {
            /* Exactly max bytes is fine; one more is not. */
            if ((flags & HV_READ_TRUNCATE) || fgetc(f) == EOF)
                break;
            free(buf);
            errno = EFBIG;
            return NULL;
        }
        if (cap - n < 2) {
            size_t bigger_cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
            char *bigger = realloc(buf, bigger_cap);
            if (bigger == NULL) {
                free(buf);
                errno = ENOMEM;
                return NULL;
            }
            buf = bigger;
            cap = bigger_cap;
        }
        size_t room = cap - n - 1;
        if (room > max - n)
            room = max - n;
        size_t got = fread(buf + n, 1, room, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) {
                int saved = errno;
                free(buf);
                errno = saved != 0 ? saved : EIO;
                return NULL;
            }
            break;
        }
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

char *hv_read_file(const char *path, size_t max, int flags, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | ((flags & HV_READ_NOFOLLOW) ? O_NOFOLLOW : 0));
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "rb");
    if (f == NULL) {
        int saved = errno;
        close(fd);
        errno = saved;
        return NULL;
    }
    char *buf = hv_read_stream(f, max, flags, len);
    int saved = errno;
    fclose(f);
    errno = saved;
    return buf;
}

int hv_dir_sync(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}

/* The folder path is in, written into buf: "." for a bare name. */
static int folder_of(const char *path, char *buf, size_t len)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash == NULL ? 0 : slash == path ? 1 : (size_t)(slash - path);
    if (n + 1 > len) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (n == 0)
        memcpy(buf, ".", 2);
    else {
        memcpy(buf, path, n);
        buf[n] = '\0';
    }
    return 0;
}

/* Writes all len bytes at data to fd, through short writes and EINTR. */
static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, data, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        data += w;
        len -= (size_t)w;
    }
    return 0;
}

int hv_file_rename(const char *from, const char *to)
{
    char dir[4096];
    if (folder_of(to, dir, sizeof dir) != 0 || rename(from, to) != 0)
        return -1;
    return hv_dir_sync(dir);
}

int hv_file_replace(const char *path, const void *data, size_t len, mode_t mode)
{
    char tmp[4096];
    size_t n = strlen(path);
    if (n + sizeof ".tmp" > sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp", sizeof ".tmp");
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
    if (fd < 0)
        return -1;
    int rc = write_all(fd, data, len);
    if (rc == 0 && fsync(fd) != 0)
        rc = -1;
    int saved = errno;
    if (close(fd) != 0 && rc == 0) {
        rc = -1;
        saved = errno;
    }
    if (rc == 0 && hv_file_rename(tmp, path) == 0)
        return 0;
    if (rc == 0)
        saved = errno;
    unlink(tmp); /* gone after a rename, so only a failed write leaves it */
    errno = saved;
    return -1;
}
