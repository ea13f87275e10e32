/* params.c — engines and their parameter tables; see params.h.
 *
 * A parameter is a row; checking is one walk over the rows with one
 * normaliser per type. Only what a row cannot say (one param bounded by
 * another) lives in an engine's cross-field hook, which runs after every
 * row passed so it sees normalised values. */
#include "params.h"

#include "errors.h"
#include "jspec.h"
#include "units.h"

#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define KIB 1024.0
#define MIB (1024.0 * KIB)
#define GIB (1024.0 * MIB)
#define TIB (1024.0 * GIB)

/* ---- string formats ---------------------------------------------------- */

/* Paths reach the worker's open() and, for bonnie, a tool's argv: only
 * absolute paths, and no ".." so a path cannot climb out of a directory an
 * administrator may check by prefix. */
static const char *abs_path(const char *s)
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

/* A custom benchmark is a name the worker looks up in what its
 * administrator declared (e.g. a file of that name in a directory), so it
 * must not be able to name anything else: no '/', no leading '.'. */
const char *hv_params_bench_name_error(const char *s)
{
    static const char msg[] = "must use only a-z, 0-9, '_', '.' and '-', and not start with '.'";
    if (s[0] == '.')
        return msg;
    for (const char *p = s; *p != '\0'; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' ||
              *p == '-'))
            return msg;
    return NULL;
}

/* ---- the parameter tables ---------------------------------------------- */

static const char *const disk_ops[] = {"seq-write", "rewrite",    "seq-read", "reread",
                                       "rand-read", "rand-write", NULL};
static const char *const sync_modes[] = {"none", "fsync", "osync", NULL};
static const char *const net_modes[] = {"stream", "rr", NULL};
static const char *const fio_rw[] = {"read",      "write",  "randread", "randwrite",
                                     "readwrite", "randrw", NULL};
static const char *const fio_engines[] = {"libaio", "io_uring", "psync", "sync", NULL};
static const char *const sysbench_tests[] = {"cpu", "memory", NULL};
static const char *const stressors[] = {"cpu", "matrix", "vm", "cache", "memcpy", NULL};

/* Rows shared by several engines. */
#define PEER                                                                                       \
    {                                                                                              \
        .name = "peer", .type = HV_PARAM_TARGET, .max_len = 128,                                   \
        .description = "the target that runs the server side; \"host\" is the plan's host; "       \
                       "a plan without one cannot run (422)"                                       \
    }
#define NET_STREAMS                                                                                \
    {                                                                                              \
        .name = "streams", .type = HV_PARAM_INT, .def = "1", .min = 1, .max = 128,                 \
        .description = "parallel TCP connections (iperf -P)"                                       \
    }
#define NET_WINDOW                                                                                 \
    {                                                                                              \
        .name = "window", .type = HV_PARAM_SIZE, .min = 4 * KIB, .max = 64 * MIB,                  \
        .description = "socket buffer size at both ends (iperf -w); absent: the system's "         \
                       "autotuning"                                                                \
    }
#define NET_SECONDS                                                                                \
    {                                                                                              \
        .name = "seconds", .type = HV_PARAM_DURATION, .def = "10", .min = 1, .max = 3600,          \
        .description = "measured time (iperf -t)"                                                  \
    }
#define PATH(what)                                                                                 \
    {                                                                                              \
        .name = "path", .type = HV_PARAM_STRING, .max_len = 4096, .format = abs_path,              \
        .description = what                                                                        \
    }

static const struct hv_param_def cpu_builtin_params[] = {
    {.name = "copies",
     .type = HV_PARAM_INT,
     .def = "1",
     .min = 1,
     .max = 1024,
     .word = "per-vcpu",
     .description = "parallel copies of the kernel suite; \"per-vcpu\": one per CPU of the target"},
    {.name = "seconds",
     .type = HV_PARAM_DURATION,
     .def = "10",
     .min = 1,
     .max = 86400,
     .description = "how long each copy runs"},
    {.name = "pin", .type = HV_PARAM_BOOL, .def = "false", .description = "pin copy i to CPU i"},
    {0},
};

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
    PATH("file or block device to test (iozone -f); absent: a file in the worker's scratch "
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

static const struct hv_param_def net_builtin_params[] = {
    PEER,
    {.name = "mode",
     .type = HV_PARAM_ENUM,
     .def = "\"stream\"",
     .choices = net_modes,
     .description = "stream: TCP throughput; rr: request/response latency"},
    NET_STREAMS,
    NET_WINDOW,
    NET_SECONDS,
    {.name = "msg_size",
     .type = HV_PARAM_SIZE,
     .def = "\"128k\"",
     .min = 1,
     .max = MIB,
     .description = "bytes per send (stream, iperf -l) or per request and response (rr: 1 is "
                    "the classic)"},
    {.name = "reverse",
     .type = HV_PARAM_BOOL,
     .def = "false",
     .description = "the peer sends, the target receives (iperf3 -R)"},
    {.name = "warmup",
     .type = HV_PARAM_DURATION,
     .def = "2",
     .min = 0,
     .max = 3600,
     .description = "untimed traffic before measuring, past TCP slow start"},
    {0},
};

static const struct hv_param_def disk_fio_params[] = {
    {.name = "rw",
     .type = HV_PARAM_ENUM,
     .required = true,
     .choices = fio_rw,
     .description = "I/O pattern (fio --rw)"},
    {.name = "bs",
     .type = HV_PARAM_SIZE,
     .def = "\"4k\"",
     .min = 512,
     .max = 64 * MIB,
     .description = "block size (fio --bs)"},
    {.name = "size",
     .type = HV_PARAM_SIZE,
     .def = "\"1g\"",
     .min = 512,
     .max = 16 * TIB,
     .description = "bytes per job, at least bs (fio --size)"},
    {.name = "iodepth",
     .type = HV_PARAM_INT,
     .def = "1",
     .min = 1,
     .max = 1024,
     .description = "I/Os in flight per job (fio --iodepth)"},
    {.name = "ioengine",
     .type = HV_PARAM_ENUM,
     .def = "\"libaio\"",
     .choices = fio_engines,
     .description = "fio --ioengine"},
    {.name = "direct",
     .type = HV_PARAM_BOOL,
     .def = "true",
     .description = "O_DIRECT (fio --direct=1)"},
    {.name = "numjobs",
     .type = HV_PARAM_INT,
     .def = "1",
     .min = 1,
     .max = 256,
     .description = "parallel jobs (fio --numjobs, reported as one group)"},
    {.name = "runtime",
     .type = HV_PARAM_DURATION,
     .def = "30",
     .min = 1,
     .max = 86400,
     .description = "measured time (fio --runtime --time_based)"},
    PATH("file or block device (fio --filename); absent: a file in the worker's scratch "
         "directory; a block device is overwritten"),
    {.name = "warmup",
     .type = HV_PARAM_DURATION,
     .def = "2",
     .min = 0,
     .max = 3600,
     .description = "I/O before the measured time, not counted (fio --ramp_time)"},
    {0},
};

static const struct hv_param_def net_iperf3_params[] = {
    PEER,
    NET_STREAMS,
    NET_WINDOW,
    NET_SECONDS,
    {.name = "reverse",
     .type = HV_PARAM_BOOL,
     .def = "false",
     .description = "the peer sends, the target receives (iperf3 -R)"},
    {.name = "udp",
     .type = HV_PARAM_BOOL,
     .def = "false",
     .description = "UDP instead of TCP (iperf3 -u)"},
    {.name = "warmup",
     .type = HV_PARAM_DURATION,
     .def = "2",
     .min = 0,
     .max = 3600,
     .description = "untimed traffic before the measured time, whole seconds (iperf3 --omit)"},
    {0},
};

static const struct hv_param_def net_iperf_params[] = {
    PEER,
    NET_STREAMS,
    NET_WINDOW,
    NET_SECONDS,
    {.name = "warmup",
     .type = HV_PARAM_DURATION,
     .def = "2",
     .min = 0,
     .max = 3600,
     .description = "whole seconds of traffic before the measured time (iperf -t warmup + "
                    "seconds); their -i 1 intervals are left out of the samples"},
    {0},
};

static const struct hv_param_def cpu_sysbench_params[] = {
    {.name = "test",
     .type = HV_PARAM_ENUM,
     .def = "\"cpu\"",
     .choices = sysbench_tests,
     .description = "sysbench test name"},
    {.name = "threads",
     .type = HV_PARAM_INT,
     .def = "1",
     .min = 1,
     .max = 1024,
     .word = "per-vcpu",
     .description = "sysbench --threads; \"per-vcpu\": one per CPU of the target"},
    {.name = "seconds",
     .type = HV_PARAM_DURATION,
     .def = "10",
     .min = 1,
     .max = 86400,
     .description = "sysbench --time"},
    {.name = "max_prime",
     .type = HV_PARAM_INT,
     .def = "20000",
     .min = 3,
     .max = 100000000,
     .description = "sysbench --cpu-max-prime (test cpu)"},
    {.name = "warmup",
     .type = HV_PARAM_DURATION,
     .def = "2",
     .min = 0,
     .max = 3600,
     .description = "whole seconds run before the measured time, not counted (sysbench "
                    "--report-checkpoints, --time warmup + seconds)"},
    {0},
};

static const struct hv_param_def cpu_stress_ng_params[] = {
    {.name = "stressor",
     .type = HV_PARAM_ENUM,
     .def = "\"cpu\"",
     .choices = stressors,
     .description = "the stressor, run as stress-ng --STRESSOR N --metrics"},
    {.name = "workers",
     .type = HV_PARAM_INT,
     .def = "1",
     .min = 0,
     .max = 1024,
     .word = "per-vcpu",
     .description = "stressor instances (0: stress-ng's one per online CPU); \"per-vcpu\": one "
                    "per CPU of the target"},
    {.name = "seconds",
     .type = HV_PARAM_DURATION,
     .def = "10",
     .min = 1,
     .max = 86400,
     .description = "stress-ng --timeout"},
    {0},
};

static const struct hv_param_def disk_bonnie_params[] = {
    {.name = "size",
     .type = HV_PARAM_SIZE,
     .min = MIB,
     .max = 16 * TIB,
     .multiple = 1048576,
     .description = "file size in whole MiB (bonnie++ -s); absent: bonnie++'s twice the RAM"},
    {.name = "ram_mb",
     .type = HV_PARAM_INT,
     .min = 1,
     .max = 16777216,
     .description = "RAM bonnie++ assumes, in MiB (bonnie++ -r); absent: the target's"},
    PATH("directory to test in (bonnie++ -d); absent: the worker's scratch directory"),
    {.name = "fast",
     .type = HV_PARAM_BOOL,
     .def = "false",
     .description = "skip the per-character tests (bonnie++ -f)"},
    {0},
};

/* A plan may only name a site benchmark; the command line stays with the
 * worker's administrator, so no member here may carry arguments. */
static const struct hv_param_def custom_params[] = {
    {.name = "name",
     .type = HV_PARAM_STRING,
     .required = true,
     .max_len = 64,
     .format = hv_params_bench_name_error,
     .description = "the site benchmark, as the worker's administrator declared it"},
    {0},
};

static const char *const sweep_disk_builtin[] = {"qd", NULL};
static const char *const sweep_streams[] = {"streams", NULL};
static const char *const sweep_fio[] = {"bs", "iodepth", NULL};

/* ---- cross-field checks ------------------------------------------------ */

/* Appends "must be at least <other> (...)" at path/name when params.name <
 * params.other; both are normalised sizes or absent. */
static int at_least(json_t *params, const char *path, const char *name, const char *other,
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

static int cross_disk_builtin(json_t *params, const char *path, json_t *errors)
{
    return at_least(params, path, "size", "block", errors);
}

static int cross_disk_fio(json_t *params, const char *path, json_t *errors)
{
    return at_least(params, path, "size", "bs", errors);
}

/* bonnie++ refuses a file smaller than twice the RAM it assumes; say so
 * at submission instead of in a failed job. */
static int cross_disk_bonnie(json_t *params, const char *path, json_t *errors)
{
    json_t *size = json_object_get(params, "size"), *ram = json_object_get(params, "ram_mb");
    if (size == NULL || ram == NULL ||
        (double)json_integer_value(size) >= 2.0 * MIB * (double)json_integer_value(ram))
        return 0;
    char p[512];
    hv_jpath(p, sizeof p, path, "size");
    hv_errors_add(errors, p, "must be at least twice ram_mb (%" JSON_INTEGER_FORMAT " MiB)",
                  2 * json_integer_value(ram));
    return 1;
}

/* ---- the engine table -------------------------------------------------- */

/* Index of each engine in the table, so each engine's check function can
 * name its own row. */
enum engine_id {
    CPU_BUILTIN,
    DISK_BUILTIN,
    NET_BUILTIN,
    DISK_FIO,
    NET_IPERF3,
    NET_IPERF,
    CPU_SYSBENCH,
    CPU_STRESS_NG,
    DISK_BONNIE,
    CPU_CUSTOM,
    DISK_CUSTOM,
    NET_CUSTOM,
    N_ENGINES
};

/* Cross-field hooks, by engine; NULL for engines whose rows say it all. */
static const hv_params_check_fn cross_checks[N_ENGINES] = {
    [DISK_BUILTIN] = cross_disk_builtin,
    [DISK_FIO] = cross_disk_fio,
    [DISK_BONNIE] = cross_disk_bonnie,
};

static const struct hv_engine_def engines[N_ENGINES];

static int check_engine(enum engine_id id, json_t *params, const char *path, json_t *errors);

/* The per-engine entry points hv_engine_def.check promises: each is the
 * generic walk over its own row. */
#define CHECK_FN(fn, id)                                                                           \
    static int fn(json_t *params, const char *path, json_t *errors)                                \
    {                                                                                              \
        return check_engine(id, params, path, errors);                                             \
    }
CHECK_FN(check_cpu_builtin, CPU_BUILTIN)
CHECK_FN(check_disk_builtin, DISK_BUILTIN)
CHECK_FN(check_net_builtin, NET_BUILTIN)
CHECK_FN(check_disk_fio, DISK_FIO)
CHECK_FN(check_net_iperf3, NET_IPERF3)
CHECK_FN(check_net_iperf, NET_IPERF)
CHECK_FN(check_cpu_sysbench, CPU_SYSBENCH)
CHECK_FN(check_cpu_stress_ng, CPU_STRESS_NG)
CHECK_FN(check_disk_bonnie, DISK_BONNIE)
CHECK_FN(check_cpu_custom, CPU_CUSTOM)
CHECK_FN(check_disk_custom, DISK_CUSTOM)
CHECK_FN(check_net_custom, NET_CUSTOM)

#define CUSTOM_SUMMARY                                                                             \
    "a site benchmark the worker's administrator declared; a plan names it, never a command"

static const struct hv_engine_def engines[N_ENGINES] = {
    [CPU_BUILTIN] = {.kind = "cpu",
                     .engine = "builtin",
                     .summary = "self-checking integer, floating point, memory and branch kernels",
                     .check = check_cpu_builtin,
                     .params_def = cpu_builtin_params},
    [DISK_BUILTIN] = {.kind = "disk",
                      .engine = "builtin",
                      .summary = "iozone-like sequential and random file I/O: MB/s, IOPS, latency",
                      .check = check_disk_builtin,
                      .sweepable = sweep_disk_builtin,
                      .params_def = disk_builtin_params},
    [NET_BUILTIN] = {.kind = "net",
                     .engine = "builtin",
                     .summary = "iperf-like TCP stream throughput and request/response latency",
                     .check = check_net_builtin,
                     .sweepable = sweep_streams,
                     .needs_peer = true,
                     .params_def = net_builtin_params},
    [DISK_FIO] = {.kind = "disk",
                  .engine = "fio",
                  .summary = "fio, one job file built from the params, JSON output",
                  .check = check_disk_fio,
                  .sweepable = sweep_fio,
                  .external = true,
                  .params_def = disk_fio_params},
    [NET_IPERF3] = {.kind = "net",
                    .engine = "iperf3",
                    .summary = "iperf3 client against an iperf3 server on the peer, JSON output",
                    .check = check_net_iperf3,
                    .sweepable = sweep_streams,
                    .needs_peer = true,
                    .external = true,
                    .params_def = net_iperf3_params},
    [NET_IPERF] = {.kind = "net",
                   .engine = "iperf",
                   .summary = "iperf 2 client against an iperf 2 server on the peer",
                   .check = check_net_iperf,
                   .sweepable = sweep_streams,
                   .needs_peer = true,
                   .external = true,
                   .params_def = net_iperf_params},
    [CPU_SYSBENCH] = {.kind = "cpu",
                      .engine = "sysbench",
                      .summary = "sysbench cpu (primes) or memory test: events or MiB per second",
                      .check = check_cpu_sysbench,
                      .external = true,
                      .params_def = cpu_sysbench_params},
    [CPU_STRESS_NG] = {.kind = "cpu",
                       .engine = "stress-ng",
                       .summary = "one stress-ng stressor with --metrics: bogo ops per second",
                       .check = check_cpu_stress_ng,
                       .external = true,
                       .params_def = cpu_stress_ng_params},
    [DISK_BONNIE] = {.kind = "disk",
                     .engine = "bonnie",
                     .summary = "bonnie++: block write, rewrite, read, seeks, file creation",
                     .check = check_disk_bonnie,
                     .external = true,
                     .params_def = disk_bonnie_params},
    [CPU_CUSTOM] = {.kind = "cpu",
                    .engine = "custom",
                    .summary = CUSTOM_SUMMARY,
                    .check = check_cpu_custom,
                    .external = true,
                    .params_def = custom_params},
    [DISK_CUSTOM] = {.kind = "disk",
                     .engine = "custom",
                     .summary = CUSTOM_SUMMARY,
                     .check = check_disk_custom,
                     .external = true,
                     .params_def = custom_params},
    [NET_CUSTOM] = {.kind = "net",
                    .engine = "custom",
                    .summary = CUSTOM_SUMMARY,
                    .check = check_net_custom,
                    .external = true,
                    .params_def = custom_params},
};

const struct hv_engine_def *hv_engine_def_find(const char *kind, const char *engine)
{
    if (kind == NULL)
        return NULL;
    if (engine == NULL)
        engine = "builtin";
    for (size_t i = 0; i < N_ENGINES; i++)
        if (strcmp(engines[i].kind, kind) == 0 && strcmp(engines[i].engine, engine) == 0)
            return &engines[i];
    return NULL;
}

size_t hv_engine_def_count(void)
{
    return N_ENGINES;
}

const struct hv_engine_def *hv_engine_def_at(size_t i)
{
    return i < N_ENGINES ? &engines[i] : NULL;
}

bool hv_engine_def_sweepable(const struct hv_engine_def *e, const char *param)
{
    for (const char *const *s = e->sweepable; s != NULL && *s != NULL; s++)
        if (strcmp(*s, param) == 0)
            return true;
    return false;
}

static const char *const type_names[] = {
    [HV_PARAM_INT] = "int",       [HV_PARAM_NUMBER] = "number",     [HV_PARAM_BOOL] = "bool",
    [HV_PARAM_SIZE] = "size",     [HV_PARAM_DURATION] = "duration", [HV_PARAM_ENUM] = "enum",
    [HV_PARAM_STRING] = "string", [HV_PARAM_TARGET] = "target",     [HV_PARAM_LIST] = "list",
};

const char *hv_param_type_name(enum hv_param_type t)
{
    if ((unsigned)t >= sizeof type_names / sizeof type_names[0])
        return "unknown";
    return type_names[t];
}

/* ---- normalisers, one per type ----------------------------------------- */

/* Each takes the value as the plan wrote it and returns a new reference to
 * the normalised value, or NULL after appending one error at path. */
typedef json_t *(*normalise_fn)(const struct hv_param_def *d, const json_t *v, const char *path,
                                json_t *errors);

/* "a, b, c" into buf. */
static void join(const char *const *list, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (const char *const *s = list; *s != NULL && n < len; s++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", *s);
}

/* Bytes the way operators write them: the largest binary suffix that
 * divides exactly ("256k", "16t", "1000"). */
static void fmt_size(double bytes, char *buf, size_t len)
{
    static const struct {
        char suffix;
        double factor;
    } units[] = {{'t', TIB}, {'g', GIB}, {'m', MIB}, {'k', KIB}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (bytes >= units[i].factor && fmod(bytes, units[i].factor) == 0) {
            snprintf(buf, len, "%.0f%c", bytes / units[i].factor, units[i].suffix);
            return;
        }
    }
    snprintf(buf, len, "%.0f", bytes);
}

/* Seconds the way operators write them ("24h", "5m", "1.5s"). */
static void fmt_duration(double s, char *buf, size_t len)
{
    if (s >= 3600 && fmod(s, 3600) == 0)
        snprintf(buf, len, "%gh", s / 3600);
    else if (s >= 60 && fmod(s, 60) == 0)
        snprintf(buf, len, "%gm", s / 60);
    else
        snprintf(buf, len, "%gs", s);
}

/* Appends the range error of d for value v (both in the row's unit). */
static json_t *range_error(const struct hv_param_def *d, double v, const char *path, json_t *errors)
{
    char lo[32], hi[32], got[32];
    void (*fmt)(double, char *, size_t) = d->type == HV_PARAM_SIZE       ? fmt_size
                                          : d->type == HV_PARAM_DURATION ? fmt_duration
                                                                         : NULL;
    if (fmt != NULL) {
        fmt(d->min, lo, sizeof lo);
        fmt(d->max, hi, sizeof hi);
        fmt(v, got, sizeof got);
    } else {
        snprintf(lo, sizeof lo, "%.15g", d->min);
        snprintf(hi, sizeof hi, "%.15g", d->max);
        snprintf(got, sizeof got, "%.15g", v);
    }
    hv_errors_add(errors, path, "must be between %s and %s, not %s", lo, hi, got);
    return NULL;
}

static bool out_of_range(const struct hv_param_def *d, double v)
{
    return d->min < d->max && (v < d->min || v > d->max);
}

static json_t *norm_int(const struct hv_param_def *d, const json_t *v, const char *path,
                        json_t *errors)
{
    if (d->word != NULL && json_is_string(v) && strcmp(json_string_value(v), d->word) == 0)
        return json_string(d->word);
    if (!json_is_integer(v)) {
        if (d->word != NULL)
            hv_errors_add(errors, path,
                          "must be an integer between %.15g and %.15g or \"%s\", not %s", d->min,
                          d->max, d->word, hv_jtype_name(v));
        else
            hv_errors_add(errors, path, "must be an integer between %.15g and %.15g, not %s",
                          d->min, d->max, hv_jtype_name(v));
        return NULL;
    }
    if (out_of_range(d, (double)json_integer_value(v)))
        return range_error(d, (double)json_integer_value(v), path, errors);
    return json_integer(json_integer_value(v));
}

static json_t *norm_number(const struct hv_param_def *d, const json_t *v, const char *path,
                           json_t *errors)
{
    if (!json_is_number(v)) {
        hv_errors_add(errors, path, "must be a number, not %s", hv_jtype_name(v));
        return NULL;
    }
    if (out_of_range(d, json_number_value(v)))
        return range_error(d, json_number_value(v), path, errors);
    return json_real(json_number_value(v));
}

static json_t *norm_bool(const struct hv_param_def *d, const json_t *v, const char *path,
                         json_t *errors)
{
    if (!json_is_boolean(v)) {
        hv_errors_add(errors, path, "must be true or false, not %s", hv_jtype_name(v));
        return NULL;
    }
    return json_boolean(json_is_true(v));
}

static json_t *norm_size(const struct hv_param_def *d, const json_t *v, const char *path,
                         json_t *errors)
{
    uint64_t bytes;
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        bytes = (uint64_t)json_integer_value(v);
    } else if (json_is_string(v)) {
        if (hv_parse_size(json_string_value(v), &bytes) != 0) {
            hv_errors_add(errors, path,
                          "\"%.64s\" is not a size: write bytes (4096) or a number with k, m, g "
                          "or t (\"256k\", \"1.5m\", \"8g\")",
                          json_string_value(v));
            return NULL;
        }
    } else if (json_is_integer(v)) {
        return range_error(d, (double)json_integer_value(v), path, errors);
    } else {
        hv_errors_add(errors, path,
                      "must be a whole number of bytes or a size such as \"256k\" or \"8g\", "
                      "not %s",
                      hv_jtype_name(v));
        return NULL;
    }
    if (out_of_range(d, (double)bytes))
        return range_error(d, (double)bytes, path, errors);
    if (d->multiple != 0 && bytes % d->multiple != 0) {
        char m[32];
        fmt_size(d->multiple, m, sizeof m);
        if (d->multiple < KIB)
            hv_errors_add(errors, path, "must be a multiple of %u bytes", d->multiple);
        else
            hv_errors_add(errors, path, "must be a multiple of %s (%u bytes)", m, d->multiple);
        return NULL;
    }
    return json_integer((json_int_t)bytes);
}

static json_t *norm_duration(const struct hv_param_def *d, const json_t *v, const char *path,
                             json_t *errors)
{
    double s;
    if (json_is_number(v)) {
        s = json_number_value(v);
    } else if (json_is_string(v)) {
        if (hv_parse_duration(json_string_value(v), &s) != 0) {
            hv_errors_add(errors, path,
                          "\"%.64s\" is not a duration: write seconds (30) or a number with "
                          "ms, s, m or h (\"500ms\", \"30s\", \"5m\", \"1h\")",
                          json_string_value(v));
            return NULL;
        }
    } else {
        hv_errors_add(errors, path,
                      "must be a number of seconds or a duration such as \"30s\" or \"5m\", "
                      "not %s",
                      hv_jtype_name(v));
        return NULL;
    }
    if (out_of_range(d, s))
        return range_error(d, s, path, errors);
    return json_real(s);
}

static json_t *norm_enum(const struct hv_param_def *d, const json_t *v, const char *path,
                         json_t *errors)
{
    char allowed[256];
    join(d->choices, allowed, sizeof allowed);
    if (json_is_string(v))
        for (const char *const *c = d->choices; *c != NULL; c++)
            if (strcmp(*c, json_string_value(v)) == 0)
                return json_string(*c);
    hv_errors_add(errors, path, "must be one of: %s", allowed);
    return NULL;
}

static json_t *norm_string(const struct hv_param_def *d, const json_t *v, const char *path,
                           json_t *errors)
{
    size_t max = d->max_len ? d->max_len : 256;
    if (!json_is_string(v)) {
        hv_errors_add(errors, path, "must be a string, not %s", hv_jtype_name(v));
        return NULL;
    }
    const char *s = json_string_value(v);
    const char *why = NULL;
    char too_long[64];
    if (json_string_length(v) == 0)
        why = "must not be empty";
    else if (strlen(s) != json_string_length(v))
        why = "must not contain NUL characters";
    else if (json_string_length(v) > max)
        why = too_long;
    else if (d->format != NULL)
        why = d->format(s);
    if (why == NULL)
        return json_string(s);
    if (why == too_long)
        snprintf(too_long, sizeof too_long, "must be at most %zu characters", max);
    hv_errors_add(errors, path, "%s", why);
    return NULL;
}

/* A list keeps the order of d->choices whatever order the plan used: the
 * engine runs the phases in that order anyway (reads need the file the
 * writes made), and one spelling per set keeps variants comparable. */
static json_t *norm_list(const struct hv_param_def *d, const json_t *v, const char *path,
                         json_t *errors)
{
    char allowed[256];
    join(d->choices, allowed, sizeof allowed);
    if (!json_is_array(v) || json_array_size(v) == 0) {
        hv_errors_add(errors, path, "must be a non-empty array of unique values from: %s%s%s",
                      allowed, json_is_array(v) ? "" : ", not ",
                      json_is_array(v) ? "" : hv_jtype_name(v));
        return NULL;
    }
    /* The error names the first bad entry by index, at the member's own
     * path like every other param error. */
    size_t i;
    const json_t *e;
    json_array_foreach(v, i, e)
    {
        bool known = false;
        for (const char *const *c = d->choices; json_is_string(e) && *c != NULL; c++)
            known |= strcmp(*c, json_string_value(e)) == 0;
        if (!known) {
            if (json_is_string(e))
                hv_errors_add(errors, path, "entry %zu (\"%.64s\") must be one of: %s", i,
                              json_string_value(e), allowed);
            else
                hv_errors_add(errors, path, "entry %zu must be one of: %s, not %s", i, allowed,
                              hv_jtype_name(e));
            return NULL;
        }
        for (size_t j = 0; j < i; j++) {
            if (json_equal(e, json_array_get(v, j))) {
                hv_errors_add(errors, path, "entry %zu repeats entry %zu (\"%s\")", i, j,
                              json_string_value(e));
                return NULL;
            }
        }
    }
    json_t *out = json_array();
    for (const char *const *c = d->choices; *c != NULL; c++)
        for (size_t k = 0; k < json_array_size(v); k++)
            if (strcmp(*c, json_string_value(json_array_get(v, k))) == 0)
                json_array_append_new(out, json_string(*c));
    return out;
}

static const normalise_fn normalisers[] = {
    [HV_PARAM_INT] = norm_int,           [HV_PARAM_NUMBER] = norm_number,
    [HV_PARAM_BOOL] = norm_bool,         [HV_PARAM_SIZE] = norm_size,
    [HV_PARAM_DURATION] = norm_duration, [HV_PARAM_ENUM] = norm_enum,
    [HV_PARAM_STRING] = norm_string,     [HV_PARAM_TARGET] = norm_string,
    [HV_PARAM_LIST] = norm_list,
};

/* ---- the generic checker ----------------------------------------------- */

/* "a, b, c": the names of the rows. */
static void known_names(const struct hv_param_def *rows, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (const struct hv_param_def *d = rows; d->name != NULL && n < len; d++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", d->name);
}

static int check_engine(enum engine_id id, json_t *params, const char *path, json_t *errors)
{
    const struct hv_engine_def *e = &engines[id];
    char p[512];
    if (!json_is_object(params)) {
        hv_errors_add(errors, path, "must be an object, not %s", hv_jtype_name(params));
        return 1;
    }
    int problems = 0;
    const char *key;
    json_t *v;
    json_object_foreach(params, key, v)
    {
        const struct hv_param_def *d = e->params_def;
        while (d->name != NULL && strcmp(d->name, key) != 0)
            d++;
        if (d->name == NULL) {
            char known[512];
            known_names(e->params_def, known, sizeof known);
            hv_jpath(p, sizeof p, path, key);
            hv_errors_add(errors, p, "is not a known parameter of %s/%s; known: %s", e->kind,
                          e->engine, known);
            problems++;
        }
    }
    for (const struct hv_param_def *d = e->params_def; d->name != NULL; d++) {
        hv_jpath(p, sizeof p, path, d->name);
        json_t *given = json_object_get(params, d->name);
        json_t *parsed = NULL;
        if (given == NULL && d->def != NULL)
            given = parsed = json_loads(d->def, JSON_DECODE_ANY, NULL);
        if (given == NULL) {
            if (d->required) {
                hv_errors_add(errors, p, "is required: %s", d->description);
                problems++;
            }
            continue;
        }
        json_t *norm = normalisers[d->type](d, given, p, errors);
        json_decref(parsed);
        if (norm == NULL)
            problems++;
        else
            json_object_set_new(params, d->name, norm);
    }
    if (problems == 0 && cross_checks[id] != NULL)
        problems += cross_checks[id](params, path, errors);
    return problems;
}

/* ---- the catalogue ----------------------------------------------------- */

static json_t *param_json(const struct hv_engine_def *e, const struct hv_param_def *d)
{
    /* A peer engine cannot run without its target, whoever refuses it. */
    bool required = d->required || (e->needs_peer && d->type == HV_PARAM_TARGET);
    json_t *o = json_pack("{s:s, s:s, s:b, s:b, s:s}", "name", d->name, "type",
                          hv_param_type_name(d->type), "required", required, "sweepable",
                          hv_engine_def_sweepable(e, d->name), "description", d->description);
    if (o == NULL)
        return NULL;
    int rc = 0;
    if (d->def != NULL)
        rc |= json_object_set_new(o, "default", json_loads(d->def, JSON_DECODE_ANY, NULL));
    if (d->min < d->max) {
        bool whole = d->type != HV_PARAM_NUMBER && d->type != HV_PARAM_DURATION;
        rc |= json_object_set_new(o, "min",
                                  whole ? json_integer((json_int_t)d->min) : json_real(d->min));
        rc |= json_object_set_new(o, "max",
                                  whole ? json_integer((json_int_t)d->max) : json_real(d->max));
    }
    if (d->type == HV_PARAM_SIZE)
        rc |= json_object_set_new(o, "unit", json_string("bytes"));
    if (d->type == HV_PARAM_DURATION)
        rc |= json_object_set_new(o, "unit", json_string("seconds"));
    if (d->multiple != 0)
        rc |= json_object_set_new(o, "multiple_of", json_integer(d->multiple));
    if (d->choices != NULL) {
        json_t *c = json_array();
        for (const char *const *s = d->choices; *s != NULL; s++)
            rc |= json_array_append_new(c, json_string(*s));
        rc |= json_object_set_new(o, "choices", c);
    }
    if (d->word != NULL)
        rc |= json_object_set_new(o, "or", json_string(d->word));
    if (d->type == HV_PARAM_STRING || d->type == HV_PARAM_TARGET)
        rc |= json_object_set_new(o, "max_length", json_integer(d->max_len ? d->max_len : 256));
    if (rc != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *engine_json(const struct hv_engine_def *e)
{
    json_t *params = json_array();
    for (const struct hv_param_def *d = e->params_def; params != NULL && d->name != NULL; d++) {
        if (json_array_append_new(params, param_json(e, d)) != 0) {
            json_decref(params);
            params = NULL;
        }
    }
    if (params == NULL)
        return NULL;
    return json_pack("{s:s, s:s, s:s, s:b, s:b, s:o}", "kind", e->kind, "engine", e->engine,
                     "summary", e->summary, "needs_peer", e->needs_peer, "external", e->external,
                     "params", params);
}

json_t *hv_engines_json(void)
{
    json_t *list = json_array();
    if (list == NULL)
        return NULL;
    for (size_t i = 0; i < N_ENGINES; i++) {
        if (json_array_append_new(list, engine_json(&engines[i])) != 0) {
            json_decref(list);
            return NULL;
        }
    }
    return list;
}
