/* report.h — the report of a plan: figures turned into decisions.
 *
 * hv_report_load reads a plan's values from the database into a struct
 * hv_rdata (report_data.h); hv_report_build computes the report from it:
 * per metric the summary with its per-run values and outliers, the
 * comparisons of every factor level with its factor's default and their
 * verdicts (Holm over the family that feeds recommendations), two-factor
 * interactions, the overhead against the baseline with the efficiency
 * per subsystem and overall, whether each configuration's repetitions
 * reached the width asked for, the recommendations, and last, read from
 * that finished document, the answer it opens with and how many
 * comparisons are decided (lib/report_render.h hv_report_lead,
 * hv_report_decided: the same lines hvbench report prints). The statistics are
 * lib/'s (stats.h, compare.h, contrast.h, efficiency.h, adaptive.h);
 * docs/statistics.md says how the report uses them, docs/api.md what it
 * looks like. lib/report_render.h renders it as Markdown or CSV.
 *
 * The modules: report_load.c (database), report_arms.c (summaries and the
 * per-round values of each configuration), report_compare.c (verdicts,
 * interactions), report_overhead.c (baseline, efficiency),
 * report_advice.c (repetitions, recommendations), report_build.c (the
 * whole), report_digest.c (what a big plan's report keeps, and its
 * key). Pure computation apart from report_load.c: thread safe.
 *
 * A big plan: a series of more than HV_REPORT_RUNS_LISTED rounds lists only
 * its flagged runs (unless runs=all), and an arm of more rounds keeps that
 * many of its jobs as evidence. Its report is then computed from the values
 * once per state of the plan's done jobs: what the later reports need (the
 * summaries as answered, and per arm n, summary, log group and jobs kept) is
 * its digest, kept in report_digests (migrations/015) with that state, and
 * a report finding the same state reads the digest instead of the values.
 * The answer in its default form (JSON, the runs listed by default) is kept
 * beside the digest as the text sent (migrations/026), with the md5 of
 * everything else it read (the plan's summary and settings, the host's
 * view, the code that rendered it: report_load.c's answer_inputs); a
 * report finding the same state and the same inputs sends that text
 * without computing or parsing anything (hv_report_answer). The answer is
 * assembled in one place, hv_report_build_digest (report_build.c): a
 * section added there that reads something else adds it to the inputs.
 *
 * Both are kept under a key (hv_report_key) of what made them: the build
 * of the server (its executable's SHA-256, build_id.h), the database's
 * migration level (a table's shape changes only with a migration) and the
 * state of the plan's jobs. A digest or answer of another build or level
 * is never read: it is computed again. hv_report_tables lists the tables
 * a report reads and what covers a change of their rows;
 * tests/integration/test_report_key.sh fails when a report reads a table
 * not listed there. */
#ifndef HV_SERVER_REPORT_H
#define HV_SERVER_REPORT_H

#include "db.h"
#include "report_data.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/** Per series, the runs a report lists in full up to this many rounds;
 *  past it only the flagged ones (?runs=all lists every run). */
#define HV_REPORT_RUNS_LISTED 100

/** Fills d (initialised by the caller, freed by it with hv_rdata_free)
 *  with plan id's settings, the state of its jobs (d->version) and its
 *  values, or instead of the values the digest kept for that state when
 *  there is one and d->runs_all (set by the caller) is false. HV_DB_NONE
 *  when there is no such plan. */
enum hv_db_status hv_report_load(int64_t id, struct hv_rdata *d);

/** The report of d as a new JSON object (docs/api.md), or NULL when memory
 *  runs out. d must have been finished (hv_rdata_finish). */
json_t *hv_report_build(const struct hv_rdata *d);

/** hv_report_build, and when d holds values of a big plan (a series of more
 *  than HV_REPORT_RUNS_LISTED rounds) and not runs_all, its digest as a new
 *  JSON object in *digest (else NULL). */
json_t *hv_report_build_digest(const struct hv_rdata *d, json_t **digest);

/** The key of what a report keeps (report_digests.version): build (an
 *  hv_build_id()), ":m" and level (the migration level, hv_schema_level()),
 *  then the state of the plan's jobs in summary (its plan's summary as
 *  hv_db_plan_get() gives it): how many, how many done (a done job stays
 *  done) and when one last changed status; a job becoming done, whichever
 *  way its result arrived, changes it. A new string, NULL when memory runs
 *  out. */
char *hv_report_key(const char *build, int level, const json_t *summary);

/** A table a report reads, and what makes a change of its rows show in
 *  what the report keeps (the key, or the inputs of a kept answer). */
struct hv_report_table {
    const char *name;     /**< the table, as in migrations/schema.sql */
    const char *keyed_by; /**< what covers a change of its rows */
};

/** Every table a report (hv_report_get, hv_report_answer) reads, in order
 *  of name, closed by a row of NULLs. A table a report comes to read is
 *  added here with what covers it, or the key grows to cover it. */
extern const struct hv_report_table hv_report_tables[];

/** The report of plan id (runs_all: every run listed) into *report: loaded,
 *  built, and a big plan's digest kept for the next. HV_DB_NONE without such
 *  a plan; HV_DB_ERROR also when memory runs out. */
enum hv_db_status hv_report_get(int64_t id, bool runs_all, json_t **report);

/** A big plan that has not ended has its digest computed again at most
 *  every this many seconds: in between, while its jobs keep ending, its
 *  report is the answer kept, of the state its as_of names. */
#define HV_REPORT_RUNNING_S 30

/** The report of plan id in its default form (runs listed by default) as
 *  the JSON text to send, a new string in *text: for a plan not ended the
 *  answer kept whatever its state and inputs when its digest is less than
 *  HV_REPORT_RUNNING_S old; else the answer kept for the state of the
 *  plan's jobs and the report's other inputs when there is one; else
 *  rendered (from the
 *  digest kept, else from the values) and, for a big plan, kept. A plan
 *  that ended always has the answer of its last state. HV_DB_NONE without
 *  such a plan; HV_DB_ERROR also when memory runs out. */
enum hv_db_status hv_report_answer(int64_t id, char **text);

#endif
