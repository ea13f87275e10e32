/* import_runs.h — what the two forms of POST /api/v1/imports share: an
 * output read into runs and checked, when each run started, and the runs
 * as db_import.h stores them. A single output is handled in h_import.c, a
 * study of labelled outputs in h_study.c. */
#ifndef HV_SERVER_IMPORT_RUNS_H
#define HV_SERVER_IMPORT_RUNS_H

#include "parsers.h"
#include "request.h"

#include <jansson.h>
#include <stddef.h>

/** Checks a member "at" (under path) beyond its type: a real ISO 8601 UTC
 *  time, at most a day in the future. Appends an error. */
void hv_import_check_at(const char *at, const char *path, json_t *errors);

/** Checks a member "tool" (under path): one a parser knows by its own
 *  name. Appends an error naming the tools. */
void hv_import_check_tool(const char *tool, const char *path, json_t *errors);

/** Reads text[0..len) as p's output (only its table-th table when table
 *  is not 0: hv_parse_tool_table_runs()) into a new array of runs: it must
 *  parse, its runs must be runs of one workload, the params given beside
 *  it (checked by hv_params_given_check(); NULL: none) must not contradict
 *  it, and every metric and sample must be one a worker could upload
 *  (hv_result_data_check, lib/result.h). *params gets the workload's
 *  params, its identity (hv_parse_identity_apply(), parsers.h), a new
 *  reference. Returns NULL (and *params NULL) after appending the errors:
 *  the parser's reason under path + "/output", a contradiction under path
 *  + "/params", names and values under path + "/runs/N/metrics/K/name" or
 *  ".../value" (and "/runs/N/samples/K/..."). */
json_t *hv_import_parse(const struct hv_tool_parser *p, const char *text, size_t len, int table,
                        const json_t *given, const char *path, json_t *errors, json_t **params);

/** The workload kind of runs of p: the tool's, unless the output says
 *  otherwise (sysbench's fileio test is a disk measurement). Static. */
const char *hv_import_kind(const struct hv_tool_parser *p, const json_t *runs);

/** When the runs started: at (when not NULL, source "request"), else the
 *  first run's own stamp ("output": fio, iperf3, stress-ng's YAML), else
 *  now, written into now[len] ("import"). */
const char *hv_import_start(const char *at, const json_t *runs, char *now, size_t len,
                            const char **source);

/** Appends to entries one element per run of runs as struct hv_import
 *  takes them (db_import.h): configuration config, workload (copied by
 *  reference), output index output, repetitions from *rep + 1 on (*rep
 *  advanced). The first run starts at started; a run whose output stamps
 *  its start (source "output") starts then, any other where the run
 *  before it ended. */
void hv_import_entries(json_t *entries, const json_t *runs, const char *started, const char *source,
                       size_t config, json_t *workload, size_t output, size_t *rep);

/** POST /api/v1/imports with a study (doc holds "study"): several labelled
 *  outputs become one plan (h_study.c). Answers req; doc stays the
 *  caller's. */
void hv_import_study(struct hv_request *req, json_t *doc);

#endif
