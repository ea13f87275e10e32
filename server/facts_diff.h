/* facts_diff.h — what differs between two versions of a target's facts,
 * fact by fact, for the change points of its history. */
#ifndef HV_SERVER_FACTS_DIFF_H
#define HV_SERVER_FACTS_DIFF_H

#include <jansson.h>
#include <stddef.h>

/** The facts that differ between before and after (either may be NULL or
 *  not an object: no facts), as a new JSON array of {"fact", "before",
 *  "after"} in the order of the paths' names. A fact is a member path
 *  joined with '.' ("kernel", "libvirt.hypervisor_version", "kvm.ept");
 *  objects are walked, anything else (strings, numbers, arrays) is
 *  compared whole. A fact one side lacks is null there. NULL only when
 *  memory runs out. Pure; thread safe. */
json_t *hv_facts_diff(const json_t *before, const json_t *after);

/** The facts of n sides (each may be NULL or not an object: no facts)
 *  side by side, as a new JSON array of {"name", "values": [one per side,
 *  null where a side lacks it], "differs"} in the order of the paths'
 *  names, paths as hv_facts_diff's; "differs" is true when any two values
 *  are not equal. NULL only when memory runs out. Pure; thread safe. */
json_t *hv_facts_side_by_side(const json_t *const *sides, size_t n);

#endif
