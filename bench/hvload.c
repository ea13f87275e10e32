/* hvload.c — a load generator for hvbench-server: N simulated workers, one
 * thread each, drive the worker protocol (register, claim, optional
 * heartbeat, result) against one or more servers until the queue is empty.
 *
 *   hvload --server URL [--server URL ...] --token T --workers N --target NAME
 *          [--samples K] [--metrics M] [--wait S] [--heartbeat]
 *          [--duration-limit S] [--quiet] [--json]
 *
 * It records every (job id, attempt) it was given and every answer, and
 * prints what a benchmark or a correctness test needs: jobs claimed,
 * duplicate claims, uploads by status, errors, elapsed time, claims/s,
 * samples ingested/s and claim/upload latency percentiles.
 *
 * Exit status: 0 when every claim was distinct and every answer was the
 * expected one; 1 on a duplicate claim, an unexpected status or a request
 * without an answer; 2 on bad usage; 3 when the duration limit stopped the
 * run before the queue was empty.
 *
 * Bounded by design: every request has a timeout, --duration-limit stops
 * the run (the process exits even if a request hangs past it), and only
 * loopback servers are accepted — this tool exists to load a server on the
 * same machine, never someone else's. */
#include "bench/hvload.h"
#include "httpc.h"
#include "timeutil.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_REPORTED 8

/* A growable array of doubles (latencies in milliseconds). */
struct dvec {
    double *v;
    size_t n, cap;
};

/* One claim as the server answered it. */
struct claim_rec {
    int64_t job;
    int attempt;
    int worker;
};

struct crec_vec {
    struct claim_rec *v;
    size_t n, cap;
};

/* A text buffer the upload body is built in. */
struct sbuf {
    char *p;
    size_t len, cap;
    bool failed;
};

/* Answer counts; one per simulated worker, summed at the end. */
struct counts {
    long registered, register_other;
    long claims_200, claims_204, claims_other;
    long uploads_201, uploads_200, uploads_409, uploads_other;
    long heartbeats_200, heartbeats_other;
    long errors;      /* requests that got no answer */
    long bad_answers; /* a 200 claim whose body was not a job */
    long samples_stored;
};

/* One simulated worker. Only its own thread writes it until it is joined. */
struct sim {
    int index;
    char name[160];      /* its target: opt.target, or NAME-NNN with --hosts */
    char credential[96]; /* its worker credential with --hosts */
    size_t server_idx;
    pthread_t thread;
    struct hv_httpc *http;
    long long target_id;
    struct counts c;
    struct crec_vec claims;
    struct dvec claim_ms, upload_ms;
    struct sbuf body;
    uint64_t rng;
    double last_work; /* monotonic time its last upload finished */
    atomic_bool done;
};

static struct options opt;
static struct sim *sims;
/* The start gate: workers register, arrive, and wait for main to open it,
 * so every claim starts at the same moment. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static long gate_arrived;
static bool gate_open;
static double deadline;
static atomic_bool stop_flag;
/* Set once --duration-limit has passed, by whichever thread sees it. */
static atomic_bool limit_passed;
static volatile sig_atomic_t got_signal;
static atomic_long progress_claimed, progress_uploaded, reported;

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A progress or diagnostic line on standard error, unless --quiet. */
static void note(const char *fmt, ...)
{
    if (opt.quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "hvload: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---- small containers ---------------------------------------------------- */

static void dvec_push(struct dvec *d, double x)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 256;
        double *p = realloc(d->v, cap * sizeof *p);
        if (p == NULL)
            return; /* a lost latency sample only thins the percentiles */
        d->v = p;
        d->cap = cap;
    }
    d->v[d->n++] = x;
}

/* Returns false when out of memory: the caller counts that as a failure,
 * since a claim it cannot record would hide a duplicate. */
static bool crec_push(struct crec_vec *c, struct claim_rec r)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 256;
        struct claim_rec *p = realloc(c->v, cap * sizeof *p);
        if (p == NULL)
            return false;
        c->v = p;
        c->cap = cap;
    }
    c->v[c->n++] = r;
    return true;
}

static void sbuf_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
    for (;;) {
        size_t room = b->cap - b->len;
        va_list ap;
        va_start(ap, fmt);
        int n = b->p ? vsnprintf(b->p + b->len, room, fmt, ap) : -1;
        va_end(ap);
        if (n >= 0 && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (n >= 0 && cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (p == NULL) {
            b->failed = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
}

/* ---- the simulated worker ---------------------------------------------- */

/* xorshift64*: varied sample values without a lock or libc's rand state. */
static double next_uniform(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return (double)((x * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

static bool stopping(void)
{
    return atomic_load(&stop_flag) || got_signal;
}

/* Prints the first few unexpected answers in full, whichever thread sees
 * them; the counts carry the rest. */
static void report_unexpected(const struct sim *w, const char *what,
                              const struct hv_http_response *r)
{
    if (atomic_fetch_add(&reported, 1) >= MAX_REPORTED)
        return;
    char desc[512];
    hv_http_response_describe(r, desc, sizeof desc);
    fprintf(stderr, "hvload: worker %d (%s): %s: %s\n", w->index, opt.servers[w->server_idx], what,
            desc);
}

/* The worker credential every simulated worker uses (hvw_...), unless
 * each is a host of its own (--hosts). */
static char credential[96];

/* The registration body of target name: a simulated host, with the
 * --label given. */
static json_t *register_body(const char *name)
{
    json_t *body = json_pack("{s:s,s:s,s:{s:b,s:s},s:s}", "name", name, "kind", "host", "facts",
                             "simulated", 1, "tool", "hvload", "fingerprint", "hvload");
    const char *eq = opt.label != NULL ? strchr(opt.label, '=') : NULL;
    if (body != NULL && eq != NULL) {
        char key[128];
        snprintf(key, sizeof key, "%.*s", (int)(eq - opt.label), opt.label);
        json_object_set_new(body, "labels", json_pack("{s:s}", key, eq + 1));
    }
    return body;
}

/* Registers target name with the worker token and keeps the credential
 * the server issues in out. Returns 0, or -1 with the reason printed. */
static int acquire_credential(const char *name, char *out, size_t len)
{
    struct hv_httpc *h = hv_httpc_new(opt.servers[0], opt.token, (long)ceil(opt.timeout));
    if (h == NULL) {
        fprintf(stderr, "hvload: cannot create an HTTP client\n");
        return -1;
    }
    json_t *body = register_body(name);
    struct hv_http_response r;
    hv_httpc_request(h, "POST", "/api/v1/workers/register", body, &r);
    json_decref(body);
    const char *tok = json_string_value(json_object_get(r.body, "worker_token"));
    int rc = 0;
    if (r.status != 200 || tok == NULL || strlen(tok) >= len) {
        char desc[512];
        hv_http_response_describe(&r, desc, sizeof desc);
        fprintf(stderr, "hvload: registering %s: %s\n", name, desc);
        rc = -1;
    } else {
        snprintf(out, len, "%s", tok);
    }
    hv_http_response_clear(&r);
    hv_httpc_free(h);
    return rc;
}

static bool do_register(struct sim *w)
{
    json_t *body = register_body(w->name);
    struct hv_http_response r;
    hv_httpc_request(w->http, "POST", "/api/v1/workers/register", body, &r);
    json_decref(body);
    json_t *id = json_object_get(r.body, "target_id");
    bool ok = r.status == 200 && json_is_integer(id);
    if (ok) {
        w->target_id = json_integer_value(id);
        w->c.registered++;
    } else {
        if (r.status == 0)
            w->c.errors++;
        else
            w->c.register_other++;
        report_unexpected(w, "register", &r);
    }
    hv_http_response_clear(&r);
    return ok;
}

/* Builds the result of one attempt: M metrics and K samples spread over
 * them, one per metric per second, values varied around a level per
 * metric. */
static void build_result(struct sim *w, int attempt, const char *started, const char *finished)
{
    struct sbuf *b = &w->body;
    b->len = 0;
    b->failed = false;
    sbuf_printf(b,
                "{\"attempt\":%d,\"status\":\"ok\",\"started_at\":\"%s\",\"finished_at\":\"%s\","
                "\"observed\":{\"tool\":\"hvload\"},\"metrics\":[",
                attempt, started, finished);
    for (long m = 0; m < opt.metrics; m++)
        sbuf_printf(b,
                    "%s{\"name\":\"load.m%ld\",\"value\":%.3f,\"unit\":\"score\","
                    "\"higher_is_better\":true}",
                    m ? "," : "", m, 1000.0 * (double)(m + 1) + 100.0 * next_uniform(&w->rng));
    sbuf_printf(b, "],\"samples\":[");
    for (long i = 0; i < opt.samples; i++) {
        long m = i % opt.metrics;
        double t = (double)(i / opt.metrics + 1);
        double v =
            1000.0 * (double)(m + 1) * (1.0 + 0.05 * sin(t / 7.0)) + 50.0 * next_uniform(&w->rng);
        sbuf_printf(b, "%s{\"metric\":\"load.m%ld\",\"t\":%.0f,\"value\":%.3f}", i ? "," : "", m, t,
                    v);
    }
    sbuf_printf(b, "]}");
}

/* Claims once. Returns the HTTP status (0: no answer); on 200 fills *job
 * and *attempt, or returns -1 when the body is not a job. */
static long claim(struct sim *w, int64_t *job, int *attempt)
{
    json_t *body = opt.wait > 0 ? json_pack("{s:I,s:f}", "target_id", (json_int_t)w->target_id,
                                            "wait", opt.wait)
                                : json_pack("{s:I}", "target_id", (json_int_t)w->target_id);
    struct hv_http_response r;
    double t0 = hv_monotonic();
    hv_httpc_request(w->http, "POST", "/api/v1/jobs/claim", body, &r);
    double ms = (hv_monotonic() - t0) * 1000.0;
    json_decref(body);
    long status = r.status;
    if (status == 200) {
        json_t *j = json_object_get(r.body, "job");
        json_t *id = json_object_get(j, "id"), *att = json_object_get(j, "attempt");
        if (json_is_integer(id) && json_is_integer(att)) {
            *job = json_integer_value(id);
            *attempt = (int)json_integer_value(att);
            w->c.claims_200++;
            dvec_push(&w->claim_ms, ms);
        } else {
            w->c.bad_answers++;
            report_unexpected(w, "claim answered 200 without a job", &r);
            status = -1;
        }
    } else if (status == 204) {
        w->c.claims_204++;
    } else if (status == 0) {
        w->c.errors++;
        report_unexpected(w, "claim", &r);
    } else {
        w->c.claims_other++;
        report_unexpected(w, "claim", &r);
    }
    hv_http_response_clear(&r);
    return status;
}

/* One heartbeat for the attempt; returns whether it was answered 200. */
static bool heartbeat(struct sim *w, int64_t job, int attempt)
{
    char path[96];
    snprintf(path, sizeof path, "/api/v1/jobs/%" PRId64 "/heartbeat", job);
    json_t *body = json_pack("{s:i}", "attempt", attempt);
    struct hv_http_response r;
    hv_httpc_request(w->http, "POST", path, body, &r);
    json_decref(body);
    bool ok = r.status == 200;
    if (ok) {
        w->c.heartbeats_200++;
    } else {
        if (r.status == 0)
            w->c.errors++;
        else
            w->c.heartbeats_other++;
        report_unexpected(w, "heartbeat", &r);
    }
    hv_http_response_clear(&r);
    return ok;
}

/* Uploads the result of the attempt; returns whether it was stored. */
static bool upload(struct sim *w, int64_t job, int attempt, const char *started)
{
    char finished[40], path[96];
    hv_now_iso8601(finished, sizeof finished);
    build_result(w, attempt, started, finished);
    if (w->body.failed) {
        w->c.errors++;
        fprintf(stderr, "hvload: worker %d: out of memory building a result\n", w->index);
        return false;
    }
    snprintf(path, sizeof path, "/api/v1/jobs/%" PRId64 "/result", job);
    struct hv_http_response r;
    double t0 = hv_monotonic();
    hv_httpc_request_raw(w->http, "POST", path, "application/json", w->body.p, w->body.len, &r);
    double t1 = hv_monotonic();
    bool ok = false;
    switch (r.status) {
    case 201:
        w->c.uploads_201++;
        w->c.samples_stored += opt.samples;
        dvec_push(&w->upload_ms, (t1 - t0) * 1000.0);
        w->last_work = t1;
        atomic_fetch_add(&progress_uploaded, 1);
        ok = true;
        break;
    case 200:
        w->c.uploads_200++;
        report_unexpected(w, "upload replayed (this attempt was uploaded before)", &r);
        break;
    case 409:
        w->c.uploads_409++;
        report_unexpected(w, "upload", &r);
        break;
    case 0:
        w->c.errors++;
        report_unexpected(w, "upload", &r);
        break;
    default:
        w->c.uploads_other++;
        report_unexpected(w, "upload", &r);
    }
    hv_http_response_clear(&r);
    return ok;
}

static void *sim_main(void *arg)
{
    struct sim *w = arg;
    double timeout = opt.timeout + opt.wait;
    const char *cred = credential;
    if (opt.hosts) {
        snprintf(w->name, sizeof w->name, "%s-%03d", opt.target, w->index);
        cred = acquire_credential(w->name, w->credential, sizeof w->credential) == 0 ? w->credential
                                                                                     : NULL;
    } else {
        snprintf(w->name, sizeof w->name, "%s", opt.target);
    }
    w->http =
        cred != NULL ? hv_httpc_new(opt.servers[w->server_idx], cred, (long)ceil(timeout)) : NULL;
    bool ready = w->http != NULL && do_register(w);
    if (w->http == NULL) {
        w->c.errors++;
        fprintf(stderr, "hvload: worker %d: cannot create an HTTP client\n", w->index);
    }
    pthread_mutex_lock(&gate_lock);
    gate_arrived++;
    pthread_cond_broadcast(&gate_cond);
    while (!gate_open)
        pthread_cond_wait(&gate_cond, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
    long empty = 0, failures = 0;
    while (ready && !stopping() && failures < MAX_FAILURES_IN_ROW) {
        if (hv_monotonic() >= deadline) {
            atomic_store(&limit_passed, true);
            break;
        }
        int64_t job = 0;
        int attempt = 0;
        char started[40];
        hv_now_iso8601(started, sizeof started);
        long st = claim(w, &job, &attempt);
        if (st == 204) {
            failures = 0;
            if (++empty >= opt.empty_claims)
                break;
            if (opt.wait <= 0)
                usleep(50 * 1000); /* let running claims finish before asking again */
            continue;
        }
        if (st != 200) {
            failures++;
            usleep(100 * 1000);
            continue;
        }
        empty = 0;
        atomic_fetch_add(&progress_claimed, 1);
        if (!crec_push(&w->claims, (struct claim_rec){job, attempt, w->index})) {
            w->c.errors++;
            fprintf(stderr, "hvload: worker %d: out of memory recording a claim\n", w->index);
            break;
        }
        bool ok = !opt.heartbeat || heartbeat(w, job, attempt);
        ok = ok && upload(w, job, attempt, started);
        failures = ok ? 0 : failures + 1;
    }
    atomic_store(&w->done, true);
    return NULL;
}

/* ---- summary ----------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_claim(const void *a, const void *b)
{
    const struct claim_rec *x = a, *y = b;
    if (x->job != y->job)
        return (x->job > y->job) - (x->job < y->job);
    return (x->attempt > y->attempt) - (x->attempt < y->attempt);
}

/* Nearest-rank percentile of sorted v; NAN when empty. */
static double percentile(const struct dvec *d, double p)
{
    if (d->n == 0)
        return NAN;
    size_t rank = (size_t)ceil(p / 100.0 * (double)d->n);
    return d->v[rank > 0 ? rank - 1 : 0];
}

/* Everything the summary prints, gathered from the joined workers. */
struct summary {
    struct counts c;
    long jobs_claimed, distinct_jobs, duplicate_jobs, duplicate_attempts;
    double elapsed, work_elapsed;
    struct dvec claim_ms, upload_ms;
    long per_server_claims[MAX_SERVERS];
    long unexpected;
    double cpu_s; /* this process: user + system, every thread */
};

static void add_counts(struct counts *t, const struct counts *c)
{
    t->registered += c->registered;
    t->register_other += c->register_other;
    t->claims_200 += c->claims_200;
    t->claims_204 += c->claims_204;
    t->claims_other += c->claims_other;
    t->uploads_201 += c->uploads_201;
    t->uploads_200 += c->uploads_200;
    t->uploads_409 += c->uploads_409;
    t->uploads_other += c->uploads_other;
    t->heartbeats_200 += c->heartbeats_200;
    t->heartbeats_other += c->heartbeats_other;
    t->errors += c->errors;
    t->bad_answers += c->bad_answers;
    t->samples_stored += c->samples_stored;
}

static void dvec_append(struct dvec *to, const struct dvec *from)
{
    for (size_t i = 0; i < from->n; i++)
        dvec_push(to, from->v[i]);
}

static void summarise(struct summary *s, double t_start, double t_end)
{
    memset(s, 0, sizeof *s);
    struct crec_vec all = {0};
    double last_work = t_start;
    for (long i = 0; i < opt.workers; i++) {
        struct sim *w = &sims[i];
        add_counts(&s->c, &w->c);
        for (size_t k = 0; k < w->claims.n; k++)
            if (!crec_push(&all, w->claims.v[k]))
                s->c.errors++;
        dvec_append(&s->claim_ms, &w->claim_ms);
        dvec_append(&s->upload_ms, &w->upload_ms);
        s->per_server_claims[w->server_idx] += w->c.claims_200;
        if (w->last_work > last_work)
            last_work = w->last_work;
    }
    qsort(all.v, all.n, sizeof *all.v, cmp_claim);
    for (size_t k = 0; k < all.n; k++) {
        bool same_job = k > 0 && all.v[k].job == all.v[k - 1].job;
        s->distinct_jobs += !same_job;
        s->duplicate_jobs += same_job;
        s->duplicate_attempts += same_job && all.v[k].attempt == all.v[k - 1].attempt;
        if (same_job && s->duplicate_jobs <= MAX_REPORTED)
            fprintf(stderr,
                    "hvload: job %" PRId64 " claimed twice: attempt %d by worker %d, "
                    "attempt %d by worker %d\n",
                    all.v[k].job, all.v[k - 1].attempt, all.v[k - 1].worker, all.v[k].attempt,
                    all.v[k].worker);
    }
    s->jobs_claimed = (long)all.n;
    free(all.v);
    qsort(s->claim_ms.v, s->claim_ms.n, sizeof(double), cmp_double);
    qsort(s->upload_ms.v, s->upload_ms.n, sizeof(double), cmp_double);
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        s->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                   (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    s->elapsed = t_end - t_start;
    s->work_elapsed = last_work - t_start;
    /* Each attempt is uploaded once, and nothing expires in these runs:
     * any answer but the first-time ones is a finding. */
    s->unexpected = s->c.register_other + s->c.claims_other + s->c.bad_answers + s->c.uploads_200 +
                    s->c.uploads_409 + s->c.uploads_other + s->c.heartbeats_other;
}

/* Rate per second over the time the work took; 0 for an empty run. */
static double rate(double n, double seconds)
{
    return seconds > 0 ? n / seconds : 0;
}

static json_t *json_ms(double v)
{
    return isnan(v) ? json_null() : json_real(round(v * 1000.0) / 1000.0);
}

static void print_json(const struct summary *s, int status)
{
    json_t *servers = json_array();
    for (size_t i = 0; i < opt.n_servers; i++)
        json_array_append_new(servers, json_pack("{s:s,s:I}", "url", opt.servers[i], "claims",
                                                 (json_int_t)s->per_server_claims[i]));
    json_t *doc = json_pack(
        "{s:I,s:o,s:s,s:I,s:I,s:f,s:b,"
        "s:I,s:I,s:I,s:I,s:I,"
        "s:{s:I,s:I,s:I},"
        "s:{s:I,s:I,s:I,s:I},"
        "s:{s:I,s:I},"
        "s:I,s:I,s:I,s:f,s:f,s:f,s:f,s:f,"
        "s:{s:o,s:o,s:o},s:{s:o,s:o,s:o},s:f,s:b,s:i}",
        "workers", (json_int_t)opt.workers, "servers", servers, "target", opt.target, "samples",
        (json_int_t)opt.samples, "metrics", (json_int_t)opt.metrics, "wait", opt.wait, "heartbeat",
        opt.heartbeat, "registered", (json_int_t)s->c.registered, "jobs_claimed",
        (json_int_t)s->jobs_claimed, "distinct_jobs", (json_int_t)s->distinct_jobs, "duplicates",
        (json_int_t)s->duplicate_jobs, "duplicate_attempts", (json_int_t)s->duplicate_attempts,
        "claims", "200", (json_int_t)s->c.claims_200, "204", (json_int_t)s->c.claims_204, "other",
        (json_int_t)s->c.claims_other, "uploads", "201", (json_int_t)s->c.uploads_201, "200",
        (json_int_t)s->c.uploads_200, "409", (json_int_t)s->c.uploads_409, "other",
        (json_int_t)s->c.uploads_other, "heartbeats", "200", (json_int_t)s->c.heartbeats_200,
        "other", (json_int_t)s->c.heartbeats_other, "unexpected", (json_int_t)s->unexpected,
        "errors", (json_int_t)s->c.errors, "samples_stored", (json_int_t)s->c.samples_stored,
        "elapsed_s", s->elapsed, "work_elapsed_s", s->work_elapsed, "claims_per_s",
        rate((double)s->jobs_claimed, s->work_elapsed), "uploads_per_s",
        rate((double)s->c.uploads_201, s->work_elapsed), "samples_per_s",
        rate((double)s->c.samples_stored, s->work_elapsed), "claim_ms", "p50",
        json_ms(percentile(&s->claim_ms, 50)), "p99", json_ms(percentile(&s->claim_ms, 99)), "max",
        json_ms(percentile(&s->claim_ms, 100)), "upload_ms", "p50",
        json_ms(percentile(&s->upload_ms, 50)), "p99", json_ms(percentile(&s->upload_ms, 99)),
        "max", json_ms(percentile(&s->upload_ms, 100)), "cpu_s", s->cpu_s, "limit_reached",
        atomic_load(&limit_passed), "exit", status);
    if (doc == NULL) {
        fprintf(stderr, "hvload: cannot build the JSON summary\n");
        return;
    }
    json_dumpf(doc, stdout, JSON_COMPACT | JSON_REAL_PRECISION(9));
    fputc('\n', stdout);
    json_decref(doc);
}

/* One line of latency percentiles; "none" when nothing was measured. */
static void print_latency(const char *what, const struct dvec *d)
{
    if (d->n == 0)
        printf("  %-19s none\n", what);
    else
        printf("  %-19s p50 %.2f  p99 %.2f  max %.2f\n", what, percentile(d, 50), percentile(d, 99),
               percentile(d, 100));
}

static void print_text(const struct summary *s, int status)
{
    printf("hvload: %ld workers on %zu server%s, target %s, %ld samples x %ld metrics, wait %g s\n",
           opt.workers, opt.n_servers, opt.n_servers == 1 ? "" : "s", opt.target, opt.samples,
           opt.metrics, opt.wait);
    printf("  jobs claimed        %ld (claims answered 200: %ld, 204: %ld, other: %ld)\n",
           s->jobs_claimed, s->c.claims_200, s->c.claims_204, s->c.claims_other);
    printf("  duplicates          %ld job ids claimed again, %ld same (job, attempt)\n",
           s->duplicate_jobs, s->duplicate_attempts);
    printf("  uploads             201: %ld  200: %ld  409: %ld  other: %ld\n", s->c.uploads_201,
           s->c.uploads_200, s->c.uploads_409, s->c.uploads_other);
    if (opt.heartbeat)
        printf("  heartbeats          200: %ld  other: %ld\n", s->c.heartbeats_200,
               s->c.heartbeats_other);
    printf("  unexpected          %ld\n", s->unexpected);
    printf("  errors              %ld (no answer)\n", s->c.errors);
    printf("  elapsed             %.3f s (work %.3f s)\n", s->elapsed, s->work_elapsed);
    printf("  hvload CPU          %.2f s\n", s->cpu_s);
    printf("  claims/s            %.1f\n", rate((double)s->jobs_claimed, s->work_elapsed));
    printf("  samples ingested/s  %.0f\n", rate((double)s->c.samples_stored, s->work_elapsed));
    print_latency("claim latency ms", &s->claim_ms);
    print_latency("upload latency ms", &s->upload_ms);
    for (size_t i = 0; opt.n_servers > 1 && i < opt.n_servers; i++)
        printf("  server %-28s %ld claims\n", opt.servers[i], s->per_server_claims[i]);
    if (atomic_load(&limit_passed))
        printf("  stopped by --duration-limit %g s\n", opt.limit);
    if (got_signal)
        printf("  stopped by a signal\n");
    printf("  exit                %d\n", status);
}

/* ---- main -------------------------------------------------------------- */

static void on_signal(int sig)
{
    (void)sig;
    got_signal = 1;
}

/* Waits until every worker is done or the hard stop passes; returns
 * whether they all finished. */
static bool wait_workers(double hard_stop)
{
    double next_note = hv_monotonic() + 5;
    for (;;) {
        long done = 0;
        for (long i = 0; i < opt.workers; i++)
            done += atomic_load(&sims[i].done);
        if (done == opt.workers)
            return true;
        double now = hv_monotonic();
        if (now >= deadline) {
            atomic_store(&limit_passed, true);
            atomic_store(&stop_flag, true);
        }
        if (now >= hard_stop)
            return false;
        if (now >= next_note) {
            note("%ld claimed, %ld uploaded, %ld of %ld workers done",
                 atomic_load(&progress_claimed), atomic_load(&progress_uploaded), done,
                 opt.workers);
            next_note = now + 5;
        }
        usleep(20 * 1000);
    }
}

/* Starts one thread per simulated worker; returns how many started. When
 * not all of them could, none is let run (a smaller load than asked for
 * would mislead): the stop flag is set and the missing ones count an
 * error. */
static long start_workers(void)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (size_t)1 << 20);
    long started = 0;
    for (long i = 0; i < opt.workers; i++) {
        struct sim *w = &sims[i];
        w->index = (int)i;
        w->server_idx = (size_t)i % opt.n_servers;
        w->rng = 0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1);
        atomic_init(&w->done, false);
        if (pthread_create(&w->thread, &attr, sim_main, w) != 0) {
            fprintf(stderr, "hvload: cannot start worker thread %ld\n", i);
            break;
        }
        started++;
    }
    pthread_attr_destroy(&attr);
    if (started < opt.workers) {
        /* Run nothing rather than a smaller load than asked for. */
        atomic_store(&stop_flag, true);
        for (long i = started; i < opt.workers; i++) {
            sims[i].c.errors++;
            atomic_store(&sims[i].done, true);
        }
    }
    return started;
}

int main(int argc, char **argv)
{
    int rc = hvload_parse_options(argc, argv, &opt);
    if (rc >= 0)
        return rc;
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (!opt.hosts && acquire_credential(opt.target, credential, sizeof credential) != 0)
        return EXIT_BAD;
    sims = calloc((size_t)opt.workers, sizeof *sims);
    if (sims == NULL) {
        fprintf(stderr, "hvload: out of memory\n");
        return EXIT_BAD;
    }
    double t_begin = hv_monotonic();
    deadline = t_begin + opt.limit;
    long started = start_workers();
    /* Registration is bounded by the request timeout; open the gate when
     * every started worker has arrived. */
    pthread_mutex_lock(&gate_lock);
    while (gate_arrived < started)
        pthread_cond_wait(&gate_cond, &gate_lock);
    gate_open = true;
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate_lock);
    double t_start = hv_monotonic();
    long registered = 0;
    for (long i = 0; i < started; i++)
        registered += sims[i].c.registered; /* written before the gate opened */
    note("%ld of %ld workers registered in %.2f s; claiming", registered, opt.workers,
         t_start - t_begin);

    /* Past the limit a request may still be in flight; its own timeout
     * bounds it, and a little grace covers the rest. */
    double hard_stop = deadline + opt.timeout + opt.wait + 5;
    if (!wait_workers(hard_stop)) {
        fprintf(stderr, "hvload: workers still blocked %.0f s after --duration-limit; exiting\n",
                hard_stop - deadline);
        fflush(NULL);
        _exit(EXIT_LIMIT);
    }
    double t_end = hv_monotonic();
    for (long i = 0; i < started; i++)
        pthread_join(sims[i].thread, NULL);

    struct summary s;
    summarise(&s, t_start, t_end);
    int status = 0;
    if (s.duplicate_jobs > 0 || s.unexpected > 0 || s.c.errors > 0 || s.c.registered < opt.workers)
        status = EXIT_BAD;
    else if (atomic_load(&limit_passed) || got_signal)
        status = EXIT_LIMIT;
    if (opt.json)
        print_json(&s, status);
    else
        print_text(&s, status);

    /* Sign off, so the next run may register the same targets at once:
     * the shared credential once, or each host's. */
    for (long i = 0; i < (opt.hosts ? started : started > 0 ? 1 : 0); i++) {
        if (sims[i].http == NULL)
            continue;
        struct hv_http_response r;
        json_t *none = json_object();
        hv_httpc_request(sims[i].http, "POST", "/api/v1/workers/deregister", none, &r);
        json_decref(none);
        hv_http_response_clear(&r);
    }
    for (long i = 0; i < opt.workers; i++) {
        hv_httpc_free(sims[i].http);
        free(sims[i].claims.v);
        free(sims[i].claim_ms.v);
        free(sims[i].upload_ms.v);
        free(sims[i].body.p);
    }
    free(s.claim_ms.v);
    free(s.upload_ms.v);
    free(sims);
    return status;
}
