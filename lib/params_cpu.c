/* params_cpu.c — the cpu engines and their parameters: the built-in
 * kernel suite, sysbench and stress-ng; see params.h. */
#include "params.h"

static const struct hv_param_def cpu_builtin_params[] = {
    {.name = "copies",
     .type = HV_PARAM_INT,
     .def = "1",
     .min = 1,
     .max = 1024,
     .word = "per-vcpu",
     .description = "parallel copies of the kernel suite; \"per-vcpu\": one per CPU of the target"},
    {.name = "seconds",
     .type = HV_PARAM_DURATION,
     .def = "10",
     .min = 1,
     .max = 86400,
     .description = "how long each copy runs"},
    {.name = "pin", .type = HV_PARAM_BOOL, .def = "false", .description = "pin copy i to CPU i"},
    {0},
};

static const char *const cpu_builtin_metrics[] = {"cpu.score", NULL};

const struct hv_engine_def hv_engine_def_cpu_builtin = {
    .kind = "cpu",
    .engine = "builtin",
    .summary = "self-checking integer, floating point, memory and branch kernels",
    .metrics = cpu_builtin_metrics,
    .params_def = cpu_builtin_params,
};

static const char *const sysbench_tests[] = {"cpu", "memory", NULL};

static const struct hv_param_def cpu_sysbench_params[] = {
    {.name = "test",
     .type = HV_PARAM_ENUM,
     .def = "\"cpu\"",
     .choices = sysbench_tests,
     .description = "sysbench test name"},
    {.name = "threads",
     .type = HV_PARAM_INT,
     .def = "1",
     .min = 1,
     .max = 1024,
     .word = "per-vcpu",
     .description = "sysbench --threads; \"per-vcpu\": one per CPU of the target"},
    {.name = "seconds",
     .type = HV_PARAM_DURATION,
     .def = "10",
     .min = 1,
     .max = 86400,
     .description = "sysbench --time"},
    {.name = "max_prime",
     .type = HV_PARAM_INT,
     .def = "20000",
     .min = 3,
     .max = 100000000,
     .description = "sysbench --cpu-max-prime (test cpu)"},
    {.name = "warmup",
     .type = HV_PARAM_DURATION,
     .def = "2",
     .min = 0,
     .max = 3600,
     .description = "whole seconds run before the measured time, not counted (sysbench "
                    "--report-checkpoints, --time warmup + seconds)"},
    {0},
};

/* By test, in the order of its choices. */
static const char *const sysbench_metrics[] = {"cpu.sysbench.events_per_s", "mem.sysbench.mbps",
                                               NULL};

const struct hv_engine_def hv_engine_def_cpu_sysbench = {
    .kind = "cpu",
    .engine = "sysbench",
    .summary = "sysbench cpu (primes) or memory test: events or MiB per second",
    .metrics = sysbench_metrics,
    .external = true,
    .params_def = cpu_sysbench_params,
};

static const char *const stressors[] = {"cpu", "matrix", "vm", "cache", "memcpy", NULL};

static const struct hv_param_def cpu_stress_ng_params[] = {
    {.name = "stressor",
     .type = HV_PARAM_ENUM,
     .def = "\"cpu\"",
     .choices = stressors,
     .description = "the stressor, run as stress-ng --STRESSOR N --metrics"},
    {.name = "workers",
     .type = HV_PARAM_INT,
     .def = "1",
     .min = 0,
     .max = 1024,
     .word = "per-vcpu",
     .description = "stressor instances (0: stress-ng's one per online CPU); \"per-vcpu\": one "
                    "per CPU of the target"},
    {.name = "seconds",
     .type = HV_PARAM_DURATION,
     .def = "10",
     .min = 1,
     .max = 86400,
     .description = "stress-ng --timeout"},
    {0},
};

/* By stressor, in the order of its choices (lib/parse_stressng.c). */
static const char *const stress_ng_metrics[] = {
    "cpu.stressng.cpu.bogo_ops_per_s",    "cpu.stressng.matrix.bogo_ops_per_s",
    "cpu.stressng.vm.bogo_ops_per_s",     "cpu.stressng.cache.bogo_ops_per_s",
    "cpu.stressng.memcpy.bogo_ops_per_s", NULL};

const struct hv_engine_def hv_engine_def_cpu_stress_ng = {
    .kind = "cpu",
    .engine = "stress-ng",
    .summary = "one stress-ng stressor with --metrics: bogo ops per second",
    .metrics = stress_ng_metrics,
    .external = true,
    .params_def = cpu_stress_ng_params,
};

const struct hv_engine_def *const hv_engine_defs_cpu[] = {
    &hv_engine_def_cpu_builtin, &hv_engine_def_cpu_sysbench, &hv_engine_def_cpu_stress_ng, NULL};
