/* db_telemetry.h — host telemetry of guest jobs (migrations/009).
 *
 * A guest target is linked to a host by its DMI product UUID, which is the
 * libvirt domain UUID the host's worker lists in facts.libvirt.domains
 * (as in GET /api/v1/targets/{id}), or, for a guest of a tuning plan, by
 * the plan's host (clones are made after their host registered). The host's worker learns which of
 * its domains run a job from hv_db_telemetry_running() and uploads what it sampled with
 * hv_db_telemetry_store(); nobody else may. */
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
    /** The block's levels read back on the job's domain (and the host)
     *  when the job ended: factor → {"level", "read_back", "source"}, or
     *  NULL. */
    const json_t *settings;
    const char *settings_changed; /**< what no longer reads back, or NULL */
    const char *settings_missing; /**< why no reading was taken, or NULL */
};

/** Stores u once per (job, attempt). The first time, the reading of the
 *  block's levels (settings, settings_changed, settings_missing) goes into
 *  the attempt's result when there is one: observed.settings[factor]
 *  gains {"level" (the configuration's), "start" (the apply step's reading
 *  of that domain), "end", "read_back" (this reading), "source"},
 *  observed.settings_missing the reason when none was taken; a
 *  settings_changed fails the result and, when it was done, the job
 *  ("a setting changed under the job: ..."). HV_DB_NONE: no such job;
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
 *  work (their telemetry's host_busy.busy, or a bare-metal job's own
 *  observed.interference.busy: no others_cpu_pct, its others' share in
 *  percent of one CPU as nonguest_cpu_pct), in configuration and job
 *  order, leaving out what was set aside; "noise": the plan's noise
 *  ("repeat" or "keep"); "set_aside": {"count", "reasons": {reason: n},
 *  "jobs": [{"job_id", "configuration", "target", "workload", "round",
 *  "reason", "signal"}]}, the done jobs whose result was set aside as
 *  noisy (migrations/052), signal their observed.interference or their
 *  telemetry's host_busy. HV_DB_NONE when there is no such plan. */
enum hv_db_status hv_db_report_host(int64_t plan_id, json_t **out);

#endif
