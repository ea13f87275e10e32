/* cmd_webhooks.c — hvbench webhooks: subscriptions to events (admin token):
 * list, add, delete, ping, and a subscription's delivery log. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "cli/table.h"

static int cmd_webhooks_exec(struct cli_ctx *ctx, int argc, char **argv);

const struct cli_command cli_cmd_webhooks = {
    .name = "webhooks",
    .usage = "[list] | add URL EVENT... [--description TEXT] [--allow-private] | delete ID |\n"
             "       ping ID | deliveries ID [--limit N]",
    .summary = "manage webhook subscriptions (admin token)",
    .help = "list: every subscription. add: subscribe URL to the events named\n"
            "(plan.started, plan.finished, plan.failed, plan.cancelled, changepoint.new,\n"
            "worker.lost, recommendation.verdict, ping) and print its secret, shown this\n"
            "once: receivers check each delivery's Hvbench-Signature with it\n"
            "(docs/integration.md).\n"
            "--allow-private lets it reach loopback, link-local and private addresses.\n"
            "delete: no more deliveries. ping: queue a ping. deliveries: the log of a\n"
            "subscription, newest first (status, attempts, the receiver's last answer).\n",
    .fn = cmd_webhooks_exec,
};

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s != NULL ? s : "-";
}

/* The events of a subscription as "a,b". */
static void events_text(const json_t *events, char *buf, size_t len)
{
    size_t i, pos = 0;
    json_t *e;
    buf[0] = '\0';
    json_array_foreach(events, i, e)
    {
        int n = snprintf(buf + pos, len - pos, "%s%s", i ? "," : "", json_string_value(e));
        if (n < 0 || (size_t)n >= len - pos)
            break;
        pos += (size_t)n;
    }
}

static int list_row(struct cli_table *t, const json_t *w)
{
    char id[24], events[512];
    snprintf(id, sizeof id, "%lld", (long long)json_integer_value(json_object_get(w, "id")));
    events_text(json_object_get(w, "events"), events, sizeof events);
    const char *cells[] = {id, str(w, "url"), events,
                           json_is_true(json_object_get(w, "allow_private")) ? "yes" : "no",
                           str(w, "created_at")};
    return cli_table_add(t, cells);
}

static const struct cli_column list_cols[] = {{"ID", CLI_RIGHT},
                                              {"URL", CLI_LEFT},
                                              {"EVENTS", CLI_LEFT},
                                              {"PRIVATE", CLI_LEFT},
                                              {"CREATED", CLI_LEFT}};

static int delivery_row(struct cli_table *t, const json_t *d)
{
    char id[24], attempts[16], http[16] = "-";
    snprintf(id, sizeof id, "%lld", (long long)json_integer_value(json_object_get(d, "id")));
    snprintf(attempts, sizeof attempts, "%lld",
             (long long)json_integer_value(json_object_get(d, "attempts")));
    if (json_is_integer(json_object_get(d, "last_status")))
        snprintf(http, sizeof http, "%lld",
                 (long long)json_integer_value(json_object_get(d, "last_status")));
    const char *cells[] = {id,   str(d, "event"),      str(d, "status"),    attempts,
                           http, str(d, "created_at"), str(d, "last_error")};
    return cli_table_add(t, cells);
}

static const struct cli_column delivery_cols[] = {
    {"ID", CLI_RIGHT},   {"EVENT", CLI_LEFT},   {"STATUS", CLI_LEFT},    {"ATTEMPTS", CLI_RIGHT},
    {"HTTP", CLI_RIGHT}, {"CREATED", CLI_LEFT}, {"LAST ERROR", CLI_LEFT}};

static int shown_added(const json_t *a)
{
    cli_out("webhook %lld: %s", (long long)json_integer_value(json_object_get(a, "id")),
            str(a, "url"));
    cli_out("secret: %s", str(a, "secret"));
    cli_note("the secret is shown this once: keep it where the receiver checks signatures");
    return CLI_EXIT_OK;
}

static int shown_deleted(const json_t *a)
{
    cli_out("webhook %lld deleted", (long long)json_integer_value(json_object_get(a, "id")));
    return CLI_EXIT_OK;
}

static int shown_pinged(const json_t *a)
{
    cli_out("ping queued: delivery %lld (hvbench webhooks deliveries shows its outcome)",
            (long long)json_integer_value(json_object_get(a, "delivery_id")));
    return CLI_EXIT_OK;
}

static int add(struct cli_ctx *ctx, int argc, char **argv)
{
    enum { O_DESC = 256, O_PRIVATE };
    static const struct option options[] = {
        {"description", required_argument, NULL, O_DESC},
        {"allow-private", no_argument, NULL, O_PRIVATE},
        {NULL, 0, NULL, 0},
    };
    json_t *body = json_object();
    int opt;
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        if (opt == O_DESC) {
            json_object_set_new(body, "description", json_string(optarg));
        } else if (opt == O_PRIVATE) {
            json_object_set_new(body, "allow_private", json_true());
        } else {
            json_decref(body);
            return cli_usage(&cli_cmd_webhooks);
        }
    }
    if (argc - optind < 2) {
        json_decref(body);
        return cli_usage(&cli_cmd_webhooks);
    }
    json_object_set_new(body, "url", json_string(argv[optind]));
    json_t *events = json_array();
    for (int i = optind + 1; i < argc; i++)
        json_array_append_new(events, json_string(argv[i]));
    json_object_set_new(body, "events", events);
    int rc = cli_call(ctx, "POST", "/api/v1/webhooks", body, shown_added);
    json_decref(body);
    return rc;
}

static int with_id(struct cli_ctx *ctx, const char *sub, int argc, char **argv)
{
    long long id;
    long limit = 50;
    if (strcmp(sub, "deliveries") == 0 && argc == 4 && strcmp(argv[2], "--limit") == 0) {
        char *end;
        limit = strtol(argv[3], &end, 10);
        if (*end != '\0' || limit < 1 || limit > 1000) {
            cli_err("--limit must be an integer from 1 to 1000");
            return CLI_EXIT_USAGE;
        }
        argc -= 2;
    }
    if (argc != 2 || cli_parse_id(argv[1], &id) != 0)
        return cli_usage(&cli_cmd_webhooks);
    char path[96];
    if (strcmp(sub, "delete") == 0) {
        snprintf(path, sizeof path, "/api/v1/webhooks/%lld", id);
        return cli_call(ctx, "DELETE", path, NULL, shown_deleted);
    }
    if (strcmp(sub, "ping") == 0) {
        snprintf(path, sizeof path, "/api/v1/webhooks/%lld/ping", id);
        return cli_call(ctx, "POST", path, NULL, shown_pinged);
    }
    snprintf(path, sizeof path, "/api/v1/webhooks/%lld/deliveries?limit=%ld", id, limit);
    return cli_list_table(ctx, path, delivery_cols, sizeof delivery_cols / sizeof delivery_cols[0],
                          delivery_row, "deliveries");
}

static int cmd_webhooks_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "list";
    if (strcmp(sub, "list") == 0 && argc <= 2)
        return cli_list_table(ctx, "/api/v1/webhooks", list_cols,
                              sizeof list_cols / sizeof list_cols[0], list_row, "webhooks");
    if (strcmp(sub, "add") == 0)
        return add(ctx, argc - 1, argv + 1);
    if (strcmp(sub, "delete") == 0 || strcmp(sub, "ping") == 0 || strcmp(sub, "deliveries") == 0)
        return with_id(ctx, sub, argc - 1, argv + 1);
    return cli_usage(&cli_cmd_webhooks);
}
