/* hvload.c — a load generator for hvbench-server: N simulated workers drive
 * the worker protocol (register, claim, optional heartbeat, a result that
 * also claims the next job) against one or more servers until the queue
 * is empty. They are spread over a few
 * threads (--threads, 2 by default), each running its workers' requests at
 * once in one curl multi handle, as pgbench -j runs its clients: a thread
 * per worker would cost the machine it shares with the server a context
 * switch or two per request.
 *
 *   hvload --server URL [--server URL ...] --token T --workers N --target NAME
 *          [--threads T]
 *          [--samples K] [--metrics M] [--wait S] [--heartbeat] [--claim-alone]
 *          [--duration-limit S] [--quiet] [--json]
 *
 * It records every (job id, attempt) it was given and every answer, and
 * prints what a benchmark or a correctness test needs: jobs claimed,
 * duplicate claims, uploads by status, errors, elapsed time, claims/s,
 * samples ingested/s and claim/upload latency percentiles. With --outage
 * its workers ride out a database outage as hvbench-worker does (a request
 * answered 503 or not at all is asked again), and it reports the longest
 * time no claim and no upload succeeded (bench/failover.sh).
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

#include <curl/curl.h>
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
    long claims_with_uploads; /* jobs an upload's answer brought (?claim=true) */
    long uploads_201, uploads_200, uploads_409, uploads_other;
    long heartbeats_200, heartbeats_other;
    long retries;          /* requests asked again in an outage (--outage) */
    long uploads_replayed; /* uploads asked again and answered as replays */
    long errors;           /* requests that got no answer */
    long bad_answers;      /* a 200 claim whose body was not a job */
    long samples_stored;
};

/* One simulated worker. Only its loop's thread writes it until that
 * thread is joined. */
struct sim {
    int index;
    char name[160];      /* its target: opt.target, or NAME-NNN with --hosts */
    char credential[96]; /* its worker credential with --hosts */
    size_t server_idx;
    char url[256];         /* its server's base URL */
    struct hv_httpc *http; /* registering and signing off */
    CURL *easy;            /* its claims, heartbeats and uploads */
    struct curl_slist *headers;
    char curl_err[CURL_ERROR_SIZE];
    long long target_id;
    int step;         /* enum step: what it asks next */
    bool in_flight;   /* a request of it runs */
    double wake_at;   /* monotonic time it may ask again */
    double t0;        /* when the request in flight started */
    char started[40]; /* when its job was claimed (ISO 8601) */
    int64_t job;
    int attempt;
    long empty, failures; /* empty claims and failed requests in a row */
    double outage_since;  /* when its requests began to fail (--outage); 0: they do not */
    bool asked_again;     /* the request it asks was asked before, unanswered */
    char small[96];       /* a claim's or heartbeat's body */
    struct sbuf answer;   /* the answer's body */
    struct counts c;
    struct crec_vec claims;
    struct dvec claim_ms, upload_ms;
    struct dvec claim_at, upload_at; /* monotonic times of its claims and uploads */
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

/* ---- the event loops --------------------------------------------------- */

/* What a simulated worker asks next, or that it is done. */
enum step { STEP_CLAIM, STEP_HEARTBEAT, STEP_UPLOAD, STEP_DONE };

/* One thread: its workers (every threads-th from first) and the curl
 * multi handle their requests run in, all at once. */
struct loop {
    long first;
    long count; /* its workers: first, first + threads, ... */
    pthread_t thread;
    CURLM *multi;
};

/* curl's write callback: appends to the answer (answers hold no NUL). */
static size_t collect_answer(char *ptr, size_t size, size_t n, void *userdata)
{
    struct sbuf *b = userdata;
    size_t len = size * n;
    sbuf_printf(b, "%.*s", (int)len, ptr);
    return b->failed ? 0 : len; /* 0: curl fails the request, counted as no answer */
}

/* The request handle of w: the options every request of w shares, set once
 * (curl keeps the connection alive between them). Returns false when curl
 * or memory fails. */
static bool sim_easy(struct sim *w, const char *cred)
{
    char auth[128];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", cred);
    const char *lines[] = {"Content-Type: application/json",
                           "Accept: application/json, application/problem+json", "Expect:", auth};
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        struct curl_slist *h = curl_slist_append(w->headers, lines[i]);
        if (h == NULL)
            return false;
        w->headers = h;
    }
    explicit_bzero(auth, sizeof auth);
    w->easy = curl_easy_init();
    if (w->easy == NULL)
        return false;
    CURL *e = w->easy;
    long timeout_ms = (long)ceil((opt.timeout + opt.wait) * 1000.0);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, w->headers);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms < 10000 ? timeout_ms : 10000L);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "hvload/1");
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, w->curl_err);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect_answer);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &w->answer);
    curl_easy_setopt(e, CURLOPT_PRIVATE, w);
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    return true;
}

/* Starts w's next request (a claim, a heartbeat or an upload), or ends w
 * when the run stops or the duration limit passed. */
static void start_request(struct loop *l, struct sim *w)
{
    if (stopping()) {
        w->step = STEP_DONE;
        return;
    }
    char path[96];
    const char *data = w->small;
    size_t len;
    switch (w->step) {
    case STEP_CLAIM:
        if (hv_monotonic() >= deadline) {
            atomic_store(&limit_passed, true);
            w->step = STEP_DONE;
            return;
        }
        hv_now_iso8601(w->started, sizeof w->started);
        snprintf(path, sizeof path, "/api/v1/jobs/claim");
        len =
            opt.wait > 0
                ? (size_t)snprintf(w->small, sizeof w->small, "{\"target_id\":%lld,\"wait\":%g}",
                                   w->target_id, opt.wait)
                : (size_t)snprintf(w->small, sizeof w->small, "{\"target_id\":%lld}", w->target_id);
        break;
    case STEP_HEARTBEAT:
        snprintf(path, sizeof path, "/api/v1/jobs/%" PRId64 "/heartbeat", w->job);
        len = (size_t)snprintf(w->small, sizeof w->small, "{\"attempt\":%d}", w->attempt);
        break;
    case STEP_UPLOAD: {
        char finished[40];
        hv_now_iso8601(finished, sizeof finished);
        /* Asked again, it is the same upload, as a worker's outbox keeps it. */
        if (!w->asked_again || w->body.len == 0)
            build_result(w, w->attempt, w->started, finished);
        if (w->body.failed) {
            w->c.errors++;
            fprintf(stderr, "hvload: worker %d: out of memory building a result\n", w->index);
            w->step = STEP_DONE;
            return;
        }
        /* The worker's next job comes with the answer, unless the run is
         * over: a job claimed then would stay claimed. */
        snprintf(path, sizeof path, "/api/v1/jobs/%" PRId64 "/result%s", w->job,
                 opt.claim_next && hv_monotonic() < deadline ? "?claim=true" : "");
        data = w->body.p;
        len = w->body.len;
        break;
    }
    default:
        return;
    }
    char url[sizeof w->url + sizeof path];
    snprintf(url, sizeof url, "%s%s", w->url, path);
    w->answer.len = 0;
    w->answer.failed = false;
    w->curl_err[0] = '\0';
    curl_easy_setopt(w->easy, CURLOPT_URL, url);
    curl_easy_setopt(w->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(w->easy, CURLOPT_POSTFIELDS, data);
    w->t0 = hv_monotonic();
    if (curl_multi_add_handle(l->multi, w->easy) != CURLM_OK) {
        w->c.errors++;
        fprintf(stderr, "hvload: worker %d: cannot start a request\n", w->index);
        w->step = STEP_DONE;
        return;
    }
    w->in_flight = true;
}

/* Whether w rides out the answer r (503 or none) as an outage: it asks
 * the same again in 0.2 s, for up to --outage seconds from the first. */
static bool ride_out(struct sim *w, const struct hv_http_response *r)
{
    if (opt.outage <= 0 || (r->status != 0 && r->status != 503))
        return false;
    double now = hv_monotonic();
    if (w->outage_since == 0)
        w->outage_since = now;
    if (now - w->outage_since >= opt.outage)
        return false;
    w->c.retries++;
    w->asked_again = true;
    w->wake_at = now + 0.2;
    return true;
}

/* A request of w was answered as it should be: no outage for it now. */
static void answered(struct sim *w)
{
    w->outage_since = 0;
    w->asked_again = false;
}

/* A failed request: w asks again after pause seconds, or ends after
 * MAX_FAILURES_IN_ROW of them. */
static void failed(struct sim *w, double pause)
{
    if (++w->failures >= MAX_FAILURES_IN_ROW) {
        w->step = STEP_DONE;
        return;
    }
    w->step = STEP_CLAIM;
    w->wake_at = hv_monotonic() + pause;
}

/* Takes the job j that a claim's or an upload's answer r (what) holds,
 * ms after it was asked for; false when r holds none. */
static bool take_job(struct sim *w, const json_t *j, struct hv_http_response *r, const char *what,
                     double ms)
{
    json_t *id = json_object_get(j, "id"), *att = json_object_get(j, "attempt");
    if (!json_is_integer(id) || !json_is_integer(att)) {
        w->c.bad_answers++;
        report_unexpected(w, what, r);
        failed(w, 0.1);
        return false;
    }
    w->job = json_integer_value(id);
    w->attempt = (int)json_integer_value(att);
    dvec_push(&w->claim_ms, ms);
    dvec_push(&w->claim_at, hv_monotonic());
    w->empty = 0;
    atomic_fetch_add(&progress_claimed, 1);
    if (!crec_push(&w->claims, (struct claim_rec){w->job, w->attempt, w->index})) {
        w->c.errors++;
        fprintf(stderr, "hvload: worker %d: out of memory recording a claim\n", w->index);
        w->step = STEP_DONE;
        return false;
    }
    w->step = opt.heartbeat ? STEP_HEARTBEAT : STEP_UPLOAD;
    return true;
}

/* The answer to a claim. */
static void claimed(struct sim *w, struct hv_http_response *r, double ms)
{
    if (ride_out(w, r))
        return;
    answered(w);
    if (r->status == 200) {
        if (take_job(w, json_object_get(r->body, "job"), r, "claim answered 200 without a job", ms))
            w->c.claims_200++;
        return;
    }
    if (r->status == 204) {
        w->c.claims_204++;
        w->failures = 0;
        if (++w->empty >= opt.empty_claims)
            w->step = STEP_DONE;
        else if (opt.wait <= 0)
            w->wake_at = hv_monotonic() + 0.05; /* let running claims finish first */
        return;
    }
    if (r->status == 0)
        w->c.errors++;
    else
        w->c.claims_other++;
    report_unexpected(w, "claim", r);
    failed(w, 0.1);
}

/* The answer to a heartbeat: the upload follows only after a 200. */
static void heartbeaten(struct sim *w, struct hv_http_response *r)
{
    if (ride_out(w, r))
        return;
    answered(w);
    if (r->status == 200) {
        w->c.heartbeats_200++;
        w->step = STEP_UPLOAD;
        return;
    }
    if (r->status == 0)
        w->c.errors++;
    else
        w->c.heartbeats_other++;
    report_unexpected(w, "heartbeat", r);
    failed(w, 0);
}

/* The answer to an upload. */
static void uploaded(struct sim *w, struct hv_http_response *r, double t1)
{
    if (ride_out(w, r))
        return;
    bool again = w->asked_again;
    answered(w);
    /* Asked again after an answer got lost, the upload may have been
     * stored the first time: its replay is the expected answer. */
    if (r->status == 200 && again) {
        w->c.uploads_replayed++;
        w->c.samples_stored += opt.samples;
    }
    switch (r->status == 200 && again ? 201 : r->status) {
    case 201:
        if (r->status == 201) {
            w->c.uploads_201++;
            w->c.samples_stored += opt.samples;
        }
        dvec_push(&w->upload_ms, (t1 - w->t0) * 1000.0);
        dvec_push(&w->upload_at, t1);
        w->last_work = t1;
        atomic_fetch_add(&progress_uploaded, 1);
        w->failures = 0;
        w->step = STEP_CLAIM;
        json_t *next = json_object_get(r->body, "next");
        if (json_is_object(next)) {
            hv_now_iso8601(w->started, sizeof w->started);
            if (take_job(w, json_object_get(next, "job"), r,
                         "upload answered a next member without a job", (t1 - w->t0) * 1000.0))
                w->c.claims_with_uploads++;
        }
        return;
    case 200:
        w->c.uploads_200++;
        report_unexpected(w, "upload replayed (this attempt was uploaded before)", r);
        break;
    case 409:
        w->c.uploads_409++;
        report_unexpected(w, "upload", r);
        break;
    case 0:
        w->c.errors++;
        report_unexpected(w, "upload", r);
        break;
    default:
        w->c.uploads_other++;
        report_unexpected(w, "upload", r);
    }
    failed(w, 0);
}

/* A request of w ended with rc: its answer goes to the step that asked. */
static void finish_request(struct loop *l, struct sim *w, CURLcode rc)
{
    double t1 = hv_monotonic();
    curl_multi_remove_handle(l->multi, w->easy);
    w->in_flight = false;
    struct hv_http_response r = {0};
    if (rc != CURLE_OK) {
        snprintf(r.error, sizeof r.error, "%s",
                 w->curl_err[0] != '\0' ? w->curl_err : curl_easy_strerror(rc));
    } else {
        curl_easy_getinfo(w->easy, CURLINFO_RESPONSE_CODE, &r.status);
        char *ct = NULL;
        curl_easy_getinfo(w->easy, CURLINFO_CONTENT_TYPE, &ct);
        if (w->answer.len > 0 && ct != NULL && strstr(ct, "json") != NULL)
            r.body = json_loadb(w->answer.p, w->answer.len, 0, NULL);
    }
    switch (w->step) {
    case STEP_CLAIM:
        claimed(w, &r, (t1 - w->t0) * 1000.0);
        break;
    case STEP_HEARTBEAT:
        heartbeaten(w, &r);
        break;
    case STEP_UPLOAD:
        uploaded(w, &r, t1);
        break;
    default:
        break;
    }
    json_decref(r.body);
}

/* Registers l's workers, waits at the gate, then runs their requests until
 * each is done. */
static void *loop_main(void *arg)
{
    struct loop *l = arg;
    for (long i = l->first; i < opt.workers; i += opt.threads) {
        struct sim *w = &sims[i];
        const char *cred = credential;
        if (opt.hosts) {
            snprintf(w->name, sizeof w->name, "%s-%03d", opt.target, w->index);
            cred = acquire_credential(w->name, w->credential, sizeof w->credential) == 0
                       ? w->credential
                       : NULL;
        } else {
            snprintf(w->name, sizeof w->name, "%s", opt.target);
        }
        snprintf(w->url, sizeof w->url, "%s", opt.servers[w->server_idx]);
        w->http = cred != NULL ? hv_httpc_new(opt.servers[w->server_idx], cred,
                                              (long)ceil(opt.timeout + opt.wait))
                               : NULL;
        bool ready = w->http != NULL && sim_easy(w, cred) && do_register(w);
        if (w->http == NULL || w->easy == NULL) {
            w->c.errors++;
            fprintf(stderr, "hvload: worker %d: cannot create an HTTP client\n", w->index);
        }
        w->step = ready ? STEP_CLAIM : STEP_DONE;
    }
    pthread_mutex_lock(&gate_lock);
    gate_arrived += l->count;
    pthread_cond_broadcast(&gate_cond);
    while (!gate_open)
        pthread_cond_wait(&gate_cond, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
    for (;;) {
        double now = hv_monotonic(), wake = now + 0.1;
        long active = 0;
        for (long i = l->first; i < opt.workers; i += opt.threads) {
            struct sim *w = &sims[i];
            if (w->step != STEP_DONE && !w->in_flight && w->wake_at <= now)
                start_request(l, w);
            if (w->step == STEP_DONE && !w->in_flight) {
                atomic_store(&w->done, true);
                continue;
            }
            active++;
            if (!w->in_flight && w->wake_at < wake)
                wake = w->wake_at;
        }
        if (active == 0)
            break;
        int running;
        curl_multi_perform(l->multi, &running);
        CURLMsg *m;
        int left;
        bool ended = false;
        while ((m = curl_multi_info_read(l->multi, &left)) != NULL) {
            if (m->msg != CURLMSG_DONE)
                continue;
            struct sim *w = NULL;
            CURL *e = m->easy_handle;
            CURLcode rc = m->data.result;
            curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&w);
            finish_request(l, w, rc);
            ended = true;
        }
        if (ended)
            continue; /* their next requests start at once */
        int ms = (int)ceil((wake - hv_monotonic()) * 1000.0);
        curl_multi_poll(l->multi, NULL, 0, ms > 0 ? ms : 0, NULL);
    }
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
    struct dvec claim_at, upload_at; /* every worker's, sorted */
    /* The longest time without a claim and without an upload between the
     * run's start and the last one, and when (seconds from the start)
     * each began. */
    double claim_stall, upload_stall, claim_stall_from, upload_stall_from;
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
    t->claims_with_uploads += c->claims_with_uploads;
    t->uploads_201 += c->uploads_201;
    t->uploads_200 += c->uploads_200;
    t->uploads_409 += c->uploads_409;
    t->uploads_other += c->uploads_other;
    t->heartbeats_200 += c->heartbeats_200;
    t->heartbeats_other += c->heartbeats_other;
    t->retries += c->retries;
    t->uploads_replayed += c->uploads_replayed;
    t->errors += c->errors;
    t->bad_answers += c->bad_answers;
    t->samples_stored += c->samples_stored;
}

static void dvec_append(struct dvec *to, const struct dvec *from)
{
    for (size_t i = 0; i < from->n; i++)
        dvec_push(to, from->v[i]);
}

/* Sorts the times in d and sets *gap to the longest time between two of
 * them (the first counted from t0) and *from to when it began, in seconds
 * from t0. */
static void longest_gap(struct dvec *d, double t0, double *gap, double *from)
{
    qsort(d->v, d->n, sizeof(double), cmp_double);
    *gap = 0;
    *from = 0;
    double prev = t0;
    for (size_t i = 0; i < d->n; i++) {
        if (d->v[i] - prev > *gap) {
            *gap = d->v[i] - prev;
            *from = prev - t0;
        }
        prev = d->v[i];
    }
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
        dvec_append(&s->claim_at, &w->claim_at);
        dvec_append(&s->upload_at, &w->upload_at);
        s->per_server_claims[w->server_idx] += w->c.claims_200 + w->c.claims_with_uploads;
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
    longest_gap(&s->claim_at, t_start, &s->claim_stall, &s->claim_stall_from);
    longest_gap(&s->upload_at, t_start, &s->upload_stall, &s->upload_stall_from);
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
        "s:{s:I,s:I,s:I,s:I},"
        "s:{s:I,s:I,s:I,s:I},"
        "s:{s:I,s:I},"
        "s:I,s:I,s:I,s:f,s:f,s:f,s:f,s:f,"
        "s:{s:o,s:o,s:o},s:{s:o,s:o,s:o},s:f,s:b,s:i,"
        "s:I,s:I,s:f,s:f,s:f,s:f}",
        "workers", (json_int_t)opt.workers, "servers", servers, "target", opt.target, "samples",
        (json_int_t)opt.samples, "metrics", (json_int_t)opt.metrics, "wait", opt.wait, "heartbeat",
        opt.heartbeat, "registered", (json_int_t)s->c.registered, "jobs_claimed",
        (json_int_t)s->jobs_claimed, "distinct_jobs", (json_int_t)s->distinct_jobs, "duplicates",
        (json_int_t)s->duplicate_jobs, "duplicate_attempts", (json_int_t)s->duplicate_attempts,
        "claims", "200", (json_int_t)s->c.claims_200, "204", (json_int_t)s->c.claims_204, "other",
        (json_int_t)s->c.claims_other, "with_uploads", (json_int_t)s->c.claims_with_uploads,
        "uploads", "201", (json_int_t)s->c.uploads_201, "200", (json_int_t)s->c.uploads_200, "409",
        (json_int_t)s->c.uploads_409, "other", (json_int_t)s->c.uploads_other, "heartbeats", "200",
        (json_int_t)s->c.heartbeats_200, "other", (json_int_t)s->c.heartbeats_other, "unexpected",
        (json_int_t)s->unexpected, "errors", (json_int_t)s->c.errors, "samples_stored",
        (json_int_t)s->c.samples_stored, "elapsed_s", s->elapsed, "work_elapsed_s", s->work_elapsed,
        "claims_per_s", rate((double)s->jobs_claimed, s->work_elapsed), "uploads_per_s",
        rate((double)s->c.uploads_201, s->work_elapsed), "samples_per_s",
        rate((double)s->c.samples_stored, s->work_elapsed), "claim_ms", "p50",
        json_ms(percentile(&s->claim_ms, 50)), "p99", json_ms(percentile(&s->claim_ms, 99)), "max",
        json_ms(percentile(&s->claim_ms, 100)), "upload_ms", "p50",
        json_ms(percentile(&s->upload_ms, 50)), "p99", json_ms(percentile(&s->upload_ms, 99)),
        "max", json_ms(percentile(&s->upload_ms, 100)), "cpu_s", s->cpu_s, "limit_reached",
        atomic_load(&limit_passed), "exit", status, "retries", (json_int_t)s->c.retries,
        "uploads_replayed", (json_int_t)s->c.uploads_replayed, "claim_stall_s", s->claim_stall,
        "claim_stall_from_s", s->claim_stall_from, "upload_stall_s", s->upload_stall,
        "upload_stall_from_s", s->upload_stall_from);
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
    printf("  jobs claimed        %ld (claims answered 200: %ld, 204: %ld, other: %ld; "
           "with uploads: %ld)\n",
           s->jobs_claimed, s->c.claims_200, s->c.claims_204, s->c.claims_other,
           s->c.claims_with_uploads);
    printf("  duplicates          %ld job ids claimed again, %ld same (job, attempt)\n",
           s->duplicate_jobs, s->duplicate_attempts);
    printf("  uploads             201: %ld  200: %ld  409: %ld  other: %ld\n", s->c.uploads_201,
           s->c.uploads_200, s->c.uploads_409, s->c.uploads_other);
    if (opt.heartbeat)
        printf("  heartbeats          200: %ld  other: %ld\n", s->c.heartbeats_200,
               s->c.heartbeats_other);
    if (opt.outage > 0) {
        printf("  outage              %ld requests asked again, %ld uploads answered as replays\n",
               s->c.retries, s->c.uploads_replayed);
        printf("  longest stall       claims %.3f s (from %.3f s), uploads %.3f s (from %.3f s)\n",
               s->claim_stall, s->claim_stall_from, s->upload_stall, s->upload_stall_from);
    }
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

static struct loop loops[MAX_THREADS];

/* Starts the event loop threads; returns how many workers they hold. When
 * not all of them could start, none is let run (a smaller load than asked
 * for would mislead): the stop flag is set and the missing ones count an
 * error. */
static long start_loops(long *threads)
{
    for (long i = 0; i < opt.workers; i++) {
        struct sim *w = &sims[i];
        w->index = (int)i;
        w->server_idx = (size_t)i % opt.n_servers;
        w->rng = 0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1);
        w->step = STEP_DONE;
        atomic_init(&w->done, false);
    }
    long started = 0, held = 0;
    for (long t = 0; t < opt.threads; t++) {
        loops[t].first = t;
        loops[t].multi = curl_multi_init();
        loops[t].count = (opt.workers - t + opt.threads - 1) / opt.threads;
        /* Room for every worker's connection to stay open between its
         * requests (curl's default keeps fewer when few requests run). */
        if (loops[t].multi != NULL)
            curl_multi_setopt(loops[t].multi, CURLMOPT_MAXCONNECTS, loops[t].count + 4);
        if (loops[t].multi == NULL ||
            pthread_create(&loops[t].thread, NULL, loop_main, &loops[t]) != 0) {
            fprintf(stderr, "hvload: cannot start event loop %ld\n", t);
            curl_multi_cleanup(loops[t].multi);
            loops[t].multi = NULL;
            break;
        }
        started++;
        held += loops[t].count;
    }
    *threads = started;
    if (started < opt.threads) {
        atomic_store(&stop_flag, true);
        for (long t = started; t < opt.threads; t++)
            for (long i = t; i < opt.workers; i += opt.threads) {
                sims[i].c.errors++;
                atomic_store(&sims[i].done, true);
            }
    }
    return held;
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
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "hvload: cannot initialise libcurl\n");
        return EXIT_BAD;
    }
    double t_begin = hv_monotonic();
    deadline = t_begin + opt.limit;
    long threads = 0;
    long started = start_loops(&threads);
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
    for (long i = 0; i < opt.workers; i++)
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
    for (long t = 0; t < threads; t++)
        pthread_join(loops[t].thread, NULL);

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
    for (long i = 0; i < (opt.hosts ? opt.workers : started > 0 ? 1 : 0); i++) {
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
        curl_easy_cleanup(sims[i].easy);
        curl_slist_free_all(sims[i].headers);
        free(sims[i].answer.p);
        free(sims[i].claims.v);
        free(sims[i].claim_ms.v);
        free(sims[i].upload_ms.v);
        free(sims[i].claim_at.v);
        free(sims[i].upload_at.v);
        free(sims[i].body.p);
    }
    free(s.claim_ms.v);
    free(s.upload_ms.v);
    free(s.claim_at.v);
    free(s.upload_at.v);
    free(sims);
    for (long t = 0; t < threads; t++)
        curl_multi_cleanup(loops[t].multi);
    return status;
}
