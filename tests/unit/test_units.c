/* test_units.c — sizes and durations as operators write them. */
#include "units.h"

#include "check.h"

#include <stdint.h>

int main(void)
{
    static const struct {
        const char *in;
        uint64_t bytes;
    } sizes[] = {
        {"0", 0},
        {"4096", 4096},
        {"256k", 262144},
        {"256K", 262144},
        {"64KiB", 65536},
        {"1m", 1048576},
        {"1.5m", 1572864},
        {"8g", 8589934592ULL},
        {"2GB", 2147483648ULL},
        {"1t", 1099511627776ULL},
        {"512b", 512},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        uint64_t v = 1;
        CHECK(hv_parse_size(sizes[i].in, &v) == 0);
        CHECK(v == sizes[i].bytes);
    }
    static const char *const bad_sizes[] = {"",    "k",     "-1k", "1.5", "12q", " 1k",
                                            "1k ", "1e30g", "nan", "inf", NULL};
    uint64_t v;
    for (size_t i = 0; i < sizeof bad_sizes / sizeof bad_sizes[0]; i++)
        CHECK(hv_parse_size(bad_sizes[i], &v) == -1);

    static const struct {
        const char *in;
        double s;
    } durations[] = {
        {"30", 30},    {"30s", 30},  {"500ms", 0.5}, {"5m", 300},
        {"2min", 120}, {"1h", 3600}, {"1.5s", 1.5},
    };
    for (size_t i = 0; i < sizeof durations / sizeof durations[0]; i++) {
        double d = -1;
        CHECK(hv_parse_duration(durations[i].in, &d) == 0);
        CHECK_NEAR(d, durations[i].s, 1e-12);
    }
    double d;
    CHECK(hv_parse_duration("-5s", &d) == -1);
    CHECK(hv_parse_duration("5 s", &d) == -1);
    CHECK(hv_parse_duration("5d", &d) == -1);
    CHECK(hv_parse_duration(NULL, &d) == -1);
    return check_summary("test_units");
}
