/* test_restored.c — the restores not yet reported: entries survive a
 * reopen (a crash) with their plan and how, only what the server
 * acknowledged is forgotten (also when it equals another entry but once),
 * the last one takes the file with it, and a damaged file is refused and
 * left for the operator. */
#include "tests/unit/check.h"
#include "worker/virt/restored.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char top[256], path[400];

static json_t *changes(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    if (v == NULL)
        check_note("bad JSON in the test: %s", e.text);
    return v;
}

static void test_add_forget(void)
{
    char err[1400];
    json_t *list = hv_restored_load(path, err, sizeof err);
    CHECK(list != NULL && json_array_size(list) == 0); /* no file: nothing */
    json_decref(list);

    json_t *c = changes("[{\"factor\": \"thp\", \"scope\": \"host\", \"object\": \"/sys/thp\", "
                        "\"from\": \"never\", \"to\": \"madvise\", \"at\": "
                        "\"2026-01-02T03:04:05Z\"}, {\"factor\": \"ksm\", \"scope\": \"host\", "
                        "\"object\": \"/sys/ksm\", \"from\": \"1\", \"to\": \"0\", \"at\": "
                        "\"2026-01-02T03:04:06Z\"}]");
    CHECK_MSG(hv_restored_add(path, 7, c, HV_RESTORED_WORKER_START, err, sizeof err) == 0, "%s",
              err);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    json_t *empty = json_array();
    CHECK(hv_restored_add(path, 9, empty, HV_RESTORED_RESTORE_COMMAND, err, sizeof err) == 0);
    json_decref(empty);
    /* the same change again, of another run, is another entry */
    json_t *again = json_array();
    json_array_append(again, json_array_get(c, 0));
    CHECK(hv_restored_add(path, 7, again, HV_RESTORED_RESTORE_COMMAND, err, sizeof err) == 0);
    json_decref(again);
    json_decref(c);

    /* A fresh process finds all three, oldest first, each with its plan
     * and how. */
    list = hv_restored_load(path, err, sizeof err);
    CHECK_MSG(list != NULL, "%s", err);
    CHECK(json_array_size(list) == 3);
    json_t *e0 = json_array_get(list, 0), *e2 = json_array_get(list, 2);
    CHECK(json_integer_value(json_object_get(e0, "plan_id")) == 7);
    CHECK_STR(json_string_value(json_object_get(e0, "how")), "worker_start");
    CHECK_STR(json_string_value(json_object_get(e0, "to")), "madvise");
    CHECK_STR(json_string_value(json_object_get(e0, "at")), "2026-01-02T03:04:05Z");
    CHECK_STR(json_string_value(json_object_get(json_array_get(list, 1), "factor")), "ksm");
    CHECK_STR(json_string_value(json_object_get(e2, "how")), "restore_command");

    /* The server took the first two: only the third stays. */
    json_t *sent = json_array();
    json_array_append(sent, e0);
    json_array_append(sent, json_array_get(list, 1));
    CHECK_MSG(hv_restored_forget(path, sent, err, sizeof err) == 0, "%s", err);
    json_decref(sent);
    json_t *left = hv_restored_load(path, err, sizeof err);
    CHECK(json_array_size(left) == 1);
    CHECK(json_equal(json_array_get(left, 0), e2));
    /* Forgetting what is not there changes nothing. */
    sent = json_array();
    json_array_append(sent, e0);
    CHECK(hv_restored_forget(path, sent, err, sizeof err) == 0);
    json_decref(sent);
    json_decref(left);
    left = hv_restored_load(path, err, sizeof err);
    CHECK(json_array_size(left) == 1);
    /* The last one takes the file. */
    CHECK(hv_restored_forget(path, left, err, sizeof err) == 0);
    CHECK(access(path, F_OK) != 0);
    json_decref(left);
    json_decref(list);
}

static void test_damaged(void)
{
    char err[1400];
    FILE *f = fopen(path, "w");
    fputs("{\"restored\": [", f);
    fclose(f);
    CHECK(hv_restored_load(path, err, sizeof err) == NULL);
    CHECK_MSG(strstr(err, "unreadable") != NULL && strstr(err, "left for the operator"), "%s", err);
    json_t *c = changes("[{\"factor\": \"thp\", \"at\": \"2026-01-02T03:04:05Z\"}]");
    CHECK(hv_restored_add(path, 3, c, HV_RESTORED_WORKER_START, err, sizeof err) == -1);
    json_decref(c);
    f = fopen(path, "r");
    char buf[64] = "";
    CHECK(f != NULL && fgets(buf, sizeof buf, f) != NULL);
    if (f != NULL)
        fclose(f);
    CHECK_STR(buf, "{\"restored\": ["); /* left as it was */
    f = fopen(path, "w");
    fputs("{\"entries\": []}", f);
    fclose(f);
    CHECK(hv_restored_load(path, err, sizeof err) == NULL);
    CHECK_MSG(strstr(err, "no \"restored\" list") != NULL, "%s", err);
    unlink(path);
}

int main(void)
{
    snprintf(top, sizeof top, "/tmp/hv-restored-XXXXXX");
    if (mkdtemp(top) == NULL)
        return 99;
    snprintf(path, sizeof path, "%s/restored.json", top);
    test_add_forget();
    test_damaged();
    rmdir(top);
    return check_summary("test_restored");
}
