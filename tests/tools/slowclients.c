/* slowclients.c — slow HTTP clients for a server on this machine: N
 * connections, each sending its request head one byte per interval and
 * never finishing it, and what the server did with them.
 *
 *   slowclients --port PORT --connections N [--host 127.0.0.1]
 *               [--from 127.0.0.2] [--addresses M] [--interval S]
 *               [--dribble-line] [--body] [--reconnect S] [--duration S]
 *               [--ready FILE]
 *
 * Connection i comes from address --from + (i mod M), so M addresses hold
 * N/M connections each. Each sends its request line at once (with
 * --dribble-line, byte by byte too), then one header byte every --interval
 * seconds (default 1) of a header that never ends. A connection the server
 * closes is counted with the time from its connect to the close and the
 * status of the answer it got, if any; with --reconnect S its slot
 * connects again S seconds later. With --body each connection sends a
 * whole head at once instead, of a POST announcing a 1 MB body, then the
 * body one byte every --interval seconds: a slow body, not a slow head.
 *
 * At the end (--duration, SIGTERM or SIGINT, or once every connection is
 * closed and none reconnects) it prints one JSON object: connections, attempts, connected,
 * connect_failed, closed_by_server, answered (by status), unanswered,
 * open_at_end, close_s (min, median, max seconds from connect to close, of
 * the answered and of the unanswered closes) and elapsed_s.
 *
 * Bounded by design: at most 20000 connections, --duration at most 600 s,
 * and only loopback addresses (127.0.0.0/8), to and from: it exists to load
 * a server on the same machine, never someone else's. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNECTIONS 20000
#define MAX_DURATION    600
/* Answer statuses counted one by one (index: status - 100). */
#define N_STATUS 500

static const char usage_text[] =
    "usage: slowclients --port PORT --connections N [--host 127.0.0.1] [--from 127.0.0.2]\n"
    "                   [--addresses M] [--interval S] [--dribble-line] [--body]\n"
    "                   [--reconnect S] [--duration S] [--ready FILE]\n";

/* The head every connection sends, then HEAD_FILL for ever. */
static const char slow_head[] = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
#define HEAD_LINE_LEN 23 /* "GET /healthz HTTP/1.1\r\n" */
#define HEAD_FILL     'a'
/* With --body: a whole head, then BODY_FILL for ever (never 1 MB of it). */
static const char body_head[] = "POST /api/v1/plans HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                "Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n";
#define BODY_FILL ' '
/* What this run sends: slow_head or body_head. */
static const char *head = slow_head;
static size_t head_len = sizeof slow_head - 1;
static char fill = HEAD_FILL;

enum state { IDLE, CONNECTING, OPEN };

struct conn {
    int fd;
    enum state st;
    double opened;    /* when the connect completed */
    double reopen_at; /* IDLE: when to connect (again); < 0: never */
    size_t sent;      /* bytes of the head sent */
    bool first;       /* its first connect has not finished yet */
    int status;       /* of the answer read, 0 before one */
};

struct opts {
    struct in_addr host, from;
    unsigned port, connections, addresses;
    double interval, reconnect, duration;
    bool dribble_line;
    bool body;
    const char *ready;
};

/* What happened, for the summary. */
struct tally {
    unsigned long attempts, connected, connect_failed, closed, unanswered, open_at_end;
    unsigned long by_status[N_STATUS];
    double *close_answered, *close_unanswered; /* seconds, one per close */
    size_t n_answered, n_unanswered, cap_answered, cap_unanswered;
    unsigned long first_pending; /* slots whose first connect has not finished */
};

/* Set by SIGTERM and SIGINT: stop and print the summary. */
static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
    stop = 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
    fprintf(stderr, "slowclients: %s: %s\n", what, strerror(errno));
    exit(1);
}

static bool loopback(struct in_addr a)
{
    return (ntohl(a.s_addr) >> 24) == 127;
}

/* Parses a number option in [min, max] or exits 2. */
static double number(const char *opt, const char *v, double min, double max)
{
    char *end;
    double d = strtod(v, &end);
    if (*v == '\0' || *end != '\0' || !(d >= min && d <= max)) {
        fprintf(stderr, "slowclients: %s must be a number from %g to %g\n", opt, min, max);
        exit(2);
    }
    return d;
}

static struct in_addr loopback_addr(const char *opt, const char *v)
{
    struct in_addr a;
    if (inet_pton(AF_INET, v, &a) != 1 || !loopback(a)) {
        fprintf(stderr, "slowclients: %s must be an address in 127.0.0.0/8\n", opt);
        exit(2);
    }
    return a;
}

static void parse(int argc, char **argv, struct opts *o)
{
    enum {
        O_PORT = 1,
        O_CONN,
        O_HOST,
        O_FROM,
        O_ADDRS,
        O_INTERVAL,
        O_LINE,
        O_BODY,
        O_RECONN,
        O_DUR,
        O_READY
    };
    static const struct option longopts[] = {
        {"port", required_argument, NULL, O_PORT},
        {"connections", required_argument, NULL, O_CONN},
        {"host", required_argument, NULL, O_HOST},
        {"from", required_argument, NULL, O_FROM},
        {"addresses", required_argument, NULL, O_ADDRS},
        {"interval", required_argument, NULL, O_INTERVAL},
        {"dribble-line", no_argument, NULL, O_LINE},
        {"body", no_argument, NULL, O_BODY},
        {"reconnect", required_argument, NULL, O_RECONN},
        {"duration", required_argument, NULL, O_DUR},
        {"ready", required_argument, NULL, O_READY},
        {0},
    };
    *o = (struct opts){.addresses = 1, .interval = 1, .reconnect = -1, .duration = 60};
    inet_pton(AF_INET, "127.0.0.1", &o->host);
    inet_pton(AF_INET, "127.0.0.2", &o->from);
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case O_PORT:
            o->port = (unsigned)number("--port", optarg, 1, 65535);
            break;
        case O_CONN:
            o->connections = (unsigned)number("--connections", optarg, 1, MAX_CONNECTIONS);
            break;
        case O_HOST:
            o->host = loopback_addr("--host", optarg);
            break;
        case O_FROM:
            o->from = loopback_addr("--from", optarg);
            break;
        case O_ADDRS:
            o->addresses = (unsigned)number("--addresses", optarg, 1, 65536);
            break;
        case O_INTERVAL:
            o->interval = number("--interval", optarg, 0.01, 60);
            break;
        case O_LINE:
            o->dribble_line = true;
            break;
        case O_BODY:
            o->body = true;
            head = body_head;
            head_len = sizeof body_head - 1;
            fill = BODY_FILL;
            break;
        case O_RECONN:
            o->reconnect = number("--reconnect", optarg, 0, 60);
            break;
        case O_DUR:
            o->duration = number("--duration", optarg, 0.1, MAX_DURATION);
            break;
        case O_READY:
            o->ready = optarg;
            break;
        default:
            fputs(usage_text, stderr);
            exit(2);
        }
    }
    if (o->port == 0 || o->connections == 0 || optind != argc) {
        fputs(usage_text, stderr);
        exit(2);
    }
    uint32_t last = ntohl(o->from.s_addr) + o->addresses - 1;
    if ((last >> 24) != 127) {
        fprintf(stderr, "slowclients: --from + --addresses leaves 127.0.0.0/8\n");
        exit(2);
    }
}

/* Slot c's first connect finished (either way). */
static void first_done(struct conn *c, struct tally *t)
{
    if (c->first) {
        c->first = false;
        t->first_pending--;
    }
}

/* Starts a non-blocking connect of slot i from its source address. */
static void start_connect(const struct opts *o, struct conn *c, unsigned i, struct tally *t)
{
    t->attempts++;
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
        die("socket");
    struct sockaddr_in src = {.sin_family = AF_INET};
    src.sin_addr.s_addr = htonl(ntohl(o->from.s_addr) + i % o->addresses);
    if (bind(c->fd, (struct sockaddr *)&src, sizeof src) != 0)
        die("bind to the source address");
    struct sockaddr_in dst = {
        .sin_family = AF_INET, .sin_port = htons((uint16_t)o->port), .sin_addr = o->host};
    c->sent = 0;
    c->status = 0;
    if (connect(c->fd, (struct sockaddr *)&dst, sizeof dst) == 0 || errno == EINPROGRESS) {
        c->st = CONNECTING;
        return;
    }
    t->connect_failed++;
    first_done(c, t);
    close(c->fd);
    c->fd = -1;
    c->st = IDLE;
    c->reopen_at = o->reconnect >= 0 ? now_s() + o->reconnect : -1;
}

/* Byte k of the endless head. */
static char head_byte(size_t k)
{
    return k < head_len ? head[k] : fill;
}

static void push(double **v, size_t *n, size_t *cap, double x)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 1024;
        double *w = realloc(*v, *cap * sizeof *w);
        if (w == NULL)
            die("memory");
        *v = w;
    }
    (*v)[(*n)++] = x;
}

/* The server closed c (or it failed): count it, free the slot. */
static void closed_by_server(const struct opts *o, struct conn *c, struct tally *t, double now)
{
    t->closed++;
    if (c->status != 0) {
        push(&t->close_answered, &t->n_answered, &t->cap_answered, now - c->opened);
    } else {
        t->unanswered++;
        push(&t->close_unanswered, &t->n_unanswered, &t->cap_unanswered, now - c->opened);
    }
    close(c->fd);
    c->fd = -1;
    c->st = IDLE;
    c->reopen_at = o->reconnect >= 0 ? now + o->reconnect : -1;
}

/* Sends the next n bytes of c's head; false when the server closed it. */
static bool send_bytes(struct conn *c, size_t n)
{
    char buf[sizeof body_head];
    for (size_t k = 0; k < n && k < sizeof buf; k++)
        buf[k] = head_byte(c->sent + k);
    ssize_t w = send(c->fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w > 0)
        c->sent += (size_t)w;
    return w >= 0 || errno == EAGAIN;
}

/* Reads what the server sent on c; false once it closed the connection. */
static bool read_answer(struct conn *c, struct tally *t)
{
    char buf[4096];
    for (;;) {
        ssize_t r = recv(c->fd, buf, sizeof buf - 1, MSG_DONTWAIT);
        if (r == 0)
            return false;
        if (r < 0)
            return errno == EAGAIN;
        buf[r] = '\0';
        int status;
        if (c->status == 0 && sscanf(buf, "HTTP/1.%*d %d", &status) == 1) {
            c->status = status;
            if (status >= 100 && status < 100 + N_STATUS)
                t->by_status[status - 100]++;
        }
    }
}

/* One event of slot c (from poll). */
static void on_event(const struct opts *o, struct conn *c, short revents, struct tally *t,
                     double now)
{
    if (c->st == CONNECTING) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        first_done(c, t);
        if (err != 0) {
            t->connect_failed++;
            close(c->fd);
            c->fd = -1;
            c->st = IDLE;
            c->reopen_at = o->reconnect >= 0 ? now + o->reconnect : -1;
            return;
        }
        t->connected++;
        c->st = OPEN;
        c->opened = now;
        if (!send_bytes(c, o->body ? head_len : o->dribble_line ? 1 : HEAD_LINE_LEN))
            closed_by_server(o, c, t, now);
        return;
    }
    if ((revents & (POLLIN | POLLHUP | POLLERR)) && !read_answer(c, t))
        closed_by_server(o, c, t, now);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void print_spread(const char *name, double *v, size_t n, bool comma)
{
    if (n == 0) {
        printf("\"%s\":null%s", name, comma ? "," : "");
        return;
    }
    qsort(v, n, sizeof *v, cmp_double);
    printf("\"%s\":{\"n\":%zu,\"min\":%.3f,\"median\":%.3f,\"max\":%.3f}%s", name, n, v[0],
           v[n / 2], v[n - 1], comma ? "," : "");
}

static void print_summary(const struct opts *o, struct tally *t, double elapsed)
{
    printf("{\"connections\":%u,\"attempts\":%lu,\"connected\":%lu,\"connect_failed\":%lu,"
           "\"closed_by_server\":%lu,\"answered\":{",
           o->connections, t->attempts, t->connected, t->connect_failed, t->closed);
    bool first = true;
    for (int s = 0; s < N_STATUS; s++) {
        if (t->by_status[s] == 0)
            continue;
        printf("%s\"%d\":%lu", first ? "" : ",", s + 100, t->by_status[s]);
        first = false;
    }
    printf("},\"unanswered\":%lu,\"open_at_end\":%lu,\"close_s\":{", t->unanswered, t->open_at_end);
    print_spread("answered", t->close_answered, t->n_answered, true);
    print_spread("unanswered", t->close_unanswered, t->n_unanswered, false);
    printf("},\"elapsed_s\":%.3f}\n", elapsed);
}

/* Room for n connections and a few more files. */
static void raise_nofile(unsigned n)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_NOFILE, &r) != 0)
        die("getrlimit");
    if (r.rlim_cur < (rlim_t)n + 32) {
        r.rlim_cur = r.rlim_max;
        setrlimit(RLIMIT_NOFILE, &r);
        getrlimit(RLIMIT_NOFILE, &r);
    }
    if (r.rlim_cur < (rlim_t)n + 32) {
        fprintf(stderr, "slowclients: open files are limited to %llu, too few for %u\n",
                (unsigned long long)r.rlim_cur, n);
        exit(2);
    }
}

static void write_ready(const char *path)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        die(path);
    fputs("ready\n", f);
    fclose(f);
}

int main(int argc, char **argv)
{
    struct opts o;
    parse(argc, argv, &o);
    raise_nofile(o.connections);
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa = {.sa_handler = on_stop};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    struct conn *conns = calloc(o.connections, sizeof *conns);
    struct pollfd *pfd = calloc(o.connections, sizeof *pfd);
    unsigned *slot_of = calloc(o.connections, sizeof *slot_of);
    struct tally t = {.first_pending = o.connections};
    if (conns == NULL || pfd == NULL || slot_of == NULL)
        die("memory");
    double start = now_s(), end = start + o.duration, next_tick = start + o.interval;
    for (unsigned i = 0; i < o.connections; i++) {
        conns[i].first = true;
        start_connect(&o, &conns[i], i, &t);
    }
    bool ready = o.ready == NULL;
    for (;;) {
        double now = now_s();
        if (now >= end || stop)
            break;
        unsigned n = 0;
        double wake = next_tick < end ? next_tick : end;
        for (unsigned i = 0; i < o.connections; i++) {
            struct conn *c = &conns[i];
            if (c->st == IDLE && c->reopen_at >= 0 && c->reopen_at <= now)
                start_connect(&o, c, i, &t);
            if (c->st == IDLE) {
                if (c->reopen_at >= 0 && c->reopen_at < wake)
                    wake = c->reopen_at;
                continue;
            }
            pfd[n] = (struct pollfd){.fd = c->fd, .events = c->st == CONNECTING ? POLLOUT : POLLIN};
            slot_of[n++] = i;
        }
        if (!ready && t.first_pending == 0) {
            write_ready(o.ready);
            ready = true;
        }
        if (n == 0 && o.reconnect < 0)
            break; /* every connection closed, none comes back */
        int ms = (int)((wake - now) * 1000) + 1;
        int got = poll(pfd, n, ms < 0 ? 0 : ms);
        if (got < 0 && errno != EINTR)
            die("poll");
        now = now_s();
        for (unsigned k = 0; got > 0 && k < n; k++)
            if (pfd[k].revents != 0)
                on_event(&o, &conns[slot_of[k]], pfd[k].revents, &t, now);
        if (now >= next_tick) {
            for (unsigned i = 0; i < o.connections; i++)
                if (conns[i].st == OPEN && !send_bytes(&conns[i], 1))
                    closed_by_server(&o, &conns[i], &t, now);
            while (next_tick <= now)
                next_tick += o.interval;
        }
    }
    for (unsigned i = 0; i < o.connections; i++) {
        if (conns[i].st == OPEN)
            t.open_at_end++;
        if (conns[i].fd >= 0)
            close(conns[i].fd);
    }
    if (!ready)
        write_ready(o.ready);
    print_summary(&o, &t, now_s() - start);
    free(t.close_answered);
    free(t.close_unanswered);
    free(conns);
    free(pfd);
    free(slot_of);
    return 0;
}
