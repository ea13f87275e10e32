/* units.h — parse the sizes and durations operators write in plans.
 *
 * Sizes: "4096", "256k", "8g", "1.5m", "64KiB" (binary multiples: k = 1024).
 * Durations: "30", "30s", "500ms", "5m", "1h". */
#ifndef HV_UNITS_H
#define HV_UNITS_H

#include <stdint.h>

/** Parses a size into bytes. Returns 0, or -1 when s is not a size or the
 *  value does not fit in 63 bits. */
int hv_parse_size(const char *s, uint64_t *bytes);

/** Parses a duration into seconds. Returns 0, or -1 when s is not a
 *  duration or is negative. */
int hv_parse_duration(const char *s, double *seconds);

#endif
