/* fuzz_units.c — the sizes and durations of plans (units.h): the input as
 * one string to hv_parse_size() and hv_parse_duration(). What they accept
 * fits its type, is finite and not negative, and has no blank around it. */
#include "fuzz.h"

#include "units.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    size_t n = strlen(s);
    bool blank_edge = n > 0 && (isspace((unsigned char)s[0]) || isspace((unsigned char)s[n - 1]));

    uint64_t bytes = 0;
    if (hv_parse_size(s, &bytes) == 0) {
        FUZZ_REQUIRE(n > 0 && !blank_edge);
        FUZZ_REQUIRE(bytes <= (uint64_t)INT64_MAX);
    }
    double seconds = 0;
    if (hv_parse_duration(s, &seconds) == 0) {
        FUZZ_REQUIRE(n > 0 && !blank_edge);
        FUZZ_REQUIRE(isfinite(seconds) && seconds >= 0);
    }
    free(s);
    return 0;
}
