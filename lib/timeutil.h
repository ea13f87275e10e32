/* timeutil.h — clocks and timestamps. */
#ifndef HV_TIMEUTIL_H
#define HV_TIMEUTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/** Seconds on the monotonic clock (for durations). */
double hv_monotonic(void);

/** The monotonic clock in nanoseconds (for intervals measured in the
 *  engines' inner loops). */
uint64_t hv_monotonic_ns(void);

/** Writes the current UTC time as ISO 8601 with milliseconds
 *  ("2026-11-29T18:40:12.123Z") into buf (at least 25 bytes). */
void hv_now_iso8601(char *buf, size_t len);

/** Whether s is an ISO 8601 UTC time as hvbench writes and accepts them:
 *  "2026-11-29", or "2026-11-29T18:40:12" with an optional fraction of 1 to
 *  9 digits and an optional "Z" or "+00:00". The day must exist (no
 *  2026-02-31, no year 0000; years 0001 to 9999), hours run 00..23,
 *  minutes and seconds 00..59. A leap second (23:59:60) is refused: the
 *  clocks hvbench and the tools it reads use are POSIX time, which has no
 *  leap second, and PostgreSQL would silently turn :60 into the next
 *  minute. Every time a client sends (query arguments, imports' "at",
 *  results' "started_at" and "finished_at") passes here before it reaches
 *  PostgreSQL, so a time this accepts never fails there. */
bool hv_iso8601_valid(const char *s);

/** The POSIX time (seconds since 1970, with the fraction) of a time
 *  hv_iso8601_valid() accepts; NaN for one it does not. */
double hv_iso8601_seconds(const char *s);

#endif
