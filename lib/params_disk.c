/* params_disk.c — the built-in disk engine and its parameters, an
 * iozone-like engine, and the path row and size check the disk tools
 * (lib/tools.def) share with it; see params.h. */
#include "params.h"

#include "errors.h"
#include "jspec.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#define KIB 1024.0
#define MIB (1024.0 * KIB)
#define TIB (1024.0 * 1024.0 * MIB)

/* Paths reach the worker's open() and, for bonnie, a tool's argv: only
 * absolute paths, and no ".." so a path cannot climb out of a directory an
 * administrator may check by prefix; at most PATH_MAX - 1 characters, the
 * longest open() takes (HV_PARAM_PATH). */
const char *hv_params_abs_path(const char *s)
{
    static const char msg[] = "must be an absolute path (starting with /) without control "
                              "characters or .. components";
    if (s[0] != '/')
        return msg;
    for (const char *p = s; *p != '\0'; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return msg;
        if (p[0] == '/' && p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == '\0'))
            return msg;
    }
    return NULL;
}

static const char *const disk_ops[] = {"seq-write", "rewrite",    "seq-read", "reread",
                                       "rand-read", "rand-write", NULL};
static const char *const sync_modes[] = {"none", "fsync", "osync", NULL};

static const struct hv_param_def disk_builtin_params[] = {
    {.name = "ops",
     .type = HV_PARAM_LIST,
     .def = "[\"seq-write\", \"rewrite\", \"seq-read\", \"reread\", \"rand-read\", "
            "\"rand-write\"]",
     .choices = disk_ops,
     .description = "the phases to run, always in the order listed here (a list, not a sweep; "
                    "iozone -i0 -i1 -i2)"},
    {.name = "block",
     .type = HV_PARAM_SIZE,
     .def = "\"256k\"",
     .min = 512,
     .max = 64 * MIB,
     .multiple = 512,
     .description = "record size of each I/O (iozone -r, bonnie++ -s size:chunk)"},
    {.name = "size",
     .type = HV_PARAM_SIZE,
     .def = "\"1g\"",
     .min = 512,
     .max = 16 * TIB,
     .description = "file size per thread, at least block (iozone -s)"},
    {.name = "direct",
     .type = HV_PARAM_BOOL,
     .def = "true",
     .description = "O_DIRECT: bypass the target's page cache (iozone -I)"},
    {.name = "sync",
     .type = HV_PARAM_ENUM,
     .def = "\"fsync\"",
     .choices = sync_modes,
     .description = "none: no flush; fsync: fsync before close, timed (iozone -e); osync: every "
                    "write O_SYNC (iozone -o, -+r)"},
    {.name = "qd",
     .type = HV_PARAM_INT,
     .def = "1",
     .min = 1,
     .max = 1024,
     .description = "I/Os in flight per thread"},
    {.name = "threads",
     .type = HV_PARAM_INT,
     .def = "1",
     .min = 1,
     .max = 256,
     .word = "per-vcpu",
     .description = "parallel workers, each on its own file of size bytes (iozone -t); "
                    "\"per-vcpu\": one per CPU of the target"},
    HV_PARAM_PATH(
        "file or block device to test (iozone -f); absent: a file in the worker's scratch "
        "directory; a block device is overwritten"),
    {.name = "seconds",
     .type = HV_PARAM_DURATION,
     .min = 1,
     .max = 86400,
     .description = "bounds each random phase by time; absent: random phases move size bytes"},
    {.name = "drop_caches",
     .type = HV_PARAM_BOOL,
     .def = "false",
     .description = "drop the target's page cache before each read phase (needs root)"},
    {.name = "warmup",
     .type = HV_PARAM_DURATION,
     .def = "0",
     .min = 0,
     .max = 3600,
     .description = "untimed I/O before each phase"},
    {0},
};

int hv_params_at_least(const json_t *params, const char *path, const char *name, const char *other,
                       json_t *errors)
{
    json_t *a = json_object_get(params, name), *b = json_object_get(params, other);
    if (!json_is_integer(a) || !json_is_integer(b) ||
        json_integer_value(a) >= json_integer_value(b))
        return 0;
    char p[512];
    hv_jpath(p, sizeof p, path, name);
    hv_errors_add(errors, p, "must be at least %s (%" JSON_INTEGER_FORMAT " bytes)", other,
                  json_integer_value(b));
    return 1;
}

/* All I/O buffers of a run together: threads x qd x block, allocated up
 * front (aligned for O_DIRECT). */
#define MAX_BUFFERS (1024.0 * MIB)

/* The I/O buffers of params with threads threads, in bytes. */
static double buffers(const json_t *params, long threads)
{
    return (double)threads * (double)hv_params_int(params, "qd") *
           (double)hv_params_int(params, "block");
}

/* size at least block; and the buffers within MAX_BUFFERS with the threads
 * given, or with one thread when they are "per-vcpu" (the target's CPUs
 * are checked by fit_disk_builtin). */
static int cross_disk_builtin(const struct hv_engine_def *e, const json_t *params, const char *path,
                              json_t *errors)
{
    int n = hv_params_at_least(params, path, "size", "block", errors);
    bool per_vcpu = json_is_string(json_object_get(params, "threads"));
    double b = buffers(params, per_vcpu ? 1 : hv_params_count(e, params, "threads", 1));
    if (b <= MAX_BUFFERS)
        return n;
    char p[512];
    hv_jpath(p, sizeof p, path, "qd");
    hv_errors_add(errors, p,
                  "threads x qd x block is %.0f MiB of I/O buffers%s; at most %.0f MiB: lower "
                  "qd, block or threads",
                  b / MIB, per_vcpu ? " with a single thread" : "", MAX_BUFFERS / MIB);
    return n + 1;
}

/* "per-vcpu" threads on the target t: the buffers within MAX_BUFFERS. */
static int fit_disk_builtin(const struct hv_engine_def *e, const json_t *params,
                            const struct hv_target_facts *t, const char *path, json_t *errors)
{
    if (!json_is_string(json_object_get(params, "threads")))
        return 0;
    long threads = hv_params_count(e, params, "threads", t->cpus);
    double b = buffers(params, threads);
    if (b <= MAX_BUFFERS)
        return 0;
    char p[512], on[200];
    hv_jpath(p, sizeof p, path, "threads");
    if (t->name != NULL)
        snprintf(on, sizeof on, "target %s", t->name);
    else
        snprintf(on, sizeof on, "this target");
    hv_errors_add(errors, p,
                  "\"per-vcpu\" is %ld threads on %s (%ld CPUs): threads x qd x block is %.0f MiB "
                  "of I/O buffers; at most %.0f MiB: lower qd or block, or give threads",
                  threads, on, t->cpus, b / MIB, MAX_BUFFERS / MIB);
    return 1;
}

static const char *const sweep_disk_builtin[] = {"qd", NULL};

static const char *const disk_builtin_metrics[] = {"disk.seq_write.mbps",
                                                   "disk.rewrite.mbps",
                                                   "disk.seq_read.mbps",
                                                   "disk.reread.mbps",
                                                   "disk.rand_read.mbps",
                                                   "disk.rand_write.mbps",
                                                   NULL};

const struct hv_engine_def hv_engine_def_disk_builtin = {
    .kind = "disk",
    .engine = "builtin",
    .summary = "iozone-like sequential and random file I/O: MB/s, IOPS, latency",
    .metrics = disk_builtin_metrics,
    .sweepable = sweep_disk_builtin,
    .params_def = disk_builtin_params,
    .cross = cross_disk_builtin,
    .fit = fit_disk_builtin,
};

const struct hv_engine_def *const hv_engine_defs_disk[] = {&hv_engine_def_disk_builtin, NULL};
