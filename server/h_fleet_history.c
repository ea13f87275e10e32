/* h_fleet_history.c — a metric's history across a fleet: GET
 * /api/v1/history?selector=&metric=&from=&to=, the host targets whose
 * labels hold the selector, each host's series cut into time buckets on
 * the server (one statement, db_history.h), the fleet's median and
 * quartiles per bucket, each host's ratio to that median and the change
 * points its own history reads found. */
#include "compare.h"
#include "db_history.h"
#include "handlers.h"
#include "query.h"
#include "result.h"
#include "selector.h"
#include "timeutil.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

/** The most hosts one answer draws: 500 hosts × 200 points is some 4 MB. */
#define FLEET_HISTORY_MAX_HOSTS 1000
/** The most points a host's series has in any window. */
#define FLEET_HISTORY_POINTS 200
/** The window when from is not given: the 30 days before to. */
#define FLEET_HISTORY_DEFAULT_S (30 * 86400.0)
/** The longest window: ten years. */
#define FLEET_HISTORY_MAX_S (3660 * 86400.0)

/* Bucket lengths a reader can name, shortest first: the shortest at
 * least a window's FLEET_HISTORY_POINTS-th part is the window's. */
static const long buckets_s[] = {60,    300,    900,    1800,    3600,    3 * 3600, 6 * 3600, 43200,
                                 86400, 172800, 604800, 1209600, 2592000, 7776000,  31536000};

/* The bucket of a window of span seconds. */
static long bucket_of(double span)
{
    size_t n = sizeof buckets_s / sizeof *buckets_s;
    for (size_t i = 0; i < n; i++) {
        if (span / (double)buckets_s[i] <= FLEET_HISTORY_POINTS)
            return buckets_s[i];
    }
    return buckets_s[n - 1];
}

void hv_h_fleet_history(struct hv_request *req)
{
    json_t *errors = json_array();
    const char *selector, *from_s, *to_s;
    struct hv_fleet_history_query q = {0};
    hv_query_str(req, "selector", 600, &selector, errors);
    hv_query_str(req, "metric", 128, &q.metric, errors);
    hv_query_str(req, "key", 64, &q.key, errors);
    hv_query_time(req, "from", &from_s, errors);
    hv_query_time(req, "to", &to_s, errors);
    bool has_margin;
    hv_query_number(req, "margin_pct", 0, 100, HV_MARGIN_PCT_DEFAULT, &q.margin_pct, &has_margin,
                    errors);
    char why[200];
    json_t *sel = NULL;
    if (selector == NULL && hv_req_query(req, "selector") == NULL)
        hv_errors_add(errors, "selector", "is required: a label selector such as pool=batch");
    else if (selector != NULL && (sel = hv_selector_parse(selector, why, sizeof why)) == NULL)
        hv_errors_add(errors, "selector",
                      "must be a label selector such as pool=batch,cpu=epyc: %s", why);
    if (q.metric == NULL && hv_req_query(req, "metric") == NULL)
        hv_errors_add(errors, "metric", "is required: the metric whose history to show");
    else if (q.metric != NULL && !hv_metric_name_check(q.metric, why, sizeof why))
        hv_errors_add(errors, "metric", "must be a metric name: %s", why);
    q.to = to_s != NULL ? hv_iso8601_seconds(to_s) : (double)time(NULL);
    q.from = from_s != NULL ? hv_iso8601_seconds(from_s) : q.to - FLEET_HISTORY_DEFAULT_S;
    if (!(q.from < q.to))
        hv_errors_add(errors, "to", "must be after from");
    else if (q.to - q.from > FLEET_HISTORY_MAX_S)
        hv_errors_add(errors, "from", "must be at most 3660 days before to");
    long hosts = 0;
    if (sel != NULL && json_array_size(errors) == 0) {
        enum hv_db_status s = hv_db_fleet_hosts_count(sel, &hosts);
        if (s != HV_DB_OK) {
            json_decref(errors);
            json_decref(sel);
            hv_reply_db_failure(req, s);
            return;
        }
        if (hosts > FLEET_HISTORY_MAX_HOSTS)
            hv_errors_add(errors, "selector",
                          "matches %ld hosts; one answer shows at most %d: narrow the selector",
                          hosts, FLEET_HISTORY_MAX_HOSTS);
    }
    if (hv_query_failed(req, errors)) {
        json_decref(sel);
        return;
    }
    q.selector = sel;
    q.bucket_s = bucket_of(q.to - q.from);
    struct hv_db_text t;
    enum hv_db_status s = hv_db_fleet_history(&q, &t);
    json_decref(sel);
    if (s != HV_DB_OK) {
        hv_reply_db_failure(req, s);
        return;
    }
    struct hv_kept_text k = {"", t.text, t.len, "", hv_db_text_free, t.res};
    hv_reply_kept(req, 200, &k);
}
