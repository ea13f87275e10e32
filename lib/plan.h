/* plan.h — the benchmark plan: parsing, validation, normalisation and
 * expansion into jobs.
 *
 * The server validates every submitted plan here, and the CLI can validate
 * locally with the same code. A parsed plan owns a normalised JSON document
 * (defaults filled in, units converted) that is what gets stored. */
#ifndef HV_PLAN_H
#define HV_PLAN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/** Hard limits; plans beyond them are refused with a clear error. */
#define HV_PLAN_MAX_WORKLOADS   64
#define HV_PLAN_MAX_REPETITIONS 1000
#define HV_PLAN_MAX_JOBS        100000

/** How a plan failed validation. */
enum hv_plan_verdict {
    HV_PLAN_VALID = 0,
    HV_PLAN_INVALID,    /**< malformed: HTTP 400 */
    HV_PLAN_IMPOSSIBLE, /**< well formed but cannot run here: HTTP 422 */
};

/** One workload of a plan. Strings point into the plan's document. */
struct hv_workload {
    const char *id;
    const char *kind;   /**< cpu, disk, net */
    const char *engine; /**< builtin or an external tool */
    json_t *params;     /**< borrowed from the document, normalised */
};

/** A parsed, normalised plan. */
struct hv_plan {
    json_t *doc; /**< the normalised document (owned) */
    const char *name;
    const char *host; /**< the target host's name */
    size_t n_workloads;
    struct hv_workload *workloads;
    size_t n_configs;     /**< tuning configurations (1 without factors) */
    int rep_min, rep_max; /**< repetitions */
    double ci_pct;        /**< target 95 % CI half-width in % of the mean */
    int randomized;       /**< interleave in random order (else as written) */
    uint64_t seed;        /**< seed of the run order, recorded for replay */
};

/** One job of the expansion. */
struct hv_job_spec {
    size_t config;   /**< index of the configuration */
    size_t workload; /**< index into plan->workloads */
    int repetition;  /**< 1-based */
    int run_order;   /**< 0-based position in the run order */
};

/** Validates doc and fills *plan. default_seed is used when the plan has no
 *  "seed". Every problem is appended to errors as {"path","message"}.
 *  On HV_PLAN_VALID the caller must call hv_plan_free(); otherwise *plan
 *  holds nothing. */
enum hv_plan_verdict hv_plan_parse(const json_t *doc, uint64_t default_seed, struct hv_plan *plan,
                                   json_t *errors);

/** Releases what a parsed plan holds. */
void hv_plan_free(struct hv_plan *plan);

/** The name of configuration i ("default" without factors). Static or
 *  owned by the plan. */
const char *hv_plan_config_name(const struct hv_plan *plan, size_t i);

/** Expands the plan into n = configs x workloads x rep_min jobs in run
 *  order: each repetition round holds every (configuration, workload) pair
 *  once, shuffled with the plan's seed when randomized, so drift hits all
 *  configurations alike. Returns a malloc'd array (caller frees) or NULL on
 *  allocation failure. */
struct hv_job_spec *hv_plan_expand(const struct hv_plan *plan, size_t *n);

#endif
