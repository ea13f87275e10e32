/* h_read.c — reading jobs, results and targets. */
#include "batch.h"
#include "config.h"
#include "db_plans.h"
#include "db_targets.h"
#include "handlers.h"
#include "selector.h"
#include "query.h"
#include "result.h"

#include <stdlib.h>
#include <string.h>

static const char *const target_kinds[] = {"host", "guest", NULL};

void hv_h_job_get(struct hv_request *req)
{
    json_t *job = NULL;
    enum hv_db_status s = hv_db_job_get(req->ids[0], &job);
    hv_reply_one(req, s, job, "no job with this id");
}

/* Answers a read whose JSON the database built (t, of status s) as that
 * text between prefix and suffix, unparsed: a result of 200,000 samples
 * would cost seconds of a thread to parse and print again. HV_DB_NONE is
 * an unknown job. */
static void reply_db_text(struct hv_request *req, enum hv_db_status s, struct hv_db_text *t,
                          const char *prefix, const char *suffix)
{
    if (s != HV_DB_OK) {
        hv_db_text_free(t->res);
        if (s == HV_DB_NONE)
            hv_reply_problem(req, HV_E_NOT_FOUND, "no job with this id", NULL);
        else
            hv_reply_db_failure(req, s);
        return;
    }
    struct hv_kept_text k = {prefix, t->text, t->len, suffix, hv_db_text_free, t->res};
    hv_reply_kept(req, 200, &k);
}

/* A read of a result with its samples, done by the read lane (batch.h). */
struct results_read {
    int64_t id;
    bool samples, raw;
    enum hv_db_status status;
    struct hv_db_text text;
};

static void results_read_free(void *item)
{
    struct results_read *r = item;
    hv_db_text_free(r->text.res);
    free(r);
}

/* The lane's work: the statement, its text kept for the handler. */
static void results_read_run(struct hv_request *req)
{
    struct results_read *r = req->batch_item;
    r->status = hv_db_job_results(r->id, r->samples, r->raw, &r->text);
}

void hv_h_job_results(struct hv_request *req)
{
    struct results_read *done = req->batch_item;
    if (req->batch_outcome != 0 && done != NULL) {
        struct hv_db_text t = done->text;
        done->text.res = NULL; /* the answer owns it now */
        reply_db_text(req, done->status, &t, "{\"items\":", "}");
        return;
    }
    json_t *errors = json_array();
    bool samples, raw;
    hv_query_bool(req, "samples", true, &samples, errors);
    hv_query_bool(req, "raw", false, &raw, errors);
    if (hv_query_failed(req, errors))
        return;
    /* With its samples a result may be 200,000 of them: read on the read
     * lane, off this thread, which serves other connections meanwhile. */
    struct results_read *r = samples && hv_batch_on(HV_BATCH_READ) ? calloc(1, sizeof *r) : NULL;
    if (r != NULL) {
        *r = (struct results_read){.id = req->ids[0], .samples = samples, .raw = raw};
        req->batch_item = r;
        req->batch_item_free = results_read_free;
        req->batch_run = results_read_run;
        req->batch = HV_BATCH_READ;
        req->park = true;
        return;
    }
    struct hv_db_text t;
    enum hv_db_status s = hv_db_job_results(req->ids[0], samples, raw, &t);
    reply_db_text(req, s, &t, "{\"items\":", "}");
}

/* Bounds of GET /api/v1/jobs/{id}/samples?points=: past the most samples a
 * result may hold every series is answered whole. */
#define SAMPLES_POINTS_MIN     10
#define SAMPLES_POINTS_DEFAULT 1000
#define SAMPLES_T_LIMIT        1e12

void hv_h_job_samples(struct hv_request *req)
{
    json_t *errors = json_array();
    long attempt, points;
    double from, to;
    bool has_from, has_to;
    hv_query_int(req, "attempt", 1, 1000000, 0, &attempt, errors);
    hv_query_int(req, "points", SAMPLES_POINTS_MIN, HV_RESULT_MAX_SAMPLES, SAMPLES_POINTS_DEFAULT,
                 &points, errors);
    hv_query_number(req, "from", -SAMPLES_T_LIMIT, SAMPLES_T_LIMIT, 0, &from, &has_from, errors);
    hv_query_number(req, "to", -SAMPLES_T_LIMIT, SAMPLES_T_LIMIT, 0, &to, &has_to, errors);
    if (has_from && has_to && to < from)
        hv_errors_add(errors, "to", "must not be before from");
    if (hv_query_failed(req, errors))
        return;
    struct hv_db_text t;
    enum hv_db_status s = hv_db_job_samples(req->ids[0], (int)attempt, (int)points,
                                            has_from ? &from : NULL, has_to ? &to : NULL, &t);
    reply_db_text(req, s, &t, "", "");
}

void hv_h_targets_list(struct hv_request *req)
{
    json_t *errors = json_array();
    const char *kind, *label, *host;
    hv_query_enum(req, "kind", target_kinds, &kind, errors);
    hv_query_str(req, "label", 600, &label, errors);
    hv_query_str(req, "host", 128, &host, errors);
    char why[200];
    json_t *sel = label != NULL ? hv_selector_parse(label, why, sizeof why) : NULL;
    if (label != NULL && sel == NULL)
        hv_errors_add(errors, "label", "must be a label selector such as pool=batch,cpu=epyc: %s",
                      why);
    if (hv_query_failed(req, errors)) {
        json_decref(sel);
        return;
    }
    json_t *items = NULL;
    enum hv_db_status s = hv_db_target_list(kind, sel, host, hv_cfg.lease_seconds,
                                            hv_cfg.stale_after_seconds, &items);
    json_decref(sel);
    hv_reply_items(req, s, items, NULL);
}

void hv_h_target_get(struct hv_request *req)
{
    json_t *t = NULL;
    enum hv_db_status s = hv_db_target_get(req->ids[0], hv_cfg.lease_seconds, &t);
    hv_reply_one(req, s, t, "no target with this id");
}
