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

/** The most requests hv_auth_resolve_many() looks up at once. */
#define HV_AUTH_MANY_MAX 64

/** For a route whose worker calls are batched (batch.h): when header holds
 *  a well-formed worker credential, keeps its hash in req->auth_hash and
 *  marks the request deferred (role worker, no worker yet) instead of
 *  looking it up; returns false otherwise (hv_auth_check() it then). */
bool hv_auth_defer(struct hv_request *req, const char *header);

/** Looks up the deferred credentials among the n requests in one
 *  statement, as hv_auth_check() would each: a valid one sets the worker,
 *  a refused one req->auth_refused and req->auth_detail. When the
 *  database cannot be asked, they stay deferred. */
void hv_auth_resolve_many(struct hv_request *const *reqs, size_t n);

/** What the credential of req came to: looked up now when still deferred,
 *  else what hv_auth_resolve_many() found (HV_AUTH_OK for a request that
 *  never was deferred). detail as for hv_auth_check(). */
enum hv_auth_result hv_auth_settle(struct hv_request *req, char *detail, size_t len);

/** Answers a refused credential (HV_AUTH_INVALID, HV_AUTH_ENDED with its
 *  detail, HV_AUTH_DB_ERROR) and returns true; false, answering nothing,
 *  for HV_AUTH_OK and HV_AUTH_NONE. */
bool hv_auth_reply_refusal(struct hv_request *req, enum hv_auth_result r, const char *detail);

/** Forgets every API token verified recently, so a token revoked through
 *  this server is refused at once. */
void hv_auth_forget_tokens(void);

#endif
