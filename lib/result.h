/* result.h — a job result as workers upload it: its limits, the check of
 * an upload body, and the sanity of metric values.
 *
 * The server checks every upload with hv_result_body_check(); imports and
 * the worker use hv_metric_value_check() for the same rule, so a value the
 * server would refuse is never stored by another path. */
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

/** Checks a result upload body (POST /api/v1/jobs/{id}/result): members
 *  and types, each metric and sample, values (hv_metric_value_check),
 *  unique metric names, timestamps, and that an "ok" result has a metric.
 *  Appends one {"path","message"} per problem to errors (stopping after
 *  about 50) and returns the number appended. doc need not be an object. */
int hv_result_body_check(const json_t *doc, json_t *errors);

#endif
