/* timeutil.c — see timeutil.h. */
#include "timeutil.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
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

/* The value of the n decimal digits at s, or -1 when one of them is not a
 * digit. Stops at the first non-digit, so it never reads past a NUL. */
static int digits(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* The days of month (1..12) in year (proleptic Gregorian); 0 for a month
 * outside 1..12. */
static int days_in_month(int year, int month)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month < 1 || month > 12)
        return 0;
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return days[month - 1] + (month == 2 && leap);
}

/* Whether s starts with "YYYY-MM-DD", a day that exists in 0001..9999. */
static bool date_valid(const char *s)
{
    int y = digits(s, 4);
    if (y < 1 || s[4] != '-')
        return false;
    int m = digits(s + 5, 2);
    if (m < 1 || m > 12 || s[7] != '-')
        return false;
    int d = digits(s + 8, 2);
    return d >= 1 && d <= days_in_month(y, m);
}

/* Whether s starts with "HH:MM:SS", a time of day with seconds 00..59. */
static bool clock_valid(const char *s)
{
    int h = digits(s, 2);
    if (h < 0 || h > 23 || s[2] != ':')
        return false;
    int m = digits(s + 3, 2);
    if (m < 0 || m > 59 || s[5] != ':')
        return false;
    int sec = digits(s + 6, 2);
    return sec >= 0 && sec <= 59;
}

bool hv_iso8601_valid(const char *s)
{
    if (s == NULL || !date_valid(s))
        return false;
    const char *p = s + 10;
    if (*p == '\0')
        return true;
    if (*p != 'T' || !clock_valid(p + 1))
        return false;
    p += 9;
    if (*p == '.') {
        size_t n = 0;
        for (p++; *p >= '0' && *p <= '9'; p++)
            n++;
        if (n < 1 || n > 9)
            return false;
    }
    return *p == '\0' || strcmp(p, "Z") == 0 || strcmp(p, "+00:00") == 0;
}

double hv_iso8601_seconds(const char *s)
{
    if (!hv_iso8601_valid(s))
        return NAN;
    struct tm tm = {0};
    tm.tm_year = atoi(s) - 1900;
    tm.tm_mon = atoi(s + 5) - 1;
    tm.tm_mday = atoi(s + 8);
    double frac = 0;
    if (s[10] == 'T') {
        tm.tm_hour = atoi(s + 11);
        tm.tm_min = atoi(s + 14);
        tm.tm_sec = atoi(s + 17);
        if (s[19] == '.')
            frac = strtod(s + 19, NULL);
    }
    return (double)timegm(&tm) + frac;
}

uint64_t hv_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
