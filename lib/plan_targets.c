/* plan_targets.c — a plan's targets and tuning objects; see
 * plan_targets.h. */
#include "plan_targets.h"

#include "errors.h"
#include "factors.h"
#include "jspec.h"
#include "names.h"
#include "selector.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The host objects the host-class factors act on: the disk holding the
 * guests' images and the NIC carrying the benchmark traffic. */
static const struct hv_jfield tuning_fields[] = {
    {.name = "disk", .type = HV_J_STRING, .max_len = 128},
    {.name = "nic", .type = HV_J_STRING, .max_len = 15},
    {0},
};

static const struct hv_jfield target_fields[] = {
    {.name = "host", .type = HV_J_STRING, .required = true, .max_len = 128},
    {.name = "guests", .type = HV_J_OBJECT},
    {.name = "require_registered", .type = HV_J_BOOL},
    {0},
};

static const struct hv_jfield guest_fields[] = {
    {.name = "domains", .type = HV_J_ARRAY, .max_len = HV_PLAN_MAX_GUESTS},
    {.name = "label", .type = HV_J_STRING, .max_len = 200},
    {.name = "template", .type = HV_J_OBJECT},
    {0},
};

static const struct hv_jfield template_fields[] = {
    {.name = "domain", .type = HV_J_STRING, .required = true, .max_len = 128},
    {.name = "count", .type = HV_J_INTEGER, .required = true, .min = 1, .max = HV_PLAN_MAX_GUESTS},
    {.name = "prefix", .type = HV_J_STRING, .max_len = 100},
    {0},
};

static int check_domains(const json_t *domains, json_t *errors)
{
    int problems = 0;
    char p[64];
    if (json_array_size(domains) == 0) {
        hv_errors_add(errors, "/targets/guests/domains", "must name at least one domain");
        return 1;
    }
    for (size_t i = 0; i < json_array_size(domains); i++) {
        const json_t *d = json_array_get(domains, i);
        hv_jpath_index(p, sizeof p, "/targets/guests/domains", i);
        if (hv_name_host_check(d, p, errors) > 0) {
            problems++;
            continue;
        }
        for (size_t j = 0; j < i; j++)
            if (json_equal(d, json_array_get(domains, j))) {
                hv_errors_add(errors, p, "repeats /targets/guests/domains/%zu", j);
                problems++;
                break;
            }
    }
    return problems;
}

const char *hv_plan_domain_of(const char *target)
{
    const char *slash = strrchr(target, '/');
    return slash != NULL ? slash + 1 : target;
}

int hv_plan_clone_name(char *buf, size_t len, const char *prefix, const char *plan_id,
                       long long index)
{
    int n = snprintf(buf, len, "%sp%s-%lld", prefix, plan_id, index);
    return n >= 0 && (size_t)n < len ? 0 : -1;
}

/* A template's prefix: host-safe, and so is the name of its last clone
 * in a plan of the longest id (the server puts the plan's id into each
 * clone's name). */
static int check_prefix(const json_t *tmpl, json_t *errors)
{
    const json_t *prefix = json_object_get(tmpl, "prefix");
    if (hv_name_host_check(prefix, "/targets/guests/template/prefix", errors) > 0)
        return 1;
    char name[HV_NAME_HOST_MAX * 2];
    long long count = (long long)json_integer_value(json_object_get(tmpl, "count"));
    if (hv_plan_clone_name(name, sizeof name, json_string_value(prefix), HV_PLAN_ID_LONGEST,
                           count) == 0 &&
        hv_name_host_ok(name))
        return 0;
    hv_errors_add(errors, "/targets/guests/template/prefix",
                  "makes clone names such as %s, and a clone's name %s", name, HV_NAME_HOST_RULE);
    return 1;
}

int hv_plan_check_targets(json_t *targets, json_t *errors)
{
    int problems = hv_jspec_check(targets, "/targets", target_fields, errors);
    const json_t *host = json_object_get(targets, "host");
    if (json_is_string(host))
        problems += hv_name_host_check(host, "/targets/host", errors);
    json_t *guests = json_object_get(targets, "guests");
    if (!json_is_object(guests))
        return problems;
    int gp = hv_jspec_check(guests, "/targets/guests", guest_fields, errors);
    problems += gp;
    if (gp > 0)
        return problems;
    int given = (json_object_get(guests, "domains") != NULL) +
                (json_object_get(guests, "label") != NULL) +
                (json_object_get(guests, "template") != NULL);
    if (given != 1) {
        hv_errors_add(errors, "/targets/guests",
                      "must have exactly one of domains, label or template");
        return problems + 1;
    }
    if (json_object_get(guests, "domains") != NULL)
        problems += check_domains(json_object_get(guests, "domains"), errors);
    const char *label = json_string_value(json_object_get(guests, "label"));
    char why[200];
    json_t *sel = label != NULL ? hv_selector_parse(label, why, sizeof why) : NULL;
    if (label != NULL && sel == NULL) {
        hv_errors_add(errors, "/targets/guests/label", "must be a label selector: %s", why);
        problems++;
    }
    json_decref(sel);
    json_t *tmpl = json_object_get(guests, "template");
    if (tmpl != NULL) {
        int tp = hv_jspec_check(tmpl, "/targets/guests/template", template_fields, errors);
        problems += tp;
        const char *d = json_string_value(json_object_get(tmpl, "domain"));
        int dp = tp == 0 ? hv_name_host_check(json_object_get(tmpl, "domain"),
                                              "/targets/guests/template/domain", errors)
                         : 0;
        problems += dp;
        if (tp == 0 && json_object_get(tmpl, "prefix") != NULL)
            problems += check_prefix(tmpl, errors);
        if (tp == 0 && dp == 0 && json_object_get(tmpl, "prefix") == NULL) {
            /* The default prefix obeys the rule a written one does (at
             * most 100 characters), so the normalised plan validates again. */
            char prefix[160];
            snprintf(prefix, sizeof prefix, "%.99s-", d);
            json_object_set_new(tmpl, "prefix", json_string(prefix));
        }
    }
    return problems;
}

/* A character of a device name: letters, digits and . _ - + : @ (what
 * /dev and /dev/disk/by-* names use). */
static bool dev_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           strchr("._-+:@", c) != NULL;
}

/* tuning.disk: a kernel name ("sdb", "nvme0n1p2") or a path under /dev
 * ("/dev/sdb", "/dev/disk/by-id/..."), with no empty, "." or ".."
 * component. */
static bool valid_disk(const char *s)
{
    const char *p = s;
    if (s[0] == '/') {
        if (strncmp(s, "/dev/", 5) != 0)
            return false;
        p = s + 5;
    }
    for (;;) {
        const char *end = strchr(p, '/');
        size_t n = end != NULL ? (size_t)(end - p) : strlen(p);
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return false;
        for (size_t i = 0; i < n; i++)
            if (!dev_char(p[i]))
                return false;
        if (end == NULL)
            return true;
        if (s[0] != '/')
            return false; /* a kernel name has no folder */
        p = end + 1;
    }
}

/* tuning.nic: the kernel's rule for interface names (1 to 15 printable
 * characters, no '/', ':' or space, not "." or ".."). */
static bool valid_nic(const char *s)
{
    if (s[0] == '\0' || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
        return false;
    for (; *s; s++)
        if (*s <= ' ' || *s > '~' || *s == '/' || *s == ':')
            return false;
    return true;
}

/* The plan's tuning member: its names well formed. */
int hv_plan_check_tuning(const json_t *tuning, json_t *errors)
{
    if (hv_jspec_check(tuning, "/tuning", tuning_fields, errors) > 0)
        return 1;
    int problems = 0;
    const char *disk = json_string_value(json_object_get(tuning, "disk"));
    const char *nic = json_string_value(json_object_get(tuning, "nic"));
    if (disk != NULL && !valid_disk(disk)) {
        hv_errors_add(errors, "/tuning/disk",
                      "must be a block device's kernel name (\"sdb\") or its path under /dev "
                      "(\"/dev/sdb\", \"/dev/disk/by-id/...\"): letters, digits and ._-+:@, "
                      "no empty, . or .. component");
        problems++;
    }
    if (nic != NULL && !valid_nic(nic)) {
        hv_errors_add(errors, "/tuning/nic",
                      "must be a network interface's name (\"eth1\"): 1 to 15 printable "
                      "characters without '/', ':' or spaces, not . or ..");
        problems++;
    }
    return problems;
}

/* Host factors that act on the plan's disk or NIC need it named: the host
 * worker does not guess which disk or NIC carries the benchmark. */
void hv_plan_check_tuning_needs(const json_t *doc, json_t *errors, int *impossible)
{
    const json_t *factors = json_object_get(doc, "factors");
    const json_t *tuning = json_object_get(doc, "tuning");
    static const char *const needs[][3] = {
        {"io_scheduler", "disk",
         "\"tuning\": {\"disk\": \"/dev/sdb\"} (the host disk holding "
         "the guests' images, or the benchmark's disk on bare metal)"},
        {"readahead_kb", "disk",
         "\"tuning\": {\"disk\": \"/dev/sdb\"} (the host disk holding "
         "the guests' images, or the benchmark's disk on bare metal)"},
        {"nic_mtu", "nic",
         "\"tuning\": {\"nic\": \"eth1\"} (the host NIC carrying the "
         "benchmark traffic)"},
    };
    for (size_t i = 0; i < sizeof needs / sizeof needs[0]; i++) {
        if (json_object_get(factors, needs[i][0]) == NULL ||
            json_object_get(tuning, needs[i][1]) != NULL)
            continue;
        char fp[64];
        hv_jpath(fp, sizeof fp, "/factors", needs[i][0]);
        hv_errors_add(errors, fp,
                      "%s acts on the host %s the plan names in tuning.%s, and it names "
                      "none: add %s",
                      needs[i][0], needs[i][1], needs[i][1], needs[i][2]);
        (*impossible)++;
    }
}

/* Returns 0, or -1 when memory ran out. */
static int add_guest(struct hv_plan *plan, const char *name)
{
    char *copy = strdup(name);
    if (copy == NULL)
        return -1;
    plan->guests[plan->n_guests++] = copy;
    return 0;
}

/* Fills plan->guests from the domains, label or template. Returns 0, or -1
 * when memory ran out. */
int hv_plan_resolve_guests(struct hv_plan *plan, const json_t *guests,
                           const struct hv_plan_env *env, json_t *errors, int *impossible)
{
    plan->guests = calloc(HV_PLAN_MAX_GUESTS, sizeof *plan->guests);
    if (plan->guests == NULL)
        return -1;
    if (guests == NULL)
        return 0;
    int rc = 0;
    const json_t *domains = json_object_get(guests, "domains");
    json_t *refs = NULL;
    if (json_array_size(domains) > 0 && env != NULL && env->guests_by_domain != NULL &&
        env->guests_by_domain(env->arg, plan->host, domains, &refs) != 0) {
        json_decref(refs);
        hv_errors_add(errors, "/targets/guests/domains", "the targets could not be looked up");
        (*impossible)++;
        return 0;
    }
    if (refs != NULL && json_array_size(refs) == json_array_size(domains))
        domains = refs;
    for (size_t i = 0; i < json_array_size(domains); i++)
        rc |= add_guest(plan, json_string_value(json_array_get(domains, i)));
    json_decref(refs);
    const json_t *tmpl = json_object_get(guests, "template");
    if (tmpl != NULL) {
        const char *prefix = json_string_value(json_object_get(tmpl, "prefix"));
        json_int_t count = json_integer_value(json_object_get(tmpl, "count"));
        for (json_int_t i = 1; i <= count; i++) {
            char name[200];
            hv_plan_clone_name(name, sizeof name, prefix, HV_PLAN_ID_TOKEN, (long long)i);
            rc |= add_guest(plan, name);
        }
    }
    const char *label = json_string_value(json_object_get(guests, "label"));
    if (rc != 0 || label == NULL || env == NULL || env->guests_by_label == NULL)
        return rc;
    char why[200];
    json_t *sel = hv_selector_parse(label, why, sizeof why), *names = NULL;
    int looked = sel != NULL ? env->guests_by_label(env->arg, plan->host, sel, &names) : -1;
    json_decref(sel);
    if (looked != 0) {
        json_decref(names);
        hv_errors_add(errors, "/targets/guests/label", "the targets could not be looked up");
        (*impossible)++;
        return 0;
    }
    if (json_array_size(names) == 0) {
        hv_errors_add(errors, "/targets/guests/label", "no registered guest carries the labels %s",
                      label);
        (*impossible)++;
    }
    for (size_t i = 0; i < json_array_size(names) && plan->n_guests < HV_PLAN_MAX_GUESTS; i++) {
        const char *name = json_string_value(json_array_get(names, i));
        if (!hv_name_host_ok(hv_plan_domain_of(name))) {
            hv_errors_add(errors, "/targets/guests/label",
                          "picks the registered guest %s, whose domain name %s", name,
                          HV_NAME_HOST_RULE);
            (*impossible)++;
            continue;
        }
        rc |= add_guest(plan, name);
    }
    json_decref(names);
    return rc;
}
