/* tool_bonnie.c — the bonnie++ adapter: block write, rewrite, read, seeks
 * and file creation in a directory under the scratch one, CSV output; see
 * tools.h. */
#include "worker/engines/tools.h"

#include "params.h"
#include "worker/engines/storage.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* bonnie++'s run time follows from its file size and the disk, not from a
 * param: a day. */
#define BONNIE_TIMEOUT 86400.0

/* The directory to test in: the scratch directory, or params.path under
 * it, resolved into j->target. */
static int place_bonnie(struct hv_tool_job *j)
{
    char scratch[PATH_MAX];
    if (hv_scratch_dir(scratch, sizeof scratch, j->out) != 0)
        return -1;
    const char *path = hv_params_str(j->params, "path");
    snprintf(j->target, sizeof j->target, "%s", scratch);
    if (path == NULL)
        return 0;
    struct stat st;
    if (realpath(path, j->target) == NULL || stat(j->target, &st) != 0 || !S_ISDIR(st.st_mode))
        return hv_engine_fail(j->out, "path %s is not a directory", path);
    if (!hv_path_within(j->target, scratch, true))
        return hv_engine_fail(j->out,
                              "path %s is outside the scratch directory %s "
                              "($HVBENCH_SCRATCH), the only place bonnie++ may write",
                              path, scratch);
    return 0;
}

static int argv_bonnie(struct hv_tool_job *j)
{
    const json_t *p = j->params;
    struct hv_tool_args *a = &j->args;
    hv_tool_arg(a, "bonnie++");
    hv_tool_arg(a, "-d");
    hv_tool_arg(a, "%s", j->target);
    if (json_object_get(p, "size") != NULL) {
        hv_tool_arg(a, "-s");
        hv_tool_arg(a, "%lld", hv_params_int(p, "size") / (1024 * 1024));
    }
    if (json_object_get(p, "ram_mb") != NULL) {
        hv_tool_arg(a, "-r");
        hv_tool_arg(a, "%lld", hv_params_int(p, "ram_mb"));
    }
    if (hv_params_bool(p, "fast"))
        hv_tool_arg(a, "-f");
    if (j->root) {
        /* bonnie++ refuses to run as root unless told whom to run as. */
        hv_tool_arg(a, "-u");
        hv_tool_arg(a, "root");
    }
    hv_tool_arg(a, "-q"); /* the CSV alone on standard output */
    j->timeout = BONNIE_TIMEOUT;
    return 0;
}

const struct hv_tool hv_tool_bonnie = {
    .display = "bonnie++",
    .program = "bonnie++",
    .place = place_bonnie,
    .argv = argv_bonnie,
    .no_samples = "bonnie++ reports only totals",
};
