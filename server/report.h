/* report.h — the report of a plan: figures turned into decisions.
 *
 * hv_report_load reads a plan's values from the database into a struct
 * hv_rdata (report_data.h); hv_report_build computes the report from it:
 * per metric the summary with its per-run values and outliers, the
 * comparisons of every factor level with its factor's default and their
 * verdicts (Holm over the family that feeds recommendations), two-factor
 * interactions, the overhead against the baseline with the efficiency
 * per subsystem and overall, whether each configuration's repetitions
 * reached the width asked for, and the recommendations. The statistics are
 * lib/'s (stats.h, compare.h, contrast.h, efficiency.h, adaptive.h);
 * docs/statistics.md says how the report uses them, docs/api.md what it
 * looks like. lib/report_render.h renders it as Markdown or CSV.
 *
 * The modules: report_load.c (database), report_arms.c (summaries and the
 * per-round values of each configuration), report_compare.c (verdicts,
 * interactions), report_overhead.c (baseline, efficiency),
 * report_advice.c (repetitions, recommendations), report_build.c (the
 * whole). Pure computation apart from report_load.c: thread safe. */
#ifndef HV_SERVER_REPORT_H
#define HV_SERVER_REPORT_H

#include "db.h"
#include "report_data.h"

#include <jansson.h>
#include <stdint.h>

/** Fills d (initialised by the caller, freed by it with hv_rdata_free)
 *  with plan id's settings and values. HV_DB_NONE when there is no such
 *  plan. */
enum hv_db_status hv_report_load(int64_t id, struct hv_rdata *d);

/** The report of d as a new JSON object (docs/api.md), or NULL when memory
 *  runs out. d must have been finished (hv_rdata_finish). */
json_t *hv_report_build(const struct hv_rdata *d);

#endif
