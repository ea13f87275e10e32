/* act_restart.c — applies a domain's restart-class levels in one go: the
 * persistent XML is edited by every restart row, checked, journalled whole,
 * defined, and the domain restarted once when it runs.
 *
 * A running domain is restarted only when the step allows it
 * (allow_restart) or the plan created the domain, which its definition
 * says with <metadata><hvbench:plan xmlns:hvbench="urn:hvbench:plan">PLAN
 * </hvbench:plan></metadata>; otherwise nothing is changed and the step
 * fails saying so. A restart is an ACPI power-off, waited for up to
 * ctx->shutdown_timeout seconds, then (a guest that ignores ACPI) a
 * destroy, then a start with the new definition. A guest this worker
 * started and that is still booting is first given time to come up
 * (booting.h): one that boots ignores ACPI. A domain that is not
 * running is only redefined: the levels take effect at its next start.
 * A transient domain is refused: defining it would make it persistent. */
#include "worker/virt/rows.h"
#include "worker/virt/booting.h"
#include "worker/virt/owner.h"

#include "log.h"
#include "timeutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PERSISTENT_XML (VIR_DOMAIN_XML_INACTIVE | VIR_DOMAIN_XML_SECURE)

/* Parses a definition of d into d->xml (replacing what it held). */
static int load_xml(struct hv_act_ctx *ctx, struct hv_act_domain *d, unsigned flags,
                    const char *what, char *err, size_t len)
{
    char *text = ctx->virt->lv->DomainGetXMLDesc(d->dom, flags);
    if (text == NULL)
        return hv_act_fail(err, len, "cannot read the definition of %s: %s", d->name,
                           hv_act_virt_error(ctx));
    char why[300];
    struct hv_xml *x = hv_xml_parse(text, why, sizeof why);
    free(text);
    if (x == NULL)
        return hv_act_fail(err, len, "the definition of %s: %s", d->name, why);
    hv_xml_free(d->xml);
    d->xml = x;
    snprintf(d->xml_what, sizeof d->xml_what, "%s", what);
    return 0;
}

int hv_xml_load_for_read(struct hv_act_ctx *ctx, struct hv_act_domain *d, char *err, size_t len)
{
    return d->active ? load_xml(ctx, d, 0, "live domain XML", err, len)
                     : load_xml(ctx, d, VIR_DOMAIN_XML_INACTIVE,
                                "persistent domain XML (not running)", err, len);
}

int hv_xml_bench_disk_dev(struct hv_act_ctx *ctx, struct hv_act_domain *d, char *dev, size_t n,
                          char *err, size_t len)
{
    struct hv_act_domain tmp = {.name = d->name, .dom = d->dom};
    if (load_xml(ctx, &tmp, 0, "live domain XML", err, len) != 0)
        return -1;
    xmlNodePtr disk = hv_domxml_bench_disk(hv_xml_root(tmp.xml));
    const char *name = hv_xml_attr(hv_xml_child(disk, "target"), "dev");
    if (name != NULL)
        snprintf(dev, n, "%s", name);
    hv_xml_free(tmp.xml);
    if (name == NULL)
        return hv_act_fail(err, len, "%s has no second disk (the benchmark disk, vdb)", d->name);
    return 0;
}

/* QEMU refuses io='native' unless the host page cache is bypassed. */
static int check_io_cache(const struct hv_act_domain *d, char *err, size_t len)
{
    xmlNodePtr disk = hv_domxml_bench_disk(hv_xml_root(d->xml));
    xmlNodePtr drv = hv_xml_child(disk, "driver");
    const char *io = hv_xml_attr(drv, "io"), *cache = hv_xml_attr(drv, "cache");
    if (io == NULL || strcmp(io, "native") != 0)
        return 0;
    if (cache != NULL && (strcmp(cache, "none") == 0 || strcmp(cache, "directsync") == 0))
        return 0;
    return hv_act_fail(err, len,
                       "io_mode=native with disk_cache=%s on %s: QEMU refuses io='native' unless "
                       "the cache mode is none or directsync; pair io_mode native with disk_cache "
                       "none or directsync",
                       cache != NULL ? cache : "writeback (QEMU's default)", d->name);
}

/* The guest's memory in KiB, from <memory unit=...>. */
static long long memory_kib(xmlNodePtr root)
{
    xmlNodePtr m = hv_xml_child(root, "memory");
    long long v = strtoll(hv_xml_content(m), NULL, 10);
    const char *u = hv_xml_attr(m, "unit");
    if (u == NULL || strcmp(u, "KiB") == 0 || strcmp(u, "k") == 0 || strcmp(u, "K") == 0)
        return v;
    if (strcmp(u, "MiB") == 0 || strcmp(u, "M") == 0)
        return v * 1024;
    if (strcmp(u, "GiB") == 0 || strcmp(u, "G") == 0)
        return v * 1048576;
    return v / 1024; /* bytes */
}

/* Reads a number from a host file under the root; -1 when unreadable. */
static long long read_count(const struct hv_act_ctx *ctx, const char *rel)
{
    char path[1200];
    hv_act_path(ctx, rel, path, sizeof path);
    FILE *f = fopen(path, "re");
    long long v = -1;
    if (f != NULL) {
        if (fscanf(f, "%lld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

/* A guest backed by huge pages does not start without enough of them
 * free: say how many to reserve instead of breaking the guest. */
static int check_hugepages(const struct hv_act_ctx *ctx, const struct hv_act_domain *d,
                           const char *level, char *err, size_t len)
{
    if (level == NULL || strcmp(level, "off") == 0)
        return 0;
    long page_kib = strcmp(level, "1g") == 0 ? 1048576 : 2048;
    long long need = (memory_kib(hv_xml_root(d->xml)) + page_kib - 1) / page_kib;
    char free_rel[128], nr_rel[128];
    snprintf(free_rel, sizeof free_rel, "sys/kernel/mm/hugepages/hugepages-%ldkB/free_hugepages",
             page_kib);
    snprintf(nr_rel, sizeof nr_rel, "sys/kernel/mm/hugepages/hugepages-%ldkB/nr_hugepages",
             page_kib);
    long long avail = read_count(ctx, free_rel), nr = read_count(ctx, nr_rel);
    if (avail < 0)
        return hv_act_fail(err, len, "hugepages=%s: this host has no %ld kB huge pages (/%s: %s)",
                           level, page_kib, free_rel, strerror(errno));
    if (avail >= need)
        return 0;
    return hv_act_fail(err, len,
                       "hugepages=%s: %s needs %lld huge pages of %ld kB and the host has %lld "
                       "free; reserve them first: echo %lld > /%s",
                       level, d->name, need, page_kib, avail, (nr > 0 ? nr : 0) + need - avail,
                       nr_rel);
}

static void nap(double s)
{
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Powers d off (ACPI, then destroy after the timeout) and starts it. */
static int restart(struct hv_act_ctx *ctx, struct hv_act_domain *d, char *err, size_t len)
{
    const struct hv_virt *lv = ctx->virt->lv;
    double timeout = ctx->shutdown_timeout > 0 ? ctx->shutdown_timeout : HV_ACT_SHUTDOWN_TIMEOUT;
    hv_info("restarting %s for its new definition", d->name);
    hv_booting_await(ctx, d->name, d->dom);
    hv_act_note_start(ctx, d->name, d->dom);
    if (lv->DomainShutdown(d->dom) != 0) {
        hv_warn("%s refused to power off (%s); destroying it", d->name, hv_act_virt_error(ctx));
    } else {
        double start = hv_monotonic(), last_tick = start;
        while (lv->DomainIsActive(d->dom) == 1 && hv_monotonic() - start < timeout) {
            nap(0.2);
            if (ctx->tick != NULL && hv_monotonic() - last_tick >= 1) {
                ctx->tick(ctx->tick_arg);
                last_tick = hv_monotonic();
            }
        }
        if (lv->DomainIsActive(d->dom) == 1)
            hv_warn("%s did not power off within %.0f s (does it handle ACPI?); destroying it",
                    d->name, timeout);
    }
    if (lv->DomainIsActive(d->dom) == 1 && lv->DomainDestroy(d->dom) != 0)
        return hv_act_fail(err, len, "cannot stop %s: %s", d->name, hv_act_virt_error(ctx));
    if (lv->DomainCreate(d->dom) != 0)
        return hv_act_fail(err, len, "%s does not start with its new definition: %s", d->name,
                           hv_act_virt_error(ctx));
    hv_booting_note(ctx, d->dom);
    hv_act_domain_refresh(ctx, d);
    return 0;
}

/* The restart rows to change on d: their indexes, the levels asked and
 * the levels the definition has (from). Returns how many, or -1. */
static int plan_edits(struct hv_act_ctx *ctx, struct hv_act_domain *d, const json_t *levels,
                      size_t *rows, char (*from)[128], char *err, size_t len)
{
    int n = 0;
    for (size_t i = 0; i < hv_xml_nrows; i++) {
        const struct hv_actuator *a = &hv_xml_rows[i];
        const char *level = json_string_value(json_object_get(levels, a->factor));
        if (level == NULL)
            continue;
        struct hv_reading r = {.detail = NULL};
        snprintf(r.value, sizeof r.value, "%s", level);
        if (a->read_back(a, ctx, d, &r, err, len) != 0)
            return -1;
        json_decref(r.detail);
        if (strcmp(r.value, level) == 0)
            continue;
        if (a->apply(a, ctx, d, level, err, len) != 0)
            return -1;
        snprintf(from[n], sizeof from[n], "%s", r.value);
        rows[n++] = i;
    }
    return n;
}

/* The factors of the edits as "disk_cache=none, iothreads=2". */
static void describe(const json_t *levels, const size_t *rows, int n, char *buf, size_t len)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && k < len; i++) {
        const char *f = hv_xml_rows[rows[i]].factor;
        k += (size_t)snprintf(buf + k, len - k, "%s%s=%s", i ? ", " : "", f,
                              json_string_value(json_object_get(levels, f)));
    }
}

/* Journals d's original definition (once per plan), adding the factors
 * this step changes to the entry's list. */
static json_t *journal_definition(struct hv_act_ctx *ctx, struct hv_act_domain *d,
                                  const char *original, const size_t *rows, int n, char *err,
                                  size_t len)
{
    json_t *factors = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(factors, json_string(hv_xml_rows[rows[i]].factor));
    json_t *e = json_pack("{s:s, s:s, s:s, s:s, s:b, s:b, s:o}", "kind", "domain_xml", "scope",
                          "guest", "object", d->name, "original", original, "was_active", d->active,
                          "restarted", 0, "factors", factors);
    if (hv_act_journal(ctx, e, err, len) < 0)
        return NULL;
    json_t *entry = hv_journal_find(ctx->journal, "domain_xml", d->name);
    json_t *have = json_object_get(entry, "factors");
    for (int i = 0; i < n; i++) {
        const char *f = hv_xml_rows[rows[i]].factor;
        bool found = false;
        for (size_t k = 0; k < json_array_size(have) && !found; k++)
            found = strcmp(json_string_value(json_array_get(have, k)), f) == 0;
        if (!found)
            json_array_append_new(have, json_string(f));
    }
    return hv_journal_sync(ctx->journal, err, len) == 0 ? entry : NULL;
}

/* Checks an edited definition before anything is changed. */
static int check_edit(struct hv_act_ctx *ctx, struct hv_act_domain *d, const json_t *levels,
                      const char *what, char *err, size_t len)
{
    if (check_io_cache(d, err, len) != 0)
        return -1;
    if (d->active &&
        check_hugepages(ctx, d, json_string_value(json_object_get(levels, "hugepages")), err,
                        len) != 0)
        return -1;
    if (d->active && !ctx->allow_restart &&
        !hv_domxml_created_by(hv_xml_root(d->xml), ctx->plan_id))
        return hv_act_fail(
            err, len,
            "%s: %s runs and must restart for these levels, and the step does not allow "
            "restarts: allow_restart is false and %s was not created by plan %lld "
            "(its definition has no <metadata><hvbench:plan "
            "xmlns:hvbench='" HV_PLAN_NS "'>%lld</hvbench:plan></metadata>); "
            "nothing was changed",
            what, d->name, d->name, ctx->plan_id, ctx->plan_id);
    return 0;
}

int hv_xml_apply_domain(struct hv_act_ctx *ctx, struct hv_act_domain *d, const json_t *levels,
                        char *err, size_t len)
{
    const struct hv_virt *lv = ctx->virt->lv;
    size_t rows[32];
    char from[32][128], what[512];
    if (lv->DomainIsPersistent(d->dom) != 1) {
        for (size_t i = 0; i < hv_xml_nrows; i++)
            if (json_object_get(levels, hv_xml_rows[i].factor) != NULL)
                return hv_act_fail(err, len,
                                   "%s: %s is transient; restart-class levels need a persistent "
                                   "domain (virsh define)",
                                   hv_xml_rows[i].factor, d->name);
        return 0;
    }
    char *original = lv->DomainGetXMLDesc(d->dom, PERSISTENT_XML);
    if (original == NULL)
        return hv_act_fail(err, len, "cannot read the definition of %s: %s", d->name,
                           hv_act_virt_error(ctx));
    char why[300];
    int rc = -1;
    hv_xml_free(d->xml);
    d->xml = hv_xml_parse(original, why, sizeof why);
    snprintf(d->xml_what, sizeof d->xml_what, "persistent domain XML");
    int n = d->xml != NULL ? plan_edits(ctx, d, levels, rows, from, err, len)
                           : hv_act_fail(err, len, "the definition of %s: %s", d->name, why);
    if (n <= 0) {
        rc = n;
        goto out;
    }
    describe(levels, rows, n, what, sizeof what);
    char *text = NULL;
    json_t *entry = NULL;
    if (check_edit(ctx, d, levels, what, err, len) != 0 ||
        (entry = journal_definition(ctx, d, original, rows, n, err, len)) == NULL ||
        (text = hv_xml_text(d->xml)) == NULL) {
        free(text);
        goto out;
    }
    virDomainPtr defined = lv->DomainDefineXML(ctx->virt->conn, text);
    free(text);
    if (defined == NULL) {
        hv_act_fail(err, len, "%s: libvirt refuses the new definition of %s: %s", what, d->name,
                    hv_act_virt_error(ctx));
        goto out;
    }
    lv->DomainFree(defined);
    for (int i = 0; i < n; i++)
        hv_act_note_change(ctx, hv_xml_rows[rows[i]].factor, "guest", d->name, from[i],
                           json_string_value(json_object_get(levels, hv_xml_rows[rows[i]].factor)));
    rc = 0;
    if (d->active) {
        json_object_set_new(entry, "restarted", json_true());
        rc = hv_journal_sync(ctx->journal, err, len);
        if (rc == 0)
            rc = restart(ctx, d, err, len);
    }
out:
    free(original);
    return rc;
}

/* The level row a reads from definition text, into out ("?" when it
 * cannot be read). */
static void level_in(struct hv_act_ctx *ctx, const struct hv_actuator *a, const char *name,
                     const char *text, char *out, size_t n)
{
    char why[300];
    struct hv_act_domain tmp = {.name = name};
    snprintf(out, n, "?");
    tmp.xml = text != NULL ? hv_xml_parse(text, why, sizeof why) : NULL;
    if (tmp.xml == NULL)
        return;
    snprintf(tmp.xml_what, sizeof tmp.xml_what, "persistent domain XML");
    struct hv_reading r = {.value = ""};
    if (a->read_back(a, ctx, &tmp, &r, why, sizeof why) == 0)
        snprintf(out, n, "%s", r.value);
    json_decref(r.detail);
    hv_xml_free(tmp.xml);
}

/* Notes, per factor the entry lists, what the restore changed. */
static void note_restored(struct hv_act_ctx *ctx, const json_t *entry, const char *name,
                          const char *before, const char *original)
{
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(entry, "factors"), i, f)
    {
        const struct hv_actuator *a = hv_actuator_find(json_string_value(f));
        if (a == NULL || a->read_back == NULL)
            continue;
        char from[128], to[128];
        level_in(ctx, a, name, before, from, sizeof from);
        level_in(ctx, a, name, original, to, sizeof to);
        if (strcmp(from, to) != 0) /* e.g. a level libvirt refused to define */
            hv_act_note_change(ctx, a->factor, "guest", name, from, to);
    }
}

int hv_xml_revert_domain(const struct hv_actuator *a, struct hv_act_ctx *ctx, const json_t *entry,
                         char *err, size_t len)
{
    (void)a;
    const char *name = json_string_value(json_object_get(entry, "object"));
    const char *original = json_string_value(json_object_get(entry, "original"));
    if (name == NULL || original == NULL)
        return hv_act_fail(err, len, "domain XML: the journal entry lacks object or original");
    if (hv_act_virt_open(ctx, err, len) != 0)
        return -1;
    const struct hv_virt *lv = ctx->virt->lv;
    virDomainPtr old = lv->DomainLookupByName(ctx->virt->conn, name);
    char *before = old != NULL ? lv->DomainGetXMLDesc(old, PERSISTENT_XML) : NULL;
    if (old != NULL)
        lv->DomainFree(old);
    struct hv_act_domain d = {.name = name, .dom = lv->DomainDefineXML(ctx->virt->conn, original)};
    if (d.dom == NULL) {
        free(before);
        return hv_act_fail(err, len, "cannot define %s's original definition again: %s", name,
                           hv_act_virt_error(ctx));
    }
    hv_act_domain_refresh(ctx, &d);
    int rc = 0;
    bool restarted = json_is_true(json_object_get(entry, "restarted"));
    bool was_active = json_is_true(json_object_get(entry, "was_active"));
    if (restarted && d.active) {
        rc = restart(ctx, &d, err, len);
    } else if (restarted && was_active && lv->DomainCreate(d.dom) != 0) {
        rc = hv_act_fail(err, len, "%s does not start with its original definition: %s", name,
                         hv_act_virt_error(ctx));
    } else if (restarted && was_active) {
        hv_booting_note(ctx, d.dom);
    }
    note_restored(ctx, entry, name, before, original);
    free(before);
    lv->DomainFree(d.dom);
    hv_xml_free(d.xml);
    return rc;
}
