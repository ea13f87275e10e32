/* hooks.h — the caller of plans' url drain hooks (db_hooks.h).
 *
 * One thread queues the after_host hooks that became due and POSTs each
 * due url hook's body {"event": "hook.before_host" | "hook.after_host",
 * "at", "plan": {"id", "name", "status"}, "host", "hook_id", "attempt"},
 * signed as webhooks are ("Hvbench-Signature: t=UNIX,v1=HEX") with the
 * key of --hook-secret-file. A 2xx answer within HV_HOOK_TIMEOUT seconds
 * is success; anything else is tried again after 1, 2, 4 ... seconds,
 * HV_HOOK_ATTEMPTS attempts in all, and then the hook failed. A
 * before_host answering 503 says "not yet": its JSON body's "reason"
 * becomes the plan's waiting detail and it is called again after its
 * Retry-After or the plan's hooks.interval, until hooks.timeout
 * (hv_db_hook_not_yet()); those calls are not failed attempts. Loopback,
 * link-local and private addresses are refused unless the server runs
 * with --hook-addresses any. */
#ifndef HV_SERVER_HOOKS_H
#define HV_SERVER_HOOKS_H

/** Attempts of a url hook before it fails. */
#define HV_HOOK_ATTEMPTS 5

/** Bytes kept of the words of a hook that says "not yet". */
#define HV_HOOK_REASON_BYTES 512

/** Seconds one call may take. */
#define HV_HOOK_TIMEOUT 30

/** Starts the caller thread. Returns 0, or -1 when it cannot start. */
int hv_hooks_start(void);

/** Stops it (a call in flight is abandoned within a second and made
 *  again later, by this server or another). */
void hv_hooks_stop(void);

#endif
