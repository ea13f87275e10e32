/* tools.h — engines that run external tools (lib/tools.def): the shared
 * runner and the adapters.
 *
 * Each tool is an adapter (worker/engines/tool_<name>.c): one row naming
 * the program and two steps. place() makes what the run needs outside the
 * process (a file, a directory; it does I/O) and records it in the job;
 * argv() turns the params lib/params.h normalised, and what place() left,
 * into the argv, timeout and warm-up, and does no I/O, so a test can feed
 * it every value a plan may give. The runner (tools.c) normalises the
 * params, runs the tool through worker/engines/run.h and reads its output
 * with the parser of lib/parsers.h, so a run gets the same metric names as
 * an import of the same output. Its output is kept as the result's raw
 * text, and observed records the tool's version, the exact argv and what
 * the parser read beside the metrics. The net tools' server side is
 * tools_net.c.
 *
 * Files: fio and bonnie++ write under the scratch directory
 * ($HVBENCH_SCRATCH, default /var/tmp) unless params.path names a file or
 * directory there, or a block device listed in $HVBENCH_DISK_DEVICES (fio),
 * as the built-in disk engine allows. */
#ifndef HV_WORKER_ENGINES_TOOLS_H
#define HV_WORKER_ENGINES_TOOLS_H

#include "worker/engines/engine.h"
#include "worker/engines/run.h"

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/** The most arguments an argv may have. */
#define HV_TOOL_MAX_ARGS 48

/** An argv under construction. */
struct hv_tool_args {
    char *v[HV_TOOL_MAX_ARGS + 1]; /**< NULL-terminated, owned */
    int n;
    bool broken; /**< out of memory or too many */
};

/** Appends one formatted argument (a->broken when it cannot). */
void hv_tool_arg(struct hv_tool_args *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** Frees the arguments; a may be reused. */
void hv_tool_args_free(struct hv_tool_args *a);

/** argv as a new JSON array of strings (observed.argv). */
json_t *hv_tool_argv_json(const char *const *argv);

struct hv_tool;

/** One run of one tool: what its steps read and fill. */
struct hv_tool_job {
    const struct hv_engine *engine; /**< the engine's row; def names its parser */
    const struct hv_tool *tool;     /**< engine->tool */
    const struct hv_engine_ctx *ctx;
    struct hv_engine_result *out;
    json_t *params; /**< normalised by lib/params.h, owned */
    long cpus;      /**< the CPUs "per-vcpu" means (the worker's online CPUs) */
    bool root;      /**< the worker runs as root */
    struct hv_tool_args args;
    double timeout;
    char target[PATH_MAX];  /**< fio's file or bonnie++'s directory, resolved */
    char host[256];         /**< a net client's server */
    int port;               /**< ... and its port */
    char cwd[PATH_MAX];     /**< "" : the worker's */
    char tmpdir[PATH_MAX];  /**< made for this run and removed after it, or "" */
    char outfile[PATH_MAX]; /**< the output to parse when not standard output */
    char remove[PATH_MAX];  /**< a file this run created, removed after it */
    double warmup;          /**< seconds the tool was told to run before measuring */
};

/** A tool adapter: one row per tool, the engine table's row's tool (its
 *  description in lib/params.h names the parser, lib/parsers.h). */
struct hv_tool {
    const char *display;      /**< as messages name it */
    const char *program;      /**< argv[0], looked up in PATH */
    const char *version_flag; /**< prints the version, or NULL */
    /** Optional: makes what the run needs (files, a directory, the
     *  server's address) and records it in j. Returns 0, or -1 with
     *  j->out's error set. */
    int (*place)(struct hv_tool_job *j);
    /** The argv (and timeout, warm-up) of a one-sided run or of a net
     *  workload's client, from j->params and what place() left; no I/O.
     *  Returns 0, or -1 with j->out's error set. */
    int (*argv)(struct hv_tool_job *j);
    /** Net tools: the server's argv, listening on port; no I/O. */
    int (*server_argv)(struct hv_tool_job *j, int port);
    /** NULL when the tool reports per-interval figures (samples); else why
     *  there is no steady-state verdict. */
    const char *no_samples;
    /** The tool has no warm-up of its own: the samples of the first
     *  `warmup` seconds are dropped here (iperf 2). */
    bool drop_warmup;
};

/** The adapters, hv_tool_<id> in tool_<id>.c: one per line of
 *  lib/tools.def. */
#define HV_TOOL(id, kind, guess) extern const struct hv_tool hv_tool_##id;
#include "tools.def"
#undef HV_TOOL

/** Whole seconds for tools that take no fraction: s rounded up, at least 1. */
long long hv_tool_whole_seconds(double s);

/** A warm-up in the whole seconds tools take: rounded up, 0 stays 0. */
long long hv_tool_whole_warmup(double s);

/** A name for a new file or directory in the scratch directory: scratch +
 *  "/hvbench-" + what + a unique part + suffix. Returns 0, or -1 with
 *  r->error set when the path is too long. */
int hv_tool_scratch_name(char *out, size_t len, const char *scratch, const char *what,
                         const char *suffix, struct hv_engine_result *r);

/** Makes j->tmpdir, a new directory in the scratch directory, removed
 *  after the run. Returns 0, or -1 with j->out's error set. */
int hv_tool_make_tmpdir(struct hv_tool_job *j, const char *what);

/** Fills a job for engine e (a row with a tool) from ctx: cpus, root, and
 *  the params as hv_engine_params_check() makes them (a copy). Returns 0,
 *  or -1 with out->error set ("invalid params: PATH: why"). */
int hv_tool_job_init(struct hv_tool_job *j, const struct hv_engine *e,
                     const struct hv_engine_ctx *ctx, struct hv_engine_result *out);

/** Removes what the job's run made and frees what it holds. */
void hv_tool_job_cleanup(struct hv_tool_job *j);

/** Runs engine e's tool one-sided or as a net workload's client: place,
 *  argv, run, parse, report. hv_engine_run_fn. */
int hv_tool_run(const struct hv_engine *e, const struct hv_engine_ctx *ctx,
                struct hv_engine_result *out);

/** Records `PROGRAM VERSION_FLAG`'s first line as observed.tool_version. */
void hv_tool_record_version(const struct hv_tool *t, json_t *observed);

/** Parses a finished run's output into out's metrics, samples and
 *  observed, keeping it as raw. Returns 0, or -1 with out->error set. */
int hv_tool_report(struct hv_tool_job *j, const struct hv_run_result *r);

/** A nonzero exit with nothing on standard error: sets j->out's error to
 *  what the tool's parser finds in its output (iperf3 -J puts its error
 *  into the JSON), when it finds something. */
void hv_tool_explain_failure(const struct hv_tool_job *j, const struct hv_run_result *r);

/** Turns a finished run into out: records how it went in observed;
 *  returns 0 when it exited with status 0, else -1 with out->error saying
 *  why and its output kept as raw. */
int hv_tool_finish(struct hv_engine_result *out, const char *display,
                   const struct hv_run_result *r);

/** Net tools (tools_net.c), the engine table's callbacks: the server
 *  side's prepare (starts the tool's server on a free port and waits until
 *  it listens), unprepare, and the run of either side. */
int hv_tool_net_prepare(const struct hv_engine *e, struct hv_engine_ctx *ctx,
                        struct hv_endpoint *ep, struct hv_engine_result *out);
void hv_tool_net_unprepare(const struct hv_engine *e, struct hv_engine_ctx *ctx);
int hv_tool_net_run(const struct hv_engine *e, const struct hv_engine_ctx *ctx,
                    struct hv_engine_result *out);

/** Net clients' place(): the server's address from the group's endpoints
 *  into j->host and j->port. Returns 0, or -1 with j->out's error set. */
int hv_tool_net_endpoint(struct hv_tool_job *j);

/** Starts the argv of a net tool's client: "PROGRAM -c HOST -p PORT". */
void hv_tool_client_args(struct hv_tool_job *j);

/** Runs spec for an engine: records the argv and the program's path in
 *  out->observed ("argv", "tool_path"), runs it under ctx->stop and
 *  records "exit_code" and "seconds". Returns 0 when it exited with status
 *  0 (*r holds its output; the caller clears it); otherwise -1 with
 *  out->error saying why (not installed, status, signal, timeout, stop) and
 *  what it printed kept as out->raw, *r cleared. */
int hv_tool_exec(const struct hv_engine_ctx *ctx, struct hv_engine_result *out,
                 const struct hv_run_spec *spec, struct hv_run_result *r);

/** Keeps a failed run's output as out->raw: standard output, then its
 *  standard error under a "--- stderr ---" line. */
void hv_tool_keep_failed_output(struct hv_engine_result *out, const struct hv_run_result *r);

#endif
