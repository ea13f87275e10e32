/* test_report.c — the plan report on data of known truth: a full factorial
 * 2×2 with a planted effect, a host baseline with guests (overhead and
 * efficiency with weights), outliers and a width not reached, n = 1, a
 * one-at-a-time design with a level of no effect and a lower-is-better
 * metric; the Markdown and CSV renderings; the catalogue's risk levels;
 * the plan members margin_pct and weights. */
#include "check.h"
#include "sim.h"

#include "factors.h"
#include "plan.h"
#include "report_render.h"
#include "server/report.h"

#include <gsl/gsl_errno.h>

/* A plan's report data: the summary and spec of a plan, then its
 * configurations (name and levels as JSON text) and workloads. */
static void plan_of(struct hv_rdata *d, const char *spec, const char *status)
{
    hv_rdata_init(d);
    json_t *summary = json_pack("{s:i,s:s,s:s,s:{s:i,s:i,s:i,s:i,s:i,s:i}}", "id", 7, "name",
                                "test", "status", status, "jobs", "total", 1, "queued", 0,
                                "running", 0, "done", 1, "failed", 0, "cancelled", 0);
    json_t *doc = check_json(spec);
    CHECK(hv_rdata_plan(d, summary, doc) == 0);
    json_decref(summary);
    json_decref(doc);
}

static void config_of(struct hv_rdata *d, const char *name, const char *levels)
{
    json_t *l = check_json(levels);
    CHECK(hv_rdata_config(d, name, l) == 0);
    json_decref(l);
}

/* The report's `decided` member is these counts, as hv_report_decided_json
 * gives them. */
static void check_decided(const json_t *r, long long comparisons, long long better, long long worse,
                          long long no_effect, long long inconclusive)
{
    const json_t *d = json_object_get(r, "decided");
    CHECK(json_object_size(d) == 5);
    CHECK(json_integer_value(json_object_get(d, "comparisons")) == comparisons);
    CHECK(json_integer_value(json_object_get(d, "better")) == better);
    CHECK(json_integer_value(json_object_get(d, "worse")) == worse);
    CHECK(json_integer_value(json_object_get(d, "no_effect")) == no_effect);
    CHECK(json_integer_value(json_object_get(d, "inconclusive")) == inconclusive);
    json_t *again = hv_report_decided_json(r);
    CHECK(json_equal(again, d));
    json_decref(again);
}

static int64_t next_job = 100;

/* One value of one round. */
static void value(struct hv_rdata *d, size_t config, const char *workload, const char *target,
                  const char *metric, bool hib, int round, double v)
{
    int64_t job = next_job++;
    struct hv_rrow row = {.config = config,
                          .workload = workload,
                          .target = target,
                          .metric = metric,
                          .unit = hib ? "score" : "s",
                          .higher_is_better = hib,
                          .round = round,
                          .value = v,
                          .members = 1,
                          .jobs = &job,
                          .n_jobs = 1};
    CHECK(hv_rdata_run(d, &row) == 0);
}

/* The first element of array a whose members k1 (and k2, when not NULL)
 * are the strings v1 (and v2); NULL when none is. */
static json_t *find(const json_t *a, const char *k1, const char *v1, const char *k2, const char *v2)
{
    size_t i;
    json_t *e;
    json_array_foreach(a, i, e)
    {
        const char *x = json_string_value(json_object_get(e, k1));
        const char *y = k2 ? json_string_value(json_object_get(e, k2)) : NULL;
        if (x && strcmp(x, v1) == 0 && (k2 == NULL || (y && strcmp(y, v2) == 0)))
            return e;
    }
    return NULL;
}

static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Whether a warning of kind is in the report. */
static bool warned(const json_t *report, const char *kind)
{
    return find(json_object_get(report, "warnings"), "kind", kind, NULL, NULL) != NULL;
}

/* Builds the report of d and frees d. */
static json_t *report_of(struct hv_rdata *d)
{
    CHECK(hv_rdata_finish(d) == 0);
    json_t *r = hv_report_build(d);
    CHECK(r != NULL);
    hv_rdata_free(d);
    return r;
}

/* --- noisy jobs: the set-aside count and reasons, the kept busy job ---- */

static void test_set_aside(void)
{
    struct hv_rdata d;
    plan_of(&d, "{\"targets\":{\"host\":\"hv\"},\"repetitions\":{\"min\":2}}", "done");
    config_of(&d, "default", "{}");
    CHECK(hv_rdata_workload(&d, "cpu", "cpu", "builtin") == 0);
    for (int r = 1; r <= 2; r++)
        value(&d, 0, "cpu", "hv", "cpu.score", true, r, 1000.0 + r);
    d.host_view =
        check_json("{\"host\": \"hv\", \"kvm_probe\": null, \"noise\": \"repeat\", \"busy\": ["
                   "{\"job_id\": 7, \"configuration\": \"default\", \"target\": \"hv\", "
                   "\"others_cpu_pct\": null, \"steal_pct\": 0, \"nonguest_cpu_pct\": 105}], "
                   "\"set_aside\": {\"count\": 2, \"reasons\": {\"interference\": 2}, \"jobs\": ["
                   "{\"job_id\": 3, \"reason\": \"interference\"}, "
                   "{\"job_id\": 5, \"reason\": \"interference\"}]}}");
    json_t *r = report_of(&d);
    CHECK_MSG(json_integer_value(json_object_get(json_object_get(r, "set_aside"), "count")) == 2,
              "the report's set_aside is the host view's");
    json_t *w = find(json_object_get(r, "warnings"), "kind", "set_aside", NULL, NULL);
    CHECK_STR(json_string_value(json_object_get(w, "message")),
              "2 jobs ran beside other work and were set aside (2 interference): their values "
              "are in no figure, and each one's configuration ran again in the same round");
    w = find(json_object_get(r, "warnings"), "kind", "host_busy", NULL, NULL);
    const char *msg = json_string_value(json_object_get(w, "message"));
    CHECK_MSG(msg != NULL && strstr(msg, "(job 7 (hv); ") != NULL &&
                  strstr(msg, "(kept although the plan repeats noisy jobs: ") != NULL,
              "the busy job that stayed in is warned of as kept: %s", msg ? msg : "");
    char *md = hv_report_md(r);
    CHECK_MSG(md != NULL && strstr(md, "\nSet aside as noisy: 2 jobs (2 interference), each run "
                                       "again in its round; n counts none of them.\n") != NULL,
              "the markdown prints the count");
    free(md);
    json_decref(r);

    /* keep: no count, no warning of it; busy jobs are warned of as before. */
    plan_of(&d, "{\"targets\":{\"host\":\"hv\"}}", "done");
    config_of(&d, "default", "{}");
    CHECK(hv_rdata_workload(&d, "cpu", "cpu", "builtin") == 0);
    value(&d, 0, "cpu", "hv", "cpu.score", true, 1, 1000.0);
    d.host_view =
        check_json("{\"host\": \"hv\", \"noise\": \"keep\", \"busy\": [{\"job_id\": 7, "
                   "\"configuration\": \"default\", \"target\": \"hv\", \"steal_pct\": 0, "
                   "\"nonguest_cpu_pct\": 105}], \"set_aside\": {\"count\": 0, \"reasons\": {}, "
                   "\"jobs\": []}}");
    r = report_of(&d);
    CHECK(find(json_object_get(r, "warnings"), "kind", "set_aside", NULL, NULL) == NULL);
    w = find(json_object_get(r, "warnings"), "kind", "host_busy", NULL, NULL);
    msg = json_string_value(json_object_get(w, "message"));
    CHECK_MSG(msg != NULL && strstr(msg, "kept although") == NULL &&
                  strstr(msg, "carry that work's noise") != NULL,
              "keep: the warning as before: %s", msg ? msg : "");
    md = hv_report_md(r);
    CHECK(md != NULL && strstr(md, "Set aside as noisy") == NULL);
    free(md);
    json_decref(r);
}

/* --- the host: its KVM probe beside the emulated warning, busy jobs ---- */

static void test_host_view(void)
{
    struct hv_rdata d;
    plan_of(&d,
            "{\"targets\":{\"host\":\"hv\",\"guests\":{\"domains\":[\"vm0\"]}},"
            "\"factors\":{\"vcpu_pin\":[\"off\",\"on\"]},\"repetitions\":{\"min\":2}}",
            "done");
    config_of(&d, "default", "{\"vcpu_pin\":\"off\"}");
    config_of(&d, "vcpu_pin=on", "{\"vcpu_pin\":\"on\"}");
    CHECK(hv_rdata_workload(&d, "cpu", "cpu", "builtin") == 0);
    for (int r = 1; r <= 2; r++)
        for (size_t c = 0; c < 2; c++)
            value(&d, c, "cpu", "vm0", "cpu.score", true, r, 1000.0 + r + (double)c);
    d.emulated = check_json("[\"vm0\"]");
    d.host_view = check_json(
        "{\"host\": \"hv\", \"kvm_probe\": {\"answer\": \"tcg\", \"why\": \"no ready marker "
        "within 60s\", \"probed_at\": \"2026-12-01T19:43:53Z\", \"current\": true}, \"busy\": ["
        "{\"job_id\": 12, \"configuration\": \"default\", \"target\": \"vm0\", "
        "\"others_cpu_pct\": 40.5, \"steal_pct\": 0.5, \"nonguest_cpu_pct\": null},"
        "{\"job_id\": 14, \"configuration\": \"default\", \"target\": \"vm0\", "
        "\"others_cpu_pct\": 30, \"steal_pct\": 2.5, \"nonguest_cpu_pct\": 10},"
        "{\"job_id\": 15, \"configuration\": \"vcpu_pin=on\", \"target\": \"vm0\", "
        "\"others_cpu_pct\": 26, \"steal_pct\": 0, \"nonguest_cpu_pct\": 0}]}");
    json_t *r = report_of(&d);
    json_t *w = find(json_object_get(r, "warnings"), "kind", "emulated", NULL, NULL);
    const char *msg = json_string_value(json_object_get(w, "message"));
    CHECK_MSG(msg != NULL && strstr(msg, "vm0 ran under QEMU's TCG emulation") == msg &&
                  strstr(msg, ". The KVM probe of hv found KVM unusable there: no ready marker "
                              "within 60s (probed 2026-12-01T19:43:53Z)") != NULL,
              "%s", msg);
    size_t i, busy = 0;
    json_t *e;
    json_array_foreach(json_object_get(r, "warnings"), i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "kind")), "host_busy") != 0)
            continue;
        msg = json_string_value(json_object_get(e, "message"));
        if (busy++ == 0)
            CHECK_STR(msg, "configuration default: 2 jobs ran while hv was busy with other work "
                           "(jobs 12 (vm0), 14 (vm0); other domains up to 40.5 % of a CPU, steal "
                           "up to 2.5 %, the host's own work up to 10.0 % of a CPU): their values "
                           "carry that work's noise");
        else
            CHECK_MSG(strstr(msg, "configuration vcpu_pin=on: 1 job ran while hv was busy with "
                                  "other work (job 15 (vm0); other domains up to 26.0 %") == msg,
                      "%s", msg);
    }
    CHECK(busy == 2);
    char *md = hv_report_md(r);
    CHECK(strstr(md, "jobs 12 (vm0), 14 (vm0)") != NULL);
    free(md);
    json_decref(r);

    /* A stale answer that KVM works says so, and to probe again. */
    plan_of(&d, "{\"targets\":{\"host\":\"hv\",\"guests\":{\"domains\":[\"vm0\"]}}}", "done");
    config_of(&d, "default", "{}");
    CHECK(hv_rdata_workload(&d, "cpu", "cpu", "builtin") == 0);
    value(&d, 0, "cpu", "vm0", "cpu.score", true, 1, 1000.0);
    d.emulated = check_json("[\"vm0\"]");
    d.host_view = check_json("{\"host\": \"hv\", \"kvm_probe\": {\"answer\": \"kvm\", \"why\": "
                             "\"ready in 3s\", \"current\": false}, \"busy\": []}");
    r = report_of(&d);
    w = find(json_object_get(r, "warnings"), "kind", "emulated", NULL, NULL);
    msg = json_string_value(json_object_get(w, "message"));
    CHECK_MSG(msg != NULL &&
                  strstr(msg, "found KVM usable there (ready in 3s, probed at an "
                              "unknown time): with domain type kvm") != NULL &&
                  strstr(msg, "probe again (deploy/guest-image/probe-kvm.sh --force)") != NULL,
              "%s", msg);
    CHECK(!warned(r, "host_busy"));
    json_decref(r);

    /* A bare-metal job's own interference: the host's own work, no other
     * domains. */
    plan_of(&d, "{\"targets\":{\"host\":\"hv\"}}", "done");
    config_of(&d, "default", "{}");
    CHECK(hv_rdata_workload(&d, "cpu", "cpu", "builtin") == 0);
    value(&d, 0, "cpu", "hv", "cpu.score", true, 1, 1000.0);
    d.host_view = check_json("{\"host\": \"hv\", \"kvm_probe\": null, \"busy\": [{\"job_id\": "
                             "21, \"configuration\": \"default\", \"target\": \"hv\", "
                             "\"others_cpu_pct\": null, \"steal_pct\": 0.25, "
                             "\"nonguest_cpu_pct\": 83.5}]}");
    r = report_of(&d);
    w = find(json_object_get(r, "warnings"), "kind", "host_busy", NULL, NULL);
    CHECK_STR(json_string_value(json_object_get(w, "message")),
              "configuration default: 1 job ran while hv was busy with other work (job 21 (hv); "
              "steal up to 0.2 %, the host's own work up to 83.5 % of a CPU): their values carry "
              "that work's noise");
    json_decref(r);
}

/* --- a full factorial 2×2: vcpu_pin=on +5 %, thp=never −10 % ------------ */

static json_t *factorial_report(void)
{
    struct hv_rdata d;
    plan_of(&d,
            "{\"targets\":{\"host\":\"hv\"},\"design\":\"full\",\"baseline\":\"host\","
            "\"factors\":{\"vcpu_pin\":[\"off\",\"on\"],\"thp\":[\"always\",\"never\"]},"
            "\"repetitions\":{\"min\":6,\"max\":6,\"ci_pct\":2}}",
            "done");
    config_of(&d, "default", "{\"thp\":\"always\",\"vcpu_pin\":\"off\"}");
    config_of(&d, "thp=never", "{\"thp\":\"never\",\"vcpu_pin\":\"off\"}");
    config_of(&d, "vcpu_pin=on", "{\"thp\":\"always\",\"vcpu_pin\":\"on\"}");
    config_of(&d, "thp=never,vcpu_pin=on", "{\"thp\":\"never\",\"vcpu_pin\":\"on\"}");
    CHECK(hv_rdata_workload(&d, "cpu", "cpu", "builtin") == 0);
    uint64_t st = sim_state(41, 1);
    /* Round-major order: the series arrive apart and finish merges them. */
    for (int r = 1; r <= 6; r++) {
        for (size_t c = 0; c < 4; c++) {
            double f = (c & 2 ? 1.05 : 1.0) * (c & 1 ? 0.90 : 1.0);
            for (int g = 0; g < 2; g++) {
                double v = 1000.0 * f * (1.0 + 0.005 * sim_normal(&st));
                value(&d, c, "cpu", g ? "vm1" : "vm0", "cpu.score", true, r, v);
                value(&d, c, "cpu", g ? "vm1" : "vm0", "cpu.score_per_copy", true, r, v / 2);
            }
        }
        value(&d, 0, "cpu", "hv", "cpu.score", true, r, 1111.1 * (1.0 + 0.005 * sim_normal(&st)));
    }
    return report_of(&d);
}

static void test_factorial(void)
{
    json_t *r = factorial_report();
    json_t *cmps = json_object_get(r, "comparisons");
    CHECK(json_array_size(cmps) == 2); /* the primary metric only, guests only */
    CHECK(json_integer_value(json_object_get(json_object_get(r, "family"), "comparisons")) == 2);
    CHECK_STR(json_string_value(json_object_get(json_object_get(r, "family"), "method")), "holm");

    json_t *pin = find(cmps, "factor", "vcpu_pin", "metric", "cpu.score");
    CHECK(pin != NULL);
    CHECK(num(pin, "pct") > 4.0 && num(pin, "pct") < 6.0);
    CHECK(num(pin, "lo_pct") > 1.0 && num(pin, "lo_pct") < 5.0 && num(pin, "hi_pct") > 5.0);
    CHECK_STR(json_string_value(json_object_get(pin, "verdict")), "better");
    CHECK_STR(json_string_value(json_object_get(pin, "family_verdict")), "better");
    CHECK(json_integer_value(json_object_get(pin, "cells")) == 2);
    CHECK_STR(json_string_value(json_object_get(pin, "analysis")), "paired");
    CHECK(json_integer_value(json_object_get(pin, "n")) == 6);     /* rounds, not runs */
    CHECK(json_integer_value(json_object_get(pin, "runs")) == 24); /* 4 arms × 6 rounds */
    CHECK_STR(json_string_value(json_object_get(pin, "side")), "guests");
    CHECK(json_array_size(json_object_get(pin, "jobs")) == 48); /* 2 guests per value */
    const char *s = json_string_value(json_object_get(pin, "sentence"));
    CHECK_MSG(s && strstr(s, "cpu score in the guests with vcpu_pin=on: +") == s &&
                  strstr(s, "vs vcpu_pin=off (n = 6 rounds, paired within each, over 2 "
                            "cells): better"),
              "%s", s);

    json_t *thp = find(cmps, "factor", "thp", NULL, NULL);
    CHECK(num(thp, "pct") > -11.0 && num(thp, "pct") < -9.0);
    CHECK_STR(json_string_value(json_object_get(thp, "family_verdict")), "worse");

    /* No interaction was planted: the interval covers 0. */
    json_t *ia = json_array_get(json_object_get(r, "interactions"), 0);
    CHECK(json_array_size(json_object_get(r, "interactions")) == 1);
    CHECK(num(ia, "lo_pct") < 0.0 && num(ia, "hi_pct") > 0.0);
    CHECK(json_integer_value(json_object_get(ia, "n")) == 6);

    json_t *recs = json_object_get(r, "recommendations");
    CHECK(json_array_size(recs) == 1);
    json_t *rec = json_array_get(recs, 0);
    CHECK_STR(json_string_value(json_object_get(rec, "factor")), "vcpu_pin");
    CHECK_STR(json_string_value(json_object_get(rec, "level")), "on");
    CHECK_STR(json_string_value(json_object_get(rec, "risk_level")), "low");
    CHECK_STR(json_string_value(json_object_get(rec, "disruption")), "live");
    CHECK(strstr(json_string_value(json_object_get(rec, "apply")), "virsh vcpupin") != NULL);
    CHECK(json_array_size(json_object_get(rec, "gains")) == 1);
    CHECK(json_array_size(json_object_get(rec, "hurts")) == 0);
    CHECK(strncmp(json_string_value(json_array_get(json_object_get(rec, "links"), 0)),
                  "/api/v1/jobs/", 13) == 0);
    CHECK(json_array_size(json_object_get(r, "safe_to_ignore")) == 0);

    /* The guests under the default against the host: 1000 vs 1111.1. */
    json_t *ov =
        find(json_object_get(r, "overhead"), "configuration", "default", "metric", "cpu.score");
    CHECK(num(ov, "pct") > -11.0 && num(ov, "pct") < -9.0);
    s = json_string_value(json_object_get(ov, "sentence"));
    CHECK_MSG(s &&
                  strstr(s, "cpu score in the guests: \xe2\x88\x92"
                            "10.") == s &&
                  strstr(s, "vs the host (n = 6 each)"),
              "%s", s);
    ov =
        find(json_object_get(r, "overhead"), "configuration", "vcpu_pin=on", "metric", "cpu.score");
    s = json_string_value(json_object_get(ov, "sentence"));
    CHECK_MSG(s && strstr(s, "cpu score in the guests with vcpu_pin=on: ") == s, "%s", s);
    json_t *eff = find(json_object_get(r, "efficiency"), "configuration", "default", NULL, NULL);
    CHECK_NEAR(num(json_object_get(eff, "overall"), "efficiency"), 0.9, 0.01);

    /* Summaries: per guest (and the host), every metric; the one that is
     * not primary is shown, not judged. */
    CHECK(json_array_size(json_object_get(r, "summaries")) == 17);
    CHECK(json_array_size(json_object_get(r, "rows")) == 17);
    json_t *sum = find(json_object_get(r, "summaries"), "metric", "cpu.score_per_copy", NULL, NULL);
    CHECK(json_is_false(json_object_get(sum, "primary")));
    CHECK(json_integer_value(json_object_get(sum, "n")) == 6);
    CHECK(json_array_size(json_object_get(sum, "runs")) == 6);

    json_t *rep = find(json_object_get(json_object_get(r, "repetitions"), "configurations"),
                       "configuration", "default", NULL, NULL);
    /* Every comparison is decided: the plan's stop rule (the comparisons'
     * group-sequential one) stops it so; every interval is narrow too. */
    CHECK_STR(json_string_value(json_object_get(rep, "stop")), "decided");
    CHECK(json_is_true(json_object_get(rep, "reached")));
    CHECK(!warned(r, "width") && !warned(r, "partial"));
    json_decref(r);
}

/* --- a host baseline with guests that ran together; weights ------------- */

static void test_efficiency(void)
{
    struct hv_rdata d;
    plan_of(&d,
            "{\"targets\":{\"host\":\"hv\"},\"weights\":{\"cpu\":3,\"disk\":1},"
            "\"repetitions\":{\"min\":5}}",
            "done");
    config_of(&d, "default", "{}");
    CHECK(hv_rdata_workload(&d, "cpu", "cpu", "builtin") == 0);
    CHECK(hv_rdata_workload(&d, "disk", "disk", "builtin") == 0);
    uint64_t st = sim_state(42, 1);
    for (int r = 1; r <= 5; r++) {
        /* The group's value is already its guests' mean: one per round. */
        value(&d, 0, "cpu", "2 guests", "cpu.score", true, r, 900 * (1 + 0.003 * sim_normal(&st)));
        value(&d, 0, "cpu", "hv", "cpu.score", true, r, 1000 * (1 + 0.003 * sim_normal(&st)));
        value(&d, 0, "disk", "2 guests", "disk.seq_write.mbps", true, r,
              400 * (1 + 0.003 * sim_normal(&st)));
        value(&d, 0, "disk", "hv", "disk.seq_write.mbps", true, r,
              500 * (1 + 0.003 * sim_normal(&st)));
        /* A count that is mostly 0: no logarithm, a linear interval. */
        value(&d, 0, "disk", "2 guests", "disk.errors", true, r, r == 4 ? 3 : 0);
        value(&d, 0, "disk", "hv", "disk.errors", true, r, 0);
    }
    json_t *r = report_of(&d);
    json_t *eff = json_array_get(json_object_get(r, "efficiency"), 0);
    json_t *subs = json_object_get(eff, "subsystems");
    json_t *cpu = find(subs, "subsystem", "cpu", NULL, NULL);
    json_t *disk = find(subs, "subsystem", "disk", NULL, NULL);
    CHECK_NEAR(num(cpu, "efficiency"), 0.9, 0.01);
    CHECK_NEAR(num(disk, "efficiency"), 0.8, 0.01);
    CHECK_NEAR(num(cpu, "weight"), 0.75, 1e-12);
    CHECK(num(cpu, "lo") < num(cpu, "efficiency") && num(cpu, "hi") > num(cpu, "efficiency"));
    json_t *all = json_object_get(eff, "overall");
    CHECK_NEAR(num(all, "efficiency"), exp((3 * log(0.9) + log(0.8)) / 4), 0.01);
    CHECK(json_integer_value(json_object_get(all, "n")) == 5);
    const char *s = json_string_value(json_object_get(eff, "sentence"));
    CHECK_MSG(s && strstr(s, "the guests keep 8") == s && strstr(s, "of the host's performance"),
              "%s", s);
    json_t *ov = find(json_object_get(r, "overhead"), "metric", "disk.seq_write.mbps", NULL, NULL);
    s = json_string_value(json_object_get(ov, "sentence"));
    CHECK_MSG(s &&
                  strstr(s, "disk seq-write (disk) in the guests: \xe2\x88\x92"
                            "20.") == s &&
                  strstr(s, "vs the host (n = 5 each)"),
              "%s", s);
    CHECK_STR(json_string_value(json_object_get(ov, "verdict")), "worse");
    json_t *sum = find(json_object_get(r, "summaries"), "target", "2 guests", NULL, NULL);
    CHECK(json_integer_value(json_object_get(sum, "n")) == 5);
    /* Values of 0: a linear interval whose negative bound is raised to 0
     * (a count cannot be negative), and no ratio against the host. */
    sum = find(json_object_get(r, "summaries"), "target", "2 guests", "metric", "disk.errors");
    json_t *ci = json_object_get(sum, "interval");
    CHECK_STR(json_string_value(json_object_get(ci, "scale")), "linear");
    CHECK(num(ci, "lo") == 0.0 && json_is_true(json_object_get(ci, "lo_clamped")));
    CHECK_NEAR(num(sum, "mean"), 0.6, 1e-12);
    ov = find(json_object_get(r, "overhead"), "metric", "disk.errors", NULL, NULL);
    CHECK(json_is_null(json_object_get(ov, "pct")));
    s = json_string_value(json_object_get(ov, "sentence"));
    CHECK_MSG(s && strstr(s, "no interval (a value is 0 or negative)"), "%s", s);
    CHECK(json_is_false(json_object_get(ov, "primary")));
    CHECK(json_integer_value(json_object_get(json_object_get(eff, "overall"), "items")) == 2);
    CHECK(json_array_size(json_object_get(r, "comparisons")) == 0);
    json_decref(r);
}

/* --- outliers are flagged and kept; a width not reached is said --------- */

static json_t *outlier_report(void)
{
    struct hv_rdata d;
    plan_of(&d, "{\"targets\":{\"host\":\"=evil\"},\"repetitions\":{\"min\":8,\"ci_pct\":0.5}}",
            "done");
    config_of(&d, "default", "{}");
    CHECK(hv_rdata_workload(&d, "cpu", "cpu", "builtin") == 0);
    static const double v[] = {100, 101, 99, 100, 102, 98, 100, 150};
    for (int i = 0; i < 8; i++)
        value(&d, 0, "cpu", "=evil", "cpu.score", true, i + 1, v[i]);
    return report_of(&d);
}

static void test_outliers(void)
{
    json_t *r = outlier_report();
    json_t *sum = json_array_get(json_object_get(r, "summaries"), 0);
    CHECK(json_integer_value(json_object_get(sum, "outliers")) == 1);
    CHECK(json_integer_value(json_object_get(sum, "n")) == 8);
    CHECK_NEAR(num(sum, "mean"), 106.25, 1e-9); /* the outlier counts */
    json_t *runs = json_object_get(sum, "runs");
    CHECK(json_is_true(json_object_get(json_array_get(runs, 7), "outlier")));
    CHECK(json_is_false(json_object_get(json_array_get(runs, 0), "outlier")));
    CHECK(num(json_array_get(runs, 7), "z") > 3.5);
    CHECK(warned(r, "outliers") && warned(r, "width"));
    json_t *rep =
        json_array_get(json_object_get(json_object_get(r, "repetitions"), "configurations"), 0);
    CHECK_STR(json_string_value(json_object_get(rep, "stop")), "max");
    CHECK(json_is_false(json_object_get(rep, "reached")));
    json_t *ci = json_object_get(sum, "interval");
    CHECK_STR(json_string_value(json_object_get(ci, "scale")), "log");
    CHECK(num(ci, "lo") > 0.0);
    json_decref(r);
}

/* --- n = 1; then a one-at-a-time design with a level of no effect ------- */

static json_t *oat_report(int rounds)
{
    struct hv_rdata d;
    plan_of(&d,
            "{\"targets\":{\"host\":\"hv\"},\"design\":\"one-at-a-time\",\"margin_pct\":1,"
            "\"repetitions\":{\"min\":3,\"max\":8},"
            "\"factors\":{\"ksm\":[\"off\",\"on\"],\"vcpu_pin\":[\"off\",\"on\"]}}",
            rounds == 1 ? "running" : "done");
    config_of(&d, "default", "{\"ksm\":\"off\",\"vcpu_pin\":\"off\"}");
    config_of(&d, "ksm=on", "{\"ksm\":\"on\",\"vcpu_pin\":\"off\"}");
    config_of(&d, "vcpu_pin=on", "{\"ksm\":\"off\",\"vcpu_pin\":\"on\"}");
    CHECK(hv_rdata_workload(&d, "site", "cpu", "custom") == 0);
    uint64_t st = sim_state(43, (uint64_t)rounds);
    for (int r = 1; r <= rounds; r++)
        for (size_t c = 0; c < 3; c++) {
            double f = c == 2 ? 1.03 : 1.0;
            value(&d, c, "site", "vm0", "site.score", true, r,
                  50 * f * (1 + 0.001 * sim_normal(&st)));
            value(&d, c, "site", "vm0", "site.seconds", false, r,
                  20 / f * (1 + 0.001 * sim_normal(&st)));
        }
    return report_of(&d);
}

static void test_one_round(void)
{
    json_t *r = oat_report(1);
    json_t *cmps = json_object_get(r, "comparisons");
    CHECK(json_array_size(cmps) == 4); /* a site benchmark: every metric is primary */
    size_t i;
    json_t *c;
    json_array_foreach(cmps, i, c)
    {
        CHECK_STR(json_string_value(json_object_get(c, "verdict")), "inconclusive");
        CHECK(json_integer_value(json_object_get(c, "more_rounds")) == 1);
        CHECK(json_is_string(json_object_get(c, "reason")) &&
              json_is_null(json_object_get(c, "pct")));
        CHECK(json_integer_value(json_object_get(c, "n")) == 1);
    }
    json_t *sum = json_array_get(json_object_get(r, "summaries"), 0);
    CHECK(json_is_null(json_object_get(sum, "interval")) &&
          json_is_null(json_object_get(sum, "sd")));
    json_t *row = json_array_get(json_object_get(r, "rows"), 0);
    CHECK(json_is_null(json_object_get(row, "ci95_low")) && num(row, "sd") == 0.0);
    CHECK(json_array_size(json_object_get(r, "recommendations")) == 0);
    CHECK(warned(r, "partial") && json_is_true(json_object_get(r, "partial")));
    json_t *rep =
        json_array_get(json_object_get(json_object_get(r, "repetitions"), "configurations"), 0);
    CHECK_STR(json_string_value(json_object_get(rep, "stop")), "running");
    char *md = hv_report_md(r), *csv = hv_report_csv(r);
    CHECK(md != NULL && csv != NULL);
    /* The answer: nothing decided, and what would give an interval. */
    json_t *lead = hv_report_lead(r);
    CHECK(json_array_size(lead) == 6);
    CHECK_STR(json_string_value(json_array_get(lead, 0)),
              "Recommended: nothing; no factor level is better than its default on a primary "
              "metric");
    CHECK_STR(json_string_value(json_array_get(lead, 1)),
              "Decided: 0 of 4 comparisons (0 better, 0 worse, 0 no effect); 4 inconclusive");
    CHECK_STR(json_string_value(json_array_get(lead, 2)),
              "Undecided: ksm=on on site score (site, guests): at least 1 more round needed for "
              "an interval");
    CHECK(json_equal(json_object_get(r, "answer"), lead));
    check_decided(r, 4, 0, 0, 0, 4);
    CHECK(md != NULL && strstr(md, "\n## Answer\n\n- Recommended: nothing") != NULL &&
          strstr(md, "## Answer") < strstr(md, "## Recommendations"));
    json_decref(lead);
    free(md);
    free(csv);
    json_decref(r);
}

static void test_one_at_a_time(void)
{
    json_t *r = oat_report(8);
    json_t *cmps = json_object_get(r, "comparisons");
    json_t *ksm = find(cmps, "factor", "ksm", "metric", "site.score");
    CHECK_STR(json_string_value(json_object_get(ksm, "verdict")), "no_effect");
    CHECK(json_integer_value(json_object_get(ksm, "cells")) == 1);
    json_t *secs = find(cmps, "factor", "vcpu_pin", "metric", "site.seconds");
    CHECK(num(secs, "pct") < -2.5 && num(secs, "pct") > -3.5);
    CHECK_STR(json_string_value(json_object_get(secs, "verdict")), "better"); /* lower is better */
    json_t *ign = json_object_get(r, "safe_to_ignore");
    CHECK(json_array_size(ign) == 1);
    CHECK_STR(json_string_value(json_object_get(json_array_get(ign, 0), "factor")), "ksm");
    json_t *rec = json_array_get(json_object_get(r, "recommendations"), 0);
    CHECK(json_array_size(json_object_get(r, "recommendations")) == 1);
    CHECK(json_array_size(json_object_get(rec, "gains")) == 2);
    CHECK_NEAR(num(rec, "gain_pct"), 3.0, 0.3);
    CHECK(json_array_size(json_object_get(r, "interactions")) == 0);
    /* "host": no host values, so no overhead and no efficiency. */
    CHECK(json_array_size(json_object_get(r, "overhead")) == 0);
    /* The answer: the recommendation with both gains, everything decided. */
    json_t *lead = hv_report_lead(r);
    CHECK(json_array_size(lead) == 2);
    const char *first = json_string_value(json_array_get(lead, 0));
    CHECK(first != NULL &&
          strncmp(first, "Recommended 1: vcpu_pin=on: site score in the guests +", 54) == 0 &&
          strstr(first, "; site seconds in the guests \xe2\x88\x92") != NULL);
    CHECK_STR(json_string_value(json_array_get(lead, 1)),
              "Decided: 4 of 4 comparisons (2 better, 0 worse, 2 no effect); 0 inconclusive");
    /* The report carries the same answer and its counts. */
    CHECK(json_equal(json_object_get(r, "answer"), lead));
    check_decided(r, 4, 2, 0, 2, 0);
    json_decref(lead);
    json_decref(r);
}

/* --- Holm: a level better on its own, not among eleven ------------------ */

static void test_holm(void)
{
    struct hv_rdata d;
    plan_of(&d,
            "{\"targets\":{\"host\":\"hv\"},\"design\":\"one-at-a-time\",\"factors\":"
            "{\"net_queues\":[\"1\",\"2\",\"3\",\"4\",\"5\",\"6\",\"7\",\"8\",\"9\",\"10\","
            "\"11\",\"12\"]}}",
            "done");
    /* Level 2's round ratios are 1.0287, 1.0213 and 1.025: paired, +2.5 %
     * with a t of about 7 on 2 df against the 1 % margin. */
    static const double base[] = {100, 100.5, 99.5}, other[] = {100.2, 99.7, 100.1},
                        ratio[] = {1.0287, 1.0213, 1.025};
    CHECK(hv_rdata_workload(&d, "site", "net", "custom") == 0);
    for (int q = 1; q <= 12; q++) {
        char name[32], levels[64];
        snprintf(name, sizeof name, q == 1 ? "default" : "net_queues=%d", q);
        snprintf(levels, sizeof levels, "{\"net_queues\":\"%d\"}", q);
        config_of(&d, name, levels);
        for (int r = 0; r < 3; r++)
            value(&d, (size_t)q - 1, "site", "vm0", "site.gbps", true, r + 1,
                  q == 1   ? base[r]
                  : q == 2 ? ratio[r] * base[r]
                           : other[r]);
    }
    json_t *rep = report_of(&d);
    CHECK(json_integer_value(json_object_get(json_object_get(rep, "family"), "comparisons")) == 11);
    json_t *c = find(json_object_get(rep, "comparisons"), "level", "2", NULL, NULL);
    CHECK_STR(json_string_value(json_object_get(c, "verdict")), "better");
    CHECK_STR(json_string_value(json_object_get(c, "family_verdict")), "inconclusive");
    CHECK(num(c, "p_margin") < 0.05 && num(c, "p_adjusted") > 0.05);
    const char *s = json_string_value(json_object_get(c, "sentence"));
    CHECK_MSG(s && strstr(s, "better on its own, but not after Holm's correction over 11 "
                             "comparisons"),
              "%s", s);
    CHECK(json_array_size(json_object_get(rep, "recommendations")) == 0);
    json_decref(rep);
}

/* --- Markdown and CSV ---------------------------------------------------- */

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s != '\0'; s++)
        n += *s == '\n';
    return n;
}

static void test_render(void)
{
    json_t *r = factorial_report();
    char *md = hv_report_md(r);
    CHECK(md != NULL && strstr(md, "# Report of plan 7: test (done)") == md);
    CHECK(strstr(md, "## Recommendations\n\n1. **vcpu_pin=on** (risk: low, disruption: live)"));
    CHECK(strstr(md, "Apply: `virsh vcpupin"));
    CHECK(strstr(md, "- cpu score in the guests: \xe2\x88\x92"
                     "10."));
    CHECK(strstr(md, "| cpu | guests | cpu.score | vcpu_pin=on | vcpu_pin=off | 6 | +"));
    CHECK(strstr(md, "### Per-run values"));
    char *csv = hv_report_csv(r);
    CHECK(csv != NULL && strncmp(csv, "section,configuration,against,level,", 36) == 0);
    /* header + 17 summaries + 102 runs + 2 comparisons + 1 interaction + 4 overheads
     * + 4 × (cpu + overall) efficiencies + 1 recommendation */
    CHECK_MSG(count_lines(csv) == 1 + 17 + 102 + 2 + 1 + 4 + 8 + 1, "%zu lines", count_lines(csv));
    CHECK(strstr(csv, "\r\ncomparison,,,vcpu_pin=on,cpu,,guests,cpu.score,score,true,,6,"));
    free(md);
    free(csv);
    json_decref(r);

    r = outlier_report();
    csv = hv_report_csv(r);
    CHECK(csv && strstr(csv, "\r\nsummary,default,,,cpu,'=evil,host,cpu.score,"));
    CHECK(csv && strstr(csv, ",outlier,"));
    free(csv);
    json_decref(r);
}

/* --- formats, the catalogue's risk levels, the plan's members ------------ */

static void test_text(void)
{
    char buf[64];
    CHECK_STR(hv_metric_label("disk.seq_write.mbps", buf, sizeof buf), "disk seq-write");
    CHECK_STR(hv_metric_label("cpu.score", buf, sizeof buf), "cpu score");
    CHECK_STR(hv_metric_label("net.rr.lat_p99_us", buf, sizeof buf), "net rr lat-p99-us");
    CHECK_STR(hv_fmt_change(buf, sizeof buf, -10.2, 1), "\xe2\x88\x92"
                                                        "10.2 %");
    CHECK_STR(hv_fmt_change(buf, sizeof buf, 5, 1), "+5.0 %");
    CHECK_STR(hv_fmt_change(buf, sizeof buf, -0.01, 1), "0.0 %");
    CHECK_STR(hv_fmt_change_interval(buf, sizeof buf, -12.94, -7.4, 1), "[\xe2\x88\x92"
                                                                        "12.9, \xe2\x88\x92"
                                                                        "7.4]");
    CHECK(hv_change_decimals(0.5, -0.3, 0.9) == 2 && hv_change_decimals(5, 1, 9) == 1);
}

static void test_risk_levels(void)
{
    CHECK_STR(hv_risk_level_name(HV_RISK_NONE), "none");
    CHECK_STR(hv_risk_level_name(HV_RISK_DATA_LOSS), "data-loss");
    CHECK_STR(hv_risk_level_name((enum hv_risk_level)99), "unknown");
    CHECK(hv_factor_find("disk_cache")->risk_level == HV_RISK_DATA_LOSS);
    CHECK(hv_factor_find("kvm_ept")->risk_level == HV_RISK_AVAILABILITY);
    CHECK(hv_factor_find("iothreads")->risk_level == HV_RISK_NONE);
    CHECK(HV_RISK_NONE < HV_RISK_LOW && HV_RISK_LOW < HV_RISK_DATA_LOSS &&
          HV_RISK_DATA_LOSS < HV_RISK_AVAILABILITY);
    json_t *cat = hv_factors_json();
    size_t i;
    json_t *f;
    json_array_foreach(cat, i, f)
    {
        CHECK_STR(json_string_value(json_object_get(f, "risk_level")),
                  hv_risk_level_name(hv_factor_at(i)->risk_level));
    }
    json_decref(cat);
}

/* The verdict of parsing a small plan with extra members. */
static enum hv_plan_verdict parse_with(const char *extra, json_t **errors)
{
    char text[512];
    snprintf(text, sizeof text,
             "{\"name\":\"p\",\"targets\":{\"host\":\"h\"},\"workloads\":[{\"id\":\"cpu\","
             "\"kind\":\"cpu\"}]%s}",
             extra);
    json_t *doc = check_json(text);
    *errors = json_array();
    struct hv_plan plan;
    enum hv_plan_verdict v = hv_plan_parse(doc, 1, NULL, &plan, *errors);
    if (v == HV_PLAN_VALID)
        hv_plan_free(&plan);
    json_decref(doc);
    return v;
}

static void test_plan_members(void)
{
    static const struct {
        const char *extra;
        enum hv_plan_verdict want;
        const char *path;
    } cases[] = {
        {",\"margin_pct\":2.5,\"weights\":{\"cpu\":2,\"net\":0}", HV_PLAN_VALID, NULL},
        {",\"margin_pct\":0.05", HV_PLAN_INVALID, "/margin_pct"},
        {",\"margin_pct\":51", HV_PLAN_INVALID, "/margin_pct"},
        {",\"margin_pct\":\"1\"", HV_PLAN_INVALID, "/margin_pct"},
        {",\"weights\":{\"gpu\":1}", HV_PLAN_INVALID, "/weights/gpu"},
        {",\"weights\":{\"cpu\":-1}", HV_PLAN_INVALID, "/weights/cpu"},
        {",\"weights\":{\"cpu\":0,\"disk\":0,\"net\":0}", HV_PLAN_INVALID, "/weights"},
        {",\"weights\":[1]", HV_PLAN_INVALID, "/weights"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *errors;
        enum hv_plan_verdict v = parse_with(cases[i].extra, &errors);
        CHECK_MSG(v == cases[i].want, "%s: verdict %d", cases[i].extra, (int)v);
        if (cases[i].path != NULL)
            CHECK_MSG(find(errors, "path", cases[i].path, NULL, NULL) != NULL, "%s: %s",
                      cases[i].extra, json_dumps(errors, JSON_COMPACT));
        json_decref(errors);
    }
}

/* The answer's words for comparisons that are not decided, each read from
 * the report: the rounds more_rounds estimates (past the plan's max, or
 * the cap), and a verdict Holm's correction withdrew. */
static void test_lead_undecided(void)
{
    json_t *r = json_loads(
        "{\"repetitions\":{\"max\":10},\"recommendations\":[],\"comparisons\":["
        "{\"factor\":\"ksm\",\"level\":\"on\",\"workload\":\"w\",\"side\":\"host\","
        "\"metric\":\"cpu.score\",\"n\":5,\"pct\":1.5,\"verdict\":\"inconclusive\","
        "\"family_verdict\":\"inconclusive\",\"more_rounds\":null,"
        "\"more_rounds_beyond_cap\":true},"
        "{\"factor\":\"vcpu_pin\",\"level\":\"on\",\"workload\":\"w\",\"side\":\"host\","
        "\"metric\":\"cpu.score\",\"n\":5,\"pct\":2.6,\"verdict\":\"inconclusive\","
        "\"family_verdict\":\"inconclusive\",\"more_rounds\":3},"
        "{\"factor\":\"thp\",\"level\":\"never\",\"workload\":\"w\",\"side\":\"host\","
        "\"metric\":\"disk.seq_read.mbps\",\"n\":5,\"pct\":2.6,\"verdict\":\"better\","
        "\"family_verdict\":\"inconclusive\",\"more_rounds\":null},"
        "{\"factor\":\"ksm\",\"level\":\"on\",\"workload\":\"w\",\"side\":\"host\","
        "\"metric\":\"disk.seq_read.mbps\",\"n\":5,\"pct\":2.6,\"verdict\":\"inconclusive\","
        "\"family_verdict\":\"inconclusive\",\"more_rounds\":17},"
        "{\"factor\":\"ksm\",\"level\":\"on\",\"family_verdict\":\"worse\"}]}",
        0, NULL);
    json_t *lead = hv_report_lead(r);
    static const char *const want[] = {
        "Recommended: nothing; no factor level is better than its default on a primary metric",
        "Decided: 1 of 5 comparisons (0 better, 1 worse, 0 no effect); 4 inconclusive",
        "Undecided: vcpu_pin=on on cpu score (w, host): about 3 more rounds would likely decide "
        "it",
        "Undecided: ksm=on on disk seq-read (w, host): about 17 more rounds would likely decide "
        "it, beyond the plan's max of 10 rounds",
        "Undecided: ksm=on on cpu score (w, host): more than 1000 further rounds would be needed",
        "Undecided: thp=never on disk seq-read (w, host): better on its own, not after Holm's "
        "correction over 5 comparisons",
    };
    CHECK(json_array_size(lead) == sizeof want / sizeof want[0]);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK_STR(json_string_value(json_array_get(lead, i)), want[i]);
    /* The counts of the "Decided:" line; a comparison without a verdict
     * counts as inconclusive. */
    struct hv_report_decided d = hv_report_decided(r);
    CHECK(d.comparisons == 5 && d.better == 0 && d.worse == 1 && d.no_effect == 0 &&
          d.inconclusive == 4);
    json_decref(lead);
    json_decref(r);
}

/* --- Paired rounds and the sequential look ------------------------------ */

/* A drift the rounds share (the host's load, ±10 %) hides a +5 % effect
 * from Welch; the paired comparison of complete rounds removes it. A
 * missing round makes the rounds incomplete: Welch again. */
static void test_paired(void)
{
    static const double drift[] = {100, 110, 95, 120, 104, 90};
    static const double noise[] = {1.004, 0.997, 1.002, 0.999, 1.001, 0.996};
    for (int missing = 0; missing < 2; missing++) {
        struct hv_rdata d;
        plan_of(&d,
                "{\"targets\":{\"host\":\"hv\"},\"factors\":{\"vcpu_pin\":[\"off\","
                "\"on\"]},\"repetitions\":{\"min\":3,\"max\":20,\"ci_pct\":2}}",
                "running");
        CHECK(hv_rdata_workload(&d, "cpu", "cpu", "hvload") == 0);
        config_of(&d, "default", "{\"vcpu_pin\":\"off\"}");
        config_of(&d, "vcpu_pin=on", "{\"vcpu_pin\":\"on\"}");
        for (int r = 0; r < 6; r++) {
            value(&d, 0, "cpu", "g1", "cpu.score", true, r + 1, drift[r]);
            if (!(missing && r == 2))
                value(&d, 1, "cpu", "g1", "cpu.score", true, r + 1, 1.05 * drift[r] * noise[r]);
        }
        json_t *rep = report_of(&d);
        json_t *c = json_array_get(json_object_get(rep, "comparisons"), 0);
        json_t *family = json_object_get(rep, "family");
        json_t *reps = json_object_get(rep, "repetitions");
        CHECK_STR(json_string_value(json_object_get(c, "analysis")), missing ? "welch" : "paired");
        CHECK_STR(json_string_value(json_object_get(c, "family_verdict")),
                  missing ? "inconclusive" : "better");
        if (!missing)
            CHECK(num(c, "lo_pct") > 4.0 && num(c, "hi_pct") < 6.0);
        /* The look: round 6 of 3..20, at the Pocock-type level (below the
         * fixed-sample 0.05, above a Bonferroni split over 18 looks). */
        CHECK(json_integer_value(json_object_get(family, "look")) == 6);
        CHECK_STR(json_string_value(json_object_get(family, "spending")), "pocock");
        CHECK(num(family, "look_level") > 0.05 / 18 && num(family, "look_level") < 0.05);
        CHECK_STR(json_string_value(json_object_get(reps, "rule")), "sequential");
        CHECK_STR(json_string_value(json_object_get(reps, "decision")),
                  missing ? "more" : "decided");
        json_decref(rep);
    }
}

int main(void)
{
    gsl_set_error_handler_off();
    test_factorial();
    test_efficiency();
    test_outliers();
    test_one_round();
    test_one_at_a_time();
    test_lead_undecided();
    test_holm();
    test_paired();
    test_render();
    test_text();
    test_risk_levels();
    test_plan_members();
    test_host_view();
    test_set_aside();
    /* SHOW_REPORT=md|csv|json prints the factorial's report to look at. */
    const char *show = getenv("SHOW_REPORT");
    if (show != NULL) {
        json_t *r = factorial_report();
        char *text = strcmp(show, "json") == 0  ? json_dumps(r, JSON_INDENT(1))
                     : strcmp(show, "csv") == 0 ? hv_report_csv(r)
                                                : hv_report_md(r);
        fputs(text, stdout);
        putchar('\n');
        free(text);
        json_decref(r);
    }
    return check_summary("test_report");
}
