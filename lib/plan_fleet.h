/* plan_fleet.h — fleet plans: a plan whose targets.host is a label
 * selector ({"label": "pool=batch,cpu=epyc"}) runs on every registered
 * host the selector picks, as one child plan per host (the same plan with
 * targets.host set to that host's name and the same seed). The server
 * resolves the selector and stores the children (server/h_plans.c);
 * docs/plans.md, "Fleet plans", is the user's view. */
#ifndef HV_PLAN_FLEET_H
#define HV_PLAN_FLEET_H

#include <jansson.h>

/** Whether doc is a fleet plan. Returns 1 with *label pointing into doc at
 *  the selector's text when targets.host is an object {"label": SELECTOR}
 *  with a well-formed selector (lib/selector.h); 0 when targets.host is not
 *  an object (an ordinary plan, checked by hv_plan_parse); -1 with each
 *  problem appended to errors at its JSON Pointer otherwise. */
int hv_plan_fleet_label(const json_t *doc, const char **label, json_t *errors);

/** The plan one host of a fleet runs: a new deep copy of doc with
 *  targets.host set to host and, when doc has none, "seed" set to seed
 *  (so every child shares one). NULL when memory ran out. */
json_t *hv_plan_fleet_child(const json_t *doc, const char *host, json_int_t seed);

#endif
