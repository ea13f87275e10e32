/* db_workers.c — see db_workers.h. */
#include "db_workers.h"

#include "db_targets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The credential check runs on every worker call, so it writes only when
 * last_seen is more than a few seconds old: the worker's and its
 * target's, in the same statement; a target seen so ends its lost
 * worker's loss (hv_worker_found, migrations/050). */
static const struct hv_stmt lookup = {
    "worker_lookup",
    "WITH w AS (SELECT w.id, w.target_id, w.token_id, w.ended_at IS NOT NULL AS ended, "
    " coalesce(w.ended_reason, '') AS reason, w.last_seen FROM workers w "
    " JOIN tokens k ON k.id = w.token_id WHERE w.hash = $1::bytea AND k.revoked_at IS NULL), "
    "seen AS (UPDATE workers x SET last_seen = now() FROM w WHERE x.id = w.id AND NOT w.ended "
    " AND w.last_seen < now() - interval '5 seconds' RETURNING x.target_id), "
    "tseen AS (UPDATE targets t SET last_seen = now() FROM seen WHERE t.id = seen.target_id "
    " RETURNING t.id), "
    "found AS (SELECT hv_worker_found(id) FROM tseen) "
    "SELECT w.id, w.target_id, w.token_id, w.ended, w.reason, (SELECT count(*) FROM found) "
    "FROM w",
    1};

/* The same for the credentials of a batch (hv_db_worker_lookup_many), one
 * row each in the order given; a worker named twice is seen once. */
static const struct hv_stmt lookup_many = {
    "worker_lookup_many",
    "WITH e AS (SELECT * FROM unnest($1::bytea[]) WITH ORDINALITY AS e(hash, i)), "
    "w AS (SELECT e.i, w.id, w.target_id, w.token_id, w.ended_at IS NOT NULL AS ended, "
    " coalesce(w.ended_reason, '') AS reason, w.last_seen FROM e JOIN workers w ON w.hash = e.hash "
    " JOIN tokens k ON k.id = w.token_id WHERE k.revoked_at IS NULL), "
    "seen AS (UPDATE workers x SET last_seen = now() FROM (SELECT DISTINCT id FROM w "
    " WHERE NOT ended AND last_seen < now() - interval '5 seconds') s WHERE x.id = s.id "
    " RETURNING x.target_id), "
    "tseen AS (UPDATE targets t SET last_seen = now() FROM (SELECT DISTINCT target_id FROM seen) s "
    " WHERE t.id = s.target_id RETURNING t.id), "
    "found AS (SELECT hv_worker_found(id) FROM tseen) "
    "SELECT w.id, w.target_id, w.token_id, w.ended, w.reason, (SELECT count(*) FROM found) "
    "FROM e LEFT JOIN w ON w.i = e.i ORDER BY e.i",
    1};

static const struct hv_stmt lock_target = {"worker_lock_target",
                                           "SELECT id FROM targets WHERE name = $1 FOR UPDATE", 1};

/* The live holder of a target, how long it has been silent, whether a
 * running attempt is its own (then it holds the target however silent),
 * its boot id and the target's DMI product UUID (either may be NULL). */
static const struct hv_stmt holder = {
    "worker_holder",
    "SELECT w.id, extract(epoch FROM now() - w.last_seen)::float8, EXISTS (SELECT 1 FROM jobs j "
    " JOIN job_claims c ON c.job_id = j.id AND c.attempt = j.attempt "
    " WHERE j.status = 'running' AND j.target_id = w.target_id AND c.worker_id = w.id), "
    "w.boot_id, lower(t.dmi_uuid) FROM workers w JOIN targets t ON t.id = w.target_id "
    "WHERE w.target_id = $1 AND w.ended_at IS NULL FOR UPDATE OF w",
    1};

/* The host of a guest: the host target its worker named ($1), else the
 * one whose facts list a libvirt domain with the guest's DMI product UUID
 * ($2) — of several, one it is a guest of already (a domain that moved
 * stays listed by its old host until that host registers again), else
 * the one seen last —, unless the guest registered before as a guest of
 * no known host ($3): it keeps that target. */
static const struct hv_stmt guest_host = {
    "worker_guest_host",
    "SELECT h.name FROM targets h WHERE h.kind = 'host' AND CASE WHEN $1::text IS NOT NULL "
    "THEN h.name = $1 ELSE $2::text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM targets o "
    "WHERE o.name = $3 AND o.kind = 'guest') AND EXISTS (SELECT 1 FROM "
    "jsonb_array_elements(coalesce(h.facts->'libvirt'->'domains', '[]')) d "
    "WHERE lower(d->>'uuid') = lower($2)) END ORDER BY EXISTS (SELECT 1 FROM targets o WHERE "
    "o.name = h.name || '/' || $3) DESC, "
    "h.last_seen DESC, h.id DESC LIMIT 1",
    3};

static const struct hv_stmt own_target = {
    "worker_own_target",
    "SELECT t.name, t.id, w.boot_id FROM workers w JOIN targets t ON t.id = w.target_id "
    "WHERE w.id = $1 AND w.ended_at IS NULL",
    1};

/* A credential registered by a worker that sent no boot id learns it. */
static const struct hv_stmt learn_boot = {
    "worker_learn_boot",
    "UPDATE workers SET boot_id = $2 WHERE id = $1 AND boot_id IS NULL AND $2::text IS NOT NULL",
    2};

/* Workers ids grow with each registration, so the newest one of a UUID,
 * with the boot it came from, tells a host worker whether its restarted
 * guest registered again. */
static const struct hv_stmt guest_registration = {
    "worker_guest_registration",
    "SELECT json_build_object('host', h.kind = 'host', 'registration', (SELECT "
    "json_build_object('worker_id', w.id, 'target', g.short_name, 'registered_at', w.created_at, "
    "'boot_id', w.boot_id, 'live', w.ended_at IS NULL) "
    "FROM workers w JOIN targets g ON g.id = w.target_id WHERE g.kind = 'guest' "
    "AND g.dmi_uuid IS NOT NULL AND lower(g.dmi_uuid) = lower($2) ORDER BY w.id DESC LIMIT 1))"
    "::text FROM targets h WHERE h.id = $1",
    2};

static const struct hv_stmt end_worker = {
    "worker_end",
    "UPDATE workers SET ended_at = now(), ended_reason = $2 WHERE id = $1 AND ended_at IS NULL "
    "RETURNING id",
    2};

static const struct hv_stmt insert_worker = {
    "worker_insert",
    "INSERT INTO workers (target_id, token_id, hash, version, boot_id) "
    "VALUES ($1, $2, $3::bytea, $4, $5) RETURNING id",
    5};

static const struct hv_stmt free_target = {
    "target_free",
    "WITH t AS (SELECT id, name FROM targets WHERE id = $1), "
    "w AS (UPDATE workers SET ended_at = now(), ended_reason = $2 "
    " WHERE target_id = $1 AND ended_at IS NULL RETURNING id) "
    "SELECT json_build_object('target_id', t.id, 'name', t.name, 'worker_id', "
    "(SELECT id FROM w))::text FROM t",
    2};

static const struct hv_stmt owner = {
    "job_owner",
    "SELECT (SELECT worker_id FROM job_claims WHERE job_id = $1 AND attempt = $2), "
    "EXISTS (SELECT 1 FROM jobs WHERE id = $1)",
    2};

enum hv_db_status hv_db_worker_lookup(const char *hash_hex, struct hv_worker_session *out)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    const char *params[] = {hash_hex};
    PGresult *r;
    memset(out, 0, sizeof *out);
    enum hv_db_status s = hv_db_exec(db, &lookup, params, &r);
    if (s == HV_DB_OK) {
        out->id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
        out->target_id = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
        out->token_id = strtoll(PQgetvalue(r, 0, 2), NULL, 10);
        out->ended = PQgetvalue(r, 0, 3)[0] == 't';
        snprintf(out->ended_reason, sizeof out->ended_reason, "%s", PQgetvalue(r, 0, 4));
    }
    PQclear(r);
    return s;
}

enum hv_db_status hv_db_worker_lookup_many(const char *const *hashes, size_t n,
                                           struct hv_worker_session *out, bool *found)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char *array = hv_db_text_array(hashes, n);
    if (array == NULL)
        return HV_DB_ERROR;
    const char *params[] = {array};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &lookup_many, params, &r);
    free(array);
    if (s == HV_DB_OK && (size_t)PQntuples(r) != n)
        s = HV_DB_ERROR;
    for (size_t i = 0; s == HV_DB_OK && i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        found[i] = !PQgetisnull(r, (int)i, 0);
        if (!found[i])
            continue;
        out[i].id = strtoll(PQgetvalue(r, (int)i, 0), NULL, 10);
        out[i].target_id = strtoll(PQgetvalue(r, (int)i, 1), NULL, 10);
        out[i].token_id = strtoll(PQgetvalue(r, (int)i, 2), NULL, 10);
        out[i].ended = PQgetvalue(r, (int)i, 3)[0] == 't';
        snprintf(out[i].ended_reason, sizeof out[i].ended_reason, "%s", PQgetvalue(r, (int)i, 4));
    }
    PQclear(r);
    return s;
}

/* A host worker that registers (at its start, after it restored its
 * journal: every setting and clone of the plans that held its host is
 * gone) gets the block in progress applied again: the block's jobs stop
 * being claimable and its done apply step is queued for a new attempt.
 * A plan cancelled or ended applies nothing again (its restore step runs,
 * migrations/048_cancel_apply.sql). */
static const struct hv_stmt reapply = {
    "worker_host_reapply",
    "WITH p AS (UPDATE plans p SET block_ready = false, updated_at = now() "
    " WHERE p.host_name = $1 AND p.holds_host AND p.current_block IS NOT NULL AND p.block_ready "
    " AND NOT p.cancelled AND p.state NOT IN ('done', 'failed', 'cancelled') "
    " RETURNING p.id, p.current_block) "
    "UPDATE plan_steps s SET status = 'queued', lease_until = NULL FROM p "
    "WHERE s.plan_id = p.id AND s.kind = 'apply' AND s.block = p.current_block "
    "AND s.status = 'done'",
    1};

/* A worker process's first registration with the credential of an
 * earlier run (held says which results that run kept and sends next):
 * every other attempt and step the credential still runs died with that
 * run, so their leases end now and the next sweep (db_job_lease.c,
 * db_steps.c) puts them back, cancels or fails them as any lost lease. */
static const struct hv_stmt abandon = {
    "worker_abandon_earlier_run",
    "WITH h AS (SELECT (e->>'job_id')::bigint AS job_id, (e->>'attempt')::int AS attempt "
    " FROM jsonb_array_elements($2::jsonb) e), "
    "j AS (UPDATE jobs j SET lease_until = now() - interval '1 ms' FROM job_claims c "
    " WHERE c.worker_id = $1 AND c.job_id = j.id AND c.attempt = j.attempt "
    " AND j.status = 'running' AND NOT EXISTS (SELECT 1 FROM h WHERE h.job_id = j.id "
    " AND h.attempt = j.attempt) RETURNING 1) "
    "UPDATE plan_steps SET lease_until = now() - interval '1 ms' "
    "WHERE worker_id = $1 AND status = 'running'",
    2};

/* reapply for a host's registration. */
static enum hv_db_status host_registered(struct hv_db *db, const struct hv_worker_registration *g)
{
    if (g->kind == NULL || strcmp(g->kind, "host") != 0)
        return HV_DB_OK;
    const char *p[] = {g->name};
    enum hv_db_status s = hv_db_exec(db, &reapply, p, NULL);
    return s == HV_DB_NONE ? HV_DB_OK : s;
}

/* Sets out->name and out->host: a guest's host found, its target is
 * "HOST/NAME". HV_DB_NONE when the host its worker named is unknown. */
static enum hv_db_status find_host(struct hv_db *db, const struct hv_worker_registration *g,
                                   struct hv_worker_registered *out)
{
    snprintf(out->name, sizeof out->name, "%s", g->name);
    if (g->kind == NULL || strcmp(g->kind, "guest") != 0 ||
        (g->host == NULL && g->dmi_uuid == NULL))
        return HV_DB_OK;
    const char *p[] = {g->host, g->dmi_uuid, g->name};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &guest_host, p, &r);
    if (s == HV_DB_OK) {
        snprintf(out->host, sizeof out->host, "%s", PQgetvalue(r, 0, 0));
        snprintf(out->name, sizeof out->name, "%s/%s", out->host, g->name);
    }
    PQclear(r);
    if (s == HV_DB_NONE && g->host == NULL)
        return HV_DB_OK;
    out->unknown_host = s == HV_DB_NONE;
    return s;
}

/* hv_db_target_upsert() under the name find_host() gave. */
static enum hv_db_status upsert(const struct hv_worker_registration *g,
                                struct hv_worker_registered *out)
{
    return hv_db_target_upsert(out->name, g->kind, g->facts, g->fingerprint, g->dmi_uuid, g->labels,
                               out->host[0] != '\0' ? out->host : NULL, &out->target_id);
}

/* Whether a registration is a guest's. */
static bool is_guest(const struct hv_worker_registration *g)
{
    return g->kind != NULL && strcmp(g->kind, "guest") == 0;
}

/* Whether a worker of boot held and a registration of boot now ran on
 * two boots of their machine: both known and different. */
static bool other_boot(const char *held, const char *now)
{
    return held != NULL && now != NULL && strcmp(held, now) != 0;
}

/* Ends worker id, of the boot old of its guest, which booted again (new):
 * what it ran died with that boot, so its leases end now (abandon). */
static enum hv_db_status retire(struct hv_db *db, int64_t id, const char *old, const char *now)
{
    char wid[24], reason[128];
    snprintf(reason, sizeof reason,
             "its guest booted again (boot %.8s, this worker ran on boot %.8s)", now, old);
    const char *pe[] = {hv_db_int(wid, sizeof wid, id), reason};
    enum hv_db_status s = hv_db_exec(db, &end_worker, pe, NULL);
    const char *pa[] = {pe[0], "[]"};
    if (s == HV_DB_OK || s == HV_DB_NONE)
        s = hv_db_exec(db, &abandon, pa, NULL);
    return s == HV_DB_NONE ? HV_DB_OK : s;
}

/* Re-registration with the caller's own credential: the name must be the
 * one it holds; a guest's credential from another boot than the
 * registration's ends (out->old_boot says it: its worker died with that
 * boot, and the new boot registers with the worker token); the same guest name under another host
 * (the guest moved) is another target, which the credential does not hold (moved). */
static enum hv_db_status confirm_session(struct hv_db *db, const struct hv_worker_registration *g,
                                         struct hv_worker_registered *out)
{
    char wid[24];
    const char *p[] = {hv_db_int(wid, sizeof wid, g->session_id)};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &own_target, p, &r);
    if (s == HV_DB_OK && strcmp(PQgetvalue(r, 0, 0), out->name) != 0) {
        const char *held = PQgetvalue(r, 0, 0), *slash = strrchr(held, '/');
        out->wrong_target = true;
        out->moved = strcmp(slash != NULL ? slash + 1 : held, g->name) == 0;
        s = HV_DB_CONFLICT;
    }
    if (s == HV_DB_OK && is_guest(g) &&
        other_boot(PQgetisnull(r, 0, 2) ? NULL : PQgetvalue(r, 0, 2), g->boot_id))
        snprintf(out->old_boot, sizeof out->old_boot, "%s", PQgetvalue(r, 0, 2));
    PQclear(r);
    if (s != HV_DB_OK)
        return s == HV_DB_NONE ? HV_DB_CONFLICT : s;
    if (out->old_boot[0] != '\0') {
        out->boot_ended = true;
        out->retired_id = g->session_id;
        return retire(db, g->session_id, out->old_boot, g->boot_id);
    }
    const char *pb[] = {p[0], g->boot_id};
    s = hv_db_exec(db, &learn_boot, pb, NULL);
    if (s != HV_DB_OK && s != HV_DB_NONE)
        return s;
    if (g->held != NULL) {
        const char *ph[] = {p[0], g->held};
        s = hv_db_exec(db, &abandon, ph, NULL);
        if (s != HV_DB_OK && s != HV_DB_NONE)
            return s;
    }
    s = upsert(g, out);
    out->worker_id = g->session_id;
    out->reused = true;
    return s == HV_DB_OK ? host_registered(db, g) : s;
}

/* A live holder keeps the target while it was seen within live_seconds or
 * runs an attempt; a silent one is replaced. */
static enum hv_db_status check_holder(struct hv_db *db, const struct hv_worker_registration *g,
                                      const char *target_id, struct hv_worker_registered *out)
{
    const char *p[] = {target_id};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &holder, p, &r);
    if (s != HV_DB_OK) {
        PQclear(r);
        return s == HV_DB_NONE ? HV_DB_OK : s;
    }
    out->holder_id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    out->holder_idle = strtod(PQgetvalue(r, 0, 1), NULL);
    out->holder_busy = PQgetvalue(r, 0, 2)[0] == 't';
    /* The same guest (its DMI product UUID) on another boot: the holder
     * died with its boot, however recently it was seen. */
    bool rebooted = is_guest(g) && g->dmi_uuid != NULL && !PQgetisnull(r, 0, 4) &&
                    strcasecmp(PQgetvalue(r, 0, 4), g->dmi_uuid) == 0 &&
                    other_boot(PQgetisnull(r, 0, 3) ? NULL : PQgetvalue(r, 0, 3), g->boot_id);
    if (rebooted) {
        out->retired_id = out->holder_id;
        snprintf(out->old_boot, sizeof out->old_boot, "%s", PQgetvalue(r, 0, 3));
    }
    PQclear(r);
    if (rebooted) {
        out->holder_id = 0;
        return retire(db, out->retired_id, out->old_boot, g->boot_id);
    }
    if (out->holder_busy || out->holder_idle < g->live_seconds)
        return HV_DB_CONFLICT;
    char hid[24], reason[128];
    snprintf(reason, sizeof reason, "replaced by a new registration after %.0f s of silence",
             out->holder_idle);
    const char *pe[] = {hv_db_int(hid, sizeof hid, out->holder_id), reason};
    s = hv_db_exec(db, &end_worker, pe, NULL);
    return s == HV_DB_NONE ? HV_DB_OK : s;
}

static enum hv_db_status register_txn(struct hv_db *db, void *arg)
{
    void **a = arg;
    const struct hv_worker_registration *g = a[0];
    struct hv_worker_registered *out = a[1];
    memset(out, 0, sizeof *out);
    enum hv_db_status s = find_host(db, g, out);
    if (s != HV_DB_OK)
        return s;
    if (g->session_id != 0)
        return confirm_session(db, g, out);
    const char *pn[] = {out->name};
    PGresult *r;
    s = hv_db_exec(db, &lock_target, pn, &r);
    if (s == HV_DB_OK) {
        char tid[24];
        snprintf(tid, sizeof tid, "%s", PQgetvalue(r, 0, 0));
        PQclear(r);
        s = check_holder(db, g, tid, out);
    } else {
        PQclear(r);
        s = s == HV_DB_NONE ? HV_DB_OK : s;
    }
    if (s != HV_DB_OK)
        return s;
    s = upsert(g, out);
    if (s == HV_DB_OK)
        s = host_registered(db, g);
    if (s != HV_DB_OK)
        return s;
    char tid[24], tok[24];
    const char *pi[] = {hv_db_int(tid, sizeof tid, out->target_id),
                        hv_db_int(tok, sizeof tok, g->token_id), g->hash_hex, g->version,
                        g->boot_id};
    s = hv_db_exec(db, &insert_worker, pi, &r);
    if (s == HV_DB_OK)
        out->worker_id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return hv_db_must(s);
}

enum hv_db_status hv_db_worker_register(const struct hv_worker_registration *reg,
                                        struct hv_worker_registered *out)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    void *arg[] = {(void *)reg, out};
    return hv_db_txn(db, register_txn, arg);
}

enum hv_db_status hv_db_worker_end(int64_t id, const char *reason)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char wid[24];
    const char *p[] = {hv_db_int(wid, sizeof wid, id), reason};
    return hv_db_exec(db, &end_worker, p, NULL);
}

enum hv_db_status hv_db_target_free(int64_t target_id, const char *reason, json_t **out)
{
    char tid[24];
    const char *p[] = {hv_db_int(tid, sizeof tid, target_id), reason};
    return hv_db_json(&free_target, p, out, NULL);
}

enum hv_db_status hv_db_job_owner(int64_t job_id, int attempt, int64_t worker_id,
                                  enum hv_job_owner *who)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    char jid[24], att[16];
    const char *p[] = {hv_db_int(jid, sizeof jid, job_id), hv_db_int(att, sizeof att, attempt)};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &owner, p, &r);
    if (s == HV_DB_OK) {
        if (PQgetvalue(r, 0, 1)[0] != 't')
            *who = HV_OWNER_NO_JOB;
        else if (!PQgetisnull(r, 0, 0) && strtoll(PQgetvalue(r, 0, 0), NULL, 10) == worker_id)
            *who = HV_OWNER_CALLER;
        else
            *who = HV_OWNER_OTHER;
    }
    PQclear(r);
    return hv_db_must(s);
}

enum hv_db_status hv_db_worker_guest_registration(int64_t host_target, const char *uuid,
                                                  json_t **out)
{
    char id[24];
    const char *p[] = {hv_db_int(id, sizeof id, host_target), uuid};
    return hv_db_json(&guest_registration, p, out, NULL);
}
