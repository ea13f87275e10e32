/* net_server.c — the server side of the built-in net engine: prepare()
 * listens, run() accepts the group's clients, serves their streams and
 * counts what moved between each client's marks; see net.h and the design
 * notes at the top of net.c. */
#include "worker/engines/net.h"
#include "worker/engines/net_wire.h"
#include "timeutil.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* At most this many clients per server run. */
#define MAX_SESSIONS 256
/* The server waits for its clients this long past warmup + seconds. */
#define GRACE_S 30.0

/* What prepare() leaves for run(). */
struct net_server {
    int fd;
    int port;
    struct hv_net_settings p;
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
    struct hv_net_hello h; /* the control hello */
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
    struct hv_net_stopper stop;
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
    struct hv_net_reply r = {.status = 1};
    snprintf(r.reason, sizeof r.reason, "%s", why);
    unsigned char b[HV_NET_REPLY_LEN];
    hv_net_reply_encode(&r, b);
    hv_net_write_full(fd, b, sizeof b, &run->stop,
                      hv_monotonic_ns() + (uint64_t)(HV_NET_CONNECT_S * 1e9));
    pthread_mutex_lock(&run->mu);
    run->refused++;
    snprintf(run->last_refusal, sizeof run->last_refusal, "%s", why);
    pthread_mutex_unlock(&run->mu);
}

static int accept_reply(struct server_run *run, int fd)
{
    struct hv_net_reply r = {.status = 0, .mss = hv_net_mss(fd)};
    hv_net_buffers(fd, &r.sndbuf, &r.rcvbuf);
    unsigned char b[HV_NET_REPLY_LEN];
    hv_net_reply_encode(&r, b);
    return hv_net_write_full(fd, b, sizeof b, &run->stop,
                             hv_monotonic_ns() + (uint64_t)(HV_NET_CONNECT_S * 1e9)) == HV_NET_IO_OK
               ? 0
               : -1;
}

/* Moves a stream's payload until the client ends it; see the top of the
 * file. Returns with st final (done set). */
static void serve_stream(struct server_run *run, int fd, const struct hv_net_hello *h,
                         struct sstream *st)
{
    size_t msg = h->msg_size;
    unsigned char *rbuf = malloc(msg);
    bool ok = rbuf != NULL;
    uint64_t count = 0;
    if (ok && h->mode == HV_NET_RR) {
        for (;;) {
            enum hv_net_io r = hv_net_read_full(fd, rbuf, msg, &run->stop, 0);
            if (r == HV_NET_IO_EOF)
                break;
            if (r != HV_NET_IO_OK ||
                hv_net_write_full(fd, run->buf, msg, &run->stop, 0) != HV_NET_IO_OK) {
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
            if (hv_net_stopped(&run->stop)) {
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
        st->retrans = hv_net_retrans(fd);
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
                hv_net_stopped(&run->stop)) {
                ok = false;
                break;
            }
        }
    }
    free(rbuf);
    st->mss = hv_net_mss(fd);
    hv_net_buffers(fd, &st->sndbuf, &st->rcvbuf);
    st->failed = !ok;
    st->t_end = hv_monotonic_ns();
    __atomic_store_n(&st->done, 1, __ATOMIC_RELEASE);
    /* Only now may the client see the end: its count is final. */
    shutdown(fd, SHUT_WR);
}

/* Waits until every stream of se has ended (or the drain time passed). */
static bool session_streams_done(struct server_run *run, struct session *se)
{
    uint64_t deadline = hv_monotonic_ns() + (uint64_t)(HV_NET_DRAIN_S * 1e9);
    for (;;) {
        bool all = true;
        for (uint32_t i = 0; i < se->h.streams; i++)
            all = all && __atomic_load_n(&se->s[i].done, __ATOMIC_ACQUIRE) != 0;
        if (all)
            return true;
        if (hv_net_stopped(&run->stop) || hv_monotonic_ns() >= deadline)
            return false;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 5000000};
        nanosleep(&ts, NULL);
    }
}

/* Runs a client's control connection: MARK, then END, answered with the
 * per-stream counts. */
static void serve_control(struct server_run *run, int fd, struct session *se)
{
    unsigned char cmd[HV_NET_CMD_LEN];
    uint64_t deadline = 0; /* the client paces the run; the server's own deadline ends it */
    for (;;) {
        enum hv_net_io r = hv_net_read_full(fd, cmd, sizeof cmd, &run->stop, deadline);
        if (r != HV_NET_IO_OK)
            break;
        uint32_t c = hv_net_get32(cmd);
        if (c == HV_NET_MARK) {
            pthread_mutex_lock(&run->mu);
            se->t_mark = hv_monotonic_ns();
            for (uint32_t i = 0; i < se->h.streams; i++)
                se->s[i].mark = __atomic_load_n(&se->s[i].count, __ATOMIC_RELAXED);
            se->marked = true;
            pthread_mutex_unlock(&run->mu);
        } else if (c == HV_NET_END) {
            bool all = session_streams_done(run, se);
            size_t len = HV_NET_SUM_HEAD + HV_NET_SUM_ROW * (size_t)se->h.streams;
            unsigned char *b = calloc(1, len);
            if (b == NULL)
                break;
            hv_net_put32(b, se->h.streams);
            hv_net_put32(b + 4, all ? 0 : 1);
            uint64_t t_end = se->t_mark;
            for (uint32_t i = 0; i < se->h.streams; i++) {
                const struct sstream *st = &se->s[i];
                unsigned char *row = b + HV_NET_SUM_HEAD + HV_NET_SUM_ROW * i;
                uint64_t total = __atomic_load_n(&st->count, __ATOMIC_RELAXED);
                hv_net_put64(row, total);
                hv_net_put64(row + 8, total - st->mark);
                hv_net_put32(row + 16, st->retrans);
                hv_net_put32(row + 20, st->mss);
                hv_net_put32(row + 24, st->sndbuf);
                hv_net_put32(row + 28, st->rcvbuf);
                t_end = st->t_end > t_end ? st->t_end : t_end;
            }
            hv_net_put64(b + 8, t_end > se->t_mark && se->marked ? t_end - se->t_mark : 0);
            enum hv_net_io w = hv_net_write_full(
                fd, b, len, &run->stop, hv_monotonic_ns() + (uint64_t)(HV_NET_DRAIN_S * 1e9));
            free(b);
            pthread_mutex_lock(&run->mu);
            se->t_end = t_end;
            se->ok = all && se->marked && w == HV_NET_IO_OK;
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
static struct sstream *take_stream(struct server_run *run, const struct hv_net_hello *h,
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
static struct session *open_session(struct server_run *run, const struct hv_net_hello *h, char *why,
                                    size_t len)
{
    if (h->streams < 1 || h->streams > hv_net_max("streams") || h->mode > HV_NET_RR ||
        h->msg_size < 1 || h->msg_size > hv_net_max("msg_size")) {
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
    hv_engine_thread_name("hv-net");
    struct server_run *run = c->run;
    int fd = c->fd;
    hv_net_set_ticks(fd);
    unsigned char b[HV_NET_HELLO_LEN];
    struct hv_net_hello h;
    char why[120] = "";
    enum hv_net_io r = hv_net_read_full(fd, b, sizeof b, &run->stop,
                                        hv_monotonic_ns() + (uint64_t)(HV_NET_CONNECT_S * 1e9));
    if (r != HV_NET_IO_OK) {
        if (r != HV_NET_IO_STOP)
            refuse(run, fd, "no hello");
    } else if (!hv_net_hello_decode(b, &h)) {
        refuse(run, fd, "not an hvbench net client");
    } else if (h.server_job != (uint64_t)run->ctx->job_id) {
        snprintf(why, sizeof why, "this is job %lld, not %llu", run->ctx->job_id,
                 (unsigned long long)h.server_job);
        refuse(run, fd, why);
    } else if (h.kind == HV_NET_CONTROL) {
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
    } else if (h.kind == HV_NET_DATA) {
        struct session *se = NULL;
        struct sstream *st = take_stream(run, &h, &se, why, sizeof why);
        if (st == NULL)
            refuse(run, fd, why);
        else {
            /* The listener carries the server's own window; a client that
             * asks for another one gets it too (after the handshake it
             * bounds the buffers, not the window scale). */
            if (h.window != 0 && h.window != run->srv->p.window)
                hv_net_apply_window(fd, h.window);
            if (h.mode == HV_NET_RR) {
                int one = 1;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            }
            if (accept_reply(run, fd) == 0)
                serve_stream(run, fd, &se->h, st);
            else {
                st->failed = true;
                st->t_end = hv_monotonic_ns();
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
        rr = se->h.mode == HV_NET_RR;
        reverse = se->h.reverse != 0;
        double r = rr ? (double)window / secs : (double)window * 8 / secs / 1e9;
        rate += r;
        good++;
        json_array_append_new(
            clients,
            json_pack("{s:I, s:i, s:s, s:b, s:I, s:I, s:f, s:f}", "client_job",
                      (json_int_t)se->h.client_job, "streams", (int)se->h.streams, "mode",
                      hv_net_mode_name(rr), "reverse", reverse, rr ? "transactions" : "bytes",
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

int hv_net_server_run(const struct hv_engine_ctx *ctx, struct hv_engine_result *out)
{
    struct net_server *srv = ctx->prepared;
    if (srv == NULL)
        return hv_engine_fail(out, "the server side was not prepared (no listening socket)");
    struct server_run run = {.ctx = ctx, .srv = srv};
    run.stop = (struct hv_net_stopper){.ctx = ctx, .flag = &run.quit};
    run.buf_len = hv_net_max("msg_size");
    run.buf = hv_net_payload(run.buf_len);
    pthread_mutex_init(&run.mu, NULL);
    pthread_cond_init(&run.cv, NULL);
    int expected = ctx->group_size >= 2 ? ctx->group_size - 1 : 1;
    uint64_t t0 = hv_monotonic_ns();
    uint64_t deadline = t0 + (uint64_t)((srv->p.warmup + srv->p.seconds + GRACE_S) * 1e9);
    struct hv_net_sampler smp = {0};
    bool sampling = false;
    const char *metric = srv->p.mode == HV_NET_RR ? "net.rr.tps" : "net.tcp.gbps";
    double scale = srv->p.mode == HV_NET_RR ? 1 : 8e-9;
    int rc = 0;
    if (run.buf == NULL)
        rc = hv_engine_fail(out, "out of memory");
    while (rc == 0) {
        if (hv_engine_stopping(ctx)) {
            rc = hv_engine_fail(out, "stopped after %.1f s",
                                (double)(hv_monotonic_ns() - t0) * 1e-9);
            break;
        }
        uint64_t now = hv_monotonic_ns();
        pthread_mutex_lock(&run.mu);
        bool all = run.finished >= expected;
        bool any;
        uint64_t count = measuring_count(&run, &any);
        pthread_mutex_unlock(&run.mu);
        if (any && !sampling)
            hv_net_sampler_start(&smp, now, count);
        else if (any)
            hv_net_sampler_tick(&smp, ctx, out, metric, t0, now, count, scale);
        sampling = any;
        if (all || now >= deadline)
            break;
        struct pollfd p = {.fd = srv->fd, .events = POLLIN};
        if (poll(&p, 1, (int)(HV_NET_TICK_NS / 1000000)) > 0)
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
        hv_net_sampler_observe(&smp, out->observed);
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

int hv_engine_net_prepare(const struct hv_engine *e, struct hv_engine_ctx *ctx,
                          struct hv_endpoint *ep, struct hv_engine_result *out)
{
    (void)e;
    struct hv_net_settings p;
    if (hv_net_settings(ctx->params, hv_engine_cpus(), &p, out->error, sizeof out->error) != 0)
        return -1;
    /* Every address: IPv6 with IPv4 mapped in, or IPv4 alone on a host
     * without IPv6. */
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int rc;
    if (fd >= 0) {
        int off = 0;
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
        hv_net_apply_window(fd, p.window);
        struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_addr = in6addr_any};
        rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    } else {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return hv_engine_fail(out, "cannot create a TCP socket: %s", strerror(errno));
        hv_net_apply_window(fd, p.window);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
        rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    }
    struct sockaddr_storage bound;
    socklen_t len = sizeof bound;
    if (rc != 0 || listen(fd, 256) != 0 || getsockname(fd, (struct sockaddr *)&bound, &len) != 0) {
        int err = errno;
        close(fd);
        return hv_engine_fail(out, "cannot listen on a TCP port: %s", strerror(err));
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

void hv_engine_net_unprepare(const struct hv_engine *e, struct hv_engine_ctx *ctx)
{
    (void)e;
    struct net_server *srv = ctx->prepared;
    if (srv == NULL)
        return;
    close(srv->fd);
    free(srv);
    ctx->prepared = NULL;
}
