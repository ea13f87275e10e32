/* tool_sysbench.c — the sysbench adapter: the cpu (primes) or memory
 * test with per-second reports; see tools.h. */
#include "worker/engines/tools.h"

#include "params.h"

#include <string.h>

/* Seconds a tool may take beyond the time it is asked to measure. */
#define SLACK 60.0

static int argv_sysbench(struct hv_tool_job *j)
{
    const json_t *p = j->params;
    const char *test = hv_params_str(p, "test");
    struct hv_tool_args *a = &j->args;
    hv_tool_arg(a, "sysbench");
    hv_tool_arg(a, "%s", test);
    hv_tool_arg(a, "--threads=%ld",
                hv_params_count(&hv_engine_def_cpu_sysbench, p, "threads", j->cpus));
    long long warm = hv_tool_whole_warmup(hv_params_num(p, "warmup"));
    j->warmup = (double)warm;
    /* The checkpoint report at the end of the warm-up resets sysbench's
     * counters: the final report covers the measured seconds only. */
    hv_tool_arg(a, "--time=%lld", warm + hv_tool_whole_seconds(hv_params_num(p, "seconds")));
    if (warm > 0)
        hv_tool_arg(a, "--report-checkpoints=%lld", warm);
    hv_tool_arg(a, "--report-interval=1");
    if (strcmp(test, "cpu") == 0)
        hv_tool_arg(a, "--cpu-max-prime=%lld", hv_params_int(p, "max_prime"));
    else
        hv_tool_arg(a, "--memory-total-size=0"); /* bounded by --time alone */
    hv_tool_arg(a, "run");
    j->timeout = j->warmup + hv_params_num(p, "seconds") + SLACK;
    return 0;
}

const struct hv_tool hv_tool_sysbench = {
    .display = "sysbench",
    .program = "sysbench",
    .version_flag = "--version",
    .argv = argv_sysbench,
};
