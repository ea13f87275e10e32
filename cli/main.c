/* main.c — hvbench, the command line client: global options, the command
 * table and dispatch.
 *
 *   hvbench [--server URL] [--token T] [--json] COMMAND [ARGS...]
 *
 * The global options may also follow the command anywhere before a "--"
 * (`hvbench report 3 --json`): no command has options of those names.
 * What is not given comes from the environment, then from the
 * configuration file (cli/config.h). */
#include <ctype.h>
#include <getopt.h>
#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "cli/config.h"
#include "httpc.h"

static int cmd_help_exec(struct cli_ctx *ctx, int argc, char **argv);

/** "help" lives here rather than in its own file because it walks the
 *  command table, which is private to this file. */
static const struct cli_command cmd_help = {
    .name = "help",
    .usage = "[COMMAND]",
    .summary = "show the commands, or the usage of one",
    .help = NULL,
    .fn = cmd_help_exec,
};

/** Every command, in the order "hvbench help" lists them. */
static const struct cli_command *const commands[] = {
    &cli_cmd_validate, &cli_cmd_submit,          &cli_cmd_status, &cli_cmd_watch,
    &cli_cmd_report,   &cli_cmd_compare,         &cli_cmd_list,   &cli_cmd_jobs,
    &cli_cmd_cancel,   &cli_cmd_targets,         &cli_cmd_label,  &cli_cmd_retry,
    &cli_cmd_delete,   &cli_cmd_purge,           &cli_cmd_export, &cli_cmd_history,
    &cli_cmd_ack,      &cli_cmd_catalog,         &cli_cmd_import, &cli_cmd_webhooks,
    &cli_cmd_advice,   &cli_cmd_recommendations, &cmd_help,
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

/** Returns the command called name, or NULL. */
static const struct cli_command *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i];
    return NULL;
}

/** Prints the overview: synopsis, commands, global options, exit codes. */
static void print_overview(FILE *out)
{
    fprintf(out, "usage: hvbench [--server URL] [--token TOKEN] [--json] COMMAND [ARGS]\n\n"
                 "Submits benchmark plans to an hvbench server and shows their results.\n\n"
                 "commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-9s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(out,
            "\nglobal options:\n"
            "  --server URL   server base URL (env HVBENCH_SERVER, default %s)\n"
            "  --token TOKEN  bearer token (env HVBENCH_TOKEN, which keeps it out of ps)\n"
            "  --json         print the server's JSON answers instead of tables\n"
            "  --help         show this help\n"
            "  --version      show the version\n"
            "The global options may also follow the command (before any --). What is\n"
            "not given comes from the environment, then from the file\n"
            "~/.config/hvbench/config ($HVBENCH_CONFIG, $XDG_CONFIG_HOME/hvbench/config):\n"
            "lines 'server = URL' and 'token = TOKEN' (mode 600 when it holds a token).\n\n"
            "exit codes: 0 ok, 1 refused by the server or plan failed/cancelled,\n"
            "2 usage error, 3 server unreachable, 4 history found a change point\n"
            "nobody acknowledged.\n"
            "Run 'hvbench help COMMAND' for the options of a command.\n",
            CLI_DEFAULT_SERVER);
}

/** Prints the usage line and the longer help of cmd on stdout. */
static void print_command_help(const struct cli_command *cmd)
{
    /* The summary is written to follow a command name in the overview; as
     * a sentence of its own it starts with a capital. */
    printf("usage: hvbench %s %s\n\n%c%s.\n", cmd->name, cmd->usage, toupper(cmd->summary[0]),
           cmd->summary + 1);
    if (cmd->help != NULL)
        printf("\n%s", cmd->help);
}

/** hvbench help [COMMAND]. */
static int cmd_help_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    (void)ctx; /* help needs no server */
    if (argc > 2)
        return cli_usage(&cmd_help);
    if (argc == 1) {
        print_overview(stdout);
        return CLI_EXIT_OK;
    }
    const struct cli_command *cmd = find_command(argv[1]);
    if (cmd == NULL) {
        cli_err("unknown command '%s'; run 'hvbench help' for the list", argv[1]);
        return CLI_EXIT_USAGE;
    }
    print_command_help(cmd);
    return CLI_EXIT_OK;
}

/** True when the command's arguments ask for its help (before any "--", so
 *  that a file called "--help" can still be named after it). */
static bool wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return false;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return true;
    }
    return false;
}

/** Returns s, or NULL when it is NULL or empty: an exported but empty
 *  variable means "not set" to the user. */
static const char *nonempty(const char *s)
{
    return s != NULL && s[0] != '\0' ? s : NULL;
}

/** Takes the global options out of a command's arguments (before any
 *  "--"), shifting the rest down; returns the new argc, or -1 after a usage
 *  message when one lacks its value. */
static int take_globals(int argc, char **argv, const char **server, const char **token, bool *json)
{
    int out = 1;
    bool rest = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!rest && strcmp(a, "--") == 0) {
            rest = true;
        } else if (!rest && strcmp(a, "--json") == 0) {
            *json = true;
            continue;
        } else if (!rest && (strcmp(a, "--server") == 0 || strcmp(a, "--token") == 0)) {
            if (i + 1 >= argc) {
                cli_err("%s needs a value", a);
                return -1;
            }
            *(a[2] == 's' ? server : token) = nonempty(argv[++i]);
            continue;
        } else if (!rest && strncmp(a, "--server=", 9) == 0) {
            *server = a + 9;
            continue;
        } else if (!rest && strncmp(a, "--token=", 8) == 0) {
            *token = nonempty(a + 8);
            continue;
        }
        argv[out++] = argv[i];
    }
    argv[out] = NULL;
    return out;
}

/** Fills in the server and token neither an option nor the environment
 *  gave from the configuration file, which cfg then owns. A file named by
 *  HVBENCH_CONFIG is always read, so that a wrong name is found; the
 *  default one only when something is missing. Returns 0, or -1 when the
 *  file is wrong (said). */
static int fill_from_config(struct cli_config *cfg, const char **server, const char **token)
{
    char path[4096], why[512];
    const char *named = getenv("HVBENCH_CONFIG");
    bool explicit = named != NULL && named[0] != '\0';
    if ((!explicit && *server != NULL && *token != NULL) || cli_config_path(path, sizeof path) != 0)
        return 0;
    if (cli_config_read(path, explicit, cfg, why, sizeof why) != 0) {
        cli_err("%s", why);
        return -1;
    }
    if (*server == NULL)
        *server = cfg->server;
    if (*token == NULL)
        *token = cfg->token;
    return 0;
}

/** Parses the global options, finds the command and runs it; returns its
 *  exit code (enum cli_exit). */
int main(int argc, char **argv)
{
    static const struct option options[] = {
        {"server", required_argument, NULL, 's'}, {"token", required_argument, NULL, 't'},
        {"json", no_argument, NULL, 'j'},         {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},      {NULL, 0, NULL, 0},
    };
    gsl_set_error_handler_off(); /* lib/stats.c checks arguments; GSL must not abort */
    const char *server = nonempty(getenv("HVBENCH_SERVER"));
    const char *token = nonempty(getenv("HVBENCH_TOKEN"));
    bool json = false;
    int opt;
    /* getopt prefixes its messages with argv[0]: the name, not a path. */
    static char progname[] = "hvbench";
    argv[0] = progname;
    /* '+': stop at the command name; what follows belongs to the command. */
    while ((opt = getopt_long(argc, argv, "+h", options, NULL)) != -1) {
        switch (opt) {
        case 's':
            server = optarg;
            break;
        case 't':
            token = nonempty(optarg);
            break;
        case 'j':
            json = true;
            break;
        case 'h':
            print_overview(stdout);
            return CLI_EXIT_OK;
        case 'V':
            printf("hvbench %s\n", HVBENCH_VERSION);
            return CLI_EXIT_OK;
        default:
            fprintf(stderr, "Run 'hvbench --help' for usage.\n");
            return CLI_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        print_overview(stderr);
        return CLI_EXIT_USAGE;
    }
    const struct cli_command *cmd = find_command(argv[optind]);
    if (cmd == NULL) {
        cli_err("unknown command '%s'; run 'hvbench help' for the list", argv[optind]);
        return CLI_EXIT_USAGE;
    }
    int cargc = argc - optind;
    char **cargv = argv + optind;
    /* Likewise for the command's getopt: "hvbench list: unrecognized
     * option", not "list: ...". */
    char prog[64];
    snprintf(prog, sizeof prog, "hvbench %s", cmd->name);
    cargv[0] = prog;
    if (wants_help(cargc, cargv)) {
        print_command_help(cmd);
        return CLI_EXIT_OK;
    }
    cargc = take_globals(cargc, cargv, &server, &token, &json);
    if (cargc < 0)
        return CLI_EXIT_USAGE;

    struct cli_config cfg = {0};
    if (fill_from_config(&cfg, &server, &token) != 0)
        return CLI_EXIT_USAGE;
    if (server == NULL)
        server = CLI_DEFAULT_SERVER;
    if (strncmp(server, "http://", 7) != 0 && strncmp(server, "https://", 8) != 0) {
        cli_err("--server '%s' must start with http:// or https://", server);
        cli_config_free(&cfg);
        return CLI_EXIT_USAGE;
    }
    /* Paths start with '/': a trailing one would double it, and the plan
     * page URL printed by submit would look wrong. */
    char *base = strdup(server);
    if (base == NULL) {
        cli_err("out of memory");
        cli_config_free(&cfg);
        return CLI_EXIT_FAIL;
    }
    for (size_t n = strlen(base); n > 0 && base[n - 1] == '/'; n--)
        base[n - 1] = '\0';

    struct cli_ctx ctx = {.server = base, .token = token, .json = json, .http = NULL};
    /* Commands parse their options with getopt_long from their own argv[0];
     * 0 makes glibc start over, including its internal state. */
    optind = 0;
    int rc = cmd->fn(&ctx, cargc, cargv);
    hv_httpc_free(ctx.http);
    free(base);
    cli_config_free(&cfg);
    if (fflush(stdout) != 0 && rc == CLI_EXIT_OK) {
        cli_err("cannot write the output");
        rc = CLI_EXIT_FAIL;
    }
    return rc;
}
