/* netrun.c — runs one side of the built-in net engine, in this process,
 * and prints its result as one JSON object on stdout: {"status",
 * "metrics", "samples", "observed"} (and "error" when it failed). For
 * bench/net-vs-iperf.sh, which compares it with iperf3 and iperf 2.
 *
 *   netrun server PARAMS_JSON           listens on an ephemeral port on
 *                                       every address, prints "port N" on
 *                                       stderr, serves one client, exits
 *   netrun client HOST PORT PARAMS_JSON connects to a netrun server
 *
 * The params are those of net/builtin (docs/catalog.md) in their
 * normalised form: sizes in bytes, durations in seconds; give both sides
 * the same. SIGINT and SIGTERM stop the run the way the worker's cancel
 * does.
 *
 * Exit status: 0 when the run succeeded, 1 when it failed, 2 on bad usage. */
#include "worker/engines/engine.h"
#include "worker/engines/net.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static int usage(const char *argv0)
{
    fprintf(stderr, "usage: %s server PARAMS_JSON\n       %s client HOST PORT PARAMS_JSON\n", argv0,
            argv0);
    return 2;
}

int main(int argc, char **argv)
{
    bool server = argc == 3 && strcmp(argv[1], "server") == 0;
    bool client = argc == 5 && strcmp(argv[1], "client") == 0;
    if (!server && !client)
        return usage(argv[0]);
    json_error_t jerr;
    json_t *params = json_loads(argv[argc - 1], JSON_REJECT_DUPLICATES, &jerr);
    if (params == NULL) {
        fprintf(stderr, "netrun: params: %s\n", jerr.text);
        return 2;
    }
    json_t *endpoints = NULL;
    if (client) {
        char *end;
        long port = strtol(argv[3], &end, 10);
        if (*end != '\0' || port < 1 || port > 65535) {
            json_decref(params);
            return usage(argv[0]);
        }
        endpoints =
            json_pack("[{s:s, s:s, s:i}]", "role", "server", "host", argv[2], "port", (int)port);
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    struct hv_engine_ctx ctx = {.params = params,
                                .stop = &stop,
                                .role = server ? "server" : "client",
                                .endpoints = endpoints};
    struct hv_engine_result r;
    if (hv_engine_result_init(&r) != 0) {
        fprintf(stderr, "netrun: out of memory\n");
        return 1;
    }
    const struct hv_engine *engine = hv_engine_find("net", "builtin");
    int rc = 0;
    if (server) {
        struct hv_endpoint ep = {0};
        rc = engine->prepare(engine, &ctx, &ep, &r);
        if (rc == 0) {
            fprintf(stderr, "port %d\n", ep.port);
            fflush(stderr);
        }
    }
    if (rc == 0)
        rc = engine->run(engine, &ctx, &r);
    json_t *body = json_pack("{s:s, s:O, s:O, s:O}", "status", rc == 0 ? "ok" : "error", "metrics",
                             r.metrics, "samples", r.samples, "observed", r.observed);
    if (rc != 0 && body != NULL)
        json_object_set_new(body, "error", json_string(r.error));
    if (body == NULL || json_dumpf(body, stdout, JSON_COMPACT) != 0) {
        fprintf(stderr, "netrun: cannot print the result\n");
        rc = -1;
    }
    putchar('\n');
    if (rc != 0)
        fprintf(stderr, "netrun: %s\n", r.error[0] ? r.error : "failed");
    json_decref(body);
    hv_engine_result_clear(&r);
    json_decref(endpoints);
    json_decref(params);
    return rc == 0 ? 0 : 1;
}
