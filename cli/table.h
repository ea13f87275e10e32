/* table.h — aligned text tables and the number formats the CLI prints.
 *
 * Everything here is pure formatting: no I/O except cli_table_print(), no
 * global state, so the unit test can check the exact text. Cells are UTF-8;
 * column widths count code points, not bytes, so "±" lines up. */
#ifndef HV_CLI_TABLE_H
#define HV_CLI_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/** How a column's cells sit in their width. Numbers go right so that their
 *  magnitudes line up. */
enum cli_align { CLI_LEFT, CLI_RIGHT };

/** One column of a table. */
struct cli_column {
    const char *header;   /**< printed on the first line; not copied */
    enum cli_align align; /**< placement of the header and the cells */
};

struct cli_table;

/** Creates a table with ncols columns described by cols (the array and its
 *  headers must outlive the table). Returns NULL on allocation failure. */
struct cli_table *cli_table_new(const struct cli_column *cols, size_t ncols);

/** Frees the table and every cell; NULL is allowed. */
void cli_table_free(struct cli_table *t);

/** Appends a row of exactly ncols cells; each cell is copied (and
 *  cli_scrub()bed), a NULL cell prints as "-". Returns 0, or -1 on allocation failure (the table is
 *  unchanged). */
int cli_table_add(struct cli_table *t, const char *const *cells);

/** Number of rows added so far. */
size_t cli_table_rows(const struct cli_table *t);

/** Renders the header, a rule of dashes and every row: columns separated by
 *  two spaces, no trailing blanks, each line ending in '\n'. Returns a
 *  malloc'd string the caller frees, or NULL on allocation failure. */
char *cli_table_render(const struct cli_table *t);

/** Writes cli_table_render() to out. Returns 0, or -1 on failure. */
int cli_table_print(const struct cli_table *t, FILE *out);

/** Replaces, in place, every control character of s with '?': C0 controls
 *  and DEL, and the C1 controls U+0080..U+009F. Plan names, metric names and
 *  problem details come from other people; printed raw, an escape sequence
 *  in one could rewrite the user's terminal. */
void cli_scrub(char *s);

/** Number of code points in the UTF-8 string s (what a terminal shows for
 *  the text the CLI prints: no wide or combining characters expected). */
size_t cli_display_width(const char *s);

/** Formats a measured value for people: four significant digits, but never
 *  fewer digits than the integer part has, so 123456.7 is "123,457" and not
 *  "1.235e+05"; thousands grouped with ','; trailing zeros dropped ("2.5");
 *  exponent notation only below 1e-4 or from 1e15. Writes into buf and
 *  returns it. */
char *cli_fmt_num(char *buf, size_t len, double v);

/** Formats a percentage without the sign: "13" from 10 up, "1.3" from 0.1,
 *  two significant digits below ("0.052"). Returns buf. */
char *cli_fmt_pct(char *buf, size_t len, double pct);

/** Formats the half width of a confidence interval as "±1.3%", or "-" when
 *  has_ci is false or pct is not finite (a mean of 0 has no relative
 *  width). Returns buf. */
char *cli_fmt_half_pct(char *buf, size_t len, bool has_ci, double pct);

/** Formats an interval as "[1,503, 1,543]", or "-" when has_ci is false.
 *  Returns buf. */
char *cli_fmt_interval(char *buf, size_t len, bool has_ci, double low, double high);

/** Formats a duration in whole seconds as "m:ss" below an hour and
 *  "h:mm:ss" from there; negative values print as "0:00". Returns buf. */
char *cli_fmt_duration(char *buf, size_t len, double seconds);

/** Draws a progress bar of width cells between brackets, "[=====>    ]":
 *  '=' for the finished part, '>' at its head while unfinished. fraction is
 *  clamped to [0, 1]. buf needs width + 3 bytes. Returns buf. */
char *cli_fmt_bar(char *buf, size_t len, double fraction, int width);

/** The whole percent of fraction, rounded down so that 2 of 3 shows 66 and
 *  only a finished plan shows 100; clamped to [0, 100]. */
int cli_percent(double fraction);

/** Converts an ISO 8601 UTC timestamp ("2026-11-29T18:40:12.123Z") to local
 *  time "2026-11-29 19:40:12" (per TZ). Text that is not such a timestamp is
 *  copied unchanged, so an unexpected server format still shows. Returns
 *  buf. */
char *cli_fmt_time(char *buf, size_t len, const char *iso);

#endif
