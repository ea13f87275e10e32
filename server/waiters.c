/* waiters.c — see waiters.h. */
#include "waiters.h"

#include "log.h"
#include "metrics.h"
#include "timeutil.h"

#include <libpq-fe.h>
#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Claim waiters re-check this often even without a notification: an
 * expired lease makes a job claimable without any NOTIFY. */
#define FALLBACK_TICK 5.0
/* A lost LISTEN connection is opened again this often: a database failing
 * over takes connections again within seconds. */
#define RECONNECT_EVERY 0.5

struct waiter {
    struct hv_request *req;
    enum hv_wait_kind kind;
    int64_t key;
    double deadline;
    struct waiter *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct waiter *waiters;
static unsigned n_waiters;
static pthread_t listener;
static bool listener_running;
static atomic_bool stopping;
static int wake_pipe[2] = {-1, -1};
static char *listen_conninfo;
/* Bumped on every notification, so a request that checked the database
 * before a notification and parks after it does not sleep through it. */
static atomic_ulong jobs_seq, group_seq;

unsigned long hv_waiters_seq(enum hv_wait_kind kind)
{
    return kind == HV_WAIT_JOBS ? atomic_load(&jobs_seq) : atomic_load(&group_seq);
}

bool hv_waiters_stopping(void)
{
    return atomic_load(&stopping);
}

/* Resumes w's connection; the caller holds the lock and unlinks w. */
static void resume(struct waiter *w)
{
    w->req->parked = false;
    MHD_resume_connection(w->req->conn);
    free(w);
    n_waiters--;
}

/* Resumes every waiter for which match() holds. */
static void resume_matching(bool (*match)(const struct waiter *, const void *), const void *arg)
{
    pthread_mutex_lock(&lock);
    struct waiter **pp = &waiters;
    while (*pp != NULL) {
        struct waiter *w = *pp;
        if (match(w, arg)) {
            *pp = w->next;
            resume(w);
        } else {
            pp = &w->next;
        }
    }
    pthread_mutex_unlock(&lock);
}

static bool match_all(const struct waiter *w, const void *arg)
{
    return true;
}

static bool match_kind(const struct waiter *w, const void *arg)
{
    return w->kind == *(const enum hv_wait_kind *)arg;
}

static bool match_group(const struct waiter *w, const void *arg)
{
    return w->kind == HV_WAIT_GROUP && w->key == *(const int64_t *)arg;
}

static bool match_expired(const struct waiter *w, const void *arg)
{
    return w->deadline <= *(const double *)arg;
}

void hv_waiters_park(struct hv_request *req, enum hv_wait_kind kind, int64_t key, double deadline)
{
    struct waiter *w = calloc(1, sizeof *w);
    if (w == NULL) {
        /* No memory to wait: answer at once, the client asks again. */
        MHD_resume_connection(req->conn);
        return;
    }
    *w = (struct waiter){req, kind, key, deadline, NULL};
    pthread_mutex_lock(&lock);
    req->parked = true;
    w->next = waiters;
    waiters = w;
    n_waiters++;
    bool missed = hv_waiters_seq(kind) != req->wait_seq || atomic_load(&stopping);
    if (missed) {
        waiters = w->next;
        resume(w);
    }
    pthread_mutex_unlock(&lock);
    if (!missed && wake_pipe[1] >= 0) {
        /* The listener may sleep past this deadline: tell it. */
        ssize_t n = write(wake_pipe[1], "w", 1);
        (void)n;
    }
}

void hv_waiters_forget(struct hv_request *req)
{
    pthread_mutex_lock(&lock);
    for (struct waiter **pp = &waiters; *pp != NULL; pp = &(*pp)->next) {
        if ((*pp)->req == req) {
            struct waiter *w = *pp;
            *pp = w->next;
            free(w);
            n_waiters--;
            break;
        }
    }
    pthread_mutex_unlock(&lock);
}

unsigned hv_waiters_count(void)
{
    pthread_mutex_lock(&lock);
    unsigned n = n_waiters;
    pthread_mutex_unlock(&lock);
    return n;
}

/* The earliest deadline, or now + FALLBACK_TICK. */
static double next_wakeup(double now)
{
    double t = now + FALLBACK_TICK;
    pthread_mutex_lock(&lock);
    for (struct waiter *w = waiters; w != NULL; w = w->next)
        if (w->deadline < t)
            t = w->deadline;
    pthread_mutex_unlock(&lock);
    return t;
}

/* Called on hv_webhooks notifications (hv_waiters_on_webhooks). */
static void (*extra_fn)(void);

void hv_waiters_on_webhooks(void (*fn)(void))
{
    extra_fn = fn;
}

static PGconn *listen_connect(void)
{
    PGconn *c = PQconnectdb(listen_conninfo);
    if (PQstatus(c) != CONNECTION_OK) {
        PQfinish(c);
        return NULL;
    }
    PGresult *r = PQexec(c, extra_fn != NULL ? "LISTEN hv_jobs; LISTEN hv_group; LISTEN hv_webhooks"
                                             : "LISTEN hv_jobs; LISTEN hv_group");
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    if (!ok) {
        PQfinish(c);
        return NULL;
    }
    return c;
}

/* Handles every notification that arrived on c. */
static void drain_notifications(PGconn *c)
{
    PGnotify *n;
    while ((n = PQnotifies(c)) != NULL) {
        if (strcmp(n->relname, "hv_jobs") == 0) {
            atomic_fetch_add(&jobs_seq, 1);
            enum hv_wait_kind k = HV_WAIT_JOBS;
            resume_matching(match_kind, &k);
        } else if (strcmp(n->relname, "hv_group") == 0) {
            atomic_fetch_add(&group_seq, 1);
            int64_t g = strtoll(n->extra, NULL, 10);
            resume_matching(match_group, &g);
        } else if (strcmp(n->relname, "hv_webhooks") == 0 && extra_fn != NULL) {
            extra_fn();
        }
        PQfreemem(n);
    }
}

/* After a LISTEN connection was opened again: whatever was notified while
 * none listened is lost, so every parked request looks again, and the
 * webhook sender too. */
static void wake_after_gap(void)
{
    hv_metrics_listen_reconnect();
    atomic_fetch_add(&jobs_seq, 1);
    atomic_fetch_add(&group_seq, 1);
    resume_matching(match_all, NULL);
    if (extra_fn != NULL)
        extra_fn();
}

static void *listen_loop(void *arg)
{
    PGconn *c = NULL;
    double next_tick = hv_monotonic() + FALLBACK_TICK, next_connect = 0;
    bool warned = false, listened = false;
    while (!atomic_load(&stopping)) {
        double now = hv_monotonic();
        if (c == NULL && now >= next_connect) {
            c = listen_connect();
            if (c == NULL && !warned) {
                hv_warn("waiters: cannot LISTEN (database down?); waiting claims poll every "
                        "%.0f s until it is back",
                        FALLBACK_TICK);
                warned = true;
            } else if (c != NULL && warned) {
                hv_info("waiters: listening again");
                warned = false;
            }
            if (c != NULL && listened)
                wake_after_gap();
            listened = listened || c != NULL;
            next_connect = now + RECONNECT_EVERY;
        }
        struct pollfd fds[2] = {{wake_pipe[0], POLLIN, 0}, {c ? PQsocket(c) : -1, POLLIN, 0}};
        double until = next_wakeup(now);
        if (until > next_tick)
            until = next_tick;
        if (c == NULL && until > next_connect)
            until = next_connect;
        int ms = (int)((until - now) * 1000.0) + 1;
        poll(fds, c ? 2 : 1, ms < 0 ? 0 : ms);
        if (fds[0].revents & POLLIN) {
            char buf[64];
            ssize_t n = read(wake_pipe[0], buf, sizeof buf);
            (void)n;
        }
        if (c != NULL && (fds[1].revents & (POLLIN | POLLERR | POLLHUP))) {
            if (PQconsumeInput(c) == 0 || PQstatus(c) != CONNECTION_OK) {
                PQfinish(c);
                c = NULL;
            } else {
                drain_notifications(c);
            }
        }
        now = hv_monotonic();
        resume_matching(match_expired, &now);
        if (now >= next_tick) {
            atomic_fetch_add(&jobs_seq, 1);
            enum hv_wait_kind k = HV_WAIT_JOBS;
            resume_matching(match_kind, &k);
            next_tick = now + FALLBACK_TICK;
        }
    }
    if (c != NULL)
        PQfinish(c);
    return NULL;
}

int hv_waiters_start(const char *conninfo)
{
    listen_conninfo = strdup(conninfo);
    if (listen_conninfo == NULL || pipe(wake_pipe) != 0)
        return -1;
    if (pthread_create(&listener, NULL, listen_loop, NULL) != 0)
        return -1;
    listener_running = true;
    return 0;
}

void hv_waiters_stop(void)
{
    atomic_store(&stopping, true);
    resume_matching(match_all, NULL);
    if (listener_running) {
        ssize_t n = write(wake_pipe[1], "s", 1);
        (void)n;
        pthread_join(listener, NULL);
        listener_running = false;
    }
}
