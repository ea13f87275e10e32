/* cli.h — what every hvbench command sees: the invocation context, the
 * command table entry and the exit codes.
 *
 * Like tmux's cmd-*.c, each command lives in its own cli/cmd_<name>.c and
 * exports one struct cli_command; cli/main.c lists them in a table. */
#ifndef HV_CLI_H
#define HV_CLI_H

#include <stdbool.h>

#include "hv_build.h"

#define CLI_DEFAULT_SERVER "http://127.0.0.1:8080"

/** Exit codes, documented in docs/cli.md; scripts rely on them. */
enum cli_exit {
    CLI_EXIT_OK = 0,           /**< done; for watch: the plan finished done */
    CLI_EXIT_FAIL = 1,         /**< the server said no, the plan failed or was cancelled */
    CLI_EXIT_USAGE = 2,        /**< bad command line or unreadable input file */
    CLI_EXIT_UNREACHABLE = 3,  /**< no HTTP answer from the server */
    CLI_EXIT_CHANGE = 4,       /**< history: a change point nobody acknowledged */
    CLI_EXIT_INTERRUPTED = 130 /**< watch stopped by SIGINT, as shells report it */
};

struct hv_httpc;

/** The global options and the HTTP client shared by the command. */
struct cli_ctx {
    const char *server;    /**< base URL without a trailing '/' */
    const char *token;     /**< bearer token, or NULL */
    bool json;             /**< --json: print answers as JSON, not tables */
    struct hv_httpc *http; /**< created on first use by cli_http() */
};

/** One command. argv[0] is the command name, options follow (parsed with
 *  getopt_long by the command itself). fn returns an enum cli_exit. */
struct cli_command {
    const char *name;
    const char *usage;   /**< arguments after the name, for "usage:" lines */
    const char *summary; /**< one line for "hvbench help" */
    const char *help;    /**< longer text for "hvbench help CMD"; may be NULL */
    int (*fn)(struct cli_ctx *ctx, int argc, char **argv);
};

extern const struct cli_command cli_cmd_submit;
extern const struct cli_command cli_cmd_status;
extern const struct cli_command cli_cmd_watch;
extern const struct cli_command cli_cmd_report;
extern const struct cli_command cli_cmd_advice;
extern const struct cli_command cli_cmd_list;
extern const struct cli_command cli_cmd_validate;
extern const struct cli_command cli_cmd_cancel;
extern const struct cli_command cli_cmd_jobs;
extern const struct cli_command cli_cmd_targets;
extern const struct cli_command cli_cmd_label;
extern const struct cli_command cli_cmd_catalog;
extern const struct cli_command cli_cmd_import;
extern const struct cli_command cli_cmd_history;
extern const struct cli_command cli_cmd_ack;
extern const struct cli_command cli_cmd_compare;
extern const struct cli_command cli_cmd_delete;
extern const struct cli_command cli_cmd_retry;
extern const struct cli_command cli_cmd_purge;
extern const struct cli_command cli_cmd_export;
extern const struct cli_command cli_cmd_webhooks;
extern const struct cli_command cli_cmd_recommendations;

#endif
