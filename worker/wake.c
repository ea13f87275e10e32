/* wake.c — see wake.h. */
#include "worker/wake.h"

#include "timeutil.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

static int wake_pipe[2] = {-1, -1};
static volatile sig_atomic_t shutdown_signals;

static void on_shutdown_signal(int sig)
{
    int saved = errno; /* a handler must not change errno under the code it interrupted */
    if (++shutdown_signals >= 2) {
        static const char msg[] = "hvbench-worker: second signal, exiting now\n";
        ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
        (void)w;
        _exit(128 + sig);
    }
    hv_wake_notify();
    errno = saved;
}

int hv_wake_init(void)
{
    if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        return -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_shutdown_signal;
    sigemptyset(&sa.sa_mask);
    /* No SA_RESTART: a blocking call returns EINTR and the loop looks at
     * the shutdown flag sooner. */
    if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0)
        return -1;
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

void hv_wake_notify(void)
{
    /* A full pipe already holds a wake-up: losing this byte is harmless. */
    ssize_t w = write(wake_pipe[1], "x", 1);
    (void)w;
}

static void drain(void)
{
    char buf[64];
    while (read(wake_pipe[0], buf, sizeof buf) > 0)
        ;
}

bool hv_wake_wait(double seconds)
{
    double deadline = hv_monotonic() + (seconds > 0 ? seconds : 0);
    for (;;) {
        double left = deadline - hv_monotonic();
        int ms = left > 0 ? (int)ceil(left * 1000) : 0;
        struct pollfd p = {.fd = wake_pipe[0], .events = POLLIN};
        int n = poll(&p, 1, ms);
        if (n > 0) {
            drain();
            return true;
        }
        if (n == 0 || (n < 0 && errno != EINTR))
            return false;
    }
}

bool hv_shutdown_requested(void)
{
    return shutdown_signals > 0;
}

volatile sig_atomic_t *hv_shutdown_flag(void)
{
    return &shutdown_signals;
}

void hv_signals_block(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

void hv_signals_restore(const sigset_t *old)
{
    pthread_sigmask(SIG_SETMASK, old, NULL);
}
