/* client.h — the worker's side of the worker protocol (docs/api.md,
 * "Worker protocol"): register, claim, ready, heartbeat, release, result;
 * and for a host worker the tuning steps a claim may hand out instead of a
 * job (apply and restore, docs/virt.md): their heartbeat and result.
 *
 * Each call sends one request and sorts the answer into a status the
 * worker's loop acts on, so no caller looks at HTTP codes. A client is not
 * thread safe: the worker uses it from its main thread only.
 *
 * The long polls (claim and ready with a wait) go through a connection of
 * their own whose timeout covers the longest wait, and give up within
 * about a second when the abort flag is set (a shutdown signal). The other
 * calls keep a shorter timeout and ignore the flag, so a job can still be
 * released or its result uploaded while the worker shuts down. */
#ifndef HV_WORKER_CLIENT_H
#define HV_WORKER_CLIENT_H

#include "worker/clock.h"

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

struct hv_client;

/** What became of a call. */
enum hv_call {
    HV_CALL_OK,        /**< done (claim: a job was handed out) */
    HV_CALL_NO_WORK,   /**< claim only: nothing to do now (204) */
    HV_CALL_STALE,     /**< 409: the attempt is no longer this worker's */
    HV_CALL_RETRY,     /**< no answer, or a 5xx/429: try again later */
    HV_CALL_REJECTED,  /**< another 4xx: the request itself is wrong */
    HV_CALL_AUTH,      /**< 401/403: the token is missing, unknown or of the wrong role */
    HV_CALL_NOT_FOUND, /**< 404: e.g. the target id is unknown to the server */
};

/** A claimed job. Strings and params point into doc, which the job owns. */
struct hv_job {
    long long id;
    int attempt;
    long long plan_id;
    const char *configuration; /**< "" when absent */
    int lease_seconds;
    const char *workload_id; /**< the workload's id in the plan */
    const char *kind;
    const char *engine;   /**< "builtin" when absent */
    const json_t *params; /**< may be NULL */
    long long group_id;   /**< 0 when the job runs alone */
    int group_size;       /**< members of the group; 0 when alone */
    const char *role;     /**< "server", "client" or NULL */
    const char *peer;     /**< the workload's peer target or NULL */
    /** The levels of the job's configuration (factor → level), or NULL
     *  when the claim has none; process_pin is applied from them. */
    const json_t *levels;
    /** When the job runs on its tuning plan's host: {"settings": what the
     *  block's apply step read back, "disk", "nic"}; else NULL. */
    const json_t *tuning;
    struct hv_clock clock; /**< the claim's clock sample, when it had server_time */
    json_t *doc;           /**< the claim answer (owned) */
};

/** A claimed tuning step: apply a block's levels, or restore what the
 *  plan changed. Strings and JSON point into doc, which the step owns. */
struct hv_step {
    long long id;
    int attempt;
    long long plan_id;
    const char *kind; /**< "apply", "restore", or a drain hook: "before_host", "after_host" */
    int lease_seconds;
    int block;                 /**< the block applied; 0 when absent */
    const char *configuration; /**< "" when absent */
    /** factor → level: every factor of the plan at this block's level (apply);
     *  empty for a restore. Never NULL. */
    const json_t *levels;
    const json_t *domains; /**< the guest domains' names; an array, maybe empty */
    const char *disk;      /**< the host disk of the guests' images, or NULL */
    const char *nic;       /**< the host NIC of the benchmark traffic, or NULL */
    bool allow_restart;    /**< whether running guests may be restarted */
    /** The domains the plan names (targets.guests.domains), or NULL: the
     *  only ones of another VM manager the step may change
     *  (worker/virt/owner.h). */
    const json_t *named_domains;
    /** The template domain the plan's guests are cloned from
     *  (targets.guests.template.domain), or NULL. */
    const char *template_domain;
    struct hv_clock clock;
    json_t *doc; /**< the claim answer (owned) */
};

/** What a claim handed out. */
enum hv_claimed {
    HV_CLAIMED_JOB,  /**< a job: .job */
    HV_CLAIMED_STEP, /**< a tuning step: .step */
};

/** A claim's answer: a job or a step. */
struct hv_claim {
    enum hv_claimed what;
    struct hv_job job;   /**< when what is HV_CLAIMED_JOB */
    struct hv_step step; /**< when what is HV_CLAIMED_STEP */
};

/** Creates a client of the server at base_url with a worker token. Long
 *  polls may wait up to max_wait seconds (0..60); abort_flag (may be NULL)
 *  aborts them when it becomes nonzero. Returns NULL when memory runs out.
 *  The strings are copied. */
struct hv_client *hv_client_new(const char *base_url, const char *token, double max_wait,
                                volatile sig_atomic_t *abort_flag);

/** Frees the client; NULL is allowed. */
void hv_client_free(struct hv_client *c);

/** A one-line description of the last call's failure (HTTP status and
 *  problem detail, or the transport error), for logs. Owned by the client,
 *  valid until the next call. */
const char *hv_client_last_error(const struct hv_client *c);

/** The HTTP status of the last call; 0 when it got no answer. */
long hv_client_last_status(const struct hv_client *c);

/** What a registration returned. */
struct hv_registration {
    long long target_id;
    long long worker_id;
    char credential[80];        /**< a new worker credential (hvw_...); "" when the
                                     caller's own was confirmed */
    char fingerprint[128];      /**< as the server computed it; "" when absent */
    char name[300];             /**< the target's name ("HOST/NAME" for a guest of a
                                     known host); "" when the server did not say */
    long long max_result_bytes; /**< the server's limits for result uploads, */
    long long max_samples;      /**< 0 when it did not say */
    long long max_raw_bytes;
};

/** POST /api/v1/workers/register with name, kind, a guest's host (NULL:
 *  none given), facts, fingerprint and labels (borrowed; labels may be
 *  NULL), with the token the client was
 *  made with or the credential set by hv_client_use_credential(). Fills
 *  *out on HV_CALL_OK. A 409 (another live worker holds the target) is
 *  HV_CALL_STALE. */
enum hv_call hv_client_register(struct hv_client *c, const char *name, const char *kind,
                                const char *host, const json_t *facts, const char *fingerprint,
                                const json_t *labels, struct hv_registration *out);

/** Sends credential (a worker credential, or NULL to go back to the worker
 *  token the client was made with) on every later call. Returns 0 or -1
 *  when memory runs out. */
int hv_client_use_credential(struct hv_client *c, const char *credential);

/** POST /api/v1/workers/deregister: the worker signs off and its target is
 *  free for another worker at once. */
enum hv_call hv_client_deregister(struct hv_client *c);

/** POST /api/v1/workers/restored {"restored": restored}: settings this
 *  host worker put back itself from its journal (worker/virt/restored.h).
 *  HV_CALL_OK once the server took them all. */
enum hv_call hv_client_report_restored(struct hv_client *c, const json_t *restored);

/** POST /api/v1/jobs/claim, a long poll of wait seconds when wait > 0
 *  (at most max_wait; 0 asks without waiting and sends no "wait"). On
 *  HV_CALL_OK fills *job (release it with hv_job_clear()); a 200 answer
 *  without a well-formed job counts as HV_CALL_RETRY (the server is not
 *  speaking the protocol we know), and so does a step (a worker that
 *  runs steps claims with hv_client_claim_work()). An aborted long poll
 *  is HV_CALL_RETRY. */
enum hv_call hv_client_claim(struct hv_client *c, long long target_id, double wait,
                             struct hv_job *job);

/** The same claim, taking a job or a step: on HV_CALL_OK fills *claim
 *  (release it with hv_claim_clear()); claim->what says which. A 200
 *  answer with neither a well-formed job nor a well-formed step counts as
 *  HV_CALL_RETRY. */
enum hv_call hv_client_claim_work(struct hv_client *c, long long target_id, double wait,
                                  struct hv_claim *claim);

/** Releases what a claim holds; the struct may be reused. */
void hv_claim_clear(struct hv_claim *claim);

/** POST /api/v1/steps/{id}/heartbeat with the step's attempt. On
 *  HV_CALL_OK updates *lease_seconds when the answer has it. */
enum hv_call hv_client_step_heartbeat(struct hv_client *c, const struct hv_step *step,
                                      int *lease_seconds);

/** POST /api/v1/steps/{id}/result with body (borrowed: {"attempt",
 *  "status", "error", "settings", "changes"}). A repeated upload (200) is
 *  HV_CALL_OK like 201. */
enum hv_call hv_client_step_result(struct hv_client *c, const struct hv_step *step, json_t *body);

/** The newest worker registration of a guest, as a host worker learns it. */
struct hv_guest_registration {
    long long worker_id; /**< 0 when the guest's worker never registered */
    char boot_id[65];    /**< the boot it registered from; "" when its worker sent none */
    bool live;           /**< that worker has not ended */
    double age;          /**< seconds since it registered, on the server's clock; -1 unknown */
};

/** GET /api/v1/workers/guest?uuid=UUID (a host worker): the newest worker
 *  registration of the guest whose DMI product UUID is uuid into *out.
 *  Ids grow with each registration and a boot id changes with each boot
 *  of the guest, so a registration from another boot than before a
 *  restart means the guest came back (docs/virt.md). */
enum hv_call hv_client_guest_registration(struct hv_client *c, const char *uuid,
                                          struct hv_guest_registration *out);

/** POST /api/v1/jobs/{id}/ready with the job's attempt and wait (a long
 *  poll as for claims), and endpoint ({"host", "port"}: where this member
 *  listens; borrowed, may be NULL). On HV_CALL_OK copies start_at into
 *  start_at (len bytes; "" while the group is incomplete), sets *ready to
 *  the number of members ready (0 when absent) and, when endpoints is not
 *  NULL, replaces *endpoints (releasing the old one) with the answer's
 *  endpoints array (a new reference; NULL when absent). A server_time in
 *  the answer is offered to clock (may be NULL). A 200 without start_at
 *  counts as HV_CALL_RETRY. */
enum hv_call hv_client_ready(struct hv_client *c, const struct hv_job *job, double wait,
                             const json_t *endpoint, struct hv_clock *clock, char *start_at,
                             size_t len, int *ready, json_t **endpoints);

/** Sends boot_id (this machine's boot, facts.h hv_facts_boot_id(); NULL or
 *  "" for none) with every later registration. Copied, up to 64 bytes. */
void hv_client_set_boot_id(struct hv_client *c, const char *boot_id);

/** Sends held (JSON [{job_id, attempt}]: the results this worker kept and
 *  delivers next; NULL for none) with every later registration: the
 *  server ends every other attempt and step of the credential, which died
 *  with an earlier run of the worker. Takes the reference. */
void hv_client_set_held(struct hv_client *c, json_t *held);

/** Sends settings (a host worker's host settings, JSON {factor: level};
 *  NULL for none) with every later registration. Takes the reference. */
void hv_client_set_settings(struct hv_client *c, json_t *settings);

/** POST /api/v1/workers/settings {"settings": settings}: the host settings
 *  this host worker read just now. HV_CALL_OK once the server took them. */
enum hv_call hv_client_report_settings(struct hv_client *c, const json_t *settings);

/** Makes hv_client_local_address() answer addr (the worker's --advertise)
 *  instead of looking. Returns 0, or -1 when memory runs out. */
int hv_client_set_advertise(struct hv_client *c, const char *addr);

/** Writes into buf (len bytes) the address the members of a group should
 *  connect to: the one set with hv_client_set_advertise(), else the local
 *  IP address this machine uses to reach the server (the source address
 *  the kernel picks for the server's host and port). Returns 0, or -1 with
 *  a reason in buf. */
int hv_client_local_address(const struct hv_client *c, char *buf, size_t len);

/** Releases what a job holds; the struct may be reused. */
void hv_job_clear(struct hv_job *job);

/** POST /api/v1/jobs/{id}/heartbeat. On HV_CALL_OK sets *cancel from the
 *  answer and, when the answer has lease_seconds, *lease_seconds; a
 *  server_time in it is offered to clock (may be NULL). */
enum hv_call hv_client_heartbeat(struct hv_client *c, const struct hv_job *job, bool *cancel,
                                 int *lease_seconds, struct hv_clock *clock);

/** POST /api/v1/jobs/{id}/release with the reason. */
enum hv_call hv_client_release(struct hv_client *c, const struct hv_job *job, const char *reason);

/** POST /api/v1/jobs/{job_id}/result with body (borrowed; see
 *  hv_engine_result_to_json()). 200 (a repeated upload) counts as
 *  HV_CALL_OK like 201, so uploads can be retried safely. With
 *  hv_client_claim_with_results() on, no next job held and no shutdown
 *  signal, it asks with ?claim=true, and a job the answer brings is held
 *  for hv_client_take_next(). */
enum hv_call hv_client_upload_result(struct hv_client *c, long long job_id, json_t *body);

/** Whether result uploads also claim this worker's next job (off when the
 *  client is made): one request a job instead of two while work is
 *  queued. */
void hv_client_claim_with_results(struct hv_client *c, bool on);

/** Takes the job an upload's answer brought: true with *claim filled
 *  (claim->what is HV_CLAIMED_JOB; release it with hv_claim_clear()),
 *  false when none is held (or its document could not be read: logged,
 *  its lease lapses). The caller runs it as a claimed job, or releases it
 *  (hv_client_release()). */
bool hv_client_take_next(struct hv_client *c, struct hv_claim *claim);

#endif
