/* log.c — see log.h. */
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static const char *log_program = "hvbench";
static enum hv_log_level log_threshold = HV_LOG_INFO;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void hv_log_init(const char *program, enum hv_log_level level)
{
    log_program = program;
    log_threshold = level;
    const char *env = getenv("HVBENCH_LOG");
    if (env == NULL)
        return;
    for (int i = HV_LOG_DEBUG; i <= HV_LOG_ERROR; i++)
        if (strcasecmp(env, level_names[i]) == 0)
            log_threshold = (enum hv_log_level)i;
}

void hv_log(enum hv_log_level level, const char *fmt, ...)
{
    if (level < log_threshold)
        return;
    char line[2048];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    int n = snprintf(line, sizeof line,
                     "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %-5s %s: ", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     ts.tv_nsec / 1000000, level_names[level], log_program);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}
