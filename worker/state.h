/* state.h — what a worker keeps on disk between runs, under
 * STATE_DIR/NAME/ (one folder per target name, mode 0700):
 *
 *   credential             {"server", "worker_id", "token"}: the worker
 *                          credential registration issued (mode 0600)
 *   outbox/JOB-ATTEMPT.json  a finished result not yet accepted by the
 *                          server: written before the first upload try,
 *                          removed when the server answers
 *
 * A restarted worker presents its credential again (so it keeps its
 * target and its claims) and sends what the outbox holds before it claims
 * new work, so a result outlives a server or database outage and a worker
 * restart. Files are replaced atomically and durably (write, fsync,
 * rename, fsync of the folder: hv_file_replace()), so a file this module
 * says it wrote is there after a crash or a power loss. Used from the
 * worker's main thread only. */
#ifndef HV_WORKER_STATE_H
#define HV_WORKER_STATE_H

#include <jansson.h>
#include <stddef.h>

/** The default state folder: $STATE_DIRECTORY (systemd's StateDirectory=),
 *  else /var/lib/hvbench-worker for root, else $XDG_STATE_HOME or
 *  ~/.local/state, + /hvbench-worker. Written into buf (len bytes). */
void hv_state_default_dir(char *buf, size_t len);

/** Opens (creating as needed) dir/name and its outbox. Returns 0, or -1
 *  with the reason in err. Call once before the other functions. */
int hv_state_open(const char *dir, const char *name, char *err, size_t len);

/** The folder in use (dir/name), for messages. */
const char *hv_state_path(void);

/** Reads the stored credential for server (another server's is ignored).
 *  Returns 0 with token (len bytes) and *worker_id set, 1 when there is
 *  none, -1 when the file is unreadable (logged; treated as none). */
int hv_state_credential_load(const char *server, char *token, size_t len, long long *worker_id);

/** Stores the credential for server. Returns 0 or -1 (logged). */
int hv_state_credential_save(const char *server, const char *token, long long worker_id);

/** Removes the stored credential (the worker signed off or it ended). */
void hv_state_credential_forget(void);

/** Writes body as the pending result of (job_id, attempt). Returns 0 once
 *  it is durable (written, fsynced, renamed into place and the folder
 *  fsynced), or -1 with errno set and nothing logged (the caller says what
 *  that means: the result is then only in memory, or an older version of
 *  it stays). */
int hv_state_outbox_put(long long job_id, int attempt, const json_t *body);

/** Removes the pending result of (job_id, attempt), if any. */
void hv_state_outbox_remove(long long job_id, int attempt);

/** The pending results, oldest job first: a new array of {"job_id",
 *  "attempt"}; empty when none (or on a read error, logged). */
json_t *hv_state_outbox_list(void);

/** Loads the pending result of (job_id, attempt): a new reference, or NULL
 *  when it is missing or unreadable (an unreadable file is renamed to
 *  *.bad and logged, so it is not tried forever). */
json_t *hv_state_outbox_load(long long job_id, int attempt);

/** Renames the pending result of (job_id, attempt) to *.undeliverable
 *  (kept for the operator; logged by the caller). */
void hv_state_outbox_abandon(long long job_id, int attempt);

#endif
