/* routes.c — see routes.h. */
#include "routes.h"

#include "config.h"
#include "handlers.h"
#include "metrics.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const struct hv_route routes[] = {
    {"GET", "/healthz", hv_h_healthz, HV_ACCESS_OPEN},
    {"GET", "/readyz", hv_h_readyz, HV_ACCESS_OPEN},
    {"GET", "/api/v1/openapi.json", hv_h_openapi, HV_ACCESS_OPEN},
    {"GET", "/api/v1/catalog", hv_h_catalog, HV_ACCESS_READ},
    {"GET", "/api/v1/plans", hv_h_plans_list, HV_ACCESS_READ},
    {"POST", "/api/v1/plans", hv_h_plans_create, HV_ACCESS_SUBMIT},
    {"GET", "/api/v1/plans/{id}", hv_h_plan_get, HV_ACCESS_READ},
    {"POST", "/api/v1/plans/{id}/cancel", hv_h_plan_cancel, HV_ACCESS_SUBMIT},
    {"POST", "/api/v1/plans/{id}/retry", hv_h_plan_retry, HV_ACCESS_SUBMIT},
    {"GET", "/api/v1/plans/{id}/export", hv_h_plan_export, HV_ACCESS_READ},
    {"POST", "/api/v1/plans/import", hv_h_plan_import, HV_ACCESS_SUBMIT},
    {"DELETE", "/api/v1/plans/{id}", hv_h_plan_delete, HV_ACCESS_ADMIN},
    {"POST", "/api/v1/imports", hv_h_import, HV_ACCESS_SUBMIT},
    {"GET", "/api/v1/plans/{id}/jobs", hv_h_plan_jobs, HV_ACCESS_READ},
    {"GET", "/api/v1/plans/{id}/report", hv_h_plan_report, HV_ACCESS_READ},
    {"GET", "/api/v1/plans/{id}/steps", hv_h_plan_steps, HV_ACCESS_READ},
    {"GET", "/api/v1/plans/{id}/recommendations/apply", hv_h_plan_advice, HV_ACCESS_READ},
    {"GET", "/api/v1/recommendations", hv_h_recommendations, HV_ACCESS_READ},
    {"GET", "/api/v1/recommendations/{id}", hv_h_recommendation_get, HV_ACCESS_READ},
    {"POST", "/api/v1/recommendations/{id}/adopt", hv_h_recommendation_adopt, HV_ACCESS_SUBMIT},
    {"GET", "/api/v1/jobs/{id}", hv_h_job_get, HV_ACCESS_READ},
    {"GET", "/api/v1/jobs/{id}/results", hv_h_job_results, HV_ACCESS_READ},
    {"GET", "/api/v1/jobs/{id}/samples", hv_h_job_samples, HV_ACCESS_READ},
    {"GET", "/api/v1/targets", hv_h_targets_list, HV_ACCESS_READ},
    {"GET", "/api/v1/targets/{id}", hv_h_target_get, HV_ACCESS_READ},
    {"GET", "/api/v1/targets/{id}/changes", hv_h_target_changes, HV_ACCESS_READ},
    {"GET", "/api/v1/targets/{id}/history", hv_h_target_history, HV_ACCESS_READ},
    {"GET", "/api/v1/history", hv_h_fleet_history, HV_ACCESS_READ},
    {"GET", "/api/v1/targets/{id}/facts", hv_h_target_facts, HV_ACCESS_READ},
    {"POST", "/api/v1/change-points/{id}/ack", hv_h_change_point_ack, HV_ACCESS_SUBMIT},
    {"GET", "/api/v1/compare", hv_h_compare, HV_ACCESS_READ},
    {"GET", "/metrics", hv_h_metrics, HV_ACCESS_READ},
    {"POST", "/api/v1/tokens", hv_h_tokens_create, HV_ACCESS_ADMIN},
    {"GET", "/api/v1/tokens", hv_h_tokens_list, HV_ACCESS_ADMIN},
    {"POST", "/api/v1/tokens/{id}/revoke", hv_h_token_revoke, HV_ACCESS_ADMIN},
    {"POST", "/api/v1/targets/{id}/free", hv_h_target_free, HV_ACCESS_ADMIN},
    {"PUT", "/api/v1/targets/{id}/labels", hv_h_target_labels, HV_ACCESS_ADMIN},
    {"POST", "/api/v1/purge", hv_h_purge, HV_ACCESS_ADMIN},
    {"POST", "/api/v1/webhooks", hv_h_webhooks_create, HV_ACCESS_ADMIN},
    {"GET", "/api/v1/webhooks", hv_h_webhooks_list, HV_ACCESS_ADMIN},
    {"GET", "/api/v1/webhooks/{id}", hv_h_webhook_get, HV_ACCESS_ADMIN},
    {"DELETE", "/api/v1/webhooks/{id}", hv_h_webhook_delete, HV_ACCESS_ADMIN},
    {"GET", "/api/v1/webhooks/{id}/deliveries", hv_h_webhook_deliveries, HV_ACCESS_ADMIN},
    {"POST", "/api/v1/webhooks/{id}/ping", hv_h_webhook_ping, HV_ACCESS_ADMIN},
    {"POST", "/api/v1/workers/register", hv_h_worker_register, HV_ACCESS_WORKER},
    {"POST", "/api/v1/workers/deregister", hv_h_worker_deregister, HV_ACCESS_JOB},
    {"POST", "/api/v1/workers/restored", hv_h_worker_restored, HV_ACCESS_JOB},
    {"POST", "/api/v1/workers/settings", hv_h_worker_settings, HV_ACCESS_JOB},
    {"POST", "/api/v1/jobs/claim", hv_h_job_claim, HV_ACCESS_JOB},
    {"POST", "/api/v1/jobs/{id}/ready", hv_h_job_ready, HV_ACCESS_JOB},
    {"POST", "/api/v1/jobs/{id}/heartbeat", hv_h_job_heartbeat, HV_ACCESS_JOB},
    {"POST", "/api/v1/jobs/{id}/release", hv_h_job_release, HV_ACCESS_JOB},
    {"POST", "/api/v1/jobs/{id}/result", hv_h_job_result, HV_ACCESS_JOB},
    {"POST", "/api/v1/jobs/{id}/telemetry", hv_h_job_telemetry, HV_ACCESS_JOB},
    {"GET", "/api/v1/workers/telemetry", hv_h_telemetry_jobs, HV_ACCESS_JOB},
    {"GET", "/api/v1/workers/guest", hv_h_worker_guest, HV_ACCESS_JOB},
    {"POST", "/api/v1/steps/{id}/heartbeat", hv_h_step_heartbeat, HV_ACCESS_JOB},
    {"POST", "/api/v1/steps/{id}/result", hv_h_step_result, HV_ACCESS_JOB},
};

#define N_ROUTES (sizeof routes / sizeof routes[0])

_Static_assert(N_ROUTES <= HV_METRICS_MAX_ROUTES, "raise HV_METRICS_MAX_ROUTES in metrics.h");

size_t hv_route_count(void)
{
    return N_ROUTES;
}

const struct hv_route *hv_route_at(size_t i)
{
    return &routes[i];
}

int hv_route_index(const struct hv_route *route)
{
    return (int)(route - routes);
}

/* Matches path against pattern segment by segment; {id} takes a positive
 * 63-bit integer written in plain decimal. */
static bool match(const char *pattern, const char *path, int64_t *ids)
{
    size_t n_ids = 0;
    while (*pattern != '\0' || *path != '\0') {
        if (*pattern != '/' || *path != '/')
            return false;
        pattern++;
        path++;
        size_t plen = strcspn(pattern, "/");
        size_t slen = strcspn(path, "/");
        if (plen == 4 && strncmp(pattern, "{id}", 4) == 0) {
            if (slen == 0 || slen > 18 || path[0] == '0' || n_ids == HV_MAX_PATH_IDS)
                return false;
            int64_t v = 0;
            for (size_t i = 0; i < slen; i++) {
                if (path[i] < '0' || path[i] > '9')
                    return false;
                v = v * 10 + (path[i] - '0');
            }
            ids[n_ids++] = v;
        } else if (plen != slen || strncmp(pattern, path, plen) != 0) {
            return false;
        }
        pattern += plen;
        path += slen;
    }
    return true;
}

const struct hv_route *hv_route_find(const char *method, const char *path, struct hv_request *req,
                                     const char **allow)
{
    bool path_known = false;
    bool get = false, post = false;
    for (size_t i = 0; i < N_ROUTES; i++) {
        int64_t ids[HV_MAX_PATH_IDS] = {0};
        if (!match(routes[i].pattern, path, ids))
            continue;
        path_known = true;
        get |= strcmp(routes[i].method, "GET") == 0;
        post |= strcmp(routes[i].method, "POST") == 0;
        if (strcmp(routes[i].method, method) == 0 ||
            (strcmp(method, "HEAD") == 0 && strcmp(routes[i].method, "GET") == 0)) {
            memcpy(req->ids, ids, sizeof ids);
            return &routes[i];
        }
    }
    *allow = !path_known ? NULL : get && post ? "GET, HEAD, POST" : get ? "GET, HEAD" : "POST";
    return NULL;
}

/* Routes whose bodies are capped by --max-result-body instead of
 * --max-body, as given (smaller or larger): result uploads carry up to
 * HV_RESULT_MAX_SAMPLES samples and the raw tool output, host telemetry
 * as many samples. */
static const hv_handler large_body_handlers[] = {hv_h_job_result, hv_h_job_telemetry,
                                                 hv_h_plan_import};

static bool takes_large_body(hv_handler h)
{
    for (size_t i = 0; i < sizeof large_body_handlers / sizeof large_body_handlers[0]; i++)
        if (large_body_handlers[i] == h)
            return true;
    return false;
}

size_t hv_route_body_limit(const char *method, const char *path)
{
    for (size_t i = 0; i < N_ROUTES; i++) {
        int64_t ids[HV_MAX_PATH_IDS];
        if (takes_large_body(routes[i].handler) && strcmp(routes[i].method, method) == 0 &&
            match(routes[i].pattern, path, ids))
            return hv_cfg.max_result_body;
    }
    return hv_cfg.max_body;
}

bool hv_access_allows(enum hv_access access, enum hv_role role, bool worker_credential,
                      bool read_needs_token)
{
    switch (access) {
    case HV_ACCESS_OPEN:
        return true;
    case HV_ACCESS_READ:
        return !read_needs_token || role != HV_ROLE_NONE;
    case HV_ACCESS_SUBMIT:
        return role == HV_ROLE_SUBMIT || role == HV_ROLE_ADMIN;
    case HV_ACCESS_WORKER:
        return role == HV_ROLE_WORKER || role == HV_ROLE_ADMIN;
    case HV_ACCESS_JOB:
        return worker_credential;
    case HV_ACCESS_ADMIN:
        return role == HV_ROLE_ADMIN;
    }
    return false;
}

bool hv_route_batched(const struct hv_route *route)
{
    return route->handler == hv_h_job_claim || route->handler == hv_h_job_result;
}
