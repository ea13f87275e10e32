/* test_cpu.c — the built-in CPU engine: real short runs report the
 * promised metrics, samples and observed values; bad params fail; every
 * kernel's self-check catches corrupted input; stop is honoured; the
 * engine table and the result body are right.
 *
 * No assertion depends on how fast this machine is. */
#include "worker/engines/cpu.h"
#include "worker/engines/engine.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tests/unit/check.h"
#include "tests/unit/stopper.h"

static const char *const expected_metrics[] = {
    "cpu.score",   "cpu.score_per_copy", "cpu.int.rate",
    "cpu.fp.rate", "cpu.mem.rate",       "cpu.branch.rate",
};
#define N_METRICS (sizeof expected_metrics / sizeof expected_metrics[0])

static void count_sample(void *arg, const char *metric, double t, double value)
{
    (void)metric;
    (void)t;
    (void)value;
    (*(int *)arg)++;
}

static double metric_value(const json_t *metrics, const char *name)
{
    size_t i;
    json_t *m;
    json_array_foreach(metrics, i,
                       m) if (strcmp(json_string_value(json_object_get(m, "name")), name) ==
                              0) return json_number_value(json_object_get(m, "value"));
    return -1;
}

/* Runs the engine with params (JSON text); returns its status. */
static int run(const char *params_text, struct hv_engine_result *r, int *callbacks)
{
    json_t *params = json_loads(params_text, 0, NULL);
    struct hv_engine_ctx ctx = {
        .params = params, .on_sample = count_sample, .sample_arg = callbacks};
    hv_engine_result_init(r);
    const struct hv_engine *e = hv_engine_find("cpu", "builtin");
    int rc = e->run(e, &ctx, r);
    json_decref(params);
    return rc;
}

static void test_run(const char *params, long copies, double seconds)
{
    printf("-- run %s\n", params);
    struct hv_engine_result r;
    int callbacks = 0;
    int rc = run(params, &r, &callbacks);
    CHECK_SAY(rc == 0, "returns 0 (error: \"%s\")", r.error);

    CHECK_SAY(json_array_size(r.metrics) == N_METRICS, "%zu metrics", N_METRICS);
    for (size_t i = 0; i < N_METRICS; i++) {
        json_t *m = json_array_get(r.metrics, i);
        const char *name = json_string_value(json_object_get(m, "name"));
        const char *unit = json_string_value(json_object_get(m, "unit"));
        double v = json_number_value(json_object_get(m, "value"));
        const char *want_unit = i < 2 ? "score" : "ops/s";
        CHECK_SAY(name && strcmp(name, expected_metrics[i]) == 0 && unit &&
                      strcmp(unit, want_unit) == 0 &&
                      json_is_true(json_object_get(m, "higher_is_better")) && v > 0,
                  "metric %zu is %s = %.4g %s, higher is better", i, expected_metrics[i], v,
                  want_unit);
    }
    CHECK_SAY(strcmp(json_string_value(json_object_get(json_array_get(r.metrics, 0), "name")),
                     hv_engine_def_cpu_builtin.metrics[0]) == 0,
              "the headline is the primary metric of lib's description (%s)",
              hv_engine_def_cpu_builtin.metrics[0]);
    double score = metric_value(r.metrics, "cpu.score");
    double per_copy = metric_value(r.metrics, "cpu.score_per_copy");
    CHECK_SAY(score > 0, "cpu.score > 0 (%.1f)", score);
    CHECK_SAY(per_copy > 0 && per_copy * (double)copies > score * 0.999999 &&
                  per_copy * (double)copies < score * 1.000001,
              "cpu.score_per_copy x copies == cpu.score");

    json_t *o = r.observed;
    CHECK_SAY(json_integer_value(json_object_get(o, "copies")) == copies, "observed.copies == %ld",
              copies);
    double ran = json_number_value(json_object_get(o, "seconds"));
    CHECK_SAY(ran >= seconds && ran < seconds + 2, "observed.seconds %.3f within [%g, %g)", ran,
              seconds, seconds + 2);
    CHECK_SAY(json_is_boolean(json_object_get(o, "pinned")), "observed.pinned is a boolean");
    json_t *scores = json_object_get(o, "copy_scores");
    double sum = 0;
    size_t i;
    json_t *v;
    json_array_foreach(scores, i, v) sum += json_number_value(v);
    CHECK_SAY(json_array_size(scores) == (size_t)copies && sum > score * 0.999999 &&
                  sum < score * 1.000001,
              "observed.copy_scores has %ld entries summing to cpu.score", copies);
    json_t *kernels = json_object_get(o, "kernels");
    CHECK_SAY(json_array_size(kernels) == hv_cpu_kernel_count(),
              "observed.kernels lists %zu kernels", hv_cpu_kernel_count());
    json_array_foreach(kernels, i, v)
    {
        const char *metric = json_string_value(json_object_get(v, "metric"));
        CHECK_SAY(json_integer_value(json_object_get(v, "iterations")) >= copies &&
                      json_number_value(json_object_get(v, "rate")) ==
                          metric_value(r.metrics, metric ? metric : ""),
                  "kernel %s ran >= once per copy and its rate is %s",
                  json_string_value(json_object_get(v, "name")), metric ? metric : "?");
    }

    size_t n = json_array_size(r.samples);
    CHECK_SAY(n >= 1, "%zu cpu.score sample(s)", n);
    json_array_foreach(r.samples, i, v)
    {
        double t = json_number_value(json_object_get(v, "t"));
        CHECK_SAY(strcmp(json_string_value(json_object_get(v, "metric")), "cpu.score") == 0 &&
                      json_number_value(json_object_get(v, "value")) > 0 &&
                      t >= 1.0 * (double)(i + 1) && t <= ran + 0.001,
                  "sample %zu: cpu.score %.1f at t=%.3f", i,
                  json_number_value(json_object_get(v, "value")), t);
    }
    CHECK_SAY(callbacks == (int)n, "on_sample called once per sample (%d)", callbacks);
    hv_engine_result_clear(&r);
}

static void test_invalid(const char *params, const char *mention)
{
    struct hv_engine_result r;
    int callbacks = 0;
    int rc = run(params, &r, &callbacks);
    CHECK_SAY(rc != 0 && strstr(r.error, mention) != NULL, "params %s fail: \"%s\"", params,
              r.error);
    hv_engine_result_clear(&r);
}

static void test_self_checks(void)
{
    printf("-- kernel self-checks\n");
    for (size_t k = 0; k < hv_cpu_kernel_count(); k++) {
        const char *name = hv_cpu_kernel_name(k);
        char err[256] = "";
        int clean = hv_cpu_kernel_selftest(name, false, 3, err, sizeof err);
        CHECK_SAY(clean == 0, "kernel %s: 3 clean iterations verify (%s)", name, err);
        err[0] = '\0';
        int bad = hv_cpu_kernel_selftest(name, true, 1, err, sizeof err);
        CHECK_SAY(bad == -1 && err[0] != '\0', "kernel %s: corrupted input fails: %s", name, err);
    }
    /* 2^23 nodes in segments of 2^15 hops: 256 iterations are one lap of
     * the cycle, each landing on the next checkpoint; one more starts the
     * next lap where the first began. */
    char lap[256] = "";
    CHECK_SAY(hv_cpu_kernel_selftest("mem", false, 257, lap, sizeof lap) == 0,
              "kernel mem: a whole lap of its 64 MiB cycle verifies (%s)", lap);
    char err[64];
    CHECK_SAY(hv_cpu_kernel_selftest("nope", false, 1, err, sizeof err) == -2,
              "an unknown kernel is refused");
    CHECK_SAY(hv_cpu_kernel_name(hv_cpu_kernel_count()) == NULL, "kernel names end at the count");
}

static void test_stop(void)
{
    printf("-- stop\n");
    volatile sig_atomic_t stop = 1;
    json_t *params = json_pack("{s:i}", "seconds", 30);
    struct hv_engine_ctx ctx = {.params = params, .stop = &stop};
    struct hv_engine_result r;
    hv_engine_result_init(&r);
    double t0 = hv_monotonic();
    const struct hv_engine *e = hv_engine_find("cpu", "builtin");
    int rc = e->run(e, &ctx, &r);
    CHECK_SAY(rc != 0 && strstr(r.error, "stopped") != NULL,
              "stop set before the start: fails with \"%s\"", r.error);
    hv_engine_result_clear(&r);

    stop = 0;
    struct check_stopper s = {&stop, 1.5};
    pthread_t th;
    pthread_create(&th, NULL, check_stop_later, &s);
    hv_engine_result_init(&r);
    t0 = hv_monotonic();
    rc = e->run(e, &ctx, &r);
    double took = hv_monotonic() - t0;
    pthread_join(th, NULL);
    CHECK_SAY(rc != 0 && strstr(r.error, "stopped") != NULL && took < 10,
              "stop after 1.5 s of a 30 s run: ends after %.2f s with \"%s\"", took, r.error);
    hv_engine_result_clear(&r);
    json_decref(params);
}

static void test_table_and_body(void)
{
    printf("-- engine table and result body\n");
    const struct hv_engine *e = hv_engine_find("cpu", "builtin");
    CHECK_SAY(e != NULL && e->run == hv_engine_cpu_run && e->def == &hv_engine_def_cpu_builtin,
              "cpu/builtin is the CPU engine, keyed by its description");
    CHECK_SAY(hv_engine_find("cpu", NULL) == e, "engine NULL means builtin");
    CHECK_SAY(hv_engine_find("gpu", "builtin") == NULL && hv_engine_find("cpu", "fio") == NULL,
              "unknown kind or engine: NULL");

    struct hv_engine_result r;
    hv_engine_result_init(&r);
    hv_engine_add_metric(&r, "cpu.score", 12.5, "score", true);
    CHECK_SAY(hv_engine_add_metric(&r, "bad", NAN, "x", true) != 0, "NaN metric refused");
    hv_engine_emit_sample(NULL, &r, "cpu.score", 1.0, 12.0);
    json_object_set_new(r.observed, "copies", json_integer(1));
    json_t *ok = hv_engine_result_to_json(&r, 3, true, "2026-11-29T18:40:12.500Z",
                                          "2026-11-29T18:40:17.600Z");
    char *text = json_dumps(ok, JSON_SORT_KEYS | JSON_COMPACT);
    const char *want =
        "{\"attempt\":3,\"finished_at\":\"2026-11-29T18:40:17.600Z\",\"metrics\":[{\"higher_is_"
        "better\":true,\"name\":\"cpu.score\",\"unit\":\"score\",\"value\":12.5}],\"observed\":{"
        "\"copies\":1},\"samples\":[{\"metric\":\"cpu.score\",\"t\":1.0,\"value\":12.0}],"
        "\"started_at\":\"2026-11-29T18:40:12.500Z\",\"status\":\"ok\"}";
    CHECK_SAY(text && strcmp(text, want) == 0, "ok body is %s", text ? text : "NULL");
    free(text);
    json_decref(ok);

    hv_engine_fail(&r, "kernel %s failed", "int");
    json_t *bad = hv_engine_result_to_json(&r, 1, false, "a", "b");
    CHECK_SAY(strcmp(json_string_value(json_object_get(bad, "status")), "error") == 0 &&
                  strcmp(json_string_value(json_object_get(bad, "error")), "kernel int failed") ==
                      0 &&
                  json_array_size(json_object_get(bad, "metrics")) == 0 &&
                  json_array_size(json_object_get(bad, "samples")) == 0,
              "error body: status error, the reason, no metrics or samples");
    json_decref(bad);
    hv_engine_result_clear(&r);
}

int main(void)
{
    test_table_and_body();
    test_self_checks();
    printf("-- invalid params\n");
    test_invalid("{\"copies\": 0}", "copies");
    test_invalid("{\"copies\": \"x\"}", "copies");
    test_invalid("{\"copies\": 1.5}", "copies");
    test_invalid("{\"copies\": 1025}", "copies");
    test_invalid("{\"seconds\": -1}", "seconds");
    test_invalid("{\"seconds\": 0}", "seconds");
    test_invalid("{\"seconds\": \"ten\"}", "seconds");
    test_invalid("{\"seconds\": 0.5}", "/params/seconds: must be between 1s and 24h, not 0.5s");
    test_invalid("{\"pin\": \"yes\"}", "pin");
    test_invalid("{\"copies\": 1, \"threads\": 2}", "threads");
    test_invalid("[1]", "object");
    test_run("{\"seconds\": 1, \"copies\": 1}", 1, 1);
    test_run("{\"seconds\": 1, \"copies\": 2}", 2, 1);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    test_run("{\"seconds\": 1.5, \"copies\": \"per-vcpu\", \"pin\": true}", ncpu, 1.5);
    {
        struct hv_engine_result r;
        int callbacks = 0;
        run("{\"seconds\": 1, \"copies\": 2, \"pin\": true}", &r, &callbacks);
        json_t *cpus = json_object_get(r.observed, "cpus");
        /* Copy 1 goes to the second CPU this process may use (the first
         * again when it may use only one). */
        cpu_set_t set;
        sched_getaffinity(0, sizeof set, &set);
        int allowed[2] = {-1, -1}, n = 0;
        for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
            if (CPU_ISSET(c, &set))
                allowed[n++] = c;
        int want = n > 1 ? allowed[1] : allowed[0];
        CHECK_SAY(json_is_true(json_object_get(r.observed, "pinned")) &&
                      json_array_size(cpus) == 2 &&
                      json_integer_value(json_array_get(cpus, 0)) == allowed[0] &&
                      json_integer_value(json_array_get(cpus, 1)) == want,
                  "pin: observed.pinned, copy 0 on CPU %d, copy 1 on CPU %d", allowed[0], want);
        hv_engine_result_clear(&r);
    }
    test_stop();
    return check_summary("cpu");
}
