/* sweeper.c — see sweeper.h. */
#include "sweeper.h"

#include "db_jobs.h"
#include "log.h"
#include "verdicts.h"

#include <pthread.h>
#include <stdbool.h>
#include <time.h>

static pthread_t thread;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static bool stopping, running;
static int lease;

static void *sweep_loop(void *arg)
{
    (void)arg;
    bool failing = false;
    pthread_mutex_lock(&lock);
    while (!stopping) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += (time_t)HV_SWEEP_EVERY;
        while (!stopping && pthread_cond_timedwait(&cond, &lock, &until) == 0)
            ;
        if (stopping)
            break;
        pthread_mutex_unlock(&lock);
        bool steps;
        enum hv_db_status s = hv_db_claim_sweeps(0, lease, &steps);
        if (s != HV_DB_OK && !failing)
            hv_warn("sweeper: the sweeps of leases and plan steps failed (%s); trying again every "
                    "%.0f s",
                    s == HV_DB_UNAVAILABLE ? "database unavailable" : "database error",
                    HV_SWEEP_EVERY);
        failing = s != HV_DB_OK;
        /* Verdicts of adopted recommendations: judged when a result or
         * an adoption moved since the last sweep; a failure is warned
         * about by the sweeps' own failure above or tried again. */
        if (!failing)
            hv_verdicts_judge_due();
        pthread_mutex_lock(&lock);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

int hv_sweeper_start(int lease_s)
{
    lease = lease_s;
    stopping = false;
    if (pthread_create(&thread, NULL, sweep_loop, NULL) != 0) {
        hv_error("cannot start the sweeper");
        return -1;
    }
    running = true;
    return 0;
}

void hv_sweeper_stop(void)
{
    if (!running)
        return;
    pthread_mutex_lock(&lock);
    stopping = true;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
    pthread_join(thread, NULL);
    running = false;
}
