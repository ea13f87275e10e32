/* h_plans.c — submitting, listing, reading and cancelling plans. */
#include "answer_cache.h"
#include "auth.h"
#include "config.h"
#include "db_hooks.h"
#include "db_plans.h"
#include "db_targets.h"
#include "factors.h"
#include "handlers.h"
#include "jspec.h"
#include "metrics.h"
#include "plan.h"
#include "plan_fleet.h"
#include "plan_disrupt.h"
#include "plan_owner.h"
#include "selector.h"
#include "query.h"
#include "site_bench.h"
#include "timeutil.h"
#include "webhooks.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#define MAX_IDEMPOTENCY_KEY 128

static const char *const plan_states[] = {"queued", "running", "done", "failed", "cancelled", NULL};
static const char *const job_states[] = {"queued", "running", "done", "failed", "cancelled", NULL};

/* A seed for plans that give none: recorded with the plan, so its run
 * order can be replayed. */
static uint64_t fresh_seed(void)
{
    uint64_t s = 0;
    if (getrandom(&s, sizeof s, 0) != sizeof s)
        s = (uint64_t)time(NULL);
    return s;
}

/* Guests by label, from the targets the workers registered: the plan's
 * host's own and those of no known host. */
static int guests_by_label(void *arg, const char *host, const json_t *selector, json_t **names)
{
    return hv_db_target_names_by_label(selector, host, names) == HV_DB_OK ? 0 : -1;
}

/* Guests by name, told apart by their host (arg points to true for a
 * fleet plan's child: a guest not registered yet is the host's own). */
static int guests_by_domain(void *arg, const char *host, const json_t *domains, json_t **names)
{
    bool fleet = arg != NULL && *(const bool *)arg;
    return hv_db_guest_refs(host, domains, fleet, names) == HV_DB_OK ? 0 : -1;
}

/* What a restart of a guest costs the plan, seconds: the guest powering
 * off (ACPI), starting and its worker registering again (measured 25-30 s
 * under TCG; docs/virt.md). */
#define RESTART_ESTIMATE_S 30

/* Seconds a workload variant runs: its "seconds" (or fio's "runtime") and
 * its "warmup", as normalised; 0 when it names neither. */
static double workload_seconds(const struct hv_workload *w)
{
    const json_t *p = w->params;
    const json_t *run = json_object_get(p, "seconds");
    if (!json_is_number(run))
        run = json_object_get(p, "runtime");
    const json_t *warm = json_object_get(p, "warmup");
    return (json_is_number(run) ? json_number_value(run) : 0) +
           (json_is_number(warm) ? json_number_value(warm) : 0);
}

/* The dry run's "actions": what the plan will do to its host and guests.
 * Blocks are the configurations of the rounds at min repetitions; each
 * block restarts every guest once when any restart-class factor is set
 * (one restart per domain and step), and the restore once more. Its
 * warnings are the messages of judged (disruption_judged()), the texts a
 * submission answers with. */
static json_t *actions_json(const struct hv_plan *plan, const struct hv_expansion *x,
                            const json_t *judged)
{
    const json_t *factors = json_object_get(plan->doc, "factors");
    size_t blocks = json_object_size(factors) > 0 ? plan->n_configs * (size_t)plan->rep_min : 0;
    const char *disk =
        json_string_value(json_object_get(json_object_get(plan->doc, "tuning"), "disk"));
    json_t *files = json_array(), *pauses = json_array(), *warnings = json_array();
    json_t *site = json_array();
    bool restarts = false;
    const char *name;
    json_t *levels;
    json_object_foreach((json_t *)factors, name, levels)
    {
        const struct hv_factor_def *f = hv_factor_find(name);
        if (f == NULL && hv_site_factor_is(name))
            /* Applied by the programs the host worker's configuration
             * names for it (docs/virt.md, Site factors). */
            json_array_append_new(site, json_pack("{s:s, s:O}", "factor", name, "levels", levels));
        if (f == NULL)
            continue;
        if (f->disruption == HV_DISRUPT_RESTART)
            restarts = true;
        if (f->disruption == HV_DISRUPT_REBOOT) {
            /* Every level but the host's own needs the operator: at worst
             * each level is one pause. */
            json_array_append_new(pauses,
                                  json_pack("{s:s, s:O, s:s?, s:s}", "factor", name, "levels",
                                            levels, "file", f->host_file, "apply", f->apply_hint));
        } else if (f->host_file != NULL) {
            char path[256];
            const char *d = strstr(f->host_file, "DISK");
            if (d != NULL && disk != NULL) {
                const char *base = strrchr(disk, '/');
                snprintf(path, sizeof path, "%.*s%s%s", (int)(d - f->host_file), f->host_file,
                         base != NULL ? base + 1 : disk, d + 4);
            } else {
                snprintf(path, sizeof path, "%s", f->host_file);
            }
            json_array_append_new(files, json_pack("{s:s, s:s}", "factor", name, "path", path));
        }
    }
    long per_domain = restarts ? (long)blocks + 1 : 0;
    json_t *guests = json_array();
    for (size_t i = 0; i < plan->n_guests; i++)
        json_array_append_new(guests, json_pack("{s:s, s:I}", "name", plan->guests[i], "restarts",
                                                (json_int_t)per_domain));
    size_t wi;
    const json_t *w;
    json_array_foreach(judged, wi, w)
    {
        json_array_append(warnings, json_object_get(w, "message"));
    }
    /* Jobs of one group run at once: a group counts once, at its longest. */
    double job_s = 0;
    double *group_s = x->n_groups > 0 ? calloc(x->n_groups, sizeof *group_s) : NULL;
    for (size_t i = 0; i < x->n_jobs; i++) {
        double s = workload_seconds(&plan->workloads[x->jobs[i].workload]);
        long g = x->jobs[i].group;
        if (g >= 0 && group_s != NULL && (size_t)g < x->n_groups)
            group_s[g] = s > group_s[g] ? s : group_s[g];
        else
            job_s += s;
    }
    for (size_t g = 0; group_s != NULL && g < x->n_groups; g++)
        job_s += group_s[g];
    free(group_s);
    size_t n_restarts = (size_t)per_domain * plan->n_guests;
    return json_pack("{s:{s:s, s:o, s:o, s:o}, s:o, s:I, s:{s:f, s:I, s:i, s:f}, s:o}", "host",
                     "name", plan->host, "files", files, "operator_pauses", pauses, "site_factors",
                     site, "guests", guests, "blocks", (json_int_t)blocks, "estimate",
                     "job_seconds", job_s, "restarts", (json_int_t)n_restarts,
                     "seconds_per_restart", RESTART_ESTIMATE_S, "seconds",
                     job_s + (double)n_restarts * RESTART_ESTIMATE_S, "warnings", warnings);
}

/* The dry-run answer: what the plan expands into, without storing it;
 * judged as actions_json() takes it. */
static json_t *expansion_json(const struct hv_plan *plan, const struct hv_expansion *x,
                              const json_t *judged)
{
    json_t *order = json_array();
    for (size_t i = 0; i < x->n_jobs && i < 10000; i++) {
        const struct hv_job_spec *j = &x->jobs[i];
        json_t *o = json_pack("{s:s,s:s,s:s,s:i,s:i}", "configuration",
                              hv_plan_config_name(plan, j->config), "workload",
                              plan->workloads[j->workload].id, "target", j->target, "repetition",
                              j->repetition, "run_order", j->run_order);
        json_object_set_new(o, "group", j->group >= 0 ? json_integer(j->group) : json_null());
        json_object_set_new(o, "role", j->role ? json_string(j->role) : json_null());
        json_array_append_new(order, o);
    }
    json_t *configs = json_array();
    for (size_t i = 0; i < plan->n_configs; i++)
        json_array_append_new(configs, json_pack("{s:s,s:O}", "name", plan->configs[i].name,
                                                 "levels", plan->configs[i].levels));
    json_t *workloads = json_array();
    for (size_t i = 0; i < plan->n_workloads; i++)
        json_array_append_new(workloads, json_string(plan->workloads[i].id));
    json_t *targets = json_array();
    json_array_append_new(targets, json_string(plan->host));
    for (size_t i = 0; i < plan->n_guests; i++)
        json_array_append_new(targets, json_string(plan->guests[i]));
    return json_pack(
        "{s:b,s:O,s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I},s:o,s:o,s:o,s:o,s:b,s:o}", "dry_run", 1, "plan",
        plan->doc, "counts", "configurations", (json_int_t)plan->n_configs, "workloads",
        (json_int_t)plan->n_workloads, "targets", (json_int_t)(1 + plan->n_guests), "repetitions",
        (json_int_t)plan->rep_min, "jobs", (json_int_t)x->n_jobs, "groups", (json_int_t)x->n_groups,
        "jobs_at_max_repetitions",
        (json_int_t)(hv_plan_jobs_per_round(plan) * (size_t)plan->rep_max), "configurations",
        configs, "workloads", workloads, "targets", targets, "run_order", order,
        "run_order_truncated", x->n_jobs > 10000, "actions", actions_json(plan, x, judged));
}

/* Checks the Idempotency-Key header; answers 400 and returns false when it
 * is malformed. *key is NULL without one. */
static bool idempotency_key(struct hv_request *req, const char **key)
{
    *key = hv_req_header(req, "Idempotency-Key");
    if (*key == NULL)
        return true;
    size_t n = strlen(*key);
    bool ok = n >= 1 && n <= MAX_IDEMPOTENCY_KEY;
    for (size_t i = 0; ok && i < n; i++)
        ok = (*key)[i] >= 0x20 && (*key)[i] < 0x7f;
    if (!ok) {
        json_t *errors = json_array();
        hv_errors_add(errors, "Idempotency-Key", "must have 1 to %d printable ASCII characters",
                      MAX_IDEMPOTENCY_KEY);
        hv_reply_problem(req, HV_E_INVALID_REQUEST, "bad header", errors);
    }
    return ok;
}

static void reply_stored(struct hv_request *req, enum hv_db_status s, int64_t id, bool replayed,
                         json_t *warnings);
static enum hv_db_status unregistered_warnings(const struct hv_plan *plan,
                                               const struct hv_expansion *x, json_t **out);

/* Stores the plan and answers with its summary, its warnings those of
 * unregistered targets and then judged (disruption_judged()). */
static void store(struct hv_request *req, const struct hv_plan *plan, const struct hv_expansion *x,
                  const char *key, const json_t *judged)
{
    json_t *warnings = NULL;
    enum hv_db_status s = unregistered_warnings(plan, x, &warnings);
    if (s != HV_DB_OK) {
        hv_reply_db_failure(req, s);
        return;
    }
    json_array_extend(warnings, (json_t *)judged);
    char sha[65];
    hv_sha256_hex(req->body, req->body_len, sha);
    struct hv_plan_submit sub = {plan, x, req->token_id, key, sha};
    int64_t id = 0;
    bool replayed = false;
    s = hv_db_plan_create(&sub, &id, &replayed);
    reply_stored(req, s, id, replayed, warnings);
}

/* The answer to a submission stored (or replayed) as plan id, with
 * warnings (stolen; NULL or empty: none) as its "warnings" member. */
static void reply_stored(struct hv_request *req, enum hv_db_status s, int64_t id, bool replayed,
                         json_t *warnings)
{
    if (json_array_size(warnings) == 0) {
        json_decref(warnings);
        warnings = NULL;
    }
    if (s == HV_DB_CONFLICT && replayed) {
        json_decref(warnings);
        hv_reply_problem(req, HV_E_IDEMPOTENCY_REUSED,
                         "this Idempotency-Key was used for a different plan body", NULL);
        return;
    }
    json_t *summary = NULL;
    if (s == HV_DB_OK)
        s = hv_db_plan_get(id, true, &summary);
    if (s != HV_DB_OK) {
        json_decref(warnings);
        hv_reply_db_failure(req, s);
        return;
    }
    if (warnings != NULL)
        json_object_set_new(summary, "warnings", warnings);
    snprintf(req->location, sizeof req->location, "/api/v1/plans/%lld", (long long)id);
    if (replayed) {
        req->extra_header = "Idempotency-Replayed";
        req->extra_value = "true";
    }
    hv_reply_json(req, replayed ? 200 : 201, summary);
}

/* Whether every target that would run a custom workload declares it, and
 * every registered target can hold the params of what it would run (a
 * "per-vcpu" disk run's buffers); otherwise answers 422 (or the database
 * failure) and returns false. Only the expansion knows which targets run
 * what (a ramp may leave guests out), so this follows it. */
static bool site_benchmarks_declared(struct hv_request *req, const struct hv_plan *plan,
                                     const struct hv_expansion *x)
{
    json_t *errors = json_array();
    enum hv_db_status s = hv_site_bench_check_plan(plan, x, errors);
    if (s == HV_DB_OK)
        s = hv_site_check_limits(plan, x, errors);
    if (s != HV_DB_OK) {
        json_decref(errors);
        hv_reply_db_failure(req, s);
        return false;
    }
    size_t n = json_array_size(errors);
    if (n == 0) {
        json_decref(errors);
        return true;
    }
    char detail[64];
    snprintf(detail, sizeof detail, "%zu error%s in the plan", n, n == 1 ? "" : "s");
    hv_reply_problem(req, HV_E_IMPOSSIBLE_PLAN, detail, errors);
    return false;
}

/* Appends name to names[*n] unless it is there already. */
static void add_name(const char **names, size_t *n, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(names[i], name) == 0)
            return;
    names[(*n)++] = name;
}

/* The path of the plan member that names target name: the host, a guest
 * domain, the guest template, or a workload's peer. */
static void target_path(const struct hv_plan *plan, const char *name, char *buf, size_t len)
{
    const json_t *guests = json_object_get(json_object_get(plan->doc, "targets"), "guests");
    const json_t *domains = json_object_get(guests, "domains");
    const json_t *workloads = json_object_get(plan->doc, "workloads");
    snprintf(buf, len, "/targets");
    if (strcmp(name, plan->host) == 0) {
        snprintf(buf, len, "/targets/host");
        return;
    }
    /* A guest of a known host is "HOST/NAME" where the plan wrote NAME. */
    const char *slash = strrchr(name, '/');
    for (size_t i = 0; i < json_array_size(domains); i++)
        if (strcmp(json_string_value(json_array_get(domains, i)), name) == 0 ||
            (slash != NULL &&
             strcmp(json_string_value(json_array_get(domains, i)), slash + 1) == 0)) {
            hv_jpath_index(buf, len, "/targets/guests/domains", i);
            return;
        }
    if (json_object_get(guests, "template") != NULL)
        snprintf(buf, len, "/targets/guests/template");
    for (size_t i = 0; i < json_array_size(workloads); i++) {
        const json_t *params = json_object_get(json_array_get(workloads, i), "params");
        const char *peer = json_string_value(json_object_get(params, "peer"));
        if (peer != NULL && strcmp(peer, name) == 0) {
            char w[64];
            hv_jpath_index(w, sizeof w, "/workloads", i);
            snprintf(buf, len, "%s/params/peer", w);
            return;
        }
    }
}

/* The targets the plan names, in its order (host, guests, net peers),
 * each once and template clones left out (they come with the plan), into
 * a new array (free it; NULL when memory runs out) of *n names pointing
 * into the plan. */
static const char **plan_target_names(const struct hv_plan *plan, size_t *n)
{
    const char **names = calloc(1 + plan->n_guests + plan->n_workloads, sizeof *names);
    *n = 0;
    if (names == NULL)
        return NULL;
    add_name(names, n, plan->host);
    for (size_t i = 0; i < plan->n_guests; i++)
        if (strstr(plan->guests[i], HV_PLAN_ID_MARK) == NULL)
            add_name(names, n, plan->guests[i]);
    for (size_t i = 0; i < plan->n_workloads; i++)
        if (plan->workloads[i].peer != NULL)
            add_name(names, n, plan->workloads[i].peer);
    return names;
}

/* With targets.require_registered: whether every target the plan names
 * (host, guests, peers) is registered; otherwise answers 422 naming each
 * one that is not (or the database failure) and returns false. */
static bool targets_registered(struct hv_request *req, const struct hv_plan *plan)
{
    if (!plan->require_registered)
        return true;
    size_t n;
    const char **names = plan_target_names(plan, &n);
    if (names == NULL) {
        hv_reply_problem(req, HV_E_INTERNAL, "out of memory checking the targets", NULL);
        return false;
    }
    json_t *missing = NULL;
    enum hv_db_status s = hv_db_targets_unregistered(names, n, &missing);
    free(names);
    if (s != HV_DB_OK) {
        json_decref(missing);
        hv_reply_db_failure(req, s);
        return false;
    }
    size_t k = json_array_size(missing);
    if (k == 0) {
        json_decref(missing);
        return true;
    }
    json_t *errors = json_array();
    for (size_t i = 0; i < k; i++) {
        const char *name = json_string_value(json_array_get(missing, i));
        char path[256];
        target_path(plan, name, path, sizeof path);
        hv_errors_add(errors, path,
                      "target '%s' never registered; start its worker first, or drop "
                      "require_registered to let the plan wait for it",
                      name);
    }
    json_decref(missing);
    char detail[64];
    snprintf(detail, sizeof detail, "%zu target%s never registered", k, k == 1 ? "" : "s");
    hv_reply_problem(req, HV_E_IMPOSSIBLE_PLAN, detail, errors);
    return false;
}

/* Without targets.require_registered (which refused such a plan already):
 * a warning {"path", "message"} in the new array *out for each target the
 * plan's jobs run on that no worker ever registered (a misspelt host, a
 * guest not started yet), as the plan's "waiting" will say once stored.
 * Template clones come with the plan and are left out. */
static enum hv_db_status unregistered_warnings(const struct hv_plan *plan,
                                               const struct hv_expansion *x, json_t **out)
{
    *out = json_array();
    if (*out == NULL)
        return HV_DB_ERROR;
    if (plan->require_registered)
        return HV_DB_OK;
    /* Those some job runs on (a host without a baseline runs none). */
    size_t n;
    const char **names = plan_target_names(plan, &n);
    if (names == NULL) {
        json_decref(*out);
        *out = NULL;
        return HV_DB_ERROR;
    }
    size_t kept = 0;
    for (size_t k = 0; k < n; k++) {
        bool used = false;
        for (size_t i = 0; i < x->n_jobs && !used; i++)
            used = strcmp(x->jobs[i].target, names[k]) == 0;
        if (used)
            names[kept++] = names[k];
    }
    n = kept;
    json_t *missing = NULL;
    enum hv_db_status s = hv_db_targets_unregistered(names, n, &missing);
    free(names);
    size_t i;
    const json_t *m;
    json_array_foreach(s == HV_DB_OK ? missing : NULL, i, m)
    {
        const char *name = json_string_value(m);
        char path[256];
        target_path(plan, name, path, sizeof path);
        hv_errors_add(*out, path,
                      "target %s has never registered: the plan waits until its worker registers",
                      name);
    }
    json_decref(missing);
    if (s != HV_DB_OK) {
        json_decref(*out);
        *out = NULL;
    }
    return s;
}

/* The names of decl's members (a worker's site_factors) or of the strings
 * of an array, as "a, b" into buf ("none" when empty). */
static void list_names(const json_t *v, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    if (json_is_object(v)) {
        const char *k;
        const json_t *x;
        json_object_foreach((json_t *)v, k, x)
        {
            if (n < len)
                n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", k);
        }
    } else {
        for (size_t i = 0; i < json_array_size(v) && n < len; i++)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "",
                                  json_is_string(json_array_get(v, i))
                                      ? json_string_value(json_array_get(v, i))
                                      : "?");
    }
    if (buf[0] == '\0')
        snprintf(buf, len, "none");
}

/* The site factors ("site.NAME") the plan sets that its registered host's
 * worker does not declare, or at levels it does not list: one error each
 * at /factors/site.NAME. A host that never registered is not checked. */
static enum hv_db_status site_factor_errors(const struct hv_plan *plan, const json_t *factors,
                                            json_t *errors)
{
    const char *name;
    json_t *levels;
    json_t *decl = NULL;
    enum hv_db_status s = HV_DB_OK;
    bool fetched = false;
    json_object_foreach((json_t *)factors, name, levels)
    {
        if (!hv_site_factor_is(name))
            continue;
        if (!fetched) {
            s = hv_db_target_site_factors(plan->host, &decl);
            fetched = true;
            if (s != HV_DB_OK)
                break;
        }
        const char *site = name + strlen(HV_SITE_PREFIX);
        const json_t *d = json_object_get(decl, site);
        const json_t *allowed = json_object_get(d, "levels");
        char path[200], list[1024];
        hv_jpath(path, sizeof path, "/factors", name);
        if (!json_is_array(allowed)) {
            list_names(decl, list, sizeof list);
            hv_errors_add(errors, path,
                          "host '%s' declares no site factor '%s' (its worker's configuration, "
                          "\"factors\", declares: %s)",
                          plan->host, site, list);
            continue;
        }
        list_names(allowed, list, sizeof list);
        for (size_t i = 0; i < json_array_size(levels); i++) {
            const json_t *l = json_array_get(levels, i);
            bool found = false;
            for (size_t j = 0; !found && j < json_array_size(allowed); j++)
                found = json_equal(l, json_array_get(allowed, j));
            if (!found)
                hv_errors_add(errors, path,
                              "host '%s' does not allow level '%s' of site factor '%s' (its "
                              "levels: %s)",
                              plan->host, json_string_value(l), site, list);
        }
    }
    json_decref(decl);
    return s == HV_DB_NONE ? HV_DB_OK : s;
}

/* Whether the plan's host can apply every factor the plan sets, as its
 * worker said in its facts (facts.actuators); otherwise answers 422 naming
 * each factor, the host and what is missing (or the database failure) and
 * returns false. A host that never registered, or whose worker says
 * nothing of its actuators, is given the benefit of the doubt: its apply
 * step fails naming the factor instead. */
static bool host_can_apply(struct hv_request *req, const struct hv_plan *plan)
{
    const json_t *factors = json_object_get(plan->doc, "factors");
    if (json_object_size(factors) == 0)
        return true;
    json_t *errors = json_array();
    enum hv_db_status s = site_factor_errors(plan, factors, errors);
    json_t *acts = NULL;
    if (s == HV_DB_OK)
        s = hv_db_target_actuators(plan->host, &acts);
    if (s != HV_DB_OK && s != HV_DB_NONE) {
        json_decref(acts);
        json_decref(errors);
        hv_reply_db_failure(req, s);
        return false;
    }
    const char *name;
    json_t *levels;
    json_object_foreach((json_t *)factors, name, levels)
    {
        if (!json_is_object(acts))
            break;
        const json_t *a = json_object_get(acts, name);
        if (a == NULL || !json_is_false(json_object_get(a, "ok")))
            continue;
        const char *why = json_string_value(json_object_get(a, "why"));
        char path[200];
        hv_jpath(path, sizeof path, "/factors", name);
        hv_errors_add(errors, path, "host '%s' cannot apply factor '%s': %s", plan->host, name,
                      why != NULL ? why : "its worker says so");
    }
    json_decref(acts);
    size_t n = json_array_size(errors);
    if (n == 0) {
        json_decref(errors);
        return true;
    }
    char detail[96];
    snprintf(detail, sizeof detail, "%zu factor%s the host cannot apply", n, n == 1 ? "" : "s");
    hv_reply_problem(req, HV_E_IMPOSSIBLE_PLAN, detail, errors);
    return false;
}

/* The plan's disruption (plan_disrupt.h) judged against its host's last
 * facts: *warnings is a new array of what the answer warns of. Answers 422
 * naming each domain (or the database failure), and returns false, when
 * those facts show a domain running that the plan would restart without
 * leave. */
static bool disruption_judged(struct hv_request *req, const struct hv_plan *plan, json_t **warnings)
{
    json_t *facts = NULL;
    enum hv_db_status s = hv_db_target_disruption_facts(plan->host, &facts);
    *warnings = NULL;
    if (s != HV_DB_OK && s != HV_DB_NONE) {
        json_decref(facts);
        hv_reply_db_failure(req, s);
        return false;
    }
    json_t *found = json_array(), *refusals = json_array();
    char detail[1536];
    int rc = found != NULL && refusals != NULL
                 ? hv_plan_disruption(plan, s == HV_DB_OK ? facts : NULL, found, refusals, detail,
                                      sizeof detail)
                 : -1;
    json_decref(facts);
    if (rc != 0 || json_array_size(refusals) > 0) {
        json_decref(found);
        if (rc != 0) {
            json_decref(refusals);
            hv_reply_problem(req, HV_E_INTERNAL, "out of memory checking the plan", NULL);
        } else {
            hv_reply_problem(req, HV_E_IMPOSSIBLE_PLAN, detail, refusals);
        }
        return false;
    }
    json_decref(refusals);
    *warnings = found;
    return true;
}

/* Whether the plan's drain hooks can run: a url hook's address has the
 * form webhooks' have and the server has a key to sign it with; a local
 * hook's name is one its registered host's worker declares (a host that
 * never registered is not checked: its hook step fails naming it).
 * Otherwise answers 400 or 422 naming each and returns false. */
static bool hooks_usable(struct hv_request *req, const struct hv_plan *plan)
{
    const json_t *hooks = json_object_get(plan->doc, "hooks");
    if (json_object_size(hooks) == 0)
        return true;
    json_t *bad = json_array(), *impossible = json_array();
    json_t *decl = NULL;
    bool fetched = false;
    enum hv_db_status s = HV_DB_OK;
    const char *kind;
    json_t *h;
    json_object_foreach((json_t *)hooks, kind, h)
    {
        if (!json_is_object(h))
            continue; /* hooks.timeout, hooks.interval */
        char path[64];
        hv_jpath(path, sizeof path, "/hooks", kind);
        const char *url = json_string_value(json_object_get(h, "url"));
        const char *local = json_string_value(json_object_get(h, "local"));
        if (url != NULL) {
            const char *why = hv_webhook_url_problem(url);
            if (why != NULL)
                hv_errors_add(bad, path, "url: %s", why);
            else if (hv_cfg.hook_secret_file == NULL)
                hv_errors_add(impossible, path,
                              "url hooks need a signing key: this server runs without "
                              "--hook-secret-file");
            continue;
        }
        if (!fetched) {
            s = hv_db_target_hooks(plan->host, &decl);
            fetched = true;
        }
        if (s != HV_DB_OK)
            continue;
        bool found = false;
        for (size_t i = 0; !found && i < json_array_size(decl); i++)
            found = json_is_string(json_array_get(decl, i)) &&
                    strcmp(json_string_value(json_array_get(decl, i)), local) == 0;
        if (!found) {
            char list[1024];
            list_names(decl, list, sizeof list);
            hv_errors_add(impossible, path,
                          "host '%s' declares no hook '%s' (its worker's configuration, "
                          "\"hooks\", declares: %s)",
                          plan->host, local, list);
        }
    }
    json_decref(decl);
    if (s != HV_DB_OK && s != HV_DB_NONE) {
        json_decref(bad);
        json_decref(impossible);
        hv_reply_db_failure(req, s);
        return false;
    }
    size_t n_bad = json_array_size(bad), n_impossible = json_array_size(impossible);
    if (n_bad > 0) {
        hv_reply_problem(req, HV_E_INVALID_PLAN, "a hook's url is not usable", bad);
        json_decref(impossible);
    } else if (n_impossible > 0) {
        hv_reply_problem(req, HV_E_IMPOSSIBLE_PLAN, "a hook cannot run", impossible);
        json_decref(bad);
    } else {
        json_decref(bad);
        json_decref(impossible);
    }
    return n_bad == 0 && n_impossible == 0;
}

/* Answers a 400 or 422 with the plan's errors (taken). */
static void reply_plan_errors(struct hv_request *req, enum hv_plan_verdict v, json_t *errors)
{
    char detail[64];
    snprintf(detail, sizeof detail, "%zu error%s in the plan", json_array_size(errors),
             json_array_size(errors) == 1 ? "" : "s");
    hv_reply_problem(req, v == HV_PLAN_INVALID ? HV_E_INVALID_PLAN : HV_E_IMPOSSIBLE_PLAN, detail,
                     errors);
}

/* The registered hosts a fleet plan's selector picks, as a new JSON array
 * of names; otherwise answers (422 when none) and returns NULL. */
static json_t *fleet_hosts(struct hv_request *req, const char *label)
{
    char why[200];
    json_t *sel = hv_selector_parse(label, why, sizeof why), *names = NULL;
    enum hv_db_status s = sel != NULL ? hv_db_host_names_by_label(sel, &names) : HV_DB_ERROR;
    json_decref(sel);
    if (s != HV_DB_OK) {
        json_decref(names);
        hv_reply_db_failure(req, s);
        return NULL;
    }
    if (json_array_size(names) > 0)
        return names;
    json_decref(names);
    json_t *errors = json_array();
    hv_errors_add(errors, "/targets/host",
                  "no registered host carries the labels %s (a host worker's --label, or "
                  "PUT /api/v1/targets/{id}/labels)",
                  label);
    hv_reply_problem(req, HV_E_IMPOSSIBLE_PLAN, "no host matches the fleet plan's selector",
                     errors);
    return NULL;
}

/* The dry run of a fleet plan: the first host's expansion, the hosts
 * matched and each one's job count. */
static json_t *fleet_dry_json(const json_t *parent, const struct hv_plan *plans,
                              const struct hv_expansion *xs, size_t n, const json_t *judged)
{
    json_t *out = expansion_json(&plans[0], &xs[0], judged);
    json_t *hosts = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(
            hosts, json_pack("{s:s,s:I}", "host", plans[i].host, "jobs", (json_int_t)xs[i].n_jobs));
    json_object_set(out, "plan", (json_t *)parent);
    json_object_set_new(out, "hosts", hosts);
    return out;
}

/* Appends to all each warning of some that it does not hold yet. */
static void add_new_warnings(json_t *all, const json_t *some)
{
    size_t i, j;
    const json_t *w, *have;
    json_array_foreach(some, i, w)
    {
        bool seen = false;
        json_array_foreach(all, j, have)
        {
            seen = seen || json_equal(w, have);
        }
        if (!seen)
            json_array_append(all, (json_t *)w);
    }
}

/* A fleet plan (lib/plan_fleet.h): one child per matching host, each
 * checked as an ordinary plan, stored together with their parent. */
static void fleet_create(struct hv_request *req, json_t *doc, const char *label, bool dry,
                         const char *key)
{
    json_t *hosts = fleet_hosts(req, label);
    if (hosts == NULL)
        return;
    size_t n = json_array_size(hosts), parsed = 0, expanded = 0;
    struct hv_plan *plans = calloc(n, sizeof *plans);
    struct hv_expansion *xs = calloc(n, sizeof *xs);
    json_int_t seed = (json_int_t)(fresh_seed() >> 11);
    static const bool fleet = true;
    struct hv_plan_env env = {guests_by_label, guests_by_domain, (void *)&fleet,
                              hv_cfg.noise_default};
    bool ok = plans != NULL && xs != NULL;
    /* The children's warnings, each text once. */
    json_t *judged = json_array();
    if (!ok)
        hv_reply_problem(req, HV_E_INTERNAL, "out of memory checking the plan", NULL);
    for (size_t i = 0; ok && i < n; i++) {
        json_t *child = hv_plan_fleet_child(doc, json_string_value(json_array_get(hosts, i)), seed);
        json_t *errors = json_array();
        enum hv_plan_verdict v =
            child != NULL ? hv_plan_parse(child, 0, &env, &plans[i], errors) : HV_PLAN_NO_MEMORY;
        json_decref(child);
        if (v == HV_PLAN_VALID)
            parsed++;
        ok = v == HV_PLAN_VALID;
        if (v == HV_PLAN_NO_MEMORY) {
            json_decref(errors);
            hv_reply_problem(req, HV_E_INTERNAL, "out of memory checking the plan", NULL);
        } else if (!ok) {
            reply_plan_errors(req, v, errors);
        } else {
            json_decref(errors);
        }
        if (ok && hv_plan_expand(&plans[i], &xs[i]) != 0) {
            ok = false;
            hv_reply_problem(req, HV_E_INTERNAL, "out of memory expanding the plan", NULL);
        } else if (ok) {
            expanded++;
        }
        json_t *w = NULL;
        ok = ok && targets_registered(req, &plans[i]) && host_can_apply(req, &plans[i]) &&
             hooks_usable(req, &plans[i]) && site_benchmarks_declared(req, &plans[i], &xs[i]) &&
             disruption_judged(req, &plans[i], &w);
        add_new_warnings(judged, w);
        json_decref(w);
    }
    if (ok) {
        /* The parent keeps the plan as the first child normalised it, its
         * host the selector. */
        json_t *parent = json_deep_copy(plans[0].doc);
        json_object_set(json_object_get(parent, "targets"), "host",
                        json_object_get(json_object_get(doc, "targets"), "host"));
        if (dry) {
            hv_reply_json(req, 200, fleet_dry_json(parent, plans, xs, n, judged));
        } else {
            char sha[65];
            hv_sha256_hex(req->body, req->body_len, sha);
            json_int_t maxp = json_integer_value(json_object_get(parent, "max_parallel_hosts"));
            struct hv_fleet_submit f = {parent, plans[0].seed, (int)maxp, n,  plans,
                                        xs,     req->token_id, key,       sha};
            int64_t id = 0;
            bool replayed = false;
            enum hv_db_status s = hv_db_fleet_create(&f, &id, &replayed);
            /* Its children's hosts were picked among the registered. */
            reply_stored(req, s, id, replayed, json_incref(judged));
        }
        json_decref(parent);
    }
    for (size_t i = 0; i < expanded; i++)
        hv_expansion_free(&xs[i]);
    for (size_t i = 0; i < parsed; i++)
        hv_plan_free(&plans[i]);
    free(plans);
    free(xs);
    json_decref(judged);
    json_decref(hosts);
}

void hv_h_plans_create(struct hv_request *req)
{
    const char *key;
    if (!idempotency_key(req, &key))
        return;
    json_t *errors = json_array();
    bool dry = false;
    hv_query_bool(req, "dry_run", false, &dry, errors);
    if (hv_query_failed(req, errors))
        return;
    json_t *doc = hv_req_json(req);
    if (doc == NULL)
        return;
    errors = json_array();
    const char *label = NULL;
    int fleet = hv_plan_fleet_label(doc, &label, errors);
    if (fleet != 0) {
        if (fleet > 0)
            fleet_create(req, doc, label, dry, key);
        else
            reply_plan_errors(req, HV_PLAN_INVALID, errors);
        if (fleet > 0)
            json_decref(errors);
        json_decref(doc);
        return;
    }
    struct hv_plan plan;
    struct hv_plan_env env = {guests_by_label, guests_by_domain, NULL, hv_cfg.noise_default};
    enum hv_plan_verdict v = hv_plan_parse(doc, fresh_seed(), &env, &plan, errors);
    json_decref(doc);
    if (v == HV_PLAN_NO_MEMORY) {
        json_decref(errors);
        hv_reply_problem(req, HV_E_INTERNAL, "out of memory checking the plan", NULL);
        return;
    }
    if (v != HV_PLAN_VALID) {
        char detail[64];
        snprintf(detail, sizeof detail, "%zu error%s in the plan", json_array_size(errors),
                 json_array_size(errors) == 1 ? "" : "s");
        hv_reply_problem(req, v == HV_PLAN_INVALID ? HV_E_INVALID_PLAN : HV_E_IMPOSSIBLE_PLAN,
                         detail, errors);
        return;
    }
    json_decref(errors);
    struct hv_expansion x;
    if (hv_plan_expand(&plan, &x) != 0) {
        hv_plan_free(&plan);
        hv_reply_problem(req, HV_E_INTERNAL, "out of memory expanding the plan", NULL);
        return;
    }
    json_t *judged = NULL;
    if (targets_registered(req, &plan) && host_can_apply(req, &plan) && hooks_usable(req, &plan) &&
        site_benchmarks_declared(req, &plan, &x) && disruption_judged(req, &plan, &judged)) {
        if (dry)
            hv_reply_json(req, 200, expansion_json(&plan, &x, judged));
        else
            store(req, &plan, &x, key, judged);
    }
    json_decref(judged);
    hv_expansion_free(&x);
    hv_plan_free(&plan);
}

void hv_h_plans_list(struct hv_request *req)
{
    json_t *errors = json_array();
    struct hv_plan_filter f = {0};
    long limit, cursor;
    hv_query_enum(req, "status", plan_states, &f.status, errors);
    hv_query_str(req, "target", 128, &f.target, errors);
    hv_query_str(req, "name", 128, &f.name, errors);
    hv_query_time(req, "since", &f.since, errors);
    hv_query_int(req, "limit", 1, 500, 50, &limit, errors);
    hv_query_int(req, "cursor", 1, 9007199254740991L, 0, &cursor, errors);
    if (hv_query_failed(req, errors))
        return;
    /* One more than asked tells whether a next page exists. */
    f.limit = (int)limit + 1;
    f.before_id = cursor;
    json_t *items = NULL;
    enum hv_db_status s = hv_db_plan_list(&f, &items);
    if (s != HV_DB_OK) {
        hv_reply_db_failure(req, s);
        return;
    }
    hv_reply_page(req, items, limit, "id");
}

/* The plans' answers kept for --plan-cache-ms (answer_cache.h): the
 * plans most recently read, and no answer over a mebibyte (a plan of many
 * workloads and targets), which is read each time. */
#define PLAN_CACHE_KEYS    256
#define PLAN_CACHE_MAX_LEN ((size_t)1 << 20)

static struct hv_answer_cache *plan_answers;
static pthread_once_t plan_answers_once = PTHREAD_ONCE_INIT;

static void plan_answers_make(void)
{
    plan_answers = hv_answer_cache_new(PLAN_CACHE_KEYS, PLAN_CACHE_MAX_LEN);
}

/* Answers plan req->ids[0] as read from the database now; with cache, the
 * answer is kept there with gen and read_at (taken before the read). */
static void reply_plan(struct hv_request *req, struct hv_answer_cache *cache, uint64_t gen,
                       double read_at)
{
    /* The answer is PostgreSQL's text, sent as it comes. */
    char *answer = NULL;
    enum hv_db_status s = hv_db_plan_read(req->ids[0], &answer);
    if (s == HV_DB_OK) {
        if (cache != NULL)
            hv_answer_cache_put(cache, req->ids[0], gen, read_at, answer, strlen(answer));
        hv_reply_text(req, 200, "application/json", answer);
    } else if (s == HV_DB_NONE) {
        hv_reply_problem(req, HV_E_NOT_FOUND, "no plan with this id", NULL);
    } else {
        hv_reply_db_failure(req, s);
    }
}

void hv_h_plan_get(struct hv_request *req)
{
    if (hv_cfg.plan_cache_ms <= 0) {
        reply_plan(req, NULL, 0, 0);
        return;
    }
    pthread_once(&plan_answers_once, plan_answers_make);
    /* Both before the read: an answer kept is at most as new as they say. */
    uint64_t gen = hv_write_gen();
    double now = hv_monotonic();
    char *kept = plan_answers != NULL ? hv_answer_cache_get(plan_answers, req->ids[0], gen, now,
                                                            hv_cfg.plan_cache_ms / 1000.0)
                                      : NULL;
    hv_metrics_plan_cache(kept != NULL);
    if (kept != NULL)
        hv_reply_text(req, 200, "application/json", kept);
    else
        reply_plan(req, plan_answers, gen, now);
}

void hv_h_plan_cancel(struct hv_request *req)
{
    if (!hv_plan_owner_check(req, req->ids[0], "cancel"))
        return;
    enum hv_db_status s = hv_db_plan_cancel(req->ids[0]);
    if (s == HV_DB_NONE) {
        hv_reply_problem(req, HV_E_NOT_FOUND, "no plan with this id", NULL);
        return;
    }
    if (s == HV_DB_CONFLICT) {
        hv_reply_problem(req, HV_E_CONFLICT, "the plan already ended; nothing to cancel", NULL);
        return;
    }
    if (s != HV_DB_OK) {
        hv_reply_db_failure(req, s);
        return;
    }
    /* Read anew: the cancellation is not yet counted in the generation. */
    reply_plan(req, NULL, 0, 0);
}

void hv_h_plan_jobs(struct hv_request *req)
{
    json_t *errors = json_array();
    const char *status;
    long limit, cursor;
    hv_query_enum(req, "status", job_states, &status, errors);
    hv_query_int(req, "limit", 1, 1000, 100, &limit, errors);
    hv_query_int(req, "cursor", 0, 2147483647L, -1, &cursor, errors);
    if (hv_query_failed(req, errors))
        return;
    json_t *items = NULL;
    enum hv_db_status s = hv_db_plan_jobs(req->ids[0], status, cursor, (int)limit + 1, &items);
    if (s == HV_DB_NONE) {
        hv_reply_problem(req, HV_E_NOT_FOUND, "no plan with this id", NULL);
        return;
    }
    if (s != HV_DB_OK) {
        hv_reply_db_failure(req, s);
        return;
    }
    hv_reply_page(req, items, limit, "run_order");
}
