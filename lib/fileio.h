/* fileio.h — reading a whole file or stream into memory, bounded: the one
 * reader the CLI (plans, imports), the server (migrations, web files) and
 * the worker (what a tool wrote) share. */
#ifndef HV_FILEIO_H
#define HV_FILEIO_H

#include <stddef.h>
#include <stdio.h>

enum {
    HV_READ_TRUNCATE = 1, /**< past max, keep the first max bytes (else EFBIG) */
    HV_READ_NOFOLLOW = 2, /**< refuse a symbolic link as the last component */
};

/** Reads f from its position to its end into a malloc'd buffer with a NUL
 *  after the data; *len is the data's length (which may hold NULs). At most
 *  max bytes: past that the read fails with EFBIG, or with HV_READ_TRUNCATE
 *  in flags stops there. Returns the buffer, or NULL with errno set (ENOMEM,
 *  EFBIG, or the read's error). */
char *hv_read_stream(FILE *f, size_t max, int flags, size_t *len);

/** Opens path for reading (close-on-exec; HV_READ_NOFOLLOW as in flags)
 *  and reads it as hv_read_stream() does. Returns the buffer, or NULL with
 *  errno set (that of the open included). */
char *hv_read_file(const char *path, size_t max, int flags, size_t *len);

#endif
