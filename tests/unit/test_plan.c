/* test_plan.c — plan validation (every error with its JSON path and the
 * right status), normalisation, configurations, guests, sweeps and the
 * expansion into jobs and groups, including the example plans. */
#include "jspec.h"
#include "names.h"
#include "plan.h"
#include "plan_targets.h"

#include "check.h"
#include "plan_env.h"

#include <stdlib.h>

/* Parses text and returns the verdict; errors are left in *errors. */
static enum hv_plan_verdict parse(const char *text, struct hv_plan *plan, json_t **errors)
{
    json_error_t err;
    json_t *doc = json_loads(text, JSON_REJECT_DUPLICATES, &err);
    if (doc == NULL) {
        fprintf(stderr, "bad test JSON: %s: %s\n", text, err.text);
        exit(99);
    }
    *errors = json_array();
    enum hv_plan_verdict v = hv_plan_parse(doc, 12345, &plan_env, plan, *errors);
    json_decref(doc);
    return v;
}

/* Whether errors has an entry for path. */
static int has_path(const json_t *errors, const char *path)
{
    size_t i;
    const json_t *e;
    json_array_foreach(errors, i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "path")), path) == 0)
            return 1;
    }
    return 0;
}

#define CPU  "{\"id\":\"cpu\",\"kind\":\"cpu\"}"
#define BASE "\"name\":\"t\",\"targets\":{\"host\":\"h\"}"
#define GUESTS                                                                                     \
    "\"name\":\"t\",\"targets\":{\"host\":\"h\",\"guests\":{\"domains\":[\"g1\",\"g2\"]}}"
#define P(members)    "{" BASE "," members "}"
#define PG(members)   "{" GUESTS "," members "}"
#define WL(x)         "\"workloads\":[" x "]"
#define CPU_PARAMS(p) "{\"id\":\"c\",\"kind\":\"cpu\",\"params\":{" p "}}"
#define NET(p)        "{\"id\":\"n\",\"kind\":\"net\",\"params\":{" p "}}"
#define DISK(p)       "{\"id\":\"d\",\"kind\":\"disk\",\"params\":{" p "}}"

static const struct {
    const char *plan;
    enum hv_plan_verdict verdict;
    const char *paths[4]; /* each must be reported */
} bad[] = {
    /* 400: structure */
    {"[]", HV_PLAN_INVALID, {""}},
    {"{}", HV_PLAN_INVALID, {"/name", "/targets", "/workloads"}},
    {"{\"name\":7,\"targets\":{\"host\":\"h\"}," WL(CPU) "}", HV_PLAN_INVALID, {"/name"}},
    {"{\"name\":\"\""
     ",\"targets\":{\"host\":\"h\"}," WL(CPU) "}",
     HV_PLAN_INVALID,
     {}},
    {P(WL("")), HV_PLAN_INVALID, {"/workloads"}},
    {P("\"workloads\":{}"), HV_PLAN_INVALID, {"/workloads"}},
    {P(WL("{\"id\":\"a\",\"kind\":\"gpu\"}")), HV_PLAN_INVALID, {"/workloads/0/kind"}},
    {P(WL("{\"kind\":\"cpu\"}")), HV_PLAN_INVALID, {"/workloads/0/id"}},
    {P(WL("{\"id\":\"Bad Id\",\"kind\":\"cpu\"}")), HV_PLAN_INVALID, {"/workloads/0/id"}},
    {P(WL(CPU "," CPU)), HV_PLAN_INVALID, {"/workloads/1/id"}},
    {P(WL("7")), HV_PLAN_INVALID, {"/workloads/0"}},
    {P(WL(CPU) ",\"bogus\":1"), HV_PLAN_INVALID, {"/bogus"}},
    {P(WL(CPU) ",\"repetitions\":{\"min\":0}"), HV_PLAN_INVALID, {"/repetitions/min"}},
    {P(WL(CPU) ",\"repetitions\":{\"min\":5,\"max\":2}"), HV_PLAN_INVALID, {"/repetitions/max"}},
    {P(WL(CPU) ",\"repetitions\":{\"ci_pct\":0}"), HV_PLAN_INVALID, {"/repetitions/ci_pct"}},
    {P(WL(CPU) ",\"repetitions\":{\"min\":1.5}"), HV_PLAN_INVALID, {"/repetitions/min"}},
    {P(WL(CPU) ",\"repetitions\":[]"), HV_PLAN_INVALID, {"/repetitions"}},
    {P(WL(CPU) ",\"order\":\"shuffled\""), HV_PLAN_INVALID, {"/order"}},
    {P(WL(CPU) ",\"design\":\"fractional\""), HV_PLAN_INVALID, {"/design"}},
    {P(WL(CPU) ",\"concurrency\":\"some\""), HV_PLAN_INVALID, {"/concurrency"}},
    {P(WL(CPU) ",\"seed\":-1"), HV_PLAN_INVALID, {"/seed"}},
    {P(WL(CPU) ",\"seed\":\"x\""), HV_PLAN_INVALID, {"/seed"}},
    {P(WL(CPU_PARAMS("\"copies\":0"))), HV_PLAN_INVALID, {"/workloads/0/params/copies"}},
    {P(WL(CPU_PARAMS("\"copies\":\"all\""))), HV_PLAN_INVALID, {"/workloads/0/params/copies"}},
    {P(WL(CPU_PARAMS("\"seconds\":\"1 week\""))), HV_PLAN_INVALID, {"/workloads/0/params/seconds"}},
    {P(WL(CPU_PARAMS("\"seconds\":0.5"))), HV_PLAN_INVALID, {"/workloads/0/params/seconds"}},
    {P(WL(CPU_PARAMS("\"turbo\":true"))), HV_PLAN_INVALID, {"/workloads/0/params/turbo"}},
    /* What every worker would refuse is refused here: all I/O buffers of a
     * disk run (threads x qd x block) within 1 GiB. */
    {P(WL(DISK("\"threads\":256,\"qd\":1024,\"block\":\"64m\""))),
     HV_PLAN_INVALID,
     {"/workloads/0/params/qd"}},
    {P(WL(DISK("\"threads\":\"per-vcpu\",\"qd\":[1,1024],\"block\":\"2m\""))),
     HV_PLAN_INVALID,
     {"/workloads/0/params/qd"}},
    {P(WL(NET("\"peer\":\"g1\",\"mode\":\"rr\",\"reverse\":true"))),
     HV_PLAN_INVALID,
     {"/workloads/0/params/reverse"}},
    {P(WL("{\"id\":\"d\",\"kind\":\"disk\",\"params\":{\"block\":\"huge\"}}")),
     HV_PLAN_INVALID,
     {"/workloads/0/params/block"}},
    {P(WL("{\"id\":\"d\",\"kind\":\"disk\",\"params\":{\"size\":\"8q\"}}")),
     HV_PLAN_INVALID,
     {"/workloads/0/params/size"}},
    {P(WL("{\"id\":\"d\",\"kind\":\"disk\",\"params\":{\"ops\":[\"seq-fly\"]}}")),
     HV_PLAN_INVALID,
     {"/workloads/0/params/ops"}},
    {PG(WL(NET("\"peer\":\"host\",\"streams\":[1,1]"))),
     HV_PLAN_INVALID,
     {"/workloads/0/params/streams"}},
    {PG(WL(NET("\"peer\":\"host\",\"streams\":[]"))),
     HV_PLAN_INVALID,
     {"/workloads/0/params/streams"}},
    {PG(WL(NET("\"peer\":\"host\",\"window\":\"1x\""))),
     HV_PLAN_INVALID,
     {"/workloads/0/params/window"}},
    {"{\"name\":\"t\",\"targets\":{}," WL(CPU) "}", HV_PLAN_INVALID, {"/targets/host"}},
    {"{\"name\":\"t\",\"targets\":{\"host\":\"a/b\"}," WL(CPU) "}",
     HV_PLAN_INVALID,
     {"/targets/host"}},
    {"{\"name\":\"t\",\"targets\":{\"host\":\"h\",\"guests\":{}}," WL(CPU) "}",
     HV_PLAN_INVALID,
     {"/targets/guests"}},
    {"{\"name\":\"t\",\"targets\":{\"host\":\"h\",\"guests\":{\"domains\":[\"a\"],\"label\":\"x="
     "y\"}}," WL(CPU) "}",
     HV_PLAN_INVALID,
     {"/targets/guests"}},
    {"{\"name\":\"t\",\"targets\":{\"host\":\"h\",\"guests\":{\"domains\":[]}}," WL(CPU) "}",
     HV_PLAN_INVALID,
     {"/targets/guests/domains"}},
    {"{\"name\":\"t\",\"targets\":{\"host\":\"h\",\"guests\":{\"domains\":[\"a\",\"a\",3]}}," WL(
         CPU) "}",
     HV_PLAN_INVALID,
     {"/targets/guests/domains/1", "/targets/guests/domains/2"}},
    {"{\"name\":\"t\",\"targets\":{\"host\":\"h\",\"guests\":{\"label\":\"nolabel\"}}," WL(CPU) "}",
     HV_PLAN_INVALID,
     {"/targets/guests/label"}},
    {"{\"name\":\"t\",\"targets\":{\"host\":\"h\",\"guests\":{\"template\":{\"domain\":\"t\"}}}"
     "," WL(CPU) "}",
     HV_PLAN_INVALID,
     {"/targets/guests/template/count"}},
    {"{\"name\":\"t\",\"targets\":{\"host\":\"h\",\"guests\":{\"template\":{\"domain\":\"t\","
     "\"count\":999}}}," WL(CPU) "}",
     HV_PLAN_INVALID,
     {"/targets/guests/template/count"}},
    {P(WL(CPU) ",\"factors\":{\"vcpu_pin\":[]}"), HV_PLAN_INVALID, {"/factors/vcpu_pin"}},
    {P(WL(CPU) ",\"factors\":{\"vcpu_pin\":\"on\"}"), HV_PLAN_INVALID, {"/factors/vcpu_pin"}},
    {P(WL(CPU) ",\"factors\":{\"vcpu_pin\":[\"off\",\"off\"]}"),
     HV_PLAN_INVALID,
     {"/factors/vcpu_pin/1"}},
    {P(WL(CPU) ",\"factors\":{\"vcpu_pin\":[true]}"), HV_PLAN_INVALID, {"/factors/vcpu_pin/0"}},
    {P(WL(CPU) ",\"ramp\":{\"from\":0}"), HV_PLAN_INVALID, {"/ramp/from"}},
    {P(WL(CPU) ",\"repetitions\":{\"min\":1000},\"factors\":{\"halt_poll_ns\":[0,1000,2000,"
               "3000,4000,5000,6000,7000,8000,9000,10000,11000,12000,13000,14000,15000,16000,"
               "17000,18000,19000,20000,21000,22000,23000,24000,25000,26000,27000,28000,29000,"
               "30000,31000],\"thp\":[\"always\",\"never\",\"madvise\"],\"process_pin\":[\"off\","
               "\"on\"]}"),
     HV_PLAN_INVALID,
     {"/repetitions/max"}},
    /* tuning: names only, no paths out of /dev */
    {P(WL(CPU) ",\"tuning\":{\"disk\":\"/etc/passwd\"}"), HV_PLAN_INVALID, {"/tuning/disk"}},
    {P(WL(CPU) ",\"tuning\":{\"disk\":\"/dev/../etc/shadow\"}"), HV_PLAN_INVALID, {"/tuning/disk"}},
    {P(WL(CPU) ",\"tuning\":{\"disk\":\"../sda\"}"), HV_PLAN_INVALID, {"/tuning/disk"}},
    {P(WL(CPU) ",\"tuning\":{\"disk\":\"/dev//sda\"}"), HV_PLAN_INVALID, {"/tuning/disk"}},
    {P(WL(CPU) ",\"tuning\":{\"disk\":\"sda b\"}"), HV_PLAN_INVALID, {"/tuning/disk"}},
    {P(WL(CPU) ",\"tuning\":{\"disk\":\"..\"}"), HV_PLAN_INVALID, {"/tuning/disk"}},
    {P(WL(CPU) ",\"tuning\":{\"disk\":\"\"}"), HV_PLAN_INVALID, {"/tuning/disk"}},
    {P(WL(CPU) ",\"tuning\":{\"nic\":\"eth0:1\"}"), HV_PLAN_INVALID, {"/tuning/nic"}},
    {P(WL(CPU) ",\"tuning\":{\"nic\":\"../eth0\"}"), HV_PLAN_INVALID, {"/tuning/nic"}},
    {P(WL(CPU) ",\"tuning\":{\"nic\":\"a-very-long-nic0\"}"), HV_PLAN_INVALID, {"/tuning/nic"}},
    {P(WL(CPU) ",\"tuning\":{\"nic\":\".\"}"), HV_PLAN_INVALID, {"/tuning/nic"}},
    {P(WL(CPU) ",\"tuning\":{\"nic\":7,\"bridge\":\"br0\"}"),
     HV_PLAN_INVALID,
     {"/tuning/nic", "/tuning/bridge"}},
    {P(WL(CPU) ",\"tuning\":\"sda\""), HV_PLAN_INVALID, {"/tuning"}},
    /* 422: well formed, but cannot run here */
    {P(WL(CPU) ",\"factors\":{\"nic_mtu\":[1500,9000]}"), HV_PLAN_IMPOSSIBLE, {"/factors/nic_mtu"}},
    {P(WL(CPU) ",\"factors\":{\"io_scheduler\":[\"none\"],\"readahead_kb\":[128,4096]},"
               "\"tuning\":{\"nic\":\"eth1\"}"),
     HV_PLAN_IMPOSSIBLE,
     {"/factors/io_scheduler", "/factors/readahead_kb"}},
    {P(WL(CPU) ",\"factors\":{\"warp_drive\":[\"off\",\"on\"]}"),
     HV_PLAN_IMPOSSIBLE,
     {"/factors/warp_drive"}},
    {P(WL(CPU) ",\"factors\":{\"disk_cache\":[\"none\",\"turbo\"]}"),
     HV_PLAN_IMPOSSIBLE,
     {"/factors/disk_cache/1"}},
    {P(WL(CPU) ",\"factors\":{\"halt_poll_ns\":[0,99999999999]}"),
     HV_PLAN_IMPOSSIBLE,
     {"/factors/halt_poll_ns/1"}},
    {P(WL("{\"id\":\"x\",\"kind\":\"cpu\",\"engine\":\"spec2006\"}")),
     HV_PLAN_IMPOSSIBLE,
     {"/workloads/0/engine"}},
    {P(WL("{\"id\":\"x\",\"kind\":\"net\",\"engine\":\"fio\"}")),
     HV_PLAN_IMPOSSIBLE,
     {"/workloads/0/engine"}},
    {PG(WL(NET(""))), HV_PLAN_IMPOSSIBLE, {"/workloads/0/params/peer"}},
    {P(WL(NET("\"peer\":\"host\""))), HV_PLAN_IMPOSSIBLE, {"/workloads/0/params/peer"}},
    {PG(WL(NET("\"peer\":\"g1\""))), HV_PLAN_IMPOSSIBLE, {"/workloads/0/params/peer"}},
    {P(WL(CPU) ",\"concurrency\":\"all-guests\""), HV_PLAN_IMPOSSIBLE, {"/concurrency"}},
    {PG(WL(CPU) ",\"concurrency\":\"ramp\",\"ramp\":{\"to\":9}"), HV_PLAN_IMPOSSIBLE, {"/ramp/to"}},
    {PG(WL(CPU) ",\"concurrency\":\"ramp\",\"ramp\":{\"from\":2,\"to\":1}"),
     HV_PLAN_IMPOSSIBLE,
     {"/ramp/from"}},
    {PG(WL(CPU) ",\"ramp\":{\"to\":2}"), HV_PLAN_IMPOSSIBLE, {"/ramp"}},
    {P(WL(CPU) ",\"baseline\":\"vcpu_pin=on\""), HV_PLAN_IMPOSSIBLE, {"/baseline"}},
    {P(WL(CPU_PARAMS("\"pin\":true")) ",\"factors\":{\"process_pin\":[\"off\",\"on\"]}"),
     HV_PLAN_IMPOSSIBLE,
     {"/factors/process_pin", "/workloads/0/params/pin"}},
    {P(WL(CPU) ",\"factors\":{\"vcpu_pin\":[\"off\",\"on\"]}"),
     HV_PLAN_IMPOSSIBLE,
     {"/factors/vcpu_pin"}},
    {"{\"name\":\"t\",\"targets\":{\"host\":\"h\",\"guests\":{\"domains\":[\"h\"]}}," WL(CPU) "}",
     HV_PLAN_IMPOSSIBLE,
     {"/targets/guests"}},
    {"{\"name\":\"t\",\"targets\":{\"host\":\"h\",\"guests\":{\"label\":\"pool=empty\"}}," WL(
         CPU) "}",
     HV_PLAN_IMPOSSIBLE,
     {"/targets/guests/label"}},
    {"{\"name\":\"t\",\"targets\":{\"host\":\"h\",\"guests\":{\"label\":\"broken=1\"}}," WL(
         CPU) "}",
     HV_PLAN_IMPOSSIBLE,
     {"/targets/guests/label"}},
};

static void test_bad_plans(void)
{
    struct hv_plan plan;
    json_t *errors;
    size_t n = sizeof bad / sizeof bad[0];
    CHECK(n >= 40);
    for (size_t i = 0; i < n; i++) {
        enum hv_plan_verdict v = parse(bad[i].plan, &plan, &errors);
        CHECK(v == bad[i].verdict);
        if (v != bad[i].verdict)
            fprintf(stderr, "  plan %zu: verdict %d, expected %d: %s\n", i, v, bad[i].verdict,
                    json_dumps(errors, JSON_COMPACT));
        if (v == HV_PLAN_VALID)
            hv_plan_free(&plan);
        CHECK(json_array_size(errors) > 0 || v == HV_PLAN_VALID);
        for (size_t k = 0; k < 4 && bad[i].paths[k] != NULL; k++) {
            int found = has_path(errors, bad[i].paths[k]);
            CHECK(found);
            if (!found)
                fprintf(stderr, "  plan %zu: no error at '%s' in %s\n", i, bad[i].paths[k],
                        json_dumps(errors, JSON_COMPACT));
        }
        json_decref(errors);
    }
    /* "{}" reports all three missing members at once. */
    parse("{}", &plan, &errors);
    CHECK(json_array_size(errors) == 3);
    json_decref(errors);
}

static void test_normalisation(void)
{
    struct hv_plan plan;
    json_t *errors;
    CHECK(parse(P(WL("{\"id\":\"cpu\",\"kind\":\"cpu\",\"params\":{\"seconds\":\"2m\",\"copies\":"
                     "\"per-vcpu\"}},{\"id\":\"cpu2\",\"kind\":\"cpu\"}") ",\"repetitions\":{"
                                                                          "\"min\":4}"),
                &plan, &errors) == HV_PLAN_VALID);
    CHECK(json_array_size(errors) == 0);
    json_decref(errors);
    CHECK_STR(plan.name, "t");
    CHECK_STR(plan.host, "h");
    CHECK(plan.n_workloads == 2 && plan.n_configs == 1 && plan.n_guests == 0);
    CHECK_STR(plan.configs[0].name, "default");
    CHECK_STR(plan.workloads[0].engine, "builtin");
    CHECK_NEAR(json_number_value(json_object_get(plan.workloads[0].params, "seconds")), 120.0, 0);
    CHECK_NEAR(json_number_value(json_object_get(plan.workloads[1].params, "seconds")), 10.0, 0);
    CHECK(json_integer_value(json_object_get(plan.workloads[1].params, "copies")) == 1);
    CHECK(plan.rep_min == 4 && plan.rep_max == 4);
    CHECK_NEAR(plan.ci_pct, 2.0, 0);
    CHECK(plan.randomized);
    CHECK(plan.seed == (12345 >> 11));
    CHECK_STR(json_string_value(json_object_get(plan.doc, "order")), "randomized");
    CHECK_STR(json_string_value(json_object_get(plan.doc, "baseline")), "host");
    CHECK(!plan.host_baseline);

    /* 1 config x 2 workloads x 4 repetitions on the host; each round holds
     * every workload once; run_order is 0..7. */
    struct hv_expansion x;
    CHECK(hv_plan_expand(&plan, &x) == 0);
    CHECK(x.n_jobs == 8 && x.n_groups == 0);
    for (size_t r = 0; r < 4; r++) {
        CHECK(x.jobs[2 * r].repetition == (int)r + 1);
        CHECK(x.jobs[2 * r].workload != x.jobs[2 * r + 1].workload);
    }
    for (size_t i = 0; i < x.n_jobs; i++) {
        CHECK(x.jobs[i].run_order == (int)i);
        CHECK_STR(x.jobs[i].target, "h");
        CHECK(x.jobs[i].group == -1 && x.jobs[i].role == NULL);
    }
    /* The same seed gives the same order. */
    struct hv_expansion again;
    hv_plan_expand(&plan, &again);
    CHECK(again.n_jobs == x.n_jobs && memcmp(again.jobs, x.jobs, x.n_jobs * sizeof *x.jobs) == 0);
    hv_expansion_free(&again);
    hv_expansion_free(&x);
    hv_plan_free(&plan);

    /* A recorded seed is kept; sequential order is as written. */
    CHECK(parse(P(WL(CPU ",{\"id\":\"b\",\"kind\":\"cpu\"}") ",\"order\":\"sequential\","
                                                             "\"seed\":99"),
                &plan, &errors) == HV_PLAN_VALID);
    json_decref(errors);
    CHECK(plan.seed == 99 && !plan.randomized);
    hv_plan_expand(&plan, &x);
    CHECK(x.n_jobs == 6 && x.jobs[0].workload == 0 && x.jobs[1].workload == 1);
    hv_expansion_free(&x);
    hv_plan_free(&plan);
}

static void test_factors(void)
{
    struct hv_plan plan;
    json_t *errors;
    /* full: 2 x 3 = 6 configurations, named by their non-default levels,
     * factors in name order. */
    CHECK(parse(PG(WL(CPU) ",\"factors\":{\"vcpu_pin\":[\"off\",\"on\"],\"disk_cache\":[\"none\","
                           "\"writeback\",\"writethrough\"]}"),
                &plan, &errors) == HV_PLAN_VALID);
    CHECK(plan.n_configs == 6);
    CHECK_STR(plan.configs[0].name, "default");
    CHECK_STR(plan.configs[1].name, "vcpu_pin=on");
    CHECK_STR(plan.configs[2].name, "disk_cache=writeback");
    CHECK_STR(plan.configs[5].name, "disk_cache=writethrough,vcpu_pin=on");
    CHECK_STR(json_string_value(json_object_get(plan.configs[5].levels, "disk_cache")),
              "writethrough");
    CHECK_STR(json_string_value(json_object_get(plan.configs[0].levels, "vcpu_pin")), "off");
    json_decref(errors);
    hv_plan_free(&plan);
    /* one-at-a-time: 1 + 1 + 2 = 4; a numeric level is normalised. */
    CHECK(parse(PG(WL(CPU) ",\"design\":\"one-at-a-time\",\"factors\":{\"vcpu_pin\":[\"off\","
                           "\"on\"],\"halt_poll_ns\":[200000,0,\"50000\"]}"),
                &plan, &errors) == HV_PLAN_VALID);
    CHECK(plan.n_configs == 4);
    CHECK_STR(plan.configs[1].name, "halt_poll_ns=0");
    CHECK_STR(plan.configs[2].name, "halt_poll_ns=50000");
    CHECK_STR(plan.configs[3].name, "vcpu_pin=on");
    CHECK_STR(json_string_value(json_object_get(plan.configs[0].levels, "halt_poll_ns")), "200000");
    json_decref(errors);
    hv_plan_free(&plan);
    /* process_pin with a CPU workload that leaves the engine's pin alone. */
    CHECK(parse(P(WL(CPU_PARAMS("\"copies\":1")) ",\"factors\":{\"process_pin\":[\"off\",\"on\"]}"),
                &plan, &errors) == HV_PLAN_VALID);
    json_decref(errors);
    hv_plan_free(&plan);
    /* A configuration may be the baseline. */
    CHECK(parse(PG(WL(CPU) ",\"baseline\":\"vcpu_pin=on\",\"factors\":{\"vcpu_pin\":[\"off\","
                           "\"on\"]}"),
                &plan, &errors) == HV_PLAN_VALID);
    json_decref(errors);
    hv_plan_free(&plan);
}

/* tuning.disk and tuning.nic: accepted names, kept in the stored plan, and
 * what a factor that needs one says. */
static void test_tuning(void)
{
    static const char *const good[] = {
        P(WL(CPU) ",\"tuning\":{\"disk\":\"/dev/sdb\",\"nic\":\"eth1\"},\"factors\":{"
                  "\"nic_mtu\":[1500,9000],\"io_scheduler\":[\"none\",\"mq-deadline\"]}"),
        P(WL(CPU) ",\"tuning\":{\"disk\":\"sdb\"},\"factors\":{\"readahead_kb\":[128,4096]}"),
        P(WL(CPU) ",\"tuning\":{\"disk\":\"nvme0n1p2\"}"),
        P(WL(CPU) ",\"tuning\":{\"disk\":\"/dev/disk/by-id/ata-QEMU_HARDDISK_QM00001\"}"),
        P(WL(CPU) ",\"tuning\":{\"disk\":\"/dev/mapper/vg0-lv.img\"}"),
        P(WL(CPU) ",\"tuning\":{\"nic\":\"enp0s31f6\"}"),
        P(WL(CPU) ",\"tuning\":{\"nic\":\"br-lan.100\"}"),
        P(WL(CPU) ",\"tuning\":{}"),
    };
    struct hv_plan plan;
    json_t *errors;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        enum hv_plan_verdict v = parse(good[i], &plan, &errors);
        CHECK(v == HV_PLAN_VALID);
        if (v != HV_PLAN_VALID) {
            fprintf(stderr, "  tuning plan %zu: %s\n", i, json_dumps(errors, JSON_COMPACT));
        } else {
            CHECK(json_is_object(json_object_get(plan.doc, "tuning")));
            hv_plan_free(&plan);
        }
        json_decref(errors);
    }
    CHECK(parse(good[0], &plan, &errors) == HV_PLAN_VALID);
    const json_t *t = json_object_get(plan.doc, "tuning");
    CHECK_STR(json_string_value(json_object_get(t, "disk")), "/dev/sdb");
    CHECK_STR(json_string_value(json_object_get(t, "nic")), "eth1");
    hv_plan_free(&plan);
    json_decref(errors);

    /* The message says what to add. */
    CHECK(parse(P(WL(CPU) ",\"factors\":{\"nic_mtu\":[1500,9000]}"), &plan, &errors) ==
          HV_PLAN_IMPOSSIBLE);
    CHECK(json_array_size(errors) == 1);
    const char *msg = json_string_value(json_object_get(json_array_get(errors, 0), "message"));
    CHECK(msg != NULL && strstr(msg, "add \"tuning\": {\"nic\": \"eth1\"}") != NULL);
    json_decref(errors);
    CHECK(parse(P(WL(CPU) ",\"factors\":{\"readahead_kb\":[128,4096]}"), &plan, &errors) ==
          HV_PLAN_IMPOSSIBLE);
    msg = json_string_value(json_object_get(json_array_get(errors, 0), "message"));
    CHECK(msg != NULL && strstr(msg, "add \"tuning\": {\"disk\": \"/dev/sdb\"}") != NULL);
    json_decref(errors);
}

static void test_guests(void)
{
    struct hv_plan plan;
    json_t *errors;
    struct hv_expansion x;
    /* one-guest with a host baseline: per round 1 host job + 2 guest jobs. */
    CHECK(parse(PG(WL(CPU) ",\"repetitions\":{\"min\":2}"), &plan, &errors) == HV_PLAN_VALID);
    CHECK(plan.n_guests == 2 && plan.host_baseline);
    hv_plan_expand(&plan, &x);
    CHECK(x.n_jobs == 6 && x.n_groups == 0);
    int on_host = 0;
    for (size_t i = 0; i < x.n_jobs; i++)
        on_host += strcmp(x.jobs[i].target, "h") == 0;
    CHECK(on_host == 2);
    hv_expansion_free(&x);
    json_decref(errors);
    hv_plan_free(&plan);

    /* all-guests: each round = host job + one group of 2 guests. */
    CHECK(parse(PG(WL(CPU) ",\"concurrency\":\"all-guests\",\"repetitions\":{\"min\":3}"), &plan,
                &errors) == HV_PLAN_VALID);
    hv_plan_expand(&plan, &x);
    CHECK(x.n_jobs == 9 && x.n_groups == 3);
    for (size_t g = 0; g < x.n_groups; g++)
        CHECK(x.group_sizes[g] == 2);
    hv_expansion_free(&x);
    json_decref(errors);
    hv_plan_free(&plan);

    /* template guests are named prefix + "p{plan}-" + i (the server puts the
     * plan's id in). */
    CHECK(parse("{\"name\":\"t\",\"targets\":{\"host\":\"h\",\"guests\":{\"template\":{\"domain\":"
                "\"tmpl\",\"count\":3}}},\"factors\":{\"vcpu_pin\":[\"off\"]}," WL(CPU) "}",
                &plan, &errors) == HV_PLAN_VALID);
    CHECK(plan.n_guests == 3);
    CHECK_STR(plan.guests[0], "tmpl-p{plan}-1");
    CHECK_STR(plan.guests[2], "tmpl-p{plan}-3");
    json_decref(errors);
    hv_plan_free(&plan);
    /* without factors no apply step would make the clones */
    CHECK(parse("{\"name\":\"t\",\"targets\":{\"host\":\"h\",\"guests\":{\"template\":{\"domain\":"
                "\"tmpl\",\"count\":3}}}," WL(CPU) "}",
                &plan, &errors) == HV_PLAN_INVALID);
    char *text = json_dumps(errors, 0);
    CHECK(text != NULL && strstr(text, "needs factors") != NULL);
    free(text);
    json_decref(errors);

    /* Label guests come from the environment; a plan without a resolver
     * (local validation) keeps them unresolved. */
    CHECK(parse("{\"name\":\"t\",\"targets\":{\"host\":\"h\",\"guests\":{\"label\":"
                "\"pool=net-bench\"}}," WL(CPU) "}",
                &plan, &errors) == HV_PLAN_VALID);
    CHECK(plan.n_guests == 8);
    CHECK_STR(plan.guests[7], "nb8");
    json_decref(errors);
    hv_plan_free(&plan);

    /* Guest names repeat across hosts: the environment names the host's
     * own guests (plan_env.h: "fleet1/vm0"), the jobs follow. */
    CHECK(parse("{\"name\":\"t\",\"targets\":{\"host\":\"fleet1\",\"guests\":{\"domains\":"
                "[\"vm0\",\"vm1\"]}}," WL(CPU) "}",
                &plan, &errors) == HV_PLAN_VALID);
    CHECK(plan.n_guests == 2);
    CHECK_STR(plan.guests[0], "fleet1/vm0");
    CHECK_STR(plan.guests[1], "fleet1/vm1");
    hv_plan_expand(&plan, &x);
    int on_vm0 = 0;
    on_host = 0;
    for (size_t i = 0; i < x.n_jobs; i++) {
        on_vm0 += strcmp(x.jobs[i].target, "fleet1/vm0") == 0;
        on_host += strcmp(x.jobs[i].target, "fleet1") == 0;
    }
    CHECK(on_vm0 > 0 && on_vm0 == on_host && (size_t)on_vm0 * 3 == x.n_jobs);
    hv_expansion_free(&x);
    json_decref(errors);
    hv_plan_free(&plan);
}

static void test_net_ramp_sweep(void)
{
    struct hv_plan plan;
    json_t *errors;
    struct hv_expansion x;
    /* streams [1, 8] sweeps into two variants; ramp 1..2 guests; the peer
     * (the host) serves, so the host has no baseline job for it. */
    CHECK(parse(PG(WL(NET(
                    "\"peer\":\"host\",\"streams\":[1,8],\"window\":\"256k\"")) ","
                                                                                "\"concurrency\":"
                                                                                "\"ramp\","
                                                                                "\"repetitions\":{"
                                                                                "\"min\":1}"),
                &plan, &errors) == HV_PLAN_VALID);
    if (json_array_size(errors))
        fprintf(stderr, "%s\n", json_dumps(errors, JSON_COMPACT));
    CHECK(plan.n_workloads == 2);
    CHECK_STR(plan.workloads[0].id, "n[streams=1]");
    CHECK_STR(plan.workloads[1].id, "n[streams=8]");
    CHECK_STR(plan.workloads[1].base_id, "n");
    CHECK_STR(plan.workloads[0].peer, "h");
    CHECK(json_integer_value(json_object_get(plan.workloads[1].params, "streams")) == 8);
    CHECK(json_integer_value(json_object_get(plan.workloads[1].params, "window")) == 262144);
    CHECK(plan.ramp_from == 1 && plan.ramp_to == 2);
    /* The stored plan keeps the sweep as a list. */
    json_t *stored = json_object_get(
        json_object_get(json_array_get(json_object_get(plan.doc, "workloads"), 0), "params"),
        "streams");
    CHECK(json_array_size(stored) == 2);
    hv_plan_expand(&plan, &x);
    /* 2 variants x ramp {1, 2}: groups of 1+1 and 2+1 (clients + server). */
    CHECK(x.n_groups == 4);
    CHECK(x.n_jobs == 2 * (2 + 3));
    int servers = 0;
    for (size_t i = 0; i < x.n_jobs; i++) {
        CHECK(x.jobs[i].group >= 0);
        if (x.jobs[i].role && strcmp(x.jobs[i].role, "server") == 0) {
            servers++;
            CHECK_STR(x.jobs[i].target, "h");
            /* The server comes first in its group. */
            CHECK(i + 1 < x.n_jobs && x.jobs[i + 1].group == x.jobs[i].group);
        }
    }
    CHECK(servers == 4);
    hv_expansion_free(&x);
    json_decref(errors);
    hv_plan_free(&plan);
}

/* Loads an example plan and checks its expansion counts. */
static void check_example(const char *file, size_t configs, size_t workloads, size_t guests,
                          size_t jobs, size_t groups)
{
    json_error_t jerr;
    json_t *doc = json_load_file(file, JSON_REJECT_DUPLICATES, &jerr);
    CHECK(doc != NULL);
    if (doc == NULL) {
        fprintf(stderr, "  %s: %s\n", file, jerr.text);
        return;
    }
    json_t *errors = json_array();
    struct hv_plan plan;
    enum hv_plan_verdict v = hv_plan_parse(doc, 1, &plan_env, &plan, errors);
    CHECK(v == HV_PLAN_VALID);
    if (v != HV_PLAN_VALID) {
        fprintf(stderr, "  %s: %s\n", file, json_dumps(errors, JSON_COMPACT));
    } else {
        struct hv_expansion x;
        hv_plan_expand(&plan, &x);
        CHECK(plan.n_configs == configs);
        CHECK(plan.n_workloads == workloads);
        CHECK(plan.n_guests == guests);
        CHECK(x.n_jobs == jobs);
        CHECK(x.n_groups == groups);
        if (plan.n_configs != configs || plan.n_workloads != workloads || plan.n_guests != guests ||
            x.n_jobs != jobs || x.n_groups != groups)
            fprintf(stderr, "  %s: %zu configs, %zu workloads, %zu guests, %zu jobs, %zu groups\n",
                    file, plan.n_configs, plan.n_workloads, plan.n_guests, x.n_jobs, x.n_groups);
        hv_expansion_free(&x);
        hv_plan_free(&plan);
    }
    json_decref(errors);
    json_decref(doc);
}

/* A label that picks registered guests: one whose domain is not
 * host-safe. */
static int odd_guests(void *arg, const char *host, const json_t *selector, json_t **names)
{
    (void)arg, (void)host, (void)selector;
    *names = json_pack("[s, s]", "hv01/vm0", "hv01/a b");
    return 0;
}

/* Strings that are not host-safe names (names.h), each at every place of
 * a plan that reaches a host: refused with the rule at its path. */
static void test_host_names(void)
{
    static const char *const hostile[] = {
        "x</name><foo/>",
        "a<b",
        "a&b",
        "a\\\"b",
        "a'b",
        "a init=/bin/sh ",
        "../x",
        "a/b",
        "a\\nb",
        "a\\u0000b",
        "\\uff48\\uff56"
        "01",
        "vm\\u0430",
        "-x",
        ".x",
        "a..b",
        "",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    };
    /* each place: the plan with %s for the string, and the path */
    static const struct {
        const char *plan, *path;
    } places[] = {
        {"{\"name\":\"t\",\"targets\":{\"host\":\"%s\"}," WL(CPU) "}", "/targets/host"},
        {"{\"name\":\"t\",\"targets\":{\"host\":\"h\",\"guests\":{\"domains\":[\"g1\",\"%s\"]}}"
         "," WL(CPU) "}",
         "/targets/guests/domains/1"},
        {"{\"name\":\"t\",\"targets\":{\"host\":\"h\",\"guests\":{\"template\":{\"domain\":"
         "\"%s\",\"count\":2}}},\"factors\":{\"vcpu_pin\":[\"off\"]}," WL(CPU) "}",
         "/targets/guests/template/domain"},
        {"{\"name\":\"t\",\"targets\":{\"host\":\"h\",\"guests\":{\"template\":{\"domain\":"
         "\"tmpl\",\"count\":2,\"prefix\":\"%s\"}}},\"factors\":{\"vcpu_pin\":[\"off\"]}," WL(
             CPU) "}",
         "/targets/guests/template/prefix"},
        {P(WL(CPU) ",\"hooks\":{\"after_host\":{\"local\":\"%s\"}}"), "/hooks/after_host/local"},
        {P(WL(
             "{\"id\":\"c\",\"kind\":\"cpu\",\"engine\":\"custom\",\"params\":{\"name\":\"%s\"}}")),
         "/workloads/0/params/name"},
        {P(WL(CPU) ",\"factors\":{\"site.%s\":[\"a\"]}"), NULL},
    };
    char text[2048], path[300];
    for (size_t p = 0; p < sizeof places / sizeof places[0]; p++)
        for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
            /* the prefix is at most 100 characters anyway; an empty
             * local hook or site factor key reads differently */
            if ((strlen(hostile[i]) > 100 && p == 3) ||
                (strstr(hostile[i], "u0000") != NULL && places[p].path == NULL))
                continue; /* a NUL in a member's name: the server's parser refuses it */
            const char *at = strstr(places[p].plan, "%s");
            snprintf(text, sizeof text, "%.*s%s%s", (int)(at - places[p].plan), places[p].plan,
                     hostile[i], at + 2);
            json_t *doc = json_loads(text, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
            CHECK_MSG(doc != NULL, "test JSON %s", text);
            json_t *errors = json_array();
            struct hv_plan plan;
            enum hv_plan_verdict v = hv_plan_parse(doc, 1, &plan_env, &plan, errors);
            if (places[p].path != NULL) {
                snprintf(path, sizeof path, "%s", places[p].path);
            } else { /* a site factor: its own path */
                const char *key;
                json_t *l;
                json_object_foreach(json_object_get(doc, "factors"), key, l)
                    hv_jpath(path, sizeof path, "/factors", key);
            }
            CHECK_MSG(v == HV_PLAN_INVALID, "%s: verdict %d", text, v);
            CHECK_MSG(has_path(errors, path), "%s: no error at %s in %s", text, path,
                      json_dumps(errors, JSON_COMPACT));
            char *dump = json_dumps(errors, JSON_COMPACT);
            CHECK_MSG(dump != NULL && (strstr(dump, "host-safe name") != NULL ||
                                       strstr(dump, "must use only") != NULL ||
                                       strstr(dump, "at most") != NULL ||
                                       strstr(dump, "must not contain NUL") != NULL ||
                                       strstr(dump, "must not be empty") != NULL),
                      "%s: %s", text, dump);
            free(dump);
            if (v == HV_PLAN_VALID)
                hv_plan_free(&plan);
            json_decref(errors);
            json_decref(doc);
        }

    /* The clone names a prefix makes are host-safe with the longest plan
     * id too: 100 characters of prefix and 256 clones fit in 128. */
    char prefix[101];
    memset(prefix, 'a', 100);
    prefix[100] = '\0';
    snprintf(text, sizeof text,
             "{\"name\":\"t\",\"targets\":{\"host\":\"h\",\"guests\":{\"template\":{\"domain\":"
             "\"tmpl\",\"count\":256,\"prefix\":\"%s\"}}},\"factors\":{\"vcpu_pin\":[\"off\"]}," WL(
                 CPU) "}",
             prefix);
    json_t *errors;
    struct hv_plan plan;
    CHECK(parse(text, &plan, &errors) == HV_PLAN_VALID);
    char name[300], *dumped;
    CHECK(hv_plan_clone_name(name, sizeof name, prefix, HV_PLAN_ID_LONGEST, 256) == 0);
    CHECK(strlen(name) <= HV_NAME_HOST_MAX && hv_name_host_ok(name));
    CHECK_STR(plan.guests[255],
              "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
              "aaaaaaaaaaaaaaaaaaaaaaaap{plan}-256");
    hv_plan_free(&plan);
    json_decref(errors);
    /* A guest a label picks must have a host-safe domain (422: the plan
     * is well formed, the registered name is not). */
    struct hv_plan_env odd = {odd_guests, NULL, NULL, NULL};
    json_t *doc =
        json_pack("{s:s, s:{s:s, s:{s:s}}, s:[{s:s, s:s}]}", "name", "t", "targets", "host", "h",
                  "guests", "label", "pool=x", "workloads", "id", "c", "kind", "cpu");
    errors = json_array();
    CHECK(hv_plan_parse(doc, 1, &odd, &plan, errors) == HV_PLAN_IMPOSSIBLE);
    CHECK(has_path(errors, "/targets/guests/label"));
    dumped = json_dumps(errors, 0);
    CHECK_MSG(dumped != NULL && strstr(dumped, "hv01/a b") != NULL &&
                  strstr(dumped, "host-safe name") != NULL,
              "%s", dumped);
    free(dumped);
    json_decref(errors);
    json_decref(doc);
    /* Names as examples and docs write them pass. */
    CHECK(parse("{\"name\":\"any name, even <this>\",\"targets\":{\"host\":\"hv-01.lab:a@b+c\","
                "\"guests\":{\"domains\":[\"vm_1\",\"Guest.2\"]}}," WL(CPU) "}",
                &plan, &errors) == HV_PLAN_VALID);
    hv_plan_free(&plan);
    json_decref(errors);
}

/* Duplicate ids are found in one pass, and past the workload limit only
 * the limit is looked at; errors stop at HV_PLAN_MAX_ERRORS and one more
 * counts the rest. */
static void test_big_plans(void)
{
    json_t *doc =
        json_pack("{s:s, s:{s:s}, s:[]}", "name", "big", "targets", "host", "h", "workloads");
    json_t *list = json_object_get(doc, "workloads");
    for (int i = 0; i < 40; i++)
        json_array_append_new(list,
                              json_pack("{s:s, s:s}", "id", i % 2 ? "a" : "b", "kind", "cpu"));
    json_t *errors = json_array();
    struct hv_plan plan;
    CHECK(hv_plan_parse(doc, 1, NULL, &plan, errors) == HV_PLAN_INVALID);
    CHECK_MSG(json_array_size(errors) == 38, "%zu errors", json_array_size(errors));
    const json_t *e = json_array_get(errors, 37);
    CHECK_STR(json_string_value(json_object_get(e, "path")), "/workloads/39/id");
    CHECK_STR(json_string_value(json_object_get(e, "message")), "repeats the id of /workloads/1");
    json_decref(errors);

    /* 20,000 workloads, each with a problem of its own */
    json_array_clear(list);
    for (int i = 0; i < 20000; i++)
        json_array_append_new(list, json_pack("{s:s, s:s, s:{s:i}}", "id", "Bad Id", "kind", "cpu",
                                              "params", "nosuch", 1));
    errors = json_array();
    CHECK(hv_plan_parse(doc, 1, NULL, &plan, errors) == HV_PLAN_INVALID);
    CHECK_MSG(json_array_size(errors) == HV_PLAN_MAX_ERRORS + 1, "%zu errors",
              json_array_size(errors));
    CHECK(has_path(errors, "/workloads"));
    e = json_array_get(errors, HV_PLAN_MAX_ERRORS);
    CHECK_STR(json_string_value(json_object_get(e, "path")), "");
    const char *msg = json_string_value(json_object_get(e, "message"));
    CHECK_MSG(msg != NULL && strstr(msg, "more problems: only the first 50 are listed") != NULL,
              "%s", msg);
    json_decref(errors);
    json_decref(doc);
}

/* The noise treatment of a plan that does not say is the server's default
 * (repeat unless it says keep); a plan's own word wins. */
static void test_noise_default(void)
{
    static const char *const cases[][3] = {
        /* env default, plan's noise ("" none), expected */
        {"", "", "repeat"},           {"keep", "", "keep"}, {"repeat", "", "repeat"},
        {"keep", "repeat", "repeat"}, {"", "keep", "keep"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct hv_plan_env env = plan_env;
        env.noise_default = cases[i][0][0] ? cases[i][0] : NULL;
        json_t *doc =
            json_pack("{s:s, s:{s:s}, s:[{s:s, s:s, s:s}]}", "name", "n", "targets", "host", "h",
                      "workloads", "id", "c", "kind", "cpu", "engine", "builtin");
        if (cases[i][1][0])
            json_object_set_new(doc, "noise", json_string(cases[i][1]));
        json_t *errors = json_array();
        struct hv_plan plan;
        enum hv_plan_verdict v = hv_plan_parse(doc, 1, &env, &plan, errors);
        CHECK_MSG(v == HV_PLAN_VALID, "case %zu: %s", i, json_dumps(errors, 0));
        if (v == HV_PLAN_VALID) {
            CHECK_STR(json_string_value(json_object_get(plan.doc, "noise")), cases[i][2]);
            hv_plan_free(&plan);
        }
        json_decref(errors);
        json_decref(doc);
    }
}

int main(void)
{
    test_bad_plans();
    test_host_names();
    test_big_plans();
    test_normalisation();
    test_noise_default();
    test_factors();
    test_tuning();
    test_guests();
    test_net_ramp_sweep();
    /* quick: 1 config, 1 workload, host only, 3 repetitions. */
    check_example("examples/quick.json", 1, 1, 0, 3, 0);
    /* CPU pinning x EPT: 4 configs, 8 guests all at once + the host
     * baseline (config default only): per round 4 groups of 8 + 1 host job;
     * 3 rounds. */
    check_example("examples/cpu-pinning-ept.json", 4, 1, 8, 3 * (4 * 8 + 1), 3 * 4);
    /* iozone-like: 3 cache modes, 8 template guests together + host. */
    check_example("examples/disk-iozone.json", 3, 1, 8, 3 * (3 * 8 + 1), 3 * 3);
    /* network ramp: 2 vhost levels x 2 stream variants x ramp 1..8: groups
     * of k clients + 1 server; the host serves, so no host baseline. */
    check_example("examples/net-ramp.json", 2, 2, 8, 3 * 2 * 2 * (36 + 8), 3 * 2 * 2 * 8);
    return check_summary("test_plan");
}
