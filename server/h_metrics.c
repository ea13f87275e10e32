/* h_metrics.c — GET /metrics: the server's own counters in the Prometheus
 * text exposition format 0.0.4 (metrics.h says what is counted).
 *
 * Read access like the other GETs: open, or any valid token with
 * --read-auth token. The handler touches no database, so a scrape without
 * a token still answers while PostgreSQL is down, which is when the
 * counters matter. */
#include "handlers.h"
#include "metrics.h"

/* The content type Prometheus asks for the text format. */
#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

void hv_h_metrics(struct hv_request *req)
{
    char *text = hv_metrics_render();
    if (text == NULL) {
        hv_reply_problem(req, HV_E_INTERNAL, "out of memory while writing the metrics", NULL);
        return;
    }
    hv_reply_text(req, 200, CONTENT_TYPE, text);
}
