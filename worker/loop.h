/* loop.h — the worker's life: register, then claim and run jobs (and, on
 * a host, the tuning steps of plans: worker/virt/step.h) until told to
 * stop.
 *
 * Claims are long polls of wait_seconds: an empty answer (204) after the
 * server held the claim means claim again at once; an empty answer that
 * came back in under a second (a server that does not long-poll, or
 * wait_seconds 0) means wait poll_seconds first, so the worker never spins.
 *
 * An unreachable server is retried with a backoff of 1 s doubling to
 * 30 s, logged when the situation changes rather than on every try. */
#ifndef HV_WORKER_LOOP_H
#define HV_WORKER_LOOP_H

#include <jansson.h>
#include <stdbool.h>

/** Everything the loop needs; strings and facts are borrowed. */
struct hv_worker_config {
    const char *server;      /**< base URL */
    const char *token;       /**< worker token */
    const char *name;        /**< target name to register as */
    const char *kind;        /**< "host" or "guest" */
    const char *host;        /**< --host: a guest's host, or NULL */
    const json_t *facts;     /**< from hv_facts_collect() */
    const char *fingerprint; /**< hv_facts_fingerprint(facts) */
    const json_t *labels;    /**< --label key=value pairs, or NULL */
    double poll_seconds;     /**< wait after an empty claim, >= 1 */
    double wait_seconds;     /**< claim long poll, 0..60; 0: poll every poll_seconds */
    bool once;               /**< exit after the first job */
    const char *advertise;   /**< --advertise, or NULL: see hv_client_set_advertise() */
    const char *libvirt;     /**< --libvirt URI for tuning steps, or NULL */
    const char *sysfs_root;  /**< where host settings live: "/" (--sysfs-root) */
    const char *nic;         /**< --nic: a guest's own NIC, or NULL */
    double guest_wait;       /**< --guest-wait: seconds a restarted guest gets to register */
    const char *boot_id;     /**< this machine's boot (hv_facts_boot_id()), or NULL */
    /** --settings-every: a host worker reports its host settings with each
     *  registration and then every this many seconds (0: only then). */
    double settings_every;
    /** --run-slack: seconds an engine may run past 3 × its parameters'
     *  time (hv_job_run_limit). */
    double run_slack;
};

/** Runs until a shutdown signal (after releasing a running job), until
 *  the first job ended when cfg->once, or until the server refuses the
 *  token. Needs hv_wake_init() first. Returns the process exit status: 0
 *  on a shutdown or a --once job that ended (uploaded, cancelled or
 *  released), 1 when the token is refused, the worker cannot start, or the
 *  --once job's result could not be uploaded. */
int hv_worker_loop(const struct hv_worker_config *cfg);

#endif
