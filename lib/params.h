/* params.h — the engines a workload may name and the parameters of each.
 *
 * One description per engine, in the file of its kind (lib/params_cpu.c,
 * params_disk.c, params_net.c, params_custom.c); each declares its
 * parameters as a table of rows (name, type, default, range, choices,
 * description). One generic checker (lib/params.c) walks the rows to
 * validate and normalise a workload's params, and hv_engines_json()
 * publishes the same rows for GET /api/v1/catalog, so what the API
 * documents and what validation accepts cannot drift apart. docs/catalog.md is the human page of
 * the same table (the unit tests check it names every engine and parameter).
 *
 * Everything here is immutable and thread safe. */
#ifndef HV_PARAMS_H
#define HV_PARAMS_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/** What a parameter holds, and so how it is checked and normalised. */
enum hv_param_type {
    HV_PARAM_INT,      /**< a JSON integer in [min, max] (or the row's word) */
    HV_PARAM_NUMBER,   /**< a JSON number in [min, max] */
    HV_PARAM_BOOL,     /**< true or false */
    HV_PARAM_SIZE,     /**< bytes: an integer or "256k"; normalised to an integer */
    HV_PARAM_DURATION, /**< seconds: a number or "30s"; normalised to a real */
    HV_PARAM_ENUM,     /**< one string of choices */
    HV_PARAM_STRING,   /**< a non-empty string, optionally of a format */
    HV_PARAM_TARGET,   /**< a target's name; "host" is the plan's host */
    HV_PARAM_LIST,     /**< a non-empty array of unique choices (a list, not a sweep) */
};

/** One parameter of an engine. A table of these ends with a row whose name
 *  is NULL. All strings are static. */
struct hv_param_def {
    const char *name;
    enum hv_param_type type;
    /** The check refuses params without it (HTTP 400). A peer engine's target
     *  row is not: the plan refuses a missing peer itself (422), see
     *  hv_engine_def.needs_peer. */
    bool required;
    /** The default as a plan would write it, in JSON ("1", "\"256k\"",
     *  "false"), or NULL when an absent parameter stays absent. */
    const char *def;
    /** INT, NUMBER, SIZE (bytes), DURATION (seconds): the inclusive range,
     *  used when min < max. */
    double min, max;
    /** SIZE: the value must be a multiple of this many bytes (0: any). */
    unsigned multiple;
    /** ENUM and LIST: the allowed strings, NULL-terminated. */
    const char *const *choices;
    /** INT: a string accepted in place of a number and kept as is
     *  ("per-vcpu"), or NULL. */
    const char *word;
    /** STRING and TARGET: the greatest length (0: 256). */
    size_t max_len;
    /** STRING: returns NULL when s is acceptable, else a static message
     *  saying what is expected; NULL accepts any non-empty string. */
    const char *(*format)(const char *s);
    /** One line for humans: what it does and the tool option it maps to. */
    const char *description;
};

struct hv_engine_def;

/** An engine's checks of what its rows cannot say (one param bounded by
 *  another). Called with the engine's own row and params that every row
 *  accepted (normalised: defaults filled, sizes in bytes). Appends one
 *  {"path","message"} per problem at path + "/" + member and returns how
 *  many it appended. */
typedef int (*hv_params_cross_fn)(const struct hv_engine_def *e, const json_t *params,
                                  const char *path, json_t *errors);

/** What a target offers that a limit may depend on: the facts its worker
 *  registered (docs/api.md, facts.cpus), or the worker's own when it
 *  checks a job it claimed. */
struct hv_target_facts {
    const char *name; /**< the target, for messages; NULL: "this target" */
    long cpus;        /**< online CPUs, what "per-vcpu" means; 0 when unknown */
};

/** An engine's limits that depend on the target (threads x qd x block of
 *  a "per-vcpu" disk run): params as hv_engine_def_check() left them, the
 *  target's facts t (t->cpus > 0). Appends one {"path","message"} per
 *  problem at path + "/" + member and returns how many it appended. */
typedef int (*hv_params_fit_fn)(const struct hv_engine_def *e, const json_t *params,
                                const struct hv_target_facts *t, const char *path, json_t *errors);

/** One engine: a (kind, engine) pair a workload may name. Each is declared
 *  once, in the lib/params_<kind>.c of its kind; the worker's table of run
 *  functions (worker/engines/engine.c) is keyed by these rows. */
struct hv_engine_def {
    const char *kind;    /**< "cpu", "disk", "net" */
    const char *engine;  /**< "builtin", a tool ("fio" ...), or "custom" */
    const char *summary; /**< one line for humans */
    /** The primary metrics, one per mode, NULL-terminated: a run's first
     *  metric is the one of its mode whenever the run measured it. NULL
     *  when the worker's administrator declares the metric (site
     *  benchmarks). */
    const char *const *metrics;
    /** The parameter rows hv_engine_def_check() walks and the catalogue
     *  publishes. */
    const struct hv_param_def *params_def;
    /** Names of the params a plan may give as an array of values (a
     *  sweep), NULL-terminated; NULL when none may. */
    const char *const *sweepable;
    /** A server side runs on the target named by params.peer (the
     *  engine's TARGET row). The check accepts params without a peer; the
     *  plan must refuse them as impossible (422), as docs/plans.md says. */
    bool needs_peer;
    bool external; /**< runs an external tool the worker must have */
    /** Cross-field checks, or NULL when the rows say it all. */
    hv_params_cross_fn cross;
    /** Limits that depend on the target, or NULL when there are none. */
    hv_params_fit_fn fit;
};

/** The built-in engines and site benchmarks, one description each
 *  (lib/params_cpu.c, params_disk.c, params_net.c, params_custom.c). */
extern const struct hv_engine_def hv_engine_def_cpu_builtin;
extern const struct hv_engine_def hv_engine_def_cpu_custom;
extern const struct hv_engine_def hv_engine_def_disk_builtin;
extern const struct hv_engine_def hv_engine_def_disk_custom;
extern const struct hv_engine_def hv_engine_def_net_builtin;
extern const struct hv_engine_def hv_engine_def_net_custom;

/** The external tools' engines, hv_engine_def_<kind>_<id>: one per line
 *  of lib/tools.def, each described in its lib/parse_<tool>.c beside the
 *  tool's parser. */
#define HV_TOOL(id, kind, guess) extern const struct hv_engine_def hv_engine_def_##kind##_##id;
#include "tools.def"
#undef HV_TOOL

/** The engines of each file, in the catalogue's order, NULL-terminated: an
 *  engine is its description and a row of its file's list. The catalogue
 *  lists the tools of a kind (lib/tools.def) after its file's engines. */
extern const struct hv_engine_def *const hv_engine_defs_cpu[];
extern const struct hv_engine_def *const hv_engine_defs_disk[];
extern const struct hv_engine_def *const hv_engine_defs_net[];
extern const struct hv_engine_def *const hv_engine_defs_custom[];

/* ---- what the descriptions share -------------------------------------- */

/** NULL when s is an absolute path without control characters or ".."
 *  components (a STRING row's format: paths reach the worker's open() and
 *  a tool's argv), else the reason. */
const char *hv_params_abs_path(const char *s);

/** The row "path" of a disk engine: an absolute path (hv_params_abs_path)
 *  of at most PATH_MAX - 1 characters, described by what. */
#define HV_PARAM_PATH(what)                                                                        \
    {                                                                                              \
        .name = "path", .type = HV_PARAM_STRING, .max_len = PATH_MAX - 1,                          \
        .format = hv_params_abs_path, .description = what                                          \
    }

/** A cross check: appends "must be at least OTHER (N bytes)" at path/name
 *  when params.name < params.other, both normalised sizes or absent.
 *  Returns how many it appended (0 or 1). */
int hv_params_at_least(const json_t *params, const char *path, const char *name, const char *other,
                       json_t *errors);

/** The warm-up row of most engines: seconds run before the measured
 *  time and not counted, 2 by default, at most an hour; what says how the
 *  engine's tool is told. */
#define HV_PARAM_WARMUP(what)                                                                      \
    {                                                                                              \
        .name = "warmup", .type = HV_PARAM_DURATION, .def = "2", .min = 0, .max = 3600,            \
        .description = what                                                                        \
    }

/** The measured time of the cpu engines: 10 s by default, at most a day. */
#define HV_PARAM_SECONDS(what)                                                                     \
    {                                                                                              \
        .name = "seconds", .type = HV_PARAM_DURATION, .def = "10", .min = 1, .max = 86400,         \
        .description = what                                                                        \
    }

/** The rows the net engines share: the peer, parallel streams, socket
 *  buffers and the measured time. */
#define HV_PARAM_NET_PEER                                                                          \
    {                                                                                              \
        .name = "peer", .type = HV_PARAM_TARGET, .max_len = 128,                                   \
        .description = "the target that runs the server side; \"host\" is the plan's host; "       \
                       "a plan without one cannot run (422)"                                       \
    }
#define HV_PARAM_NET_STREAMS                                                                       \
    {                                                                                              \
        .name = "streams", .type = HV_PARAM_INT, .def = "1", .min = 1, .max = 128,                 \
        .description = "parallel TCP connections (iperf -P)"                                       \
    }
#define HV_PARAM_NET_WINDOW                                                                        \
    {                                                                                              \
        .name = "window", .type = HV_PARAM_SIZE, .min = 4 * 1024.0, .max = 64 * 1048576.0,         \
        .description = "socket buffer size at both ends (iperf -w); absent: the system's "         \
                       "autotuning"                                                                \
    }
#define HV_PARAM_NET_SECONDS                                                                       \
    {                                                                                              \
        .name = "seconds", .type = HV_PARAM_DURATION, .def = "10", .min = 1, .max = 3600,          \
        .description = "measured time (iperf -t)"                                                  \
    }

/** Validates a workload's params for engine e, a JSON object whose values
 *  are scalars (sweeps already expanded by the caller; a LIST param is an
 *  array), and normalises it in place: fills defaults, turns sizes into
 *  integer bytes and durations into real seconds. Appends one {"path",
 *  "message"} per problem to errors, at path + "/" + member (+ "/" + index
 *  inside a list), and returns how many it appended. Walks e's rows with
 *  one generic checker, then runs e->cross when every row passed. */
int hv_engine_def_check(const struct hv_engine_def *e, json_t *params, const char *path,
                        json_t *errors);

/** Checks params, as hv_engine_def_check() left them, against the limits
 *  of e that depend on the target t. The server calls it at submission for
 *  every registered target a workload would run on (a problem is a 422),
 *  the worker again with its own facts when it runs the job. Appends one
 *  {"path","message"} per problem as hv_engine_def_check() does and
 *  returns how many; 0 when e has no such limit or t->cpus is 0. */
int hv_engine_def_fit(const struct hv_engine_def *e, const json_t *params,
                      const struct hv_target_facts *t, const char *path, json_t *errors);

/** The engine for (kind, engine); engine NULL means "builtin". Returns a
 *  pointer into the static table, or NULL when there is none. */
const struct hv_engine_def *hv_engine_def_find(const char *kind, const char *engine);

/** Whether metric is a primary metric of the engine (kind, engine): one its
 *  row names, or any metric of an engine that names none (site benchmarks)
 *  or of an engine not in the table. */
bool hv_engine_metric_primary(const char *kind, const char *engine, const char *metric);

/** NULL when s may name a site benchmark (a custom engine's params.name,
 *  a worker's declared benchmark): a-z, 0-9, '_', '.', '-', not starting
 *  with '.', so the name cannot reach anything the administrator did not
 *  declare; otherwise the reason, a static string. s must not be NULL. */
const char *hv_params_bench_name_error(const char *s);

/** The number of engines. */
size_t hv_engine_def_count(void);

/** Engine i (0 <= i < hv_engine_def_count()) in the catalogue's order (the
 *  lists above, one after another), or NULL when i is out of range. */
const struct hv_engine_def *hv_engine_def_at(size_t i);

/** Whether param of engine e may be swept (given as an array). */
bool hv_engine_def_sweepable(const struct hv_engine_def *e, const char *param);

/** The name of a parameter type as the catalogue spells it ("int",
 *  "size" ...; "unknown" out of range). Returns a static string. */
const char *hv_param_type_name(enum hv_param_type t);

/* ---- reading normalised params --------------------------------------
 *
 * What hv_engine_def_check() left in params, read the way every engine
 * reads it, so an engine never re-checks a value lib/ has accepted. A
 * missing member reads as 0, false or NULL. */

/** The row of e named name, or NULL. */
const struct hv_param_def *hv_engine_def_param(const struct hv_engine_def *e, const char *name);

/** An INT or SIZE param. */
long long hv_params_int(const json_t *params, const char *name);

/** A NUMBER or DURATION param (seconds). */
double hv_params_num(const json_t *params, const char *name);

/** A BOOL param. */
bool hv_params_bool(const json_t *params, const char *name);

/** An ENUM, STRING or TARGET param, borrowed from params; NULL when absent. */
const char *hv_params_str(const json_t *params, const char *name);

/** An INT param of e that may be the row's word ("per-vcpu"): the integer,
 *  or for the word cpus (the CPUs of the target the job runs on) clamped
 *  to the row's range. */
long hv_params_count(const struct hv_engine_def *e, const json_t *params, const char *name,
                     long cpus);

/** The index of an ENUM param's value among the choices of e's row, or -1
 *  when it is not one (never after hv_engine_def_check()). */
int hv_params_choice(const struct hv_engine_def *e, const json_t *params, const char *name);

/** Every engine as a JSON array for GET /api/v1/catalog, in table order:
 *  [{"kind", "engine", "summary", "needs_peer", "external", "metrics" (the
 *  primary metrics; absent for site benchmarks), "params":
 *  [{"name", "type", "required" (the plan must give it: a required row,
 *  or the peer of a needs_peer engine), "sweepable", "description", and where
 *  they apply "default" (as a plan writes it), "min", "max", "unit"
 *  ("bytes", "seconds"), "multiple_of", "choices", "or" (the word an int
 *  also takes), "max_length"}]}]. Returns a new reference the caller owns,
 *  or NULL when memory runs out. */
json_t *hv_engines_json(void);

#endif
