/* plan_targets.h — where a plan runs, for lib/plan.c: its targets (the
 * host, and guests by domain, label selector or template) checked and
 * resolved, and the host objects its host-class factors act on
 * ("tuning": the disk and the NIC) checked against the factors that need
 * them. */
#ifndef HV_PLAN_TARGETS_H
#define HV_PLAN_TARGETS_H

#include "plan.h"

#include <jansson.h>

/** Checks the plan's "targets" object; each problem goes to errors at its
 *  JSON Pointer. Returns the number of problems. */
int hv_plan_check_targets(json_t *targets, json_t *errors);

/** Checks the plan's "tuning" object (disk and NIC names). Returns the
 *  number of problems. */
int hv_plan_check_tuning(const json_t *tuning, json_t *errors);

/** The host-class factors of doc that act on a disk or a NIC the plan's
 *  "tuning" does not name: a 422 problem each, counted in *impossible. */
void hv_plan_check_tuning_needs(const json_t *doc, json_t *errors, int *impossible);

/** Fills plan->guests from guests' domains, label selector (asking env)
 *  or template. A label that finds nothing is a problem counted in
 *  *impossible. Returns 0, or -1 when memory ran out. */
int hv_plan_resolve_guests(struct hv_plan *plan, const json_t *guests,
                           const struct hv_plan_env *env, json_t *errors, int *impossible);

/** Writes the name of clone index (from 1) of a template with prefix
 *  into buf: PREFIX "p" PLAN_ID "-" INDEX, plan_id the plan's id or
 *  HV_PLAN_ID_TOKEN (as plans store it until the server gives them an
 *  id). Returns 0, or -1 when it did not fit in len bytes. */
int hv_plan_clone_name(char *buf, size_t len, const char *prefix, const char *plan_id,
                       long long index);

/** The libvirt domain a guest target name stands for on its host: the
 *  part after the last '/' ("vm0" for "h1/vm0" and for "vm0"). */
const char *hv_plan_domain_of(const char *target);

#endif
