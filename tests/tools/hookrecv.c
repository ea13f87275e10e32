/* hookrecv — a webhook receiver on loopback for tests
 * (tests/integration/test_webhooks.sh).
 *
 *   hookrecv --port-file FILE --log FILE [--secret-file FILE] [--fail N]
 *            [--not-yet N] [--port N]
 *
 * Listens on 127.0.0.1 on port N, or a free one (written to --port-file
 * once it listens) and appends one JSON line per POST to --log:
 *   {"n", "event", "delivery", "signature", "sig_ok", "answered", "body"}
 * sig_ok says whether Hvbench-Signature ("t=UNIX,v1=HEX") is HMAC-SHA256
 * with the secret read from --secret-file (at each request: the test
 * writes it once it knows it) over "UNIX.BODY"; null without a secret.
 * The first N requests (--fail) are answered 500, the rest 204; with
 * --not-yet N, the first N before_host calls are answered 503 with
 * "Retry-After: 1" and {"reason": "draining: K more calls"} instead (a
 * drain that is not done yet). Runs until SIGTERM or SIGINT. */
#include <gnutls/crypto.h>
#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

static const char *log_path, *secret_path;
static long fail_first, not_yet_first;
static long count, before_count;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

struct body {
    char *data;
    size_t len;
};

static char *read_secret(void)
{
    if (secret_path == NULL)
        return NULL;
    FILE *f = fopen(secret_path, "r");
    if (f == NULL)
        return NULL;
    char buf[256];
    char *s = fgets(buf, sizeof buf, f) != NULL ? strdup(buf) : NULL;
    fclose(f);
    if (s != NULL)
        s[strcspn(s, "\r\n")] = '\0';
    return s;
}

/* null without a secret, else whether sig signs body. */
static json_t *check_signature(const char *sig, const char *body, size_t len)
{
    char *secret = read_secret();
    if (secret == NULL)
        return json_null();
    bool ok = false;
    long long t;
    char hex[65];
    if (sig != NULL && sscanf(sig, "t=%lld,v1=%64[0-9a-f]", &t, hex) == 2) {
        char prefix[32];
        int plen = snprintf(prefix, sizeof prefix, "%lld.", t);
        size_t all = (size_t)plen + len;
        char *msg = malloc(all + 1);
        unsigned char digest[32];
        if (msg != NULL) {
            memcpy(msg, prefix, (size_t)plen);
            memcpy(msg + plen, body, len);
            if (gnutls_hmac_fast(GNUTLS_MAC_SHA256, secret, strlen(secret), msg, all, digest) ==
                0) {
                char want[65];
                for (size_t i = 0; i < sizeof digest; i++)
                    snprintf(want + 2 * i, 3, "%02x", digest[i]);
                ok = strcmp(want, hex) == 0;
            }
            free(msg);
        }
    }
    free(secret);
    return json_boolean(ok);
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **state)
{
    (void)cls;
    (void)url;
    (void)version;
    struct body *b = *state;
    if (b == NULL) {
        b = calloc(1, sizeof *b);
        if (b == NULL)
            return MHD_NO;
        *state = b;
        return MHD_YES;
    }
    if (*upload_size > 0) {
        char *grown = realloc(b->data, b->len + *upload_size + 1);
        if (grown == NULL)
            return MHD_NO;
        b->data = grown;
        memcpy(b->data + b->len, upload, *upload_size);
        b->len += *upload_size;
        b->data[b->len] = '\0';
        *upload_size = 0;
        return MHD_YES;
    }
    const char *sig = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Hvbench-Signature");
    const char *ev = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Hvbench-Event");
    const char *id = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Hvbench-Delivery");
    pthread_mutex_lock(&lock);
    long n = ++count;
    unsigned status = n <= fail_first ? 500 : 204;
    long left = 0;
    if (ev != NULL && strcmp(ev, "hook.before_host") == 0 && ++before_count <= not_yet_first) {
        status = 503;
        left = not_yet_first - before_count + 1;
    }
    json_t *line = json_pack("{s:I,s:s?,s:s?,s:s?,s:s,s:o,s:I,s:o}", "n", (json_int_t)n, "event",
                             ev, "delivery", id, "signature", sig, "method", method, "sig_ok",
                             check_signature(sig, b->data != NULL ? b->data : "", b->len),
                             "answered", (json_int_t)status, "body",
                             b->data != NULL ? json_loads(b->data, 0, NULL) : NULL);
    FILE *f = fopen(log_path, "a");
    if (f != NULL && line != NULL) {
        json_dumpf(line, f, JSON_COMPACT);
        fputc('\n', f);
    }
    if (f != NULL)
        fclose(f);
    json_decref(line);
    pthread_mutex_unlock(&lock);
    char reason[96] = "";
    if (status == 503)
        snprintf(reason, sizeof reason, "{\"reason\": \"draining: %ld more calls\"}", left);
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(reason), reason, MHD_RESPMEM_MUST_COPY);
    if (status == 503) {
        MHD_add_response_header(r, "Retry-After", "1");
        MHD_add_response_header(r, "Content-Type", "application/json");
    }
    enum MHD_Result rc = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return rc;
}

static void done(void *cls, struct MHD_Connection *conn, void **state,
                 enum MHD_RequestTerminationCode code)
{
    (void)cls;
    (void)conn;
    (void)code;
    struct body *b = *state;
    if (b != NULL) {
        free(b->data);
        free(b);
    }
    *state = NULL;
}

int main(int argc, char **argv)
{
    const char *port_file = NULL;
    unsigned port = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--port-file") == 0)
            port_file = argv[i + 1];
        else if (strcmp(argv[i], "--log") == 0)
            log_path = argv[i + 1];
        else if (strcmp(argv[i], "--secret-file") == 0)
            secret_path = argv[i + 1];
        else if (strcmp(argv[i], "--fail") == 0)
            fail_first = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--not-yet") == 0)
            not_yet_first = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--port") == 0)
            port = (unsigned)atoi(argv[i + 1]);
    }
    if (port_file == NULL || log_path == NULL) {
        fprintf(stderr, "usage: hookrecv --port-file FILE --log FILE [--secret-file FILE] "
                        "[--fail N] [--not-yet N] [--port N]\n");
        return 2;
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    struct sockaddr_in addr = {.sin_family = AF_INET,
                               .sin_port = htons((uint16_t)port),
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, (uint16_t)port, NULL, NULL, answer,
        NULL, MHD_OPTION_SOCK_ADDR, &addr, MHD_OPTION_NOTIFY_COMPLETED, done, NULL, MHD_OPTION_END);
    if (d == NULL) {
        fprintf(stderr, "hookrecv: cannot listen\n");
        return 1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", port_file);
    FILE *f = fopen(tmp, "w");
    if (f == NULL || fprintf(f, "%u\n", (unsigned)info->port) < 0 || fclose(f) != 0 ||
        rename(tmp, port_file) != 0) {
        fprintf(stderr, "hookrecv: cannot write %s\n", port_file);
        MHD_stop_daemon(d);
        return 1;
    }
    int sig = 0;
    sigwait(&set, &sig);
    MHD_stop_daemon(d);
    return 0;
}
