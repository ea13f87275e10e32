/* clock.h — the server's clock as seen from the worker, for starting the
 * members of a group at the same moment.
 *
 * Every answer of the worker protocol that carries "server_time" is one
 * sample: the server read its clock somewhere between our sending the
 * request (t_send) and receiving the answer (t_recv), so
 *
 *     offset = server_time - (t_send + t_recv) / 2
 *
 * is off by at most half the round trip (t_recv - t_send), plus the 1 ms
 * resolution of server_time. The estimate keeps the sample with the
 * smallest round trip. All times are CLOCK_REALTIME seconds since the
 * epoch, as doubles (microsecond resolution to the year 2100s). */
#ifndef HV_WORKER_CLOCK_H
#define HV_WORKER_CLOCK_H

#include <stdbool.h>

/** A clock offset estimate; zero-initialise it. */
struct hv_clock {
    bool valid;    /**< at least one sample was taken */
    double offset; /**< server clock - local clock, seconds */
    double rtt;    /**< round trip of the sample kept, seconds */
    int samples;   /**< how many samples were offered */
};

/** Seconds since the epoch on CLOCK_REALTIME. */
double hv_realtime(void);

/** Parses an ISO 8601 date and time with a zone: "2026-11-29T18:40:12Z",
 *  with an optional fraction of any length (".123"), "T" or a space
 *  between date and time, and "Z", "+hh", "+hh:mm" or "+hhmm" (or "-").
 *  Stores seconds since the epoch in *out. Returns 0, or -1 when s is not
 *  such a time (out of range fields included; a leap second 60 is taken as
 *  59.999...). */
int hv_iso8601_parse(const char *s, double *out);

/** Offers the sample of one exchange: t_send and t_recv on the local
 *  clock, server_time from the answer. Samples with t_recv < t_send (the
 *  local clock was stepped) are ignored. Keeps the one with the smallest
 *  round trip. */
void hv_clock_add(struct hv_clock *c, double t_send, double t_recv, double server_time);

/** The server's clock now, by the estimate (the local clock when there is
 *  no sample). */
double hv_clock_server_now(const struct hv_clock *c);

#endif
