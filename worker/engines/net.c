/* net.c — the built-in network engine; see net.h.
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

#include "worker/engines/disk.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <math.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAX_STREAMS  128
#define MIN_WINDOW   4096ULL
#define MAX_WINDOW   (64ULL << 20)
#define MAX_MSG      (1ULL << 20)
#define MAX_SECONDS  3600.0
#define MAX_WARMUP   3600.0
#define MAX_SESSIONS 256
/* Blocking calls return at least this often to look at the stop flags. */
#define TICK_NS 50000000ULL
/* Connecting and the hello exchange, per connection. */
#define CONNECT_S 10.0
/* After the client's end, how long the queued bytes may take to arrive. */
#define DRAIN_S 30.0
/* The server waits for its clients this long past warmup + seconds. */
#define GRACE_S 30.0
/* Samples of a window before the interval doubles (bounds the upload). */
#define SAMPLES_PER_DOUBLING 600

/* ---------------------------------------------------------------------
 * Params, declared once as a table. */

enum net_mode { MODE_STREAM, MODE_RR };
static const char *const mode_names[] = {"stream", "rr"};

struct net_params {
    enum net_mode mode;
    long streams;
    uint64_t window; /* 0: the system's autotuning */
    double seconds, warmup;
    uint64_t msg_size;
    bool reverse;
};

static int parse_peer(const json_t *v, struct net_params *p, char *err, size_t len)
{
    (void)p;
    if (json_is_string(v))
        return 0; /* the server placed this job; nothing to do with it here */
    snprintf(err, len, "must be a target name");
    return -1;
}

static int parse_mode(const json_t *v, struct net_params *p, char *err, size_t len)
{
    int i;
    if (hv_engine_param_choice(v, mode_names, 2, &i, err, len) != 0)
        return -1;
    p->mode = (enum net_mode)i;
    return 0;
}

static int parse_streams(const json_t *v, struct net_params *p, char *err, size_t len)
{
    return hv_engine_param_count(v, &p->streams, 1, MAX_STREAMS, false, err, len);
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

static int parse_window(const json_t *v, struct net_params *p, char *err, size_t len)
{
    return parse_bytes(v, &p->window, MIN_WINDOW, MAX_WINDOW, err, len);
}

static int parse_msg_size(const json_t *v, struct net_params *p, char *err, size_t len)
{
    return parse_bytes(v, &p->msg_size, 1, MAX_MSG, err, len);
}

static int parse_seconds(const json_t *v, struct net_params *p, char *err, size_t len)
{
    return hv_engine_param_seconds(v, &p->seconds, 0, true, MAX_SECONDS, err, len);
}

static int parse_warmup(const json_t *v, struct net_params *p, char *err, size_t len)
{
    return hv_engine_param_seconds(v, &p->warmup, 0, false, MAX_WARMUP, err, len);
}

static int parse_reverse(const json_t *v, struct net_params *p, char *err, size_t len)
{
    return hv_engine_param_bool(v, &p->reverse, err, len);
}

static const struct {
    const char *name;
    int (*parse)(const json_t *v, struct net_params *p, char *err, size_t len);
} param_table[] = {
    {"peer", parse_peer},       {"mode", parse_mode},       {"streams", parse_streams},
    {"window", parse_window},   {"seconds", parse_seconds}, {"msg_size", parse_msg_size},
    {"reverse", parse_reverse}, {"warmup", parse_warmup},
};
#define N_PARAMS (sizeof param_table / sizeof param_table[0])

static int parse_params(const json_t *params, struct net_params *p, struct hv_engine_result *out)
{
    /* The defaults of lib/params.c. */
    *p = (struct net_params){
        .mode = MODE_STREAM, .streams = 1, .seconds = 10, .warmup = 2, .msg_size = 128 * 1024};
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
    if (p->mode == MODE_RR && p->reverse)
        return hv_engine_fail(out, "invalid params: reverse applies to mode stream only (an rr "
                                   "transaction goes both ways)");
    return 0;
}

/* ---------------------------------------------------------------------
 * The wire: fixed-size messages, integers big-endian. */

#define MAGIC     0x68766e6574303031ULL /* "hvnet001" */
#define HELLO_LEN 64
#define REPLY_LEN 64
#define CMD_LEN   8
#define SUM_HEAD  16
#define SUM_ROW   32

enum conn_kind { CONN_CONTROL = 1, CONN_DATA = 2 };
enum cmd { CMD_MARK = 1, CMD_END = 2 };

/* The first message of every connection, client to server. */
struct hello {
    uint64_t server_job; /* the nonce: the job the client wants (endpoints' job_id) */
    uint64_t client_job;
    uint64_t session; /* random per client run */
    uint32_t kind, stream, streams, mode, reverse, window, msg_size;
};

/* The server's answer to a hello. */
struct reply {
    uint32_t status; /* 0: accepted; else refused, reason says why */
    uint32_t sndbuf, rcvbuf, mss;
    char reason[40];
};

/* What the server counted on one stream, in its answer to END. */
struct stream_sum {
    uint64_t total;  /* bytes (stream) or transactions (rr) of the whole connection */
    uint64_t window; /* the part after the client's MARK */
    uint32_t retrans, mss, sndbuf, rcvbuf;
};

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (24 - 8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
    put32(p, (uint32_t)(v >> 32));
    put32(p + 4, (uint32_t)v);
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get64(const unsigned char *p)
{
    return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static void hello_encode(const struct hello *h, unsigned char b[HELLO_LEN])
{
    memset(b, 0, HELLO_LEN);
    put64(b, MAGIC);
    put64(b + 8, h->server_job);
    put64(b + 16, h->client_job);
    put64(b + 24, h->session);
    const uint32_t w[] = {h->kind,    h->stream, h->streams, h->mode,
                          h->reverse, h->window, h->msg_size};
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
        put32(b + 32 + 4 * i, w[i]);
}

/* Returns false when b is not an hvbench net hello. */
static bool hello_decode(const unsigned char b[HELLO_LEN], struct hello *h)
{
    if (get64(b) != MAGIC)
        return false;
    *h = (struct hello){.server_job = get64(b + 8),
                        .client_job = get64(b + 16),
                        .session = get64(b + 24),
                        .kind = get32(b + 32),
                        .stream = get32(b + 36),
                        .streams = get32(b + 40),
                        .mode = get32(b + 44),
                        .reverse = get32(b + 48),
                        .window = get32(b + 52),
                        .msg_size = get32(b + 56)};
    return true;
}

static void reply_encode(const struct reply *r, unsigned char b[REPLY_LEN])
{
    memset(b, 0, REPLY_LEN);
    put64(b, MAGIC);
    put32(b + 8, r->status);
    put32(b + 12, r->sndbuf);
    put32(b + 16, r->rcvbuf);
    put32(b + 20, r->mss);
    memcpy(b + 24, r->reason, strnlen(r->reason, sizeof r->reason - 1));
}

static bool reply_decode(const unsigned char b[REPLY_LEN], struct reply *r)
{
    if (get64(b) != MAGIC)
        return false;
    *r = (struct reply){.status = get32(b + 8),
                        .sndbuf = get32(b + 12),
                        .rcvbuf = get32(b + 16),
                        .mss = get32(b + 20)};
    memcpy(r->reason, b + 24, sizeof r->reason - 1);
    r->reason[sizeof r->reason - 1] = '\0';
    return true;
}

/* ---------------------------------------------------------------------
 * Sockets: clocks, stop-aware I/O, what the kernel says about a connection. */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* What ends a blocking exchange early: the engine's stop, or a flag of the
 * run (a failed stream, the end of the server). */
struct stopper {
    const struct hv_engine_ctx *ctx;
    const int *flag; /* may be NULL */
};

static bool stopped(const struct stopper *s)
{
    return (s->flag != NULL && __atomic_load_n(s->flag, __ATOMIC_RELAXED) != 0) ||
           hv_engine_stopping(s->ctx);
}

/* Makes blocking calls on fd return at least every TICK_NS. */
static void set_ticks(int fd)
{
    struct timeval tv = {.tv_sec = 0, .tv_usec = (suseconds_t)(TICK_NS / 1000)};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/* How an exchange of exactly len bytes ended. */
enum io { IO_OK, IO_EOF, IO_STOP, IO_TIMEOUT, IO_ERROR };

/* Reads exactly len bytes before deadline (monotonic ns; 0: none). IO_EOF
 * when the peer closed before the first byte; a close in the middle is
 * IO_ERROR with errno ECONNRESET. */
static enum io read_full(int fd, void *buf, size_t len, const struct stopper *s, uint64_t deadline)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = recv(fd, (char *)buf + got, len - got, 0);
        if (n > 0) {
            got += (size_t)n;
            continue;
        }
        if (n == 0) {
            if (got == 0)
                return IO_EOF;
            errno = ECONNRESET;
            return IO_ERROR;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return IO_ERROR;
        if (stopped(s))
            return IO_STOP;
        if (deadline != 0 && now_ns() >= deadline)
            return IO_TIMEOUT;
    }
    return IO_OK;
}

/* Writes exactly len bytes before deadline (0: none). */
static enum io write_full(int fd, const void *buf, size_t len, const struct stopper *s,
                          uint64_t deadline)
{
    size_t put = 0;
    while (put < len) {
        ssize_t n = send(fd, (const char *)buf + put, len - put, MSG_NOSIGNAL);
        if (n > 0) {
            put += (size_t)n;
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return IO_ERROR;
        if (stopped(s))
            return IO_STOP;
        if (deadline != 0 && now_ns() >= deadline)
            return IO_TIMEOUT;
    }
    return IO_OK;
}

static const char *io_text(enum io r)
{
    return r == IO_EOF       ? "the peer closed the connection"
           : r == IO_STOP    ? "stopped"
           : r == IO_TIMEOUT ? "timed out"
                             : strerror(errno);
}

static void apply_window(int fd, uint64_t window)
{
    if (window == 0)
        return;
    int w = (int)window;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &w, sizeof w);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &w, sizeof w);
}

/* The socket buffers as the kernel reports them (Linux: twice what was
 * asked, for its bookkeeping; capped by net.core.[wr]mem_max). */
static void buffers(int fd, uint32_t *snd, uint32_t *rcv)
{
    int v = 0;
    socklen_t len = sizeof v;
    *snd = getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, &len) == 0 ? (uint32_t)v : 0;
    len = sizeof v;
    *rcv = getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, &len) == 0 ? (uint32_t)v : 0;
}

static uint32_t mss_of(int fd)
{
    int v = 0;
    socklen_t len = sizeof v;
    return getsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &v, &len) == 0 && v > 0 ? (uint32_t)v : 0;
}

static uint32_t retrans_of(int fd)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    memset(&ti, 0, sizeof ti);
    return getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 ? ti.tcpi_total_retrans : 0;
}

static void addr_text(const struct sockaddr *sa, char *buf, size_t len)
{
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
        port = ntohs(in->sin_port);
        snprintf(buf, len, "%s:%d", host, port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
        port = ntohs(in6->sin6_port);
        snprintf(buf, len, "[%s]:%d", host, port);
    } else {
        snprintf(buf, len, "?");
    }
}

/* True when the interface address ifa is the socket address sa (an
 * IPv4-mapped IPv6 address counts as its IPv4 address). */
static bool same_address(const struct sockaddr *sa, const struct sockaddr *ifa)
{
    const struct in_addr *v4 = NULL;
    if (sa->sa_family == AF_INET)
        v4 = &((const struct sockaddr_in *)sa)->sin_addr;
    else if (sa->sa_family == AF_INET6 &&
             IN6_IS_ADDR_V4MAPPED(&((const struct sockaddr_in6 *)sa)->sin6_addr))
        v4 = (const struct in_addr *)&((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr[12];
    if (v4 != NULL)
        return ifa->sa_family == AF_INET &&
               memcmp(v4, &((const struct sockaddr_in *)ifa)->sin_addr, sizeof *v4) == 0;
    return sa->sa_family == AF_INET6 && ifa->sa_family == AF_INET6 &&
           memcmp(&((const struct sockaddr_in6 *)sa)->sin6_addr,
                  &((const struct sockaddr_in6 *)ifa)->sin6_addr, sizeof(struct in6_addr)) == 0;
}

/* Records in obs the local and remote address of fd, the interface that
 * holds the local address and its MTU. */
static void observe_path(int fd, json_t *obs)
{
    struct sockaddr_storage local, remote;
    socklen_t llen = sizeof local, rlen = sizeof remote;
    char text[80];
    if (getsockname(fd, (struct sockaddr *)&local, &llen) != 0)
        return;
    addr_text((struct sockaddr *)&local, text, sizeof text);
    json_object_set_new(obs, "local", json_string(text));
    if (getpeername(fd, (struct sockaddr *)&remote, &rlen) == 0) {
        addr_text((struct sockaddr *)&remote, text, sizeof text);
        json_object_set_new(obs, "remote", json_string(text));
    }
    struct ifaddrs *list;
    if (getifaddrs(&list) != 0)
        return;
    for (struct ifaddrs *i = list; i != NULL; i = i->ifa_next) {
        if (i->ifa_addr == NULL || !same_address((struct sockaddr *)&local, i->ifa_addr))
            continue;
        json_object_set_new(obs, "interface", json_string(i->ifa_name));
        int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct ifreq ifr;
        memset(&ifr, 0, sizeof ifr);
        snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", i->ifa_name);
        if (s >= 0 && ioctl(s, SIOCGIFMTU, &ifr) == 0)
            json_object_set_new(obs, "mtu", json_integer(ifr.ifr_mtu));
        if (s >= 0)
            close(s);
        break;
    }
    freeifaddrs(list);
}

/* A buffer of n pseudo-random bytes (the payload of stream mode and of rr
 * requests and responses), or NULL when memory runs out. */
static unsigned char *payload(size_t n)
{
    unsigned char *b = malloc(n);
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (size_t i = 0; b != NULL && i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        b[i] = (unsigned char)x;
    }
    return b;
}

/* ---------------------------------------------------------------------
 * Per-second samples and the steady-state test, shared by both sides. */

struct sampler {
    uint64_t every, prev_t, next, prev_count;
    size_t taken;
    double *v; /* whole-interval values, for the steady-state test */
    size_t n, cap;
};

static void sampler_start(struct sampler *s, uint64_t t, uint64_t count)
{
    free(s->v);
    *s = (struct sampler){
        .every = 1000000000u, .prev_t = t, .next = t + 1000000000u, .prev_count = count};
}

/* Emits a sample when one is due at time now: the count since the last
 * one over the time since, times scale (bits per byte / 1e9 for Gbit/s). */
static void sampler_tick(struct sampler *s, const struct hv_engine_ctx *ctx,
                         struct hv_engine_result *out, const char *metric, uint64_t t0,
                         uint64_t now, uint64_t count, double scale)
{
    if (now < s->next)
        return;
    double value = (double)(count - s->prev_count) * scale / ((double)(now - s->prev_t) * 1e-9);
    hv_engine_emit_sample(ctx, out, metric, (double)(now - t0) * 1e-9, value);
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        double *v = realloc(s->v, cap * sizeof *v);
        if (v != NULL) {
            s->v = v;
            s->cap = cap;
        }
    }
    if (s->n < s->cap)
        s->v[s->n++] = value;
    s->prev_t = now;
    s->prev_count = count;
    if (++s->taken % SAMPLES_PER_DOUBLING == 0)
        s->every *= 2;
    while (s->next <= now)
        s->next += s->every;
}

/* Adds the steady-state verdict of the samples taken to obs. */
static void sampler_observe(const struct sampler *s, json_t *obs)
{
    struct hv_steady st;
    hv_steady_state(s->v, s->n, &st);
    json_t *o = json_object();
    if (o != NULL && hv_steady_observe(o, &st) == 0)
        json_object_set_new(obs, "steady_state", o);
    else
        json_decref(o);
}

/* ---------------------------------------------------------------------
 * The server side. */

/* What prepare() leaves for run(). */
struct net_server {
    int fd;
    int port;
    struct net_params p;
};

/* One data connection as the server sees it. */
struct sstream {
    bool taken;
    uint64_t count; /* bytes or transactions; written by its thread, read atomically */
    uint64_t mark;  /* count at the client's MARK */
    uint64_t t_end; /* when the connection ended */
    int done;       /* set (release) once the fields below are final */
    bool failed;
    uint32_t retrans, mss, sndbuf, rcvbuf;
};

/* One client's run: its control connection and its streams. */
struct session {
    struct hello h; /* the control hello */
    struct sstream *s;
    uint64_t t_mark, t_end; /* MARK and the last stream's end; 0 until then */
    bool marked, finished, ok;
};

struct server_run;

/* One accepted connection and its thread. */
struct conn {
    struct server_run *run;
    int fd;
    pthread_t thread;
};

struct server_run {
    const struct hv_engine_ctx *ctx;
    struct net_server *srv;
    struct stopper stop;
    int quit;           /* set (atomically) when run() ends: every connection ends */
    unsigned char *buf; /* the payload the server sends (shared, read-only) */
    size_t buf_len;
    pthread_mutex_t mu; /* guards the session list and the counters below */
    pthread_cond_t cv;
    struct session *sessions[MAX_SESSIONS];
    int n_sessions, finished, refused;
    char last_refusal[120];
    struct conn **conns;
    size_t n_conns, cap_conns;
};

static void refuse(struct server_run *run, int fd, const char *why)
{
    struct reply r = {.status = 1};
    snprintf(r.reason, sizeof r.reason, "%s", why);
    unsigned char b[REPLY_LEN];
    reply_encode(&r, b);
    write_full(fd, b, sizeof b, &run->stop, now_ns() + (uint64_t)(CONNECT_S * 1e9));
    pthread_mutex_lock(&run->mu);
    run->refused++;
    snprintf(run->last_refusal, sizeof run->last_refusal, "%s", why);
    pthread_mutex_unlock(&run->mu);
}

static int accept_reply(struct server_run *run, int fd)
{
    struct reply r = {.status = 0, .mss = mss_of(fd)};
    buffers(fd, &r.sndbuf, &r.rcvbuf);
    unsigned char b[REPLY_LEN];
    reply_encode(&r, b);
    return write_full(fd, b, sizeof b, &run->stop, now_ns() + (uint64_t)(CONNECT_S * 1e9)) == IO_OK
               ? 0
               : -1;
}

/* Moves a stream's payload until the client ends it; see the top of the
 * file. Returns with st final (done set). */
static void serve_stream(struct server_run *run, int fd, const struct hello *h, struct sstream *st)
{
    size_t msg = h->msg_size;
    unsigned char *rbuf = malloc(msg);
    bool ok = rbuf != NULL;
    uint64_t count = 0;
    if (ok && h->mode == MODE_RR) {
        for (;;) {
            enum io r = read_full(fd, rbuf, msg, &run->stop, 0);
            if (r == IO_EOF)
                break;
            if (r != IO_OK || write_full(fd, run->buf, msg, &run->stop, 0) != IO_OK) {
                ok = false;
                break;
            }
            __atomic_store_n(&st->count, ++count, __ATOMIC_RELAXED);
        }
    } else if (ok && h->reverse) {
        /* The server sends until the client's FIN; it looks for it every
         * 64 sends and whenever a send waited a whole tick. */
        for (unsigned i = 1;; i++) {
            ssize_t n = send(fd, run->buf, msg, MSG_NOSIGNAL);
            if (n > 0)
                __atomic_store_n(&st->count, count += (uint64_t)n, __ATOMIC_RELAXED);
            else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                ok = false;
                break;
            }
            if (n > 0 && i % 64 != 0)
                continue;
            if (stopped(&run->stop)) {
                ok = false;
                break;
            }
            char c;
            ssize_t k = recv(fd, &c, 1, MSG_DONTWAIT);
            if (k == 0)
                break;
            if (k > 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
                ok = false;
                break;
            }
        }
        st->retrans = retrans_of(fd);
    } else if (ok) {
        for (;;) {
            ssize_t n = recv(fd, rbuf, msg, 0);
            if (n > 0) {
                __atomic_store_n(&st->count, count += (uint64_t)n, __ATOMIC_RELAXED);
                continue;
            }
            if (n == 0)
                break;
            if ((errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) ||
                stopped(&run->stop)) {
                ok = false;
                break;
            }
        }
    }
    free(rbuf);
    st->mss = mss_of(fd);
    buffers(fd, &st->sndbuf, &st->rcvbuf);
    st->failed = !ok;
    st->t_end = now_ns();
    __atomic_store_n(&st->done, 1, __ATOMIC_RELEASE);
    /* Only now may the client see the end: its count is final. */
    shutdown(fd, SHUT_WR);
}

/* Waits until every stream of se has ended (or the drain time passed). */
static bool session_streams_done(struct server_run *run, struct session *se)
{
    uint64_t deadline = now_ns() + (uint64_t)(DRAIN_S * 1e9);
    for (;;) {
        bool all = true;
        for (uint32_t i = 0; i < se->h.streams; i++)
            all = all && __atomic_load_n(&se->s[i].done, __ATOMIC_ACQUIRE) != 0;
        if (all)
            return true;
        if (stopped(&run->stop) || now_ns() >= deadline)
            return false;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 5000000};
        nanosleep(&ts, NULL);
    }
}

/* Runs a client's control connection: MARK, then END, answered with the
 * per-stream counts. */
static void serve_control(struct server_run *run, int fd, struct session *se)
{
    unsigned char cmd[CMD_LEN];
    uint64_t deadline = 0; /* the client paces the run; the server's own deadline ends it */
    for (;;) {
        enum io r = read_full(fd, cmd, sizeof cmd, &run->stop, deadline);
        if (r != IO_OK)
            break;
        uint32_t c = get32(cmd);
        if (c == CMD_MARK) {
            pthread_mutex_lock(&run->mu);
            se->t_mark = now_ns();
            for (uint32_t i = 0; i < se->h.streams; i++)
                se->s[i].mark = __atomic_load_n(&se->s[i].count, __ATOMIC_RELAXED);
            se->marked = true;
            pthread_mutex_unlock(&run->mu);
        } else if (c == CMD_END) {
            bool all = session_streams_done(run, se);
            size_t len = SUM_HEAD + SUM_ROW * (size_t)se->h.streams;
            unsigned char *b = calloc(1, len);
            if (b == NULL)
                break;
            put32(b, se->h.streams);
            put32(b + 4, all ? 0 : 1);
            uint64_t t_end = se->t_mark;
            for (uint32_t i = 0; i < se->h.streams; i++) {
                const struct sstream *st = &se->s[i];
                unsigned char *row = b + SUM_HEAD + SUM_ROW * i;
                uint64_t total = __atomic_load_n(&st->count, __ATOMIC_RELAXED);
                put64(row, total);
                put64(row + 8, total - st->mark);
                put32(row + 16, st->retrans);
                put32(row + 20, st->mss);
                put32(row + 24, st->sndbuf);
                put32(row + 28, st->rcvbuf);
                t_end = st->t_end > t_end ? st->t_end : t_end;
            }
            put64(b + 8, t_end > se->t_mark && se->marked ? t_end - se->t_mark : 0);
            enum io w = write_full(fd, b, len, &run->stop, now_ns() + (uint64_t)(DRAIN_S * 1e9));
            free(b);
            pthread_mutex_lock(&run->mu);
            se->t_end = t_end;
            se->ok = all && se->marked && w == IO_OK;
            for (uint32_t i = 0; i < se->h.streams; i++)
                se->ok = se->ok && !se->s[i].failed;
            pthread_mutex_unlock(&run->mu);
            break;
        } else {
            break;
        }
    }
    pthread_mutex_lock(&run->mu);
    se->finished = true;
    run->finished++;
    pthread_cond_broadcast(&run->cv);
    pthread_mutex_unlock(&run->mu);
}

/* Looks up the session a data hello names and takes its stream slot.
 * Returns the slot, or NULL with why set. */
static struct sstream *take_stream(struct server_run *run, const struct hello *h,
                                   struct session **out, char *why, size_t len)
{
    struct sstream *st = NULL;
    pthread_mutex_lock(&run->mu);
    for (int i = 0; i < run->n_sessions && st == NULL; i++) {
        struct session *se = run->sessions[i];
        if (se->h.client_job != h->client_job || se->h.session != h->session)
            continue;
        if (se->finished || h->stream >= se->h.streams || se->s[h->stream].taken)
            snprintf(why, len, "stream %u is not expected", h->stream);
        else {
            st = &se->s[h->stream];
            st->taken = true;
            *out = se;
        }
        break;
    }
    if (st == NULL && why[0] == '\0')
        snprintf(why, len, "unknown session");
    pthread_mutex_unlock(&run->mu);
    return st;
}

/* Checks a control hello and opens its session. Returns it, or NULL with
 * why set. */
static struct session *open_session(struct server_run *run, const struct hello *h, char *why,
                                    size_t len)
{
    if (h->streams < 1 || h->streams > MAX_STREAMS || h->mode > MODE_RR || h->msg_size < 1 ||
        h->msg_size > MAX_MSG) {
        snprintf(why, len, "invalid hello");
        return NULL;
    }
    struct session *se = calloc(1, sizeof *se);
    if (se != NULL)
        se->s = calloc(h->streams, sizeof *se->s);
    if (se == NULL || se->s == NULL) {
        if (se != NULL)
            free(se);
        snprintf(why, len, "out of memory");
        return NULL;
    }
    se->h = *h;
    pthread_mutex_lock(&run->mu);
    bool room = run->n_sessions < MAX_SESSIONS;
    if (room)
        run->sessions[run->n_sessions++] = se;
    pthread_mutex_unlock(&run->mu);
    if (!room) {
        free(se->s);
        free(se);
        snprintf(why, len, "too many clients");
        return NULL;
    }
    return se;
}

static void *conn_main(void *arg)
{
    struct conn *c = arg;
    struct server_run *run = c->run;
    int fd = c->fd;
    set_ticks(fd);
    unsigned char b[HELLO_LEN];
    struct hello h;
    char why[120] = "";
    enum io r = read_full(fd, b, sizeof b, &run->stop, now_ns() + (uint64_t)(CONNECT_S * 1e9));
    if (r != IO_OK) {
        if (r != IO_STOP)
            refuse(run, fd, "no hello");
    } else if (!hello_decode(b, &h)) {
        refuse(run, fd, "not an hvbench net client");
    } else if (h.server_job != (uint64_t)run->ctx->job_id) {
        snprintf(why, sizeof why, "this is job %lld, not %llu", run->ctx->job_id,
                 (unsigned long long)h.server_job);
        refuse(run, fd, why);
    } else if (h.kind == CONN_CONTROL) {
        struct session *se = open_session(run, &h, why, sizeof why);
        if (se == NULL)
            refuse(run, fd, why);
        else {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            if (accept_reply(run, fd) == 0)
                serve_control(run, fd, se);
            else {
                pthread_mutex_lock(&run->mu);
                se->finished = true;
                run->finished++;
                pthread_mutex_unlock(&run->mu);
            }
        }
    } else if (h.kind == CONN_DATA) {
        struct session *se = NULL;
        struct sstream *st = take_stream(run, &h, &se, why, sizeof why);
        if (st == NULL)
            refuse(run, fd, why);
        else {
            /* The listener carries the server's own window; a client that
             * asks for another one gets it too (after the handshake it
             * bounds the buffers, not the window scale). */
            if (h.window != 0 && h.window != run->srv->p.window)
                apply_window(fd, h.window);
            if (h.mode == MODE_RR) {
                int one = 1;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            }
            if (accept_reply(run, fd) == 0)
                serve_stream(run, fd, &se->h, st);
            else {
                st->failed = true;
                st->t_end = now_ns();
                __atomic_store_n(&st->done, 1, __ATOMIC_RELEASE);
            }
        }
    } else {
        refuse(run, fd, "invalid hello");
    }
    close(fd);
    return NULL;
}

/* Accepts one connection and starts its thread. */
static void accept_one(struct server_run *run)
{
    int fd = accept4(run->srv->fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    if (run->n_conns == run->cap_conns) {
        size_t cap = run->cap_conns ? run->cap_conns * 2 : 16;
        struct conn **v = realloc(run->conns, cap * sizeof *v);
        if (v == NULL) {
            close(fd);
            return;
        }
        run->conns = v;
        run->cap_conns = cap;
    }
    struct conn *c = malloc(sizeof *c);
    if (c == NULL) {
        close(fd);
        return;
    }
    *c = (struct conn){.run = run, .fd = fd};
    if (pthread_create(&c->thread, NULL, conn_main, c) != 0) {
        close(fd);
        free(c);
        return;
    }
    run->conns[run->n_conns++] = c;
}

/* The bytes (or transactions) counted so far by every stream of every
 * session that is measuring, and whether any is. Called with run->mu held. */
static uint64_t measuring_count(struct server_run *run, bool *any)
{
    uint64_t sum = 0;
    *any = false;
    for (int i = 0; i < run->n_sessions; i++) {
        struct session *se = run->sessions[i];
        if (!se->marked || se->finished)
            continue;
        *any = true;
        for (uint32_t k = 0; k < se->h.streams; k++)
            sum += __atomic_load_n(&se->s[k].count, __ATOMIC_RELAXED);
    }
    return sum;
}

/* Turns the sessions that ended well into metrics and observed. */
static int server_report(struct server_run *run, struct hv_engine_result *out, int expected)
{
    json_t *clients = json_array();
    double rate = 0;
    uint64_t retrans = 0;
    int good = 0;
    bool rr = false, reverse = false;
    for (int i = 0; i < run->n_sessions; i++) {
        struct session *se = run->sessions[i];
        if (!se->ok)
            continue;
        double secs = (double)(se->t_end - se->t_mark) * 1e-9;
        uint64_t window = 0, total = 0;
        for (uint32_t k = 0; k < se->h.streams; k++) {
            window += se->s[k].count - se->s[k].mark;
            total += se->s[k].count;
            retrans += se->s[k].retrans;
        }
        if (!(secs > 0))
            continue;
        rr = se->h.mode == MODE_RR;
        reverse = se->h.reverse != 0;
        double r = rr ? (double)window / secs : (double)window * 8 / secs / 1e9;
        rate += r;
        good++;
        json_array_append_new(
            clients, json_pack("{s:I, s:i, s:s, s:b, s:I, s:I, s:f, s:f}", "client_job",
                               (json_int_t)se->h.client_job, "streams", (int)se->h.streams, "mode",
                               mode_names[rr], "reverse", reverse, rr ? "transactions" : "bytes",
                               (json_int_t)window, rr ? "transactions_total" : "bytes_total",
                               (json_int_t)total, "seconds", secs, rr ? "tps" : "gbps", r));
    }
    json_object_set_new(out->observed, "clients", clients);
    json_object_set_new(out->observed, "clients_expected", json_integer(expected));
    json_object_set_new(out->observed, "clients_done", json_integer(good));
    json_object_set_new(out->observed, "refused_connections", json_integer(run->refused));
    if (run->refused > 0)
        json_object_set_new(out->observed, "last_refusal", json_string(run->last_refusal));
    if (good == 0)
        return -1;
    int rc = rr ? hv_engine_add_metric(out, "net.rr.tps", rate, "tx/s", true)
                : hv_engine_add_metric(out, "net.tcp.gbps", rate, "Gbit/s", true);
    if (!rr && reverse)
        rc |= hv_engine_add_metric(out, "net.tcp.retransmits", (double)retrans, "count", false);
    return rc == 0 ? 0 : hv_engine_fail(out, "cannot record the metrics");
}

static int server_run(const struct hv_engine_ctx *ctx, struct hv_engine_result *out)
{
    struct net_server *srv = ctx->prepared;
    if (srv == NULL)
        return hv_engine_fail(out, "the server side was not prepared (no listening socket)");
    struct server_run run = {.ctx = ctx, .srv = srv};
    run.stop = (struct stopper){.ctx = ctx, .flag = &run.quit};
    run.buf_len = MAX_MSG;
    run.buf = payload(run.buf_len);
    pthread_mutex_init(&run.mu, NULL);
    pthread_cond_init(&run.cv, NULL);
    int expected = ctx->group_size >= 2 ? ctx->group_size - 1 : 1;
    uint64_t t0 = now_ns();
    uint64_t deadline = t0 + (uint64_t)((srv->p.warmup + srv->p.seconds + GRACE_S) * 1e9);
    struct sampler smp = {0};
    bool sampling = false;
    const char *metric = srv->p.mode == MODE_RR ? "net.rr.tps" : "net.tcp.gbps";
    double scale = srv->p.mode == MODE_RR ? 1 : 8e-9;
    int rc = 0;
    if (run.buf == NULL)
        rc = hv_engine_fail(out, "out of memory");
    while (rc == 0) {
        if (hv_engine_stopping(ctx)) {
            rc = hv_engine_fail(out, "stopped after %.1f s", (double)(now_ns() - t0) * 1e-9);
            break;
        }
        uint64_t now = now_ns();
        pthread_mutex_lock(&run.mu);
        bool all = run.finished >= expected;
        bool any;
        uint64_t count = measuring_count(&run, &any);
        pthread_mutex_unlock(&run.mu);
        if (any && !sampling)
            sampler_start(&smp, now, count);
        else if (any)
            sampler_tick(&smp, ctx, out, metric, t0, now, count, scale);
        sampling = any;
        if (all || now >= deadline)
            break;
        struct pollfd p = {.fd = srv->fd, .events = POLLIN};
        if (poll(&p, 1, (int)(TICK_NS / 1000000)) > 0)
            accept_one(&run);
    }
    __atomic_store_n(&run.quit, 1, __ATOMIC_RELAXED);
    for (size_t i = 0; i < run.n_conns; i++) {
        pthread_join(run.conns[i]->thread, NULL);
        free(run.conns[i]);
    }
    free(run.conns);
    close(srv->fd);
    json_object_set_new(out->observed, "role", json_string("server"));
    json_object_set_new(out->observed, "port", json_integer(srv->port));
    json_object_set_new(out->observed, "window_requested",
                        srv->p.window ? json_integer((json_int_t)srv->p.window) : json_null());
    if (rc == 0) {
        sampler_observe(&smp, out->observed);
        if (server_report(&run, out, expected) != 0 && out->error[0] == '\0')
            rc = run.n_sessions == 0
                     ? hv_engine_fail(out, "no client connected within %.0f s (expected %d)",
                                      srv->p.warmup + srv->p.seconds + GRACE_S, expected)
                     : hv_engine_fail(out,
                                      "no client completed its run (%d connected, %d "
                                      "refused connections%s%s)",
                                      run.n_sessions, run.refused, run.refused ? ", last: " : "",
                                      run.refused ? run.last_refusal : "");
        else if (out->error[0] != '\0')
            rc = -1;
    }
    for (int i = 0; i < run.n_sessions; i++) {
        free(run.sessions[i]->s);
        free(run.sessions[i]);
    }
    free(smp.v);
    free(run.buf);
    pthread_cond_destroy(&run.cv);
    pthread_mutex_destroy(&run.mu);
    free(srv); /* ctx->prepared is spent: the caller must not unprepare after run() */
    return rc;
}

int hv_engine_net_prepare(struct hv_engine_ctx *ctx, struct hv_endpoint *ep,
                          struct hv_engine_result *out)
{
    struct net_params p;
    if (parse_params(ctx->params, &p, out) != 0)
        return -1;
    /* Every address: IPv6 with IPv4 mapped in, or IPv4 alone on a host
     * without IPv6. */
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int rc;
    if (fd >= 0) {
        int off = 0;
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
        apply_window(fd, p.window);
        struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_addr = in6addr_any};
        rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    } else {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return hv_engine_fail(out, "cannot create a TCP socket: %s", strerror(errno));
        apply_window(fd, p.window);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
        rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    }
    struct sockaddr_storage bound;
    socklen_t len = sizeof bound;
    if (rc != 0 || listen(fd, 256) != 0 || getsockname(fd, (struct sockaddr *)&bound, &len) != 0) {
        int e = errno;
        close(fd);
        return hv_engine_fail(out, "cannot listen on a TCP port: %s", strerror(e));
    }
    struct net_server *srv = malloc(sizeof *srv);
    if (srv == NULL) {
        close(fd);
        return hv_engine_fail(out, "out of memory");
    }
    int port = bound.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&bound)->sin6_port)
                                           : ntohs(((struct sockaddr_in *)&bound)->sin_port);
    *srv = (struct net_server){.fd = fd, .port = port, .p = p};
    ep->host[0] = '\0';
    ep->port = port;
    ctx->prepared = srv;
    return 0;
}

void hv_engine_net_unprepare(struct hv_engine_ctx *ctx)
{
    struct net_server *srv = ctx->prepared;
    if (srv == NULL)
        return;
    close(srv->fd);
    free(srv);
    ctx->prepared = NULL;
}

/* ---------------------------------------------------------------------
 * The client side. */

enum phase { PHASE_WARMUP, PHASE_MEASURE, PHASE_END };

struct client_run;

/* One data connection as the client sees it. */
struct cstream {
    struct client_run *run;
    int idx, fd;
    pthread_t thread;
    bool started;
    uint64_t count;     /* bytes or transactions; written by its thread, read atomically */
    uint64_t mark, end; /* count at the window's edges */
    uint32_t sndbuf, rcvbuf, mss, retrans;
    struct reply peer;         /* the server's answer to the hello */
    struct hv_disk_hist *hist; /* rr: round trips in the window, ns */
    char error[200];
};

struct client_run {
    const struct hv_engine_ctx *ctx;
    struct hv_engine_result *out;
    struct net_params p;
    struct stopper stop;
    int quit;           /* set (atomically) when a stream failed: all end */
    int phase;          /* enum phase, written by the main thread */
    unsigned char *buf; /* payload (shared, read-only) */
    struct cstream *s;
    int ctl;
    struct hello hello;
    char server[300]; /* "host:port" for messages */
};

static void stream_fail(struct cstream *st, const char *what, enum io r)
{
    snprintf(st->error, sizeof st->error, "stream %d: %s: %s", st->idx, what, io_text(r));
    __atomic_store_n(&st->run->quit, 1, __ATOMIC_RELAXED);
}

static int phase_of(const struct client_run *run)
{
    return __atomic_load_n(&run->phase, __ATOMIC_ACQUIRE);
}

/* rr: one transaction after another until the end. */
static void client_rr(struct cstream *st, unsigned char *rbuf)
{
    struct client_run *run = st->run;
    size_t msg = run->p.msg_size;
    uint64_t count = 0;
    for (;;) {
        int ph = phase_of(run);
        if (ph == PHASE_END || stopped(&run->stop))
            return;
        uint64_t t1 = now_ns();
        enum io r = write_full(st->fd, run->buf, msg, &run->stop, 0);
        if (r != IO_OK)
            return stream_fail(st, "sending a request", r);
        r = read_full(st->fd, rbuf, msg, &run->stop, 0);
        if (r != IO_OK)
            return stream_fail(st, "reading a response", r);
        uint64_t t2 = now_ns();
        __atomic_store_n(&st->count, ++count, __ATOMIC_RELAXED);
        if (ph == PHASE_MEASURE && phase_of(run) == PHASE_MEASURE)
            hv_disk_hist_add(st->hist, t2 - t1);
    }
}

/* stream: send (or, with reverse, receive) until the end. */
static void client_stream(struct cstream *st, unsigned char *rbuf)
{
    struct client_run *run = st->run;
    size_t msg = run->p.msg_size;
    uint64_t count = 0;
    while (phase_of(run) != PHASE_END) {
        ssize_t n =
            run->p.reverse ? recv(st->fd, rbuf, msg, 0) : send(st->fd, run->buf, msg, MSG_NOSIGNAL);
        if (n > 0) {
            __atomic_store_n(&st->count, count += (uint64_t)n, __ATOMIC_RELAXED);
            continue;
        }
        if (n == 0) {
            errno = ECONNRESET;
            return stream_fail(st, "receiving", IO_ERROR);
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return stream_fail(st, run->p.reverse ? "receiving" : "sending", IO_ERROR);
        if (stopped(&run->stop))
            return;
    }
}

/* After the end: half-closes and reads until the server closes, counting
 * what still arrives with reverse (the bytes the server sent before it saw
 * the end). */
static void client_drain(struct cstream *st, unsigned char *rbuf)
{
    struct client_run *run = st->run;
    /* The buffers as autotuning left them, and the retransmits so far. */
    buffers(st->fd, &st->sndbuf, &st->rcvbuf);
    if (!run->p.reverse)
        st->retrans = retrans_of(st->fd);
    shutdown(st->fd, SHUT_WR);
    uint64_t deadline = now_ns() + (uint64_t)(DRAIN_S * 1e9);
    for (;;) {
        ssize_t n = recv(st->fd, rbuf, run->p.msg_size, 0);
        if (n > 0) {
            if (run->p.reverse && run->p.mode == MODE_STREAM)
                __atomic_store_n(&st->count, st->count + (uint64_t)n, __ATOMIC_RELAXED);
            continue;
        }
        if (n == 0)
            break;
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return stream_fail(st, "waiting for the server's end", IO_ERROR);
        if (stopped(&run->stop))
            return;
        if (now_ns() >= deadline)
            return stream_fail(st, "waiting for the server's end", IO_TIMEOUT);
    }
    if (!run->p.reverse)
        st->retrans = retrans_of(st->fd);
}

static void *stream_main(void *arg)
{
    struct cstream *st = arg;
    struct client_run *run = st->run;
    unsigned char *rbuf = malloc(run->p.msg_size);
    if (rbuf == NULL) {
        snprintf(st->error, sizeof st->error, "stream %d: out of memory", st->idx);
        __atomic_store_n(&run->quit, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    if (run->p.mode == MODE_RR)
        client_rr(st, rbuf);
    else
        client_stream(st, rbuf);
    if (st->error[0] == '\0' && !stopped(&run->stop))
        client_drain(st, rbuf);
    free(rbuf);
    return NULL;
}

/* Connects to host:port (any of its addresses) within CONNECT_S, the
 * window applied first. Returns the socket, or -1 with out->error set. */
static int dial(struct client_run *run, const char *host, int port)
{
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    int e = getaddrinfo(host, service, &hints, &res);
    if (e != 0)
        return hv_engine_fail(run->out, "cannot resolve the server's address \"%s\": %s", host,
                              gai_strerror(e));
    int fd = -1;
    char last[200] = "no address";
    uint64_t deadline = now_ns() + (uint64_t)(CONNECT_S * 1e9);
    for (struct addrinfo *a = res; a != NULL && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (fd < 0) {
            snprintf(last, sizeof last, "%s", strerror(errno));
            continue;
        }
        apply_window(fd, run->p.window);
        int rc = connect(fd, a->ai_addr, a->ai_addrlen);
        int err = rc == 0 ? 0 : errno;
        while (err == EINPROGRESS) {
            if (stopped(&run->stop) || now_ns() >= deadline) {
                err = stopped(&run->stop) ? ECANCELED : ETIMEDOUT;
                break;
            }
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            if (poll(&p, 1, (int)(TICK_NS / 1000000)) > 0) {
                socklen_t len = sizeof err;
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
            }
        }
        if (err != 0) {
            snprintf(last, sizeof last, "%s", err == ECANCELED ? "stopped" : strerror(err));
            close(fd);
            fd = -1;
            continue;
        }
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        set_ticks(fd);
    }
    freeaddrinfo(res);
    if (fd < 0)
        hv_engine_fail(run->out, "cannot connect to the server at %s: %s", run->server, last);
    return fd;
}

/* Connects and says hello; kind and stream as in struct hello. Returns
 * the socket with *rep filled, or -1 with out->error set. */
static int open_conn(struct client_run *run, const char *host, int port, uint32_t kind,
                     uint32_t stream, struct reply *rep)
{
    int fd = dial(run, host, port);
    if (fd < 0)
        return -1;
    if (kind == CONN_CONTROL || run->p.mode == MODE_RR) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    struct hello h = run->hello;
    h.kind = kind;
    h.stream = stream;
    unsigned char b[HELLO_LEN > REPLY_LEN ? HELLO_LEN : REPLY_LEN];
    hello_encode(&h, b);
    uint64_t deadline = now_ns() + (uint64_t)(CONNECT_S * 1e9);
    enum io r = write_full(fd, b, HELLO_LEN, &run->stop, deadline);
    if (r == IO_OK)
        r = read_full(fd, b, REPLY_LEN, &run->stop, deadline);
    if (r != IO_OK) {
        close(fd);
        return hv_engine_fail(run->out, "the server at %s did not answer the hello: %s",
                              run->server, io_text(r));
    }
    if (!reply_decode(b, rep)) {
        close(fd);
        return hv_engine_fail(run->out, "the server at %s is not an hvbench net server",
                              run->server);
    }
    if (rep->status != 0) {
        close(fd);
        return hv_engine_fail(run->out, "the server at %s refused the connection: %s", run->server,
                              rep->reason);
    }
    return fd;
}

/* The group's server endpoint from ctx->endpoints: host, port, job id. */
static int find_server(struct client_run *run, const char **host, int *port, uint64_t *job)
{
    const json_t *eps = run->ctx->endpoints;
    if (eps == NULL)
        return hv_engine_fail(run->out, "no server endpoint: this job's group announced none "
                                        "(the client side needs the server side's ready call)");
    if (!json_is_array(eps))
        return hv_engine_fail(run->out, "invalid endpoints: must be an array");
    size_t i;
    json_t *e;
    json_array_foreach(eps, i, e)
    {
        const char *role = json_string_value(json_object_get(e, "role"));
        if (role == NULL || strcmp(role, "server") != 0)
            continue;
        json_t *h = json_object_get(e, "host"), *p = json_object_get(e, "port"),
               *j = json_object_get(e, "job_id");
        if (!json_is_string(h) || json_string_length(h) == 0 || !json_is_integer(p) ||
            json_integer_value(p) < 1 || json_integer_value(p) > 65535)
            return hv_engine_fail(run->out,
                                  "invalid server endpoint: needs a host and a port from 1 to "
                                  "65535");
        *host = json_string_value(h);
        *port = (int)json_integer_value(p);
        *job =
            json_is_integer(j) && json_integer_value(j) > 0 ? (uint64_t)json_integer_value(j) : 0;
        return 0;
    }
    return hv_engine_fail(run->out,
                          "no server endpoint among the group's %zu endpoint(s): the "
                          "server side did not announce where it listens",
                          json_array_size(eps));
}

/* Sleeps until t (monotonic ns) in ticks; false when a stop or a failed
 * stream came first. */
static bool client_wait(struct client_run *run, uint64_t t, struct sampler *smp, uint64_t t0)
{
    for (;;) {
        if (stopped(&run->stop))
            return false;
        uint64_t now = now_ns();
        if (smp != NULL) {
            uint64_t count = 0;
            for (long i = 0; i < run->p.streams; i++)
                count += __atomic_load_n(&run->s[i].count, __ATOMIC_RELAXED);
            sampler_tick(smp, run->ctx, run->out,
                         run->p.mode == MODE_RR ? "net.rr.tps" : "net.tcp.gbps", t0, now, count,
                         run->p.mode == MODE_RR ? 1 : 8e-9);
        }
        if (now >= t)
            return true;
        uint64_t nap = t - now < TICK_NS ? t - now : TICK_NS;
        if (smp != NULL && smp->next > now && smp->next - now < nap)
            nap = smp->next - now;
        struct timespec ts = {.tv_sec = (time_t)(nap / 1000000000u),
                              .tv_nsec = (long)(nap % 1000000000u)};
        nanosleep(&ts, NULL);
    }
}

static uint64_t snapshot(struct client_run *run, bool end)
{
    uint64_t sum = 0;
    for (long i = 0; i < run->p.streams; i++) {
        uint64_t c = __atomic_load_n(&run->s[i].count, __ATOMIC_RELAXED);
        if (end)
            run->s[i].end = c;
        else
            run->s[i].mark = c;
        sum += c;
    }
    return sum;
}

static int send_cmd(struct client_run *run, uint32_t cmd)
{
    unsigned char b[CMD_LEN] = {0};
    put32(b, cmd);
    enum io r =
        write_full(run->ctl, b, sizeof b, &run->stop, now_ns() + (uint64_t)(CONNECT_S * 1e9));
    return r == IO_OK ? 0
                      : hv_engine_fail(run->out, "the control connection to %s failed: %s",
                                       run->server, io_text(r));
}

/* Reads the server's counts and checks them against ours. */
static int read_summary(struct client_run *run, struct stream_sum *sum, double *server_secs)
{
    unsigned char head[SUM_HEAD];
    uint64_t deadline = now_ns() + (uint64_t)((DRAIN_S + CONNECT_S) * 1e9);
    enum io r = read_full(run->ctl, head, sizeof head, &run->stop, deadline);
    if (r != IO_OK)
        return hv_engine_fail(run->out, "the server at %s sent no counts: %s", run->server,
                              io_text(r));
    if (get32(head) != (uint32_t)run->p.streams)
        return hv_engine_fail(run->out, "the server at %s counted %u streams, not %ld", run->server,
                              get32(head), run->p.streams);
    if (get32(head + 4) != 0)
        return hv_engine_fail(run->out, "the server at %s did not see every stream end",
                              run->server);
    *server_secs = (double)get64(head + 8) * 1e-9;
    for (long i = 0; i < run->p.streams; i++) {
        unsigned char row[SUM_ROW];
        r = read_full(run->ctl, row, sizeof row, &run->stop, deadline);
        if (r != IO_OK)
            return hv_engine_fail(run->out, "the server at %s sent no counts: %s", run->server,
                                  io_text(r));
        sum[i] = (struct stream_sum){.total = get64(row),
                                     .window = get64(row + 8),
                                     .retrans = get32(row + 16),
                                     .mss = get32(row + 20),
                                     .sndbuf = get32(row + 24),
                                     .rcvbuf = get32(row + 28)};
    }
    const char *unit = run->p.mode == MODE_RR ? "transactions" : "bytes";
    for (long i = 0; i < run->p.streams; i++)
        if (sum[i].total != run->s[i].count)
            return hv_engine_fail(run->out,
                                  "stream %ld: the client counted %llu %s, the server %llu: the "
                                  "connection lost or invented data",
                                  i, (unsigned long long)run->s[i].count, unit,
                                  (unsigned long long)sum[i].total);
    return 0;
}

/* Metrics and observed from the window's counts. */
static int client_report(struct client_run *run, double secs, const struct stream_sum *sum,
                         double server_secs)
{
    struct hv_engine_result *out = run->out;
    json_t *obs = out->observed;
    json_t *streams = json_array();
    uint64_t window = 0, total = 0, server_window = 0;
    uint32_t retrans = 0;
    double lo = INFINITY, hi = 0;
    bool rr = run->p.mode == MODE_RR;
    for (long i = 0; i < run->p.streams; i++) {
        struct cstream *st = &run->s[i];
        uint64_t w = st->end - st->mark;
        double rate = rr ? (double)w / secs : (double)w * 8 / secs / 1e9;
        lo = rate < lo ? rate : lo;
        hi = rate > hi ? rate : hi;
        window += w;
        total += st->count;
        server_window += sum[i].window;
        uint32_t re = run->p.reverse ? sum[i].retrans : st->retrans;
        retrans += re;
        json_t *o = json_pack(
            "{s:i, s:I, s:I, s:f, s:i, s:i, s:i, s:i, s:i, s:i}", "stream", (int)i,
            rr ? "transactions" : "bytes", (json_int_t)w, rr ? "transactions_total" : "bytes_total",
            (json_int_t)st->count, rr ? "tps" : "gbps", rate, "mss", (int)st->mss, "sndbuf",
            (int)st->sndbuf, "rcvbuf", (int)st->rcvbuf, "server_sndbuf", (int)sum[i].sndbuf,
            "server_rcvbuf", (int)sum[i].rcvbuf, "retransmits", (int)re);
        json_array_append_new(streams, o);
    }
    int rc = 0;
    if (rr) {
        struct hv_disk_hist *h = run->s[0].hist;
        for (long i = 1; i < run->p.streams; i++)
            hv_disk_hist_merge(h, run->s[i].hist);
        if (h->count == 0) {
            json_decref(streams);
            return hv_engine_fail(out, "no transaction completed in the measured window");
        }
        rc |= hv_engine_add_metric(out, "net.rr.tps", (double)window / secs, "tx/s", true);
        rc |= hv_engine_add_metric(out, "net.rr.lat_p50_us",
                                   (double)hv_disk_hist_percentile(h, 50) / 1e3, "us", false);
        rc |= hv_engine_add_metric(out, "net.rr.lat_p99_us",
                                   (double)hv_disk_hist_percentile(h, 99) / 1e3, "us", false);
        rc |= hv_engine_add_metric(out, "net.rr.lat_max_us", (double)h->max / 1e3, "us", false);
        json_object_set_new(obs, "transactions", json_integer((json_int_t)window));
        json_object_set_new(obs, "latencies", json_integer((json_int_t)h->count));
    } else {
        if (window == 0) {
            json_decref(streams);
            return hv_engine_fail(out, "no byte moved in the measured window");
        }
        rc |= hv_engine_add_metric(out, "net.tcp.gbps", (double)window * 8 / secs / 1e9, "Gbit/s",
                                   true);
        rc |= hv_engine_add_metric(out, "net.tcp.stream_gbps_min", lo, "Gbit/s", true);
        rc |= hv_engine_add_metric(out, "net.tcp.stream_gbps_max", hi, "Gbit/s", true);
        rc |= hv_engine_add_metric(out, "net.tcp.retransmits", (double)retrans, "count", false);
        json_object_set_new(obs, "bytes", json_integer((json_int_t)window));
        json_object_set_new(obs, "bytes_total", json_integer((json_int_t)total));
        json_object_set_new(obs, "counted_by", json_string(run->p.reverse ? "receiver" : "sender"));
    }
    json_object_set_new(obs, "streams", streams);
    json_object_set_new(obs, "seconds", json_real(secs));
    /* The server's buffers as they ended (its hello reply had them as
     * they started). */
    json_t *w = json_object_get(obs, "window");
    json_object_set_new(w, "server_sndbuf", json_integer(sum[0].sndbuf));
    json_object_set_new(w, "server_rcvbuf", json_integer(sum[0].rcvbuf));
    json_object_set_new(obs, "server_counts",
                        json_pack("{s:I, s:f}", rr ? "transactions" : "bytes",
                                  (json_int_t)server_window, "seconds", server_secs));
    return rc == 0 ? 0 : hv_engine_fail(out, "cannot record the metrics");
}

static void client_observe_setup(struct client_run *run)
{
    json_t *obs = run->out->observed;
    struct cstream *s0 = &run->s[0];
    json_object_set_new(obs, "role", json_string("client"));
    json_object_set_new(obs, "server", json_string(run->server));
    json_object_set_new(obs, "mode", json_string(mode_names[run->p.mode]));
    json_object_set_new(obs, "streams_count", json_integer(run->p.streams));
    json_object_set_new(obs, "msg_size", json_integer((json_int_t)run->p.msg_size));
    json_object_set_new(obs, "reverse", json_boolean(run->p.reverse));
    json_object_set_new(obs, "warmup", json_real(run->p.warmup));
    json_object_set_new(obs, "mss", json_integer(s0->mss));
    json_t *w = json_pack("{s:o, s:i, s:i, s:i, s:i}", "requested",
                          run->p.window ? json_integer((json_int_t)run->p.window) : json_null(),
                          "sndbuf", (int)s0->sndbuf, "rcvbuf", (int)s0->rcvbuf, "server_sndbuf",
                          (int)s0->peer.sndbuf, "server_rcvbuf", (int)s0->peer.rcvbuf);
    /* Buffers as the run ended (autotuning grows them). Linux reports
     * twice what was set; less than asked means the net.core.wmem_max /
     * rmem_max caps cut the window. */
    if (w != NULL && run->p.window != 0)
        json_object_set_new(w, "capped",
                            json_boolean(s0->sndbuf < run->p.window || s0->rcvbuf < run->p.window ||
                                         s0->peer.rcvbuf < run->p.window ||
                                         s0->peer.sndbuf < run->p.window));
    json_object_set_new(obs, "window", w);
    observe_path(s0->fd, obs);
}

static void client_close(struct client_run *run)
{
    for (long i = 0; run->s != NULL && i < run->p.streams; i++) {
        if (run->s[i].fd >= 0)
            close(run->s[i].fd);
        free(run->s[i].hist);
    }
    if (run->ctl >= 0)
        close(run->ctl);
    free(run->s);
    free(run->buf);
}

static int client_run(const struct hv_engine_ctx *ctx, struct hv_engine_result *out)
{
    struct client_run run = {.ctx = ctx, .out = out, .ctl = -1};
    run.stop = (struct stopper){.ctx = ctx, .flag = &run.quit};
    if (parse_params(ctx->params, &run.p, out) != 0)
        return -1;
    const char *host = NULL;
    int port = 0;
    uint64_t server_job = 0;
    if (find_server(&run, &host, &port, &server_job) != 0)
        return -1;
    snprintf(run.server, sizeof run.server, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
    uint64_t session = 0;
    if (getrandom(&session, sizeof session, 0) != (ssize_t)sizeof session)
        session = now_ns() ^ ((uint64_t)getpid() << 32);
    run.hello = (struct hello){.server_job = server_job,
                               .client_job = (uint64_t)ctx->job_id,
                               .session = session,
                               .streams = (uint32_t)run.p.streams,
                               .mode = run.p.mode,
                               .reverse = run.p.reverse,
                               .window = (uint32_t)run.p.window,
                               .msg_size = (uint32_t)run.p.msg_size};
    run.buf = payload(run.p.msg_size);
    run.s = calloc((size_t)run.p.streams, sizeof *run.s);
    int rc = -1;
    if (run.buf == NULL || run.s == NULL) {
        hv_engine_fail(out, "out of memory");
        goto done;
    }
    for (long i = 0; i < run.p.streams; i++) {
        run.s[i] = (struct cstream){.run = &run, .idx = (int)i, .fd = -1};
        if (run.p.mode == MODE_RR && (run.s[i].hist = malloc(sizeof *run.s[i].hist)) == NULL) {
            hv_engine_fail(out, "out of memory");
            goto done;
        }
        if (run.s[i].hist != NULL)
            hv_disk_hist_reset(run.s[i].hist);
    }
    struct reply ctl_rep;
    run.ctl = open_conn(&run, host, port, CONN_CONTROL, 0, &ctl_rep);
    if (run.ctl < 0)
        goto done;
    for (long i = 0; i < run.p.streams; i++) {
        struct cstream *st = &run.s[i];
        st->fd = open_conn(&run, host, port, CONN_DATA, (uint32_t)i, &st->peer);
        if (st->fd < 0)
            goto done;
        st->mss = mss_of(st->fd);
        buffers(st->fd, &st->sndbuf, &st->rcvbuf);
    }
    uint64_t t0 = now_ns();
    for (long i = 0; i < run.p.streams; i++) {
        if (pthread_create(&run.s[i].thread, NULL, stream_main, &run.s[i]) != 0) {
            hv_engine_fail(out, "cannot start stream %ld", i);
            __atomic_store_n(&run.quit, 1, __ATOMIC_RELAXED);
            break;
        }
        run.s[i].started = true;
    }
    struct sampler smp = {0};
    uint64_t t_mark = 0, t_end = 0;
    bool ran =
        out->error[0] == '\0' && client_wait(&run, t0 + (uint64_t)(run.p.warmup * 1e9), NULL, t0);
    if (ran) {
        t_mark = now_ns();
        uint64_t c = snapshot(&run, false);
        __atomic_store_n(&run.phase, PHASE_MEASURE, __ATOMIC_RELEASE);
        sampler_start(&smp, t_mark, c);
        ran = send_cmd(&run, CMD_MARK) == 0 &&
              client_wait(&run, t_mark + (uint64_t)(run.p.seconds * 1e9), &smp, t0);
    }
    if (ran) {
        t_end = now_ns();
        snapshot(&run, true);
    }
    __atomic_store_n(&run.phase, PHASE_END, __ATOMIC_RELEASE);
    for (long i = 0; i < run.p.streams; i++)
        if (run.s[i].started)
            pthread_join(run.s[i].thread, NULL);
    client_observe_setup(&run);
    if (hv_engine_stopping(ctx)) {
        hv_engine_fail(out, "stopped after %.1f s", (double)(now_ns() - t0) * 1e-9);
        goto done_smp;
    }
    for (long i = 0; i < run.p.streams; i++)
        if (run.s[i].error[0] != '\0') {
            hv_engine_fail(out, "%s (server %s)", run.s[i].error, run.server);
            goto done_smp;
        }
    if (!ran || out->error[0] != '\0') {
        if (out->error[0] == '\0')
            hv_engine_fail(out, "the run ended early");
        goto done_smp;
    }
    struct stream_sum *sum = calloc((size_t)run.p.streams, sizeof *sum);
    double server_secs = 0;
    if (sum == NULL)
        hv_engine_fail(out, "out of memory");
    else if (send_cmd(&run, CMD_END) == 0 && read_summary(&run, sum, &server_secs) == 0) {
        sampler_observe(&smp, out->observed);
        rc = client_report(&run, (double)(t_end - t_mark) * 1e-9, sum, server_secs);
    }
    free(sum);
done_smp:
    free(smp.v);
done:
    client_close(&run);
    return rc;
}

int hv_engine_net_run(const struct hv_engine_ctx *ctx, struct hv_engine_result *out)
{
    if (ctx->role != NULL && strcmp(ctx->role, "server") == 0)
        return server_run(ctx, out);
    return client_run(ctx, out);
}
