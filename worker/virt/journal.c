/* journal.c — see journal.h. */
#include "worker/virt/journal.h"

#include "fileio.h"
#include "timeutil.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct hv_journal {
    char dir[1024];
    char path[1100];
    long long plan_id;
    json_t *entries; /* array, oldest first */
    long long next_seq;
};

/* Reads an existing journal file into j. Returns 0, 1 when there is no
 * file, -1 with err. */
static int load(struct hv_journal *j, char *err, size_t len)
{
    json_error_t e;
    json_t *doc = json_load_file(j->path, JSON_REJECT_DUPLICATES, &e);
    if (doc == NULL) {
        if (access(j->path, F_OK) != 0 && errno == ENOENT)
            return 1;
        snprintf(err, len, "the journal %s is unreadable (%s); it is left for the operator",
                 j->path, e.text);
        return -1;
    }
    json_t *plan = json_object_get(doc, "plan_id");
    json_t *entries = json_object_get(doc, "entries");
    if (!json_is_integer(plan) || json_integer_value(plan) != j->plan_id ||
        !json_is_array(entries)) {
        snprintf(err, len,
                 "the journal %s is not the journal of plan %lld (plan_id and entries expected); "
                 "it is left for the operator",
                 j->path, j->plan_id);
        json_decref(doc);
        return -1;
    }
    size_t i;
    json_t *entry;
    json_array_foreach(entries, i, entry)
    {
        if (!json_is_object(entry) || !json_is_string(json_object_get(entry, "kind")) ||
            !json_is_string(json_object_get(entry, "object"))) {
            snprintf(err, len, "the journal %s: entry %zu has no kind or object", j->path, i);
            json_decref(doc);
            return -1;
        }
        json_int_t seq = json_integer_value(json_object_get(entry, "seq"));
        if (seq >= j->next_seq)
            j->next_seq = seq + 1;
    }
    j->entries = json_incref(entries);
    json_decref(doc);
    return 0;
}

struct hv_journal *hv_journal_open(const char *dir, long long plan_id, char *err, size_t len)
{
    struct hv_journal *j = calloc(1, sizeof *j);
    if (j == NULL) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    j->plan_id = plan_id;
    j->next_seq = 1;
    if ((size_t)snprintf(j->dir, sizeof j->dir, "%s", dir) >= sizeof j->dir ||
        (size_t)snprintf(j->path, sizeof j->path, "%s/%lld.json", dir, plan_id) >= sizeof j->path) {
        snprintf(err, len, "journal folder path too long: %s", dir);
        free(j);
        return NULL;
    }
    int rc = load(j, err, len);
    if (rc < 0) {
        free(j);
        return NULL;
    }
    if (rc > 0 && (j->entries = json_array()) == NULL) {
        snprintf(err, len, "out of memory");
        free(j);
        return NULL;
    }
    return j;
}

void hv_journal_close(struct hv_journal *j)
{
    if (j == NULL)
        return;
    json_decref(j->entries);
    free(j);
}

long long hv_journal_plan(const struct hv_journal *j)
{
    return j->plan_id;
}

const char *hv_journal_path(const struct hv_journal *j)
{
    return j->path;
}

size_t hv_journal_count(const struct hv_journal *j)
{
    return json_array_size(j->entries);
}

json_t *hv_journal_at(const struct hv_journal *j, size_t i)
{
    return json_array_get(j->entries, i);
}

json_t *hv_journal_find(const struct hv_journal *j, const char *kind, const char *object)
{
    size_t i;
    json_t *e;
    json_array_foreach(j->entries, i, e)
    {
        const char *k = json_string_value(json_object_get(e, "kind"));
        const char *o = json_string_value(json_object_get(e, "object"));
        if (k != NULL && o != NULL && strcmp(k, kind) == 0 && strcmp(o, object) == 0)
            return e;
    }
    return NULL;
}

/* Writes the journal: a temporary file, fsync, rename, fsync of the
 * folder; or removes the file when there are no entries. */
static int write_file(struct hv_journal *j, char *err, size_t len)
{
    if (mkdir(j->dir, 0700) != 0 && errno != EEXIST) {
        snprintf(err, len, "cannot create the journal folder %s: %s", j->dir, strerror(errno));
        return -1;
    }
    if (json_array_size(j->entries) == 0) {
        if (unlink(j->path) != 0 && errno != ENOENT) {
            snprintf(err, len, "cannot remove the empty journal %s: %s", j->path, strerror(errno));
            return -1;
        }
        hv_dir_sync(j->dir);
        return 0;
    }
    json_t *doc = json_pack("{s:I, s:O}", "plan_id", (json_int_t)j->plan_id, "entries", j->entries);
    char *text = doc != NULL ? json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(doc);
    if (text == NULL) {
        snprintf(err, len, "cannot write the journal %s: out of memory", j->path);
        return -1;
    }
    int rc = hv_file_replace(j->path, text, strlen(text), 0600);
    if (rc != 0)
        snprintf(err, len, "cannot write the journal %s: %s", j->path, strerror(errno));
    free(text);
    return rc;
}

int hv_journal_add(struct hv_journal *j, json_t *entry, char *err, size_t len)
{
    if (!json_is_object(entry)) {
        json_decref(entry);
        snprintf(err, len, "out of memory");
        return -1;
    }
    char at[40];
    hv_now_iso8601(at, sizeof at);
    json_object_set_new(entry, "seq", json_integer(j->next_seq));
    json_object_set_new(entry, "at", json_string(at));
    if (json_array_append_new(j->entries, entry) != 0) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    if (write_file(j, err, len) != 0) {
        json_array_remove(j->entries, json_array_size(j->entries) - 1);
        return -1;
    }
    j->next_seq++;
    return 0;
}

int hv_journal_sync(struct hv_journal *j, char *err, size_t len)
{
    return write_file(j, err, len);
}

int hv_journal_remove(struct hv_journal *j, size_t i, char *err, size_t len)
{
    json_t *entry = json_incref(json_array_get(j->entries, i));
    if (entry == NULL) {
        snprintf(err, len, "no journal entry %zu", i);
        return -1;
    }
    json_array_remove(j->entries, i);
    if (write_file(j, err, len) != 0) {
        json_array_insert_new(j->entries, i, entry);
        return -1;
    }
    json_decref(entry);
    return 0;
}

static int by_value(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

json_t *hv_journal_plans(const char *dir)
{
    json_t *list = json_array();
    DIR *d = opendir(dir);
    if (d == NULL || list == NULL) {
        if (d != NULL)
            closedir(d);
        return list;
    }
    long long ids[1024];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < sizeof ids / sizeof ids[0]) {
        long long id;
        int used = 0;
        if (sscanf(e->d_name, "%lld.json%n", &id, &used) == 1 && e->d_name[used] == '\0' &&
            e->d_name[0] >= '0' && e->d_name[0] <= '9')
            ids[n++] = id;
    }
    closedir(d);
    qsort(ids, n, sizeof ids[0], by_value);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(list, json_integer(ids[i]));
    return list;
}
