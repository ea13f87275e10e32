/* db_workers.h — worker credentials: who holds a target, and which worker
 * claimed which attempt of a job.
 *
 * Registration with a worker token issues a credential of the worker's
 * own (hvw_...), bound to one target; every job call carries it, and only
 * the worker that claimed an attempt may touch it (migrations/005). */
#ifndef HV_SERVER_DB_WORKERS_H
#define HV_SERVER_DB_WORKERS_H

#include "db.h"

#include <stdbool.h>
#include <stdint.h>

/** A worker credential as the token check finds it. */
struct hv_worker_session {
    int64_t id;             /**< the worker's id */
    int64_t target_id;      /**< the target it holds */
    int64_t token_id;       /**< the worker token that registered it */
    bool ended;             /**< signed off, freed or replaced */
    char ended_reason[160]; /**< why, when ended */
};

/** Finds the worker whose credential hashes to hash_hex ("\\x..."), and
 *  notes that it was seen (at most every few seconds, so the hot path
 *  rarely writes): the worker's and its target's last_seen. HV_DB_NONE
 *  when unknown or when its token was revoked; an ended worker is
 *  HV_DB_OK with out->ended set. */
enum hv_db_status hv_db_worker_lookup(const char *hash_hex, struct hv_worker_session *out);

/** hv_db_worker_lookup() for n hashes in one statement: out[i] and found[i]
 *  (false: no such live credential) for hashes[i]. */
enum hv_db_status hv_db_worker_lookup_many(const char *const *hashes, size_t n,
                                           struct hv_worker_session *out, bool *found);

/** What a registration asks for. Strings are borrowed; facts and labels
 *  are JSON text (labels may be NULL). */
struct hv_worker_registration {
    const char *name, *kind, *facts, *fingerprint, *dmi_uuid, *labels, *version;
    const char *host;     /**< a guest's host as its worker names it, or NULL */
    const char *boot_id;  /**< the boot of the worker's machine (lower case), or NULL */
    int64_t token_id;     /**< the registering token */
    int64_t session_id;   /**< the caller's own worker id when it re-registers, else 0 */
    const char *held;     /**< a worker process's first registration: JSON [{job_id, attempt}]
                               of the results it kept; with session_id, every other running
                               attempt and step of that worker ends now; NULL: none ends */
    const char *hash_hex; /**< hash of the new credential (unused when session_id != 0) */
    int live_seconds;     /**< a holder seen this recently still holds the target */
};

/** The outcome of a registration. */
struct hv_worker_registered {
    int64_t target_id;
    int64_t worker_id;
    bool reused;        /**< session_id was confirmed: no new credential */
    int64_t holder_id;  /**< on HV_DB_CONFLICT: the live worker holding the target */
    double holder_idle; /**< seconds since it was last seen */
    bool holder_busy;   /**< it holds a running job */
    bool wrong_target;  /**< on HV_DB_CONFLICT with session_id: it holds another target */
    bool moved;         /**< and that target is the same guest under another host */
    bool unknown_host;  /**< on HV_DB_NONE: no host target is called reg->host */
    int64_t retired_id; /**< a worker of the guest's earlier boot that this ended, or 0 */
    char old_boot[65];  /**< that worker's boot id, or "" */
    bool boot_ended;    /**< the caller's own credential (session_id) was of another boot of
                             its guest and ended: it registers again with the worker token */
    char name[300];     /**< the target's name: "HOST/NAME" for a guest of a known host */
    char host[160];     /**< that host's name, or "" */
};

/** Registers a worker in one transaction: stores the target's facts and
 *  (a guest) links it to its host: reg->host, else the host target whose
 *  facts list a libvirt domain of the guest's DMI product UUID; a guest of
 *  a known host is target "HOST/NAME". It
 *  either confirms the caller's own credential (session_id) or records a
 *  new one. HV_DB_CONFLICT when another live worker holds the target (out
 *  says which) or, with session_id, when that worker holds another target;
 *  a holder silent for live_seconds without a running job is replaced.
 *  A guest's registration from another boot than its target's live
 *  holder (the same DMI product UUID, both boot ids known) ends that
 *  holder whatever its silence or attempts (out->retired_id): it died
 *  with its boot. With session_id from another boot of the guest, that
 *  credential ends instead and nothing else changes (out->boot_ended,
 *  HV_DB_OK). Re-registrations of the same boot, or without boot ids,
 *  keep the rules above. HV_DB_NONE when reg->host names no registered
 *  host. */
enum hv_db_status hv_db_worker_register(const struct hv_worker_registration *reg,
                                        struct hv_worker_registered *out);

/** For the worker of target host_target: {"host": whether that target is
 *  a host, "registration": the newest registration of a guest target
 *  whose DMI product UUID is uuid, {"worker_id", "target",
 *  "registered_at", "boot_id" (null when its worker sent none), "live"
 *  (not ended)}, or null}. HV_DB_NONE when the target is gone. */
enum hv_db_status hv_db_worker_guest_registration(int64_t host_target, const char *uuid,
                                                  json_t **out);

/** Ends worker id with reason (it signed off). HV_DB_NONE when it had
 *  ended already. */
enum hv_db_status hv_db_worker_end(int64_t id, const char *reason);

/** Ends the live worker of target id (an admin frees the target) and
 *  writes its JSON {target_id, name, worker_id} into *out (worker_id null
 *  when nobody held it). HV_DB_NONE when there is no such target. */
enum hv_db_status hv_db_target_free(int64_t target_id, const char *reason, json_t **out);

/** Whose attempt this is. */
enum hv_job_owner {
    HV_OWNER_CALLER, /**< the calling worker claimed this attempt */
    HV_OWNER_OTHER,  /**< another worker did, or nobody did */
    HV_OWNER_NO_JOB, /**< no job with this id */
};

/** Sets *owner for attempt of job_id as seen by worker_id. */
enum hv_db_status hv_db_job_owner(int64_t job_id, int attempt, int64_t worker_id,
                                  enum hv_job_owner *owner);

#endif
