/* h_report.c — GET /api/v1/plans/{id}/report: the plan's report as JSON,
 * or with ?format=md or csv as Markdown or CSV (report.h,
 * lib/report_render.h). */
#include "handlers.h"
#include "query.h"
#include "report.h"
#include "report_render.h"

#include <string.h>

static const char *const formats[] = {"json", "md", "csv", NULL};

void hv_h_plan_report(struct hv_request *req)
{
    json_t *errors = json_array();
    const char *format = NULL;
    hv_query_enum(req, "format", formats, &format, errors);
    if (hv_query_failed(req, errors))
        return;
    struct hv_rdata d;
    hv_rdata_init(&d);
    enum hv_db_status s = hv_report_load(req->ids[0], &d);
    if (s != HV_DB_OK) {
        hv_rdata_free(&d);
        if (s == HV_DB_NONE)
            hv_reply_problem(req, HV_E_NOT_FOUND, "no plan with this id", NULL);
        else
            hv_reply_db_failure(req, s);
        return;
    }
    json_t *report = hv_report_build(&d);
    hv_rdata_free(&d);
    if (report == NULL) {
        hv_reply_problem(req, HV_E_INTERNAL, "out of memory while building the report", NULL);
        return;
    }
    if (format == NULL || strcmp(format, "json") == 0) {
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
