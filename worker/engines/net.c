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
#include "worker/engines/net_wire.h"

#include <stdio.h>
#include <string.h>

#define MIN_WINDOW  4096ULL
#define MAX_WINDOW  (64ULL << 20)
#define MAX_SECONDS 3600.0
#define MAX_WARMUP  3600.0

/* ---------------------------------------------------------------------
 * Params, declared once as a table. */

static const char *const mode_names[] = {"stream", "rr"};

const char *hv_net_mode_name(enum hv_net_mode m)
{
    return m == HV_NET_RR ? mode_names[1] : mode_names[0];
}

static int parse_peer(const json_t *v, struct hv_net_settings *p, char *err, size_t len)
{
    (void)p;
    if (json_is_string(v))
        return 0; /* the server placed this job; nothing to do with it here */
    snprintf(err, len, "must be a target name");
    return -1;
}

static int parse_mode(const json_t *v, struct hv_net_settings *p, char *err, size_t len)
{
    int i;
    if (hv_engine_param_choice(v, mode_names, 2, &i, err, len) != 0)
        return -1;
    p->mode = (enum hv_net_mode)i;
    return 0;
}

static int parse_streams(const json_t *v, struct hv_net_settings *p, char *err, size_t len)
{
    return hv_engine_param_count(v, &p->streams, 1, HV_NET_MAX_STREAMS, false, err, len);
}

static int parse_bytes(const json_t *v, uint64_t *dst, uint64_t lo, uint64_t hi, char *err,
                       size_t len)
{
    json_int_t n = json_integer_value(v);
    if (json_is_integer(v) && n >= 0 && (uint64_t)n >= lo && (uint64_t)n <= hi) {
        *dst = (uint64_t)n;
        return 0;
    }
    snprintf(err, len, "must be an integer number of bytes from %llu to %llu",
             (unsigned long long)lo, (unsigned long long)hi);
    return -1;
}

static int parse_window(const json_t *v, struct hv_net_settings *p, char *err, size_t len)
{
    return parse_bytes(v, &p->window, MIN_WINDOW, MAX_WINDOW, err, len);
}

static int parse_msg_size(const json_t *v, struct hv_net_settings *p, char *err, size_t len)
{
    return parse_bytes(v, &p->msg_size, 1, HV_NET_MAX_MSG, err, len);
}

static int parse_seconds(const json_t *v, struct hv_net_settings *p, char *err, size_t len)
{
    return hv_engine_param_seconds(v, &p->seconds, 0, true, MAX_SECONDS, err, len);
}

static int parse_warmup(const json_t *v, struct hv_net_settings *p, char *err, size_t len)
{
    return hv_engine_param_seconds(v, &p->warmup, 0, false, MAX_WARMUP, err, len);
}

static int parse_reverse(const json_t *v, struct hv_net_settings *p, char *err, size_t len)
{
    return hv_engine_param_bool(v, &p->reverse, err, len);
}

static const struct {
    const char *name;
    int (*parse)(const json_t *v, struct hv_net_settings *p, char *err, size_t len);
} param_table[] = {
    {"peer", parse_peer},       {"mode", parse_mode},       {"streams", parse_streams},
    {"window", parse_window},   {"seconds", parse_seconds}, {"msg_size", parse_msg_size},
    {"reverse", parse_reverse}, {"warmup", parse_warmup},
};
#define N_PARAMS (sizeof param_table / sizeof param_table[0])

int hv_net_settings_parse(const json_t *params, struct hv_net_settings *p,
                          struct hv_engine_result *out)
{
    /* The defaults of lib/params.c. */
    *p = (struct hv_net_settings){
        .mode = HV_NET_STREAM, .streams = 1, .seconds = 10, .warmup = 2, .msg_size = 128 * 1024};
    if (params != NULL && !json_is_null(params)) {
        if (!json_is_object(params))
            return hv_engine_fail(out, "invalid params: must be an object");
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)params, key, v)
        {
            size_t i = 0;
            while (i < N_PARAMS && strcmp(param_table[i].name, key) != 0)
                i++;
            if (i == N_PARAMS)
                return hv_engine_fail(out,
                                      "invalid params: unknown parameter \"%s\" (known: peer, "
                                      "mode, streams, window, seconds, msg_size, reverse, warmup)",
                                      key);
            char why[200];
            if (param_table[i].parse(v, p, why, sizeof why) != 0)
                return hv_engine_fail(out, "invalid params: %s %s", key, why);
        }
    }
    if (p->mode == HV_NET_RR && p->reverse)
        return hv_engine_fail(out, "invalid params: reverse applies to mode stream only (an rr "
                                   "transaction goes both ways)");
    return 0;
}

/* ---------------------------------------------------------------------
 * The engine: each side in its own file (net_server.c, net_client.c). */

int hv_engine_net_run(const struct hv_engine_ctx *ctx, struct hv_engine_result *out)
{
    if (ctx->role != NULL && strcmp(ctx->role, "server") == 0)
        return hv_net_server_run(ctx, out);
    return hv_net_client_run(ctx, out);
}
