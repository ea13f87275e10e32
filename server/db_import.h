/* db_import.h — storing an imported tool output as a finished plan. */
#ifndef HV_SERVER_DB_IMPORT_H
#define HV_SERVER_DB_IMPORT_H

#include "db.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/** An import to store: everything is decided by the caller. A single
 *  output is a plan with one configuration ("default"); a study is one
 *  configuration per label. */
struct hv_import {
    const char *tool;      /**< the parser's name ("fio"), or "study" */
    const char *target;    /**< target name; created (kind host) when unknown */
    const char *plan_name; /**< the plan's name */
    const json_t *spec;    /**< the plan document */
    /** [{"name", "levels"}] in configuration order, at least one */
    const json_t *configs;
    /** The runs in run order, at least one: [{"config": index into
     *  configs, "workload": the job's workload variant (with "id"),
     *  "repetition": 1.., "output": index into outputs, "run":
     *  {"metrics": [...], "info": {...}, "samples": [...]}, "at", "after_s",
     *  "seconds"}]: the run started after_s seconds after the ISO 8601 time
     *  at and lasted seconds (0 when unknown); every number finite and not
     *  negative. */
    const json_t *runs;
    const char *const *outputs; /**< the outputs, stored with each of their results */
    const char *output_sha256;  /**< hex digest of the output (of a study: of its outputs) */
    int64_t token_id;           /**< the importing token (0: none) */
};

/** What was stored. */
struct hv_import_receipt {
    int64_t plan_id;
    int64_t existing_plan_id; /**< with HV_DB_CONFLICT: the earlier import */
    bool target_created;
    /** [{"job_id", "result_id", "started_at", "finished_at"}] per run, a new
     *  reference the caller frees (NULL unless HV_DB_OK). */
    json_t *runs;
};

/** Stores the import in one transaction: the target when it is new, the
 *  plan, its configurations, per run a done job (its repetition, run order
 *  its index) with its result (attempt 1, started and finished as the run
 *  says, observed = info, raw = its output) and metrics, and the row of
 *  table imports. HV_DB_CONFLICT (nothing stored, existing_plan_id set)
 *  when the same output was imported for the same target and tool before. */
enum hv_db_status hv_db_import_store(const struct hv_import *im, struct hv_import_receipt *out);

#endif
