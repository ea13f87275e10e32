/* db_targets.c — see db_targets.h. */
#include "db_targets.h"

#include <stdlib.h>

/* $7 names a guest's host. A registration sees the target's worker: its
 * loss, if it was lost, ends (hv_worker_found, migrations/050). */
static const struct hv_stmt upsert = {
    "target_upsert",
    "WITH u AS (INSERT INTO targets (name, kind, facts, fingerprint, dmi_uuid, labels, host_id) "
    " VALUES ($1, $2, $3::jsonb, $4, $5, coalesce($6::jsonb, '{}'), "
    " (SELECT h.id FROM targets h WHERE h.name = $7 AND h.kind = 'host')) "
    " ON CONFLICT (name) DO UPDATE SET kind = EXCLUDED.kind, facts = EXCLUDED.facts, "
    " fingerprint = EXCLUDED.fingerprint, dmi_uuid = EXCLUDED.dmi_uuid, "
    " labels = EXCLUDED.labels, host_id = EXCLUDED.host_id, last_seen = now() RETURNING id) "
    "SELECT u.id, hv_worker_found(u.id) FROM u",
    7};

/* A new version of the target's facts when they (without the libvirt
 * domains, whose states come and go, and the storage, whose mounts do) or the fingerprint differ
 * from the latest version; otherwise the latest version was seen again. Facts that say nothing (no
 * fingerprint, {}) start no version. The registration holds the target's row, so two registrations
 * never race here. */
static const struct hv_stmt facts_version = {
    "target_facts_version",
    "WITH f AS (SELECT $2::text AS fp, $3::jsonb #- '{libvirt,domains}' #- '{storage}' AS facts), "
    "cur AS (SELECT v.id, v.fingerprint IS NOT DISTINCT FROM f.fp AND v.facts = f.facts AS same "
    " FROM target_facts v, f WHERE v.target_id = $1 ORDER BY v.first_seen DESC, v.id DESC "
    " LIMIT 1), "
    "seen AS (UPDATE target_facts v SET last_seen = now() FROM cur WHERE v.id = cur.id "
    " AND cur.same RETURNING v.id) "
    "INSERT INTO target_facts (target_id, fingerprint, facts) SELECT $1, f.fp, f.facts FROM f "
    "WHERE NOT EXISTS (SELECT 1 FROM seen) AND (f.fp IS NOT NULL OR f.facts <> '{}')",
    3};

/* The site benchmarks are shown with every target (not only with its
 * facts), so a plan's author sees in the list which names each offers.
 * A target is TARGET_JSON_HEAD "$N" TARGET_JSON_TAIL: stale
 * (hv_worker_stale, migrations/050) takes the statement's parameter $N,
 * the server's lease in seconds. */
#define TARGET_JSON_HEAD                                                                           \
    "json_build_object('id', t.id, 'name', t.name, 'kind', t.kind, 'fingerprint', "                \
    "t.fingerprint, 'dmi_uuid', t.dmi_uuid, 'labels', t.labels || t.admin_labels, "                \
    "'worker_labels', t.labels, 'admin_labels', t.admin_labels, 'benchmarks', "                    \
    "coalesce(t.facts->'benchmarks', '[]'), 'registered_at', t.registered_at, 'last_seen', "       \
    "t.last_seen, 'stale', hv_worker_stale(t.last_seen, "
#define TARGET_JSON_TAIL                                                                           \
    "::int), 'host', (SELECT h.name FROM targets h WHERE h.id = t.host_id), 'short_name', "        \
    "t.short_name)"

/* The list adds what an operator scans a fleet for: online (a worker
 * registered for it and it was seen within $5 seconds, the server's
 * --stale-after; a target only an import named is never online) and how many change points of
 * the target's history are not acknowledged (of those its history reads
 * found: migrations/008, server/db_history.c). */
static const struct hv_stmt list = {
    "target_list",
    "SELECT coalesce(json_agg((" TARGET_JSON_HEAD "$4" TARGET_JSON_TAIL
    ")::jsonb || jsonb_build_object('online', NOT hv_worker_stale(t.last_seen, $5::int) "
    " AND EXISTS (SELECT 1 FROM workers w WHERE w.target_id = t.id), "
    "'change_points_new', (SELECT count(*) FROM history_series hs JOIN change_points cp "
    " ON cp.series_id = hs.id WHERE hs.target_id = t.id AND cp.active "
    " AND cp.acknowledged_at IS NULL)) ORDER BY t.name), "
    "'[]')::text FROM targets t WHERE ($1::text IS NULL OR t.kind = $1) "
    "AND ($2::jsonb IS NULL OR (t.labels || t.admin_labels) @> $2::jsonb) "
    "AND ($3::text IS NULL OR t.host_id = (SELECT h.id FROM targets h WHERE h.name = $3 "
    " AND h.kind = 'host'))",
    5};

/* A guest is linked to its domain by the DMI product UUID its worker
 * reads, which KVM sets to the libvirt domain UUID a host worker lists. */
static const struct hv_stmt get = {
    "target_get",
    "SELECT (" TARGET_JSON_HEAD "$2" TARGET_JSON_TAIL "::jsonb || jsonb_build_object('facts', "
    "t.facts, 'domain', (SELECT jsonb_build_object('host', h.name, 'name', d->>'name', 'uuid', "
    "d->>'uuid') FROM targets h, jsonb_array_elements(coalesce(h.facts->'libvirt'->'domains', "
    "'[]')) d WHERE t.dmi_uuid IS NOT NULL AND h.id <> t.id "
    "AND lower(d->>'uuid') = lower(t.dmi_uuid) ORDER BY h.last_seen DESC LIMIT 1)))::text "
    "FROM targets t WHERE t.id = $1",
    2};

/* With $3, a host's name: only its own guests and those of no known
 * host. */
static const struct hv_stmt by_label = {
    "target_names_by_label",
    "SELECT coalesce(json_agg(t.name ORDER BY t.name), '[]')::text FROM targets t "
    "WHERE t.kind = $2 AND (t.labels || t.admin_labels) @> $1::jsonb "
    "AND ($3::text IS NULL OR t.host_id IS NULL "
    " OR t.host_id = (SELECT h.id FROM targets h WHERE h.name = $3 AND h.kind = 'host'))",
    3};

/* migrations/029_guest_hosts.sql, hv_guest_ref. */
static const struct hv_stmt guest_refs = {
    "target_guest_refs",
    "SELECT coalesce(json_agg(hv_guest_ref($1, d.n, $3::bool) ORDER BY d.i), '[]')::text "
    "FROM json_array_elements_text($2::json) WITH ORDINALITY AS d(n, i)",
    3};

/* The administrator's labels replaced; the answer is the target as GET
 * shows it. */
static const struct hv_stmt set_admin_labels = {
    "target_set_admin_labels",
    "UPDATE targets AS t SET admin_labels = $2::jsonb WHERE t.id = $1 "
    "RETURNING " TARGET_JSON_HEAD "$3" TARGET_JSON_TAIL "::text",
    3};

/* A target declares a site benchmark when an element of its
 * facts.benchmarks carries both the name and the kind ($1, $2). */
#define DECLARES                                                                                   \
    "t.facts->'benchmarks' @> jsonb_build_array(jsonb_build_object('name', $1::text, 'kind', "     \
    "$2::text))"

static const struct hv_stmt bench_holders = {
    "target_bench_holders",
    "SELECT json_build_object("
    "'having', (SELECT coalesce(json_agg(t.name ORDER BY t.name), '[]') FROM targets t "
    " WHERE " DECLARES "), "
    "'lacking', (SELECT coalesce(json_agg(u.n ORDER BY u.i), '[]') "
    " FROM unnest($3::text[]) WITH ORDINALITY AS u(n, i) "
    " WHERE NOT EXISTS (SELECT 1 FROM targets t WHERE t.name = u.n AND " DECLARES ")), "
    "'unregistered', (SELECT coalesce(json_agg(u.n ORDER BY u.i), '[]') "
    " FROM unnest($3::text[]) WITH ORDINALITY AS u(n, i) "
    " WHERE NOT EXISTS (SELECT 1 FROM targets t WHERE t.name = u.n)))::text",
    3};

/* What param limits may depend on (lib/params.h, struct hv_target_facts),
 * of the registered targets among $1. */
static const struct hv_stmt limit_facts = {
    "target_limit_facts",
    "SELECT coalesce(json_object_agg(t.name, json_build_object('cpus', t.facts->'cpus'))::text, "
    "'{}') FROM targets t WHERE t.name = ANY($1::text[])",
    1};

/* What the target's worker said each actuator can do (facts.actuators),
 * JSON null when its facts say nothing of them. */
static const struct hv_stmt actuators = {
    "target_actuators",
    "SELECT coalesce(t.facts->'actuators', 'null'::jsonb)::text FROM targets t WHERE t.name = $1",
    1};

enum hv_db_status hv_db_target_actuators(const char *name, json_t **out)
{
    const char *params[] = {name};
    return hv_db_json(&actuators, params, out, NULL);
}

/* The site factors the target's worker declares (facts.site_factors). */
static const struct hv_stmt site_factors = {
    "target_site_factors",
    "SELECT coalesce(t.facts->'site_factors', 'null'::jsonb)::text FROM targets t "
    "WHERE t.name = $1",
    1};

enum hv_db_status hv_db_target_site_factors(const char *name, json_t **out)
{
    const char *params[] = {name};
    return hv_db_json(&site_factors, params, out, NULL);
}

/* What a plan's disruption depends on in its host's facts
 * (server/plan_disrupt.h): the libvirt domains and the storage. */
static const struct hv_stmt disruption_facts = {
    "target_disruption_facts",
    "SELECT jsonb_build_object('domains', t.facts->'libvirt'->'domains', 'storage', "
    "t.facts->'storage')::text FROM targets t WHERE t.name = $1 AND t.kind = 'host'",
    1};

enum hv_db_status hv_db_target_disruption_facts(const char *name, json_t **out)
{
    const char *params[] = {name};
    return hv_db_json(&disruption_facts, params, out, NULL);
}

enum hv_db_status hv_db_target_upsert(const char *name, const char *kind, const char *facts_json,
                                      const char *fingerprint, const char *dmi_uuid,
                                      const char *labels_json, const char *host, int64_t *id)
{
    struct hv_db *db = hv_db_thread();
    if (db == NULL)
        return HV_DB_UNAVAILABLE;
    const char *params[] = {name, kind, facts_json, fingerprint, dmi_uuid, labels_json, host};
    PGresult *r;
    enum hv_db_status s = hv_db_exec(db, &upsert, params, &r);
    if (s == HV_DB_OK)
        *id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    if (s != HV_DB_OK)
        return hv_db_must(s);
    char tid[24];
    const char *pf[] = {hv_db_int(tid, sizeof tid, *id), fingerprint, facts_json};
    s = hv_db_exec(db, &facts_version, pf, NULL);
    return s == HV_DB_NONE ? HV_DB_OK : s;
}

enum hv_db_status hv_db_target_list(const char *kind, const json_t *selector, const char *host,
                                    int stale_s, int offline_s, json_t **out)
{
    char *sel = selector != NULL ? json_dumps(selector, JSON_COMPACT) : NULL;
    if (selector != NULL && sel == NULL)
        return HV_DB_ERROR;
    char window[16], offline[16];
    const char *params[] = {kind, sel, host, hv_db_int(window, sizeof window, stale_s),
                            hv_db_int(offline, sizeof offline, offline_s)};
    enum hv_db_status s = hv_db_json(&list, params, out, NULL);
    free(sel);
    return s;
}

enum hv_db_status hv_db_target_get(int64_t id, int stale_s, json_t **out)
{
    char idtxt[24], window[16];
    const char *params[] = {hv_db_int(idtxt, sizeof idtxt, id),
                            hv_db_int(window, sizeof window, stale_s)};
    return hv_db_json(&get, params, out, NULL);
}

/* The names of the targets of kind whose labels hold every pair of
 * selector. */
static enum hv_db_status names_by_label(const json_t *selector, const char *kind, const char *host,
                                        json_t **out)
{
    char *sel = json_dumps(selector, JSON_COMPACT);
    if (sel == NULL)
        return HV_DB_ERROR;
    const char *params[] = {sel, kind, host};
    enum hv_db_status s = hv_db_json(&by_label, params, out, NULL);
    free(sel);
    return s;
}

enum hv_db_status hv_db_target_names_by_label(const json_t *selector, const char *host,
                                              json_t **out)
{
    return names_by_label(selector, "guest", host, out);
}

enum hv_db_status hv_db_host_names_by_label(const json_t *selector, json_t **out)
{
    return names_by_label(selector, "host", NULL, out);
}

enum hv_db_status hv_db_guest_refs(const char *host, const json_t *names, bool fleet, json_t **out)
{
    char *arr = json_dumps(names, JSON_COMPACT);
    if (arr == NULL)
        return HV_DB_ERROR;
    const char *params[] = {host, arr, fleet ? "true" : "false"};
    enum hv_db_status s = hv_db_json(&guest_refs, params, out, NULL);
    free(arr);
    return s;
}

enum hv_db_status hv_db_target_set_labels(int64_t id, const json_t *labels, int stale_s,
                                          json_t **out)
{
    char *text = json_dumps(labels, JSON_COMPACT);
    if (text == NULL)
        return HV_DB_ERROR;
    char buf[24], window[16];
    const char *params[] = {hv_db_int(buf, sizeof buf, id), text,
                            hv_db_int(window, sizeof window, stale_s)};
    enum hv_db_status s = hv_db_json(&set_admin_labels, params, out, NULL);
    free(text);
    return s;
}

enum hv_db_status hv_db_target_bench_holders(const char *name, const char *kind,
                                             const char *const *names, size_t n, json_t **out)
{
    char *arr = hv_db_text_array(names, n);
    if (arr == NULL)
        return HV_DB_ERROR;
    const char *params[] = {name, kind, arr};
    enum hv_db_status s = hv_db_json(&bench_holders, params, out, NULL);
    free(arr);
    return s;
}

enum hv_db_status hv_db_target_limit_facts(const char *const *names, size_t n, json_t **out)
{
    char *arr = hv_db_text_array(names, n);
    if (arr == NULL)
        return HV_DB_ERROR;
    const char *params[] = {arr};
    enum hv_db_status s = hv_db_json(&limit_facts, params, out, NULL);
    free(arr);
    return s;
}
