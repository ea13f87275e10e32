/* factors.h — the catalogue of tuning factors (actuators) a plan may vary.
 *
 * One static table describes every knob: its levels, how disruptive it is
 * to change, where it is set (guest domain or host), what a stock system
 * uses, its risk and how an operator applies it by hand. Plan validation,
 * GET /api/v1/catalog, docs/catalog.md and (later) the worker's actuators
 * all read this table, so a knob is added in exactly one place.
 *
 * Everything here is immutable and thread safe. */
#ifndef HV_FACTORS_H
#define HV_FACTORS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/** What changing a factor's level costs. */
enum hv_disruption {
    HV_DISRUPT_LIVE,    /**< applied to the running guest */
    HV_DISRUPT_RESTART, /**< domain XML change, then a guest restart */
    HV_DISRUPT_HOST,    /**< a host setting (sysfs, ip link); guests keep running */
    HV_DISRUPT_REBOOT,  /**< a module reload or host reboot: recorded, the operator applies it */
};

/** How bad the worst outcome of a non-default level is, in increasing
 *  order: a report ranks recommendations of equal gain by it. */
enum hv_risk_level {
    HV_RISK_NONE,         /**< nothing known goes wrong */
    HV_RISK_LOW,          /**< costs or limits elsewhere (host CPU, a cap), nothing breaks */
    HV_RISK_DATA_LOSS,    /**< data can be lost (on a host crash) */
    HV_RISK_AVAILABILITY, /**< a guest may not start, boot, migrate or reach the network */
};

/** Where a factor is set. */
enum hv_factor_scope {
    HV_SCOPE_GUEST, /**< on each guest domain of the plan */
    HV_SCOPE_HOST,  /**< on the host (hypervisor or bare-metal machine) */
};

/** One row of the catalogue. All strings are static. */
struct hv_factor_def {
    const char *name;    /**< [a-z0-9_]+, what plans write under "factors" */
    const char *summary; /**< one line: what the knob does */
    enum hv_disruption disruption;
    enum hv_factor_scope scope;
    /** The enumerated levels, NULL-terminated; NULL when the factor is
     *  numeric. */
    const char *const *levels;
    /** Numeric factors: levels are the integers in [min, max]. */
    double min, max;
    /** Numeric factors: the unit of a level ("ns", "KiB", "bytes" ...). */
    const char *unit;
    /** The usual setting on a stock system; a valid level. */
    const char *system_default;
    /** The class of the worst that can go wrong at a non-default level. */
    enum hv_risk_level risk_level;
    /** What can go wrong at a non-default level, or NULL. */
    const char *risk;
    /** How to apply it by hand: a libvirt XML snippet, virsh command or
     *  sysfs line, with placeholders (DOMAIN, VCPU, HOSTCPU, DEVICE, IFACE,
     *  N ...); "{level}", where it stands, is the level a report's
     *  recommendation names. */
    const char *apply_hint;
    /** A short note of a published effect, or NULL. */
    const char *evidence;
    /** Host and reboot class: the file the host worker writes the level to
     *  (or, reboot class, reads it from), under /, DISK standing for the
     *  plan's disk; NULL for other factors (nic_mtu is an ioctl). */
    const char *host_file;
};

/** The name of a disruption class as the API spells it: "live",
 *  "restart", "host" or "reboot" ("unknown" for a value out of range).
 *  Returns a static string. */
const char *hv_disruption_name(enum hv_disruption d);

/** The name of a risk level as the API spells it: "none", "low",
 *  "data-loss" or "availability" ("unknown" out of range). Returns a
 *  static string. */
const char *hv_risk_level_name(enum hv_risk_level r);

/** The name of a scope: "guest" or "host" ("unknown" out of range).
 *  Returns a static string. */
const char *hv_factor_scope_name(enum hv_factor_scope s);

/** The value written to a host or reboot-class factor's host_file (or, for
 *  a reboot-class factor, given to its module) for level: an on/off level
 *  is written as the kernel's 1/0 (ksm "on" is 1, kvm_ept "off" is 0),
 *  every other level as it is spelled ("never", "50000"). Returns level
 *  itself or a static string. */
const char *hv_factor_host_value(const struct hv_factor_def *f, const char *level);

/** The factor called name, or NULL when the catalogue has none (also for
 *  name NULL). Returns a pointer into the static table. */
const struct hv_factor_def *hv_factor_find(const char *name);

/** The number of factors in the catalogue. */
size_t hv_factor_count(void);

/** Factor i (0 <= i < hv_factor_count()) in catalogue order, or NULL when
 *  i is out of range. Returns a pointer into the static table. */
const struct hv_factor_def *hv_factor_at(size_t i);

/** Checks one level of factor f (not NULL) as a plan writes it and
 *  normalises it.
 *
 *  Enumerated factors take a JSON string naming a level (case does not
 *  matter; the catalogue's spelling is written out). Numeric factors take a
 *  JSON integer, or a string holding a decimal integer in the factor's unit
 *  ("200000"), or, where the unit allows it, a number with a unit suffix
 *  ("200us" for halt_poll_ns, "4m" for readahead_kb); the result must be a
 *  whole number in [min, max] of the factor's unit.
 *
 *  On success writes the normalised level ("on", "200000") into out and
 *  returns 0. Otherwise writes a one-line message without the path (e.g.
 *  "must be one of: off, on") into err, when err is not NULL, and returns
 *  -1; out is then unspecified. A level that does not fit in outlen bytes
 *  is an error. */
int hv_factor_level(const struct hv_factor_def *f, const json_t *level, char *out, size_t outlen,
                    char *err, size_t errlen);

/** Checks host settings as a host worker reports them ({factor: level}):
 *  at most one member per factor of the catalogue, each a host-scope
 *  factor, each level a string of 1 to 128 bytes, and the declared site
 *  factors ("site.NAME", a level as hv_site_level_problem() allows).
 *  Appends one error per
 *  problem under path (e.g. "/settings"). */
void hv_factor_settings_check(const json_t *settings, const char *path, json_t *errors);

/** The catalogue as a JSON array for GET /api/v1/catalog, in catalogue
 *  order: [{"name", "summary", "disruption", "scope", "type" ("enum" or
 *  "int"), "levels" (array, enum only), "min", "max", "unit" (int only),
 *  "system_default", "risk_level", "risk", "apply", "evidence"}], with null for an absent
 *  risk or evidence. Returns a new reference the caller owns, or NULL when
 *  memory runs out. */
json_t *hv_factors_json(void);

/* ---- site factors ---------------------------------------------------- */

/** Plans name a site factor (a knob a host worker's configuration declares,
 *  docs/virt.md) as "site." followed by its name. */
#define HV_SITE_PREFIX "site."
/** The longest site factor name (without the prefix) and level. */
#define HV_SITE_NAME_MAX  48
#define HV_SITE_LEVEL_MAX 63
/** The most site factors one host worker declares. */
#define HV_SITE_FACTORS_MAX 32

/** Whether a plan's factor name is a site factor's ("site.zfs_sync"). */
bool hv_site_factor_is(const char *factor);

/** What is wrong with name as a site factor or hook name (without the
 *  prefix): it must be a host-safe name (names.h), start with a-z and use
 *  only a-z, 0-9 and '_', at most HV_SITE_NAME_MAX characters. Returns
 *  NULL when it is fine, else a static phrase ("must use only a-z, 0-9
 *  and '_'"). */
const char *hv_site_name_problem(const char *name);

/** What is wrong with level as a site factor level: a non-empty string of
 *  printable ASCII without blanks at either end, at most
 *  HV_SITE_LEVEL_MAX bytes. Returns NULL when it is fine, else a static
 *  phrase. */
const char *hv_site_level_problem(const char *level);

#endif
