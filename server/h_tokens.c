/* h_tokens.c — token administration over the API (role admin). */
#include "auth.h"
#include "db_tokens.h"
#include "handlers.h"
#include "jspec.h"

static const char *const roles[] = {"admin", "submit", "worker", "read", NULL};

static const struct hv_jfield create_fields[] = {
    {.name = "name", .type = HV_J_STRING, .required = true, .max_len = 128},
    {.name = "role", .type = HV_J_STRING, .required = true, .choices = roles},
    {0},
};

void hv_h_tokens_create(struct hv_request *req)
{
    json_t *doc = hv_req_json(req);
    if (doc == NULL)
        return;
    json_t *errors = json_array();
    const char *name = json_string_value(json_object_get(doc, "name"));
    if (hv_jspec_check(doc, "", create_fields, errors) == 0 && name[0] == '\0')
        hv_errors_add(errors, "/name", "must not be empty");
    if (json_array_size(errors) > 0) {
        hv_reply_problem(req, HV_E_INVALID_REQUEST, "bad token request", errors);
        json_decref(doc);
        return;
    }
    json_decref(errors);
    char token[HV_TOKEN_LEN + 1], hash[67];
    if (hv_token_generate(token) != 0) {
        hv_reply_problem(req, HV_E_INTERNAL, "no randomness available", NULL);
        json_decref(doc);
        return;
    }
    hv_token_hash_hex(token, hash);
    const char *role = json_string_value(json_object_get(doc, "role"));
    int64_t id = 0;
    enum hv_db_status s = hv_db_token_create(name, role, hash, &id);
    if (s == HV_DB_CONFLICT) {
        hv_reply_problem(req, HV_E_CONFLICT, "a token with this name exists", NULL);
    } else if (s != HV_DB_OK) {
        hv_reply_db_failure(req, s);
    } else {
        hv_reply_json(req, 201,
                      json_pack("{s:I,s:s,s:s,s:s}", "id", (json_int_t)id, "name", name, "role",
                                role, "token", token));
    }
    json_decref(doc);
}

void hv_h_tokens_list(struct hv_request *req)
{
    json_t *items = NULL;
    enum hv_db_status s = hv_db_token_list(&items);
    if (s != HV_DB_OK)
        hv_reply_db_failure(req, s);
    else
        hv_reply_json(req, 200, json_pack("{s:o}", "items", items));
}

void hv_h_token_revoke(struct hv_request *req)
{
    json_t *entry = NULL;
    enum hv_db_status s = hv_db_token_revoke_id(req->ids[0], &entry);
    hv_reply_one(req, s, entry, "no token with this id");
}
