/* storage.h — where disk engines may write, one policy for the built-in
 * disk engine and the tools that write (fio, bonnie++).
 *
 * Files: only in the scratch directory, $HVBENCH_SCRATCH (default
 * /var/tmp). Block devices: only those an administrator listed in
 * $HVBENCH_DISK_DEVICES (colon-separated), and only while they carry no
 * filesystem, partition table or volume signature. A plan never widens
 * this: it can only name paths inside it. */
#ifndef HV_WORKER_ENGINES_STORAGE_H
#define HV_WORKER_ENGINES_STORAGE_H

#include "worker/engines/engine.h"

#include <stdbool.h>
#include <stddef.h>

/** The scratch directory when $HVBENCH_SCRATCH is unset or empty. */
#define HV_DEFAULT_SCRATCH "/var/tmp"

/** Writes the resolved scratch directory into out (len bytes, PATH_MAX
 *  is enough). Returns 0, or -1 with r->error saying it is not a
 *  directory. */
int hv_scratch_dir(char *out, size_t len, struct hv_engine_result *r);

/** Whether the resolved path is below the resolved dir (or equal to it,
 *  when or_equal). */
bool hv_path_within(const char *path, const char *dir, bool or_equal);

/** Whether the resolved path real is a block device listed (after
 *  resolving each entry) in $HVBENCH_DISK_DEVICES. */
bool hv_device_allowed(const char *real);

/** Reads the start of block device dev and fails when it carries a known
 *  signature (ext4, XFS, Btrfs, F2FS, LUKS, LVM, swap, ISO 9660, a GPT or
 *  DOS partition table): returns 0, or -1 with r->error naming it and how
 *  to clear it. */
int hv_device_check_signatures(const char *dev, struct hv_engine_result *r);

#endif
