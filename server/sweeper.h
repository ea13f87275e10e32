/* sweeper.h — the server's own sweeps of leases and plan steps.
 *
 * Claims run the sweeps that are due (db_jobs.h hv_db_claim_sweeps()):
 * an expired lease is put back, a tuning plan moved on, a lost worker
 * made visible (plans' waiting: worker_lost, the worker.lost event). When
 * no worker claims — the only worker of a plan died — nothing would; so
 * one thread of each server runs the same sweeps every few seconds. The
 * sweeps are idempotent and serialised in the database, so several
 * servers on one database may all run them. */
#ifndef HV_SERVER_SWEEPER_H
#define HV_SERVER_SWEEPER_H

/** Seconds between two sweeps of the thread. */
#define HV_SWEEP_EVERY 5.0

/** Starts the thread (its sweeps use the server's lease, lease_s).
 *  Returns 0, or -1 when it cannot start. */
int hv_sweeper_start(int lease_s);

/** Stops it; a sweep under way ends first. */
void hv_sweeper_stop(void);

#endif
