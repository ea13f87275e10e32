/* metrics.c — see metrics.h. */
#include "metrics.h"

#include "conns.h"
#include "hv_build.h"
#include "waiters.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

/* Upper bounds in seconds of the duration histogram's buckets (+Inf comes
 * after them): from a GET answered from memory to a long poll that waited
 * its full 60 s. */
static const double bucket_le[] = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                   0.5,   1,     2.5,  5,     10,   30,  60};
#define N_BOUNDS  (sizeof bucket_le / sizeof bucket_le[0])
#define N_BUCKETS (N_BOUNDS + 1)

/* Upper bounds in seconds of the job duration histogram's buckets: from a
 * one-second smoke job to a four-hour HEPSPEC run. */
static const double job_le[] = {1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 14400};
#define N_JOB_BOUNDS  (sizeof job_le / sizeof job_le[0])
#define N_JOB_BUCKETS (N_JOB_BOUNDS + 1)

/* Status classes 1xx to 5xx. */
#define N_CLASSES 5

/* One slot per row of the route table, then the web page, then no route. */
#define SLOT_WEB  HV_METRICS_MAX_ROUTES
#define SLOT_NONE (HV_METRICS_MAX_ROUTES + 1)
#define N_SLOTS   (HV_METRICS_MAX_ROUTES + 2)

/* What one route counts. Zero-initialized static atomics are valid, so
 * nothing needs setting up before the first request. */
struct slot {
    atomic_ulong by_class[N_CLASSES]; /* answers by status class */
    atomic_ulong buckets[N_BUCKETS];  /* the one bucket each duration fell in (not cumulative) */
    atomic_ullong sum_us;             /* the durations summed, in microseconds */
};

static struct slot slots[N_SLOTS];
static atomic_ulong claims_job, claims_empty, claims_with_result, results_stored, samples_ingested,
    db_reconnects, db_txn_retries, db_commit_unknown, listen_reconnects;
static atomic_ulong refused_address, refused_room, refused_sending, refused_body, head_timeouts,
    body_timeouts;
static atomic_ulong plan_cache_hits, plan_cache_misses;
static atomic_ulong batches[HV_METRICS_BATCH_KINDS], batched[HV_METRICS_BATCH_KINDS];
static atomic_ulong webhook_outcomes[3];
/* Job durations by outcome (0 ok, 1 error): the one bucket each fell in. */
static atomic_ulong job_buckets[2][N_JOB_BUCKETS];
static atomic_ullong job_sum_ms[2];

/* Adds n to a counter. Relaxed: counters order nothing else. */
static void add(atomic_ulong *c, unsigned long n)
{
    atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

/* Reads a counter. */
static unsigned long get(atomic_ulong *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

/* The slot of a route index or HV_METRICS_ROUTE_* value. */
static size_t slot_of(int route)
{
    if (route >= 0 && route < HV_METRICS_MAX_ROUTES)
        return (size_t)route;
    return route == HV_METRICS_ROUTE_WEB ? SLOT_WEB : SLOT_NONE;
}

void hv_metrics_request(int route, unsigned status, double seconds)
{
    struct slot *s = &slots[slot_of(route)];
    unsigned class = status / 100;
    if (class >= 1 && class <= N_CLASSES)
        add(&s->by_class[class - 1], 1);
    size_t b = 0;
    while (b < N_BOUNDS && seconds > bucket_le[b])
        b++;
    add(&s->buckets[b], 1);
    if (seconds > 0)
        atomic_fetch_add_explicit(&s->sum_us, (unsigned long long)(seconds * 1e6 + 0.5),
                                  memory_order_relaxed);
}

void hv_metrics_claim(bool got_job)
{
    add(got_job ? &claims_job : &claims_empty, 1);
}

void hv_metrics_claim_with_result(void)
{
    add(&claims_with_result, 1);
}

void hv_metrics_batch(int kind, size_t requests)
{
    if (kind < 0 || kind >= HV_METRICS_BATCH_KINDS)
        return;
    add(&batches[kind], 1);
    add(&batched[kind], requests);
}

void hv_metrics_plan_cache(bool hit)
{
    add(hit ? &plan_cache_hits : &plan_cache_misses, 1);
}

void hv_metrics_result_stored(size_t samples)
{
    add(&results_stored, 1);
    add(&samples_ingested, samples);
}

void hv_metrics_db_reconnect(void)
{
    add(&db_reconnects, 1);
}

void hv_metrics_db_txn_retry(void)
{
    add(&db_txn_retries, 1);
}

void hv_metrics_db_commit_unknown(void)
{
    add(&db_commit_unknown, 1);
}

void hv_metrics_listen_reconnect(void)
{
    add(&listen_reconnects, 1);
}

void hv_metrics_conn_refused(enum hv_metrics_refusal why)
{
    add(why == HV_REFUSED_ADDRESS  ? &refused_address
        : why == HV_REFUSED_BODIES ? &refused_sending
                                   : &refused_room,
        1);
}

void hv_metrics_body_refused(void)
{
    add(&refused_body, 1);
}

void hv_metrics_head_timeouts(unsigned n)
{
    add(&head_timeouts, n);
}

void hv_metrics_body_timeouts(unsigned n)
{
    add(&body_timeouts, n);
}

/* Writes s as the inside of a quoted label value: backslash, double quote
 * and newline escaped, as the text format asks. */
static void put_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            fputc('\\', f);
        if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
}

/* The labels of the named route slots (hv_metrics_name_route). */
static const char *route_methods[HV_METRICS_MAX_ROUTES];
static const char *route_patterns[HV_METRICS_MAX_ROUTES];
static size_t n_routes_named;

void hv_metrics_name_route(size_t i, const char *method, const char *pattern)
{
    if (i >= HV_METRICS_MAX_ROUTES)
        return;
    route_methods[i] = method;
    route_patterns[i] = pattern;
    if (i + 1 > n_routes_named)
        n_routes_named = i + 1;
}

/* Writes the route label of slot i: the method and path template of a row
 * of the route table ("GET /api/v1/plans/{id}"), "(web page)" or
 * "(no route)". */
static void put_route(FILE *f, size_t i)
{
    fputs("route=\"", f);
    if (i == SLOT_WEB) {
        fputs("(web page)", f);
    } else if (i == SLOT_NONE) {
        fputs("(no route)", f);
    } else {
        put_escaped(f, route_methods[i] ? route_methods[i] : "?");
        fputc(' ', f);
        put_escaped(f, route_patterns[i] ? route_patterns[i] : "?");
    }
    fputc('"', f);
}

/* Whether slot i is one that can count: a row of the table or a special
 * slot. */
static bool slot_used(size_t i)
{
    return (i < n_routes_named && route_methods[i] != NULL) || i == SLOT_WEB || i == SLOT_NONE;
}

/* Writes the HELP and TYPE lines of a metric family. */
static void put_family(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The database connection counters: one row each. */
static const struct {
    const char *name;
    const atomic_ulong *value;
    const char *help;
} db_counters[] = {
    {"hvbench_db_reconnects_total", &db_reconnects,
     "Database connections of server threads opened again after they were lost."},
    {"hvbench_db_txn_retries_total", &db_txn_retries,
     "Transactions run again from the start on a new connection after a lost one (a database "
     "restart or failover) cut them before their COMMIT."},
    {"hvbench_db_commit_unknown_total", &db_commit_unknown,
     "Transactions whose connection was lost at their COMMIT (answered 503, not run again: they "
     "may be stored)."},
    {"hvbench_db_listen_reconnects_total", &listen_reconnects,
     "LISTEN connections (long-poll wake-ups) opened again after they were lost."},
};

static void put_db_counters(FILE *f)
{
    for (size_t i = 0; i < sizeof db_counters / sizeof db_counters[0]; i++) {
        put_family(f, db_counters[i].name, "counter", db_counters[i].help);
        fprintf(f, "%s %lu\n", db_counters[i].name,
                atomic_load_explicit(db_counters[i].value, memory_order_relaxed));
    }
}

/* Writes the request counters: one line per route and status class that
 * has counted something. */
static void put_requests(FILE *f)
{
    put_family(f, "hvbench_http_requests_total", "counter",
               "HTTP requests answered, by route (method and path template) and status class.");
    for (size_t i = 0; i < N_SLOTS; i++) {
        for (unsigned c = 0; slot_used(i) && c < N_CLASSES; c++) {
            unsigned long n = get(&slots[i].by_class[c]);
            if (n == 0)
                continue;
            fputs("hvbench_http_requests_total{", f);
            put_route(f, i);
            fprintf(f, ",status=\"%uxx\"} %lu\n", c + 1, n);
        }
    }
}

/* Writes the duration histogram of every route that has answered. The
 * buckets are read one by one and summed here, so the cumulative counts
 * never decrease and _count equals the +Inf bucket. */
static void put_durations(FILE *f)
{
    const char *name = "hvbench_http_request_duration_seconds";
    put_family(f, name, "histogram",
               "Time from a request's headers to its answer, by route; a long poll's wait is "
               "included.");
    for (size_t i = 0; i < N_SLOTS; i++) {
        if (!slot_used(i))
            continue;
        unsigned long counts[N_BUCKETS], total = 0;
        for (size_t b = 0; b < N_BUCKETS; b++) {
            counts[b] = get(&slots[i].buckets[b]);
            total += counts[b];
        }
        if (total == 0)
            continue;
        unsigned long cumulative = 0;
        for (size_t b = 0; b < N_BUCKETS; b++) {
            cumulative += counts[b];
            fprintf(f, "%s_bucket{", name);
            put_route(f, i);
            if (b < N_BOUNDS)
                fprintf(f, ",le=\"%g\"} %lu\n", bucket_le[b], cumulative);
            else
                fprintf(f, ",le=\"+Inf\"} %lu\n", cumulative);
        }
        unsigned long long us = atomic_load_explicit(&slots[i].sum_us, memory_order_relaxed);
        fprintf(f, "%s_sum{", name);
        put_route(f, i);
        fprintf(f, "} %llu.%06llu\n", us / 1000000, us % 1000000);
        fprintf(f, "%s_count{", name);
        put_route(f, i);
        fprintf(f, "} %lu\n", total);
    }
}

/* Writes the connection gauge and counters (conns.h). */
static void put_connections(FILE *f)
{
    unsigned trusted, untrusted;
    hv_conns_count(&trusted, &untrusted);
    put_family(f, "hvbench_connections_open", "gauge",
               "Connections open now, from --trusted addresses and from the others.");
    fprintf(f, "hvbench_connections_open{from=\"trusted\"} %u\n", trusted);
    fprintf(f, "hvbench_connections_open{from=\"untrusted\"} %u\n", untrusted);
    put_family(f, "hvbench_connections_refused_total", "counter",
               "Connections closed at once without an answer: their address held "
               "--max-per-address (reason address) or was sending --max-bodies-per-address "
               "request bodies (reason bodies), or untrusted addresses held "
               "--max-connections (reason room).");
    fprintf(f, "hvbench_connections_refused_total{reason=\"address\"} %lu\n",
            get(&refused_address));
    fprintf(f, "hvbench_connections_refused_total{reason=\"bodies\"} %lu\n", get(&refused_sending));
    fprintf(f, "hvbench_connections_refused_total{reason=\"room\"} %lu\n", get(&refused_room));
    put_family(f, "hvbench_request_bodies_refused_total", "counter",
               "Requests answered 503 at their head because their address was sending "
               "--max-bodies-per-address request bodies already.");
    fprintf(f, "hvbench_request_bodies_refused_total %lu\n", get(&refused_body));
    put_family(f, "hvbench_request_head_timeouts_total", "counter",
               "Connections shut down because a request head did not arrive within its deadline "
               "(--header-timeout).");
    fprintf(f, "hvbench_request_head_timeouts_total %lu\n", get(&head_timeouts));
    put_family(f, "hvbench_request_body_timeouts_total", "counter",
               "Connections shut down, after a 408, because a request body did not arrive "
               "within --body-timeout.");
    fprintf(f, "hvbench_request_body_timeouts_total %lu\n", get(&body_timeouts));
}

void hv_metrics_job_duration(bool ok, double seconds)
{
    if (!(seconds >= 0))
        return;
    size_t b = 0;
    while (b < N_JOB_BOUNDS && seconds > job_le[b])
        b++;
    add(&job_buckets[ok ? 0 : 1][b], 1);
    atomic_fetch_add_explicit(&job_sum_ms[ok ? 0 : 1], (unsigned long long)(seconds * 1000 + 0.5),
                              memory_order_relaxed);
}

/* Writes the job duration histogram, one series per outcome. */
static void put_job_durations(FILE *f)
{
    static const char *const outcome[] = {"ok", "error"};
    const char *name = "hvbench_job_duration_seconds";
    put_family(f, name, "histogram",
               "Run time of the jobs whose results this server stored (started_at to "
               "finished_at), by outcome.");
    for (size_t o = 0; o < 2; o++) {
        unsigned long cumulative = 0;
        for (size_t b = 0; b < N_JOB_BUCKETS; b++) {
            cumulative += get(&job_buckets[o][b]);
            if (b < N_JOB_BOUNDS)
                fprintf(f, "%s_bucket{outcome=\"%s\",le=\"%g\"} %lu\n", name, outcome[o], job_le[b],
                        cumulative);
            else
                fprintf(f, "%s_bucket{outcome=\"%s\",le=\"+Inf\"} %lu\n", name, outcome[o],
                        cumulative);
        }
        unsigned long long ms = atomic_load_explicit(&job_sum_ms[o], memory_order_relaxed);
        fprintf(f, "%s_sum{outcome=\"%s\"} %llu.%03llu\n", name, outcome[o], ms / 1000, ms % 1000);
        fprintf(f, "%s_count{outcome=\"%s\"} %lu\n", name, outcome[o], cumulative);
    }
}

void hv_metrics_webhook(enum hv_metrics_webhook outcome)
{
    if ((unsigned)outcome < 3)
        add(&webhook_outcomes[outcome], 1);
}

/* The webhook attempts, and what the database holds now (left out when it
 * did not answer). */
static void put_state(FILE *f, const struct hv_metrics_db *db)
{
    static const char *const outcome[] = {"delivered", "retry", "gave_up"};
    put_family(f, "hvbench_webhook_deliveries_total", "counter",
               "Webhook delivery attempts by outcome: answered 2xx (delivered), not (retry), not "
               "on the last attempt (gave_up).");
    for (size_t i = 0; i < 3; i++)
        fprintf(f, "hvbench_webhook_deliveries_total{outcome=\"%s\"} %lu\n", outcome[i],
                get(&webhook_outcomes[i]));
    if (db == NULL || db->jobs_queued < 0)
        return;
    put_family(f, "hvbench_jobs", "gauge",
               "Jobs of every plan by state now: queued (the queue's depth) and running.");
    fprintf(f, "hvbench_jobs{state=\"queued\"} %ld\n", db->jobs_queued);
    fprintf(f, "hvbench_jobs{state=\"running\"} %ld\n", db->jobs_running);
    put_family(f, "hvbench_workers_live", "gauge",
               "Worker processes that registered and were heard from within --worker-live.");
    fprintf(f, "hvbench_workers_live %ld\n", db->workers_live);
    put_family(f, "hvbench_webhook_deliveries_pending", "gauge",
               "Webhook deliveries queued and not yet delivered or given up.");
    fprintf(f, "hvbench_webhook_deliveries_pending %ld\n", db->webhooks_pending);
}

char *hv_metrics_render(const struct hv_metrics_db *db)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        return NULL;
    put_family(f, "hvbench_build_info", "gauge",
               "The version of this hvbench-server; the value is always 1.");
    fputs("hvbench_build_info{version=\"", f);
    put_escaped(f, HVBENCH_VERSION);
    fputs("\"} 1\n", f);
    put_requests(f);
    put_durations(f);
    put_family(f, "hvbench_job_claims_total", "counter",
               "Claims answered: with a job to run (outcome job) or with none (outcome empty, "
               "HTTP 204); jobs handed out with a result's answer (?claim=true, outcome "
               "with_result).");
    fprintf(f, "hvbench_job_claims_total{outcome=\"job\"} %lu\n", get(&claims_job));
    fprintf(f, "hvbench_job_claims_total{outcome=\"empty\"} %lu\n", get(&claims_empty));
    fprintf(f, "hvbench_job_claims_total{outcome=\"with_result\"} %lu\n", get(&claims_with_result));
    static const char *const kinds[HV_METRICS_BATCH_KINDS] = {"", "claim", "result"};
    put_family(f, "hvbench_batches_total", "counter",
               "Batches run (--batch): claims taken in one statement (kind claim), results "
               "stored in one transaction (kind result).");
    for (int k = 1; k < HV_METRICS_BATCH_KINDS; k++)
        fprintf(f, "hvbench_batches_total{kind=\"%s\"} %lu\n", kinds[k], get(&batches[k]));
    put_family(f, "hvbench_batched_requests_total", "counter",
               "Requests those batches took; over hvbench_batches_total, the mean batch.");
    for (int k = 1; k < HV_METRICS_BATCH_KINDS; k++)
        fprintf(f, "hvbench_batched_requests_total{kind=\"%s\"} %lu\n", kinds[k], get(&batched[k]));
    put_family(f, "hvbench_plan_cache_reads_total", "counter",
               "Plan reads (GET /api/v1/plans/{id}) while answers are kept: answered from the "
               "cache (outcome hit) or from the database (outcome miss).");
    fprintf(f, "hvbench_plan_cache_reads_total{outcome=\"hit\"} %lu\n", get(&plan_cache_hits));
    fprintf(f, "hvbench_plan_cache_reads_total{outcome=\"miss\"} %lu\n", get(&plan_cache_misses));
    put_family(f, "hvbench_long_polls_waiting", "gauge",
               "Requests parked in a long poll now (claims waiting for a job, jobs waiting for "
               "their group).");
    fprintf(f, "hvbench_long_polls_waiting %u\n", hv_waiters_count());
    put_family(f, "hvbench_results_stored_total", "counter",
               "Results stored (a replayed upload stores nothing and is not counted).");
    fprintf(f, "hvbench_results_stored_total %lu\n", get(&results_stored));
    put_family(f, "hvbench_samples_ingested_total", "counter",
               "Per-second samples stored with those results.");
    fprintf(f, "hvbench_samples_ingested_total %lu\n", get(&samples_ingested));
    put_job_durations(f);
    put_db_counters(f);
    put_connections(f);
    put_state(f, db);
    if (ferror(f)) {
        fclose(f);
        free(text);
        return NULL;
    }
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}
