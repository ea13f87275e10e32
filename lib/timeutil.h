/* timeutil.h — clocks and timestamps. */
#ifndef HV_TIMEUTIL_H
#define HV_TIMEUTIL_H

#include <stddef.h>

/** Seconds on the monotonic clock (for durations). */
double hv_monotonic(void);

/** Writes the current UTC time as ISO 8601 with milliseconds
 *  ("2026-11-29T18:40:12.123Z") into buf (at least 25 bytes). */
void hv_now_iso8601(char *buf, size_t len);

#endif
