/* client.c — see client.h. */
#include "worker/client.h"

#include "httpc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bounds each request. Above any long-poll the server may add to claims,
 * below the shortest lease, so a hung server costs at most one lease. */
#define CLIENT_TIMEOUT_S 50

struct hv_client {
    struct hv_httpc *http;
    long last_status;
    char last_error[512];
};

struct hv_client *hv_client_new(const char *base_url, const char *token)
{
    struct hv_client *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->http = hv_httpc_new(base_url, token, CLIENT_TIMEOUT_S);
    if (c->http == NULL) {
        free(c);
        return NULL;
    }
    return c;
}

void hv_client_free(struct hv_client *c)
{
    if (c == NULL)
        return;
    hv_httpc_free(c->http);
    free(c);
}

const char *hv_client_last_error(const struct hv_client *c)
{
    return c->last_error;
}

long hv_client_last_status(const struct hv_client *c)
{
    return c->last_status;
}

/* How each answer is taken; the first row whose range holds the status
 * wins. No answer at all (status 0) is worth retrying, as is an
 * overloaded or failing server. */
static const struct {
    long lo, hi;
    enum hv_call call;
} classes[] = {
    {0, 0, HV_CALL_RETRY},     {200, 299, HV_CALL_OK},        {401, 401, HV_CALL_AUTH},
    {403, 403, HV_CALL_AUTH},  {404, 404, HV_CALL_NOT_FOUND}, {409, 409, HV_CALL_STALE},
    {408, 408, HV_CALL_RETRY}, {429, 429, HV_CALL_RETRY},     {400, 499, HV_CALL_REJECTED},
    {500, 599, HV_CALL_RETRY},
};

static enum hv_call classify(long status)
{
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
        if (status >= classes[i].lo && status <= classes[i].hi)
            return classes[i].call;
    return HV_CALL_REJECTED; /* 1xx/3xx: not something this protocol uses */
}

/* POSTs body to path. On success *answer (when not NULL) receives the
 * parsed answer body (a new reference, or NULL without a JSON body). */
static enum hv_call post(struct hv_client *c, const char *path, json_t *body, json_t **answer)
{
    struct hv_http_response resp;
    if (answer != NULL)
        *answer = NULL;
    hv_httpc_request(c->http, "POST", path, body, &resp);
    c->last_status = resp.status;
    enum hv_call call = classify(resp.status);
    if (call == HV_CALL_OK) {
        c->last_error[0] = '\0';
        if (answer != NULL) {
            *answer = resp.body;
            resp.body = NULL;
        }
    } else {
        char what[400];
        hv_http_response_describe(&resp, what, sizeof what);
        /* A transport error already names the method and URL. */
        if (resp.status == 0)
            snprintf(c->last_error, sizeof c->last_error, "%s", what);
        else
            snprintf(c->last_error, sizeof c->last_error, "POST %s: %s", path, what);
    }
    hv_http_response_clear(&resp);
    return call;
}

enum hv_call hv_client_register(struct hv_client *c, const char *name, const char *kind,
                                const json_t *facts, const char *fingerprint, long long *target_id,
                                char *server_fp, size_t fp_len)
{
    json_t *body = json_pack("{s:s, s:s, s:O, s:s}", "name", name, "kind", kind, "facts", facts,
                             "fingerprint", fingerprint);
    if (body == NULL) {
        snprintf(c->last_error, sizeof c->last_error, "cannot build the registration");
        return HV_CALL_REJECTED;
    }
    json_t *answer;
    enum hv_call call = post(c, "/api/v1/workers/register", body, &answer);
    json_decref(body);
    if (call != HV_CALL_OK)
        return call;
    json_int_t id;
    json_t *fp = NULL;
    json_error_t err;
    if (json_unpack_ex(answer, &err, 0, "{s:I, s?o}", "target_id", &id, "fingerprint", &fp) != 0) {
        snprintf(c->last_error, sizeof c->last_error, "registration answer: %s", err.text);
        json_decref(answer);
        return HV_CALL_RETRY;
    }
    *target_id = id;
    snprintf(server_fp, fp_len, "%s", json_is_string(fp) ? json_string_value(fp) : "");
    json_decref(answer);
    return HV_CALL_OK;
}

enum hv_call hv_client_claim(struct hv_client *c, long long target_id, struct hv_job *job)
{
    memset(job, 0, sizeof *job);
    json_t *body = json_pack("{s:I}", "target_id", (json_int_t)target_id);
    json_t *answer;
    enum hv_call call = post(c, "/api/v1/jobs/claim", body, &answer);
    json_decref(body);
    if (call != HV_CALL_OK)
        return call;
    if (c->last_status == 204) {
        json_decref(answer);
        return HV_CALL_NO_WORK;
    }
    /* Required members are typed strictly; optional ones are taken as any
     * value, so a null reads as absent instead of failing the claim. */
    json_int_t id;
    int attempt;
    const char *kind;
    json_t *plan_id = NULL, *conf = NULL, *lease = NULL, *wid = NULL, *engine = NULL,
           *params = NULL;
    json_error_t err;
    if (json_unpack_ex(answer, &err, 0, "{s:{s:I, s:i, s?o, s?o, s?o, s:{s?o, s:s, s?o, s?o}}}",
                       "job", "id", &id, "attempt", &attempt, "plan_id", &plan_id, "configuration",
                       &conf, "lease_seconds", &lease, "workload", "id", &wid, "kind", &kind,
                       "engine", &engine, "params", &params) != 0) {
        snprintf(c->last_error, sizeof c->last_error, "claim answer: %s (at %s)", err.text,
                 err.source);
        json_decref(answer);
        return HV_CALL_RETRY;
    }
    json_int_t lease_s = json_is_integer(lease) ? json_integer_value(lease) : 0;
    *job = (struct hv_job){.id = id,
                           .attempt = attempt,
                           .plan_id = json_is_integer(plan_id) ? json_integer_value(plan_id) : 0,
                           .configuration = json_is_string(conf) ? json_string_value(conf) : "",
                           .lease_seconds = lease_s > 0 && lease_s < 86400 ? (int)lease_s : 60,
                           .workload_id = json_is_string(wid) ? json_string_value(wid) : "",
                           .kind = kind,
                           .engine = json_is_string(engine) ? json_string_value(engine) : "builtin",
                           .params = json_is_null(params) ? NULL : params,
                           .doc = answer};
    return HV_CALL_OK;
}

void hv_job_clear(struct hv_job *job)
{
    json_decref(job->doc);
    memset(job, 0, sizeof *job);
}

/* POSTs {"attempt": n, ...extra} to /api/v1/jobs/{id}/{action}. extra is
 * stolen. */
static enum hv_call job_call(struct hv_client *c, const struct hv_job *job, const char *action,
                             json_t *extra, json_t **answer)
{
    char path[96];
    snprintf(path, sizeof path, "/api/v1/jobs/%lld/%s", job->id, action);
    json_t *body = extra != NULL ? extra : json_object();
    json_object_set_new(body, "attempt", json_integer(job->attempt));
    enum hv_call call = post(c, path, body, answer);
    json_decref(body);
    return call;
}

enum hv_call hv_client_heartbeat(struct hv_client *c, const struct hv_job *job, bool *cancel,
                                 int *lease_seconds)
{
    json_t *answer;
    enum hv_call call = job_call(c, job, "heartbeat", NULL, &answer);
    *cancel = false;
    if (call == HV_CALL_OK) {
        *cancel = json_is_true(json_object_get(answer, "cancel"));
        json_t *lease = json_object_get(answer, "lease_seconds");
        if (json_is_integer(lease) && json_integer_value(lease) > 0)
            *lease_seconds = (int)json_integer_value(lease);
    }
    json_decref(answer);
    return call;
}

enum hv_call hv_client_release(struct hv_client *c, const struct hv_job *job, const char *reason)
{
    return job_call(c, job, "release", json_pack("{s:s}", "reason", reason), NULL);
}

enum hv_call hv_client_upload_result(struct hv_client *c, const struct hv_job *job, json_t *body)
{
    char path[96];
    snprintf(path, sizeof path, "/api/v1/jobs/%lld/result", job->id);
    return post(c, path, body, NULL);
}
