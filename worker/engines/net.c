/* net.c — the built-in network engine: its settings and the choice of
 * side; the server side is net_server.c, the client side net_client.c,
 * what both share net_wire.c. See net.h.
 *
 * Design:
 *  - One thread per data connection on both ends, each in a plain blocking
 *    send/recv loop (as iperf 2 does), so several streams use several CPUs
 *    and no per-call poll(2) sits in the data path. Every socket has 50 ms
 *    send and receive timeouts (SO_SNDTIMEO/SO_RCVTIMEO): a blocked call
 *    returns within 50 ms and the loop looks at the stop flags, which is
 *    how a stop is honoured within about 50 ms.
 *  - The window is applied before connect(2) on the client and on the
 *    listening socket on the server (accepted sockets inherit it), because
 *    TCP fixes the window scale in the handshake.
 *  - The client alone decides when the warm-up and the measurement end; the
 *    control connection tells the server (MARK, END), and the server answers
 *    END with its per-stream counts once every stream of the session has
 *    ended, so the two ends' counts of a whole connection must agree exactly.
 *  - The headline is the client's count over the measured window: the
 *    sender's bytes without reverse (iperf 2's view), the receiver's with
 *    it. Once the warm-up has filled the socket buffers, the bytes queued
 *    between the two ends are the same at both edges of the window, so the
 *    sender's and the receiver's counts over it differ by at most the
 *    change of that queue (a few MB in many GB). */
#include "worker/engines/net.h"

#include <string.h>

static const char *const mode_names[] = {"stream", "rr"};

const char *hv_net_mode_name(enum hv_net_mode m)
{
    return m == HV_NET_RR ? mode_names[1] : mode_names[0];
}

/* ---------------------------------------------------------------------
 * Settings, from the params lib/params.c checked. */

int hv_net_settings(const json_t *params, long cpus, struct hv_net_settings *s, char *err,
                    size_t len)
{
    const struct hv_engine_def *def = &hv_engine_def_net_builtin;
    json_t *p = hv_engine_params_check(def, params, cpus, err, len);
    if (p == NULL)
        return -1;
    /* The row's choices are in enum hv_net_mode's order. */
    *s = (struct hv_net_settings){
        .mode = hv_params_choice(def, p, "mode") == 1 ? HV_NET_RR : HV_NET_STREAM,
        .streams = (long)hv_params_int(p, "streams"),
        .window = (uint64_t)hv_params_int(p, "window"),
        .seconds = hv_params_num(p, "seconds"),
        .warmup = hv_params_num(p, "warmup"),
        .msg_size = (uint64_t)hv_params_int(p, "msg_size"),
        .reverse = hv_params_bool(p, "reverse"),
    };
    json_decref(p);
    return 0;
}

uint64_t hv_net_max(const char *param)
{
    const struct hv_param_def *d = hv_engine_def_param(&hv_engine_def_net_builtin, param);
    return d != NULL ? (uint64_t)d->max : 0;
}

/* ---------------------------------------------------------------------
 * The engine: each side in its own file (net_server.c, net_client.c). */

int hv_engine_net_run(const struct hv_engine *e, const struct hv_engine_ctx *ctx,
                      struct hv_engine_result *out)
{
    (void)e;
    if (ctx->role != NULL && strcmp(ctx->role, "server") == 0)
        return hv_net_server_run(ctx, out);
    return hv_net_client_run(ctx, out);
}
