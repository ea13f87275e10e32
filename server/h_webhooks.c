/* h_webhooks.c — webhook subscriptions over the API (role admin): create
 * (the signing secret is shown once), list, read with delivery counts,
 * delete, the delivery log, and a ping to try a receiver. */
#include "db_webhooks.h"
#include "handlers.h"
#include "webhooks.h"
#include "jspec.h"
#include "query.h"

#include <gnutls/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The events a subscription may name (docs/api.md, "Webhooks"). */
static const char *const events[] = {"plan.started",
                                     "plan.finished",
                                     "plan.failed",
                                     "plan.cancelled",
                                     "changepoint.new",
                                     "worker.lost",
                                     "recommendation.verdict",
                                     "ping",
                                     NULL};

#define URL_MAX 2048

/* A subscription's body, bound by create_fields. */
struct hook_body {
    const char *url, *description;
    const json_t *events;
    bool allow_private;
};

#define TO(field) HV_JTO(struct hook_body, field)

static const struct hv_jfield create_fields[] = {
    {.name = "url", .type = HV_J_STRING, .required = true, .max_len = URL_MAX, TO(url)},
    {.name = "events", .type = HV_J_ARRAY, .required = true, .max_len = 16, TO(events)},
    {.name = "description", .type = HV_J_STRING, .max_len = 256, TO(description), .def_str = ""},
    {.name = "allow_private", .type = HV_J_BOOL, TO(allow_private)},
    {0},
};

/* An http(s) URL with a host, no credentials, no blanks or controls. */
const char *hv_webhook_url_problem(const char *url)
{
    const char *rest = strncmp(url, "http://", 7) == 0    ? url + 7
                       : strncmp(url, "https://", 8) == 0 ? url + 8
                                                          : NULL;
    if (rest == NULL)
        return "must be an http:// or https:// URL";
    if (*rest == '\0' || *rest == '/' || *rest == '?' || *rest == '#')
        return "has no host";
    for (const unsigned char *p = (const unsigned char *)url; *p != '\0'; p++)
        if (*p <= ' ' || *p == 0x7f)
            return "must not contain blanks or control characters";
    size_t host_len = strcspn(rest, "/?#");
    if (memchr(rest, '@', host_len) != NULL)
        return "must not carry credentials (user@host)";
    return NULL;
}

static bool known_event(const char *e)
{
    for (const char *const *k = events; *k != NULL; k++)
        if (strcmp(*k, e) == 0)
            return true;
    return false;
}

/* The events as a PostgreSQL array literal, each once, after checking
 * them; NULL (with errors added) when one is wrong. */
static char *event_array(const json_t *list, json_t *errors)
{
    size_t n = json_array_size(list);
    if (n == 0) {
        hv_errors_add(errors, "/events", "must name at least one event");
        return NULL;
    }
    const char *names[16];
    size_t k = 0;
    for (size_t i = 0; i < n && i < 16; i++) {
        const char *e = json_string_value(json_array_get(list, i));
        char path[32];
        snprintf(path, sizeof path, "/events/%zu", i);
        if (e == NULL || !known_event(e)) {
            hv_errors_add(errors, path,
                          "unknown event: plan.started, plan.finished, plan.failed, "
                          "plan.cancelled, changepoint.new, worker.lost, recommendation.verdict or "
                          "ping");
            continue;
        }
        bool seen = false;
        for (size_t j = 0; j < k; j++)
            seen |= strcmp(names[j], e) == 0;
        if (!seen)
            names[k++] = e;
    }
    return json_array_size(errors) > 0 ? NULL : hv_db_text_array(names, k);
}

static int new_secret(char out[69])
{
    unsigned char raw[32];
    if (gnutls_rnd(GNUTLS_RND_KEY, raw, sizeof raw) != 0)
        return -1;
    memcpy(out, "hvs_", 4);
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(out + 4 + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

void hv_h_webhooks_create(struct hv_request *req)
{
    json_t *doc = hv_req_json(req);
    if (doc == NULL)
        return;
    json_t *errors = json_array();
    char *ev = NULL;
    struct hook_body b = {0};
    if (hv_jspec_parse(doc, "", create_fields, &b, errors) == 0) {
        const char *why = hv_webhook_url_problem(b.url);
        if (why != NULL)
            hv_errors_add(errors, "/url", "%s", why);
        ev = event_array(b.events, errors);
    }
    if (json_array_size(errors) > 0) {
        hv_reply_problem(req, HV_E_INVALID_REQUEST, "bad webhook subscription", errors);
        free(ev);
        json_decref(doc);
        return;
    }
    json_decref(errors);
    char secret[69];
    if (ev == NULL || new_secret(secret) != 0) {
        hv_reply_problem(req, HV_E_INTERNAL, "cannot make the subscription's secret", NULL);
        free(ev);
        json_decref(doc);
        return;
    }
    json_t *hook = NULL;
    enum hv_db_status s = hv_db_webhook_create(b.url, ev, b.description, secret, b.allow_private,
                                               req->token_id, &hook);
    free(ev);
    json_decref(doc);
    if (s != HV_DB_OK) {
        hv_reply_db_failure(req, s);
        return;
    }
    json_object_set_new(hook, "secret", json_string(secret));
    hv_reply_json(req, 201, hook);
}

void hv_h_webhooks_list(struct hv_request *req)
{
    json_t *items = NULL;
    enum hv_db_status s = hv_db_webhook_list(&items);
    hv_reply_items(req, s, items, NULL);
}

/* The answer of a lookup of one subscription by id. */
static void reply_hook(struct hv_request *req, enum hv_db_status s, json_t *body, unsigned status)
{
    if (s == HV_DB_NONE)
        hv_reply_problem(req, HV_E_NOT_FOUND, "no webhook subscription with this id", NULL);
    else if (s != HV_DB_OK)
        hv_reply_db_failure(req, s);
    else
        hv_reply_json(req, status, body);
}

void hv_h_webhook_get(struct hv_request *req)
{
    json_t *hook = NULL;
    enum hv_db_status s = hv_db_webhook_get(req->ids[0], &hook);
    reply_hook(req, s, hook, 200);
}

void hv_h_webhook_delete(struct hv_request *req)
{
    json_t *hook = NULL;
    enum hv_db_status s = hv_db_webhook_delete(req->ids[0], &hook);
    reply_hook(req, s, hook, 200);
}

void hv_h_webhook_ping(struct hv_request *req)
{
    json_t *queued = NULL;
    enum hv_db_status s = hv_db_webhook_ping(req->ids[0], &queued);
    reply_hook(req, s, queued, 202);
}

void hv_h_webhook_deliveries(struct hv_request *req)
{
    json_t *errors = json_array();
    long limit = 50, before = 0;
    hv_query_int(req, "limit", 1, 1000, 50, &limit, errors);
    hv_query_int(req, "before", 1, 0x7fffffffffffffffL, 0, &before, errors);
    if (hv_query_failed(req, errors))
        return;
    json_t *items = NULL;
    enum hv_db_status s = hv_db_webhook_deliveries(req->ids[0], (int)limit, before, &items);
    reply_hook(req, s, s == HV_DB_OK ? json_pack("{s:o}", "items", items) : NULL, 200);
}
