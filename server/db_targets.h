/* db_targets.h — targets: the machines workers run on. */
#ifndef HV_SERVER_DB_TARGETS_H
#define HV_SERVER_DB_TARGETS_H

#include "db.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** The host targets a label selector picks (lib/selector.h, a JSON object
 *  in parameter $1): their labels, the worker's and the administrator's,
 *  hold every pair. A FROM clause naming the target t; one definition for
 *  every statement that picks hosts by label (a fleet, an adoption). */
#define HV_SQL_SELECTED_HOSTS                                                                      \
    "FROM targets t WHERE t.kind = 'host' AND (t.labels || t.admin_labels) @> $1::jsonb"

/** Registers (or refreshes) the target called name with its facts,
 *  fingerprint and labels (JSON texts) and a guest's host (the host
 *  target's name, or NULL; name is then "HOST/GUEST"); *id is its id, the
 *  same on every re-registration. Facts or a fingerprint that differ from the target's
 *  latest version start a new version in its facts history (table
 *  target_facts); the same ones move that version's last_seen. Call it
 *  inside the registration's transaction. */
enum hv_db_status hv_db_target_upsert(const char *name, const char *kind, const char *facts_json,
                                      const char *fingerprint, const char *dmi_uuid,
                                      const char *labels_json, const char *host, int64_t *id);

/** Targets, ordered by name, as a new JSON array in *out; kind, the label
 *  selector (lib/selector.h, a JSON object) and host (a host's name: its
 *  guests) filter when not NULL. Each says whether it is stale: its worker
 *  not seen for stale_s seconds (the server's lease; migrations/050,
 *  hv_worker_stale); whether it is online: a worker registered for it and
 *  it was seen within offline_s seconds (the server's --stale-after, by
 *  the same definition); and in
 *  change_points_new how many active change points of its history are not
 *  acknowledged. */
enum hv_db_status hv_db_target_list(const char *kind, const json_t *selector, const char *host,
                                    int stale_s, int offline_s, json_t **out);

/** One target with its facts as a new JSON object (stale as
 *  hv_db_target_list() says it); HV_DB_NONE when unknown. */
enum hv_db_status hv_db_target_get(int64_t id, int stale_s, json_t **out);

/** The names of the guest targets whose labels (the worker's and the
 *  administrator's) hold every pair of selector, as a new JSON array of
 *  strings (possibly empty); with host (a host's name), only that host's
 *  guests and those of no known host. */
enum hv_db_status hv_db_target_names_by_label(const json_t *selector, const char *host,
                                              json_t **out);

/** The target names a plan on host (NULL: none) means by the guest names
 *  in names (a JSON array of strings), as a new JSON array in the same
 *  order: "HOST/NAME" when that host's guest NAME registered, else NAME
 *  when a guest of no known host did, else (not fleet) the one guest NAME
 *  of another host, else "HOST/NAME" for a fleet plan's child (fleet) and
 *  NAME otherwise (migrations/029_guest_hosts.sql, hv_guest_ref). */
enum hv_db_status hv_db_guest_refs(const char *host, const json_t *names, bool fleet, json_t **out);

/** The same for the host targets: the hosts a fleet plan runs on. */
enum hv_db_status hv_db_host_names_by_label(const json_t *selector, json_t **out);

/** Replaces target id's administrator labels (a JSON object of strings)
 *  and sets *out to the target as hv_db_target_list() shows one (with
 *  stale_s); HV_DB_NONE when there is no such target. */
enum hv_db_status hv_db_target_set_labels(int64_t id, const json_t *labels, int stale_s,
                                          json_t **out);

/** Who declares the site benchmark name of kind (an element of
 *  facts.benchmarks with that name and kind): a new JSON object in *out
 *  with "having", the names of every target declaring it, by name;
 *  "lacking", those of the n targets in names[] that do not, in the order
 *  given; and "unregistered", those of names[] no worker registered. */
enum hv_db_status hv_db_target_bench_holders(const char *name, const char *kind,
                                             const char *const *names, size_t n, json_t **out);

/** The facts param limits may depend on (lib/params.h, struct
 *  hv_target_facts) of the registered targets among the n names: a new
 *  JSON object in *out, {"NAME": {"cpus": N or null}}; unregistered names
 *  are left out. */
enum hv_db_status hv_db_target_limit_facts(const char *const *names, size_t n, json_t **out);

/** What the worker of target name says each tuning actuator can do on its
 *  machine (facts.actuators: {"thp": {"ok": true}, "ksm": {"ok": false,
 *  "why": "..."}}) in *out, JSON null when its facts do not say;
 *  HV_DB_NONE when no such target registered. */
enum hv_db_status hv_db_target_actuators(const char *name, json_t **out);

/** The site factors the worker of target name declares (facts.site_factors:
 *  {"zfs_sync": {"levels": [...], "class": "host"}}) in *out, JSON null
 *  when its facts do not say; HV_DB_NONE when no such target registered. */
enum hv_db_status hv_db_target_site_factors(const char *name, json_t **out);

/** The facts of host target name a plan's disruption is judged by
 *  (server/plan_disrupt.h) in *out: {"domains": facts.libvirt.domains,
 *  "storage": facts.storage}, each JSON null when its worker did not
 *  report it; HV_DB_NONE when no such host registered. */
enum hv_db_status hv_db_target_disruption_facts(const char *name, json_t **out);

#endif
