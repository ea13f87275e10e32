/* test_net.c — the built-in net engine over loopback: the server role
 * (prepare, then run in a thread) and the client role in this thread.
 * Both sides count the same bytes (and transactions) of every stream,
 * the headline is the window's bytes over its seconds, streams and
 * reverse are honoured, rr reports ordered latency percentiles, a hello
 * for another job or that is not a hello at all is refused while the
 * server goes on serving its own client, the stop flag ends both sides,
 * bad endpoints and params fail with clear errors, and the shared
 * steady-state test is right.
 *
 * No assertion depends on how fast this machine is. */
#include "check.h"
#include "stopper.h"
#include "worker/engines/engine.h"
#include "worker/engines/net.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SERVER_JOB 42
#define CLIENT_JOB 7

/* A server side running in its own thread. */
struct server {
    struct hv_engine_ctx ctx;
    struct hv_engine_result r;
    struct hv_endpoint ep;
    json_t *params;
    volatile sig_atomic_t stop;
    pthread_t thread;
    int rc;
};

/* The engine's row of the table, which its callbacks take. */
static const struct hv_engine *net(void)
{
    return hv_engine_find("net", "builtin");
}

static void *server_main(void *arg)
{
    struct server *s = arg;
    s->rc = hv_engine_net_run(net(), &s->ctx, &s->r);
    return NULL;
}

/* Prepares a server for params (JSON text) and starts its run. Returns 0,
 * or -1 when prepare failed (s->r.error says why). */
static int server_start(struct server *s, const char *params)
{
    memset(s, 0, sizeof *s);
    s->params = check_json(params);
    s->ctx = (struct hv_engine_ctx){
        .params = s->params, .stop = &s->stop, .role = "server", .job_id = SERVER_JOB};
    hv_engine_result_init(&s->r);
    if (hv_engine_net_prepare(net(), &s->ctx, &s->ep, &s->r) != 0)
        return -1;
    pthread_create(&s->thread, NULL, server_main, s);
    return 0;
}

static void server_end(struct server *s)
{
    pthread_join(s->thread, NULL);
}

static void server_free(struct server *s)
{
    hv_engine_result_clear(&s->r);
    json_decref(s->params);
}

/* Runs a client for params against endpoints (JSON text, or NULL). */
static int client(const char *params, const char *endpoints, volatile sig_atomic_t *stop,
                  struct hv_engine_result *r)
{
    json_t *p = check_json(params);
    json_t *eps = endpoints != NULL ? check_json(endpoints) : NULL;
    struct hv_engine_ctx ctx = {
        .params = p, .stop = stop, .role = "client", .endpoints = eps, .job_id = CLIENT_JOB};
    hv_engine_result_init(r);
    int rc = hv_engine_net_run(net(), &ctx, r);
    json_decref(p);
    json_decref(eps);
    return rc;
}

static char *endpoint_for(int port, int job)
{
    static char buf[200];
    snprintf(buf, sizeof buf,
             "[{\"job_id\": 99, \"role\": \"client\", \"host\": \"127.0.0.1\", \"port\": 1},"
             " {\"job_id\": %d, \"role\": \"server\", \"target\": \"peer\", \"host\": "
             "\"127.0.0.1\", \"port\": %d}]",
             job, port);
    return buf;
}

static double metric(const json_t *metrics, const char *name)
{
    size_t i;
    json_t *m;
    json_array_foreach(metrics, i, m)
    {
        if (strcmp(json_string_value(json_object_get(m, "name")), name) == 0)
            return json_number_value(json_object_get(m, "value"));
    }
    return -1;
}

static long long obs_int(const json_t *o, const char *key)
{
    return (long long)json_integer_value(json_object_get(o, key));
}

/* A stream run: both ends agree on every byte, and the numbers add up. */
static void test_stream(long streams, bool reverse)
{
    printf("-- stream, %ld stream(s)%s\n", streams, reverse ? ", reverse" : "");
    char params[200];
    snprintf(params, sizeof params,
             "{\"peer\": \"p\", \"streams\": %ld, \"seconds\": 2, \"warmup\": 0.5, "
             "\"reverse\": %s, \"window\": 262144}",
             streams, reverse ? "true" : "false");
    struct server s;
    CHECK(server_start(&s, params) == 0);
    CHECK_MSG(s.ep.port > 0 && s.ep.host[0] == '\0', "prepare: port %d, host \"%s\"", s.ep.port,
              s.ep.host);
    struct hv_engine_result r;
    int rc = client(params, endpoint_for(s.ep.port, SERVER_JOB), NULL, &r);
    server_end(&s);
    CHECK_MSG(rc == 0, "client: %s", r.error);
    CHECK_MSG(s.rc == 0, "server: %s", s.r.error);

    const char *names[] = {"net.tcp.gbps", "net.tcp.stream_gbps_min", "net.tcp.stream_gbps_max",
                           "net.tcp.retransmits"};
    CHECK(json_array_size(r.metrics) == 4);
    for (size_t i = 0; i < 4; i++)
        CHECK_STR(json_string_value(json_object_get(json_array_get(r.metrics, i), "name")),
                  names[i]);
    double gbps = metric(r.metrics, "net.tcp.gbps");
    const json_t *o = r.observed;
    double secs = json_number_value(json_object_get(o, "seconds"));
    long long bytes = obs_int(o, "bytes"), total = obs_int(o, "bytes_total");
    CHECK_MSG(gbps > 0 && bytes > 0 && secs >= 2, "%.3f Gbit/s, %lld bytes in %.3f s", gbps, bytes,
              secs);
    CHECK_NEAR(gbps, (double)bytes * 8 / secs / 1e9, 1e-9 * gbps);
    CHECK(total >= bytes);
    CHECK_STR(json_string_value(json_object_get(o, "counted_by")), reverse ? "receiver" : "sender");
    CHECK(metric(r.metrics, "net.tcp.stream_gbps_min") <= gbps / (double)streams * 1.000001);
    CHECK(metric(r.metrics, "net.tcp.stream_gbps_max") >= gbps / (double)streams * 0.999999);

    /* Per stream: the counts add up to the totals. */
    json_t *st = json_object_get(o, "streams");
    CHECK(json_array_size(st) == (size_t)streams);
    long long sum = 0, sum_total = 0;
    for (size_t i = 0; i < json_array_size(st); i++) {
        json_t *e = json_array_get(st, i);
        CHECK(obs_int(e, "stream") == (long long)i);
        CHECK(obs_int(e, "mss") > 0);
        sum += obs_int(e, "bytes");
        sum_total += obs_int(e, "bytes_total");
    }
    CHECK_MSG(sum == bytes && sum_total == total, "streams sum to %lld / %lld bytes", sum,
              sum_total);

    /* The server's result: the same client, the same bytes in all. */
    json_t *clients = json_object_get(s.r.observed, "clients");
    json_t *c0 = json_array_get(clients, 0);
    CHECK(json_array_size(clients) == 1);
    CHECK(obs_int(c0, "client_job") == CLIENT_JOB);
    CHECK(obs_int(c0, "streams") == streams);
    CHECK_MSG(obs_int(c0, "bytes_total") == total, "server counted %lld bytes in all, client %lld",
              obs_int(c0, "bytes_total"), total);
    CHECK(metric(s.r.metrics, "net.tcp.gbps") > 0);
    CHECK_STR(json_string_value(json_object_get(s.r.observed, "role")), "server");
    CHECK(obs_int(s.r.observed, "refused_connections") == 0);

    /* What the path and the kernel said. */
    CHECK_STR(json_string_value(json_object_get(o, "interface")), "lo");
    CHECK(obs_int(o, "mtu") == 65536);
    CHECK(obs_int(o, "mss") > 0);
    json_t *w = json_object_get(o, "window");
    CHECK(obs_int(w, "requested") == 262144);
    CHECK(obs_int(w, "sndbuf") > 0 && obs_int(w, "rcvbuf") > 0);
    CHECK(obs_int(w, "server_sndbuf") > 0 && obs_int(w, "server_rcvbuf") > 0);
    CHECK(json_is_boolean(json_object_get(w, "capped")));

    /* Samples: the measured window only, one a second. */
    size_t n = json_array_size(r.samples), i;
    json_t *v;
    CHECK_MSG(n >= 1 && n <= 3, "%zu samples", n);
    json_array_foreach(r.samples, i, v)
    {
        CHECK_STR(json_string_value(json_object_get(v, "metric")), "net.tcp.gbps");
        CHECK(json_number_value(json_object_get(v, "t")) >= 0.5 + 1.0 * (double)(i + 1));
        CHECK(json_number_value(json_object_get(v, "value")) > 0);
    }
    json_t *ss = json_object_get(o, "steady_state");
    CHECK(json_is_boolean(json_object_get(ss, "steady")) && obs_int(ss, "window") == 5);
    CHECK(json_is_false(json_object_get(ss, "steady"))); /* 2 samples are too few to judge */
    hv_engine_result_clear(&r);
    server_free(&s);
}

static void test_rr(void)
{
    printf("-- rr, 2 streams, 1-byte transactions\n");
    const char *params =
        "{\"peer\": \"p\", \"mode\": \"rr\", \"streams\": 2, \"seconds\": 1, \"warmup\": 0.2, "
        "\"msg_size\": 1}";
    struct server s;
    CHECK(server_start(&s, params) == 0);
    struct hv_engine_result r;
    int rc = client(params, endpoint_for(s.ep.port, SERVER_JOB), NULL, &r);
    server_end(&s);
    CHECK_MSG(rc == 0, "client: %s", r.error);
    CHECK_MSG(s.rc == 0, "server: %s", s.r.error);
    CHECK_STR(json_string_value(json_object_get(json_array_get(r.metrics, 0), "name")),
              "net.rr.tps");
    double tps = metric(r.metrics, "net.rr.tps"), p50 = metric(r.metrics, "net.rr.lat_p50_us"),
           p99 = metric(r.metrics, "net.rr.lat_p99_us"),
           max = metric(r.metrics, "net.rr.lat_max_us");
    CHECK_MSG(tps > 0 && p50 > 0 && p50 <= p99 && p99 <= max,
              "%.0f tx/s, p50 %.1f p99 %.1f max %.1f", tps, p50, p99, max);
    const json_t *o = r.observed;
    double secs = json_number_value(json_object_get(o, "seconds"));
    long long tx = obs_int(o, "transactions");
    CHECK_NEAR(tps, (double)tx / secs, 1e-9 * tps);
    CHECK(obs_int(o, "latencies") > 0 && obs_int(o, "latencies") <= tx);
    json_t *st = json_object_get(o, "streams");
    CHECK(json_array_size(st) == 2);
    long long total = 0;
    for (size_t i = 0; i < json_array_size(st); i++)
        total += obs_int(json_array_get(st, i), "transactions_total");
    json_t *c0 = json_array_get(json_object_get(s.r.observed, "clients"), 0);
    CHECK_MSG(obs_int(c0, "transactions_total") == total,
              "server answered %lld transactions, client made %lld",
              obs_int(c0, "transactions_total"), total);
    CHECK(metric(s.r.metrics, "net.rr.tps") > 0);
    hv_engine_result_clear(&r);
    server_free(&s);
}

/* Connects to the server on loopback, sends len bytes of junk and copies
 * the reason of the server's answer into reason ("" without one). */
static void send_junk(int port, const unsigned char *junk, size_t len, char *reason, size_t rlen)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    reason[0] = '\0';
    if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0 && write(fd, junk, len) == (ssize_t)len) {
        unsigned char b[64];
        size_t got = 0;
        ssize_t n;
        while (got < sizeof b && (n = read(fd, b + got, sizeof b - got)) > 0)
            got += (size_t)n;
        if (got == sizeof b)
            snprintf(reason, rlen, "%.40s", (const char *)b + 24);
    }
    close(fd);
}

static void test_refused(void)
{
    printf("-- a stray hello is refused, the server goes on\n");
    const char *params = "{\"peer\": \"p\", \"seconds\": 1, \"warmup\": 0}";
    struct server s;
    CHECK(server_start(&s, params) == 0);
    /* A client of another job. */
    struct hv_engine_result r;
    int rc = client(params, endpoint_for(s.ep.port, SERVER_JOB + 1), NULL, &r);
    CHECK_MSG(rc != 0 && strstr(r.error, "refused") != NULL && strstr(r.error, "job 42") != NULL,
              "wrong job: \"%s\"", r.error);
    hv_engine_result_clear(&r);
    /* Not a hello at all. */
    unsigned char junk[64];
    memset(junk, 'x', sizeof junk);
    char reason[64];
    send_junk(s.ep.port, junk, sizeof junk, reason, sizeof reason);
    CHECK_MSG(strstr(reason, "not an hvbench net client") != NULL, "junk: \"%s\"", reason);
    /* The real client still gets served. */
    rc = client(params, endpoint_for(s.ep.port, SERVER_JOB), NULL, &r);
    server_end(&s);
    CHECK_MSG(rc == 0, "client: %s", r.error);
    CHECK_MSG(s.rc == 0, "server: %s", s.r.error);
    CHECK(obs_int(s.r.observed, "refused_connections") == 2);
    CHECK(obs_int(s.r.observed, "clients_done") == 1);
    hv_engine_result_clear(&r);
    server_free(&s);
}

static void test_stop(void)
{
    printf("-- stop\n");
    const char *params = "{\"peer\": \"p\", \"streams\": 2, \"seconds\": 60, \"warmup\": 0.2}";
    struct server s;
    CHECK(server_start(&s, params) == 0);
    /* One flag for both sides, as a cancel reaches both workers. */
    struct check_stopper st = {.stop = &s.stop, .after = 0.7};
    pthread_t th;
    pthread_create(&th, NULL, check_stop_later, &st);
    struct hv_engine_result r;
    double t0 = hv_monotonic();
    int rc = client(params, endpoint_for(s.ep.port, SERVER_JOB), &s.stop, &r);
    double took = hv_monotonic() - t0;
    pthread_join(th, NULL);
    CHECK_MSG(rc != 0 && strstr(r.error, "stopped") != NULL && took < 10,
              "client stopped after %.2f s of 60: \"%s\"", took, r.error);
    CHECK(json_array_size(r.metrics) == 0);
    hv_engine_result_clear(&r);
    server_end(&s);
    CHECK_MSG(s.rc != 0 && strstr(s.r.error, "stopped") != NULL, "server: \"%s\"", s.r.error);
    server_free(&s);

    /* prepare, then unprepare: nothing listens any more. */
    struct server u;
    memset(&u, 0, sizeof u);
    u.ctx = (struct hv_engine_ctx){.role = "server", .job_id = SERVER_JOB};
    hv_engine_result_init(&u.r);
    CHECK(hv_engine_net_prepare(net(), &u.ctx, &u.ep, &u.r) == 0 && u.ctx.prepared != NULL);
    hv_engine_net_unprepare(net(), &u.ctx);
    CHECK(u.ctx.prepared == NULL);
    rc = client(params, endpoint_for(u.ep.port, SERVER_JOB), NULL, &r);
    CHECK_MSG(rc != 0 && strstr(r.error, "cannot connect") != NULL &&
                  strstr(r.error, "refused") != NULL,
              "after unprepare: \"%s\"", r.error);
    hv_engine_result_clear(&r);
    hv_engine_result_clear(&u.r);
}

static void test_bad(void)
{
    printf("-- bad endpoints and params\n");
    const char *p = "{\"peer\": \"p\", \"seconds\": 1}";
    static const struct {
        const char *endpoints, *params, *want;
    } cases[] = {
        {NULL, NULL, "no server endpoint: this job's group announced none"},
        {"[{\"job_id\": 3, \"role\": \"client\", \"host\": \"h\", \"port\": 1}]", NULL,
         "no server endpoint among the group's 1 endpoint(s)"},
        {"[{\"role\": \"server\", \"host\": \"127.0.0.1\", \"port\": 0}]", NULL,
         "invalid server endpoint: needs a host and a port"},
        {"[{\"role\": \"server\", \"port\": 5201}]", NULL, "invalid server endpoint"},
        {"[{\"role\": \"server\", \"host\": \"no-such-host.invalid\", \"port\": 5201}]", NULL,
         "cannot resolve the server's address \"no-such-host.invalid\""},
        {"{}", NULL, "invalid endpoints: must be an array"},
        {"[]", "{\"streams\": 0}",
         "invalid params: /params/streams: must be between 1 and 128, not 0"},
        {"[]", "{\"mode\": \"rr\", \"reverse\": true}",
         "invalid params: /params/reverse: applies to mode stream only"},
        {"[]", "{\"udp\": true}", "/params/udp: is not a known parameter of net/builtin"},
        {"[]", "{\"window\": 100}", "invalid params: /params/window: must be between 4k and 64m"},
        {"[]", "{\"msg_size\": \"128q\"}",
         "invalid params: /params/msg_size: \"128q\" is not a size"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct hv_engine_result r;
        int rc = client(cases[i].params ? cases[i].params : p, cases[i].endpoints, NULL, &r);
        CHECK_MSG(rc != 0 && strstr(r.error, cases[i].want) != NULL,
                  "case %zu: \"%s\", want \"%s\"", i, r.error, cases[i].want);
        hv_engine_result_clear(&r);
    }
    /* The server checks its params in prepare. */
    struct server s;
    CHECK(server_start(&s, "{\"streams\": 500}") != 0);
    CHECK_MSG(strstr(s.r.error, "invalid params: /params/streams: must be between 1 and 128") !=
                  NULL,
              "server: \"%s\"", s.r.error);
    server_free(&s);
    /* run() without prepare. */
    struct hv_engine_ctx ctx = {.role = "server"};
    struct hv_engine_result r;
    hv_engine_result_init(&r);
    CHECK(hv_engine_net_run(net(), &ctx, &r) != 0 && strstr(r.error, "not prepared") != NULL);
    hv_engine_result_clear(&r);
}

static void test_steady(void)
{
    printf("-- the shared steady-state test\n");
    struct hv_steady st;
    const double flat[] = {50, 10, 10, 10, 10, 10};
    hv_steady_state(flat, 6, &st);
    CHECK(st.steady && st.window == HV_STEADY_WINDOW && st.range_pct == 0 && st.slope_pct == 0);
    const double rising[] = {10, 11, 12, 13, 14};
    hv_steady_state(rising, 5, &st);
    /* mean 12, range 4 (33%), excursion 4 (33%) */
    CHECK_MSG(!st.steady && fabs(st.range_pct - 100.0 * 4 / 12) < 1e-9 &&
                  fabs(st.slope_pct - 100.0 * 4 / 12) < 1e-9,
              "rising: range %.3f slope %.3f", st.range_pct, st.slope_pct);
    hv_steady_state(flat, 4, &st);
    CHECK(!st.steady && isnan(st.range_pct) && isnan(st.slope_pct));
    json_t *o = json_object();
    CHECK(hv_steady_observe(o, &st) == 0);
    CHECK(json_is_false(json_object_get(o, "steady")) &&
          json_integer_value(json_object_get(o, "window")) == 5 &&
          json_is_null(json_object_get(o, "range_pct")) &&
          json_is_null(json_object_get(o, "slope_pct")));
    json_decref(o);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    test_steady();
    test_bad();
    test_stream(1, false);
    test_stream(3, false);
    test_stream(2, true);
    test_rr();
    test_refused();
    test_stop();
    return check_summary("test_net");
}
