/* fault.c — see fault.h. */
#include "fault.h"

#include "log.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct action {
    const char *name;
    int sig;
};

/* hang: no signal; the arriving thread blocks for good. */
#define HANG (-1)
static const struct action actions[] = {{"kill", SIGKILL}, {"stop", SIGSTOP}, {"hang", HANG}};

static char fault_point[64];
static int fault_sig;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_bool fired;

/* Reads HVBENCH_FAULT; an unreadable value is said once and ignored. */
static void read_env(void)
{
    const char *v = getenv("HVBENCH_FAULT");
    if (v == NULL || *v == '\0')
        return;
    const char *colon = strrchr(v, ':');
    size_t n = colon != NULL ? (size_t)(colon - v) : 0;
    for (size_t i = 0; colon != NULL && i < sizeof actions / sizeof actions[0]; i++) {
        if (strcmp(colon + 1, actions[i].name) == 0 && n > 0 && n < sizeof fault_point) {
            memcpy(fault_point, v, n);
            fault_point[n] = '\0';
            fault_sig = actions[i].sig;
            hv_warn("fault point %s armed (%s)", fault_point, actions[i].name);
            return;
        }
    }
    hv_warn("HVBENCH_FAULT=%s ignored: not POINT:kill, POINT:stop or POINT:hang", v);
}

void hv_fault(const char *point)
{
    pthread_once(&once, read_env);
    if (fault_sig == 0 || strcmp(point, fault_point) != 0 || atomic_exchange(&fired, true))
        return;
    if (fault_sig == HANG) {
        hv_warn("fault point %s reached: this thread hangs", point);
        for (;;)
            pause();
    }
    hv_warn("fault point %s reached: raising %s", point,
            fault_sig == SIGKILL ? "SIGKILL" : "SIGSTOP");
    raise(fault_sig);
}
