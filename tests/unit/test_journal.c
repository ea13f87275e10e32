/* test_journal.c — the tuning journal: entries survive a reopen (a
 * crash), the first original of an object wins, removal rewrites the file
 * and the last removal deletes it, a damaged file is refused and left for
 * the operator. */
#include "tests/unit/check.h"
#include "worker/virt/journal.h"

#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char top[256], dir[300];

static json_t *entry(const char *kind, const char *object, const char *original)
{
    return json_pack("{s:s, s:s, s:s}", "kind", kind, "object", object, "original", original);
}

static void test_add_reopen_remove(void)
{
    char err[512], path[400];
    snprintf(path, sizeof path, "%s/7.json", dir);
    struct hv_journal *j = hv_journal_open(dir, 7, err, sizeof err);
    CHECK_MSG(j != NULL, "%s", err);
    CHECK(hv_journal_count(j) == 0);
    CHECK(access(path, F_OK) != 0); /* nothing written for an empty journal */
    CHECK(hv_journal_add(j, entry("sysfs", "/sys/kernel/mm/ksm/run", "off"), err, sizeof err) == 0);
    CHECK(hv_journal_add(j, entry("nic_mtu", "eth1", "1500"), err, sizeof err) == 0);
    CHECK_STR(hv_journal_path(j), path);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    json_t *e = hv_journal_find(j, "nic_mtu", "eth1");
    CHECK(e != NULL && json_integer_value(json_object_get(e, "seq")) == 2);
    CHECK(json_is_string(json_object_get(e, "at")));
    CHECK(hv_journal_find(j, "nic_mtu", "eth0") == NULL);
    hv_journal_close(j);

    /* A fresh process finds both, in order, and numbers on. */
    j = hv_journal_open(dir, 7, err, sizeof err);
    CHECK_MSG(j != NULL, "%s", err);
    CHECK(hv_journal_count(j) == 2);
    CHECK_STR(json_string_value(json_object_get(hv_journal_at(j, 0), "original")), "off");
    CHECK(hv_journal_plan(j) == 7);
    CHECK(hv_journal_add(j, entry("vcpu_pin", "vm0", "0-3"), err, sizeof err) == 0);
    CHECK(json_integer_value(json_object_get(hv_journal_at(j, 2), "seq")) == 3);
    json_object_set_new(hv_journal_at(j, 2), "restarted", json_true());
    CHECK(hv_journal_sync(j, err, sizeof err) == 0);
    hv_journal_close(j);

    j = hv_journal_open(dir, 7, err, sizeof err);
    CHECK(json_is_true(json_object_get(hv_journal_at(j, 2), "restarted")));
    CHECK(hv_journal_remove(j, 1, err, sizeof err) == 0);
    CHECK(hv_journal_count(j) == 2);
    hv_journal_close(j);
    j = hv_journal_open(dir, 7, err, sizeof err);
    CHECK(hv_journal_count(j) == 2);
    CHECK_STR(json_string_value(json_object_get(hv_journal_at(j, 1), "kind")), "vcpu_pin");
    CHECK(hv_journal_remove(j, 1, err, sizeof err) == 0);
    CHECK(hv_journal_remove(j, 0, err, sizeof err) == 0);
    CHECK(hv_journal_remove(j, 0, err, sizeof err) == -1); /* nothing left */
    CHECK(access(path, F_OK) != 0);                        /* the last removal deletes it */
    hv_journal_close(j);
}

static void write_file(const char *name, const char *text)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static void test_damaged(void)
{
    char err[512];
    write_file("8.json", "{\"plan_id\": 8, \"entries\": [");
    struct hv_journal *j = hv_journal_open(dir, 8, err, sizeof err);
    CHECK(j == NULL);
    CHECK_MSG(strstr(err, "8.json is unreadable") != NULL && strstr(err, "left for the operator"),
              "%s", err);
    write_file("9.json", "{\"plan_id\": 3, \"entries\": []}");
    CHECK(hv_journal_open(dir, 9, err, sizeof err) == NULL);
    CHECK_MSG(strstr(err, "not the journal of plan 9") != NULL, "%s", err);
    write_file("10.json", "{\"plan_id\": 10, \"entries\": [{\"kind\": \"sysfs\"}]}");
    CHECK(hv_journal_open(dir, 10, err, sizeof err) == NULL);
    CHECK_MSG(strstr(err, "entry 0 has no kind or object") != NULL, "%s", err);
    char path[400];
    snprintf(path, sizeof path, "%s/8.json", dir);
    CHECK(access(path, F_OK) == 0); /* never removed */
}

static void test_plans(void)
{
    write_file("12.json.tmp", "{}");
    write_file("notes.txt", "x");
    write_file("2.json", "{\"plan_id\": 2, \"entries\": []}");
    json_t *plans = hv_journal_plans(dir);
    char *s = json_dumps(plans, JSON_COMPACT);
    CHECK_STR(s, "[2,8,9,10]");
    free(s);
    json_decref(plans);
    plans = hv_journal_plans("/nonexistent/hvbench");
    CHECK(json_array_size(plans) == 0);
    json_decref(plans);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

int main(void)
{
    snprintf(top, sizeof top, "/tmp/hv-journal-XXXXXX");
    if (mkdtemp(top) == NULL)
        return 99;
    snprintf(dir, sizeof dir, "%s/journal", top); /* created on the first write */
    test_add_reopen_remove();
    test_damaged();
    test_plans();
    nftw(top, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    return check_summary("test_journal");
}
