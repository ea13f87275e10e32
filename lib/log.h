/* log.h — leveled logging to standard error.
 *
 * One line per call: an ISO 8601 UTC timestamp, the level, the program
 * name set by hv_log_init(), and the message. Thread safe (one write(2)
 * per line). */
#ifndef HV_LOG_H
#define HV_LOG_H

#include <stdarg.h>

enum hv_log_level { HV_LOG_DEBUG, HV_LOG_INFO, HV_LOG_WARN, HV_LOG_ERROR };

/** Sets the program name shown on each line and the lowest level printed.
 *  The level may be overridden by the HVBENCH_LOG environment variable
 *  (debug, info, warn, error). */
void hv_log_init(const char *program, enum hv_log_level level);

/** Prints one line at the given level if it passes the threshold. */
void hv_log(enum hv_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define hv_debug(...) hv_log(HV_LOG_DEBUG, __VA_ARGS__)
#define hv_info(...)  hv_log(HV_LOG_INFO, __VA_ARGS__)
#define hv_warn(...)  hv_log(HV_LOG_WARN, __VA_ARGS__)
#define hv_error(...) hv_log(HV_LOG_ERROR, __VA_ARGS__)

#endif
