/* cmd_catalog.c — hvbench catalog: what plans may name, the tuning factors
 * and the engines with their parameters (GET /api/v1/catalog). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "cli/table.h"

static int cmd_catalog_exec(struct cli_ctx *ctx, int argc, char **argv);

const struct cli_command cli_cmd_catalog = {
    .name = "catalog",
    .usage = "[factors|engines]",
    .summary = "show the tuning factors and engines plans may name",
    .help = "factors: one row per tuning factor: its levels (the first level a plan\n"
            "lists is the plan's default) or its integer range and unit, how\n"
            "disruptive a change is (live, restart, host, reboot), where it is set\n"
            "(guest or host) and the stock system's setting.\n"
            "engines: one row per kind and engine with its parameters, each with its\n"
            "default (name=default); a '*' marks a parameter a plan may sweep (give\n"
            "as an array), a '!' one it must give.\n"
            "Without an argument both tables are printed. docs/catalog.md explains\n"
            "every entry.\n",
    .fn = cmd_catalog_exec,
};

/** Writes a scalar or an array of scalars as a plan would write it, without
 *  JSON quotes: "256k", "10", "false", "seq-write,rewrite". */
static void put_value(FILE *f, const json_t *v)
{
    if (json_is_string(v)) {
        fputs(json_string_value(v), f);
    } else if (json_is_integer(v)) {
        fprintf(f, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        fprintf(f, "%g", json_real_value(v));
    } else if (json_is_boolean(v)) {
        fputs(json_is_true(v) ? "true" : "false", f);
    } else if (json_is_array(v)) {
        size_t i;
        const json_t *e;
        json_array_foreach(v, i, e)
        {
            if (i > 0)
                fputc(',', f);
            put_value(f, e);
        }
    } else {
        fputs("null", f);
    }
}

/** The levels cell of a factor: "off, on" for an enumeration, "0..16
 *  threads" for an integer range. Returns a malloc'd string or NULL. */
static char *levels_text(const json_t *factor)
{
    char *out = NULL;
    size_t outlen = 0;
    FILE *f = open_memstream(&out, &outlen);
    if (f == NULL)
        return NULL;
    const json_t *levels = json_object_get(factor, "levels");
    if (json_is_array(levels)) {
        size_t i;
        const json_t *l;
        json_array_foreach(levels, i, l)
        {
            fputs(i > 0 ? ", " : "", f);
            put_value(f, l);
        }
    } else {
        const char *unit = json_string_value(json_object_get(factor, "unit"));
        put_value(f, json_object_get(factor, "min"));
        fputs("..", f);
        put_value(f, json_object_get(factor, "max"));
        if (unit != NULL)
            fprintf(f, " %s", unit);
    }
    if (fclose(f) != 0) {
        free(out);
        return NULL;
    }
    return out;
}

/** The params cell of an engine: "copies=1, seconds=10, streams*=1,
 *  peer!". Returns a malloc'd string or NULL. */
static char *params_text(const json_t *engine)
{
    char *out = NULL;
    size_t outlen = 0;
    FILE *f = open_memstream(&out, &outlen);
    if (f == NULL)
        return NULL;
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(engine, "params"), i, p)
    {
        const char *name = json_string_value(json_object_get(p, "name"));
        const json_t *def = json_object_get(p, "default");
        fprintf(f, "%s%s%s%s", i > 0 ? ", " : "", name != NULL ? name : "?",
                json_is_true(json_object_get(p, "sweepable")) ? "*" : "",
                json_is_true(json_object_get(p, "required")) ? "!" : "");
        if (def != NULL && !json_is_null(def)) {
            fputc('=', f);
            put_value(f, def);
        }
    }
    if (fclose(f) != 0) {
        free(out);
        return NULL;
    }
    return out;
}

/** Adds the row of one factor. */
static int add_factor(struct cli_table *t, const json_t *fa)
{
    char *levels = levels_text(fa);
    const char *cells[] = {
        json_string_value(json_object_get(fa, "name")),
        levels,
        json_string_value(json_object_get(fa, "disruption")),
        json_string_value(json_object_get(fa, "scope")),
        json_string_value(json_object_get(fa, "system_default")),
    };
    int added = levels != NULL ? cli_table_add(t, cells) : -1;
    free(levels);
    return added;
}

/** Adds the row of one engine. */
static int add_engine(struct cli_table *t, const json_t *e)
{
    char *params = params_text(e);
    const char *cells[] = {
        json_string_value(json_object_get(e, "kind")),
        json_string_value(json_object_get(e, "engine")),
        params,
    };
    int added = params != NULL ? cli_table_add(t, cells) : -1;
    free(params);
    return added;
}

/** Prints the factors table. Returns an exit code. */
static int print_factors(const json_t *factors)
{
    static const struct cli_column cols[] = {
        {"factor", CLI_LEFT}, {"levels", CLI_LEFT},         {"disruption", CLI_LEFT},
        {"scope", CLI_LEFT},  {"system default", CLI_LEFT},
    };
    return cli_print_rows(factors, cols, sizeof cols / sizeof cols[0], add_factor);
}

/** Prints the engines table. Returns an exit code. */
static int print_engines(const json_t *engines)
{
    static const struct cli_column cols[] = {
        {"kind", CLI_LEFT},
        {"engine", CLI_LEFT},
        {"params (* sweepable, ! required)", CLI_LEFT},
    };
    return cli_print_rows(engines, cols, sizeof cols / sizeof cols[0], add_engine);
}

/** hvbench catalog [factors|engines] */
static int cmd_catalog_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    if (argc > 2 ||
        (argc == 2 && strcmp(argv[1], "factors") != 0 && strcmp(argv[1], "engines") != 0))
        return cli_usage(&cli_cmd_catalog);
    bool factors = argc == 1 || strcmp(argv[1], "factors") == 0;
    bool engines = argc == 1 || strcmp(argv[1], "engines") == 0;

    struct hv_http_response resp;
    memset(&resp, 0, sizeof resp);
    int rc = cli_request(ctx, "GET", "/api/v1/catalog", NULL, &resp);
    if (rc != CLI_EXIT_OK) {
        hv_http_response_clear(&resp);
        return rc;
    }
    json_t *jf = json_object_get(resp.body, "factors");
    json_t *je = json_object_get(resp.body, "engines");
    if ((factors && !json_is_array(jf)) || (engines && !json_is_array(je))) {
        cli_err("the server's answer has no %s[]",
                factors && !json_is_array(jf) ? "factors" : "engines");
        rc = CLI_EXIT_FAIL;
    } else if (ctx->json) {
        /* Only the part asked for, in the answer's shape. */
        json_t *part =
            argc == 1 ? json_incref(resp.body) : json_pack("{s:O}", argv[1], factors ? jf : je);
        if (part == NULL || cli_print_json(part) != 0)
            rc = CLI_EXIT_FAIL;
        json_decref(part);
    } else {
        if (factors)
            rc = print_factors(jf);
        if (rc == CLI_EXIT_OK && factors && engines)
            putchar('\n');
        if (rc == CLI_EXIT_OK && engines)
            rc = print_engines(je);
    }
    hv_http_response_clear(&resp);
    return rc;
}
