/* optfile.c — configuration files and environment variables as long
 * options; see optfile.h. */
#include "optfile.h"

#include "errors.h"
#include "fileio.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A configuration file is small: anything larger is a mistake. */
#define MAX_FILE (1024 * 1024)

static bool listed(const char *const *names, const char *name)
{
    for (size_t i = 0; names != NULL && names[i] != NULL; i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

static const struct option *find_opt(const struct hv_optfile_spec *spec, const char *name)
{
    if (listed(spec->skip, name))
        return NULL;
    for (const struct option *o = spec->opts; o->name != NULL; o++)
        if (strcmp(o->name, name) == 0)
            return o;
    return NULL;
}

json_t *hv_optfile_load(const char *path, json_t *errors)
{
    size_t len;
    char *text = hv_read_file(path, MAX_FILE, 0, &len);
    if (text == NULL) {
        hv_errors_add(errors, "", "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    json_error_t e;
    json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
    free(text);
    if (doc == NULL) {
        hv_errors_add(errors, "", "%s: line %d, column %d: %s", path, e.line, e.column, e.text);
        return NULL;
    }
    if (!json_is_object(doc)) {
        hv_errors_add(errors, "", "%s: must be a JSON object of settings", path);
        json_decref(doc);
        return NULL;
    }
    return doc;
}

/* A growing argument vector. */
struct args {
    char **v;
    int n, cap;
    bool broken;
};

static void push(struct args *a, char *s)
{
    if (s == NULL || a->broken) {
        a->broken = true;
        free(s);
        return;
    }
    if (a->n + 2 > a->cap) {
        int cap = a->cap ? a->cap * 2 : 16;
        char **v = realloc(a->v, (size_t)cap * sizeof *v);
        if (v == NULL) {
            a->broken = true;
            free(s);
            return;
        }
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = s;
    a->v[a->n] = NULL;
}

static char *option_text(const char *name, const char *value)
{
    char *s;
    if (value == NULL)
        return asprintf(&s, "--%s", name) < 0 ? NULL : s;
    return asprintf(&s, "--%s=%s", name, value) < 0 ? NULL : s;
}

/* One value of the file: a string or an integer for an option that takes
 * one, true or false for one that does not. */
static void push_value(struct args *a, const struct option *o, const json_t *v, const char *ptr,
                       json_t *errors)
{
    char num[32];
    if (o->has_arg == no_argument) {
        if (json_is_true(v))
            push(a, option_text(o->name, NULL));
        else if (!json_is_false(v))
            hv_errors_add(errors, ptr, "must be true or false");
        return;
    }
    if (json_is_string(v)) {
        push(a, option_text(o->name, json_string_value(v)));
    } else if (json_is_integer(v)) {
        snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
        push(a, option_text(o->name, num));
    } else {
        hv_errors_add(errors, ptr, "must be a string or an integer%s",
                      json_is_array(v) ? "" : " (or an array of them to repeat it)");
    }
}

/* The environment variable of option name: prefix + NAME. */
static const char *env_of(const struct hv_optfile_spec *spec, const char *name)
{
    char var[128];
    int n = snprintf(var, sizeof var, "%s", spec->env_prefix);
    for (const char *c = name; *c != '\0' && n < (int)sizeof var - 1; c++)
        var[n++] = *c == '-' ? '_' : (char)toupper((unsigned char)*c);
    var[n] = '\0';
    return getenv(var);
}

static bool on_command_line(int argc, char **argv, const char *name)
{
    size_t len = strlen(name);
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strncmp(argv[i], "--", 2) == 0 && strncmp(argv[i] + 2, name, len) == 0 &&
            (argv[i][2 + len] == '\0' || argv[i][2 + len] == '='))
            return true;
    return false;
}

/* A repeatable option's values come from one place, the last of file,
 * environment and command line that gives any: later ones replace the
 * list rather than add to it. */
static bool overridden(const struct hv_optfile_spec *spec, const char *name, bool from_file,
                       int argc, char **argv)
{
    if (!listed(spec->repeatable, name))
        return false;
    return (from_file && env_of(spec, name) != NULL) || on_command_line(argc, argv, name);
}

static void from_file(struct args *a, const struct hv_optfile_spec *spec, const json_t *doc,
                      const char *const *also, int argc, char **argv, json_t *errors)
{
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)doc, name, v)
    {
        char ptr[256];
        snprintf(ptr, sizeof ptr, "/%s", name);
        if (listed(also, name))
            continue;
        const struct option *o = find_opt(spec, name);
        if (o == NULL) {
            hv_errors_add(errors, ptr, "is not a setting%s",
                          listed(spec->skip, name) ? " of a file (command line only)" : "");
            continue;
        }
        if (overridden(spec, name, true, argc, argv))
            continue;
        if (!json_is_array(v) || o->has_arg == no_argument) {
            push_value(a, o, v, ptr, errors);
            continue;
        }
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e)
        {
            char eptr[280];
            snprintf(eptr, sizeof eptr, "%s/%zu", ptr, i);
            push_value(a, o, e, eptr, errors);
        }
    }
}

static void from_env(struct args *a, const struct hv_optfile_spec *spec, int argc, char **argv)
{
    for (const struct option *o = spec->opts; o->name != NULL; o++) {
        if (listed(spec->skip, o->name))
            continue;
        const char *v = env_of(spec, o->name);
        if (v == NULL || overridden(spec, o->name, false, argc, argv))
            continue;
        if (o->has_arg == no_argument) {
            if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0 || strcmp(v, "yes") == 0)
                push(a, option_text(o->name, NULL));
            continue;
        }
        if (!listed(spec->repeatable, o->name)) {
            push(a, option_text(o->name, v));
            continue;
        }
        char *copy = strdup(v), *save = NULL;
        if (copy == NULL) {
            a->broken = true;
            continue;
        }
        for (char *t = strtok_r(copy, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save))
            push(a, option_text(o->name, t));
        free(copy);
    }
}

char **hv_optfile_argv(const struct hv_optfile_spec *spec, const json_t *doc,
                       const char *const *also, int argc, char **argv, int *out_argc,
                       json_t *errors)
{
    struct args a = {0};
    push(&a, strdup(argc > 0 ? argv[0] : "hvbench"));
    if (doc != NULL)
        from_file(&a, spec, doc, also, argc, argv, errors);
    from_env(&a, spec, argc, argv);
    for (int i = 1; i < argc; i++)
        push(&a, strdup(argv[i]));
    if (a.broken) {
        hv_optfile_free(a.v);
        return NULL;
    }
    *out_argc = a.n;
    return a.v;
}

size_t hv_optfile_print_errors(const char *prog, const char *path, const json_t *errors)
{
    size_t i;
    const json_t *e;
    json_array_foreach(errors, i, e)
    {
        const char *at = json_string_value(json_object_get(e, "path"));
        const char *msg = json_string_value(json_object_get(e, "message"));
        if (at != NULL && at[0] != '\0')
            fprintf(stderr, "%s: %s: %s: %s\n", prog, path, at, msg);
        else
            fprintf(stderr, "%s: %s\n", prog, msg);
    }
    return json_array_size(errors);
}

void hv_optfile_free(char **v)
{
    for (size_t i = 0; v != NULL && v[i] != NULL; i++)
        free(v[i]);
    free(v);
}

const char *hv_optfile_find(int argc, char **argv, const char *name)
{
    const char *found = NULL;
    size_t len = strlen(name);
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (strcmp(s, "--") == 0)
            break;
        if (strncmp(s, "--", 2) != 0 || strncmp(s + 2, name, len) != 0)
            continue;
        if (s[2 + len] == '=')
            found = s + 3 + len;
        else if (s[2 + len] == '\0' && i + 1 < argc)
            found = argv[++i];
    }
    return found;
}
