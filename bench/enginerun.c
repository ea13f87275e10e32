/* enginerun.c — runs one built-in engine once, in this process, and prints
 * its result as one JSON object on stdout: {"status", "metrics", "samples",
 * "observed"} (and "error" when it failed). For the benchmarks that compare
 * an engine with a tool on the same workload (bench/disk-vs-fio.sh) or
 * measure it alone (bench/cpu-stability.sh), without a server in the way.
 *
 *   enginerun disk '{"ops": ["seq-read"], "block": 1048576, "size": 1073741824}'
 *   enginerun cpu '{"copies": 1, "seconds": 10}'
 *
 * The params are those of KIND/builtin (docs/catalog.md) in their
 * normalised form: sizes in bytes, durations in seconds. The scratch
 * directory and the device allowlist come from $HVBENCH_SCRATCH and
 * $HVBENCH_DISK_DEVICES, as for the worker. SIGINT and SIGTERM stop the run
 * the way the worker's cancel does.
 *
 * Exit status: 0 when the run succeeded, 1 when it failed, 2 on bad usage. */
#include "worker/engines/engine.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

int main(int argc, char **argv)
{
    if (argc != 3 || strcmp(argv[1], "--help") == 0) {
        fprintf(stderr, "usage: %s KIND PARAMS_JSON   (KIND: cpu or disk)\n", argv[0]);
        return 2;
    }
    const struct hv_engine *engine = hv_engine_find(argv[1], "builtin");
    if (engine == NULL || engine->prepare != NULL) {
        fprintf(stderr, "enginerun: no one-sided built-in engine of kind \"%s\"\n", argv[1]);
        return 2;
    }
    json_error_t jerr;
    json_t *params = json_loads(argv[2], JSON_REJECT_DUPLICATES, &jerr);
    if (params == NULL) {
        fprintf(stderr, "enginerun: params: %s\n", jerr.text);
        return 2;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    struct hv_engine_ctx ctx = {.params = params, .stop = &stop};
    struct hv_engine_result r;
    if (hv_engine_result_init(&r) != 0) {
        fprintf(stderr, "enginerun: out of memory\n");
        return 1;
    }
    int rc = engine->run(engine, &ctx, &r);
    json_t *body = json_pack("{s:s, s:O, s:O, s:O}", "status", rc == 0 ? "ok" : "error", "metrics",
                             r.metrics, "samples", r.samples, "observed", r.observed);
    if (rc != 0 && body != NULL)
        json_object_set_new(body, "error", json_string(r.error));
    if (body == NULL || json_dumpf(body, stdout, JSON_COMPACT) != 0) {
        fprintf(stderr, "enginerun: cannot print the result\n");
        rc = -1;
    }
    putchar('\n');
    if (rc != 0)
        fprintf(stderr, "enginerun: %s\n", r.error[0] ? r.error : "failed");
    json_decref(body);
    hv_engine_result_clear(&r);
    json_decref(params);
    return rc == 0 ? 0 : 1;
}
