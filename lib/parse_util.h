/* parse_util.h — what the tool parsers (lib/parse_*.c) share: error
 * sentences, strict numbers, a line cursor, JSON loading with line numbers,
 * and the metric and run objects of parsers.h.
 *
 * Only lib/parse_*.c and lib/parsers.c use this; everyone else goes
 * through parsers.h. The text handed to a parser is always NUL-terminated
 * at its length (parsers.c copies it), so C string functions are safe. */
#ifndef HV_PARSE_UTIL_H
#define HV_PARSE_UTIL_H

#include "parsers.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/** Writes "tool: " and the formatted message into err. Returns -1, so a
 *  parser can `return hv_perr(...)`. */
int hv_perr(char *err, size_t errlen, const char *tool, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/** Parses all of s[0..n) as a finite decimal number: optional sign, digits
 *  with an optional fraction and exponent; no blanks, hex, "inf" or "nan".
 *  Returns 0, or -1 leaving *out alone. */
int hv_pnum(const char *s, size_t n, double *out);

/** hv_pnum() of a NUL-terminated string. */
int hv_pnum_str(const char *s, double *out);

/** Copies s[0..n) into buf (NUL-terminated, cut to fit, "..." marking a
 *  cut) with every byte outside printable ASCII replaced by '?', for
 *  quoting input in messages and info: the result is always valid UTF-8
 *  and cannot move a terminal's cursor. Returns buf. */
char *hv_pquote(char *buf, size_t len, const char *s, size_t n);

/** A cursor over the lines of a NUL-terminated text. */
struct hv_plines {
    const char *next; /**< where the next line starts */
    const char *s;    /**< the current line (not NUL-terminated) */
    size_t len;       /**< its length without "\n" or "\r\n" */
    int no;           /**< its number, from 1 */
    bool newline;     /**< it ended with a newline (the last may not) */
};

/** Starts the cursor before the first line of text. */
void hv_plines_init(struct hv_plines *it, const char *text);

/** Moves to the next line; false after the last one. */
bool hv_plines_next(struct hv_plines *it);

/** Whether line[0..len) starts with prefix. */
bool hv_pstarts(const char *line, size_t len, const char *prefix);

/** Whether line[0..len) contains word. */
bool hv_pcontains(const char *line, size_t len, const char *word);

/** Every line-oriented tool ends its output with a newline; a last line
 *  without one was most likely cut in the middle, and a number cut short
 *  still looks like a number. Returns 0 when text[0..len) ends with a
 *  newline (or is empty), else -1 with the error. */
int hv_pcheck_complete(const char *text, size_t len, const char *tool, char *err, size_t errlen);

/** A parser's answer for an output that is not its tool's: */
#define HV_PARSE_NOT_MINE (-2)

/** Writes "TOOL: WHAT" into err for an output that is not the parser's
 *  tool's and returns HV_PARSE_NOT_MINE, which the parsers pass on: the
 *  table (parsers.c) then adds "(it looks like X output: import it as
 *  tool X)" when hv_parser_guess() recognises another tool, so no parser
 *  calls back into the table of parsers. text and self are the output and
 *  the parser's table name. */
int hv_pnot_mine(const char *text, const char *self, const char *tool, const char *what, char *err,
                 size_t errlen);

/** Loads the JSON document of a tool's output: leading lines that do not
 *  start with '{' (warnings a tool printed on the same stream) are skipped,
 *  and so is text after the document. Errors say "the JSON ends early at
 *  line N (cut off?)" or "bad JSON at line N, column C: ...", with line
 *  numbers of the whole text, or that there is no JSON object. Duplicate
 *  members are accepted: iperf 3.12 writes "sock_bufsize" once per stream
 *  into one object. Returns a new reference, or NULL with err set. */
json_t *hv_pjson_load(const char *text, size_t len, const char *tool, char *err, size_t errlen);

/** hv_pjson_load() of the next document of a file that may hold several
 *  outputs one after another (`cat a.json b.json`): reads from
 *  text[*pos..len) and moves *pos past the document. When no line starting
 *  with '{' is left, returns NULL with *pos = len and err empty: the end,
 *  not an error. */
json_t *hv_pjson_next(const char *text, size_t len, size_t *pos, const char *tool, char *err,
                      size_t errlen);

/** Rewrites the error "TOOL: MESSAGE" of the part-th output of a file
 *  (from 0) as "TOOL: output N of the file: MESSAGE", so the reader of a
 *  file of several outputs knows which one is damaged; the first output's
 *  errors stay as they are. Returns -1. */
int hv_ppart_err(char *err, size_t errlen, const char *tool, size_t part);

/** Reads member key of obj as a number into *out. Returns 1 when it is
 *  absent (or null), 0 when it is a number, -1 with the error "WHERE.KEY is
 *  not a number" otherwise. where names obj in the message ("jobs[0]
 *  (seqwrite) write"). */
int hv_pjnum(const json_t *obj, const char *key, const char *where, double *out, const char *tool,
             char *err, size_t errlen);

/** Appends {"name", "value", "unit", "higher_is_better"} to metrics.
 *  Returns 0, or -1 when value is not finite or the name is taken (a
 *  parser bug or an output that names one thing twice). */
int hv_pmetric(json_t *metrics, const char *name, double value, const char *unit,
               bool higher_is_better);

/** Appends a new run {"metrics": [], "info": {"tool": tool, "format":
 *  format}} to runs and returns it (borrowed), or NULL when out of memory. */
json_t *hv_prun_new(json_t *runs, const char *tool, const char *format);

/** The metrics array of a run (borrowed). */
json_t *hv_prun_metrics(json_t *run);

/** The info object of a run (borrowed). */
json_t *hv_prun_info(json_t *run);

/** Appends the sample {"metric", "t", "value"} to the run's "samples"
 *  array (made on the first one); see parsers.h for what t means. Returns
 *  0, or -1 when t or value is not finite or memory runs out. */
int hv_prun_sample(json_t *run, const char *metric, double t, double value);

/** The samples array of a run (borrowed), or NULL when it has none. */
json_t *hv_prun_samples(json_t *run);

/** A series of intervals [start, end) with a value each, for the parsers
 *  that sample: appended in any order, then handed to hv_pseries_emit(). */
struct hv_pseries {
    struct hv_pinterval {
        double start, end, value;
    } * v;
    size_t n, cap;
};

/** Appends one interval. Returns 0, or -1 when memory runs out. */
int hv_pseries_add(struct hv_pseries *s, double start, double end, double value);

/** Sorts s by end, leaves out intervals shorter than half of the longest
 *  one (a ragged last interval), and appends the rest to run as samples
 *  of metric at t = end - offset, value x scale; intervals that end at or
 *  before offset are left out too. Returns how many it appended, or -1
 *  when memory runs out. Frees s. */
long hv_pseries_emit(struct hv_pseries *s, json_t *run, const char *metric, double offset,
                     double scale);

/** Releases s (it may be used again). */
void hv_pseries_free(struct hv_pseries *s);

/** Writes a UNIX time as ISO 8601 UTC with milliseconds
 *  ("2026-11-29T19:38:50.281Z") into buf (32 bytes suffice). Returns -1
 *  for times before 1970 or after 9999, else 0. */
int hv_piso(double epoch, char *buf, size_t len);

/* The tools' descriptions, one per lib/parse_<tool>.c and line of
 * tools.def: the rows of parsers.c and parse_guess.c. */
#define HV_TOOL(id, kind, guess) extern const struct hv_tool_parser hv_tool_parser_##id;
#include "tools.def"
#undef HV_TOOL

#endif
