/* tool_iperf.c — the iperf 2 adapter: a client against an iperf 2 server
 * on the peer (tools_net.c starts it), CSV output with per-second
 * intervals; see tools.h. */
#include "worker/engines/tools.h"

#include "params.h"

/* Seconds a tool may take beyond the time it is asked to measure. */
#define SLACK 60.0

/* The job's warm-up and timeout. iperf 2 has no warm-up: it runs warmup +
 * seconds, and the first warmup seconds of its intervals are dropped from
 * the samples. */
static void set_times(struct hv_tool_job *j)
{
    j->warmup = (double)hv_tool_whole_warmup(hv_params_num(j->params, "warmup"));
    j->timeout = j->warmup + hv_params_num(j->params, "seconds") + SLACK;
}

/* What both sides end with: a report a second, the streams (iperf 2's
 * server exits after this many connections), the window when given. */
static void report_args(struct hv_tool_job *j)
{
    const json_t *p = j->params;
    struct hv_tool_args *a = &j->args;
    hv_tool_arg(a, "-i");
    hv_tool_arg(a, "1");
    hv_tool_arg(a, "-P");
    hv_tool_arg(a, "%lld", hv_params_int(p, "streams"));
    if (json_object_get(p, "window") != NULL) {
        hv_tool_arg(a, "-w");
        hv_tool_arg(a, "%lld", hv_params_int(p, "window"));
    }
}

static int argv_iperf(struct hv_tool_job *j)
{
    hv_tool_client_args(j);
    set_times(j);
    struct hv_tool_args *a = &j->args;
    hv_tool_arg(a, "-y");
    hv_tool_arg(a, "C");
    hv_tool_arg(a, "-t");
    hv_tool_arg(a, "%g", j->warmup + hv_params_num(j->params, "seconds"));
    report_args(j);
    return 0;
}

static int server_argv_iperf(struct hv_tool_job *j, int port)
{
    struct hv_tool_args *a = &j->args;
    hv_tool_arg(a, "iperf");
    hv_tool_arg(a, "-s");
    hv_tool_arg(a, "-p");
    hv_tool_arg(a, "%d", port);
    hv_tool_arg(a, "-y");
    hv_tool_arg(a, "C");
    report_args(j);
    set_times(j);
    return 0;
}

const struct hv_tool hv_tool_iperf = {
    .display = "iperf",
    .program = "iperf",
    .version_flag = "-v",
    .place = hv_tool_net_endpoint,
    .argv = argv_iperf,
    .server_argv = server_argv_iperf,
    .drop_warmup = true,
};
