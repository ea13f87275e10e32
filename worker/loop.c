/* loop.c — see loop.h. */
#include "worker/loop.h"

#include "log.h"
#include "worker/client.h"
#include "worker/deliver.h"
#include "worker/job.h"
#include "timeutil.h"
#include "worker/state.h"
#include "worker/telemetry.h"
#include "worker/virt/actuator.h"
#include "worker/virt/restored.h"
#include "worker/virt/step.h"
#include "worker/wake.h"

#include <string.h>

#define BACKOFF_FIRST 1.0
#define BACKOFF_MAX   30.0
/* An empty long poll answered faster than this was not held. */
#define LONG_POLL_MIN 1.0
/* How long a step waits for the telemetry thread to read back the guest
 * jobs that ended (a libvirt reading and an upload, retried). */
#define STEP_SYNC_SECONDS 30.0

/* A retry loop's memory: whether the server is failing, how (so a change
 * is logged once) and the current backoff. */
struct outage {
    bool active;
    long status; /* HTTP status of the last failure, 0 for no answer */
    double delay;
};

/* Logs a failure when it differs from the previous one, then waits the
 * next backoff step (woken early by a shutdown signal). */
static void outage_wait(struct outage *o, struct hv_client *c, const char *what)
{
    long status = hv_client_last_status(c);
    if (!o->active || o->status != status)
        hv_warn("%s: %s; retrying with backoff up to %.0f s", what, hv_client_last_error(c),
                BACKOFF_MAX);
    else
        hv_debug("%s: %s", what, hv_client_last_error(c));
    o->active = true;
    o->status = status;
    o->delay = o->delay == 0 ? BACKOFF_FIRST : o->delay * 2;
    if (o->delay > BACKOFF_MAX)
        o->delay = BACKOFF_MAX;
    hv_wake_wait(o->delay);
}

static void outage_over(struct outage *o, const char *what)
{
    if (o->active)
        hv_info("%s: the server answers again", what);
    *o = (struct outage){0};
}

/* Starts sending the credential registration issued (or confirmed), and
 * keeps a new one in the state folder for the next start. */
static void take_registration(struct hv_client *c, const struct hv_worker_config *cfg,
                              const struct hv_registration *reg)
{
    if (reg->credential[0] != '\0') {
        if (hv_client_use_credential(c, reg->credential) != 0)
            hv_error("out of memory");
        hv_state_credential_save(cfg->server, reg->credential, reg->worker_id);
    }
    struct hv_result_limits l = HV_RESULT_LIMITS_DEFAULT;
    if (reg->max_result_bytes > 0)
        l.max_bytes = (size_t)reg->max_result_bytes;
    if (reg->max_samples > 0)
        l.max_samples = (size_t)reg->max_samples;
    if (reg->max_raw_bytes > 0)
        l.max_raw = (size_t)reg->max_raw_bytes;
    hv_deliver_set_limits(&l);
    hv_info("registered as \"%s\" (target %lld, worker %lld%s, %s, fingerprint %s)",
            reg->name[0] != '\0' ? reg->name : cfg->name, reg->target_id, reg->worker_id,
            reg->credential[0] ? "" : ", credential kept", cfg->kind, cfg->fingerprint);
    if (reg->fingerprint[0] != '\0' && strcmp(reg->fingerprint, cfg->fingerprint) != 0)
        hv_info("the server computed fingerprint %s for these facts", reg->fingerprint);
}

/* The host settings this host worker reads now (under --sysfs-root), as
 * the server takes them: catalogue factor -> level. */
static json_t *host_settings(const struct hv_worker_config *cfg)
{
    struct hv_act_ctx ctx = {.root = cfg->sysfs_root};
    json_t *settings = hv_actuators_host_settings(&ctx);
    hv_act_ctx_release(&ctx);
    return settings;
}

/* Reports the host settings read now; a failure waits for the next time. */
static void report_settings(struct hv_client *c, const struct hv_worker_config *cfg)
{
    json_t *settings = host_settings(cfg);
    if (settings == NULL)
        return;
    if (hv_client_report_settings(c, settings) == HV_CALL_OK)
        hv_debug("host settings reported (%zu)", json_object_size(settings));
    else
        hv_warn("cannot report the host settings: %s", hv_client_last_error(c));
    json_decref(settings);
}

/* Registers, retrying until it works: with the credential kept from an
 * earlier run when there is one (so this worker keeps its target and its
 * claimed attempts), else with the worker token. Then sends the results
 * kept from before. Returns 0, 1 when refused for good, or -1 on
 * shutdown. */
static int register_worker(struct hv_client *c, const struct hv_worker_config *cfg,
                           long long *target_id)
{
    struct outage o = {0};
    char kept[80];
    long long kept_id = 0;
    bool have = hv_state_credential_load(cfg->server, kept, sizeof kept, &kept_id) == 0;
    if (have && hv_client_use_credential(c, kept) != 0)
        have = false;
    bool held_logged = false;
    /* The results kept from an earlier run go with the registration: the
     * other attempts and steps of the credential ended with that run. */
    json_t *kept_list = hv_state_outbox_list(), *held = json_array(), *e;
    size_t i;
    json_array_foreach(kept_list, i, e)
    {
        json_array_append_new(held, json_pack("{s:O, s:O}", "job_id", json_object_get(e, "job_id"),
                                              "attempt", json_object_get(e, "attempt")));
    }
    json_decref(kept_list);
    hv_client_set_held(c, held);
    while (!hv_shutdown_requested()) {
        struct hv_registration reg;
        enum hv_call call = hv_client_register(c, cfg->name, cfg->kind, cfg->host, cfg->facts,
                                               cfg->fingerprint, cfg->labels, &reg);
        if (call == HV_CALL_OK) {
            outage_over(&o, "register");
            take_registration(c, cfg, &reg);
            *target_id = reg.target_id;
            return hv_deliver_pending(c) == 0 ? 0 : -1;
        }
        if (call == HV_CALL_AUTH && have) {
            hv_warn("the worker credential kept in %s is no longer valid (%s); registering "
                    "with the worker token",
                    hv_state_path(), hv_client_last_error(c));
            hv_state_credential_forget();
            hv_client_use_credential(c, NULL);
            have = false;
            continue;
        }
        if (call == HV_CALL_AUTH || call == HV_CALL_REJECTED) {
            hv_error("registration refused: %s", hv_client_last_error(c));
            return 1;
        }
        if (call == HV_CALL_STALE) {
            /* Another live worker holds the name: it may be about to go. */
            if (!held_logged)
                hv_warn("register: %s; trying again every %.0f s", hv_client_last_error(c),
                        BACKOFF_MAX);
            held_logged = true;
            hv_wake_wait(BACKOFF_MAX);
            continue;
        }
        outage_wait(&o, c, "register");
    }
    return -1;
}

/* Signs off so the target is free at once, unless results wait in the
 * outbox: those need this worker's credential at the next start. */
static void sign_off(struct hv_client *c)
{
    json_t *pending = hv_state_outbox_list();
    size_t n = json_array_size(pending);
    json_decref(pending);
    if (n > 0) {
        hv_info("keeping the worker credential: %zu result%s wait%s in %s/outbox", n,
                n == 1 ? "" : "s", n == 1 ? "s" : "", hv_state_path());
        return;
    }
    if (hv_client_deregister(c) == HV_CALL_OK)
        hv_state_credential_forget();
    else
        hv_warn("sign-off failed (%s); the credential is kept for the next start",
                hv_client_last_error(c));
}

/* The newest registration of a guest's worker, for an apply step waiting
 * on the guests it restarted (step.h). */
static int guest_registration(void *arg, const char *uuid, struct hv_guest_registration *out)
{
    struct hv_client *c = arg;
    if (hv_client_guest_registration(c, uuid, out) == HV_CALL_OK)
        return 0;
    hv_warn("cannot ask the server whether the guest %s registered: %s", uuid,
            hv_client_last_error(c));
    return -1;
}

/* Gives back a job the last upload brought that will not run now. */
static void release_next(struct hv_client *c)
{
    struct hv_claim left;
    if (!hv_client_take_next(c, &left))
        return;
    if (hv_client_release(c, &left.job, "released by the worker: it is stopping") == HV_CALL_OK)
        hv_info("job %lld attempt %d released: the worker is stopping", left.job.id,
                left.job.attempt);
    else
        hv_warn("job %lld attempt %d: release failed (%s); its lease will lapse", left.job.id,
                left.job.attempt, hv_client_last_error(c));
    hv_claim_clear(&left);
}

int hv_worker_loop(const struct hv_worker_config *cfg)
{
    struct hv_client *c =
        hv_client_new(cfg->server, cfg->token, cfg->wait_seconds, hv_shutdown_flag());
    if (c == NULL) {
        hv_error("cannot create the HTTP client");
        return 1;
    }
    if (cfg->advertise != NULL && hv_client_set_advertise(c, cfg->advertise) != 0) {
        hv_error("out of memory");
        hv_client_free(c);
        return 1;
    }
    hv_client_set_boot_id(c, cfg->boot_id);
    /* A worker that runs one job takes no next one with its result. */
    hv_client_claim_with_results(c, !cfg->once);
    int status = 0;
    long long target_id = 0;
    bool registered = false;
    struct outage o = {0};
    char journal_dir[1200];
    hv_step_journal_dir(journal_dir, sizeof journal_dir);
    struct hv_step_env step_env = {.root = cfg->sysfs_root,
                                   .libvirt_uri = cfg->libvirt,
                                   .journal_dir = journal_dir,
                                   .registration = guest_registration,
                                   .registration_arg = c,
                                   .guest_wait = cfg->guest_wait,
                                   .guest = cfg->kind != NULL && strcmp(cfg->kind, "guest") == 0,
                                   .guest_nic = cfg->nic};
    /* What the worker put back itself from its journal (at this start, or
     * an earlier --restore) is reported after registering, before the
     * first claim, so the server has it before the plan's restore step;
     * what does not get through is offered again before each claim. */
    char restored_file[1200];
    hv_restored_path(restored_file, sizeof restored_file);
    bool restored_due = false;
    bool host = cfg->kind != NULL && strcmp(cfg->kind, "host") == 0;
    double settings_due = 0;
    while (!hv_shutdown_requested()) {
        if (!registered) {
            if (host)
                hv_client_set_settings(c, host_settings(cfg));
            int rc = register_worker(c, cfg, &target_id);
            settings_due = hv_monotonic() + cfg->settings_every;
            if (rc != 0) {
                status = rc > 0 ? 1 : 0;
                break;
            }
            registered = true;
            restored_due = true;
            if (cfg->libvirt != NULL) {
                struct hv_telemetry_config tc = {.server = cfg->server,
                                                 .libvirt = cfg->libvirt,
                                                 .proc_root = "/",
                                                 .sysfs_root = cfg->sysfs_root};
                hv_telemetry_start(&tc);
            }
        }
        if (restored_due)
            restored_due = hv_restored_report(c, restored_file) == 1;
        if (host && cfg->settings_every > 0 && hv_monotonic() >= settings_due) {
            report_settings(c, cfg);
            settings_due = hv_monotonic() + cfg->settings_every;
        }
        struct hv_claim claim;
        double t0 = hv_monotonic();
        /* The last upload may have brought the next job already. */
        enum hv_call call = hv_client_take_next(c, &claim)
                                ? HV_CALL_OK
                                : hv_client_claim_work(c, target_id, cfg->wait_seconds, &claim);
        double took = hv_monotonic() - t0;
        if (call == HV_CALL_OK && claim.what == HV_CLAIMED_STEP) {
            outage_over(&o, "claim");
            /* The guest jobs of the block before are read back before
             * this step changes their domains. */
            hv_telemetry_sync(STEP_SYNC_SECONDS);
            hv_step_run(c, &claim.step, &step_env);
            hv_claim_clear(&claim);
        } else if (call == HV_CALL_OK) {
            outage_over(&o, "claim");
            enum hv_job_outcome outcome = hv_job_run(c, &claim.job, &step_env, cfg->run_slack);
            hv_claim_clear(&claim);
            if (cfg->once) {
                status = outcome == HV_JOB_LOST ? 1 : 0;
                break;
            }
        } else if (call == HV_CALL_NO_WORK) {
            outage_over(&o, "claim");
            double held =
                cfg->wait_seconds / 2 < LONG_POLL_MIN ? cfg->wait_seconds / 2 : LONG_POLL_MIN;
            if (cfg->wait_seconds > 0 && took >= held) {
                hv_debug("no work within %.1f s; claiming again", took);
                continue;
            }
            if (cfg->wait_seconds > 0)
                hv_debug("no work, answered after %.3f s of a %.0f s long poll; next claim in "
                         "%.0f s",
                         took, cfg->wait_seconds, cfg->poll_seconds);
            else
                hv_debug("no work; next claim in %.0f s", cfg->poll_seconds);
            hv_wake_wait(cfg->poll_seconds);
        } else if (call == HV_CALL_NOT_FOUND) {
            /* The server forgot this target (e.g. a new database). */
            hv_warn("claim: %s; registering again", hv_client_last_error(c));
            registered = false;
        } else if (call == HV_CALL_AUTH && hv_client_last_status(c) == 401) {
            /* The credential ended: freed by an admin or replaced. */
            hv_warn("claim: %s; registering again", hv_client_last_error(c));
            hv_state_credential_forget();
            hv_client_use_credential(c, NULL);
            registered = false;
        } else if (call == HV_CALL_AUTH) {
            hv_error("claim refused: %s", hv_client_last_error(c));
            status = 1;
            break;
        } else if (!hv_shutdown_requested()) {
            outage_wait(&o, c, "claim");
        }
    }
    if (hv_shutdown_requested())
        hv_info("shutting down");
    release_next(c);
    hv_telemetry_stop();
    if (registered)
        sign_off(c);
    hv_client_free(c);
    return status;
}
