/* facts_libvirt.c — the libvirt facts of a host worker; see facts.h. */
#include "worker/facts.h"

#include "worker/virt.h"
#include "worker/virt/owner.h"
#include "worker/virt/xml.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keeps libvirt from printing its errors to stderr: the worker reports
 * them itself, once, in its own words (virGetLastErrorMessage()). */
static void quiet_errors(void *data, virErrorPtr err)
{
    (void)data;
    (void)err;
}

/* "9.0.0" from libvirt's major * 1000000 + minor * 1000 + release. */
static json_t *version_string(unsigned long v)
{
    char buf[48];
    snprintf(buf, sizeof buf, "%lu.%lu.%lu", v / 1000000, v / 1000 % 1000, v % 1000);
    return json_string(buf);
}

/* The domain states as virsh names them. */
static const char *state_name(int state)
{
    switch (state) {
    case VIR_DOMAIN_NOSTATE:
        return "no state";
    case VIR_DOMAIN_RUNNING:
        return "running";
    case VIR_DOMAIN_BLOCKED:
        return "idle";
    case VIR_DOMAIN_PAUSED:
        return "paused";
    case VIR_DOMAIN_SHUTDOWN:
        return "in shutdown";
    case VIR_DOMAIN_SHUTOFF:
        return "shut off";
    case VIR_DOMAIN_CRASHED:
        return "crashed";
    case VIR_DOMAIN_PMSUSPENDED:
        return "pmsuspended";
    default:
        return "unknown";
    }
}

/* The domain type of a domain's XML (<domain type='kvm'>: kvm, qemu for
 * QEMU's TCG emulation, xen ...) into out; "" when it cannot be read. */
static void domain_type(const char *xml, char *out, size_t len)
{
    out[0] = '\0';
    const char *at = strstr(xml, "<domain ");
    const char *type = at != NULL ? strstr(at, "type=") : NULL;
    const char *close = at != NULL ? strchr(at, '>') : NULL;
    if (type != NULL && close != NULL && type < close && (type[5] == '\'' || type[5] == '"')) {
        size_t n = strcspn(type + 6, "'\"");
        if (n < len) {
            memcpy(out, type + 6, n);
            out[n] = '\0';
        }
    }
}

/* The VM manager (OpenStack nova, OpenNebula) whose element the definition
 * xml holds in its <metadata> (worker/virt/owner.h), or NULL; also NULL
 * when libxml2 cannot be loaded or the text not parsed. */
static const char *domain_manager(const char *xml)
{
    char why[300];
    struct hv_xml *x = hv_xml_parse(xml, why, sizeof why);
    const struct hv_vm_manager *m = x != NULL ? hv_domxml_manager(hv_xml_root(x), NULL, 0) : NULL;
    hv_xml_free(x);
    return m != NULL ? m->name : NULL;
}

/* [{"name", "uuid", "state", "type", "manager"}] of every domain, running or not;
 * NULL (and err filled) when libvirt cannot list them. */
static json_t *list_domains(const struct hv_virt *lv, virConnectPtr conn, char *err, size_t errlen)
{
    virDomainPtr *doms = NULL;
    int n = lv->ConnectListAllDomains(conn, &doms, 0);
    if (n < 0) {
        snprintf(err, errlen, "cannot list the domains: %s", lv->GetLastErrorMessage());
        return NULL;
    }
    json_t *list = json_array();
    for (int i = 0; i < n; i++) {
        const char *name = lv->DomainGetName(doms[i]);
        char uuid[VIR_UUID_STRING_BUFLEN];
        int state = VIR_DOMAIN_NOSTATE, reason;
        json_t *d = json_object();
        if (name != NULL)
            json_object_set_new(d, "name", json_string(name));
        if (lv->DomainGetUUIDString(doms[i], uuid) == 0) {
            for (char *p = uuid; *p != '\0'; p++)
                *p = (char)tolower((unsigned char)*p);
            json_object_set_new(d, "uuid", json_string(uuid));
        }
        /* A domain that vanished meanwhile has no state: leave it out. */
        if (lv->DomainGetState(doms[i], &state, &reason, 0) == 0)
            json_object_set_new(d, "state", json_string(state_name(state)));
        char *xml = lv->DomainGetXMLDesc(doms[i], 0);
        if (xml != NULL) {
            char type[32];
            domain_type(xml, type, sizeof type);
            if (type[0] != '\0')
                json_object_set_new(d, "type", json_string(type));
            const char *manager = domain_manager(xml);
            if (manager != NULL)
                json_object_set_new(d, "manager", json_string(manager));
            free(xml);
        }
        json_array_append_new(list, d);
        lv->DomainFree(doms[i]);
    }
    free(doms);
    return list;
}

int hv_facts_add_libvirt(json_t *facts, const char *uri, char *err, size_t errlen)
{
    const struct hv_virt *virt = hv_virt_load(err, errlen);
    if (virt == NULL)
        return -1;
    virt->SetErrorFunc(NULL, quiet_errors);
    /* Read-only: the worker only looks, and the read-only socket of the
     * system daemon is open to every user. */
    virConnectPtr conn = virt->ConnectOpenReadOnly(uri);
    if (conn == NULL) {
        snprintf(err, errlen, "cannot connect to libvirt at %s: %s", uri,
                 virt->GetLastErrorMessage());
        return -1;
    }
    virt->ConnSetErrorFunc(conn, NULL, quiet_errors);
    json_t *lv = json_object();
    json_object_set_new(lv, "uri", json_string(uri));
    unsigned long v;
    if (virt->ConnectGetLibVersion(conn, &v) == 0)
        json_object_set_new(lv, "version", version_string(v));
    const char *type = virt->ConnectGetType(conn);
    if (type != NULL)
        json_object_set_new(lv, "hypervisor", json_string(type));
    if (virt->ConnectGetVersion(conn, &v) == 0)
        json_object_set_new(lv, "hypervisor_version", version_string(v));
    json_t *domains = list_domains(virt, conn, err, errlen);
    virt->ConnectClose(conn);
    if (domains == NULL) {
        json_decref(lv);
        return -1;
    }
    json_object_set_new(lv, "domains", domains);
    json_object_set_new(facts, "libvirt", lv);
    return 0;
}
