/* timeutil.h — clocks and timestamps. */
#ifndef HV_TIMEUTIL_H
#define HV_TIMEUTIL_H

#include <stdbool.h>
#include <stddef.h>

/** Seconds on the monotonic clock (for durations). */
double hv_monotonic(void);

/** Writes the current UTC time as ISO 8601 with milliseconds
 *  ("2026-11-29T18:40:12.123Z") into buf (at least 25 bytes). */
void hv_now_iso8601(char *buf, size_t len);

/** Whether s is an ISO 8601 UTC time as hvbench writes and accepts them:
 *  "2026-11-29", "2026-11-29T18:40:12", with optional fraction, and "Z" or
 *  "+00:00". PostgreSQL does the full parse; this keeps garbage away. */
bool hv_iso8601_valid(const char *s);

#endif
