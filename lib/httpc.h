/* httpc.h — a small JSON-over-HTTP client on libcurl, used by the worker
 * and the CLI.
 *
 * A client holds one curl easy handle (so connections are kept alive across
 * requests), the server's base URL and an optional bearer token. It is not
 * thread safe: use one client per thread. */
#ifndef HV_HTTPC_H
#define HV_HTTPC_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

struct hv_httpc;

/** One answer. status is the HTTP status, or 0 when the request never got
 *  an answer (then error says why: connection refused, timeout ...).
 *  body is the parsed JSON body when the answer was JSON (a new reference,
 *  owned by the response), else NULL. */
struct hv_http_response {
    long status;
    json_t *body;
    char error[256];
    bool replayed; /**< the answer carried "Idempotency-Replayed: true" */
    /** Seconds the answer's Retry-After asks to wait (a number, or an
     *  HTTP date from now), 0 when it carried none. */
    long retry_after;
    bool aborted; /**< given up because the abort flag was set */
};

/** Creates a client for base_url (e.g. "http://127.0.0.1:8080"); token may
 *  be NULL. timeout_s bounds each whole request. Returns NULL on allocation
 *  failure. */
struct hv_httpc *hv_httpc_new(const char *base_url, const char *token, long timeout_s);

/** Frees the client; NULL is allowed. */
void hv_httpc_free(struct hv_httpc *c);

/** Sends token (NULL or "" for none) as the bearer token of every later
 *  request, wiping the previous one from memory. Returns 0, or -1 when
 *  memory runs out (then no token is sent). */
int hv_httpc_set_token(struct hv_httpc *c, const char *token);

/** Makes every request of c give up as soon as *flag is nonzero (flag may
 *  be set from a signal handler or another thread): a request started
 *  while it is set fails at once, one in flight within about a second
 *  (curl's progress callback). An aborted request returns -1 with status
 *  0 and aborted set in the response. NULL (the default) turns this off. */
void hv_httpc_set_abort_flag(struct hv_httpc *c, volatile sig_atomic_t *flag);

/** Sends method (GET, POST ...) to base_url + path with body (may be NULL;
 *  serialised compactly, not stolen) and fills *resp. Returns 0 when an
 *  HTTP answer arrived (whatever its status), -1 otherwise. Always call
 *  hv_http_response_clear() afterwards. */
int hv_httpc_request(struct hv_httpc *c, const char *method, const char *path, json_t *body,
                     struct hv_http_response *resp);

/** Like hv_httpc_request(), and also sends headers: "Name: value" strings,
 *  NULL-terminated (headers itself may be NULL), after the client's own
 *  (Accept, Authorization, Content-Type). */
int hv_httpc_request_headers(struct hv_httpc *c, const char *method, const char *path, json_t *body,
                             const char *const *headers, struct hv_http_response *resp);

/** Like hv_httpc_request() with a raw body of a given content type. */
int hv_httpc_request_raw(struct hv_httpc *c, const char *method, const char *path,
                         const char *content_type, const char *data, size_t len,
                         struct hv_http_response *resp);

/** Like hv_httpc_request_raw(), and also sends headers as
 *  hv_httpc_request_headers() does. An empty path sends to base_url as it
 *  is (a webhook's whole URL). */
int hv_httpc_request_raw_headers(struct hv_httpc *c, const char *method, const char *path,
                                 const char *content_type, const char *data, size_t len,
                                 const char *const *headers, struct hv_http_response *resp);

/** With on, every later request of c connects to public addresses only
 *  (see hv_httpc_address_class()): each address a name resolves to is
 *  checked before any connection to it is made, so a refused address
 *  receives no packet, and the request fails with "address A is CLASS:
 *  not allowed", the same error whether anything listens there or not.
 *  Such requests ignore proxies (the address checked is the one
 *  connected to). Turning it on closes the connections c kept alive.
 *  Redirects are never followed, on or off. Off by default. */
void hv_httpc_set_public_only(struct hv_httpc *c, bool on);

/** The class of a numeric IPv4 or IPv6 address: NULL for a public one,
 *  else "unspecified" (0/8, ::), "loopback" (127/8, ::1), "private"
 *  (RFC 1918, shared 100.64/10, unique local fc00::/7, site-local
 *  fec0::/10), "link-local" (169.254/16, fe80::/10), "documentation"
 *  (192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32, 3fff::/20),
 *  "benchmarking" (198.18/15, 2001:2::/48), "multicast" (224/4,
 *  ff00::/8), "broadcast" (255.255.255.255), "reserved" (240/4, 100::/64);
 *  "invalid" when ip is not an address. An IPv6 address carrying an IPv4
 *  one has that one's class: IPv4-mapped ::ffff:0:0/96, IPv4-translated
 *  ::ffff:0:0:0/96, IPv4-compatible ::/96, NAT64 64:ff9b::/96, 6to4
 *  2002::/16 (bits 16-47), Teredo 2001::/32 (the client's, the last 32
 *  bits inverted); the local NAT64 prefix 64:ff9b:1::/48 (IPv4 in the
 *  last 32 bits) is "private" when that IPv4 address is public. The
 *  returned string is static. */
const char *hv_httpc_address_class(const char *ip);

/** Releases what a response holds. */
void hv_http_response_clear(struct hv_http_response *resp);

/** Writes a one-line human description of a failed response (problem
 *  document title/detail and the path of each error, or the transport
 *  error) into buf. */
void hv_http_response_describe(const struct hv_http_response *resp, char *buf, size_t len);

#endif
