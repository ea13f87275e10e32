/* test_result.c — lib/result.c (the upload rule for results and metric
 * values) and worker/deliver.c's fitting of a result to the server's
 * limits: samples averaged down, raw output cut after escaping, and a
 * tool's output of any size marked with what was kept of how much. */
#include "check.h"
#include "result.h"
#include "worker/deliver.h"
#include "worker/engines/engine.h"
#include "worker/engines/run.h"

#include <unistd.h>

/* A result body with n samples of two metrics and raw text of len bytes
 * made of pattern. */
static json_t *body_with(size_t n, const char *pattern, size_t len)
{
    json_t *samples = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(samples,
                              json_pack("{s:s,s:f,s:f}", "metric", i % 2 ? "b.mbps" : "a.score",
                                        "t", (double)(i / 2 + 1), "value", (double)(i / 2)));
    char *raw = malloc(len + 1);
    size_t plen = strlen(pattern);
    for (size_t i = 0; i < len; i++)
        raw[i] = pattern[i % plen];
    raw[len] = '\0';
    json_t *b = json_pack("{s:i,s:s,s:[{s:s,s:f,s:s}],s:o,s:o}", "attempt", 1, "status", "ok",
                          "metrics", "name", "a.score", "value", 1.0, "unit", "score", "samples",
                          samples, "raw", json_string(raw));
    free(raw);
    return b;
}

static void test_values(void)
{
    char why[160];
    static const struct {
        const char *name, *unit;
        double v;
        bool ok;
        const char *says;
    } cases[] = {
        {"disk.seq_write.mbps", "MB/s", 512.5, true, NULL},
        {"disk.seq_write.mbps", "MB/s", -1, false, "rate (MB/s)"},
        {"net.tcp.gbps", NULL, -0.5, false, "rate"},
        {"disk.rand_read.lat_p99_us", "us", -3, false, "time (us)"},
        {"x", "bytes", -1, false, "size"},
        {"net.tcp.retransmits", "count", -1, false, "count"},
        {"cpu.score", "score", 0, true, NULL},
        {"clock.offset_ms", "offset", -12.5, true, NULL}, /* unknown unit: may be negative */
        {"cpu.score", "score", 1e15, true, NULL},
        {"cpu.score", "score", 1.0001e15, false, "out of range"},
        {"site.delta", NULL, -1e200, false, "out of range"},
        {"cpu.score", "score", NAN, false, "finite"},
        {"cpu.score", "score", INFINITY, false, "finite"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        why[0] = '\0';
        bool ok = hv_metric_value_check(cases[i].name, cases[i].unit, cases[i].v, why, sizeof why);
        CHECK_MSG(ok == cases[i].ok, "case %zu: %s = %g", i, cases[i].name, cases[i].v);
        if (cases[i].says != NULL)
            CHECK_MSG(strstr(why, cases[i].says) != NULL, "case %zu says \"%s\"", i, why);
    }
}

/* Runs hv_result_body_check on text; returns the errors' paths joined by
 * spaces (static buffer). */
static const char *paths_of(const char *text)
{
    static char buf[512];
    json_t *doc = json_loads(text, 0, NULL), *errors = json_array();
    buf[0] = '\0';
    if (doc == NULL)
        return "unparsable";
    int n = hv_result_body_check(doc, errors);
    CHECK((size_t)n == json_array_size(errors));
    size_t i;
    json_t *e;
    json_array_foreach(errors, i, e)
    {
        size_t k = strlen(buf);
        snprintf(buf + k, sizeof buf - k, "%s%s", k ? " " : "",
                 json_string_value(json_object_get(e, "path")));
    }
    json_decref(doc);
    json_decref(errors);
    return buf;
}

static void test_body(void)
{
    CHECK(strcmp(paths_of("{\"attempt\":1,\"status\":\"ok\",\"metrics\":[{\"name\":\"m\","
                          "\"value\":1}],\"samples\":[{\"metric\":\"m\",\"t\":1,\"value\":2}]}"),
                 "") == 0);
    CHECK(strcmp(paths_of("{\"attempt\":1,\"status\":\"ok\",\"metrics\":[{\"name\":\"m\","
                          "\"value\":1},{\"name\":\"m\",\"value\":2}]}"),
                 "/metrics/1/name") == 0);
    CHECK(strcmp(paths_of("{\"attempt\":1,\"status\":\"ok\",\"metrics\":[{\"name\":\"d.mbps\","
                          "\"value\":-1,\"unit\":\"MB/s\"}],\"samples\":[{\"metric\":\"d.mbps\","
                          "\"t\":1,\"value\":-2}]}"),
                 "/metrics/0/value /samples/0/value") == 0);
    CHECK(strcmp(paths_of("{\"attempt\":1,\"status\":\"ok\",\"metrics\":[{\"name\":\"m\","
                          "\"value\":1e200}]}"),
                 "/metrics/0/value") == 0);
    CHECK(strcmp(paths_of("{\"attempt\":1,\"status\":\"ok\",\"metrics\":[]}"), "/metrics") == 0);
    CHECK(strcmp(paths_of("{\"attempt\":1,\"status\":\"ok\",\"metrics\":[{\"name\":\"\","
                          "\"value\":1},{\"name\":\"cpu.score \",\"value\":1}]}"),
                 "/metrics/0/name /metrics/1/name") == 0);
    CHECK(strcmp(paths_of("[1,2]"), "") == 0); /* one error, at the root "" */
    CHECK(strcmp(paths_of("{\"attempt\":1,\"status\":\"error\",\"started_at\":\"nope\"}"),
                 "/started_at") == 0);
}

static void test_names(void)
{
    char why[160];
    static const struct {
        const char *name;
        bool ok;
        const char *says;
    } cases[] = {
        {"cpu.score", true, NULL},
        {"disk.seq write", true, NULL}, /* a blank inside is the author's */
        {"", false, "empty"},
        {NULL, false, "empty"},
        {"cpu.score ", false, "blank"},
        {" cpu.score", false, "blank"},
        {"cpu\tscore", false, "control"},
        {"cpu.score\n", false, "control"},
        {"cpu\x7fscore", false, "control"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        why[0] = '\0';
        bool ok = hv_metric_name_check(cases[i].name, why, sizeof why);
        CHECK_MSG(ok == cases[i].ok, "case %zu: \"%s\"", i, cases[i].name ? cases[i].name : "");
        if (cases[i].says != NULL)
            CHECK_MSG(strstr(why, cases[i].says) != NULL, "case %zu says \"%s\"", i, why);
    }
    char longest[HV_METRIC_NAME_MAX + 2];
    memset(longest, 'm', sizeof longest - 1);
    longest[HV_METRIC_NAME_MAX] = '\0';
    CHECK(hv_metric_name_check(longest, why, sizeof why));
    longest[HV_METRIC_NAME_MAX] = 'm';
    longest[HV_METRIC_NAME_MAX + 1] = '\0';
    CHECK(!hv_metric_name_check(longest, why, sizeof why));
}

/* The paths and messages hv_result_data_check gives for text under base,
 * "PATH: MESSAGE" joined by " | " (static buffer). */
static const char *data_errors(const char *text, const char *base)
{
    static char buf[1024];
    json_t *doc = json_loads(text, 0, NULL), *errors = json_array();
    buf[0] = '\0';
    if (doc == NULL)
        return "unparsable";
    int n = hv_result_data_check(doc, base, errors);
    CHECK((size_t)n == json_array_size(errors));
    size_t i;
    json_t *e;
    json_array_foreach(errors, i, e)
    {
        size_t k = strlen(buf);
        snprintf(buf + k, sizeof buf - k, "%s%s: %s", k ? " | " : "",
                 json_string_value(json_object_get(e, "path")),
                 json_string_value(json_object_get(e, "message")));
    }
    json_decref(doc);
    json_decref(errors);
    return buf;
}

/* The same rules, under the path of an exported plan's result. */
static void test_data(void)
{
    const char *base = "/jobs/3/results/0";
    CHECK(strcmp(data_errors("{\"metrics\":[{\"name\":\"cpu.score\",\"value\":5,\"unit\":"
                             "\"score\"}],\"samples\":[{\"metric\":\"cpu.score\",\"t\":1,"
                             "\"value\":5}],\"observed\":{\"cpus\":4}}",
                             base),
                 "") == 0);
    const char *e = data_errors("{\"metrics\":[{\"name\":\"cpu.score\",\"value\":-5,\"unit\":"
                                "\"score\"},{\"name\":\"a\",\"value\":1e200},{\"name\":\"b\","
                                "\"value\":1.7e308},{\"name\":\"\",\"value\":1},{\"name\":"
                                "\"cpu.score \",\"value\":1},{\"name\":\"cpu.score\",\"value\":"
                                "2}]}",
                                base);
    CHECK_MSG(strcmp(e, "/jobs/3/results/0/metrics/0/value: -5 must not be negative for a score "
                        "(score) | /jobs/3/results/0/metrics/1/value: 1e+200 is out of range: a "
                        "metric's magnitude is at most 1e+15 | /jobs/3/results/0/metrics/2/value: "
                        "1.7e+308 is out of range: a metric's magnitude is at most 1e+15 | "
                        "/jobs/3/results/0/metrics/3/name: a metric's name must not be empty | "
                        "/jobs/3/results/0/metrics/4/name: a metric's name must not begin or end "
                        "with a blank | /jobs/3/results/0/metrics/5/name: metric \"cpu.score\" "
                        "appears more than once in this result") == 0,
              "%s", e);
    /* A sample is held to its metric's unit, and to the name rule. */
    e = data_errors("{\"metrics\":[{\"name\":\"d\",\"value\":1,\"unit\":\"MB/s\"}],"
                    "\"samples\":[{\"metric\":\"d\",\"t\":1,\"value\":-1},{\"metric\":"
                    "\" d\",\"t\":1,\"value\":1}]}",
                    "");
    CHECK_MSG(strcmp(e,
                     "/samples/0/value: -1 must not be negative for a rate (MB/s) | "
                     "/samples/1/metric: a metric's name must not begin or end with a blank") == 0,
              "%s", e);
    /* observed: up to HV_RESULT_MAX_OBSERVED bytes of compact JSON. */
    size_t fill = HV_RESULT_MAX_OBSERVED - strlen("{\"x\":\"\"}");
    char *big = malloc(fill + 2);
    memset(big, 'o', fill + 1);
    big[fill] = '\0';
    json_t *doc = json_pack("{s:{s:s}}", "observed", "x", big), *errors = json_array();
    CHECK(hv_result_data_check(doc, "", errors) == 0);
    big[fill] = 'o';
    big[fill + 1] = '\0';
    json_object_set_new(json_object_get(doc, "observed"), "x", json_string(big));
    CHECK(hv_result_data_check(doc, "/jobs/0/results/0", errors) == 1);
    json_t *err = json_array_get(errors, 0);
    CHECK(strcmp(json_string_value(json_object_get(err, "path")), "/jobs/0/results/0/observed") ==
          0);
    CHECK_MSG(strcmp(json_string_value(json_object_get(err, "message")),
                     "is 65537 bytes as JSON; at most 65536 are kept") == 0,
              "%s", json_string_value(json_object_get(err, "message")));
    json_decref(doc);
    json_decref(errors);
    free(big);
}

static void test_fit_samples(void)
{
    json_t *b = body_with(500000, "x", 10);
    struct hv_result_limits l = {64u << 20, 200000, 1u << 20};
    CHECK(hv_result_fit(b, &l) == 0);
    json_t *s = json_object_get(b, "samples");
    CHECK_MSG(json_array_size(s) <= 200000, "%zu samples", json_array_size(s));
    /* 250,000 per metric averaged by 3: ceil(250000 / 3) = 83,334 each. */
    CHECK_MSG(json_array_size(s) == 2 * 83334, "%zu samples", json_array_size(s));
    json_t *first = json_array_get(s, 0);
    CHECK(strcmp(json_string_value(json_object_get(first, "metric")), "a.score") == 0);
    /* The first three a.score samples: t 1, 2, 3 and values 0, 1, 2. */
    CHECK(fabs(json_number_value(json_object_get(first, "t")) - 2.0) < 1e-9);
    CHECK(fabs(json_number_value(json_object_get(first, "value")) - 1.0) < 1e-9);
    json_t *note = json_object_get(json_object_get(b, "observed"), "samples_downsampled");
    CHECK(json_integer_value(json_object_get(note, "factor")) == 3);
    CHECK(json_integer_value(json_object_get(note, "from")) == 500000);
    json_decref(b);
}

static void test_fit_raw(void)
{
    /* Quotes, tabs and control bytes grow when escaped: 1 MiB of them is
     * well past a 300 kB body. */
    json_t *b = body_with(1000, "say \"hi\"\t\001\n", 1u << 20);
    struct hv_result_limits l = {300000, 200000, 1u << 20};
    CHECK(hv_result_fit(b, &l) == 0);
    size_t size = json_dumpb(b, NULL, 0, JSON_COMPACT);
    CHECK_MSG(size <= 300000, "body of %zu bytes", size);
    CHECK_MSG(size > 250000, "body of %zu bytes: cut far more than needed", size);
    const char *raw = json_string_value(json_object_get(b, "raw"));
    CHECK(raw != NULL && strstr(raw, "raw output truncated") != NULL);
    json_t *note = json_object_get(json_object_get(b, "observed"), "raw_truncated");
    CHECK(json_integer_value(json_object_get(note, "of_bytes")) == 1 << 20);
    CHECK(json_integer_value(json_object_get(note, "kept_bytes")) > 100000);
    CHECK(json_array_size(json_object_get(b, "samples")) == 1000);
    json_decref(b);

    /* Past max_raw alone: cut to it, whatever the body cap. */
    b = body_with(0, "abc", 3u << 20);
    l = (struct hv_result_limits){64u << 20, 200000, 1u << 20};
    CHECK(hv_result_fit(b, &l) == 0);
    CHECK(json_string_length(json_object_get(b, "raw")) <= 1u << 20);
    json_decref(b);

    /* A UTF-8 character is never cut in half. */
    b = body_with(0, "\xc3\xa9", 2u << 20); /* é */
    l = (struct hv_result_limits){64u << 20, 200000, 1001};
    CHECK(hv_result_fit(b, &l) == 0);
    CHECK(json_object_get(b, "raw") == NULL ||
          json_string_value(json_object_get(b, "raw")) != NULL);
    json_decref(b);

    /* Samples that cannot fit even without raw output: averaged further. */
    b = body_with(20000, "x", 10);
    l = (struct hv_result_limits){200000, 200000, 1u << 20};
    CHECK(hv_result_fit(b, &l) == 0);
    CHECK(json_dumpb(b, NULL, 0, JSON_COMPACT) <= 200000);
    json_decref(b);
}

/* A tool's output of each size, from the process runner's capture through
 * the engine's result to the fitting to a server's 1 MiB of raw output:
 * kept whole up to the limit, else cut with observed.raw_truncated giving
 * the bytes kept and the tool's true size, and the marker saying the same,
 * also past the 4 MiB the capture keeps. */
static void test_raw_sizes(void)
{
    static const size_t sizes[] = {512u << 10, 3u << 19, 3u << 20, 5u << 20};
    const size_t most = 5u << 20;
    char *text = malloc(most);
    for (size_t i = 0; i < most; i++)
        text[i] = i % 64 == 63 ? '\n' : (char)('a' + i % 26);
    char dir[] = "/tmp/hv-test-result-XXXXXX", path[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/out", dir);
    const struct hv_result_limits l = {32u << 20, 200000, 1u << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        FILE *f = fopen(path, "wb");
        CHECK(f != NULL && fwrite(text, 1, n, f) == n);
        if (f != NULL)
            fclose(f);
        const char *const argv[] = {"cat", path, NULL};
        struct hv_run_spec spec = {.argv = argv, .timeout = 60};
        struct hv_run_result run;
        char err[256];
        CHECK(hv_run(&spec, NULL, &run, err, sizeof err) == 0 && hv_run_ok(&run));
        CHECK_MSG(run.out_total == n, "%zu bytes: the capture counted %zu", n, run.out_total);
        struct hv_engine_result res;
        CHECK(hv_engine_result_init(&res) == 0);
        CHECK(hv_engine_set_raw_of(&res, run.out, run.out_len, run.out_total) == 0);
        hv_run_result_clear(&run);
        json_t *b =
            hv_engine_result_to_json(&res, 1, true, "2025-01-01T00:00:00Z", "2025-01-01T00:00:01Z");
        hv_engine_result_clear(&res);
        CHECK(b != NULL && hv_result_fit(b, &l) == 0);
        const char *raw = json_string_value(json_object_get(b, "raw"));
        size_t raw_len = json_string_length(json_object_get(b, "raw"));
        json_t *note = json_object_get(json_object_get(b, "observed"), "raw_truncated");
        if (n <= l.max_raw) {
            CHECK_MSG(note == NULL, "%zu bytes: marked as cut", n);
            CHECK_MSG(raw != NULL && raw_len == n && memcmp(raw, text, n) == 0,
                      "%zu bytes: raw of %zu bytes", n, raw_len);
            json_decref(b);
            continue;
        }
        size_t kept = (size_t)json_integer_value(json_object_get(note, "kept_bytes"));
        size_t of = (size_t)json_integer_value(json_object_get(note, "of_bytes"));
        CHECK_MSG(of == n, "%zu bytes: of_bytes %zu", n, of);
        /* Measured after escaping: each "\n" of the 64-byte lines takes two. */
        size_t escaped = json_dumpb(json_object_get(b, "raw"), NULL, 0, JSON_ENCODE_ANY) - 2;
        CHECK_MSG(escaped <= l.max_raw && escaped > l.max_raw - 512,
                  "%zu bytes: raw of %zu escaped", n, escaped);
        CHECK_MSG(kept > (l.max_raw - 512) / 65 * 64 && kept < l.max_raw,
                  "%zu bytes: kept_bytes %zu", n, kept);
        CHECK_MSG(raw != NULL && raw_len <= l.max_raw && raw_len > kept &&
                      memcmp(raw, text, kept) == 0,
                  "%zu bytes: raw of %zu bytes", n, raw_len);
        char says[96];
        snprintf(says, sizeof says, "the first %zu of %zu bytes are above]\n", kept, n);
        CHECK_MSG(raw != NULL && raw_len > kept && strstr(raw + kept, says) != NULL,
                  "%zu bytes: the marker is \"%s\"", n, raw != NULL ? raw + kept : "");
        json_decref(b);
    }
    unlink(path);
    rmdir(dir);
    free(text);
}

int main(void)
{
    test_values();
    test_body();
    test_names();
    test_data();
    test_fit_samples();
    test_fit_raw();
    test_raw_sizes();
    return check_summary("test_result");
}
