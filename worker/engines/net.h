/* net.h — the built-in network engine (kind "net", engine "builtin").
 *
 * Two jobs of one group: the server role on the plan's peer and a client
 * role on each target. prepare() (server) listens on an ephemeral TCP port
 * on every address; the worker announces it at the group's ready call, and
 * the clients find it in the ready answer's endpoints (ctx->endpoints).
 *
 * Params (lib/params_net.c, docs/catalog.md "net/builtin"): peer, mode
 * (stream | rr), streams, window, seconds, msg_size, reverse, warmup;
 * reverse with mode rr is refused (a transaction goes both ways).
 *
 * The wire: a client opens one control connection, then `streams` data
 * connections; each starts with a 64-byte hello naming the server's job
 * (the endpoint's job_id), the client's job and a random session id, and
 * the server refuses, with a reason, a hello that is not for it. stream:
 * the client (the server with reverse) writes msg_size buffers as fast as
 * the connection takes them; rr: the client sends msg_size bytes and waits
 * for msg_size bytes back, one transaction at a time per connection. On the
 * control connection the client marks the end of the warm-up and the end,
 * and the server answers with what it counted on each stream; a stream whose
 * two ends disagree on the bytes (or transactions) moved fails the run.
 *
 * Client metrics, stream: net.tcp.gbps (headline; the bytes the client sent,
 * or received with reverse, in the measured window, 10^9 bit/s),
 * net.tcp.stream_gbps_min and _max (the slowest and fastest stream),
 * net.tcp.retransmits (the sender's TCP_INFO total_retrans, lower is
 * better). rr: net.rr.tps (headline, transactions per second over all
 * streams), net.rr.lat_{p50,p99,max}_us (round trip of one transaction).
 * A sample of the headline every second of the measured window (warm-up
 * dropped); observed holds the steady-state verdict, the MSS (TCP_MAXSEG),
 * the MTU of the interface used, the requested and real socket buffers of
 * both ends, per-stream details and the server's own counts.
 *
 * Server metrics: the same names, as the server counted them between the
 * client's marks (its result is stored but plans' summaries use the
 * clients'). It ends when every client of the group is done, after
 * warmup + seconds + a grace, or at ctx->stop. */
#ifndef HV_WORKER_ENGINE_NET_H
#define HV_WORKER_ENGINE_NET_H

#include "worker/engines/engine.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/** How the streams move data: stream (one way, as fast as the connection
 *  takes it) or rr (one request and one response at a time). */
enum hv_net_mode { HV_NET_STREAM, HV_NET_RR };

/** What one run of either side does, from its params. */
struct hv_net_settings {
    enum hv_net_mode mode;
    long streams;
    uint64_t window; /**< 0: the system's autotuning */
    double seconds, warmup;
    uint64_t msg_size;
    bool reverse;
};

/** "stream" or "rr". Static string. */
const char *hv_net_mode_name(enum hv_net_mode m);

/** The settings of a job's params (NULL: all defaults) on a machine with
 *  cpus CPUs: the params checked and normalised by lib/params.h
 *  (hv_engine_params_check()). Does no I/O. Returns 0, or -1 with err set
 *  ("invalid params: /params/NAME: why"). */
int hv_net_settings(const json_t *params, long cpus, struct hv_net_settings *s, char *err,
                    size_t len);

/** The greatest value lib/params.h allows for param ("streams",
 *  "msg_size"): what a server accepts in a client's hello. */
uint64_t hv_net_max(const char *param);

/** The engine's entry point; see hv_engine_run_fn. ctx->role picks the
 *  side: "server" needs a successful hv_engine_net_prepare() first
 *  (ctx->prepared), anything else runs the client, which needs
 *  ctx->endpoints with a "server" row. */
int hv_engine_net_run(const struct hv_engine *e, const struct hv_engine_ctx *ctx,
                      struct hv_engine_result *out);

/** Server side: checks the params, listens on an ephemeral port on every
 *  address (IPv6 and IPv4 when the host has IPv6) with the window applied,
 *  sets ep->port, leaves ep->host empty and ctx->prepared set. Returns 0, or
 *  -1 with out->error set. */
int hv_engine_net_prepare(const struct hv_engine *e, struct hv_engine_ctx *ctx,
                          struct hv_endpoint *ep, struct hv_engine_result *out);

/** Closes what prepare() left when run() will not be called. */
void hv_engine_net_unprepare(const struct hv_engine *e, struct hv_engine_ctx *ctx);

/** The two sides hv_engine_net_run() picks from (net_server.c,
 *  net_client.c), with its contract. */
int hv_net_server_run(const struct hv_engine_ctx *ctx, struct hv_engine_result *out);
int hv_net_client_run(const struct hv_engine_ctx *ctx, struct hv_engine_result *out);

#endif
