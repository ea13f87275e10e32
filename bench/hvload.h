/* hvload.h — what bench/hvload.c (the load generator) and its option
 * parser, bench/hvload_opts.c, share: limits, exit statuses, the options. */
#ifndef HV_BENCH_HVLOAD_H
#define HV_BENCH_HVLOAD_H

#include <stdbool.h>
#include <stddef.h>

#define EXIT_BAD   1
#define EXIT_USAGE 2
#define EXIT_LIMIT 3

#define MAX_SERVERS 16
#define MAX_WORKERS 4096
#define MAX_THREADS 64
/* The server refuses more samples than this in one result (h_jobs.c). */
#define MAX_SAMPLES 200000
/* A simulated worker gives up after this many failed requests in a row:
 * a server that fell over must end the run, not spin it. */
#define MAX_FAILURES_IN_ROW 3
/* Unexpected answers printed in full, per run. */

struct options {
    const char *servers[MAX_SERVERS];
    size_t n_servers;
    const char *token;
    const char *target;
    long workers;
    long threads; /* event loops the workers are spread over */
    long samples;
    long metrics;
    double wait;
    long empty_claims;
    double timeout;
    double limit;
    double outage; /* --outage: seconds a worker rides out answers 503 or none */
    bool heartbeat;
    bool claim_next;   /* an upload also claims the next job (not --claim-alone) */
    bool hosts;        /* --hosts: each worker its own target NAME-NNN */
    const char *label; /* --label k=v: the hosts' label */
    bool quiet;
    bool json;
};

/** Fills *o from the command line (--help prints the usage). Returns -1 to
 *  go on, or the exit status to end with (0 after --help, EXIT_USAGE after
 *  a message on standard error). */
int hvload_parse_options(int argc, char **argv, struct options *o);

#endif
