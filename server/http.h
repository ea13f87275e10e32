/* http.h — the HTTP layer: the libmicrohttpd daemon, body handling,
 * routing, authentication and answering. */
#ifndef HV_SERVER_HTTP_H
#define HV_SERVER_HTTP_H

/** Starts the daemon with the settings in hv_cfg. Returns 0, or -1 (logged)
 *  when it cannot listen. */
int hv_http_start(void);

/** Stops accepting connections, lets requests in flight finish (up to
 *  drain_s seconds), then stops the daemon. */
void hv_http_stop(unsigned drain_s);

#endif
