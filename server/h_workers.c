/* h_workers.c — worker registration: each worker process gets a
 * credential of its own bound to one target (db_workers.h); signing off;
 * an admin freeing a target whose worker is gone. */
#include "auth.h"
#include "config.h"
#include "db_recommendations.h"
#include "db_targets.h"
#include "db_workers.h"
#include "factors.h"
#include "errors.h"
#include "handlers.h"
#include "selector.h"
#include "hv_build.h"
#include "protocol.h"
#include "routes.h"
#include "jspec.h"
#include "log.h"
#include "result.h"
#include "site_bench.h"
#include "timeutil.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const target_kinds[] = {"host", "guest", NULL};

/* A registration's body, bound by register_fields. */
struct register_body {
    const char *name, *kind, *version, *host, *boot_id;
    const json_t *facts, *fingerprint, *labels, *held, *settings;
    int64_t protocol;
};

#define TO(field) HV_JTO(struct register_body, field)

static const struct hv_jfield register_fields[] = {
    {.name = "name", .type = HV_J_STRING, .required = true, .max_len = 128, TO(name)},
    {.name = "kind", .type = HV_J_STRING, .required = true, .choices = target_kinds, TO(kind)},
    {.name = "facts", .type = HV_J_OBJECT, .required = true, TO(facts)},
    {.name = "fingerprint", .type = HV_J_STRING, .max_len = 128, TO(fingerprint)},
    {.name = "version", .type = HV_J_STRING, .max_len = 64, TO(version)},
    {.name = "labels", .type = HV_J_OBJECT, TO(labels)},
    /* A guest's host, as its host worker registered it. */
    {.name = "host", .type = HV_J_STRING, .max_len = 128, TO(host)},
    /* The boot of the worker's machine (Linux: /proc/sys/kernel/random/boot_id). */
    {.name = "boot_id", .type = HV_J_STRING, .max_len = 64, TO(boot_id)},
    /* A worker process's first registration: the attempts whose results it
     * kept from an earlier run of it (the others of its credential died). */
    {.name = "held", .type = HV_J_ARRAY, .max_len = 10000, TO(held)},
    /* A host worker's host settings as it read them (POST
     * /api/v1/workers/settings takes the later ones). */
    {.name = "settings", .type = HV_J_OBJECT, TO(settings)},
    /* Workers before protocol versions sent none: they speak version 1. */
    {.name = "protocol", .type = HV_J_INTEGER, .min = 1, .max = 1e6, TO(protocol)},
    {0},
};

/* An entry of a registration's held list. */
static const struct hv_jfield held_fields[] = {
    {.name = "job_id", .type = HV_J_INTEGER, .required = true, .min = 1, .max = 9e15},
    {.name = "attempt", .type = HV_J_INTEGER, .required = true, .min = 1, .max = 1e9},
    {0},
};

/* facts.site_factors, when there: {NAME: {"levels": [strings], "class":
 * "host"}}, names and levels as worker configurations spell them. */
static void check_site_factors(const json_t *sf, json_t *errors)
{
    char p[300], lp[360];
    if (sf == NULL)
        return;
    if (!json_is_object(sf) || json_object_size(sf) > 64) {
        hv_errors_add(errors, "/facts/site_factors", "must be an object of at most 64 factors");
        return;
    }
    const char *name;
    const json_t *d;
    json_object_foreach((json_t *)sf, name, d)
    {
        hv_jpath(p, sizeof p, "/facts/site_factors", name);
        const char *why = hv_site_name_problem(name);
        const json_t *levels = json_object_get(d, "levels");
        if (why != NULL) {
            hv_errors_add(errors, p, "the site factor name %s", why);
            continue;
        }
        if (!json_is_array(levels) || json_array_size(levels) == 0 ||
            json_array_size(levels) > 64 || !json_is_string(json_object_get(d, "class"))) {
            hv_errors_add(errors, p, "must hold \"levels\" (1 to 64 strings) and \"class\"");
            continue;
        }
        for (size_t i = 0; i < json_array_size(levels); i++) {
            const json_t *l = json_array_get(levels, i);
            why = json_is_string(l) ? hv_site_level_problem(json_string_value(l))
                                    : "must be a string";
            if (why != NULL) {
                snprintf(lp, sizeof lp, "%s/levels/%zu", p, i);
                hv_errors_add(errors, lp, "%s", why);
            }
        }
    }
}

/* A boot id as Linux writes it (a UUID) or any other 1 to 64 letters,
 * digits and dashes. */
static bool boot_id_ok(const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '-')
            return false;
    return n > 0;
}

/* The labels, the site benchmarks the facts declare, and a name that is
 * not empty, once the members are checked. */
static void check_registration(const json_t *doc, const void *dest, json_t *errors)
{
    const struct register_body *b = dest;
    if (json_array_size(errors) > 0)
        return;
    hv_jspec_check_labels(b->labels, "/labels", errors);
    hv_site_bench_check_decl(json_object_get(b->facts, "benchmarks"), "/facts/benchmarks", errors);
    check_site_factors(json_object_get(b->facts, "site_factors"), errors);
    if (json_array_size(errors) == 0 && b->name[0] == '\0')
        hv_errors_add(errors, "/name", "must not be empty");
    /* "/" parts a guest's host from its name (HOST/GUEST). */
    if (json_array_size(errors) == 0 && strchr(b->name, '/') != NULL)
        hv_errors_add(errors, "/name", "must not hold \"/\"");
    if (b->host != NULL && (b->host[0] == '\0' || strchr(b->host, '/') != NULL))
        hv_errors_add(errors, "/host", "must be a host's name (not empty, no \"/\")");
    if (b->host != NULL && strcmp(b->kind, "guest") != 0)
        hv_errors_add(errors, "/host", "only a guest names its host");
    hv_factor_settings_check(b->settings, "/settings", errors);
    if (b->settings != NULL && strcmp(b->kind, "host") != 0)
        hv_errors_add(errors, "/settings", "only a host's worker reports host settings");
    if (b->boot_id != NULL && !boot_id_ok(b->boot_id))
        hv_errors_add(errors, "/boot_id", "must be 1 to 64 of 0-9 a-z A-Z and \"-\"");
    size_t i;
    const json_t *h;
    char path[64];
    json_array_foreach(b->held, i, h)
    {
        hv_jpath_index(path, sizeof path, "/held", i);
        hv_jspec_check(h, path, held_fields, errors);
    }
}

/* What the server accepts in a result upload, so a worker can fit its
 * results to it before sending (docs/worker.md). */
static json_t *limits_json(void)
{
    size_t body = hv_route_body_limit("POST", "/api/v1/jobs/1/result");
    return json_pack("{s:I,s:I,s:I,s:I}", "max_result_bytes", (json_int_t)body, "max_samples",
                     (json_int_t)HV_RESULT_MAX_SAMPLES, "max_raw_bytes",
                     (json_int_t)HV_RESULT_MAX_RAW, "max_metrics",
                     (json_int_t)HV_RESULT_MAX_METRICS);
}

/* 409 naming the worker that holds the target and how to free it. */
static void reply_held(struct hv_request *req, const char *name,
                       const struct hv_worker_registered *out)
{
    char detail[512];
    if (out->wrong_target)
        snprintf(detail, sizeof detail,
                 "this worker credential holds another target than \"%s\"; register with the "
                 "worker token to hold a new one",
                 name);
    else if (out->holder_id == 0)
        snprintf(detail, sizeof detail,
                 "another worker registered \"%s\" at the same moment; try again", name);
    else
        snprintf(detail, sizeof detail,
                 "target \"%s\" is held by worker %lld (last seen %.0f s ago%s); stop that "
                 "worker, or free the target: POST /api/v1/targets/{id}/free (admin)",
                 name, (long long)out->holder_id, out->holder_idle,
                 out->holder_busy ? ", running a job" : "");
    hv_reply_problem(req, HV_E_TARGET_HELD, detail, NULL);
}

void hv_h_worker_register(struct hv_request *req)
{
    struct register_body b = {0};
    json_t *doc = hv_req_body(req, register_fields, &b, check_registration, "bad registration");
    if (doc == NULL)
        return;
    if (b.protocol != 0 && b.protocol != HV_PROTOCOL) {
        char detail[256];
        snprintf(detail, sizeof detail,
                 "this worker (hvbench %s) speaks job protocol %lld, this server (hvbench %s) "
                 "speaks %d: install the server's version of hvbench-worker",
                 b.version != NULL ? b.version : "?", (long long)b.protocol, HVBENCH_VERSION,
                 HV_PROTOCOL);
        hv_reply_problem(req, HV_E_CONFLICT, detail, NULL);
        json_decref(doc);
        return;
    }
    char credential[HV_TOKEN_LEN + 1] = "", hash[67] = "";
    if (req->worker_id == 0) {
        if (hv_worker_credential_generate(credential) != 0) {
            hv_reply_problem(req, HV_E_INTERNAL, "no randomness for a worker credential", NULL);
            json_decref(doc);
            return;
        }
        hv_token_hash_hex(credential, hash);
    }
    char boot[65] = "";
    for (size_t i = 0; b.boot_id != NULL && b.boot_id[i] != '\0' && i + 1 < sizeof boot; i++)
        boot[i] = (char)tolower((unsigned char)b.boot_id[i]);
    char *facts_text = json_dumps(b.facts, JSON_COMPACT | JSON_SORT_KEYS);
    char *labels_text = b.labels ? json_dumps(b.labels, JSON_COMPACT) : NULL;
    char *held_text = b.held ? json_dumps(b.held, JSON_COMPACT) : NULL;
    const char *name = b.name;
    struct hv_worker_registration reg = {
        .name = name,
        .kind = b.kind,
        .facts = facts_text,
        .fingerprint = json_string_value(b.fingerprint),
        .dmi_uuid = json_string_value(json_object_get(b.facts, "dmi_product_uuid")),
        .host = b.host,
        .boot_id = b.boot_id != NULL ? boot : NULL,
        .labels = labels_text,
        .held = held_text,
        .version = b.version,
        .token_id = req->token_id,
        .session_id = req->worker_id,
        .hash_hex = hash,
        .live_seconds = hv_cfg.worker_live_seconds,
    };
    struct hv_worker_registered out;
    enum hv_db_status s = hv_db_worker_register(&reg, &out);
    free(facts_text);
    free(labels_text);
    free(held_text);
    if (s == HV_DB_CONFLICT && out.moved) {
        /* 401: the worker forgets the credential and registers anew with
         * the worker token, as the guest of its new host. */
        char detail[512];
        snprintf(detail, sizeof detail,
                 "this worker credential holds the guest \"%s\" of another host; it is now "
                 "\"%s\": register with the worker token",
                 name, out.name);
        hv_reply_problem(req, HV_E_UNAUTHORIZED, detail, NULL);
    } else if (s == HV_DB_CONFLICT) {
        reply_held(req, out.name[0] != '\0' ? out.name : name, &out);
    } else if (s == HV_DB_NONE && out.unknown_host) {
        char detail[300];
        snprintf(detail, sizeof detail,
                 "no host worker registered as \"%s\": start the host's worker first, or leave "
                 "the host out (the server then finds it by the guest's DMI UUID)",
                 b.host);
        json_t *errors = json_array();
        hv_errors_add(errors, "/host", "no such host");
        hv_reply_problem(req, HV_E_CONFLICT, detail, errors);
    } else if (s != HV_DB_OK) {
        hv_reply_db_failure(req, s);
    } else if (out.boot_ended) {
        /* 401: the worker forgets the credential and registers anew. */
        char detail[512];
        snprintf(detail, sizeof detail,
                 "this worker credential was issued to boot %.8s of the guest \"%s\", which "
                 "booted again (boot %.8s); it has ended: register with the worker token",
                 out.old_boot, out.name, boot);
        hv_info("worker %lld ended: its guest %s booted again (boot %.8s after %.8s)",
                (long long)out.retired_id, out.name, boot, out.old_boot);
        hv_reply_problem(req, HV_E_UNAUTHORIZED, detail, NULL);
    } else {
        if (out.retired_id != 0)
            hv_info("worker %lld ended: its guest %s booted again (boot %.8s after %.8s)",
                    (long long)out.retired_id, out.name, boot, out.old_boot);
        /* The same path as POST /api/v1/workers/settings; a failure here
         * is not the registration's: the worker reports them again. */
        char *settings = b.settings ? json_dumps(b.settings, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        if (settings != NULL && hv_db_target_settings_put(out.target_id, settings) != HV_DB_OK)
            hv_warn("target %s: its host settings could not be stored", out.name);
        free(settings);
        json_t *answer =
            json_pack("{s:I,s:s,s:O,s:I,s:o,s:s,s:i}", "target_id", (json_int_t)out.target_id,
                      "name", out.name, "fingerprint", b.fingerprint ? b.fingerprint : json_null(),
                      "worker_id", (json_int_t)out.worker_id, "limits", limits_json(),
                      "server_version", HVBENCH_VERSION, "protocol", HV_PROTOCOL);
        json_object_set_new(answer, "host",
                            out.host[0] != '\0' ? json_string(out.host) : json_null());
        if (!out.reused)
            json_object_set_new(answer, "worker_token", json_string(credential));
        hv_reply_json(req, 200, answer);
    }
    json_decref(doc);
}

void hv_h_worker_deregister(struct hv_request *req)
{
    enum hv_db_status s = hv_db_worker_end(req->worker_id, "signed off");
    if (s != HV_DB_OK && s != HV_DB_NONE)
        hv_reply_db_failure(req, s);
    else
        hv_reply_json(req, 200,
                      json_pack("{s:I,s:b}", "worker_id", (json_int_t)req->worker_id, "ended", 1));
}

/* PUT /api/v1/targets/{id}/labels: {"labels": {"key": "value", ...}}. */
struct labels_body {
    const json_t *labels;
};

/* The most labels an administrator gives one target. */
#define MAX_ADMIN_LABELS 32

static const struct hv_jfield labels_fields[] = {
    {.name = "labels", .type = HV_J_OBJECT, .required = true, HV_JTO(struct labels_body, labels)},
    {0},
};

/* Every key and value as lib/selector.h allows them, so a selector can
 * name each. */
static void check_labels(const json_t *doc, const void *dest, json_t *errors)
{
    const struct labels_body *b = dest;
    if (json_object_size(b->labels) > MAX_ADMIN_LABELS)
        hv_errors_add(errors, "/labels", "at most %d labels", MAX_ADMIN_LABELS);
    hv_labels_check(b->labels, "/labels", errors);
}

void hv_h_target_labels(struct hv_request *req)
{
    struct labels_body b = {0};
    json_t *doc = hv_req_body(req, labels_fields, &b, check_labels, "bad labels");
    if (doc == NULL)
        return;
    json_t *out = NULL;
    enum hv_db_status s =
        hv_db_target_set_labels(req->ids[0], b.labels, hv_cfg.lease_seconds, &out);
    hv_reply_one(req, s, out, "no target with this id");
    json_decref(doc);
}

/* A UUID as libvirt and DMI write it: 8-4-4-4-12 hex digits. */
static bool uuid_ok(const char *s)
{
    if (strlen(s) != 36)
        return false;
    for (int i = 0; i < 36; i++)
        if ((i == 8 || i == 13 || i == 18 || i == 23) ? s[i] != '-'
                                                      : !isxdigit((unsigned char)s[i]))
            return false;
    return true;
}

void hv_h_worker_guest(struct hv_request *req)
{
    const char *uuid = hv_req_query(req, "uuid");
    if (uuid == NULL || !uuid_ok(uuid)) {
        json_t *errors = json_array();
        hv_errors_add(errors, "uuid",
                      "must be a guest's DMI product UUID (its libvirt domain's UUID, "
                      "8-4-4-4-12 hex digits)");
        hv_reply_problem(req, HV_E_INVALID_REQUEST, "the query argument uuid is missing or bad",
                         errors);
        return;
    }
    json_t *doc = NULL;
    enum hv_db_status s = hv_db_worker_guest_registration(req->worker_target, uuid, &doc);
    if (s != HV_DB_OK && s != HV_DB_NONE) {
        hv_reply_db_failure(req, s);
        return;
    }
    if (!json_is_true(json_object_get(doc, "host"))) {
        json_decref(doc);
        hv_reply_problem(req, HV_E_FORBIDDEN,
                         "only a host's worker asks whether its guests registered again", NULL);
        return;
    }
    char lower[37], now[32];
    for (int i = 0; i < 37; i++)
        lower[i] = (char)tolower((unsigned char)uuid[i]);
    hv_now_iso8601(now, sizeof now);
    hv_reply_json(req, 200,
                  json_pack("{s:s, s:O, s:s}", "uuid", lower, "registration",
                            json_object_get(doc, "registration"), "server_time", now));
    json_decref(doc);
}

void hv_h_target_free(struct hv_request *req)
{
    json_t *out = NULL;
    enum hv_db_status s = hv_db_target_free(req->ids[0], "freed by an admin", &out);
    hv_reply_one(req, s, out, "no target with this id");
}
