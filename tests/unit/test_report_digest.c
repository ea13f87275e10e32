/* test_report_digest.c — the report of a big plan (server/report.h): past
 * HV_REPORT_RUNS_LISTED rounds a series lists only its flagged runs, runs_all
 * lists them all and changes nothing else, and the digest a big plan's
 * report leaves, written as JSON text and read back with no values, builds
 * the same report byte for byte — on a plan whose guests ran one at a time
 * (arms that merge two series per round), with a planted outlier, a
 * lower-is-better metric and a metric with a value of 0 (linear interval,
 * no log group). A plan of HV_REPORT_RUNS_LISTED rounds lists every run and
 * leaves no digest. What is kept is keyed by the build, the migration
 * level and the state of the plan's jobs (hv_report_key), and the tables a
 * report reads are listed with what covers them (hv_report_tables). */
#include "check.h"
#include "sim.h"

#include "server/build_id.h"
#include "server/report.h"

#include <gsl/gsl_errno.h>
#include <string.h>

/* A plan's settings, configurations and workload (no values yet). */
static void plan_of(struct hv_rdata *d)
{
    hv_rdata_init(d);
    json_t *summary = json_pack("{s:i,s:s,s:s,s:{s:i,s:i}}", "id", 9, "name", "big", "status",
                                "done", "jobs", "total", 1, "done", 1);
    json_t *spec = check_json("{\"targets\":{\"host\":\"hv\"},\"design\":\"full\","
                              "\"baseline\":\"host\",\"margin_pct\":1,"
                              "\"repetitions\":{\"min\":2,\"max\":400,\"ci_pct\":1},"
                              "\"factors\":{\"thp\":[\"always\",\"never\"]}}");
    CHECK(hv_rdata_plan(d, summary, spec) == 0);
    json_decref(summary);
    json_decref(spec);
    json_t *always = check_json("{\"thp\":\"always\"}"), *never = check_json("{\"thp\":\"never\"}");
    CHECK(hv_rdata_config(d, "default", always) == 0);
    CHECK(hv_rdata_config(d, "thp=never", never) == 0);
    json_decref(always);
    json_decref(never);
    CHECK(hv_rdata_workload(d, "cpu", "cpu", "builtin") == 0);
}

static void value(struct hv_rdata *d, size_t config, const char *target, const char *metric,
                  bool hib, int round, double v, int64_t job)
{
    struct hv_rrow row = {.config = config,
                          .workload = "cpu",
                          .target = target,
                          .metric = metric,
                          .unit = hib ? "score" : "us",
                          .higher_is_better = hib,
                          .round = round,
                          .value = v,
                          .members = 1,
                          .jobs = &job,
                          .n_jobs = 1};
    CHECK(hv_rdata_run(d, &row) == 0);
}

/* The plan with its values: rounds rounds of the host and two guests
 * (one at a time), thp=never 5 % faster in the guests, round 7 of the
 * host's default at twice its level, and cpu.steal_pct 0 in round 3. */
static void big_plan(struct hv_rdata *d, int rounds)
{
    plan_of(d);
    uint64_t st = sim_state(61, (uint64_t)rounds);
    int64_t job = 1000;
    static const char *const targets[] = {"hv", "vm0", "vm1"};
    for (int r = 1; r <= rounds; r++)
        for (size_t c = 0; c < 2; c++)
            for (size_t t = 0; t < 3; t++) {
                double level = t == 0 ? 1000 : 900 * (c == 1 ? 1.05 : 1.0);
                double score = level * (1 + 0.02 * sim_normal(&st));
                if (t == 0 && c == 0 && r == 7)
                    score = 2 * level;
                value(d, c, targets[t], "cpu.score", true, r, score, job++);
                value(d, c, targets[t], "cpu.lat_p99_us", false, r,
                      40 * (1 + 0.03 * sim_normal(&st)), job++);
                value(d, c, targets[t], "cpu.steal_pct", false, r,
                      r == 3 ? 0.0 : 2 * (1 + 0.1 * sim_normal(&st)), job++);
            }
    CHECK(hv_rdata_finish(d) == 0);
}

/* The report without the summaries' listings: what runs_all must not
 * change. */
static json_t *without_runs(const json_t *report)
{
    json_t *r = json_deep_copy(report);
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(r, "summaries"), i, s)
    {
        json_object_del(s, "runs");
        json_object_del(s, "runs_listed");
        json_object_del(s, "runs_omitted");
    }
    return r;
}

static const json_t *summary_of(const json_t *report, const char *config, const char *target,
                                const char *metric)
{
    size_t i;
    const json_t *s;
    json_array_foreach(json_object_get(report, "summaries"), i, s)
    {
        if (strcmp(json_string_value(json_object_get(s, "configuration")), config) == 0 &&
            strcmp(json_string_value(json_object_get(s, "target")), target) == 0 &&
            strcmp(json_string_value(json_object_get(s, "metric")), metric) == 0)
            return s;
    }
    return NULL;
}

static void test_big(void)
{
    int rounds = HV_REPORT_RUNS_LISTED + 20;
    struct hv_rdata d;
    big_plan(&d, rounds);
    json_t *digest = NULL;
    json_t *report = hv_report_build_digest(&d, &digest);
    CHECK(report != NULL && digest != NULL);
    CHECK(json_array_size(json_object_get(report, "summaries")) == 18);

    /* The listing: only the flagged runs, as many as the series flags. */
    size_t i;
    const json_t *s;
    json_array_foreach(json_object_get(report, "summaries"), i, s)
    {
        long long n = (long long)json_integer_value(json_object_get(s, "n"));
        long long out = (long long)json_integer_value(json_object_get(s, "outliers"));
        CHECK(n == rounds);
        CHECK_STR(json_string_value(json_object_get(s, "runs_listed")), "flagged");
        CHECK((long long)json_array_size(json_object_get(s, "runs")) == out);
        CHECK(json_integer_value(json_object_get(s, "runs_omitted")) == n - out);
    }
    const json_t *host = summary_of(report, "default", "hv", "cpu.score");
    CHECK(host != NULL);
    const json_t *run = json_array_get(json_object_get(host, "runs"), 0);
    CHECK(json_integer_value(json_object_get(run, "round")) == 7);
    CHECK(json_is_true(json_object_get(run, "outlier")));
    const json_t *steal = summary_of(report, "default", "vm0", "cpu.steal_pct");
    CHECK_STR(json_string_value(json_object_get(json_object_get(steal, "interval"), "scale")),
              "linear");

    /* The comparison in the guests: +5 %, better; its evidence the first
     * HV_REPORT_RUNS_LISTED jobs of each arm. */
    size_t found = 0;
    json_array_foreach(json_object_get(report, "comparisons"), i, s)
    {
        if (strcmp(json_string_value(json_object_get(s, "side")), "guests") != 0 ||
            strcmp(json_string_value(json_object_get(s, "metric")), "cpu.score") != 0)
            continue;
        found++;
        CHECK_STR(json_string_value(json_object_get(s, "verdict")), "better");
        CHECK_NEAR(json_number_value(json_object_get(s, "pct")), 5.0, 1.0);
        CHECK(json_array_size(json_object_get(s, "jobs")) == 2 * HV_REPORT_RUNS_LISTED);
    }
    CHECK(found == 1);

    /* The digest as the database keeps it: text, read back with no values. */
    char *text = json_dumps(digest, JSON_COMPACT);
    CHECK(text != NULL);
    struct hv_rdata kept;
    plan_of(&kept);
    kept.digest = check_json(text);
    CHECK(hv_rdata_finish(&kept) == 0);
    CHECK(kept.n_series == 0);
    json_t *again_digest = NULL;
    json_t *again = hv_report_build_digest(&kept, &again_digest);
    CHECK(again != NULL);
    CHECK(again_digest == NULL); /* a report read from a digest leaves none */
    char *a = json_dumps(report, JSON_SORT_KEYS), *b = json_dumps(again, JSON_SORT_KEYS);
    CHECK(a != NULL && b != NULL && strcmp(a, b) == 0);
    free(a);
    free(b);

    /* runs_all: every run, no digest, nothing else changed. */
    struct hv_rdata all;
    big_plan(&all, rounds);
    all.runs_all = true;
    json_t *all_digest = NULL;
    json_t *full = hv_report_build_digest(&all, &all_digest);
    CHECK(full != NULL && all_digest == NULL);
    json_array_foreach(json_object_get(full, "summaries"), i, s)
    {
        CHECK((int)json_array_size(json_object_get(s, "runs")) == rounds);
        CHECK(json_object_get(s, "runs_listed") == NULL);
    }
    json_t *x = without_runs(report), *y = without_runs(full);
    CHECK(json_equal(x, y));
    json_decref(x);
    json_decref(y);

    json_decref(full);
    hv_rdata_free(&all);
    json_decref(again);
    hv_rdata_free(&kept);
    free(text);
    json_decref(report);
    json_decref(digest);
    hv_rdata_free(&d);
}

static void test_small(void)
{
    struct hv_rdata d;
    big_plan(&d, HV_REPORT_RUNS_LISTED);
    json_t *digest = NULL;
    json_t *report = hv_report_build_digest(&d, &digest);
    CHECK(report != NULL && digest == NULL);
    size_t i;
    const json_t *s;
    json_array_foreach(json_object_get(report, "summaries"), i, s)
    {
        CHECK(json_array_size(json_object_get(s, "runs")) == HV_REPORT_RUNS_LISTED);
        CHECK(json_object_get(s, "runs_listed") == NULL);
    }
    json_decref(report);
    hv_rdata_free(&d);
}

/* What is kept is keyed by the build, the migration level and the state of
 * the plan's jobs: each changes the key. */
static void test_key(void)
{
    json_t *summary = check_json("{\"id\":9,\"jobs\":{\"total\":300,\"done\":120},"
                                 "\"updated_at\":\"2026-01-02T03:04:05.000006Z\"}");
    char *key = hv_report_key("exe:ab12", 40, summary);
    CHECK_STR(key, "exe:ab12:m40:300:120:2026-01-02T03:04:05.000006Z");
    char *other_level = hv_report_key("exe:ab12", 41, summary);
    CHECK_STR(other_level, "exe:ab12:m41:300:120:2026-01-02T03:04:05.000006Z");
    char *other_build = hv_report_key("exe:cd34", 40, summary);
    CHECK_STR(other_build, "exe:cd34:m40:300:120:2026-01-02T03:04:05.000006Z");
    json_object_set_new(json_object_get(summary, "jobs"), "done", json_integer(121));
    char *one_more = hv_report_key("exe:ab12", 40, summary);
    CHECK_STR(one_more, "exe:ab12:m40:300:121:2026-01-02T03:04:05.000006Z");
    free(key);
    free(other_level);
    free(other_build);
    free(one_more);
    json_decref(summary);

    /* This build: "exe:" and the SHA-256 of this program, the same each time. */
    const char *build = hv_build_id();
    CHECK(strncmp(build, "exe:", 4) == 0 && strlen(build) == 4 + 64 &&
          strspn(build + 4, "0123456789abcdef") == 64);
    CHECK(hv_build_id() == build);
}

/* The tables a report reads are listed once each, in order, each with what
 * covers a change of its rows; the key's own two are among them. */
static void test_tables(void)
{
    size_t n = 0;
    bool digests = false, migrations = false;
    for (const struct hv_report_table *t = hv_report_tables; t->name != NULL; t++, n++) {
        CHECK_MSG(t->keyed_by != NULL && t->keyed_by[0] != '\0', "%s: what covers it", t->name);
        CHECK_MSG(n == 0 || strcmp(t[-1].name, t->name) < 0, "%s: out of order", t->name);
        digests |= strcmp(t->name, "report_digests") == 0;
        migrations |= strcmp(t->name, "hv_schema_migrations") == 0;
    }
    CHECK(n >= 2 && digests && migrations);
}

int main(void)
{
    gsl_set_error_handler_off();
    test_big();
    test_small();
    test_key();
    test_tables();
    return check_summary("test_report_digest");
}
