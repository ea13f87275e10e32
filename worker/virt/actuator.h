/* actuator.h — the tuning actuators: one row per factor of lib/factors.c
 * that applies a level for real, reads it back from where it takes effect
 * (the kernel where possible) and reverts it from the journal.
 *
 * A step's levels are applied in three passes: host knobs (sysfs, the
 * NIC's MTU), then per guest domain the restart-class levels (one edit of
 * the persistent domain XML, one redefinition and at most one restart per
 * domain and step), then the live-class levels (pinning, I/O limits),
 * which a restart would otherwise wipe. Before any object is changed for
 * the first time in a plan, its original goes to the journal (journal.h);
 * every change is also listed in ctx->changes for the server. Restoring
 * walks the journal newest first.
 *
 * Host files are read and written under ctx->root ("/" on a real host, a
 * temporary tree in tests); files are only ever those a row owns, written
 * directly, never through a shell.
 *
 * Guest levels go through libvirt (ctx->libvirt_uri, a read-write
 * connection opened on first use). Rows work on one domain at a time; the
 * orchestration (actuators.c) walks ctx->domains.
 *
 * Not thread safe: one step at a time, from one thread. */
#ifndef HV_WORKER_VIRT_ACTUATOR_H
#define HV_WORKER_VIRT_ACTUATOR_H

#include "factors.h"
#include "worker/client.h"
#include "worker/virt/journal.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct hv_act_virt;
struct hv_act_domain;
struct hv_xml;

/** What a step gives the actuators, and what they collect. */
struct hv_act_ctx {
    /** Host files are under this folder ("/" on a real host). */
    const char *root;
    /** libvirt URI for guest factors (e.g. qemu:///system), or NULL. */
    const char *libvirt_uri;
    /** The host disk holding the guests' images (a /dev path or a kernel
     *  name such as "sda" or "sda1"), or NULL. */
    const char *disk;
    /** The host NIC carrying the benchmark traffic, or NULL. */
    const char *nic;
    /** The guest domains' names (a JSON array of strings), or NULL. */
    const json_t *domains;
    /** Whether a running guest may be restarted for a restart-class level
     *  (a domain the plan created may always be). */
    bool allow_restart;
    /** The domains the plan names in targets.guests.domains (a JSON array
     *  of strings), or NULL: a domain another VM manager owns is changed
     *  only when it is listed here and allow_restart is set (owner.h). */
    const json_t *named;
    long long plan_id;
    /** Where originals go before a change; NULL: read-only use
     *  (hv_actuators_read_back()). */
    struct hv_journal *journal;
    /** Seconds a guest gets to power off (ACPI) before it is destroyed;
     *  0 means HV_ACT_SHUTDOWN_TIMEOUT. */
    double shutdown_timeout;
    /** Called now and then during long waits (a guest powering off), e.g.
     *  to heartbeat the step; may be NULL. */
    void (*tick)(void *arg);
    void *tick_arg;
    /** What was changed, in order: [{"factor", "scope", "object", "from",
     *  "to", "at"}]. Created on first use; the caller owns and releases
     *  it. */
    json_t *changes;
    /** The libvirt connection, opened on first use; closed by
     *  hv_act_ctx_release(). */
    struct hv_act_virt *virt;
    /** Asks the server for the newest worker registration of the guest
     *  whose DMI product UUID is uuid (*out; worker_id 0 when none);
     *  returns 0, or -1 when the server cannot tell. NULL: started is not
     *  kept (nothing waits for the guests) and a restart does not wait for
     *  a booting guest (booting.h). */
    int (*registration)(void *arg, const char *uuid, struct hv_guest_registration *out);
    void *registration_arg;
    /** Seconds a restart waits for a guest still booting to come up
     *  before powering it off (booting.h); 0 means HV_ACT_UP_WAIT. */
    double up_wait;
    /** The domains this context started or restarted: name → {"uuid",
     *  "before": the newest registration of its worker before (0: none or
     *  unknown), "before_boot": that registration's boot id ("" when
     *  none)}. Created on first use; the caller owns and releases it. */
    json_t *started;
};

/** How long a guest gets to power off before it is destroyed, seconds. */
#define HV_ACT_SHUTDOWN_TIMEOUT 120.0

/** A level as read back. */
struct hv_reading {
    /** The level the object is at ("never", "on", "9000"); "" when it
     *  could not be read (err then says why). Levels no catalogue entry
     *  names are written as they are found ("custom", "0,2-3"). */
    char value[128];
    /** Where it was read: a file, a libvirt call, a thread's affinity. */
    char source[256];
    /** More of what was seen (a file's whole text, CPU sets), or NULL.
     *  Owned by the reading. */
    json_t *detail;
};

/** One row of the actuator table. Callbacks get their row (so rows can
 *  share functions and keep their data in .data), the context, for guest
 *  rows the domain, the level (normalised by hv_factor_level()), and an
 *  error buffer; they return 0 or -1 with err naming the factor, the
 *  level and what failed. */
struct hv_actuator {
    const char *factor; /**< the factor's name in lib/factors.c */
    /** The journal kind this row writes and reverts ("sysfs", "nic_mtu",
     *  "domain_xml", "vcpu_pin" ...). */
    const char *kind;
    /** Host and live rows: applies level (journalling first). Restart rows:
     *  edits the domain's persistent XML in d (actuators.c defines and
     *  restarts). NULL when the level is applied elsewhere (process_pin:
     *  per job). */
    int (*apply)(const struct hv_actuator *a, struct hv_act_ctx *ctx, struct hv_act_domain *d,
                 const char *level, char *err, size_t len);
    /** Reads the level back into *r (host rows ignore d; restart rows read
     *  the XML d holds). On entry r->value holds the level expected, or ""
     *  when none is: where two levels look alike on this host (pinning to
     *  every CPU of a one-CPU host is both on and off), the expected one
     *  is named. */
    int (*read_back)(const struct hv_actuator *a, struct hv_act_ctx *ctx, struct hv_act_domain *d,
                     struct hv_reading *r, char *err, size_t len);
    /** Puts back what journal entry says, appending the change to
     *  ctx->changes. */
    int (*revert)(const struct hv_actuator *a, struct hv_act_ctx *ctx, const json_t *entry,
                  char *err, size_t len);
    /** Row data for the shared callbacks (a knob's file, an XML edit). */
    const void *data;
};

/** The row of factor, or NULL. */
const struct hv_actuator *hv_actuator_find(const char *factor);

/** The number of rows, and row i (NULL out of range). There is one row
 *  per catalogue factor. */
size_t hv_actuator_count(void);
const struct hv_actuator *hv_actuator_at(size_t i);

/** Applies levels (a JSON object: factor → level) and reads every one of
 *  them back. Every level is tried, so one failure does not hide the next;
 *  the step fails when any level failed or read back differently. Fills
 *  *settings (a new object: factor → {"level", "read_back", "source",
 *  "detail"}, also on failure, with what could be read) and returns 0, or
 *  -1 with every problem in err, separated by "; ". ctx->journal must be
 *  set. */
int hv_actuators_apply(const json_t *levels, struct hv_act_ctx *ctx, json_t **settings, char *err,
                       size_t len);

/** Reads levels back without changing anything (e.g. after a job, to see
 *  that nothing moved): fills *settings as hv_actuators_apply() does.
 *  Returns 0 when every factor reads back at its level, -1 with err
 *  naming each that does not (or cannot be read). */
int hv_actuators_read_back(const json_t *levels, struct hv_act_ctx *ctx, json_t **settings,
                           char *err, size_t len);

/** The current level of every host setting of the catalogue this host
 *  lets ctx read (ctx->root; the disk and NIC settings only when ctx names
 *  a disk or a NIC), through each row's own read-back: a new object
 *  factor → level, without the settings that cannot be read here. Changes
 *  nothing. */
json_t *hv_actuators_host_settings(struct hv_act_ctx *ctx);

/** The reboot-class levels of levels (kvm_ept, kvm_npt) that the host is
 *  not at, which only the operator can change (a module reload): a new
 *  array of {"factor", "level", "value" (what the host has), "file",
 *  "command" (what brings it to the level), "message" (the same in
 *  words)}, empty when every such level is in place. Changes nothing. A
 *  parameter that cannot be read is not listed (hv_actuators_apply()
 *  fails on it). NULL only when memory runs out. */
json_t *hv_actuators_operator_pending(const json_t *levels, struct hv_act_ctx *ctx);

/** Restores everything ctx->journal holds, newest entry first, removing
 *  each entry once restored and appending what was put back to
 *  ctx->changes. An entry that fails stays in the journal and the others
 *  are still tried. Returns 0 when the journal is empty at the end, else
 *  -1 with err. */
int hv_actuators_restore(struct hv_act_ctx *ctx, char *err, size_t len);

/** What each actuator can do on this host, for the worker's facts:
 *  {"thp": {"ok": true}, "ksm": {"ok": false, "why": "..."}, ...}, one
 *  member per row. Only ctx->root and ctx->libvirt_uri are used (a worker
 *  started with --libvirt is connected: it would not start otherwise).
 *  Returns a new object, or NULL when memory ran out. */
json_t *hv_actuators_probe(const struct hv_act_ctx *ctx);

/** The worker's configuration (worker/config.h), whose site factors the
 *  actuators apply when a step's levels name them as "site.NAME": host
 *  class, applied after the host rows, read back with them, reverted from
 *  the journal entry alone. NULL (the default): no site factor is
 *  declared. Set once at start, before any step; c must outlive them. */
struct hv_conf;
void hv_actuators_use_conf(const struct hv_conf *c);

/** The exit status of a drain hook that says "not yet" (EX_TEMPFAIL). */
#define HV_HOOK_NOT_YET 75

/** Runs the drain hook name of that configuration (its argv with
 *  "{plan}" and "{host}" replaced in every argument, never through a
 *  shell; at most HV_CONF_HOOK_TIMEOUT seconds) for kind ("before_host",
 *  "after_host") of plan on host, whose labels (a JSON object of strings,
 *  may be NULL) it gets in its environment with the rest: HVBENCH_HOOK
 *  (kind), HVBENCH_PLAN, HVBENCH_TARGET (host), HVBENCH_LABELS
 *  ("k=v,k2=v2", keys sorted) and one HVBENCH_LABEL_<KEY>=value a label
 *  (KEY: the key upper-cased, each character other than A-Z and 0-9 an
 *  underscore); the worker's own HVBENCH_* variables are not passed on.
 *  Calls tick about once a second while it runs (tick may be NULL).
 *  *answer is set to a new {"exit_status", "output"} (its first 1 kB)
 *  once it ran. Returns 0 when it exited with status 0; 1 when it exited
 *  with HV_HOOK_NOT_YET, why then its words: the last non-blank line of
 *  its output (standard output, else standard error); else -1 with why
 *  (also, running nothing, when name or host is not a host-safe name:
 *  names.h). */
int hv_site_hook_run(const char *name, long long plan, const char *host, const char *kind,
                     const json_t *labels, void (*tick)(void *), void *arg, json_t **answer,
                     char *why, size_t len);

/** Closes what the context opened (the libvirt connection). The caller's
 *  fields (changes, journal) are left alone. */
void hv_act_ctx_release(struct hv_act_ctx *ctx);

/* ---- for the rows (act_*.c) ------------------------------------------ */

/** Appends a change {"factor", "scope", "object", "from", "to", "at"} to
 *  ctx->changes. */
void hv_act_note_change(struct hv_act_ctx *ctx, const char *factor, const char *scope,
                        const char *object, const char *from, const char *to);

/** ctx->root joined with rel ("sys/kernel/mm/ksm/run") into buf. */
void hv_act_path(const struct hv_act_ctx *ctx, const char *rel, char *buf, size_t len);

/** Writes printf(fmt) into err; returns -1, so rows can
 *  `return hv_act_fail(err, len, ...)`. */
int hv_act_fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/** Journals entry (stolen) unless the journal already holds one for its
 *  kind and object (the plan's first original wins). Returns 1 when it
 *  added the entry, 0 when one was there, or -1 with err: the change must
 *  then not be made. */
int hv_act_journal(struct hv_act_ctx *ctx, json_t *entry, char *err, size_t len);

/** Takes back the entry of kind and object that hv_act_journal() just
 *  added, when the change it announced failed (so a restore does not try
 *  to undo what never happened). Logged when the journal cannot be
 *  written. */
void hv_act_unjournal(struct hv_act_ctx *ctx, const char *kind, const char *object);

#endif
