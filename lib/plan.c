/* plan.c — see plan.h.
 *
 * Validation runs in two passes. The first checks structure (types,
 * required members, ranges, units: HTTP 400); only a well-formed plan
 * reaches the second, which checks what can run (factors and levels in the
 * catalogue, engines, peers, labels that resolve: HTTP 422). Both report
 * every problem with its JSON Pointer, so one round trip fixes them all. */
#include "plan.h"

#include "rng.h"

#include "adaptive.h"
#include "errors.h"
#include "factors.h"
#include "jspec.h"
#include "names.h"
#include "params.h"
#include "plan_targets.h"
#include "plan_workloads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kinds[] = {"cpu", "disk", "net", NULL};
static const char *const designs[] = {"full", "one-at-a-time", NULL};
static const char *const concurrencies[] = {"one-guest", "all-guests", "ramp", NULL};
static const char *const orders[] = {"randomized", "sequential", NULL};
/* What the server does with a job that ran beside other work (busy):
 * repeat it in its round and set it aside, or keep it (migrations/052). */
static const char *const noises[] = {"repeat", "keep", NULL};

static const struct hv_jfield plan_fields[] = {
    {.name = "name", .type = HV_J_STRING, .required = true, .max_len = 128},
    {.name = "description", .type = HV_J_STRING, .max_len = 4096},
    {.name = "targets", .type = HV_J_OBJECT, .required = true},
    {.name = "baseline", .type = HV_J_STRING, .max_len = 512},
    {.name = "workloads", .type = HV_J_ARRAY, .required = true, .max_len = HV_PLAN_MAX_WORKLOADS},
    {.name = "factors", .type = HV_J_OBJECT},
    {.name = "design", .type = HV_J_STRING, .choices = designs},
    {.name = "concurrency", .type = HV_J_STRING, .choices = concurrencies},
    {.name = "ramp", .type = HV_J_OBJECT},
    {.name = "repetitions", .type = HV_J_OBJECT},
    {.name = "order", .type = HV_J_STRING, .choices = orders},
    {.name = "noise", .type = HV_J_STRING, .choices = noises},
    {.name = "seed", .type = HV_J_INTEGER, .min = 0, .max = 9007199254740991.0},
    {.name = "margin_pct", .type = HV_J_NUMBER, .min = 0.1, .max = 50},
    /* A fleet plan's (plan_fleet.h): how many of its hosts run at once. */
    {.name = "max_parallel_hosts", .type = HV_J_INTEGER, .min = 1, .max = 10000},
    {.name = "weights", .type = HV_J_OBJECT},
    {.name = "allow_restart", .type = HV_J_BOOL},
    {.name = "tuning", .type = HV_J_OBJECT},
    {.name = "hooks", .type = HV_J_OBJECT},
    {0},
};

/* The drain hooks: before_host and after_host, each a url the server
 * calls or a local command the host worker's configuration names (the
 * server checks the url's form and the name against the host); how long
 * a before_host answering "not yet" is waited for, and how often it is
 * asked again (server/db_hooks.h). */
static const struct hv_jfield hooks_fields[] = {
    {.name = "before_host", .type = HV_J_OBJECT},
    {.name = "after_host", .type = HV_J_OBJECT},
    {.name = "timeout", .type = HV_J_INTEGER, .min = 1, .max = HV_PLAN_HOOK_TIMEOUT_MAX},
    {.name = "interval", .type = HV_J_INTEGER, .min = 1, .max = HV_PLAN_HOOK_INTERVAL_MAX},
    {0},
};

static const struct hv_jfield hook_fields[] = {
    {.name = "url", .type = HV_J_STRING, .max_len = 2048},
    {.name = "local", .type = HV_J_STRING, .max_len = 64},
    {0},
};

/* Checks doc's hooks; returns the number of problems added to errors. */
static int check_hooks(const json_t *hooks, json_t *errors)
{
    int bad = hv_jspec_check(hooks, "/hooks", hooks_fields, errors);
    const char *kind;
    json_t *h;
    json_object_foreach((json_t *)hooks, kind, h)
    {
        if (!json_is_object(h))
            continue;
        char path[64];
        hv_jpath(path, sizeof path, "/hooks", kind);
        if (hv_jspec_check(h, path, hook_fields, errors) > 0) {
            bad++;
            continue;
        }
        const char *local = json_string_value(json_object_get(h, "local"));
        if ((json_object_get(h, "url") != NULL) == (local != NULL)) {
            hv_errors_add(errors, path, "names either a url or a local command, not both");
            bad++;
        } else if (local != NULL) {
            /* the host worker runs the command it names with the plan's
             * host in its arguments */
            char lp[96];
            hv_jpath(lp, sizeof lp, path, "local");
            bad += hv_name_host_check(json_object_get(h, "local"), lp, errors);
        }
    }
    return bad;
}

/* The report's weights of the subsystems in the overall efficiency; an
 * unnamed subsystem weighs 1. */
static const struct hv_jfield weight_fields[] = {
    {.name = "cpu", .type = HV_J_NUMBER, .min = 0, .max = 100},
    {.name = "disk", .type = HV_J_NUMBER, .min = 0, .max = 100},
    {.name = "net", .type = HV_J_NUMBER, .min = 0, .max = 100},
    {0},
};

static const struct hv_jfield workload_fields[] = {
    {.name = "id", .type = HV_J_STRING, .required = true, .max_len = 32},
    {.name = "kind", .type = HV_J_STRING, .required = true, .choices = kinds},
    {.name = "engine", .type = HV_J_STRING, .max_len = 32},
    {.name = "params", .type = HV_J_OBJECT},
    {0},
};

static const struct hv_jfield repetition_fields[] = {
    {.name = "min", .type = HV_J_INTEGER, .min = 1, .max = HV_PLAN_MAX_REPETITIONS},
    {.name = "max", .type = HV_J_INTEGER, .min = 1, .max = HV_PLAN_MAX_REPETITIONS},
    {.name = "ci_pct", .type = HV_J_NUMBER, .min = 0.01, .max = 100},
    {0},
};

static const struct hv_jfield ramp_fields[] = {
    {.name = "from", .type = HV_J_INTEGER, .min = 1, .max = HV_PLAN_MAX_GUESTS},
    {.name = "to", .type = HV_J_INTEGER, .min = 1, .max = HV_PLAN_MAX_GUESTS},
    {.name = "step", .type = HV_J_INTEGER, .min = 1, .max = HV_PLAN_MAX_GUESTS},
    {0},
};

/* ------------------------------------------------------------------ */
/* Small helpers */

static bool valid_id(const char *s)
{
    if (*s == '\0')
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
            return false;
    return true;
}

/* The nesting depth of v (a scalar is 0). */
static int depth(const json_t *v, int limit)
{
    int d = 0;
    if (limit < 0)
        return 1;
    if (json_is_object(v)) {
        const char *k;
        json_t *c;
        json_object_foreach((json_t *)v, k, c)
        {
            int cd = depth(c, limit - 1);
            d = cd > d ? cd : d;
        }
        return d + 1;
    }
    if (json_is_array(v)) {
        size_t i;
        json_t *c;
        json_array_foreach(v, i, c)
        {
            int cd = depth(c, limit - 1);
            d = cd > d ? cd : d;
        }
        return d + 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Pass 1: structure */

/* The workloads looked at one by one: a list past HV_PLAN_MAX_WORKLOADS
 * is refused as a whole (the spec says so), and its entries past the limit
 * are not checked one by one, so a huge list costs no more than a full
 * one. */
static size_t workloads_checked(const json_t *list)
{
    size_t n = json_array_size(list);
    return n < HV_PLAN_MAX_WORKLOADS ? n : HV_PLAN_MAX_WORKLOADS;
}

static int check_workloads(json_t *list, json_t *errors)
{
    int problems = 0;
    char base[64], p[512];
    if (json_array_size(list) == 0) {
        hv_errors_add(errors, "/workloads", "must name at least one workload");
        return 1;
    }
    /* id -> index of the first workload with it: one lookup a workload */
    json_t *seen = json_object();
    if (seen == NULL)
        return 1;
    for (size_t i = 0; i < workloads_checked(list); i++) {
        json_t *w = json_array_get(list, i);
        hv_jpath_index(base, sizeof base, "/workloads", i);
        problems += hv_jspec_check(w, base, workload_fields, errors);
        if (!json_is_object(w))
            continue;
        json_t *id = json_object_get(w, "id");
        if (json_is_string(id)) {
            hv_jpath(p, sizeof p, base, "id");
            const char *s = json_string_value(id);
            if (!valid_id(s) || strlen(s) != json_string_length(id)) {
                hv_errors_add(errors, p, "must use only a-z, 0-9, '-' and '_'");
                problems++;
            }
            const json_t *first = json_object_getn(seen, s, json_string_length(id));
            if (first != NULL) {
                hv_errors_add(errors, p, "repeats the id of /workloads/%" JSON_INTEGER_FORMAT,
                              json_integer_value(first));
                problems++;
            } else {
                json_object_setn_new(seen, s, json_string_length(id), json_integer((json_int_t)i));
            }
        }
        if (json_object_get(w, "engine") == NULL)
            json_object_set_new(w, "engine", json_string("builtin"));
        if (json_object_get(w, "params") == NULL)
            json_object_set_new(w, "params", json_object());
    }
    json_decref(seen);
    return problems;
}

static int normalise_repetitions(json_t *doc, json_t *errors)
{
    json_t *reps = json_object_get(doc, "repetitions");
    if (reps == NULL) {
        reps = json_object();
        json_object_set_new(doc, "repetitions", reps);
    }
    if (hv_jspec_check(reps, "/repetitions", repetition_fields, errors) > 0)
        return 1;
    if (json_object_get(reps, "min") == NULL)
        json_object_set_new(reps, "min", json_integer(3));
    json_int_t mn = json_integer_value(json_object_get(reps, "min"));
    if (json_object_get(reps, "max") == NULL)
        json_object_set_new(reps, "max", json_integer(mn));
    if (json_integer_value(json_object_get(reps, "max")) < mn) {
        hv_errors_add(errors, "/repetitions/max", "must be at least min (%lld)", (long long)mn);
        return 1;
    }
    if (json_object_get(reps, "ci_pct") == NULL)
        json_object_set_new(reps, "ci_pct", json_real(HV_CI_PCT_DEFAULT));
    return 0;
}

/* Weights: each in range, and not all three 0 (no overall score). */
static int check_weights(const json_t *weights, json_t *errors)
{
    if (hv_jspec_check(weights, "/weights", weight_fields, errors) > 0)
        return 1;
    double total = 3.0 - (double)json_object_size(weights);
    const char *key;
    const json_t *w;
    json_object_foreach((json_t *)weights, key, w) total += json_number_value(w);
    if (total > 0.0)
        return 0;
    hv_errors_add(errors, "/weights", "at least one weight must be above 0");
    return 1;
}

/* A site factor's levels: whatever its host's worker declares (checked
 * against the host's facts by the server), as strings (an integer is
 * written as one). */
static void check_site_levels(const char *name, json_t *levels, const char *p, json_t *errors,
                              int *invalid)
{
    char lp[600], num[32];
    const char *why = hv_site_name_problem(name + strlen(HV_SITE_PREFIX));
    if (why != NULL) {
        hv_errors_add(errors, p, "the site factor name after \"" HV_SITE_PREFIX "\" %s", why);
        (*invalid)++;
        return;
    }
    for (size_t i = 0; i < json_array_size(levels); i++) {
        json_t *l = json_array_get(levels, i);
        snprintf(lp, sizeof lp, "%s/%zu", p, i);
        if (json_is_integer(l)) {
            snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(l));
            json_array_set_new(levels, i, json_string(num));
            l = json_array_get(levels, i);
        }
        if (!json_is_string(l)) {
            hv_errors_add(errors, lp, "must be a string or an integer, not %s", hv_jtype_name(l));
            (*invalid)++;
            continue;
        }
        why = hv_site_level_problem(json_string_value(l));
        if (why == NULL && json_string_length(l) != strlen(json_string_value(l)))
            why = "must not hold NUL characters";
        if (why != NULL) {
            hv_errors_add(errors, lp, "%s", why);
            (*invalid)++;
            continue;
        }
        for (size_t j = 0; j < i; j++)
            if (json_equal(l, json_array_get(levels, j))) {
                hv_errors_add(errors, lp, "repeats level %zu", j);
                (*invalid)++;
                break;
            }
    }
}

/* Factors are checked against the catalogue here too: an unknown factor
 * or level is a 422 (well formed, but nothing here can apply it). Levels
 * are normalised in place. */
static void check_factors(json_t *factors, json_t *errors, int *invalid, int *impossible)
{
    char p[512], lp[600], level[64], err[256];
    if (json_object_size(factors) > HV_PLAN_MAX_FACTORS) {
        hv_errors_add(errors, "/factors", "must have at most %d factors", HV_PLAN_MAX_FACTORS);
        (*invalid)++;
        return;
    }
    const char *name;
    json_t *levels;
    json_object_foreach(factors, name, levels)
    {
        hv_jpath(p, sizeof p, "/factors", name);
        if (!json_is_array(levels) || json_array_size(levels) == 0 ||
            json_array_size(levels) > HV_PLAN_MAX_LEVELS) {
            hv_errors_add(errors, p, "must be an array of 1 to %d levels, the default first",
                          HV_PLAN_MAX_LEVELS);
            (*invalid)++;
            continue;
        }
        if (hv_site_factor_is(name)) {
            check_site_levels(name, levels, p, errors, invalid);
            continue;
        }
        const struct hv_factor_def *f = hv_factor_find(name);
        if (f == NULL) {
            hv_errors_add(errors, p, "unknown factor '%s'; GET /api/v1/catalog lists them", name);
            (*impossible)++;
            continue;
        }
        for (size_t i = 0; i < json_array_size(levels); i++) {
            json_t *l = json_array_get(levels, i);
            snprintf(lp, sizeof lp, "%s/%zu", p, i);
            if (!json_is_string(l) && !json_is_integer(l)) {
                hv_errors_add(errors, lp, "must be a string or an integer, not %s",
                              hv_jtype_name(l));
                (*invalid)++;
                continue;
            }
            if (hv_factor_level(f, l, level, sizeof level, err, sizeof err) != 0) {
                hv_errors_add(errors, lp, "%s", err);
                (*impossible)++;
                continue;
            }
            json_array_set_new(levels, i, json_string(level));
            for (size_t j = 0; j < i; j++)
                if (json_equal(json_array_get(levels, i), json_array_get(levels, j))) {
                    hv_errors_add(errors, lp, "repeats level %zu", j);
                    (*invalid)++;
                    break;
                }
        }
    }
}

/* ------------------------------------------------------------------ */
/* Pass 2: targets, workloads and configurations the plan resolves to */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Adds a configuration from the chosen level index of each factor.
 * Returns 0, or -1 when memory ran out. */
static int add_config(struct hv_plan *plan, json_t *factors, const char **names, size_t nf,
                      const size_t *choice)
{
    struct hv_config *c = &plan->configs[plan->n_configs++];
    c->levels = json_object();
    char name[1024] = "";
    size_t n = 0;
    int rc = c->levels != NULL ? 0 : -1;
    for (size_t f = 0; f < nf && rc == 0; f++) {
        json_t *level = json_array_get(json_object_get(factors, names[f]), choice[f]);
        rc = json_object_set(c->levels, names[f], level);
        if (choice[f] != 0)
            n += (size_t)snprintf(name + n, n < sizeof name ? sizeof name - n : 0, "%s%s=%s",
                                  n ? "," : "", names[f], json_string_value(level));
    }
    c->name = strdup(n ? name : "default");
    return rc == 0 && c->name != NULL ? 0 : -1;
}

/* Adds every configuration of the factors in names (nf of them): their
 * product (full), or the default and one factor changed at a time. */
static int add_configs(struct hv_plan *plan, json_t *factors, const char **names, size_t nf,
                       bool full, size_t total)
{
    size_t *choice = calloc(nf ? nf : 1, sizeof *choice);
    int rc = choice != NULL ? 0 : -1;
    for (size_t c = 0; full && rc == 0 && c < total; c++) {
        size_t rest = c;
        for (size_t f = nf; f-- > 0;) {
            size_t count = json_array_size(json_object_get(factors, names[f]));
            choice[f] = rest % count;
            rest /= count;
        }
        rc = add_config(plan, factors, names, nf, choice);
    }
    if (!full && rc == 0)
        rc = add_config(plan, factors, names, nf, choice);
    for (size_t f = 0; !full && rc == 0 && f < nf; f++) {
        size_t count = json_array_size(json_object_get(factors, names[f]));
        for (size_t l = 1; l < count && rc == 0; l++) {
            choice[f] = l;
            rc = add_config(plan, factors, names, nf, choice);
            choice[f] = 0;
        }
    }
    free(choice);
    return rc;
}

/* Builds the configurations: factors in name order (the stored document
 * does not keep member order), each design as docs/plans.md says. Returns
 * 0, or -1 when memory ran out. */
static int build_configs(struct hv_plan *plan, json_t *factors, bool full)
{
    size_t nf = json_object_size(factors);
    const char **names = calloc(nf ? nf : 1, sizeof *names);
    if (names == NULL)
        return -1;
    size_t total = 1, k = 0;
    const char *key;
    json_t *v;
    json_object_foreach(factors, key, v) names[k++] = key;
    qsort(names, nf, sizeof *names, cmp_str);
    for (size_t f = 0; f < nf; f++)
        total = full ? total * json_array_size(json_object_get(factors, names[f]))
                     : total + json_array_size(json_object_get(factors, names[f])) - 1;
    plan->configs = calloc(total, sizeof *plan->configs);
    int rc = plan->configs != NULL ? add_configs(plan, factors, names, nf, full, total) : -1;
    free(names);
    return rc;
}

/* The number of configurations a factor object makes, or 0 when it would
 * pass the job limit anyway (to refuse before allocating). */
static size_t count_configs(const json_t *factors, bool full)
{
    size_t total = 1;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)factors, key, v)
    {
        total = full ? total * json_array_size(v) : total + json_array_size(v) - 1;
        if (total > HV_PLAN_MAX_JOBS)
            return 0;
    }
    return total;
}

/* Concurrency, ramp and baseline, which depend on the guests. */
static void check_layout(struct hv_plan *plan, json_t *doc, json_t *errors, int *impossible)
{
    const char *conc = json_string_value(json_object_get(doc, "concurrency"));
    plan->concurrency = strcmp(conc, "all-guests") == 0 ? HV_CONC_ALL_GUESTS
                        : strcmp(conc, "ramp") == 0     ? HV_CONC_RAMP
                                                        : HV_CONC_ONE_GUEST;
    if (plan->concurrency != HV_CONC_ONE_GUEST && plan->n_guests == 0 &&
        json_object_get(json_object_get(doc, "targets"), "guests") == NULL) {
        hv_errors_add(errors, "/concurrency", "'%s' needs guests in /targets/guests", conc);
        (*impossible)++;
    }
    json_t *ramp = json_object_get(doc, "ramp");
    if (ramp != NULL && plan->concurrency != HV_CONC_RAMP) {
        hv_errors_add(errors, "/ramp", "is only for concurrency \"ramp\"");
        (*impossible)++;
    }
    if (plan->concurrency == HV_CONC_RAMP) {
        int n = (int)plan->n_guests;
        json_t *from = json_object_get(ramp, "from"), *to = json_object_get(ramp, "to");
        json_t *step = json_object_get(ramp, "step");
        plan->ramp_from = from ? (int)json_integer_value(from) : 1;
        plan->ramp_to = to ? (int)json_integer_value(to) : n;
        plan->ramp_step = step ? (int)json_integer_value(step) : 1;
        if (n > 0 && plan->ramp_to > n) {
            hv_errors_add(errors, "/ramp/to", "the plan has only %d guests", n);
            (*impossible)++;
        }
        if (plan->ramp_from > plan->ramp_to) {
            hv_errors_add(errors, "/ramp/from", "must not be above ramp.to (%d)", plan->ramp_to);
            (*impossible)++;
        }
        if (ramp == NULL)
            json_object_set_new(doc, "ramp", ramp = json_object());
        json_object_set_new(ramp, "from", json_integer(plan->ramp_from));
        json_object_set_new(ramp, "to", json_integer(plan->ramp_to));
        json_object_set_new(ramp, "step", json_integer(plan->ramp_step));
    }
    for (size_t i = 0; i < plan->n_guests; i++)
        if (strcmp(plan->guests[i], plan->host) == 0) {
            hv_errors_add(errors, "/targets/guests", "the host '%s' cannot also be a guest",
                          plan->host);
            (*impossible)++;
        }
}

static void check_baseline(struct hv_plan *plan, json_t *errors, int *impossible)
{
    if (strcmp(plan->baseline, "host") == 0) {
        plan->host_baseline = plan->n_guests > 0;
        return;
    }
    for (size_t i = 0; i < plan->n_configs; i++)
        if (strcmp(plan->configs[i].name, plan->baseline) == 0)
            return;
    hv_errors_add(errors, "/baseline",
                  "must be \"host\" or the name of a configuration (\"default\", "
                  "\"factor=level,...\"); '%s' is neither",
                  plan->baseline);
    (*impossible)++;
}

/* Guest-scope factors need guests. */
static void check_guest_factors(const struct hv_plan *plan, json_t *errors, int *impossible)
{
    const json_t *targets = json_object_get(plan->doc, "targets");
    if (plan->n_guests > 0 || json_object_get(targets, "guests") != NULL)
        return;
    const char *fname;
    json_t *fl;
    char fp[512];
    json_object_foreach(json_object_get(plan->doc, "factors"), fname, fl)
    {
        const struct hv_factor_def *f = hv_factor_find(fname);
        if (f != NULL && f->scope == HV_SCOPE_GUEST) {
            hv_jpath(fp, sizeof fp, "/factors", fname);
            hv_errors_add(errors, fp, "'%s' is set on guest domains, and the plan has no guests",
                          fname);
            (*impossible)++;
        }
    }
}

/* The process_pin factor pins the built-in CPU engine's copies itself (its
 * "on" level sets the engine's pin param), so a plan whose CPU workload
 * pins too would run its "off" level pinned: refused, naming both. */
static void check_pin_factor(const struct hv_plan *plan, json_t *errors, int *impossible)
{
    if (json_object_get(json_object_get(plan->doc, "factors"), "process_pin") == NULL)
        return;
    const json_t *workloads = json_object_get(plan->doc, "workloads");
    for (size_t i = 0; i < json_array_size(workloads); i++) {
        const char *id = json_string_value(json_object_get(json_array_get(workloads, i), "id"));
        bool pins = false;
        for (size_t k = 0; k < plan->n_workloads && !pins; k++) {
            const struct hv_workload *w = &plan->workloads[k];
            pins = id != NULL && w->base_id != NULL && strcmp(w->base_id, id) == 0 &&
                   strcmp(w->kind, "cpu") == 0 && strcmp(w->engine, "builtin") == 0 &&
                   json_is_true(json_object_get(w->params, "pin"));
        }
        if (!pins)
            continue;
        char wp[64], pp[96];
        hv_jpath_index(wp, sizeof wp, "/workloads", i);
        snprintf(pp, sizeof pp, "%s/params/pin", wp);
        hv_errors_add(errors, "/factors/process_pin",
                      "process_pin pins the CPU engine's copies itself, and %s pins them too "
                      "(its off level would run pinned): set one of them",
                      pp);
        hv_errors_add(errors, pp,
                      "the factor process_pin (/factors/process_pin) sets the CPU engine's pin at "
                      "each of its levels: drop this param, or the factor");
        (*impossible)++;
    }
}

/* The configurations, the baseline among them, and the job limit. Returns
 * 0, or -1 when memory ran out. */
static int check_configs(struct hv_plan *plan, json_t *errors, int *invalid, int *impossible)
{
    json_t *factors = json_object_get(plan->doc, "factors");
    bool full = strcmp(json_string_value(json_object_get(plan->doc, "design")), "full") == 0;
    if (count_configs(factors, full) == 0) {
        hv_errors_add(errors, "/factors", "the factors make more than %d configurations",
                      HV_PLAN_MAX_JOBS);
        (*invalid)++;
        return 0;
    }
    if (build_configs(plan, factors, full) != 0)
        return -1;
    check_baseline(plan, errors, impossible);
    if (*invalid > 0 || *impossible > 0)
        return 0;
    size_t jobs = hv_plan_jobs_per_round(plan) * (size_t)plan->rep_max;
    if (jobs > HV_PLAN_MAX_JOBS) {
        hv_errors_add(errors, "/repetitions/max",
                      "the plan expands to %zu jobs at max repetitions; at most %d are allowed",
                      jobs, HV_PLAN_MAX_JOBS);
        (*invalid)++;
    }
    return 0;
}

/* Pass 2 over a well-formed plan whose members are filled in: guests,
 * layout, workload variants, factors and configurations. Returns 0, or -1
 * when memory ran out. */
static int resolve_plan(struct hv_plan *plan, const struct hv_plan_env *env, json_t *errors,
                        int *invalid, int *impossible)
{
    json_t *doc = plan->doc;
    const json_t *targets = json_object_get(doc, "targets");
    if (hv_plan_resolve_guests(plan, json_object_get(targets, "guests"), env, errors, impossible) !=
        0)
        return -1;
    check_layout(plan, doc, errors, impossible);
    plan->workloads = calloc(HV_PLAN_MAX_VARIANTS, sizeof *plan->workloads);
    if (plan->workloads == NULL)
        return -1;
    json_t *workloads = json_object_get(doc, "workloads");
    for (size_t i = 0; i < json_array_size(workloads); i++)
        if (hv_plan_expand_workload(plan, json_array_get(workloads, i), i, errors, invalid,
                                    impossible) != 0)
            return -1;
    check_guest_factors(plan, errors, impossible);
    check_pin_factor(plan, errors, impossible);
    hv_plan_check_tuning_needs(doc, errors, impossible);
    return check_configs(plan, errors, invalid, impossible);
}

/* ------------------------------------------------------------------ */

/* A plan with structural errors elsewhere still gets its workload params
 * checked, so the operator sees every problem in one answer. Only the
 * workloads whose own members are well formed are looked at. */
static void report_param_errors(json_t *doc, json_t *errors)
{
    json_t *workloads = json_object_get(doc, "workloads");
    struct hv_plan scratch = {0};
    scratch.workloads = calloc(HV_PLAN_MAX_VARIANTS, sizeof *scratch.workloads);
    if (scratch.workloads == NULL)
        return;
    int invalid = 0, impossible = 0;
    for (size_t i = 0; i < workloads_checked(workloads); i++) {
        json_t *w = json_array_get(workloads, i);
        const char *kind = json_string_value(json_object_get(w, "kind"));
        const char *engine = json_string_value(json_object_get(w, "engine"));
        if (kind == NULL || engine == NULL || !json_is_string(json_object_get(w, "id")) ||
            !json_is_object(json_object_get(w, "params")) ||
            hv_engine_def_find(kind, engine) == NULL)
            continue;
        json_t *quiet = json_array();
        if (quiet == NULL ||
            hv_plan_expand_workload(&scratch, w, i, quiet, &invalid, &impossible) != 0) {
            json_decref(quiet);
            break; /* out of memory: the errors so far stand */
        }
        /* Peer problems depend on targets that may be broken: leave them
         * for the second submission. */
        size_t k;
        json_t *e;
        json_array_foreach(quiet, k, e)
        {
            if (strstr(json_string_value(json_object_get(e, "path")), "/peer") == NULL)
                json_array_append(errors, e);
        }
        json_decref(quiet);
    }
    hv_plan_free(&scratch);
}

/* Returns 0, or -1 when memory ran out. */
static int fill_defaults(json_t *doc, uint64_t default_seed, const char *noise)
{
    static const char *const defaults[][2] = {
        {"design", "full"},
        {"concurrency", "one-guest"},
        {"order", "randomized"},
        {"baseline", "host"},
    };
    int rc = 0;
    if (json_object_get(doc, "noise") == NULL)
        rc |= json_object_set_new(doc, "noise", json_string(noise != NULL ? noise : "repeat"));
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
        if (json_object_get(doc, defaults[i][0]) == NULL)
            rc |= json_object_set_new(doc, defaults[i][0], json_string(defaults[i][1]));
    if (json_object_get(doc, "factors") == NULL)
        rc |= json_object_set_new(doc, "factors", json_object());
    if (json_object_get(doc, "seed") == NULL)
        rc |= json_object_set_new(doc, "seed", json_integer((json_int_t)(default_seed >> 11)));
    return rc == 0 ? 0 : -1;
}

/* hv_plan_parse() without the bound on its errors. */
static enum hv_plan_verdict parse(const json_t *in, uint64_t default_seed,
                                  const struct hv_plan_env *env, struct hv_plan *plan,
                                  json_t *errors)
{
    memset(plan, 0, sizeof *plan);
    if (!json_is_object(in)) {
        hv_errors_add(errors, "", "a plan must be a JSON object, not %s", hv_jtype_name(in));
        return HV_PLAN_INVALID;
    }
    if (depth(in, HV_PLAN_MAX_DEPTH + 1) > HV_PLAN_MAX_DEPTH) {
        hv_errors_add(errors, "", "the plan nests deeper than %d levels", HV_PLAN_MAX_DEPTH);
        return HV_PLAN_INVALID;
    }
    json_t *doc = json_deep_copy(in);
    if (doc == NULL)
        return HV_PLAN_NO_MEMORY;
    int invalid = hv_jspec_check(doc, "", plan_fields, errors);
    const char *name = json_string_value(json_object_get(doc, "name"));
    if (name != NULL && !hv_jspec_name_ok(name)) {
        hv_errors_add(errors, "/name", "must be 1 to 128 printable characters");
        invalid++;
    }
    json_t *targets = json_object_get(doc, "targets");
    if (json_is_object(targets))
        invalid += hv_plan_check_targets(targets, errors);
    /* The host worker makes a template's clones in the plan's apply steps,
     * which only a plan with factors has. */
    if (json_object_get(json_object_get(json_object_get(targets, "guests"), "template"),
                        "domain") != NULL &&
        json_object_size(json_object_get(doc, "factors")) == 0) {
        hv_errors_add(errors, "/targets/guests/template",
                      "needs factors: the host worker makes the clones in the plan's apply steps "
                      "(one factor with one level is enough, e.g. \"factors\": {\"vcpu_pin\": "
                      "[\"off\"]})");
        invalid++;
    }
    json_t *workloads = json_object_get(doc, "workloads");
    if (json_is_array(workloads))
        invalid += check_workloads(workloads, errors);
    json_t *reps = json_object_get(doc, "repetitions");
    if (reps == NULL || json_is_object(reps))
        invalid += normalise_repetitions(doc, errors);
    json_t *ramp = json_object_get(doc, "ramp");
    if (json_is_object(ramp))
        invalid += hv_jspec_check(ramp, "/ramp", ramp_fields, errors);
    json_t *weights = json_object_get(doc, "weights");
    if (json_is_object(weights))
        invalid += check_weights(weights, errors);
    json_t *tuning = json_object_get(doc, "tuning");
    if (json_is_object(tuning))
        invalid += hv_plan_check_tuning(tuning, errors);
    json_t *hooks = json_object_get(doc, "hooks");
    if (json_is_object(hooks))
        invalid += check_hooks(hooks, errors);
    int impossible = 0;
    json_t *factors = json_object_get(doc, "factors");
    if (json_is_object(factors))
        check_factors(factors, errors, &invalid, &impossible);
    if (invalid > 0) {
        report_param_errors(doc, errors);
        json_decref(doc);
        return HV_PLAN_INVALID;
    }

    if (fill_defaults(doc, default_seed, env != NULL ? env->noise_default : NULL) != 0) {
        json_decref(doc);
        return HV_PLAN_NO_MEMORY;
    }
    reps = json_object_get(doc, "repetitions");
    plan->doc = doc;
    plan->name = json_string_value(json_object_get(doc, "name"));
    plan->host = json_string_value(json_object_get(targets, "host"));
    plan->require_registered = json_is_true(json_object_get(targets, "require_registered"));
    plan->baseline = json_string_value(json_object_get(doc, "baseline"));
    plan->rep_min = (int)json_integer_value(json_object_get(reps, "min"));
    plan->rep_max = (int)json_integer_value(json_object_get(reps, "max"));
    plan->ci_pct = json_number_value(json_object_get(reps, "ci_pct"));
    plan->randomized = strcmp(json_string_value(json_object_get(doc, "order")), "randomized") == 0;
    plan->seed = (uint64_t)json_integer_value(json_object_get(doc, "seed"));

    if (resolve_plan(plan, env, errors, &invalid, &impossible) != 0) {
        hv_plan_free(plan);
        return HV_PLAN_NO_MEMORY;
    }
    if (invalid > 0 || impossible > 0) {
        hv_plan_free(plan);
        return invalid > 0 ? HV_PLAN_INVALID : HV_PLAN_IMPOSSIBLE;
    }
    return HV_PLAN_VALID;
}

enum hv_plan_verdict hv_plan_parse(const json_t *in, uint64_t default_seed,
                                   const struct hv_plan_env *env, struct hv_plan *plan,
                                   json_t *errors)
{
    size_t before = json_array_size(errors);
    enum hv_plan_verdict v = parse(in, default_seed, env, plan, errors);
    size_t found = json_array_size(errors) - before;
    if (found <= HV_PLAN_MAX_ERRORS)
        return v;
    while (json_array_size(errors) > before + HV_PLAN_MAX_ERRORS)
        json_array_remove(errors, json_array_size(errors) - 1);
    hv_errors_add(errors, "", "and %zu more problems: only the first %d are listed",
                  found - HV_PLAN_MAX_ERRORS, HV_PLAN_MAX_ERRORS);
    return v;
}

void hv_plan_free(struct hv_plan *plan)
{
    for (size_t i = 0; i < plan->n_guests; i++)
        free(plan->guests[i]);
    free(plan->guests);
    for (size_t i = 0; i < plan->n_workloads; i++) {
        free(plan->workloads[i].id);
        json_decref(plan->workloads[i].params);
    }
    free(plan->workloads);
    for (size_t i = 0; i < plan->n_configs; i++) {
        free(plan->configs[i].name);
        json_decref(plan->configs[i].levels);
    }
    free(plan->configs);
    json_decref(plan->doc);
    memset(plan, 0, sizeof *plan);
}

const char *hv_plan_config_name(const struct hv_plan *plan, size_t i)
{
    return i < plan->n_configs ? plan->configs[i].name : "default";
}

/* ------------------------------------------------------------------ */
/* Expansion */

/* A unit: jobs that are scheduled together (one job, or a group). */
struct unit {
    size_t config, workload;
    bool host;      /* the host's own run (baseline or bare metal) */
    size_t nguests; /* guests 0..nguests-1 (all-guests, ramp) */
    size_t guest;   /* the one guest (one-guest), when nguests == 0 && !host */
};

/* The units of one repetition round, in plan order; *n is their count.
 * With units == NULL only counts. */
static size_t round_units(const struct hv_plan *plan, struct unit *units)
{
    size_t n = 0;
    for (size_t c = 0; c < plan->n_configs; c++) {
        for (size_t w = 0; w < plan->n_workloads; w++) {
            const struct hv_workload *wl = &plan->workloads[w];
            bool host_busy = wl->peer != NULL && strcmp(wl->peer, plan->host) == 0;
            if (plan->n_guests == 0 || (plan->host_baseline && c == 0 && !host_busy)) {
                if (units)
                    units[n] = (struct unit){c, w, true, 0, 0};
                n++;
            }
            if (plan->n_guests == 0)
                continue;
            switch (plan->concurrency) {
            case HV_CONC_ONE_GUEST:
                for (size_t g = 0; g < plan->n_guests; g++, n++)
                    if (units)
                        units[n] = (struct unit){c, w, false, 0, g};
                break;
            case HV_CONC_ALL_GUESTS:
                if (units)
                    units[n] = (struct unit){c, w, false, plan->n_guests, 0};
                n++;
                break;
            case HV_CONC_RAMP:
                for (int k = plan->ramp_from; k <= plan->ramp_to; k += plan->ramp_step, n++)
                    if (units)
                        units[n] = (struct unit){c, w, false, (size_t)k, 0};
                break;
            }
        }
    }
    return n;
}

/* Jobs in a unit: its targets, plus the server side of a net workload. */
static size_t unit_jobs(const struct hv_plan *plan, const struct unit *u)
{
    size_t clients = u->host || u->nguests == 0 ? 1 : u->nguests;
    return clients + (plan->workloads[u->workload].peer != NULL ? 1 : 0);
}

size_t hv_plan_jobs_per_round(const struct hv_plan *plan)
{
    size_t nu = round_units(plan, NULL), total = 0;
    struct unit *units = calloc(nu ? nu : 1, sizeof *units);
    if (units == NULL)
        return (size_t)-1;
    round_units(plan, units);
    for (size_t i = 0; i < nu; i++)
        total += unit_jobs(plan, &units[i]);
    free(units);
    return total;
}

int hv_plan_expand(const struct hv_plan *plan, struct hv_expansion *out)
{
    memset(out, 0, sizeof *out);
    size_t nu = round_units(plan, NULL);
    size_t per_round = hv_plan_jobs_per_round(plan);
    size_t rounds = (size_t)plan->rep_min;
    struct unit *units = calloc(nu ? nu : 1, sizeof *units);
    size_t max_jobs = per_round * rounds, max_groups = nu * rounds;
    out->jobs = calloc(max_jobs > 0 ? max_jobs : 1, sizeof *out->jobs);
    out->group_sizes = calloc(max_groups > 0 ? max_groups : 1, sizeof *out->group_sizes);
    if (units == NULL || out->jobs == NULL || out->group_sizes == NULL) {
        free(units);
        hv_expansion_free(out);
        return -1;
    }
    uint64_t state = plan->seed;
    for (size_t r = 0; r < rounds; r++) {
        round_units(plan, units);
        if (plan->randomized)
            for (size_t k = nu; k > 1; k--) {
                size_t j = (size_t)(hv_rng_next(&state) % k);
                struct unit t = units[k - 1];
                units[k - 1] = units[j];
                units[j] = t;
            }
        for (size_t i = 0; i < nu; i++) {
            const struct unit *u = &units[i];
            const struct hv_workload *wl = &plan->workloads[u->workload];
            size_t size = unit_jobs(plan, u);
            long group = size > 1 ? (long)out->n_groups : -1;
            if (group >= 0)
                out->group_sizes[out->n_groups++] = (int)size;
            struct hv_job_spec proto = {.config = u->config,
                                        .workload = u->workload,
                                        .repetition = (int)r + 1,
                                        .group = group};
            /* The server side first: its worker must be listening when the
             * clients start. */
            if (wl->peer != NULL) {
                struct hv_job_spec *j = &out->jobs[out->n_jobs];
                *j = proto;
                j->target = wl->peer;
                j->role = "server";
                j->run_order = (int)out->n_jobs++;
            }
            size_t members = u->host || u->nguests == 0 ? 1 : u->nguests;
            for (size_t m = 0; m < members; m++) {
                struct hv_job_spec *j = &out->jobs[out->n_jobs];
                *j = proto;
                j->target = u->host      ? plan->host
                            : u->nguests ? plan->guests[m]
                                         : plan->guests[u->guest];
                j->role = wl->peer != NULL ? "client" : NULL;
                j->run_order = (int)out->n_jobs++;
            }
        }
    }
    free(units);
    return 0;
}

void hv_expansion_free(struct hv_expansion *x)
{
    free(x->jobs);
    free(x->group_sizes);
    memset(x, 0, sizeof *x);
}
