/* owner.c — who owns a libvirt domain; see owner.h. */
#include "worker/virt/owner.h"

#include "worker/virt/domain.h"
#include "worker/virt/xml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PERSISTENT_XML (VIR_DOMAIN_XML_INACTIVE | VIR_DOMAIN_XML_SECURE)

/* The managers whose domains hvbench leaves alone unless told otherwise.
 * nova has written 1.0, 1.1 and 1.2 (nova/virt/libvirt/config.py);
 * OpenNebula's KVM driver writes 1.0 (src/vmm/LibVirtDriverKVM.cc). */
static const struct hv_vm_manager managers[] = {
    {"OpenStack nova", "http://openstack.org/xmlns/libvirt/nova/", true},
    {"OpenNebula", "http://opennebula.org/xmlns/libvirt/", true},
};

static const char *ns_of(xmlNodePtr n)
{
    return n->ns != NULL && n->ns->href != NULL ? (const char *)n->ns->href : NULL;
}

bool hv_domxml_created_by(xmlNodePtr root, long long plan)
{
    xmlNodePtr meta = hv_xml_child(root, "metadata");
    for (xmlNodePtr n = hv_xml_child(meta, "plan"); n != NULL; n = hv_xml_next(n, "plan")) {
        const char *ns = ns_of(n);
        if (ns != NULL && strcmp(ns, HV_PLAN_NS) == 0 &&
            strtoll(hv_xml_content(n), NULL, 10) == plan)
            return true;
    }
    return false;
}

/* The manager whose namespace ns is, or NULL. */
static const struct hv_vm_manager *manager_of(const char *ns)
{
    if (ns == NULL)
        return NULL;
    for (size_t i = 0; i < sizeof managers / sizeof managers[0]; i++) {
        const struct hv_vm_manager *m = &managers[i];
        if (m->ns_prefix ? strncmp(ns, m->ns, strlen(m->ns)) == 0 : strcmp(ns, m->ns) == 0)
            return m;
    }
    return NULL;
}

const struct hv_vm_manager *hv_domxml_manager(xmlNodePtr root, char *ns, size_t len)
{
    xmlNodePtr meta = hv_xml_child(root, "metadata");
    for (xmlNodePtr n = hv_xml_child(meta, NULL); n != NULL; n = hv_xml_next(n, NULL)) {
        const struct hv_vm_manager *m = manager_of(ns_of(n));
        if (m == NULL)
            continue;
        if (ns != NULL)
            snprintf(ns, len, "%s", ns_of(n));
        return m;
    }
    return NULL;
}

int hv_domxml_drop_managers(xmlNodePtr root)
{
    xmlNodePtr meta = hv_xml_child(root, "metadata");
    int dropped = 0;
    for (xmlNodePtr n = hv_xml_child(meta, NULL), next; n != NULL; n = next) {
        next = hv_xml_next(n, NULL);
        if (manager_of(ns_of(n)) != NULL) {
            hv_xml_remove(n);
            dropped++;
        }
    }
    return dropped;
}

/* Whether the plan named name in targets.guests.domains. */
static bool named(const struct hv_act_ctx *ctx, const char *name)
{
    size_t i;
    const json_t *v;
    json_array_foreach(ctx->named, i, v)
    {
        if (json_is_string(v) && strcmp(json_string_value(v), name) == 0)
            return true;
    }
    return false;
}

int hv_act_domain_owner_ok(struct hv_act_ctx *ctx, const char *name, virDomainPtr dom, char *err,
                           size_t len)
{
    char *text = ctx->virt->lv->DomainGetXMLDesc(dom, PERSISTENT_XML);
    if (text == NULL)
        return hv_act_fail(err, len, "cannot read the definition of %s to see who owns it: %s",
                           name, hv_act_virt_error(ctx));
    char why[300], ns[256];
    struct hv_xml *x = hv_xml_parse(text, why, sizeof why);
    free(text);
    if (x == NULL)
        return hv_act_fail(err, len, "the definition of %s: %s", name, why);
    xmlNodePtr root = hv_xml_root(x);
    const struct hv_vm_manager *m =
        hv_domxml_created_by(root, ctx->plan_id) ? NULL : hv_domxml_manager(root, ns, sizeof ns);
    hv_xml_free(x);
    if (m == NULL || (ctx->allow_restart && named(ctx, name)))
        return 0;
    return hv_act_fail(err, len,
                       "%s is managed by %s (its libvirt metadata is in %s): hvbench changes a "
                       "domain another manager owns only when the plan names it in "
                       "targets.guests.domains and sets allow_restart: true (%s); nothing was "
                       "changed on it",
                       name, m->name, ns,
                       named(ctx, name) ? "allow_restart is false"
                       : ctx->allow_restart
                           ? "the plan does not name it"
                           : "the plan does not name it and allow_restart is false");
}
