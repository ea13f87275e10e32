/* cmd_recommendations.c — hvbench recommendations: the recommendations kept
 * when plans ended done, their adoption on hosts and whether it delivered
 * (GET /api/v1/recommendations, .../{id}, POST .../{id}/adopt). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice_format.h"
#include "cli/cli.h"
#include "cli/common.h"
#include "cli/table.h"
#include "selector.h"

static int cmd_recommendations_exec(struct cli_ctx *ctx, int argc, char **argv);

const struct cli_command cli_cmd_recommendations = {
    .name = "recommendations",
    .usage = "[list] [--state STATE] [--limit N] | show ID [--rollback FORMAT] |\n"
             "       adopt ID (--selector KEY=VALUE[,KEY=VALUE...] | TARGET...)",
    .summary = "list recommendations, their adoption and verdicts; declare one adopted",
    .help = "list: the recommendations kept when plans ended done, newest first, with\n"
            "the predicted gain, the state (proposed, adopted, or the verdict: delivered,\n"
            "partial, none, regressed) and the observed gain once judged; --state keeps\n"
            "one state. show: one recommendation, its verdict (observed gain against the\n"
            "predicted one, hosts against controls, or what is missing) and every\n"
            "adoption; --rollback FORMAT (tuned, ansible, puppet, shell) prints the\n"
            "rollback of a regressed one in that form. adopt (submit token): declare it\n"
            "adopted since now on the hosts whose labels match --selector, or on the\n"
            "TARGETs named (docs/integration.md, \"Adoption\").\n",
    .fn = cmd_recommendations_exec,
};

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s != NULL ? s : "-";
}

/* "+9.9 % [+9.4, +10.4]" of o's pct and its interval members. */
static void gain_text(char *buf, size_t len, double pct, double lo, double hi)
{
    if (!isfinite(pct))
        snprintf(buf, len, "-");
    else if (isfinite(lo) && isfinite(hi))
        snprintf(buf, len, "%+.1f %% [%+.1f, %+.1f]", pct, lo, hi);
    else
        snprintf(buf, len, "%+.1f %%", pct);
}

/* The state as the list says it: "adopted (3)" with its hosts. */
static void state_text(char *buf, size_t len, const json_t *r)
{
    const char *state = str(r, "state");
    json_int_t hosts = json_integer_value(json_object_get(json_object_get(r, "adopted"), "hosts"));
    if (strcmp(state, "adopted") == 0)
        snprintf(buf, len, "adopted on %lld", (long long)hosts);
    else
        snprintf(buf, len, "%s", state);
}

static int list_row(struct cli_table *t, const json_t *r)
{
    char id[24], change[200], plan[24], predicted[64], observed[64], state[48];
    const json_t *gi = json_object_get(r, "gain_interval");
    const json_t *v = json_object_get(r, "verdict");
    snprintf(id, sizeof id, "%lld", (long long)json_integer_value(json_object_get(r, "id")));
    snprintf(change, sizeof change, "%s=%s", str(r, "factor"), str(r, "level"));
    snprintf(plan, sizeof plan, "%lld",
             (long long)json_integer_value(json_object_get(r, "plan_id")));
    gain_text(predicted, sizeof predicted, cli_num(r, "gain_pct"), cli_num(gi, "lo_pct"),
              cli_num(gi, "hi_pct"));
    gain_text(observed, sizeof observed, cli_num(v, "gain_pct"), cli_num(v, "lo_pct"),
              cli_num(v, "hi_pct"));
    state_text(state, sizeof state, r);
    const char *cells[] = {id, change, plan, str(r, "metric"), predicted, state, observed};
    return cli_table_add(t, cells);
}

static const struct cli_column list_cols[] = {
    {"ID", CLI_RIGHT},       {"CHANGE", CLI_LEFT}, {"PLAN", CLI_RIGHT},   {"METRIC", CLI_LEFT},
    {"PREDICTED", CLI_LEFT}, {"STATE", CLI_LEFT},  {"OBSERVED", CLI_LEFT}};

/* Prints the rollback of regressed recommendation r in form; exit 1 for
 * any other state. */
static int print_rollback(const json_t *r, const char *form)
{
    const json_t *v = json_object_get(r, "verdict");
    const char *text = json_string_value(json_object_get(json_object_get(v, "rollback"), form));
    if (text == NULL) {
        cli_err("recommendation %lld has no rollback: only a regressed verdict carries one "
                "(its state: %s)",
                (long long)json_integer_value(json_object_get(r, "id")), str(r, "state"));
        return CLI_EXIT_FAIL;
    }
    fputs(text, stdout);
    return CLI_EXIT_OK;
}

static int show_one(const json_t *r)
{
    const json_t *v = json_object_get(r, "verdict");
    char buf[96], state[48];
    const json_t *gi = json_object_get(r, "gain_interval");
    state_text(state, sizeof state, r);
    cli_out("recommendation %lld: %s=%s (default %s), plan %lld %s",
            (long long)json_integer_value(json_object_get(r, "id")), str(r, "factor"),
            str(r, "level"), str(r, "default"),
            (long long)json_integer_value(json_object_get(r, "plan_id")), str(r, "plan"));
    gain_text(buf, sizeof buf, cli_num(r, "gain_pct"), cli_num(gi, "lo_pct"),
              cli_num(gi, "hi_pct"));
    cli_out("predicted: %s on %s (workload %s)", buf, str(r, "metric"), str(r, "workload"));
    cli_out("state: %s", state);
    if (json_is_object(v)) {
        gain_text(buf, sizeof buf, cli_num(v, "gain_pct"), cli_num(v, "lo_pct"),
                  cli_num(v, "hi_pct"));
        cli_out("verdict: %s: observed %s, %lld adopted hosts against %lld controls%s",
                str(v, "state"), buf, (long long)json_integer_value(json_object_get(v, "hosts")),
                (long long)json_integer_value(json_object_get(v, "controls")),
                json_is_true(json_object_get(v, "controlled")) ? "" : " (before/after only)");
        if (json_is_string(json_object_get(v, "why")))
            cli_out("  %s", str(v, "why"));
        if (json_is_object(json_object_get(v, "rollback")))
            cli_out("  rollback: hvbench recommendations show %lld --rollback "
                    "tuned|ansible|puppet|shell",
                    (long long)json_integer_value(json_object_get(r, "id")));
    }
    size_t i;
    const json_t *a;
    json_array_foreach(json_object_get(r, "adoptions"), i, a)
    {
        char since[64], until[64];
        cli_fmt_time(since, sizeof since, str(a, "since"));
        if (json_is_string(json_object_get(a, "until")))
            cli_fmt_time(until, sizeof until, str(a, "until"));
        else
            snprintf(until, sizeof until, "now");
        cli_out("adoption: %s %s, %s .. %s%s%s", str(a, "target"), str(a, "source"), since, until,
                json_is_string(json_object_get(a, "created_by")) ? ", by " : "",
                json_is_string(json_object_get(a, "created_by")) ? str(a, "created_by") : "");
    }
    return CLI_EXIT_OK;
}

static int list(struct cli_ctx *ctx, int argc, char **argv)
{
    enum { O_STATE = 256, O_LIMIT };
    static const struct option options[] = {
        {"state", required_argument, NULL, O_STATE},
        {"limit", required_argument, NULL, O_LIMIT},
        {NULL, 0, NULL, 0},
    };
    char path[256] = "/api/v1/recommendations";
    int opt;
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        if (opt == O_STATE)
            cli_add_query(path, sizeof path, "state", optarg);
        else if (opt == O_LIMIT)
            cli_add_query(path, sizeof path, "limit", optarg);
        else
            return cli_usage(&cli_cmd_recommendations);
    }
    if (optind != argc)
        return cli_usage(&cli_cmd_recommendations);
    return cli_list_table(ctx, path, list_cols, sizeof list_cols / sizeof list_cols[0], list_row,
                          "recommendations");
}

static int show(struct cli_ctx *ctx, int argc, char **argv)
{
    long long id;
    const char *form = NULL;
    if (argc == 4 && strcmp(argv[2], "--rollback") == 0) {
        form = argv[3];
        if (hv_advice_media_type(form) == NULL) {
            cli_err("--rollback takes tuned, ansible, puppet or shell, not \"%s\"", form);
            return CLI_EXIT_USAGE;
        }
        argc -= 2;
    }
    if (argc != 2 || cli_parse_id(argv[1], &id) != 0)
        return cli_usage(&cli_cmd_recommendations);
    char path[96];
    snprintf(path, sizeof path, "/api/v1/recommendations/%lld", id);
    if (form == NULL)
        return cli_call(ctx, "GET", path, NULL, show_one);
    struct hv_http_response resp;
    int rc = cli_request(ctx, "GET", path, NULL, &resp);
    if (rc == CLI_EXIT_OK)
        rc = print_rollback(resp.body, form);
    hv_http_response_clear(&resp);
    return rc;
}

static int adopt(struct cli_ctx *ctx, int argc, char **argv)
{
    long long id;
    if (argc < 3 || cli_parse_id(argv[1], &id) != 0)
        return cli_usage(&cli_cmd_recommendations);
    json_t *body = NULL;
    if (strcmp(argv[2], "--selector") == 0 || strncmp(argv[2], "--selector=", 11) == 0) {
        const char *text = argv[2][10] == '=' ? argv[2] + 11 : (argc == 4 ? argv[3] : NULL);
        if (text == NULL || (argv[2][10] == '=' && argc != 3))
            return cli_usage(&cli_cmd_recommendations);
        char err[256];
        json_t *sel = hv_selector_parse(text, err, sizeof err);
        if (sel == NULL) {
            cli_err("--selector %s: %s", text, err);
            return CLI_EXIT_USAGE;
        }
        body = json_pack("{s:o}", "selector", sel);
    } else {
        json_t *targets = json_array();
        for (int i = 2; i < argc; i++)
            json_array_append_new(targets, json_string(argv[i]));
        body = json_pack("{s:o}", "targets", targets);
    }
    char path[96];
    snprintf(path, sizeof path, "/api/v1/recommendations/%lld/adopt", id);
    int rc = cli_call(ctx, "POST", path, body, show_one);
    json_decref(body);
    return rc;
}

static int cmd_recommendations_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "list";
    if (strcmp(sub, "list") == 0)
        return list(ctx, argc - 1, argv + 1);
    if (sub[0] == '-')
        return list(ctx, argc, argv);
    if (strcmp(sub, "show") == 0)
        return show(ctx, argc - 1, argv + 1);
    if (strcmp(sub, "adopt") == 0)
        return adopt(ctx, argc - 1, argv + 1);
    return cli_usage(&cli_cmd_recommendations);
}
