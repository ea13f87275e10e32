/* params_custom.c — the site benchmarks: cpu/custom, disk/custom and
 * net/custom, which a plan names and never commands; see params.h. */
#include "params.h"

#include "names.h"

/* A custom benchmark is a name the worker looks up in what its
 * administrator declared (e.g. a file of that name in a directory), so it
 * must not be able to name anything else: a host-safe name (names.h),
 * lower case. The worker checks it again with this same table before it
 * looks the name up. */
const char *hv_params_bench_name_error(const char *s)
{
    static const char msg[] = "must use only a-z, 0-9, '_', '.' and '-', and not start with '.'";
    if (s[0] == '.')
        return msg;
    for (const char *p = s; *p != '\0'; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' ||
              *p == '-'))
            return msg;
    return hv_name_host_ok(s) ? NULL : HV_NAME_HOST_RULE;
}

/* A plan may only name a site benchmark; the command line stays with the
 * worker's administrator, so no member here may carry arguments. */
static const struct hv_param_def custom_params[] = {
    {.name = "name",
     .type = HV_PARAM_STRING,
     .required = true,
     .max_len = 64,
     .format = hv_params_bench_name_error,
     .description = "the site benchmark, as the worker's administrator declared it"},
    {0},
};

#define CUSTOM_SUMMARY                                                                             \
    "a site benchmark the worker's administrator declared; a plan names it, never a command"

const struct hv_engine_def hv_engine_def_cpu_custom = {
    .kind = "cpu",
    .engine = "custom",
    .summary = CUSTOM_SUMMARY,
    .external = true,
    .params_def = custom_params,
};

const struct hv_engine_def hv_engine_def_disk_custom = {
    .kind = "disk",
    .engine = "custom",
    .summary = CUSTOM_SUMMARY,
    .external = true,
    .params_def = custom_params,
};

const struct hv_engine_def hv_engine_def_net_custom = {
    .kind = "net",
    .engine = "custom",
    .summary = CUSTOM_SUMMARY,
    .external = true,
    .params_def = custom_params,
};

const struct hv_engine_def *const hv_engine_defs_custom[] = {
    &hv_engine_def_cpu_custom, &hv_engine_def_disk_custom, &hv_engine_def_net_custom, NULL};
