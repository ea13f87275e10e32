/* http.c — see http.h.
 *
 * libmicrohttpd calls the access handler several times per request: first
 * with the headers, then with each piece of the body, then once more with
 * nothing. We keep the body and answer only on that last call: an earlier
 * answer would drop the rest of the upload and turn keep-alive off. */
#include "http.h"

#include "answer_cache.h"
#include "auth.h"
#include "batch.h"
#include "config.h"
#include "conns.h"
#include "db.h"
#include "log.h"
#include "metrics.h"
#include "request.h"
#include "routes.h"
#include "static.h"
#include "timeutil.h"
#include "waiters.h"

#include <arpa/inet.h>
#include <malloc.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* The longest path, and the longest request target (path and query, as
 * sent): longer ones are answered 414. A request line past what a
 * connection's memory holds (MHD_OPTION_CONNECTION_MEMORY_LIMIT) is
 * answered 414 by libmicrohttpd itself, before any of this runs. */
#define MAX_URL_LEN    2048
#define MAX_TARGET_LEN 8192

/* What on_request_line found in a request line, kept with the connection
 * (hv_conns_line_note) until the request is dispatched. */
enum line_note {
    LINE_OK = 0,
    LINE_TOO_LONG, /* the target passes MAX_TARGET_LEN */
    LINE_NUL_PATH, /* the path holds %00: no resource has such a name */
};
/* The largest body of a batched call whose credential waits for its batch. */
#define DEFER_AUTH_MAX_BODY 65536

static struct MHD_Daemon *daemon_handle;
static atomic_int in_flight;

/* Runs the request's handler: the first time after routing, and again
 * each time a long-polling request is woken. */
static void run_handler(struct hv_request *req)
{
    const struct hv_route *route = req->route;
    req->park = false;
    req->batch = 0;
    route->handler(req);
    /* A handler that refused the body of a call whose credential was not
     * looked up yet (hv_auth_defer): a refused credential comes first, as
     * for any other call. */
    if (req->status >= 400 && req->auth_deferred) {
        char detail[256];
        hv_auth_reply_refusal(req, hv_auth_settle(req, detail, sizeof detail), detail);
    }
    if (req->status == 0 && !req->park)
        hv_reply_problem(req, HV_E_INTERNAL, "the handler gave no answer", NULL);
}

/* The admission state of a connection (conns.h), set when it opened. */
static struct hv_conn *conn_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci != NULL ? ci->socket_context : NULL;
}

/* What capture_one appends to. */
struct capture_into {
    struct hv_kv_list *list;
    json_t *nul_errors; /* an error per argument that holds a NUL byte */
};

/* MHD_get_connection_values_n callback: appends one key and value. A NUL
 * byte (%00) inside either would cut it short as a C string, so a value
 * would silently mean less than was sent: such an argument is noted. */
static enum MHD_Result capture_one(void *cls, enum MHD_ValueKind kind, const char *key,
                                   size_t key_size, const char *value, size_t value_size)
{
    (void)kind;
    struct capture_into *into = cls;
    if (into->nul_errors != NULL && key != NULL &&
        (strlen(key) != key_size || (value != NULL && strlen(value) != value_size)))
        hv_errors_add(into->nul_errors, key, "must not hold a NUL byte (%%00)");
    return hv_req_kv_add(into->list, key, value) == 0 ? MHD_YES : MHD_NO;
}

/* Captures the query arguments and headers as values of the request, so
 * handlers (and their unit tests) never call into libmicrohttpd. The
 * strings stay libmicrohttpd's, valid until the request completes. Then
 * refuses a request line that is too long (414) or holds a NUL byte: in
 * the path (404, no resource has such a name) or in a query argument
 * (400 naming it). Returns true when an answer was set. */
static bool capture(struct hv_request *req)
{
    struct capture_into args = {&req->query, json_array()};
    struct capture_into headers = {&req->headers, NULL};
    MHD_get_connection_values_n(req->conn, MHD_GET_ARGUMENT_KIND, capture_one, &args);
    MHD_get_connection_values_n(req->conn, MHD_HEADER_KIND, capture_one, &headers);
    int note = hv_conns_line_note(conn_of(req->conn));
    if (note == LINE_TOO_LONG || strlen(req->url) > MAX_URL_LEN) {
        char detail[96];
        snprintf(detail, sizeof detail, "the path may have %d bytes, path and query %d",
                 MAX_URL_LEN, MAX_TARGET_LEN);
        hv_reply_problem(req, HV_E_URI_TOO_LONG, detail, NULL);
    } else if (note == LINE_NUL_PATH) {
        hv_reply_problem(req, HV_E_NOT_FOUND, "no such endpoint", NULL);
    } else if (json_array_size(args.nul_errors) > 0) {
        hv_reply_problem(req, HV_E_INVALID_REQUEST, "a query argument holds a NUL byte",
                         args.nul_errors);
        return true;
    }
    json_decref(args.nul_errors);
    return req->status != 0;
}

/* Routes the finished request, checks access, runs the handler. The
 * request is captured (capture) and was not refused there. */
static void dispatch(struct hv_request *req)
{
    if (req->too_large) {
        char detail[96];
        snprintf(detail, sizeof detail, "the body is larger than %zu bytes", req->body_limit);
        hv_reply_problem(req, HV_E_BODY_TOO_LARGE, detail, NULL);
        return;
    }
    const char *allow = NULL;
    const struct hv_route *route = hv_route_find(req->method, req->url, req, &allow);
    if (route == NULL) {
        if (allow != NULL) {
            req->allow = allow;
            hv_reply_problem(req, HV_E_METHOD_NOT_ALLOWED, NULL, NULL);
        } else {
            hv_reply_problem(req, HV_E_NOT_FOUND, "no such endpoint", NULL);
        }
        return;
    }
    /* Set before the token check, so a refusal counts under its route. */
    req->route = route;
    if (route->access != HV_ACCESS_OPEN) {
        const char *authz = hv_req_header(req, MHD_HTTP_HEADER_AUTHORIZATION);
        char ended[256];
        /* A batched worker call's credential is looked up with its batch
         * (batch.h); its handler answers a refusal then. Only small bodies
         * wait: a large one is not parsed before its sender is known. */
        bool deferred = hv_route_batched(route) && req->body_len <= DEFER_AUTH_MAX_BODY &&
                        hv_batch_on(HV_BATCH_CLAIM) && hv_auth_defer(req, authz);
        if (!deferred &&
            hv_auth_reply_refusal(req, hv_auth_check(req, authz, ended, sizeof ended), ended))
            return;
        if (!hv_access_allows(route->access, req->role, req->worker_id != 0 || req->auth_deferred,
                              hv_cfg.read_needs_token)) {
            if (req->role == HV_ROLE_NONE)
                hv_reply_problem(req, HV_E_UNAUTHORIZED, "this endpoint needs a token", NULL);
            else if (route->access == HV_ACCESS_JOB)
                hv_reply_problem(req, HV_E_FORBIDDEN,
                                 "job calls need the worker credential (hvw_...) that "
                                 "POST /api/v1/workers/register returned",
                                 NULL);
            else
                hv_reply_problem(req, HV_E_FORBIDDEN, "the token's role does not allow this", NULL);
            return;
        }
    }
    run_handler(req);
}

/* The headers every API answer carries. */
static void common_headers(struct MHD_Response *resp)
{
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
}

/* Queues fixed answer a: its response, built on first use and then kept
 * (libmicrohttpd counts the connections a response is queued on). Two
 * threads building it at once keep the first one. */
static enum MHD_Result respond_fixed(struct hv_request *req, struct hv_fixed_answer *a)
{
    struct MHD_Response *resp = atomic_load(&a->response);
    if (resp == NULL) {
        resp = MHD_create_response_from_buffer(strlen(a->text), (void *)a->text,
                                               MHD_RESPMEM_PERSISTENT);
        if (resp == NULL)
            return MHD_NO;
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, a->content_type);
        common_headers(resp);
        void *none = NULL;
        if (!atomic_compare_exchange_strong(&a->response, &none, resp)) {
            MHD_destroy_response(resp);
            resp = none;
        }
    }
    return MHD_queue_response(req->conn, a->status, resp);
}

/* A JSON answer is written into pieces of this size; one that fills more
 * than one is sent from them as they go (stream_read), never copied whole. */
#define PIECE_SIZE (256 * 1024)
/* After an answer of at least this size, the memory its tree and text
 * took is handed back to the system (malloc_trim): glibc keeps what a
 * thread freed in that thread's arena otherwise, and twenty large reads
 * at once would leave the process that much larger for good. */
#define TRIM_AFTER (4 * 1024 * 1024)
/* Blocks of at least this size get a mapping of their own, given back to
 * the system as soon as they are freed. glibc's threshold would otherwise
 * rise to the largest block freed (up to 32 MiB), and then the text of
 * each large answer (a database result of 11 MB) would come from the
 * arenas and stay there until a malloc_trim. */
#define MMAP_FROM (1024 * 1024)

/* The text of a JSON answer, in pieces sent and freed in order. */
struct piece {
    struct piece *next;
    size_t len;
    char data[PIECE_SIZE];
};
struct stream {
    struct piece *head, *tail;
    size_t total; /* bytes in all pieces */
    size_t off;   /* bytes of head already sent */
};

/* json_dump_callback callback: appends text to the stream's pieces. */
static int stream_append(const char *buf, size_t size, void *data)
{
    struct stream *st = data;
    while (size > 0) {
        if (st->tail == NULL || st->tail->len == PIECE_SIZE) {
            struct piece *p = malloc(sizeof *p);
            if (p == NULL)
                return -1;
            p->next = NULL;
            p->len = 0;
            if (st->tail != NULL)
                st->tail->next = p;
            else
                st->head = p;
            st->tail = p;
        }
        size_t n = PIECE_SIZE - st->tail->len < size ? PIECE_SIZE - st->tail->len : size;
        memcpy(st->tail->data + st->tail->len, buf, n);
        st->tail->len += n;
        st->total += n;
        buf += n;
        size -= n;
    }
    return 0;
}

/* Hands memory freed by a large answer back to the system, at most once a
 * second (malloc_trim walks every arena). */
static void trim_after_large(size_t total)
{
    static _Atomic double last;
    if (total < TRIM_AFTER)
        return;
    double now = hv_monotonic(), was = atomic_load(&last);
    if (now - was >= 1 && atomic_compare_exchange_strong(&last, &was, now))
        malloc_trim(0);
}

/* MHD content reader: copies the next bytes of the pieces, freeing each
 * one once it is sent. libmicrohttpd reads in order (pos only grows). */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct stream *st = cls;
    size_t n = 0;
    while (n < max && st->head != NULL) {
        struct piece *p = st->head;
        size_t k = p->len - st->off < max - n ? p->len - st->off : max - n;
        memcpy(buf + n, p->data + st->off, k);
        n += k;
        st->off += k;
        if (st->off == p->len) {
            st->head = p->next;
            st->off = 0;
            free(p);
        }
    }
    (void)pos;
    return n > 0 ? (ssize_t)n : MHD_CONTENT_READER_END_OF_STREAM;
}

/* MHD free callback of a streamed answer: what was not sent, then the
 * stream; then the memory may go back to the system. */
static void stream_free(void *cls)
{
    struct stream *st = cls;
    while (st->head != NULL) {
        struct piece *p = st->head;
        st->head = p->next;
        free(p);
    }
    size_t total = st->total;
    free(st);
    trim_after_large(total);
}

/* The response for JSON answer doc (which it frees): from one buffer when
 * the text fits one piece, else streamed from its pieces. NULL when
 * memory runs out. */
static struct MHD_Response *json_response(json_t *doc)
{
    struct stream *st = calloc(1, sizeof *st);
    if (st == NULL || json_dump_callback(doc, stream_append, st, JSON_COMPACT) != 0) {
        json_decref(doc);
        if (st != NULL)
            stream_free(st);
        return NULL;
    }
    json_decref(doc); /* the tree goes before the text is sent */
    if (st->head == st->tail) {
        struct MHD_Response *resp = MHD_create_response_from_buffer(
            st->total, st->head != NULL ? st->head->data : (char *)"", MHD_RESPMEM_MUST_COPY);
        stream_free(st);
        return resp;
    }
    struct MHD_Response *resp =
        MHD_create_response_from_callback(st->total, 64 * 1024, stream_read, st, stream_free);
    if (resp == NULL)
        stream_free(st);
    return resp;
}

/* MHD content reader of a kept answer: its prefix, text and suffix, from
 * pos on. */
static ssize_t kept_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    const struct hv_kept_text *k = cls;
    const char *part[3] = {k->prefix, k->text, k->suffix};
    size_t len[3] = {strlen(k->prefix), k->len, strlen(k->suffix)};
    size_t n = 0;
    for (int i = 0; i < 3 && n < max; i++) {
        if (pos >= len[i]) {
            pos -= len[i];
            continue;
        }
        size_t take = len[i] - pos < max - n ? len[i] - (size_t)pos : max - n;
        memcpy(buf + n, part[i] + pos, take);
        n += take;
        pos = 0;
    }
    return n > 0 ? (ssize_t)n : MHD_CONTENT_READER_END_OF_STREAM;
}

/* MHD free callback of a kept answer: its owner (the database result),
 * then the memory may go back to the system. */
static void kept_free(void *cls)
{
    struct hv_kept_text *k = cls;
    size_t total = k->len;
    hv_kept_text_free(k);
    trim_after_large(total);
}

/* The response for kept answer k (which it frees), sent from where the
 * text is. NULL when memory runs out. */
static struct MHD_Response *kept_response(struct hv_kept_text *k)
{
    size_t total = strlen(k->prefix) + k->len + strlen(k->suffix);
    struct MHD_Response *resp =
        MHD_create_response_from_callback(total, 64 * 1024, kept_read, k, kept_free);
    if (resp == NULL)
        kept_free(k);
    return resp;
}

/* Turns the answer in req into an MHD response and queues it. */
static enum MHD_Result respond(struct hv_request *req)
{
    /* A fixed answer's response is shared: one that needs a header of its
     * own is built like any other. */
    if (req->fixed != NULL && !req->close && req->location[0] == '\0' && req->allow == NULL &&
        req->extra_header == NULL && req->status != 401)
        return respond_fixed(req, req->fixed);
    struct MHD_Response *resp;
    char *text = NULL;
    size_t len = 0;
    if (req->fixed != NULL) {
        text = strdup(req->fixed->text);
        len = text ? strlen(text) : 0;
    } else if (req->text != NULL) {
        text = req->text; /* the response frees it */
        req->text = NULL;
        len = strlen(text);
    }
    bool typed = text != NULL || req->reply != NULL || req->kept != NULL;
    if (req->reply != NULL) {
        resp = json_response(req->reply);
        req->reply = NULL;
    } else if (req->kept != NULL) {
        resp = kept_response(req->kept);
        req->kept = NULL;
    } else {
        resp = MHD_create_response_from_buffer(
            len, text ? text : (char *)"", text ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
        if (resp == NULL)
            free(text);
    }
    if (resp == NULL)
        return MHD_NO;
    if (typed)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, req->content_type);
    common_headers(resp);
    if (req->location[0] != '\0')
        MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, req->location);
    if (req->allow != NULL)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, req->allow);
    if (req->extra_header != NULL)
        MHD_add_response_header(resp, req->extra_header, req->extra_value);
    if (req->status == 401)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"hvbench\"");
    if (req->close)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result r = MHD_queue_response(req->conn, req->status, resp);
    MHD_destroy_response(resp);
    return r;
}

/* Queues the answer in req and counts it for /metrics under its route. */
static enum MHD_Result answer(struct hv_request *req)
{
    enum MHD_Result r = respond(req);
    hv_metrics_request(req->route != NULL ? hv_route_index(req->route) : HV_METRICS_ROUTE_NONE,
                       req->status, hv_monotonic() - req->started);
    return r;
}

/* Answers 503 server_busy with detail, Retry-After: 1 and Connection:
 * close, at the request's head: what is still to come is not read. */
static enum MHD_Result answer_busy(struct hv_request *req, const char *detail)
{
    hv_reply_problem(req, HV_E_BUSY, detail, NULL);
    req->extra_header = MHD_HTTP_HEADER_RETRY_AFTER;
    req->extra_value = "1";
    req->close = true;
    return answer(req);
}

static enum MHD_Result respond_static(struct hv_request *req, const struct hv_static_file *f)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(f->len, f->data, MHD_RESPMEM_PERSISTENT);
    if (resp == NULL)
        return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, f->content_type);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "Content-Security-Policy",
                            "default-src 'self'; style-src 'self'; img-src 'self' data:");
    enum MHD_Result r = MHD_queue_response(req->conn, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    hv_metrics_request(HV_METRICS_ROUTE_WEB, MHD_HTTP_OK, hv_monotonic() - req->started);
    return r;
}

/* Appends one piece of the body, or notes that the cap was passed (the
 * rest is read and dropped so the answer can still go out normally). */
static void take_body(struct hv_request *req, const char *data, size_t size)
{
    if (req->too_large || req->body_len + size > req->body_limit) {
        req->too_large = true;
        free(req->body);
        req->body = NULL;
        req->body_len = req->body_cap = 0;
        return;
    }
    if (req->body_len + size + 1 > req->body_cap) {
        size_t cap = req->body_cap ? req->body_cap : 4096;
        while (cap < req->body_len + size + 1)
            cap *= 2;
        char *b = realloc(req->body, cap);
        if (b == NULL) {
            req->too_large = true;
            return;
        }
        req->body = b;
        req->body_cap = cap;
    }
    memcpy(req->body + req->body_len, data, size);
    req->body_len += size;
    req->body[req->body_len] = '\0';
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version, const char *upload_data,
                                 size_t *upload_data_size, void **con_cls)
{
    struct hv_request *req = *con_cls;
    if (req == NULL) {
        req = calloc(1, sizeof *req);
        if (req == NULL)
            return MHD_NO;
        req->conn = conn;
        req->method = method;
        req->url = url;
        req->started = hv_monotonic();
        req->body_limit = hv_route_body_limit(method, url);
        *con_cls = req;
        atomic_fetch_add(&in_flight, 1);
        struct hv_conn *c = conn_of(conn);
        hv_conns_head_done(c);
        if (hv_conns_verdict(c) == HV_CONN_REFUSED)
            return MHD_NO; /* shut down already; only its close is pending */
        char detail[128];
        if (hv_conns_verdict(c) == HV_CONN_BUSY) {
            snprintf(detail, sizeof detail, "the server holds %u connections already",
                     hv_conns_room(c));
            return answer_busy(req, detail);
        }
        /* A body announced as too large is refused before it is sent. */
        const char *cl =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl != NULL && strtoull(cl, NULL, 10) > req->body_limit) {
            req->too_large = true;
            if (!capture(req))
                dispatch(req);
            return answer(req);
        }
        /* A body to come counts against its address until it has arrived,
         * so slow bodies from one address cannot hold every thread's
         * connections; past the budget it is refused before it is sent. */
        bool chunked = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                                   MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL;
        if ((chunked || (cl != NULL && strtoull(cl, NULL, 10) > 0)) && !hv_conns_body_begin(c)) {
            hv_metrics_body_refused();
            snprintf(detail, sizeof detail,
                     "this address is sending %u request bodies already "
                     "(--max-bodies-per-address)",
                     hv_cfg.max_bodies_per_address);
            return answer_busy(req, detail);
        }
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        take_body(req, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    hv_conns_body_end(conn_of(conn)); /* the body has arrived whole */
    if (req->status != 0)
        return MHD_YES; /* already answered (too large) */
    if (req->route != NULL) {
        run_handler(req); /* woken from a long poll */
    } else if (!capture(req)) {
        if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0) {
            const struct hv_static_file *f = hv_static_find(url);
            if (f != NULL)
                return respond_static(req, f);
        }
        dispatch(req);
    }
    /* What the handler changed is committed: kept answers read before it
     * are stale (answer_cache.h). A long poll's handler may change rows
     * before it parks (a claim's lease sweep) and again when it answers. */
    if (req->route != NULL && strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        hv_write_gen_bump();
    if (req->park) {
        /* Suspend first, then register: a wake-up can only come for a
         * connection that is really suspended. */
        MHD_suspend_connection(conn);
        if (req->batch)
            hv_batch_enqueue(req);
        else
            hv_waiters_park(req, (enum hv_wait_kind)req->park_kind, req->park_key,
                            req->wait_deadline);
        return MHD_YES;
    }
    hv_debug("%s %s -> %u", method, url, req->status);
    return answer(req);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    /* Kept alive for another request: its head has a deadline again. */
    if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
        hv_conns_answered(conn_of(conn));
    hv_conns_body_end(conn_of(conn)); /* a body cut short */
    struct hv_request *req = *con_cls;
    if (req == NULL)
        return;
    if (req->parked)
        hv_waiters_forget(req);
    hv_request_free(req);
    *con_cls = NULL;
    atomic_fetch_sub(&in_flight, 1);
}

/* Admits each new connection (conns.h) and forgets it when it closes:
 * libmicrohttpd pairs the two notifications, and sends CLOSED before it
 * closes the socket. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *addr =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        const union MHD_ConnectionInfo *fd =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        *socket_context = hv_conns_open(addr != NULL ? addr->client_addr : NULL,
                                        fd != NULL ? fd->connect_fd : -1);
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        hv_conns_close(*socket_context);
        *socket_context = NULL;
    }
}

/* libmicrohttpd's accept policy, called right after accept() and before
 * anything of the connection is set up: an untrusted address already over
 * its budget (conns.h) is closed here, at the cost of a close, and its
 * reconnections do not crowd out other clients. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
    (void)addrlen;
    return hv_conns_accept(addr) ? MHD_YES : MHD_NO;
}

/* Called once a request line has arrived, before the headers: from here the
 * rest of the head has --header-timeout. Returns the initial con_cls of the
 * request: none, so on_access still sees its first call. */
static void *on_request_line(void *cls, const char *uri, struct MHD_Connection *conn)
{
    /* uri is the target as sent, before libmicrohttpd decodes it: the
     * decoded path is a C string, which a %00 would cut short. */
    size_t path_len = strcspn(uri, "?");
    enum line_note note = LINE_OK;
    if (strlen(uri) > MAX_TARGET_LEN)
        note = LINE_TOO_LONG;
    else if (memmem(uri, path_len, "%00", 3) != NULL)
        note = LINE_NUL_PATH;
    hv_conns_request_line(conn_of(conn), note);
    return NULL;
}

static void on_mhd_error(void *cls, const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n > 0 && msg[n - 1] == '\n')
        msg[--n] = '\0';
    /* Malformed requests from clients land here too; the server's own
     * failures (such as a port in use) are logged where they happen. */
    hv_debug("http: %s", msg);
}

int hv_http_start(void)
{
    for (size_t i = 0; i < hv_route_count(); i++)
        hv_metrics_name_route(i, hv_route_at(i)->method, hv_route_at(i)->pattern);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(hv_cfg.listen_port)};
    if (inet_pton(AF_INET, hv_cfg.listen_host, &sa.sin_addr) != 1) {
        hv_error("--listen: '%s' is not an IPv4 address", hv_cfg.listen_host);
        return -1;
    }
    /* libmicrohttpd divides its connection limit evenly over the pool
     * threads, and a thread whose share is full stops accepting: new
     * clients, trusted ones too, would then wait unanswered in the
     * kernel's backlog. So each thread's share holds every connection
     * conns.c can let in (max_connections served, as many more from
     * untrusted addresses being answered 503, some slack for refused ones
     * not yet closed), and conns.c enforces the real limits. */
    unsigned threads = hv_cfg.threads > 0 ? hv_cfg.threads : 1;
    /* Connections the kernel may hold before they are accepted (it caps
     * the figure at net.core.somaxconn): a flood of reconnecting clients
     * that fills a short queue makes the kernel drop the SYNs of everyone
     * else, who then wait for their retransmission (1 s, 3 s, ...). */
    enum { LISTEN_BACKLOG = 4096 };
    unsigned pool_limit = (2 * hv_cfg.max_connections + 256) * threads;
    mallopt(M_MMAP_THRESHOLD, MMAP_FROM);
    if (hv_conns_start() != 0)
        return -1;
    daemon_handle = MHD_start_daemon(
        MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME,
        hv_cfg.listen_port, on_accept, NULL, on_access, NULL, MHD_OPTION_EXTERNAL_LOGGER,
        on_mhd_error, NULL, MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_LISTEN_BACKLOG_SIZE,
        (unsigned)LISTEN_BACKLOG, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)hv_cfg.threads,
        MHD_OPTION_CONNECTION_LIMIT, pool_limit, MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)hv_cfg.conn_timeout,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)64 * 1024, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, NULL, MHD_OPTION_URI_LOG_CALLBACK, on_request_line, NULL, MHD_OPTION_END);
    if (daemon_handle == NULL) {
        hv_error("cannot listen on %s:%u (in use?)", hv_cfg.listen_host, hv_cfg.listen_port);
        hv_conns_stop();
        return -1;
    }
    return 0;
}

void hv_http_stop(unsigned drain_s)
{
    if (daemon_handle == NULL)
        return;
    MHD_socket s = MHD_quiesce_daemon(daemon_handle);
    /* Long polls answer now instead of at their deadline. */
    hv_waiters_stop();
    hv_batch_stop();
    if (s != MHD_INVALID_SOCKET)
        close(s);
    struct timespec tick = {0, 50 * 1000 * 1000};
    for (unsigned i = 0; i < drain_s * 20 && atomic_load(&in_flight) > 0; i++)
        nanosleep(&tick, NULL);
    if (atomic_load(&in_flight) > 0)
        hv_warn("stopping with %d requests in flight", atomic_load(&in_flight));
    MHD_stop_daemon(daemon_handle);
    daemon_handle = NULL;
    hv_conns_stop();
}
