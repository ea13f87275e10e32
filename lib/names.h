/* names.h — the host-safe name rule.
 *
 * A host worker runs as root, and some strings of a plan end up on its
 * host: in a libvirt domain's or storage volume's name, in a file's path,
 * in XML text libvirtd reads, on a guest's kernel command line, in the
 * arguments of a local hook. Each such string passes one rule, here, when
 * the plan is submitted (400 at its JSON path) and again in the worker
 * right before it is used (docs/plans.md, "Host-safe names"). The rule
 * leaves nothing to quote or escape: no blank, no markup, no path
 * separator, no way up a folder, no option, ASCII only (no look-alikes).
 *
 * Display names (a plan's or a study's name, an import's target) never
 * reach a host and keep hv_jspec_name_ok(). A field with a stricter rule
 * of its own applies it after this one (site factor and hook names,
 * tuning.nic). */
#ifndef HV_NAMES_H
#define HV_NAMES_H

#include <jansson.h>
#include <stdbool.h>

/** The longest host-safe name, in bytes. */
#define HV_NAME_HOST_MAX 128

/** The rule in words, as errors say it after a field's path. */
#define HV_NAME_HOST_RULE                                                                          \
    "must be a host-safe name: 1 to 128 of the ASCII letters, digits and . _ - + : @, "            \
    "not starting with . or -, without .. (docs/plans.md, \"Host-safe names\")"

/** Whether s is a host-safe name: 1 to HV_NAME_HOST_MAX bytes of A-Z a-z
 *  0-9 and . _ - + : @, the first neither '.' nor '-', no "..". NULL is
 *  not. */
bool hv_name_host_ok(const char *s);

/** Whether v is a JSON string holding a host-safe name (a NUL inside, as
 *  "\u0000" writes it, is not). */
bool hv_name_host_json_ok(const json_t *v);

/** Appends {"path": path, "message": HV_NAME_HOST_RULE} to errors unless
 *  v is a string holding a host-safe name. Returns 1 when it did, else
 *  0. */
int hv_name_host_check(const json_t *v, const char *path, json_t *errors);

#endif
