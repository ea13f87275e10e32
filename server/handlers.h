/* handlers.h — the endpoint handlers, one file each group (h_*.c). */
#ifndef HV_SERVER_HANDLERS_H
#define HV_SERVER_HANDLERS_H

#include "request.h"

/* h_health.c */
void hv_h_healthz(struct hv_request *req);
void hv_h_readyz(struct hv_request *req);
/* h_plans.c */
void hv_h_plans_create(struct hv_request *req);
void hv_h_plans_list(struct hv_request *req);
void hv_h_plan_get(struct hv_request *req);
void hv_h_plan_cancel(struct hv_request *req);
void hv_h_plan_jobs(struct hv_request *req);
/* h_read.c */
void hv_h_job_get(struct hv_request *req);
void hv_h_job_results(struct hv_request *req);
void hv_h_job_samples(struct hv_request *req);
void hv_h_targets_list(struct hv_request *req);
void hv_h_target_get(struct hv_request *req);
/* h_tokens.c */
void hv_h_plan_delete(struct hv_request *req);
void hv_h_plan_retry(struct hv_request *req);
void hv_h_purge(struct hv_request *req);
void hv_h_plan_export(struct hv_request *req);
void hv_h_plan_import(struct hv_request *req);
void hv_h_webhooks_create(struct hv_request *req);
void hv_h_webhooks_list(struct hv_request *req);
void hv_h_webhook_get(struct hv_request *req);
void hv_h_webhook_delete(struct hv_request *req);
void hv_h_webhook_deliveries(struct hv_request *req);
void hv_h_webhook_ping(struct hv_request *req);
void hv_h_tokens_create(struct hv_request *req);
void hv_h_tokens_list(struct hv_request *req);
void hv_h_token_revoke(struct hv_request *req);
/* h_catalog.c */
void hv_h_catalog(struct hv_request *req);
/* h_openapi.c */
void hv_h_openapi(struct hv_request *req);
/* h_import.c */
void hv_h_import(struct hv_request *req);
/* h_report.c */
void hv_h_plan_report(struct hv_request *req);
void hv_h_recommendations(struct hv_request *req);
void hv_h_plan_advice(struct hv_request *req);
/* h_recommendations.c */
void hv_h_recommendations_list(struct hv_request *req);
void hv_h_recommendation_get(struct hv_request *req);
void hv_h_recommendation_adopt(struct hv_request *req);
void hv_h_worker_settings(struct hv_request *req);
/* h_workers.c */
void hv_h_worker_register(struct hv_request *req);
void hv_h_worker_deregister(struct hv_request *req);
void hv_h_worker_guest(struct hv_request *req);
void hv_h_target_free(struct hv_request *req);
void hv_h_target_labels(struct hv_request *req);
/* h_steps.c */
void hv_h_step_heartbeat(struct hv_request *req);
void hv_h_step_result(struct hv_request *req);
void hv_h_plan_steps(struct hv_request *req);
void hv_h_target_changes(struct hv_request *req);
void hv_h_worker_restored(struct hv_request *req);
/* h_history.c */
void hv_h_target_history(struct hv_request *req);
void hv_h_target_facts(struct hv_request *req);
void hv_h_change_point_ack(struct hv_request *req);
void hv_h_fleet_history(struct hv_request *req);
/* h_compare.c */
void hv_h_compare(struct hv_request *req);
/* h_metrics.c */
void hv_h_metrics(struct hv_request *req);
/* h_jobs.c */
void hv_h_job_claim(struct hv_request *req);
void hv_h_job_ready(struct hv_request *req);
void hv_h_job_heartbeat(struct hv_request *req);
void hv_h_job_release(struct hv_request *req);
void hv_h_job_result(struct hv_request *req);
void hv_h_job_telemetry(struct hv_request *req);
void hv_h_telemetry_jobs(struct hv_request *req);

#endif
