/* net_wire.c — what both sides of the built-in net engine share; see
 * net_wire.h. */
#include "worker/engines/net_wire.h"

#include "timeutil.h"
#include "grow.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* Samples of a window before the interval doubles (bounds the upload). */
#define SAMPLES_PER_DOUBLING 600

/* ---------------------------------------------------------------------
 * The wire: fixed-size messages, integers big-endian. */

void hv_net_put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (24 - 8 * i));
}

void hv_net_put64(unsigned char *p, uint64_t v)
{
    hv_net_put32(p, (uint32_t)(v >> 32));
    hv_net_put32(p + 4, (uint32_t)v);
}

uint32_t hv_net_get32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

uint64_t hv_net_get64(const unsigned char *p)
{
    return (uint64_t)hv_net_get32(p) << 32 | hv_net_get32(p + 4);
}

void hv_net_hello_encode(const struct hv_net_hello *h, unsigned char b[HV_NET_HELLO_LEN])
{
    memset(b, 0, HV_NET_HELLO_LEN);
    hv_net_put64(b, HV_NET_MAGIC);
    hv_net_put64(b + 8, h->server_job);
    hv_net_put64(b + 16, h->client_job);
    hv_net_put64(b + 24, h->session);
    const uint32_t w[] = {h->kind,    h->stream, h->streams, h->mode,
                          h->reverse, h->window, h->msg_size};
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
        hv_net_put32(b + 32 + 4 * i, w[i]);
}

/* Returns false when b is not an hvbench net hello. */
bool hv_net_hello_decode(const unsigned char b[HV_NET_HELLO_LEN], struct hv_net_hello *h)
{
    if (hv_net_get64(b) != HV_NET_MAGIC)
        return false;
    *h = (struct hv_net_hello){.server_job = hv_net_get64(b + 8),
                               .client_job = hv_net_get64(b + 16),
                               .session = hv_net_get64(b + 24),
                               .kind = hv_net_get32(b + 32),
                               .stream = hv_net_get32(b + 36),
                               .streams = hv_net_get32(b + 40),
                               .mode = hv_net_get32(b + 44),
                               .reverse = hv_net_get32(b + 48),
                               .window = hv_net_get32(b + 52),
                               .msg_size = hv_net_get32(b + 56)};
    return true;
}

void hv_net_reply_encode(const struct hv_net_reply *r, unsigned char b[HV_NET_REPLY_LEN])
{
    memset(b, 0, HV_NET_REPLY_LEN);
    hv_net_put64(b, HV_NET_MAGIC);
    hv_net_put32(b + 8, r->status);
    hv_net_put32(b + 12, r->sndbuf);
    hv_net_put32(b + 16, r->rcvbuf);
    hv_net_put32(b + 20, r->mss);
    memcpy(b + 24, r->reason, strnlen(r->reason, sizeof r->reason - 1));
}

bool hv_net_reply_decode(const unsigned char b[HV_NET_REPLY_LEN], struct hv_net_reply *r)
{
    if (hv_net_get64(b) != HV_NET_MAGIC)
        return false;
    *r = (struct hv_net_reply){.status = hv_net_get32(b + 8),
                               .sndbuf = hv_net_get32(b + 12),
                               .rcvbuf = hv_net_get32(b + 16),
                               .mss = hv_net_get32(b + 20)};
    memcpy(r->reason, b + 24, sizeof r->reason - 1);
    r->reason[sizeof r->reason - 1] = '\0';
    return true;
}

/* ---------------------------------------------------------------------
 * Sockets: stop-aware I/O, what the kernel says about a connection. */

bool hv_net_stopped(const struct hv_net_stopper *s)
{
    return (s->flag != NULL && __atomic_load_n(s->flag, __ATOMIC_RELAXED) != 0) ||
           hv_engine_stopping(s->ctx);
}

/* Makes blocking calls on fd return at least every HV_NET_TICK_NS. */
void hv_net_set_ticks(int fd)
{
    struct timeval tv = {.tv_sec = 0, .tv_usec = (suseconds_t)(HV_NET_TICK_NS / 1000)};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/* Reads exactly len bytes before deadline (monotonic ns; 0: none). HV_NET_IO_EOF
 * when the peer closed before the first byte; a close in the middle is
 * HV_NET_IO_ERROR with errno ECONNRESET. */
enum hv_net_io hv_net_read_full(int fd, void *buf, size_t len, const struct hv_net_stopper *s,
                                uint64_t deadline)
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
                return HV_NET_IO_EOF;
            errno = ECONNRESET;
            return HV_NET_IO_ERROR;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return HV_NET_IO_ERROR;
        if (hv_net_stopped(s))
            return HV_NET_IO_STOP;
        if (deadline != 0 && hv_monotonic_ns() >= deadline)
            return HV_NET_IO_TIMEOUT;
    }
    return HV_NET_IO_OK;
}

/* Writes exactly len bytes before deadline (0: none). */
enum hv_net_io hv_net_write_full(int fd, const void *buf, size_t len,
                                 const struct hv_net_stopper *s, uint64_t deadline)
{
    size_t put = 0;
    while (put < len) {
        ssize_t n = send(fd, (const char *)buf + put, len - put, MSG_NOSIGNAL);
        if (n > 0) {
            put += (size_t)n;
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return HV_NET_IO_ERROR;
        if (hv_net_stopped(s))
            return HV_NET_IO_STOP;
        if (deadline != 0 && hv_monotonic_ns() >= deadline)
            return HV_NET_IO_TIMEOUT;
    }
    return HV_NET_IO_OK;
}

const char *hv_net_io_text(enum hv_net_io r)
{
    return r == HV_NET_IO_EOF       ? "the peer closed the connection"
           : r == HV_NET_IO_STOP    ? "stopped"
           : r == HV_NET_IO_TIMEOUT ? "timed out"
                                    : strerror(errno);
}

void hv_net_apply_window(int fd, uint64_t window)
{
    if (window == 0)
        return;
    int w = (int)window;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &w, sizeof w);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &w, sizeof w);
}

/* The socket buffers as the kernel reports them (Linux: twice what was
 * asked, for its bookkeeping; capped by net.core.[wr]mem_max). */
void hv_net_buffers(int fd, uint32_t *snd, uint32_t *rcv)
{
    int v = 0;
    socklen_t len = sizeof v;
    *snd = getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, &len) == 0 ? (uint32_t)v : 0;
    len = sizeof v;
    *rcv = getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, &len) == 0 ? (uint32_t)v : 0;
}

uint32_t hv_net_mss(int fd)
{
    int v = 0;
    socklen_t len = sizeof v;
    return getsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &v, &len) == 0 && v > 0 ? (uint32_t)v : 0;
}

uint32_t hv_net_retrans(int fd)
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
void hv_net_observe_path(int fd, json_t *obs)
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
unsigned char *hv_net_payload(size_t n)
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

void hv_net_sampler_start(struct hv_net_sampler *s, uint64_t t, uint64_t count)
{
    free(s->v);
    *s = (struct hv_net_sampler){
        .every = 1000000000u, .prev_t = t, .next = t + 1000000000u, .prev_count = count};
}

/* Emits a sample when one is due at time now: the count since the last
 * one over the time since, times scale (bits per byte / 1e9 for Gbit/s). */
void hv_net_sampler_tick(struct hv_net_sampler *s, const struct hv_engine_ctx *ctx,
                         struct hv_engine_result *out, const char *metric, uint64_t t0,
                         uint64_t now, uint64_t count, double scale)
{
    if (now < s->next)
        return;
    double value = (double)(count - s->prev_count) * scale / ((double)(now - s->prev_t) * 1e-9);
    hv_engine_emit_sample(ctx, out, metric, (double)(now - t0) * 1e-9, value);
    if (hv_grow(&s->v, &s->cap, s->n, sizeof *s->v, 64) == 0)
        s->v[s->n++] = value;
    s->prev_t = now;
    s->prev_count = count;
    if (++s->taken % SAMPLES_PER_DOUBLING == 0)
        s->every *= 2;
    while (s->next <= now)
        s->next += s->every;
}

/* Adds the steady-state verdict of the samples taken to obs. */
void hv_net_sampler_observe(const struct hv_net_sampler *s, json_t *obs)
{
    struct hv_steady st;
    hv_steady_state(s->v, s->n, &st);
    json_t *o = json_object();
    if (o != NULL && hv_steady_observe(o, &st) == 0)
        json_object_set_new(obs, "steady_state", o);
    else
        json_decref(o);
}
