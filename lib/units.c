/* units.c — see units.h. */
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <strings.h>

/* A suffix and the factor it stands for. */
struct unit {
    const char *suffix;
    double factor;
};

static const struct unit size_units[] = {
    {"", 1.0},
    {"b", 1.0},
    {"k", 1024.0},
    {"kb", 1024.0},
    {"kib", 1024.0},
    {"m", 1048576.0},
    {"mb", 1048576.0},
    {"mib", 1048576.0},
    {"g", 1073741824.0},
    {"gb", 1073741824.0},
    {"gib", 1073741824.0},
    {"t", 1099511627776.0},
    {"tb", 1099511627776.0},
    {"tib", 1099511627776.0},
};

static const struct unit duration_units[] = {
    {"", 1.0}, {"s", 1.0}, {"ms", 0.001}, {"m", 60.0}, {"min", 60.0}, {"h", 3600.0},
};

/* Parses "<number><suffix>" with a suffix from table; returns -1 on any
 * other text. Leading and trailing blanks are refused on purpose: plans
 * are machine-checked, not free text. */
static int parse_scaled(const char *s, const struct unit *table, size_t n, double *out)
{
    if (s == NULL || !(isdigit((unsigned char)s[0]) || s[0] == '.'))
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || !isfinite(v) || v < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (strcasecmp(end, table[i].suffix) == 0) {
            double scaled = v * table[i].factor; /* "1e308h" is no duration */
            if (!isfinite(scaled))
                return -1;
            *out = scaled;
            return 0;
        }
    }
    return -1;
}

int hv_parse_size(const char *s, uint64_t *bytes)
{
    double v;
    if (parse_scaled(s, size_units, sizeof size_units / sizeof size_units[0], &v) != 0)
        return -1;
    if (v >= 9.2e18 || v != floor(v))
        return -1;
    *bytes = (uint64_t)v;
    return 0;
}

int hv_parse_duration(const char *s, double *seconds)
{
    return parse_scaled(s, duration_units, sizeof duration_units / sizeof duration_units[0],
                        seconds);
}
