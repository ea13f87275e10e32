/* test_timeutil.c — which timestamps hvbench lets through to PostgreSQL. */
#include "timeutil.h"

#include "check.h"

#include <math.h>
#include <time.h>

/* Whether y-m-d is a day of the calendar, by the C library's own clock
 * arithmetic: timegm() normalises an impossible day into the next month. */
static bool libc_day_exists(int y, int m, int d)
{
    struct tm tm = {.tm_year = y - 1900, .tm_mon = m - 1, .tm_mday = d, .tm_hour = 12};
    time_t t = timegm(&tm);
    struct tm back;
    gmtime_r(&t, &back);
    return back.tm_year == y - 1900 && back.tm_mon == m - 1 && back.tm_mday == d;
}

/* Every day 27..32 of every month of years 0001..9999 against timegm(). */
static void check_calendar(void)
{
    int disagree = 0;
    for (int y = 1; y <= 9999; y++)
        for (int m = 1; m <= 12; m++)
            for (int d = 27; d <= 32; d++) {
                char s[16];
                snprintf(s, sizeof s, "%04d-%02d-%02d", y, m, d);
                if (hv_iso8601_valid(s) != libc_day_exists(y, m, d) && disagree++ < 5)
                    CHECK_MSG(false, "%s: hv_iso8601_valid says %d", s, hv_iso8601_valid(s));
            }
    CHECK_MSG(disagree == 0, "%d days judged unlike timegm()", disagree);
}

int main(void)
{
    static const char *const good[] = {
        "2026-11-29",
        "2026-11-29T18:40:12",
        "2026-11-29T18:40:12Z",
        "2026-11-29T18:40:12+00:00",
        "2026-11-29T18:40:12.5Z",
        "2026-11-29T18:40:12.123456789Z",
        "2024-02-29",
        "2000-02-29T00:00:00Z",
        "0001-01-01T00:00:00Z",
        "9999-12-31T23:59:59.999Z",
        "2026-12-31T23:59:59Z",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        CHECK_MSG(hv_iso8601_valid(good[i]), "refused %s", good[i]);

    static const char *const bad[] = {
        "",
        "2026-02-31",           /* no such day */
        "2026-02-29",           /* not a leap year */
        "1900-02-29",           /* a century that is not a leap year */
        "2026-04-31",           /* April has 30 */
        "0000-01-01",           /* no year 0 */
        "2026-00-10",           /* month 0 */
        "2026-13-01",           /* month 13 */
        "2026-01-00",           /* day 0 */
        "2026-11-29T23:59:61Z", /* no second 61 */
        "2016-12-31T23:59:60Z", /* leap seconds are refused (timeutil.h) */
        "2026-11-29T24:00:00Z", /* hour 24 */
        "2026-11-29T23:60:00Z", /* minute 60 */
        "12026-11-29",          /* five-digit year */
        "-001-11-29",           /* negative year */
        "+2026-11-29",
        " 2026-11-29",
        "2026-11-29 ",
        "2026-1-29",
        "2026-11-9",
        "26-11-29",
        "2026/11/29",
        "2026-11-29T",
        "2026-11-29t18:40:12Z",
        "2026-11-29 18:40:12",
        "2026-11-29T18:40",
        "2026-11-29T18:40:1Z",
        "2026-11-29T8:40:12Z",
        "2026-11-29T18:40:12.Z",
        "2026-11-29T18:40:12.1234567890Z", /* more than 9 fraction digits */
        "2026-11-29T18:40:12+01:00",
        "2026-11-29T18:40:12z",
        "2026-11-29T18:40:12ZZ",
        "2026-11-29T18:40:12Z ",
        "2026-11-29T18:40:12.5.5Z",
        "\xff\xfe",
        "2026-11-29\xff",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_MSG(!hv_iso8601_valid(bad[i]), "accepted \"%s\"", bad[i]);
    CHECK(!hv_iso8601_valid(NULL));

    char now[32];
    hv_now_iso8601(now, sizeof now);
    CHECK_MSG(hv_iso8601_valid(now), "refused its own clock: %s", now);

    /* Seconds of a time: against values `date -u -d ... +%s` gives. */
    CHECK(hv_iso8601_seconds("1970-01-01") == 0);
    CHECK(hv_iso8601_seconds("2026-11-29T18:40:12Z") == 1795977612);
    CHECK(hv_iso8601_seconds("2026-11-29T18:40:12.25+00:00") == 1795977612.25);
    CHECK(hv_iso8601_seconds("2026-11-29") == 1795910400);
    CHECK(isnan(hv_iso8601_seconds("2026-02-30")));
    CHECK(isnan(hv_iso8601_seconds(NULL)));

    check_calendar();
    return check_summary("test_timeutil");
}
