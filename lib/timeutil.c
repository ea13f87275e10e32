/* timeutil.c — see timeutil.h. */
#include "timeutil.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

double hv_monotonic(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void hv_now_iso8601(char *buf, size_t len)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
}

bool hv_iso8601_valid(const char *s)
{
    struct tm tm;
    if (s == NULL)
        return false;
    const char *end = strptime(s, "%Y-%m-%d", &tm);
    if (end == NULL || end - s != 10)
        return false;
    if (*end == '\0')
        return true;
    end = strptime(end, "T%H:%M:%S", &tm);
    if (end == NULL)
        return false;
    if (*end == '.' && end[1] >= '0' && end[1] <= '9')
        for (end++; *end >= '0' && *end <= '9'; end++)
            ;
    return *end == '\0' || strcmp(end, "Z") == 0 || strcmp(end, "+00:00") == 0;
}
