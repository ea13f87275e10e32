#!/usr/bin/env bash
# The worker's side of the job lifecycle against the real server: SIGTERM
# releases a running job, a killed worker's lease expires and the job goes
# back to the queue with a new attempt, the dead attempt's late upload is
# refused and stores nothing, and re-registering keeps the target.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
HV_SERVER_ARGS=(--lease 3)
hv_setup

sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }

jq '.targets.host = "life-host" | .workloads[0].params.seconds = 60 | .repetitions.min = 1' \
    "$HV_ROOT/examples/quick.json" >"$HV_TMP/plan.json"
assert_status 201 POST /api/v1/plans -H "Authorization: Bearer $SUBMIT_TOKEN" \
    --data-binary @"$HV_TMP/plan.json"
PLAN=$(json .id)
JOB=$(sql "SELECT id FROM jobs WHERE plan_id = $PLAN")

job_state() { sql "SELECT status || ' ' || attempt || ' ' || failures FROM jobs WHERE id = $JOB"; }
running_attempt() { [[ $(job_state) == "running $1 "* ]]; }

# --- SIGTERM: the job is released, the worker exits 0 ------------------------
hv_start_worker life-host --poll 1
A=${HV_WORKER_PIDS[-1]}
wait_for "worker A claims the job" 30 running_attempt 1
kill -TERM "$A"
t0=$SECONDS
wait "$A"
rc=$?
assert_eq "worker A exits 0 on SIGTERM" 0 "$rc"
assert_match "worker A stops within 10 s" '^[0-9]$' "$((SECONDS - t0))"
assert_eq "the job is back in the queue, no failure counted" "queued 1 0" "$(job_state)"
assert_match "the release reason is recorded" 'shut|signal|stop' "$(sql "SELECT error FROM jobs WHERE id = $JOB")"

# --- kill -9: the lease expires, the next claim takes attempt 3 ---------------
hv_start_worker life-host --poll 1
B=${HV_WORKER_PIDS[-1]}
wait_for "worker B claims the job" 30 running_attempt 2
kill -KILL "$B"
wait "$B" 2>/dev/null
sleep 4 # past the 3 s lease
hv_start_worker life-host --poll 1 --label rack=7 --label pool=life
C=${HV_WORKER_PIDS[-1]}
wait_for "worker C claims the job after the lease expired" 30 running_attempt 3
assert_eq "one failure counted for the lost worker" "running 3 1" "$(job_state)"

# --- the dead attempt's upload is refused and stores nothing -------------------
# Worker C took over B's credential from the state folder: the same worker,
# whose attempt 2 is stale now.
CRED=(-H "Authorization: Bearer $(jq -r .token "$HV_TMP/state/life-host/credential")")
assert_eq "the restarted worker kept its credential" \
    "$(sql "SELECT count(*) FROM workers WHERE ended_at IS NULL")" 1
assert_status 409 POST "/api/v1/jobs/$JOB/result" "${CRED[@]}" \
    --data-binary '{"attempt":2,"status":"ok","metrics":[{"name":"cpu.score","value":1}]}'
assert_eq "stale upload is a problem document" stale_attempt "$(json .code)"
assert_eq "no result stored" 0 "$(sql "SELECT count(*) FROM results")"
assert_status 409 POST "/api/v1/jobs/$JOB/heartbeat" "${CRED[@]}" \
    --data-binary '{"attempt":2}'

# --- three workers under one name were one target --------------------------------
assert_eq "re-registering keeps one target" 1 "$(sql "SELECT count(*) FROM targets")"
assert_eq "the target's facts are real" "$(nproc)" \
    "$(sql "SELECT facts->>'cpus' FROM targets WHERE name = 'life-host'")"

assert_eq "the worker's labels are the target's" '{"pool":"life","rack":"7"}' \
    "$(sql "SELECT labels::text FROM targets WHERE name = 'life-host'" | tr -d ' ')"
hv_stop_pid "$C" 10
assert_eq "worker C released the job too" "queued 3 1" "$(job_state)"
hv_finish
