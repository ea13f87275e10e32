/* clone.c — a plan's guests made from a template domain; see clone.h. */
#include "worker/virt/clone.h"

#include "log.h"
#include "names.h"
#include "worker/virt/booting.h"
#include "worker/virt/domain.h"
#include "worker/virt/owner.h"
#include "worker/virt/xml.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PERSISTENT_XML (VIR_DOMAIN_XML_INACTIVE | VIR_DOMAIN_XML_SECURE)

/* The clone folder of the folder holding path, into buf. */
static void clone_dir(const char *path, char *buf, size_t len)
{
    const char *slash = strrchr(path, '/');
    int n = slash != NULL ? (int)(slash - path) : 0;
    snprintf(buf, len, "%.*s/%s", n, path, HV_CLONE_DIR);
}

/* The storage pool of clone folder dir: "hvbench-clones-" and a hash of
 * the folder (FNV-1a), so two templates in two folders get two pools. */
static void pool_name(const char *dir, char *buf, size_t len)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)dir; *p != '\0'; p++)
        h = (h ^ *p) * 16777619u;
    snprintf(buf, len, "%s-%08x", HV_CLONE_DIR, h);
}

/* The folder holding path, into buf. */
static void parent_dir(const char *path, char *buf, size_t len)
{
    const char *slash = strrchr(path, '/');
    snprintf(buf, len, "%.*s", slash != NULL ? (int)(slash - path) : 0, path);
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

/* Adds s to the array a unless it holds it. */
static void add_unique(json_t *a, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v)
    {
        if (strcmp(json_string_value(v), s) == 0)
            return;
    }
    json_array_append_new(a, json_string(s));
}

/* Whether domain dom's persistent definition carries the mark of plan. */
static bool dom_marked(struct hv_act_ctx *ctx, virDomainPtr dom)
{
    char *text = ctx->virt->lv->DomainGetXMLDesc(dom, PERSISTENT_XML);
    if (text == NULL)
        return false;
    char why[300];
    struct hv_xml *x = hv_xml_parse(text, why, sizeof why);
    free(text);
    bool ok = x != NULL && hv_domxml_created_by(hv_xml_root(x), ctx->plan_id);
    hv_xml_free(x);
    return ok;
}

/* The virtual size of a template disk in bytes: a raw file's size, a
 * qcow2 image's header field; 0 when it cannot be read (libvirt then
 * takes the backing file's). */
static unsigned long long disk_size(const char *path, bool qcow2)
{
    struct stat st;
    if (!qcow2)
        return stat(path, &st) == 0 ? (unsigned long long)st.st_size : 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    unsigned char h[32];
    ssize_t n = pread(fd, h, sizeof h, 0);
    close(fd);
    if (n != (ssize_t)sizeof h || memcmp(h, "QFI\xfb", 4) != 0)
        return 0;
    uint64_t be;
    memcpy(&be, h + 24, sizeof be);
    return be64toh(be);
}

/* The pool of clone folder dir, created (and the folder made, mode 0755
 * so that the QEMU user reads it) when missing. NULL with err. */
static virStoragePoolPtr open_pool(struct hv_act_ctx *ctx, const char *dir, char *err, size_t len)
{
    const struct hv_virt *lv = ctx->virt->lv;
    char name[64];
    pool_name(dir, name, sizeof name);
    virStoragePoolPtr p = lv->StoragePoolLookupByName(ctx->virt->conn, name);
    if (p != NULL)
        return p;
    char why[300];
    struct hv_xml *x = hv_xml_new("pool", why, sizeof why);
    xmlNodePtr root = x != NULL ? hv_xml_root(x) : NULL;
    xmlNodePtr target = hv_xml_add(root, "target");
    char *xml = NULL;
    if (x != NULL && hv_xml_set_attr(root, "type", "dir") == 0 &&
        hv_xml_add_text(root, "name", name) != NULL &&
        hv_xml_add_text(target, "path", dir) != NULL &&
        hv_xml_add_text(hv_xml_add(target, "permissions"), "mode", "0755") != NULL)
        xml = hv_xml_text(x);
    hv_xml_free(x);
    if (xml == NULL) {
        hv_act_fail(err, len, "the storage pool %s: %s", name, x == NULL ? why : "out of memory");
        return NULL;
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        hv_act_fail(err, len, "cannot create %s: %s", dir, strerror(errno));
        free(xml);
        return NULL;
    }
    p = lv->StoragePoolCreateXML(ctx->virt->conn, xml, 0);
    free(xml);
    if (p == NULL)
        hv_act_fail(err, len, "cannot create the storage pool %s at %s: %s", name, dir,
                    hv_act_virt_error(ctx));
    return p;
}

/* A disk of the template that gets an overlay. */
struct overlay {
    xmlNodePtr source; /* its <source file=...> */
    char backing[1024];
    bool qcow2;
    char path[1400];
    char vol[300]; /* the volume's name in its pool */
};

#define MAX_OVERLAYS 32
#define MAX_LOGS     8

/* What a clone is made of, computed before anything is created. */
struct plan_of_clone {
    struct overlay ov[MAX_OVERLAYS];
    size_t n_ov;
    xmlNodePtr log_src[MAX_LOGS]; /* <source path> of file serials and consoles, <log file> */
    const char *log_attr[MAX_LOGS];
    char log_path[MAX_LOGS][1400];
    size_t n_log;
};

/* The disks to overlay: file-backed <disk device='disk'> without
 * <readonly/>. */
static int find_disks(xmlNodePtr devices, const char *name, struct plan_of_clone *pc, char *err,
                      size_t len)
{
    for (xmlNodePtr d = hv_xml_child(devices, "disk"); d != NULL; d = hv_xml_next(d, "disk")) {
        const char *type = hv_xml_attr(d, "type"), *dev = hv_xml_attr(d, "device");
        xmlNodePtr src = hv_xml_child(d, "source");
        const char *file = hv_xml_attr(src, "file");
        if (type == NULL || strcmp(type, "file") != 0 ||
            (dev != NULL && strcmp(dev, "disk") != 0) || file == NULL ||
            hv_xml_child(d, "readonly") != NULL)
            continue;
        if (pc->n_ov == MAX_OVERLAYS)
            return hv_act_fail(err, len, "the template has more than %d disks", MAX_OVERLAYS);
        struct overlay *o = &pc->ov[pc->n_ov++];
        xmlNodePtr drv = hv_xml_child(d, "driver");
        const char *fmt = hv_xml_attr(drv, "type");
        if (fmt != NULL && strcmp(fmt, "raw") != 0 && strcmp(fmt, "qcow2") != 0)
            return hv_act_fail(err, len,
                               "the template's disk %s is %s: only raw and qcow2 disks "
                               "can back a clone",
                               file, fmt);
        o->source = src;
        o->qcow2 = fmt != NULL && strcmp(fmt, "qcow2") == 0;
        snprintf(o->backing, sizeof o->backing, "%s", file);
        const char *tgt = hv_xml_attr(hv_xml_child(d, "target"), "dev");
        char dir[1024];
        clone_dir(file, dir, sizeof dir);
        char vol[sizeof o->vol], full[sizeof o->path];
        snprintf(vol, sizeof vol, "%s-%s.qcow2", name, tgt != NULL ? tgt : "disk");
        snprintf(full, sizeof full, "%s/%s", dir, vol);
        memcpy(o->vol, vol, sizeof vol);
        memcpy(o->path, full, sizeof full);
    }
    return 0;
}

/* The file logs: <serial|console type='file'><source path=...>, and
 * <log file=...> inside serials and consoles. The same old path gets the
 * same new one (a console that repeats its serial). */
static void find_logs(xmlNodePtr devices, const char *name, struct plan_of_clone *pc)
{
    static const char *const kinds[] = {"serial", "console"};
    for (size_t k = 0; k < 2; k++)
        for (xmlNodePtr s = hv_xml_child(devices, kinds[k]); s != NULL;
             s = hv_xml_next(s, kinds[k])) {
            const char *type = hv_xml_attr(s, "type");
            xmlNodePtr cand[2] = {
                type != NULL && strcmp(type, "file") == 0 ? hv_xml_child(s, "source") : NULL,
                hv_xml_child(s, "log")};
            const char *attr[2] = {"path", "file"};
            for (size_t c = 0; c < 2 && pc->n_log < MAX_LOGS; c++) {
                const char *old = hv_xml_attr(cand[c], attr[c]);
                if (old == NULL)
                    continue;
                char dir[1100];
                clone_dir(old, dir, sizeof dir);
                pc->log_src[pc->n_log] = cand[c];
                pc->log_attr[pc->n_log] = attr[c];
                char full[sizeof pc->log_path[0]];
                snprintf(full, sizeof full, "%s/%s-%s", dir, name, base_name(old));
                memcpy(pc->log_path[pc->n_log], full, sizeof full);
                pc->n_log++;
            }
        }
}

/* Replaces hvbench.name=... in the kernel command line. The line is the
 * template's own with only name put in, and name is a host-safe name
 * (hv_clone_create() checked it): no blank can add a parameter. */
static int rename_cmdline(xmlNodePtr root, const char *name)
{
    xmlNodePtr cl = hv_xml_child(hv_xml_child(root, "os"), "cmdline");
    const char *text = hv_xml_content(cl);
    const char *at = strstr(text, "hvbench.name=");
    if (cl == NULL || at == NULL)
        return 0;
    size_t end = strcspn(at, " \t");
    char buf[4096];
    snprintf(buf, sizeof buf, "%.*shvbench.name=%s%s", (int)(at - text), text, name, at + end);
    return hv_xml_set_content(cl, buf);
}

/* Edits the template's definition into the clone's. */
static int edit_definition(struct hv_act_ctx *ctx, xmlNodePtr root, const char *name,
                           const struct plan_of_clone *pc)
{
    hv_xml_remove(hv_xml_child(root, "uuid"));
    int rc = hv_xml_set_content(hv_xml_ensure(root, "name"), name);
    xmlNodePtr meta = hv_xml_ensure(root, "metadata");
    /* The template's manager (nova, OpenNebula) does not own the clone. */
    hv_domxml_drop_managers(root);
    xmlNodePtr mark = hv_xml_add_ns(meta, "plan", HV_PLAN_NS, "hvbench");
    char id[32];
    snprintf(id, sizeof id, "%lld", ctx->plan_id);
    rc |= mark != NULL ? hv_xml_set_content(mark, id) : -1;
    rc |= rename_cmdline(root, name);
    xmlNodePtr devices = hv_xml_child(root, "devices");
    for (xmlNodePtr i = hv_xml_child(devices, "interface"); i != NULL;
         i = hv_xml_next(i, "interface")) {
        hv_xml_remove(hv_xml_child(i, "mac"));
        hv_xml_remove(hv_xml_child(i, "target"));
    }
    for (size_t i = 0; i < pc->n_ov; i++) {
        xmlNodePtr disk = pc->ov[i].source->parent;
        rc |= hv_xml_set_attr(pc->ov[i].source, "file", pc->ov[i].path);
        rc |= hv_xml_set_attr(hv_xml_child(disk, "driver"), "type", "qcow2");
        /* libvirt finds the backing chain in the overlay's header */
        hv_xml_remove(hv_xml_child(disk, "backingStore"));
    }
    for (size_t i = 0; i < pc->n_log; i++)
        rc |= hv_xml_set_attr(pc->log_src[i], pc->log_attr[i], pc->log_path[i]);
    return rc;
}

/* The definition of overlay o's volume, built with libxml2 (the name
 * and the paths are text, never markup): a new string, or NULL with
 * err. */
static char *volume_xml(const struct overlay *o, char *err, size_t len)
{
    char why[300], cap[32];
    struct hv_xml *x = hv_xml_new("volume", why, sizeof why);
    if (x == NULL) {
        hv_act_fail(err, len, "the overlay %s: %s", o->path, why);
        return NULL;
    }
    xmlNodePtr root = hv_xml_root(x);
    int rc = hv_xml_add_text(root, "name", o->vol) != NULL ? 0 : -1;
    unsigned long long size = disk_size(o->backing, o->qcow2);
    snprintf(cap, sizeof cap, "%llu", size);
    xmlNodePtr c = size > 0 ? hv_xml_add_text(root, "capacity", cap) : NULL;
    rc |= size > 0 ? hv_xml_set_attr(c, "unit", "bytes") : 0;
    xmlNodePtr target = hv_xml_add(root, "target");
    rc |= hv_xml_set_attr(hv_xml_add(target, "format"), "type", "qcow2");
    rc |= hv_xml_add_text(hv_xml_add(target, "permissions"), "mode", "0644") != NULL ? 0 : -1;
    xmlNodePtr backing = hv_xml_add(root, "backingStore");
    rc |= hv_xml_add_text(backing, "path", o->backing) != NULL ? 0 : -1;
    rc |= hv_xml_set_attr(hv_xml_add(backing, "format"), "type", o->qcow2 ? "qcow2" : "raw");
    char *xml = rc == 0 ? hv_xml_text(x) : NULL;
    hv_xml_free(x);
    if (xml == NULL)
        hv_act_fail(err, len, "out of memory defining the overlay %s", o->path);
    return xml;
}

/* Creates overlay o in its pool. */
static int make_overlay(struct hv_act_ctx *ctx, const struct overlay *o, char *err, size_t len)
{
    const struct hv_virt *lv = ctx->virt->lv;
    char dir[1100];
    clone_dir(o->backing, dir, sizeof dir);
    virStoragePoolPtr pool = open_pool(ctx, dir, err, len);
    if (pool == NULL)
        return -1;
    char *xml = volume_xml(o, err, len);
    if (xml == NULL) {
        lv->StoragePoolFree(pool);
        return -1;
    }
    virStorageVolPtr v = lv->StorageVolCreateXML(pool, xml, 0);
    free(xml);
    int rc = 0;
    if (v == NULL)
        rc = hv_act_fail(err, len, "cannot create the overlay %s of %s: %s", o->path, o->backing,
                         hv_act_virt_error(ctx));
    else
        lv->StorageVolFree(v);
    lv->StoragePoolFree(pool);
    return rc;
}

/* The journal entry of a clone of tmpl named name: its overlays, log
 * files, the pools and folders they live in, and who owns each backing
 * file (restore checks them). NULL when memory runs out. */
static json_t *journal_entry(const char *tmpl, const char *name, const struct plan_of_clone *pc)
{
    json_t *entry;
    entry = json_pack("{s:s, s:s, s:s, s:s, s:s, s:[], s:[], s:[], s:[], s:[]}", "kind",
                      HV_CLONE_KIND, "factor", "template", "scope", "guest", "object", name,
                      "template", tmpl, "overlays", "files", "pools", "dirs", "backing");
    for (size_t i = 0; i < pc->n_ov; i++) {
        struct stat st;
        if (stat(pc->ov[i].backing, &st) == 0)
            json_array_append_new(json_object_get(entry, "backing"),
                                  json_pack("{s:s, s:I, s:I, s:I}", "path", pc->ov[i].backing,
                                            "uid", (json_int_t)st.st_uid, "gid",
                                            (json_int_t)st.st_gid, "mode",
                                            (json_int_t)(st.st_mode & 07777)));
        char dir[1100], pool[64];
        clone_dir(pc->ov[i].backing, dir, sizeof dir);
        pool_name(dir, pool, sizeof pool);
        json_array_append_new(json_object_get(entry, "overlays"), json_string(pc->ov[i].path));
        add_unique(json_object_get(entry, "pools"), pool);
        add_unique(json_object_get(entry, "dirs"), dir);
    }
    for (size_t i = 0; i < pc->n_log; i++) {
        char dir[1100], pool[64];
        parent_dir(pc->log_path[i], dir, sizeof dir);
        pool_name(dir, pool, sizeof pool);
        add_unique(json_object_get(entry, "files"), pc->log_path[i]);
        add_unique(json_object_get(entry, "pools"), pool);
        add_unique(json_object_get(entry, "dirs"), dir);
    }
    return entry;
}

int hv_clone_create(struct hv_act_ctx *ctx, const char *tmpl, const char *name, char *err,
                    size_t len)
{
    /* Checked again here, before anything is looked up or made: the name
     * goes into volume and domain XML, file names and the guest's kernel
     * command line. */
    if (!hv_name_host_ok(tmpl))
        return hv_act_fail(err, len, "the template domain's name %s", HV_NAME_HOST_RULE);
    if (!hv_name_host_ok(name))
        return hv_act_fail(err, len, "the clone's name %s", HV_NAME_HOST_RULE);
    if (hv_act_virt_open(ctx, err, len) != 0)
        return -1;
    const struct hv_virt *lv = ctx->virt->lv;
    virDomainPtr have = lv->DomainLookupByName(ctx->virt->conn, name);
    if (have != NULL) {
        bool ours = dom_marked(ctx, have) && hv_clone_journalled(ctx->journal, name);
        lv->DomainFree(have);
        if (ours)
            return 0;
        return hv_act_fail(err, len,
                           "a domain named %s exists that plan %lld did not create from %s: "
                           "left alone",
                           name, ctx->plan_id, tmpl);
    }
    virDomainPtr t = lv->DomainLookupByName(ctx->virt->conn, tmpl);
    if (t == NULL)
        return hv_act_fail(err, len, "the template domain %s: %s", tmpl, hv_act_virt_error(ctx));
    char *text = lv->DomainGetXMLDesc(t, PERSISTENT_XML);
    lv->DomainFree(t);
    if (text == NULL)
        return hv_act_fail(err, len, "cannot read the definition of the template %s: %s", tmpl,
                           hv_act_virt_error(ctx));
    char why[300];
    struct hv_xml *x = hv_xml_parse(text, why, sizeof why);
    free(text);
    if (x == NULL)
        return hv_act_fail(err, len, "the definition of the template %s: %s", tmpl, why);
    struct plan_of_clone *pc = calloc(1, sizeof *pc);
    xmlNodePtr root = hv_xml_root(x);
    xmlNodePtr devices = hv_xml_child(root, "devices");
    int rc = pc != NULL ? 0 : hv_act_fail(err, len, "out of memory");
    if (rc == 0)
        rc = find_disks(devices, name, pc, err, len);
    json_t *entry = NULL;
    if (rc == 0) {
        find_logs(devices, name, pc);
        entry = journal_entry(tmpl, name, pc);
        if (edit_definition(ctx, root, name, pc) != 0)
            rc = hv_act_fail(err, len, "out of memory editing the definition of %s", name);
    }
    /* journalled before anything exists, so a crash from here on leaves
     * an entry a restore removes it with */
    if (rc == 0) {
        rc = hv_act_journal(ctx, entry, err, len) < 0 ? -1 : 0;
        entry = NULL;
    }
    json_decref(entry);
    for (size_t i = 0; rc == 0 && i < pc->n_ov; i++)
        rc = make_overlay(ctx, &pc->ov[i], err, len);
    for (size_t i = 0; rc == 0 && i < pc->n_log; i++) {
        char dir[1100];
        parent_dir(pc->log_path[i], dir, sizeof dir);
        virStoragePoolPtr pool = open_pool(ctx, dir, err, len);
        if (pool == NULL)
            rc = -1;
        else
            lv->StoragePoolFree(pool);
    }
    char *def = rc == 0 ? hv_xml_text(x) : NULL;
    if (rc == 0 && def == NULL)
        rc = hv_act_fail(err, len, "out of memory");
    char uuid[VIR_UUID_STRING_BUFLEN] = "";
    if (rc == 0) {
        virDomainPtr d = lv->DomainDefineXML(ctx->virt->conn, def);
        if (d == NULL)
            rc = hv_act_fail(err, len, "cannot define the clone %s of %s: %s", name, tmpl,
                             hv_act_virt_error(ctx));
        if (d != NULL && lv->DomainGetUUIDString(d, uuid) != 0)
            uuid[0] = '\0';
        if (d != NULL)
            lv->DomainFree(d);
    }
    free(def);
    free(pc);
    hv_xml_free(x);
    /* "to" is the clone's UUID: the server links the guest's worker (its
     * DMI product UUID) to the clone by it */
    if (rc == 0)
        hv_act_note_change(ctx, "template", "guest", name, "absent", uuid);
    return rc == 0 ? 1 : -1;
}

int hv_clone_start(struct hv_act_ctx *ctx, const char *name, char *err, size_t len)
{
    if (hv_act_virt_open(ctx, err, len) != 0)
        return -1;
    const struct hv_virt *lv = ctx->virt->lv;
    virDomainPtr d = lv->DomainLookupByName(ctx->virt->conn, name);
    if (d == NULL)
        return hv_act_fail(err, len, "the clone %s: %s", name, hv_act_virt_error(ctx));
    int rc = 0;
    if (lv->DomainIsActive(d) != 1) {
        hv_act_note_start(ctx, name, d);
        if (lv->DomainCreate(d) != 0)
            rc = hv_act_fail(err, len, "cannot start the clone %s: %s", name,
                             hv_act_virt_error(ctx));
        else
            hv_booting_note(ctx, d);
    }
    lv->DomainFree(d);
    return rc;
}

/* Removes the domain of a clone entry; its UUID goes into uuid ("absent"
 * when there was no domain). */
static int remove_domain(struct hv_act_ctx *ctx, const char *name, char *uuid, char *err,
                         size_t len)
{
    const struct hv_virt *lv = ctx->virt->lv;
    snprintf(uuid, VIR_UUID_STRING_BUFLEN, "absent");
    virDomainPtr d = lv->DomainLookupByName(ctx->virt->conn, name);
    if (d == NULL)
        return 0; /* never defined, or gone already */
    if (lv->DomainGetUUIDString(d, uuid) != 0)
        snprintf(uuid, VIR_UUID_STRING_BUFLEN, "unknown");
    int rc = 0;
    if (!dom_marked(ctx, d))
        rc = hv_act_fail(err, len,
                         "the domain %s does not carry plan %lld's mark: not removed, remove it "
                         "by hand if it is a clone",
                         name, ctx->plan_id);
    else if (lv->DomainIsActive(d) == 1 && lv->DomainDestroy(d) != 0)
        rc = hv_act_fail(err, len, "cannot stop the clone %s: %s", name, hv_act_virt_error(ctx));
    else if (lv->DomainUndefine(d) != 0)
        rc =
            hv_act_fail(err, len, "cannot undefine the clone %s: %s", name, hv_act_virt_error(ctx));
    lv->DomainFree(d);
    return rc;
}

/* Deletes an overlay through its volume, or as a file when no pool knows
 * it. */
static int remove_overlay(struct hv_act_ctx *ctx, const char *path, char *err, size_t len)
{
    const struct hv_virt *lv = ctx->virt->lv;
    virStorageVolPtr v = lv->StorageVolLookupByPath(ctx->virt->conn, path);
    if (v != NULL) {
        int rc = lv->StorageVolDelete(v, 0);
        lv->StorageVolFree(v);
        if (rc != 0)
            return hv_act_fail(err, len, "cannot delete the overlay %s: %s", path,
                               hv_act_virt_error(ctx));
        return 0;
    }
    if (unlink(path) != 0 && errno != ENOENT)
        return hv_act_fail(err, len, "cannot delete %s: %s", path, strerror(errno));
    return 0;
}

/* Stops an empty clone pool and removes its folder when empty. */
static void remove_pool(struct hv_act_ctx *ctx, const char *name)
{
    const struct hv_virt *lv = ctx->virt->lv;
    virStoragePoolPtr p = lv->StoragePoolLookupByName(ctx->virt->conn, name);
    if (p == NULL)
        return;
    lv->StoragePoolRefresh(p, 0);
    if (lv->StoragePoolNumOfVolumes(p) == 0 && lv->StoragePoolDestroy(p) != 0)
        hv_warn("cannot stop the storage pool %s: %s", name, hv_act_virt_error(ctx));
    lv->StoragePoolFree(p);
}

/* Gives a template's disk back the owner and mode journalled (libvirt
 * hands a backing file to the QEMU user while a clone runs and does not
 * always hand it back). Returns 0 or -1 with err. */
static int give_back(const json_t *b, char *err, size_t len)
{
    const char *path = json_string_value(json_object_get(b, "path"));
    uid_t uid = (uid_t)json_integer_value(json_object_get(b, "uid"));
    gid_t gid = (gid_t)json_integer_value(json_object_get(b, "gid"));
    mode_t mode = (mode_t)json_integer_value(json_object_get(b, "mode"));
    struct stat st;
    if (path == NULL || stat(path, &st) != 0)
        return 0; /* gone: nothing to give back */
    if ((st.st_uid != uid || st.st_gid != gid) && chown(path, uid, gid) != 0)
        return hv_act_fail(err, len, "cannot give %s back to %u:%u: %s", path, (unsigned)uid,
                           (unsigned)gid, strerror(errno));
    if ((st.st_mode & 07777) != mode && chmod(path, mode) != 0)
        return hv_act_fail(err, len, "cannot give %s its mode %o back: %s", path, (unsigned)mode,
                           strerror(errno));
    return 0;
}

int hv_clone_revert(struct hv_act_ctx *ctx, const json_t *entry, char *err, size_t len)
{
    if (hv_act_virt_open(ctx, err, len) != 0)
        return -1;
    const char *name = json_string_value(json_object_get(entry, "object"));
    err[0] = '\0';
    char msg[1024];
    int rc = 0;
    char uuid[VIR_UUID_STRING_BUFLEN];
    if (remove_domain(ctx, name, uuid, msg, sizeof msg) != 0)
        return hv_act_fail(err, len, "%s", msg); /* its files may be in use */
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(entry, "overlays"), i, v)
    {
        if (remove_overlay(ctx, json_string_value(v), msg, sizeof msg) != 0) {
            snprintf(err, len, "%s", msg);
            rc = -1;
        }
    }
    json_array_foreach(json_object_get(entry, "files"), i, v)
    {
        if (unlink(json_string_value(v)) != 0 && errno != ENOENT) {
            snprintf(err, len, "cannot delete %s: %s", json_string_value(v), strerror(errno));
            rc = -1;
        }
    }
    json_array_foreach(json_object_get(entry, "backing"), i, v)
    {
        if (give_back(v, msg, sizeof msg) != 0) {
            snprintf(err, len, "%s", msg);
            rc = -1;
        }
    }
    json_array_foreach(json_object_get(entry, "pools"), i, v)
        remove_pool(ctx, json_string_value(v));
    json_array_foreach(json_object_get(entry, "dirs"), i, v)
        rmdir(json_string_value(v)); /* only when empty: another clone may use it */
    if (rc == 0)
        hv_act_note_change(ctx, "template", "guest", name, uuid, "absent");
    return rc;
}

bool hv_clone_journalled(const struct hv_journal *j, const char *name)
{
    return j != NULL && hv_journal_find(j, HV_CLONE_KIND, name) != NULL;
}
