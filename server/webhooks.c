/* webhooks.c — see webhooks.h. */
#include "webhooks.h"

#include "db_webhooks.h"
#include "httpc.h"
#include "log.h"
#include "metrics.h"

#include <gnutls/crypto.h>
#include <pthread.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH        8
#define LOCK_SECONDS 60
#define SEND_TIMEOUT 10

static pthread_t sender;
static bool running;
static volatile sig_atomic_t stopping;
static pthread_mutex_t wake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake_cond = PTHREAD_COND_INITIALIZER;
static bool woken;

void hv_webhooks_wake(void)
{
    pthread_mutex_lock(&wake_lock);
    woken = true;
    pthread_cond_signal(&wake_cond);
    pthread_mutex_unlock(&wake_lock);
}

int hv_webhook_signature(const char *secret, int64_t t, const char *body, size_t len, char *out,
                         size_t out_len)
{
    char prefix[32];
    int plen = snprintf(prefix, sizeof prefix, "%lld.", (long long)t);
    gnutls_hmac_hd_t h;
    unsigned char digest[32];
    if (gnutls_hmac_init(&h, GNUTLS_MAC_SHA256, secret, strlen(secret)) != 0)
        return -1;
    if (gnutls_hmac(h, prefix, (size_t)plen) != 0 || gnutls_hmac(h, body, len) != 0) {
        gnutls_hmac_deinit(h, NULL);
        return -1;
    }
    gnutls_hmac_deinit(h, digest);
    char hex[65];
    for (size_t i = 0; i < sizeof digest; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    return snprintf(out, out_len, "t=%lld,v1=%s", (long long)t, hex) < (int)out_len ? 0 : -1;
}

int hv_webhook_backoff(int attempts)
{
    if (attempts >= 12)
        return 3600;
    int s = 1 << (attempts < 1 ? 1 : attempts);
    return s > 3600 ? 3600 : s;
}

/* One attempt at one delivery, and its outcome recorded. */
static void send_one(const struct hv_webhook_due *d)
{
    struct hv_httpc *c = hv_httpc_new(d->url, NULL, SEND_TIMEOUT);
    char sig[128], err[300] = "";
    long status = 0;
    bool ok = false;
    if (c == NULL) {
        snprintf(err, sizeof err, "cannot make an HTTP client");
    } else {
        hv_httpc_set_abort_flag(c, &stopping);
        hv_httpc_set_public_only(c, !d->allow_private);
        size_t len = strlen(d->payload);
        char h_event[160], h_id[64], h_sig[160];
        if (hv_webhook_signature(d->secret, (int64_t)time(NULL), d->payload, len, sig,
                                 sizeof sig) != 0) {
            snprintf(err, sizeof err, "cannot sign the body");
        } else {
            snprintf(h_event, sizeof h_event, "Hvbench-Event: %s", d->event);
            snprintf(h_id, sizeof h_id, "Hvbench-Delivery: %lld", (long long)d->id);
            snprintf(h_sig, sizeof h_sig, "Hvbench-Signature: %s", sig);
            const char *headers[] = {h_event, h_id, h_sig, NULL};
            struct hv_http_response resp;
            int rc = hv_httpc_request_raw_headers(c, "POST", "", "application/json", d->payload,
                                                  len, headers, &resp);
            status = resp.status;
            ok = rc == 0 && status >= 200 && status < 300;
            if (rc != 0)
                snprintf(err, sizeof err, "%s", resp.error);
            else if (!ok)
                snprintf(err, sizeof err, "the receiver answered HTTP %ld", status);
            hv_http_response_clear(&resp);
        }
        hv_httpc_free(c);
    }
    if (stopping && !ok)
        return; /* its lock runs out and it is sent again */
    int retry = ok ? 0 : d->attempts >= HV_WEBHOOK_ATTEMPTS ? -1 : hv_webhook_backoff(d->attempts);
    hv_metrics_webhook(ok          ? HV_WEBHOOK_DELIVERED
                       : retry < 0 ? HV_WEBHOOK_GAVE_UP
                                   : HV_WEBHOOK_RETRY);
    if (ok)
        hv_info("webhook delivery %lld (%s) to %s: HTTP %ld", (long long)d->id, d->event, d->url,
                status);
    else
        hv_warn("webhook delivery %lld (%s) to %s, attempt %d: %s%s", (long long)d->id, d->event,
                d->url, d->attempts, err, retry < 0 ? "; given up" : "");
    hv_db_webhook_done(d->id, ok, status, ok ? NULL : err, retry);
}

/* Waits seconds, or until woken or stopped. */
static void pause_for(double seconds)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    double end = (double)until.tv_sec + (double)until.tv_nsec / 1e9 + seconds;
    until.tv_sec = (time_t)end;
    until.tv_nsec = (long)((end - (double)until.tv_sec) * 1e9);
    pthread_mutex_lock(&wake_lock);
    while (!woken && !stopping && pthread_cond_timedwait(&wake_cond, &wake_lock, &until) == 0)
        ;
    woken = false;
    pthread_mutex_unlock(&wake_lock);
}

static void *send_loop(void *arg)
{
    (void)arg;
    while (!stopping) {
        struct hv_webhook_due due[BATCH];
        int n = 0;
        if (hv_db_webhook_take(due, BATCH, LOCK_SECONDS, &n) != HV_DB_OK) {
            pause_for(2.0);
            continue;
        }
        for (int i = 0; i < n; i++) {
            if (!stopping)
                send_one(&due[i]);
            hv_webhook_due_clear(&due[i]);
        }
        if (n == 0)
            pause_for(hv_db_webhook_next_in(30.0));
    }
    return NULL;
}

int hv_webhooks_start(void)
{
    stopping = 0;
    if (pthread_create(&sender, NULL, send_loop, NULL) != 0) {
        hv_error("cannot start the webhook sender");
        return -1;
    }
    running = true;
    return 0;
}

void hv_webhooks_stop(void)
{
    if (!running)
        return;
    stopping = 1;
    hv_webhooks_wake();
    pthread_join(sender, NULL);
    running = false;
}
