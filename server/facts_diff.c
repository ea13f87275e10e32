/* facts_diff.c — see facts_diff.h. */
#include "facts_diff.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deeper facts than this are compared whole: no worker reports them. */
#define MAX_DEPTH 8

/* Adds to flat (an object: path -> value) every leaf of v under prefix. */
static void flatten(json_t *flat, const char *prefix, const json_t *v, int depth)
{
    if (!json_is_object(v) || depth >= MAX_DEPTH) {
        if (prefix[0] != '\0')
            json_object_set(flat, prefix, (json_t *)v);
        return;
    }
    const char *key;
    const json_t *member;
    json_object_foreach((json_t *)v, key, member)
    {
        size_t len = strlen(prefix) + strlen(key) + 2;
        char *path = malloc(len);
        if (path == NULL)
            return;
        snprintf(path, len, "%s%s%s", prefix, prefix[0] ? "." : "", key);
        flatten(flat, path, member, depth + 1);
        free(path);
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Appends {"fact", "before", "after"} when the two differ. */
static void add_if_differs(json_t *out, const char *path, json_t *b, json_t *a)
{
    if (b != NULL && a != NULL && json_equal(b, a))
        return;
    json_array_append_new(out, json_pack("{s:s,s:O,s:O}", "fact", path, "before",
                                         b ? b : json_null(), "after", a ? a : json_null()));
}

json_t *hv_facts_diff(const json_t *before, const json_t *after)
{
    json_t *fb = json_object(), *fa = json_object(), *out = json_array();
    const char **paths = NULL;
    if (fb == NULL || fa == NULL || out == NULL)
        goto fail;
    flatten(fb, "", before, 0);
    flatten(fa, "", after, 0);
    size_t n = 0, cap = json_object_size(fb) + json_object_size(fa);
    paths = malloc((cap + 1) * sizeof *paths);
    if (paths == NULL)
        goto fail;
    const char *key;
    json_t *v;
    json_object_foreach(fb, key, v)
    {
        paths[n++] = key;
    }
    json_object_foreach(fa, key, v)
    {
        if (json_object_get(fb, key) == NULL)
            paths[n++] = key;
    }
    qsort(paths, n, sizeof *paths, cmp_str);
    for (size_t i = 0; i < n; i++)
        add_if_differs(out, paths[i], json_object_get(fb, paths[i]), json_object_get(fa, paths[i]));
    free(paths);
    json_decref(fb);
    json_decref(fa);
    return out;
fail:
    free(paths);
    json_decref(fb);
    json_decref(fa);
    json_decref(out);
    return NULL;
}

json_t *hv_facts_side_by_side(const json_t *const *sides, size_t n)
{
    json_t *all = json_object(), *flat = json_array(), *out = json_array();
    const char **paths = NULL;
    if (all == NULL || flat == NULL || out == NULL)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        json_t *f = json_object();
        if (f == NULL || json_array_append_new(flat, f) != 0)
            goto fail;
        flatten(f, "", sides[i], 0);
        json_object_update(all, f);
    }
    size_t np = 0;
    paths = malloc((json_object_size(all) + 1) * sizeof *paths);
    if (paths == NULL)
        goto fail;
    const char *key;
    json_t *v;
    json_object_foreach(all, key, v)
    {
        paths[np++] = key;
    }
    qsort(paths, np, sizeof *paths, cmp_str);
    for (size_t k = 0; k < np; k++) {
        json_t *values = json_array();
        bool differs = false;
        for (size_t i = 0; values != NULL && i < n; i++) {
            json_t *x = json_object_get(json_array_get(flat, i), paths[k]);
            json_t *first = json_object_get(json_array_get(flat, 0), paths[k]);
            if (!(x != NULL && first != NULL && json_equal(x, first)))
                differs = true;
            json_array_append(values, x ? x : json_null());
        }
        if (values == NULL ||
            json_array_append_new(out, json_pack("{s:s,s:o,s:b}", "name", paths[k], "values",
                                                 values, "differs", differs)) != 0)
            goto fail;
    }
    free(paths);
    json_decref(all);
    json_decref(flat);
    return out;
fail:
    free(paths);
    json_decref(all);
    json_decref(flat);
    json_decref(out);
    return NULL;
}
