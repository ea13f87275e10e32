/* batch.c — see batch.h. */
#include "batch.h"

#include "auth.h"
#include "config.h"
#include "db.h"
#include "db_jobs.h"
#include "log.h"
#include "metrics.h"

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

/* The most requests one batch takes, whatever --batch says. */
#define BATCH_MAX HV_CLAIM_MANY_MAX

struct queue {
    pthread_mutex_t lock;
    pthread_cond_t more;
    struct hv_request *head, *tail; /* linked by batch_next */
    size_t queued;                  /* requests from head to tail */
    pthread_t threads[HV_BATCH_LANES_MAX];
    size_t lanes; /* threads taking from the queue: running while above 0 */
    bool done;    /* a thread ended: nothing queued is taken any more */
    void (*run)(struct hv_request **reqs, size_t n);
};

static atomic_bool stopping;

/* Whether req's credential is known and holds, and a claim's body names
 * no other target than its worker's: else its handler answers alone. */
static bool admitted(const struct hv_request *req)
{
    return !req->auth_deferred && req->auth_refused == 0 && req->worker_id != 0 &&
           (req->batch_target == 0 || req->batch_target == req->worker_target);
}

/* Gives req what its claim came to: a claim's answer, or the next job of
 * a result that asked for one (req->claim_next). */
static void claimed(struct hv_request *req, int outcome, json_t *job)
{
    if (req->claim_next)
        req->claim_outcome = outcome;
    else
        req->batch_outcome = outcome;
    req->batch_job = job;
}

/* Claims a job for each of the m admitted requests in one statement. */
static void claim_many(struct hv_request **in, size_t m)
{
    struct hv_claim_entry e[BATCH_MAX] = {0};
    for (size_t i = 0; i < m; i++)
        e[i] = (struct hv_claim_entry){.target_id = in[i]->worker_target,
                                       .worker_id = in[i]->worker_id};
    /* The statement also asks whether the sweeps are due (a target with a
     * step queued is left to the single claim by it). They rarely are;
     * when they are, they run after it, and each entry that got no job
     * claims alone, after them (also when they fail: it runs them again
     * and reports the failure). */
    bool leases_due, tick_due;
    if (hv_db_job_claim_many(e, m, hv_cfg.lease_seconds, &leases_due, &tick_due) != HV_DB_OK)
        hv_warn("the claims of %zu workers in one statement failed; each claims alone", m);
    else if (leases_due || tick_due)
        (void)hv_db_sweeps_run(leases_due, tick_due, hv_cfg.lease_seconds);
    for (size_t i = 0; i < m; i++) {
        if ((leases_due || tick_due) && e[i].outcome == HV_CLAIM_NONE)
            e[i].outcome = HV_CLAIM_SINGLE;
        claimed(in[i], (int)e[i].outcome, e[i].job);
    }
}

static void run_claims(struct hv_request **reqs, size_t n)
{
    struct hv_request *in[BATCH_MAX];
    size_t m = 0;
    hv_auth_resolve_many(reqs, n);
    for (size_t i = 0; i < n; i++) {
        claimed(reqs[i], HV_CLAIM_SINGLE, NULL);
        if (admitted(reqs[i]))
            in[m++] = reqs[i];
    }
    hv_metrics_batch(HV_BATCH_CLAIM, n);
    if (m > 0)
        claim_many(in, m);
}

static void run_results(struct hv_request **reqs, size_t n)
{
    struct hv_result_item *items[BATCH_MAX] = {0};
    size_t m = 0;
    hv_auth_resolve_many(reqs, n);
    for (size_t i = 0; i < n; i++) {
        struct hv_result_item *it = reqs[i]->batch_item;
        reqs[i]->batch_outcome = 1;
        it->single = true; /* stored by its handler, unless stored here */
        if (admitted(reqs[i])) {
            it->u.worker_id = reqs[i]->worker_id;
            items[m++] = it;
        }
    }
    hv_metrics_batch(HV_BATCH_RESULT, n);
    if (m > 0 && hv_db_result_store_many(items, m) != HV_DB_OK)
        hv_warn("the results of %zu jobs in one transaction failed; each is stored alone", m);
    /* A stored result that asks for its worker's next job gets it here,
     * from one statement for the batch's such results, rather than from
     * its handler claiming alone. */
    struct hv_request *next[BATCH_MAX];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const struct hv_result_item *it = reqs[i]->batch_item;
        if (reqs[i]->claim_next && !it->single && it->status == HV_DB_OK)
            next[k++] = reqs[i];
    }
    if (k > 0) {
        hv_metrics_batch(HV_BATCH_CLAIM, k);
        claim_many(next, k);
    }
}

/* Large reads, one at a time: each is answered as soon as it is read. */
static void run_reads(struct hv_request **reqs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        reqs[i]->batch_run(reqs[i]);
        reqs[i]->batch_outcome = 1;
    }
}

static struct queue queues[HV_BATCH_KINDS] = {
    [HV_BATCH_CLAIM] = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, .run = run_claims},
    [HV_BATCH_RESULT] = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, .run = run_results},
    [HV_BATCH_READ] = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, .run = run_reads},
};

bool hv_batch_on(enum hv_batch_kind kind)
{
    return kind > HV_BATCH_NONE && kind < HV_BATCH_KINDS && queues[kind].lanes > 0 &&
           !atomic_load(&stopping) && hv_cfg.batch > 1;
}

void hv_batch_enqueue(struct hv_request *req)
{
    struct queue *q = &queues[req->batch];
    req->batch_next = NULL;
    pthread_mutex_lock(&q->lock);
    if (q->done) {
        /* Stopped after the handler looked: it runs again at once and,
         * batches being off, does the work itself. */
        pthread_mutex_unlock(&q->lock);
        MHD_resume_connection(req->conn);
        return;
    }
    if (q->tail != NULL)
        q->tail->batch_next = req;
    else
        q->head = req;
    q->tail = req;
    q->queued++;
    pthread_cond_signal(&q->more);
    pthread_mutex_unlock(&q->lock);
}

/* Waits (q->lock held) until want requests are queued, up to
 * --batch-linger-us, or the server stops. */
static void linger(struct queue *q, size_t want)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    long ns = until.tv_nsec + (long)hv_cfg.batch_linger_us * 1000;
    until.tv_sec += ns / 1000000000;
    until.tv_nsec = ns % 1000000000;
    while (q->queued < want && !atomic_load(&stopping))
        if (pthread_cond_timedwait(&q->more, &q->lock, &until) != 0)
            break;
}

static void *loop(void *arg)
{
    struct queue *q = arg;
    struct hv_request *reqs[BATCH_MAX];
    size_t most = hv_cfg.batch < BATCH_MAX ? hv_cfg.batch : BATCH_MAX, last = 0;
    if (q == &queues[HV_BATCH_READ])
        most = 1;
    /* A batch statement's plan costs more to make than to run, and its
     * estimate of one plan for any batch (a LIMIT it cannot know) grows
     * with the jobs table until PostgreSQL would make one for every call,
     * and JIT-compile it on every call. */
    hv_db_thread_batch_mode();
    for (;;) {
        pthread_mutex_lock(&q->lock);
        while (q->head == NULL && !atomic_load(&stopping))
            pthread_cond_wait(&q->more, &q->lock);
        /* Workers whose requests made the last batch mostly ask again
         * together, a little after it ended: the batch waits for as many
         * a short while, rather than taking the first ones alone and
         * the rest in another batch, at the same cost each. */
        if (last > 1 && q->queued < last && hv_cfg.batch_linger_us > 0)
            linger(q, last < most ? last : most);
        size_t n = 0;
        while (q->head != NULL && n < most) {
            reqs[n++] = q->head;
            q->head = q->head->batch_next;
            q->queued--;
        }
        if (q->head == NULL)
            q->tail = NULL;
        bool end = n == 0 && atomic_load(&stopping);
        if (end)
            q->done = true; /* stopping, nothing queued */
        pthread_mutex_unlock(&q->lock);
        if (end)
            break;
        if (n == 0)
            continue; /* another lane took what this one waited for */
        last = n;
        q->run(reqs, n);
        for (size_t i = 0; i < n; i++)
            MHD_resume_connection(reqs[i]->conn);
    }
    return NULL;
}

int hv_batch_start(void)
{
    if (hv_cfg.batch <= 1)
        return 0;
    for (int k = HV_BATCH_NONE + 1; k < HV_BATCH_KINDS; k++) {
        struct queue *q = &queues[k];
        size_t lanes = k == HV_BATCH_RESULT ? (size_t)hv_cfg.result_lanes : 1;
        if (lanes > HV_BATCH_LANES_MAX)
            lanes = HV_BATCH_LANES_MAX;
        for (size_t i = 0; i < lanes; i++) {
            if (pthread_create(&q->threads[i], NULL, loop, q) != 0)
                return -1;
            q->lanes = i + 1;
        }
    }
    return 0;
}

void hv_batch_stop(void)
{
    atomic_store(&stopping, true);
    for (int k = HV_BATCH_NONE + 1; k < HV_BATCH_KINDS; k++) {
        struct queue *q = &queues[k];
        if (q->lanes == 0)
            continue;
        pthread_mutex_lock(&q->lock);
        pthread_cond_broadcast(&q->more);
        pthread_mutex_unlock(&q->lock);
        for (size_t i = 0; i < q->lanes; i++)
            pthread_join(q->threads[i], NULL);
        q->lanes = 0;
    }
}
