/* owner.h — who owns a libvirt domain, and whether a step may change it.
 *
 * On a cloud's hypervisor the domains are a VM manager's: OpenStack nova
 * and OpenNebula define them through the same libvirt, and write their own
 * element into the definition's <metadata> (nova: <nova:instance> in
 * http://openstack.org/xmlns/libvirt/nova/1.x; OpenNebula: <one:vm> in
 * http://opennebula.org/xmlns/libvirt/1.0). A tenant's guest must not be
 * redefined, restarted, pinned or throttled behind its manager's back, so
 * every actuator path that changes a domain passes hv_act_domain_owner_ok()
 * first: such a domain is changed only when the plan names it in
 * targets.guests.domains and sets allow_restart. hvbench's own mark
 * (<hvbench:plan xmlns:hvbench="urn:hvbench:plan">PLAN</hvbench:plan>, put
 * on the clones a plan makes from a template) says the plan created the
 * domain, which may then always be changed.
 *
 * Internal to worker/virt/. */
#ifndef HV_WORKER_VIRT_OWNER_H
#define HV_WORKER_VIRT_OWNER_H

#include "worker/virt.h"
#include "worker/virt/actuator.h"

#include <libxml/tree.h>
#include <stdbool.h>
#include <stddef.h>

/** The namespace of hvbench's mark on the domains a plan created. */
#define HV_PLAN_NS "urn:hvbench:plan"

/** A VM manager that marks the domains it owns. */
struct hv_vm_manager {
    const char *name; /**< as messages name it: "OpenStack nova" */
    /** Its metadata namespace, or the part every version shares
     *  ("http://openstack.org/xmlns/libvirt/nova/" for 1.0 .. 1.2). */
    const char *ns;
    bool ns_prefix; /**< ns is a prefix of the namespaces it uses */
};

/** Whether the definition whose root element is root carries plan's mark
 *  (the plan created the domain). */
bool hv_domxml_created_by(xmlNodePtr root, long long plan);

/** The VM manager whose element is in the definition's <metadata>, or NULL
 *  when none of the known ones is. When one is found and ns is not NULL,
 *  the namespace seen is copied into ns (len bytes). */
const struct hv_vm_manager *hv_domxml_manager(xmlNodePtr root, char *ns, size_t len);

/** Removes every known VM manager's element from the definition's
 *  <metadata> (a clone is hvbench's, not the template's manager's).
 *  Returns how many it removed. */
int hv_domxml_drop_managers(xmlNodePtr root);

/** The one door before a domain is changed: returns 0 when the step of ctx
 *  may change domain dom (named name), or -1 with err naming the domain,
 *  its manager and what the plan must say. A domain the plan created may
 *  be changed; one another manager owns only when ctx->named lists it and
 *  ctx->allow_restart is set; any other domain may. A definition that
 *  cannot be read is refused too. ctx->virt must be open. */
int hv_act_domain_owner_ok(struct hv_act_ctx *ctx, const char *name, virDomainPtr dom, char *err,
                           size_t len);

#endif
