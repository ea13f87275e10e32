/* h_metrics.c — GET /metrics: the server's own counters in the Prometheus
 * text exposition format 0.0.4 (metrics.h says what is counted).
 *
 * Read access like the other GETs: open, or any valid token with
 * --read-auth token. The gauges of what the database holds (jobs by state,
 * live workers, pending webhook deliveries) come from one cheap statement;
 * when PostgreSQL does not answer they are left out and the process's own
 * counters still answer, which is when they matter. */
#include "config.h"
#include "db.h"
#include "handlers.h"
#include "metrics.h"

#include <stdlib.h>

static const struct hv_stmt state = {
    "metrics_state",
    "SELECT (SELECT count(*) FROM jobs WHERE status = 'queued'), "
    "(SELECT count(*) FROM jobs WHERE status = 'running'), "
    "(SELECT count(*) FROM workers WHERE ended_at IS NULL "
    " AND last_seen > now() - make_interval(secs => $1::int)), "
    "(SELECT count(*) FROM webhook_deliveries WHERE status = 'pending')",
    1};

/* The database's gauges, or -1 in each when it does not answer. */
static void read_state(struct hv_metrics_db *m)
{
    m->jobs_queued = m->jobs_running = m->workers_live = m->webhooks_pending = -1;
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return;
    char live[16];
    const char *p[] = {hv_db_int(live, sizeof live, hv_cfg.worker_live_seconds)};
    PGresult *r;
    if (hv_db_exec(db, &state, p, &r) != HV_DB_OK) {
        PQclear(r);
        return;
    }
    m->jobs_queued = atol(PQgetvalue(r, 0, 0));
    m->jobs_running = atol(PQgetvalue(r, 0, 1));
    m->workers_live = atol(PQgetvalue(r, 0, 2));
    m->webhooks_pending = atol(PQgetvalue(r, 0, 3));
    PQclear(r);
}

/* The content type Prometheus asks for the text format. */
#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

void hv_h_metrics(struct hv_request *req)
{
    struct hv_metrics_db m;
    read_state(&m);
    char *text = hv_metrics_render(&m);
    if (text == NULL) {
        hv_reply_problem(req, HV_E_INTERNAL, "out of memory while writing the metrics", NULL);
        return;
    }
    hv_reply_text(req, 200, CONTENT_TYPE, text);
}
