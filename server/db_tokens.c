/* db_tokens.c — see db_tokens.h. */
#include "db_tokens.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static const struct hv_stmt lookup = {
    "token_lookup", "SELECT role, id FROM tokens WHERE hash = $1::bytea AND revoked_at IS NULL", 1};
static const struct hv_stmt create = {
    "token_create", "INSERT INTO tokens (name, role, hash) VALUES ($1, $2, $3::bytea) RETURNING id",
    3};
static const struct hv_stmt list = {
    "token_list",
    "SELECT coalesce(json_agg(json_build_object('id', id, 'name', name, 'role', role, "
    "'created_at', created_at, 'revoked_at', revoked_at) ORDER BY id), '[]')::text FROM tokens",
    0};
static const struct hv_stmt revoke = {
    "token_revoke", "UPDATE tokens SET revoked_at = now() WHERE name = $1 AND revoked_at IS NULL",
    1};

static const struct hv_stmt revoke_id = {
    "token_revoke_id",
    "UPDATE tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 "
    "RETURNING json_build_object('id', id, 'name', name, 'role', role, 'created_at', "
    "created_at, 'revoked_at', revoked_at)::text",
    1};

enum hv_db_status hv_db_token_revoke_id(int64_t id, json_t **entry)
{
    char idtxt[24];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id)};
    return hv_db_json(&revoke_id, params, entry, NULL);
}

enum hv_db_status hv_db_token_lookup(const char *hash_hex, char *role, size_t role_len, int64_t *id)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    PGresult *r;
    const char *params[] = {hash_hex};
    enum hv_db_status s = hv_db_exec(db, &lookup, params, &r);
    if (s == HV_DB_OK) {
        snprintf(role, role_len, "%s", PQgetvalue(r, 0, 0));
        *id = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
    }
    PQclear(r);
    return s;
}

enum hv_db_status hv_db_token_create(const char *name, const char *role, const char *hash_hex,
                                     int64_t *id)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    const char *params[] = {name, role, hash_hex};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &create, params, &r);
    if (s == HV_DB_OK && id != NULL)
        *id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return s;
}

enum hv_db_status hv_db_token_list(json_t **out)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &list, NULL, &r);
    if (s == HV_DB_OK)
        *out = json_loads(PQgetvalue(r, 0, 0), 0, NULL);
    PQclear(r);
    return s == HV_DB_OK && *out == NULL ? HV_DB_ERROR : s;
}

enum hv_db_status hv_db_token_revoke(const char *name)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    const char *params[] = {name};
    return hv_db_exec(db, &revoke, params, NULL);
}
