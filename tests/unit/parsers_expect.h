/* parsers_expect.h — the expectations test_parsers.c holds for the
 * fixtures (tests/fixtures/<tool>/): what one run of a good output must
 * read as, with the values read by hand from the file (written as the
 * file's number and its conversion). */
#ifndef HV_TEST_PARSERS_EXPECT_H
#define HV_TEST_PARSERS_EXPECT_H

#include <stddef.h>

struct m {
    const char *name;
    double value;
};

#define MAX_M 20

struct good {
    const char *tool, *file;
    int run;                     /* which run of the output */
    int runs;                    /* how many the output holds */
    const char *format;          /* info.format */
    const char *version;         /* info.tool_version, NULL when absent */
    const char *started_at;      /* info.started_at, NULL when absent */
    struct m metrics[MAX_M + 1]; /* every metric of the run */
};

/* A good output of several tables (a post quoting them), one picked. */
struct good_table {
    int table; /* the table read (from 1) */
    struct good g;
};

#define MB(bytes_per_s) ((bytes_per_s) / 1e6)
#define KIB(kib_per_s)  ((kib_per_s)*1024.0 / 1e6) /* bonnie++ K/s to MB/s */
#define MIB(mib_per_s)  ((mib_per_s)*1048576.0 / 1e6)
#define GIB(gib_per_s)  ((gib_per_s)*1073741824.0 / 1e6)
#define US(ns)          ((ns) / 1e3)
#define G(bits_per_s)   ((bits_per_s) / 1e9)

#endif
