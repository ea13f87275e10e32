/* cmd_targets.c — hvbench targets: the machines workers registered
 * (GET /api/v1/targets). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "cli/table.h"

static int cmd_targets_exec(struct cli_ctx *ctx, int argc, char **argv);
static int cmd_label_exec(struct cli_ctx *ctx, int argc, char **argv);

const struct cli_command cli_cmd_label = {
    .name = "label",
    .usage = "TARGET_ID KEY=VALUE|KEY- ... | TARGET_ID --clear",
    .summary = "set or remove a target's labels (admin token)",
    .help = "KEY=VALUE sets a label, KEY- removes one; --clear removes every label\n"
            "an administrator set. These labels are kept apart from the ones the\n"
            "target's worker registers with (--label), so a new registration\n"
            "never erases them, and they win on a key both set. Plans select\n"
            "targets by them (\"guests\": {\"label\": \"pool=batch,cpu=epyc\"}), as\n"
            "does hvbench targets --label. Prints the target's labels after.\n",
    .fn = cmd_label_exec,
};

const struct cli_command cli_cmd_targets = {
    .name = "targets",
    .usage = "[--kind host|guest] [--label KEY=VALUE[,KEY=VALUE...]] [--host NAME]",
    .summary = "list the registered targets (hosts and guests)",
    .help = "  -k, --kind K            only hosts or only guests\n"
            "  -L, --label SELECTOR    only targets carrying every label of SELECTOR\n"
            "                          (KEY=VALUE[,KEY=VALUE...])\n"
            "  -H, --host NAME         only the guests of host NAME\n"
            "\n"
            "A target is what a worker registered as (its --name); a guest whose\n"
            "host is known is HOST/GUEST, as guest names repeat across hosts.\n"
            "Plans name targets; a plan's guests may be chosen by label. \"site benchmarks\"\n"
            "are those the worker's configuration declares (a plan may name them\n"
            "with engine \"custom\"). \"last seen\" is the worker's latest request,\n"
            "in local time.\n",
    .fn = cmd_targets_exec,
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/** Formats a labels object as "k=v,k2=v2" sorted by key (the server may
 *  keep them in any order). Returns a malloc'd string, or NULL when memory
 *  runs out. */
static char *labels_text(const json_t *labels)
{
    size_t n = json_object_size(labels), i = 0;
    const char **keys = calloc(n ? n : 1, sizeof *keys);
    char *out = NULL;
    size_t outlen = 0;
    FILE *f = open_memstream(&out, &outlen);
    if (keys == NULL || f == NULL) {
        free(keys);
        if (f != NULL)
            fclose(f);
        free(out);
        return NULL;
    }
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)labels, key, v)
    {
        keys[i++] = key;
    }
    qsort(keys, n, sizeof *keys, cmp_str);
    for (i = 0; i < n; i++) {
        v = json_object_get(labels, keys[i]);
        fprintf(f, "%s%s=", i ? "," : "", keys[i]);
        if (json_is_string(v)) {
            fputs(json_string_value(v), f);
        } else {
            char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
            fputs(text != NULL ? text : "?", f);
            free(text);
        }
    }
    free(keys);
    if (fclose(f) != 0) {
        free(out);
        return NULL;
    }
    return out;
}

/** The names of a target's site benchmarks as "a,b" (its top-level
 *  "benchmarks": [{"name", ...}]), "-" when it has none. Writes into buf. */
static const char *benchmarks_text(char *buf, size_t len, const json_t *benchmarks)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < json_array_size(benchmarks) && used < len; i++) {
        const char *name =
            json_string_value(json_object_get(json_array_get(benchmarks, i), "name"));
        if (name != NULL)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "", name);
    }
    return buf[0] != '\0' ? buf : "-";
}

/** Adds the row of one target. */
static int add_target(struct cli_table *t, const json_t *item)
{
    const json_t *jid = json_object_get(item, "id");
    const char *seen = json_string_value(json_object_get(item, "last_seen"));
    char id[32], when[64], last[80], benches[512];
    /* A target whose worker the server has not seen for a lease (stale) says so. */
    if (seen != NULL)
        snprintf(last, sizeof last, "%s%s", cli_fmt_time(when, sizeof when, seen),
                 json_is_true(json_object_get(item, "stale")) ? " (stale)" : "");
    snprintf(id, sizeof id, "%lld",
             json_is_integer(jid) ? (long long)json_integer_value(jid) : 0LL);
    char *labels = labels_text(json_object_get(item, "labels"));
    const char *cells[] = {
        id,
        json_string_value(json_object_get(item, "name")),
        json_string_value(json_object_get(item, "kind")),
        json_string_value(json_object_get(item, "fingerprint")),
        labels != NULL && labels[0] != '\0' ? labels : "-",
        benchmarks_text(benches, sizeof benches, json_object_get(item, "benchmarks")),
        seen != NULL ? last : NULL,
    };
    int added = labels != NULL ? cli_table_add(t, cells) : -1;
    free(labels);
    return added;
}

/** hvbench targets [--kind host|guest] [--label KEY=VALUE] [--host NAME] */
static int cmd_targets_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    static const struct option options[] = {
        {"kind", required_argument, NULL, 'k'},
        {"label", required_argument, NULL, 'L'},
        {"host", required_argument, NULL, 'H'},
        {NULL, 0, NULL, 0},
    };
    const char *kind = NULL, *label = NULL, *host = NULL;
    int opt;
    while ((opt = getopt_long(argc, argv, "k:L:H:", options, NULL)) != -1) {
        switch (opt) {
        case 'k':
            if (strcmp(optarg, "host") != 0 && strcmp(optarg, "guest") != 0) {
                cli_err("--kind must be host or guest");
                return CLI_EXIT_USAGE;
            }
            kind = optarg;
            break;
        case 'L':
            if (strchr(optarg, '=') == NULL || optarg[0] == '=') {
                cli_err("--label must be KEY=VALUE[,KEY=VALUE...]");
                return CLI_EXIT_USAGE;
            }
            label = optarg;
            break;
        case 'H':
            if (optarg[0] == '\0' || strchr(optarg, '/') != NULL) {
                cli_err("--host must be a host's name");
                return CLI_EXIT_USAGE;
            }
            host = optarg;
            break;
        default:
            return cli_usage(&cli_cmd_targets);
        }
    }
    if (optind != argc)
        return cli_usage(&cli_cmd_targets);

    char path[1024] = "/api/v1/targets";
    if ((kind != NULL && cli_add_query(path, sizeof path, "kind", kind) != 0) ||
        (label != NULL && cli_add_query(path, sizeof path, "label", label) != 0) ||
        (host != NULL && cli_add_query(path, sizeof path, "host", host) != 0)) {
        cli_err("--label or --host is too long");
        return CLI_EXIT_USAGE;
    }
    static const struct cli_column cols[] = {
        {"id", CLI_RIGHT},         {"name", CLI_LEFT},   {"kind", CLI_LEFT},
        {"fingerprint", CLI_LEFT}, {"labels", CLI_LEFT}, {"site benchmarks", CLI_LEFT},
        {"last seen", CLI_LEFT},
    };
    return cli_list_table(ctx, path, cols, sizeof cols / sizeof cols[0], add_target, "targets");
}

/* Prints the labels of the target answer a. */
static int show_labels(const json_t *a)
{
    char *labels = labels_text(json_object_get(a, "labels"));
    if (labels == NULL)
        return CLI_EXIT_FAIL;
    cli_out("%s: %s", json_string_value(json_object_get(a, "name")),
            labels[0] != '\0' ? labels : "(no labels)");
    free(labels);
    return CLI_EXIT_OK;
}

/* Applies KEY=VALUE and KEY- arguments to labels. Returns an exit code. */
static int edit_labels(json_t *labels, int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *eq = strchr(a, '=');
        size_t n = strlen(a);
        if (eq == NULL && n > 1 && a[n - 1] == '-') {
            char key[128];
            snprintf(key, sizeof key, "%.*s", (int)(n - 1), a);
            json_object_del(labels, key);
        } else if (eq != NULL && eq != a && (size_t)(eq - a) < 128) {
            char key[128];
            snprintf(key, sizeof key, "%.*s", (int)(eq - a), a);
            json_object_set_new(labels, key, json_string(eq + 1));
        } else {
            cli_err("'%s' is neither KEY=VALUE nor KEY-", a);
            return CLI_EXIT_USAGE;
        }
    }
    return CLI_EXIT_OK;
}

/** hvbench label TARGET_ID KEY=VALUE|KEY- ... | --clear */
static int cmd_label_exec(struct cli_ctx *ctx, int argc, char **argv)
{
    long long id;
    if (argc < 3 || cli_parse_id(argv[1], &id) != 0)
        return cli_usage(&cli_cmd_label);
    char path[96];
    snprintf(path, sizeof path, "/api/v1/targets/%lld", id);
    json_t *labels = json_object();
    int rc = CLI_EXIT_OK;
    if (!(argc == 3 && strcmp(argv[2], "--clear") == 0)) {
        /* The administrator's labels now, edited: PUT replaces them. */
        struct hv_http_response resp;
        memset(&resp, 0, sizeof resp);
        rc = cli_request(ctx, "GET", path, NULL, &resp);
        const json_t *now = json_object_get(resp.body, "admin_labels");
        if (rc == CLI_EXIT_OK && json_is_object(now))
            json_object_update(labels, (json_t *)now);
        hv_http_response_clear(&resp);
        if (rc == CLI_EXIT_OK)
            rc = edit_labels(labels, argc - 2, argv + 2);
    }
    if (rc == CLI_EXIT_OK) {
        json_t *body = json_pack("{s:O}", "labels", labels);
        strncat(path, "/labels", sizeof path - strlen(path) - 1);
        rc = cli_call(ctx, "PUT", path, body, show_labels);
        json_decref(body);
    }
    json_decref(labels);
    return rc;
}
