/* advice_format.h — a plan's recommendations (the "recommendations" of its
 * report, docs/api.md) as the change a site applies with its own tooling:
 * a tuned profile, an Ansible playbook, a Puppet manifest or a shell
 * script.
 *
 * Every form is rendered from the catalogue's own data (lib/factors.h: the
 * host file of a setting, the value its level writes, its apply hint), one
 * level per factor (the best ranked), and carries the evidence as comments
 * (plan, gains with their intervals, risk, disruption) and its rollback. A
 * setting a form cannot express (a domain's XML in a tuned profile, a NIC's
 * MTU, a site factor) is written as a comment saying so, never dropped.
 *
 * The server answers GET /api/v1/plans/{id}/recommendations/apply?format=
 * with these, and hvbench advice renders the report it fetched with the
 * same code, so both print the same text. Pure functions of their
 * arguments: thread safe. */
#ifndef HV_ADVICE_FORMAT_H
#define HV_ADVICE_FORMAT_H

#include <jansson.h>

/** The forms, by the name ?format= and --format take, NULL-terminated:
 *  "tuned", "ansible", "puppet", "shell". */
extern const char *const hv_advice_formats[];

/** The media type of form name ("text/x-shellscript; charset=utf-8" ...),
 *  or NULL when name is not one of hv_advice_formats. Returns a static
 *  string. */
const char *hv_advice_media_type(const char *name);

/** Plan report (the JSON of GET /api/v1/plans/{id}/report: its plan_id,
 *  name, partial and recommendations are read) as form name. disk is the
 *  plan's tuning.disk ("sda" or "/dev/sda", NULL when the plan names none):
 *  settings of the disk (io_scheduler, readahead_kb) need it and are
 *  written as comments without it. Returns a malloc'd text the caller
 *  frees, or NULL when name is not a form or memory runs out. */
char *hv_advice_render(const json_t *report, const char *disk, const char *name);

#endif
