/* common.h — what the commands share: messages, the one printer for failed
 * answers, requests, and reading a plan summary.
 *
 * Data goes to stdout, messages to stderr, so "hvbench list | ..." pipes
 * only the table. */
#ifndef HV_CLI_COMMON_H
#define HV_CLI_COMMON_H

#include <jansson.h>
#include <stdbool.h>

#include "cli/cli.h"
#include "httpc.h"

/* The three line printers below format one line, replace control
 * characters with '?' (see cli_scrub()) and add the newline themselves: the
 * arguments often hold text from the server. */

/** Prints "hvbench: " and the message on stderr, with a newline. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** Prints a line on stderr without the "hvbench: " prefix (continuation
 *  lines of a message: "  /path: message", "hint: ..."). */
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** Prints a line of data on stdout. */
void cli_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** Prints "usage: hvbench NAME USAGE" on stderr and returns CLI_EXIT_USAGE,
 *  so a command can "return cli_usage(&cli_cmd_x);". */
int cli_usage(const struct cli_command *cmd);

/** Returns the context's HTTP client, creating it on first use; NULL (after
 *  a message) when it cannot be created. */
struct hv_httpc *cli_http(struct cli_ctx *ctx);

/** Reports a failed answer on stderr and returns the exit code for it: the
 *  transport error and CLI_EXIT_UNREACHABLE when no answer came; otherwise
 *  the problem document's title, detail and one line per errors[] entry
 *  ("  /workloads/0/kind: must be one of ..."), its hint, and
 *  CLI_EXIT_FAIL. With --json the problem document also goes to stdout so a
 *  script sees the whole answer. */
int cli_problem(const struct cli_ctx *ctx, const struct hv_http_response *resp);

/** Prints a problem document as cli_problem() does: title, detail, one
 *  line per errors[] entry, hint; and with --json the document on stdout.
 *  http_status is shown after the detail, unless it is 0 (a problem found
 *  here, not by the server). */
void cli_print_problem(const struct cli_ctx *ctx, const json_t *doc, long http_status);

/** Sends a request (body may be NULL, it is not stolen). Returns CLI_EXIT_OK
 *  when a 2xx answer with a JSON body arrived; otherwise reports it with
 *  cli_problem() and returns its exit code. Either way the caller clears
 *  resp. */
int cli_request(struct cli_ctx *ctx, const char *method, const char *path, json_t *body,
                struct hv_http_response *resp);

/** cli_request() that also sends headers ("Name: value", NULL-terminated;
 *  NULL for none). */
int cli_request_headers(struct cli_ctx *ctx, const char *method, const char *path, json_t *body,
                        const char *const *headers, struct hv_http_response *resp);

/** One request whose answer is shown: printed as it came with --json,
 *  else by show (NULL: nothing is printed). Returns cli_request()'s exit
 *  code when the request failed, else show's. */
int cli_call(struct cli_ctx *ctx, const char *method, const char *path, json_t *body,
             int (*show)(const json_t *answer));

struct cli_column;
struct cli_table;

/** Adds the table row for one item of a list answer; an item that is not
 *  what the list holds may be left out. Returns 0, or -1 when memory runs
 *  out. */
typedef int (*cli_row_fn)(struct cli_table *t, const json_t *item);

/** Prints t on stdout when rc is CLI_EXIT_OK, then frees t (NULL is
 *  allowed). Returns rc, or CLI_EXIT_FAIL when t is NULL or printing
 *  failed. */
int cli_table_flush(struct cli_table *t, int rc);

/** Prints a table of the ncols columns cols with the row add_row makes of
 *  each element of list, or "hvbench: out of memory" on stderr when a row
 *  cannot be made. Returns an exit code. */
int cli_print_rows(const json_t *list, const struct cli_column *cols, size_t ncols,
                   cli_row_fn add_row);

/** The number member key of o, or NaN when it is absent or null (the
 *  server sends null for what cannot be computed). */
double cli_num(const json_t *o, const char *key);

/** The arrow printed after a metric's name for its higher_is_better
 *  member: " ↑" higher is better, " ↓" lower is better, "" when the
 *  server did not say. */
const char *cli_arrow(const json_t *higher_is_better);

/** Shows a list endpoint: GETs path, whose answer is {"items": [...]}, and
 *  with --json prints the answer as it came; otherwise prints a table of
 *  the ncols columns cols with the row add_row makes of each item, or
 *  "hvbench: no WHAT" on stderr when no row was made. Returns an exit
 *  code: cli_request()'s when the request failed, CLI_EXIT_FAIL when the
 *  answer has no items[] or memory runs out. */
int cli_list_table(struct cli_ctx *ctx, const char *path, const struct cli_column *cols,
                   size_t ncols, cli_row_fn add_row, const char *what);

/** Reads and parses the plan file path ("-" is standard input). Returns a
 *  new reference, or NULL after a message with *rc set: CLI_EXIT_USAGE when
 *  the file cannot be read, CLI_EXIT_FAIL when it is not JSON (reported as
 *  "file:line:column: message"; duplicate keys are refused as the server
 *  refuses them). */
json_t *cli_load_plan(const char *path, int *rc);

/** Appends "&name=value" (or "?name=value" when path has no '?' yet) to
 *  path[len], percent-encoding value. Returns 0, or -1 when it does not
 *  fit (path is then unchanged). */
int cli_add_query(char *path, size_t len, const char *name, const char *value);

/** Follows plan id until it ends, as "hvbench watch" does (a progress line
 *  redrawn on a terminal, a line per change otherwise; interval seconds
 *  between polls, 0 for the default). Returns CLI_EXIT_OK when it is done,
 *  CLI_EXIT_FAIL when it failed or was cancelled or the server refused,
 *  CLI_EXIT_INTERRUPTED on SIGINT or SIGTERM (cmd_watch.c). */
int cli_watch_plan(struct cli_ctx *ctx, long long id, double interval);

/** Parses a plan id (a positive decimal integer). Returns 0, or -1 after a
 *  message naming s. */
int cli_parse_id(const char *s, long long *id);

/** The registered target a name given on the command line means, written
 *  into out: the target called name, else the one guest of that name on
 *  its host (guests are "HOST/GUEST"; GET /api/v1/targets), else name as
 *  given (a target not registered yet). When guests of several hosts
 *  share the name, says so naming each and returns CLI_EXIT_USAGE;
 *  otherwise CLI_EXIT_OK, or cli_request()'s code. *id is the target's id
 *  (0 when none is registered); id may be NULL. */
int cli_target_name(struct cli_ctx *ctx, const char *name, char *out, size_t len, long long *id);

/** Writes v to stdout as indented JSON and a newline. Returns 0 or -1. */
int cli_print_json(const json_t *v);

/** Job counts of a plan, as in the "jobs" member of a plan summary. */
struct cli_jobs {
    long long total, queued, running, done, failed, cancelled;
};

/** A plan summary (GET /api/v1/plans/{id} or one item of the list). The
 *  strings are borrowed from the JSON it was read from; absent strings are
 *  "" so they can be printed as they are. */
struct cli_plan {
    long long id;
    const char *name;
    const char *status;
    const char *created_at;
    const char *updated_at;
    struct cli_jobs jobs;
    double progress; /**< 0..1: ended jobs / total, else the server's "progress" */
};

/** Reads a plan summary from obj. Returns 0, or -1 when obj is not an
 *  object with an integer id (what every summary has). */
int cli_plan_parse(const json_t *obj, struct cli_plan *out);

/** True for the statuses after which nothing changes any more. */
bool cli_plan_finished(const char *status);

#endif
