/* plan_disrupt.c — see plan_disrupt.h. */
#include "plan_disrupt.h"

#include "errors.h"
#include "factors.h"
#include "jspec.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names listed in a sentence before "and N more". */
#define LIST_SHOWN 8

/* The domain states in which libvirt counts a domain active: a restart
 * class level then needs it restarted (act_restart.c). */
static const char *const active_states[] = {"running", "idle", "paused", "in shutdown",
                                            "pmsuspended"};

/* Joins the n names as "a, b, c" into buf, past LIST_SHOWN as "..., and
 * N more". */
static void join(char *buf, size_t len, const char *const *names, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && i < LIST_SHOWN && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? ", " : "", names[i]);
    if (n > LIST_SHOWN && k < len)
        snprintf(buf + k, len - k, ", and %zu more", n - LIST_SHOWN);
}

/* The libvirt domain a guest target is: "HOST/NAME" is NAME. */
static const char *domain_of(const char *target)
{
    const char *slash = strrchr(target, '/');
    return slash != NULL ? slash + 1 : target;
}

/* Member key of domain name as host_facts show it ("state", "manager"),
 * or NULL. */
static const char *domain_fact(const json_t *host_facts, const char *name, const char *key)
{
    size_t i;
    const json_t *d;
    json_array_foreach(json_object_get(host_facts, "domains"), i, d)
    {
        const char *n = json_string_value(json_object_get(d, "name"));
        if (n != NULL && strcmp(n, name) == 0)
            return json_string_value(json_object_get(d, key));
    }
    return NULL;
}

static bool is_active(const char *state)
{
    for (size_t i = 0; state != NULL && i < sizeof active_states / sizeof *active_states; i++)
        if (strcmp(state, active_states[i]) == 0)
            return true;
    return false;
}

/* The path of the plan member naming domain: its index in
 * targets.guests.domains, else targets.guests (a label). */
static void domain_path(const struct hv_plan *plan, const char *domain, char *buf, size_t len)
{
    const json_t *domains = json_object_get(
        json_object_get(json_object_get(plan->doc, "targets"), "guests"), "domains");
    snprintf(buf, len, "/targets/guests");
    for (size_t i = 0; i < json_array_size(domains); i++)
        if (strcmp(json_string_value(json_array_get(domains, i)), domain) == 0)
            hv_jpath_index(buf, len, "/targets/guests/domains", i);
}

/* The restart-class factors the plan sets, into names[*n]. */
static void factors_of(const struct hv_plan *plan, enum hv_disruption d, const char **names,
                       size_t *n)
{
    const char *name;
    json_t *levels;
    *n = 0;
    json_object_foreach(json_object_get(plan->doc, "factors"), name, levels)
    {
        const struct hv_factor_def *f = hv_factor_find(name);
        if (f != NULL && f->disruption == d && *n < HV_PLAN_MAX_FACTORS)
            names[(*n)++] = name;
    }
}

/* Restart-class factors on domains the plan did not create, without
 * allow_restart. */
static int restart_judgement(const struct hv_plan *plan, const json_t *host_facts, json_t *warnings,
                             json_t *refusals, char *detail, size_t len)
{
    const char *factors[HV_PLAN_MAX_FACTORS];
    size_t n_factors;
    factors_of(plan, HV_DISRUPT_RESTART, factors, &n_factors);
    if (n_factors == 0 || json_is_true(json_object_get(plan->doc, "allow_restart")))
        return 0;
    const char **domains = calloc(plan->n_guests + 1, sizeof *domains);
    const char **running = calloc(plan->n_guests + 1, sizeof *running);
    const char **configs = calloc(plan->n_configs + 1, sizeof *configs);
    if (domains == NULL || running == NULL || configs == NULL) {
        free(domains);
        free(running);
        free(configs);
        return -1;
    }
    size_t n_domains = 0, n_running = 0;
    for (size_t i = 0; i < plan->n_guests; i++) {
        /* Template clones are created by the plan. */
        if (strstr(plan->guests[i], HV_PLAN_ID_MARK) != NULL)
            continue;
        const char *d = domain_of(plan->guests[i]);
        domains[n_domains++] = d;
        const char *state = domain_fact(host_facts, d, "state");
        if (!is_active(state))
            continue;
        running[n_running++] = d;
        char path[256];
        domain_path(plan, d, path, sizeof path);
        hv_errors_add(refusals, path,
                      "domain %s is %s on host %s (its worker's last facts) and restart-class "
                      "factors would restart it, which the plan does not allow: set "
                      "allow_restart: true in the plan, or stop %s before submitting it",
                      d, state, plan->host, d);
    }
    if (n_domains > 0) {
        for (size_t i = 0; i < plan->n_configs; i++)
            configs[i] = plan->configs[i].name;
        char f[512], d[1024], c[2048];
        join(f, sizeof f, factors, n_factors);
        join(d, sizeof d, domains, n_domains);
        join(c, sizeof c, configs, plan->n_configs);
        size_t blocks = plan->n_configs * (size_t)plan->rep_min;
        hv_errors_add(warnings, "/allow_restart",
                      "restart-class factors restart the existing domains %s (%s; not created "
                      "by the plan), which needs allow_restart: true in the plan: without it "
                      "the apply step of a block fails on each of them that runs with levels "
                      "its definition does not hold, and with it every job of the block, host "
                      "baseline included; blocks at risk: configurations %s (%zu block%s). Set "
                      "allow_restart: true, or stop those domains before the plan runs",
                      d, f, c, blocks, blocks == 1 ? "" : "s");
    }
    if (n_running > 0) {
        char r[1024];
        join(r, sizeof r, running, n_running);
        snprintf(detail, len,
                 "restart-class factors would restart running domain%s %s on host %s, which the "
                 "plan did not create: set allow_restart: true in the plan, or stop %s first",
                 n_running == 1 ? "" : "s", r, plan->host, n_running == 1 ? "it" : "them");
    }
    free(domains);
    free(running);
    free(configs);
    return 0;
}

/* Whether the plan names domain in targets.guests.domains. */
static bool named(const struct hv_plan *plan, const char *domain)
{
    char path[256];
    domain_path(plan, domain, path, sizeof path);
    return strcmp(path, "/targets/guests") != 0;
}

/* Guest factors on domains another VM manager owns (the worker's facts
 * name it: worker/virt/owner.h), which the plan must name and allow
 * restarts on; the worker refuses them otherwise. */
static void manager_judgement(const struct hv_plan *plan, const json_t *host_facts,
                              json_t *refusals, char *detail, size_t len)
{
    bool guest_factors = false;
    const char *name;
    json_t *levels;
    json_object_foreach(json_object_get(plan->doc, "factors"), name, levels)
    {
        const struct hv_factor_def *f = hv_factor_find(name);
        guest_factors |= f != NULL && f->scope == HV_SCOPE_GUEST;
    }
    if (!guest_factors)
        return;
    bool allow = json_is_true(json_object_get(plan->doc, "allow_restart"));
    for (size_t i = 0; i < plan->n_guests; i++) {
        if (strstr(plan->guests[i], HV_PLAN_ID_MARK) != NULL)
            continue;
        const char *d = domain_of(plan->guests[i]);
        const char *manager = domain_fact(host_facts, d, "manager");
        if (manager == NULL || (allow && named(plan, d)))
            continue;
        char path[256];
        domain_path(plan, d, path, sizeof path);
        hv_errors_add(refusals, path,
                      "domain %s on host %s is managed by %s (its worker's last facts): hvbench "
                      "changes a domain another manager owns only when the plan names it in "
                      "targets.guests.domains and sets allow_restart: true",
                      d, plan->host, manager);
        if (len > 0 && detail[0] == '\0')
            snprintf(detail, len,
                     "guest factors would change domain %s on host %s, which %s manages: name it "
                     "in targets.guests.domains and set allow_restart: true, or use a template's "
                     "clones (targets.guests.template)",
                     d, plan->host, manager);
    }
}

/* Whether block device d of the storage facts is the disk called name:
 * its own name or a partition's. */
static bool is_disk(const json_t *d, const char *name)
{
    const char *n = json_string_value(json_object_get(d, "name"));
    if (n != NULL && strcmp(n, name) == 0)
        return true;
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(d, "partitions"), i, p)
    {
        if (json_is_string(p) && strcmp(json_string_value(p), name) == 0)
            return true;
    }
    return false;
}

/* Whether mount point mp is among d's mounts. */
static bool holds(const json_t *d, const char *mp)
{
    size_t i;
    const json_t *m;
    json_array_foreach(json_object_get(d, "mounts"), i, m)
    {
        if (mp != NULL && json_is_string(m) && strcmp(json_string_value(m), mp) == 0)
            return true;
    }
    return false;
}

/* Whether disk d holds place, a {"path", "mount", "device"} of the
 * storage facts (state_dir, one of databases): its mount is among d's
 * mounts, or its device is d. */
static bool holds_place(const json_t *d, const json_t *place)
{
    const char *name = json_string_value(json_object_get(d, "name"));
    const char *dev = json_string_value(json_object_get(place, "device"));
    return holds(d, json_string_value(json_object_get(place, "mount"))) ||
           (dev != NULL && name != NULL && strcmp(dev, name) == 0);
}

/* Appends item number i of n to buf (k bytes used of len), after ", "
 * or, before the last, " and ". */
static void add_item(char *buf, size_t len, size_t *k, size_t i, size_t n, const char *item)
{
    if (*k < len)
        *k += (size_t)snprintf(buf + *k, len - *k, "%s%s",
                               i == 0       ? ""
                               : i + 1 == n ? " and "
                                            : ", ",
                               item);
}

/* "WHAT PATH (on MOUNT)" of place into buf; without a mount, "WHAT PATH". */
static void place_item(char *buf, size_t len, const char *what, const json_t *place)
{
    const char *mount = json_string_value(json_object_get(place, "mount"));
    snprintf(buf, len, "%s %s%s%s%s", what, json_string_value(json_object_get(place, "path")),
             mount != NULL ? " (on " : "", mount != NULL ? mount : "", mount != NULL ? ")" : "");
}

/* A factor acting on tuning.disk whose disk holds the host's own files:
 * its root file system, the worker's state folder, the data directory of
 * a PostgreSQL server running there (hvbench's own database, perhaps). */
static void disk_judgement(const struct hv_plan *plan, const json_t *host_facts, json_t *warnings)
{
    const char *disk =
        json_string_value(json_object_get(json_object_get(plan->doc, "tuning"), "disk"));
    const char *factors[HV_PLAN_MAX_FACTORS];
    size_t n_factors = 0;
    const char *name;
    json_t *levels;
    json_object_foreach(json_object_get(plan->doc, "factors"), name, levels)
    {
        const struct hv_factor_def *f = hv_factor_find(name);
        if (f != NULL && f->host_file != NULL && strstr(f->host_file, "DISK") != NULL &&
            n_factors < HV_PLAN_MAX_FACTORS)
            factors[n_factors++] = name;
    }
    if (disk == NULL || n_factors == 0)
        return;
    /* A /dev/disk/by-* or /dev/mapper path names the disk by a link the
     * facts do not list: not judged. */
    const char *base = strncmp(disk, "/dev/", 5) == 0 ? disk + 5 : disk;
    const json_t *storage = json_object_get(host_facts, "storage");
    const json_t *state = json_object_get(storage, "state_dir");
    const json_t *dbs = json_object_get(storage, "databases");
    size_t i;
    const json_t *d;
    json_array_foreach(json_object_get(storage, "block_devices"), i, d)
    {
        if (!is_disk(d, base))
            continue;
        const char *dev = json_string_value(json_object_get(d, "name"));
        bool root = holds(d, "/");
        bool st = state != NULL && holds_place(d, state);
        size_t n_db = 0, k;
        const json_t *db;
        json_array_foreach(dbs, k, db)
        {
            n_db += holds_place(d, db) && json_is_string(json_object_get(db, "path"));
        }
        if (!root && !st && n_db == 0)
            continue;
        size_t shown = n_db > LIST_SHOWN ? LIST_SHOWN : n_db;
        size_t n = (size_t)root + (size_t)st + shown + (n_db > shown), at = 0, used = 0;
        char what[2048], item[1200];
        what[0] = '\0';
        if (root)
            add_item(what, sizeof what, &used, at++, n, "/ (the host's root file system)");
        if (st) {
            place_item(item, sizeof item, "the host worker's state folder", state);
            add_item(what, sizeof what, &used, at++, n, item);
        }
        size_t named = 0;
        json_array_foreach(dbs, k, db)
        {
            if (named == shown || !holds_place(d, db) ||
                !json_is_string(json_object_get(db, "path")))
                continue;
            place_item(item, sizeof item, "the PostgreSQL data directory", db);
            add_item(what, sizeof what, &used, at++, n, item);
            named++;
        }
        if (n_db > shown) {
            snprintf(item, sizeof item, "%zu more PostgreSQL data directories", n_db - shown);
            add_item(what, sizeof what, &used, at++, n, item);
        }
        char f[512], tail[1024];
        join(f, sizeof f, factors, n_factors);
        /* What the levels do to the PostgreSQL servers there, one or more. */
        const char *servers =
            n_db == 1 ? "the PostgreSQL server of that data directory (hvbench's own database, "
                        "perhaps) runs at every level measured: its service is disturbed and its "
                        "I/O is in the results"
                      : "the PostgreSQL servers of those data directories (hvbench's own "
                        "database, perhaps) run at every level measured: their service is "
                        "disturbed and their I/O is in the results";
        if (root || st)
            snprintf(tail, sizeof tail,
                     "the levels of %s apply to the host's own files too, so its operating "
                     "system and worker share every level measured, and the guests' I/O shares "
                     "the disk with them%s%s",
                     f, n_db > 0 ? "; " : "", n_db > 0 ? servers : "");
        else
            snprintf(tail, sizeof tail, "the levels of %s apply to the %s files too, so %s", f,
                     n_db == 1 ? "database's" : "databases'", servers);
        hv_errors_add(warnings, "/tuning/disk", "tuning.disk %s (disk %s of host %s) holds %s: %s",
                      disk, dev, plan->host, what, tail);
        return;
    }
}

int hv_plan_disruption(const struct hv_plan *plan, const json_t *host_facts, json_t *warnings,
                       json_t *refusals, char *detail, size_t len)
{
    if (len > 0)
        detail[0] = '\0';
    if (restart_judgement(plan, host_facts, warnings, refusals, detail, len) != 0)
        return -1;
    manager_judgement(plan, host_facts, refusals, detail, len);
    disk_judgement(plan, host_facts, warnings);
    return 0;
}
