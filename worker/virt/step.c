/* step.c — see step.h. */
#include "worker/virt/step.h"

#include "fault.h"
#include "log.h"
#include "names.h"
#include "timeutil.h"
#include "worker/state.h"
#include "worker/virt/actuator.h"
#include "worker/virt/booting.h"
#include "worker/virt/clone.h"
#include "worker/virt/restored.h"
#include "worker/wake.h"

#include <stdio.h>
#include <string.h>

/* How long a result is offered to a server that does not answer, and the
 * longest pause between tries. */
#define UPLOAD_FOR  300.0
#define UPLOAD_GAP  30.0
#define ERROR_BYTES 8192

void hv_step_journal_dir(char *buf, size_t len)
{
    snprintf(buf, len, "%s/journal", hv_state_path());
}

/* The context of a step against env and journal j. */
static struct hv_act_ctx step_ctx(const struct hv_step *step, const struct hv_step_env *env,
                                  struct hv_journal *j, void (*tick)(void *), void *arg)
{
    return (struct hv_act_ctx){.root = env->root,
                               .libvirt_uri = env->libvirt_uri,
                               .disk = step->disk,
                               .nic = step->nic,
                               .domains = step->domains,
                               .allow_restart = step->allow_restart,
                               .named = step->named_domains,
                               .plan_id = step->plan_id,
                               .journal = j,
                               .shutdown_timeout = env->shutdown_timeout,
                               .tick = tick,
                               .tick_arg = arg,
                               .registration =
                                   strcmp(step->kind, "apply") == 0 ? env->registration : NULL,
                               .registration_arg = env->registration_arg,
                               .up_wait = env->guest_wait};
}

/* Whether now is a registration of another boot than g's "before"
 * (ctx->started): by boot id when both have one, else a newer one. A
 * late registration of the boot before the restart does not count. */
static bool came_back(const json_t *g, const struct hv_guest_registration *now)
{
    const char *before = json_string_value(json_object_get(g, "before_boot"));
    if (now->worker_id == 0)
        return false;
    if (before != NULL && before[0] != '\0' && now->boot_id[0] != '\0')
        return strcmp(before, now->boot_id) != 0;
    return now->worker_id > json_integer_value(json_object_get(g, "before"));
}

/* Waits until the worker of every guest ctx started registered again
 * (came_back()), heartbeating through ctx->tick. Returns 0, or -1 with
 * err naming each domain whose worker did not register in time. */
static int wait_guests(const struct hv_step *step, const struct hv_step_env *env,
                       struct hv_act_ctx *ctx, char *err, size_t len)
{
    if (env->registration == NULL || json_object_size(ctx->started) == 0)
        return 0;
    double limit = env->guest_wait > 0 ? env->guest_wait : HV_STEP_GUEST_WAIT;
    double t0 = hv_monotonic();
    size_t pending = json_object_size(ctx->started);
    hv_info("step %lld: waiting up to %.0f s for the worker%s of %zu restarted guest%s to "
            "register again",
            step->id, limit, pending == 1 ? "" : "s", pending, pending == 1 ? "" : "s");
    for (;;) {
        const char *name;
        json_t *g;
        json_object_foreach(ctx->started, name, g)
        {
            if (json_is_true(json_object_get(g, "registered")))
                continue;
            struct hv_guest_registration now;
            const char *uuid = json_string_value(json_object_get(g, "uuid"));
            if (env->registration(env->registration_arg, uuid, &now) == 0 && came_back(g, &now)) {
                json_object_set_new(g, "registered", json_true());
                pending--;
                hv_booting_done(uuid);
                hv_info("step %lld: the worker of %s registered again %.0f s after the restart "
                        "(boot %.8s)",
                        step->id, name, hv_monotonic() - t0, now.boot_id[0] ? now.boot_id : "?");
            }
        }
        if (pending == 0)
            return 0;
        if (hv_monotonic() - t0 >= limit || hv_shutdown_requested())
            break;
        if (ctx->tick != NULL)
            ctx->tick(ctx->tick_arg);
        hv_wake_wait(2.0);
    }
    double waited = hv_monotonic() - t0;
    const char *name;
    json_t *g;
    json_object_foreach(ctx->started, name, g)
    {
        if (json_is_true(json_object_get(g, "registered")))
            continue;
        size_t k = strlen(err);
        snprintf(err + k, len - k,
                 "%s%s was restarted and its worker did not register again within %.0f s "
                 "(waited %.0f s for a registration of DMI product UUID %s; --guest-wait)",
                 k ? "; " : "", name, limit, waited, json_string_value(json_object_get(g, "uuid")));
    }
    return -1;
}

/* A plan with a guest template: its guests (the step's domains) cloned
 * from the template when missing, stopped: the apply pass gives them their
 * restart-class levels and starts them. Returns 0 or -1 with err. */
static int make_clones(const struct hv_step *step, struct hv_act_ctx *ctx, char *err, size_t len)
{
    size_t i;
    json_t *v;
    int made = 0;
    json_array_foreach(step->domains, i, v)
    {
        int rc = hv_clone_create(ctx, step->template_domain, json_string_value(v), err, len);
        if (rc < 0)
            return -1;
        made += rc;
    }
    if (made > 0)
        hv_info("plan %lld: %d clone%s of %s defined", step->plan_id, made, made == 1 ? "" : "s",
                step->template_domain);
    return 0;
}

/* Starts the clones the apply pass did not start (a plan without guest
 * levels). Returns 0 or -1 with err. */
static int start_clones(const struct hv_step *step, struct hv_act_ctx *ctx, char *err, size_t len)
{
    size_t i;
    json_t *v;
    json_array_foreach(step->domains, i, v)
    {
        if (hv_clone_start(ctx, json_string_value(v), err, len) != 0)
            return -1;
    }
    return 0;
}

/* A drain hook (before_host, after_host) the worker's configuration
 * names: its answer is the result's. */
static json_t *run_hook(const struct hv_step *step, void (*tick)(void *), void *arg)
{
    char err[ERROR_BYTES] = "";
    const json_t *s = json_object_get(step->doc, "step");
    const char *name = json_string_value(json_object_get(json_object_get(s, "hook"), "local"));
    const char *host = json_string_value(json_object_get(s, "host"));
    json_t *answer = NULL;
    int rc = name != NULL ? hv_site_hook_run(name, step->plan_id, host != NULL ? host : "",
                                             step->kind, json_object_get(s, "labels"), tick, arg,
                                             &answer, err, sizeof err)
                          : (snprintf(err, sizeof err, "the step names no local hook"), -1);
    if (answer == NULL)
        answer = json_pack("{s:s}", "error", err);
    /* only a before_host gates: an after_host saying "not yet" failed */
    bool not_yet = rc == 1 && strcmp(step->kind, "before_host") == 0;
    json_t *body = json_pack("{s:i, s:s, s:o, s:o, s:o}", "attempt", step->attempt, "status",
                             rc == 0   ? "ok"
                             : not_yet ? "not_yet"
                                       : "error",
                             "settings", json_object(), "changes", json_array(), "answer", answer);
    if (body != NULL && rc != 0)
        json_object_set_new(body, "error", json_string(err));
    return body;
}

/* The names of an apply step that reach the host (the guests' domains and
 * the template's), checked again before anything is opened or changed.
 * Returns 0, or -1 with err naming the first that is not host-safe. */
static int check_names(const struct hv_step *step, char *err, size_t len)
{
    if (step->template_domain != NULL && !hv_name_host_ok(step->template_domain))
        return hv_act_fail(err, len, "the step's template domain %s", HV_NAME_HOST_RULE);
    size_t i;
    json_t *v;
    json_array_foreach(step->domains, i, v)
    {
        if (!hv_name_host_json_ok(v))
            return hv_act_fail(err, len, "the step's domain %zu %s", i, HV_NAME_HOST_RULE);
    }
    return 0;
}

json_t *hv_step_execute(const struct hv_step *step, const struct hv_step_env *env,
                        void (*tick)(void *), void *arg)
{
    if (strcmp(step->kind, "before_host") == 0 || strcmp(step->kind, "after_host") == 0)
        return run_hook(step, tick, arg);
    char err[ERROR_BYTES] = "";
    if (strcmp(step->kind, "apply") == 0 && check_names(step, err, sizeof err) != 0)
        return json_pack("{s:i, s:s, s:o, s:o, s:s}", "attempt", step->attempt, "status", "error",
                         "settings", json_object(), "changes", json_array(), "error", err);
    json_t *settings = NULL;
    int rc = -1;
    struct hv_journal *j = hv_journal_open(env->journal_dir, step->plan_id, err, sizeof err);
    struct hv_act_ctx ctx = step_ctx(step, env, j, tick, arg);
    json_t *pending = NULL;
    if (j != NULL && strcmp(step->kind, "apply") == 0)
        pending = hv_actuators_operator_pending(step->levels, &ctx);
    if (json_array_size(pending) > 0) {
        /* The block waits for the operator before anything is changed. */
        size_t i;
        json_t *w;
        json_array_foreach(pending, i, w)
        {
            size_t k = strlen(err);
            snprintf(err + k, sizeof err - k, "%s%s", k ? "; " : "",
                     json_string_value(json_object_get(w, "message")));
            json_object_del(w, "message");
        }
        json_t *body = json_pack("{s:i, s:s, s:o, s:o, s:o, s:s}", "attempt", step->attempt,
                                 "status", "waiting_for_operator", "settings", json_object(),
                                 "changes", json_array(), "waiting", pending, "error", err);
        hv_act_ctx_release(&ctx);
        hv_journal_close(j);
        return body;
    }
    json_decref(pending);
    if (j != NULL && strcmp(step->kind, "apply") == 0) {
        rc = step->template_domain != NULL ? make_clones(step, &ctx, err, sizeof err) : 0;
        if (rc == 0)
            rc = hv_actuators_apply(step->levels, &ctx, &settings, err, sizeof err);
        if (rc == 0 && step->template_domain != NULL)
            rc = start_clones(step, &ctx, err, sizeof err);
        if (rc == 0)
            rc = wait_guests(step, env, &ctx, err, sizeof err);
    } else if (j != NULL)
        rc = hv_actuators_restore(&ctx, err, sizeof err);
    json_t *body =
        json_pack("{s:i, s:s, s:o, s:o}", "attempt", step->attempt, "status",
                  rc == 0 ? "ok" : "error", "settings", settings != NULL ? settings : json_object(),
                  "changes", ctx.changes != NULL ? ctx.changes : json_array());
    if (body != NULL && rc != 0)
        json_object_set_new(body, "error", json_string(err));
    json_decref(ctx.started);
    hv_act_ctx_release(&ctx);
    hv_journal_close(j);
    return body;
}

/* A step's heartbeats while it waits on guests. */
struct beat {
    struct hv_client *c;
    const struct hv_step *step;
    int lease;
    double next;
    bool lost;
};

static void heartbeat(void *arg)
{
    struct beat *b = arg;
    double now = hv_monotonic();
    if (b->lost || now < b->next)
        return;
    enum hv_call call = hv_client_step_heartbeat(b->c, b->step, &b->lease);
    if (call == HV_CALL_STALE || call == HV_CALL_NOT_FOUND) {
        hv_warn("step %lld is no longer ours (%s); finishing what it started", b->step->id,
                hv_client_last_error(b->c));
        b->lost = true;
    } else if (call != HV_CALL_OK) {
        hv_warn("step %lld: heartbeat failed: %s", b->step->id, hv_client_last_error(b->c));
    }
    b->next = now + (b->lease / 3.0 < 1 ? 1 : b->lease / 3.0);
}

/* Offers the result until the server takes it, refuses it, or time is up. */
static enum hv_step_outcome deliver(struct hv_client *c, const struct hv_step *step, json_t *body)
{
    double start = hv_monotonic(), gap = 1;
    for (;;) {
        enum hv_call call = hv_client_step_result(c, step, body);
        if (call == HV_CALL_OK)
            return HV_STEP_REPORTED;
        if (call == HV_CALL_STALE || call == HV_CALL_NOT_FOUND) {
            hv_warn("step %lld: the server no longer takes this attempt's result (%s)", step->id,
                    hv_client_last_error(c));
            return HV_STEP_STALE;
        }
        if (call != HV_CALL_RETRY || hv_monotonic() - start + gap > UPLOAD_FOR ||
            hv_shutdown_requested()) {
            hv_error("step %lld: the result was not delivered: %s", step->id,
                     hv_client_last_error(c));
            return HV_STEP_UNREPORTED;
        }
        hv_warn("step %lld: result upload failed (%s); retrying in %.0f s", step->id,
                hv_client_last_error(c), gap);
        hv_wake_wait(gap);
        gap = gap * 2 > UPLOAD_GAP ? UPLOAD_GAP : gap * 2;
    }
}

enum hv_step_outcome hv_step_run(struct hv_client *c, const struct hv_step *step,
                                 const struct hv_step_env *env)
{
    hv_info("step %lld started: %s for plan %lld (block %d, configuration %s, attempt %d)",
            step->id, step->kind, step->plan_id, step->block, step->configuration, step->attempt);
    char point[40];
    snprintf(point, sizeof point, "%s.claimed", step->kind);
    hv_fault(point);
    double t0 = hv_monotonic();
    struct beat b = {.c = c, .step = step, .lease = step->lease_seconds};
    b.next = t0 + step->lease_seconds / 3.0;
    json_t *body = hv_step_execute(step, env, heartbeat, &b);
    if (body == NULL) {
        hv_error("step %lld: out of memory building its result", step->id);
        return HV_STEP_UNREPORTED;
    }
    const char *status = json_string_value(json_object_get(body, "status"));
    size_t changes = json_array_size(json_object_get(body, "changes"));
    if (strcmp(status, "ok") == 0)
        hv_info("step %lld (%s, plan %lld) done in %.1f s: %zu change%s", step->id, step->kind,
                step->plan_id, hv_monotonic() - t0, changes, changes == 1 ? "" : "s");
    else if (strcmp(status, "waiting_for_operator") == 0)
        hv_warn("step %lld (plan %lld, block %d) waits for the operator, nothing changed: %s",
                step->id, step->plan_id, step->block,
                json_string_value(json_object_get(body, "error")));
    else
        hv_warn("step %lld (%s, plan %lld) failed after %.1f s (%zu change%s): %s", step->id,
                step->kind, step->plan_id, hv_monotonic() - t0, changes, changes == 1 ? "" : "s",
                json_string_value(json_object_get(body, "error")));
    snprintf(point, sizeof point, "%s.done", step->kind);
    hv_fault(point);
    enum hv_step_outcome out = deliver(c, step, body);
    json_decref(body);
    return out;
}

size_t hv_step_restore_all(const struct hv_step_env *env, const char *how)
{
    json_t *plans = hv_journal_plans(env->journal_dir);
    size_t left = 0, i;
    json_t *id;
    json_array_foreach(plans, i, id)
    {
        char err[ERROR_BYTES];
        long long plan = json_integer_value(id);
        struct hv_journal *j = hv_journal_open(env->journal_dir, plan, err, sizeof err);
        if (j == NULL) {
            hv_error("plan %lld: %s", plan, err);
            left++;
            continue;
        }
        size_t n = hv_journal_count(j);
        if (n > 0)
            hv_info("plan %lld: restoring %zu setting%s from %s", plan, n, n == 1 ? "" : "s",
                    hv_journal_path(j));
        struct hv_act_ctx ctx = {.root = env->root,
                                 .libvirt_uri = env->libvirt_uri,
                                 .plan_id = plan,
                                 .journal = j,
                                 .shutdown_timeout = env->shutdown_timeout};
        if (n > 0 && hv_actuators_restore(&ctx, err, sizeof err) != 0)
            hv_error("plan %lld: %zu setting%s not restored: %s", plan, hv_journal_count(j),
                     hv_journal_count(j) == 1 ? "" : "s", err);
        else if (n > 0)
            hv_info("plan %lld: everything restored", plan);
        left += hv_journal_count(j);
        if (env->restored_file != NULL &&
            hv_restored_add(env->restored_file, plan, ctx.changes, how, err, sizeof err) != 0)
            hv_error("plan %lld: the server will not learn what was restored: %s", plan, err);
        json_decref(ctx.changes);
        hv_act_ctx_release(&ctx);
        hv_journal_close(j);
    }
    json_decref(plans);
    return left;
}
