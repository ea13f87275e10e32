/* db_telemetry.h — host telemetry of guest jobs (migrations/009).
 *
 * A guest target is linked to a host by its DMI product UUID, which is the
 * libvirt domain UUID the host's worker lists in facts.libvirt.domains
 * (as in GET /api/v1/targets/{id}). The host's worker learns which of its
 * domains run a job from hv_db_telemetry_running() and uploads what it
 * sampled with hv_db_telemetry_store(); nobody else may. */
#ifndef HV_DB_TELEMETRY_H
#define HV_DB_TELEMETRY_H

#include "db.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/** The running guest jobs on domains of the host held by worker_id:
 *  [{"job_id", "attempt", "target", "domain": {"name", "uuid"},
 *  "claimed_at"}] in job id order, into *out (new reference). */
enum hv_db_status hv_db_telemetry_running(int64_t worker_id, json_t **out);

/** One upload of telemetry. Strings and JSON are borrowed. */
struct hv_telemetry_upload {
    int64_t job_id;
    int attempt;
    int64_t worker_id;      /**< the caller */
    const char *status;     /**< "ok" or "missing" */
    const char *reason;     /**< why missing, or NULL */
    const char *t0;         /**< ISO 8601 time of t = 0, or NULL */
    const json_t *samples;  /**< [{"metric","t","value"}] */
    const json_t *observed; /**< object, or NULL */
};

/** Stores u once per (job, attempt). HV_DB_NONE: no such job;
 *  HV_DB_CONFLICT: the caller's host is not the host of the job's guest
 *  (*forbidden set) or the attempt was never claimed (*forbidden clear).
 *  *stored is false when a row for the attempt was already there. */
enum hv_db_status hv_db_telemetry_store(const struct hv_telemetry_upload *u, bool *forbidden,
                                        bool *stored);

/** The plan's host as its report sees it, into *out (new reference):
 *  {"host": NAME, "kvm_probe": the host's facts.kvm_probe or null,
 *  "busy": [{"job_id", "configuration", "target", "workload",
 *  "others_cpu_pct", "steal_pct", "nonguest_cpu_pct"}]}, busy listing the
 *  done jobs whose counted attempt ran while the host was busy with other
 *  work (their telemetry's host_busy.busy), in configuration and job
 *  order. HV_DB_NONE when there is no such plan. */
enum hv_db_status hv_db_report_host(int64_t plan_id, json_t **out);

#endif
