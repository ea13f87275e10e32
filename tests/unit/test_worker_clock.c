/* test_worker_clock.c — the worker's ISO 8601 parser (against values
 * computed independently with Python's datetime) and the clock offset
 * estimate kept from the exchange with the smallest round trip. */
#include "tests/unit/check.h"
#include "timeutil.h"
#include "worker/clock.h"

#include <time.h>

static void test_parse_valid(void)
{
    static const struct {
        const char *text;
        double epoch;
    } cases[] = {
        {"1970-01-01T00:00:00Z", 0},
        {"1970-01-01T00:00:00.000Z", 0},
        {"2026-11-29T18:40:12.123Z", 1795977612.123},
        {"2026-11-29T18:40:12.123+00:00", 1795977612.123},
        {"2026-11-29 18:40:12.123+00", 1795977612.123},
        {"2026-11-29T20:40:12.5+02:00", 1795977612.5},
        {"2026-11-29T20:40:12.5+0200", 1795977612.5},
        {"2026-11-29T13:10:12-05:30", 1795977612},
        {"2026-11-29t18:40:12z", 1795977612},
        {"2000-02-29T23:59:59Z", 951868799},
        {"1969-12-31T23:59:59Z", -1},
        {"2038-01-19T03:14:08Z", 2147483648.0},
        {"2100-03-01T00:00:00Z", 4107542400.0},
        {"2026-11-29T18:40:12.123456789Z", 1795977612.123456789},
        {"2016-12-31T23:59:60Z", 1483228799.999999},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double t = -12345;
        int rc = hv_iso8601_parse(cases[i].text, &t);
        if (rc != 0 || fabs(t - cases[i].epoch) > 1e-6)
            fprintf(stderr, "  %s -> rc %d, %.6f (want %.6f)\n", cases[i].text, rc, t,
                    cases[i].epoch);
        CHECK(rc == 0);
        CHECK_NEAR(t, cases[i].epoch, 1e-6);
    }
}

static void test_parse_invalid(void)
{
    static const char *const bad[] = {
        NULL,
        "",
        "2026-11-29",                /* no time */
        "2026-11-29T18:40:12",       /* no zone */
        "2026-11-29T18:40Z",         /* no seconds */
        "2026-13-01T00:00:00Z",      /* month 13 */
        "2026-02-29T00:00:00Z",      /* not a leap year */
        "1900-02-29T00:00:00Z",      /* nor is 1900 */
        "2026-04-31T00:00:00Z",      /* April has 30 days */
        "2026-11-29T24:00:00Z",      /* hour 24 */
        "2026-11-29T18:60:00Z",      /* minute 60 */
        "2026-11-29T18:40:61Z",      /* second 61 */
        "2026-11-29T18:40:12.Z",     /* empty fraction */
        "2026-11-29T18:40:12.123",   /* fraction, no zone */
        "2026-11-29T18:40:12.123Zx", /* trailing garbage */
        "2026-11-29T18:40:12+5",     /* one-digit zone */
        "2026-11-29T18:40:12+05:",   /* zone minutes missing */
        "2026-11-29T18:40:12+24:00", /* zone out of range */
        "2026-11-29X18:40:12Z",      /* bad separator */
        "26-11-29T18:40:12Z",        /* two-digit year */
        " 2026-11-29T18:40:12Z",     /* leading space */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double t = 42;
        int rc = hv_iso8601_parse(bad[i], &t);
        if (rc != -1)
            fprintf(stderr, "  accepted \"%s\" as %.3f\n", bad[i] ? bad[i] : "(null)", t);
        CHECK(rc == -1);
        CHECK(t == 42); /* untouched */
    }
}

/* What the server writes parses back to the same instant. */
static void test_round_trip_with_timeutil(void)
{
    char now[32];
    double before = hv_realtime();
    hv_now_iso8601(now, sizeof now);
    double after = hv_realtime();
    double t;
    CHECK(hv_iso8601_parse(now, &t) == 0);
    /* hv_now_iso8601 truncates or rounds to milliseconds. */
    CHECK(t >= before - 0.001 && t <= after + 0.001);
}

static void test_realtime(void)
{
    double a = hv_realtime();
    time_t b = time(NULL);
    CHECK(fabs(a - (double)b) < 2);
}

static void test_estimate(void)
{
    struct hv_clock c = {0};
    CHECK(!c.valid);
    double local = hv_realtime();
    CHECK(fabs(hv_clock_server_now(&c) - local) < 0.1); /* no sample: the local clock */

    /* The server is 2.5 s ahead; a 100 ms round trip, the server read its
     * clock 30 ms after the midpoint: offset off by 30 ms. */
    hv_clock_add(&c, 1000.0, 1000.1, 1000.05 + 2.5 + 0.03);
    CHECK(c.valid);
    CHECK(c.samples == 1);
    CHECK_NEAR(c.offset, 2.53, 1e-9);
    CHECK_NEAR(c.rtt, 0.1, 1e-9);

    /* A longer round trip (a held long poll) does not replace it. */
    hv_clock_add(&c, 1001.0, 1011.0, 1011.0 + 2.5);
    CHECK(c.samples == 2);
    CHECK_NEAR(c.offset, 2.53, 1e-9);
    CHECK_NEAR(c.rtt, 0.1, 1e-9);

    /* A shorter one does. */
    hv_clock_add(&c, 1020.0, 1020.002, 1020.001 + 2.5);
    CHECK_NEAR(c.offset, 2.5, 1e-9);
    CHECK_NEAR(c.rtt, 0.002, 1e-9);

    /* A negative round trip (the local clock stepped back) is ignored. */
    hv_clock_add(&c, 1030.0, 1029.0, 5000);
    CHECK(c.samples == 4);
    CHECK_NEAR(c.offset, 2.5, 1e-9);

    /* A server behind us. */
    struct hv_clock d = {0};
    hv_clock_add(&d, 100.0, 100.004, 100.002 - 0.75);
    CHECK_NEAR(d.offset, -0.75, 1e-9);
    double now = hv_realtime();
    CHECK(fabs(hv_clock_server_now(&d) - (now - 0.75)) < 0.05);

    /* With real epoch times the double keeps sub-microsecond precision. */
    struct hv_clock e = {0};
    double t0 = 1795977612.123;
    hv_clock_add(&e, t0, t0 + 0.000004, t0 + 0.000002 + 0.0001);
    CHECK_NEAR(e.offset, 0.0001, 1e-6);
}

int main(void)
{
    test_parse_valid();
    test_parse_invalid();
    test_round_trip_with_timeutil();
    test_realtime();
    test_estimate();
    return check_summary("test_worker_clock");
}
