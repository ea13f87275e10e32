/* actuators.c — the actuator table and the passes of a step: apply, read
 * back, restore; see actuator.h. */
#include "worker/virt/actuator.h"

#include "fault.h"
#include "log.h"
#include "timeutil.h"
#include "worker/virt/clone.h"
#include "worker/virt/rows.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tables in the order their rows are applied. */
static const struct {
    const struct hv_actuator *rows;
    const size_t *n;
} tables[] = {
    {hv_host_rows, &hv_host_nrows},
    {hv_xml_rows, &hv_xml_nrows},
    {hv_live_rows, &hv_live_nrows},
};

#define N_TABLES (sizeof tables / sizeof tables[0])

size_t hv_actuator_count(void)
{
    size_t n = 0;
    for (size_t t = 0; t < N_TABLES; t++)
        n += *tables[t].n;
    return n;
}

const struct hv_actuator *hv_actuator_at(size_t i)
{
    for (size_t t = 0; t < N_TABLES; t++) {
        if (i < *tables[t].n)
            return &tables[t].rows[i];
        i -= *tables[t].n;
    }
    return NULL;
}

const struct hv_actuator *hv_actuator_find(const char *factor)
{
    for (size_t i = 0, n = hv_actuator_count(); factor != NULL && i < n; i++)
        if (strcmp(hv_actuator_at(i)->factor, factor) == 0)
            return hv_actuator_at(i);
    return NULL;
}

void hv_act_path(const struct hv_act_ctx *ctx, const char *rel, char *buf, size_t len)
{
    const char *root = ctx->root != NULL && ctx->root[0] != '\0' ? ctx->root : "/";
    size_t n = strlen(root);
    snprintf(buf, len, "%s%s%s", root, root[n - 1] == '/' ? "" : "/", rel);
}

int hv_act_fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

void hv_act_note_change(struct hv_act_ctx *ctx, const char *factor, const char *scope,
                        const char *object, const char *from, const char *to)
{
    if (ctx->changes == NULL)
        ctx->changes = json_array();
    char at[40];
    hv_now_iso8601(at, sizeof at);
    json_array_append_new(ctx->changes,
                          json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "factor", factor, "scope",
                                    scope, "object", object, "from", from, "to", to, "at", at));
    hv_info("%s %s: %s %s -> %s", scope, object, factor, from, to);
}

int hv_act_journal(struct hv_act_ctx *ctx, json_t *entry, char *err, size_t len)
{
    const char *kind = json_string_value(json_object_get(entry, "kind"));
    const char *object = json_string_value(json_object_get(entry, "object"));
    if (ctx->journal == NULL || kind == NULL || object == NULL) {
        json_decref(entry);
        return hv_act_fail(err, len, "no journal to keep the original in: nothing changed");
    }
    if (hv_journal_find(ctx->journal, kind, object) != NULL) {
        json_decref(entry);
        return 0;
    }
    return hv_journal_add(ctx->journal, entry, err, len) == 0 ? 1 : -1;
}

void hv_act_unjournal(struct hv_act_ctx *ctx, const char *kind, const char *object)
{
    for (size_t i = hv_journal_count(ctx->journal); i-- > 0;) {
        const json_t *e = hv_journal_at(ctx->journal, i);
        if (strcmp(json_string_value(json_object_get(e, "kind")), kind) == 0 &&
            strcmp(json_string_value(json_object_get(e, "object")), object) == 0) {
            char err[512];
            if (hv_journal_remove(ctx->journal, i, err, sizeof err) != 0)
                hv_warn("%s", err);
            return;
        }
    }
}

/* Appends a "; "-separated clause to the step's error. */
static void add_error(char *err, size_t len, const char *msg)
{
    size_t k = strlen(err);
    if (k + 3 < len)
        snprintf(err + k, len - k, "%s%s", k ? "; " : "", msg);
}

/* ---- a pass over levels ------------------------------------------------ */

/* One step's pass: the levels normalised, the domains, what failed. */
struct pass {
    struct hv_act_ctx *ctx;
    json_t *levels; /* factor → normalised level */
    json_t *failed; /* factor → true: already reported, no read-back complaint */
    json_t *settings;
    struct hv_act_domain *domains;
    size_t n_domains;
    char *err;
    size_t len;
};

/* Checks and normalises levels into p->levels. Returns 0 or -1. */
static int normalise(struct pass *p, const json_t *levels)
{
    p->levels = json_object();
    const char *name;
    json_t *v;
    int rc = 0;
    json_object_foreach((json_t *)levels, name, v)
    {
        const struct hv_factor_def *def = hv_factor_find(name);
        char level[128], why[1200], msg[1400];
        if (hv_site_factor_is(name)) {
            if (hv_site_level(name, v, level, sizeof level, why, sizeof why) != 0) {
                snprintf(msg, sizeof msg, "%s=%s: %s", name,
                         json_is_string(v) ? json_string_value(v) : "?", why);
                add_error(p->err, p->len, msg);
                rc = -1;
            } else {
                json_object_set_new(p->levels, name, json_string(level));
            }
        } else if (def == NULL || hv_actuator_find(name) == NULL) {
            snprintf(msg, sizeof msg, "%s: no such factor", name);
            add_error(p->err, p->len, msg);
            rc = -1;
        } else if (hv_factor_level(def, v, level, sizeof level, why, sizeof why) != 0) {
            snprintf(msg, sizeof msg, "%s: %s", name, why);
            add_error(p->err, p->len, msg);
            rc = -1;
        } else {
            json_object_set_new(p->levels, name, json_string(level));
        }
    }
    return rc;
}

static const struct hv_factor_def *def_of(const struct hv_actuator *a)
{
    return hv_factor_find(a->factor);
}

static bool has_guest_levels(const struct pass *p)
{
    const char *name;
    json_t *v;
    json_object_foreach(p->levels, name, v)
    {
        if (!hv_site_factor_is(name) && def_of(hv_actuator_find(name))->scope == HV_SCOPE_GUEST)
            return true;
    }
    return false;
}

static void fail_factor(struct pass *p, const char *factor, const char *msg)
{
    add_error(p->err, p->len, msg);
    json_object_set_new(p->failed, factor, json_true());
}

/* Opens the domains when guest levels need them; -1 fails every guest
 * level. */
static int open_domains(struct pass *p)
{
    if (p->domains != NULL || !has_guest_levels(p))
        return 0;
    char msg[1024];
    if (hv_act_domains_open(p->ctx, &p->domains, &p->n_domains, msg, sizeof msg) == 0)
        return 0;
    add_error(p->err, p->len, msg);
    const char *name;
    json_t *v;
    json_object_foreach(p->levels, name, v)
    {
        if (!hv_site_factor_is(name) && def_of(hv_actuator_find(name))->scope == HV_SCOPE_GUEST)
            json_object_set_new(p->failed, name, json_true());
    }
    return -1;
}

/* Runs row apply on the host or each domain. */
static void apply_row(struct pass *p, const struct hv_actuator *a)
{
    const char *level = json_string_value(json_object_get(p->levels, a->factor));
    if (level == NULL || a->apply == NULL)
        return;
    char msg[1024];
    if (def_of(a)->scope == HV_SCOPE_HOST) {
        if (a->apply(a, p->ctx, NULL, level, msg, sizeof msg) != 0)
            fail_factor(p, a->factor, msg);
        return;
    }
    for (size_t i = 0; i < p->n_domains; i++)
        if (a->apply(a, p->ctx, &p->domains[i], level, msg, sizeof msg) != 0)
            fail_factor(p, a->factor, msg);
}

/* The site factors among the levels, after the host rows: each applied
 * by its declaration's programs (act_site.c). */
static void apply_site(struct pass *p)
{
    const char *name;
    json_t *v;
    json_object_foreach(p->levels, name, v)
    {
        if (!hv_site_factor_is(name))
            continue;
        struct hv_actuator a = hv_site_row_of(name);
        char msg[1024];
        if (a.apply(&a, p->ctx, NULL, json_string_value(v), msg, sizeof msg) != 0)
            fail_factor(p, name, msg);
    }
}

/* The restart rows of every domain, one definition per domain. */
static void apply_definitions(struct pass *p)
{
    for (size_t i = 0; i < p->n_domains; i++) {
        char msg[2048];
        if (hv_xml_apply_domain(p->ctx, &p->domains[i], p->levels, msg, sizeof msg) == 0)
            continue;
        add_error(p->err, p->len, msg);
        for (size_t r = 0; r < hv_xml_nrows; r++)
            if (json_object_get(p->levels, hv_xml_rows[r].factor) != NULL)
                json_object_set_new(p->failed, hv_xml_rows[r].factor, json_true());
    }
}

/* Starts the plan's clones that do not run yet (clone.h): made stopped,
 * they take the restart-class levels without a restart, and the live
 * levels then need them running. */
static void start_clones(struct pass *p)
{
    for (size_t i = 0; i < p->n_domains; i++) {
        struct hv_act_domain *d = &p->domains[i];
        char msg[1024];
        if (d->active || !hv_clone_journalled(p->ctx->journal, d->name))
            continue;
        if (hv_clone_start(p->ctx, d->name, msg, sizeof msg) != 0)
            add_error(p->err, p->len, msg);
        hv_act_domain_refresh(p->ctx, d);
    }
}

/* ---- reading back ----------------------------------------------------- */

/* A setting for the host: {"level", "read_back", "source", "detail"}. */
static json_t *host_setting(struct pass *p, const struct hv_actuator *a, const char *level)
{
    json_t *s = json_pack("{s:s}", "level", level);
    if (a->read_back == NULL) {
        json_object_set_new(s, "read_back", json_null());
        json_object_set_new(s, "source",
                            json_string("per job: the affinity of the job's benchmark threads, "
                                        "in its result's observed.settings.process_pin"));
        return s;
    }
    struct hv_reading r = {.detail = NULL};
    char msg[1024];
    snprintf(r.value, sizeof r.value, "%s", level);
    if (a->read_back(a, p->ctx, NULL, &r, msg, sizeof msg) != 0) {
        json_object_set_new(s, "read_back", json_null());
        json_object_set_new(s, "error", json_string(msg));
        if (json_object_get(p->failed, a->factor) == NULL)
            fail_factor(p, a->factor, msg);
        return s;
    }
    json_object_set_new(s, "read_back", json_string(r.value));
    json_object_set_new(s, "source", json_string(r.source));
    if (r.detail != NULL)
        json_object_set_new(s, "detail", r.detail);
    if (strcmp(r.value, level) != 0 && json_object_get(p->failed, a->factor) == NULL) {
        snprintf(msg, sizeof msg, "%s=%s: reads back %s (%s)", a->factor, level, r.value, r.source);
        fail_factor(p, a->factor, msg);
    }
    return s;
}

/* Reads a guest row back on one domain into the setting's detail; returns
 * whether it reads back at level. */
static bool read_domain(struct pass *p, const struct hv_actuator *a, struct hv_act_domain *d,
                        const char *level, json_t *setting)
{
    struct hv_reading r = {.detail = NULL};
    char msg[1024];
    snprintf(r.value, sizeof r.value, "%s", level);
    json_t *per = json_object_get(json_object_get(setting, "detail"), d->name);
    int rc = def_of(a)->disruption == HV_DISRUPT_RESTART && d->xml == NULL
                 ? hv_act_fail(msg, sizeof msg, "%s: cannot read the definition of %s: %s",
                               a->factor, d->name, hv_act_virt_error(p->ctx))
                 : a->read_back(a, p->ctx, d, &r, msg, sizeof msg);
    if (rc != 0) {
        json_object_set_new(per, "read_back", json_null());
        json_object_set_new(per, "error", json_string(msg));
        if (json_object_get(p->failed, a->factor) == NULL)
            fail_factor(p, a->factor, msg);
        return false;
    }
    json_object_set_new(per, "read_back", json_string(r.value));
    json_object_set_new(per, "source", json_string(r.source));
    if (r.detail != NULL)
        json_object_update(per, r.detail);
    json_decref(r.detail);
    if (json_object_get(setting, "source") == NULL)
        json_object_set_new(setting, "source", json_string(r.source));
    if (strcmp(r.value, level) == 0)
        return true;
    if (json_object_get(p->failed, a->factor) == NULL) {
        snprintf(msg, sizeof msg, "%s=%s: %s reads back %s (%s)", a->factor, level, d->name,
                 r.value, r.source);
        fail_factor(p, a->factor, msg);
    }
    return false;
}

/* A guest setting: the common read-back of every domain (or "mixed"),
 * with each domain's in detail. */
static json_t *guest_setting(struct pass *p, const struct hv_actuator *a, const char *level)
{
    json_t *s = json_pack("{s:s, s:{}}", "level", level, "detail");
    const char *common = NULL;
    bool mixed = false;
    for (size_t i = 0; i < p->n_domains; i++) {
        struct hv_act_domain *d = &p->domains[i];
        json_object_set_new(json_object_get(s, "detail"), d->name, json_object());
        read_domain(p, a, d, level, s);
        const char *v = json_string_value(
            json_object_get(json_object_get(json_object_get(s, "detail"), d->name), "read_back"));
        if (v == NULL || (common != NULL && strcmp(common, v) != 0))
            mixed = true;
        common = common != NULL ? common : v;
    }
    json_object_set_new(s, "read_back",
                        mixed || common == NULL
                            ? (common != NULL ? json_string("mixed") : json_null())
                            : json_string(common));
    return s;
}

/* Reads every level back into p->settings. */
static void read_all(struct pass *p)
{
    if (open_domains(p) == 0)
        for (size_t i = 0; i < p->n_domains; i++) {
            char msg[1024];
            struct hv_act_domain *d = &p->domains[i];
            hv_act_domain_refresh(p->ctx, d);
            if (hv_xml_load_for_read(p->ctx, d, msg, sizeof msg) != 0) {
                /* not the definition apply edited: restart rows must not
                 * read that as the domain's */
                hv_xml_free(d->xml);
                d->xml = NULL;
            }
        }
    for (size_t i = 0, n = hv_actuator_count(); i < n; i++) {
        const struct hv_actuator *a = hv_actuator_at(i);
        const char *level = json_string_value(json_object_get(p->levels, a->factor));
        if (level == NULL)
            continue;
        json_t *s;
        if (def_of(a)->scope == HV_SCOPE_HOST)
            s = host_setting(p, a, level);
        else if (p->domains != NULL)
            s = guest_setting(p, a, level);
        else
            s = json_pack("{s:s, s:n}", "level", level, "read_back");
        json_object_set_new(p->settings, a->factor, s);
    }
    const char *name;
    json_t *v;
    json_object_foreach(p->levels, name, v)
    {
        if (!hv_site_factor_is(name))
            continue;
        struct hv_actuator a = hv_site_row_of(name);
        json_object_set_new(p->settings, name, host_setting(p, &a, json_string_value(v)));
    }
}

static void pass_end(struct pass *p)
{
    if (p->domains != NULL)
        hv_act_domains_free(p->ctx, p->domains, p->n_domains);
    json_decref(p->levels);
    json_decref(p->failed);
}

int hv_actuators_apply(const json_t *levels, struct hv_act_ctx *ctx, json_t **settings, char *err,
                       size_t len)
{
    struct pass p = {
        .ctx = ctx, .failed = json_object(), .settings = json_object(), .err = err, .len = len};
    err[0] = '\0';
    *settings = p.settings;
    if (normalise(&p, levels) != 0) {
        pass_end(&p);
        return -1;
    }
    for (size_t i = 0; i < hv_host_nrows; i++)
        apply_row(&p, &hv_host_rows[i]);
    if (json_array_size(ctx->changes) > 0)
        hv_fault("apply.changed");
    apply_site(&p);
    if (open_domains(&p) == 0 && p.domains != NULL) {
        apply_definitions(&p);
        start_clones(&p);
        for (size_t i = 0; i < hv_live_nrows; i++)
            apply_row(&p, &hv_live_rows[i]);
    }
    read_all(&p);
    pass_end(&p);
    return err[0] == '\0' ? 0 : -1;
}

int hv_actuators_read_back(const json_t *levels, struct hv_act_ctx *ctx, json_t **settings,
                           char *err, size_t len)
{
    struct pass p = {
        .ctx = ctx, .failed = json_object(), .settings = json_object(), .err = err, .len = len};
    err[0] = '\0';
    *settings = p.settings;
    if (normalise(&p, levels) == 0)
        read_all(&p);
    pass_end(&p);
    return err[0] == '\0' ? 0 : -1;
}

json_t *hv_actuators_host_settings(struct hv_act_ctx *ctx)
{
    json_t *out = json_object();
    for (size_t i = 0; out != NULL && i < hv_host_nrows; i++) {
        const struct hv_actuator *a = &hv_host_rows[i];
        const struct hv_factor_def *def = hv_factor_find(a->factor);
        if (a->read_back == NULL || def == NULL || def->scope != HV_SCOPE_HOST)
            continue;
        struct hv_reading r = {.detail = NULL};
        char msg[1024];
        if (a->read_back(a, ctx, NULL, &r, msg, sizeof msg) == 0 && r.value[0] != '\0')
            json_object_set_new(out, a->factor, json_string(r.value));
        json_decref(r.detail);
    }
    hv_site_settings(ctx, out);
    return out;
}

json_t *hv_actuators_operator_pending(const json_t *levels, struct hv_act_ctx *ctx)
{
    json_t *out = json_array();
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)levels, name, v)
    {
        const struct hv_factor_def *def = hv_factor_find(name);
        const struct hv_actuator *a = hv_actuator_find(name);
        char level[128], why[256], msg[1024];
        if (out == NULL || def == NULL || a == NULL || def->disruption != HV_DISRUPT_REBOOT ||
            a->read_back == NULL || a->apply == NULL ||
            hv_factor_level(def, v, level, sizeof level, why, sizeof why) != 0)
            continue;
        struct hv_reading r = {.detail = NULL};
        snprintf(r.value, sizeof r.value, "%s", level);
        /* A parameter that cannot be read (its module is not loaded) is
         * the apply pass's failure, not a pause. */
        if (a->read_back(a, ctx, NULL, &r, msg, sizeof msg) == 0 && strcmp(r.value, level) != 0) {
            const char *cmd =
                json_string_value(json_object_get(json_object_get(r.detail, "commands"), level));
            /* The row's apply only reads: it says what the operator does. */
            a->apply(a, ctx, NULL, level, msg, sizeof msg);
            json_array_append_new(out,
                                  json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "factor", name,
                                            "level", level, "value", r.value, "file", r.source,
                                            "command", cmd != NULL ? cmd : "", "message", msg));
        }
        json_decref(r.detail);
    }
    return out;
}

/* The row that reverts an entry: the row of its factor when that row
 * writes entries of its kind, else the first row of its kind (a domain's
 * definition serves every restart row). */
static const struct hv_actuator *revert_row(const json_t *entry)
{
    const char *kind = json_string_value(json_object_get(entry, "kind"));
    if (kind != NULL && strcmp(kind, HV_SITE_KIND) == 0)
        return &hv_site_row;
    const struct hv_actuator *a =
        hv_actuator_find(json_string_value(json_object_get(entry, "factor")));
    if (a != NULL && strcmp(a->kind, kind) == 0 && a->revert != NULL)
        return a;
    for (size_t i = 0, n = hv_actuator_count(); i < n; i++) {
        a = hv_actuator_at(i);
        if (strcmp(a->kind, kind) == 0 && a->revert != NULL)
            return a;
    }
    return NULL;
}

int hv_actuators_restore(struct hv_act_ctx *ctx, char *err, size_t len)
{
    err[0] = '\0';
    if (ctx->journal == NULL)
        return hv_act_fail(err, len, "no journal to restore");
    for (size_t i = hv_journal_count(ctx->journal); i-- > 0;) {
        const json_t *entry = hv_journal_at(ctx->journal, i);
        const char *kind = json_string_value(json_object_get(entry, "kind"));
        const char *object = json_string_value(json_object_get(entry, "object"));
        const char *scope = json_string_value(json_object_get(entry, "scope"));
        const struct hv_actuator *a = revert_row(entry);
        char msg[1024];
        if (strcmp(kind, HV_CLONE_KIND) == 0) {
            if (hv_clone_revert(ctx, entry, msg, sizeof msg) != 0 ||
                hv_journal_remove(ctx->journal, i, msg, sizeof msg) != 0)
                add_error(err, len, msg);
        } else if (scope != NULL && strcmp(scope, "guest") == 0 &&
                   hv_clone_journalled(ctx->journal, object)) {
            /* a clone's settings go with the clone */
            if (hv_journal_remove(ctx->journal, i, msg, sizeof msg) != 0)
                add_error(err, len, msg);
        } else if (a == NULL) {
            snprintf(msg, sizeof msg, "no actuator restores journal entries of kind %s (%s)",
                     json_string_value(json_object_get(entry, "kind")),
                     json_string_value(json_object_get(entry, "object")));
            add_error(err, len, msg);
        } else if (a->revert(a, ctx, entry, msg, sizeof msg) != 0 ||
                   hv_journal_remove(ctx->journal, i, msg, sizeof msg) != 0) {
            add_error(err, len, msg);
        } else {
            hv_fault("restore.changed");
        }
    }
    return hv_journal_count(ctx->journal) == 0 ? 0 : -1;
}

json_t *hv_actuators_probe(const struct hv_act_ctx *ctx)
{
    json_t *out = json_object();
    for (size_t t = 0; out != NULL && t < N_TABLES; t++) {
        bool guest = tables[t].rows != hv_host_rows;
        for (size_t i = 0; i < *tables[t].n; i++) {
            const struct hv_actuator *a = &tables[t].rows[i];
            char why[600] = "";
            int rc = 0;
            if (guest && (ctx->libvirt_uri == NULL || ctx->libvirt_uri[0] == '\0'))
                rc = hv_act_fail(why, sizeof why, "no libvirt connection (--libvirt)");
            else if (!guest)
                rc = hv_host_row_probe(a, ctx, why, sizeof why);
            json_t *o = rc == 0 ? json_pack("{s:b}", "ok", 1)
                                : json_pack("{s:b, s:s}", "ok", 0, "why", why);
            if (o == NULL || json_object_set_new(out, a->factor, o) != 0) {
                json_decref(out);
                return NULL;
            }
        }
    }
    return out;
}
