/* journal.h — what a tuning plan changed on this host, kept on disk until
 * it is put back.
 *
 * One file per plan, STATE_DIR/NAME/journal/PLAN.json (see state.h):
 *
 *   {"plan_id": 3, "entries": [{"seq": 1, "kind": "sysfs", "factor": "thp",
 *     "scope": "host", "object": "/sys/kernel/mm/transparent_hugepage/enabled",
 *     "original": "madvise", "text": "always [madvise] never\n",
 *     "at": "2025-01-01T00:00:00Z"}, ...]}
 *
 * An entry holds the value an object had before the plan first changed it
 * (sysfs text, an MTU, a domain's whole persistent XML, its pinning); a
 * later block that changes the same object again keeps the first entry,
 * so restoring always goes back to what the plan found. Entries are added
 * before the change they describe and the file is replaced atomically
 * (write, fsync, rename, fsync of the folder), so a crash at any point
 * leaves a journal that restores everything changed. Restoring walks the
 * entries newest first and removes each once it is put back; the file goes
 * when the last entry does.
 *
 * Files are mode 0600: a domain's XML may hold passwords (VNC, iSCSI). A
 * journal is used from one thread at a time. */
#ifndef HV_WORKER_VIRT_JOURNAL_H
#define HV_WORKER_VIRT_JOURNAL_H

#include <jansson.h>
#include <stddef.h>

/** The journal of one plan. */
struct hv_journal;

/** Opens the journal of plan_id in dir (created with mode 0700 when an
 *  entry is first added): its entries when the file exists, else none.
 *  Returns NULL with the reason in err when the file exists but cannot be
 *  read or is not a journal (it is left alone for the operator). */
struct hv_journal *hv_journal_open(const char *dir, long long plan_id, char *err, size_t len);

/** Releases j (the file stays); NULL is fine. */
void hv_journal_close(struct hv_journal *j);

/** The plan the journal belongs to. */
long long hv_journal_plan(const struct hv_journal *j);

/** The file's path, for messages. */
const char *hv_journal_path(const struct hv_journal *j);

/** The number of entries. */
size_t hv_journal_count(const struct hv_journal *j);

/** Entry i (0 is the oldest), borrowed; NULL when out of range. The caller
 *  may change its members and then call hv_journal_sync(). */
json_t *hv_journal_at(const struct hv_journal *j, size_t i);

/** The entry of kind for object, or NULL. Borrowed. */
json_t *hv_journal_find(const struct hv_journal *j, const char *kind, const char *object);

/** Appends entry (stolen; an object with at least "kind" and "object"),
 *  adding "seq" and "at", and writes the file. Returns 0, or -1 with err
 *  (the entry is then not in the journal, and the caller must not make the
 *  change it describes). */
int hv_journal_add(struct hv_journal *j, json_t *entry, char *err, size_t len);

/** Writes the file again after the caller changed an entry. Returns 0 or
 *  -1 with err. */
int hv_journal_sync(struct hv_journal *j, char *err, size_t len);

/** Removes entry i and writes the file (or removes it when no entry is
 *  left). Returns 0 or -1 with err (the entry is then kept in memory and
 *  on disk). */
int hv_journal_remove(struct hv_journal *j, size_t i, char *err, size_t len);

/** The plans with a journal file in dir, ascending: a new array of
 *  integers (empty when there is none or dir does not exist). */
json_t *hv_journal_plans(const char *dir);

#endif
