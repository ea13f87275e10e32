/* engine.h — the interface of benchmark engines, and the table that maps a
 * workload's (kind, engine) to one.
 *
 * An engine runs one workload to completion in the calling thread (it may
 * start threads of its own and joins them before returning), fills a
 * result, and returns. It never talks to the server: the worker turns the
 * result into the body of POST /api/v1/jobs/{id}/result. */
#ifndef HV_WORKER_ENGINE_H
#define HV_WORKER_ENGINE_H

#include "params.h"

#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

/** Receives one sample as it is taken: metric name, t in seconds since the
 *  run started, value. Called from an engine thread, not necessarily the
 *  one that called run(); it must be quick and thread safe. */
typedef void (*hv_sample_fn)(void *arg, const char *metric, double t, double value);

/** What an engine is given. */
struct hv_engine_ctx {
    /** The workload's params object; NULL means all defaults. Borrowed. */
    const json_t *params;
    /** Set to nonzero (from a signal handler, or from another thread with
     *  __atomic_store_n) to stop early; NULL when the run cannot be
     *  stopped. The engine checks it between units of work (at most about
     *  50 ms apart while measuring; setting up may take longer) and then
     *  fails with an error saying it stopped. */
    volatile sig_atomic_t *stop;
    /** The job's side of a two-sided workload: "server" or "client" (a
     *  net workload's two ends run as a group); NULL otherwise. Borrowed. */
    const char *role;
    /** The target at the other end of a net workload (the plan's peer);
     *  NULL otherwise. Borrowed. */
    const char *peer;
    /** Optional live view of the samples; may be NULL. */
    hv_sample_fn on_sample;
    void *sample_arg;
    /** For the client side of a two-sided workload: the endpoints the
     *  group's members announced (the ready answer's `endpoints`, docs/api.md:
     *  [{"job_id","role","target","host","port"}]); NULL otherwise. Borrowed. */
    const json_t *endpoints;
    /** For the server side: what prepare() left for run() (a listening
     *  socket, a started tool); run() releases it. */
    void *prepared;
    /** The job's id on the server, 0 when run outside a worker. A net
     *  server accepts only clients that name it (the endpoints' job_id). */
    long long job_id;
    /** Members of the job's group (the server and its clients), 0 when the
     *  job runs alone. */
    int group_size;
};

/** Where the server side of a two-sided workload listens. */
struct hv_endpoint {
    /** Address the clients should connect to; prepare() may leave it empty
     *  and the worker fills in its own address (the one its connection to
     *  the hvbench server uses, or --advertise). */
    char host[256];
    int port;
};

/** What an engine produces. Initialise with hv_engine_result_init() and
 *  release with hv_engine_result_clear(). The JSON values are owned by the
 *  result. */
struct hv_engine_result {
    /** [{"name","value","unit","higher_is_better"}]; the first one is the
     *  workload's headline metric (logged, shown first). */
    json_t *metrics;
    /** [{"metric","t","value"}], t in seconds since the measured part of
     *  the run started (after any warm-up). */
    json_t *samples;
    /** What was really done (copies, actual seconds, CPUs used ...). */
    json_t *observed;
    /** The tool's own output (external engines), or NULL; at most
     *  HV_ENGINE_RAW_MAX bytes, kept in the result's `raw`. Owned. */
    char *raw;
    /** Bytes of the output raw is the start of, when it is not all of it
     *  (the capture or HV_ENGINE_RAW_MAX cut it); 0 when raw is whole. */
    size_t raw_of;
    /** Why the run failed; empty when it succeeded. */
    char error[512];
};

/** The most raw output a result keeps in memory: as much as the process
 *  runner captures (HV_RUN_OUT_CAP, run.h). The upload cuts it to the
 *  server's limit (1 MiB), with a marker and observed.raw_truncated
 *  (deliver.h). */
#define HV_ENGINE_RAW_MAX (4 * 1024 * 1024)

struct hv_engine;
struct hv_tool;

/** Runs a workload with engine e (the row it is called from). Returns 0
 *  on success; nonzero with out->error set when the params are invalid,
 *  the run was stopped, or it failed (including a failed self-check).
 *  Whatever is in *out on failure is diagnostic only. */
typedef int (*hv_engine_run_fn)(const struct hv_engine *e, const struct hv_engine_ctx *ctx,
                                struct hv_engine_result *out);

/** One row of the worker's engine table: the run functions of one engine
 *  description of lib/params.h. */
struct hv_engine {
    /** What the engine is: kind, name, summary, params, headline metrics.
     *  The table is keyed by it. */
    const struct hv_engine_def *def;
    hv_engine_run_fn run;
    /** Optional, for the server role of two-sided workloads: called once
     *  the job is claimed and before the group's ready call; starts
     *  listening, fills *ep and may set ctx->prepared. Returns 0, or -1 with
     *  out->error set (the job then fails before the barrier). */
    int (*prepare)(const struct hv_engine *e, struct hv_engine_ctx *ctx, struct hv_endpoint *ep,
                   struct hv_engine_result *out);
    /** Optional: releases what prepare() left when run() is never called
     *  (the group was called off, the worker is shutting down). */
    void (*unprepare)(const struct hv_engine *e, struct hv_engine_ctx *ctx);
    /** An external tool's adapter (tools.h), or NULL. */
    const struct hv_tool *tool;
};

/** Looks up the engine for a workload; engine NULL means "builtin".
 *  Returns a pointer into a static table, or NULL when this worker has no
 *  such engine. */
const struct hv_engine *hv_engine_find(const char *kind, const char *engine);

/** Makes *r empty: no metrics, no samples, an empty observed object and no
 *  error. Returns 0, or -1 when memory runs out (then *r still may be
 *  cleared). */
int hv_engine_result_init(struct hv_engine_result *r);

/** Releases what *r holds; it may be initialised again. */
void hv_engine_result_clear(struct hv_engine_result *r);

/** Keeps (a copy of) the first HV_ENGINE_RAW_MAX bytes of a tool's output
 *  as the result's raw text, cutting at a UTF-8 boundary and dropping NUL
 *  bytes. Returns 0, or -1 when memory runs out. */
int hv_engine_set_raw(struct hv_engine_result *r, const char *text, size_t len);

/** Like hv_engine_set_raw() for text that is the first len bytes of an
 *  output of total bytes (a capture that stopped at its cap): the result
 *  then says in observed.raw_truncated how much of how much it kept. */
int hv_engine_set_raw_of(struct hv_engine_result *r, const char *text, size_t len, size_t total);

/** Appends a metric. Returns 0, or -1 when value is not finite (JSON has no
 *  NaN) or memory runs out. */
int hv_engine_add_metric(struct hv_engine_result *r, const char *name, double value,
                         const char *unit, bool higher_is_better);

/** Appends a sample to r and passes it to ctx->on_sample when set. Not
 *  thread safe: one thread per result emits samples. Returns 0 or -1 as
 *  hv_engine_add_metric(). */
int hv_engine_emit_sample(const struct hv_engine_ctx *ctx, struct hv_engine_result *r,
                          const char *metric, double t, double value);

/** The CPUs of this machine, what "per-vcpu" means when it runs a job:
 *  the online ones, at least 1. */
long hv_engine_cpus(void);

/** A job's params as engine def runs them: a normalised copy of params
 *  (NULL: all defaults) checked with def's rows in lib/params.h, as the
 *  server checked them at submission, and against the limits that depend
 *  on the target with cpus CPUs (this machine's at claim). Does no I/O.
 *  Returns a new object the caller owns, or NULL with err set to
 *  "invalid params: /params/NAME: why" (the first problem). */
json_t *hv_engine_params_check(const struct hv_engine_def *def, const json_t *params, long cpus,
                               char *err, size_t len);

/** Formats the failure reason into r->error and returns -1, so an engine
 *  can write `return hv_engine_fail(out, "...")`. */
int hv_engine_fail(struct hv_engine_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** True once ctx->stop has been set. */
bool hv_engine_stopping(const struct hv_engine_ctx *ctx);

/** Builds the body of POST /api/v1/jobs/{id}/result (docs/api.md): attempt,
 *  status "ok" when ok else "error" (with r->error), the two ISO 8601
 *  timestamps, and r's metrics, samples, observed and raw (raw also when
 *  the run failed: it says why). A failed run reports
 *  no metrics or samples, so a partial run can never pass for a result.
 *  Returns a new reference (caller owns it), or NULL when memory runs out. */
/** The measurement window of the steady-state test, in samples. */
#define HV_STEADY_WINDOW 5

/** A steady-state verdict (after the SNIA PTS): over the last window
 *  samples, the range (max - min) is within 20% of their mean and the
 *  excursion of their least-squares line across the window
 *  (|slope| x (window - 1)) within 10% of it. */
struct hv_steady {
    bool steady;
    int window;       /**< HV_STEADY_WINDOW */
    double range_pct; /**< 100 x range / mean; NAN with fewer samples */
    double slope_pct; /**< 100 x excursion / mean; NAN with fewer samples */
};

/** Judges the series v[0..n) (one value per sampling interval, oldest
 *  first, warm-up already left out). With fewer than the window's samples,
 *  or a mean that is not positive, the verdict is not steady and both
 *  percentages are NAN. */
void hv_steady_state(const double *v, size_t n, struct hv_steady *out);

/** Sets "steady", "window", "range_pct" and "slope_pct" (null when NAN)
 *  of st in the object obj, the form every engine reports its verdict in.
 *  Returns 0, or -1 when memory runs out. */
int hv_steady_observe(json_t *obj, const struct hv_steady *st);

json_t *hv_engine_result_to_json(const struct hv_engine_result *r, int attempt, bool ok,
                                 const char *started_at, const char *finished_at);

/** Names the calling thread (at most 15 characters): the threads that do
 *  a built-in engine's work are "hv-cpu", "hv-disk" and "hv-net", so the
 *  worker's own threads (claims, heartbeats, sampling, telemetry) can be
 *  told from them in /proc/PID/task/TID/comm (bench/agent_cost.sh). */
static inline void hv_engine_thread_name(const char *name)
{
    pthread_setname_np(pthread_self(), name);
}

#endif
