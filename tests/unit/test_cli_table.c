/* test_cli_table.c — the CLI's number formats and aligned tables.
 *
 * cli/table.c is not part of libhvbench.a (only the CLI links it), so it is
 * compiled into this test directly. Each check compares the exact text a
 * user would see. */
#include "../../cli/table.c"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int checks, failures;

/** Compares got with want and reports a difference with its source line. */
static void check_str(int line, const char *what, const char *got, const char *want)
{
    checks++;
    if (got != NULL && strcmp(got, want) == 0)
        return;
    failures++;
    fprintf(stderr, "test_cli_table.c:%d: %s:\n  got:  \"%s\"\n  want: \"%s\"\n", line, what,
            got != NULL ? got : "(null)", want);
}

/** Compares two integers likewise. */
static void check_int(int line, const char *what, long long got, long long want)
{
    checks++;
    if (got == want)
        return;
    failures++;
    fprintf(stderr, "test_cli_table.c:%d: %s: got %lld, want %lld\n", line, what, got, want);
}

#define CHECK_STR(what, got, want) check_str(__LINE__, what, got, want)
#define CHECK_INT(what, got, want) check_int(__LINE__, what, got, want)

/** Four significant digits, SI suffixes for large values, and the exponent
 *  only at the ends. */
static void test_fmt_num(void)
{
    static const struct {
        double v;
        const char *want;
    } cases[] = {
        {1523.2, "1523"},     {-1523.2, "-1523"},
        {12345.6, "12346"},   {99999, "100k"},
        {123456.7, "123.5k"}, {1234567.8, "1.235M"},
        {1000000, "1M"},      {999960, "1M"}, /* rounding carries into the next suffix */
        {16629526, "16.63M"}, {993867357, "993.9M"},
        {2.5e9, "2.5G"},      {3.2e12, "3.2T"},
        {999.96, "1000"},     {9.99996, "10"}, /* dropped zeros leave no "10.000" */
        {100, "100"},         {12.346, "12.35"},
        {8.1, "8.1"},         {2.5, "2.5"},
        {0.5, "0.5"},         {0.01234, "0.01234"},
        {0.00051, "0.00051"}, {0, "0"},
        {1e-5, "1e-05"},      {1.5e15, "1.5e+15"},
    };
    char buf[64];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char what[64];
        snprintf(what, sizeof what, "cli_fmt_num(%.17g)", cases[i].v);
        CHECK_STR(what, cli_fmt_num(buf, sizeof buf, cases[i].v), cases[i].want);
    }
    CHECK_STR("cli_fmt_num(NaN)", cli_fmt_num(buf, sizeof buf, NAN), "nan");
    CHECK_STR("cli_fmt_num(-inf)", cli_fmt_num(buf, sizeof buf, -INFINITY), "-inf");
    char tiny[4];
    CHECK_STR("cli_fmt_num truncates to the buffer", cli_fmt_num(tiny, sizeof tiny, 12345), "123");
}

/** The confidence interval columns of the report. */
static void test_fmt_ci(void)
{
    char buf[64];
    CHECK_STR("half pct 1.32", cli_fmt_half_pct(buf, sizeof buf, true, 1.32), "±1.3%");
    CHECK_STR("half pct 12.6", cli_fmt_half_pct(buf, sizeof buf, true, 12.6), "±13%");
    CHECK_STR("half pct 0.052", cli_fmt_half_pct(buf, sizeof buf, true, 0.052), "±0.052%");
    CHECK_STR("half pct 0", cli_fmt_half_pct(buf, sizeof buf, true, 0), "±0%");
    CHECK_STR("half pct n=1", cli_fmt_half_pct(buf, sizeof buf, false, 1.32), "-");
    CHECK_STR("half pct of a zero mean", cli_fmt_half_pct(buf, sizeof buf, true, NAN), "-");
    CHECK_STR("interval", cli_fmt_interval(buf, sizeof buf, true, 1503.1, 1543.3), "[1503, 1543]");
    CHECK_STR("interval small", cli_fmt_interval(buf, sizeof buf, true, 0.01171, 0.01297),
              "[0.01171, 0.01297]");
    CHECK_STR("interval n=1", cli_fmt_interval(buf, sizeof buf, false, 1, 2), "-");
}

/** The pieces of the watch progress line. */
static void test_progress(void)
{
    char buf[32];
    CHECK_STR("duration 42s", cli_fmt_duration(buf, sizeof buf, 42.9), "0:42");
    CHECK_STR("duration 10m", cli_fmt_duration(buf, sizeof buf, 600), "10:00");
    CHECK_STR("duration 1h", cli_fmt_duration(buf, sizeof buf, 3723), "1:02:03");
    CHECK_STR("duration negative", cli_fmt_duration(buf, sizeof buf, -5), "0:00");

    CHECK_STR("bar 2/3", cli_fmt_bar(buf, sizeof buf, 2.0 / 3, 10), "[=====>    ]");
    CHECK_STR("bar 0", cli_fmt_bar(buf, sizeof buf, 0, 10), "[          ]");
    CHECK_STR("bar 5%", cli_fmt_bar(buf, sizeof buf, 0.05, 10), "[          ]");
    CHECK_STR("bar 10%", cli_fmt_bar(buf, sizeof buf, 0.1, 10), "[>         ]");
    CHECK_STR("bar 1", cli_fmt_bar(buf, sizeof buf, 1, 10), "[==========]");
    CHECK_STR("bar over 1", cli_fmt_bar(buf, sizeof buf, 1.5, 10), "[==========]");
    CHECK_STR("bar NaN", cli_fmt_bar(buf, sizeof buf, NAN, 4), "[    ]");
    char small[5];
    CHECK_STR("bar too wide for the buffer", cli_fmt_bar(small, sizeof small, 0.5, 10), "");

    CHECK_INT("percent 2/3", cli_percent(2.0 / 3), 66);
    CHECK_INT("percent 0.29", cli_percent(0.29), 29);
    CHECK_INT("percent 1/3", cli_percent(1.0 / 3), 33);
    CHECK_INT("percent 1", cli_percent(1), 100);
    CHECK_INT("percent 0.999", cli_percent(0.999), 99);
    CHECK_INT("percent above 1", cli_percent(1.2), 100);
    CHECK_INT("percent NaN", cli_percent(NAN), 0);
}

/** UTC timestamps from the server, shown in local time. */
static void test_fmt_time(void)
{
    char buf[64];
    setenv("TZ", "UTC", 1);
    tzset();
    CHECK_STR("time UTC", cli_fmt_time(buf, sizeof buf, "2026-11-29T18:40:12.123Z"),
              "2026-11-29 18:40:12");
    CHECK_STR("time without fraction", cli_fmt_time(buf, sizeof buf, "2026-11-29T18:40:12Z"),
              "2026-11-29 18:40:12");
    CHECK_STR("time with offset", cli_fmt_time(buf, sizeof buf, "2026-11-29T20:40:12+02:00"),
              "2026-11-29 18:40:12");
    /* A POSIX TZ string needs no zoneinfo files: one hour east of UTC. */
    setenv("TZ", "CET-1", 1);
    tzset();
    CHECK_STR("time in CET", cli_fmt_time(buf, sizeof buf, "2026-12-31T23:30:00.000Z"),
              "2027-01-01 00:30:00");
    CHECK_STR("time not a timestamp", cli_fmt_time(buf, sizeof buf, "yesterday"), "yesterday");
    CHECK_STR("time trailing junk", cli_fmt_time(buf, sizeof buf, "2026-11-29T18:40:12Zjunk"),
              "2026-11-29T18:40:12Zjunk");
    CHECK_STR("time empty", cli_fmt_time(buf, sizeof buf, ""), "");
}

/** Control characters from the server never reach the terminal. */
static void test_scrub(void)
{
    char s1[] = "plan\x1b]0;owned\x07 name";
    cli_scrub(s1);
    CHECK_STR("scrub C0 and ESC", s1, "plan?]0;owned? name");
    char s2[] = "a\xc2\x9b"
                "2Jb\x7f\ttab";
    cli_scrub(s2);
    CHECK_STR("scrub C1 CSI and DEL", s2, "a?2Jb??tab");
    char s3[] = "très ±1.3% \xc2\xa0ok";
    cli_scrub(s3);
    CHECK_STR("printable UTF-8 kept (incl. U+00A0)", s3, "très ±1.3% \xc2\xa0ok");

    static const struct cli_column col[] = {{"name", CLI_LEFT}};
    struct cli_table *t = cli_table_new(col, 1);
    const char *row[] = {"evil\x1b[2Jname\n"};
    cli_table_add(t, row);
    char *s = cli_table_render(t);
    CHECK_STR("table cells scrubbed", s, "name\n-------------\nevil?[2Jname?\n");
    free(s);
    cli_table_free(t);
}

/** Widths in code points, alignment, "-" for NULL, no trailing blanks. */
static void test_table(void)
{
    CHECK_INT("width ascii", (long long)cli_display_width("plan"), 4);
    CHECK_INT("width ±", (long long)cli_display_width("±1.3%"), 5);
    CHECK_INT("width accents", (long long)cli_display_width("très ünï"), 8);
    CHECK_INT("width empty", (long long)cli_display_width(""), 0);

    static const struct cli_column cols[] = {
        {"id", CLI_RIGHT},
        {"name", CLI_LEFT},
        {"95% CI", CLI_RIGHT},
        {"unit", CLI_LEFT},
    };
    struct cli_table *t = cli_table_new(cols, 4);
    const char *r1[] = {"7", "quick", "±1.3%", "score"};
    const char *r2[] = {"12", "très long", NULL, "ms"};
    const char *r3[] = {"3", "x", "±12%", ""};
    CHECK_INT("add row 1", cli_table_add(t, r1), 0);
    CHECK_INT("add row 2", cli_table_add(t, r2), 0);
    CHECK_INT("add row 3", cli_table_add(t, r3), 0);
    CHECK_INT("rows", (long long)cli_table_rows(t), 3);
    char *s = cli_table_render(t);
    CHECK_STR("table", s,
              "id  name       95% CI  unit\n"
              "--  ---------  ------  -----\n"
              " 7  quick       ±1.3%  score\n"
              "12  très long       -  ms\n"
              " 3  x            ±12%\n");
    free(s);
    cli_table_free(t);

    struct cli_table *empty = cli_table_new(cols, 2);
    s = cli_table_render(empty);
    CHECK_STR("table without rows", s, "id  name\n--  ----\n");
    free(s);
    cli_table_free(empty);

    /* More rows than the first allocation holds. */
    struct cli_table *big = cli_table_new(cols, 1);
    for (int i = 0; i < 100; i++) {
        char id[8];
        snprintf(id, sizeof id, "%d", i);
        const char *row[] = {id};
        cli_table_add(big, row);
    }
    s = cli_table_render(big);
    CHECK_INT("100 rows", (long long)cli_table_rows(big), 100);
    CHECK_STR("last row right aligned", s != NULL ? strstr(s, "\n99\n") : NULL, "\n99\n");
    CHECK_INT("first rows right aligned", s != NULL && strstr(s, "--\n 0\n 1\n") != NULL, 1);
    free(s);
    cli_table_free(big);
    cli_table_free(NULL);
}

int main(void)
{
    test_fmt_num();
    test_fmt_ci();
    test_progress();
    test_fmt_time();
    test_scrub();
    test_table();
    printf("test_cli_table: %d checks, %d failed\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
