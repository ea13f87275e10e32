/* conns.c — see conns.h.
 *
 * libmicrohttpd's own per-address limit (MHD_OPTION_PER_IP_CONNECTION_LIMIT)
 * cannot exempt an address, and its accept policy callback can be followed
 * by a failure that never reports the connection (so a count taken there
 * could leak): admission happens here, at the STARTED notification, which
 * libmicrohttpd always pairs with a CLOSED one, and before it closes the
 * socket. So a socket shut down here or by the reaper is still open. The
 * accept policy (hv_conns_accept) only looks at the counts, and refuses
 * early what admission would refuse or answer 503 anyway. */
#include "conns.h"

#include "errors.h"
#include "log.h"
#include "metrics.h"
#include "timeutil.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How often the reaper looks for heads past their deadline: a deadline
 * acts at most this late. */
#define REAP_INTERVAL_MS 250
/* How much of an unread head the reaper looks into for its end: a head
 * larger than that, unread, is taken as incomplete. */
#define HEAD_PEEK 16384

struct hv_conn {
    struct hv_conn *prev, *next; /* in the waiting list while armed */
    double deadline;             /* of the awaited head, while armed */
    int fd;
    uint32_t addr; /* IPv4, host byte order */
    enum hv_conn_verdict verdict;
    bool trusted;
    bool armed;     /* a head is awaited: in the waiting list */
    bool line_seen; /* its request line has arrived (the client waits for an answer) */
    int line_note;  /* hv_conns_request_line's note, for the HTTP layer */
    bool in_body;   /* a body is counted against its address (hv_conns_body_begin) */
    bool body_due;  /* the deadline armed is the body's (--body-timeout), not a head's */
};

/* Given for every refused connection: nothing to count back or free. */
static struct hv_conn refused = {.verdict = HV_CONN_REFUSED, .fd = -1};

/* The connections from one untrusted address, and how many of them are
 * sending a request body (never more than count). count 0 marks a free
 * slot. */
struct addr_slot {
    uint32_t addr;
    uint32_t count;
    uint32_t bodies;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Everything below is guarded by lock. */
static struct hv_conn waiting = {.prev = &waiting, .next = &waiting}; /* list head */
static struct addr_slot *slots; /* open addressing, linear probing */
static size_t slot_mask;        /* slots has slot_mask + 1 entries, 2^slot_bits */
static unsigned slot_bits;
static unsigned held;                         /* connections served (HV_CONN_SERVE), any address */
static unsigned open_trusted, open_untrusted; /* admitted and not closed, by class */

static pthread_t reaper;
static bool reaper_running, stopping;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER; /* signals stopping */

/* The answer to a head that timed out after its request line. */
static char timeout_reply[256];
static size_t timeout_reply_len;
/* The answer to a body that did not arrive within --body-timeout. */
static char body_timeout_reply[1024];
static size_t body_timeout_reply_len;

int hv_cidr_parse(const char *s, struct hv_cidr *out)
{
    char host[INET_ADDRSTRLEN];
    const char *slash = strchr(s, '/');
    size_t n = slash ? (size_t)(slash - s) : strlen(s);
    if (n == 0 || n >= sizeof host)
        return -1;
    memcpy(host, s, n);
    host[n] = '\0';
    struct in_addr a;
    if (inet_pton(AF_INET, host, &a) != 1)
        return -1;
    long bits = 32;
    if (slash != NULL) {
        char *end;
        errno = 0;
        bits = strtol(slash + 1, &end, 10);
        if (!isdigit((unsigned char)slash[1]) || *end != '\0' || errno != 0 || bits > 32)
            return -1;
    }
    out->mask = bits == 0 ? 0 : 0xffffffffu << (32 - bits);
    out->net = ntohl(a.s_addr) & out->mask;
    return 0;
}

bool hv_cidr_contains(const struct hv_cidr *net, uint32_t addr)
{
    return (addr & net->mask) == net->net;
}

/* The home slot of addr: the top bits of a Fibonacci hash, which spreads
 * neighbouring addresses. */
static size_t slot_home(uint32_t addr)
{
    return (size_t)((uint32_t)(addr * 2654435769u) >> (32 - slot_bits));
}

/* The slot holding addr, or the free slot where it belongs. The table has
 * twice as many slots as there can be addresses, so a free one exists. */
static size_t slot_find(uint32_t addr)
{
    size_t i = slot_home(addr);
    while (slots[i].count != 0 && slots[i].addr != addr)
        i = (i + 1) & slot_mask;
    return i;
}

/* Takes one connection off addr's count; a slot that reaches 0 is freed by
 * moving later slots of the same probe run back (no tombstones). */
static void slot_release(uint32_t addr)
{
    size_t i = slot_find(addr);
    if (slots[i].count == 0 || --slots[i].count > 0)
        return;
    for (size_t j = (i + 1) & slot_mask; slots[j].count != 0; j = (j + 1) & slot_mask) {
        size_t home = slot_home(slots[j].addr);
        /* Slot j may move to i unless its home lies cyclically in (i, j]. */
        bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            slots[i] = slots[j];
            slots[j].count = 0;
            i = j;
        }
    }
}

/* The IPv4 address of sa in host byte order; 0 for another family (the
 * server listens on IPv4 only). */
static uint32_t ipv4_of(const struct sockaddr *sa)
{
    if (sa == NULL || sa->sa_family != AF_INET)
        return 0;
    return ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);
}

/* Whether addr is inside a --trusted network. */
static bool is_trusted(uint32_t addr)
{
    for (unsigned i = 0; i < hv_cfg.n_trusted; i++)
        if (hv_cidr_contains(&hv_cfg.trusted[i], addr))
            return true;
    return false;
}

/* Puts c in the waiting list with a deadline, or moves its deadline. */
static void arm(struct hv_conn *c, double deadline)
{
    c->deadline = deadline;
    if (c->armed)
        return;
    c->armed = true;
    c->prev = waiting.prev;
    c->next = &waiting;
    waiting.prev->next = c;
    waiting.prev = c;
}

/* Takes c out of the waiting list: no deadline. */
static void disarm(struct hv_conn *c)
{
    if (!c->armed)
        return;
    c->armed = false;
    c->prev->next = c->next;
    c->next->prev = c->prev;
    c->prev = c->next = NULL;
}

/* The connections a trusted or untrusted client may hold. */
static unsigned room_for(bool trusted)
{
    unsigned reserve = trusted ? 0 : hv_cfg.trusted_reserve;
    return reserve < hv_cfg.max_connections ? hv_cfg.max_connections - reserve : 0;
}

/* Decides under the lock and counts the connection in. Returns its verdict,
 * or HV_CONN_REFUSED with *why set. */
static enum hv_conn_verdict admit(uint32_t addr, bool trusted, enum hv_metrics_refusal *why)
{
    if (!trusted) {
        size_t i = slot_find(addr);
        if (hv_cfg.max_per_address > 0 && slots[i].count >= hv_cfg.max_per_address) {
            *why = HV_REFUSED_ADDRESS;
            return HV_CONN_REFUSED;
        }
        if (open_untrusted >= hv_cfg.max_connections) {
            *why = HV_REFUSED_ROOM;
            return HV_CONN_REFUSED;
        }
        slots[i].addr = addr;
        slots[i].count++;
        open_untrusted++;
    } else {
        open_trusted++;
    }
    if (held >= room_for(trusted))
        return HV_CONN_BUSY;
    held++;
    return HV_CONN_SERVE;
}

/* Logs a refused connection at debug level. */
static void log_refused(uint32_t addr, enum hv_metrics_refusal why)
{
    hv_debug("connection from %u.%u.%u.%u refused: %s", addr >> 24, (addr >> 16) & 255,
             (addr >> 8) & 255, addr & 255,
             why == HV_REFUSED_ADDRESS  ? "--max-per-address reached"
             : why == HV_REFUSED_BODIES ? "--max-bodies-per-address reached"
                                        : "no room");
}

bool hv_conns_accept(const struct sockaddr *sa)
{
    uint32_t addr = ipv4_of(sa);
    if (is_trusted(addr))
        return true;
    bool ok = true;
    enum hv_metrics_refusal why = HV_REFUSED_ROOM;
    pthread_mutex_lock(&lock);
    const struct addr_slot *s = &slots[slot_find(addr)];
    if (s->count > 0 && hv_cfg.max_per_address > 0 && s->count >= hv_cfg.max_per_address) {
        ok = false;
        why = HV_REFUSED_ADDRESS;
    } else if (s->count > 0 && hv_cfg.max_bodies_per_address > 0 &&
               s->bodies >= hv_cfg.max_bodies_per_address) {
        ok = false;
        why = HV_REFUSED_BODIES;
    } else if (open_untrusted >= hv_cfg.max_connections) {
        ok = false;
    }
    pthread_mutex_unlock(&lock);
    if (!ok) {
        hv_metrics_conn_refused(why);
        log_refused(addr, why);
    }
    return ok;
}

struct hv_conn *hv_conns_open(const struct sockaddr *sa, int fd)
{
    uint32_t addr = ipv4_of(sa);
    bool trusted = is_trusted(addr);
    struct hv_conn *c = calloc(1, sizeof *c);
    enum hv_metrics_refusal why = HV_REFUSED_ROOM;
    enum hv_conn_verdict v = HV_CONN_REFUSED;
    if (c != NULL) {
        pthread_mutex_lock(&lock);
        v = admit(addr, trusted, &why);
        if (v != HV_CONN_REFUSED) {
            c->fd = fd;
            c->addr = addr;
            c->trusted = trusted;
            c->verdict = v;
            arm(c, hv_monotonic() + hv_cfg.header_timeout);
        }
        pthread_mutex_unlock(&lock);
    }
    if (v != HV_CONN_REFUSED)
        return c;
    free(c);
    hv_metrics_conn_refused(why);
    if (fd >= 0)
        shutdown(fd, SHUT_RDWR);
    log_refused(addr, why);
    return &refused;
}

enum hv_conn_verdict hv_conns_verdict(const struct hv_conn *c)
{
    return c != NULL ? c->verdict : HV_CONN_SERVE;
}

unsigned hv_conns_room(const struct hv_conn *c)
{
    return room_for(c != NULL && c->trusted);
}

void hv_conns_request_line(struct hv_conn *c, int note)
{
    if (c == NULL || c == &refused)
        return;
    /* Only the connection's own thread reads or writes the note. */
    c->line_note = note;
    double deadline = hv_monotonic() + hv_cfg.header_timeout;
    pthread_mutex_lock(&lock);
    if (c->armed) {
        c->line_seen = true;
        if (deadline < c->deadline)
            c->deadline = deadline;
    }
    pthread_mutex_unlock(&lock);
}

int hv_conns_line_note(const struct hv_conn *c)
{
    return c != NULL ? c->line_note : 0;
}

void hv_conns_head_done(struct hv_conn *c)
{
    if (c == NULL || c == &refused)
        return;
    pthread_mutex_lock(&lock);
    disarm(c);
    pthread_mutex_unlock(&lock);
}

bool hv_conns_body_begin(struct hv_conn *c)
{
    if (c == NULL || c == &refused)
        return true;
    bool ok = true;
    double deadline = hv_monotonic() + hv_cfg.body_timeout;
    pthread_mutex_lock(&lock);
    if (c->trusted) {
        c->body_due = true;
        arm(c, deadline);
    } else if (!c->in_body) {
        struct addr_slot *s = &slots[slot_find(c->addr)];
        if (hv_cfg.max_bodies_per_address > 0 && s->bodies >= hv_cfg.max_bodies_per_address) {
            ok = false;
        } else {
            s->bodies++;
            c->in_body = true;
            c->body_due = true;
            arm(c, deadline);
        }
    }
    pthread_mutex_unlock(&lock);
    return ok;
}

/* Takes c's body off its address's count, and its deadline. Under the
 * lock. */
static void body_end(struct hv_conn *c)
{
    if (c->body_due) {
        c->body_due = false;
        disarm(c);
    }
    if (!c->in_body)
        return;
    c->in_body = false;
    struct addr_slot *s = &slots[slot_find(c->addr)];
    if (s->count != 0 && s->bodies > 0)
        s->bodies--;
}

void hv_conns_body_end(struct hv_conn *c)
{
    if (c == NULL || c == &refused)
        return;
    pthread_mutex_lock(&lock);
    body_end(c);
    pthread_mutex_unlock(&lock);
}

void hv_conns_answered(struct hv_conn *c)
{
    if (c == NULL || c == &refused)
        return;
    double deadline = hv_monotonic() + hv_cfg.conn_timeout;
    pthread_mutex_lock(&lock);
    c->line_seen = false;
    c->body_due = false;
    arm(c, deadline);
    pthread_mutex_unlock(&lock);
}

void hv_conns_close(struct hv_conn *c)
{
    if (c == NULL || c == &refused)
        return;
    pthread_mutex_lock(&lock);
    disarm(c);
    body_end(c);
    if (c->trusted) {
        open_trusted--;
    } else {
        slot_release(c->addr);
        open_untrusted--;
    }
    if (c->verdict == HV_CONN_SERVE)
        held--;
    pthread_mutex_unlock(&lock);
    free(c);
}

/* Whether the end of a request head (an empty line) waits unread in fd's
 * socket: the head has arrived whole and its connection's thread has not
 * read it yet (libmicrohttpd reads at once when the thread is free, so
 * bytes wait only behind other work). A head whose start was read before
 * the thread got busy counts too: its end is in the socket. */
static bool head_waits(int fd)
{
    char buf[HEAD_PEEK];
    ssize_t n = recv(fd, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT);
    if (n <= 0)
        return false;
    return memmem(buf, (size_t)n, "\r\n\r\n", 4) != NULL ||
           memmem(buf, (size_t)n, "\n\n", 2) != NULL;
}

/* Whether bytes of a request body wait unread in fd's socket: its
 * connection's thread is behind (busy with other requests), so the body
 * is not late for want of its client. */
static bool body_waits(int fd)
{
    char b;
    return recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

unsigned hv_conns_reap(double now)
{
    unsigned n = 0, bodies = 0;
    pthread_mutex_lock(&lock);
    for (struct hv_conn *c = waiting.next, *next; c != &waiting; c = next) {
        next = c->next;
        if (c->deadline > now)
            continue;
        if (c->body_due) {
            /* Its thread has bytes to read: look again at the next pass. */
            if (body_waits(c->fd))
                continue;
            (void)send(c->fd, body_timeout_reply, body_timeout_reply_len,
                       MSG_DONTWAIT | MSG_NOSIGNAL);
            shutdown(c->fd, SHUT_RDWR);
            c->body_due = false;
            disarm(c);
            bodies++;
            continue;
        }
        /* Complete and waiting for a busy thread: not a slow client. */
        if (head_waits(c->fd)) {
            disarm(c);
            continue;
        }
        /* The client waits for an answer to this request: say why it gets
         * none. Best effort; the socket never blocks. */
        if (c->line_seen)
            (void)send(c->fd, timeout_reply, timeout_reply_len, MSG_DONTWAIT | MSG_NOSIGNAL);
        shutdown(c->fd, SHUT_RDWR);
        disarm(c);
        n++;
    }
    pthread_mutex_unlock(&lock);
    if (n > 0) {
        hv_metrics_head_timeouts(n);
        hv_debug("%u connection%s closed: no request head within the deadline", n,
                 n == 1 ? "" : "s");
    }
    if (bodies > 0) {
        hv_metrics_body_timeouts(bodies);
        hv_debug("%u connection%s closed: no whole request body within --body-timeout", bodies,
                 bodies == 1 ? "" : "s");
    }
    return n + bodies;
}

void hv_conns_count(unsigned *trusted, unsigned *untrusted)
{
    pthread_mutex_lock(&lock);
    *trusted = open_trusted;
    *untrusted = open_untrusted;
    pthread_mutex_unlock(&lock);
}

/* The reaper: hv_conns_reap a few times a second until hv_conns_stop. */
static void *reap_loop(void *arg)
{
    pthread_mutex_lock(&lock);
    while (!stopping) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += REAP_INTERVAL_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&wake, &lock, &until);
        if (stopping)
            break;
        pthread_mutex_unlock(&lock);
        hv_conns_reap(hv_monotonic());
        pthread_mutex_lock(&lock);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* Writes body_timeout_reply: a whole HTTP answer, 408 with the problem
 * document of request_timeout, sent by the reaper as it is. Returns 0, or
 * -1 (logged) when memory runs out. */
static int body_timeout_text(void)
{
    char detail[96];
    snprintf(detail, sizeof detail, "the request body did not arrive within %u s (--body-timeout)",
             hv_cfg.body_timeout);
    json_t *doc = hv_problem_new(HV_E_REQUEST_TIMEOUT, detail, NULL);
    char *text = doc != NULL ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    int n = text != NULL ? snprintf(body_timeout_reply, sizeof body_timeout_reply,
                                    "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n"
                                    "Content-Type: application/problem+json\r\n"
                                    "Content-Length: %zu\r\n\r\n%s",
                                    strlen(text), text)
                         : -1;
    free(text);
    if (n < 0 || (size_t)n >= sizeof body_timeout_reply) {
        hv_error("cannot write the answer to a request body past --body-timeout");
        return -1;
    }
    body_timeout_reply_len = (size_t)n;
    return 0;
}

int hv_conns_start(void)
{
    /* At most max_connections untrusted addresses hold connections at
     * once: twice as many slots keep probe runs short. */
    size_t n = 64;
    slot_bits = 6;
    while (n < 2 * (size_t)hv_cfg.max_connections) {
        n *= 2;
        slot_bits++;
    }
    slots = calloc(n, sizeof *slots);
    if (slots == NULL) {
        hv_error("no memory for the connection table");
        return -1;
    }
    slot_mask = n - 1;
    static const char body_fmt[] = "the request head did not arrive within %u s\n";
    char body[96];
    int body_len = snprintf(body, sizeof body, body_fmt, hv_cfg.header_timeout);
    timeout_reply_len = (size_t)snprintf(timeout_reply, sizeof timeout_reply,
                                         "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n"
                                         "Content-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s",
                                         body_len, body);
    if (body_timeout_text() != 0) {
        free(slots);
        slots = NULL;
        return -1;
    }
    /* The reaper's timed waits measure on the monotonic clock. */
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_destroy(&wake);
    pthread_cond_init(&wake, &attr);
    pthread_condattr_destroy(&attr);
    stopping = false;
    if (pthread_create(&reaper, NULL, reap_loop, NULL) != 0) {
        hv_error("cannot start the thread that enforces --header-timeout");
        free(slots);
        slots = NULL;
        return -1;
    }
    reaper_running = true;
    return 0;
}

void hv_conns_stop(void)
{
    if (reaper_running) {
        pthread_mutex_lock(&lock);
        stopping = true;
        pthread_cond_signal(&wake);
        pthread_mutex_unlock(&lock);
        pthread_join(reaper, NULL);
        reaper_running = false;
    }
    free(slots);
    slots = NULL;
}
