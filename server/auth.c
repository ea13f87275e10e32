/* auth.c — see auth.h. gnutls comes with libmicrohttpd; its hash and
 * random generator spare a separate crypto library. */
#include "auth.h"

#include "db_tokens.h"
#include "db_workers.h"

#include "timeutil.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* API tokens verified in the last second, so a dashboard or script
 * polling the API does not cost a database lookup per request. An entry
 * lives HV_TOKEN_CACHE_NS at most: a token revoked through another server
 * or `hvbench-server token revoke` is refused within that time, and one
 * revoked through this server's API at once (hv_auth_forget_tokens()).
 * Worker credentials are not kept: a registration that ends must refuse
 * its credential on the next call (a batched call's credential is looked
 * up with its batch, hv_auth_resolve_many). Only valid tokens are kept. */
#define TOKEN_CACHE_SLOTS 64
#define HV_TOKEN_CACHE_NS 1000000000ull

struct cached_token {
    char hash[67]; /* "" : empty slot */
    enum hv_role role;
    int64_t id;
    uint64_t expires_ns; /* hv_monotonic_ns() */
};

static struct cached_token token_cache[TOKEN_CACHE_SLOTS];
static pthread_mutex_t token_cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* The slot of a hash: its first hex digits after "\\x". */
static size_t cache_slot(const char *hash)
{
    size_t h = 0;
    for (const char *p = hash + 2; p < hash + 10 && *p != '\0'; p++)
        h = h * 16 + (size_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
    return h % TOKEN_CACHE_SLOTS;
}

static bool cache_get(const char *hash, enum hv_role *role, int64_t *id)
{
    bool hit = false;
    struct cached_token *c = &token_cache[cache_slot(hash)];
    pthread_mutex_lock(&token_cache_lock);
    if (strcmp(c->hash, hash) == 0 && hv_monotonic_ns() < c->expires_ns) {
        *role = c->role;
        *id = c->id;
        hit = true;
    }
    pthread_mutex_unlock(&token_cache_lock);
    return hit;
}

static void cache_put(const char *hash, enum hv_role role, int64_t id)
{
    struct cached_token *c = &token_cache[cache_slot(hash)];
    pthread_mutex_lock(&token_cache_lock);
    snprintf(c->hash, sizeof c->hash, "%s", hash);
    c->role = role;
    c->id = id;
    c->expires_ns = hv_monotonic_ns() + HV_TOKEN_CACHE_NS;
    pthread_mutex_unlock(&token_cache_lock);
}

void hv_auth_forget_tokens(void)
{
    pthread_mutex_lock(&token_cache_lock);
    memset(token_cache, 0, sizeof token_cache);
    pthread_mutex_unlock(&token_cache_lock);
}

static const char *const role_names[] = {
    [HV_ROLE_NONE] = "none",     [HV_ROLE_READ] = "read",   [HV_ROLE_WORKER] = "worker",
    [HV_ROLE_SUBMIT] = "submit", [HV_ROLE_ADMIN] = "admin",
};

enum hv_role hv_role_parse(const char *s)
{
    for (int r = HV_ROLE_READ; r <= HV_ROLE_ADMIN; r++)
        if (s != NULL && strcmp(s, role_names[r]) == 0)
            return (enum hv_role)r;
    return HV_ROLE_NONE;
}

const char *hv_role_name(enum hv_role r)
{
    return (unsigned)r <= HV_ROLE_ADMIN ? role_names[r] : "none";
}

/* prefix (4 bytes) + 64 hex digits of the kernel's randomness. */
static int random_secret(const char *prefix, char out[HV_TOKEN_LEN + 1])
{
    unsigned char raw[32];
    if (gnutls_rnd(GNUTLS_RND_KEY, raw, sizeof raw) != 0)
        return -1;
    memcpy(out, prefix, 4);
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(out + 4 + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

int hv_token_generate(char out[HV_TOKEN_LEN + 1])
{
    return random_secret("hvb_", out);
}

int hv_worker_credential_generate(char out[HV_TOKEN_LEN + 1])
{
    return random_secret("hvw_", out);
}

/* What a lookup of a worker credential (s, w) says of req. */
static enum hv_auth_result apply_worker(struct hv_request *req, enum hv_db_status s,
                                        const struct hv_worker_session *w, char *detail, size_t len)
{
    switch (s) {
    case HV_DB_OK:
        break;
    case HV_DB_NONE:
        return HV_AUTH_INVALID;
    default:
        return HV_AUTH_DB_ERROR;
    }
    if (w->ended) {
        snprintf(detail, len, "this worker's registration has ended (%s); register again",
                 w->ended_reason);
        return HV_AUTH_ENDED;
    }
    req->role = HV_ROLE_WORKER;
    req->token_id = w->token_id;
    req->worker_id = w->id;
    req->worker_target = w->target_id;
    return HV_AUTH_OK;
}

/* A worker credential: the worker it names, and through it the target. */
static enum hv_auth_result check_worker(struct hv_request *req, const char *hash, char *detail,
                                        size_t len)
{
    struct hv_worker_session w;
    enum hv_db_status s = hv_db_worker_lookup(hash, &w);
    return apply_worker(req, s, &w, detail, len);
}

/* The token of an Authorization header value, or NULL when the header is
 * not a bearer token of the right length and prefix. */
static const char *bearer(const char *header, bool *worker)
{
    if (header == NULL || strncasecmp(header, "Bearer ", 7) != 0)
        return NULL;
    const char *token = header + 7;
    while (*token == ' ')
        token++;
    *worker = strncmp(token, "hvw_", 4) == 0;
    if (strlen(token) != HV_TOKEN_LEN || (!*worker && strncmp(token, "hvb_", 4) != 0))
        return NULL;
    return token;
}

bool hv_auth_defer(struct hv_request *req, const char *header)
{
    bool worker = false;
    const char *token = bearer(header, &worker);
    if (token == NULL || !worker)
        return false;
    hv_token_hash_hex(token, req->auth_hash);
    req->auth_deferred = true;
    req->auth_refused = 0;
    req->role = HV_ROLE_WORKER;
    req->token_id = 0;
    req->worker_id = req->worker_target = 0;
    return true;
}

void hv_auth_resolve_many(struct hv_request *const *reqs, size_t n)
{
    const char *hashes[HV_AUTH_MANY_MAX];
    struct hv_request *which[HV_AUTH_MANY_MAX];
    struct hv_worker_session w[HV_AUTH_MANY_MAX];
    bool found[HV_AUTH_MANY_MAX];
    size_t m = 0;
    for (size_t i = 0; i < n && m < HV_AUTH_MANY_MAX; i++) {
        if (reqs[i]->auth_deferred) {
            which[m] = reqs[i];
            hashes[m++] = reqs[i]->auth_hash;
        }
    }
    if (m == 0 || hv_db_worker_lookup_many(hashes, m, w, found) != HV_DB_OK)
        return; /* each looks itself up alone (hv_auth_settle) */
    for (size_t i = 0; i < m; i++) {
        struct hv_request *req = which[i];
        enum hv_auth_result r = apply_worker(req, found[i] ? HV_DB_OK : HV_DB_NONE, &w[i],
                                             req->auth_detail, sizeof req->auth_detail);
        req->auth_refused = r == HV_AUTH_OK ? 0 : (int)r;
        req->auth_deferred = false;
    }
}

bool hv_auth_reply_refusal(struct hv_request *req, enum hv_auth_result r, const char *detail)
{
    switch (r) {
    case HV_AUTH_INVALID:
        hv_reply_problem(req, HV_E_UNAUTHORIZED, "the token is malformed, unknown or revoked",
                         NULL);
        return true;
    case HV_AUTH_ENDED:
        hv_reply_problem(req, HV_E_UNAUTHORIZED, detail, NULL);
        return true;
    case HV_AUTH_DB_ERROR:
        hv_reply_problem(req, HV_E_DB_UNAVAILABLE, "tokens cannot be checked", NULL);
        return true;
    case HV_AUTH_NONE:
    case HV_AUTH_OK:
        break;
    }
    return false;
}

enum hv_auth_result hv_auth_settle(struct hv_request *req, char *detail, size_t len)
{
    if (req->auth_deferred) {
        req->auth_deferred = false;
        enum hv_auth_result r = check_worker(req, req->auth_hash, detail, len);
        req->auth_refused = r == HV_AUTH_OK ? 0 : (int)r;
        return r;
    }
    if (req->auth_refused == 0)
        return HV_AUTH_OK;
    snprintf(detail, len, "%s", req->auth_detail);
    return (enum hv_auth_result)req->auth_refused;
}

void hv_token_hash_hex(const char *token, char out[67])
{
    unsigned char digest[32];
    gnutls_hash_fast(GNUTLS_DIG_SHA256, token, strlen(token), digest);
    memcpy(out, "\\x", 2);
    for (size_t i = 0; i < sizeof digest; i++)
        snprintf(out + 2 + 2 * i, 3, "%02x", digest[i]);
}

void hv_sha256_hex(const void *data, size_t len, char out[65])
{
    unsigned char digest[32];
    gnutls_hash_fast(GNUTLS_DIG_SHA256, data, len, digest);
    for (size_t i = 0; i < sizeof digest; i++)
        snprintf(out + 2 * i, 3, "%02x", digest[i]);
}

enum hv_auth_result hv_auth_check(struct hv_request *req, const char *header, char *detail,
                                  size_t len)
{
    req->role = HV_ROLE_NONE;
    req->token_id = 0;
    req->worker_id = req->worker_target = 0;
    if (header == NULL)
        return HV_AUTH_NONE;
    bool worker = false;
    const char *token = bearer(header, &worker);
    if (token == NULL)
        return HV_AUTH_INVALID;
    char hash[67];
    hv_token_hash_hex(token, hash);
    if (worker)
        return check_worker(req, hash, detail, len);
    if (cache_get(hash, &req->role, &req->token_id))
        return HV_AUTH_OK;
    char role[16];
    switch (hv_db_token_lookup(hash, role, sizeof role, &req->token_id)) {
    case HV_DB_OK:
        req->role = hv_role_parse(role);
        if (req->role == HV_ROLE_NONE)
            return HV_AUTH_INVALID;
        cache_put(hash, req->role, req->token_id);
        return HV_AUTH_OK;
    case HV_DB_NONE:
        return HV_AUTH_INVALID;
    default:
        return HV_AUTH_DB_ERROR;
    }
}
