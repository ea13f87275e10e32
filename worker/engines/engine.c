/* engine.c — the engine table; see engine.h. The helpers engines call
 * (results, samples, steady state, the stop flag) are in outcome.c, so
 * the table and what its rows use do not call each other. */
#include "worker/engines/engine.h"

#include "worker/engines/cpu.h"
#include "worker/engines/disk.h"
#include "worker/engines/custom.h"
#include "worker/engines/net.h"
#include "worker/engines/tools.h"

#include <stddef.h>

/* Every engine this worker can run, one row per description of
 * lib/params.h. Adding one is a description there, a row here and its own
 * file under worker/engines/. */
static const struct hv_engine engines[] = {
    {.def = &hv_engine_def_cpu_builtin, .run = hv_engine_cpu_run},
    {.def = &hv_engine_def_disk_builtin, .run = hv_engine_disk_run},
    {.def = &hv_engine_def_net_builtin,
     .run = hv_engine_net_run,
     .prepare = hv_engine_net_prepare,
     .unprepare = hv_engine_net_unprepare},
    {.def = &hv_engine_def_disk_fio, .run = hv_tool_run, .tool = &hv_tool_fio},
    {.def = &hv_engine_def_cpu_sysbench, .run = hv_tool_run, .tool = &hv_tool_sysbench},
    {.def = &hv_engine_def_cpu_stress_ng, .run = hv_tool_run, .tool = &hv_tool_stress_ng},
    {.def = &hv_engine_def_disk_bonnie, .run = hv_tool_run, .tool = &hv_tool_bonnie},
    {.def = &hv_engine_def_net_iperf3,
     .run = hv_tool_net_run,
     .prepare = hv_tool_net_prepare,
     .unprepare = hv_tool_net_unprepare,
     .tool = &hv_tool_iperf3},
    {.def = &hv_engine_def_net_iperf,
     .run = hv_tool_net_run,
     .prepare = hv_tool_net_prepare,
     .unprepare = hv_tool_net_unprepare,
     .tool = &hv_tool_iperf},
    {.def = &hv_engine_def_cpu_custom, .run = hv_custom_run},
    {.def = &hv_engine_def_disk_custom, .run = hv_custom_run},
    {.def = &hv_engine_def_net_custom, .run = hv_custom_run},
};

const struct hv_engine *hv_engine_find(const char *kind, const char *engine)
{
    const struct hv_engine_def *def = hv_engine_def_find(kind, engine);
    for (size_t i = 0; def != NULL && i < sizeof engines / sizeof engines[0]; i++)
        if (engines[i].def == def)
            return &engines[i];
    return NULL;
}
