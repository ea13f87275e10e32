/* common.c — see common.h. */
#include "cli/common.h"
#include "cli/table.h"
#include "fileio.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Long enough for a slow server answering a large report, short enough that
 * a blackholed address does not hang a script for minutes. */
#define CLI_HTTP_TIMEOUT_S 30

/* Far above any plan a person writes; it only stops "submit /dev/zero"
 * from eating the memory. The server has its own, smaller cap. */
#define PLAN_MAX_BYTES (64u << 20)

/** Formats one line, scrubs it and writes prefix, line and '\n' to f. */
static void put_line(FILE *f, const char *prefix, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

static void put_line(FILE *f, const char *prefix, const char *fmt, va_list ap)
{
    char *line = NULL;
    if (vasprintf(&line, fmt, ap) < 0)
        return;
    cli_scrub(line);
    if (f == stderr) {
        /* Whatever the command printed so far comes first, also when stdout
         * is a pipe and so fully buffered. */
        fflush(stdout);
    }
    fprintf(f, "%s%s\n", prefix, line);
    free(line);
}

void cli_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    put_line(stderr, "hvbench: ", fmt, ap);
    va_end(ap);
}

void cli_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    put_line(stderr, "", fmt, ap);
    va_end(ap);
}

void cli_out(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    put_line(stdout, "", fmt, ap);
    va_end(ap);
}

int cli_usage(const struct cli_command *cmd)
{
    fprintf(stderr, "usage: hvbench %s %s\n", cmd->name, cmd->usage);
    return CLI_EXIT_USAGE;
}

struct hv_httpc *cli_http(struct cli_ctx *ctx)
{
    if (ctx->http == NULL) {
        ctx->http = hv_httpc_new(ctx->server, ctx->token, CLI_HTTP_TIMEOUT_S);
        if (ctx->http == NULL)
            cli_err("cannot create an HTTP client (out of memory?)");
    }
    return ctx->http;
}

/** Returns the string member key of obj, or NULL when absent or not a
 *  string (a problem document from a proxy may carry anything). */
static const char *str_member(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

void cli_print_problem(const struct cli_ctx *ctx, const json_t *doc, long http_status)
{
    const json_t *body = json_is_object(doc) ? doc : NULL;
    const char *title = str_member(body, "title");
    const char *detail = str_member(body, "detail");
    const char *hint = str_member(body, "hint");
    char status[32] = "";
    if (http_status != 0)
        snprintf(status, sizeof status, " (HTTP %ld)", http_status);
    if (title != NULL && detail != NULL)
        cli_err("%s: %s%s", title, detail, status);
    else if (title != NULL || detail != NULL)
        cli_err("%s%s", title != NULL ? title : detail, status);
    else if (http_status != 0)
        cli_err("the server answered HTTP %ld", http_status);
    else
        cli_err("refused without a reason");

    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(body, "errors"), i, e)
    {
        const char *path = str_member(e, "path");
        const char *msg = str_member(e, "message");
        /* "" is the JSON Pointer of the whole document. */
        cli_note("  %s: %s", path == NULL || path[0] == '\0' ? "(plan)" : path,
                 msg != NULL ? msg : "invalid");
    }
    if (hint != NULL)
        cli_note("hint: %s", hint);
    else if (http_status == 401 && ctx->token == NULL)
        cli_note("hint: pass --token or set HVBENCH_TOKEN");
    if (ctx->json && doc != NULL)
        cli_print_json(doc);
}

int cli_problem(const struct cli_ctx *ctx, const struct hv_http_response *resp)
{
    if (resp->status == 0) {
        /* httpc's error names the method and URL already. */
        cli_err("cannot reach the server: %s", resp->error[0] != '\0' ? resp->error : ctx->server);
        return CLI_EXIT_UNREACHABLE;
    }
    cli_print_problem(ctx, resp->body, resp->status);
    return CLI_EXIT_FAIL;
}

int cli_request(struct cli_ctx *ctx, const char *method, const char *path, json_t *body,
                struct hv_http_response *resp)
{
    return cli_request_headers(ctx, method, path, body, NULL, resp);
}

int cli_request_headers(struct cli_ctx *ctx, const char *method, const char *path, json_t *body,
                        const char *const *headers, struct hv_http_response *resp)
{
    struct hv_httpc *c = cli_http(ctx);
    if (c == NULL)
        return CLI_EXIT_FAIL;
    hv_httpc_request_headers(c, method, path, body, headers, resp);
    if (resp->status >= 200 && resp->status < 300) {
        if (resp->body != NULL)
            return CLI_EXIT_OK;
        cli_err("the server answered HTTP %ld without a JSON body%s%s", resp->status,
                resp->error[0] != '\0' ? ": " : "", resp->error);
        return CLI_EXIT_FAIL;
    }
    return cli_problem(ctx, resp);
}

int cli_table_flush(struct cli_table *t, int rc)
{
    if (t == NULL)
        return CLI_EXIT_FAIL;
    if (rc == CLI_EXIT_OK && cli_table_print(t, stdout) != 0)
        rc = CLI_EXIT_FAIL;
    cli_table_free(t);
    return rc;
}

/** Adds the row add_row makes of each element of list to t (NULL: none
 *  could be made). Returns an exit code, after "out of memory" when a row
 *  could not be made. */
static int add_rows(struct cli_table *t, const json_t *list, cli_row_fn add_row)
{
    int rc = t != NULL ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    size_t i;
    const json_t *item;
    json_array_foreach(list, i, item)
    {
        if (rc != CLI_EXIT_OK || add_row(t, item) != 0) {
            rc = CLI_EXIT_FAIL;
            break;
        }
    }
    if (rc != CLI_EXIT_OK)
        cli_err("out of memory");
    return rc;
}

int cli_print_rows(const json_t *list, const struct cli_column *cols, size_t ncols,
                   cli_row_fn add_row)
{
    struct cli_table *t = cli_table_new(cols, ncols);
    return cli_table_flush(t, add_rows(t, list, add_row));
}

/** Adds a row per item with add_row and prints the table, or "no WHAT".
 *  Returns an exit code. */
static int print_list(const json_t *items, const struct cli_column *cols, size_t ncols,
                      cli_row_fn add_row, const char *what)
{
    struct cli_table *t = cli_table_new(cols, ncols);
    int rc = add_rows(t, items, add_row);
    if (rc == CLI_EXIT_OK && cli_table_rows(t) == 0) {
        cli_err("no %s", what);
        cli_table_free(t);
        return rc;
    }
    return cli_table_flush(t, rc);
}

double cli_num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *cli_arrow(const json_t *higher_is_better)
{
    if (json_is_true(higher_is_better))
        return " ↑";
    return json_is_false(higher_is_better) ? " ↓" : "";
}

int cli_call(struct cli_ctx *ctx, const char *method, const char *path, json_t *body,
             int (*show)(const json_t *answer))
{
    struct hv_http_response resp;
    memset(&resp, 0, sizeof resp);
    int rc = cli_request(ctx, method, path, body, &resp);
    if (rc == CLI_EXIT_OK) {
        if (ctx->json)
            cli_print_json(resp.body);
        else if (show != NULL)
            rc = show(resp.body);
    }
    hv_http_response_clear(&resp);
    return rc;
}

int cli_list_table(struct cli_ctx *ctx, const char *path, const struct cli_column *cols,
                   size_t ncols, cli_row_fn add_row, const char *what)
{
    struct hv_http_response resp;
    memset(&resp, 0, sizeof resp);
    int rc = cli_request(ctx, "GET", path, NULL, &resp);
    if (rc == CLI_EXIT_OK) {
        json_t *items = json_object_get(resp.body, "items");
        if (ctx->json) {
            cli_print_json(resp.body);
        } else if (!json_is_array(items)) {
            cli_err("the server's answer has no items[]");
            rc = CLI_EXIT_FAIL;
        } else {
            rc = print_list(items, cols, ncols, add_row, what);
        }
    }
    hv_http_response_clear(&resp);
    return rc;
}

json_t *cli_load_plan(const char *path, int *rc)
{
    bool is_stdin = strcmp(path, "-") == 0;
    const char *name = is_stdin ? "<stdin>" : path;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (f == NULL) {
        cli_err("cannot open %s: %s", path, strerror(errno));
        *rc = CLI_EXIT_USAGE;
        return NULL;
    }
    size_t len = 0;
    char *text = hv_read_stream(f, PLAN_MAX_BYTES, 0, &len);
    int saved = errno;
    if (!is_stdin)
        fclose(f);
    if (text == NULL) {
        cli_err("cannot read %s: %s", name, strerror(saved));
        *rc = CLI_EXIT_USAGE;
        return NULL;
    }
    json_error_t err;
    /* Duplicate keys are refused because the server refuses them too, and
     * saying so here points at the line. */
    json_t *plan = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
    free(text);
    if (plan == NULL) {
        /* The compiler-style prefix lets editors jump to the spot. */
        cli_note("%s:%d:%d: %s", name, err.line, err.column, err.text);
        *rc = CLI_EXIT_FAIL;
    }
    return plan;
}

int cli_add_query(char *path, size_t len, const char *name, const char *value)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(path), start = n;
    int w = snprintf(path + n, len - n, "%c%s=", strchr(path, '?') != NULL ? '&' : '?', name);
    if (w < 0 || (size_t)w >= len - n)
        goto too_long;
    n += (size_t)w;
    for (const unsigned char *p = (const unsigned char *)value; *p != '\0'; p++) {
        /* RFC 3986 unreserved characters stay; everything else, '=' and
         * '&' included, is escaped. */
        bool plain = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
                     (*p >= '0' && *p <= '9') || strchr("-._~", *p) != NULL;
        if (n + (plain ? 1 : 3) >= len)
            goto too_long;
        if (plain) {
            path[n++] = (char)*p;
        } else {
            path[n++] = '%';
            path[n++] = hex[*p >> 4];
            path[n++] = hex[*p & 15];
        }
    }
    path[n] = '\0';
    return 0;
too_long:
    path[start] = '\0';
    return -1;
}

int cli_parse_id(const char *s, long long *id)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 || v <= 0) {
        cli_err("'%s' is not a plan id (a positive integer)", s);
        return -1;
    }
    *id = v;
    return 0;
}

int cli_print_json(const json_t *v)
{
    if (json_dumpf(v, stdout, JSON_INDENT(2)) != 0)
        return -1;
    return fputc('\n', stdout) == EOF ? -1 : 0;
}

/** Returns the integer member key of obj, or 0 when absent. */
static long long int_member(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_integer(v) ? (long long)json_integer_value(v) : 0;
}

int cli_plan_parse(const json_t *obj, struct cli_plan *out)
{
    const json_t *id = json_object_get(obj, "id");
    if (!json_is_object(obj) || !json_is_integer(id))
        return -1;
    memset(out, 0, sizeof *out);
    out->id = (long long)json_integer_value(id);
    const char **strs[] = {&out->name, &out->status, &out->created_at, &out->updated_at};
    const char *keys[] = {"name", "status", "created_at", "updated_at"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *s = str_member(obj, keys[i]);
        *strs[i] = s != NULL ? s : "";
    }
    const json_t *jobs = json_object_get(obj, "jobs");
    out->jobs.total = int_member(jobs, "total");
    out->jobs.queued = int_member(jobs, "queued");
    out->jobs.running = int_member(jobs, "running");
    out->jobs.done = int_member(jobs, "done");
    out->jobs.failed = int_member(jobs, "failed");
    out->jobs.cancelled = int_member(jobs, "cancelled");
    /* From the counts when there are any: the progress line shows them next
     * to the percentage, and a server rounding 2/3 to 0.67 would print 67%
     * beside "2/3 done". A job counts once it ended, whichever way. */
    const json_t *progress = json_object_get(obj, "progress");
    if (out->jobs.total > 0) {
        long long ended = out->jobs.done + out->jobs.failed + out->jobs.cancelled;
        out->progress = (double)ended / (double)out->jobs.total;
    } else if (json_is_number(progress)) {
        out->progress = json_number_value(progress);
    }
    return 0;
}

bool cli_plan_finished(const char *status)
{
    return strcmp(status, "done") == 0 || strcmp(status, "failed") == 0 ||
           strcmp(status, "cancelled") == 0;
}

int cli_target_name(struct cli_ctx *ctx, const char *name, char *out, size_t len, long long *id)
{
    struct hv_http_response resp;
    memset(&resp, 0, sizeof resp);
    snprintf(out, len, "%s", name);
    if (id != NULL)
        *id = 0;
    int rc = cli_request(ctx, "GET", "/api/v1/targets", NULL, &resp);
    const json_t *items = rc == CLI_EXIT_OK ? json_object_get(resp.body, "items") : NULL;
    const json_t *exact = NULL, *t;
    json_t *guests = json_array();
    size_t i;
    json_array_foreach(items, i, t)
    {
        const char *n = json_string_value(json_object_get(t, "name"));
        const char *s = json_string_value(json_object_get(t, "short_name"));
        if (n != NULL && strcmp(n, name) == 0)
            exact = t;
        else if (s != NULL && strcmp(s, name) == 0 && json_is_string(json_object_get(t, "host")))
            json_array_append(guests, (json_t *)t);
    }
    const json_t *found = exact != NULL                  ? exact
                          : json_array_size(guests) == 1 ? json_array_get(guests, 0)
                                                         : NULL;
    if (found != NULL) {
        snprintf(out, len, "%s", json_string_value(json_object_get(found, "name")));
        if (id != NULL)
            *id = (long long)json_integer_value(json_object_get(found, "id"));
    } else if (json_array_size(guests) > 1) {
        char list[1024] = "";
        size_t used = 0;
        json_array_foreach(guests, i, t)
        {
            if (used < sizeof list)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                                         json_string_value(json_object_get(t, "name")));
        }
        cli_err("'%s' is a guest of %zu hosts: %s; give HOST/GUEST", name, json_array_size(guests),
                list);
        rc = CLI_EXIT_USAGE;
    }
    json_decref(guests);
    hv_http_response_clear(&resp);
    return rc;
}
