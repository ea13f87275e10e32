/* site_bench.h — site benchmarks on the server side.
 *
 * A worker's administrator declares named custom benchmarks in the
 * worker's configuration; the worker registers them, without their
 * commands, as facts.benchmarks
 *   [{"name", "kind", "metric", "unit", "higher_is_better"}]
 * and a plan names one as {"engine": "custom", "params": {"name": ...}}.
 * This module checks the declarations a registration carries and that
 * every target a plan would run a custom workload on declares it, and,
 * from the same registered facts, that every target can hold what a
 * workload's params ask of it (limits that depend on the target). */
#ifndef HV_SERVER_SITE_BENCH_H
#define HV_SERVER_SITE_BENCH_H

#include "db.h"
#include "plan.h"

#include <jansson.h>

/** The most site benchmarks one target may declare. */
#define HV_SITE_BENCH_MAX 64

/** Checks a registration's facts.benchmarks (benchmarks may be NULL: not
 *  declared): an array of at most HV_SITE_BENCH_MAX objects with exactly
 *  name (the characters a plan's params.name allows), kind (cpu, disk,
 *  net), metric, unit and higher_is_better, no (name, kind) twice.
 *  Appends one {"path","message"} per problem under path (e.g.
 *  "/facts/benchmarks"). */
void hv_site_bench_check_decl(const json_t *benchmarks, const char *path, json_t *errors);

/** Checks that each custom workload of plan is declared, with its name and
 *  kind, by every target the expansion x runs it on (the net peer
 *  included). Appends one error per such workload that some target lacks
 *  at /workloads/<i>/params/name, naming the targets lacking it and every
 *  registered target that has it. Returns HV_DB_OK (whether or not errors
 *  were added) or the database failure; safe to call from any server
 *  thread (it uses the thread's connection). */
enum hv_db_status hv_site_bench_check_plan(const struct hv_plan *plan, const struct hv_expansion *x,
                                           json_t *errors);

/** Checks the params of each workload of plan against the limits that
 *  depend on the target (lib/params.h, hv_engine_def_fit(): threads x qd x
 *  block of a "per-vcpu" disk run) with the facts of every registered
 *  target the expansion x runs it on; a target no worker registered yet is
 *  checked by its worker when it runs the job. Appends one error per
 *  problem at /workloads/<i>/params/<param>, naming the target. Returns
 *  HV_DB_OK (whether or not errors were added) or the database failure. */
enum hv_db_status hv_site_check_limits(const struct hv_plan *plan, const struct hv_expansion *x,
                                       json_t *errors);

#endif
