/* conns.h — who may hold a connection, how many, and how long a request
 * head may take to arrive.
 *
 * libmicrohttpd 0.9.75 has only an idle timeout, which every byte resets:
 * a client sending one header byte a second holds its connection for ever.
 * This module bounds that and keeps room for the clients that matter:
 *
 *  - Trusted addresses (--trusted: health checkers, workers, the NAT or
 *    load balancer in front of them) may use all of --max-connections;
 *    the others only --max-connections minus --trusted-reserve. A
 *    connection that finds no room is answered 503 server_busy once its
 *    head arrives.
 *  - One untrusted address holds at most --max-per-address connections,
 *    and untrusted addresses together at most --max-connections (those
 *    being answered 503 included). A connection past either is closed at
 *    once, without an answer: answering would need its head, and waiting
 *    for that is what a slow client wants.
 *  - An untrusted address that holds --max-per-address connections, or
 *    is sending --max-bodies-per-address request bodies, has its next
 *    connections closed as they are accepted, before anything of them is
 *    read or set up: a flood of reconnections costs an accept and a close
 *    each, and the listen queue keeps moving for everyone else.
 *  - A request body must arrive within --body-timeout seconds of the end
 *    of its head (408 request_timeout, then the connection is closed).
 *  - A request head must arrive within --header-timeout seconds of the
 *    connection opening; on a kept-alive connection, within --header-timeout
 *    of its request line, and the request line within --connection-timeout
 *    of the previous answer. Past the deadline the connection is shut down
 *    (after a 408 when the request line had arrived), whoever the client.
 *
 * Only the source address is known before the head arrives, so trust is by
 * address; no token or header can buy room. The server listens on IPv4
 * only, so every rule is about IPv4 addresses.
 *
 * The functions taking a connection are called from libmicrohttpd's
 * callbacks on any pool thread; one mutex guards the shared state. */
#ifndef HV_SERVER_CONNS_H
#define HV_SERVER_CONNS_H

#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/** What became of a new connection. */
enum hv_conn_verdict {
    HV_CONN_SERVE,   /**< it holds room: its requests are served */
    HV_CONN_BUSY,    /**< no room: its request is answered 503 server_busy */
    HV_CONN_REFUSED, /**< shut down at once (per-address cap, or no room at all) */
};

/** One connection's state, owned by this module (opaque). */
struct hv_conn;

/** Parses "A.B.C.D/N" or "A.B.C.D" (a /32) into out; host bits past the
 *  prefix are dropped. Returns 0, or -1 when s is not an IPv4 network. */
int hv_cidr_parse(const char *s, struct hv_cidr *out);

/** Whether the IPv4 address addr (host byte order) is inside net. */
bool hv_cidr_contains(const struct hv_cidr *net, uint32_t addr);

/** Sets up the tables for hv_cfg (max_connections, trusted, ...) and starts
 *  the thread that enforces the head deadlines. Returns 0, or -1 (logged)
 *  when memory or a thread cannot be had. */
int hv_conns_start(void);

/** Stops the deadline thread and frees the tables. Call after the daemon
 *  has stopped, when every connection has been closed. */
void hv_conns_stop(void);

/** Whether a connection just accepted from addr may be set up at all:
 *  false for an untrusted address that holds --max-per-address
 *  connections or is sending --max-bodies-per-address request bodies
 *  already, or when untrusted addresses hold --max-connections. Counts
 *  nothing (hv_conns_open admits); the caller closes a refused socket
 *  without reading from it. Called from libmicrohttpd's accept policy. */
bool hv_conns_accept(const struct sockaddr *addr);

/** Admits or refuses a connection just accepted from addr on socket fd,
 *  and starts its first head's deadline. A refused connection is shut down
 *  here. Never NULL; pass the result to hv_conns_close when libmicrohttpd
 *  closes the connection. */
struct hv_conn *hv_conns_open(const struct sockaddr *addr, int fd);

/** The verdict given to c at hv_conns_open. */
enum hv_conn_verdict hv_conns_verdict(const struct hv_conn *c);

/** The connections c's class of address may hold (--max-connections, less
 *  --trusted-reserve for an untrusted one): for the 503 answer's detail. */
unsigned hv_conns_room(const struct hv_conn *c);

/** The request line of the head being waited for has arrived: the rest of
 *  the head gets at most --header-timeout from now. note is the HTTP
 *  layer's verdict on the line (conns.c does not read it), kept for
 *  hv_conns_line_note until the next request line. */
void hv_conns_request_line(struct hv_conn *c, int note);

/** The note given with c's last request line; 0 for none (or c NULL). */
int hv_conns_line_note(const struct hv_conn *c);

/** The head being waited for is complete: no deadline until the answer. */
void hv_conns_head_done(struct hv_conn *c);

/** The head just completed announces a body: counts it against its
 *  untrusted address's --max-bodies-per-address until hv_conns_body_end
 *  (or the close). Returns false, counting nothing, when that address is
 *  sending as many bodies already (then answer 503 and close). Trusted
 *  addresses are not counted. A body counted (or any body of a trusted
 *  address) must arrive whole within --body-timeout: past it the reaper
 *  sends 408 request_timeout and shuts the connection down, unless bytes
 *  of it wait unread (its thread is behind, not its client). */
bool hv_conns_body_begin(struct hv_conn *c);

/** The body counted by hv_conns_body_begin has arrived (or its request
 *  ended): no longer counted. Does nothing when none is counted. */
void hv_conns_body_end(struct hv_conn *c);

/** An answer was sent and the connection stays open: the next request
 *  line must come within --connection-timeout. */
void hv_conns_answered(struct hv_conn *c);

/** Forgets c (libmicrohttpd closed it) and gives its room back. */
void hv_conns_close(struct hv_conn *c);

/** Shuts down every connection whose head deadline is at or before now
 *  (monotonic seconds, hv_monotonic()): libmicrohttpd then closes it. A
 *  connection whose whole head has arrived but is not read yet (its
 *  thread is busy with other requests) is not slow: it loses its deadline
 *  instead. The deadline thread calls it a few times a second. Returns how
 *  many were shut down. */
unsigned hv_conns_reap(double now);

/** The connections open now from trusted and from other addresses. */
void hv_conns_count(unsigned *trusted, unsigned *untrusted);

#endif
