/* fileio.h — reading a whole file or stream into memory, bounded: the one
 * reader the CLI (plans, imports), the server (migrations, web files) and
 * the worker (what a tool wrote) share; and replacing a file durably, the
 * one way the worker commits its state (credential, outbox, journal). */
#ifndef HV_FILEIO_H
#define HV_FILEIO_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

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

/** fsync of the folder dir, so that a file created, renamed or removed in
 *  it is still there (or gone) after a crash or a power loss. Returns 0,
 *  or -1 with errno set (that of the open or of the fsync). */
int hv_dir_sync(const char *dir);

/** Replaces path by the len bytes at data, atomically and durably: writes
 *  path.tmp (created with mode), fsyncs it, renames it over path and
 *  fsyncs path's folder. Returns 0 only when all four succeeded: the new
 *  content is then what a reader (and the next start, after a crash)
 *  finds. Returns -1 with errno set by the step that failed (ENOSPC for a
 *  full disk); path.tmp is then removed, and path still holds its old
 *  content, except when only the folder's fsync failed (the new content
 *  is in place but may not survive a crash). */
int hv_file_replace(const char *path, const void *data, size_t len, mode_t mode);

/** rename(from, to), then an fsync of to's folder (both must be in the
 *  same folder for the rename to be atomic). Returns 0, or -1 with errno
 *  set. */
int hv_file_rename(const char *from, const char *to);

#endif
