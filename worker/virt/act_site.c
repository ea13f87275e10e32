/* act_site.c — site factors: knobs the worker's configuration declares
 * (config.h), applied, read back and reverted by running the programs it
 * names, never through a shell.
 *
 * Applying a level first runs the read program: what it prints (trimmed)
 * is the value the plan found. When that is not the level, the journal
 * gets the revert program's argv with "{value}" already replaced by it,
 * and the read argv, so a restore (also `hvbench-worker --restore`, which
 * reads no configuration) needs nothing but the entry; then the apply
 * program runs with "{level}" replaced. A program that cannot start,
 * exits with a status other than 0, is killed or runs past the factor's
 * timeout fails the level, naming the factor, the level and the program's
 * last line of standard error. */
#include "names.h"
#include "worker/config.h"
#include "worker/engines/run.h"
#include "worker/virt/rows.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

/* The configuration whose factors are declared; NULL: none. */
static const struct hv_conf *site_conf;

void hv_actuators_use_conf(const struct hv_conf *c)
{
    site_conf = c;
}

const struct hv_site_factor *hv_site_find(const char *factor)
{
    /* a name the host rule refuses is declared nowhere (config.c checks
     * the declarations with the same rule) */
    if (!hv_site_factor_is(factor) || hv_site_name_problem(factor + strlen(HV_SITE_PREFIX)))
        return NULL;
    return hv_conf_find_factor(site_conf, factor + strlen(HV_SITE_PREFIX));
}

/* The levels of f as "a, b, c" into buf. */
static void list_levels(const struct hv_site_factor *f, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < f->n_levels && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", f->levels[i]);
}

int hv_site_level(const char *factor, const json_t *v, char *out, size_t n, char *why, size_t len)
{
    const struct hv_site_factor *f = hv_site_find(factor);
    if (f == NULL)
        return hv_act_fail(why, len,
                           "not declared in this worker's configuration (--config FILE, "
                           "\"factors\")");
    char allowed[1024];
    list_levels(f, allowed, sizeof allowed);
    if (!json_is_string(v))
        return hv_act_fail(why, len, "must be a string, one of: %s", allowed);
    for (size_t i = 0; i < f->n_levels; i++)
        if (strcmp(f->levels[i], json_string_value(v)) == 0) {
            snprintf(out, n, "%s", f->levels[i]);
            return 0;
        }
    return hv_act_fail(why, len, "\"%.64s\" is not a level this worker declares; one of: %s",
                       json_string_value(v), allowed);
}

/* A new copy of s with every mark replaced by value (mark NULL: a plain
 * copy), or NULL. */
static char *replace_all(const char *s, const char *mark, const char *value)
{
    if (mark == NULL)
        return strdup(s);
    size_t count = 0, ml = strlen(mark), vl = strlen(value);
    for (const char *p = strstr(s, mark); p != NULL; p = strstr(p + ml, mark))
        count++;
    char *out = malloc(strlen(s) + count * vl + 1);
    if (out == NULL)
        return NULL;
    char *o = out;
    for (const char *p = s;;) {
        const char *m = strstr(p, mark);
        size_t k = m != NULL ? (size_t)(m - p) : strlen(p);
        memcpy(o, p, k);
        o += k;
        if (m == NULL)
            break;
        memcpy(o, value, vl);
        o += vl;
        p = m + ml;
    }
    *o = '\0';
    return out;
}

/* argv with mark replaced by value in every argument (mark NULL: as it
 * is), as a JSON array of strings (a new reference, or NULL). */
static json_t *substituted(const char *const *argv, const char *mark, const char *value)
{
    json_t *out = json_array();
    for (size_t i = 0; out != NULL && argv[i] != NULL; i++) {
        char *a = replace_all(argv[i], mark, value);
        if (a == NULL || json_array_append_new(out, json_string(a)) != 0) {
            free(a);
            json_decref(out);
            return NULL;
        }
        free(a);
    }
    return out;
}

/* Runs the program of argv (a JSON array of strings) for up to timeout
 * seconds; what names it in messages. On success writes its standard
 * output, blanks trimmed at both ends, into out and returns 0; else -1
 * with why. */
static int run_json(const json_t *argv, double timeout, const char *what, char *out, size_t n,
                    char *why, size_t len)
{
    size_t k = json_array_size(argv);
    const char **v = calloc(k + 1, sizeof *v);
    if (v == NULL)
        return hv_act_fail(why, len, "out of memory");
    for (size_t i = 0; i < k; i++)
        v[i] = json_string_value(json_array_get(argv, i));
    if (k == 0 || v[0] == NULL) {
        free(v);
        return hv_act_fail(why, len, "%s has no program to run", what);
    }
    struct hv_run_spec spec = {.argv = v, .display = what, .timeout = timeout, .out_cap = 4096};
    struct hv_run_result r = {0};
    int rc = hv_run(&spec, NULL, &r, why, len);
    free(v);
    if (rc == 0 && !hv_run_ok(&r)) {
        hv_run_describe(&r, what, why, len);
        rc = -1;
    }
    if (rc == 0 && out != NULL) {
        const char *s = r.out != NULL ? r.out : "";
        while (isspace((unsigned char)*s))
            s++;
        size_t w = strlen(s);
        while (w > 0 && isspace((unsigned char)s[w - 1]))
            w--;
        snprintf(out, n, "%.*s", (int)(w < n ? w : n - 1), s);
    }
    hv_run_result_clear(&r);
    return rc;
}

/* The program argv[0] of a site factor, for messages: "site.zfs_sync's
 * read program /sbin/zfs". */
static void what_of(char *buf, size_t len, const char *factor, const char *role, const json_t *argv)
{
    snprintf(buf, len, "%s's %s program %s", factor, role,
             json_string_value(json_array_get(argv, 0)));
}

/* Runs f's read program into value; returns 0 or -1 with why. */
static int read_value(const char *factor, const struct hv_site_factor *f, char *value, size_t n,
                      char *why, size_t len)
{
    json_t *argv = substituted(f->read, NULL, NULL);
    if (argv == NULL)
        return hv_act_fail(why, len, "out of memory");
    char what[400];
    what_of(what, sizeof what, factor, "read", argv);
    int rc = run_json(argv, f->timeout, what, value, n, why, len);
    json_decref(argv);
    return rc;
}

static int site_apply(const struct hv_actuator *a, struct hv_act_ctx *ctx, struct hv_act_domain *d,
                      const char *level, char *err, size_t len)
{
    (void)d;
    const struct hv_site_factor *f = a->data;
    char value[HV_SITE_LEVEL_MAX + 65], why[700], what[400];
    if (f == NULL)
        return hv_act_fail(err, len, "%s=%s: not declared in this worker's configuration",
                           a->factor, level);
    if (read_value(a->factor, f, value, sizeof value, why, sizeof why) != 0)
        return hv_act_fail(err, len, "%s=%s: cannot read the value it has: %s", a->factor, level,
                           why);
    if (strcmp(value, level) == 0)
        return 0;
    json_t *revert = substituted(f->revert, "{value}", value);
    json_t *read = substituted(f->read, NULL, NULL);
    json_t *apply = substituted(f->apply, "{level}", level);
    if (revert == NULL || read == NULL || apply == NULL) {
        json_decref(revert);
        json_decref(read);
        json_decref(apply);
        return hv_act_fail(err, len, "%s=%s: out of memory", a->factor, level);
    }
    int added = hv_act_journal(ctx,
                               json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:f}", "kind",
                                         a->kind, "factor", a->factor, "scope", "host", "object",
                                         a->factor, "original", value, "revert", revert, "read",
                                         read, "timeout", f->timeout),
                               err, len);
    if (added < 0) {
        json_decref(apply);
        return -1;
    }
    what_of(what, sizeof what, a->factor, "apply", apply);
    int rc = run_json(apply, f->timeout, what, NULL, 0, why, sizeof why);
    json_decref(apply);
    /* A failed apply program may have changed something: the entry stays,
     * and the restore puts the value found back. */
    if (rc != 0)
        return hv_act_fail(err, len, "%s=%s: %s", a->factor, level, why);
    hv_act_note_change(ctx, a->factor, "host", a->factor, value, level);
    return 0;
}

static int site_read_back(const struct hv_actuator *a, struct hv_act_ctx *ctx,
                          struct hv_act_domain *d, struct hv_reading *r, char *err, size_t len)
{
    (void)ctx;
    (void)d;
    const struct hv_site_factor *f = a->data;
    char why[700];
    if (f == NULL)
        return hv_act_fail(err, len, "%s: not declared in this worker's configuration", a->factor);
    if (read_value(a->factor, f, r->value, sizeof r->value, why, sizeof why) != 0)
        return hv_act_fail(err, len, "%s: cannot read it back: %s", a->factor, why);
    snprintf(r->source, sizeof r->source, "the standard output of %.200s", f->read[0]);
    json_t *argv = json_array();
    for (size_t i = 0; argv != NULL && f->read[i] != NULL; i++)
        json_array_append_new(argv, json_string(f->read[i]));
    r->detail = json_pack("{s:o}", "argv", argv);
    return 0;
}

void hv_site_settings(struct hv_act_ctx *ctx, json_t *out)
{
    for (size_t i = 0; site_conf != NULL && out != NULL && i < site_conf->n_factors; i++) {
        char factor[HV_SITE_NAME_MAX + sizeof HV_SITE_PREFIX], msg[1024];
        snprintf(factor, sizeof factor, "%s%s", HV_SITE_PREFIX, site_conf->factors[i].name);
        struct hv_actuator a = hv_site_row_of(factor);
        struct hv_reading r = {.detail = NULL};
        if (a.data != NULL && site_read_back(&a, ctx, NULL, &r, msg, sizeof msg) == 0 &&
            r.value[0] != '\0' && hv_site_level_problem(r.value) == NULL)
            json_object_set_new(out, factor, json_string(r.value));
        json_decref(r.detail);
    }
}

static int site_revert(const struct hv_actuator *a, struct hv_act_ctx *ctx, const json_t *entry,
                       char *err, size_t len)
{
    (void)a;
    const char *factor = json_string_value(json_object_get(entry, "factor"));
    const char *original = json_string_value(json_object_get(entry, "original"));
    const json_t *revert = json_object_get(entry, "revert");
    const json_t *read = json_object_get(entry, "read");
    double timeout = json_number_value(json_object_get(entry, "timeout"));
    if (timeout <= 0)
        timeout = HV_CONF_FACTOR_TIMEOUT;
    if (factor == NULL || original == NULL || !json_is_array(revert) ||
        json_array_size(revert) == 0)
        return hv_act_fail(err, len, "%s: the journal entry lacks factor, original or revert",
                           factor != NULL ? factor : "a site factor");
    for (size_t i = 0; i < json_array_size(revert); i++)
        if (!json_is_string(json_array_get(revert, i)))
            return hv_act_fail(err, len, "%s: the journal entry's revert holds a non-string",
                               factor);
    char before[HV_SITE_LEVEL_MAX + 65] = "?", what[400], why[700];
    if (json_is_array(read) && json_array_size(read) > 0) {
        what_of(what, sizeof what, factor, "read", read);
        if (run_json(read, timeout, what, before, sizeof before, why, sizeof why) != 0)
            snprintf(before, sizeof before, "?");
    }
    what_of(what, sizeof what, factor, "revert", revert);
    if (run_json(revert, timeout, what, NULL, 0, why, sizeof why) != 0)
        return hv_act_fail(err, len, "%s: cannot restore \"%s\": %s", factor, original, why);
    if (strcmp(before, original) != 0)
        hv_act_note_change(ctx, factor, "host", factor, before, original);
    return 0;
}

const struct hv_actuator hv_site_row = {HV_SITE_PREFIX "*", HV_SITE_KIND, site_apply,
                                        site_read_back,     site_revert,  NULL};

struct hv_actuator hv_site_row_of(const char *factor)
{
    struct hv_actuator a = hv_site_row;
    a.factor = factor;
    a.data = hv_site_find(factor);
    return a;
}

/* The first HOOK_ANSWER bytes of a hook's output are kept in its answer. */
#define HOOK_ANSWER 1024

/* argv (a JSON array of strings) with mark replaced by value in every
 * argument, as a new JSON array, or NULL. */
static json_t *substituted_json(const json_t *argv, const char *mark, const char *value)
{
    size_t k = json_array_size(argv);
    const char **v = calloc(k + 1, sizeof *v);
    if (v == NULL)
        return NULL;
    for (size_t i = 0; i < k; i++)
        v[i] = json_string_value(json_array_get(argv, i));
    json_t *out = substituted(v, mark, value);
    free(v);
    return out;
}

/* The answer of a hook that ran: its exit status and the first
 * HOOK_ANSWER bytes of its output (standard output, else standard error),
 * cut at a character's start. */
static json_t *hook_answer(const struct hv_run_result *r)
{
    const char *out = r->out_len > 0 ? r->out : r->err != NULL ? r->err : "";
    size_t n = strlen(out);
    if (n > HOOK_ANSWER) {
        n = HOOK_ANSWER;
        while (n > 0 && ((unsigned char)out[n] & 0xC0) == 0x80)
            n--;
    }
    json_t *a = json_pack("{s:i}", "exit_status", r->exit_code);
    json_t *text = json_stringn(out, n);
    json_object_set_new(a, "output", text != NULL ? text : json_null());
    return a;
}

/* Bytes of a hook's output kept: its answer's first HOOK_ANSWER, and the
 * last line a "not yet" gives as its words. */
#define HOOK_OUTPUT (64 * 1024)

/* The last non-blank line of out, blanks trimmed, into why. */
static void last_line(const char *out, char *why, size_t len)
{
    const char *end = out + strlen(out);
    while (end > out && isspace((unsigned char)end[-1]))
        end--;
    const char *start = end;
    while (start > out && start[-1] != '\n')
        start--;
    while (start < end && isspace((unsigned char)*start))
        start++;
    snprintf(why, len, "%.*s", (int)(end - start), start);
}

/* fmt printed into a new string, or NULL when memory runs out. */
__attribute__((format(printf, 1, 2))) static char *printed(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *out = NULL;
    if (vasprintf(&out, fmt, ap) < 0)
        out = NULL; /* its content is undefined then */
    va_end(ap);
    return out;
}

/* The hook's environment: the worker's without its HVBENCH_* variables,
 * then the call's (actuator.h), as a new NULL-terminated array of owned
 * strings (hv_env_free), or NULL when memory runs out. */
static char **hook_env(long long plan, const char *host, const char *kind, const json_t *labels)
{
    size_t n = 0;
    while (environ[n] != NULL)
        n++;
    size_t max = n + 5 + json_object_size(labels);
    char **env = calloc(max + 1, sizeof *env);
    if (env == NULL)
        return NULL;
    size_t k = 0;
    bool failed = false;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "HVBENCH_", 8) != 0)
            failed |= (env[k++] = strdup(environ[i])) == NULL;
    failed |= (env[k++] = printed("HVBENCH_HOOK=%s", kind)) == NULL;
    failed |= (env[k++] = printed("HVBENCH_PLAN=%lld", plan)) == NULL;
    failed |= (env[k++] = printed("HVBENCH_TARGET=%s", host)) == NULL;
    /* the keys sorted, so HVBENCH_LABELS reads the same on every run */
    json_t *keys = json_array();
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)labels, key, v)
    {
        if (!json_is_string(v))
            continue;
        size_t at = 0;
        while (at < json_array_size(keys) &&
               strcmp(json_string_value(json_array_get(keys, at)), key) < 0)
            at++;
        json_array_insert_new(keys, at, json_string(key));
    }
    char *all = strdup("HVBENCH_LABELS=");
    size_t i;
    json_array_foreach(keys, i, v)
    {
        const char *lk = json_string_value(v);
        const char *lv = json_string_value(json_object_get(labels, lk));
        char *more = all != NULL ? printed("%s%s%s=%s", all, i > 0 ? "," : "", lk, lv) : NULL;
        free(all);
        all = more;
        char *one = printed("HVBENCH_LABEL_%s=%s", lk, lv);
        failed |= all == NULL || one == NULL;
        if (one != NULL)
            for (char *c = one + strlen("HVBENCH_LABEL_"); *c != '='; c++)
                *c = isalnum((unsigned char)*c) ? (char)toupper((unsigned char)*c) : '_';
        env[k++] = one;
    }
    json_decref(keys);
    failed |= all == NULL;
    env[k++] = all;
    if (failed) {
        for (size_t j = 0; j < k; j++)
            free(env[j]);
        free(env);
        return NULL;
    }
    return env;
}

static void env_free(char **env)
{
    for (size_t i = 0; env != NULL && env[i] != NULL; i++)
        free(env[i]);
    free(env);
}

int hv_site_hook_run(const char *name, long long plan, const char *host, const char *kind,
                     const json_t *labels, void (*tick)(void *), void *arg, json_t **answer,
                     char *why, size_t len)
{
    *answer = NULL;
    /* checked again before use: host goes into the command's arguments */
    if (!hv_name_host_ok(name))
        return hv_act_fail(why, len, "the hook's name %s", HV_NAME_HOST_RULE);
    if (!hv_name_host_ok(host))
        return hv_act_fail(why, len, "the host's name %s", HV_NAME_HOST_RULE);
    const json_t *argv = hv_conf_find_hook(site_conf, name);
    if (argv == NULL)
        return hv_act_fail(why, len,
                           "this worker's configuration declares no hook '%s' (\"hooks\" in "
                           "--config)",
                           name);
    char id[24];
    snprintf(id, sizeof id, "%lld", plan);
    json_t *once = substituted_json(argv, "{plan}", id);
    json_t *full = once != NULL ? substituted_json(once, "{host}", host) : NULL;
    json_decref(once);
    size_t k = json_array_size(full);
    const char **v = full != NULL ? calloc(k + 1, sizeof *v) : NULL;
    if (v == NULL) {
        json_decref(full);
        return hv_act_fail(why, len, "out of memory");
    }
    for (size_t i = 0; i < k; i++)
        v[i] = json_string_value(json_array_get(full, i));
    char what[160];
    snprintf(what, sizeof what, "hook %s (%s)", name, v[0]);
    char **env = hook_env(plan, host, kind != NULL ? kind : "", labels);
    if (env == NULL) {
        free(v);
        json_decref(full);
        return hv_act_fail(why, len, "out of memory");
    }
    struct hv_run_spec spec = {.argv = v,
                               .display = what,
                               .timeout = HV_CONF_HOOK_TIMEOUT,
                               .out_cap = HOOK_OUTPUT,
                               .envp = (const char *const *)env};
    struct hv_proc *p = hv_proc_start(&spec, why, len);
    int rc = -1;
    if (p != NULL) {
        while (hv_proc_poll(p, 1.0))
            if (tick != NULL)
                tick(arg);
        struct hv_run_result r = {0};
        hv_proc_wait(p, NULL, &r);
        *answer = hook_answer(&r);
        rc = hv_run_ok(&r) ? 0 : -1;
        if (rc != 0 && r.exit_code == HV_HOOK_NOT_YET && !r.timed_out && !r.stopped) {
            rc = 1;
            last_line(r.out_len > 0 ? r.out : r.err != NULL ? r.err : "", why, len);
            if (why[0] == '\0')
                snprintf(why, len, "hook %s said not yet (exit status %d) without a reason", name,
                         HV_HOOK_NOT_YET);
        } else if (rc != 0) {
            hv_run_describe(&r, what, why, len);
        }
        hv_run_result_clear(&r);
    }
    env_free(env);
    free(v);
    json_decref(full);
    return rc;
}
