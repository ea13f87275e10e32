/* test_httpc.c — lib/httpc against a tiny HTTP/1.1 server in a thread of
 * this test: headers sent, JSON and problem documents parsed, other media
 * types left alone, keep-alive, the body cap, transport errors and
 * timeouts, the abort flag, the one-line descriptions, the classes of
 * outbound addresses and the refusal of non-public ones before any
 * connection is made. */
#include "httpc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "tests/unit/check.h"

/* What the server saw of the last request, and how many connections it
 * accepted. Written by the server thread before it answers, read by the
 * test after the answer arrived. */
static struct {
    char method[16], path[128], auth[256], content_type[128], body[4096];
    int connections;
} seen;

/* The canned answers, by path. */
static const struct route {
    const char *path;
    int status;
    const char *content_type; /* NULL: no body */
    const char *body;
} routes[] = {
    {"/json", 200, "application/json", "{\"ok\":true,\"n\":1}"},
    {"/json-charset", 201, "application/json; charset=utf-8", "{\"created\":7}"},
    {"/problem", 401, "application/problem+json",
     "{\"type\":\"about:blank\",\"title\":\"Unauthorized\",\"status\":401,\"detail\":\"unknown "
     "token\",\"errors\":[{\"path\":\"/a\",\"message\":\"bad\"},{\"path\":\"/b/0\","
     "\"message\":\"worse\"}]}"},
    {"/text", 200, "text/plain", "{\"looks\":\"like json\"}"},
    {"/badjson", 200, "application/json", "{bad"},
    {"/dup", 200, "application/json", "{\"a\":1,\"a\":2}"},
    {"/nocontent", 204, NULL, NULL},
    {"/oops", 503, "text/html", "<h1>down</h1>"},
};

static const struct route *find_route(const char *path)
{
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
        if (strcmp(routes[i].path, path) == 0)
            return &routes[i];
    return NULL;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The value of header name in the request head, or "". */
static void header(const char *head, const char *name, char *out, size_t len)
{
    out[0] = '\0';
    size_t n = strlen(name);
    for (const char *p = strstr(head, "\r\n"); p != NULL; p = strstr(p + 2, "\r\n"))
        if (strncasecmp(p + 2, name, n) == 0 && p[2 + n] == ':') {
            const char *v = p + 3 + n;
            while (*v == ' ')
                v++;
            snprintf(out, len, "%.*s", (int)strcspn(v, "\r"), v);
            return;
        }
}

/* Serves one connection until the client closes it. */
static void serve(int fd)
{
    static char buf[1 << 16];
    size_t have = 0;
    for (;;) {
        char *end;
        while ((end = memmem(buf, have, "\r\n\r\n", 4)) == NULL) {
            ssize_t r = recv(fd, buf + have, sizeof buf - have - 1, 0);
            if (r <= 0)
                return;
            have += (size_t)r;
            buf[have] = '\0';
        }
        *end = '\0';
        size_t head_len = (size_t)(end - buf) + 4;
        char clen[32];
        header(buf, "Content-Length", clen, sizeof clen);
        size_t body_len = (size_t)atol(clen);
        while (have < head_len + body_len) {
            ssize_t r = recv(fd, buf + have, sizeof buf - have - 1, 0);
            if (r <= 0)
                return;
            have += (size_t)r;
        }
        sscanf(buf, "%15s %127s", seen.method, seen.path);
        header(buf, "Authorization", seen.auth, sizeof seen.auth);
        header(buf, "Content-Type", seen.content_type, sizeof seen.content_type);
        snprintf(seen.body, sizeof seen.body, "%.*s", (int)body_len, buf + head_len);
        memmove(buf, buf + head_len + body_len, have - head_len - body_len);
        have -= head_len + body_len;

        char reply[1024];
        int n;
        if (strcmp(seen.path, "/big") == 0) {
            /* 65 MiB of zeros: over the client's cap. */
            size_t total = (size_t)65 << 20;
            n = snprintf(reply, sizeof reply,
                         "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         "Content-Length: %zu\r\n\r\n",
                         total);
            if (send_all(fd, reply, (size_t)n) != 0)
                return;
            static char zeros[1 << 16];
            for (size_t sent = 0; sent < total; sent += sizeof zeros)
                if (send_all(fd, zeros, sizeof zeros) != 0)
                    return;
            continue;
        }
        if (strcmp(seen.path, "/redirect") == 0) {
            n = snprintf(reply, sizeof reply,
                         "HTTP/1.1 302 Found\r\nLocation: /json\r\nContent-Length: 0\r\n\r\n");
            if (send_all(fd, reply, (size_t)n) != 0)
                return;
            continue;
        }
        if (strcmp(seen.path, "/slow") == 0)
            sleep(3);
        const struct route *r = find_route(seen.path);
        if (r == NULL)
            n = snprintf(reply, sizeof reply,
                         "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
        else if (r->content_type == NULL)
            n = snprintf(reply, sizeof reply, "HTTP/1.1 %d X\r\n\r\n", r->status);
        else
            n = snprintf(reply, sizeof reply,
                         "HTTP/1.1 %d X\r\nContent-Type: %s\r\nContent-Length: %zu\r\n\r\n%s",
                         r->status, r->content_type, strlen(r->body), r->body);
        if (send_all(fd, reply, (size_t)n) != 0)
            return;
    }
}

static void *server_main(void *arg)
{
    int lfd = *(int *)arg;
    for (;;) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0)
            return NULL;
        seen.connections++;
        serve(fd);
        close(fd);
    }
}

/* Listens on 127.0.0.1 on a free port; returns the socket and the port. */
static int listen_local(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 8) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0)
        return -1;
    *port = ntohs(a.sin_port);
    return fd;
}

static void test_against_server(int port)
{
    char base[64], desc[512];
    snprintf(base, sizeof base, "http://127.0.0.1:%d/", port); /* trailing slash on purpose */
    struct hv_httpc *c = hv_httpc_new(base, "s3cret", 2);
    struct hv_http_response r;

    json_t *body = json_pack("{s:i}", "target_id", 3);
    int rc = hv_httpc_request(c, "POST", "/json", body, &r);
    CHECK_SAY(rc == 0 && r.status == 200, "POST /json answers 200 (rc %d, status %ld, %s)", rc,
              r.status, r.error);
    CHECK_SAY(json_is_true(json_object_get(r.body, "ok")) &&
                  json_integer_value(json_object_get(r.body, "n")) == 1,
              "JSON body parsed");
    CHECK_SAY(strcmp(seen.method, "POST") == 0 && strcmp(seen.path, "/json") == 0,
              "request line POST /json (base URL's trailing slash dropped)");
    CHECK_SAY(strcmp(seen.auth, "Bearer s3cret") == 0, "Authorization: %s", seen.auth);
    CHECK_SAY(strcmp(seen.content_type, "application/json") == 0, "Content-Type: %s",
              seen.content_type);
    CHECK_SAY(strcmp(seen.body, "{\"target_id\":3}") == 0, "compact JSON request body: %s",
              seen.body);
    hv_http_response_clear(&r);
    json_decref(body);

    rc = hv_httpc_request(c, "GET", "/json-charset", NULL, &r);
    CHECK_SAY(rc == 0 && r.status == 201 &&
                  json_integer_value(json_object_get(r.body, "created")) == 7,
              "GET with application/json; charset=utf-8 parsed");
    CHECK_SAY(strcmp(seen.method, "GET") == 0 && seen.content_type[0] == '\0' &&
                  seen.body[0] == '\0',
              "GET sends no body and no Content-Type");
    hv_http_response_clear(&r);

    rc = hv_httpc_request(c, "POST", "/problem", NULL, &r);
    hv_http_response_describe(&r, desc, sizeof desc);
    CHECK_SAY(rc == 0 && r.status == 401 && json_is_object(r.body), "problem+json parsed (401)");
    CHECK_SAY(strcmp(desc, "401 Unauthorized: unknown token [/a: bad; /b/0: worse]") == 0,
              "describe: \"%s\"", desc);
    hv_http_response_clear(&r);

    rc = hv_httpc_request(c, "GET", "/text", NULL, &r);
    CHECK_SAY(rc == 0 && r.status == 200 && r.body == NULL, "text/plain body not parsed as JSON");
    hv_http_response_clear(&r);

    rc = hv_httpc_request(c, "GET", "/badjson", NULL, &r);
    CHECK_SAY(rc == 0 && r.status == 200 && r.body == NULL && strstr(r.error, "invalid JSON"),
              "broken JSON: answer kept, body NULL, error \"%s\"", r.error);
    hv_http_response_clear(&r);

    rc = hv_httpc_request(c, "GET", "/dup", NULL, &r);
    CHECK_SAY(rc == 0 && r.body == NULL, "duplicate keys rejected");
    hv_http_response_clear(&r);

    rc = hv_httpc_request(c, "POST", "/nocontent", NULL, &r);
    CHECK_SAY(rc == 0 && r.status == 204 && r.body == NULL, "204 without a body");
    hv_http_response_clear(&r);

    rc = hv_httpc_request_raw(c, "PUT", "/oops", "text/csv", "a,b\n", 4, &r);
    hv_http_response_describe(&r, desc, sizeof desc);
    CHECK_SAY(rc == 0 && r.status == 503 && strcmp(desc, "503 Service Unavailable") == 0,
              "raw PUT, 503 text/html: \"%s\"", desc);
    CHECK_SAY(strcmp(seen.method, "PUT") == 0 && strcmp(seen.content_type, "text/csv") == 0 &&
                  strcmp(seen.body, "a,b\n") == 0,
              "raw body and content type sent as given");
    hv_http_response_clear(&r);

    CHECK_SAY(seen.connections == 1, "%d connection(s) for 8 requests: keep-alive",
              seen.connections);

    rc = hv_httpc_request(c, "GET", "/big", NULL, &r);
    CHECK_SAY(rc == -1 && r.status == 0 && r.body == NULL && strstr(r.error, "64 MiB"),
              "65 MiB answer refused: \"%s\"", r.error);
    hv_http_response_clear(&r);

    rc = hv_httpc_request(c, "GET", "/slow", NULL, &r);
    hv_http_response_describe(&r, desc, sizeof desc);
    CHECK_SAY(rc == -1 && r.status == 0 && strncmp(desc, "no answer: ", 11) == 0,
              "3 s answer with a 2 s timeout: \"%s\"", desc);
    hv_http_response_clear(&r);

    rc = hv_httpc_request(c, "GET", "/json", NULL, &r);
    CHECK_SAY(rc == 0 && r.status == 200, "the client works again after failures");
    hv_http_response_clear(&r);

    rc = hv_httpc_request(c, "GET", "/redirect", NULL, &r);
    CHECK_SAY(rc == 0 && r.status == 302 && strcmp(seen.path, "/redirect") == 0,
              "a redirect is answered, not followed (%ld, last path %s)", r.status, seen.path);
    hv_http_response_clear(&r);
    hv_httpc_free(c);

    c = hv_httpc_new(base, NULL, 2);
    rc = hv_httpc_request(c, "GET", "/json", NULL, &r);
    CHECK_SAY(rc == 0 && seen.auth[0] == '\0', "no token: no Authorization header");
    hv_http_response_clear(&r);
    hv_httpc_free(c);
}

static void test_refused(void)
{
    int port;
    int fd = listen_local(&port);
    close(fd); /* nothing listens there now */
    char base[64], desc[512];
    snprintf(base, sizeof base, "http://127.0.0.1:%d", port);
    struct hv_httpc *c = hv_httpc_new(base, "t", 2);
    struct hv_http_response r;
    int rc = hv_httpc_request(c, "POST", "/api/v1/jobs/claim", NULL, &r);
    hv_http_response_describe(&r, desc, sizeof desc);
    CHECK_SAY(rc == -1 && r.status == 0 && r.body == NULL && strncmp(desc, "no answer: ", 11) == 0,
              "connection refused: \"%s\"", desc);
    hv_http_response_clear(&r);
    hv_httpc_free(c);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile sig_atomic_t abort_flag;

/* Sets the abort flag after half a second, as a signal handler would. */
static void *set_flag_later(void *arg)
{
    usleep(500 * 1000);
    abort_flag = 1;
    return NULL;
}

static void test_abort(int port)
{
    char base[64];
    snprintf(base, sizeof base, "http://127.0.0.1:%d", port);
    struct hv_httpc *c = hv_httpc_new(base, NULL, 10);
    struct hv_http_response r;

    hv_httpc_set_abort_flag(c, &abort_flag);
    int rc = hv_httpc_request(c, "GET", "/json", NULL, &r);
    CHECK_SAY(rc == 0 && r.status == 200 && !r.aborted, "abort flag set but 0: requests work");
    hv_http_response_clear(&r);

    abort_flag = 1;
    int before = seen.connections;
    double t0 = now_s();
    rc = hv_httpc_request(c, "GET", "/json", NULL, &r);
    CHECK_SAY(rc == -1 && r.status == 0 && r.aborted && now_s() - t0 < 0.1 &&
                  strstr(r.error, "aborted") != NULL,
              "flag already set: the request fails at once, aborted (\"%s\")", r.error);
    CHECK_SAY(seen.connections == before && strcmp(seen.path, "/json") == 0,
              "an aborted request never reaches the server");
    hv_http_response_clear(&r);

    /* A held request (the server answers /slow after 3 s; the timeout is
     * 10 s) gives up soon after the flag is set. */
    abort_flag = 0;
    pthread_t th;
    pthread_create(&th, NULL, set_flag_later, NULL);
    t0 = now_s();
    rc = hv_httpc_request(c, "GET", "/slow", NULL, &r);
    double took = now_s() - t0;
    pthread_join(th, NULL);
    CHECK_SAY(rc == -1 && r.status == 0 && r.aborted && took < 2.0,
              "flag set 0.5 s into a 3 s request: aborted after %.2f s (\"%s\")", took, r.error);
    hv_http_response_clear(&r);

    /* Without the flag again, the same client works (once the test server
     * is done with the abandoned request). */
    abort_flag = 0;
    rc = hv_httpc_request(c, "GET", "/json", NULL, &r);
    CHECK_SAY(rc == 0 && r.status == 200 && !r.aborted, "flag cleared: the client works again");
    hv_http_response_clear(&r);

    abort_flag = 1;
    hv_httpc_set_abort_flag(c, NULL);
    rc = hv_httpc_request(c, "GET", "/json", NULL, &r);
    CHECK_SAY(rc == 0 && r.status == 200 && !r.aborted, "flag detached: requests ignore it");
    hv_http_response_clear(&r);
    abort_flag = 0;

    /* A client without a flag still times out as before. */
    rc = hv_httpc_request(c, "GET", "/json", NULL, &r);
    CHECK_SAY(rc == 0 && r.status == 200, "after detaching: normal request");
    hv_http_response_clear(&r);
    hv_httpc_free(c);
}

static void test_describe_without_body(void)
{
    struct hv_http_response r = {.status = 409};
    char desc[64];
    hv_http_response_describe(&r, desc, sizeof desc);
    CHECK_SAY(strcmp(desc, "409 Conflict") == 0, "describe 409 without a body: \"%s\"", desc);
    char tiny[8];
    r.body = json_pack("{s:s, s:s}", "title", "A very long title", "detail", "and more");
    hv_http_response_describe(&r, tiny, sizeof tiny);
    CHECK_SAY(strlen(tiny) == 7, "describe truncates to the buffer: \"%s\"", tiny);
    hv_http_response_clear(&r);
    CHECK_SAY(r.body == NULL, "clear drops the body");
}

/* Each class, the first and last address of each range and the ones
 * just outside, and the IPv6 forms carrying an IPv4 address of each
 * class. NULL: public. */
static const char *const address_cases[][2] = {
    /* IPv4 */
    {"0.0.0.0", "unspecified"},
    {"0.255.255.255", "unspecified"},
    {"1.0.0.0", NULL},
    {"9.255.255.255", NULL},
    {"10.0.0.0", "private"},
    {"10.255.255.255", "private"},
    {"11.0.0.0", NULL},
    {"100.63.255.255", NULL},
    {"100.64.0.0", "private"},
    {"100.127.255.255", "private"},
    {"100.128.0.0", NULL},
    {"126.255.255.255", NULL},
    {"127.0.0.0", "loopback"},
    {"127.0.0.1", "loopback"},
    {"127.255.255.255", "loopback"},
    {"128.0.0.0", NULL},
    {"169.253.255.255", NULL},
    {"169.254.0.0", "link-local"},
    {"169.254.169.254", "link-local"},
    {"169.254.255.255", "link-local"},
    {"169.255.0.0", NULL},
    {"172.15.255.255", NULL},
    {"172.16.0.0", "private"},
    {"172.31.255.255", "private"},
    {"172.32.0.0", NULL},
    {"192.0.1.255", NULL},
    {"192.0.2.0", "documentation"},
    {"192.0.2.255", "documentation"},
    {"192.0.3.0", NULL},
    {"192.167.255.255", NULL},
    {"192.168.0.0", "private"},
    {"192.168.255.255", "private"},
    {"192.169.0.0", NULL},
    {"198.17.255.255", NULL},
    {"198.18.0.0", "benchmarking"},
    {"198.19.255.255", "benchmarking"},
    {"198.20.0.0", NULL},
    {"198.51.99.255", NULL},
    {"198.51.100.0", "documentation"},
    {"198.51.100.255", "documentation"},
    {"198.51.101.0", NULL},
    {"203.0.112.255", NULL},
    {"203.0.113.0", "documentation"},
    {"203.0.113.255", "documentation"},
    {"203.0.114.0", NULL},
    {"8.8.8.8", NULL},
    {"223.255.255.255", NULL},
    {"224.0.0.0", "multicast"},
    {"239.255.255.255", "multicast"},
    {"240.0.0.0", "reserved"},
    {"255.255.255.254", "reserved"},
    {"255.255.255.255", "broadcast"},
    /* IPv6 */
    {"::", "unspecified"},
    {"::1", "loopback"},
    {"100::", "reserved"},
    {"100::ffff:ffff:ffff:ffff", "reserved"},
    {"100:0:0:1::", NULL},
    {"2001:2::", "benchmarking"},
    {"2001:2:0:ffff:ffff:ffff:ffff:ffff", "benchmarking"},
    {"2001:2:1::", NULL},
    {"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", NULL},
    {"2001:db8::", "documentation"},
    {"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "documentation"},
    {"2001:db9::", NULL},
    {"3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NULL},
    {"3fff::", "documentation"},
    {"3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "documentation"},
    {"3fff:1000::", NULL},
    {"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NULL},
    {"fc00::", "private"},
    {"fd00::1", "private"},
    {"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "private"},
    {"fe00::", NULL},
    {"fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NULL},
    {"fe80::", "link-local"},
    {"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "link-local"},
    {"fec0::", "private"},
    {"feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "private"},
    {"ff00::", "multicast"},
    {"ff02::1", "multicast"},
    {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "multicast"},
    {"2606:4700::1111", NULL},
    /* IPv4-mapped */
    {"::ffff:0.0.0.0", "unspecified"},
    {"::ffff:127.0.0.1", "loopback"},
    {"::ffff:10.0.0.1", "private"},
    {"::ffff:100.64.0.1", "private"},
    {"::ffff:169.254.169.254", "link-local"},
    {"::ffff:192.0.2.1", "documentation"},
    {"::ffff:198.18.0.1", "benchmarking"},
    {"::ffff:224.0.0.1", "multicast"},
    {"::ffff:240.0.0.1", "reserved"},
    {"::ffff:255.255.255.255", "broadcast"},
    {"::ffff:8.8.8.8", NULL},
    {"::fffe:7f00:1", NULL}, /* between ::/96 and ::ffff:0:0/96 */
    {"::1:ffff:7f00:1", NULL},
    /* IPv4-translated */
    {"::ffff:0:127.0.0.1", "loopback"},
    {"::ffff:0:8.8.8.8", NULL},
    /* IPv4-compatible */
    {"::127.0.0.1", "loopback"},
    {"::10.1.2.3", "private"},
    {"::169.254.0.1", "link-local"},
    {"::0.0.0.2", "unspecified"},
    {"::224.0.0.1", "multicast"},
    {"::8.8.8.8", NULL},
    {"::1:0:0", NULL}, /* just after ::/96 */
    /* NAT64 */
    {"64:ff9b::7f00:1", "loopback"},
    {"64:ff9b::a00:1", "private"},
    {"64:ff9b::a9fe:a9fe", "link-local"},
    {"64:ff9b::c612:1", "benchmarking"},
    {"64:ff9b::ffff:ffff", "broadcast"},
    {"64:ff9b::808:808", NULL},
    {"64:ff9b:0:0:0:1::", NULL}, /* just after 64:ff9b::/96 */
    {"64:ff9b:1::7f00:1", "loopback"},
    {"64:ff9b:1::808:808", "private"},
    {"64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "broadcast"},
    {"64:ff9b:2::808:808", NULL},
    /* 6to4: the IPv4 address in bits 16-47 */
    {"2002:7f00:1::", "loopback"},
    {"2002:c0a8:101::1", "private"},
    {"2002:a9fe:1::", "link-local"},
    {"2002:cb00:7101::", "documentation"},
    {"2002:e000:1::", "multicast"},
    {"2002::1", "unspecified"},
    {"2002:808:808::1", NULL},
    {"2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NULL},
    {"2003::", NULL},
    /* Teredo: the client's IPv4 address inverted in the last 32 bits */
    {"2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback"}, /* ~127.0.0.1 */
    {"2001::f5ff:fffe", "private"},                       /* ~10.0.0.1 */
    {"2001::5601:5601", "link-local"},                    /* ~169.254.169.254 */
    {"2001::1fff:fffe", "multicast"},                     /* ~224.0.0.1 */
    {"2001::", "broadcast"},                              /* ~255.255.255.255 */
    {"2001::f7f7:f7f7", NULL},                            /* ~8.8.8.8 */
    {"2001:1::f5ff:fffe", NULL},                          /* just after 2001::/32 */
    /* not addresses */
    {"example.org", "invalid"},
    {"127.1", "invalid"},
    {"", "invalid"},
};

static void test_address_class(void)
{
    for (size_t i = 0; i < sizeof address_cases / sizeof address_cases[0]; i++) {
        const char *got = hv_httpc_address_class(address_cases[i][0]);
        const char *want = address_cases[i][1];
        CHECK_SAY((got == NULL && want == NULL) ||
                      (got != NULL && want != NULL && strcmp(got, want) == 0),
                  "%s is %s (got %s)", address_cases[i][0], want ? want : "public",
                  got ? got : "public");
    }
    printf("ok    %zu addresses classed\n", sizeof address_cases / sizeof address_cases[0]);
}

/* How many connections wait in the backlog of listening socket fd, which
 * nobody accepts from: each is accepted (and closed) now. */
static int pending_connections(int fd)
{
    int n = 0, c;
    while ((c = accept4(fd, NULL, NULL, SOCK_NONBLOCK)) >= 0 || (c < 0 && errno == EINTR)) {
        if (c >= 0) {
            close(c);
            n++;
        }
    }
    return n;
}

/* A client that may reach public addresses only is refused 127.0.0.1
 * before it connects: a listener there that nobody accepts from holds no
 * connection afterwards, the error names the address and its class, and
 * is the same once nothing listens there; "localhost" (127.0.0.1 and ::1)
 * the same. Turning the check on closes the connections kept alive
 * unchecked. Without the check, the path is sent as the whole base URL
 * when it is empty. */
static void test_public_only(int port)
{
    int probe_port;
    int probe = listen_local(&probe_port);
    fcntl(probe, F_SETFL, O_NONBLOCK);
    char base[64], listened[256];
    snprintf(base, sizeof base, "http://127.0.0.1:%d/hook", probe_port);
    struct hv_httpc *c = hv_httpc_new(base, NULL, 2);
    struct hv_http_response r;
    hv_httpc_set_public_only(c, true);
    int rc = hv_httpc_request_raw_headers(c, "POST", "", "application/json", "{}", 2, NULL, &r);
    CHECK_SAY(rc == -1 && r.status == 0 && strstr(r.error, "address 127.0.0.1 is loopback") != NULL,
              "loopback refused: \"%s\"", r.error);
    CHECK_SAY(pending_connections(probe) == 0, "the refused listener saw no connection");
    struct sockaddr_in to = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)probe_port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int direct = socket(AF_INET, SOCK_STREAM, 0);
    CHECK_SAY(connect(direct, (struct sockaddr *)&to, sizeof to) == 0 &&
                  pending_connections(probe) == 1,
              "the listener counts a connection made to it");
    close(direct);
    snprintf(listened, sizeof listened, "%s", r.error);
    hv_http_response_clear(&r);
    close(probe); /* nothing listens there now */
    rc = hv_httpc_request_raw_headers(c, "POST", "", "application/json", "{}", 2, NULL, &r);
    CHECK_SAY(rc == -1 && strcmp(r.error, listened) == 0,
              "the same error with nothing listening: \"%s\" vs \"%s\"", r.error, listened);
    hv_http_response_clear(&r);
    hv_httpc_free(c);

    snprintf(base, sizeof base, "http://localhost:%d/json", port);
    c = hv_httpc_new(base, NULL, 2);
    hv_httpc_set_public_only(c, true);
    int before = seen.connections;
    rc = hv_httpc_request(c, "GET", "", NULL, &r);
    CHECK_SAY(rc == -1 && r.status == 0 && strstr(r.error, "is loopback: not allowed") != NULL,
              "localhost refused: \"%s\"", r.error);
    hv_http_response_clear(&r);

    /* Kept alive unchecked, then checked. */
    snprintf(base, sizeof base, "http://127.0.0.1:%d/json", port);
    hv_httpc_free(c);
    c = hv_httpc_new(base, NULL, 2);
    rc = hv_httpc_request(c, "GET", "", NULL, &r);
    CHECK_SAY(rc == 0 && r.status == 200 && seen.connections == before + 1,
              "unchecked: connected and answered (%ld)", r.status);
    hv_http_response_clear(&r);
    hv_httpc_set_public_only(c, true);
    rc = hv_httpc_request(c, "GET", "", NULL, &r);
    CHECK_SAY(rc == -1 && r.status == 0 && strstr(r.error, "address 127.0.0.1 is loopback") != NULL,
              "checked: the connection kept alive is not reused: \"%s\"", r.error);
    hv_http_response_clear(&r);

    hv_httpc_set_public_only(c, false);
    const char *headers[] = {"X-Test: 1", NULL};
    rc = hv_httpc_request_raw_headers(c, "POST", "", "application/json", "{}", 2, headers, &r);
    CHECK_SAY(rc == 0 && r.status == 200 && strcmp(seen.path, "/json") == 0,
              "allowed again, sent to the base URL itself (%s)", seen.path);
    hv_http_response_clear(&r);
    hv_httpc_free(c);
}

int main(void)
{
    int port;
    int lfd = listen_local(&port);
    if (lfd < 0) {
        printf("FAIL  cannot listen on 127.0.0.1\n");
        return 1;
    }
    pthread_t th;
    pthread_create(&th, NULL, server_main, &lfd);
    test_against_server(port);
    test_abort(port);
    test_refused();
    test_describe_without_body();
    test_address_class();
    test_public_only(port);
    /* The server thread blocks in accept(); the process exit ends it. */
    return check_summary("httpc");
}
