/* config.c — the worker's configuration file; see config.h. */
#include "worker/config.h"

#include "errors.h"
#include "factors.h"
#include "jspec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct hv_jfield file_fields[] = {
    {.name = "benchmarks", .type = HV_J_OBJECT},
    {.name = "factors", .type = HV_J_OBJECT},
    {.name = "hooks", .type = HV_J_OBJECT},
    {0},
};

static const char *const kinds[] = {"cpu", "disk", "net", NULL};

static const struct hv_jfield bench_fields[] = {
    {.name = "kind", .type = HV_J_STRING, .required = true, .choices = kinds},
    {.name = "argv", .type = HV_J_ARRAY, .required = true, .max_len = HV_CONF_MAX_ARGS},
    {.name = "timeout",
     .type = HV_J_NUMBER,
     .required = true,
     .min = 1,
     .max = HV_CONF_MAX_TIMEOUT},
    {.name = "result", .type = HV_J_OBJECT, .required = true},
    {.name = "metric", .type = HV_J_STRING, .required = true, .max_len = 128},
    {.name = "unit", .type = HV_J_STRING, .required = true, .max_len = 32},
    {.name = "higher_is_better", .type = HV_J_BOOL, .required = true},
    {.name = "description", .type = HV_J_STRING, .max_len = 512},
    {0},
};

static const char *const classes[] = {"host", NULL};

static const struct hv_jfield factor_fields[] = {
    {.name = "levels", .type = HV_J_ARRAY, .required = true, .max_len = HV_CONF_MAX_LEVELS},
    {.name = "class", .type = HV_J_STRING, .required = true, .choices = classes},
    {.name = "apply", .type = HV_J_ARRAY, .required = true, .max_len = HV_CONF_MAX_ARGS},
    {.name = "read", .type = HV_J_ARRAY, .required = true, .max_len = HV_CONF_MAX_ARGS},
    {.name = "revert", .type = HV_J_ARRAY, .required = true, .max_len = HV_CONF_MAX_ARGS},
    {.name = "timeout", .type = HV_J_NUMBER, .min = 1, .max = HV_CONF_MAX_FACTOR_TIMEOUT},
    {.name = "description", .type = HV_J_STRING, .max_len = 512},
    {0},
};

static const struct hv_jfield result_fields[] = {
    {.name = "json", .type = HV_J_STRING, .max_len = 1024},
    {.name = "regex", .type = HV_J_STRING, .max_len = 1024},
    {0},
};

/* Names and metrics as the server and plans spell them: a-z 0-9 _ . -,
 * not starting with '.'. Returns NULL or what is wrong. */
static const char *name_problem(const char *s, size_t max)
{
    if (s[0] == '\0')
        return "must not be empty";
    if (strlen(s) > max)
        return "is too long";
    if (s[0] == '.')
        return "must not start with '.'";
    for (const char *p = s; *p != '\0'; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' ||
              *p == '-'))
            return "must use only a-z, 0-9, '_', '.' and '-'";
    return NULL;
}

/* Checks a string that must carry no NUL (jansson allows one inside). */
static bool has_nul(const json_t *s)
{
    return strlen(json_string_value(s)) != json_string_length(s);
}

/* argv: non-empty strings, argv[0] an absolute path of an executable file.
 * Returns the number of problems. */
static int check_argv(const json_t *argv, const char *path, const char *what, json_t *errors)
{
    char p[512];
    int problems = 0;
    if (json_array_size(argv) == 0) {
        hv_errors_add(errors, path, "must hold at least the program to run");
        return 1;
    }
    size_t i;
    json_t *a;
    json_array_foreach(argv, i, a)
    {
        hv_jpath_index(p, sizeof p, path, i);
        if (!json_is_string(a)) {
            hv_errors_add(errors, p, "must be a string, not %s", hv_jtype_name(a));
            problems++;
        } else if (has_nul(a) || (i == 0 && json_string_length(a) == 0)) {
            hv_errors_add(errors, p, "must be a non-empty string without NUL characters");
            problems++;
        }
    }
    const char *prog = json_string_value(json_array_get(argv, 0));
    hv_jpath_index(p, sizeof p, path, 0);
    if (problems == 0 && prog[0] != '/') {
        hv_errors_add(errors, p,
                      "must be an absolute path (the worker never looks a %s up in PATH), not "
                      "\"%s\"",
                      what, prog);
        problems++;
    } else if (problems == 0) {
        struct stat st;
        if (stat(prog, &st) != 0) {
            hv_errors_add(errors, p, "%s: %s", prog, strerror(errno));
            problems++;
        } else if (!S_ISREG(st.st_mode) || access(prog, X_OK) != 0) {
            hv_errors_add(errors, p, "%s is not an executable file", prog);
            problems++;
        }
    }
    return problems;
}

/* result: exactly one of json (a JSON Pointer) and regex (compiles).
 * Compiles the regex into b on success. */
static int check_result(const json_t *result, const char *path, struct hv_site_bench *b,
                        json_t *errors)
{
    int problems = hv_jspec_check(result, path, result_fields, errors);
    if (problems > 0)
        return problems;
    const json_t *js = json_object_get(result, "json"), *re = json_object_get(result, "regex");
    if ((js == NULL) == (re == NULL)) {
        hv_errors_add(errors, path,
                      "must hold exactly one of \"json\" (a JSON Pointer such as \"/score\") "
                      "and \"regex\" (such as \"Score: ([0-9.]+)\")");
        return 1;
    }
    char p[512];
    if (js != NULL) {
        hv_jpath(p, sizeof p, path, "json");
        const char *s = json_string_value(js);
        if (has_nul(js) || (s[0] != '\0' && s[0] != '/')) {
            hv_errors_add(errors, p,
                          "must be a JSON Pointer: empty (the whole output is the number) or "
                          "starting with '/', not \"%s\"",
                          s);
            return 1;
        }
        b->json_pointer = s;
        return 0;
    }
    hv_jpath(p, sizeof p, path, "regex");
    const char *s = json_string_value(re);
    if (has_nul(re) || s[0] == '\0') {
        hv_errors_add(errors, p, "must be a non-empty regular expression");
        return 1;
    }
    int rc = regcomp(&b->regex, s, REG_EXTENDED | REG_NEWLINE);
    if (rc != 0) {
        char why[256];
        regerror(rc, &b->regex, why, sizeof why);
        hv_errors_add(errors, p, "is not a POSIX extended regular expression: %s", why);
        return 1;
    }
    b->regex_src = s;
    return 0;
}

/* Fills b from the declaration v of benchmark name; returns the number of
 * problems (b holds a compiled regex only when it returns 0). */
static int check_bench(const char *name, const json_t *v, const char *path, struct hv_site_bench *b,
                       json_t *errors)
{
    const char *why = name_problem(name, 64);
    if (why != NULL) {
        hv_errors_add(errors, path, "the benchmark name %s (plans name it as params.name)", why);
        return 1;
    }
    int problems = hv_jspec_check(v, path, bench_fields, errors);
    if (problems > 0)
        return problems;
    char p[512];
    hv_jpath(p, sizeof p, path, "argv");
    problems += check_argv(json_object_get(v, "argv"), p, "site benchmark", errors);
    const char *metric = json_string_value(json_object_get(v, "metric"));
    why = name_problem(metric, 128);
    if (why != NULL) {
        hv_jpath(p, sizeof p, path, "metric");
        hv_errors_add(errors, p, "%s", why);
        problems++;
    }
    const json_t *unit = json_object_get(v, "unit");
    if (json_string_length(unit) == 0 || has_nul(unit)) {
        hv_jpath(p, sizeof p, path, "unit");
        hv_errors_add(errors, p, "must be a non-empty string (e.g. \"HS06\", \"s\")");
        problems++;
    }
    if (problems > 0)
        return problems;
    hv_jpath(p, sizeof p, path, "result");
    problems = check_result(json_object_get(v, "result"), p, b, errors);
    if (problems > 0)
        return problems;
    b->name = name;
    b->kind = json_string_value(json_object_get(v, "kind"));
    b->timeout = json_number_value(json_object_get(v, "timeout"));
    b->metric = metric;
    b->unit = json_string_value(unit);
    b->higher_is_better = json_is_true(json_object_get(v, "higher_is_better"));
    const json_t *argv = json_object_get(v, "argv");
    b->argv = calloc(json_array_size(argv) + 1, sizeof *b->argv);
    if (b->argv == NULL) {
        if (b->regex_src != NULL)
            regfree(&b->regex);
        b->regex_src = NULL;
        hv_errors_add(errors, path, "out of memory");
        return 1;
    }
    for (size_t i = 0; i < json_array_size(argv); i++)
        b->argv[i] = json_string_value(json_array_get(argv, i));
    return 0;
}

/* Copies a JSON array of strings into a new NULL-terminated array of
 * borrowed strings, or NULL when memory runs out. */
static const char **strings_of(const json_t *a)
{
    const char **out = calloc(json_array_size(a) + 1, sizeof *out);
    for (size_t i = 0; out != NULL && i < json_array_size(a); i++)
        out[i] = json_string_value(json_array_get(a, i));
    return out;
}

/* Whether some argument of argv holds mark. */
static bool mentions(const json_t *argv, const char *mark)
{
    size_t i;
    json_t *a;
    json_array_foreach(argv, i, a)
    {
        if (strstr(json_string_value(a), mark) != NULL)
            return true;
    }
    return false;
}

static void factor_free(struct hv_site_factor *f)
{
    free(f->levels);
    free(f->apply);
    free(f->read);
    free(f->revert);
}

/* The levels of a site factor: distinct strings a read argv can print. */
static int check_levels(const json_t *levels, const char *path, json_t *errors)
{
    char p[512];
    int problems = 0;
    if (json_array_size(levels) == 0) {
        hv_errors_add(errors, path, "must list at least one level");
        return 1;
    }
    for (size_t i = 0; i < json_array_size(levels); i++) {
        const json_t *l = json_array_get(levels, i);
        hv_jpath_index(p, sizeof p, path, i);
        const char *why = !json_is_string(l) ? "must be a string"
                          : has_nul(l)       ? "must not hold NUL characters"
                                             : hv_site_level_problem(json_string_value(l));
        for (size_t j = 0; why == NULL && j < i; j++)
            if (json_equal(l, json_array_get(levels, j)))
                why = "repeats an earlier level";
        if (why != NULL) {
            hv_errors_add(errors, p, "%s", why);
            problems++;
        }
    }
    return problems;
}

/* Fills f from the declaration v of site factor name; returns the number
 * of problems. */
static int check_factor(const char *name, const json_t *v, const char *path,
                        struct hv_site_factor *f, json_t *errors)
{
    const char *why = hv_site_name_problem(name);
    if (why != NULL) {
        hv_errors_add(errors, path, "the factor name %s (plans name it as site.NAME)", why);
        return 1;
    }
    int problems = hv_jspec_check(v, path, factor_fields, errors);
    if (problems > 0)
        return problems;
    char p[512];
    hv_jpath(p, sizeof p, path, "levels");
    problems += check_levels(json_object_get(v, "levels"), p, errors);
    static const char *const argvs[] = {"apply", "read", "revert"};
    for (size_t i = 0; i < 3; i++) {
        hv_jpath(p, sizeof p, path, argvs[i]);
        problems += check_argv(json_object_get(v, argvs[i]), p, "site factor's program", errors);
    }
    if (problems > 0)
        return problems;
    if (!mentions(json_object_get(v, "apply"), "{level}")) {
        hv_jpath(p, sizeof p, path, "apply");
        hv_errors_add(errors, p, "must hold {level} in an argument (the level to set)");
        problems++;
    }
    if (!mentions(json_object_get(v, "revert"), "{value}")) {
        hv_jpath(p, sizeof p, path, "revert");
        hv_errors_add(errors, p,
                      "must hold {value} in an argument (what read printed before the plan)");
        problems++;
    }
    if (problems > 0)
        return problems;
    const json_t *t = json_object_get(v, "timeout");
    f->name = name;
    f->klass = json_string_value(json_object_get(v, "class"));
    f->timeout = t != NULL ? json_number_value(t) : HV_CONF_FACTOR_TIMEOUT;
    f->n_levels = json_array_size(json_object_get(v, "levels"));
    f->levels = strings_of(json_object_get(v, "levels"));
    f->apply = strings_of(json_object_get(v, "apply"));
    f->read = strings_of(json_object_get(v, "read"));
    f->revert = strings_of(json_object_get(v, "revert"));
    if (f->levels == NULL || f->apply == NULL || f->read == NULL || f->revert == NULL) {
        factor_free(f);
        hv_errors_add(errors, path, "out of memory");
        return 1;
    }
    return 0;
}

static int factor_by_name(const void *a, const void *b)
{
    return strcmp(((const struct hv_site_factor *)a)->name,
                  ((const struct hv_site_factor *)b)->name);
}

/* Checks and loads the "factors" member into c; returns the number of
 * problems. */
static int load_factors(struct hv_conf *c, const json_t *factors, json_t *errors)
{
    size_t n = json_object_size(factors);
    if (n > HV_CONF_MAX_FACTORS) {
        hv_errors_add(errors, "/factors", "declares %zu factors; at most %d", n,
                      HV_CONF_MAX_FACTORS);
        return 1;
    }
    if (n > 0 && (c->factors = calloc(n, sizeof *c->factors)) == NULL) {
        hv_errors_add(errors, "/factors", "out of memory");
        return 1;
    }
    int problems = 0;
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)factors, name, v)
    {
        char p[512];
        hv_jpath(p, sizeof p, "/factors", name);
        struct hv_site_factor f = {0};
        if (check_factor(name, v, p, &f, errors) == 0)
            c->factors[c->n_factors++] = f;
        else
            problems++;
    }
    if (c->n_factors > 1)
        qsort(c->factors, c->n_factors, sizeof *c->factors, factor_by_name);
    return problems;
}

/* Checks the "hooks" member: each NAME an argv; returns the number of
 * problems. */
static int check_hooks(const json_t *hooks, json_t *errors)
{
    if (json_object_size(hooks) > HV_CONF_MAX_HOOKS) {
        hv_errors_add(errors, "/hooks", "declares %zu hooks; at most %d", json_object_size(hooks),
                      HV_CONF_MAX_HOOKS);
        return 1;
    }
    int problems = 0;
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)hooks, name, v)
    {
        char p[512];
        hv_jpath(p, sizeof p, "/hooks", name);
        const char *why = hv_site_name_problem(name);
        if (why != NULL) {
            hv_errors_add(errors, p, "the hook name %s (plans name it as {\"local\": NAME})", why);
            problems++;
        } else if (!json_is_array(v) || json_array_size(v) > HV_CONF_MAX_ARGS) {
            hv_errors_add(errors, p, "must be an argv: an array of at most %d strings",
                          HV_CONF_MAX_ARGS);
            problems++;
        } else {
            problems += check_argv(v, p, "hook's program", errors);
        }
    }
    return problems;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct hv_site_bench *)a)->name, ((const struct hv_site_bench *)b)->name);
}

struct hv_conf *hv_conf_from_json(json_t *doc, json_t *errors)
{
    if (hv_jspec_check(doc, "", file_fields, errors) > 0)
        return NULL;
    const json_t *benches = json_object_get(doc, "benchmarks");
    size_t n = json_object_size(benches);
    if (n > HV_CONF_MAX_BENCHMARKS) {
        hv_errors_add(errors, "/benchmarks", "declares %zu benchmarks; at most %d", n,
                      HV_CONF_MAX_BENCHMARKS);
        return NULL;
    }
    struct hv_conf *c = calloc(1, sizeof *c);
    if (c == NULL || (n > 0 && (c->benchmarks = calloc(n, sizeof *c->benchmarks)) == NULL)) {
        free(c);
        hv_errors_add(errors, "", "out of memory");
        return NULL;
    }
    c->doc = json_incref(doc);
    int problems = 0;
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)benches, name, v)
    {
        char p[512];
        hv_jpath(p, sizeof p, "/benchmarks", name);
        struct hv_site_bench b = {0};
        if (check_bench(name, v, p, &b, errors) == 0)
            c->benchmarks[c->n_benchmarks++] = b;
        else
            problems++;
    }
    problems += load_factors(c, json_object_get(doc, "factors"), errors);
    problems += check_hooks(json_object_get(doc, "hooks"), errors);
    if (problems > 0) {
        hv_conf_free(c);
        return NULL;
    }
    if (c->n_benchmarks > 1)
        qsort(c->benchmarks, c->n_benchmarks, sizeof *c->benchmarks, by_name);
    return c;
}

struct hv_conf *hv_conf_load(const char *path, char *err, size_t errlen)
{
    /* Opened here, not by jansson: its message holds the path and is cut
     * at 160 bytes, which a long path would fill before the reason. */
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errlen, "%s: cannot open it: %s", path, strerror(errno));
        return NULL;
    }
    json_error_t je;
    json_t *doc = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
    fclose(f);
    if (doc == NULL) {
        if (je.line > 0)
            snprintf(err, errlen, "%s: line %d, column %d: %s", path, je.line, je.column, je.text);
        else
            snprintf(err, errlen, "%s: %s", path, je.text);
        return NULL;
    }
    /* The file also holds the worker's options (lib/optfile.h, read by
     * main.c): only this file's sections are checked here. */
    json_t *sections = json_is_object(doc) ? json_object() : json_incref(doc);
    for (const struct hv_jfield *k = file_fields; json_is_object(doc) && k->name != NULL; k++)
        if (json_object_get(doc, k->name) != NULL)
            json_object_set(sections, k->name, json_object_get(doc, k->name));
    json_decref(doc);
    doc = sections;
    json_t *errors = json_array();
    struct hv_conf *c = errors ? hv_conf_from_json(doc, errors) : NULL;
    json_decref(doc);
    if (c == NULL) {
        size_t n = (size_t)snprintf(err, errlen, "%s:", path);
        size_t i;
        json_t *e;
        json_array_foreach(errors, i, e)
        {
            if (n >= errlen)
                break;
            const char *at = json_string_value(json_object_get(e, "path"));
            n += (size_t)snprintf(err + n, errlen - n, "\n  %s: %s", at && at[0] ? at : "(top)",
                                  json_string_value(json_object_get(e, "message")));
        }
        if (errors == NULL)
            snprintf(err, errlen, "%s: out of memory", path);
    }
    json_decref(errors);
    return c;
}

void hv_conf_free(struct hv_conf *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->n_benchmarks; i++) {
        free(c->benchmarks[i].argv);
        if (c->benchmarks[i].regex_src != NULL)
            regfree(&c->benchmarks[i].regex);
    }
    free(c->benchmarks);
    for (size_t i = 0; i < c->n_factors; i++)
        factor_free(&c->factors[i]);
    free(c->factors);
    json_decref(c->doc);
    free(c);
}

const struct hv_site_bench *hv_conf_find(const struct hv_conf *c, const char *name)
{
    if (c == NULL || name == NULL)
        return NULL;
    for (size_t i = 0; i < c->n_benchmarks; i++)
        if (strcmp(c->benchmarks[i].name, name) == 0)
            return &c->benchmarks[i];
    return NULL;
}

json_t *hv_conf_benchmarks_json(const struct hv_conf *c)
{
    json_t *list = json_array();
    for (size_t i = 0; list != NULL && c != NULL && i < c->n_benchmarks; i++) {
        const struct hv_site_bench *b = &c->benchmarks[i];
        if (json_array_append_new(list,
                                  json_pack("{s:s, s:s, s:s, s:s, s:b}", "name", b->name, "kind",
                                            b->kind, "metric", b->metric, "unit", b->unit,
                                            "higher_is_better", b->higher_is_better)) != 0) {
            json_decref(list);
            return NULL;
        }
    }
    return list;
}

const struct hv_site_factor *hv_conf_find_factor(const struct hv_conf *c, const char *name)
{
    for (size_t i = 0; c != NULL && name != NULL && i < c->n_factors; i++)
        if (strcmp(c->factors[i].name, name) == 0)
            return &c->factors[i];
    return NULL;
}

json_t *hv_conf_factors_json(const struct hv_conf *c)
{
    json_t *out = json_object();
    for (size_t i = 0; out != NULL && c != NULL && i < c->n_factors; i++) {
        const struct hv_site_factor *f = &c->factors[i];
        json_t *levels = json_array();
        for (size_t l = 0; levels != NULL && l < f->n_levels; l++)
            json_array_append_new(levels, json_string(f->levels[l]));
        if (levels == NULL ||
            json_object_set_new(
                out, f->name, json_pack("{s:o, s:s}", "levels", levels, "class", f->klass)) != 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

const json_t *hv_conf_find_hook(const struct hv_conf *c, const char *name)
{
    if (c == NULL || name == NULL)
        return NULL;
    return json_object_get(json_object_get(c->doc, "hooks"), name);
}

json_t *hv_conf_hooks_json(const struct hv_conf *c)
{
    json_t *out = json_array();
    const char *name;
    const json_t *v;
    if (c != NULL)
        json_object_foreach(json_object_get(c->doc, "hooks"), name, v)
        {
            if (out != NULL && json_array_append_new(out, json_string(name)) != 0) {
                json_decref(out);
                return NULL;
            }
        }
    return out;
}
