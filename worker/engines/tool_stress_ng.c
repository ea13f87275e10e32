/* tool_stress_ng.c — the stress-ng adapter: one stressor with
 * --metrics, its YAML report read; see tools.h. */
#include "worker/engines/tools.h"

#include "params.h"

#include <stdio.h>
#include <string.h>

/* Seconds a tool may take beyond the time it is asked to measure. */
#define SLACK 60.0

/* A directory of its own to run in and write its report to. */
static int place_stress_ng(struct hv_tool_job *j)
{
    if (hv_tool_make_tmpdir(j, "stress-ng") != 0)
        return -1;
    int w = snprintf(j->outfile, sizeof j->outfile, "%s/report.yaml", j->tmpdir);
    if (w < 0 || (size_t)w >= sizeof j->outfile)
        return hv_engine_fail(j->out, "the scratch directory's path is too long");
    memcpy(j->cwd, j->tmpdir, sizeof j->cwd);
    return 0;
}

static int argv_stress_ng(struct hv_tool_job *j)
{
    const json_t *p = j->params;
    struct hv_tool_args *a = &j->args;
    hv_tool_arg(a, "stress-ng");
    hv_tool_arg(a, "--%s", hv_params_str(p, "stressor"));
    hv_tool_arg(a, "%ld", hv_params_count(&hv_engine_def_cpu_stress_ng, p, "workers", j->cpus));
    hv_tool_arg(a, "--timeout");
    hv_tool_arg(a, "%llds", hv_tool_whole_seconds(hv_params_num(p, "seconds")));
    hv_tool_arg(a, "--metrics");
    hv_tool_arg(a, "--temp-path");
    hv_tool_arg(a, "%s", j->tmpdir);
    hv_tool_arg(a, "--yaml");
    hv_tool_arg(a, "%s", j->outfile);
    j->timeout = hv_params_num(p, "seconds") + SLACK;
    return 0;
}

const struct hv_tool hv_tool_stress_ng = {
    .display = "stress-ng",
    .program = "stress-ng",
    .version_flag = "--version",
    .place = place_stress_ng,
    .argv = argv_stress_ng,
    .no_samples = "stress-ng reports only totals",
};
