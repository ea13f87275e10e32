/* result.h — a job result as workers upload it: its limits, the check of
 * an upload body, and the rules for metric names and values.
 *
 * Every door a result comes in by applies the same checks, so a value or
 * a name the server would refuse at one is never stored by another: the
 * server checks every upload with hv_result_body_check(), an exported
 * plan's results with hv_result_data_check() (POST
 * /api/v1/plans/import), a tool output's metrics with hv_metric_name_check()
 * and hv_metric_value_check() (POST /api/v1/imports); the worker uses the
 * latter too. What the database already holds is read through the same
 * rule in SQL (server/db_values.h; both made from lib/metric_natures.h). */
#ifndef HV_RESULT_H
#define HV_RESULT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include "jspec.h"

/** Most metrics in one result. */
#define HV_RESULT_MAX_METRICS 1000
/** Most per-second samples in one result: a day of one metric a second
 *  plus a margin; workers average longer series down to fit. */
#define HV_RESULT_MAX_SAMPLES 200000

/** The members of one sample {"metric", "t", "value"}: the spec both a
 *  result's samples and a host's telemetry samples are checked against. */
extern const struct hv_jfield hv_result_sample_fields[];
/** Longest raw tool output kept with a result, in bytes (unescaped). */
#define HV_RESULT_MAX_RAW (1u << 20)
/** Largest "observed" object of a result, in bytes of its compact JSON:
 *  what a worker saw of the environment is a few hundred bytes, and the
 *  raw output has a member of its own. */
#define HV_RESULT_MAX_OBSERVED (64u << 10)
/** Longest metric name, in bytes. */
#define HV_METRIC_NAME_MAX 128
/** Largest magnitude of a metric or sample value: far past any rate, time
 *  or size a benchmark measures, and small enough that sums of squares of
 *  a million of them stay finite. */
#define HV_METRIC_MAX_ABS 1e15

/** Checks value for a metric called name measured in unit (either may be
 *  NULL): finite, at most HV_METRIC_MAX_ABS in magnitude, and not negative
 *  when the metric is a rate, a time, a size, a count, a percentage or a
 *  score (known from its unit, e.g. "MB/s", "us", or its name, e.g.
 *  ".iops", "_us"). Returns true when it is acceptable; otherwise writes
 *  the reason ("must not be negative for a rate (MB/s)") into why. */
bool hv_metric_value_check(const char *name, const char *unit, double value, char *why, size_t len);

/** Checks a metric's name: 1 to HV_METRIC_NAME_MAX bytes, no control
 *  character (below 0x20, or DEL), and no blank at either end ("cpu.score "
 *  would be another series than "cpu.score"). Returns true when it is
 *  acceptable; otherwise writes the reason into why. name may be NULL
 *  (refused). */
bool hv_metric_name_check(const char *name, char *why, size_t len);

/** Checks what a result holds beyond its own members, as every door
 *  stores it: each of its "metrics" ({"name", "value", "unit",
 *  "higher_is_better"}: types, hv_metric_name_check, a name once only,
 *  hv_metric_value_check), each of its "samples" ({"metric", "t",
 *  "value"}: the same rules, in the unit of the metric of that name), and
 *  the size of its "observed" (at most HV_RESULT_MAX_OBSERVED). Members
 *  that are absent are not checked. Errors name path followed by the
 *  member ("/jobs/0/results/0/metrics/1/name" under path
 *  "/jobs/0/results/0"); appends them to errors (stopping after about 50)
 *  and returns the number appended. */
int hv_result_data_check(const json_t *result, const char *path, json_t *errors);

/** Checks a result upload body (POST /api/v1/jobs/{id}/result): members
 *  and types, its metrics, samples and observed (hv_result_data_check),
 *  timestamps, and that an "ok" result has a metric.
 *  Appends one {"path","message"} per problem to errors (stopping after
 *  about 50) and returns the number appended. doc need not be an object. */
int hv_result_body_check(const json_t *doc, json_t *errors);

#endif
