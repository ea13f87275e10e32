/* hooks.c — see hooks.h. */
#include "hooks.h"

#include "answer_cache.h"
#include "config.h"
#include "db_hooks.h"
#include "httpc.h"
#include "log.h"
#include "webhooks.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define BATCH        8
#define LOCK_SECONDS (HV_HOOK_TIMEOUT + 30)
#define ANSWER_BYTES 1024

static pthread_t caller;
static bool running;
static volatile sig_atomic_t stopping;

/* The answer as the plan's hook log keeps it: the status and the first
 * ANSWER_BYTES of the body (as JSON text; null when it was not JSON). */
static char *answer_json(long status, const json_t *body, const char *error)
{
    json_t *a = json_object();
    if (status > 0) {
        json_object_set_new(a, "http_status", json_integer(status));
        char *text = body != NULL ? json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        if (text != NULL && strlen(text) > ANSWER_BYTES)
            text[ANSWER_BYTES] = '\0';
        json_object_set_new(a, "body", text != NULL ? json_string(text) : json_null());
        free(text);
    } else {
        json_object_set_new(a, "error", json_string(error));
    }
    char *s = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    return s;
}

/* The words of a "not yet" answer: the body's "reason" (a JSON object's
 * member, or a JSON string body), else a sentence saying the hook gave
 * none. */
static void not_yet_reason(const json_t *body, char *out, size_t len)
{
    const char *r =
        json_string_value(json_is_object(body) ? json_object_get(body, "reason") : body);
    if (r != NULL && r[0] != '\0')
        snprintf(out, len, "%s", r);
    else
        snprintf(out, len, "the before_host hook answered HTTP 503 (not yet) without a reason");
}

/* One attempt at one url hook, and its outcome recorded. */
static void call_one(const struct hv_hook_due *d)
{
    char err[300] = "", reason[HV_HOOK_REASON_BYTES] = "";
    long status = 0;
    bool ok = false, not_yet = false;
    int retry_after = 0;
    char *answer = NULL;
    struct hv_httpc *c =
        hv_cfg.hook_secret != NULL ? hv_httpc_new(d->url, NULL, HV_HOOK_TIMEOUT) : NULL;
    if (hv_cfg.hook_secret == NULL) {
        snprintf(err, sizeof err, "the server has no --hook-secret-file to sign the call with");
    } else if (c == NULL) {
        snprintf(err, sizeof err, "cannot make an HTTP client");
    } else {
        hv_httpc_set_abort_flag(c, &stopping);
        hv_httpc_set_public_only(c, !hv_cfg.hook_private);
        size_t len = strlen(d->payload);
        char sig[128], h_event[160], h_id[64], h_sig[160];
        if (hv_webhook_signature(hv_cfg.hook_secret, (int64_t)time(NULL), d->payload, len, sig,
                                 sizeof sig) != 0) {
            snprintf(err, sizeof err, "cannot sign the body");
        } else {
            snprintf(h_event, sizeof h_event, "Hvbench-Event: hook.%s", d->kind);
            snprintf(h_id, sizeof h_id, "Hvbench-Delivery: hook-%lld-%d", (long long)d->id,
                     d->attempt);
            snprintf(h_sig, sizeof h_sig, "Hvbench-Signature: %s", sig);
            const char *headers[] = {h_event, h_id, h_sig, NULL};
            struct hv_http_response resp;
            int rc = hv_httpc_request_raw_headers(c, "POST", "", "application/json", d->payload,
                                                  len, headers, &resp);
            status = resp.status;
            ok = rc == 0 && status >= 200 && status < 300;
            not_yet = rc == 0 && status == 503 && strcmp(d->kind, "before_host") == 0;
            if (not_yet) {
                not_yet_reason(resp.body, reason, sizeof reason);
                retry_after = resp.retry_after > INT_MAX ? INT_MAX : (int)resp.retry_after;
            }
            if (rc != 0)
                snprintf(err, sizeof err, "%s", resp.error);
            else if (!ok)
                snprintf(err, sizeof err, "the hook answered HTTP %ld", status);
            answer = answer_json(rc == 0 ? status : 0, resp.body, err);
            hv_http_response_clear(&resp);
        }
    }
    hv_httpc_free(c);
    if (not_yet && !stopping) {
        hv_info("hook %lld (%s) %s: not yet (HTTP 503): %s", (long long)d->id, d->kind, d->url,
                reason);
        hv_db_hook_not_yet(NULL, d->id, d->attempt, reason, answer, retry_after);
        hv_write_gen_bump(); /* a plan read shows its waiting */
        free(answer);
        return;
    }
    if (stopping && !ok) {
        free(answer);
        return; /* its lease runs out and it is called again */
    }
    if (answer == NULL)
        answer = answer_json(0, NULL, err);
    int retry = ok ? 0 : d->tries >= HV_HOOK_ATTEMPTS ? -1 : 1 << (d->tries - 1);
    if (ok)
        hv_info("hook %lld (%s) %s: HTTP %ld", (long long)d->id, d->kind, d->url, status);
    else
        hv_warn("hook %lld (%s) %s, attempt %d: %s%s", (long long)d->id, d->kind, d->url,
                d->attempt, err, retry < 0 ? "; the hook failed" : "");
    hv_db_hook_done(d->id, d->attempt, ok, ok ? NULL : err, answer, retry);
    hv_write_gen_bump(); /* a plan read shows its hooks */
    free(answer);
}

static void *call_loop(void *arg)
{
    (void)arg;
    while (!stopping) {
        struct hv_hook_due due[BATCH];
        int n = 0;
        hv_db_hooks_take(due, BATCH, LOCK_SECONDS, &n);
        if (n > 0)
            hv_write_gen_bump(); /* taken hooks show as running */
        for (int i = 0; i < n; i++) {
            if (!stopping)
                call_one(&due[i]);
            hv_hook_due_clear(&due[i]);
        }
        if (n == 0)
            for (int t = 0; t < 10 && !stopping; t++)
                nanosleep(&(struct timespec){0, 100000000}, NULL);
    }
    return NULL;
}

int hv_hooks_start(void)
{
    stopping = 0;
    if (pthread_create(&caller, NULL, call_loop, NULL) != 0) {
        hv_error("cannot start the drain hooks' caller");
        return -1;
    }
    running = true;
    return 0;
}

void hv_hooks_stop(void)
{
    if (!running)
        return;
    stopping = 1;
    pthread_join(caller, NULL);
    running = false;
}
