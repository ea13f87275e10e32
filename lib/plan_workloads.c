/* plan_workloads.c — a plan's workloads into variants; see
 * plan_workloads.h.
 *
 * One workload becomes one variant per combination of its sweeps. Each
 * step is its own function: find the engine, gather the sweeps, make and
 * check each variant, store the normalised params back into the plan's
 * document, and check the peer of a two-sided engine. */
#include "plan_workloads.h"

#include "errors.h"
#include "jspec.h"
#include "params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One swept param: its name and its array of values (borrowed from the
 * workload's params). */
struct sweep {
    const char *key;
    json_t *values;
};

/* The sweeps of one workload. */
struct sweeps {
    struct sweep *s; /* owned */
    size_t n;
    size_t variants; /* the product of their sizes */
};

/* Appends to errors each entry of add that it does not hold yet (sweep
 * variants of one workload report the same problem once). Steals add. */
static void merge_errors(json_t *errors, json_t *add)
{
    size_t i;
    json_t *e;
    json_array_foreach(add, i, e)
    {
        bool seen = false;
        size_t k;
        json_t *o;
        json_array_foreach(errors, k, o) seen = seen || json_equal(o, e);
        if (!seen)
            json_array_append(errors, e);
    }
    json_decref(add);
}

/* Gathers the params of def that params gives as arrays. Returns 0 (a bad
 * sweep appended to errors and counted in *invalid), or -1 when memory ran
 * out. */
static int gather_sweeps(const struct hv_engine_def *def, json_t *params, const char *path,
                         struct sweeps *out, json_t *errors, int *invalid)
{
    size_t cap = 0;
    for (const char *const *s = def->sweepable; s != NULL && *s != NULL; s++)
        cap++;
    *out = (struct sweeps){.s = calloc(cap ? cap : 1, sizeof *out->s), .variants = 1};
    if (out->s == NULL)
        return -1;
    for (const char *const *s = def->sweepable; s != NULL && *s != NULL; s++) {
        json_t *v = json_object_get(params, *s);
        if (!json_is_array(v))
            continue;
        char sp[600];
        hv_jpath(sp, sizeof sp, path, *s);
        size_t n = json_array_size(v);
        if (n == 0 || n > HV_PLAN_MAX_SWEEP) {
            hv_errors_add(errors, sp, "a sweep needs 1 to %d values", HV_PLAN_MAX_SWEEP);
            (*invalid)++;
            return 0;
        }
        for (size_t a = 0; a < n; a++)
            for (size_t b = 0; b < a; b++)
                if (json_equal(json_array_get(v, a), json_array_get(v, b))) {
                    hv_errors_add(errors, sp, "repeats the value at index %zu", b);
                    (*invalid)++;
                    return 0;
                }
        out->s[out->n++] = (struct sweep){.key = *s, .values = v};
        out->variants *= n;
    }
    return 0;
}

/* The text of a sweep value for a variant id ("8", "256k" stays as
 * written). */
static void value_text(const json_t *v, char *buf, size_t len)
{
    if (json_is_string(v))
        snprintf(buf, len, "%s", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(buf, len, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, len, "%g", json_real_value(v));
    else
        snprintf(buf, len, "%s", json_is_true(v) ? "true" : "false");
}

/* Variant k of params: a copy with each sweep at its value for k, and the
 * suffix that names it ("qd=8,streams=2"). NULL when memory runs out. */
static json_t *variant_params(const json_t *params, const struct sweeps *sw, size_t k, char *suffix,
                              size_t len)
{
    json_t *vp = json_deep_copy(params);
    size_t rest = k, n = 0;
    suffix[0] = '\0';
    for (size_t s = 0; vp != NULL && s < sw->n; s++) {
        size_t count = json_array_size(sw->s[s].values);
        json_t *value = json_array_get(sw->s[s].values, rest % count);
        rest /= count;
        if (json_object_set(vp, sw->s[s].key, value) != 0) {
            json_decref(vp);
            return NULL;
        }
        char vt[64];
        value_text(value, vt, sizeof vt);
        n += (size_t)snprintf(suffix + n, n < len ? len - n : 0, "%s%s=%s", s ? "," : "",
                              sw->s[s].key, vt);
    }
    return vp;
}

/* Appends one variant of workload w with params (stolen). Returns 0, or -1
 * when memory ran out (params released). */
static int add_variant(struct hv_plan *plan, const json_t *w, const char *suffix, json_t *params)
{
    const char *id = json_string_value(json_object_get(w, "id"));
    size_t len = strlen(id) + strlen(suffix) + 3;
    char *vid = malloc(len);
    if (vid == NULL) {
        json_decref(params);
        return -1;
    }
    snprintf(vid, len, suffix[0] ? "%s[%s]" : "%s", id, suffix);
    plan->workloads[plan->n_workloads++] = (struct hv_workload){
        .id = vid,
        .base_id = id,
        .kind = json_string_value(json_object_get(w, "kind")),
        .engine = json_string_value(json_object_get(w, "engine")),
        .params = params,
    };
    return 0;
}

/* Adds each sweep's normalised value in vp to its list in normalised,
 * once. Returns 0, or -1 when memory ran out. */
static int collect_sweeps(json_t *normalised, const struct sweeps *sw, const json_t *vp)
{
    for (size_t s = 0; s < sw->n; s++) {
        json_t *arr = json_object_get(normalised, sw->s[s].key);
        if (arr == NULL && json_object_set_new(normalised, sw->s[s].key, arr = json_array()) != 0)
            return -1;
        json_t *nv = json_object_get(vp, sw->s[s].key);
        bool seen = false;
        for (size_t a = 0; a < json_array_size(arr); a++)
            seen = seen || json_equal(json_array_get(arr, a), nv);
        if (!seen && json_array_append(arr, nv) != 0)
            return -1;
    }
    return 0;
}

/* Makes, checks and adds every variant; the normalised values of each
 * sweep into *normalised. Returns 0, or -1 when memory ran out. */
static int add_variants(struct hv_plan *plan, const struct hv_engine_def *def, json_t *w,
                        const struct sweeps *sw, const char *path, json_t *normalised,
                        json_t *errors, int *invalid)
{
    const json_t *params = json_object_get(w, "params");
    for (size_t k = 0; k < sw->variants; k++) {
        char suffix[256];
        json_t *vp = variant_params(params, sw, k, suffix, sizeof suffix);
        json_t *verr = json_array();
        if (vp == NULL || verr == NULL) {
            json_decref(vp);
            json_decref(verr);
            return -1;
        }
        *invalid += hv_engine_def_check(def, vp, path, verr) > 0 ? 1 : 0;
        merge_errors(errors, verr);
        if (collect_sweeps(normalised, sw, vp) != 0) {
            json_decref(vp);
            return -1;
        }
        if (add_variant(plan, w, suffix, vp) != 0)
            return -1;
    }
    return 0;
}

static bool is_guest(const struct hv_plan *plan, const char *name)
{
    for (size_t i = 0; i < plan->n_guests; i++)
        if (strcmp(plan->guests[i], name) == 0)
            return true;
    return false;
}

/* A two-sided engine's peer: given, not the target running the workload,
 * resolved ("host" is the plan's host) into the variants from first on. */
static void check_peer(struct hv_plan *plan, const json_t *stored, const char *base, size_t first,
                       json_t *errors, int *impossible)
{
    const char *kind = plan->workloads[first].kind;
    const char *peer = json_string_value(json_object_get(stored, "peer"));
    char pp[512], p[600];
    hv_jpath(pp, sizeof pp, base, "params");
    hv_jpath(p, sizeof p, pp, "peer");
    if (peer == NULL) {
        hv_errors_add(errors, p, "a %s workload needs a peer target to talk to", kind);
        (*impossible)++;
        return;
    }
    const char *resolved = strcmp(peer, "host") == 0 ? plan->host : peer;
    bool has_guests = plan->n_guests > 0 ||
                      json_object_get(json_object_get(plan->doc, "targets"), "guests") != NULL;
    if (!has_guests && strcmp(resolved, plan->host) == 0) {
        hv_errors_add(errors, p,
                      "the peer is the host, which runs this workload itself; "
                      "add guests or name another target");
        (*impossible)++;
        return;
    }
    if (is_guest(plan, resolved)) {
        hv_errors_add(errors, p, "the peer '%s' is one of the guests running this workload",
                      resolved);
        (*impossible)++;
        return;
    }
    for (size_t k = first; k < plan->n_workloads; k++)
        plan->workloads[k].peer = resolved;
}

/* The engine of workload w, or NULL with the error appended. */
static const struct hv_engine_def *find_engine(json_t *w, const char *base, json_t *errors)
{
    const char *kind = json_string_value(json_object_get(w, "kind"));
    const char *engine = json_string_value(json_object_get(w, "engine"));
    const struct hv_engine_def *def = hv_engine_def_find(kind, engine);
    if (def == NULL) {
        char p[512];
        hv_jpath(p, sizeof p, base, "engine");
        hv_errors_add(errors, p, "no engine '%s' for kind '%s'; GET /api/v1/catalog lists them",
                      engine, kind);
    }
    return def;
}

int hv_plan_expand_workload(struct hv_plan *plan, json_t *w, size_t i, json_t *errors, int *invalid,
                            int *impossible)
{
    char base[64], p[512];
    hv_jpath_index(base, sizeof base, "/workloads", i);
    const struct hv_engine_def *def = find_engine(w, base, errors);
    if (def == NULL) {
        (*impossible)++;
        return 0;
    }
    hv_jpath(p, sizeof p, base, "params");
    struct sweeps sw;
    int before = *invalid;
    if (gather_sweeps(def, json_object_get(w, "params"), p, &sw, errors, invalid) != 0)
        return -1;
    int rc = 0;
    json_t *normalised = NULL;
    size_t first = plan->n_workloads;
    if (*invalid > before) {
        goto done;
    } else if (plan->n_workloads + sw.variants > HV_PLAN_MAX_VARIANTS) {
        hv_errors_add(errors, p, "the plan's sweeps make more than %d workload variants",
                      HV_PLAN_MAX_VARIANTS);
        (*invalid)++;
        goto done;
    }
    normalised = json_object();
    rc = normalised == NULL ? -1 : add_variants(plan, def, w, &sw, p, normalised, errors, invalid);
    if (rc != 0 || *invalid > before)
        goto done;
    /* The stored plan keeps what was written, normalised: the first
     * variant's params with each sweep as its normalised list. */
    json_t *stored = json_deep_copy(plan->workloads[first].params);
    if (stored == NULL || json_object_update(stored, normalised) != 0) {
        json_decref(stored);
        rc = -1;
        goto done;
    }
    if (json_object_set_new(w, "params", stored) != 0) {
        rc = -1;
        goto done;
    }
    if (def->needs_peer && plan->host != NULL)
        check_peer(plan, stored, base, first, errors, impossible);
done:
    json_decref(normalised);
    free(sw.s);
    return rc;
}
