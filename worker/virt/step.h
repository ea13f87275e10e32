/* step.h — runs the tuning steps a host worker claims (docs/virt.md):
 * "apply" sets a block's levels and reads them back (in a plan with a
 * guest template, after making and starting the clones that are missing:
 * clone.h), "restore" puts back everything the plan's journal holds (and
 * removes the clones). Each answers POST
 * /api/v1/steps/{id}/result with {"attempt", "status" ("ok" | "error"),
 * "error", "settings", "changes"}. An apply step whose reboot-class levels
 * (kvm_ept, kvm_npt) the host is not at changes nothing and answers
 * "waiting_for_operator" with "waiting": [{"factor", "level", "value",
 * "file", "command"}]; the server offers the step again until the
 * operator has reloaded the module.
 *
 * An apply step that restarted a guest (or started a clone it made)
 * succeeds only once that guest's worker registered again: it asks the
 * server (env->registration) every 2 s, heartbeating the step, for a
 * registration from another boot than the one before the restart (by
 * boot id; a worker that sends none: a registration newer than the one
 * before), for at most env->guest_wait seconds, and fails naming the
 * domain otherwise. The same bound applies to a guest still booting that
 * an apply step is about to restart (worker/virt/booting.h).
 *
 * The journal (journal.h) lives in STATE_DIR/NAME/journal/, so a worker
 * that crashed between an apply and its restore still knows what to put
 * back: hv_step_restore_all() runs at its next start and for
 * `hvbench-worker --restore`, and what it put back is reported to the
 * server (restored.h) so the plan's record of its changes says when and
 * how each came back. */
#ifndef HV_WORKER_VIRT_STEP_H
#define HV_WORKER_VIRT_STEP_H

#include "worker/client.h"

#include <jansson.h>
#include <stdbool.h>

/** Where a worker's steps act. Strings are borrowed. */
struct hv_step_env {
    const char *root;        /**< host files are under this folder: "/" (--sysfs-root) */
    const char *libvirt_uri; /**< --libvirt, or NULL: guest factors then fail */
    const char *journal_dir; /**< STATE_DIR/NAME/journal */
    double shutdown_timeout; /**< seconds a guest gets to power off; 0: the default */
    /** Asks the server for the newest registration of a guest's worker by
     *  its DMI product UUID (hv_act_ctx.registration); NULL: an apply step
     *  does not wait for the guests it restarted. */
    int (*registration)(void *arg, const char *uuid, struct hv_guest_registration *out);
    void *registration_arg;
    double guest_wait; /**< seconds a restarted guest's worker gets to register; 0: the default */
    bool guest;        /**< a guest's worker: it sets its own NIC for jobs (guestnic.h) */
    const char *guest_nic; /**< the NIC --nic names, or NULL */
    /** STATE_DIR/NAME/restored.json (restored.h): where
     *  hv_step_restore_all() notes what it put back, for the server; NULL:
     *  not noted. */
    const char *restored_file;
};

/** How long an apply step waits for the worker of a guest it restarted (or
 *  started) to register again, seconds (--guest-wait). */
#define HV_STEP_GUEST_WAIT 300.0

/** How a step ended, from the worker's side. */
enum hv_step_outcome {
    HV_STEP_REPORTED,   /**< the server has the result (ok or error) */
    HV_STEP_STALE,      /**< the attempt is no longer this worker's (409/404) */
    HV_STEP_UNREPORTED, /**< the result did not get through; the journal keeps the originals */
};

/** Writes STATE_DIR/NAME/journal (from hv_state_path()) into buf. */
void hv_step_journal_dir(char *buf, size_t len);

/** Runs step without talking to the server and returns the result body
 *  (a new reference; NULL only when memory runs out). tick (may be NULL)
 *  is called with arg during long waits. */
json_t *hv_step_execute(const struct hv_step *step, const struct hv_step_env *env,
                        void (*tick)(void *), void *arg);

/** Runs step: executes it, heartbeating the step's lease while guests
 *  restart, and delivers the result (retried with a backoff while the
 *  server does not answer, for at most a few minutes). Logs the start,
 *  each change and the end. */
enum hv_step_outcome hv_step_run(struct hv_client *c, const struct hv_step *step,
                                 const struct hv_step_env *env);

/** Restores every plan journal in env->journal_dir, logging what it puts
 *  back and noting each change in env->restored_file as put back how
 *  (HV_RESTORED_WORKER_START or HV_RESTORED_RESTORE_COMMAND), to be
 *  reported (restored.h). Returns the number of entries left (0: nothing
 *  is left to restore). */
size_t hv_step_restore_all(const struct hv_step_env *env, const char *how);

#endif
