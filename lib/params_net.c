/* params_net.c — the built-in net engine and its parameters, an
 * iperf-like engine; see params.h. The net tools (lib/tools.def) share its
 * rows HV_PARAM_NET_*. */
#include "params.h"

#include "errors.h"
#include "jspec.h"

#include <string.h>

#define KIB 1024.0
#define MIB (1024.0 * KIB)

static const char *const net_modes[] = {"stream", "rr", NULL};

static const struct hv_param_def net_builtin_params[] = {
    HV_PARAM_NET_PEER,
    {.name = "mode",
     .type = HV_PARAM_ENUM,
     .def = "\"stream\"",
     .choices = net_modes,
     .description = "stream: TCP throughput; rr: request/response latency"},
    HV_PARAM_NET_STREAMS,
    HV_PARAM_NET_WINDOW,
    HV_PARAM_NET_SECONDS,
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
    HV_PARAM_WARMUP("untimed traffic before measuring, past TCP slow start"),
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

const struct hv_engine_def *const hv_engine_defs_net[] = {&hv_engine_def_net_builtin, NULL};
