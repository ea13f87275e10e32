/* state.c — see state.h. */
#include "worker/state.h"

#include "fileio.h"
#include "log.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char state_dir[1024];
static char outbox_dir[1100];

void hv_state_default_dir(char *buf, size_t len)
{
    const char *sd = getenv("STATE_DIRECTORY");
    const char *xdg = getenv("XDG_STATE_HOME");
    const char *home = getenv("HOME");
    if (sd != NULL && *sd != '\0' && strchr(sd, ':') == NULL)
        snprintf(buf, len, "%s", sd);
    else if (geteuid() == 0)
        snprintf(buf, len, "/var/lib/hvbench-worker");
    else if (xdg != NULL && *xdg == '/')
        snprintf(buf, len, "%s/hvbench-worker", xdg);
    else
        snprintf(buf, len, "%s/.local/state/hvbench-worker",
                 home != NULL && *home != '\0' ? home : "/tmp");
}

/* mkdir -p with mode 0700 for what it creates. */
static int make_dirs(const char *path)
{
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p != '\0'; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(tmp, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

int hv_state_open(const char *dir, const char *name, char *err, size_t len)
{
    /* The target name becomes a folder: keep it one path component. */
    char safe[160];
    size_t k = 0;
    for (const char *p = name; *p != '\0' && k + 1 < sizeof safe; p++) {
        safe[k] = (*p == '/' || (*p == '.' && k == 0)) ? '_' : *p;
        k++;
    }
    safe[k] = '\0';
    if ((size_t)snprintf(state_dir, sizeof state_dir, "%s/%s", dir, safe) >= sizeof state_dir) {
        snprintf(err, len, "state folder path too long: %s", dir);
        return -1;
    }
    snprintf(outbox_dir, sizeof outbox_dir, "%s/outbox", state_dir);
    if (make_dirs(outbox_dir) != 0) {
        snprintf(err, len, "cannot create the state folder %s: %s", outbox_dir, strerror(errno));
        return -1;
    }
    /* The folders themselves must outlast a crash, or the files in them
     * go with them. */
    if (hv_dir_sync(dir) != 0 || hv_dir_sync(state_dir) != 0) {
        snprintf(err, len, "cannot sync the state folder %s: %s", state_dir, strerror(errno));
        return -1;
    }
    return 0;
}

const char *hv_state_path(void)
{
    return state_dir;
}

/* Writes doc to path atomically and durably (hv_file_replace()). Returns
 * 0, or -1 with errno set. */
static int write_atomic(const char *path, const json_t *doc, mode_t mode)
{
    char *text = json_dumps(doc, JSON_COMPACT);
    if (text == NULL) {
        errno = ENOMEM;
        return -1;
    }
    int rc = hv_file_replace(path, text, strlen(text), mode);
    int saved = errno;
    free(text);
    errno = saved;
    return rc;
}

static void credential_path(char *buf, size_t len)
{
    snprintf(buf, len, "%s/credential", state_dir);
}

int hv_state_credential_load(const char *server, char *token, size_t len, long long *worker_id)
{
    char path[1200];
    credential_path(path, sizeof path);
    json_error_t e;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
    if (doc == NULL) {
        if (access(path, F_OK) != 0)
            return 1;
        hv_warn("state: %s unreadable (%s); registering anew", path, e.text);
        return -1;
    }
    const char *srv = json_string_value(json_object_get(doc, "server"));
    const char *tok = json_string_value(json_object_get(doc, "token"));
    json_t *id = json_object_get(doc, "worker_id");
    int rc = 1;
    if (srv != NULL && tok != NULL && json_is_integer(id) && strcmp(srv, server) == 0 &&
        strlen(tok) < len) {
        snprintf(token, len, "%s", tok);
        *worker_id = json_integer_value(id);
        rc = 0;
    }
    json_decref(doc);
    return rc;
}

int hv_state_credential_save(const char *server, const char *token, long long worker_id)
{
    char path[1200];
    credential_path(path, sizeof path);
    json_t *doc = json_pack("{s:s,s:I,s:s}", "server", server, "worker_id", (json_int_t)worker_id,
                            "token", token);
    int rc = doc != NULL ? write_atomic(path, doc, 0600) : -1;
    if (rc != 0)
        hv_warn("state: cannot write %s: %s; a restart will register anew", path, strerror(errno));
    json_decref(doc);
    return rc;
}

void hv_state_credential_forget(void)
{
    char path[1200];
    credential_path(path, sizeof path);
    if (unlink(path) != 0 && errno != ENOENT)
        hv_warn("state: cannot remove %s: %s", path, strerror(errno));
}

static void outbox_path(char *buf, size_t len, long long job_id, int attempt, const char *ext)
{
    snprintf(buf, len, "%s/%lld-%d.json%s", outbox_dir, job_id, attempt, ext);
}

int hv_state_outbox_put(long long job_id, int attempt, const json_t *body)
{
    char path[1200];
    outbox_path(path, sizeof path, job_id, attempt, "");
    return write_atomic(path, body, 0600);
}

void hv_state_outbox_remove(long long job_id, int attempt)
{
    char path[1200];
    outbox_path(path, sizeof path, job_id, attempt, "");
    if (unlink(path) != 0 && errno != ENOENT)
        hv_warn("state: cannot remove %s: %s", path, strerror(errno));
}

static int by_job(const void *a, const void *b)
{
    const long long *x = a, *y = b;
    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

json_t *hv_state_outbox_list(void)
{
    json_t *list = json_array();
    DIR *d = opendir(outbox_dir);
    if (d == NULL) {
        hv_warn("state: cannot read %s: %s", outbox_dir, strerror(errno));
        return list;
    }
    long long(*ids)[2] = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        long long job;
        int attempt, used = 0;
        if (sscanf(e->d_name, "%lld-%d.json%n", &job, &attempt, &used) != 2 ||
            e->d_name[used] != '\0')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            void *p = realloc(ids, cap * sizeof *ids);
            if (p == NULL)
                break;
            ids = p;
        }
        ids[n][0] = job;
        ids[n][1] = attempt;
        n++;
    }
    closedir(d);
    if (n > 0)
        qsort(ids, n, sizeof *ids, by_job);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(list, json_pack("{s:I,s:I}", "job_id", (json_int_t)ids[i][0],
                                              "attempt", (json_int_t)ids[i][1]));
    free(ids);
    return list;
}

json_t *hv_state_outbox_load(long long job_id, int attempt)
{
    char path[1200], bad[1200];
    outbox_path(path, sizeof path, job_id, attempt, "");
    json_error_t e;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
    if (doc == NULL && access(path, F_OK) == 0) {
        outbox_path(bad, sizeof bad, job_id, attempt, ".bad");
        hv_error("job %lld: the kept result %s is unreadable (%s); moved to %s", job_id, path,
                 e.text, bad);
        if (hv_file_rename(path, bad) != 0)
            hv_warn("state: cannot rename %s: %s", path, strerror(errno));
    }
    return doc;
}

void hv_state_outbox_abandon(long long job_id, int attempt)
{
    char path[1200], keep[1200];
    outbox_path(path, sizeof path, job_id, attempt, "");
    outbox_path(keep, sizeof keep, job_id, attempt, ".undeliverable");
    if (hv_file_rename(path, keep) != 0 && errno != ENOENT)
        hv_warn("state: cannot rename %s: %s", path, strerror(errno));
}
