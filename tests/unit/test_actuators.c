/* test_actuators.c — the host actuators and the step around them: one row
 * per catalogue factor; apply → journal → restore on a temporary sysfs tree
 * returns it byte for byte, also after a "crash" (the journal reopened by a
 * fresh context); the knobs this kernel lacks fail naming the factor, the
 * level and the file; and on the real machine: THP and KSM, a loop
 * device's scheduler and read-ahead, a dummy (or veth) NIC's MTU, the
 * read-only halt_poll_ns and the absent kvm_intel/kvm_amd parameters. */
#include "tests/unit/check.h"
#include "worker/virt/actuator.h"
#include "worker/virt/procpin.h"
#include "worker/virt/restored.h"
#include "worker/virt/step.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <ftw.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char top[256];

/* ---- helpers ---------------------------------------------------------- */

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void rm_tree(const char *path)
{
    nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* mkdir -p of the folder holding path. */
static void make_parents(const char *path)
{
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p != '\0'; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(tmp, 0755);
            *p = '/';
        }
}

static void put(const char *root, const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    make_parents(path);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        exit(99);
    }
    fputs(text, f);
    fclose(f);
}

/* The whole text of root/rel into a static buffer ("<missing>"). */
static const char *get(const char *root, const char *rel)
{
    static char buf[4096];
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return "<missing>";
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static void link_to(const char *root, const char *rel, const char *target)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    make_parents(path);
    if (symlink(target, path) != 0) {
        perror(path);
        exit(99);
    }
}

/* The files of the test tree, as the kernel shows them. */
static const char *const tree_files[][2] = {
    {"sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n"},
    {"sys/kernel/mm/ksm/run", "0\n"},
    {"sys/module/kvm/parameters/halt_poll_ns", "200000\n"},
    {"sys/module/kvm_intel/parameters/ept", "Y\n"},
    {"sys/devices/virtual/block/sdz/queue/scheduler", "none [mq-deadline] kyber bfq\n"},
    {"sys/devices/virtual/block/sdz/queue/read_ahead_kb", "128\n"},
    {"sys/devices/virtual/block/sdz/sdz1/partition", "1\n"},
};
#define N_TREE (sizeof tree_files / sizeof tree_files[0])

/* A fresh sysfs-like tree under top/name: the knobs above, the disk sdz
 * with its partition sdz1 reached through /sys/class/block and
 * /sys/block links as on a real machine. */
static void make_tree(char *root, size_t len, const char *name)
{
    snprintf(root, len, "%s/%s", top, name);
    for (size_t i = 0; i < N_TREE; i++)
        put(root, tree_files[i][0], tree_files[i][1]);
    link_to(root, "sys/class/block/sdz", "../../devices/virtual/block/sdz");
    link_to(root, "sys/class/block/sdz1", "../../devices/virtual/block/sdz/sdz1");
    link_to(root, "sys/block/sdz", "../devices/virtual/block/sdz");
}

/* Whether every file of the tree is byte for byte as made. */
static bool tree_same(const char *root, bool say)
{
    bool same = true;
    for (size_t i = 0; i < N_TREE; i++)
        if (strcmp(get(root, tree_files[i][0]), tree_files[i][1]) != 0) {
            if (say)
                check_note("%s holds \"%s\"", tree_files[i][0], get(root, tree_files[i][0]));
            same = false;
        }
    return same;
}

#define tree_is_original(root) tree_same(root, true)

/* Runs argv (no shell); returns its exit status, -1 when it cannot run. */
static int run(const char *const *argv, bool quiet)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (quiet) {
            int fd = open("/dev/null", O_WRONLY);
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) < 0)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Runs argv and reads the first line of its output into out. */
static int run_read(const char *const *argv, char *out, size_t len)
{
    int p[2];
    if (pipe(p) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(p[1]);
    ssize_t n = read(p[0], out, len - 1);
    close(p[0]);
    out[n > 0 ? n : 0] = '\0';
    out[strcspn(out, "\n")] = '\0';
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static struct hv_journal *journal(const char *name, long long plan)
{
    char dir[512], err[512];
    snprintf(dir, sizeof dir, "%s/%s", top, name);
    struct hv_journal *j = hv_journal_open(dir, plan, err, sizeof err);
    if (j == NULL) {
        fprintf(stderr, "journal: %s\n", err);
        exit(99);
    }
    return j;
}

static const char *setting(const json_t *settings, const char *factor, const char *member)
{
    return json_string_value(json_object_get(json_object_get(settings, factor), member));
}

/* ---- the table -------------------------------------------------------- */

static void test_table(void)
{
    CHECK(hv_actuator_count() == hv_factor_count());
    for (size_t i = 0; i < hv_factor_count(); i++) {
        const struct hv_factor_def *f = hv_factor_at(i);
        const struct hv_actuator *a = hv_actuator_find(f->name);
        CHECK_MSG(a != NULL, "no actuator for %s", f->name);
        if (a == NULL)
            continue;
        /* every factor is read back, except the one applied per job */
        CHECK_MSG((a->read_back != NULL) == (strcmp(f->name, "process_pin") != 0), "%s", f->name);
        /* what is changed can be put back; reboot-class levels are never changed */
        CHECK_MSG((a->revert != NULL) == (a->apply != NULL && f->disruption != HV_DISRUPT_REBOOT),
                  "%s", f->name);
    }
    for (size_t i = 0; i < hv_actuator_count(); i++)
        CHECK_MSG(hv_factor_find(hv_actuator_at(i)->factor) != NULL, "%s",
                  hv_actuator_at(i)->factor);
}

/* ---- a temporary tree ----------------------------------------------- */

static void test_tree_apply_restore(void)
{
    char root[400], err[8192];
    make_tree(root, sizeof root, "tree1");
    struct hv_journal *j = journal("journal1", 3);
    struct hv_act_ctx ctx = {.root = root, .disk = "sdz1", .plan_id = 3, .journal = j};
    json_t *levels = check_json("{\"thp\": \"never\", \"ksm\": \"on\", \"halt_poll_ns\": \"50us\", "
                                "\"io_scheduler\": \"bfq\", \"readahead_kb\": \"4m\", "
                                "\"kvm_ept\": \"on\"}");
    json_t *settings;
    int rc = hv_actuators_apply(levels, &ctx, &settings, err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    CHECK_STR(get(root, "sys/kernel/mm/transparent_hugepage/enabled"), "never\n");
    CHECK_STR(get(root, "sys/kernel/mm/ksm/run"), "1\n");
    CHECK_STR(get(root, "sys/module/kvm/parameters/halt_poll_ns"), "50000\n");
    CHECK_STR(get(root, "sys/block/sdz/queue/scheduler"), "bfq\n"); /* the partition's disk */
    CHECK_STR(get(root, "sys/block/sdz/queue/read_ahead_kb"), "4096\n");
    CHECK_STR(setting(settings, "thp", "read_back"), "never");
    CHECK_STR(setting(settings, "thp", "source"), "/sys/kernel/mm/transparent_hugepage/enabled");
    CHECK_STR(setting(settings, "ksm", "read_back"), "on");
    CHECK_STR(setting(settings, "halt_poll_ns", "level"), "50000");
    CHECK_STR(setting(settings, "halt_poll_ns", "read_back"), "50000");
    CHECK_STR(setting(settings, "io_scheduler", "source"), "/sys/block/sdz/queue/scheduler");
    CHECK_STR(setting(settings, "readahead_kb", "read_back"), "4096");
    CHECK_STR(setting(settings, "kvm_ept", "read_back"), "on");
    CHECK(hv_journal_count(j) == 5); /* ept was already on: nothing to keep */
    CHECK(json_array_size(ctx.changes) == 5);
    json_t *c0 = json_array_get(ctx.changes, 0);
    CHECK_STR(json_string_value(json_object_get(c0, "factor")), "thp");
    CHECK_STR(json_string_value(json_object_get(c0, "scope")), "host");
    CHECK_STR(json_string_value(json_object_get(c0, "from")), "madvise");
    CHECK_STR(json_string_value(json_object_get(c0, "to")), "never");
    CHECK(json_is_string(json_object_get(c0, "at")));
    json_decref(settings);
    json_decref(ctx.changes);
    ctx.changes = NULL;

    /* The next block changes some again: the originals stay the first. */
    json_t *block2 = check_json("{\"thp\": \"always\", \"ksm\": \"off\"}");
    CHECK(hv_actuators_apply(block2, &ctx, &settings, err, sizeof err) == 0);
    CHECK(hv_journal_count(j) == 5);
    json_t *thp = hv_journal_find(j, "sysfs", "/sys/kernel/mm/transparent_hugepage/enabled");
    CHECK_STR(json_string_value(json_object_get(thp, "original")), "madvise");
    CHECK_STR(json_string_value(json_object_get(thp, "text")), "always [madvise] never\n");
    json_decref(settings);
    json_decref(ctx.changes);
    ctx.changes = NULL;

    /* Restore: everything back byte for byte, newest first, journal gone. */
    CHECK_MSG(hv_actuators_restore(&ctx, err, sizeof err) == 0, "%s", err);
    CHECK(tree_is_original(root));
    CHECK(hv_journal_count(j) == 0);
    CHECK(access(hv_journal_path(j), F_OK) != 0);
    /* ksm is back at its original already (block 2): nothing to note */
    CHECK(json_array_size(ctx.changes) == 4);
    json_t *last = json_array_get(ctx.changes, 3); /* thp was journalled first */
    CHECK_STR(json_string_value(json_object_get(last, "factor")), "thp");
    CHECK_STR(json_string_value(json_object_get(last, "from")), "always");
    CHECK_STR(json_string_value(json_object_get(last, "to")), "madvise");
    json_decref(ctx.changes);
    hv_journal_close(j);
    json_decref(levels);
    json_decref(block2);
}

/* A worker that dies between apply and restore: a fresh context and the
 * journal reopened from disk put everything back. */
static void test_tree_crash(void)
{
    char root[400], err[8192], dir[512];
    make_tree(root, sizeof root, "tree2");
    struct hv_journal *j = journal("journal2", 4);
    struct hv_act_ctx ctx = {.root = root, .disk = "sdz", .plan_id = 4, .journal = j};
    json_t *levels = check_json("{\"thp\": \"always\", \"ksm\": \"on\", \"io_scheduler\": "
                                "\"none\", \"readahead_kb\": 0}");
    json_t *settings;
    CHECK_MSG(hv_actuators_apply(levels, &ctx, &settings, err, sizeof err) == 0, "%s", err);
    CHECK(!tree_same(root, false)); /* applied */
    json_decref(settings);
    json_decref(ctx.changes);
    hv_journal_close(j); /* the "crash": nothing restored, nothing in memory */

    snprintf(dir, sizeof dir, "%s/journal2", top);
    char noted[600];
    snprintf(noted, sizeof noted, "%s/restored2.json", top);
    struct hv_step_env env = {.root = root, .journal_dir = dir, .restored_file = noted};
    CHECK(hv_step_restore_all(&env, HV_RESTORED_WORKER_START) == 0);
    CHECK(tree_is_original(root));
    json_t *plans = hv_journal_plans(dir);
    CHECK(json_array_size(plans) == 0);
    json_decref(plans);
    /* What came back is noted for the server: plan, how, the change. */
    json_t *got = hv_restored_load(noted, err, sizeof err);
    CHECK_MSG(got != NULL, "%s", err);
    CHECK(json_array_size(got) == 4);
    size_t i;
    json_t *e;
    int thp = 0;
    json_array_foreach(got, i, e)
    {
        CHECK(json_integer_value(json_object_get(e, "plan_id")) == 4);
        CHECK_STR(json_string_value(json_object_get(e, "how")), "worker_start");
        CHECK(json_is_string(json_object_get(e, "at")));
        if (strcmp(json_string_value(json_object_get(e, "factor")), "thp") == 0) {
            thp++;
            CHECK_STR(json_string_value(json_object_get(e, "from")), "always");
            CHECK_STR(json_string_value(json_object_get(e, "to")), "madvise");
            CHECK_STR(json_string_value(json_object_get(e, "scope")), "host");
        }
    }
    CHECK(thp == 1);
    json_decref(got);
    json_decref(levels);
}

/* Knobs the kernel lacks, levels it cannot take, steps that name nothing. */
static void expect_fail(const char *root, const char *disk, const char *nic, const char *levels,
                        const char *const *needles)
{
    char err[8192];
    struct hv_journal *j = journal("journal3", 5);
    struct hv_act_ctx ctx = {.root = root, .disk = disk, .nic = nic, .plan_id = 5, .journal = j};
    json_t *l = check_json(levels), *settings;
    CHECK_MSG(hv_actuators_apply(l, &ctx, &settings, err, sizeof err) == -1, "%s applied", levels);
    for (const char *const *n = needles; *n != NULL; n++)
        CHECK_MSG(strstr(err, *n) != NULL, "%s: \"%s\" not in: %s", levels, *n, err);
    CHECK_MSG(hv_journal_count(j) == 0, "%s left a journal entry", levels);
    json_decref(settings);
    json_decref(ctx.changes);
    json_decref(l);
    hv_journal_close(j);
}

static void test_tree_failures(void)
{
    char root[400], bare[400];
    make_tree(root, sizeof root, "tree3");
    snprintf(bare, sizeof bare, "%s/bare", top); /* a kernel with none of the knobs */
    mkdir(bare, 0755);
    expect_fail(root, NULL, NULL, "{\"kvm_ept\": \"off\"}",
                (const char *const[]){"kvm_ept=off needs a reload of kvm_intel",
                                      "the host has ept=on",
                                      "modprobe -r kvm_intel && modprobe kvm_intel ept=0", NULL});
    expect_fail(root, NULL, NULL, "{\"kvm_npt\": \"off\"}",
                (const char *const[]){"kvm_npt=off: /sys/module/kvm_amd/parameters/npt does not "
                                      "exist: kvm_amd is not loaded",
                                      "modprobe kvm_amd npt=0", NULL});
    expect_fail(bare, NULL, NULL, "{\"ksm\": \"on\"}",
                (const char *const[]){"ksm=on: cannot read /sys/kernel/mm/ksm/run: No such file",
                                      "this kernel has no KSM", NULL});
    expect_fail(bare, NULL, NULL, "{\"thp\": \"never\"}",
                (const char *const[]){"thp=never: cannot read "
                                      "/sys/kernel/mm/transparent_hugepage/enabled",
                                      NULL});
    expect_fail(bare, NULL, NULL, "{\"halt_poll_ns\": 0}",
                (const char *const[]){"halt_poll_ns=0: cannot read "
                                      "/sys/module/kvm/parameters/halt_poll_ns",
                                      "the kvm module is not loaded", NULL});
    expect_fail(root, NULL, NULL, "{\"io_scheduler\": \"bfq\"}",
                (const char *const[]){"io_scheduler=bfq: the step names no disk", NULL});
    expect_fail(root, "sdq", NULL, "{\"readahead_kb\": 256}",
                (const char *const[]){"readahead_kb=256: no block device sdq", NULL});
    expect_fail(root, "../sdz", NULL, "{\"readahead_kb\": 256}",
                (const char *const[]){"\"../sdz\" is not a disk name", NULL});
    put(root, "sys/devices/virtual/block/sdz/queue/scheduler", "none [mq-deadline]\n");
    expect_fail(root, "sdz", NULL, "{\"io_scheduler\": \"bfq\"}",
                (const char *const[]){"io_scheduler=bfq: /sys/block/sdz/queue/scheduler offers "
                                      "only none [mq-deadline]",
                                      NULL});
    expect_fail(root, NULL, NULL, "{\"nic_mtu\": 9000}",
                (const char *const[]){"nic_mtu=9000: the step names no NIC", NULL});
    expect_fail(root, NULL, "hvnope0", "{\"nic_mtu\": 9000}",
                (const char *const[]){"nic_mtu=9000: no network interface hvnope0", NULL});
    expect_fail(root, NULL, NULL, "{\"warp_drive\": \"on\", \"thp\": \"sometimes\"}",
                (const char *const[]){"warp_drive: no such factor",
                                      "thp: \"sometimes\" is not a level of thp", NULL});
    expect_fail(root, NULL, NULL, "{\"vcpu_pin\": \"on\"}",
                (const char *const[]){"guest factors need the step's domains", NULL});
    char dir[512];
    snprintf(dir, sizeof dir, "%s/journal3", top);
    json_t *plans = hv_journal_plans(dir);
    CHECK(json_array_size(plans) == 0);
    json_decref(plans);
}

/* The settings read back without changing anything: what a job's end
 * checks. */
static void test_read_back_only(void)
{
    char root[400], err[8192];
    make_tree(root, sizeof root, "tree4");
    struct hv_act_ctx ctx = {.root = root, .disk = "sdz"};
    json_t *levels = check_json("{\"thp\": \"madvise\", \"readahead_kb\": 128, \"process_pin\": "
                                "\"on\"}"),
           *settings;
    CHECK_MSG(hv_actuators_read_back(levels, &ctx, &settings, err, sizeof err) == 0, "%s", err);
    CHECK_STR(setting(settings, "thp", "read_back"), "madvise");
    CHECK_STR(json_string_value(json_object_get(
                  json_object_get(json_object_get(settings, "thp"), "detail"), "text")),
              "always [madvise] never");
    CHECK(json_is_null(json_object_get(json_object_get(settings, "process_pin"), "read_back")));
    json_decref(settings);
    put(root, "sys/kernel/mm/transparent_hugepage/enabled", "always madvise [never]\n");
    CHECK(hv_actuators_read_back(levels, &ctx, &settings, err, sizeof err) == -1);
    CHECK_MSG(strstr(err, "thp=madvise: reads back never") != NULL, "%s", err);
    CHECK(!tree_same(root, false));
    CHECK(ctx.changes == NULL); /* nothing changed */
    json_decref(settings);
    json_decref(levels);
}

/* ---- the step around the actuators ----------------------------------- */

static void test_step(void)
{
    char root[400], dir[512];
    make_tree(root, sizeof root, "tree5");
    snprintf(dir, sizeof dir, "%s/journal5", top);
    json_t *doc = check_json("{\"levels\": {\"thp\": \"never\", \"kvm_ept\": \"on\"}, "
                             "\"domains\": []}");
    struct hv_step step = {.id = 11,
                           .attempt = 2,
                           .plan_id = 6,
                           .kind = "apply",
                           .levels = json_object_get(doc, "levels"),
                           .domains = json_object_get(doc, "domains")};
    struct hv_step_env env = {.root = root, .journal_dir = dir};
    json_t *body = hv_step_execute(&step, &env, NULL, NULL);
    CHECK(json_integer_value(json_object_get(body, "attempt")) == 2);
    CHECK_STR(json_string_value(json_object_get(body, "status")), "ok");
    CHECK(json_object_get(body, "error") == NULL);
    CHECK_STR(setting(json_object_get(body, "settings"), "thp", "read_back"), "never");
    CHECK(json_array_size(json_object_get(body, "changes")) == 1);
    json_decref(body);

    step.kind = "restore";
    body = hv_step_execute(&step, &env, NULL, NULL);
    CHECK_STR(json_string_value(json_object_get(body, "status")), "ok");
    json_t *c = json_array_get(json_object_get(body, "changes"), 0);
    CHECK_STR(json_string_value(json_object_get(c, "to")), "madvise");
    CHECK(json_object_size(json_object_get(body, "settings")) == 0);
    CHECK(tree_is_original(root));
    json_decref(body);

    /* A reboot-class level the host is not at: the step waits for the
     * operator, changes nothing and says what to run. */
    step.kind = "apply";
    json_object_set_new(json_object_get(doc, "levels"), "kvm_ept", json_string("off"));
    body = hv_step_execute(&step, &env, NULL, NULL);
    CHECK_STR(json_string_value(json_object_get(body, "status")), "waiting_for_operator");
    CHECK_MSG(strstr(json_string_value(json_object_get(body, "error")),
                     "kvm_ept=off needs a reload of kvm_intel") != NULL,
              "%s", json_string_value(json_object_get(body, "error")));
    json_t *w = json_array_get(json_object_get(body, "waiting"), 0);
    CHECK(json_array_size(json_object_get(body, "waiting")) == 1);
    CHECK_STR(json_string_value(json_object_get(w, "factor")), "kvm_ept");
    CHECK_STR(json_string_value(json_object_get(w, "level")), "off");
    CHECK_STR(json_string_value(json_object_get(w, "value")), "on");
    CHECK_STR(json_string_value(json_object_get(w, "file")),
              "/sys/module/kvm_intel/parameters/ept");
    CHECK_STR(json_string_value(json_object_get(w, "command")),
              "modprobe -r kvm_intel && modprobe kvm_intel ept=0");
    CHECK(json_object_get(w, "message") == NULL);
    CHECK(json_array_size(json_object_get(body, "changes")) == 0); /* thp left alone */
    CHECK(tree_is_original(root));
    json_decref(body);

    /* Once the operator reloaded the module, the same step applies. */
    put(root, "sys/module/kvm_intel/parameters/ept", "N\n");
    body = hv_step_execute(&step, &env, NULL, NULL);
    CHECK_STR(json_string_value(json_object_get(body, "status")), "ok");
    CHECK_STR(setting(json_object_get(body, "settings"), "kvm_ept", "read_back"), "off");
    CHECK(json_array_size(json_object_get(body, "changes")) == 1);
    json_decref(body);
    put(root, "sys/module/kvm_intel/parameters/ept", "Y\n");

    /* A failed apply says why and what it did. */
    json_object_set_new(json_object_get(doc, "levels"), "kvm_npt", json_string("off"));
    json_object_set_new(json_object_get(doc, "levels"), "kvm_ept", json_string("on"));
    body = hv_step_execute(&step, &env, NULL, NULL);
    CHECK_STR(json_string_value(json_object_get(body, "status")), "error");
    CHECK_MSG(strstr(json_string_value(json_object_get(body, "error")), "npt=0") != NULL, "%s",
              json_string_value(json_object_get(body, "error")));
    CHECK(json_array_size(json_object_get(body, "changes")) == 0); /* thp kept from before */
    json_decref(body);
    step.kind = "restore";
    json_decref(hv_step_execute(&step, &env, NULL, NULL));
    CHECK(tree_is_original(root));
    json_decref(doc);
}

/* ---- process_pin ------------------------------------------------------ */

struct pin_run {
    struct hv_process_pin pin;
    int rc;
};

static void *pin_thread(void *arg)
{
    struct pin_run *r = arg;
    r->rc = hv_process_pin_enter(&r->pin);
    return NULL;
}

static json_t *pin_observed(const char *levels, const char *kind, const char *engine,
                            const char *observed, bool *cpu_pin)
{
    json_t *l = check_json(levels), *params = check_json("{\"seconds\": 1}");
    struct pin_run r;
    hv_process_pin_begin(&r.pin, l, kind, engine, params);
    *cpu_pin = json_is_true(json_object_get(hv_process_pin_params(&r.pin), "pin"));
    pthread_t t;
    pthread_create(&t, NULL, pin_thread, &r);
    pthread_join(t, NULL);
    CHECK(r.rc == 0);
    json_t *obs = check_json(observed);
    hv_process_pin_observe(&r.pin, obs);
    hv_process_pin_end(&r.pin);
    json_decref(l);
    json_decref(params);
    return obs;
}

static void test_process_pin(void)
{
    bool cpu_pin;
    json_t *obs = pin_observed("{\"process_pin\": \"on\"}", "disk", "builtin", "{}", &cpu_pin);
    json_t *s = json_object_get(json_object_get(obs, "settings"), "process_pin");
    CHECK(!cpu_pin);
    CHECK_STR(json_string_value(json_object_get(s, "read_back")), "on");
    const char *cpus = json_string_value(json_object_get(json_object_get(s, "detail"), "cpus"));
    CHECK_MSG(cpus != NULL && strchr(cpus, ',') == NULL && strchr(cpus, '-') == NULL,
              "one CPU expected: %s", cpus);
    json_decref(obs);

    /* the cpu engine pins its copies itself: pin=true, its CPUs recorded */
    obs = pin_observed("{\"process_pin\": \"on\"}", "cpu", "builtin",
                       "{\"pinned\": true, \"cpus\": [0, 1]}", &cpu_pin);
    s = json_object_get(json_object_get(obs, "settings"), "process_pin");
    CHECK(cpu_pin);
    CHECK_STR(json_string_value(json_object_get(s, "read_back")), "on");
    CHECK(json_array_size(json_object_get(json_object_get(s, "detail"), "copies")) == 2);
    json_decref(obs);

    obs = pin_observed("{\"process_pin\": \"off\"}", "cpu", "builtin", "{}", &cpu_pin);
    s = json_object_get(json_object_get(obs, "settings"), "process_pin");
    CHECK(!cpu_pin);
    CHECK_STR(json_string_value(json_object_get(s, "read_back")), "off");
    json_decref(obs);

    obs = pin_observed("{\"thp\": \"never\"}", "cpu", "builtin", "{}", &cpu_pin);
    CHECK(json_object_get(obs, "settings") == NULL); /* not a factor of the job */
    json_decref(obs);
}

/* ---- the real machine ------------------------------------------------- */

/* THP and KSM are global: each is moved off its level and put back. */
static void test_live_global(void)
{
    char err[8192];
    const char *thp_rel = "sys/kernel/mm/transparent_hugepage/enabled";
    char before_thp[256], before_ksm[64];
    snprintf(before_thp, sizeof before_thp, "%s", get("", thp_rel));
    snprintf(before_ksm, sizeof before_ksm, "%s", get("", "sys/kernel/mm/ksm/run"));
    size_t thp_len = strcspn(before_thp, "\n"), ksm_len = strcspn(before_ksm, "\n");
    struct hv_journal *j = journal("journal6", 7);
    struct hv_act_ctx ctx = {.root = "/", .plan_id = 7, .journal = j};
    bool thp_never = strstr(before_thp, "[never]") != NULL;
    json_t *levels = json_pack("{s:s, s:s}", "thp", thp_never ? "madvise" : "never", "ksm",
                               strcmp(before_ksm, "1\n") == 0 ? "off" : "on"),
           *settings;
    int rc = hv_actuators_apply(levels, &ctx, &settings, err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    printf("live: thp \"%.*s\" -> %s, ksm %.*s -> %s\n", (int)thp_len, before_thp,
           setting(settings, "thp", "read_back"), (int)ksm_len, before_ksm,
           setting(settings, "ksm", "read_back"));
    CHECK(strstr(get("", thp_rel), thp_never ? "[madvise]" : "[never]") != NULL);
    json_decref(settings);
    CHECK_MSG(hv_actuators_restore(&ctx, err, sizeof err) == 0, "%s", err);
    CHECK_STR(get("", thp_rel), before_thp);
    CHECK_STR(get("", "sys/kernel/mm/ksm/run"), before_ksm);
    json_decref(ctx.changes);
    json_decref(levels);
    hv_journal_close(j);
}

/* halt_poll_ns is read-only on some kernels and the KVM vendor modules
 * may be absent: both fail, naming what is missing, and change nothing. */
static void test_live_kvm(void)
{
    char err[8192];
    struct hv_journal *j = journal("journal7", 8);
    struct hv_act_ctx ctx = {.root = "/", .plan_id = 8, .journal = j};
    struct stat st;
    const char *hp = "/sys/module/kvm/parameters/halt_poll_ns";
    json_t *levels = check_json("{\"halt_poll_ns\": 100000}"), *settings;
    int rc = hv_actuators_apply(levels, &ctx, &settings, err, sizeof err);
    if (stat(hp, &st) != 0) {
        CHECK_MSG(rc == -1 && strstr(err, "halt_poll_ns=100000: cannot read") != NULL, "%s", err);
        printf("live: halt_poll_ns: %s\n", err);
    } else if ((st.st_mode & 0222) == 0) {
        CHECK_MSG(rc == -1 && strstr(err, "cannot open /sys/module/kvm/parameters/halt_poll_ns "
                                          "for writing: Permission denied") != NULL,
                  "%s", err);
        printf("live: halt_poll_ns: %s\n", err);
    } else {
        CHECK_MSG(rc == 0, "%s", err);
    }
    json_decref(settings);
    CHECK(hv_actuators_restore(&ctx, err, sizeof err) == 0);
    CHECK(hv_journal_count(j) == 0);
    json_decref(levels);
    const char *params[][3] = {{"kvm_ept", "kvm_intel", "ept"}, {"kvm_npt", "kvm_amd", "npt"}};
    for (size_t i = 0; i < 2; i++) {
        char path[128];
        snprintf(path, sizeof path, "/sys/module/%s/parameters/%s", params[i][1], params[i][2]);
        levels = json_pack("{s:s}", params[i][0], "off");
        rc = hv_actuators_apply(levels, &ctx, &settings, err, sizeof err);
        if (access(path, F_OK) != 0) {
            CHECK_MSG(rc == -1 && strstr(err, "does not exist") && strstr(err, path + 1), "%s",
                      err);
        } else {
            const char *v = setting(settings, params[i][0], "read_back");
            CHECK_MSG(rc == (strcmp(v, "off") == 0 ? 0 : -1), "%s", err);
        }
        printf("live: %s=off: %s\n", params[i][0], rc == 0 ? "already off" : err);
        json_decref(settings);
        json_decref(levels);
    }
    CHECK(hv_journal_count(j) == 0);
    hv_journal_close(j);
}

/* A loop device's scheduler and read-ahead, found from its /dev path. */
static void test_live_loop(void)
{
    char img[400], dev[64] = "", err[8192];
    snprintf(img, sizeof img, "%s/loop.img", top);
    int fd = open(img, O_CREAT | O_WRONLY, 0600);
    CHECK(fd >= 0 && ftruncate(fd, 64 << 20) == 0);
    close(fd);
    CHECK(run_read((const char *const[]){"losetup", "--find", "--show", img, NULL}, dev,
                   sizeof dev) == 0);
    CHECK_MSG(strncmp(dev, "/dev/loop", 9) == 0, "losetup gave \"%s\"", dev);
    if (strncmp(dev, "/dev/loop", 9) != 0)
        return;
    char sched_rel[128], ra_rel[128], sched[256], ra[64];
    snprintf(sched_rel, sizeof sched_rel, "sys/block/%s/queue/scheduler", dev + 5);
    snprintf(ra_rel, sizeof ra_rel, "sys/block/%s/queue/read_ahead_kb", dev + 5);
    snprintf(sched, sizeof sched, "%s", get("", sched_rel));
    snprintf(ra, sizeof ra, "%s", get("", ra_rel));
    const char *want = strstr(sched, "[none]") != NULL ? "mq-deadline" : "none";
    struct hv_journal *j = journal("journal8", 9);
    struct hv_act_ctx ctx = {.root = "/", .disk = dev, .plan_id = 9, .journal = j};
    json_t *levels = json_pack("{s:s, s:i}", "io_scheduler", want, "readahead_kb",
                               atoi(ra) == 512 ? 1024 : 512),
           *settings;
    CHECK_MSG(hv_actuators_apply(levels, &ctx, &settings, err, sizeof err) == 0, "%s", err);
    char bracket[40];
    snprintf(bracket, sizeof bracket, "[%s]", want);
    CHECK(strstr(get("", sched_rel), bracket) != NULL);
    CHECK_STR(setting(settings, "io_scheduler", "read_back"), want);
    printf("live: %s scheduler \"%.*s\" -> %s, read_ahead_kb %.*s -> %s\n", dev,
           (int)strcspn(sched, "\n"), sched, setting(settings, "io_scheduler", "read_back"),
           (int)strcspn(ra, "\n"), ra, setting(settings, "readahead_kb", "read_back"));
    json_decref(settings);
    CHECK_MSG(hv_actuators_restore(&ctx, err, sizeof err) == 0, "%s", err);
    CHECK_STR(get("", sched_rel), sched);
    CHECK_STR(get("", ra_rel), ra);
    json_decref(ctx.changes);
    json_decref(levels);
    hv_journal_close(j);
    CHECK(run((const char *const[]){"losetup", "-d", dev, NULL}, false) == 0);
}

/* A NIC made for the test: dummy when the kernel has it, else a veth
 * pair. Never the machine's own. */
static void test_live_mtu(void)
{
    char nic[16], peer[16], path[64], err[8192];
    snprintf(nic, sizeof nic, "hvt%d", (int)getpid() % 100000);
    snprintf(peer, sizeof peer, "hvp%d", (int)getpid() % 100000);
    bool made =
        run((const char *const[]){"ip", "link", "add", nic, "type", "dummy", NULL}, true) == 0;
    if (!made)
        made = run((const char *const[]){"ip", "link", "add", nic, "type", "veth", "peer", "name",
                                         peer, NULL},
                   false) == 0;
    CHECK_MSG(made, "cannot create a test NIC (dummy or veth)");
    if (!made)
        return;
    snprintf(path, sizeof path, "sys/class/net/%s/mtu", nic);
    CHECK_STR(get("", path), "1500\n");
    struct hv_journal *j = journal("journal9", 10);
    struct hv_act_ctx ctx = {.root = "/", .nic = nic, .plan_id = 10, .journal = j};
    json_t *levels = check_json("{\"nic_mtu\": 9000}"), *settings;
    CHECK_MSG(hv_actuators_apply(levels, &ctx, &settings, err, sizeof err) == 0, "%s", err);
    CHECK_STR(get("", path), "9000\n"); /* the kernel's own view */
    CHECK_STR(setting(settings, "nic_mtu", "read_back"), "9000");
    json_decref(settings);
    json_decref(ctx.changes);
    ctx.changes = NULL;
    hv_journal_close(j);
    j = journal("journal9", 10); /* a restart in between */
    ctx.journal = j;
    CHECK_MSG(hv_actuators_restore(&ctx, err, sizeof err) == 0, "%s", err);
    CHECK_STR(get("", path), "1500\n");
    json_decref(ctx.changes);
    json_decref(levels);
    hv_journal_close(j);
    CHECK(run((const char *const[]){"ip", "link", "del", nic, NULL}, false) == 0);
}

/* ---- hvbench-worker itself ------------------------------------------ */

/* Leaves a journal of plan 12 in state/NAME/journal for tree, as a worker
 * that died mid-plan would. */
static void leave_journal(const char *state, const char *root)
{
    char dir[600], err[4096];
    snprintf(dir, sizeof dir, "%s/hvt-host/journal", state);
    make_parents(dir);
    mkdir(dir, 0700);
    struct hv_journal *j = hv_journal_open(dir, 12, err, sizeof err);
    struct hv_act_ctx ctx = {.root = root, .disk = "sdz", .plan_id = 12, .journal = j};
    json_t *l = check_json("{\"thp\": \"never\", \"readahead_kb\": 512}"), *settings;
    CHECK_MSG(hv_actuators_apply(l, &ctx, &settings, err, sizeof err) == 0, "%s", err);
    CHECK(hv_journal_count(j) == 2);
    json_decref(settings);
    json_decref(ctx.changes);
    json_decref(l);
    hv_journal_close(j);
}

static void test_worker_restore(void)
{
    char root[400], state[400], worker[400];
    const char *build = getenv("BUILD");
    snprintf(worker, sizeof worker, "%s/bin/hvbench-worker", build != NULL ? build : "build");
    make_tree(root, sizeof root, "tree6");
    snprintf(state, sizeof state, "%s/state", top);
    leave_journal(state, root);
    const char *const restore[] = {worker, "--restore",    "--name", "hvt-host", "--state-dir",
                                   state,  "--sysfs-root", root,     NULL};
    CHECK(run(restore, true) == 0);
    CHECK(tree_is_original(root));
    CHECK(run(restore, true) == 0); /* nothing left: still 0 */

    /* A journal it cannot read stays, and the exit status says so. */
    char bad[700];
    snprintf(bad, sizeof bad, "%s/hvt-host/journal/13.json", state);
    FILE *f = fopen(bad, "w");
    fputs("{\"plan_id\": 13, \"entries\": [", f);
    fclose(f);
    CHECK(run(restore, true) == 1);
    CHECK(access(bad, F_OK) == 0);
    unlink(bad);

    /* A worker that starts with a journal restores it before its first
     * claim, even while the server is unreachable. */
    leave_journal(state, root);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 2);
        execl(worker, worker, "--server", "http://127.0.0.1:9", "--token", "t", "--name",
              "hvt-host", "--state-dir", state, "--sysfs-root", root, (char *)NULL);
        _exit(127);
    }
    char journal_file[700];
    snprintf(journal_file, sizeof journal_file, "%s/hvt-host/journal/12.json", state);
    for (int i = 0; i < 200 && access(journal_file, F_OK) == 0; i++)
        nanosleep(&(struct timespec){.tv_nsec = 50000000}, NULL);
    CHECK(access(journal_file, F_OK) != 0);
    CHECK(tree_is_original(root));
    kill(pid, SIGTERM);
    int st;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* The host settings a host worker reports: every catalogue host setting
 * the tree lets it read, through the rows' read-back; the disk's only
 * when a disk is named; nothing written. */
static void test_host_settings(void)
{
    char root[400];
    make_tree(root, sizeof root, "tree-settings");
    struct hv_act_ctx ctx = {.root = root};
    json_t *s = hv_actuators_host_settings(&ctx);
    char *text = json_dumps(s, JSON_SORT_KEYS | JSON_COMPACT);
    CHECK_STR(text, "{\"halt_poll_ns\":\"200000\",\"ksm\":\"off\",\"kvm_ept\":\"on\","
                    "\"thp\":\"madvise\"}");
    free(text);
    json_decref(s);
    ctx.disk = "sdz1";
    s = hv_actuators_host_settings(&ctx);
    CHECK_STR(json_string_value(json_object_get(s, "io_scheduler")), "mq-deadline");
    CHECK_STR(json_string_value(json_object_get(s, "readahead_kb")), "128");
    json_decref(s);
    hv_act_ctx_release(&ctx);
    CHECK(tree_is_original(root));
}

int main(void)
{
    snprintf(top, sizeof top, "/tmp/hv-actuators-XXXXXX");
    if (mkdtemp(top) == NULL)
        return 99;
    test_table();
    test_tree_apply_restore();
    test_tree_crash();
    test_tree_failures();
    test_read_back_only();
    test_step();
    test_process_pin();
    test_live_global();
    test_live_kvm();
    test_live_loop();
    test_live_mtu();
    test_worker_restore();
    test_host_settings();
    rm_tree(top);
    return check_summary("test_actuators");
}
