/* httpc.c — see httpc.h.
 *
 * Each request resets the easy handle (curl_easy_reset keeps the live
 * connections, so keep-alive survives) and sets every option afresh: no
 * option of one request can leak into the next. */
#include "httpc.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

/* Answers larger than this are refused rather than buffered: no answer of
 * the hvbench API comes near it, so a larger one is a wrong URL or a
 * misbehaving peer. */
#define HTTPC_MAX_BODY ((size_t)64 * 1024 * 1024)

struct hv_httpc {
    CURL *curl;
    char *base_url;    /* without trailing slashes */
    char *auth_header; /* "Authorization: Bearer ..." or NULL */
    long timeout_s;
    volatile sig_atomic_t *abort_flag; /* NULL: requests are never aborted */
    bool public_only;                  /* connect to public addresses only */
    bool opened;                       /* the request opened a socket */
    char refused[128];                 /* why the request refused an address */
};

/* The body of one answer as it arrives. */
struct body_buf {
    char *data;
    size_t len, cap;
    int too_large;
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_FAILED_INIT;

static void global_init(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

struct hv_httpc *hv_httpc_new(const char *base_url, const char *token, long timeout_s)
{
    pthread_once(&global_once, global_init);
    if (global_rc != CURLE_OK)
        return NULL;
    struct hv_httpc *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->curl = curl_easy_init();
    c->base_url = strdup(base_url);
    c->timeout_s = timeout_s > 0 ? timeout_s : 30;
    if (c->curl == NULL || c->base_url == NULL || hv_httpc_set_token(c, token) != 0) {
        hv_httpc_free(c);
        return NULL;
    }
    size_t len = strlen(c->base_url);
    while (len > 0 && c->base_url[len - 1] == '/')
        c->base_url[--len] = '\0';
    return c;
}

/* The token is a credential: do not leave it in freed memory. */
static void forget_token(struct hv_httpc *c)
{
    if (c->auth_header != NULL) {
        memset(c->auth_header, 0, strlen(c->auth_header));
        free(c->auth_header);
        c->auth_header = NULL;
    }
}

int hv_httpc_set_token(struct hv_httpc *c, const char *token)
{
    forget_token(c);
    if (token == NULL || *token == '\0')
        return 0;
    size_t n = strlen(token) + sizeof "Authorization: Bearer ";
    c->auth_header = malloc(n);
    if (c->auth_header == NULL)
        return -1;
    snprintf(c->auth_header, n, "Authorization: Bearer %s", token);
    return 0;
}

void hv_httpc_free(struct hv_httpc *c)
{
    if (c == NULL)
        return;
    if (c->curl != NULL)
        curl_easy_cleanup(c->curl);
    free(c->base_url);
    forget_token(c);
    free(c);
}

void hv_httpc_set_abort_flag(struct hv_httpc *c, volatile sig_atomic_t *flag)
{
    c->abort_flag = flag;
}

static bool abort_requested(const struct hv_httpc *c)
{
    return c->abort_flag != NULL && __atomic_load_n(c->abort_flag, __ATOMIC_RELAXED) != 0;
}

/* curl's progress callback: called often while data moves and about once
 * a second while the transfer idles (a long poll); nonzero aborts it. */
static int check_abort(void *clientp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    return abort_requested(clientp) ? 1 : 0;
}

static size_t collect_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    struct body_buf *b = userdata;
    size_t n = size * nmemb;
    if (n > HTTPC_MAX_BODY - b->len) {
        b->too_large = 1;
        return 0; /* makes curl abort the transfer with CURLE_WRITE_ERROR */
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->data, cap);
        if (p == NULL)
            return 0;
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, ptr, n);
    b->len += n;
    b->data[b->len] = '\0';
    return n;
}

/* True when the media type (before any ";" parameter) is one the hvbench
 * API answers with JSON. */
static int is_json_type(const char *ct)
{
    static const char *const json_types[] = {"application/json", "application/problem+json"};
    if (ct == NULL)
        return 0;
    size_t n = strcspn(ct, "; \t");
    for (size_t i = 0; i < sizeof json_types / sizeof json_types[0]; i++)
        if (strlen(json_types[i]) == n && strncasecmp(ct, json_types[i], n) == 0)
            return 1;
    return 0;
}

static void set_error(struct hv_http_response *resp, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void set_error(struct hv_http_response *resp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(resp->error, sizeof resp->error, fmt, ap);
    va_end(ap);
}

/* Sets the method and the body. A body-less POST or PUT still sends
 * "Content-Length: 0" so servers that demand a length accept it. */
static void set_method(CURL *curl, const char *method, const char *data, size_t len)
{
    if (data == NULL && strcmp(method, "GET") == 0) {
        curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
        return;
    }
    if (data == NULL && strcmp(method, "HEAD") == 0) {
        curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
        return;
    }
    if (data != NULL || strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0 ||
        strcmp(method, "PATCH") == 0) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, data != NULL ? data : "");
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(data != NULL ? len : 0));
    }
    if (strcmp(method, "POST") != 0)
        curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
}

/* Notes the response headers the caller may ask about. curl calls this
 * once per header line, status line included; a new status line (after an
 * interim 1xx answer) starts over. */
static size_t collect_header(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    struct hv_http_response *resp = userdata;
    size_t n = size * nmemb;
    static const char name[] = "Idempotency-Replayed:";
    if (n >= 5 && strncmp(ptr, "HTTP/", 5) == 0) {
        resp->replayed = false;
    } else if (n > sizeof name - 1 && strncasecmp(ptr, name, sizeof name - 1) == 0) {
        const char *v = ptr + sizeof name - 1, *end = ptr + n;
        while (v < end && (*v == ' ' || *v == '\t'))
            v++;
        while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
            end--;
        resp->replayed = end - v == 4 && strncasecmp(v, "true", 4) == 0;
    }
    return n;
}

void hv_httpc_set_public_only(struct hv_httpc *c, bool on)
{
    /* The connections kept alive were made unchecked: a new handle starts
     * without them (request() makes it if memory runs out here). */
    if (on && !c->public_only) {
        curl_easy_cleanup(c->curl);
        c->curl = curl_easy_init();
    }
    c->public_only = on;
}

/* An address range: the first len bits of net, in network order (IPv4
 * ranges use the first 4 bytes). */
struct range {
    unsigned char net[16];
    unsigned len;
    const char *cls;
};

/* The IPv4 ranges that are not public, the first match winning (the
 * broadcast address before the reserved 240/4 that holds it). */
static const struct range v4_ranges[] = {
    {{255, 255, 255, 255}, 32, "broadcast"},
    {{0}, 8, "unspecified"},    /* "this network" */
    {{10}, 8, "private"},       /* RFC 1918 */
    {{100, 64}, 10, "private"}, /* shared address space (CGNAT) */
    {{127}, 8, "loopback"},
    {{169, 254}, 16, "link-local"},
    {{172, 16}, 12, "private"},            /* RFC 1918 */
    {{192, 0, 2}, 24, "documentation"},    /* TEST-NET-1 */
    {{192, 168}, 16, "private"},           /* RFC 1918 */
    {{198, 18}, 15, "benchmarking"},       /* RFC 2544 */
    {{198, 51, 100}, 24, "documentation"}, /* TEST-NET-2 */
    {{203, 0, 113}, 24, "documentation"},  /* TEST-NET-3 */
    {{224}, 4, "multicast"},
    {{240}, 4, "reserved"},
};

/* The IPv6 ranges that are not public and embed no IPv4 address. */
static const struct range v6_ranges[] = {
    {{0}, 128, "unspecified"},
    {{[15] = 1}, 128, "loopback"},
    {{0x01, 0x00}, 64, "reserved"},                 /* discard-only, RFC 6666 */
    {{0x20, 0x01, 0x00, 0x02}, 48, "benchmarking"}, /* RFC 5180 */
    {{0x20, 0x01, 0x0d, 0xb8}, 32, "documentation"},
    {{0x3f, 0xff}, 20, "documentation"}, /* RFC 9637 */
    {{0xfc}, 7, "private"},              /* unique local */
    {{0xfe, 0x80}, 10, "link-local"},
    {{0xfe, 0xc0}, 10, "private"}, /* site-local, deprecated */
    {{0xff}, 8, "multicast"},
};

/* An IPv6 range whose addresses carry an IPv4 one: the 4 bytes at offset,
 * XORed with mask. Such an address has its IPv4 address's class, or cls
 * when that one is public (NULL: then it is public too). */
static const struct {
    struct range prefix;
    unsigned offset;
    uint32_t mask;
} v6_embedding[] = {
    {{{[10] = 0xff, [11] = 0xff}, 96, NULL}, 12, 0},          /* IPv4-mapped */
    {{{[8] = 0xff, [9] = 0xff}, 96, NULL}, 12, 0},            /* IPv4-translated, RFC 2765 */
    {{{0}, 96, NULL}, 12, 0},                                 /* IPv4-compatible */
    {{{0x00, 0x64, 0xff, 0x9b}, 96, NULL}, 12, 0},            /* NAT64, RFC 6052 */
    {{{0x00, 0x64, 0xff, 0x9b, 0, 1}, 48, "private"}, 12, 0}, /* local NAT64, RFC 8215 */
    {{{0x20, 0x02}, 16, NULL}, 2, 0},                         /* 6to4 */
    {{{0x20, 0x01, 0x00, 0x00}, 32, NULL}, 12, 0xffffffffu},  /* Teredo: the client's */
};

/* Whether the first len bits of a are those of net. */
static bool in_range(const unsigned char *a, const unsigned char *net, unsigned len)
{
    unsigned whole = len / 8, rest = len % 8;
    if (memcmp(a, net, whole) != 0)
        return false;
    unsigned char mask = (unsigned char)(0xff00 >> rest);
    return rest == 0 || ((a[whole] ^ net[whole]) & mask) == 0;
}

/* The class of the first of the n ranges holding a, or NULL. */
static const char *range_class(const struct range *ranges, size_t n, const unsigned char *a)
{
    for (size_t i = 0; i < n; i++)
        if (in_range(a, ranges[i].net, ranges[i].len))
            return ranges[i].cls;
    return NULL;
}

#define N_OF(t) (sizeof(t) / sizeof((t)[0]))

static const char *ipv4_class(const unsigned char *a)
{
    return range_class(v4_ranges, N_OF(v4_ranges), a);
}

static const char *ipv6_class(const unsigned char *a)
{
    const char *plain = range_class(v6_ranges, N_OF(v6_ranges), a);
    if (plain != NULL)
        return plain;
    for (size_t i = 0; i < N_OF(v6_embedding); i++) {
        const struct range *p = &v6_embedding[i].prefix;
        if (!in_range(a, p->net, p->len))
            continue;
        const unsigned char *e = a + v6_embedding[i].offset;
        uint32_t v4 = ((uint32_t)e[0] << 24 | (uint32_t)e[1] << 16 | (uint32_t)e[2] << 8 | e[3]) ^
                      v6_embedding[i].mask;
        unsigned char b[4] = {v4 >> 24, v4 >> 16 & 0xff, v4 >> 8 & 0xff, v4 & 0xff};
        const char *cls = ipv4_class(b);
        return cls != NULL ? cls : p->cls;
    }
    return NULL;
}

const char *hv_httpc_address_class(const char *ip)
{
    unsigned char a[16];
    if (inet_pton(AF_INET, ip, a) == 1)
        return ipv4_class(a);
    if (inet_pton(AF_INET6, ip, a) == 1)
        return ipv6_class(a);
    return "invalid";
}

/* curl's open-socket callback when the client may reach public addresses
 * only: called for each address curl is about to connect to, before any
 * packet is sent. A refused one gets no socket, so curl tries the next
 * address or fails; the reason is noted for the error, the same whether
 * anything listens there or not. */
static curl_socket_t open_checked(void *clientp, curlsocktype purpose, struct curl_sockaddr *sa)
{
    (void)purpose;
    struct hv_httpc *c = clientp;
    char text[INET6_ADDRSTRLEN] = "?";
    const char *cls = "invalid";
    if (sa->family == AF_INET && sa->addrlen >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)&sa->addr;
        cls = ipv4_class((const unsigned char *)&in->sin_addr);
        inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    } else if (sa->family == AF_INET6 && sa->addrlen >= sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&sa->addr;
        cls = ipv6_class(in6->sin6_addr.s6_addr);
        inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
    }
    if (cls != NULL) {
        snprintf(c->refused, sizeof c->refused, "address %s is %s: not allowed", text, cls);
        return CURL_SOCKET_BAD;
    }
    c->opened = true;
    return socket(sa->family, sa->socktype | SOCK_CLOEXEC, sa->protocol);
}

/* The request's header lines: its content type when it has a body, the
 * client's own, then extra (NULL-terminated, may be NULL). *failed is set
 * when memory ran out (the list holds what was added). */
static struct curl_slist *header_list(const struct hv_httpc *c, bool has_body,
                                      const char *content_type, const char *const *extra,
                                      bool *failed)
{
    struct curl_slist *headers = NULL, *h;
    char ct_header[256];
    if (has_body) {
        snprintf(ct_header, sizeof ct_header, "Content-Type: %s",
                 content_type != NULL ? content_type : "application/json");
        *failed |= (h = curl_slist_append(headers, ct_header)) == NULL;
        headers = h != NULL ? h : headers;
    }
    /* "Expect:" turns off 100-continue: the API's bodies are small and the
     * extra round trip would only slow every upload. */
    const char *fixed[] = {"Accept: application/json, application/problem+json",
                           "Expect:", c->auth_header};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        if (fixed[i] == NULL)
            continue;
        *failed |= (h = curl_slist_append(headers, fixed[i])) == NULL;
        headers = h != NULL ? h : headers;
    }
    for (size_t i = 0; extra != NULL && extra[i] != NULL; i++) {
        *failed |= (h = curl_slist_append(headers, extra[i])) == NULL;
        headers = h != NULL ? h : headers;
    }
    return headers;
}

/* Sends one request; extra is NULL or a NULL-terminated list of further
 * header lines. */
static int request(struct hv_httpc *c, const char *method, const char *path,
                   const char *content_type, const char *data, size_t len, const char *const *extra,
                   struct hv_http_response *resp)
{
    memset(resp, 0, sizeof *resp);
    if (abort_requested(c)) {
        resp->aborted = true;
        set_error(resp, "%s %s: aborted", method, path);
        return -1;
    }
    if (c->curl == NULL && (c->curl = curl_easy_init()) == NULL) {
        set_error(resp, "out of memory");
        return -1;
    }
    size_t url_len = strlen(c->base_url) + strlen(path) + 2;
    char *url = malloc(url_len);
    if (url == NULL) {
        set_error(resp, "out of memory");
        return -1;
    }
    snprintf(url, url_len, "%s%s%s", c->base_url, path[0] == '/' || path[0] == '\0' ? "" : "/",
             path);

    bool header_failed = false;
    struct curl_slist *headers = header_list(c, data != NULL, content_type, extra, &header_failed);
    if (header_failed) {
        curl_slist_free_all(headers);
        free(url);
        set_error(resp, "out of memory");
        return -1;
    }

    struct body_buf body = {0};
    char curl_err[CURL_ERROR_SIZE] = "";
    CURL *curl = c->curl;
    curl_easy_reset(curl);
    curl_easy_setopt(curl, CURLOPT_URL, url);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, c->timeout_s);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, c->timeout_s < 10 ? c->timeout_s : 10L);
    /* Threads: no SIGALRM-based DNS timeouts. */
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "hvbench/1");
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_err);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, collect_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, resp);
    if (c->abort_flag != NULL) {
        curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, check_abort);
        curl_easy_setopt(curl, CURLOPT_XFERINFODATA, c);
        curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    }
    /* Redirects are never followed (curl's default, kept explicit): the
     * caller sees the 3xx answer, and no address is reached unchecked. */
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    c->refused[0] = '\0';
    c->opened = false;
    if (c->public_only) {
        curl_easy_setopt(curl, CURLOPT_OPENSOCKETFUNCTION, open_checked);
        curl_easy_setopt(curl, CURLOPT_OPENSOCKETDATA, c);
        /* Through a proxy the address checked would be the proxy's. */
        curl_easy_setopt(curl, CURLOPT_PROXY, "");
    }
    set_method(curl, method, data, len);

    CURLcode rc = curl_easy_perform(curl);
    int result = -1;
    if (rc != CURLE_OK) {
        if (body.too_large) {
            set_error(resp, "answer from %s exceeds %zu MiB", url, HTTPC_MAX_BODY >> 20);
        } else if (c->refused[0] != '\0' && !c->opened) {
            set_error(resp, "%s %s: %s", method, url, c->refused);
        } else if (rc == CURLE_ABORTED_BY_CALLBACK) {
            resp->aborted = true;
            set_error(resp, "%s %s: aborted", method, url);
        } else {
            set_error(resp, "%s %s: %s", method, url,
                      curl_err[0] != '\0' ? curl_err : curl_easy_strerror(rc));
        }
    } else {
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &resp->status);
#if LIBCURL_VERSION_NUM >= 0x074200
        curl_off_t after = 0;
        if (curl_easy_getinfo(curl, CURLINFO_RETRY_AFTER, &after) == CURLE_OK && after > 0)
            resp->retry_after = after > LONG_MAX ? LONG_MAX : (long)after;
#endif
        char *ct = NULL;
        curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &ct);
        if (body.len > 0 && is_json_type(ct)) {
            json_error_t jerr;
            resp->body = json_loadb(body.data, body.len, JSON_REJECT_DUPLICATES, &jerr);
            if (resp->body == NULL)
                set_error(resp, "invalid JSON in answer: %s (line %d)", jerr.text, jerr.line);
        }
        result = 0;
    }
    /* The error buffer lives on this stack frame: detach it. */
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, NULL);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(headers);
    free(body.data);
    free(url);
    return result;
}

int hv_httpc_request_raw(struct hv_httpc *c, const char *method, const char *path,
                         const char *content_type, const char *data, size_t len,
                         struct hv_http_response *resp)
{
    return request(c, method, path, content_type, data, len, NULL, resp);
}

int hv_httpc_request_raw_headers(struct hv_httpc *c, const char *method, const char *path,
                                 const char *content_type, const char *data, size_t len,
                                 const char *const *headers, struct hv_http_response *resp)
{
    return request(c, method, path, content_type, data, len, headers, resp);
}

int hv_httpc_request_headers(struct hv_httpc *c, const char *method, const char *path, json_t *body,
                             const char *const *headers, struct hv_http_response *resp)
{
    if (body == NULL)
        return request(c, method, path, NULL, NULL, 0, headers, resp);
    char *data = json_dumps(body, JSON_COMPACT);
    if (data == NULL) {
        memset(resp, 0, sizeof *resp);
        set_error(resp, "cannot serialise the request body");
        return -1;
    }
    int rc = request(c, method, path, "application/json", data, strlen(data), headers, resp);
    free(data);
    return rc;
}

int hv_httpc_request(struct hv_httpc *c, const char *method, const char *path, json_t *body,
                     struct hv_http_response *resp)
{
    return hv_httpc_request_headers(c, method, path, body, NULL, resp);
}

void hv_http_response_clear(struct hv_http_response *resp)
{
    if (resp == NULL)
        return;
    json_decref(resp->body);
    resp->body = NULL;
}

/* Reason phrases for answers without a problem document title. */
static const struct {
    long status;
    const char *reason;
} reasons[] = {
    {400, "Bad Request"},
    {401, "Unauthorized"},
    {403, "Forbidden"},
    {404, "Not Found"},
    {405, "Method Not Allowed"},
    {409, "Conflict"},
    {413, "Content Too Large"},
    {414, "URI Too Long"},
    {415, "Unsupported Media Type"},
    {422, "Unprocessable Content"},
    {429, "Too Many Requests"},
    {500, "Internal Server Error"},
    {502, "Bad Gateway"},
    {503, "Service Unavailable"},
    {504, "Gateway Timeout"},
};

static const char *reason_phrase(long status)
{
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
        if (reasons[i].status == status)
            return reasons[i].reason;
    return status >= 500 ? "Server Error" : status >= 400 ? "Client Error" : "HTTP";
}

/* Appends printf output to buf[len] at *pos, never overflowing. */
static void append(char *buf, size_t len, size_t *pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void append(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
    if (*pos >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *pos, len - *pos, fmt, ap);
    va_end(ap);
    if (n > 0)
        *pos = *pos + (size_t)n < len ? *pos + (size_t)n : len - 1;
}

void hv_http_response_describe(const struct hv_http_response *resp, char *buf, size_t len)
{
    if (len == 0)
        return;
    buf[0] = '\0';
    size_t pos = 0;
    if (resp->status == 0) {
        append(buf, len, &pos, "no answer: %s", resp->error[0] ? resp->error : "unknown error");
        return;
    }
    const json_t *doc = json_is_object(resp->body) ? resp->body : NULL;
    const char *title = json_string_value(json_object_get(doc, "title"));
    const char *detail = json_string_value(json_object_get(doc, "detail"));
    append(buf, len, &pos, "%ld %s", resp->status, title ? title : reason_phrase(resp->status));
    if (detail != NULL)
        append(buf, len, &pos, ": %s", detail);
    const json_t *errors = json_object_get(doc, "errors");
    if (json_array_size(errors) > 0) {
        size_t i;
        const json_t *e;
        append(buf, len, &pos, " [");
        json_array_foreach(errors, i, e)
        {
            const char *p = json_string_value(json_object_get(e, "path"));
            const char *m = json_string_value(json_object_get(e, "message"));
            append(buf, len, &pos, "%s%s: %s", i ? "; " : "", p ? p : "?", m ? m : "?");
        }
        append(buf, len, &pos, "]");
    }
    if (resp->error[0] != '\0')
        append(buf, len, &pos, " (%s)", resp->error);
}
