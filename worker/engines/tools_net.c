/* tools_net.c — the net tools (iperf3, iperf 2) on both sides of a group:
 * the server's prepare starts the tool's server on a free port and waits
 * until it listens, its run waits for the one test it serves; a client
 * finds the server in the group's endpoints; see tools.h. */
#include "worker/engines/tools.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* How long a net tool's server may take to start listening. */
#define LISTEN_WAIT 10.0

/* ---------------------------------------------------------------------
 * The client side: the server's address from the group's endpoints. */

int hv_tool_net_endpoint(struct hv_tool_job *j)
{
    const json_t *eps = j->ctx->endpoints, *best = NULL;
    size_t i;
    json_t *e;
    json_array_foreach(eps, i, e)
    {
        const char *role = json_string_value(json_object_get(e, "role"));
        const char *target = json_string_value(json_object_get(e, "target"));
        if (role == NULL || strcmp(role, "server") != 0)
            continue;
        if (best == NULL ||
            (j->ctx->peer != NULL && target != NULL && strcmp(target, j->ctx->peer) == 0))
            best = e;
    }
    const char *h = json_string_value(json_object_get(best, "host"));
    json_int_t p = json_integer_value(json_object_get(best, "port"));
    if (best == NULL || h == NULL || h[0] == '\0' || h[0] == '-' || p < 1 || p > 65535)
        return hv_engine_fail(j->out,
                              "%s client: the group announced no usable server endpoint "
                              "({\"role\": \"server\", \"host\", \"port\"})",
                              j->tool->display);
    snprintf(j->host, sizeof j->host, "%s", h);
    j->port = (int)p;
    return 0;
}

void hv_tool_client_args(struct hv_tool_job *j)
{
    hv_tool_arg(&j->args, "%s", j->tool->program);
    hv_tool_arg(&j->args, "-c");
    hv_tool_arg(&j->args, "%s", j->host);
    hv_tool_arg(&j->args, "-p");
    hv_tool_arg(&j->args, "%d", j->port);
}

/* ---------------------------------------------------------------------
 * The server side. */

/* What prepare() leaves for run(). */
struct net_server {
    struct hv_tool_job job;
    struct hv_proc *proc;
    json_t *observed; /* argv, tool_version, port */
};

/* A TCP port nothing listens on now (the kernel's pick). */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t len = sizeof sa;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
        port = ntohs(sa.sin_port);
    close(fd);
    return port;
}

/* Whether a TCP socket listens on port (any address), from /proc/net. */
static bool listening(int port)
{
    static const char *const files[] = {"/proc/net/tcp", "/proc/net/tcp6"};
    for (size_t f = 0; f < 2; f++) {
        FILE *fp = fopen(files[f], "re");
        if (fp == NULL)
            continue;
        char line[512];
        bool found = false;
        while (!found && fgets(line, sizeof line, fp) != NULL) {
            char local[128];
            unsigned st;
            if (sscanf(line, " %*d: %127s %*s %x", local, &st) != 2)
                continue;
            const char *colon = strrchr(local, ':');
            found = st == 0x0A && colon != NULL && strtol(colon + 1, NULL, 16) == port;
        }
        fclose(fp);
        if (found)
            return true;
    }
    return false;
}

/* Starts t's server on a free port and waits until it listens; retries
 * when another process took the port first. */
int hv_tool_net_prepare(const struct hv_engine *e, struct hv_engine_ctx *ctx,
                        struct hv_endpoint *ep, struct hv_engine_result *out)
{
    const struct hv_tool *t = e->tool;
    char path[PATH_MAX], err[sizeof out->error];
    if (hv_run_find(t->program, t->display, path, sizeof path, err, sizeof err) != 0)
        return hv_engine_fail(out, "%s", err);
    struct net_server *s = calloc(1, sizeof *s);
    if (s == NULL || (s->observed = json_object()) == NULL) {
        free(s);
        return hv_engine_fail(out, "out of memory");
    }
    if (hv_tool_job_init(&s->job, e, ctx, out) != 0)
        goto fail;
    hv_tool_record_version(t, s->observed);
    for (int attempt = 0; attempt < 3; attempt++) {
        int port = free_port();
        if (port < 0) {
            hv_engine_fail(out, "%s server: no free TCP port: %s", t->display, strerror(errno));
            goto fail;
        }
        hv_tool_args_free(&s->job.args);
        if (t->server_argv(&s->job, port) != 0)
            goto fail;
        if (s->job.args.broken) {
            hv_engine_fail(out, "out of memory");
            goto fail;
        }
        /* Until run() gives it its real timeout: bounded, so a server
         * whose group never starts does not stay for ever. */
        struct hv_run_spec spec = {
            .argv = (const char *const *)s->job.args.v, .display = t->display, .timeout = 3600};
        s->proc = hv_proc_start(&spec, err, sizeof err);
        if (s->proc == NULL) {
            hv_engine_fail(out, "%s", err);
            goto fail;
        }
        bool up = false, alive = true;
        for (int i = 0; i < LISTEN_WAIT * 20 && alive && !up; i++) {
            alive = hv_proc_poll(s->proc, 0.05);
            up = alive && listening(port);
            if (hv_engine_stopping(ctx))
                break;
        }
        if (up) {
            json_object_set_new(s->observed, "argv",
                                hv_tool_argv_json((const char *const *)s->job.args.v));
            json_object_set_new(s->observed, "port", json_integer(port));
            ep->port = port;
            ctx->prepared = s;
            return 0;
        }
        struct hv_run_result r;
        hv_proc_set_timeout(s->proc, 0.001);
        hv_proc_wait(s->proc, NULL, &r);
        s->proc = NULL;
        char why[sizeof out->error];
        hv_run_describe(&r, t->display, why, sizeof why);
        hv_tool_keep_failed_output(out, &r);
        hv_run_result_clear(&r);
        if (hv_engine_stopping(ctx)) {
            hv_engine_fail(out, "stopped while the %s server started", t->display);
            goto fail;
        }
        hv_engine_fail(out, "the %s server did not listen on port %d within %.0f s: %s", t->display,
                       port, LISTEN_WAIT, why);
        if (!alive)
            continue; /* it exited: maybe the port was taken; another one */
        goto fail;
    }
fail:
    hv_tool_job_cleanup(&s->job);
    json_decref(s->observed);
    free(s);
    return -1;
}

void hv_tool_net_unprepare(const struct hv_engine *e, struct hv_engine_ctx *ctx)
{
    (void)e;
    struct net_server *s = ctx->prepared;
    if (s == NULL)
        return;
    hv_proc_kill(s->proc);
    hv_tool_job_cleanup(&s->job);
    json_decref(s->observed);
    free(s);
    ctx->prepared = NULL;
}

/* The server side: waits for the started server to serve its one test. */
static int net_server_run(const struct hv_tool *t, const struct hv_engine_ctx *ctx,
                          struct hv_engine_result *out)
{
    struct net_server *s = ctx->prepared;
    if (s == NULL)
        return hv_engine_fail(out, "the %s server was not started before the run (no prepare)",
                              t->display);
    s->job.out = out;
    s->job.ctx = ctx;
    json_object_update(out->observed, s->observed);
    hv_proc_set_timeout(s->proc, s->job.timeout);
    struct hv_run_result r;
    hv_proc_wait(s->proc, ctx->stop, &r);
    s->proc = NULL;
    int rc = hv_tool_finish(out, t->display, &r);
    if (rc != 0)
        hv_tool_explain_failure(&s->job, &r);
    else
        rc = hv_tool_report(&s->job, &r);
    hv_run_result_clear(&r);
    hv_tool_job_cleanup(&s->job);
    json_decref(s->observed);
    free(s);
    return rc;
}

int hv_tool_net_run(const struct hv_engine *e, const struct hv_engine_ctx *ctx,
                    struct hv_engine_result *out)
{
    const struct hv_tool *t = e->tool;
    if (ctx->role != NULL && strcmp(ctx->role, "server") == 0)
        return net_server_run(t, ctx, out);
    if (ctx->role == NULL || strcmp(ctx->role, "client") != 0)
        return hv_engine_fail(out,
                              "%s runs as the client or the server of a net workload's group, "
                              "not on its own",
                              t->display);
    return hv_tool_run(e, ctx, out);
}
