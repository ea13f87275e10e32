/* facts_diff.h — what differs between two versions of a target's facts,
 * fact by fact, for the change points of its history. */
#ifndef HV_SERVER_FACTS_DIFF_H
#define HV_SERVER_FACTS_DIFF_H

#include <jansson.h>

/** The facts that differ between before and after (either may be NULL or
 *  not an object: no facts), as a new JSON array of {"fact", "before",
 *  "after"} in the order of the paths' names. A fact is a member path
 *  joined with '.' ("kernel", "libvirt.hypervisor_version", "kvm.ept");
 *  objects are walked, anything else (strings, numbers, arrays) is
 *  compared whole. A fact one side lacks is null there. NULL only when
 *  memory runs out. Pure; thread safe. */
json_t *hv_facts_diff(const json_t *before, const json_t *after);

#endif
