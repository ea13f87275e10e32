/* plan.h — the benchmark plan: parsing, validation, normalisation and
 * expansion into jobs and groups.
 *
 * The server validates every submitted plan here, and the CLI can validate
 * locally with the same code. A parsed plan owns a normalised JSON document
 * (defaults filled in, units converted) that is what gets stored, and the
 * resolved targets, configurations and workload variants the expansion
 * needs. docs/plans.md is the user's view of the same rules. */
#ifndef HV_PLAN_H
#define HV_PLAN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Hard limits; plans beyond them are refused with a clear error. */
#define HV_PLAN_MAX_WORKLOADS   64
#define HV_PLAN_MAX_GUESTS      256
#define HV_PLAN_MAX_FACTORS     16
#define HV_PLAN_MAX_LEVELS      32
#define HV_PLAN_MAX_SWEEP       16
#define HV_PLAN_MAX_VARIANTS    256
#define HV_PLAN_MAX_REPETITIONS 1000
#define HV_PLAN_MAX_JOBS        100000
#define HV_PLAN_MAX_DEPTH       32
#define HV_PLAN_MAX_ERRORS      50 /**< problems listed; then one entry counts the rest */

/** A before_host hook that answers "not yet" (exit status 75, HTTP 503) is
 *  asked again every hooks.interval seconds (or the Retry-After it gave)
 *  until hooks.timeout seconds passed since its first "not yet": the
 *  defaults and bounds of the two. A drain may wait for batch jobs of
 *  days, hence a week at most. */
#define HV_PLAN_HOOK_TIMEOUT_DEFAULT  86400
#define HV_PLAN_HOOK_TIMEOUT_MAX      604800
#define HV_PLAN_HOOK_INTERVAL_DEFAULT 30
#define HV_PLAN_HOOK_INTERVAL_MAX     3600

/** How a plan failed validation. */
enum hv_plan_verdict {
    HV_PLAN_VALID = 0,
    HV_PLAN_INVALID,    /**< malformed: HTTP 400 */
    HV_PLAN_IMPOSSIBLE, /**< well formed but cannot run here: HTTP 422 */
    HV_PLAN_NO_MEMORY,  /**< memory ran out while checking: HTTP 500 */
};

/** How many guests run a workload at once. */
enum hv_concurrency {
    HV_CONC_ONE_GUEST,
    HV_CONC_ALL_GUESTS,
    HV_CONC_RAMP,
};

/** One combination of factor levels. */
struct hv_config {
    char *name;     /**< "default" or the non-default levels, "vcpu_pin=on,kvm_ept=off" */
    json_t *levels; /**< every factor -> its level text (owned) */
};

/** One workload variant: a workload of the plan with its sweeps resolved
 *  ("net[streams=8]"). */
struct hv_workload {
    char *id;            /**< variant id (owned) */
    const char *base_id; /**< the id as written in the plan */
    const char *kind;    /**< cpu, disk, net */
    const char *engine;  /**< builtin or an external tool */
    json_t *params;      /**< concrete, normalised params (owned) */
    const char *peer;    /**< the peer target of a net workload, else NULL */
};

/** A parsed, normalised plan. Strings point into doc unless marked owned. */
struct hv_plan {
    json_t *doc; /**< the normalised document (owned) */
    const char *name;
    const char *host;        /**< the host target */
    bool require_registered; /**< refuse the plan while a target is unknown */
    const char *baseline;
    size_t n_guests;
    char **guests; /**< guest target names (owned) */
    size_t n_workloads;
    struct hv_workload *workloads; /**< variants (owned) */
    size_t n_configs;
    struct hv_config *configs; /**< configs[0] has every factor at its default */
    enum hv_concurrency concurrency;
    int ramp_from, ramp_to, ramp_step;
    bool host_baseline;   /**< the host runs the workloads too, as the baseline */
    int rep_min, rep_max; /**< repetitions */
    double ci_pct;        /**< target 95 % CI half-width in % of the mean */
    bool randomized;      /**< interleave in random order (else as written) */
    uint64_t seed;        /**< seed of the run order, recorded for replay */
};

/** One job of the expansion. */
struct hv_job_spec {
    size_t config;      /**< index into plan->configs */
    size_t workload;    /**< index into plan->workloads */
    int repetition;     /**< 1-based */
    int run_order;      /**< 0-based, unique, position in the run order */
    const char *target; /**< target name (points into the plan) */
    const char *role;   /**< NULL, or "server" / "client" for net workloads */
    long group;         /**< index into the expansion's groups, -1 alone */
};

/** The jobs of a plan and the groups whose members start together. */
struct hv_expansion {
    struct hv_job_spec *jobs;
    size_t n_jobs;
    size_t n_groups;
    int *group_sizes; /**< members of each group */
};

/** In the guest names of a template plan (PREFIX "p{plan}-" I, I from 1
 *  to count), what the server replaces with the plan's id when it stores
 *  the jobs, so the clones of two plans never share a name. */
#define HV_PLAN_ID_MARK "p" HV_PLAN_ID_TOKEN

/** The token of HV_PLAN_ID_MARK that becomes the plan's id. */
#define HV_PLAN_ID_TOKEN "{plan}"

/** The longest id a plan may have (a PostgreSQL bigint), for checking the
 *  longest name a clone can get. */
#define HV_PLAN_ID_LONGEST "9223372036854775807"

/** What validation may need from outside: the guests carrying a label
 *  (the server asks its database). A NULL resolver leaves label-selected
 *  guests unresolved, which only a local validation should do. */
struct hv_plan_env {
    /** Sets *names to a new JSON array of the guest target names whose
     *  labels hold every pair of selector (lib/selector.h, a JSON object),
     *  among the guests of host (the plan's targets.host, NULL when it has
     *  none) and those of no known host; returns 0, or -1 when the lookup
     *  failed. */
    int (*guests_by_label)(void *arg, const char *host, const json_t *selector, json_t **names);
    /** Sets *names to a new JSON array of the target names a plan on host
     *  means by the guest names of domains (a JSON array of strings), in
     *  their order: "HOST/NAME" for a guest of that host (guest names
     *  repeat across hosts); returns 0, or -1 when the lookup failed. NULL
     *  keeps the names as written. */
    int (*guests_by_domain)(void *arg, const char *host, const json_t *domains, json_t **names);
    void *arg;
    /** The noise treatment of a plan that does not say ("repeat" or
     *  "keep"); NULL: "repeat". */
    const char *noise_default;
};

/** Validates doc and fills *plan. default_seed is used when the plan has no
 *  "seed". env may be NULL. Every problem is appended to errors as
 *  {"path","message"}, at most HV_PLAN_MAX_ERRORS of them, then one at
 *  "" saying how many more there were. The time taken grows linearly with
 *  doc's size; the workloads past HV_PLAN_MAX_WORKLOADS are refused as a
 *  list, not looked at one by one. On HV_PLAN_VALID the caller must call
 *  hv_plan_free(); otherwise *plan holds nothing. */
enum hv_plan_verdict hv_plan_parse(const json_t *doc, uint64_t default_seed,
                                   const struct hv_plan_env *env, struct hv_plan *plan,
                                   json_t *errors);

/** Releases what a parsed plan holds. */
void hv_plan_free(struct hv_plan *plan);

/** The name of configuration i. */
const char *hv_plan_config_name(const struct hv_plan *plan, size_t i);

/** The jobs the plan asks for per repetition round. */
size_t hv_plan_jobs_per_round(const struct hv_plan *plan);

/** Expands the plan's rep_min rounds into *out: each round holds every
 *  unit (a job alone or a group) once, shuffled with the plan's seed when
 *  randomized, so drift hits all configurations alike. Returns 0, or -1 on
 *  allocation failure. Free with hv_expansion_free(). */
int hv_plan_expand(const struct hv_plan *plan, struct hv_expansion *out);

/** Releases an expansion. */
void hv_expansion_free(struct hv_expansion *x);

#endif
