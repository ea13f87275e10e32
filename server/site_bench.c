/* site_bench.c — see site_bench.h. */
#include "site_bench.h"

#include "db_targets.h"
#include "errors.h"
#include "jspec.h"
#include "params.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The characters of a name in a list of targets before "and N more": an
 * error message has room for about 500. */
#define LIST_BUDGET 160

static const char *const bench_kinds[] = {"cpu", "disk", "net", NULL};

static const struct hv_jfield bench_fields[] = {
    {.name = "name", .type = HV_J_STRING, .required = true, .max_len = 64},
    {.name = "kind", .type = HV_J_STRING, .required = true, .choices = bench_kinds},
    {.name = "metric", .type = HV_J_STRING, .required = true, .max_len = 128},
    {.name = "unit", .type = HV_J_STRING, .required = true, .max_len = 32},
    {.name = "higher_is_better", .type = HV_J_BOOL, .required = true},
    {0},
};

/* Checks what the field table cannot: a well-formed name, a metric that
 * says something, and no (name, kind) declared earlier in the array. */
static void check_one(const json_t *arr, size_t i, const char *path, json_t *errors)
{
    const json_t *b = json_array_get(arr, i);
    const char *name = json_string_value(json_object_get(b, "name"));
    const char *kind = json_string_value(json_object_get(b, "kind"));
    char p[512];
    hv_jpath(p, sizeof p, path, "name");
    const char *why = name[0] == '\0' ? "must not be empty" : hv_params_bench_name_error(name);
    if (why != NULL) {
        hv_errors_add(errors, p, "%s", why);
        return;
    }
    if (json_string_length(json_object_get(b, "metric")) == 0) {
        char m[512];
        hv_jpath(m, sizeof m, path, "metric");
        hv_errors_add(errors, m, "must not be empty");
    }
    for (size_t k = 0; k < i; k++) {
        const json_t *o = json_array_get(arr, k);
        if (strcmp(json_string_value(json_object_get(o, "name")), name) == 0 &&
            strcmp(json_string_value(json_object_get(o, "kind")), kind) == 0) {
            hv_errors_add(errors, p, "\"%s\" (%s) is declared twice (first at index %zu)", name,
                          kind, k);
            return;
        }
    }
}

void hv_site_bench_check_decl(const json_t *benchmarks, const char *path, json_t *errors)
{
    if (benchmarks == NULL)
        return;
    if (!json_is_array(benchmarks)) {
        hv_errors_add(errors, path, "must be an array, not %s", hv_jtype_name(benchmarks));
        return;
    }
    if (json_array_size(benchmarks) > HV_SITE_BENCH_MAX) {
        hv_errors_add(errors, path, "must have at most %d entries", HV_SITE_BENCH_MAX);
        return;
    }
    /* An entry is compared with earlier ones only when all so far are
     * well formed, so check_one() may rely on their strings. */
    bool all_ok = true;
    char p[512];
    for (size_t i = 0; i < json_array_size(benchmarks); i++) {
        hv_jpath_index(p, sizeof p, path, i);
        size_t before = json_array_size(errors);
        if (hv_jspec_check(json_array_get(benchmarks, i), p, bench_fields, errors) == 0 && all_ok)
            check_one(benchmarks, i, p, errors);
        all_ok = all_ok && json_array_size(errors) == before;
    }
}

/* The index in the plan document's workloads of the workload written with
 * id, or -1. */
static long doc_index(const struct hv_plan *plan, const char *id)
{
    const json_t *arr = json_object_get(plan->doc, "workloads");
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const char *wid = json_string_value(json_object_get(json_array_get(arr, i), "id"));
        if (wid != NULL && strcmp(wid, id) == 0)
            return (long)i;
    }
    return -1;
}

/* Whether name is among the strings of arr. */
static bool in_array(const json_t *arr, const char *name)
{
    for (size_t i = 0; i < json_array_size(arr); i++)
        if (strcmp(json_string_value(json_array_get(arr, i)), name) == 0)
            return true;
    return false;
}

/* The targets running workload w, each once: the host first, the guests
 * in plan order, the net peer last. Every round holds the same units, so
 * the first round tells. Returns the count; *names (free it) points into
 * the plan. */
static size_t running_targets(const struct hv_plan *plan, const struct hv_expansion *x, size_t w,
                              const char ***names)
{
    size_t cap = plan->n_guests + 2, n = 0;
    const char **cand = calloc(cap, sizeof *cand);
    bool *used = calloc(cap, sizeof *used);
    *names = calloc(cap, sizeof **names);
    if (cand == NULL || used == NULL || *names == NULL) {
        free(cand);
        free(used);
        free(*names);
        *names = NULL;
        return 0;
    }
    size_t nc = 0;
    if (plan->host != NULL)
        cand[nc++] = plan->host;
    for (size_t g = 0; g < plan->n_guests; g++)
        cand[nc++] = plan->guests[g];
    if (plan->workloads[w].peer != NULL)
        cand[nc++] = plan->workloads[w].peer;
    for (size_t j = 0; j < x->n_jobs; j++) {
        if (x->jobs[j].workload != w || x->jobs[j].repetition != 1)
            continue;
        for (size_t c = 0; c < nc; c++)
            if (!used[c] && strcmp(cand[c], x->jobs[j].target) == 0) {
                used[c] = true;
                break;
            }
    }
    for (size_t c = 0; c < nc; c++)
        if (used[c])
            (*names)[n++] = cand[c];
    free(cand);
    free(used);
    return n;
}

/* Writes the names of arr to f as `"a", "b"` (quoted) or `a, b`, up to
 * about LIST_BUDGET characters, then ", and N more"; "none" when empty.
 * peer and unregistered, when given, annotate names. */
static void write_list(FILE *f, const json_t *arr, bool quoted, const char *peer,
                       const json_t *unregistered)
{
    size_t n = json_array_size(arr), used = 0, i;
    if (n == 0) {
        fputs("none", f);
        return;
    }
    for (i = 0; i < n; i++) {
        const char *name = json_string_value(json_array_get(arr, i));
        if (i > 0 && used + strlen(name) > LIST_BUDGET)
            break;
        used += strlen(name) + 2;
        fprintf(f, quoted ? "%s\"%s\"" : "%s%s", i ? ", " : "", name);
        if (peer != NULL && strcmp(name, peer) == 0)
            fputs(" (the peer)", f);
        if (unregistered != NULL && in_array(unregistered, name))
            fputs(" (not registered)", f);
    }
    if (i < n)
        fprintf(f, ", and %zu more", n - i);
}

/* Adds the error of workload w, which the targets in holders' "lacking"
 * do not declare. */
static void add_lacking(const struct hv_plan *plan, size_t w, const json_t *holders, json_t *errors)
{
    const struct hv_workload *wl = &plan->workloads[w];
    const json_t *lacking = json_object_get(holders, "lacking");
    const char *name = json_string_value(json_object_get(wl->params, "name"));
    char *msg = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&msg, &len);
    if (f == NULL)
        return;
    bool one = json_array_size(lacking) == 1;
    fputs(one ? "target " : "targets ", f);
    write_list(f, lacking, true, wl->peer, json_object_get(holders, "unregistered"));
    fprintf(f, " %s no site benchmark \"%s\" (%s); targets that have it: ", one ? "has" : "have",
            name, wl->kind);
    write_list(f, json_object_get(holders, "having"), false, NULL, NULL);
    if (fclose(f) != 0) {
        free(msg);
        return;
    }
    char base[64], params[128], path[160];
    long i = doc_index(plan, wl->base_id);
    hv_jpath_index(base, sizeof base, "/workloads", i < 0 ? 0 : (size_t)i);
    hv_jpath(params, sizeof params, base, "params");
    hv_jpath(path, sizeof path, params, "name");
    hv_errors_add(errors, path, "%s", msg);
    free(msg);
}

/* Whether an earlier variant of workload w's plan entry names the same
 * benchmark, so its targets were checked already. */
static bool checked_before(const struct hv_plan *plan, size_t w)
{
    const struct hv_workload *wl = &plan->workloads[w];
    for (size_t k = 0; k < w; k++) {
        const struct hv_workload *o = &plan->workloads[k];
        if (strcmp(o->base_id, wl->base_id) == 0 &&
            json_equal(json_object_get(o->params, "name"), json_object_get(wl->params, "name")))
            return true;
    }
    return false;
}

enum hv_db_status hv_site_bench_check_plan(const struct hv_plan *plan, const struct hv_expansion *x,
                                           json_t *errors)
{
    for (size_t w = 0; w < plan->n_workloads; w++) {
        const struct hv_workload *wl = &plan->workloads[w];
        const char *name = json_string_value(json_object_get(wl->params, "name"));
        if (strcmp(wl->engine, "custom") != 0 || name == NULL || checked_before(plan, w))
            continue;
        const char **names;
        size_t n = running_targets(plan, x, w, &names);
        if (names == NULL)
            return HV_DB_ERROR;
        json_t *holders = NULL;
        enum hv_db_status s =
            n == 0 ? HV_DB_NONE : hv_db_target_bench_holders(name, wl->kind, names, n, &holders);
        free(names);
        if (s == HV_DB_NONE)
            continue;
        if (s != HV_DB_OK)
            return s;
        if (json_array_size(json_object_get(holders, "lacking")) > 0)
            add_lacking(plan, w, holders, errors);
        json_decref(holders);
    }
    return HV_DB_OK;
}

/* Appends each entry of add that errors does not hold yet (variants of a
 * sweep running on the same target may say the same); steals add. */
static void add_unique(json_t *errors, json_t *add)
{
    size_t i, k;
    json_t *e, *o;
    json_array_foreach(add, i, e)
    {
        bool seen = false;
        json_array_foreach(errors, k, o) seen = seen || json_equal(o, e);
        if (!seen)
            json_array_append(errors, e);
    }
    json_decref(add);
}

/* The plan's targets, each once: the host, the guests, the net peers.
 * Returns a new array (free it) of *n names pointing into the plan, or
 * NULL when memory runs out. */
static const char **plan_targets(const struct hv_plan *plan, size_t *n)
{
    const char **names = calloc(plan->n_guests + plan->n_workloads + 1, sizeof *names);
    *n = 0;
    if (names == NULL)
        return NULL;
    names[(*n)++] = plan->host;
    for (size_t g = 0; g < plan->n_guests; g++)
        names[(*n)++] = plan->guests[g];
    for (size_t w = 0; w < plan->n_workloads; w++) {
        const char *peer = plan->workloads[w].peer;
        bool seen = peer == NULL;
        for (size_t k = 0; !seen && k < *n; k++)
            seen = strcmp(names[k], peer) == 0;
        if (!seen)
            names[(*n)++] = peer;
    }
    return names;
}

/* The limits of workload w's engine on each registered target that runs
 * it, from facts ({"NAME": {"cpus"}}). Returns 0, or -1 when memory ran
 * out. */
static int fit_workload(const struct hv_plan *plan, const struct hv_expansion *x, size_t w,
                        const struct hv_engine_def *def, const json_t *facts, json_t *errors)
{
    const struct hv_workload *wl = &plan->workloads[w];
    const char **names;
    size_t n = running_targets(plan, x, w, &names);
    if (names == NULL)
        return -1;
    char base[64], path[128];
    long i = doc_index(plan, wl->base_id);
    hv_jpath_index(base, sizeof base, "/workloads", i < 0 ? 0 : (size_t)i);
    hv_jpath(path, sizeof path, base, "params");
    for (size_t k = 0; k < n; k++) {
        const json_t *f = json_object_get(facts, names[k]);
        struct hv_target_facts t = {.name = names[k],
                                    .cpus = (long)json_integer_value(json_object_get(f, "cpus"))};
        json_t *found = json_array();
        if (found == NULL) {
            free(names);
            return -1;
        }
        hv_engine_def_fit(def, wl->params, &t, path, found);
        add_unique(errors, found);
    }
    free(names);
    return 0;
}

enum hv_db_status hv_site_check_limits(const struct hv_plan *plan, const struct hv_expansion *x,
                                       json_t *errors)
{
    bool any = false;
    for (size_t w = 0; w < plan->n_workloads; w++) {
        const struct hv_engine_def *def =
            hv_engine_def_find(plan->workloads[w].kind, plan->workloads[w].engine);
        any |= def != NULL && def->fit != NULL;
    }
    if (!any)
        return HV_DB_OK;
    size_t n;
    const char **names = plan_targets(plan, &n);
    if (names == NULL)
        return HV_DB_ERROR;
    json_t *facts = NULL;
    enum hv_db_status s = hv_db_target_limit_facts(names, n, &facts);
    free(names);
    for (size_t w = 0; s == HV_DB_OK && w < plan->n_workloads; w++) {
        const struct hv_engine_def *def =
            hv_engine_def_find(plan->workloads[w].kind, plan->workloads[w].engine);
        if (def != NULL && def->fit != NULL && fit_workload(plan, x, w, def, facts, errors) != 0)
            s = HV_DB_ERROR;
    }
    json_decref(facts);
    return s;
}
