/* plan.c — see plan.h.
 *
 * Validation runs in two passes: structure (types, required members,
 * ranges: HTTP 400) and then what this installation can run (engines,
 * factors: HTTP 422). Both report every problem with its JSON Pointer. */
#include "plan.h"

#include "errors.h"
#include "jspec.h"
#include "units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kinds[] = {"cpu", "disk", "net", NULL};
static const char *const designs[] = {"full", "one-at-a-time", NULL};
static const char *const concurrencies[] = {"one-guest", "all-guests", "ramp", NULL};
static const char *const orders[] = {"randomized", "sequential", NULL};

static const struct hv_jfield plan_fields[] = {
    {.name = "name", .type = HV_J_STRING, .required = true, .max_len = 128},
    {.name = "description", .type = HV_J_STRING, .max_len = 4096},
    {.name = "targets", .type = HV_J_OBJECT, .required = true},
    {.name = "baseline", .type = HV_J_STRING},
    {.name = "workloads", .type = HV_J_ARRAY, .required = true, .max_len = HV_PLAN_MAX_WORKLOADS},
    {.name = "factors", .type = HV_J_OBJECT},
    {.name = "design", .type = HV_J_STRING, .choices = designs},
    {.name = "concurrency", .type = HV_J_STRING, .choices = concurrencies},
    {.name = "repetitions", .type = HV_J_OBJECT},
    {.name = "order", .type = HV_J_STRING, .choices = orders},
    {.name = "seed", .type = HV_J_INTEGER, .min = 0, .max = 9007199254740991.0},
    {0},
};

static const struct hv_jfield target_fields[] = {
    {.name = "host", .type = HV_J_STRING, .required = true, .max_len = 128},
    {.name = "guests", .type = HV_J_OBJECT},
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

static const struct hv_jfield cpu_builtin_fields[] = {
    {.name = "copies", .type = HV_J_ANY},
    {.name = "seconds", .type = HV_J_ANY},
    {.name = "pin", .type = HV_J_BOOL},
    {0},
};

/* Normalises the params of a builtin cpu workload in place. */
static int check_cpu_builtin(json_t *params, const char *path, json_t *errors)
{
    char p[512];
    int problems = hv_jspec_check(params, path, cpu_builtin_fields, errors);
    json_t *copies = json_object_get(params, "copies");
    hv_jpath(p, sizeof p, path, "copies");
    if (copies == NULL) {
        json_object_set_new(params, "copies", json_integer(1));
    } else if (json_is_string(copies)) {
        if (strcmp(json_string_value(copies), "per-vcpu") != 0) {
            hv_errors_add(errors, p, "must be a count or \"per-vcpu\"");
            problems++;
        }
    } else if (!json_is_integer(copies) || json_integer_value(copies) < 1 ||
               json_integer_value(copies) > 1024) {
        hv_errors_add(errors, p, "must be a count between 1 and 1024 or \"per-vcpu\"");
        problems++;
    }
    json_t *secs = json_object_get(params, "seconds");
    hv_jpath(p, sizeof p, path, "seconds");
    double s = 10.0;
    if (json_is_string(secs)) {
        if (hv_parse_duration(json_string_value(secs), &s) != 0) {
            hv_errors_add(errors, p, "must be a duration such as \"30s\" or \"5m\"");
            problems++;
            s = 10.0;
        }
    } else if (json_is_number(secs)) {
        s = json_number_value(secs);
    } else if (secs != NULL) {
        hv_errors_add(errors, p, "must be a number of seconds or a duration such as \"30s\"");
        problems++;
    }
    if (s < 1.0 || s > 86400.0) {
        hv_errors_add(errors, p, "must be between 1 s and 24 h");
        problems++;
    }
    json_object_set_new(params, "seconds", json_real(s));
    if (json_object_get(params, "pin") == NULL)
        json_object_set_new(params, "pin", json_false());
    return problems;
}

/* The engines this installation can run: {kind, engine, params checker}. */
struct engine_row {
    const char *kind;
    const char *engine;
    int (*check)(json_t *params, const char *path, json_t *errors);
};

static const struct engine_row engines[] = {
    {"cpu", "builtin", check_cpu_builtin},
};

static const struct engine_row *find_engine(const char *kind, const char *engine)
{
    for (size_t i = 0; i < sizeof engines / sizeof engines[0]; i++)
        if (strcmp(engines[i].kind, kind) == 0 && strcmp(engines[i].engine, engine) == 0)
            return &engines[i];
    return NULL;
}

static bool valid_id(const char *s)
{
    if (*s == '\0')
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
            return false;
    return true;
}

/* Structural checks of the workload list; fills in defaults. */
static int check_workloads(json_t *list, json_t *errors)
{
    int problems = 0;
    char base[64], p[512];
    if (json_array_size(list) == 0) {
        hv_errors_add(errors, "/workloads", "must name at least one workload");
        return 1;
    }
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *w = json_array_get(list, i);
        hv_jpath_index(base, sizeof base, "/workloads", i);
        int wp = hv_jspec_check(w, base, workload_fields, errors);
        problems += wp;
        if (!json_is_object(w))
            continue;
        json_t *id = json_object_get(w, "id");
        if (json_is_string(id)) {
            hv_jpath(p, sizeof p, base, "id");
            if (!valid_id(json_string_value(id))) {
                hv_errors_add(errors, p, "must use only a-z, 0-9, '-' and '_'");
                problems++;
            }
            for (size_t j = 0; j < i; j++) {
                json_t *other = json_object_get(json_array_get(list, j), "id");
                if (json_is_string(other) && json_equal(id, other)) {
                    hv_errors_add(errors, p, "repeats the id of /workloads/%zu", j);
                    problems++;
                }
            }
        }
        if (json_object_get(w, "engine") == NULL)
            json_object_set_new(w, "engine", json_string("builtin"));
        if (json_object_get(w, "params") == NULL)
            json_object_set_new(w, "params", json_object());
    }
    return problems;
}

/* What this installation can run: engines and their params (422 when the
 * engine is unknown, 400 for bad params of a known engine). */
static void check_runnable(json_t *doc, json_t *errors, int *invalid, int *impossible)
{
    char base[64], p[512];
    json_t *list = json_object_get(doc, "workloads");
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *w = json_array_get(list, i);
        const char *kind = json_string_value(json_object_get(w, "kind"));
        const char *engine = json_string_value(json_object_get(w, "engine"));
        json_t *params = json_object_get(w, "params");
        if (kind == NULL || engine == NULL || !json_is_object(params))
            continue;
        hv_jpath_index(base, sizeof base, "/workloads", i);
        const struct engine_row *row = find_engine(kind, engine);
        if (row == NULL) {
            hv_jpath(p, sizeof p, base, "engine");
            hv_errors_add(errors, p, "no engine '%s' for kind '%s' is available; available: %s",
                          engine, kind, "cpu/builtin");
            (*impossible)++;
            continue;
        }
        hv_jpath(p, sizeof p, base, "params");
        *invalid += row->check(params, p, errors);
    }
    json_t *factors = json_object_get(doc, "factors");
    const char *key;
    json_t *v;
    json_object_foreach(factors, key, v)
    {
        hv_jpath(p, sizeof p, "/factors", key);
        hv_errors_add(errors, p, "unknown factor '%s': no tuning actuator of that name", key);
        (*impossible)++;
    }
    json_t *targets = json_object_get(doc, "targets");
    if (json_object_get(targets, "guests") != NULL) {
        hv_errors_add(errors, "/targets/guests", "guest targets are not supported by this server");
        (*impossible)++;
    }
    const char *baseline = json_string_value(json_object_get(doc, "baseline"));
    if (baseline != NULL && strcmp(baseline, "host") != 0) {
        hv_errors_add(errors, "/baseline", "must be \"host\" or the name of a configuration");
        (*impossible)++;
    }
}

/* Fills the repetition defaults and checks min <= max. */
static int normalise_repetitions(json_t *doc, json_t *errors)
{
    json_t *reps = json_object_get(doc, "repetitions");
    if (reps == NULL) {
        reps = json_object();
        json_object_set_new(doc, "repetitions", reps);
    }
    if (hv_jspec_check(reps, "/repetitions", repetition_fields, errors) > 0)
        return 1;
    json_t *min = json_object_get(reps, "min");
    if (min == NULL)
        json_object_set_new(reps, "min", json_integer(3));
    json_int_t mn = json_integer_value(json_object_get(reps, "min"));
    if (json_object_get(reps, "max") == NULL)
        json_object_set_new(reps, "max", json_integer(mn));
    if (json_integer_value(json_object_get(reps, "max")) < mn) {
        hv_errors_add(errors, "/repetitions/max", "must be at least min (%lld)", (long long)mn);
        return 1;
    }
    if (json_object_get(reps, "ci_pct") == NULL)
        json_object_set_new(reps, "ci_pct", json_real(2.0));
    return 0;
}

enum hv_plan_verdict hv_plan_parse(const json_t *in, uint64_t default_seed, struct hv_plan *plan,
                                   json_t *errors)
{
    memset(plan, 0, sizeof *plan);
    if (!json_is_object(in)) {
        hv_errors_add(errors, "", "a plan must be a JSON object, not %s", hv_jtype_name(in));
        return HV_PLAN_INVALID;
    }
    json_t *doc = json_deep_copy(in);
    int invalid = hv_jspec_check(doc, "", plan_fields, errors);
    json_t *targets = json_object_get(doc, "targets");
    if (json_is_object(targets))
        invalid += hv_jspec_check(targets, "/targets", target_fields, errors);
    json_t *workloads = json_object_get(doc, "workloads");
    if (json_is_array(workloads))
        invalid += check_workloads(workloads, errors);
    if (json_is_object(json_object_get(doc, "repetitions")) ||
        json_object_get(doc, "repetitions") == NULL)
        invalid += normalise_repetitions(doc, errors);
    int impossible = 0;
    if (invalid == 0)
        check_runnable(doc, errors, &invalid, &impossible);
    if (invalid > 0 || impossible > 0) {
        json_decref(doc);
        return invalid > 0 ? HV_PLAN_INVALID : HV_PLAN_IMPOSSIBLE;
    }

    if (json_object_get(doc, "design") == NULL)
        json_object_set_new(doc, "design", json_string("full"));
    if (json_object_get(doc, "concurrency") == NULL)
        json_object_set_new(doc, "concurrency", json_string("one-guest"));
    if (json_object_get(doc, "order") == NULL)
        json_object_set_new(doc, "order", json_string("randomized"));
    if (json_object_get(doc, "baseline") == NULL)
        json_object_set_new(doc, "baseline", json_string("host"));
    if (json_object_get(doc, "factors") == NULL)
        json_object_set_new(doc, "factors", json_object());
    if (json_object_get(doc, "seed") == NULL)
        json_object_set_new(doc, "seed", json_integer((json_int_t)(default_seed >> 11)));

    json_t *reps = json_object_get(doc, "repetitions");
    plan->doc = doc;
    plan->name = json_string_value(json_object_get(doc, "name"));
    plan->host = json_string_value(json_object_get(targets, "host"));
    plan->rep_min = (int)json_integer_value(json_object_get(reps, "min"));
    plan->rep_max = (int)json_integer_value(json_object_get(reps, "max"));
    plan->ci_pct = json_number_value(json_object_get(reps, "ci_pct"));
    plan->randomized = strcmp(json_string_value(json_object_get(doc, "order")), "randomized") == 0;
    plan->seed = (uint64_t)json_integer_value(json_object_get(doc, "seed"));
    plan->n_configs = 1;
    plan->n_workloads = json_array_size(workloads);
    plan->workloads = calloc(plan->n_workloads, sizeof *plan->workloads);
    for (size_t i = 0; i < plan->n_workloads; i++) {
        json_t *w = json_array_get(workloads, i);
        plan->workloads[i] = (struct hv_workload){
            .id = json_string_value(json_object_get(w, "id")),
            .kind = json_string_value(json_object_get(w, "kind")),
            .engine = json_string_value(json_object_get(w, "engine")),
            .params = json_object_get(w, "params"),
        };
    }
    size_t jobs = plan->n_configs * plan->n_workloads * (size_t)plan->rep_max;
    if (jobs > HV_PLAN_MAX_JOBS) {
        hv_errors_add(errors, "/repetitions/max",
                      "the plan expands to %zu jobs; at most %d are allowed", jobs,
                      HV_PLAN_MAX_JOBS);
        hv_plan_free(plan);
        return HV_PLAN_INVALID;
    }
    return HV_PLAN_VALID;
}

void hv_plan_free(struct hv_plan *plan)
{
    free(plan->workloads);
    json_decref(plan->doc);
    memset(plan, 0, sizeof *plan);
}

const char *hv_plan_config_name(const struct hv_plan *plan, size_t i)
{
    (void)plan;
    (void)i;
    return "default";
}

/* splitmix64: a small, well-mixed generator; the run order must be
 * reproducible from the recorded seed on every platform. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

struct hv_job_spec *hv_plan_expand(const struct hv_plan *plan, size_t *n)
{
    size_t per_round = plan->n_configs * plan->n_workloads;
    size_t total = per_round * (size_t)plan->rep_min;
    struct hv_job_spec *jobs = calloc(total ? total : 1, sizeof *jobs);
    if (jobs == NULL)
        return NULL;
    uint64_t state = plan->seed;
    for (int r = 0; r < plan->rep_min; r++) {
        struct hv_job_spec *round = jobs + (size_t)r * per_round;
        for (size_t k = 0; k < per_round; k++)
            round[k] = (struct hv_job_spec){.config = k / plan->n_workloads,
                                            .workload = k % plan->n_workloads,
                                            .repetition = r + 1};
        if (plan->randomized) {
            for (size_t k = per_round; k > 1; k--) {
                size_t j = (size_t)(splitmix64(&state) % k);
                struct hv_job_spec t = round[k - 1];
                round[k - 1] = round[j];
                round[j] = t;
            }
        }
        for (size_t k = 0; k < per_round; k++)
            round[k].run_order = (int)((size_t)r * per_round + k);
    }
    *n = total;
    return jobs;
}
