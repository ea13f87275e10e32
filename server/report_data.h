/* report_data.h — what a plan's report is computed from: the plan's
 * settings, its configurations and workload variants, and per
 * (configuration, workload, target, metric) one value per round.
 *
 * The database fills it (report_load.c); the unit tests build it by hand
 * with the same calls, so the analysis (report.h) is tested on data of
 * known truth without a server. One round of guests that ran together (a
 * group) is already one value, their mean: n counts rounds, not jobs.
 *
 * Not thread safe per instance; separate instances are independent. */
#ifndef HV_SERVER_REPORT_DATA_H
#define HV_SERVER_REPORT_DATA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Subsystems of the efficiency score, indexed as the plan's weights. */
enum hv_subsys { HV_SUB_CPU, HV_SUB_DISK, HV_SUB_NET, HV_SUB_COUNT };

/** Where a value was measured: the guests, or the plan's host. */
enum hv_side { HV_SIDE_GUESTS, HV_SIDE_HOST };

/** One observation: one round of one series. */
struct hv_rrun {
    int round;      /**< the repetition */
    double value;   /**< the mean of the members' values */
    size_t members; /**< jobs whose values were averaged (a group's guests) */
    int64_t *jobs;  /**< their ids (owned) */
    size_t n_jobs;
};

/** Every round of one (configuration, workload, target, metric). */
struct hv_rseries {
    size_t config, workload; /**< indexes into the plan's lists */
    char *target;            /**< the target, or "N guests" for a group (owned) */
    enum hv_side side;
    char *metric, *unit; /**< owned */
    bool higher_is_better;
    struct hv_rrun *runs; /**< in round order once hv_rdata_finish() ran (owned) */
    size_t n_runs, cap;
};

/** A factor of the plan; levels[0] is the plan's default. */
struct hv_rfactor {
    char *name;
    char **levels;
    size_t n_levels;
};

/** A configuration: its name and each factor's level as an index into
 *  that factor's levels (SIZE_MAX for a level the plan does not list). */
struct hv_rconfig {
    char *name;
    size_t *level;
};

/** A workload variant. */
struct hv_rworkload {
    char *id, *kind, *engine;
};

/** Everything a report reads. */
struct hv_rdata {
    json_t *summary; /**< the plan as GET /plans/{id} shows it (owned) */
    char *host;      /**< the plan's host target */
    char *baseline;  /**< "host" or a configuration's name */
    bool full;       /**< design "full" (else one-at-a-time) */
    bool finished;   /**< the plan is done, failed or cancelled */
    double margin_pct;
    double weights[HV_SUB_COUNT];
    int rep_min, rep_max;
    double ci_pct;
    struct hv_rfactor *factors;
    size_t n_factors;
    struct hv_rconfig *configs;
    size_t n_configs;
    struct hv_rworkload *workloads;
    size_t n_workloads;
    struct hv_rseries *series;
    size_t n_series, cap_series;
    json_t *emulated; /**< names of the plan's guests whose domain is TCG (owned) */
    bool runs_all;    /**< list every run of every series (?runs=all), never a digest */
    /** The digest of the plan's values an earlier report kept (report.h),
     *  standing for the series (then none is loaded), or NULL (owned). */
    json_t *digest;
    char *version; /**< the state of the plan's done jobs when loaded (owned) */
    /** The host's KVM probe and the jobs that ran while it was busy
     *  (hv_db_report_host(); owned, may be NULL) */
    json_t *host_view;
    /** The ids of the recommendations kept once the plan ended done, by
     *  "factor=level" (migrations/053; owned, may be NULL). */
    json_t *recommendation_ids;
};

/** One value as the database (or a test) gives it. */
struct hv_rrow {
    size_t config;        /**< index of the configuration */
    const char *workload; /**< a variant's id */
    const char *target;
    const char *metric, *unit;
    bool higher_is_better;
    int round;
    double value;
    size_t members;
    const int64_t *jobs;
    size_t n_jobs;
};

/** Empties d. */
void hv_rdata_init(struct hv_rdata *d);

/** Reads the plan: summary (GET /plans/{id}, borrowed and kept with a new
 *  reference) and spec, the normalised plan document (targets.host,
 *  baseline, design, factors, repetitions, margin_pct, weights; absent
 *  members take their defaults). Returns 0, or -1 when memory runs out. */
int hv_rdata_plan(struct hv_rdata *d, json_t *summary, const json_t *spec);

/** Adds a configuration (in the plan's order): levels maps every factor to
 *  its level text. Call after hv_rdata_plan. Returns 0 or -1. */
int hv_rdata_config(struct hv_rdata *d, const char *name, const json_t *levels);

/** Adds a workload variant. Returns 0 or -1. */
int hv_rdata_workload(struct hv_rdata *d, const char *id, const char *kind, const char *engine);

/** Adds one value. Its configuration and workload must have been added
 *  (else -2: the row is refused). Returns 0, -1 when memory runs out. */
int hv_rdata_run(struct hv_rdata *d, const struct hv_rrow *row);

/** Puts the series in order (configuration, workload, target, metric),
 *  merges rows of one series that came apart and sorts each series'
 *  rounds. Call once after the last hv_rdata_run. Returns 0 or -1. */
int hv_rdata_finish(struct hv_rdata *d);

/** The index of workload id, or SIZE_MAX. */
size_t hv_rdata_workload_index(const struct hv_rdata *d, const char *id);

/** The subsystem of a workload kind ("cpu", "disk", "net"), or
 *  HV_SUB_COUNT for another kind. */
enum hv_subsys hv_subsys_of(const char *kind);

/** The name of a subsystem ("cpu", "disk", "net"). */
const char *hv_subsys_name(enum hv_subsys s);

/** Whether metric is a primary metric of workload w: one its engine
 *  declares (lib/params.h), or any metric of a site benchmark or an
 *  engine the catalogue does not know. */
bool hv_rdata_primary(const struct hv_rdata *d, size_t w, const char *metric);

/** Releases what d holds. */
void hv_rdata_free(struct hv_rdata *d);

#endif
