/* hvload_opts.c — hvload's command line: the usage text and the option
 * parser (hvload.h). Only loopback servers are accepted. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/hvload.h"

static const char usage_text[] =
    "usage: hvload --server URL --token TOKEN --workers N --target NAME [options]\n"
    "\n"
    "Simulates N hvbench workers against one or more hvbench servers on this\n"
    "machine: target NAME is registered once with TOKEN, and the N simulated\n"
    "workers share the worker credential it returns (as the threads of one\n"
    "worker process would), each registering again with it, then claiming\n"
    "jobs and uploading a synthetic result for each until the queue is empty.\n"
    "\n"
    "  --server URL          server base URL, loopback only; repeat it to spread\n"
    "                        the workers round-robin over several servers\n"
    "  --token TOKEN         token with the worker role (default: $HVBENCH_TOKEN)\n"
    "  --workers N           simulated workers (default 1)\n"
    "  --threads T           threads the workers are spread over, each driving\n"
    "                        its workers' requests at once, as pgbench -j does\n"
    "                        its clients' (default 2, at most N)\n"
    "  --target NAME         the target the workers claim for (default hvload)\n"
    "  --hosts               each worker is a host of its own, target NAME-000,\n"
    "                        NAME-001 ... with a credential of its own, as a\n"
    "                        fleet's hosts are (one worker per host)\n"
    "  --label K=V           with --hosts: the label each host registers with\n"
    "  --samples K           per-second samples per result (default 0)\n"
    "  --metrics M           metrics per result, at least 1 (default 1)\n"
    "  --wait S              long-poll seconds sent with each claim, 0..30 (default 0)\n"
    "  --heartbeat           send one heartbeat per job before uploading\n"
    "  --claim-alone         claim every job with a claim of its own; by default\n"
    "                        an upload also claims the worker's next job\n"
    "                        (?claim=true), as hvbench-worker does, and a worker\n"
    "                        claims alone only when an upload brought none\n"
    "  --empty-claims N      stop a worker after N empty claims in a row\n"
    "                        (default 3 with --wait 0, else 1)\n"
    "  --timeout S           per-request timeout on top of --wait (default 15)\n"
    "  --duration-limit S    stop the whole run after S seconds (default 300)\n"
    "  --outage S            ride out a database outage (a failover) as a worker\n"
    "                        does: a request answered 503 or not at all is asked\n"
    "                        again (an upload from the outbox) every 0.2 s for up\n"
    "                        to S seconds, counted as a retry, not a failure; an\n"
    "                        upload asked again and answered 200 is the replay of\n"
    "                        one stored before its answer got lost (default 0)\n"
    "  --quiet               no progress lines on standard error\n"
    "  --json                print the summary as one JSON object\n"
    "  --help                show this help\n"
    "\n"
    "exit status: 0 clean; 1 duplicate claim, unexpected status or no answer;\n"
    "2 usage; 3 the duration limit stopped the run first.\n";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "hvload: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'hvload --help'.\n");
    va_end(ap);
    return EXIT_USAGE;
}

/* ---- options ----------------------------------------------------------- */

/* Whether url is http:// to a loopback address (127.0.0.0/8, ::1 or
 * localhost), with an optional port and path. */
static bool loopback_url(const char *url)
{
    static const char scheme[] = "http://";
    if (strncmp(url, scheme, sizeof scheme - 1) != 0)
        return false;
    const char *host = url + sizeof scheme - 1;
    size_t n;
    if (host[0] == '[') {
        const char *end = strchr(host, ']');
        if (end == NULL || end - host != 4 || strncmp(host, "[::1]", 5) != 0)
            return false;
        n = 5;
    } else {
        n = strcspn(host, ":/");
        if (n == strlen("localhost") && strncmp(host, "localhost", n) == 0) {
            /* fine */
        } else {
            unsigned a, b, c, d;
            char tail;
            char addr[64];
            if (n == 0 || n >= sizeof addr)
                return false;
            memcpy(addr, host, n);
            addr[n] = '\0';
            if (sscanf(addr, "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) != 4 || a != 127 || b > 255 ||
                c > 255 || d > 255)
                return false;
        }
    }
    return host[n] == '\0' || host[n] == ':' || host[n] == '/';
}

static bool parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static bool parse_double(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(v >= lo && v <= hi))
        return false;
    *out = v;
    return true;
}

/* The long options, numbered past any character. */
enum {
    OPT_SERVER = 256,
    OPT_TOKEN,
    OPT_WORKERS,
    OPT_THREADS,
    OPT_TARGET,
    OPT_SAMPLES,
    OPT_METRICS,
    OPT_WAIT,
    OPT_HEARTBEAT,
    OPT_CLAIM_ALONE,
    OPT_EMPTY,
    OPT_TIMEOUT,
    OPT_LIMIT,
    OPT_OUTAGE,
    OPT_HOSTS,
    OPT_LABEL,
    OPT_QUIET,
    OPT_JSON,
};

/* Applies option c (with optarg) to o. Returns -1 to go on, or an exit
 * status (0 after --help). */
static int take_option(int c, struct options *o)
{
    switch (c) {
    case OPT_SERVER:
        if (o->n_servers == MAX_SERVERS)
            return usage_error("at most %d --server options", MAX_SERVERS);
        if (!loopback_url(optarg))
            return usage_error("--server must be an http:// URL on this machine "
                               "(127.0.0.0/8, [::1] or localhost), not '%s'",
                               optarg);
        o->servers[o->n_servers++] = optarg;
        break;
    case OPT_TOKEN:
        o->token = optarg;
        break;
    case OPT_WORKERS:
        if (!parse_long(optarg, 1, MAX_WORKERS, &o->workers))
            return usage_error("--workers needs 1..%d, not '%s'", MAX_WORKERS, optarg);
        break;
    case OPT_THREADS:
        if (!parse_long(optarg, 1, MAX_THREADS, &o->threads))
            return usage_error("--threads needs 1..%d, not '%s'", MAX_THREADS, optarg);
        break;
    case OPT_TARGET:
        if (*optarg == '\0' || strlen(optarg) > 128)
            return usage_error("--target needs a name of 1 to 128 characters");
        o->target = optarg;
        break;
    case OPT_SAMPLES:
        if (!parse_long(optarg, 0, MAX_SAMPLES, &o->samples))
            return usage_error("--samples needs 0..%d, not '%s'", MAX_SAMPLES, optarg);
        break;
    case OPT_METRICS:
        if (!parse_long(optarg, 1, 1000, &o->metrics))
            return usage_error("--metrics needs 1..1000, not '%s'", optarg);
        break;
    case OPT_WAIT:
        if (!parse_double(optarg, 0, 30, &o->wait))
            return usage_error("--wait needs 0..30 seconds, not '%s'", optarg);
        break;
    case OPT_HEARTBEAT:
        o->heartbeat = true;
        break;
    case OPT_CLAIM_ALONE:
        o->claim_next = false;
        break;
    case OPT_EMPTY:
        if (!parse_long(optarg, 1, 1000000, &o->empty_claims))
            return usage_error("--empty-claims needs 1..1000000, not '%s'", optarg);
        break;
    case OPT_TIMEOUT:
        if (!parse_double(optarg, 1, 300, &o->timeout))
            return usage_error("--timeout needs 1..300 seconds, not '%s'", optarg);
        break;
    case OPT_LIMIT:
        if (!parse_double(optarg, 1, 86400, &o->limit))
            return usage_error("--duration-limit needs 1..86400 seconds, not '%s'", optarg);
        break;
    case OPT_OUTAGE:
        if (!parse_double(optarg, 0, 3600, &o->outage))
            return usage_error("--outage needs 0..3600 seconds, not '%s'", optarg);
        break;
    case OPT_HOSTS:
        o->hosts = true;
        break;
    case OPT_LABEL:
        if (strchr(optarg, '=') == NULL || *optarg == '=' || strlen(optarg) > 200)
            return usage_error("--label needs KEY=VALUE, not '%s'", optarg);
        o->label = optarg;
        break;
    case OPT_QUIET:
        o->quiet = true;
        break;
    case OPT_JSON:
        o->json = true;
        break;
    case 'h':
        fputs(usage_text, stdout);
        return 0;
    default:
        return usage_error("unknown option");
    }
    return -1;
}

int hvload_parse_options(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
        {"server", required_argument, NULL, OPT_SERVER},
        {"token", required_argument, NULL, OPT_TOKEN},
        {"workers", required_argument, NULL, OPT_WORKERS},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"target", required_argument, NULL, OPT_TARGET},
        {"samples", required_argument, NULL, OPT_SAMPLES},
        {"metrics", required_argument, NULL, OPT_METRICS},
        {"wait", required_argument, NULL, OPT_WAIT},
        {"heartbeat", no_argument, NULL, OPT_HEARTBEAT},
        {"claim-alone", no_argument, NULL, OPT_CLAIM_ALONE},
        {"empty-claims", required_argument, NULL, OPT_EMPTY},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"duration-limit", required_argument, NULL, OPT_LIMIT},
        {"outage", required_argument, NULL, OPT_OUTAGE},
        {"hosts", no_argument, NULL, OPT_HOSTS},
        {"label", required_argument, NULL, OPT_LABEL},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"json", no_argument, NULL, OPT_JSON},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (struct options){.token = getenv("HVBENCH_TOKEN"),
                          .target = "hvload",
                          .workers = 1,
                          .threads = 2,
                          .samples = 0,
                          .metrics = 1,
                          .wait = 0,
                          .empty_claims = 0,
                          .timeout = 15,
                          .claim_next = true,
                          .limit = 300};
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        int rc = take_option(c, o);
        if (rc >= 0)
            return rc;
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    if (o->n_servers == 0)
        return usage_error("--server is required");
    if (o->token == NULL || *o->token == '\0')
        return usage_error("--token (or HVBENCH_TOKEN) is required");
    if (o->threads > o->workers)
        o->threads = o->workers;
    if (o->empty_claims == 0)
        o->empty_claims = o->wait > 0 ? 1 : 3;
    return -1;
}
