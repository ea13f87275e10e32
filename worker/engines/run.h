/* run.h — runs an external program for an engine: an argv (never a
 * shell), its own process group, standard output and error captured up to
 * a cap, a timeout and a stop flag.
 *
 * The program gets /dev/null as standard input, the default disposition of
 * every signal and an empty signal mask (the worker's engine threads block
 * SIGTERM and SIGINT, and a child must not inherit that). On a timeout or a
 * stop the whole process group gets SIGTERM, then SIGKILL after a grace
 * period, so a tool's helpers (fio's job processes, a script's children)
 * go with it.
 *
 * Either in one call (hv_run) or in two (hv_proc_start, later
 * hv_proc_wait) for a server that must be listening before its clients
 * start. Thread safe: nothing is shared between calls. */
#ifndef HV_WORKER_ENGINES_RUN_H
#define HV_WORKER_ENGINES_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/** The most standard output kept by default (the rest is read and
 *  dropped, so the program never blocks on a full pipe). */
#define HV_RUN_OUT_CAP (4 * 1024 * 1024)
/** The most standard error kept by default. */
#define HV_RUN_ERR_CAP (64 * 1024)
/** Seconds between SIGTERM and SIGKILL by default. */
#define HV_RUN_GRACE 2.0

/** What to run. */
struct hv_run_spec {
    /** argv[0] is a name looked up in PATH, or a path (with a '/');
     *  NULL-terminated. Borrowed. */
    const char *const *argv;
    /** How the failure messages name the program ("fio", "bonnie++");
     *  NULL: argv[0]. */
    const char *display;
    /** Seconds from the start until the program is killed; 0: never. */
    double timeout;
    /** Seconds between SIGTERM and SIGKILL; 0: HV_RUN_GRACE. */
    double grace;
    /** Bytes of standard output / error kept; 0: the defaults above. */
    size_t out_cap, err_cap;
    /** Directory to run in; NULL: the worker's. */
    const char *cwd;
    /** The program's environment, "NAME=value" strings, NULL-terminated;
     *  NULL: the worker's. Borrowed. */
    const char *const *envp;
};

/** How a run ended. The two buffers are NUL-terminated and owned by the
 *  result (hv_run_result_clear()). */
struct hv_run_result {
    char *out, *err;         /**< what was kept of standard output / error */
    size_t out_len, err_len; /**< bytes kept */
    size_t out_total;        /**< bytes the program wrote to standard output */
    bool out_truncated;      /**< out_total > out_len */
    int exit_code;           /**< its exit status, or -1 when a signal ended it */
    int signal;              /**< the signal that ended it, or 0 */
    bool timed_out;          /**< killed because the timeout passed */
    bool stopped;            /**< killed because the stop flag was set */
    double seconds;          /**< from the start to its end */
    char path[4096];         /**< the program that ran (argv[0] resolved) */
};

/** A started program (opaque). */
struct hv_proc;

/** Finds name in PATH (or checks a path with a '/'): writes the
 *  executable's path into out and returns 0, or returns -1 with a sentence
 *  in err: "fio is not installed on this worker (not found in PATH)",
 *  "/opt/x: No such file or directory". display names the program in that
 *  sentence (NULL: name). */
int hv_run_find(const char *name, const char *display, char *out, size_t outlen, char *err,
                size_t errlen);

/** Starts spec's program. Returns a handle the caller must pass to
 *  hv_proc_wait() or hv_proc_kill(), or NULL with err set when it cannot
 *  start (not installed, not executable, out of resources). */
struct hv_proc *hv_proc_start(const struct hv_run_spec *spec, char *err, size_t errlen);

/** The process id (and process group id) of p. */
pid_t hv_proc_pid(const struct hv_proc *p);

/** Sets p's timeout to `seconds` from now (0: none), replacing the one
 *  its spec gave: a server started before a start barrier gets its real
 *  timeout when the measurement begins. */
void hv_proc_set_timeout(struct hv_proc *p, double seconds);

/** Reads p's output for up to `seconds` without waiting for its end.
 *  Returns true while it still runs; false once it has ended (a later
 *  hv_proc_wait() still reports how). */
bool hv_proc_poll(struct hv_proc *p, double seconds);

/** Waits until p ends, its timeout passes or *stop becomes nonzero
 *  (checked every 50 ms at most; stop may be NULL), reading its output;
 *  kills its group on a timeout or a stop. Fills *r (initialised here) and
 *  frees p. Returns 0, or -1 when memory ran out (r still describes what
 *  is known). */
int hv_proc_wait(struct hv_proc *p, volatile sig_atomic_t *stop, struct hv_run_result *r);

/** Kills p's process group (SIGTERM, SIGKILL after the grace period),
 *  reaps it and frees p. For a started program nobody will wait for. */
void hv_proc_kill(struct hv_proc *p);

/** hv_proc_start() then hv_proc_wait(). Returns 0 when the program ran (whatever
 *  its status: see *r), or -1 with err set when it could not start (*r is
 *  then empty but may be cleared). */
int hv_run(const struct hv_run_spec *spec, volatile sig_atomic_t *stop, struct hv_run_result *r,
           char *err, size_t errlen);

/** True when r describes a run that exited with status 0. */
bool hv_run_ok(const struct hv_run_result *r);

/** Writes one sentence on why r is not a success into buf, naming the
 *  program as display: "fio exited with status 1: fio: pid=..., err=22",
 *  "stress-ng was killed by signal 11 (Segmentation fault)", "iperf3
 *  timed out after 60 s", "bonnie++ was stopped"; the last non-empty line
 *  of standard error (else of standard output) is quoted when there is
 *  one. */
void hv_run_describe(const struct hv_run_result *r, const char *display, char *buf, size_t len);

/** Releases r's buffers; r may be cleared twice. */
void hv_run_result_clear(struct hv_run_result *r);

#endif
