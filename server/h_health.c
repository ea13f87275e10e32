/* h_health.c — liveness and readiness. */
#include "config.h"
#include "db_migrate.h"
#include "handlers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Liveness is asked for often (load balancers, orchestrators, every few
 * seconds per checker): its answer is fixed, its response built once. */
void hv_h_healthz(struct hv_request *req)
{
    static struct hv_fixed_answer ok = {200, "application/json", "{\"status\":\"ok\"}", NULL};
    hv_reply_fixed(req, &ok);
}

void hv_h_readyz(struct hv_request *req)
{
    int v = hv_schema_version();
    if (v < 0) {
        hv_reply_problem(req, HV_E_NOT_READY, "the database cannot be reached", NULL);
        return;
    }
    if (v < hv_cfg.expected_schema) {
        char detail[128];
        snprintf(detail, sizeof detail, "schema version %d, this server needs %d", v,
                 hv_cfg.expected_schema);
        hv_reply_problem(req, HV_E_NOT_READY, detail, NULL);
        return;
    }
    hv_reply_json(req, 200, json_pack("{s:s,s:i}", "status", "ready", "schema_version", v));
}
