/* request.c — see request.h. */
#include "request.h"

#include "db.h"
#include "timeutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Drops an answer set before: the last one set is the one sent. */
static void reply_clear(struct hv_request *req)
{
    json_decref(req->reply);
    req->reply = NULL;
    free(req->text);
    req->text = NULL;
    hv_kept_text_free(req->kept);
    req->kept = NULL;
    req->fixed = NULL;
}

void hv_reply_fixed(struct hv_request *req, struct hv_fixed_answer *a)
{
    reply_clear(req);
    req->status = a->status;
    req->content_type = a->content_type;
    req->fixed = a;
}

void hv_reply_json(struct hv_request *req, unsigned status, json_t *body)
{
    reply_clear(req);
    req->status = status;
    req->reply = body;
    req->content_type = "application/json";
}

void hv_reply_text(struct hv_request *req, unsigned status, const char *content_type, char *text)
{
    reply_clear(req);
    req->status = status;
    req->text = text;
    req->content_type = content_type;
}

void hv_kept_text_free(struct hv_kept_text *k)
{
    if (k == NULL)
        return;
    if (k->release != NULL)
        k->release(k->owner);
    free(k);
}

void hv_reply_kept(struct hv_request *req, unsigned status, const struct hv_kept_text *k)
{
    struct hv_kept_text *copy = malloc(sizeof *copy);
    if (copy == NULL) {
        if (k->release != NULL)
            k->release(k->owner);
        hv_reply_problem(req, HV_E_INTERNAL, "out of memory", NULL);
        return;
    }
    *copy = *k;
    reply_clear(req);
    req->status = status;
    req->kept = copy;
    req->content_type = "application/json";
}

void hv_reply_problem(struct hv_request *req, enum hv_err code, const char *detail, json_t *errors)
{
    reply_clear(req);
    req->status = hv_err_info(code)->http_status;
    req->reply = hv_problem_new(code, detail, errors);
    req->content_type = "application/problem+json";
}

void hv_reply_db_failure(struct hv_request *req, int db_status)
{
    if (db_status == HV_DB_UNAVAILABLE)
        hv_reply_problem(req, HV_E_DB_UNAVAILABLE, "the database cannot be reached", NULL);
    else
        hv_reply_problem(req, HV_E_INTERNAL, "a database statement failed", NULL);
}

void hv_reply_one(struct hv_request *req, int db_status, json_t *obj, const char *what)
{
    if (db_status == HV_DB_OK) {
        hv_reply_json(req, 200, obj);
        return;
    }
    json_decref(obj);
    if (db_status == HV_DB_NONE)
        hv_reply_problem(req, HV_E_NOT_FOUND, what, NULL);
    else
        hv_reply_db_failure(req, db_status);
}

void hv_reply_items(struct hv_request *req, int db_status, json_t *items, const char *what)
{
    if (db_status == HV_DB_OK) {
        hv_reply_json(req, 200, json_pack("{s:o}", "items", items));
        return;
    }
    json_decref(items);
    if (db_status == HV_DB_NONE && what != NULL)
        hv_reply_problem(req, HV_E_NOT_FOUND, what, NULL);
    else
        hv_reply_db_failure(req, db_status);
}

void hv_reply_heartbeat(struct hv_request *req, int db_status, int lease_seconds, bool cancel,
                        const char *stale)
{
    if (db_status == HV_DB_NONE) {
        hv_reply_problem(req, HV_E_STALE_ATTEMPT, stale, NULL);
    } else if (db_status != HV_DB_OK) {
        hv_reply_db_failure(req, db_status);
    } else {
        char now[32];
        hv_now_iso8601(now, sizeof now);
        hv_reply_json(req, 200,
                      json_pack("{s:i,s:b,s:s}", "lease_seconds", lease_seconds, "cancel", cancel,
                                "server_time", now));
    }
}

json_t *hv_req_json(struct hv_request *req)
{
    json_error_t err;
    if (req->body_len == 0) {
        hv_reply_problem(req, HV_E_BAD_JSON, "the request has no body", NULL);
        return NULL;
    }
    json_t *doc = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &err);
    if (doc == NULL) {
        char detail[512];
        snprintf(detail, sizeof detail, "line %d, column %d: %s", err.line, err.column, err.text);
        hv_reply_problem(req, HV_E_BAD_JSON, detail, NULL);
    }
    return doc;
}

bool hv_req_fits(struct hv_request *req, const json_t *doc, const struct hv_jfield *fields,
                 void *dest, hv_body_check_fn *more, const char *detail)
{
    json_t *errors = json_array();
    hv_jspec_parse(doc, "", fields, dest, errors);
    if (more != NULL && json_is_object(doc))
        more(doc, dest, errors);
    if (json_array_size(errors) > 0) {
        hv_reply_problem(req, HV_E_INVALID_REQUEST, detail, errors);
        return false;
    }
    json_decref(errors);
    return true;
}

json_t *hv_req_body(struct hv_request *req, const struct hv_jfield *fields, void *dest,
                    hv_body_check_fn *more, const char *detail)
{
    json_t *doc = hv_req_json(req);
    if (doc != NULL && !hv_req_fits(req, doc, fields, dest, more, detail)) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

int hv_req_kv_add(struct hv_kv_list *list, const char *key, const char *value)
{
    if (list->n == list->cap) {
        size_t cap = list->cap ? list->cap * 2 : 16;
        const char **items = realloc(list->items, cap * 2 * sizeof *items);
        if (items == NULL)
            return -1;
        list->items = items;
        list->cap = cap;
    }
    list->items[2 * list->n] = key;
    list->items[2 * list->n + 1] = value;
    list->n++;
    return 0;
}

/* The first value of key in list; names compared as cmp does. */
static const char *kv_find(const struct hv_kv_list *list, const char *key,
                           int (*cmp)(const char *, const char *))
{
    for (size_t i = 0; i < list->n; i++)
        if (list->items[2 * i] != NULL && cmp(list->items[2 * i], key) == 0)
            return list->items[2 * i + 1];
    return NULL;
}

const char *hv_req_query(struct hv_request *req, const char *key)
{
    return kv_find(&req->query, key, strcmp);
}

const char *hv_req_header(struct hv_request *req, const char *name)
{
    return kv_find(&req->headers, name, strcasecmp);
}

void hv_request_free(struct hv_request *req)
{
    if (req == NULL)
        return;
    free(req->body);
    json_decref(req->reply);
    json_decref(req->batch_job);
    if (req->batch_item != NULL && req->batch_item_free != NULL)
        req->batch_item_free(req->batch_item);
    free(req->text);
    hv_kept_text_free(req->kept);
    free(req->query.items);
    free(req->headers.items);
    free(req);
}

void hv_reply_page(struct hv_request *req, json_t *items, long limit, const char *key)
{
    json_t *next = json_null();
    if (json_array_size(items) > (size_t)limit) {
        json_array_remove(items, (size_t)limit);
        char c[24];
        snprintf(c, sizeof c, "%lld",
                 (long long)json_integer_value(
                     json_object_get(json_array_get(items, (size_t)limit - 1), key)));
        next = json_string(c);
    }
    hv_reply_json(req, 200, json_pack("{s:o,s:o}", "items", items, "next_cursor", next));
}
