/* plan_disrupt.h — what a plan's tuning does to its host and guests that
 * its author should hear of at submission, not at its first apply step:
 * one judgement, read by the submission (201 "warnings", or a 422) and its
 * dry run (actions.warnings) alike. */
#ifndef HV_SERVER_PLAN_DISRUPT_H
#define HV_SERVER_PLAN_DISRUPT_H

#include "plan.h"

#include <jansson.h>
#include <stddef.h>

/** Judges plan against host_facts, its host's facts as
 *  hv_db_target_disruption_facts() reads them ({"domains", "storage"};
 *  NULL when the host never registered). Appends {"path", "message"} to
 *  warnings:
 *
 *  - at /allow_restart, when restart-class factors are set, the plan does
 *    not set allow_restart and runs on guest domains it did not create
 *    (its domains or label-selected guests; template clones are its
 *    own): naming the factors, those domains, and the configurations
 *    and blocks whose apply step fails on such a domain while it runs;
 *  - at /tuning/disk, when the plan sets a factor acting on tuning.disk
 *    and the host's storage facts show that disk (by its kernel name or a
 *    partition's) holding /, or the host worker's state folder.
 *
 *  Appends to refusals one error at the domain's path for each such
 *  domain the host's facts show active (running, idle, paused, in
 *  shutdown, pmsuspended), and one for each domain the plan's guest
 *  factors would change that the facts show another VM manager owns
 *  ("manager": OpenStack nova, OpenNebula) unless the plan names it in
 *  targets.guests.domains and sets allow_restart; then writes into detail
 *  (len bytes) a sentence naming the first kind found and saying what to
 *  do. Returns 0, or -1 when
 *  memory runs out. Pure; thread safe. */
int hv_plan_disruption(const struct hv_plan *plan, const json_t *host_facts, json_t *warnings,
                       json_t *refusals, char *detail, size_t len);

#endif
