/* engines.c — the table of engine descriptions (each kind's built-in
 * engines, then the external tools of lib/tools.def) and the catalogue
 * built from it; see params.h. Apart from params.c, whose shared rows and
 * readers the descriptions use, so nothing calls back into the files that
 * call it. */
#include "params.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* ---- the engine table -------------------------------------------------- */

/* The external tools, in the order of tools.def; each is described in its
 * lib/parse_<tool>.c. */
static const struct hv_engine_def *const tools[] = {
#define HV_TOOL(id, kind, guess) &hv_engine_def_##kind##_##id,
#include "tools.def"
#undef HV_TOOL
};

/* The lists of the files of descriptions, in the catalogue's order: a new
 * engine is a row of its file's list, a new file a row here. With_tools:
 * the tools of the kind of the list's first engine follow it. */
static const struct {
    const struct hv_engine_def *const *list;
    bool with_tools;
} lists[] = {
    {hv_engine_defs_cpu, true},
    {hv_engine_defs_disk, true},
    {hv_engine_defs_net, true},
    {hv_engine_defs_custom, false},
};

const struct hv_engine_def *hv_engine_def_at(size_t i)
{
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
        const struct hv_engine_def *const *e = lists[l].list;
        for (; *e != NULL; e++)
            if (i-- == 0)
                return *e;
        for (size_t t = 0; lists[l].with_tools && t < sizeof tools / sizeof tools[0]; t++)
            if (strcmp(tools[t]->kind, lists[l].list[0]->kind) == 0 && i-- == 0)
                return tools[t];
    }
    return NULL;
}

const struct hv_engine_def *hv_engine_def_find(const char *kind, const char *engine)
{
    if (kind == NULL)
        return NULL;
    if (engine == NULL)
        engine = "builtin";
    const struct hv_engine_def *e;
    for (size_t i = 0; (e = hv_engine_def_at(i)) != NULL; i++)
        if (strcmp(e->kind, kind) == 0 && strcmp(e->engine, engine) == 0)
            return e;
    return NULL;
}

bool hv_engine_metric_primary(const char *kind, const char *engine, const char *metric)
{
    const struct hv_engine_def *e = hv_engine_def_find(kind, engine);
    if (e == NULL || e->metrics == NULL)
        return true;
    for (const char *const *m = e->metrics; *m != NULL; m++)
        if (metric != NULL && strcmp(*m, metric) == 0)
            return true;
    return false;
}

size_t hv_engine_def_count(void)
{
    size_t n = 0;
    while (hv_engine_def_at(n) != NULL)
        n++;
    return n;
}

/* ---- the catalogue ----------------------------------------------------- */

/* A NULL-terminated list of strings as a new JSON array, or NULL. */
static json_t *strings_json(const char *const *list)
{
    json_t *a = json_array();
    for (const char *const *s = list; a != NULL && *s != NULL; s++) {
        if (json_array_append_new(a, json_string(*s)) != 0) {
            json_decref(a);
            a = NULL;
        }
    }
    return a;
}

static json_t *param_json(const struct hv_engine_def *e, const struct hv_param_def *d)
{
    /* A peer engine cannot run without its target, whoever refuses it. */
    bool required = d->required || (e->needs_peer && d->type == HV_PARAM_TARGET);
    json_t *o = json_pack("{s:s, s:s, s:b, s:b, s:s}", "name", d->name, "type",
                          hv_param_type_name(d->type), "required", required, "sweepable",
                          hv_engine_def_sweepable(e, d->name), "description", d->description);
    if (o == NULL)
        return NULL;
    int rc = 0;
    if (d->def != NULL)
        rc |= json_object_set_new(o, "default", json_loads(d->def, JSON_DECODE_ANY, NULL));
    if (d->min < d->max) {
        bool whole = d->type != HV_PARAM_NUMBER && d->type != HV_PARAM_DURATION;
        rc |= json_object_set_new(o, "min",
                                  whole ? json_integer((json_int_t)d->min) : json_real(d->min));
        rc |= json_object_set_new(o, "max",
                                  whole ? json_integer((json_int_t)d->max) : json_real(d->max));
    }
    if (d->type == HV_PARAM_SIZE)
        rc |= json_object_set_new(o, "unit", json_string("bytes"));
    if (d->type == HV_PARAM_DURATION)
        rc |= json_object_set_new(o, "unit", json_string("seconds"));
    if (d->multiple != 0)
        rc |= json_object_set_new(o, "multiple_of", json_integer(d->multiple));
    if (d->choices != NULL) {
        rc |= json_object_set_new(o, "choices", strings_json(d->choices));
    }
    if (d->word != NULL)
        rc |= json_object_set_new(o, "or", json_string(d->word));
    if (d->type == HV_PARAM_STRING || d->type == HV_PARAM_TARGET)
        rc |= json_object_set_new(o, "max_length", json_integer(d->max_len ? d->max_len : 256));
    if (rc != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *engine_json(const struct hv_engine_def *e)
{
    json_t *params = json_array();
    for (const struct hv_param_def *d = e->params_def; params != NULL && d->name != NULL; d++) {
        if (json_array_append_new(params, param_json(e, d)) != 0) {
            json_decref(params);
            params = NULL;
        }
    }
    if (params == NULL)
        return NULL;
    json_t *o = json_pack("{s:s, s:s, s:s, s:b, s:b, s:o}", "kind", e->kind, "engine", e->engine,
                          "summary", e->summary, "needs_peer", e->needs_peer, "external",
                          e->external, "params", params);
    if (o != NULL && e->metrics != NULL &&
        json_object_set_new(o, "metrics", strings_json(e->metrics)) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *hv_engines_json(void)
{
    json_t *list = json_array();
    if (list == NULL)
        return NULL;
    const struct hv_engine_def *e;
    for (size_t i = 0; (e = hv_engine_def_at(i)) != NULL; i++) {
        if (json_array_append_new(list, engine_json(e)) != 0) {
            json_decref(list);
            return NULL;
        }
    }
    return list;
}
