/* tool_fio.c — the fio adapter: one job built from the params, JSON
 * output; see tools.h. */
#include "worker/engines/tools.h"

#include "params.h"
#include "worker/engines/storage.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* fio lays its file out before measuring, which for a large size takes a
 * while. */
#define FIO_SLACK 3600.0

/* fio's file: a new one in the scratch directory, params.path under it,
 * or an allowed block device, into j->target. */
static int place_fio(struct hv_tool_job *j)
{
    char *target = j->target, scratch[PATH_MAX];
    const size_t len = sizeof j->target;
    if (hv_scratch_dir(scratch, sizeof scratch, j->out) != 0)
        return -1;
    const char *path = hv_params_str(j->params, "path");
    if (path != NULL && strchr(path, ':') != NULL)
        return hv_engine_fail(j->out,
                              "path %s holds a ':', which fio reads as a separator of "
                              "file names",
                              path);
    struct stat st;
    if (path != NULL && stat(path, &st) == 0) {
        if (realpath(path, target) == NULL)
            return hv_engine_fail(j->out, "cannot resolve path %s: %s", path, strerror(errno));
        if (S_ISBLK(st.st_mode) && hv_device_allowed(target))
            return hv_device_check_signatures(target, j->out);
        if (S_ISREG(st.st_mode) && hv_path_within(target, scratch, false))
            return 0;
        return hv_engine_fail(j->out,
                              "path %s is %s; fio writes only to files under the scratch "
                              "directory %s ($HVBENCH_SCRATCH) and to block devices listed in "
                              "$HVBENCH_DISK_DEVICES",
                              path,
                              S_ISBLK(st.st_mode)   ? "a block device not listed in "
                                                      "$HVBENCH_DISK_DEVICES"
                              : S_ISREG(st.st_mode) ? "outside the scratch directory"
                                                    : "neither a regular file nor a block device",
                              scratch);
    }
    if (path == NULL) {
        if (hv_tool_scratch_name(target, len, scratch, "fio", ".dat", j->out) != 0)
            return -1;
    } else {
        char dir[PATH_MAX], rdir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        *slash = '\0';
        if (realpath(dir[0] ? dir : "/", rdir) == NULL || !hv_path_within(rdir, scratch, true) ||
            slash[1] == '\0')
            return hv_engine_fail(j->out,
                                  "path %s is not a file under the scratch directory %s "
                                  "($HVBENCH_SCRATCH), where fio may create one",
                                  path, scratch);
        int w = snprintf(target, len, "%s/%s", rdir, slash + 1);
        if (w < 0 || (size_t)w >= len)
            return hv_engine_fail(j->out, "path %s is too long", path);
    }
    int fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return hv_engine_fail(j->out, "cannot create %s: %s", target, strerror(errno));
    close(fd);
    snprintf(j->remove, sizeof j->remove, "%s", target);
    return 0;
}

static int argv_fio(struct hv_tool_job *j)
{
    const json_t *p = j->params;
    struct hv_tool_args *a = &j->args;
    hv_tool_arg(a, "fio");
    hv_tool_arg(a, "--name=hvbench");
    hv_tool_arg(a, "--filename=%s", j->target);
    hv_tool_arg(a, "--rw=%s", hv_params_str(p, "rw"));
    hv_tool_arg(a, "--bs=%lld", hv_params_int(p, "bs"));
    hv_tool_arg(a, "--size=%lld", hv_params_int(p, "size"));
    hv_tool_arg(a, "--iodepth=%lld", hv_params_int(p, "iodepth"));
    hv_tool_arg(a, "--ioengine=%s", hv_params_str(p, "ioengine"));
    hv_tool_arg(a, "--direct=%d", hv_params_bool(p, "direct") ? 1 : 0);
    hv_tool_arg(a, "--numjobs=%lld", hv_params_int(p, "numjobs"));
    hv_tool_arg(a, "--group_reporting");
    hv_tool_arg(a, "--runtime=%lldms", (long long)llround(hv_params_num(p, "runtime") * 1000));
    hv_tool_arg(a, "--time_based");
    j->warmup = hv_params_num(p, "warmup");
    if (j->warmup > 0)
        hv_tool_arg(a, "--ramp_time=%lldms", (long long)llround(j->warmup * 1000));
    /* fio's steady-state window spans the whole measured time, so its
     * per-second figures cover all of it, and fio (which ends a job once
     * the window is steady) cannot stop before the runtime is over: the
     * window fills only then, and a runtime of a fraction of a second
     * more never fills it. The limit is the SNIA slope test over that
     * window: the fitted line moves by at most 10% of the mean. A runtime of
     * a second or less has no window and no samples. */
    long long window = (long long)ceil(hv_params_num(p, "runtime") - 1e-9);
    /* A one-interval window has no slope (fio then prints "nan"). */
    if (window >= 2) {
        hv_tool_arg(a, "--steadystate=iops_slope:%g%%", 10.0 / (double)(window - 1));
        hv_tool_arg(a, "--steadystate_duration=%lld", window);
    }
    hv_tool_arg(a, "--output-format=json");
    j->timeout = j->warmup + hv_params_num(p, "runtime") + FIO_SLACK;
    return 0;
}

const struct hv_tool hv_tool_fio = {
    .display = "fio",
    .program = "fio",
    .version_flag = "--version",
    .place = place_fio,
    .argv = argv_fio,
};
