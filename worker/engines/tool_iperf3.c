/* tool_iperf3.c — the iperf3 adapter: a client against an iperf3 server
 * on the peer (tools_net.c starts it), JSON output on both sides; see
 * tools.h. */
#include "worker/engines/tools.h"

#include "params.h"

/* Seconds a tool may take beyond the time it is asked to measure. */
#define SLACK 60.0

static int argv_iperf3(struct hv_tool_job *j)
{
    const json_t *p = j->params;
    hv_tool_client_args(j);
    struct hv_tool_args *a = &j->args;
    hv_tool_arg(a, "-J");
    hv_tool_arg(a, "-t");
    hv_tool_arg(a, "%lld", hv_tool_whole_seconds(hv_params_num(p, "seconds")));
    j->warmup = (double)hv_tool_whole_warmup(hv_params_num(p, "warmup"));
    if (j->warmup > 0) {
        hv_tool_arg(a, "--omit");
        hv_tool_arg(a, "%lld", (long long)j->warmup);
    }
    hv_tool_arg(a, "-P");
    hv_tool_arg(a, "%lld", hv_params_int(p, "streams"));
    if (json_object_get(p, "window") != NULL) {
        hv_tool_arg(a, "-w");
        hv_tool_arg(a, "%lld", hv_params_int(p, "window"));
    }
    if (hv_params_bool(p, "reverse"))
        hv_tool_arg(a, "-R");
    if (hv_params_bool(p, "udp")) {
        hv_tool_arg(a, "-u");
        hv_tool_arg(a, "-b"); /* iperf3's UDP default is 1 Mbit/s: measure, do not pace */
        hv_tool_arg(a, "0");
    }
    hv_tool_arg(a, "--connect-timeout");
    hv_tool_arg(a, "10000");
    j->timeout = j->warmup + hv_params_num(p, "seconds") + SLACK;
    return 0;
}

static int server_argv_iperf3(struct hv_tool_job *j, int port)
{
    struct hv_tool_args *a = &j->args;
    hv_tool_arg(a, "iperf3");
    hv_tool_arg(a, "-s");
    hv_tool_arg(a, "-1"); /* one test, then exit */
    hv_tool_arg(a, "-p");
    hv_tool_arg(a, "%d", port);
    hv_tool_arg(a, "-J");
    /* The client sends the omit time: the server leaves it out too. */
    j->warmup = (double)hv_tool_whole_warmup(hv_params_num(j->params, "warmup"));
    j->timeout = j->warmup + hv_params_num(j->params, "seconds") + SLACK;
    return 0;
}

const struct hv_tool hv_tool_iperf3 = {
    .display = "iperf3",
    .program = "iperf3",
    .version_flag = "--version",
    .place = hv_tool_net_endpoint,
    .argv = argv_iperf3,
    .server_argv = server_argv_iperf3,
};
