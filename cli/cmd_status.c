/* cmd_status.c — hvbench status: one look at a plan (GET /api/v1/plans/{id}). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "cli/table.h"

static int cmd_status_exec(struct cli_ctx *ctx, int argc, char **argv);

const struct cli_command cli_cmd_status = {
    .name = "status",
    .usage = "ID",
    .summary = "show a plan's status, owner, job counts and progress",
    .help = NULL,
    .fn = cmd_status_exec,
};

/** The string member key of obj, or NULL. */
static const char *str_of(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

/** Prints "label  time" when the summary has that time. */
static void print_time(const json_t *body, const char *label, const char *key)
{
    const char *iso = str_of(body, key);
    char buf[64];
    if (iso != NULL)
        cli_out("%-9s %s", label, cli_fmt_time(buf, sizeof buf, iso));
}

/** Prints one line per drain hook: "hook      before_host on hv01: done
 *  (HTTP 204, 2 attempts)", with its error when it failed. */
static void print_hooks(const json_t *hooks)
{
    size_t i;
    const json_t *h;
    json_array_foreach(hooks, i, h)
    {
        const json_t *a = json_object_get(h, "answer");
        char answer[64] = "";
        if (json_is_integer(json_object_get(a, "http_status")))
            snprintf(answer, sizeof answer, "HTTP %lld, ",
                     (long long)json_integer_value(json_object_get(a, "http_status")));
        else if (json_is_integer(json_object_get(a, "exit_status")))
            snprintf(answer, sizeof answer, "exit status %lld, ",
                     (long long)json_integer_value(json_object_get(a, "exit_status")));
        long long n = json_integer_value(json_object_get(h, "attempts"));
        const char *error = str_of(h, "error");
        cli_out("hook      %s on %s: %s (%s%lld attempt%s)%s%s", str_of(h, "kind"),
                str_of(h, "target"), str_of(h, "status"), answer, n, n == 1 ? "" : "s",
                error != NULL ? ": " : "", error != NULL ? error : "");
    }
}

/** Prints the summary as "key  value" lines; body is the summary itself,
 *  for the members struct cli_plan does not carry. */
static void print_status(const struct cli_plan *p, const json_t *body)
{
    char created[64], bar[16], since[64];
    cli_out("plan %lld: %s", p->id, p->name);
    /* What the plan waits for goes next to its status: "queued" alone
     * would hide that nothing will ever run it. */
    const json_t *waiting = json_object_get(body, "waiting");
    const char *why =
        str_of(waiting, "detail") ? str_of(waiting, "detail") : str_of(waiting, "reason");
    if (why != NULL && str_of(waiting, "since") != NULL)
        cli_out("status    %s: %s since %s", p->status, why,
                cli_fmt_time(since, sizeof since, str_of(waiting, "since")));
    else if (why != NULL)
        cli_out("status    %s: %s", p->status, why);
    else
        cli_out("status    %s", p->status);
    /* Who may cancel or retry it besides an admin; a server from before
     * owners sends no member, and no line is printed. */
    const json_t *owner = json_object_get(body, "owner");
    if (json_is_string(owner))
        cli_out("owner     %s", json_string_value(owner));
    else if (json_is_null(owner))
        cli_out("owner     none (no submitter: an admin's)");
    cli_out("created   %s", cli_fmt_time(created, sizeof created, p->created_at));
    print_time(body, "started", "started_at");
    print_time(body, "updated", "updated_at");
    print_time(body, "finished", "finished_at");
    cli_out("jobs      %lld: %lld done, %lld running, %lld queued, %lld failed, %lld cancelled",
            p->jobs.total, p->jobs.done, p->jobs.running, p->jobs.queued, p->jobs.failed,
            p->jobs.cancelled);
    cli_out("progress  %d%%  %s", cli_percent(p->progress),
            cli_fmt_bar(bar, sizeof bar, p->progress, 10));
    print_hooks(json_object_get(body, "hooks"));
}

/** hvbench status ID */
static int cmd_status_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    long long id;
    if (argc != 2 || argv[1][0] == '-')
        return cli_usage(&cli_cmd_status);
    if (cli_parse_id(argv[1], &id) != 0)
        return CLI_EXIT_USAGE;
    char path[64];
    snprintf(path, sizeof path, "/api/v1/plans/%lld", id);
    struct hv_http_response resp;
    memset(&resp, 0, sizeof resp);
    int rc = cli_request(ctx, "GET", path, NULL, &resp);
    if (rc == CLI_EXIT_OK) {
        struct cli_plan p;
        if (ctx->json) {
            cli_print_json(resp.body);
        } else if (cli_plan_parse(resp.body, &p) == 0) {
            print_status(&p, resp.body);
        } else {
            cli_err("the server's answer is not a plan summary");
            rc = CLI_EXIT_FAIL;
        }
    }
    hv_http_response_clear(&resp);
    return rc;
}
