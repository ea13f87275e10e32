/* test_telemetry.c — the host telemetry's readers: /proc/stat's cpu line
 * and its percentages, /proc/loadavg, a domain stats record's counters
 * (hand-made typed parameters, then the libvirt test driver, which needs
 * no daemon). */
#include "worker/telemetry.h"

#include <libvirt/libvirt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/unit/check.h"

static bool near(double a, double b)
{
    return fabs(a - b) < 1e-9;
}

static void test_proc_stat(void)
{
    struct hv_cpu_times a, b;
    const char *t0 = "cpu  100 0 50 800 10 0 0 40 0 0\ncpu0 50 0 25 400 5 0 0 20 0 0\nintr 1\n";
    const char *t1 = "intr 1\ncpu  160 20 70 1000 30 5 5 60 0 0\ncpu0 1 1 1 1\n";
    CHECK_SAY(hv_cpu_times_parse(t0, &a) == 0, "the cpu line parses");
    CHECK_SAY(a.user == 100 && a.system == 50 && a.idle == 800 && a.iowait == 10 && a.steal == 40,
              "its fields: user %llu system %llu idle %llu iowait %llu steal %llu", a.user,
              a.system, a.idle, a.iowait, a.steal);
    CHECK_SAY(hv_cpu_times_parse(t1, &b) == 0, "a cpu line after other lines is found");
    double user, sys, iowait, steal;
    /* Deltas: user 60 + nice 20, system 20 + irq 5 + softirq 5, idle 200,
     * iowait 20, steal 20: 350 ticks. */
    CHECK_SAY(hv_cpu_times_pct(&a, &b, &user, &sys, &iowait, &steal) == 0, "percentages computed");
    CHECK_SAY(near(user, 8000.0 / 350) && near(sys, 3000.0 / 350) && near(iowait, 2000.0 / 350) &&
                  near(steal, 2000.0 / 350),
              "user %.3f system %.3f iowait %.3f steal %.3f (of 350 ticks)", user, sys, iowait,
              steal);
    CHECK_SAY(hv_cpu_times_pct(&b, &b, &user, &sys, &iowait, &steal) == -1, "no tick passed: -1");
    struct hv_cpu_times old;
    CHECK_SAY(hv_cpu_times_parse("cpu  1 2 3 4\n", &old) == 0 && old.idle == 4 && old.steal == 0,
              "an old kernel's four fields parse, the rest count 0");
    CHECK_SAY(hv_cpu_times_parse("cpu0 1 2 3 4\nintr 5\n", &old) == -1, "no aggregate line: -1");
    CHECK_SAY(hv_cpu_times_parse("cpu  1 2\n", &old) == -1, "too few fields: -1");

    char dir[] = "/tmp/hv-tel-XXXXXX";
    CHECK_SAY(mkdtemp(dir) != NULL, "temporary folder");
    char path[128];
    snprintf(path, sizeof path, "%s/stat", dir);
    FILE *f = fopen(path, "w");
    fputs(t0, f);
    fclose(f);
    struct hv_cpu_times r;
    CHECK_SAY(hv_cpu_times_read(path, &r) == 0 && r.user == 100, "read from a file");
    unlink(path);
    CHECK_SAY(hv_cpu_times_read(path, &r) == -1, "a missing file: -1");
    snprintf(path, sizeof path, "%s/loadavg", dir);
    f = fopen(path, "w");
    fputs("1.25 0.50 0.10 2/345 6789\n", f);
    fclose(f);
    double load1 = 0;
    CHECK_SAY(hv_loadavg_read(path, &load1) == 0 && near(load1, 1.25), "load1 1.25 (%g)", load1);
    unlink(path);
    rmdir(dir);
    CHECK_SAY(hv_loadavg_read("/proc/loadavg", &load1) == 0 && load1 >= 0,
              "this machine's load1 reads (%g)", load1);
    CHECK_SAY(hv_cpu_times_read("/proc/stat", &r) == 0 && r.user + r.system + r.idle > 0,
              "this machine's /proc/stat reads");
}

static void set_ull(virTypedParameter *p, const char *field, unsigned long long v)
{
    memset(p, 0, sizeof *p);
    snprintf(p->field, sizeof p->field, "%s", field);
    p->type = VIR_TYPED_PARAM_ULLONG;
    p->value.ul = v;
}

static void test_record(void)
{
    virTypedParameter p[16];
    int n = 0;
    set_ull(&p[n++], "cpu.time", 5000000000ULL);
    set_ull(&p[n++], "block.count", 2);
    set_ull(&p[n++], "block.0.rd.bytes", 1000);
    set_ull(&p[n++], "block.1.rd.bytes", 24);
    set_ull(&p[n++], "block.0.wr.bytes", 2048);
    set_ull(&p[n++], "block.0.rd.reqs", 3);
    set_ull(&p[n++], "block.1.wr.reqs", 4);
    set_ull(&p[n++], "block.0.rd.times", 99999);
    set_ull(&p[n++], "net.count", 1);
    set_ull(&p[n++], "net.0.rx.bytes", 700);
    set_ull(&p[n++], "net.0.tx.bytes", 800);
    set_ull(&p[n++], "net.0.rx.drop", 5);
    set_ull(&p[n++], "net.0.tx.drop", 6);
    memset(&p[n], 0, sizeof p[n]);
    snprintf(p[n].field, sizeof p[n].field, "block.0.name");
    p[n].type = VIR_TYPED_PARAM_STRING;
    p[n++].value.s = (char *)"vda";
    struct hv_dom_stats s = {0};
    hv_dom_stats_from_params(p, n, &s);
    CHECK_SAY(s.have_cpu && s.cpu_ns == 5000000000ULL, "cpu.time");
    CHECK_SAY(s.rd_bytes == 1024 && s.wr_bytes == 2048,
              "block bytes summed over disks (%llu, %llu)", s.rd_bytes, s.wr_bytes);
    CHECK_SAY(s.rd_reqs == 3 && s.wr_reqs == 4, "block requests (%llu, %llu)", s.rd_reqs,
              s.wr_reqs);
    CHECK_SAY(s.rx_bytes == 700 && s.tx_bytes == 800 && s.rx_drops == 5 && s.tx_drops == 6,
              "interface bytes and drops");
    CHECK_SAY(s.have_block && s.have_net, "block and interface counters were present");
    struct hv_dom_stats cpu_only = {0};
    hv_dom_stats_from_params(p, 1, &cpu_only);
    CHECK_SAY(cpu_only.have_cpu && !cpu_only.have_block && !cpu_only.have_net,
              "a record with cpu.time only has no block or interface counters");

    /* The test driver's one running domain, "test". */
    struct hv_dom_stats *list = NULL;
    size_t count = 0;
    char err[512] = "";
    int rc = hv_dom_stats_collect("test:///default", &list, &count, err, sizeof err);
    CHECK_SAY(rc == 0, "stats of test:///default (%s)", err);
    bool found = false;
    for (size_t i = 0; i < count; i++)
        if (strcmp(list[i].name, "test") == 0) {
            found = true;
            CHECK_SAY(strlen(list[i].uuid) == 36, "its uuid %s", list[i].uuid);
            /* The test driver gives no cpu.time (it implements only some
             * stats groups): what it gives must read as zero, not fail. */
            CHECK_SAY(list[i].cpu_ns == 0 || list[i].have_cpu, "cpu.time %s (%llu ns)",
                      list[i].have_cpu ? "present" : "absent, as the test driver gives it",
                      list[i].cpu_ns);
            CHECK_SAY(!list[i].have_block && !list[i].have_net,
                      "no block or interface counters: the test driver gives none");
        }
    CHECK_SAY(found, "domain \"test\" among %zu records", count);
    free(list);
    rc = hv_dom_stats_collect("nosuchdriver:///nowhere", &list, &count, err, sizeof err);
    CHECK_SAY(rc == -1 && strstr(err, "nosuchdriver") != NULL, "a bad URI fails with a reason: %s",
              err);
}

/* The end of a guest job's reading: the job's domain's values, not the
 * other domain's, nor the summary ("mixed"); host factors as read. */
static void test_reading(void)
{
    json_t *end = json_loads(
        "{\"vcpu_pin\": {\"level\": \"on\", \"read_back\": \"mixed\", \"source\": \"aff\","
        "  \"detail\": {\"vm1\": {\"read_back\": \"on\", \"source\": \"aff of vm1\"},"
        "             \"vm2\": {\"read_back\": \"custom\", \"source\": \"aff of vm2\"}}},"
        " \"thp\": {\"level\": \"never\", \"read_back\": \"never\", \"source\": \"/sys/thp\","
        "  \"detail\": {\"text\": \"always madvise [never]\"}}}",
        0, NULL);
    json_t *r = hv_telemetry_reading(end, "vm1", "vcpu_pin=on: vm2 reads back custom");
    char *text = json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS);
    CHECK_SAY(strcmp(text, "{\"settings\":{\"thp\":{\"level\":\"never\",\"read_back\":\"never\","
                           "\"source\":\"/sys/thp\"},\"vcpu_pin\":{\"level\":\"on\",\"read_back\":"
                           "\"on\",\"source\":\"aff of vm1\"}}}") == 0,
              "vm1's reading alone, nothing changed: %s", text);
    free(text);
    json_decref(r);

    r = hv_telemetry_reading(end, "vm2", "");
    const char *changed = json_string_value(json_object_get(r, "settings_changed"));
    CHECK_SAY(changed != NULL &&
                  strcmp(changed, "vcpu_pin=on: vm2 reads back custom (aff of vm2)") == 0,
              "vm2's level moved, named with its domain: %s", changed ? changed : "(none)");
    CHECK_SAY(json_object_get(r, "settings_missing") == NULL, "and nothing is missing");
    json_decref(r);

    json_object_set_new(json_object_get(end, "thp"), "read_back", json_string("always"));
    json_object_set_new(
        json_object_get(json_object_get(json_object_get(end, "vcpu_pin"), "detail"), "vm2"),
        "read_back", json_null());
    json_object_set_new(
        json_object_get(json_object_get(json_object_get(end, "vcpu_pin"), "detail"), "vm2"),
        "error", json_string("vm2 is not running"));
    r = hv_telemetry_reading(end, "vm2", "");
    changed = json_string_value(json_object_get(r, "settings_changed"));
    CHECK_SAY(changed != NULL && strcmp(changed, "thp=never: reads back always (/sys/thp)") == 0,
              "a host level that moved: %s", changed ? changed : "(none)");
    CHECK_SAY(json_object_get(json_object_get(r, "settings"), "vcpu_pin") == NULL,
              "a level not read is left out of settings");
    json_decref(r);

    json_object_set_new(json_object_get(end, "thp"), "read_back", json_string("never"));
    r = hv_telemetry_reading(end, "vm2", "");
    const char *missing = json_string_value(json_object_get(r, "settings_missing"));
    CHECK_SAY(missing != NULL && strcmp(missing, "vcpu_pin: vm2 is not running") == 0 &&
                  json_object_get(r, "settings_changed") == NULL,
              "a level that could not be read is missing, not changed: %s",
              missing ? missing : "(none)");
    json_decref(r);
    json_decref(end);

    r = hv_telemetry_reading(NULL, "vm1", "cannot open libvirt");
    missing = json_string_value(json_object_get(r, "settings_missing"));
    CHECK_SAY(missing != NULL && strcmp(missing, "cannot open libvirt") == 0,
              "nothing read: missing, with the reason: %s", missing ? missing : "(none)");
    json_decref(r);
}

int main(void)
{
    test_proc_stat();
    test_record();
    test_reading();
    return check_summary("telemetry");
}
