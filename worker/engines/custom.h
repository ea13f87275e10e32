/* custom.h — site benchmarks: the engines cpu/custom, disk/custom and
 * net/custom run a benchmark the worker's administrator declared in the
 * worker's --config file (worker/config.h). A plan names it in
 * params.name and can give nothing else: the argv, the timeout and how the
 * result is read come from the file alone. */
#ifndef HV_WORKER_ENGINES_CUSTOM_H
#define HV_WORKER_ENGINES_CUSTOM_H

#include "worker/config.h"
#include "worker/engines/engine.h"

#include <stddef.h>

/** Makes conf the declarations the custom engines use (NULL: none).
 *  Call before any engine runs (at start); conf must outlive every run.
 *  Not thread safe with running engines. */
void hv_custom_use(const struct hv_conf *conf);

/** Runs the benchmark params.name of e's kind (cpu, disk or net): its
 *  argv under its timeout and ctx->stop, then reads the value from its
 *  standard output. Fails when the params are not what lib/params.h
 *  allows, the worker has no such benchmark, it is declared for another
 *  kind, it fails, or its output holds no number where the declaration
 *  says. engine.h's hv_engine_run_fn. */
int hv_custom_run(const struct hv_engine *e, const struct hv_engine_ctx *ctx,
                  struct hv_engine_result *out);

/** Reads b's value from text[0..len) (NUL-terminated at len): the JSON
 *  Pointer's number (or a string holding one), or the regex's first group
 *  (else its whole match) as a number. Returns 0 with *value finite, or -1
 *  with err saying what was not found. */
int hv_custom_extract(const struct hv_site_bench *b, const char *text, size_t len, double *value,
                      char *err, size_t errlen);

#endif
