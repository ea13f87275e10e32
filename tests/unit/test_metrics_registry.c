/* test_metrics_registry.c — the server's metrics registry: what each hook counts,
 * the histogram's bucket bounds (inclusive), its cumulative counts and
 * sum, the route labels, and the exact lines of the text format. */
#include "hv_build.h"
#include "server/metrics.h"
#include "server/routes.h"

#include "check.h"

#include <stdlib.h>

/* Whether text has line as one whole line. */
static bool has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = strstr(text, line); p != NULL; p = strstr(p + 1, line))
        if ((p == text || p[-1] == '\n') && p[n] == '\n')
            return true;
    return false;
}

#define CHECK_LINE(text, line) CHECK_MSG(has_line(text, line), "no line: %s", line)

int main(void)
{
    for (size_t i = 0; i < hv_route_count(); i++)
        hv_metrics_name_route(i, hv_route_at(i)->method, hv_route_at(i)->pattern);
    char *t = hv_metrics_render(NULL);
    CHECK(t != NULL);
    char build[64];
    snprintf(build, sizeof build, "hvbench_build_info{version=\"%s\"} 1", HVBENCH_VERSION);
    CHECK_LINE(t, build);
    CHECK_LINE(t, "# TYPE hvbench_build_info gauge");
    CHECK_LINE(t, "hvbench_job_claims_total{outcome=\"job\"} 0");
    CHECK_LINE(t, "hvbench_job_claims_total{outcome=\"empty\"} 0");
    CHECK_LINE(t, "hvbench_job_claims_total{outcome=\"with_result\"} 0");
    CHECK_LINE(t, "hvbench_long_polls_waiting 0");
    CHECK_LINE(t, "hvbench_plan_cache_reads_total{outcome=\"hit\"} 0");
    CHECK_LINE(t, "hvbench_plan_cache_reads_total{outcome=\"miss\"} 0");
    CHECK_LINE(t, "hvbench_results_stored_total 0");
    CHECK_LINE(t, "# TYPE hvbench_batches_total counter");
    CHECK_LINE(t, "hvbench_batches_total{kind=\"claim\"} 0");
    CHECK_LINE(t, "hvbench_batched_requests_total{kind=\"result\"} 0");
    CHECK_LINE(t, "hvbench_samples_ingested_total 0");
    CHECK_LINE(t, "hvbench_db_reconnects_total 0");
    CHECK_LINE(t, "hvbench_db_txn_retries_total 0");
    CHECK_LINE(t, "hvbench_db_commit_unknown_total 0");
    CHECK_LINE(t, "hvbench_db_listen_reconnects_total 0");
    /* Nothing answered yet: no request series. */
    CHECK(strstr(t, "hvbench_http_requests_total{") == NULL);
    CHECK(strstr(t, "hvbench_http_request_duration_seconds_bucket{") == NULL);
    free(t);

    /* Route 0 of the table, its label "METHOD PATTERN". */
    const struct hv_route *r0 = hv_route_at(0);
    CHECK(hv_route_index(r0) == 0);
    CHECK(hv_route_count() > 1 && hv_route_count() <= HV_METRICS_MAX_ROUTES);
    char route[128], line[256];
    snprintf(route, sizeof route, "route=\"%s %s\"", r0->method, r0->pattern);

    hv_metrics_request(0, 200, 0.001);  /* on the first bound: in it */
    hv_metrics_request(0, 204, 0.0015); /* in the second */
    hv_metrics_request(0, 404, 100);    /* past the last bound: +Inf only */
    hv_metrics_request(HV_METRICS_ROUTE_WEB, 200, 0);
    hv_metrics_request(HV_METRICS_ROUTE_NONE, 404, 0.2);
    hv_metrics_request(HV_METRICS_ROUTE_NONE, 405, 0.3);
    hv_metrics_request(HV_METRICS_MAX_ROUTES, 500, 0.3); /* not a route: counted as none */
    hv_metrics_claim(true);
    hv_metrics_claim(false);
    hv_metrics_claim(false);
    hv_metrics_claim_with_result();
    hv_metrics_result_stored(3);
    hv_metrics_result_stored(0);
    hv_metrics_db_reconnect();
    hv_metrics_db_txn_retry();
    hv_metrics_db_txn_retry();
    hv_metrics_db_commit_unknown();
    hv_metrics_listen_reconnect();
    hv_metrics_plan_cache(true);
    hv_metrics_plan_cache(true);
    hv_metrics_plan_cache(false);
    hv_metrics_batch(1, 5);
    hv_metrics_batch(1, 1);
    hv_metrics_batch(2, 3);
    hv_metrics_batch(7, 9); /* not a kind: not counted */

    t = hv_metrics_render(NULL);
    CHECK(t != NULL);
    if (t == NULL)
        return check_summary("test_metrics_registry");
    snprintf(line, sizeof line, "hvbench_http_requests_total{%s,status=\"2xx\"} 2", route);
    CHECK_LINE(t, line);
    snprintf(line, sizeof line, "hvbench_http_requests_total{%s,status=\"4xx\"} 1", route);
    CHECK_LINE(t, line);
    CHECK_LINE(t, "hvbench_http_requests_total{route=\"(web page)\",status=\"2xx\"} 1");
    CHECK_LINE(t, "hvbench_http_requests_total{route=\"(no route)\",status=\"4xx\"} 2");
    CHECK_LINE(t, "hvbench_http_requests_total{route=\"(no route)\",status=\"5xx\"} 1");
    CHECK_LINE(t, "hvbench_plan_cache_reads_total{outcome=\"hit\"} 2");
    CHECK_LINE(t, "hvbench_plan_cache_reads_total{outcome=\"miss\"} 1");
    CHECK_LINE(t, "hvbench_batches_total{kind=\"claim\"} 2");
    CHECK_LINE(t, "hvbench_batched_requests_total{kind=\"claim\"} 6");
    CHECK_LINE(t, "hvbench_batches_total{kind=\"result\"} 1");
    CHECK_LINE(t, "hvbench_batched_requests_total{kind=\"result\"} 3");
    /* Cumulative buckets: 1 at 0.001, 2 from 0.005 to 60, 3 at +Inf. */
    static const struct {
        const char *le;
        int count;
    } want[] = {{"0.001", 1}, {"0.005", 2}, {"0.01", 2}, {"1", 2},
                {"10", 2},    {"60", 2},    {"+Inf", 3}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        snprintf(line, sizeof line, "hvbench_http_request_duration_seconds_bucket{%s,le=\"%s\"} %d",
                 route, want[i].le, want[i].count);
        CHECK_LINE(t, line);
    }
    snprintf(line, sizeof line, "hvbench_http_request_duration_seconds_sum{%s} 100.002500", route);
    CHECK_LINE(t, line);
    snprintf(line, sizeof line, "hvbench_http_request_duration_seconds_count{%s} 3", route);
    CHECK_LINE(t, line);
    CHECK_LINE(t,
               "hvbench_http_request_duration_seconds_bucket{route=\"(web page)\",le=\"0.001\"} 1");
    CHECK_LINE(t,
               "hvbench_http_request_duration_seconds_bucket{route=\"(no route)\",le=\"0.25\"} 1");
    CHECK_LINE(t,
               "hvbench_http_request_duration_seconds_bucket{route=\"(no route)\",le=\"0.5\"} 3");
    CHECK_LINE(t, "hvbench_http_request_duration_seconds_count{route=\"(no route)\"} 3");
    CHECK_LINE(t, "# TYPE hvbench_http_request_duration_seconds histogram");
    /* A route that answered nothing has no series. */
    snprintf(line, sizeof line, "route=\"%s %s\"", hv_route_at(1)->method, hv_route_at(1)->pattern);
    CHECK_MSG(strstr(t, line) == NULL, "%s has series", line);
    CHECK_LINE(t, "hvbench_job_claims_total{outcome=\"job\"} 1");
    CHECK_LINE(t, "hvbench_job_claims_total{outcome=\"empty\"} 2");
    CHECK_LINE(t, "hvbench_job_claims_total{outcome=\"with_result\"} 1");
    CHECK_LINE(t, "hvbench_results_stored_total 2");
    CHECK_LINE(t, "hvbench_samples_ingested_total 3");
    CHECK_LINE(t, "hvbench_db_reconnects_total 1");
    CHECK_LINE(t, "hvbench_db_txn_retries_total 2");
    CHECK_LINE(t, "hvbench_db_commit_unknown_total 1");
    CHECK_LINE(t, "hvbench_db_listen_reconnects_total 1");
    CHECK_LINE(t, "hvbench_webhook_deliveries_total{outcome=\"delivered\"} 0");
    CHECK_MSG(strstr(t, "hvbench_jobs{") == NULL, "no database: no job gauges");
    free(t);
    hv_metrics_webhook(HV_WEBHOOK_RETRY);
    hv_metrics_webhook(HV_WEBHOOK_DELIVERED);
    struct hv_metrics_db db = {
        .jobs_queued = 7, .jobs_running = 2, .workers_live = 3, .webhooks_pending = 1};
    t = hv_metrics_render(&db);
    CHECK(t != NULL);
    if (t == NULL)
        return check_summary("test_metrics_registry");
    CHECK_LINE(t, "hvbench_webhook_deliveries_total{outcome=\"delivered\"} 1");
    CHECK_LINE(t, "hvbench_webhook_deliveries_total{outcome=\"retry\"} 1");
    CHECK_LINE(t, "hvbench_webhook_deliveries_total{outcome=\"gave_up\"} 0");
    CHECK_LINE(t, "hvbench_jobs{state=\"queued\"} 7");
    CHECK_LINE(t, "hvbench_jobs{state=\"running\"} 2");
    CHECK_LINE(t, "hvbench_workers_live 3");
    CHECK_LINE(t, "hvbench_webhook_deliveries_pending 1");
    /* Every line, the last one ended too: a HELP or TYPE comment, or
     * name{labels} value. */
    CHECK(t[0] != '\0' && t[strlen(t) - 1] == '\n');
    size_t lines = 0;
    for (char *s = t, *nl; (nl = strchr(s, '\n')) != NULL; s = nl + 1, lines++) {
        *nl = '\0';
        const char *sp = strrchr(s, ' ');
        bool ok = strncmp(s, "# HELP hvbench_", 15) == 0 ||
                  strncmp(s, "# TYPE hvbench_", 15) == 0 ||
                  (strncmp(s, "hvbench_", 8) == 0 && sp != NULL && sp[1] != '\0' &&
                   strspn(sp + 1, "0123456789.") == strlen(sp + 1));
        CHECK_MSG(ok, "line %zu: %s", lines + 1, s);
    }
    CHECK(lines > 50);
    free(t);
    return check_summary("test_metrics_registry");
}
