/* plan_workloads.h — the workloads of a plan into their variants, for
 * lib/plan.c: sweeps expanded, each variant's params checked and
 * normalised by its engine (lib/params.h), the normalised params stored
 * back into the plan's document, and a two-sided engine's peer resolved. */
#ifndef HV_PLAN_WORKLOADS_H
#define HV_PLAN_WORKLOADS_H

#include "plan.h"

#include <jansson.h>
#include <stddef.h>

/** Expands workload w, index i of the plan document's workloads, into
 *  variants appended to plan->workloads (which has room for
 *  HV_PLAN_MAX_VARIANTS), and replaces w's params with their normalised
 *  form. Appends each problem to errors at its JSON Pointer and counts it
 *  in *invalid (malformed: a bad sweep, bad params, too many variants) or
 *  *impossible (no such engine, an unusable peer). Returns 0, or -1 when
 *  memory ran out (the plan must then be freed and refused). */
int hv_plan_expand_workload(struct hv_plan *plan, json_t *w, size_t i, json_t *errors, int *invalid,
                            int *impossible);

#endif
