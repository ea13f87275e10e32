/* test_conns.c — connection admission (server/conns.c): --trusted networks
 * parsed and matched; the per-address cap, the room kept for trusted
 * addresses and the bound on untrusted connections, with their counts
 * given back on close; head deadlines started at open, shortened by the
 * request line, cleared by a complete head and started again after an
 * answer; and what a client whose head timed out reads (a 408 once its
 * request line had arrived, nothing before); the accept-time refusal of an
 * address over its budget; the body deadline (a 408 problem document, but
 * not while bytes of the body wait unread). Sockets are socketpairs: the
 * test reads the client's end. */
#include "server/config.h"
#include "server/conns.h"
#include "server/metrics.h"
#include "timeutil.h"

#include "check.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

/* One connection under test: the server's end goes to conns.c. */
struct pair {
    int server, client;
    struct hv_conn *c;
};

static struct sockaddr_in addr_of(const char *ip)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1) {
        fprintf(stderr, "bad test address %s\n", ip);
        exit(99);
    }
    return sa;
}

static struct pair open_from(const char *ip)
{
    struct pair p;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        perror("socketpair");
        exit(99);
    }
    p.server = sv[0];
    p.client = sv[1];
    struct sockaddr_in sa = addr_of(ip);
    p.c = hv_conns_open((struct sockaddr *)&sa, p.server);
    return p;
}

static void close_pair(struct pair *p)
{
    hv_conns_close(p->c);
    close(p->server);
    close(p->client);
}

/* What the client end can read now without waiting: "(open)" when nothing
 * and the connection is still up, "" at end of file, else the bytes. */
static const char *client_reads(const struct pair *p)
{
    static char buf[512];
    ssize_t n = recv(p->client, buf, sizeof buf - 1, MSG_DONTWAIT);
    if (n < 0)
        return "(open)";
    buf[n] = '\0';
    return buf;
}

static void test_cidr(void)
{
    struct hv_cidr n;
    CHECK(hv_cidr_parse("10.0.0.0/8", &n) == 0);
    CHECK(n.net == 0x0a000000u && n.mask == 0xff000000u);
    CHECK(hv_cidr_contains(&n, 0x0a0b0c0du));
    CHECK(!hv_cidr_contains(&n, 0x0b000000u));
    CHECK(hv_cidr_parse("127.0.0.1", &n) == 0);
    CHECK(n.net == 0x7f000001u && n.mask == 0xffffffffu);
    CHECK(!hv_cidr_contains(&n, 0x7f000002u));
    CHECK(hv_cidr_parse("192.168.1.77/24", &n) == 0);
    CHECK_MSG(n.net == 0xc0a80100u, "host bits dropped: net %08x", n.net);
    CHECK(hv_cidr_parse("0.0.0.0/0", &n) == 0);
    CHECK(n.mask == 0 && hv_cidr_contains(&n, 0xdeadbeefu));
    static const char *const bad[] = {
        "",      "10.0.0.0/",   "10.0.0.0/33", "10.0.0.0/-1", "10.0.0",       "::1",
        "abc/8", "10.0.0.0/8x", "10.0.0.0/ 8", "/8",          "10.0.0.0/8/8", "1.2.3.4.5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_MSG(hv_cidr_parse(bad[i], &n) == -1, "accepted '%s'", bad[i]);
}

/* Whether the rendered metrics have line as a whole line. */
static bool metrics_have(const char *line)
{
    char *t = hv_metrics_render(NULL);
    bool found = false;
    size_t n = strlen(line);
    for (const char *p = t ? strstr(t, line) : NULL; p != NULL && !found; p = strstr(p + 1, line))
        found = (p == t || p[-1] == '\n') && p[n] == '\n';
    free(t);
    return found;
}

/* max 6, 2 kept for trusted, 2 per untrusted address. */
static void test_admission(void)
{
    struct pair a1 = open_from("10.0.0.1"), a2 = open_from("10.0.0.1");
    struct pair a3 = open_from("10.0.0.1");
    CHECK(hv_conns_verdict(a1.c) == HV_CONN_SERVE && hv_conns_verdict(a2.c) == HV_CONN_SERVE);
    CHECK(hv_conns_verdict(a3.c) == HV_CONN_REFUSED);
    CHECK_STR(client_reads(&a3), ""); /* shut down at once, no answer */
    CHECK_STR(client_reads(&a1), "(open)");
    struct pair b = open_from("10.0.0.2"), c = open_from("10.0.0.3");
    CHECK(hv_conns_verdict(b.c) == HV_CONN_SERVE && hv_conns_verdict(c.c) == HV_CONN_SERVE);
    /* 4 served: the untrusted room (6 - 2) is full; 503 for the next two. */
    struct pair d = open_from("10.0.0.4"), e = open_from("10.0.0.5");
    CHECK(hv_conns_verdict(d.c) == HV_CONN_BUSY && hv_conns_verdict(e.c) == HV_CONN_BUSY);
    CHECK(hv_conns_room(d.c) == 4);
    /* 6 untrusted open, 503s included: no more at all. */
    struct pair f = open_from("10.0.0.6");
    CHECK(hv_conns_verdict(f.c) == HV_CONN_REFUSED);
    CHECK_STR(client_reads(&f), "");
    /* The trusted address has the reserve, then 503 like anyone. */
    struct pair t1 = open_from("127.0.0.1"), t2 = open_from("127.0.0.1");
    struct pair t3 = open_from("127.0.0.1");
    CHECK(hv_conns_verdict(t1.c) == HV_CONN_SERVE && hv_conns_verdict(t2.c) == HV_CONN_SERVE);
    CHECK(hv_conns_verdict(t3.c) == HV_CONN_BUSY);
    CHECK(hv_conns_room(t3.c) == 6);
    unsigned trusted, untrusted;
    hv_conns_count(&trusted, &untrusted);
    CHECK_MSG(trusted == 3 && untrusted == 6, "open: %u trusted, %u untrusted", trusted, untrusted);
    CHECK(metrics_have("hvbench_connections_refused_total{reason=\"address\"} 1"));
    CHECK(metrics_have("hvbench_connections_refused_total{reason=\"room\"} 1"));
    CHECK(metrics_have("hvbench_connections_open{from=\"trusted\"} 3"));

    /* Closing gives back the address's count and the room. */
    close_pair(&a1);
    struct pair a4 = open_from("10.0.0.1");
    CHECK_MSG(hv_conns_verdict(a4.c) == HV_CONN_BUSY, "verdict %d", hv_conns_verdict(a4.c));
    close_pair(&t1);
    close_pair(&t2);
    struct pair g = open_from("10.0.0.7");
    CHECK(hv_conns_verdict(g.c) == HV_CONN_REFUSED); /* still 6 untrusted open */
    close_pair(&d);
    struct pair h = open_from("10.0.0.8");
    CHECK(hv_conns_verdict(h.c) == HV_CONN_SERVE); /* 3 served: room for one */
    struct pair *all[] = {&a2, &a3, &a4, &b, &c, &e, &f, &g, &h, &t3};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        close_pair(all[i]);
    hv_conns_count(&trusted, &untrusted);
    CHECK_MSG(trusted == 0 && untrusted == 0, "open: %u trusted, %u untrusted", trusted, untrusted);
}

static void test_deadlines(void)
{
    double t0 = hv_monotonic();
    struct pair fresh = open_from("10.1.0.1"), line = open_from("10.1.0.2");
    struct pair head = open_from("10.1.0.3"), kept = open_from("10.1.0.4");
    struct pair kept_line = open_from("10.1.0.5");
    hv_conns_request_line(line.c, 0);
    hv_conns_head_done(head.c);
    hv_conns_head_done(kept.c);
    hv_conns_answered(kept.c);
    hv_conns_head_done(kept_line.c);
    hv_conns_answered(kept_line.c);
    hv_conns_request_line(kept_line.c, 0);

    CHECK(hv_conns_reap(t0 + 9) == 0);
    CHECK_STR(client_reads(&fresh), "(open)");
    /* 10 s after opening: the fresh head and the one past its request
     * line; the kept-alive one 10 s after its request line. */
    CHECK(hv_conns_reap(t0 + 10.5) == 3);
    CHECK_STR(client_reads(&fresh), "");
    const char *got = client_reads(&line);
    CHECK_MSG(strncmp(got, "HTTP/1.1 408 Request Timeout\r\n", 30) == 0, "read: %s", got);
    CHECK_MSG(strstr(got, "\r\n\r\nthe request head did not arrive within 10 s\n") != NULL,
              "read: %s", got);
    CHECK(strncmp(client_reads(&kept_line), "HTTP/1.1 408 ", 13) == 0);
    CHECK_STR(client_reads(&head), "(open)");
    CHECK_STR(client_reads(&kept), "(open)");
    /* A kept-alive connection with no new request: --connection-timeout
     * (90 s) after its answer, closed without a word. */
    CHECK(hv_conns_reap(t0 + 89) == 0);
    CHECK(hv_conns_reap(t0 + 91) == 1);
    CHECK_STR(client_reads(&kept), "");
    CHECK_STR(client_reads(&head), "(open)");
    CHECK(hv_conns_reap(t0 + 1000) == 0); /* the complete head has no deadline */
    CHECK(metrics_have("hvbench_request_head_timeouts_total 4"));
    struct pair *all[] = {&fresh, &line, &head, &kept, &kept_line};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        close_pair(all[i]);
}

/* A head that arrived whole but is unread (its thread is busy) is not
 * slow: it loses its deadline; one cut short is reaped as before. */
static void test_waiting_head(void)
{
    double t0 = hv_monotonic();
    struct pair whole = open_from("10.3.0.1"), part = open_from("10.3.0.2");
    static const char head[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    CHECK(write(whole.client, head, sizeof head - 1) == (ssize_t)(sizeof head - 1));
    CHECK(write(part.client, head, 20) == 20);
    CHECK(hv_conns_reap(t0 + 10.5) == 1);
    CHECK_STR(client_reads(&whole), "(open)");
    CHECK_STR(client_reads(&part), "");
    CHECK(hv_conns_reap(t0 + 1000) == 0); /* no deadline until it is answered */
    close_pair(&whole);
    close_pair(&part);
}

/* --max-bodies-per-address: counted per untrusted address until the body
 * ends or the connection closes; trusted addresses are not counted. */
static void test_bodies(void)
{
    hv_cfg.max_bodies_per_address = 2;
    hv_cfg.max_per_address = 0;
    struct pair a1 = open_from("10.4.0.1"), a2 = open_from("10.4.0.1"), a3 = open_from("10.4.0.1");
    struct pair b = open_from("10.4.0.2"), t1 = open_from("127.0.0.1"), t2 = open_from("127.0.0.1");
    struct pair t3 = open_from("127.0.0.1");
    CHECK(hv_conns_body_begin(a1.c));
    CHECK(hv_conns_body_begin(a1.c)); /* the same body again: counted once */
    CHECK(hv_conns_body_begin(a2.c));
    CHECK(!hv_conns_body_begin(a3.c));
    CHECK(hv_conns_body_begin(b.c));
    CHECK(hv_conns_body_begin(t1.c) && hv_conns_body_begin(t2.c) && hv_conns_body_begin(t3.c));
    hv_conns_body_end(a1.c);
    hv_conns_body_end(a1.c); /* once only */
    CHECK(hv_conns_body_begin(a3.c));
    CHECK(!hv_conns_body_begin(a1.c));
    close_pair(&a2); /* a body cut short by the close */
    CHECK(hv_conns_body_begin(a1.c));
    struct pair *all[] = {&a1, &a3, &b, &t1, &t2, &t3};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        close_pair(all[i]);
    struct pair again = open_from("10.4.0.1");
    CHECK(hv_conns_body_begin(again.c)); /* the address's slot started from 0 */
    close_pair(&again);
    hv_cfg.max_bodies_per_address = 0;
    hv_cfg.max_per_address = 2;
}

/* hv_conns_accept: an untrusted address at --max-per-address connections
 * or --max-bodies-per-address bodies is refused at accept, another
 * address and a trusted one are not; it counts nothing. */
static bool accepts(const char *ip)
{
    struct sockaddr_in sa = addr_of(ip);
    return hv_conns_accept((struct sockaddr *)&sa);
}

static void test_accept(void)
{
    hv_cfg.max_per_address = 2;
    hv_cfg.max_bodies_per_address = 1;
    CHECK(accepts("10.5.0.1") && accepts("10.5.0.1")); /* looking counts nothing */
    struct pair a1 = open_from("10.5.0.1");
    CHECK(accepts("10.5.0.1"));
    struct pair a2 = open_from("10.5.0.1");
    CHECK(!accepts("10.5.0.1"));
    CHECK(accepts("10.5.0.2"));
    close_pair(&a2);
    CHECK(accepts("10.5.0.1"));
    CHECK(hv_conns_body_begin(a1.c));
    CHECK(!accepts("10.5.0.1")); /* sending its one body */
    CHECK(accepts("10.5.0.2"));
    struct pair t[3];
    for (int i = 0; i < 3; i++)
        t[i] = open_from("127.0.0.1");
    CHECK(accepts("127.0.0.1"));
    hv_conns_body_end(a1.c);
    CHECK(accepts("10.5.0.1"));
    close_pair(&a1);
    for (int i = 0; i < 3; i++)
        close_pair(&t[i]);
    hv_cfg.max_bodies_per_address = 0;
}

/* --body-timeout: a body not whole by its deadline gets a 408 problem
 * document and the connection is shut down; one whose bytes wait unread
 * (its thread is behind) is left alone; a trusted client's body has the
 * deadline too; a body that ended has none. */
static void test_body_deadline(void)
{
    hv_cfg.body_timeout = 5;
    double t0 = hv_monotonic();
    struct pair late = open_from("10.6.0.1"), unread = open_from("10.6.0.2");
    struct pair trusted = open_from("127.0.0.1"), done = open_from("10.6.0.3");
    struct pair *all[] = {&late, &unread, &trusted, &done};
    for (size_t i = 0; i < 4; i++) {
        hv_conns_head_done(all[i]->c);
        CHECK(hv_conns_body_begin(all[i]->c));
    }
    hv_conns_body_end(done.c);
    CHECK(send(unread.client, "x", 1, 0) == 1);
    CHECK(hv_conns_reap(t0 + 1) == 0);
    CHECK(hv_conns_reap(t0 + 10) == 2);
    const char *got = client_reads(&late);
    CHECK_MSG(strncmp(got, "HTTP/1.1 408 Request Timeout\r\n", 30) == 0, "read %s", got);
    CHECK(strstr(got, "application/problem+json") != NULL);
    CHECK(strstr(got, "\"code\":\"request_timeout\"") != NULL);
    CHECK(strncmp(client_reads(&trusted), "HTTP/1.1 408", 12) == 0);
    CHECK_STR(client_reads(&unread), "(open)");
    CHECK_STR(client_reads(&done), "(open)");
    char b;
    CHECK(recv(unread.server, &b, 1, 0) == 1); /* its thread reads it: late now */
    CHECK(hv_conns_reap(t0 + 10) == 1);
    CHECK(strncmp(client_reads(&unread), "HTTP/1.1 408", 12) == 0);
    for (size_t i = 0; i < 4; i++)
        close_pair(all[i]);
}

/* Many addresses, opened and closed in another order: the per-address
 * counts survive the table's deletions. */
static void test_many_addresses(void)
{
    enum { ADDRS = 40, EACH = 2 };
    static struct pair p[ADDRS][EACH];
    char ip[32];
    for (int a = 0; a < ADDRS; a++) {
        for (int k = 0; k < EACH; k++) {
            snprintf(ip, sizeof ip, "10.2.%d.%d", a % 3, a);
            p[a][k] = open_from(ip);
            CHECK(hv_conns_verdict(p[a][k].c) == HV_CONN_SERVE);
        }
    }
    for (int a = 0; a < ADDRS; a += 2) {
        close_pair(&p[a][0]);
        snprintf(ip, sizeof ip, "10.2.%d.%d", a % 3, a);
        p[a][0] = open_from(ip); /* room for exactly one again */
        CHECK_MSG(hv_conns_verdict(p[a][0].c) == HV_CONN_SERVE, "address %s", ip);
    }
    for (int a = 0; a < ADDRS; a++) {
        snprintf(ip, sizeof ip, "10.2.%d.%d", a % 3, a);
        struct pair over = open_from(ip);
        CHECK_MSG(hv_conns_verdict(over.c) == HV_CONN_REFUSED, "address %s past its cap", ip);
        close_pair(&over);
    }
    for (int a = ADDRS - 1; a >= 0; a--)
        for (int k = 0; k < EACH; k++)
            close_pair(&p[a][k]);
    unsigned trusted, untrusted;
    hv_conns_count(&trusted, &untrusted);
    CHECK(trusted == 0 && untrusted == 0);
}

int main(void)
{
    test_cidr();
    hv_cfg.max_connections = 6;
    hv_cfg.trusted_reserve = 2;
    hv_cfg.max_per_address = 2;
    hv_cfg.header_timeout = 10;
    hv_cfg.conn_timeout = 90;
    CHECK(hv_conns_start() == 0);
    test_admission();
    test_deadlines();
    test_waiting_head();
    hv_conns_stop();
    hv_cfg.max_connections = 100;
    hv_cfg.trusted_reserve = 0;
    CHECK(hv_conns_start() == 0);
    test_many_addresses();
    test_bodies();
    test_accept();
    test_body_deadline();
    hv_conns_stop();
    return check_summary("test_conns");
}
