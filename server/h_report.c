/* h_report.c — the report of a plan: per metric mean, sd, n, 95 % CI. */
#include "db_plans.h"
#include "handlers.h"
#include "stats.h"

#include <math.h>

/* Sets a number, or null where it is undefined. */
static void set_num(json_t *o, const char *key, double v)
{
    json_object_set_new(o, key, isfinite(v) ? json_real(v) : json_null());
}

void hv_h_plan_report(struct hv_request *req)
{
    json_t *summary = NULL, *rows = NULL;
    enum hv_db_status s = hv_db_plan_get(req->ids[0], false, &summary);
    if (s == HV_DB_OK)
        s = hv_db_plan_metrics(req->ids[0], &rows);
    if (s != HV_DB_OK) {
        json_decref(summary);
        if (s == HV_DB_NONE)
            hv_reply_problem(req, HV_E_NOT_FOUND, "no plan with this id", NULL);
        else
            hv_reply_db_failure(req, s);
        return;
    }
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        double scale = json_number_value(json_object_get(row, "scale"));
        double mean = json_number_value(json_object_get(row, "mean_s")) * scale;
        double sd = json_number_value(json_object_get(row, "sd_s")) * scale;
        json_object_del(row, "scale");
        json_object_del(row, "mean_s");
        json_object_del(row, "sd_s");
        set_num(row, "mean", mean);
        set_num(row, "sd", sd);
        struct hv_summary sum;
        hv_summarize_moments((size_t)json_integer_value(json_object_get(row, "n")), mean, sd, &sum);
        set_num(row, "ci95_low", sum.has_ci ? sum.ci_low : NAN);
        set_num(row, "ci95_high", sum.has_ci ? sum.ci_high : NAN);
        set_num(row, "ci95_half_pct", sum.has_ci ? sum.half_pct : NAN);
    }
    json_t *report =
        json_pack("{s:O,s:O,s:O,s:O,s:o}", "plan_id", json_object_get(summary, "id"), "name",
                  json_object_get(summary, "name"), "status", json_object_get(summary, "status"),
                  "jobs", json_object_get(summary, "jobs"), "rows", rows);
    json_decref(summary);
    hv_reply_json(req, 200, report);
}
