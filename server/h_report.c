/* h_report.c — GET /api/v1/plans/{id}/report: the plan's report as JSON,
 * or with ?format=md or csv as Markdown or CSV (report.h,
 * lib/report_render.h); ?runs=all lists every run of a big plan's series.
 * GET /api/v1/plans/{id}/recommendations/apply?format=: its
 * recommendations as a tuned profile, Ansible playbook, Puppet manifest or
 * shell script (lib/advice_format.h). */
#include "advice_format.h"
#include "db_plans.h"
#include "handlers.h"
#include "query.h"
#include "report.h"
#include "report_hosts.h"
#include "report_render.h"

#include <string.h>

static const char *const formats[] = {"json", "md", "csv", NULL};
static const char *const listings[] = {"auto", "all", NULL};

void hv_h_plan_report(struct hv_request *req)
{
    json_t *errors = json_array();
    const char *format = NULL, *runs = NULL;
    hv_query_enum(req, "format", formats, &format, errors);
    hv_query_enum(req, "runs", listings, &runs, errors);
    if (hv_query_failed(req, errors))
        return;
    bool runs_all = runs != NULL && strcmp(runs, "all") == 0;
    bool json = format == NULL || strcmp(format, "json") == 0;
    /* A fleet plan's parent has no jobs of its own: its report is built
     * each time, with its children's per-host view. */
    bool fleet = false;
    enum hv_db_status fs = hv_report_hosts_parent(req->ids[0], &fleet);
    if (fs != HV_DB_OK) {
        hv_reply_db_failure(req, fs);
        return;
    }
    if (json && !runs_all && !fleet) {
        /* The default form: the answer as kept, sent without parsing it. */
        char *text = NULL;
        enum hv_db_status s = hv_report_answer(req->ids[0], &text);
        if (s == HV_DB_OK)
            hv_reply_text(req, 200, "application/json", text);
        else if (s == HV_DB_NONE)
            hv_reply_problem(req, HV_E_NOT_FOUND, "no plan with this id", NULL);
        else
            hv_reply_db_failure(req, s);
        return;
    }
    json_t *report = NULL;
    enum hv_db_status s = hv_report_get(req->ids[0], runs_all, &report);
    if (s == HV_DB_OK && fleet)
        s = hv_report_hosts_add(req->ids[0], report); /* a fleet plan's per-host view */
    if (s != HV_DB_OK) {
        json_decref(report);
        if (s == HV_DB_NONE)
            hv_reply_problem(req, HV_E_NOT_FOUND, "no plan with this id", NULL);
        else
            hv_reply_db_failure(req, s);
        return;
    }
    if (json) {
        hv_reply_json(req, 200, report);
        return;
    }
    bool md = strcmp(format, "md") == 0;
    char *text = md ? hv_report_md(report) : hv_report_csv(report);
    json_decref(report);
    if (text == NULL)
        hv_reply_problem(req, HV_E_INTERNAL, "out of memory while rendering the report", NULL);
    else
        hv_reply_text(req, 200, md ? "text/markdown; charset=utf-8" : "text/csv; charset=utf-8",
                      text);
}

/* The recommendations of one plan's report, each with the plan it comes
 * from, appended to items; plans that cannot be read are skipped. */
static void add_plan_advice(int64_t plan, json_t *items, json_t *plans)
{
    json_t *report = NULL;
    if (hv_report_get(plan, false, &report) != HV_DB_OK)
        return;
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(report, "recommendations"), i, r)
    {
        json_t *item = json_deep_copy(r);
        json_object_set_new(item, "plan_id", json_integer(plan));
        json_object_set(item, "plan", json_object_get(report, "name"));
        json_array_append_new(items, item);
    }
    json_array_append_new(
        plans, json_pack("{s:I,s:O,s:I}", "id", (json_int_t)plan, "name",
                         json_object_get(report, "name"), "recommendations",
                         (json_int_t)json_array_size(json_object_get(report, "recommendations"))));
    json_decref(report);
}

void hv_h_recommendations(struct hv_request *req)
{
    /* Without target: the recommendations kept (h_recommendations.c). */
    if (hv_req_query(req, "target") == NULL) {
        hv_h_recommendations_list(req);
        return;
    }
    json_t *errors = json_array();
    const char *target = NULL;
    long limit = 10;
    hv_query_str(req, "target", 128, &target, errors);
    hv_query_int(req, "plans", 1, 50, 10, &limit, errors);
    if (hv_query_failed(req, errors))
        return;
    json_t *ids = NULL;
    enum hv_db_status s = hv_db_plans_tuned_on(target, (int)limit, &ids);
    if (s == HV_DB_NONE) {
        hv_reply_problem(req, HV_E_NOT_FOUND, "no target with this name", NULL);
        return;
    }
    if (s != HV_DB_OK) {
        hv_reply_db_failure(req, s);
        return;
    }
    json_t *items = json_array(), *plans = json_array();
    size_t i;
    json_t *id;
    json_array_foreach(ids, i, id) add_plan_advice(json_integer_value(id), items, plans);
    json_decref(ids);
    hv_reply_json(req, 200,
                  json_pack("{s:s,s:o,s:o}", "target", target, "plans", plans, "items", items));
}

void hv_h_plan_advice(struct hv_request *req)
{
    json_t *errors = json_array();
    const char *format = NULL;
    hv_query_enum(req, "format", hv_advice_formats, &format, errors);
    if (format == NULL && json_array_size(errors) == 0)
        hv_errors_add(errors, "format", "is required: one of tuned, ansible, puppet, shell");
    if (hv_query_failed(req, errors))
        return;
    /* The plan's disk names the files of its disk settings. */
    json_t *plan = NULL, *report = NULL;
    enum hv_db_status s = hv_db_plan_get(req->ids[0], true, &plan);
    if (s == HV_DB_OK)
        s = hv_report_get(req->ids[0], false, &report);
    if (s != HV_DB_OK) {
        json_decref(plan);
        if (s == HV_DB_NONE)
            hv_reply_problem(req, HV_E_NOT_FOUND, "no plan with this id", NULL);
        else
            hv_reply_db_failure(req, s);
        return;
    }
    const json_t *tuning = json_object_get(json_object_get(plan, "plan"), "tuning");
    char *text =
        hv_advice_render(report, json_string_value(json_object_get(tuning, "disk")), format);
    json_decref(plan);
    json_decref(report);
    if (text == NULL)
        hv_reply_problem(req, HV_E_INTERNAL, "out of memory while rendering the advice", NULL);
    else
        hv_reply_text(req, 200, hv_advice_media_type(format), text);
}
