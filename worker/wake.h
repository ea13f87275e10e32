/* wake.h — what interrupts the worker's waits: shutdown signals and the
 * end of an engine run.
 *
 * One self-pipe carries both, so the main thread waits in one place (a
 * poll with a timeout) and wakes at once for either. SIGTERM or SIGINT
 * the first time asks for a graceful shutdown; the second time the process
 * exits at once. */
#ifndef HV_WORKER_WAKE_H
#define HV_WORKER_WAKE_H

#include <signal.h>
#include <stdbool.h>

/** Creates the pipe, installs the SIGTERM/SIGINT handlers and ignores
 *  SIGPIPE (libcurl runs with CURLOPT_NOSIGNAL and leaves that to us).
 *  Call once, before starting threads. Returns 0, or -1 with errno set. */
int hv_wake_init(void);

/** Wakes the waiting thread. Async-signal-safe and thread safe. */
void hv_wake_notify(void);

/** Waits up to seconds (<= 0: just checks) for a notification and
 *  consumes all pending ones. Returns true when woken, false on timeout. */
bool hv_wake_wait(double seconds);

/** True once a shutdown signal arrived. */
bool hv_shutdown_requested(void);

/** The flag behind hv_shutdown_requested(): nonzero once a shutdown signal
 *  arrived. For hv_httpc_set_abort_flag(); never write it. */
volatile sig_atomic_t *hv_shutdown_flag(void);

/** Blocks the shutdown signals in the calling thread, saving the previous
 *  mask in *old: threads created meanwhile inherit the block, so the
 *  signals always reach the main thread. Undo with hv_signals_restore(). */
void hv_signals_block(sigset_t *old);

/** Restores the mask saved by hv_signals_block(). */
void hv_signals_restore(const sigset_t *old);

#endif
