/* tools.c — the external engines: one row per tool plus one argv builder
 * each, the common run-parse-report path, the net tools' server side, and
 * the external engines' table; see tools.h. */
#include "worker/engines/tools.h"

#include "params.h"
#include "parsers.h"
#include "worker/engines/custom.h"
#include "worker/engines/storage.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_ARGS 48
/* Seconds a tool may take beyond the time it is asked to measure: start,
 * laying out files, the report. */
#define SLACK 60.0
/* fio lays its file out before measuring, which for a large size takes a
 * while. */
#define FIO_SLACK 3600.0
/* bonnie++'s run time follows from its file size and the disk, not from a
 * param: a day. */
#define BONNIE_TIMEOUT 86400.0
/* How long a net tool's server may take to start listening. */
#define LISTEN_WAIT 10.0

/* ---------------------------------------------------------------------
 * An argv under construction. */

struct args {
    char *v[MAX_ARGS + 1];
    int n;
    bool broken; /* out of memory or too many */
};

static void arg(struct args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends one formatted argument. */
static void arg(struct args *a, const char *fmt, ...)
{
    if (a->n >= MAX_ARGS) {
        a->broken = true;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    if (s == NULL) {
        a->broken = true;
        return;
    }
    a->v[a->n++] = s;
    a->v[a->n] = NULL;
}

static void args_free(struct args *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->v[i]);
    a->n = 0;
    a->v[0] = NULL;
}

static json_t *args_json(const char *const *argv)
{
    json_t *list = json_array();
    for (size_t i = 0; list != NULL && argv[i] != NULL; i++)
        json_array_append_new(list, json_string(argv[i]));
    return list;
}

/* ---------------------------------------------------------------------
 * Params: normalised again here with the table that validated the plan,
 * so defaults come from one place and a job sent by hand is checked too. */

static json_t *normalised(const char *kind, const char *engine, const json_t *params,
                          struct hv_engine_result *out)
{
    const struct hv_engine_def *d = hv_engine_def_find(kind, engine);
    json_t *p = json_is_object(params) ? json_deep_copy(params) : json_object();
    json_t *errors = json_array();
    if (d == NULL || p == NULL || errors == NULL) {
        json_decref(p);
        json_decref(errors);
        hv_engine_fail(out, d == NULL ? "no parameter table for %s/%s" : "out of memory", kind,
                       engine);
        return NULL;
    }
    if (params != NULL && !json_is_object(params)) {
        hv_engine_fail(out, "params must be an object");
    } else if (hv_engine_def_check(d, p, "/params", errors) > 0) {
        json_t *e = json_array_get(errors, 0);
        hv_engine_fail(out, "invalid params: %s: %s", json_string_value(json_object_get(e, "path")),
                       json_string_value(json_object_get(e, "message")));
    } else {
        json_decref(errors);
        return p;
    }
    json_decref(p);
    json_decref(errors);
    return NULL;
}

static long long p_int(const json_t *p, const char *name)
{
    return (long long)json_integer_value(json_object_get(p, name));
}

/* An INT param that may be "per-vcpu": one per online CPU. */
static long long p_count(const json_t *p, const char *name)
{
    const json_t *v = json_object_get(p, name);
    if (json_is_string(v)) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        return n > 0 ? n : 1;
    }
    return (long long)json_integer_value(v);
}

static double p_num(const json_t *p, const char *name)
{
    return json_number_value(json_object_get(p, name));
}

static bool p_bool(const json_t *p, const char *name)
{
    return json_is_true(json_object_get(p, name));
}

static const char *p_str(const json_t *p, const char *name)
{
    return json_string_value(json_object_get(p, name));
}

/* Whole seconds for tools that take no fraction: at least 1. */
static long long whole_seconds(double s)
{
    double c = ceil(s);
    return c < 1 ? 1 : (long long)c;
}

/* A warm-up in the whole seconds tools take (rounded up; 0 stays 0). */
static long long whole_warmup(double s)
{
    double c = ceil(s - 1e-9);
    return c < 0 ? 0 : (long long)c;
}

/* ---------------------------------------------------------------------
 * Where tools may write: the policy of the built-in disk engine
 * (storage.h). */

/* A name for a new file or directory in the scratch directory, ending in
 * suffix. Returns 0, or -1 with r->error set when the path is too long. */
static int scratch_name(char *out, size_t len, const char *scratch, const char *what,
                        const char *suffix, struct hv_engine_result *r)
{
    static unsigned counter;
    unsigned n = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
    int w = snprintf(out, len, "%s/hvbench-%s-%ld-%u%s", scratch, what, (long)getpid(), n, suffix);
    if (w < 0 || (size_t)w >= len)
        return hv_engine_fail(r, "the scratch directory's path %s is too long", scratch);
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

/* ---------------------------------------------------------------------
 * One run of one tool. */

struct tool;

struct tool_job {
    const struct tool *tool;
    const struct hv_engine_ctx *ctx;
    struct hv_engine_result *out;
    json_t *params; /* normalised, owned */
    struct args args;
    double timeout;
    char cwd[PATH_MAX];     /* "" : the worker's */
    char tmpdir[PATH_MAX];  /* made for this run and removed after it, or "" */
    char outfile[PATH_MAX]; /* the output to parse when not standard output */
    char remove[PATH_MAX];  /* a file this run created, removed after it */
    double warmup;          /* seconds the tool was told to run before measuring */
};

/* A tool: one row of the table below. */
struct tool {
    const char *kind;
    const char *engine;       /* as params.c and parsers.c name it */
    const char *display;      /* as messages name it */
    const char *program;      /* argv[0], looked up in PATH */
    const char *version_flag; /* prints the version, or NULL */
    /* Builds the argv (and timeout, files) of a one-sided run or of a net
     * workload's client; returns 0 or -1 with out->error set. */
    int (*build)(struct tool_job *j);
    /* Net tools: the server's argv, listening on port. */
    int (*build_server)(struct tool_job *j, int port);
    /* NULL when the tool reports per-interval figures (samples); else why
     * there is no steady-state verdict. */
    const char *no_samples;
    /* The tool has no warm-up of its own: the samples of the first
     * `warmup` seconds are dropped here (iperf 2). */
    bool drop_warmup;
};

static void job_cleanup(struct tool_job *j)
{
    if (j->remove[0] != '\0')
        unlink(j->remove);
    if (j->tmpdir[0] != '\0')
        nftw(j->tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    args_free(&j->args);
    json_decref(j->params);
    j->params = NULL;
}

/* ---------------------------------------------------------------------
 * The argv builders, one per tool. */

/* fio's file: a new one in the scratch directory, params.path under it,
 * or an allowed block device. */
static int fio_target(struct tool_job *j, char *target, size_t len)
{
    char scratch[PATH_MAX];
    if (hv_scratch_dir(scratch, sizeof scratch, j->out) != 0)
        return -1;
    const char *path = p_str(j->params, "path");
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
        if (scratch_name(target, len, scratch, "fio", ".dat", j->out) != 0)
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

static int build_fio(struct tool_job *j)
{
    const json_t *p = j->params;
    char target[PATH_MAX];
    if (fio_target(j, target, sizeof target) != 0)
        return -1;
    struct args *a = &j->args;
    arg(a, "fio");
    arg(a, "--name=hvbench");
    arg(a, "--filename=%s", target);
    arg(a, "--rw=%s", p_str(p, "rw"));
    arg(a, "--bs=%lld", p_int(p, "bs"));
    arg(a, "--size=%lld", p_int(p, "size"));
    arg(a, "--iodepth=%lld", p_int(p, "iodepth"));
    arg(a, "--ioengine=%s", p_str(p, "ioengine"));
    arg(a, "--direct=%d", p_bool(p, "direct") ? 1 : 0);
    arg(a, "--numjobs=%lld", p_int(p, "numjobs"));
    arg(a, "--group_reporting");
    arg(a, "--runtime=%lldms", (long long)llround(p_num(p, "runtime") * 1000));
    arg(a, "--time_based");
    j->warmup = p_num(p, "warmup");
    if (j->warmup > 0)
        arg(a, "--ramp_time=%lldms", (long long)llround(j->warmup * 1000));
    /* fio's steady-state window spans the whole measured time, so its
     * per-second figures cover all of it, and fio (which ends a job once
     * the window is steady) cannot stop before the runtime is over: the
     * window fills only then, and a runtime of a fraction of a second
     * more never fills it. The limit is the SNIA slope test over that
     * window: the fitted line moves by at most 10% of the mean. A runtime of
     * a second or less has no window and no samples. */
    long long window = (long long)ceil(p_num(p, "runtime") - 1e-9);
    /* A one-interval window has no slope (fio then prints "nan"). */
    if (window >= 2) {
        arg(a, "--steadystate=iops_slope:%g%%", 10.0 / (double)(window - 1));
        arg(a, "--steadystate_duration=%lld", window);
    }
    arg(a, "--output-format=json");
    j->timeout = j->warmup + p_num(p, "runtime") + FIO_SLACK;
    return 0;
}

static int build_sysbench(struct tool_job *j)
{
    const json_t *p = j->params;
    const char *test = p_str(p, "test");
    struct args *a = &j->args;
    arg(a, "sysbench");
    arg(a, "%s", test);
    arg(a, "--threads=%lld", p_count(p, "threads"));
    long long warm = whole_warmup(p_num(p, "warmup"));
    j->warmup = (double)warm;
    /* The checkpoint report at the end of the warm-up resets sysbench's
     * counters: the final report covers the measured seconds only. */
    arg(a, "--time=%lld", warm + whole_seconds(p_num(p, "seconds")));
    if (warm > 0)
        arg(a, "--report-checkpoints=%lld", warm);
    arg(a, "--report-interval=1");
    if (strcmp(test, "cpu") == 0)
        arg(a, "--cpu-max-prime=%lld", p_int(p, "max_prime"));
    else
        arg(a, "--memory-total-size=0"); /* bounded by --time alone */
    arg(a, "run");
    j->timeout = j->warmup + p_num(p, "seconds") + SLACK;
    return 0;
}

/* A private directory under the scratch one: stress-ng's temporary files
 * and its YAML report. */
static int make_tmpdir(struct tool_job *j, const char *what)
{
    char scratch[PATH_MAX];
    if (hv_scratch_dir(scratch, sizeof scratch, j->out) != 0)
        return -1;
    if (scratch_name(j->tmpdir, sizeof j->tmpdir, scratch, what, "-XXXXXX", j->out) != 0) {
        j->tmpdir[0] = '\0';
        return -1;
    }
    if (mkdtemp(j->tmpdir) == NULL) {
        int e = errno;
        j->tmpdir[0] = '\0';
        return hv_engine_fail(j->out, "cannot make a directory in %s: %s", scratch, strerror(e));
    }
    return 0;
}

static int build_stress_ng(struct tool_job *j)
{
    const json_t *p = j->params;
    if (make_tmpdir(j, "stress-ng") != 0)
        return -1;
    int w = snprintf(j->outfile, sizeof j->outfile, "%s/report.yaml", j->tmpdir);
    if (w < 0 || (size_t)w >= sizeof j->outfile)
        return hv_engine_fail(j->out, "the scratch directory's path is too long");
    memcpy(j->cwd, j->tmpdir, sizeof j->cwd);
    struct args *a = &j->args;
    arg(a, "stress-ng");
    arg(a, "--%s", p_str(p, "stressor"));
    arg(a, "%lld", p_count(p, "workers"));
    arg(a, "--timeout");
    arg(a, "%llds", whole_seconds(p_num(p, "seconds")));
    arg(a, "--metrics");
    arg(a, "--temp-path");
    arg(a, "%s", j->tmpdir);
    arg(a, "--yaml");
    arg(a, "%s", j->outfile);
    j->timeout = p_num(p, "seconds") + SLACK;
    return 0;
}

static int build_bonnie(struct tool_job *j)
{
    const json_t *p = j->params;
    char scratch[PATH_MAX], dir[PATH_MAX];
    if (hv_scratch_dir(scratch, sizeof scratch, j->out) != 0)
        return -1;
    const char *path = p_str(p, "path");
    snprintf(dir, sizeof dir, "%s", scratch);
    if (path != NULL) {
        struct stat st;
        if (realpath(path, dir) == NULL || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
            return hv_engine_fail(j->out, "path %s is not a directory", path);
        if (!hv_path_within(dir, scratch, true))
            return hv_engine_fail(j->out,
                                  "path %s is outside the scratch directory %s "
                                  "($HVBENCH_SCRATCH), the only place bonnie++ may write",
                                  path, scratch);
    }
    struct args *a = &j->args;
    arg(a, "bonnie++");
    arg(a, "-d");
    arg(a, "%s", dir);
    if (json_object_get(p, "size") != NULL) {
        arg(a, "-s");
        arg(a, "%lld", p_int(p, "size") / (1024 * 1024));
    }
    if (json_object_get(p, "ram_mb") != NULL) {
        arg(a, "-r");
        arg(a, "%lld", p_int(p, "ram_mb"));
    }
    if (p_bool(p, "fast"))
        arg(a, "-f");
    if (geteuid() == 0) {
        /* bonnie++ refuses to run as root unless told whom to run as. */
        arg(a, "-u");
        arg(a, "root");
    }
    arg(a, "-q"); /* the CSV alone on standard output */
    j->timeout = BONNIE_TIMEOUT;
    return 0;
}

/* Net clients: the server's address from the group's endpoints. */
static int server_endpoint(struct tool_job *j, char *host, size_t len, int *port)
{
    const json_t *eps = j->ctx->endpoints, *best = NULL;
    size_t i;
    json_t *e;
    json_array_foreach(eps, i, e)
    {
        const char *role = json_string_value(json_object_get(e, "role"));
        const char *target = json_string_value(json_object_get(e, "target"));
        if (role == NULL || strcmp(role, "server") != 0)
            continue;
        if (best == NULL ||
            (j->ctx->peer != NULL && target != NULL && strcmp(target, j->ctx->peer) == 0))
            best = e;
    }
    const char *h = json_string_value(json_object_get(best, "host"));
    json_int_t p = json_integer_value(json_object_get(best, "port"));
    if (best == NULL || h == NULL || h[0] == '\0' || h[0] == '-' || p < 1 || p > 65535)
        return hv_engine_fail(j->out,
                              "%s client: the group announced no usable server endpoint "
                              "({\"role\": \"server\", \"host\", \"port\"})",
                              j->tool->display);
    snprintf(host, len, "%s", h);
    *port = (int)p;
    return 0;
}

/* Starts the argv of a net tool's client: "TOOL -c HOST -p PORT", with the
 * server the group announced. Returns 0, or -1 with j->out's error set. */
static int client_args(struct tool_job *j, const char *tool)
{
    char host[256];
    int port = 0;
    if (server_endpoint(j, host, sizeof host, &port) != 0)
        return -1;
    arg(&j->args, "%s", tool);
    arg(&j->args, "-c");
    arg(&j->args, "%s", host);
    arg(&j->args, "-p");
    arg(&j->args, "%d", port);
    return 0;
}

static int build_iperf3(struct tool_job *j)
{
    const json_t *p = j->params;
    if (client_args(j, "iperf3") != 0)
        return -1;
    struct args *a = &j->args;
    arg(a, "-J");
    arg(a, "-t");
    arg(a, "%lld", whole_seconds(p_num(p, "seconds")));
    j->warmup = (double)whole_warmup(p_num(p, "warmup"));
    if (j->warmup > 0) {
        arg(a, "--omit");
        arg(a, "%lld", (long long)j->warmup);
    }
    arg(a, "-P");
    arg(a, "%lld", p_int(p, "streams"));
    if (json_object_get(p, "window") != NULL) {
        arg(a, "-w");
        arg(a, "%lld", p_int(p, "window"));
    }
    if (p_bool(p, "reverse"))
        arg(a, "-R");
    if (p_bool(p, "udp")) {
        arg(a, "-u");
        arg(a, "-b"); /* iperf3's UDP default is 1 Mbit/s: measure, do not pace */
        arg(a, "0");
    }
    arg(a, "--connect-timeout");
    arg(a, "10000");
    j->timeout = j->warmup + p_num(p, "seconds") + SLACK;
    return 0;
}

static int build_iperf3_server(struct tool_job *j, int port)
{
    struct args *a = &j->args;
    arg(a, "iperf3");
    arg(a, "-s");
    arg(a, "-1"); /* one test, then exit */
    arg(a, "-p");
    arg(a, "%d", port);
    arg(a, "-J");
    /* The client sends the omit time: the server leaves it out too. */
    j->warmup = (double)whole_warmup(p_num(j->params, "warmup"));
    j->timeout = j->warmup + p_num(j->params, "seconds") + SLACK;
    return 0;
}

static int build_iperf(struct tool_job *j)
{
    const json_t *p = j->params;
    if (client_args(j, "iperf") != 0)
        return -1;
    struct args *a = &j->args;
    arg(a, "-y");
    arg(a, "C");
    /* iperf 2 has no warm-up: it runs warmup + seconds, and the first
     * warmup seconds of its intervals are dropped from the samples. */
    j->warmup = (double)whole_warmup(p_num(p, "warmup"));
    arg(a, "-t");
    arg(a, "%g", j->warmup + p_num(p, "seconds"));
    arg(a, "-i");
    arg(a, "1");
    arg(a, "-P");
    arg(a, "%lld", p_int(p, "streams"));
    if (json_object_get(p, "window") != NULL) {
        arg(a, "-w");
        arg(a, "%lld", p_int(p, "window"));
    }
    j->timeout = j->warmup + p_num(p, "seconds") + SLACK;
    return 0;
}

static int build_iperf_server(struct tool_job *j, int port)
{
    const json_t *p = j->params;
    struct args *a = &j->args;
    arg(a, "iperf");
    arg(a, "-s");
    arg(a, "-p");
    arg(a, "%d", port);
    arg(a, "-y");
    arg(a, "C");
    arg(a, "-i");
    arg(a, "1");
    /* iperf 2's server exits after this many connections: the client's
     * streams. */
    arg(a, "-P");
    arg(a, "%lld", p_int(p, "streams"));
    if (json_object_get(p, "window") != NULL) {
        arg(a, "-w");
        arg(a, "%lld", p_int(p, "window"));
    }
    j->warmup = (double)whole_warmup(p_num(p, "warmup"));
    j->timeout = j->warmup + p_num(p, "seconds") + SLACK;
    return 0;
}

/* The tools, one row each. */
enum { T_FIO, T_SYSBENCH, T_STRESS_NG, T_BONNIE, T_IPERF3, T_IPERF, N_TOOLS };

static const struct tool tools[N_TOOLS] = {
    [T_FIO] = {"disk", "fio", "fio", "fio", "--version", build_fio, NULL},
    [T_SYSBENCH] = {"cpu", "sysbench", "sysbench", "sysbench", "--version", build_sysbench, NULL},
    [T_STRESS_NG] = {"cpu", "stress-ng", "stress-ng", "stress-ng", "--version", build_stress_ng,
                     NULL, .no_samples = "stress-ng reports only totals"},
    [T_BONNIE] = {"disk", "bonnie", "bonnie++", "bonnie++", NULL, build_bonnie, NULL,
                  .no_samples = "bonnie++ reports only totals"},
    [T_IPERF3] = {"net", "iperf3", "iperf3", "iperf3", "--version", build_iperf3,
                  build_iperf3_server},
    [T_IPERF] = {"net", "iperf", "iperf", "iperf", "-v", build_iperf, build_iperf_server,
                 .drop_warmup = true},
};

/* ---------------------------------------------------------------------
 * Running and reporting. */

/* The first non-empty line of text, trimmed, as a new JSON string. */
static json_t *first_line(const char *text)
{
    if (text == NULL)
        return NULL;
    text += strspn(text, " \t\r\n");
    size_t n = strcspn(text, "\r\n");
    while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t'))
        n--;
    return n > 0 ? json_stringn(text, n > 200 ? 200 : n) : NULL;
}

/* Records `PROGRAM VERSION_FLAG`'s first line as observed.tool_version. */
static void record_version(const struct tool *t, json_t *observed)
{
    if (t->version_flag == NULL)
        return;
    const char *argv[] = {t->program, t->version_flag, NULL};
    struct hv_run_spec spec = {.argv = argv, .display = t->display, .timeout = 10};
    struct hv_run_result r;
    char err[256];
    if (hv_run(&spec, NULL, &r, err, sizeof err) != 0)
        return;
    json_t *v = NULL;
    if (!r.timed_out && r.signal == 0) {
        v = first_line(r.out);
        if (v == NULL)
            v = first_line(r.err);
    }
    if (v != NULL)
        json_object_set_new(observed, "tool_version", v);
    hv_run_result_clear(&r);
}

void hv_tool_keep_failed_output(struct hv_engine_result *out, const struct hv_run_result *r)
{
    static const char sep[] = "\n--- stderr ---\n";
    size_t n = r->out_len + sizeof sep + r->err_len;
    char *text = malloc(n + 1);
    if (text == NULL)
        return;
    size_t len = 0;
    if (r->out_len > 0) {
        memcpy(text, r->out, r->out_len);
        len = r->out_len;
    }
    if (r->err_len > 0) {
        memcpy(text + len, sep + (len == 0), sizeof sep - 1 - (len == 0));
        len += sizeof sep - 1 - (len == 0);
        memcpy(text + len, r->err, r->err_len);
        len += r->err_len;
    }
    if (len > 0)
        hv_engine_set_raw(out, text, len);
    free(text);
}

/* Records how a run went in observed. */
static void record_run(json_t *observed, const struct hv_run_result *r)
{
    json_object_set_new(observed, "tool_path", json_string(r->path));
    json_object_set_new(observed, "exit_code",
                        r->signal == 0 ? json_integer(r->exit_code) : json_null());
    json_object_set_new(observed, "seconds", json_real(round(r->seconds * 1000) / 1000));
}

/* Turns a finished run into out: failure with its reason, or success. */
static int finish_exec(struct hv_engine_result *out, const char *display,
                       const struct hv_run_result *r)
{
    record_run(out->observed, r);
    if (hv_run_ok(r))
        return 0;
    char why[sizeof out->error];
    hv_run_describe(r, display, why, sizeof why);
    hv_tool_keep_failed_output(out, r);
    return hv_engine_fail(out, "%s", why);
}

int hv_tool_exec(const struct hv_engine_ctx *ctx, struct hv_engine_result *out,
                 const struct hv_run_spec *spec, struct hv_run_result *r)
{
    memset(r, 0, sizeof *r);
    json_object_set_new(out->observed, "argv", args_json(spec->argv));
    char err[sizeof out->error];
    if (hv_run(spec, ctx->stop, r, err, sizeof err) != 0)
        return hv_engine_fail(out, "%s", err);
    return finish_exec(out, spec->display ? spec->display : spec->argv[0], r);
}

/* Reads a file the tool wrote (at most HV_ENGINE_RAW_MAX bytes). */
static char *read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return NULL;
    char *buf = malloc(HV_ENGINE_RAW_MAX + 1);
    size_t n = 0;
    while (buf != NULL && n < HV_ENGINE_RAW_MAX) {
        ssize_t got = read(fd, buf + n, HV_ENGINE_RAW_MAX - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        n += (size_t)got;
    }
    close(fd);
    if (buf != NULL)
        buf[n] = '\0';
    *len = n;
    return buf;
}

/* The samples of run into out (and ctx's live view), the warm-up of a tool
 * without one of its own dropped, and the steady-state verdict over the
 * series of the headline metric (or of the first sampled metric when the
 * headline has none: a mixed fio job samples both directions at once) in
 * observed.steady_state. Returns 0, or -1 when memory runs out. */
static int observe_steady(const struct tool *t, struct tool_job *j, json_t *run)
{
    json_t *obs = j->out->observed;
    if (t->no_samples != NULL) {
        json_t *o =
            json_pack("{s:n, s:i, s:n, s:n, s:b, s:s}", "steady", "window", HV_STEADY_WINDOW,
                      "range_pct", "slope_pct", "assessed", false, "why", t->no_samples);
        return o != NULL && json_object_set_new(obs, "steady_state", o) == 0 ? 0 : -1;
    }
    json_object_set_new(obs, "warmup", json_real(j->warmup));
    json_t *samples = json_object_get(run, "samples");
    const char *series = json_string_value(
        json_object_get(json_array_get(json_object_get(run, "metrics"), 0), "name"));
    size_t i, n = 0;
    json_t *s;
    bool headline_sampled = false;
    json_array_foreach(samples, i, s)
    {
        headline_sampled |= strcmp(json_string_value(json_object_get(s, "metric")), series) == 0;
    }
    if (!headline_sampled && json_array_size(samples) > 0)
        series = json_string_value(json_object_get(json_array_get(samples, 0), "metric"));
    double *v = calloc(json_array_size(samples) + 1, sizeof *v), sum = 0;
    if (v == NULL)
        return -1;
    double drop = t->drop_warmup ? j->warmup : 0;
    int rc = 0;
    json_array_foreach(samples, i, s)
    {
        const char *metric = json_string_value(json_object_get(s, "metric"));
        double at = json_number_value(json_object_get(s, "t"));
        double value = json_number_value(json_object_get(s, "value"));
        if (at <= drop + 1e-6)
            continue;
        rc |= hv_engine_emit_sample(j->ctx, j->out, metric, at - drop, value);
        if (strcmp(metric, series) == 0) {
            v[n++] = value;
            sum += value;
        }
    }
    struct hv_steady st;
    hv_steady_state(v, n, &st);
    free(v);
    json_t *o = json_pack("{s:b, s:s, s:i}", "assessed", true, "metric", series, "samples", (int)n);
    if (o == NULL || hv_steady_observe(o, &st) != 0) {
        json_decref(o);
        return -1;
    }
    /* fio's own verdict over its window (the whole measured time). */
    const json_t *fio = json_object_get(
        json_array_get(json_object_get(json_object_get(run, "info"), "jobs"), 0), "steadystate");
    if (fio != NULL) {
        json_object_set(o, "fio_attained", json_object_get(fio, "attained"));
        json_object_set(o, "fio_criterion", json_object_get(fio, "ss"));
    }
    json_object_set_new(obs, "steady_state", o);
    if (t->drop_warmup) {
        /* The headline is the tool's whole-test figure, warm-up included;
         * the mean of the intervals after it is given beside. */
        json_object_set_new(obs, "headline",
                            json_string("the tool's whole-test total, warm-up "
                                        "included"));
        if (n > 0)
            json_object_set_new(obs, "after_warmup",
                                json_pack("{s:s, s:f, s:i}", "metric", series, "mean",
                                          sum / (double)n, "intervals", (int)n));
    }
    return rc == 0 ? 0 : -1;
}

/* Parses the tool's output into out's metrics and observed, keeping it as
 * raw. */
static int report(const struct tool *t, struct tool_job *j, const struct hv_run_result *r)
{
    struct hv_engine_result *out = j->out;
    char *file = NULL;
    const char *text = r->out;
    size_t len = r->out_len;
    if (j->outfile[0] != '\0') {
        file = read_file(j->outfile, &len);
        if (file == NULL) {
            int e = errno;
            hv_tool_keep_failed_output(out, r);
            return hv_engine_fail(out, "%s exited with status 0 but wrote no report (%s): %s",
                                  t->display, j->outfile, strerror(e));
        }
        text = file;
    } else if (r->out_truncated) {
        hv_engine_set_raw(out, text, len);
        return hv_engine_fail(out, "%s printed %zu bytes, more than the %zu hvbench reads",
                              t->display, r->out_total, r->out_len);
    }
    hv_engine_set_raw(out, text, len);
    json_t *run = NULL;
    char err[HV_PARSE_ERR_MAX];
    int rc = hv_parse_tool_run(t->engine, text, len, &run, err, sizeof err);
    free(file);
    if (rc != 0) {
        if (r->err_len > 0)
            hv_tool_keep_failed_output(out, r);
        return hv_engine_fail(out, "cannot read the output of %s: %s", t->display, err);
    }
    json_array_extend(out->metrics, json_object_get(run, "metrics"));
    /* What the parser read beside the metrics, as an import records it;
     * the version the tool itself printed wins. */
    json_object_update_missing(out->observed, json_object_get(run, "info"));
    rc = observe_steady(t, j, run);
    json_decref(run);
    return rc == 0 ? 0 : hv_engine_fail(out, "out of memory");
}

/* A nonzero exit with nothing on standard error: the parser may know why
 * (iperf3 -J puts its error into the JSON). */
static void explain_failure(const struct tool *t, struct hv_engine_result *out,
                            const struct hv_run_result *r)
{
    if (r->stopped || r->timed_out || r->exit_code <= 0 || r->out_len == 0 || r->err_len > 0)
        return;
    json_t *metrics = NULL, *info = NULL;
    char err[HV_PARSE_ERR_MAX];
    if (hv_parse_tool_output(t->engine, r->out, r->out_len, &metrics, &info, err, sizeof err) != 0)
        hv_engine_fail(out, "%s exited with status %d: %s", t->display, r->exit_code, err);
    json_decref(metrics);
    json_decref(info);
}

/* The run of a one-sided tool, or of a net workload's client. */
static int tool_run(const struct tool *t, const struct hv_engine_ctx *ctx,
                    struct hv_engine_result *out)
{
    char path[PATH_MAX], err[sizeof out->error];
    if (hv_run_find(t->program, t->display, path, sizeof path, err, sizeof err) != 0)
        return hv_engine_fail(out, "%s", err);
    struct tool_job j = {.tool = t, .ctx = ctx, .out = out};
    j.params = normalised(t->kind, t->engine, ctx->params, out);
    if (j.params == NULL)
        return -1;
    int rc = -1;
    if (t->build(&j) != 0)
        goto done;
    if (j.args.broken) {
        hv_engine_fail(out, "cannot build the command line of %s: out of memory", t->display);
        goto done;
    }
    record_version(t, out->observed);
    struct hv_run_spec spec = {.argv = (const char *const *)j.args.v,
                               .display = t->display,
                               .timeout = j.timeout,
                               .cwd = j.cwd[0] ? j.cwd : NULL};
    struct hv_run_result r;
    if (hv_tool_exec(ctx, out, &spec, &r) != 0)
        explain_failure(t, out, &r);
    else
        rc = report(t, &j, &r);
    hv_run_result_clear(&r);
done:
    job_cleanup(&j);
    return rc;
}

/* ---------------------------------------------------------------------
 * The server side of the net tools. */

/* What prepare() leaves for run(). */
struct net_server {
    struct tool_job job;
    struct hv_proc *proc;
    json_t *observed; /* argv, tool_version, port */
};

/* A TCP port nothing listens on now (the kernel's pick). */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t len = sizeof sa;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
        port = ntohs(sa.sin_port);
    close(fd);
    return port;
}

/* Whether a TCP socket listens on port (any address), from /proc/net. */
static bool listening(int port)
{
    static const char *const files[] = {"/proc/net/tcp", "/proc/net/tcp6"};
    for (size_t f = 0; f < 2; f++) {
        FILE *fp = fopen(files[f], "re");
        if (fp == NULL)
            continue;
        char line[512];
        bool found = false;
        while (!found && fgets(line, sizeof line, fp) != NULL) {
            char local[128];
            unsigned st;
            if (sscanf(line, " %*d: %127s %*s %x", local, &st) != 2)
                continue;
            const char *colon = strrchr(local, ':');
            found = st == 0x0A && colon != NULL && strtol(colon + 1, NULL, 16) == port;
        }
        fclose(fp);
        if (found)
            return true;
    }
    return false;
}

/* Starts t's server on a free port and waits until it listens; retries
 * when another process took the port first. */
static int net_prepare(const struct tool *t, struct hv_engine_ctx *ctx, struct hv_endpoint *ep,
                       struct hv_engine_result *out)
{
    char path[PATH_MAX], err[sizeof out->error];
    if (hv_run_find(t->program, t->display, path, sizeof path, err, sizeof err) != 0)
        return hv_engine_fail(out, "%s", err);
    struct net_server *s = calloc(1, sizeof *s);
    if (s == NULL || (s->observed = json_object()) == NULL) {
        free(s);
        return hv_engine_fail(out, "out of memory");
    }
    s->job = (struct tool_job){.tool = t, .ctx = ctx, .out = out};
    s->job.params = normalised(t->kind, t->engine, ctx->params, out);
    if (s->job.params == NULL)
        goto fail;
    record_version(t, s->observed);
    for (int attempt = 0; attempt < 3; attempt++) {
        int port = free_port();
        if (port < 0) {
            hv_engine_fail(out, "%s server: no free TCP port: %s", t->display, strerror(errno));
            goto fail;
        }
        args_free(&s->job.args);
        if (t->build_server(&s->job, port) != 0)
            goto fail;
        if (s->job.args.broken) {
            hv_engine_fail(out, "out of memory");
            goto fail;
        }
        /* Until run() gives it its real timeout: bounded, so a server
         * whose group never starts does not stay for ever. */
        struct hv_run_spec spec = {
            .argv = (const char *const *)s->job.args.v, .display = t->display, .timeout = 3600};
        s->proc = hv_proc_start(&spec, err, sizeof err);
        if (s->proc == NULL) {
            hv_engine_fail(out, "%s", err);
            goto fail;
        }
        bool up = false, alive = true;
        for (int i = 0; i < LISTEN_WAIT * 20 && alive && !up; i++) {
            alive = hv_proc_poll(s->proc, 0.05);
            up = alive && listening(port);
            if (hv_engine_stopping(ctx))
                break;
        }
        if (up) {
            json_object_set_new(s->observed, "argv", args_json((const char *const *)s->job.args.v));
            json_object_set_new(s->observed, "port", json_integer(port));
            ep->port = port;
            ctx->prepared = s;
            return 0;
        }
        struct hv_run_result r;
        hv_proc_set_timeout(s->proc, 0.001);
        hv_proc_wait(s->proc, NULL, &r);
        s->proc = NULL;
        char why[sizeof out->error];
        hv_run_describe(&r, t->display, why, sizeof why);
        hv_tool_keep_failed_output(out, &r);
        hv_run_result_clear(&r);
        if (hv_engine_stopping(ctx)) {
            hv_engine_fail(out, "stopped while the %s server started", t->display);
            goto fail;
        }
        hv_engine_fail(out, "the %s server did not listen on port %d within %.0f s: %s", t->display,
                       port, LISTEN_WAIT, why);
        if (!alive)
            continue; /* it exited: maybe the port was taken; another one */
        goto fail;
    }
fail:
    job_cleanup(&s->job);
    json_decref(s->observed);
    free(s);
    return -1;
}

static void net_unprepare(struct hv_engine_ctx *ctx)
{
    struct net_server *s = ctx->prepared;
    if (s == NULL)
        return;
    hv_proc_kill(s->proc);
    job_cleanup(&s->job);
    json_decref(s->observed);
    free(s);
    ctx->prepared = NULL;
}

/* The server side: waits for the started server to serve its one test. */
static int net_server_run(const struct tool *t, const struct hv_engine_ctx *ctx,
                          struct hv_engine_result *out)
{
    struct net_server *s = ctx->prepared;
    if (s == NULL)
        return hv_engine_fail(out, "the %s server was not started before the run (no prepare)",
                              t->display);
    s->job.out = out;
    s->job.ctx = ctx;
    json_object_update(out->observed, s->observed);
    hv_proc_set_timeout(s->proc, s->job.timeout);
    struct hv_run_result r;
    hv_proc_wait(s->proc, ctx->stop, &r);
    s->proc = NULL;
    int rc = finish_exec(out, t->display, &r);
    if (rc != 0)
        explain_failure(t, out, &r);
    else
        rc = report(t, &s->job, &r);
    hv_run_result_clear(&r);
    job_cleanup(&s->job);
    json_decref(s->observed);
    free(s);
    return rc;
}

static int net_run(const struct tool *t, const struct hv_engine_ctx *ctx,
                   struct hv_engine_result *out)
{
    if (ctx->role != NULL && strcmp(ctx->role, "server") == 0)
        return net_server_run(t, ctx, out);
    if (ctx->role == NULL || strcmp(ctx->role, "client") != 0)
        return hv_engine_fail(out,
                              "%s runs as the client or the server of a net workload's group, "
                              "not on its own",
                              t->display);
    return tool_run(t, ctx, out);
}

/* ---------------------------------------------------------------------
 * The engine table: the interface's run/prepare/unprepare per row. */

#define ONE_SIDED(fn, id)                                                                          \
    static int fn(const struct hv_engine_ctx *ctx, struct hv_engine_result *out)                   \
    {                                                                                              \
        return tool_run(&tools[id], ctx, out);                                                     \
    }
#define TWO_SIDED(fn, prep, id)                                                                    \
    static int fn(const struct hv_engine_ctx *ctx, struct hv_engine_result *out)                   \
    {                                                                                              \
        return net_run(&tools[id], ctx, out);                                                      \
    }                                                                                              \
    static int prep(struct hv_engine_ctx *ctx, struct hv_endpoint *ep,                             \
                    struct hv_engine_result *out)                                                  \
    {                                                                                              \
        return net_prepare(&tools[id], ctx, ep, out);                                              \
    }
ONE_SIDED(run_fio, T_FIO)
ONE_SIDED(run_sysbench, T_SYSBENCH)
ONE_SIDED(run_stress_ng, T_STRESS_NG)
ONE_SIDED(run_bonnie, T_BONNIE)
TWO_SIDED(run_iperf3, prepare_iperf3, T_IPERF3)
TWO_SIDED(run_iperf, prepare_iperf, T_IPERF)

const struct hv_engine hv_external_engines[] = {
    {.kind = "disk",
     .engine = "fio",
     .summary = "fio, one job built from the params, JSON output",
     .run = run_fio},
    {.kind = "cpu",
     .engine = "sysbench",
     .summary = "sysbench cpu (primes) or memory test",
     .run = run_sysbench},
    {.kind = "cpu",
     .engine = "stress-ng",
     .summary = "one stress-ng stressor with --metrics, YAML report",
     .run = run_stress_ng},
    {.kind = "disk",
     .engine = "bonnie",
     .summary = "bonnie++ in the scratch directory, CSV output",
     .run = run_bonnie},
    {.kind = "net",
     .engine = "iperf3",
     .summary = "iperf3 client against an iperf3 server on the peer, JSON output",
     .run = run_iperf3,
     .prepare = prepare_iperf3,
     .unprepare = net_unprepare},
    {.kind = "net",
     .engine = "iperf",
     .summary = "iperf 2 client against an iperf 2 server on the peer, CSV output",
     .run = run_iperf,
     .prepare = prepare_iperf,
     .unprepare = net_unprepare},
    {.kind = "cpu", .engine = "custom", .summary = HV_CUSTOM_SUMMARY, .run = hv_custom_run_cpu},
    {.kind = "disk", .engine = "custom", .summary = HV_CUSTOM_SUMMARY, .run = hv_custom_run_disk},
    {.kind = "net", .engine = "custom", .summary = HV_CUSTOM_SUMMARY, .run = hv_custom_run_net},
    {.kind = NULL},
};
