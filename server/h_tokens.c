/* h_tokens.c — token administration over the API (role admin). */
#include "auth.h"
#include "db_tokens.h"
#include "handlers.h"
#include "jspec.h"

static const char *const roles[] = {"admin", "submit", "worker", "read", NULL};

/* A token request's body, bound by create_fields. */
struct token_body {
    const char *name, *role;
};

#define TO(field) HV_JTO(struct token_body, field)

static const struct hv_jfield create_fields[] = {
    {.name = "name", .type = HV_J_STRING, .required = true, .max_len = 128, TO(name)},
    {.name = "role", .type = HV_J_STRING, .required = true, .choices = roles, TO(role)},
    {0},
};

/* A name that is not empty, once the members are checked. */
static void check_name(const json_t *doc, const void *dest, json_t *errors)
{
    const struct token_body *b = dest;
    if (json_array_size(errors) == 0 && b->name[0] == '\0')
        hv_errors_add(errors, "/name", "must not be empty");
}

void hv_h_tokens_create(struct hv_request *req)
{
    struct token_body b = {0};
    json_t *doc = hv_req_body(req, create_fields, &b, check_name, "bad token request");
    if (doc == NULL)
        return;
    const char *name = b.name, *role = b.role;
    char token[HV_TOKEN_LEN + 1], hash[67];
    if (hv_token_generate(token) != 0) {
        hv_reply_problem(req, HV_E_INTERNAL, "no randomness available", NULL);
        json_decref(doc);
        return;
    }
    hv_token_hash_hex(token, hash);
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
    hv_reply_items(req, s, items, NULL);
}

void hv_h_token_revoke(struct hv_request *req)
{
    json_t *entry = NULL;
    enum hv_db_status s = hv_db_token_revoke_id(req->ids[0], &entry);
    if (s == HV_DB_OK)
        hv_auth_forget_tokens();
    hv_reply_one(req, s, entry, "no token with this id");
}
