/* client.c — see client.h. */
#include "worker/client.h"

#include "httpc.h"
#include "hv_build.h"
#include "log.h"
#include "protocol.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bounds each request that is not a long poll: below the shortest lease,
 * so a hung server costs at most one lease. */
#define CLIENT_TIMEOUT_S 50
/* A long poll may take its wait plus this before it counts as hung: the
 * server's own work and the network. */
#define LONG_POLL_MARGIN_S 20
#define MAX_WAIT_S         60

struct hv_client {
    struct hv_httpc *http; /* every call but the long polls */
    struct hv_httpc *poll; /* long polls: longer timeout, abortable */
    double max_wait;
    char *base_url;   /* for hv_client_local_address() */
    char *token;      /* the worker token, for hv_client_use_credential(NULL) */
    char *advertise;  /* --advertise, or NULL */
    char boot_id[65]; /* sent with registrations; "" sends none */
    json_t *held;     /* sent with registrations as "held", or NULL */
    json_t *settings; /* sent with registrations as "settings", or NULL */
    long last_status;
    char last_error[512];
    volatile sig_atomic_t *abort_flag; /* a shutdown signal came */
    bool claim_next;            /* result uploads also claim (hv_client_claim_with_results) */
    json_t *next;               /* {"job": ...} an upload's answer brought, or NULL */
    struct hv_clock next_clock; /* and that answer's clock sample */
};

struct hv_client *hv_client_new(const char *base_url, const char *token, double max_wait,
                                volatile sig_atomic_t *abort_flag)
{
    struct hv_client *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->base_url = strdup(base_url);
    c->token = strdup(token != NULL ? token : "");
    c->max_wait = max_wait < 0 ? 0 : max_wait > MAX_WAIT_S ? MAX_WAIT_S : max_wait;
    long poll_timeout = (long)c->max_wait + LONG_POLL_MARGIN_S;
    c->http = hv_httpc_new(base_url, token, CLIENT_TIMEOUT_S);
    c->poll = hv_httpc_new(base_url, token,
                           poll_timeout > CLIENT_TIMEOUT_S ? poll_timeout : CLIENT_TIMEOUT_S);
    if (c->http == NULL || c->poll == NULL || c->base_url == NULL || c->token == NULL) {
        hv_client_free(c);
        return NULL;
    }
    hv_httpc_set_abort_flag(c->poll, abort_flag);
    c->abort_flag = abort_flag;
    return c;
}

void hv_client_free(struct hv_client *c)
{
    if (c == NULL)
        return;
    hv_httpc_free(c->http);
    hv_httpc_free(c->poll);
    free(c->base_url);
    if (c->token != NULL)
        memset(c->token, 0, strlen(c->token));
    free(c->token);
    free(c->advertise);
    json_decref(c->next);
    json_decref(c->held);
    json_decref(c->settings);
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

/* POSTs body to path, through the long-poll connection when long_poll. On
 * success *answer (when not NULL) receives the parsed answer body (a new
 * reference, or NULL without a JSON body), and a "server_time" in it is
 * offered to clock (when not NULL) with the request's send and receive
 * times. */
static enum hv_call post_ex(struct hv_client *c, const char *path, json_t *body, bool long_poll,
                            struct hv_clock *clock, json_t **answer)
{
    struct hv_http_response resp;
    if (answer != NULL)
        *answer = NULL;
    double t_send = hv_realtime();
    hv_httpc_request(long_poll ? c->poll : c->http, "POST", path, body, &resp);
    double t_recv = hv_realtime();
    c->last_status = resp.status;
    enum hv_call call = classify(resp.status);
    if (call == HV_CALL_OK) {
        c->last_error[0] = '\0';
        double server_time;
        if (clock != NULL &&
            hv_iso8601_parse(json_string_value(json_object_get(resp.body, "server_time")),
                             &server_time) == 0)
            hv_clock_add(clock, t_send, t_recv, server_time);
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

static enum hv_call post(struct hv_client *c, const char *path, json_t *body, json_t **answer)
{
    return post_ex(c, path, body, false, NULL, answer);
}

enum hv_call hv_client_register(struct hv_client *c, const char *name, const char *kind,
                                const char *host, const json_t *facts, const char *fingerprint,
                                const json_t *labels, struct hv_registration *out)
{
    memset(out, 0, sizeof *out);
    json_t *body =
        json_pack("{s:s, s:s, s:O, s:s, s:s, s:i}", "name", name, "kind", kind, "facts", facts,
                  "fingerprint", fingerprint, "version", HVBENCH_VERSION, "protocol", HV_PROTOCOL);
    if (body != NULL && labels != NULL)
        json_object_set(body, "labels", (json_t *)labels);
    if (body != NULL && host != NULL)
        json_object_set_new(body, "host", json_string(host));
    if (body != NULL && c->boot_id[0] != '\0')
        json_object_set_new(body, "boot_id", json_string(c->boot_id));
    if (body != NULL && c->held != NULL)
        json_object_set(body, "held", c->held);
    if (body != NULL && c->settings != NULL)
        json_object_set(body, "settings", c->settings);
    if (body == NULL) {
        snprintf(c->last_error, sizeof c->last_error, "cannot build the registration");
        return HV_CALL_REJECTED;
    }
    json_t *answer;
    enum hv_call call = post(c, "/api/v1/workers/register", body, &answer);
    json_decref(body);
    if (call != HV_CALL_OK)
        return call;
    json_int_t id, wid;
    json_t *fp = NULL, *cred = NULL, *limits = NULL;
    json_error_t err;
    if (json_unpack_ex(answer, &err, 0, "{s:I, s:I, s?o, s?o, s?o}", "target_id", &id, "worker_id",
                       &wid, "fingerprint", &fp, "worker_token", &cred, "limits", &limits) != 0 ||
        (cred != NULL &&
         (!json_is_string(cred) || json_string_length(cred) >= sizeof out->credential))) {
        snprintf(c->last_error, sizeof c->last_error, "registration answer: %s",
                 cred != NULL ? "malformed worker_token" : err.text);
        json_decref(answer);
        return HV_CALL_RETRY;
    }
    out->target_id = id;
    out->worker_id = wid;
    snprintf(out->credential, sizeof out->credential, "%s", cred ? json_string_value(cred) : "");
    snprintf(out->fingerprint, sizeof out->fingerprint, "%s",
             json_is_string(fp) ? json_string_value(fp) : "");
    const char *target = json_string_value(json_object_get(answer, "name"));
    snprintf(out->name, sizeof out->name, "%s", target != NULL ? target : "");
    out->max_result_bytes = json_integer_value(json_object_get(limits, "max_result_bytes"));
    out->max_samples = json_integer_value(json_object_get(limits, "max_samples"));
    out->max_raw_bytes = json_integer_value(json_object_get(limits, "max_raw_bytes"));
    const char *server_version = json_string_value(json_object_get(answer, "server_version"));
    if (server_version != NULL && strcmp(server_version, HVBENCH_VERSION) != 0)
        hv_warn("the server runs hvbench %s, this worker %s: they speak the same job protocol, "
                "but install the server's version when you can",
                server_version, HVBENCH_VERSION);
    json_decref(answer);
    return HV_CALL_OK;
}

int hv_client_use_credential(struct hv_client *c, const char *credential)
{
    const char *t = credential != NULL ? credential : c->token;
    return hv_httpc_set_token(c->http, t) | hv_httpc_set_token(c->poll, t);
}

enum hv_call hv_client_deregister(struct hv_client *c)
{
    json_t *body = json_object();
    enum hv_call call = post(c, "/api/v1/workers/deregister", body, NULL);
    json_decref(body);
    return call;
}

/* POST path {member: value}: a report the server takes whole. */
static enum hv_call report(struct hv_client *c, const char *path, const char *member,
                           const json_t *value)
{
    json_t *body = json_pack("{s:O}", member, (json_t *)value);
    if (body == NULL) {
        snprintf(c->last_error, sizeof c->last_error, "cannot build the report: out of memory");
        return HV_CALL_RETRY;
    }
    enum hv_call call = post(c, path, body, NULL);
    json_decref(body);
    return call;
}

enum hv_call hv_client_report_settings(struct hv_client *c, const json_t *settings)
{
    return report(c, "/api/v1/workers/settings", "settings", settings);
}

enum hv_call hv_client_report_restored(struct hv_client *c, const json_t *restored)
{
    return report(c, "/api/v1/workers/restored", "restored", restored);
}

/* The wait to send: within 0..max_wait. */
static double clamp_wait(const struct hv_client *c, double wait)
{
    return wait > c->max_wait ? c->max_wait : wait > 0 ? wait : 0;
}

/* Whole seconds as an integer, as people write them; else a real. */
static json_t *seconds_json(double s)
{
    return s == floor(s) ? json_integer((json_int_t)s) : json_real(s);
}

/* POSTs a claim; on HV_CALL_OK with an answer (200) sets *answer and
 * *clock. A 204 is HV_CALL_NO_WORK. */
static enum hv_call claim_call(struct hv_client *c, long long target_id, double wait,
                               json_t **answer, struct hv_clock *clock)
{
    wait = clamp_wait(c, wait);
    json_t *body = json_pack("{s:I}", "target_id", (json_int_t)target_id);
    if (wait > 0)
        json_object_set_new(body, "wait", seconds_json(wait));
    *clock = (struct hv_clock){0};
    enum hv_call call = post_ex(c, "/api/v1/jobs/claim", body, wait > 0, clock, answer);
    json_decref(body);
    if (call == HV_CALL_OK && c->last_status == 204) {
        json_decref(*answer);
        *answer = NULL;
        return HV_CALL_NO_WORK;
    }
    return call;
}

/* The lease an answer names, within reason; 60 s otherwise. */
static int lease_of(const json_t *lease)
{
    json_int_t s = json_is_integer(lease) ? json_integer_value(lease) : 0;
    return s > 0 && s < 86400 ? (int)s : 60;
}

/* Fills *job from a claim answer holding "job" (taking answer). Returns
 * HV_CALL_OK, or HV_CALL_RETRY with last_error (answer released). */
static enum hv_call parse_job(struct hv_client *c, json_t *answer, const struct hv_clock *clock,
                              struct hv_job *job)
{
    /* Required members are typed strictly; optional ones are taken as any
     * value, so a null reads as absent instead of failing the claim. */
    json_int_t id;
    int attempt;
    const char *kind;
    json_t *plan_id = NULL, *conf = NULL, *lease = NULL, *wid = NULL, *engine = NULL,
           *params = NULL, *group = NULL, *role = NULL, *peer = NULL, *levels = NULL,
           *tuning = NULL;
    json_error_t err;
    if (json_unpack_ex(answer, &err, 0,
                       "{s:{s:I, s:i, s?o, s?o, s?o, s?o, s?o, s?o, s?o, s:{s?o, s:s, s?o, s?o, "
                       "s?o}}}",
                       "job", "id", &id, "attempt", &attempt, "plan_id", &plan_id, "configuration",
                       &conf, "lease_seconds", &lease, "group", &group, "role", &role, "levels",
                       &levels, "tuning", &tuning, "workload", "id", &wid, "kind", &kind, "engine",
                       &engine, "params", &params, "peer", &peer) != 0) {
        snprintf(c->last_error, sizeof c->last_error, "claim answer: %s (at %s)", err.text,
                 err.source);
        json_decref(answer);
        return HV_CALL_RETRY;
    }
    /* A group is {"id", "size"} or null; anything else is a protocol we
     * do not know, and running the job alone would break its group. */
    json_int_t group_id = 0, group_size = 0;
    if (group != NULL && !json_is_null(group) &&
        json_unpack_ex(group, &err, 0, "{s:I, s:I}", "id", &group_id, "size", &group_size) != 0) {
        snprintf(c->last_error, sizeof c->last_error, "claim answer: job.group: %s", err.text);
        json_decref(answer);
        return HV_CALL_RETRY;
    }
    *job =
        (struct hv_job){.id = id,
                        .attempt = attempt,
                        .plan_id = json_is_integer(plan_id) ? json_integer_value(plan_id) : 0,
                        .configuration = json_is_string(conf) ? json_string_value(conf) : "",
                        .lease_seconds = lease_of(lease),
                        .workload_id = json_is_string(wid) ? json_string_value(wid) : "",
                        .kind = kind,
                        .engine = json_is_string(engine) ? json_string_value(engine) : "builtin",
                        .params = json_is_null(params) ? NULL : params,
                        .group_id = group_id,
                        .group_size = group_size > 0 && group_size < 1000000 ? (int)group_size : 0,
                        .role = json_is_string(role) ? json_string_value(role) : NULL,
                        .peer = json_is_string(peer) ? json_string_value(peer) : NULL,
                        .levels = json_is_object(levels) ? levels : NULL,
                        .tuning = json_is_object(tuning) ? tuning : NULL,
                        .clock = *clock,
                        .doc = answer};
    return HV_CALL_OK;
}

/* Whether every member of a (domain names) array is a non-empty string. */
static bool names_ok(const json_t *a)
{
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v)
    {
        if (!json_is_string(v) || json_string_length(v) == 0)
            return false;
    }
    return true;
}

/* Checks the step's optional members: levels an object (required for an
 * apply), domains an array of names, disk and nic strings, allow_restart
 * a boolean; null reads as absent. Returns NULL or what is wrong. */
static const char *step_shape(const char *kind, const json_t *levels, const json_t *domains,
                              const json_t *disk, const json_t *nic, const json_t *restart)
{
    if (strcmp(kind, "apply") != 0 && strcmp(kind, "restore") != 0 &&
        strcmp(kind, "before_host") != 0 && strcmp(kind, "after_host") != 0)
        return "step.kind must be apply, restore, before_host or after_host";
    if (levels != NULL && !json_is_null(levels) && !json_is_object(levels))
        return "step.levels must be an object";
    if (strcmp(kind, "apply") == 0 && !json_is_object(levels))
        return "an apply step needs levels";
    if (domains != NULL && !json_is_null(domains) && !(json_is_array(domains) && names_ok(domains)))
        return "step.domains must be an array of domain names";
    if ((disk != NULL && !json_is_null(disk) && !json_is_string(disk)) ||
        (nic != NULL && !json_is_null(nic) && !json_is_string(nic)))
        return "step.disk and step.nic must be strings or null";
    if (restart != NULL && !json_is_null(restart) && !json_is_boolean(restart))
        return "step.allow_restart must be a boolean";
    return NULL;
}

/* Fills *step from a claim answer holding "step" (taking answer). */
static enum hv_call parse_step(struct hv_client *c, json_t *answer, const struct hv_clock *clock,
                               struct hv_step *step)
{
    json_int_t id, plan_id;
    int attempt;
    const char *kind;
    json_t *lease = NULL, *block = NULL, *conf = NULL, *levels = NULL, *domains = NULL,
           *disk = NULL, *nic = NULL, *restart = NULL, *tmpl = NULL, *named = NULL;
    json_error_t err;
    const char *why = NULL;
    if (json_unpack_ex(answer, &err, 0,
                       "{s:{s:I, s:s, s:I, s:i, s?o, s?o, s?o, s?o, s?o, s?o, "
                       "s?o, s?o, s?o, s?o}}",
                       "step", "id", &id, "kind", &kind, "plan_id", &plan_id, "attempt", &attempt,
                       "lease_seconds", &lease, "block", &block, "configuration", &conf, "levels",
                       &levels, "domains", &domains, "disk", &disk, "nic", &nic, "allow_restart",
                       &restart, "template", &tmpl, "named_domains", &named) != 0 ||
        (why = step_shape(kind, levels, domains, disk, nic, restart)) != NULL ||
        (why = named != NULL && !json_is_null(named) && !(json_is_array(named) && names_ok(named))
                   ? "step.named_domains must be an array of domain names"
                   : NULL) != NULL) {
        snprintf(c->last_error, sizeof c->last_error, "claim answer: %s", why ? why : err.text);
        json_decref(answer);
        return HV_CALL_RETRY;
    }
    json_t *step_obj = json_object_get(answer, "step");
    /* Absent levels and domains are empty, not NULL, for every caller. */
    if (!json_is_object(levels))
        json_object_set_new(step_obj, "levels", levels = json_object());
    if (!json_is_array(domains))
        json_object_set_new(step_obj, "domains", domains = json_array());
    *step = (struct hv_step){
        .id = id,
        .attempt = attempt,
        .plan_id = plan_id,
        .kind = kind,
        .lease_seconds = lease_of(lease),
        .block = json_is_integer(block) ? (int)json_integer_value(block) : 0,
        .configuration = json_is_string(conf) ? json_string_value(conf) : "",
        .levels = levels,
        .domains = domains,
        .disk = json_is_string(disk) ? json_string_value(disk) : NULL,
        .nic = json_is_string(nic) ? json_string_value(nic) : NULL,
        .allow_restart = json_is_true(restart),
        .named_domains = json_is_array(named) ? named : NULL,
        .template_domain =
            json_is_string(tmpl) && json_string_length(tmpl) > 0 ? json_string_value(tmpl) : NULL,
        .clock = *clock,
        .doc = answer,
    };
    return HV_CALL_OK;
}

/* One claim: a job into claim->job, a step into claim->step when steps is
 * true (refused as HV_CALL_RETRY otherwise). */
static enum hv_call claim_one(struct hv_client *c, long long target_id, double wait, bool steps,
                              struct hv_claim *claim)
{
    memset(claim, 0, sizeof *claim);
    json_t *answer;
    struct hv_clock clock;
    enum hv_call call = claim_call(c, target_id, wait, &answer, &clock);
    if (call != HV_CALL_OK)
        return call;
    if (json_object_get(answer, "step") == NULL) {
        claim->what = HV_CLAIMED_JOB;
        return parse_job(c, answer, &clock, &claim->job);
    }
    if (!steps) {
        snprintf(c->last_error, sizeof c->last_error,
                 "claim answer: a tuning step, which this caller cannot run");
        json_decref(answer);
        return HV_CALL_RETRY;
    }
    claim->what = HV_CLAIMED_STEP;
    return parse_step(c, answer, &clock, &claim->step);
}

enum hv_call hv_client_claim_work(struct hv_client *c, long long target_id, double wait,
                                  struct hv_claim *claim)
{
    return claim_one(c, target_id, wait, true, claim);
}

enum hv_call hv_client_claim(struct hv_client *c, long long target_id, double wait,
                             struct hv_job *job)
{
    struct hv_claim claim;
    enum hv_call call = claim_one(c, target_id, wait, false, &claim);
    *job = claim.job;
    return call;
}

void hv_claim_clear(struct hv_claim *claim)
{
    json_decref(claim->job.doc);
    json_decref(claim->step.doc);
    memset(claim, 0, sizeof *claim);
}

void hv_job_clear(struct hv_job *job)
{
    json_decref(job->doc);
    memset(job, 0, sizeof *job);
}

/* POSTs {"attempt": attempt, ...extra} to /api/v1/{what}/{id}/{action}
 * (what: jobs or steps). extra is stolen. */
static enum hv_call attempt_call(struct hv_client *c, const char *what, long long id, int attempt,
                                 const char *action, json_t *extra, bool long_poll,
                                 struct hv_clock *clock, json_t **answer)
{
    char path[96];
    snprintf(path, sizeof path, "/api/v1/%s/%lld/%s", what, id, action);
    json_t *body = extra != NULL ? extra : json_object();
    json_object_set_new(body, "attempt", json_integer(attempt));
    enum hv_call call = post_ex(c, path, body, long_poll, clock, answer);
    json_decref(body);
    return call;
}

/* attempt_call() for a job's attempt. */
static enum hv_call job_call(struct hv_client *c, const struct hv_job *job, const char *action,
                             json_t *extra, bool long_poll, struct hv_clock *clock, json_t **answer)
{
    return attempt_call(c, "jobs", job->id, job->attempt, action, extra, long_poll, clock, answer);
}

enum hv_call hv_client_ready(struct hv_client *c, const struct hv_job *job, double wait,
                             const json_t *endpoint, struct hv_clock *clock, char *start_at,
                             size_t len, int *ready, json_t **endpoints)
{
    wait = clamp_wait(c, wait);
    json_t *answer;
    start_at[0] = '\0';
    *ready = 0;
    json_t *body = json_pack("{s:o}", "wait", seconds_json(wait));
    if (body != NULL && endpoint != NULL)
        json_object_set_new(body, "endpoint", json_deep_copy(endpoint));
    enum hv_call call = job_call(c, job, "ready", body, wait > 0, clock, &answer);
    if (call != HV_CALL_OK)
        return call;
    json_t *at = json_object_get(answer, "start_at");
    json_t *n = json_object_get(json_object_get(answer, "group"), "ready");
    double t;
    if (at == NULL || !(json_is_null(at) || hv_iso8601_parse(json_string_value(at), &t) == 0)) {
        snprintf(c->last_error, sizeof c->last_error, "ready answer: %s start_at",
                 at == NULL ? "no" : "malformed");
        call = HV_CALL_RETRY;
    } else {
        snprintf(start_at, len, "%s", json_is_string(at) ? json_string_value(at) : "");
        *ready = json_is_integer(n) ? (int)json_integer_value(n) : 0;
        if (endpoints != NULL) {
            json_t *eps = json_object_get(answer, "endpoints");
            json_decref(*endpoints);
            *endpoints = json_is_array(eps) ? json_incref(eps) : NULL;
        }
    }
    json_decref(answer);
    return call;
}

void hv_client_set_boot_id(struct hv_client *c, const char *boot_id)
{
    snprintf(c->boot_id, sizeof c->boot_id, "%s", boot_id != NULL ? boot_id : "");
}

void hv_client_set_settings(struct hv_client *c, json_t *settings)
{
    json_decref(c->settings);
    c->settings = settings;
}

void hv_client_set_held(struct hv_client *c, json_t *held)
{
    json_decref(c->held);
    c->held = held;
}

int hv_client_set_advertise(struct hv_client *c, const char *addr)
{
    char *copy = strdup(addr);
    if (copy == NULL)
        return -1;
    free(c->advertise);
    c->advertise = copy;
    return 0;
}

int hv_client_local_address(const struct hv_client *c, char *buf, size_t len)
{
    if (c->advertise != NULL) {
        snprintf(buf, len, "%s", c->advertise);
        return 0;
    }
    /* A UDP socket connected to the server's address sends nothing, but
     * the kernel picks the route and so the source address a TCP
     * connection to it would use. */
    char *host = NULL, *port = NULL, *scheme = NULL;
    CURLU *u = curl_url();
    int rc = -1;
    if (u == NULL || curl_url_set(u, CURLUPART_URL, c->base_url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK) {
        snprintf(buf, len, "cannot parse the server URL %s", c->base_url);
        goto out;
    }
    if (curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK)
        port = NULL;
    /* curl keeps the brackets of an IPv6 literal. */
    size_t hl = strlen(host);
    if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
        memmove(host, host + 1, hl - 2);
        host[hl - 2] = '\0';
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM}, *res;
    int e = getaddrinfo(host, port != NULL ? port : "80", &hints, &res);
    if (e != 0) {
        snprintf(buf, len, "cannot resolve %s: %s", host, gai_strerror(e));
        goto out;
    }
    char why[160] = "no address";
    for (struct addrinfo *a = res; a != NULL && rc != 0; a = a->ai_next) {
        int fd = socket(a->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct sockaddr_storage local;
        socklen_t ll = sizeof local;
        if (fd < 0 || connect(fd, a->ai_addr, a->ai_addrlen) != 0 ||
            getsockname(fd, (struct sockaddr *)&local, &ll) != 0) {
            snprintf(why, sizeof why, "%s", strerror(errno));
        } else {
            const void *ip = local.ss_family == AF_INET
                                 ? (const void *)&((struct sockaddr_in *)&local)->sin_addr
                                 : (const void *)&((struct sockaddr_in6 *)&local)->sin6_addr;
            if (inet_ntop(local.ss_family, ip, buf, (socklen_t)len) != NULL)
                rc = 0;
            else
                snprintf(why, sizeof why, "%s", strerror(errno));
        }
        if (fd >= 0)
            close(fd);
    }
    freeaddrinfo(res);
    if (rc != 0)
        snprintf(buf, len, "no route to the server %s: %s", host, why);
out:
    curl_free(host);
    curl_free(port);
    curl_free(scheme);
    curl_url_cleanup(u);
    return rc;
}

enum hv_call hv_client_heartbeat(struct hv_client *c, const struct hv_job *job, bool *cancel,
                                 int *lease_seconds, struct hv_clock *clock)
{
    json_t *answer;
    enum hv_call call = job_call(c, job, "heartbeat", NULL, false, clock, &answer);
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
    return job_call(c, job, "release", json_pack("{s:s}", "reason", reason), false, NULL, NULL);
}

void hv_client_claim_with_results(struct hv_client *c, bool on)
{
    c->claim_next = on;
}

enum hv_call hv_client_upload_result(struct hv_client *c, long long job_id, json_t *body)
{
    /* One next job at a time, and none once the worker is shutting down. */
    bool ask = c->claim_next && c->next == NULL && !(c->abort_flag != NULL && *c->abort_flag);
    char path[112];
    snprintf(path, sizeof path, "/api/v1/jobs/%lld/result%s", job_id, ask ? "?claim=true" : "");
    if (!ask)
        return post(c, path, body, NULL);
    json_t *answer;
    struct hv_clock clock = {0};
    enum hv_call call = post_ex(c, path, body, false, &clock, &answer);
    json_t *next = json_object_get(answer, "next");
    if (call == HV_CALL_OK && json_is_object(next)) {
        c->next = json_incref(next);
        c->next_clock = clock;
    }
    json_decref(answer);
    return call;
}

bool hv_client_take_next(struct hv_client *c, struct hv_claim *claim)
{
    if (c->next == NULL)
        return false;
    memset(claim, 0, sizeof *claim);
    claim->what = HV_CLAIMED_JOB;
    json_t *next = c->next;
    c->next = NULL;
    if (parse_job(c, next, &c->next_clock, &claim->job) == HV_CALL_OK)
        return true;
    hv_warn("the job an upload's answer brought is not one this worker knows how to read (%s); "
            "its lease will lapse",
            c->last_error);
    return false;
}

/* attempt_call() for a step's attempt. */
static enum hv_call step_call(struct hv_client *c, const struct hv_step *step, const char *action,
                              json_t *extra, json_t **answer)
{
    return attempt_call(c, "steps", step->id, step->attempt, action, extra, false, NULL, answer);
}

enum hv_call hv_client_step_heartbeat(struct hv_client *c, const struct hv_step *step,
                                      int *lease_seconds)
{
    json_t *answer;
    enum hv_call call = step_call(c, step, "heartbeat", NULL, &answer);
    json_t *lease = json_object_get(answer, "lease_seconds");
    if (call == HV_CALL_OK && json_is_integer(lease) && json_integer_value(lease) > 0 &&
        json_integer_value(lease) < 86400)
        *lease_seconds = (int)json_integer_value(lease);
    json_decref(answer);
    return call;
}

enum hv_call hv_client_step_result(struct hv_client *c, const struct hv_step *step, json_t *body)
{
    /* The body is the caller's: send a copy that carries the attempt. */
    json_t *copy = json_copy(body);
    if (copy == NULL) {
        snprintf(c->last_error, sizeof c->last_error, "out of memory");
        return HV_CALL_RETRY;
    }
    return step_call(c, step, "result", copy, NULL);
}

/* The guest registration an answer of GET /api/v1/workers/guest holds. */
static void take_guest_registration(const json_t *answer, struct hv_guest_registration *out)
{
    const json_t *reg = json_object_get(answer, "registration");
    const json_t *id = json_object_get(reg, "worker_id");
    const char *boot = json_string_value(json_object_get(reg, "boot_id"));
    out->worker_id = json_is_integer(id) ? (long long)json_integer_value(id) : 0;
    snprintf(out->boot_id, sizeof out->boot_id, "%s", boot != NULL ? boot : "");
    out->live = json_is_true(json_object_get(reg, "live"));
    double at, now;
    if (hv_iso8601_parse(json_string_value(json_object_get(reg, "registered_at")), &at) == 0 &&
        hv_iso8601_parse(json_string_value(json_object_get(answer, "server_time")), &now) == 0)
        out->age = now > at ? now - at : 0;
}

enum hv_call hv_client_guest_registration(struct hv_client *c, const char *uuid,
                                          struct hv_guest_registration *out)
{
    char path[128];
    snprintf(path, sizeof path, "/api/v1/workers/guest?uuid=%.40s", uuid);
    struct hv_http_response resp;
    *out = (struct hv_guest_registration){.age = -1};
    hv_httpc_request(c->http, "GET", path, NULL, &resp);
    c->last_status = resp.status;
    enum hv_call call = classify(resp.status);
    if (call == HV_CALL_OK) {
        c->last_error[0] = '\0';
        take_guest_registration(resp.body, out);
    } else {
        char what[400];
        hv_http_response_describe(&resp, what, sizeof what);
        if (resp.status == 0)
            snprintf(c->last_error, sizeof c->last_error, "%s", what);
        else
            snprintf(c->last_error, sizeof c->last_error, "GET %.120s: %.380s", path, what);
    }
    hv_http_response_clear(&resp);
    return call;
}
