/* params_cpu.c — the built-in cpu engine and its parameters: the
 * self-checking kernel suite; see params.h. The cpu tools are described
 * with their parsers (lib/tools.def). */
#include "params.h"

static const struct hv_param_def cpu_builtin_params[] = {
    {.name = "copies",
     .type = HV_PARAM_INT,
     .def = "1",
     .min = 1,
     .max = 1024,
     .word = "per-vcpu",
     .description = "parallel copies of the kernel suite; \"per-vcpu\": one per CPU of the target"},
    HV_PARAM_SECONDS("how long each copy runs"),
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

const struct hv_engine_def *const hv_engine_defs_cpu[] = {&hv_engine_def_cpu_builtin, NULL};
