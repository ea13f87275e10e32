/* auth.h — bearer tokens: making them, hashing them, checking them.
 *
 * A token is "hvb_" followed by 64 hex digits of randomness from the
 * kernel. Only its SHA-256 is stored, so a database leak reveals no token. */
#ifndef HV_SERVER_AUTH_H
#define HV_SERVER_AUTH_H

#include "request.h"

#include <stddef.h>

#define HV_TOKEN_LEN 68 /* "hvb_" + 64 hex digits; worker credentials "hvw_" + 64 */

/** The parsed name of a role ("admin" ...), or HV_ROLE_NONE. */
enum hv_role hv_role_parse(const char *s);

/** The name of a role ("none" for one out of range). */
const char *hv_role_name(enum hv_role r);

/** Writes a new random token (HV_TOKEN_LEN + 1 bytes) into out. Returns 0,
 *  or -1 when the system has no randomness to give. */
int hv_token_generate(char out[HV_TOKEN_LEN + 1]);

/** The same for a worker credential ("hvw_..."), which registration
 *  issues to each worker process. */
int hv_worker_credential_generate(char out[HV_TOKEN_LEN + 1]);

/** Writes the SHA-256 of token as PostgreSQL bytea hex ("\\x...", 67 bytes
 *  with the NUL) into out. */
void hv_token_hash_hex(const char *token, char out[67]);

/** Writes the SHA-256 of data[0..len) as 64 lowercase hex digits + NUL. */
void hv_sha256_hex(const void *data, size_t len, char out[65]);

/** Outcome of checking an Authorization header. */
enum hv_auth_result {
    HV_AUTH_NONE,     /**< no header: anonymous */
    HV_AUTH_OK,       /**< a valid token */
    HV_AUTH_INVALID,  /**< malformed, unknown or revoked token */
    HV_AUTH_ENDED,    /**< a worker credential whose worker ended (see detail) */
    HV_AUTH_DB_ERROR, /**< the database could not be asked */
};

/** Checks the Authorization header value (may be NULL) and sets req->role
 *  and req->token_id; a worker credential also sets req->worker_id and
 *  req->worker_target (role worker). On HV_AUTH_ENDED, detail (len bytes)
 *  says why the worker ended. An API token found valid is believed for a
 *  second without asking the database again (auth.c). */
enum hv_auth_result hv_auth_check(struct hv_request *req, const char *header, char *detail,
                                  size_t len);

/** Forgets every API token verified recently, so a token revoked through
 *  this server is refused at once. */
void hv_auth_forget_tokens(void);

#endif
