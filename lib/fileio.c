/* fileio.c — reading a whole file or stream into memory (fileio.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
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
