/* protocol.h — the version of the job protocol between hvbench-worker and
 * hvbench-server (registration, claims, heartbeats, results, steps: the
 * "Worker protocol" of docs/api.md). It changes only when a worker and a
 * server of the two versions could no longer understand each other; the
 * server refuses a worker that speaks another one at registration, and
 * tells a worker of another release (same protocol) which one it runs. */
#ifndef HV_PROTOCOL_H
#define HV_PROTOCOL_H

#define HV_PROTOCOL 1

#endif
