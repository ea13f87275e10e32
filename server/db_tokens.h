/* db_tokens.h — API tokens in the database (hashes only). */
#ifndef HV_SERVER_DB_TOKENS_H
#define HV_SERVER_DB_TOKENS_H

#include "db.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/** Finds the live token whose SHA-256 is hash_hex ("\\x..."); writes its
 *  role into role and its id into *id. HV_DB_NONE when unknown or
 *  revoked. */
enum hv_db_status hv_db_token_lookup(const char *hash_hex, char *role, size_t role_len,
                                     int64_t *id);

/** Stores a new token; *id (when not NULL) is its id. HV_DB_CONFLICT when
 *  the name is taken. */
enum hv_db_status hv_db_token_create(const char *name, const char *role, const char *hash_hex,
                                     int64_t *id);

/** Lists every token (never the hash) as a new JSON array in *out. */
enum hv_db_status hv_db_token_list(json_t **out);

/** Revokes the token called name. HV_DB_NONE when there is no live one. */
enum hv_db_status hv_db_token_revoke(const char *name);

/** Revokes token id (again is fine) and sets *entry to its new JSON entry
 *  {id, name, role, created_at, revoked_at}. HV_DB_NONE when unknown. */
enum hv_db_status hv_db_token_revoke_id(int64_t id, json_t **entry);

#endif
