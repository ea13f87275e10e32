/* net_client.c — the client side of the built-in net engine: connects to
 * the server the group announced, runs the streams through the warm-up
 * and the measured window, and checks its counts against the server's;
 * see net.h and the design notes at the top of net.c. */
#include "worker/engines/hist.h"
#include "worker/engines/net.h"
#include "worker/engines/net_wire.h"
#include "timeutil.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

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
    struct hv_net_reply peer; /* the server's answer to the hello */
    struct hv_hist *hist;     /* rr: round trips in the window, ns */
    char error[200];
};

struct client_run {
    const struct hv_engine_ctx *ctx;
    struct hv_engine_result *out;
    struct hv_net_settings p;
    struct hv_net_stopper stop;
    int quit;           /* set (atomically) when a stream failed: all end */
    int phase;          /* enum phase, written by the main thread */
    unsigned char *buf; /* payload (shared, read-only) */
    struct cstream *s;
    int ctl;
    struct hv_net_hello hello;
    char server[300]; /* "host:port" for messages */
};

static void stream_fail(struct cstream *st, const char *what, enum hv_net_io r)
{
    snprintf(st->error, sizeof st->error, "stream %d: %s: %s", st->idx, what, hv_net_io_text(r));
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
        if (ph == PHASE_END || hv_net_stopped(&run->stop))
            return;
        uint64_t t1 = hv_monotonic_ns();
        enum hv_net_io r = hv_net_write_full(st->fd, run->buf, msg, &run->stop, 0);
        if (r != HV_NET_IO_OK)
            return stream_fail(st, "sending a request", r);
        r = hv_net_read_full(st->fd, rbuf, msg, &run->stop, 0);
        if (r != HV_NET_IO_OK)
            return stream_fail(st, "reading a response", r);
        uint64_t t2 = hv_monotonic_ns();
        __atomic_store_n(&st->count, ++count, __ATOMIC_RELAXED);
        if (ph == PHASE_MEASURE && phase_of(run) == PHASE_MEASURE)
            hv_hist_add(st->hist, t2 - t1);
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
            return stream_fail(st, "receiving", HV_NET_IO_ERROR);
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return stream_fail(st, run->p.reverse ? "receiving" : "sending", HV_NET_IO_ERROR);
        if (hv_net_stopped(&run->stop))
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
    hv_net_buffers(st->fd, &st->sndbuf, &st->rcvbuf);
    if (!run->p.reverse)
        st->retrans = hv_net_retrans(st->fd);
    shutdown(st->fd, SHUT_WR);
    uint64_t deadline = hv_monotonic_ns() + (uint64_t)(HV_NET_DRAIN_S * 1e9);
    for (;;) {
        ssize_t n = recv(st->fd, rbuf, run->p.msg_size, 0);
        if (n > 0) {
            if (run->p.reverse && run->p.mode == HV_NET_STREAM)
                __atomic_store_n(&st->count, st->count + (uint64_t)n, __ATOMIC_RELAXED);
            continue;
        }
        if (n == 0)
            break;
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return stream_fail(st, "waiting for the server's end", HV_NET_IO_ERROR);
        if (hv_net_stopped(&run->stop))
            return;
        if (hv_monotonic_ns() >= deadline)
            return stream_fail(st, "waiting for the server's end", HV_NET_IO_TIMEOUT);
    }
    if (!run->p.reverse)
        st->retrans = hv_net_retrans(st->fd);
}

static void *stream_main(void *arg)
{
    struct cstream *st = arg;
    hv_engine_thread_name("hv-net");
    struct client_run *run = st->run;
    unsigned char *rbuf = malloc(run->p.msg_size);
    if (rbuf == NULL) {
        snprintf(st->error, sizeof st->error, "stream %d: out of memory", st->idx);
        __atomic_store_n(&run->quit, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    if (run->p.mode == HV_NET_RR)
        client_rr(st, rbuf);
    else
        client_stream(st, rbuf);
    if (st->error[0] == '\0' && !hv_net_stopped(&run->stop))
        client_drain(st, rbuf);
    free(rbuf);
    return NULL;
}

/* Connects to host:port (any of its addresses) within HV_NET_CONNECT_S, the
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
    uint64_t deadline = hv_monotonic_ns() + (uint64_t)(HV_NET_CONNECT_S * 1e9);
    for (struct addrinfo *a = res; a != NULL && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (fd < 0) {
            snprintf(last, sizeof last, "%s", strerror(errno));
            continue;
        }
        hv_net_apply_window(fd, run->p.window);
        int rc = connect(fd, a->ai_addr, a->ai_addrlen);
        int err = rc == 0 ? 0 : errno;
        while (err == EINPROGRESS) {
            if (hv_net_stopped(&run->stop) || hv_monotonic_ns() >= deadline) {
                err = hv_net_stopped(&run->stop) ? ECANCELED : ETIMEDOUT;
                break;
            }
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            if (poll(&p, 1, (int)(HV_NET_TICK_NS / 1000000)) > 0) {
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
        hv_net_set_ticks(fd);
    }
    freeaddrinfo(res);
    if (fd < 0)
        hv_engine_fail(run->out, "cannot connect to the server at %s: %s", run->server, last);
    return fd;
}

/* Connects and says hello; kind and stream as in struct hv_net_hello. Returns
 * the socket with *rep filled, or -1 with out->error set. */
static int open_conn(struct client_run *run, const char *host, int port, uint32_t kind,
                     uint32_t stream, struct hv_net_reply *rep)
{
    int fd = dial(run, host, port);
    if (fd < 0)
        return -1;
    if (kind == HV_NET_CONTROL || run->p.mode == HV_NET_RR) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    struct hv_net_hello h = run->hello;
    h.kind = kind;
    h.stream = stream;
    unsigned char b[HV_NET_HELLO_LEN > HV_NET_REPLY_LEN ? HV_NET_HELLO_LEN : HV_NET_REPLY_LEN];
    hv_net_hello_encode(&h, b);
    uint64_t deadline = hv_monotonic_ns() + (uint64_t)(HV_NET_CONNECT_S * 1e9);
    enum hv_net_io r = hv_net_write_full(fd, b, HV_NET_HELLO_LEN, &run->stop, deadline);
    if (r == HV_NET_IO_OK)
        r = hv_net_read_full(fd, b, HV_NET_REPLY_LEN, &run->stop, deadline);
    if (r != HV_NET_IO_OK) {
        close(fd);
        return hv_engine_fail(run->out, "the server at %s did not answer the hello: %s",
                              run->server, hv_net_io_text(r));
    }
    if (!hv_net_reply_decode(b, rep)) {
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

/* How long the client's coordinating thread sleeps at most between looks
 * at the stop flags while its streams run: it is not an engine thread (the
 * streams are), so each wake-up is the worker's own cost during the
 * measurement. Twenty wake-ups a second (one per HV_NET_TICK_NS) were 0.06
 * to 0.15 % of the streams' CPU; four keep a stop or a failed stream
 * noticed within a quarter second. */
#define CLIENT_WAIT_NS 250000000ULL

/* Sleeps until t (monotonic ns), waking for the next per-second sample
 * and at least every CLIENT_WAIT_NS; false when a stop or a failed stream
 * came first. */
static bool client_wait(struct client_run *run, uint64_t t, struct hv_net_sampler *smp, uint64_t t0)
{
    for (;;) {
        if (hv_net_stopped(&run->stop))
            return false;
        uint64_t now = hv_monotonic_ns();
        if (smp != NULL) {
            uint64_t count = 0;
            for (long i = 0; i < run->p.streams; i++)
                count += __atomic_load_n(&run->s[i].count, __ATOMIC_RELAXED);
            hv_net_sampler_tick(smp, run->ctx, run->out,
                                run->p.mode == HV_NET_RR ? "net.rr.tps" : "net.tcp.gbps", t0, now,
                                count, run->p.mode == HV_NET_RR ? 1 : 8e-9);
        }
        if (now >= t)
            return true;
        uint64_t nap = t - now < CLIENT_WAIT_NS ? t - now : CLIENT_WAIT_NS;
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
    unsigned char b[HV_NET_CMD_LEN] = {0};
    hv_net_put32(b, cmd);
    enum hv_net_io r = hv_net_write_full(run->ctl, b, sizeof b, &run->stop,
                                         hv_monotonic_ns() + (uint64_t)(HV_NET_CONNECT_S * 1e9));
    return r == HV_NET_IO_OK ? 0
                             : hv_engine_fail(run->out, "the control connection to %s failed: %s",
                                              run->server, hv_net_io_text(r));
}

/* Reads the server's counts and checks them against ours. */
static int read_summary(struct client_run *run, struct hv_net_sum *sum, double *server_secs)
{
    unsigned char head[HV_NET_SUM_HEAD];
    uint64_t deadline = hv_monotonic_ns() + (uint64_t)((HV_NET_DRAIN_S + HV_NET_CONNECT_S) * 1e9);
    enum hv_net_io r = hv_net_read_full(run->ctl, head, sizeof head, &run->stop, deadline);
    if (r != HV_NET_IO_OK)
        return hv_engine_fail(run->out, "the server at %s sent no counts: %s", run->server,
                              hv_net_io_text(r));
    if (hv_net_get32(head) != (uint32_t)run->p.streams)
        return hv_engine_fail(run->out, "the server at %s counted %u streams, not %ld", run->server,
                              hv_net_get32(head), run->p.streams);
    if (hv_net_get32(head + 4) != 0)
        return hv_engine_fail(run->out, "the server at %s did not see every stream end",
                              run->server);
    *server_secs = (double)hv_net_get64(head + 8) * 1e-9;
    for (long i = 0; i < run->p.streams; i++) {
        unsigned char row[HV_NET_SUM_ROW];
        r = hv_net_read_full(run->ctl, row, sizeof row, &run->stop, deadline);
        if (r != HV_NET_IO_OK)
            return hv_engine_fail(run->out, "the server at %s sent no counts: %s", run->server,
                                  hv_net_io_text(r));
        sum[i] = (struct hv_net_sum){.total = hv_net_get64(row),
                                     .window = hv_net_get64(row + 8),
                                     .retrans = hv_net_get32(row + 16),
                                     .mss = hv_net_get32(row + 20),
                                     .sndbuf = hv_net_get32(row + 24),
                                     .rcvbuf = hv_net_get32(row + 28)};
    }
    const char *unit = run->p.mode == HV_NET_RR ? "transactions" : "bytes";
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
static int client_report(struct client_run *run, double secs, const struct hv_net_sum *sum,
                         double server_secs)
{
    struct hv_engine_result *out = run->out;
    json_t *obs = out->observed;
    json_t *streams = json_array();
    uint64_t window = 0, total = 0, server_window = 0;
    uint32_t retrans = 0;
    double lo = INFINITY, hi = 0;
    bool rr = run->p.mode == HV_NET_RR;
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
        struct hv_hist *h = run->s[0].hist;
        for (long i = 1; i < run->p.streams; i++)
            hv_hist_merge(h, run->s[i].hist);
        if (h->count == 0) {
            json_decref(streams);
            return hv_engine_fail(out, "no transaction completed in the measured window");
        }
        rc |= hv_engine_add_metric(out, "net.rr.tps", (double)window / secs, "tx/s", true);
        rc |= hv_engine_add_metric(out, "net.rr.lat_p50_us",
                                   (double)hv_hist_percentile(h, 50) / 1e3, "us", false);
        rc |= hv_engine_add_metric(out, "net.rr.lat_p99_us",
                                   (double)hv_hist_percentile(h, 99) / 1e3, "us", false);
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
    json_object_set_new(obs, "mode", json_string(hv_net_mode_name(run->p.mode)));
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
    hv_net_observe_path(s0->fd, obs);
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

/* The hello every connection of the run starts with, for the server's
 * job server_job. */
static void client_hello(struct client_run *run, uint64_t server_job)
{
    uint64_t session = 0;
    if (getrandom(&session, sizeof session, 0) != (ssize_t)sizeof session)
        session = hv_monotonic_ns() ^ ((uint64_t)getpid() << 32);
    run->hello = (struct hv_net_hello){.server_job = server_job,
                                       .client_job = (uint64_t)run->ctx->job_id,
                                       .session = session,
                                       .streams = (uint32_t)run->p.streams,
                                       .mode = run->p.mode,
                                       .reverse = run->p.reverse,
                                       .window = (uint32_t)run->p.window,
                                       .msg_size = (uint32_t)run->p.msg_size};
}

/* The payload, the streams and (rr) their histograms. Returns 0, or -1
 * with out->error set. */
static int client_alloc(struct client_run *run)
{
    run->buf = hv_net_payload(run->p.msg_size);
    run->s = calloc((size_t)run->p.streams, sizeof *run->s);
    if (run->buf == NULL || run->s == NULL)
        return hv_engine_fail(run->out, "out of memory");
    for (long i = 0; i < run->p.streams; i++)
        run->s[i] = (struct cstream){.run = run, .idx = (int)i, .fd = -1};
    for (long i = 0; run->p.mode == HV_NET_RR && i < run->p.streams; i++) {
        if ((run->s[i].hist = malloc(sizeof *run->s[i].hist)) == NULL)
            return hv_engine_fail(run->out, "out of memory");
        hv_hist_reset(run->s[i].hist);
    }
    return 0;
}

/* Settings, the server, the hello, memory, then the control connection and
 * the streams. Returns 0, or -1 with out->error set (what was opened is
 * in run, for client_close()). */
static int client_connect(struct client_run *run)
{
    if (hv_net_settings(run->ctx->params, hv_engine_cpus(), &run->p, run->out->error,
                        sizeof run->out->error) != 0)
        return -1;
    const char *host = NULL;
    int port = 0;
    uint64_t server_job = 0;
    if (find_server(run, &host, &port, &server_job) != 0)
        return -1;
    snprintf(run->server, sizeof run->server, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
    client_hello(run, server_job);
    if (client_alloc(run) != 0)
        return -1;
    struct hv_net_reply ctl_rep;
    run->ctl = open_conn(run, host, port, HV_NET_CONTROL, 0, &ctl_rep);
    if (run->ctl < 0)
        return -1;
    for (long i = 0; i < run->p.streams; i++) {
        struct cstream *st = &run->s[i];
        st->fd = open_conn(run, host, port, HV_NET_DATA, (uint32_t)i, &st->peer);
        if (st->fd < 0)
            return -1;
        st->mss = hv_net_mss(st->fd);
        hv_net_buffers(st->fd, &st->sndbuf, &st->rcvbuf);
    }
    return 0;
}

int hv_net_client_run(const struct hv_engine_ctx *ctx, struct hv_engine_result *out)
{
    struct client_run run = {.ctx = ctx, .out = out, .ctl = -1};
    run.stop = (struct hv_net_stopper){.ctx = ctx, .flag = &run.quit};
    int rc = -1;
    if (client_connect(&run) != 0)
        goto done;
    uint64_t t0 = hv_monotonic_ns();
    for (long i = 0; i < run.p.streams; i++) {
        if (pthread_create(&run.s[i].thread, NULL, stream_main, &run.s[i]) != 0) {
            hv_engine_fail(out, "cannot start stream %ld", i);
            __atomic_store_n(&run.quit, 1, __ATOMIC_RELAXED);
            break;
        }
        run.s[i].started = true;
    }
    struct hv_net_sampler smp = {0};
    uint64_t t_mark = 0, t_end = 0;
    bool ran =
        out->error[0] == '\0' && client_wait(&run, t0 + (uint64_t)(run.p.warmup * 1e9), NULL, t0);
    if (ran) {
        t_mark = hv_monotonic_ns();
        uint64_t c = snapshot(&run, false);
        __atomic_store_n(&run.phase, PHASE_MEASURE, __ATOMIC_RELEASE);
        hv_net_sampler_start(&smp, t_mark, c);
        ran = send_cmd(&run, HV_NET_MARK) == 0 &&
              client_wait(&run, t_mark + (uint64_t)(run.p.seconds * 1e9), &smp, t0);
    }
    if (ran) {
        t_end = hv_monotonic_ns();
        snapshot(&run, true);
    }
    __atomic_store_n(&run.phase, PHASE_END, __ATOMIC_RELEASE);
    for (long i = 0; i < run.p.streams; i++)
        if (run.s[i].started)
            pthread_join(run.s[i].thread, NULL);
    client_observe_setup(&run);
    if (hv_engine_stopping(ctx)) {
        hv_engine_fail(out, "stopped after %.1f s", (double)(hv_monotonic_ns() - t0) * 1e-9);
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
    struct hv_net_sum *sum = calloc((size_t)run.p.streams, sizeof *sum);
    double server_secs = 0;
    if (sum == NULL)
        hv_engine_fail(out, "out of memory");
    else if (send_cmd(&run, HV_NET_END) == 0 && read_summary(&run, sum, &server_secs) == 0) {
        hv_net_sampler_observe(&smp, out->observed);
        rc = client_report(&run, (double)(t_end - t_mark) * 1e-9, sum, server_secs);
    }
    free(sum);
done_smp:
    free(smp.v);
done:
    client_close(&run);
    return rc;
}
