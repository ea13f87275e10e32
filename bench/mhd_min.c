/* mhd_min.c — the smallest libmicrohttpd responder, the peer of the
 * server's GET /healthz in bench/reads.sh: the same daemon mode as
 * server/http.c (epoll, a pool of THREADS threads, ITC, suspend/resume
 * allowed), answering every request 200 with the body the server's
 * /healthz sends, from a response built once. What the server does beyond
 * this (routing, access classes, metrics, logging, building the JSON) is
 * what the ratio measures.
 *
 * It listens on 127.0.0.1 only.
 *
 *   build/bench/mhd_min PORT [THREADS]   (THREADS: default the CPU count, at least 2) */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char body[] = "{\"status\":\"ok\"}";
static struct MHD_Response *reply;

static enum MHD_Result on_access(void *cls, struct MHD_Connection *c, const char *url,
                                 const char *method, const char *version, const char *data,
                                 size_t *size, void **state)
{
    (void)cls;
    (void)url;
    (void)method;
    (void)version;
    (void)data;
    if (*state == NULL) { /* headers only: wait for the (empty) body */
        *state = &reply;
        return MHD_YES;
    }
    if (*size != 0) {
        *size = 0;
        return MHD_YES;
    }
    return MHD_queue_response(c, 200, reply);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: mhd_min PORT [THREADS]\n");
        return 2;
    }
    int port = atoi(argv[1]);
    long threads = argc > 2 ? atol(argv[2]) : sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 2)
        threads = 2;
    if (port <= 0 || port > 65535 || threads > 256) {
        fprintf(stderr, "mhd_min: bad port or thread count\n");
        return 2;
    }
    reply = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
    if (reply == NULL ||
        MHD_add_response_header(reply, "Content-Type", "application/json") != MHD_YES)
        return 1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME,
        (uint16_t)port, NULL, NULL, on_access, NULL, MHD_OPTION_SOCK_ADDR, &sa,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)threads, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)64 * 1024, MHD_OPTION_END);
    if (d == NULL) {
        fprintf(stderr, "mhd_min: cannot listen on port %d\n", port);
        return 1;
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigprocmask(SIG_BLOCK, &set, NULL);
    int sig;
    sigwait(&set, &sig);
    MHD_stop_daemon(d);
    MHD_destroy_response(reply);
    return 0;
}
