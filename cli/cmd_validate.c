/* cmd_validate.c — hvbench validate: check a plan and show what it expands
 * into, locally with the server's own rules (lib/plan.c) or, with
 * --remote, by the server (POST /api/v1/plans?dry_run=1), which also knows
 * the registered targets. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "errors.h"
#include "plan.h"
#include "plan_fleet.h"

/* Names a list line shows before it says "and N more". */
#define LIST_SHOWN 10

static int cmd_validate_exec(struct cli_ctx *ctx, int argc, char **argv);

const struct cli_command cli_cmd_validate = {
    .name = "validate",
    .usage = "[--remote] PLAN.json",
    .summary = "check a plan and show what it expands into, without submitting it",
    .help = "  -r, --remote  let the server check it (POST /api/v1/plans?dry_run=1,\n"
            "                needs a submit token): it also resolves guests chosen by\n"
            "                label against the registered targets\n"
            "\n"
            "Without --remote the plan is checked here, with the rules the server\n"
            "uses, and nothing is sent. Guests chosen by label are then not known and\n"
            "not counted (a note says so). Errors are listed with the JSON path of\n"
            "each bad field (exit 1); a valid plan prints its configurations, workload\n"
            "variants, targets, and its jobs and groups per repetition round and at\n"
            "the minimum and maximum repetitions.\n",
    .fn = cmd_validate_exec,
};

/** Builds, for a locally parsed plan, the members of the server's dry-run
 *  answer the summary needs (the same shape, without the run order).
 *  Returns a new reference, or NULL when memory runs out. */
static json_t *local_expansion(const struct hv_plan *plan, const struct hv_expansion *x)
{
    json_t *configs = json_array(), *workloads = json_array(), *targets = json_array();
    for (size_t i = 0; i < plan->n_configs; i++)
        json_array_append_new(configs, json_pack("{s:s,s:O}", "name", plan->configs[i].name,
                                                 "levels", plan->configs[i].levels));
    for (size_t i = 0; i < plan->n_workloads; i++)
        json_array_append_new(workloads, json_string(plan->workloads[i].id));
    json_array_append_new(targets, json_string(plan->host));
    for (size_t i = 0; i < plan->n_guests; i++)
        json_array_append_new(targets, json_string(plan->guests[i]));
    size_t per_round = hv_plan_jobs_per_round(plan);
    return json_pack("{s:b,s:O,s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I},s:o,s:o,s:o}", "dry_run", 1, "plan",
                     plan->doc, "counts", "configurations", (json_int_t)plan->n_configs,
                     "workloads", (json_int_t)plan->n_workloads, "targets",
                     (json_int_t)(1 + plan->n_guests), "repetitions", (json_int_t)plan->rep_min,
                     "jobs", (json_int_t)x->n_jobs, "groups", (json_int_t)x->n_groups,
                     "jobs_at_max_repetitions", (json_int_t)(per_round * (size_t)plan->rep_max),
                     "configurations", configs, "workloads", workloads, "targets", targets);
}

/** Returns the integer member key of obj, or 0. */
static long long int_of(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_integer(v) ? (long long)json_integer_value(v) : 0;
}

/** Prints "LABEL  N: a, b, c, ... and K more" for an array of names (or of
 *  objects with a "name"), joined by sep; the first is followed by
 *  first_suffix. */
static void print_list(const char *label, long long count, const json_t *names, const char *sep,
                       const char *first_suffix)
{
    char *out = NULL;
    size_t outlen = 0;
    FILE *f = open_memstream(&out, &outlen);
    if (f == NULL)
        return;
    size_t i;
    const json_t *v;
    json_array_foreach(names, i, v)
    {
        if (i == LIST_SHOWN) {
            fprintf(f, "%s... and %zu more", sep, json_array_size(names) - LIST_SHOWN);
            break;
        }
        const char *name = json_is_object(v) ? json_string_value(json_object_get(v, "name"))
                                             : json_string_value(v);
        fprintf(f, "%s%s%s", i > 0 ? sep : "", name != NULL ? name : "?",
                i == 0 ? first_suffix : "");
    }
    if (fclose(f) == 0)
        cli_out("%-15s %lld: %s", label, count, out);
    free(out);
}

/** "33 per round; 99 at 3 repetitions, 330 at 10" or, when min is max,
 *  "1 per round; 3 at 3 repetitions". */
static void print_counts(const char *label, long long at_min, long long reps_min,
                         long long reps_max, long long at_max)
{
    long long per_round = reps_min > 0 ? at_min / reps_min : 0;
    if (reps_max > reps_min)
        cli_out("%-15s %lld per round; %lld at %lld repetition%s, %lld at %lld", label, per_round,
                at_min, reps_min, reps_min == 1 ? "" : "s", at_max, reps_max);
    else
        cli_out("%-15s %lld per round; %lld at %lld repetition%s", label, per_round, at_min,
                reps_min, reps_min == 1 ? "" : "s");
}

/** Prints the summary of an expansion (the server's dry-run answer or
 *  local_expansion()'s). Returns an exit code. */
static int print_summary(const json_t *x, bool remote)
{
    const json_t *counts = json_object_get(x, "counts");
    const json_t *plan = json_object_get(x, "plan");
    if (!json_is_object(counts)) {
        cli_err("the server's answer has no counts");
        return CLI_EXIT_FAIL;
    }
    const char *name = json_string_value(json_object_get(plan, "name"));
    long long reps = int_of(counts, "repetitions");
    long long reps_max = int_of(json_object_get(plan, "repetitions"), "max");
    if (reps_max < reps)
        reps_max = reps;
    long long groups = int_of(counts, "groups");
    long long groups_max = reps > 0 ? groups / reps * reps_max : groups;

    cli_out("plan %s: valid (checked %s)", name != NULL ? name : "?",
            remote ? "by the server" : "locally");
    print_list("configurations", int_of(counts, "configurations"),
               json_object_get(x, "configurations"), "; ", "");
    print_list("workloads", int_of(counts, "workloads"), json_object_get(x, "workloads"), ", ", "");
    print_list("targets", int_of(counts, "targets"), json_object_get(x, "targets"), ", ",
               " (host)");
    if (reps_max > reps)
        cli_out("%-15s %lld to %lld", "repetitions", reps, reps_max);
    else
        cli_out("%-15s %lld", "repetitions", reps);
    print_counts("jobs", int_of(counts, "jobs"), reps, reps_max,
                 int_of(counts, "jobs_at_max_repetitions"));
    if (groups > 0)
        print_counts("groups", groups, reps, reps_max, groups_max);
    else
        cli_out("%-15s none: every job runs alone", "groups");
    return CLI_EXIT_OK;
}

static int validate_one(const struct cli_ctx *ctx, const json_t *doc);

/** Validates doc here; a fleet plan (lib/plan_fleet.h) as the plan of one
 *  of its hosts. Returns an exit code. */
static int validate_locally(const struct cli_ctx *ctx, const json_t *doc)
{
    json_t *errors = json_array();
    const char *fleet = NULL;
    int f = hv_plan_fleet_label(doc, &fleet, errors);
    if (f < 0) {
        json_t *problem = hv_problem_new(HV_E_INVALID_PLAN, "errors in the plan", errors);
        cli_print_problem(ctx, problem, 0);
        json_decref(problem);
        return CLI_EXIT_FAIL;
    }
    json_decref(errors);
    if (f == 0)
        return validate_one(ctx, doc);
    json_t *child = hv_plan_fleet_child(doc, "fleet-host", 0);
    int rc = child != NULL ? validate_one(ctx, child) : CLI_EXIT_FAIL;
    json_decref(child);
    cli_note("note: a fleet plan, checked as the plan of one of its hosts; the hosts of label "
             "%s are resolved by the server ('hvbench validate --remote')",
             fleet);
    return rc;
}

/** Validates one host's plan here. Returns an exit code. */
static int validate_one(const struct cli_ctx *ctx, const json_t *doc)
{
    json_t *errors = json_array();
    struct hv_plan plan;
    /* The seed only shuffles the run order, which the summary leaves out. */
    enum hv_plan_verdict v = hv_plan_parse(doc, 0, NULL, &plan, errors);
    const char *label = json_string_value(
        json_object_get(json_object_get(json_object_get(doc, "targets"), "guests"), "label"));
    if (v == HV_PLAN_NO_MEMORY) {
        json_decref(errors);
        cli_err("out of memory checking the plan");
        return CLI_EXIT_FAIL;
    }
    if (v != HV_PLAN_VALID) {
        char detail[64];
        size_t n = json_array_size(errors);
        snprintf(detail, sizeof detail, "%zu error%s in the plan", n, n == 1 ? "" : "s");
        /* The server's problem document for the same plan, so the output
         * matches what submit would print (less the HTTP status). */
        json_t *problem = hv_problem_new(
            v == HV_PLAN_INVALID ? HV_E_INVALID_PLAN : HV_E_IMPOSSIBLE_PLAN, detail, errors);
        cli_print_problem(ctx, problem, 0);
        json_decref(problem);
        if (label != NULL)
            cli_note("note: the guests of label %s are not resolved locally; "
                     "'hvbench validate --remote' asks the server",
                     label);
        return CLI_EXIT_FAIL;
    }
    json_decref(errors);
    struct hv_expansion x;
    if (hv_plan_expand(&plan, &x) != 0) {
        hv_plan_free(&plan);
        cli_err("out of memory expanding the plan");
        return CLI_EXIT_FAIL;
    }
    json_t *summary = local_expansion(&plan, &x);
    hv_expansion_free(&x);
    hv_plan_free(&plan);
    int rc = CLI_EXIT_FAIL;
    if (summary == NULL)
        cli_err("out of memory");
    else if (ctx->json)
        rc = cli_print_json(summary) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    else
        rc = print_summary(summary, false);
    json_decref(summary);
    if (label != NULL)
        cli_note("note: the guests of label %s are not resolved locally and not counted; "
                 "'hvbench validate --remote' asks the server",
                 label);
    return rc;
}

/** hvbench validate [--remote] PLAN.json */
static int cmd_validate_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    static const struct option options[] = {
        {"remote", no_argument, NULL, 'r'},
        {NULL, 0, NULL, 0},
    };
    bool remote = false;
    int opt;
    while ((opt = getopt_long(argc, argv, "r", options, NULL)) != -1) {
        if (opt != 'r')
            return cli_usage(&cli_cmd_validate);
        remote = true;
    }
    if (argc - optind != 1)
        return cli_usage(&cli_cmd_validate);

    int rc = CLI_EXIT_OK;
    json_t *doc = cli_load_plan(argv[optind], &rc);
    if (doc == NULL)
        return rc;
    if (!remote) {
        rc = validate_locally(ctx, doc);
        json_decref(doc);
        return rc;
    }
    struct hv_http_response resp;
    memset(&resp, 0, sizeof resp);
    rc = cli_request(ctx, "POST", "/api/v1/plans?dry_run=1", doc, &resp);
    json_decref(doc);
    if (rc == CLI_EXIT_OK && resp.status == 201) {
        /* A server without dry-run support stored it: say so, as submit
         * --dry-run does. */
        struct cli_plan p;
        if (cli_plan_parse(resp.body, &p) == 0)
            cli_err("warning: the server does not support dry runs; plan %lld was created", p.id);
        rc = CLI_EXIT_FAIL;
    } else if (rc == CLI_EXIT_OK) {
        rc = ctx->json ? (cli_print_json(resp.body) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL)
                       : print_summary(resp.body, true);
    }
    hv_http_response_clear(&resp);
    return rc;
}
