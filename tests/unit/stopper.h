/* stopper.h — an engine's stop flag set from another thread after a
 * delay, as a cancelled plan or SIGTERM stops a running job: for the
 * engine tests (test_cpu.c, test_disk.c, test_net.c, test_tools.c). */
#ifndef HV_TESTS_STOPPER_H
#define HV_TESTS_STOPPER_H

#include "timeutil.h"

#include <signal.h>
#include <unistd.h>

/* What check_stop_later sets, and after how many seconds. */
struct check_stopper {
    volatile sig_atomic_t *stop;
    double after;
};

/* A thread's start routine (arg: a struct check_stopper): waits s->after
 * seconds on the monotonic clock, then sets *s->stop. */
static inline void *check_stop_later(void *arg)
{
    struct check_stopper *s = arg;
    double until = hv_monotonic() + s->after;
    while (hv_monotonic() < until)
        usleep(5000);
    __atomic_store_n(s->stop, 1, __ATOMIC_RELAXED);
    return NULL;
}

#endif
