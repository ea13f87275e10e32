/* net_wire.h — what the two sides of the built-in net engine share: the
 * wire format of its connections, stop-aware socket I/O, what the kernel
 * says about a connection, and the per-second sampler with its
 * steady-state verdict. net_server.c and net_client.c use it; nothing
 * else needs to.
 *
 * The wire: fixed-size messages, integers big-endian. Every connection
 * starts with a hello (client to server) answered by a reply; the control
 * connection then carries 8-byte commands (MARK, END) and the server's
 * summary (a 16-byte head and a 32-byte row per stream). */
#ifndef HV_WORKER_ENGINES_NET_WIRE_H
#define HV_WORKER_ENGINES_NET_WIRE_H

#include "worker/engines/engine.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HV_NET_MAGIC     0x68766e6574303031ULL /* "hvnet001" */
#define HV_NET_HELLO_LEN 64
#define HV_NET_REPLY_LEN 64
#define HV_NET_CMD_LEN   8
#define HV_NET_SUM_HEAD  16
#define HV_NET_SUM_ROW   32

/** Blocking calls return at least this often to look at the stop flags. */
#define HV_NET_TICK_NS 50000000ULL
/** Connecting and the hello exchange, per connection, in seconds. */
#define HV_NET_CONNECT_S 10.0
/** After the client's end, how long the queued bytes may take to arrive. */
#define HV_NET_DRAIN_S 30.0

/** What a connection carries, as its hello says. */
enum hv_net_conn { HV_NET_CONTROL = 1, HV_NET_DATA = 2 };

/** The commands of the control connection. */
enum hv_net_cmd { HV_NET_MARK = 1, HV_NET_END = 2 };

/** The first message of every connection, client to server. */
struct hv_net_hello {
    uint64_t server_job; /**< the nonce: the job the client wants (endpoints' job_id) */
    uint64_t client_job;
    uint64_t session; /**< random per client run */
    uint32_t kind, stream, streams, mode, reverse, window, msg_size;
};

/** The server's answer to a hello. */
struct hv_net_reply {
    uint32_t status; /**< 0: accepted; else refused, reason says why */
    uint32_t sndbuf, rcvbuf, mss;
    char reason[40];
};

/** What the server counted on one stream, in its answer to END. */
struct hv_net_sum {
    uint64_t total;  /**< bytes (stream) or transactions (rr) of the whole connection */
    uint64_t window; /**< the part after the client's MARK */
    uint32_t retrans, mss, sndbuf, rcvbuf;
};

/** Big-endian integers into and out of a message. */
void hv_net_put32(unsigned char *p, uint32_t v);
void hv_net_put64(unsigned char *p, uint64_t v);
uint32_t hv_net_get32(const unsigned char *p);
uint64_t hv_net_get64(const unsigned char *p);

/** Writes h as a hello message into b. */
void hv_net_hello_encode(const struct hv_net_hello *h, unsigned char b[HV_NET_HELLO_LEN]);

/** Reads a hello from b; false when b is not an hvbench net hello. */
bool hv_net_hello_decode(const unsigned char b[HV_NET_HELLO_LEN], struct hv_net_hello *h);

/** Writes r as a reply message into b. */
void hv_net_reply_encode(const struct hv_net_reply *r, unsigned char b[HV_NET_REPLY_LEN]);

/** Reads a reply from b; false when b is not an hvbench net reply. */
bool hv_net_reply_decode(const unsigned char b[HV_NET_REPLY_LEN], struct hv_net_reply *r);

/** What ends a blocking exchange early: the engine's stop, or a flag of the
 *  run (a failed stream, the end of the server). */
struct hv_net_stopper {
    const struct hv_engine_ctx *ctx;
    const int *flag; /**< may be NULL */
};

/** Whether s says to stop. */
bool hv_net_stopped(const struct hv_net_stopper *s);

/** Makes blocking calls on fd return at least every HV_NET_TICK_NS. */
void hv_net_set_ticks(int fd);

/** How an exchange of exactly len bytes ended. */
enum hv_net_io { HV_NET_IO_OK, HV_NET_IO_EOF, HV_NET_IO_STOP, HV_NET_IO_TIMEOUT, HV_NET_IO_ERROR };

/** Reads exactly len bytes before deadline (monotonic ns; 0: none).
 *  HV_NET_IO_EOF when the peer closed before the first byte; a close in
 *  the middle is HV_NET_IO_ERROR with errno ECONNRESET. */
enum hv_net_io hv_net_read_full(int fd, void *buf, size_t len, const struct hv_net_stopper *s,
                                uint64_t deadline);

/** Writes exactly len bytes before deadline (0: none). */
enum hv_net_io hv_net_write_full(int fd, const void *buf, size_t len,
                                 const struct hv_net_stopper *s, uint64_t deadline);

/** Why an exchange ended, for messages (errno's text for an error).
 *  Static string. */
const char *hv_net_io_text(enum hv_net_io r);

/** Sets SO_SNDBUF and SO_RCVBUF of fd to window; 0 leaves autotuning. */
void hv_net_apply_window(int fd, uint64_t window);

/** The socket buffers as the kernel reports them (Linux: twice what was
 *  asked, for its bookkeeping; capped by net.core.[wr]mem_max). */
void hv_net_buffers(int fd, uint32_t *snd, uint32_t *rcv);

/** The connection's MSS (TCP_MAXSEG), 0 when unknown. */
uint32_t hv_net_mss(int fd);

/** The connection's TCP_INFO total_retrans. */
uint32_t hv_net_retrans(int fd);

/** Records in obs the local and remote address of fd, the interface that
 *  holds the local address and its MTU. */
void hv_net_observe_path(int fd, json_t *obs);

/** A new buffer of n pseudo-random bytes (the payload of stream mode and
 *  of rr requests and responses), or NULL when memory runs out. */
unsigned char *hv_net_payload(size_t n);

/** Per-second samples of a count and their steady-state verdict. Start
 *  zeroed; free v when done. */
struct hv_net_sampler {
    uint64_t every, prev_t, next, prev_count;
    size_t taken;
    double *v; /**< whole-interval values, for the steady-state test */
    size_t n, cap;
};

/** Starts sampling at time t (monotonic ns) with the count at that time. */
void hv_net_sampler_start(struct hv_net_sampler *s, uint64_t t, uint64_t count);

/** Emits a sample of metric when one is due at time now: the count since
 *  the last one over the time since, times scale (8e-9 for Gbit/s), at t
 *  seconds since t0. The interval doubles every 600 samples (bounds the
 *  upload). */
void hv_net_sampler_tick(struct hv_net_sampler *s, const struct hv_engine_ctx *ctx,
                         struct hv_engine_result *out, const char *metric, uint64_t t0,
                         uint64_t now, uint64_t count, double scale);

/** Adds the steady-state verdict of the samples taken to obs. */
void hv_net_sampler_observe(const struct hv_net_sampler *s, json_t *obs);

#endif
