/* parse_bonnie.h — what the two halves of the bonnie++ parser share:
 * parse_bonnie.c (the CSV lines, and the choice between CSV and table)
 * and parse_bonnie_table.c (the human-readable table). Only those two
 * files use it; everyone else goes through parsers.h. */
#ifndef HV_PARSE_BONNIE_H
#define HV_PARSE_BONNIE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define HV_BONNIE_TOOL    "bonnie++"
#define HV_BONNIE_TESTS   12
#define HV_BONNIE_IO      6 /* the first six tests: the "Sequential Output" table */
#define HV_BONNIE_MAXRUNS 256

/** How a test's rate is counted. */
enum hv_bonnie_rate { HV_BONNIE_KIB_S, HV_BONNIE_SEEKS_S, HV_BONNIE_OPS_S };

/** One test of bonnie++, in the order of its CSV and tables. */
struct hv_bonnie_test {
    const char *csv;    /**< bonnie++'s field name: "put_block" */
    const char *what;   /**< for messages: "block write K/s" */
    const char *metric; /**< disk.METRIC.<unit>: "seq_write" */
    enum hv_bonnie_rate rate;
    int v19,
        latency; /**< 0-based CSV fields (1.9x) of its rate and latency; %CP follows the rate */
    int v10;     /**< the field of its rate in a 1.0x CSV line; %CP follows */
};

/** The twelve tests. */
extern const struct hv_bonnie_test hv_bonnie_tests[HV_BONNIE_TESTS];

/** The results of one run. */
struct hv_bonnie_result {
    bool has[HV_BONNIE_TESTS], has_lat[HV_BONNIE_TESTS];
    double value[HV_BONNIE_TESTS]; /**< K/s (KiB) or per second */
    double lat_us[HV_BONNIE_TESTS];
};

/** A file's lines, tabs expanded, control characters blanked, trailing
 *  blanks cut, NUL-terminated. */
struct hv_bonnie_lines {
    char **line;
    int *no; /**< each line's number in the file */
    int n;
    bool open_end; /**< the last line has no newline after it */
};

/** What hv_bonnie_tables() read besides the runs. */
struct hv_bonnie_found {
    int sections; /**< sections read (0: no table) */
    /** Tables: a "Sequential Output" section with the "Sequential Create"
     *  section under it, or either alone; first[k] is the first run of
     *  table k (from 0), its runs end where the next table's start. */
    int tables, first[HV_BONNIE_MAXRUNS];
    bool pasted;    /**< a row lacks its label (machine name and size, or file count) */
    bool end_whole; /**< the last line is open (lines.open_end) and a whole table row */
};

/** Whether s[0..n) is "+++++" (or "+++"): a test bonnie++ found too fast
 *  to time. */
bool hv_bonnie_too_fast(const char *s, size_t n);

/** A latency such as "8107us", "12ms", "1.5s", "900ns" into *us. Returns
 *  0, or -1 when s is not one. */
int hv_bonnie_latency(const char *s, size_t n, double *us);

/** Whether a line is a CSV line (of any bonnie++ format): 20 commas or
 *  more. */
bool hv_bonnie_csv_like(const char *line);

/** Whether a line is one bonnie++ prints while it works ("Writing
 *  intelligently...done"), a CSV header, or blank: what an output may hold
 *  beside its tables and CSV lines. */
bool hv_bonnie_chatter(const char *line);

/** Appends the run of res with a copy of info ({"cpu_pct", "too_fast",
 *  ...}) to runs. Returns 0, or -1 when a value is not finite or memory
 *  runs out. */
int hv_bonnie_emit(json_t *runs, const struct hv_bonnie_result *res, const json_t *info,
                   const char *format);

/** Reads every table of lines (bonnie++'s own, bon_csv2txt's, 1.0x and
 *  1.9x/2.0, also as posts quote them: from the "Sequential Output" line
 *  on, the rows without their labels) into runs, one per result row, in
 *  order; a "Sequential Create" section belongs to the "Sequential Output"
 *  section before it. *found says how many sections and tables were read
 *  and where each table's runs start. Returns 0, or -1 with err set. */
int hv_bonnie_tables(const struct hv_bonnie_lines *lines, json_t *runs,
                     struct hv_bonnie_found *found, char *err, size_t errlen);

#endif
