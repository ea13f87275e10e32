/* db_admin.h — retention: deleting a plan, purging old samples, raw
 * outputs and plans; retrying a failed plan's failed jobs; a plan with
 * all its results as one document, and such a document stored as a new
 * plan (migrations/014_plan_export.sql). */
#ifndef HV_SERVER_DB_ADMIN_H
#define HV_SERVER_DB_ADMIN_H

#include "db.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/** Deletes an ended plan with its jobs, results, metrics, samples and
 *  telemetry. *out: {"plan", "jobs", "results", "samples", "bytes"} (what
 *  was removed; bytes is the stored size of its rows). HV_DB_NONE: no such
 *  plan; HV_DB_CONFLICT: it has not ended (or its host is not restored). */
enum hv_db_status hv_db_plan_delete(int64_t id, json_t **out);

/** What to purge, all of it older than before (ISO 8601). */
struct hv_purge {
    const char *before;
    bool plans;   /**< ended plans created before */
    bool samples; /**< samples (and host telemetry) of results that ended before */
    bool raw;     /**< raw tool output of results that ended before */
    bool dry_run; /**< count only */
};

/** Purges (or, dry run, counts) what p names. *out: {"plans", "results",
 *  "samples", "telemetry", "raw_outputs", "bytes"}. */
enum hv_db_status hv_db_purge(const struct hv_purge *p, json_t **out);

/** Queues a failed plan's failed jobs again (fresh failure counts; their
 *  attempts go on). *retried: how many. HV_DB_NONE: no such plan;
 *  HV_DB_CONFLICT: the plan has not failed, was cancelled, or is a tuning
 *  plan (its blocks ran and its host was restored). */
enum hv_db_status hv_db_plan_retry(int64_t id, long *retried);

/** The plan as one document (hv_plan_export()). HV_DB_NONE: no such plan;
 *  HV_DB_CONFLICT: it has not ended. *out is the document's JSON text
 *  (malloc'd). */
enum hv_db_status hv_db_plan_export(int64_t id, char **out);

/** Stores an exported document (checked by the caller) as a new plan,
 *  identified by digest (the hex SHA-256 of its canonical form): *id is
 *  the plan's id and *created true; when a plan was made from a document
 *  of this digest before, nothing is stored, *id is that plan's and
 *  *created false. HV_DB_CONFLICT: a constraint refused it (a duplicate
 *  the caller's check missed), logged with the constraint's message. */
enum hv_db_status hv_db_plan_import(const char *doc, int64_t token_id, const char *digest,
                                    int64_t *id, bool *created);

#endif
