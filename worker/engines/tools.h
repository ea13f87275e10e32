/* tools.h — engines that run external tools (fio, iperf3, iperf 2,
 * sysbench, stress-ng, bonnie++) and the site benchmarks a worker's
 * administrator declares; their rows are hv_external_engines[]
 * (engine.h).
 *
 * Each tool is one row of a table in tools.c and one function that turns
 * the workload's params (lib/params.c, normalised there again) into an
 * argv. The tool runs through worker/engines/run.h; its output is read by
 * the parser of lib/parsers.h, so a run gets the same metric names as an
 * import of the same output. Its output is kept as the result's raw text,
 * and observed records the tool's version, the exact argv and what the
 * parser read beside the metrics.
 *
 * Files: fio and bonnie++ write under the scratch directory
 * ($HVBENCH_SCRATCH, default /var/tmp) unless params.path names a file or
 * directory there, or a block device listed in $HVBENCH_DISK_DEVICES (fio),
 * as the built-in disk engine allows. */
#ifndef HV_WORKER_ENGINES_TOOLS_H
#define HV_WORKER_ENGINES_TOOLS_H

#include "worker/engines/engine.h"
#include "worker/engines/run.h"

/** Runs spec for an engine: records the argv and the program's path in
 *  out->observed ("argv", "tool_path"), runs it under ctx->stop and
 *  records "exit_code" and "seconds". Returns 0 when it exited with status
 *  0 (*r holds its output; the caller clears it); otherwise -1 with
 *  out->error saying why (not installed, status, signal, timeout, stop) and
 *  what it printed kept as out->raw, *r cleared. */
int hv_tool_exec(const struct hv_engine_ctx *ctx, struct hv_engine_result *out,
                 const struct hv_run_spec *spec, struct hv_run_result *r);

/** Keeps a failed run's output as out->raw: standard output, then its
 *  standard error under a "--- stderr ---" line. */
void hv_tool_keep_failed_output(struct hv_engine_result *out, const struct hv_run_result *r);

#endif
