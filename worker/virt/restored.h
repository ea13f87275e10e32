/* restored.h — what a host worker put back itself from its journal (at
 * its start, or for `hvbench-worker --restore`) and has not yet reported
 * to the server (POST /api/v1/workers/restored, docs/api.md).
 *
 * One file, STATE_DIR/NAME/restored.json:
 *
 *   {"restored": [{"plan_id": 3, "factor": "thp", "scope": "host",
 *     "object": "/sys/kernel/mm/transparent_hugepage/enabled",
 *     "from": "never", "to": "madvise", "at": "2025-01-01T00:00:00Z",
 *     "how": "worker_start"}, ...]}
 *
 * An entry is added once its setting is back (and its journal entry gone)
 * and removed once the server acknowledged it, so a restore is reported
 * once the server can be reached, also after a crash or an outage. The
 * file is replaced atomically and durably (hv_file_replace()) and goes
 * when the last entry does. Used from one thread at a time. */
#ifndef HV_WORKER_VIRT_RESTORED_H
#define HV_WORKER_VIRT_RESTORED_H

#include "worker/client.h"

#include <jansson.h>
#include <stddef.h>

/** How a setting came back, as the report names it. */
#define HV_RESTORED_WORKER_START    "worker_start"
#define HV_RESTORED_RESTORE_COMMAND "restore_command"

/** Writes STATE_DIR/NAME/restored.json (from hv_state_path()) into buf. */
void hv_restored_path(char *buf, size_t len);

/** The entries waiting in path, oldest first: a new array, empty when
 *  there is no file. NULL with err when the file cannot be read or is not
 *  such a file (it is left alone). */
json_t *hv_restored_load(const char *path, char *err, size_t len);

/** Appends each change of changes (the actuators' [{"factor", "scope",
 *  "object", "from", "to", "at"}]) as restored by plan_id's journal, how
 *  (HV_RESTORED_*), and writes the file. Returns 0, or -1 with err (the
 *  file then holds what it held before). */
int hv_restored_add(const char *path, long long plan_id, const json_t *changes, const char *how,
                    char *err, size_t len);

/** Removes from the file the entries equal to those of sent (what the
 *  server acknowledged), removing the file when none is left. Returns 0,
 *  or -1 with err. */
int hv_restored_forget(const char *path, const json_t *sent, char *err, size_t len);

/** Reports what path holds to the server through c, at most
 *  HV_RESTORED_BATCH entries a call, forgetting each batch the server
 *  took. A batch the server refuses as malformed (4xx) cannot be sent
 *  again: the file is renamed to path.undeliverable for the operator.
 *  Returns 0 when nothing is left to report, 1 when the rest waits for a
 *  later try (no answer, a 5xx, the credential refused), -1 when it
 *  cannot be reported (the file is unreadable, refused or cannot be
 *  written). Logs what it did. */
int hv_restored_report(struct hv_client *c, const char *path);

/** The most entries one report carries (the server's limit). */
#define HV_RESTORED_BATCH 1000

#endif
