/* test_tools.c — the engines that run external tools and site benchmarks.
 *
 * The process runner (worker/engines/run.c): output captured and capped,
 * exit status and signals reported, a timeout and the stop flag kill the
 * whole process group (also a child that ignores SIGTERM, and with SIGTERM
 * blocked in the calling thread as in the worker's engine threads), a
 * missing program named clearly.
 *
 * The worker's configuration file (worker/config.c): a valid file loads
 * and is published without its argv; every kind of mistake is refused
 * with the JSON Pointer of the member.
 *
 * The site benchmarks (worker/engines/custom.c) run
 * tests/fixtures/site/bench.sh and read its value by JSON Pointer and by
 * regular expression; unknown names, the wrong kind, a failing script and
 * output without the value fail with their reason.
 *
 * The tool adapters (worker/engines/tools.c), each run for real on a tiny
 * workload: fio on a small file, sysbench cpu and memory, stress-ng,
 * bonnie++, iperf3 and iperf 2 over loopback through prepare/run with a
 * hand-made endpoints array. Metric names are asserted, values only as
 * plausible (positive, finite), never against a speed. Every result says
 * something about steady state: the tools that report per-interval
 * figures give samples, the warm-up they were told and the verdict over
 * the samples; stress-ng, bonnie++ and site benchmarks say why not. A tool that is
 * missing, crashes or prints garbage (fake tools put first in PATH) fails
 * the job with its reason.
 *
 * Files go to a private directory under $BUILD/tmp (build/tmp), else
 * /var/tmp. The tools are Debian packages deploy/deps.sh installs; a tool
 * that is missing here fails its checks (CI installs them). */
#include "check.h"
#include "stopper.h"
#include "worker/config.h"
#include "worker/engines/custom.h"
#include "worker/engines/engine.h"
#include "worker/engines/run.h"
#include "worker/engines/tools.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* CHECK, and the given explanation when it fails. */
#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        bool ok_ = (cond);                                                                         \
        CHECK(ok_);                                                                                \
        if (!ok_) {                                                                                \
            fprintf(stderr, "    ");                                                               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
        }                                                                                          \
    } while (0)

static char tmp[PATH_MAX];     /* this test's private directory */
static char scratch[PATH_MAX]; /* the engines' scratch directory */
static char bench[PATH_MAX];   /* tests/fixtures/site/bench.sh, resolved */

/* ---------------------------------------------------------------------
 * Helpers. */

static bool contains(const char *s, const char *part)
{
    return s != NULL && strstr(s, part) != NULL;
}

static const json_t *metric(const struct hv_engine_result *r, const char *name)
{
    size_t i;
    json_t *m;
    json_array_foreach(r->metrics, i, m)
    {
        const char *n = json_string_value(json_object_get(m, "name"));
        if (n != NULL && strcmp(n, name) == 0)
            return m;
    }
    return NULL;
}

static double metric_value(const struct hv_engine_result *r, const char *name)
{
    const json_t *m = metric(r, name);
    return m ? json_number_value(json_object_get(m, "value")) : NAN;
}

static const char *observed_str(const struct hv_engine_result *r, const char *key)
{
    return json_string_value(json_object_get(r->observed, key));
}

static const char *observed_argv0(const struct hv_engine_result *r)
{
    return json_string_value(json_array_get(json_object_get(r->observed, "argv"), 0));
}

/* Files in dir whose name starts with prefix. */
static int count_files(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d != NULL)
        closedir(d);
    return n;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
    chmod(path, mode);
}

/* Runs engine (kind, name) with params given as JSON text; *r is
 * initialised here. Returns the engine's status. */
static int run_engine(const char *kind, const char *name, const char *params_json,
                      struct hv_engine_result *r)
{
    const struct hv_engine *e = hv_engine_find(kind, name);
    hv_engine_result_init(r);
    if (e == NULL) {
        snprintf(r->error, sizeof r->error, "no engine %s/%s", kind, name);
        return -1;
    }
    json_t *params = json_loads(params_json, 0, NULL);
    volatile sig_atomic_t stop = 0;
    struct hv_engine_ctx ctx = {.params = params, .stop = &stop};
    int rc = e->run(e, &ctx, r);
    json_decref(params);
    if (rc == 0 && e->def->metrics != NULL) {
        /* A primary metric of lib's description, when the tool measured
         * it, is the headline (bonnie++ cannot time a small file's writes:
         * then it reports none). */
        size_t first = SIZE_MAX;
        for (size_t i = 0; first == SIZE_MAX && i < json_array_size(r->metrics); i++) {
            const char *m =
                json_string_value(json_object_get(json_array_get(r->metrics, i), "name"));
            for (const char *const *p = e->def->metrics; m != NULL && *p != NULL; p++)
                if (strcmp(*p, m) == 0)
                    first = i;
        }
        EXPECT(first == 0 || first == SIZE_MAX, "%s/%s: primary metric at index %zu, not first",
               kind, name, first);
    }
    return rc;
}

/* Whether process pid has ended: it no longer exists, or it is a zombie
 * its new parent (init here) has not reaped yet. Waits up to a second for
 * the kernel to deliver the SIGKILL. */
static bool gone(long pid)
{
    for (int i = 0; i < 100; i++) {
        char path[64], line[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            return true;
        char *ok = fgets(line, sizeof line, f);
        fclose(f);
        const char *paren = ok ? strrchr(line, ')') : NULL;
        if (paren != NULL && (paren[2] == 'Z' || paren[2] == 'X'))
            return true;
        usleep(10 * 1000);
    }
    return false;
}

/* ---------------------------------------------------------------------
 * The runner. */

static void test_runner(void)
{
    printf("# runner\n");
    struct hv_run_result r;
    char err[512];

    /* Output and a clean exit. */
    const char *echo[] = {"echo", "hello", "world", NULL};
    struct hv_run_spec spec = {.argv = echo, .timeout = 10};
    CHECK(hv_run(&spec, NULL, &r, err, sizeof err) == 0);
    CHECK_STR(r.out, "hello world\n");
    CHECK(r.out_len == 12 && r.out_total == 12 && !r.out_truncated);
    CHECK(hv_run_ok(&r));
    CHECK(r.exit_code == 0 && r.signal == 0 && !r.timed_out && !r.stopped);
    EXPECT(r.path[0] == '/' && contains(r.path, "/echo"), "path %s", r.path);
    hv_run_result_clear(&r);

    /* An exit status, with the last line of standard error as the reason. */
    const char *fail[] = {"/bin/sh", "-c",
                          "echo progress; echo first >&2; echo 'disk full' >&2; "
                          "exit 3",
                          NULL};
    spec = (struct hv_run_spec){.argv = fail, .display = "mytool", .timeout = 10};
    CHECK(hv_run(&spec, NULL, &r, err, sizeof err) == 0);
    CHECK(r.exit_code == 3 && !hv_run_ok(&r));
    CHECK_STR(r.out, "progress\n");
    CHECK_STR(r.err, "first\ndisk full\n");
    char why[512];
    hv_run_describe(&r, "mytool", why, sizeof why);
    CHECK_STR(why, "mytool exited with status 3: disk full");
    hv_run_result_clear(&r);

    /* A crash. */
    const char *crash[] = {"/bin/sh", "-c", "kill -SEGV $$", NULL};
    spec = (struct hv_run_spec){.argv = crash, .timeout = 10};
    CHECK(hv_run(&spec, NULL, &r, err, sizeof err) == 0);
    CHECK(r.signal == SIGSEGV && r.exit_code == -1);
    hv_run_describe(&r, "fio", why, sizeof why);
    EXPECT(contains(why, "fio was killed by signal 11 (Segmentation fault)"), "%s", why);
    hv_run_result_clear(&r);

    /* A missing program. */
    const char *missing[] = {"hvbench-no-such-tool", "--version", NULL};
    spec = (struct hv_run_spec){.argv = missing, .display = "fio", .timeout = 10};
    CHECK(hv_run(&spec, NULL, &r, err, sizeof err) == -1);
    CHECK_STR(err, "fio is not installed on this worker (not found in PATH)");
    const char *missing_abs[] = {"/nonexistent/spec2k6_vm.sh", NULL};
    spec = (struct hv_run_spec){.argv = missing_abs, .timeout = 10};
    CHECK(hv_run(&spec, NULL, &r, err, sizeof err) == -1);
    CHECK_STR(err, "/nonexistent/spec2k6_vm.sh: No such file or directory");
    char plain[PATH_MAX + 32];
    snprintf(plain, sizeof plain, "%s/plain.txt", tmp);
    write_file(plain, "not a program\n", 0644);
    const char *not_exec[] = {plain, NULL};
    spec = (struct hv_run_spec){.argv = not_exec, .timeout = 10};
    CHECK(hv_run(&spec, NULL, &r, err, sizeof err) == -1);
    EXPECT(contains(err, "plain.txt: not an executable file"), "%s", err);

    /* The output cap: the rest is read and dropped, the program ends. */
    const char *big[] = {"/bin/sh", "-c", "head -c 100000 /dev/zero | tr '\\0' a", NULL};
    spec = (struct hv_run_spec){.argv = big, .timeout = 10, .out_cap = 1000};
    CHECK(hv_run(&spec, NULL, &r, err, sizeof err) == 0);
    CHECK(hv_run_ok(&r));
    CHECK(r.out_len == 1000 && r.out_total == 100000 && r.out_truncated);
    CHECK(strlen(r.out) == 1000 && r.out[999] == 'a');
    hv_run_result_clear(&r);

    /* A timeout, with SIGTERM blocked in this thread as in an engine
     * thread: the child must not inherit the mask. */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    const char *sleeper[] = {"sleep", "30", NULL};
    spec = (struct hv_run_spec){.argv = sleeper, .display = "sleep", .timeout = 0.3};
    CHECK(hv_run(&spec, NULL, &r, err, sizeof err) == 0);
    CHECK(r.timed_out && !r.stopped && r.signal == SIGTERM);
    hv_run_describe(&r, "sleep", why, sizeof why);
    EXPECT(contains(why, "sleep timed out after"), "%s", why);
    hv_run_result_clear(&r);

    /* A child that ignores SIGTERM gets SIGKILL after the grace period;
     * its own child (in the same group) goes too. */
    char pidfile[PATH_MAX + 32];
    snprintf(pidfile, sizeof pidfile, "%s/grandchild.pid", tmp);
    char script[PATH_MAX + 128];
    snprintf(script, sizeof script, "trap '' TERM; sleep 30 & echo $! > %s; wait", pidfile);
    const char *stubborn[] = {"/bin/sh", "-c", script, NULL};
    spec = (struct hv_run_spec){.argv = stubborn, .timeout = 0.3, .grace = 0.3};
    CHECK(hv_run(&spec, NULL, &r, err, sizeof err) == 0);
    CHECK(r.timed_out && r.signal == SIGKILL);
    hv_run_result_clear(&r);
    FILE *f = fopen(pidfile, "r");
    long gc = 0;
    CHECK(f != NULL && fscanf(f, "%ld", &gc) == 1 && gc > 0);
    if (f != NULL)
        fclose(f);
    EXPECT(gc > 0 && gone(gc), "the grandchild %ld still lives after the group was killed", gc);

    /* The stop flag. */
    volatile sig_atomic_t stop = 0;
    struct check_stopper st = {.stop = &stop, .after = 0.2};
    pthread_t th;
    pthread_create(&th, NULL, check_stop_later, &st);
    spec = (struct hv_run_spec){.argv = sleeper, .display = "sleep", .timeout = 60};
    CHECK(hv_run(&spec, &stop, &r, err, sizeof err) == 0);
    pthread_join(th, NULL);
    CHECK(r.stopped && !r.timed_out && r.signal == SIGTERM);
    hv_run_describe(&r, "sleep", why, sizeof why);
    CHECK_STR(why, "sleep was stopped");
    hv_run_result_clear(&r);
    pthread_sigmask(SIG_SETMASK, &old, NULL);

    /* A helper left holding the pipes does not hold the run: it is killed
     * after the grace period once the program itself has exited. */
    const char *leaver[] = {"/bin/sh", "-c", "sleep 30 & echo started", NULL};
    spec = (struct hv_run_spec){.argv = leaver, .timeout = 20, .grace = 0.3};
    CHECK(hv_run(&spec, NULL, &r, err, sizeof err) == 0);
    CHECK(hv_run_ok(&r) && !r.timed_out);
    CHECK_STR(r.out, "started\n");
    hv_run_result_clear(&r);

    /* The working directory. */
    const char *pwd[] = {"pwd", NULL};
    spec = (struct hv_run_spec){.argv = pwd, .timeout = 10, .cwd = tmp};
    CHECK(hv_run(&spec, NULL, &r, err, sizeof err) == 0);
    char expect[PATH_MAX + 2];
    snprintf(expect, sizeof expect, "%s\n", tmp);
    CHECK_STR(r.out, expect);
    hv_run_result_clear(&r);
}

/* ---------------------------------------------------------------------
 * The configuration file. */

/* Checks that the configuration text is refused with an error at path
 * whose message contains part. */
static void refused(const char *text, const char *path, const char *part)
{
    json_t *doc = json_loads(text, 0, NULL);
    json_t *errors = json_array();
    if (doc == NULL) {
        fprintf(stderr, "bad test JSON: %s\n", text);
        CHECK(doc != NULL);
        return;
    }
    struct hv_conf *c = hv_conf_from_json(doc, errors);
    CHECK(c == NULL);
    hv_conf_free(c);
    bool found = false;
    size_t i;
    json_t *e;
    json_array_foreach(errors, i, e)
    {
        const char *p = json_string_value(json_object_get(e, "path"));
        const char *m = json_string_value(json_object_get(e, "message"));
        found |= p != NULL && strcmp(p, path) == 0 && contains(m, part);
    }
    if (!found) {
        char *dump = json_dumps(errors, 0);
        EXPECT(found, "expected %s: \"%s\"; got %s", path, part, dump);
        free(dump);
    } else {
        CHECK(found);
    }
    json_decref(doc);
    json_decref(errors);
}

/* A configuration declaring the fixture script in four ways. */
static struct hv_conf *site_conf(void)
{
    static char text[16 * PATH_MAX];
    snprintf(text, sizeof text,
             "{\"benchmarks\": {"
             " \"hep-json\": {\"kind\": \"cpu\", \"argv\": [\"%s\", \"json\", \"--copies\", "
             "\"per-vcpu\"], \"timeout\": 60, \"result\": {\"json\": \"/score/value\"}, "
             "\"metric\": \"hepspec06.score\", \"unit\": \"HS06\", \"higher_is_better\": true},"
             " \"hep-text\": {\"kind\": \"cpu\", \"argv\": [\"%s\", \"text\"], \"timeout\": 60, "
             "\"result\": {\"regex\": \"Score: ([0-9.]+)\"}, \"metric\": \"hepspec06.score\", "
             "\"unit\": \"HS06\", \"higher_is_better\": true},"
             " \"run-string\": {\"kind\": \"cpu\", \"argv\": [\"%s\", \"json\"], \"timeout\": 60, "
             "\"result\": {\"json\": \"/runs/0/score\"}, \"metric\": \"site.run0\", "
             "\"unit\": \"HS06\", \"higher_is_better\": true},"
             " \"disk-lat\": {\"kind\": \"disk\", \"argv\": [\"%s\", \"text\"], \"timeout\": 60, "
             "\"result\": {\"regex\": \"Score: [0-9.]+\"}, \"metric\": \"site.disk.lat_ms\", "
             "\"unit\": \"ms\", \"higher_is_better\": false},"
             " \"nomatch\": {\"kind\": \"cpu\", \"argv\": [\"%s\", \"nomatch\"], \"timeout\": 60, "
             "\"result\": {\"regex\": \"Score: ([0-9.]+)\"}, \"metric\": \"x.score\", "
             "\"unit\": \"x\", \"higher_is_better\": true},"
             " \"nojson\": {\"kind\": \"cpu\", \"argv\": [\"%s\", \"text\"], \"timeout\": 60, "
             "\"result\": {\"json\": \"/score\"}, \"metric\": \"x.score\", "
             "\"unit\": \"x\", \"higher_is_better\": true},"
             " \"nomember\": {\"kind\": \"cpu\", \"argv\": [\"%s\", \"json\"], \"timeout\": 60, "
             "\"result\": {\"json\": \"/score/missing\"}, \"metric\": \"x.score\", "
             "\"unit\": \"x\", \"higher_is_better\": true},"
             " \"failing\": {\"kind\": \"cpu\", \"argv\": [\"%s\", \"fail\"], \"timeout\": 60, "
             "\"result\": {\"json\": \"/score\"}, \"metric\": \"x.score\", "
             "\"unit\": \"x\", \"higher_is_better\": true},"
             " \"slow\": {\"kind\": \"cpu\", \"argv\": [\"%s\", \"sleep\"], \"timeout\": 1, "
             "\"result\": {\"json\": \"/score\"}, \"metric\": \"x.score\", "
             "\"unit\": \"x\", \"higher_is_better\": true}"
             "}}",
             bench, bench, bench, bench, bench, bench, bench, bench, bench);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/worker.json", tmp);
    write_file(path, text, 0644);
    char err[4096];
    struct hv_conf *c = hv_conf_load(path, err, sizeof err);
    EXPECT(c != NULL, "the site configuration does not load: %s", err);
    return c;
}

static void test_config(void)
{
    printf("# configuration file\n");
    struct hv_conf *c = site_conf();
    if (c == NULL)
        return;
    CHECK(c->n_benchmarks == 9);
    const struct hv_site_bench *b = hv_conf_find(c, "hep-json");
    CHECK(b != NULL && strcmp(b->kind, "cpu") == 0 && b->timeout == 60);
    CHECK(b != NULL && strcmp(b->argv[0], bench) == 0 && strcmp(b->argv[3], "per-vcpu") == 0 &&
          b->argv[4] == NULL);
    CHECK(b != NULL && strcmp(b->json_pointer, "/score/value") == 0);
    CHECK(hv_conf_find(c, "nope") == NULL);
    CHECK(hv_conf_find(NULL, "hep-json") == NULL);

    /* Published without the argv, in name order. */
    json_t *pub = hv_conf_benchmarks_json(c);
    CHECK(json_array_size(pub) == 9);
    json_t *first = json_array_get(pub, 0);
    CHECK_STR(json_string_value(json_object_get(first, "name")), "disk-lat");
    CHECK_STR(json_string_value(json_object_get(first, "kind")), "disk");
    CHECK_STR(json_string_value(json_object_get(first, "metric")), "site.disk.lat_ms");
    CHECK_STR(json_string_value(json_object_get(first, "unit")), "ms");
    CHECK(json_is_false(json_object_get(first, "higher_is_better")));
    CHECK(json_object_size(first) == 5);
    char *dump = json_dumps(pub, 0);
    EXPECT(!contains(dump, "bench.sh") && !contains(dump, "argv"), "published: %s", dump);
    free(dump);
    json_decref(pub);
    hv_conf_free(c);

    json_t *empty = hv_conf_benchmarks_json(NULL);
    CHECK(json_is_array(empty) && json_array_size(empty) == 0);
    json_decref(empty);

    /* Mistakes, each named by its JSON Pointer. */
    char ok_argv[PATH_MAX + 16];
    snprintf(ok_argv, sizeof ok_argv, "[\"%s\"]", bench);
    char t[8192];
#define BENCH(extra_fields)                                                                        \
    (snprintf(t, sizeof t,                                                                         \
              "{\"benchmarks\": {\"b\": {\"kind\": \"cpu\", \"argv\": %s, \"timeout\": 10, "       \
              "\"result\": {\"json\": \"/s\"}, \"metric\": \"b.score\", \"unit\": \"u\", "         \
              "\"higher_is_better\": true%s}}}",                                                   \
              ok_argv, extra_fields),                                                              \
     t)
    refused("{\"benchmark\": {}}", "/benchmark", "is not a known member");
    refused("{\"benchmarks\": []}", "/benchmarks", "");
    refused(BENCH(", \"shell\": \"x\""), "/benchmarks/b/shell", "is not a known member");
    refused("{\"benchmarks\": {\"b\": {\"kind\": \"gpu\"}}}", "/benchmarks/b/kind", "");
    refused("{\"benchmarks\": {\"b\": {\"kind\": \"cpu\"}}}", "/benchmarks/b/argv", "is required");
    refused("{\"benchmarks\": {\"b\": {\"kind\": \"cpu\"}}}", "/benchmarks/b/timeout",
            "is required");
    refused("{\"benchmarks\": {\"Bad/Name\": {}}}", "/benchmarks/Bad~1Name", "benchmark name");
    ok_argv[0] = '\0';
    snprintf(ok_argv, sizeof ok_argv, "[\"spec2k6_vm.sh\", \"--copies\"]");
    refused(BENCH(""), "/benchmarks/b/argv/0", "must be an absolute path");
    snprintf(ok_argv, sizeof ok_argv, "[\"/nonexistent/spec2k6_vm.sh\"]");
    refused(BENCH(""), "/benchmarks/b/argv/0",
            "/nonexistent/spec2k6_vm.sh: No such file or directory");
    snprintf(ok_argv, sizeof ok_argv, "[\"%s/plain.txt\"]", tmp);
    refused(BENCH(""), "/benchmarks/b/argv/0", "is not an executable file");
    snprintf(ok_argv, sizeof ok_argv, "[]");
    refused(BENCH(""), "/benchmarks/b/argv", "at least the program");
    snprintf(ok_argv, sizeof ok_argv, "[\"%s\", 7]", bench);
    refused(BENCH(""), "/benchmarks/b/argv/1", "must be a string");
    snprintf(ok_argv, sizeof ok_argv, "[\"%s\"]", bench);
    refused("{\"benchmarks\": {\"b\": {\"kind\": \"cpu\", \"argv\": [\"/bin/true\"], "
            "\"timeout\": 0, \"result\": {\"json\": \"/s\"}, \"metric\": \"m\", \"unit\": \"u\", "
            "\"higher_is_better\": true}}}",
            "/benchmarks/b/timeout", "");
    refused("{\"benchmarks\": {\"b\": {\"kind\": \"cpu\", \"argv\": [\"/bin/true\"], "
            "\"timeout\": 5, \"result\": {\"json\": \"/s\", \"regex\": \"x\"}, \"metric\": \"m\", "
            "\"unit\": \"u\", \"higher_is_better\": true}}}",
            "/benchmarks/b/result", "exactly one of");
    refused("{\"benchmarks\": {\"b\": {\"kind\": \"cpu\", \"argv\": [\"/bin/true\"], "
            "\"timeout\": 5, \"result\": {}, \"metric\": \"m\", \"unit\": \"u\", "
            "\"higher_is_better\": true}}}",
            "/benchmarks/b/result", "exactly one of");
    refused("{\"benchmarks\": {\"b\": {\"kind\": \"cpu\", \"argv\": [\"/bin/true\"], "
            "\"timeout\": 5, \"result\": {\"regex\": \"Score: ([0-9.]+\"}, \"metric\": \"m\", "
            "\"unit\": \"u\", \"higher_is_better\": true}}}",
            "/benchmarks/b/result/regex", "not a POSIX extended regular expression");
    refused("{\"benchmarks\": {\"b\": {\"kind\": \"cpu\", \"argv\": [\"/bin/true\"], "
            "\"timeout\": 5, \"result\": {\"json\": \"score\"}, \"metric\": \"m\", "
            "\"unit\": \"u\", \"higher_is_better\": true}}}",
            "/benchmarks/b/result/json", "must be a JSON Pointer");
    refused("{\"benchmarks\": {\"b\": {\"kind\": \"cpu\", \"argv\": [\"/bin/true\"], "
            "\"timeout\": 5, \"result\": {\"json\": \"/s\"}, \"metric\": \"Score Total\", "
            "\"unit\": \"u\", \"higher_is_better\": true}}}",
            "/benchmarks/b/metric", "a-z");
    refused("{\"benchmarks\": {\"b\": {\"kind\": \"cpu\", \"argv\": [\"/bin/true\"], "
            "\"timeout\": 5, \"result\": {\"json\": \"/s\"}, \"metric\": \"m\", "
            "\"unit\": \"\", \"higher_is_better\": true}}}",
            "/benchmarks/b/unit", "non-empty");
    refused("{\"benchmarks\": {\"b\": {\"kind\": \"cpu\", \"argv\": [\"/bin/true\"], "
            "\"timeout\": 5, \"result\": {\"json\": \"/s\"}, \"metric\": \"m\", "
            "\"unit\": \"u\", \"higher_is_better\": \"yes\"}}}",
            "/benchmarks/b/higher_is_better", "");
#undef BENCH

    /* The file: syntax errors and duplicate members name the line. */
    char path[PATH_MAX + 32], err[4096];
    snprintf(path, sizeof path, "%s/broken.json", tmp);
    write_file(path, "{\"benchmarks\": {\n  \"a\": 1,\n  \"a\": 2\n}}\n", 0644);
    CHECK(hv_conf_load(path, err, sizeof err) == NULL);
    EXPECT(contains(err, "broken.json: line 3") && contains(err, "duplicate"), "%s", err);
    write_file(path, "{\"benchmarks\": {\"b\": {\"kind\": \"cpu\", \"argv\": [\"rel\"]}}}", 0644);
    CHECK(hv_conf_load(path, err, sizeof err) == NULL);
    EXPECT(contains(err, "broken.json:\n  /benchmarks/b/timeout: is required\n") &&
               contains(err, "\n  /benchmarks/b/higher_is_better: is required"),
           "%s", err);
    snprintf(path, sizeof path, "%s/absent.json", tmp);
    CHECK(hv_conf_load(path, err, sizeof err) == NULL);
    EXPECT(contains(err, "absent.json") && contains(err, "No such file"), "%s", err);
}

/* ---------------------------------------------------------------------
 * Site benchmarks. */

static void check_unassessed(const struct hv_engine_result *r, const char *why);

static void test_custom(void)
{
    printf("# site benchmarks\n");
    struct hv_conf *c = site_conf();
    if (c == NULL)
        return;
    hv_custom_use(c);
    struct hv_engine_result r;

    /* A JSON Pointer into its JSON report. */
    CHECK(run_engine("cpu", "custom", "{\"name\": \"hep-json\"}", &r) == 0);
    EXPECT(r.error[0] == '\0', "%s", r.error);
    CHECK(json_array_size(r.metrics) == 1);
    CHECK_NEAR(metric_value(&r, "hepspec06.score"), 42.5, 1e-9);
    CHECK_STR(json_string_value(json_object_get(metric(&r, "hepspec06.score"), "unit")), "HS06");
    CHECK(json_is_true(json_object_get(metric(&r, "hepspec06.score"), "higher_is_better")));
    CHECK(contains(r.raw, "\"args\": \"--copies per-vcpu\""));
    CHECK_STR(observed_str(&r, "benchmark"), "hep-json");
    check_unassessed(&r, "a site benchmark reports one number");
    CHECK_STR(observed_argv0(&r), bench);
    CHECK(json_array_size(json_object_get(r.observed, "argv")) == 4);
    CHECK(json_integer_value(json_object_get(r.observed, "exit_code")) == 0);
    hv_engine_result_clear(&r);

    /* A number given as a string, inside an array. */
    CHECK(run_engine("cpu", "custom", "{\"name\": \"run-string\"}", &r) == 0);
    CHECK_NEAR(metric_value(&r, "site.run0"), 21.25, 1e-9);
    hv_engine_result_clear(&r);

    /* A regex with a group, and one without (the whole match). */
    CHECK(run_engine("cpu", "custom", "{\"name\": \"hep-text\"}", &r) == 0);
    CHECK_NEAR(metric_value(&r, "hepspec06.score"), 17.25, 1e-9);
    CHECK(contains(r.raw, "Score: 17.25 HS06"));
    hv_engine_result_clear(&r);
    CHECK(run_engine("disk", "custom", "{\"name\": \"disk-lat\"}", &r) == -1);
    EXPECT(contains(r.error, "matched \"Score: 17.25\", which is not a number"), "%s", r.error);
    hv_engine_result_clear(&r);

    /* The plan may not run it as another kind, nor name what is not
     * declared. */
    CHECK(run_engine("cpu", "custom", "{\"name\": \"disk-lat\"}", &r) == -1);
    CHECK_STR(r.error, "the site benchmark \"disk-lat\" is of kind disk, not cpu");
    hv_engine_result_clear(&r);
    CHECK(run_engine("net", "custom", "{\"name\": \"hepspec06\"}", &r) == -1);
    EXPECT(contains(r.error, "this worker has no site benchmark \"hepspec06\"") &&
               contains(r.error, "declared: disk-lat, failing, hep-json"),
           "%s", r.error);
    hv_engine_result_clear(&r);

    /* Output without the value. */
    CHECK(run_engine("cpu", "custom", "{\"name\": \"nomatch\"}", &r) == -1);
    CHECK_STR(r.error, "site benchmark nomatch: its standard output does not match the regex "
                       "\"Score: ([0-9.]+)\"");
    CHECK(contains(r.raw, "no result today"));
    hv_engine_result_clear(&r);
    CHECK(run_engine("cpu", "custom", "{\"name\": \"nojson\"}", &r) == -1);
    EXPECT(contains(r.error, "site benchmark nojson: its standard output is not JSON"), "%s",
           r.error);
    hv_engine_result_clear(&r);
    CHECK(run_engine("cpu", "custom", "{\"name\": \"nomember\"}", &r) == -1);
    CHECK_STR(r.error, "site benchmark nomember: its JSON output has no member at /score/missing");
    hv_engine_result_clear(&r);

    /* A failing script: status and its message; the message kept. */
    CHECK(run_engine("cpu", "custom", "{\"name\": \"failing\"}", &r) == -1);
    CHECK_STR(r.error, "site benchmark failing exited with status 3: licence server unreachable");
    CHECK(contains(r.raw, "licence server unreachable"));
    CHECK(json_array_size(r.metrics) == 0);
    hv_engine_result_clear(&r);

    /* The declared timeout. */
    CHECK(run_engine("cpu", "custom", "{\"name\": \"slow\"}", &r) == -1);
    EXPECT(contains(r.error, "site benchmark slow timed out after"), "%s", r.error);
    hv_engine_result_clear(&r);

    /* Without a configuration file, nothing is declared. */
    hv_custom_use(NULL);
    CHECK(run_engine("cpu", "custom", "{\"name\": \"hep-json\"}", &r) == -1);
    EXPECT(contains(r.error, "declared: none"), "%s", r.error);
    hv_engine_result_clear(&r);
    hv_conf_free(c);
}

/* ---------------------------------------------------------------------
 * The tool adapters. */

/* The samples of metric in r, in order; checks they are well formed and
 * start after 0. */
static size_t samples_of(const struct hv_engine_result *r, const char *metric)
{
    size_t i, n = 0;
    json_t *s;
    double prev = 0;
    json_array_foreach(r->samples, i, s)
    {
        if (strcmp(json_string_value(json_object_get(s, "metric")), metric) != 0)
            continue;
        double t = json_number_value(json_object_get(s, "t"));
        double v = json_number_value(json_object_get(s, "value"));
        EXPECT(t > prev && v >= 0 && isfinite(v), "%s sample %zu: t %g value %g", metric, n, t, v);
        prev = t;
        n++;
    }
    return n;
}

/* observed.steady_state of a tool with samples: the shared verdict over
 * the samples of metric, their count, and the warm-up as given. */
static void check_steady(const struct hv_engine_result *r, const char *metric, double warmup)
{
    const json_t *o = json_object_get(r->observed, "steady_state");
    CHECK(json_is_object(o));
    CHECK(json_is_true(json_object_get(o, "assessed")));
    CHECK_STR(json_string_value(json_object_get(o, "metric")), metric);
    CHECK(json_is_boolean(json_object_get(o, "steady")));
    CHECK(json_integer_value(json_object_get(o, "window")) == 5);
    size_t n = samples_of(r, metric);
    EXPECT(json_integer_value(json_object_get(o, "samples")) == (json_int_t)n,
           "steady_state.samples %lld, %zu samples of %s",
           (long long)json_integer_value(json_object_get(o, "samples")), n, metric);
    /* Fewer samples than the window: no verdict figures, never steady. */
    bool judged = n >= 5;
    CHECK(judged ? json_is_number(json_object_get(o, "range_pct"))
                 : json_is_null(json_object_get(o, "range_pct")));
    CHECK(judged ? json_is_number(json_object_get(o, "slope_pct"))
                 : json_is_null(json_object_get(o, "slope_pct")));
    if (!judged)
        CHECK(json_is_false(json_object_get(o, "steady")));
    CHECK_NEAR(json_number_value(json_object_get(r->observed, "warmup")), warmup, 1e-9);
}

/* observed.steady_state of a tool that reports totals only. */
static void check_unassessed(const struct hv_engine_result *r, const char *why)
{
    const json_t *o = json_object_get(r->observed, "steady_state");
    CHECK(json_is_object(o));
    CHECK(json_is_false(json_object_get(o, "assessed")));
    CHECK(json_is_null(json_object_get(o, "steady")));
    CHECK(json_is_null(json_object_get(o, "range_pct")));
    CHECK(json_is_null(json_object_get(o, "slope_pct")));
    CHECK(json_integer_value(json_object_get(o, "window")) == 5);
    CHECK_STR(json_string_value(json_object_get(o, "why")), why);
    CHECK(json_array_size(r->samples) == 0);
}

static void test_fio(void)
{
    printf("# fio\n");
    struct hv_engine_result r;
    int rc = run_engine("disk", "fio",
                        "{\"rw\": \"write\", \"bs\": \"4k\", \"size\": \"1m\", \"runtime\": 2, "
                        "\"ioengine\": \"psync\", \"direct\": false, \"warmup\": 0.5}",
                        &r);
    EXPECT(rc == 0, "fio: %s", r.error);
    double mbps = metric_value(&r, "disk.seq_write.mbps");
    EXPECT(mbps > 0 && isfinite(mbps), "disk.seq_write.mbps = %g", mbps);
    CHECK(metric_value(&r, "disk.seq_write.iops") > 0);
    CHECK(metric_value(&r, "disk.seq_write.lat_p99_us") > 0);
    CHECK(metric(&r, "disk.seq_write.lat_max_us") != NULL);
    CHECK(metric(&r, "disk.seq_read.mbps") == NULL);
    CHECK(contains(r.raw, "\"fio version\""));
    CHECK_STR(observed_argv0(&r), "fio");
    json_t *argv = json_object_get(r.observed, "argv");
    char *dump = json_dumps(argv, 0);
    EXPECT(contains(dump, "\"--rw=write\"") && contains(dump, "\"--bs=4096\"") &&
               contains(dump, "\"--size=1048576\"") && contains(dump, "\"--runtime=2000ms\"") &&
               contains(dump, "\"--output-format=json\"") && contains(dump, "\"--direct=0\"") &&
               contains(dump, "\"--ramp_time=500ms\"") &&
               contains(dump, "\"--steadystate=iops_slope:10%\"") &&
               contains(dump, "\"--steadystate_duration=2\""),
           "argv %s", dump);
    free(dump);
    /* fio's per-second figures of the 2 s after its ramp. */
    CHECK(samples_of(&r, "disk.seq_write.mbps") == 2);
    CHECK(samples_of(&r, "disk.seq_write.iops") == 2);
    CHECK(json_array_size(r.samples) == 4);
    check_steady(&r, "disk.seq_write.mbps", 0.5);
    const json_t *ss = json_object_get(r.observed, "steady_state");
    CHECK(json_is_boolean(json_object_get(ss, "fio_attained")));
    CHECK_STR(json_string_value(json_object_get(ss, "fio_criterion")), "iops_slope:10.000000%");
    const char *v = observed_str(&r, "tool_version");
    EXPECT(v != NULL && strncmp(v, "fio-", 4) == 0, "tool_version %s", v ? v : "(none)");
    CHECK(contains(observed_str(&r, "tool_path"), "/fio"));
    CHECK_STR(observed_str(&r, "format"), "json");
    hv_engine_result_clear(&r);
    CHECK(count_files(scratch, "hvbench-fio-") == 0);

    /* Only where the worker may write. */
    rc = run_engine("disk", "fio", "{\"rw\": \"read\", \"path\": \"/etc/hostname\"}", &r);
    CHECK(rc == -1);
    EXPECT(contains(r.error, "outside the scratch directory"), "%s", r.error);
    CHECK(json_object_get(r.observed, "argv") == NULL); /* never ran */
    hv_engine_result_clear(&r);
    rc = run_engine("disk", "fio", "{\"rw\": \"read\", \"path\": \"/dev/null\"}", &r);
    CHECK(rc == -1);
    EXPECT(contains(r.error, "neither a regular file nor a block device"), "%s", r.error);
    hv_engine_result_clear(&r);

    /* A path in the scratch directory, and the params checked again. */
    char params[PATH_MAX + 256];
    snprintf(params, sizeof params,
             "{\"rw\": \"randread\", \"bs\": 4096, \"size\": \"256k\", \"runtime\": 1, "
             "\"ioengine\": \"sync\", \"direct\": false, \"path\": \"%s/given.dat\"}",
             scratch);
    rc = run_engine("disk", "fio", params, &r);
    EXPECT(rc == 0, "fio randread: %s", r.error);
    CHECK(metric_value(&r, "disk.rand_read.iops") > 0);
    hv_engine_result_clear(&r);
    CHECK(count_files(scratch, "given.dat") == 0);
    rc = run_engine("disk", "fio", "{\"rw\": \"sideways\"}", &r);
    CHECK(rc == -1);
    EXPECT(contains(r.error, "invalid params: /params/rw"), "%s", r.error);
    hv_engine_result_clear(&r);
}

static void test_sysbench(void)
{
    printf("# sysbench\n");
    struct hv_engine_result r;
    int rc =
        run_engine("cpu", "sysbench",
                   "{\"test\": \"cpu\", \"seconds\": 3, \"max_prime\": 2000, \"warmup\": 1}", &r);
    EXPECT(rc == 0, "sysbench cpu: %s", r.error);
    double eps = metric_value(&r, "cpu.sysbench.events_per_s");
    EXPECT(eps > 0 && isfinite(eps), "cpu.sysbench.events_per_s = %g", eps);
    CHECK(contains(r.raw, "events per second"));
    const char *v = observed_str(&r, "tool_version");
    EXPECT(v != NULL && strncmp(v, "sysbench 1.", 11) == 0, "tool_version %s", v ? v : "(none)");
    char *dump = json_dumps(json_object_get(r.observed, "argv"), 0);
    EXPECT(contains(dump, "[\"sysbench\", \"cpu\", \"--threads=1\", \"--time=4\", "
                          "\"--report-checkpoints=1\", \"--report-interval=1\", "
                          "\"--cpu-max-prime=2000\", \"run\"]"),
           "argv %s", dump);
    free(dump);
    /* The checkpoint at 1 s ended the warm-up; the interval lines after it
     * are the samples (sysbench may skip the last one). */
    CHECK(json_integer_value(json_object_get(r.observed, "checkpoints")) == 1);
    size_t n = samples_of(&r, "cpu.sysbench.events_per_s");
    EXPECT(n >= 2 && n <= 3, "%zu samples", n);
    CHECK(json_array_size(r.samples) == n);
    check_steady(&r, "cpu.sysbench.events_per_s", 1);
    hv_engine_result_clear(&r);

    rc = run_engine("cpu", "sysbench",
                    "{\"test\": \"memory\", \"seconds\": 2, \"threads\": 2, \"warmup\": 0}", &r);
    EXPECT(rc == 0, "sysbench memory: %s", r.error);
    CHECK(metric_value(&r, "mem.sysbench.mbps") > 0);
    CHECK(metric_value(&r, "mem.sysbench.ops_per_s") > 0);
    dump = json_dumps(json_object_get(r.observed, "argv"), 0);
    EXPECT(!contains(dump, "--report-checkpoints") && contains(dump, "\"--time=2\""), "argv %s",
           dump);
    free(dump);
    CHECK(json_object_get(r.observed, "checkpoints") == NULL);
    n = samples_of(&r, "mem.sysbench.mbps");
    EXPECT(n >= 1 && n <= 2, "%zu samples", n);
    check_steady(&r, "mem.sysbench.mbps", 0);
    hv_engine_result_clear(&r);
}

static void test_stress_ng(void)
{
    printf("# stress-ng\n");
    struct hv_engine_result r;
    int rc = run_engine("cpu", "stress-ng",
                        "{\"stressor\": \"cpu\", \"workers\": 1, \"seconds\": 1}", &r);
    EXPECT(rc == 0, "stress-ng: %s", r.error);
    double ops = metric_value(&r, "cpu.stressng.cpu.bogo_ops_per_s");
    EXPECT(ops > 0 && isfinite(ops), "cpu.stressng.cpu.bogo_ops_per_s = %g", ops);
    CHECK(metric_value(&r, "cpu.stressng.cpu.bogo_ops_per_cpu_s") > 0);
    CHECK(contains(r.raw, "metrics:"));
    CHECK_STR(observed_str(&r, "format"), "yaml");
    const char *v = observed_str(&r, "tool_version");
    EXPECT(contains(v, "stress-ng") && contains(v, "version"), "tool_version %s", v ? v : "(none)");
    check_unassessed(&r, "stress-ng reports only totals");
    hv_engine_result_clear(&r);
    CHECK(count_files(scratch, "hvbench-stress-ng-") == 0);
}

static void test_bonnie(void)
{
    printf("# bonnie++\n");
    struct hv_engine_result r;
    int rc = run_engine("disk", "bonnie", "{\"size\": \"16m\", \"ram_mb\": 8, \"fast\": true}", &r);
    EXPECT(rc == 0, "bonnie++: %s", r.error);
    /* A file this small is written and read too fast for bonnie++ to time
     * ("+++++": no throughput metric); its latencies are always there. */
    double lat = metric_value(&r, "disk.seq_write.lat_max_us");
    EXPECT(lat > 0 && isfinite(lat), "disk.seq_write.lat_max_us = %g", lat);
    CHECK(metric_value(&r, "disk.seq_read.lat_max_us") > 0);
    CHECK(metric_value(&r, "disk.file_seq_create.lat_max_us") > 0);
    CHECK(metric(&r, "disk.seq_write_char.mbps") == NULL); /* -f */
    CHECK(metric(&r, "disk.seq_write_char.lat_max_us") == NULL);
    CHECK(r.raw != NULL && strncmp(r.raw, "1.9", 3) == 0);
    check_unassessed(&r, "bonnie++ reports only totals");
    char *dump = json_dumps(json_object_get(r.observed, "argv"), 0);
    EXPECT(contains(dump, "\"-s\", \"16\", \"-r\", \"8\", \"-f\"") && contains(dump, scratch),
           "argv %s", dump);
    free(dump);
    hv_engine_result_clear(&r);
    CHECK(count_files(scratch, "Bonnie.") == 0);

    /* bonnie++'s own refusal comes through as the reason. */
    rc = run_engine("disk", "bonnie", "{\"size\": \"4m\"}", &r);
    CHECK(rc == -1);
    EXPECT(contains(r.error, "bonnie++ exited with status 1"), "%s", r.error);
    hv_engine_result_clear(&r);
}

/* A net tool's two ends over loopback: prepare the server, run it in a
 * thread, run the client against the endpoint it announced. */
struct side {
    const struct hv_engine *e;
    struct hv_engine_ctx ctx;
    struct hv_engine_result r;
    int rc;
};

static void *run_side(void *arg)
{
    struct side *s = arg;
    s->rc = s->e->run(s->e, &s->ctx, &s->r);
    return NULL;
}

/* What each net tool adds about its warm-up and samples. */
typedef void (*net_check_fn)(const struct hv_engine_result *client,
                             const struct hv_engine_result *server);

/* iperf3 --omit 1 -t 5: its own warm-up, five intervals on either side. */
static void check_iperf3_steady(const struct hv_engine_result *client,
                                const struct hv_engine_result *server)
{
    char *dump = json_dumps(json_object_get(client->observed, "argv"), 0);
    EXPECT(contains(dump, "\"--omit\", \"1\"") && contains(dump, "\"-t\", \"5\""), "argv %s", dump);
    free(dump);
    CHECK(json_integer_value(json_object_get(client->observed, "omitted_intervals")) == 1);
    CHECK(json_integer_value(json_object_get(server->observed, "omitted_intervals")) == 1);
    EXPECT(samples_of(client, "net.tcp.gbps") == 5, "client: %zu samples",
           samples_of(client, "net.tcp.gbps"));
    EXPECT(samples_of(server, "net.tcp.gbps") == 5, "server: %zu samples",
           samples_of(server, "net.tcp.gbps"));
    check_steady(client, "net.tcp.gbps", 1);
    check_steady(server, "net.tcp.gbps", 1);
}

/* iperf 2 -t 1+2 -i 1: the first second's lines dropped here. */
static void check_iperf_steady(const struct hv_engine_result *client,
                               const struct hv_engine_result *server)
{
    char *dump = json_dumps(json_object_get(client->observed, "argv"), 0);
    EXPECT(contains(dump, "\"-t\", \"3\"") && contains(dump, "\"-i\", \"1\""), "argv %s", dump);
    free(dump);
    const struct hv_engine_result *sides[2] = {client, server};
    for (int k = 0; k < 2; k++) {
        const struct hv_engine_result *r = sides[k];
        EXPECT(samples_of(r, "net.tcp.gbps") == 2, "%s: %zu samples", k ? "server" : "client",
               samples_of(r, "net.tcp.gbps"));
        /* Counted from the end of the warm-up: 1 and 2. */
        CHECK_NEAR(json_number_value(json_object_get(json_array_get(r->samples, 0), "t")), 1, 1e-9);
        check_steady(r, "net.tcp.gbps", 1);
        const json_t *after = json_object_get(r->observed, "after_warmup");
        CHECK(json_integer_value(json_object_get(after, "intervals")) == 2);
        double mean = (json_number_value(json_object_get(json_array_get(r->samples, 0), "value")) +
                       json_number_value(json_object_get(json_array_get(r->samples, 1), "value"))) /
                      2;
        CHECK_NEAR(json_number_value(json_object_get(after, "mean")), mean, 1e-9 * mean);
        CHECK(contains(observed_str(r, "headline"), "warm-up included"));
    }
}

static void test_net(const char *engine, const char *params_json, const char *client_metric,
                     net_check_fn extra)
{
    printf("# %s over loopback\n", engine);
    const struct hv_engine *e = hv_engine_find("net", engine);
    CHECK(e != NULL && e->prepare != NULL && e->unprepare != NULL);
    if (e == NULL)
        return;
    json_t *params = json_loads(params_json, 0, NULL);
    volatile sig_atomic_t stop_s = 0, stop_c = 0;
    struct side server = {
        .e = e, .ctx = {.params = params, .stop = &stop_s, .role = "server", .peer = "here"}};
    hv_engine_result_init(&server.r);
    struct hv_endpoint ep = {.host = ""};
    int rc = e->prepare(e, &server.ctx, &ep, &server.r);
    EXPECT(rc == 0, "%s prepare: %s", engine, server.r.error);
    if (rc != 0) {
        hv_engine_result_clear(&server.r);
        json_decref(params);
        return;
    }
    CHECK(ep.port > 0 && ep.port < 65536 && ep.host[0] == '\0');
    CHECK(server.ctx.prepared != NULL);
    pthread_t th;
    pthread_create(&th, NULL, run_side, &server);

    json_t *eps = json_pack("[{s:i, s:s, s:s, s:s, s:i}]", "job_id", 1, "role", "server", "target",
                            "here", "host", "127.0.0.1", "port", ep.port);
    struct side client = {
        .e = e,
        .ctx = {
            .params = params, .stop = &stop_c, .role = "client", .peer = "here", .endpoints = eps}};
    hv_engine_result_init(&client.r);
    client.rc = e->run(e, &client.ctx, &client.r);
    pthread_join(th, NULL);

    EXPECT(client.rc == 0, "%s client: %s", engine, client.r.error);
    double v = metric_value(&client.r, client_metric);
    EXPECT(v > 0 && isfinite(v), "%s client %s = %g", engine, client_metric, v);
    CHECK(client.r.raw != NULL && client.r.raw[0] != '\0');
    char *dump = json_dumps(json_object_get(client.r.observed, "argv"), 0);
    char want[64];
    snprintf(want, sizeof want, "\"%d\"", ep.port);
    EXPECT(contains(dump, "\"-c\", \"127.0.0.1\"") && contains(dump, want), "argv %s", dump);
    free(dump);
    CHECK(observed_str(&client.r, "tool_version") != NULL);

    EXPECT(server.rc == 0, "%s server: %s", engine, server.r.error);
    CHECK(metric_value(&server.r, client_metric) > 0);
    CHECK(json_integer_value(json_object_get(server.r.observed, "port")) == ep.port);
    CHECK(server.r.raw != NULL && server.r.raw[0] != '\0');
    if (client.rc == 0 && server.rc == 0)
        extra(&client.r, &server.r);

    hv_engine_result_clear(&client.r);
    hv_engine_result_clear(&server.r);

    /* Prepared and never run: unprepare ends the server. */
    struct hv_engine_ctx ctx = {.params = params, .stop = &stop_s, .role = "server"};
    struct hv_engine_result r;
    hv_engine_result_init(&r);
    ep = (struct hv_endpoint){.host = ""};
    CHECK(e->prepare(e, &ctx, &ep, &r) == 0);
    CHECK(ctx.prepared != NULL);
    e->unprepare(e, &ctx);
    CHECK(ctx.prepared == NULL);
    hv_engine_result_clear(&r);

    /* A client without a server endpoint. */
    struct hv_engine_ctx lonely = {.params = params, .stop = &stop_c, .role = "client"};
    hv_engine_result_init(&r);
    CHECK(e->run(e, &lonely, &r) == -1);
    EXPECT(contains(r.error, "no usable server endpoint"), "%s", r.error);
    hv_engine_result_clear(&r);

    /* The server stopped while it waits for a client. */
    hv_engine_result_init(&server.r);
    server.ctx = (struct hv_engine_ctx){.params = params, .stop = &stop_s, .role = "server"};
    stop_s = 0;
    CHECK(e->prepare(e, &server.ctx, &ep, &server.r) == 0);
    pthread_create(&th, NULL, run_side, &server);
    usleep(200 * 1000);
    __atomic_store_n(&stop_s, 1, __ATOMIC_RELAXED);
    pthread_join(th, NULL);
    CHECK(server.rc == -1);
    EXPECT(contains(server.r.error, "was stopped"), "%s", server.r.error);
    hv_engine_result_clear(&server.r);

    json_decref(eps);
    json_decref(params);
}

/* Fake tools first in PATH: missing, crashing, printing garbage. */
static void test_broken_tools(void)
{
    printf("# missing, crashing and garbage-printing tools\n");
    char bin[PATH_MAX + 16], path[PATH_MAX + 32];
    snprintf(bin, sizeof bin, "%s/bin", tmp);
    mkdir(bin, 0755);
    snprintf(path, sizeof path, "%s/sysbench", bin);
    write_file(path, "#!/bin/sh\necho 'this is not sysbench'\nexit 0\n", 0755);
    snprintf(path, sizeof path, "%s/fio", bin);
    write_file(path,
               "#!/bin/sh\n[ \"$1\" = --version ] && { echo fio-9.99; exit 0; }\n"
               "kill -SEGV $$\n",
               0755);
    snprintf(path, sizeof path, "%s/stress-ng", bin);
    write_file(path, "#!/bin/sh\necho 'stress-ng: error: no such stressor' >&2\nexit 1\n", 0755);
    char *old = strdup(getenv("PATH"));
    setenv("PATH", bin, 1);
    struct hv_engine_result r;

    CHECK(run_engine("cpu", "sysbench", "{\"seconds\": 1}", &r) == -1);
    EXPECT(contains(r.error, "cannot read the output of sysbench: sysbench:"), "%s", r.error);
    CHECK(contains(r.raw, "this is not sysbench"));
    CHECK(json_array_size(r.metrics) == 0);
    hv_engine_result_clear(&r);

    CHECK(run_engine("disk", "fio", "{\"rw\": \"read\", \"size\": \"64k\", \"runtime\": 1}", &r) ==
          -1);
    EXPECT(contains(r.error, "fio was killed by signal 11 (Segmentation fault)"), "%s", r.error);
    CHECK_STR(observed_str(&r, "tool_version"), "fio-9.99");
    hv_engine_result_clear(&r);
    CHECK(count_files(scratch, "hvbench-fio-") == 0);

    CHECK(run_engine("cpu", "stress-ng", "{\"seconds\": 1}", &r) == -1);
    CHECK_STR(r.error, "stress-ng exited with status 1: stress-ng: error: no such stressor");
    CHECK(contains(r.raw, "no such stressor"));
    hv_engine_result_clear(&r);

    CHECK(run_engine("disk", "bonnie", "{}", &r) == -1);
    CHECK_STR(r.error, "bonnie++ is not installed on this worker (not found in PATH)");
    hv_engine_result_clear(&r);
    CHECK(run_engine("net", "iperf3", "{\"peer\": \"x\"}", &r) == -1);
    hv_engine_result_clear(&r);
    const struct hv_engine *e = hv_engine_find("net", "iperf");
    struct hv_engine_ctx ctx = {.role = "server"};
    struct hv_endpoint ep = {.host = ""};
    hv_engine_result_init(&r);
    CHECK(e != NULL && e->prepare(e, &ctx, &ep, &r) == -1);
    CHECK_STR(r.error, "iperf is not installed on this worker (not found in PATH)");
    hv_engine_result_clear(&r);

    setenv("PATH", old, 1);
    free(old);
}

/* ---------------------------------------------------------------------
 * Setup. */

static void make_dirs(void)
{
    const char *build = getenv("BUILD");
    char base[PATH_MAX];
    snprintf(base, sizeof base, "%s/tmp", build && build[0] ? build : "build");
    mkdir(base, 0755);
    if ((size_t)snprintf(tmp, sizeof tmp, "%.*s/test_tools.XXXXXX", PATH_MAX - 32, base) >=
        sizeof tmp)
        exit(1);
    if (mkdtemp(tmp) == NULL) {
        snprintf(tmp, sizeof tmp, "/var/tmp/test_tools.XXXXXX");
        if (mkdtemp(tmp) == NULL) {
            perror("mkdtemp");
            exit(1);
        }
    }
    char real[PATH_MAX];
    if (realpath(tmp, real) != NULL)
        snprintf(tmp, sizeof tmp, "%s", real);
    snprintf(scratch, sizeof scratch, "%.*s/scratch", PATH_MAX - 16, tmp);
    mkdir(scratch, 0755);
    setenv("HVBENCH_SCRATCH", scratch, 1);
    if (realpath("tests/fixtures/site/bench.sh", bench) == NULL) {
        perror("tests/fixtures/site/bench.sh (run from the source tree)");
        exit(1);
    }
}

static int remove_tree(const char *dir)
{
    const char *argv[] = {"rm", "-rf", "--", dir, NULL};
    struct hv_run_spec spec = {.argv = argv, .timeout = 60};
    struct hv_run_result r;
    char err[256];
    int rc = hv_run(&spec, NULL, &r, err, sizeof err);
    hv_run_result_clear(&r);
    return rc;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    make_dirs();
    test_runner();
    test_config();
    test_custom();
    test_fio();
    test_sysbench();
    test_stress_ng();
    test_bonnie();
    test_net("iperf3", "{\"peer\": \"here\", \"seconds\": 5, \"streams\": 2, \"warmup\": 1}",
             "net.tcp.gbps", check_iperf3_steady);
    test_net("iperf", "{\"peer\": \"here\", \"seconds\": 2, \"streams\": 2, \"warmup\": 1}",
             "net.tcp.gbps", check_iperf_steady);
    test_broken_tools();
    if (check_failed == 0)
        remove_tree(tmp);
    else
        printf("kept %s\n", tmp);
    return check_summary("test_tools");
}
