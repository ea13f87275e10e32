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

/* How a tool of each kind runs (the rows of the tools below): one-sided,
 * or a net tool's two sides. */
#define TOOL_RUN_cpu  .run = hv_tool_run
#define TOOL_RUN_disk .run = hv_tool_run
#define TOOL_RUN_net                                                                               \
    .run = hv_tool_net_run, .prepare = hv_tool_net_prepare, .unprepare = hv_tool_net_unprepare

/* Every engine this worker can run, one row per description of
 * lib/params.h. Adding a built-in one is a description there, a row here
 * and its own file under worker/engines/; an external tool is a line of
 * lib/tools.def, which makes its row here, and its adapter tool_<id>.c. */
static const struct hv_engine engines[] = {
    {.def = &hv_engine_def_cpu_builtin, .run = hv_engine_cpu_run},
    {.def = &hv_engine_def_disk_builtin, .run = hv_engine_disk_run},
    {.def = &hv_engine_def_net_builtin,
     .run = hv_engine_net_run,
     .prepare = hv_engine_net_prepare,
     .unprepare = hv_engine_net_unprepare},
#define HV_TOOL(id, kind, guess)                                                                   \
    {.def = &hv_engine_def_##kind##_##id, .tool = &hv_tool_##id, TOOL_RUN_##kind},
#include "tools.def"
#undef HV_TOOL
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
