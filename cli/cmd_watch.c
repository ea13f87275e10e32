/* cmd_watch.c — hvbench watch: follow a plan until it ends.
 *
 * Polls GET /api/v1/plans/{id}. On a terminal one progress line is redrawn
 * in place; into a pipe or file a line is written only when something
 * changed, so a log of a long plan stays short. The exit code says how the
 * plan ended, which lets a script run "hvbench watch $id && hvbench report
 * $id". */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "cli/table.h"
#include "timeutil.h"
#include "units.h"

/* Polling faster than once a second only loads the server: job states
 * change on the scale of a benchmark run. */
#define WATCH_MIN_INTERVAL     1.0
#define WATCH_DEFAULT_INTERVAL 2.0

static int cmd_watch_exec(struct cli_ctx *ctx, int argc, char **argv);

const struct cli_command cli_cmd_watch = {
    .name = "watch",
    .usage = "[--interval S] ID",
    .summary = "follow a plan until it is done, failed or cancelled",
    .help = "  -i, --interval S  seconds between polls (default 2, at least 1;\n"
            "                    \"1500ms\", \"5s\", \"1m\" are understood too)\n"
            "\n"
            "Exits 0 when the plan is done, 1 when it failed or was cancelled,\n"
            "130 when interrupted. Lost connections are retried.\n",
    .fn = cmd_watch_exec,
};

/** Set by SIGINT; the loop checks it after every request and sleep. */
static volatile sig_atomic_t interrupted;

/** Records the interrupt; the loop does the rest outside the handler. */
static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

/** The state of the progress output, so messages on stderr do not end up
 *  in the middle of a redrawn line. */
struct watch_out {
    bool tty;         /**< stdout is a terminal: redraw in place */
    size_t shown;     /**< width of the line now on screen, 0 if none */
    char last[1024];  /**< state_key() of the last line written */
    size_t max_width; /**< terminal columns - 1, or 0 when unknown */
};

/** Sleeps up to seconds, returning early on SIGINT. */
static void sleep_interruptible(double seconds)
{
    struct timespec ts = {.tv_sec = (time_t)seconds,
                          .tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (!interrupted && nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/** Ends a line being redrawn so that what follows starts on its own line. */
static void end_line(struct watch_out *o)
{
    if (o->tty && o->shown > 0) {
        putchar('\n');
        fflush(stdout);
        o->shown = 0;
    }
}

/** Cuts s to at most width code points (0: no limit), at a code point
 *  boundary, so a narrow terminal does not wrap the line and break \r. */
static void fit(char *s, size_t width)
{
    size_t n = 0;
    for (char *p = s; *p != '\0'; p++) {
        if ((*p & 0xC0) != 0x80 && n++ == width && width > 0) {
            *p = '\0';
            return;
        }
    }
}

/** What the plan waits for, in words ("waiting for target hv-typo (never
 *  registered)"), or NULL when it waits for nothing. */
static const char *waiting_text(const json_t *body)
{
    const json_t *w = json_object_get(body, "waiting");
    const char *detail = json_string_value(json_object_get(w, "detail"));
    return detail != NULL ? detail : json_string_value(json_object_get(w, "reason"));
}

/** Writes what decides "something changed" into key: the status, every
 *  count (the cancelled ones included though the line does not show them)
 *  and what the plan waits for. */
static void state_key(const struct cli_plan *p, const json_t *body, char *key, size_t len)
{
    const char *why = waiting_text(body);
    snprintf(key, len, "%s %lld %lld %lld %lld %lld %lld %s", p->status, p->jobs.total,
             p->jobs.done, p->jobs.running, p->jobs.queued, p->jobs.failed, p->jobs.cancelled,
             why != NULL ? why : "");
}

/** Shows the progress of p (body: its summary): redrawn on a terminal,
 *  otherwise written only when the status, a count or what it waits for
 *  changed. */
static void show(struct watch_out *o, const struct cli_plan *p, const json_t *body, double elapsed)
{
    char state[400], bar[16], clock[32], line[768], key[sizeof o->last];
    const char *why = waiting_text(body);
    snprintf(state, sizeof state,
             "plan %lld %s: %s  %lld/%lld done, %lld running, %lld queued, %lld failed", p->id,
             p->name, p->status, p->jobs.done, p->jobs.total, p->jobs.running, p->jobs.queued,
             p->jobs.failed);
    snprintf(line, sizeof line, "%s  %s %d%%  %s%s%s", state,
             cli_fmt_bar(bar, sizeof bar, p->progress, 10), cli_percent(p->progress),
             cli_fmt_duration(clock, sizeof clock, elapsed), why != NULL ? "  " : "",
             why != NULL ? why : "");
    cli_scrub(line);
    if (!o->tty) {
        state_key(p, body, key, sizeof key);
        if (strcmp(key, o->last) != 0) {
            printf("%s\n", line);
            fflush(stdout);
            snprintf(o->last, sizeof o->last, "%s", key);
        }
        return;
    }
    if (o->max_width > 0 && cli_display_width(line) > o->max_width) {
        /* A narrow terminal: keep what answers "how far along?" and drop
         * the detailed counts and the words on waiting before cutting
         * anything; "(waiting)" keeps that it does. */
        snprintf(line, sizeof line, "plan %lld %s: %s%s  %lld/%lld  %s %d%%  %s", p->id, p->name,
                 p->status, why != NULL ? " (waiting)" : "", p->jobs.done, p->jobs.total, bar,
                 cli_percent(p->progress), clock);
        cli_scrub(line);
        fit(line, o->max_width);
    }
    size_t w = cli_display_width(line);
    /* Blanks rather than an escape sequence clear the rest of a longer
     * previous line: works on any terminal, TERM=dumb included. */
    printf("\r%s%*s", line, o->shown > w ? (int)(o->shown - w) : 0, "");
    fflush(stdout);
    o->shown = w;
}

/** With --json: writes the summary as one compact line when it changed. */
static void show_json(struct watch_out *o, json_t *body, const struct cli_plan *p)
{
    char key[sizeof o->last];
    state_key(p, body, key, sizeof key);
    if (strcmp(key, o->last) == 0)
        return;
    snprintf(o->last, sizeof o->last, "%s", key);
    json_dumpf(body, stdout, JSON_COMPACT);
    putchar('\n');
    fflush(stdout);
}

/** True for answers worth waiting out: no answer at all, or a proxy or the
 *  server saying it is briefly unable (a restart, a database failover). */
static bool transient(const struct hv_http_response *r)
{
    return r->status == 0 || r->status == 502 || r->status == 503 || r->status == 504;
}

/** The exit code and closing message for a plan that ended. */
static int finish(const struct cli_plan *p)
{
    if (strcmp(p->status, "done") == 0)
        return CLI_EXIT_OK;
    if (strcmp(p->status, "cancelled") == 0)
        cli_err("plan %lld was cancelled", p->id);
    else
        cli_err("plan %lld failed: %lld of %lld jobs failed", p->id, p->jobs.failed, p->jobs.total);
    return CLI_EXIT_FAIL;
}

/** Polls until the plan ends, the server refuses, or SIGINT. */
static int watch(struct cli_ctx *ctx, long long id, double interval)
{
    struct hv_httpc *c = cli_http(ctx);
    if (c == NULL)
        return CLI_EXIT_FAIL;
    struct watch_out o = {.tty = isatty(STDOUT_FILENO) == 1};
    struct winsize ws;
    if (o.tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1)
        o.max_width = ws.ws_col - 1u;
    char path[64];
    snprintf(path, sizeof path, "/api/v1/plans/%lld", id);
    double start = hv_monotonic();
    bool answered = false; /* the server answered at least once */
    bool lost = false;     /* we told the user the connection is lost */
    int rc = CLI_EXIT_INTERRUPTED;

    while (!interrupted) {
        struct hv_http_response resp;
        memset(&resp, 0, sizeof resp);
        hv_httpc_request(c, "GET", path, NULL, &resp);
        if (interrupted) {
            hv_http_response_clear(&resp);
            break;
        }
        if (transient(&resp) && (answered || resp.status != 0)) {
            /* Said once per outage: a line per poll would bury the output. */
            if (!lost) {
                char why[512];
                hv_http_response_describe(&resp, why, sizeof why);
                end_line(&o);
                cli_err("lost the server (%s); retrying every %gs", why, interval);
                lost = true;
            }
        } else if (resp.status < 200 || resp.status >= 300) {
            /* The first poll failing to connect means a wrong --server or a
             * server that is not running: waiting would hide that. */
            end_line(&o);
            rc = cli_problem(ctx, &resp);
            hv_http_response_clear(&resp);
            return rc;
        } else if (resp.body == NULL) {
            end_line(&o);
            cli_err("the server answered HTTP %ld without a JSON body", resp.status);
            hv_http_response_clear(&resp);
            return CLI_EXIT_FAIL;
        } else {
            struct cli_plan p;
            if (lost) {
                end_line(&o);
                cli_err("connected again");
                lost = false;
            }
            answered = true;
            if (cli_plan_parse(resp.body, &p) != 0) {
                end_line(&o);
                cli_err("the server's answer is not a plan summary");
                hv_http_response_clear(&resp);
                return CLI_EXIT_FAIL;
            }
            if (ctx->json)
                show_json(&o, resp.body, &p);
            else
                show(&o, &p, resp.body, hv_monotonic() - start);
            if (cli_plan_finished(p.status)) {
                end_line(&o);
                rc = finish(&p);
                hv_http_response_clear(&resp);
                return rc;
            }
        }
        hv_http_response_clear(&resp);
        sleep_interruptible(interval);
    }
    end_line(&o);
    cli_err("stopped watching; plan %lld goes on on the server", id);
    return rc;
}

/** hvbench watch [--interval S] ID */
static int cmd_watch_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    static const struct option options[] = {
        {"interval", required_argument, NULL, 'i'},
        {NULL, 0, NULL, 0},
    };
    double interval = WATCH_DEFAULT_INTERVAL;
    int opt;
    while ((opt = getopt_long(argc, argv, "i:", options, NULL)) != -1) {
        if (opt != 'i')
            return cli_usage(&cli_cmd_watch);
        if (hv_parse_duration(optarg, &interval) != 0 || interval < WATCH_MIN_INTERVAL) {
            cli_err("--interval must be a duration of at least 1 second, not '%s'", optarg);
            return CLI_EXIT_USAGE;
        }
    }
    long long id;
    if (argc - optind != 1)
        return cli_usage(&cli_cmd_watch);
    if (cli_parse_id(argv[optind], &id) != 0)
        return CLI_EXIT_USAGE;

    return cli_watch_plan(ctx, id, interval);
}

int cli_watch_plan(struct cli_ctx *ctx, long long id, double interval)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    /* No SA_RESTART: the sleep must end at once on ^C. */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    return watch(ctx, id, interval > 0 ? interval : WATCH_DEFAULT_INTERVAL);
}
