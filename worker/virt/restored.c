/* restored.c — see restored.h. */
#include "worker/virt/restored.h"

#include "fileio.h"
#include "log.h"
#include "worker/state.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void hv_restored_path(char *buf, size_t len)
{
    snprintf(buf, len, "%s/restored.json", hv_state_path());
}

json_t *hv_restored_load(const char *path, char *err, size_t len)
{
    json_error_t e;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
    if (doc == NULL) {
        if (access(path, F_OK) != 0 && errno == ENOENT)
            return json_array();
        snprintf(err, len, "%s is unreadable (%s); it is left for the operator", path, e.text);
        return NULL;
    }
    json_t *list = json_incref(json_object_get(doc, "restored"));
    json_decref(doc);
    if (!json_is_array(list)) {
        snprintf(err, len, "%s holds no \"restored\" list; it is left for the operator", path);
        json_decref(list);
        return NULL;
    }
    return list;
}

/* Writes list as the file's entries, or removes the file when it is
 * empty. Returns 0, or -1 with err. */
static int store(const char *path, const json_t *list, char *err, size_t len)
{
    if (json_array_size(list) == 0) {
        if (unlink(path) != 0 && errno != ENOENT) {
            snprintf(err, len, "cannot remove %s: %s", path, strerror(errno));
            return -1;
        }
        return 0;
    }
    json_t *doc = json_pack("{s:O}", "restored", (json_t *)list);
    char *text = doc != NULL ? json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(doc);
    if (text == NULL) {
        snprintf(err, len, "cannot write %s: out of memory", path);
        return -1;
    }
    int rc = hv_file_replace(path, text, strlen(text), 0600);
    if (rc != 0)
        snprintf(err, len, "cannot write %s: %s", path, strerror(errno));
    free(text);
    return rc;
}

int hv_restored_add(const char *path, long long plan_id, const json_t *changes, const char *how,
                    char *err, size_t len)
{
    if (json_array_size(changes) == 0)
        return 0;
    json_t *list = hv_restored_load(path, err, len);
    if (list == NULL)
        return -1;
    size_t i;
    const json_t *c;
    json_array_foreach(changes, i, c)
    {
        json_t *e = json_deep_copy(c);
        if (e == NULL || json_object_set_new(e, "plan_id", json_integer(plan_id)) != 0 ||
            json_object_set_new(e, "how", json_string(how)) != 0 ||
            json_array_append_new(list, e) != 0) {
            snprintf(err, len, "cannot note what was restored: out of memory");
            json_decref(list);
            return -1;
        }
    }
    int rc = store(path, list, err, len);
    json_decref(list);
    return rc;
}

int hv_restored_forget(const char *path, const json_t *sent, char *err, size_t len)
{
    json_t *list = hv_restored_load(path, err, len);
    if (list == NULL)
        return -1;
    size_t i, k;
    const json_t *s;
    json_array_foreach(sent, i, s)
    {
        for (k = 0; k < json_array_size(list); k++)
            if (json_equal(json_array_get(list, k), s)) {
                json_array_remove(list, k);
                break;
            }
    }
    int rc = store(path, list, err, len);
    json_decref(list);
    return rc;
}

/* The first n entries of list, as a new array. */
static json_t *head(const json_t *list, size_t n)
{
    json_t *out = json_array();
    for (size_t i = 0; out != NULL && i < n && i < json_array_size(list); i++)
        json_array_append(out, json_array_get(list, i));
    return out;
}

int hv_restored_report(struct hv_client *c, const char *path)
{
    char err[1200];
    for (;;) {
        json_t *list = hv_restored_load(path, err, sizeof err);
        if (list == NULL) {
            hv_error("restored settings not reported: %s", err);
            return -1;
        }
        size_t n = json_array_size(list);
        json_t *batch = n > 0 ? head(list, HV_RESTORED_BATCH) : NULL;
        json_decref(list);
        if (n == 0)
            return 0;
        if (batch == NULL) {
            hv_error("restored settings not reported: out of memory");
            return -1;
        }
        size_t sent = json_array_size(batch);
        enum hv_call call = hv_client_report_restored(c, batch);
        if (call == HV_CALL_OK) {
            hv_info("reported %zu setting%s restored from the journal to the server", sent,
                    sent == 1 ? "" : "s");
            int rc = hv_restored_forget(path, batch, err, sizeof err);
            json_decref(batch);
            if (rc != 0) {
                hv_error("%s; it is reported again next time (the server ignores what it has)",
                         err);
                return -1;
            }
            continue;
        }
        json_decref(batch);
        if (call == HV_CALL_REJECTED || call == HV_CALL_NOT_FOUND) {
            char bad[1300];
            snprintf(bad, sizeof bad, "%s.undeliverable", path);
            hv_error("the server refused the report of restored settings (%s); %s",
                     hv_client_last_error(c),
                     hv_file_rename(path, bad) == 0 ? "kept in *.undeliverable for the operator"
                                                    : "it stays for the next registration");
            return -1;
        }
        hv_warn("restored settings not reported (%s); %s keeps them for the next try",
                hv_client_last_error(c), path);
        return 1;
    }
}
