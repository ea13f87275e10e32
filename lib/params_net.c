/* params_net.c — the net engines and their parameters: the built-in
 * iperf-like engine, iperf3 and iperf 2; see params.h. */
#include "params.h"

#include "errors.h"
#include "jspec.h"

#include <string.h>

#define KIB 1024.0
#define MIB (1024.0 * KIB)

/* Rows shared by the net engines. */
#define PEER                                                                                       \
    {                                                                                              \
        .name = "peer", .type = HV_PARAM_TARGET, .max_len = 128,                                   \
        .description = "the target that runs the server side; \"host\" is the plan's host; "       \
                       "a plan without one cannot run (422)"                                       \
    }
#define NET_STREAMS                                                                                \
    {                                                                                              \
        .name = "streams", .type = HV_PARAM_INT, .def = "1", .min = 1, .max = 128,                 \
        .description = "parallel TCP connections (iperf -P)"                                       \
    }
#define NET_WINDOW                                                                                 \
    {                                                                                              \
        .name = "window", .type = HV_PARAM_SIZE, .min = 4 * KIB, .max = 64 * MIB,                  \
        .description = "socket buffer size at both ends (iperf -w); absent: the system's "         \
                       "autotuning"                                                                \
    }
#define NET_SECONDS                                                                                \
    {                                                                                              \
        .name = "seconds", .type = HV_PARAM_DURATION, .def = "10", .min = 1, .max = 3600,          \
        .description = "measured time (iperf -t)"                                                  \
    }
static const char *const net_modes[] = {"stream", "rr", NULL};

static const struct hv_param_def net_builtin_params[] = {
    PEER,
    {.name = "mode",
     .type = HV_PARAM_ENUM,
     .def = "\"stream\"",
     .choices = net_modes,
     .description = "stream: TCP throughput; rr: request/response latency"},
    NET_STREAMS,
    NET_WINDOW,
    NET_SECONDS,
    {.name = "msg_size",
     .type = HV_PARAM_SIZE,
     .def = "\"128k\"",
     .min = 1,
     .max = MIB,
     .description = "bytes per send (stream, iperf -l) or per request and response (rr: 1 is "
                    "the classic)"},
    {.name = "reverse",
     .type = HV_PARAM_BOOL,
     .def = "false",
     .description = "the peer sends, the target receives (iperf3 -R)"},
    {.name = "warmup",
     .type = HV_PARAM_DURATION,
     .def = "2",
     .min = 0,
     .max = 3600,
     .description = "untimed traffic before measuring, past TCP slow start"},
    {0},
};

static const char *const sweep_streams[] = {"streams", NULL};

/* An rr transaction goes both ways: reverse means nothing there. */
static int cross_net_builtin(const struct hv_engine_def *e, const json_t *params, const char *path,
                             json_t *errors)
{
    (void)e;
    if (!hv_params_bool(params, "reverse") || strcmp(hv_params_str(params, "mode"), "rr") != 0)
        return 0;
    char p[512];
    hv_jpath(p, sizeof p, path, "reverse");
    hv_errors_add(errors, p, "applies to mode stream only (an rr transaction goes both ways)");
    return 1;
}

static const char *const net_builtin_metrics[] = {"net.tcp.gbps", "net.rr.tps", NULL};

const struct hv_engine_def hv_engine_def_net_builtin = {
    .kind = "net",
    .engine = "builtin",
    .summary = "iperf-like TCP stream throughput and request/response latency",
    .metrics = net_builtin_metrics,
    .cross = cross_net_builtin,
    .sweepable = sweep_streams,
    .needs_peer = true,
    .params_def = net_builtin_params,
};

static const struct hv_param_def net_iperf3_params[] = {
    PEER,
    NET_STREAMS,
    NET_WINDOW,
    NET_SECONDS,
    {.name = "reverse",
     .type = HV_PARAM_BOOL,
     .def = "false",
     .description = "the peer sends, the target receives (iperf3 -R)"},
    {.name = "udp",
     .type = HV_PARAM_BOOL,
     .def = "false",
     .description = "UDP instead of TCP (iperf3 -u)"},
    {.name = "warmup",
     .type = HV_PARAM_DURATION,
     .def = "2",
     .min = 0,
     .max = 3600,
     .description = "untimed traffic before the measured time, whole seconds (iperf3 --omit)"},
    {0},
};

static const char *const iperf3_metrics[] = {"net.tcp.gbps", "net.udp.gbps", NULL};

const struct hv_engine_def hv_engine_def_net_iperf3 = {
    .kind = "net",
    .engine = "iperf3",
    .summary = "iperf3 client against an iperf3 server on the peer, JSON output",
    .metrics = iperf3_metrics,
    .sweepable = sweep_streams,
    .needs_peer = true,
    .external = true,
    .params_def = net_iperf3_params,
};

static const struct hv_param_def net_iperf_params[] = {
    PEER,
    NET_STREAMS,
    NET_WINDOW,
    NET_SECONDS,
    {.name = "warmup",
     .type = HV_PARAM_DURATION,
     .def = "2",
     .min = 0,
     .max = 3600,
     .description = "whole seconds of traffic before the measured time (iperf -t warmup + "
                    "seconds); their -i 1 intervals are left out of the samples"},
    {0},
};

static const char *const iperf_metrics[] = {"net.tcp.gbps", NULL};

const struct hv_engine_def hv_engine_def_net_iperf = {
    .kind = "net",
    .engine = "iperf",
    .summary = "iperf 2 client against an iperf 2 server on the peer",
    .metrics = iperf_metrics,
    .sweepable = sweep_streams,
    .needs_peer = true,
    .external = true,
    .params_def = net_iperf_params,
};

const struct hv_engine_def *const hv_engine_defs_net[] = {
    &hv_engine_def_net_builtin, &hv_engine_def_net_iperf3, &hv_engine_def_net_iperf, NULL};
