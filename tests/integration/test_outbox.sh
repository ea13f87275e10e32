#!/usr/bin/env bash
# A worker's log tells the truth about a result it could not deliver: with
# the server gone and the state disk full, a worker stopped with SIGTERM
# says the result is lost (and its outbox is empty), never that it is
# kept; with room on the disk it says kept, the outbox holds the result,
# and the next start delivers it. The full disk is a 64 KiB tmpfs.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }

SMALL=$HV_TMP/small
mkdir -p "$SMALL"
mount -t tmpfs -o size=64k,mode=0700 tmpfs "$SMALL" 2>"$HV_TMP/mount.err" ||
    hv_skip "cannot mount a 64 KiB tmpfs for a full state disk (needs root): $(cat "$HV_TMP/mount.err")"
# Unmounted before lib.sh's teardown removes the temp dir; the workers are
# stopped first so nothing holds it.
outbox_teardown() {
    local rc=$? pid
    for pid in "${HV_WORKER_PIDS[@]}"; do hv_stop_pid "$pid" 10; done
    umount "$SMALL" 2>/dev/null || umount -l "$SMALL"
    (exit "$rc")
    hv_teardown
}
trap outbox_teardown EXIT

# A site benchmark that takes 5 s: time to stop the server while it runs.
cat >"$HV_TMP/bench.sh" <<'SH'
#!/bin/sh
sleep 5
echo "Score: 7.25"
SH
chmod +x "$HV_TMP/bench.sh"
echo "{\"benchmarks\": {\"slow\": {\"kind\": \"cpu\", \"argv\": [\"$HV_TMP/bench.sh\"], \"timeout\": 60,
  \"result\": {\"regex\": \"Score: ([0-9.]+)\"}, \"metric\": \"site.slow.score\", \"unit\": \"score\",
  \"higher_is_better\": true}}}" >"$HV_TMP/worker.json"
plan() { # HOST
    echo "{\"name\":\"outbox\",\"targets\":{\"host\":\"$1\"},\"repetitions\":{\"min\":1},
      \"workloads\":[{\"id\":\"slow\",\"kind\":\"cpu\",\"engine\":\"custom\",\"params\":{\"name\":\"slow\"}}]}"
}
job_of() { sql "SELECT id FROM jobs WHERE plan_id = $1"; }
running() { [[ $(sql "SELECT status FROM jobs WHERE id = $1") == running ]]; }
registered() { [[ $(sql "SELECT count(*) FROM targets WHERE name = '$1'") == 1 ]]; }
said() { grep -qE -- "$2" "$HV_TMP/worker-$1.log"; }
# A child that exited stays a zombie until waited for: kill -0 cannot tell.
gone() { [[ ! -e /proc/$1 ]] || grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }
server_up() { curl -fsS --max-time 2 -o /dev/null "$URL/healthz"; }

# full-host keeps its state on the small disk, kept-host on the big one.
hv_start_worker full-host --config "$HV_TMP/worker.json" --poll 1 --wait 2 --state-dir "$SMALL"
FULL_PID=${HV_WORKER_PIDS[-1]}
hv_start_worker kept-host --config "$HV_TMP/worker.json" --poll 1 --wait 2
KEPT_PID=${HV_WORKER_PIDS[-1]}
wait_for "both workers register" 30 eval 'registered full-host && registered kept-host'
assert_eq "the credential is on the small disk" true \
    "$([[ -f $SMALL/full-host/credential ]] && echo true)"

# Fill the small disk: the result cannot be written there.
dd if=/dev/zero of="$SMALL/fill" bs=4k 2>/dev/null
assert_eq "the small disk is full" fail "$(echo x 2>/dev/null >"$SMALL/probe" && echo ok || echo fail)"

assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan full-host)"
FULL_JOB=$(job_of "$(json .id)")
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan kept-host)"
KEPT_PLAN=$(json .id)
KEPT_JOB=$(job_of "$KEPT_PLAN")
wait_for "both jobs run" 30 eval "running $FULL_JOB && running $KEPT_JOB"
# The server goes before the jobs end: their uploads find nobody.
hv_stop_pid "$HV_SERVER_PID"
wait_for "both results wait for the server" 30 eval \
    "said full-host 'job $FULL_JOB: result upload failed' && said kept-host 'job $KEPT_JOB: result upload failed'"
assert_match "full-host says it cannot keep the result" \
    "job $FULL_JOB: cannot keep the result in [^ ]*/full-host/outbox \(No space left on device\); it is held in memory only" \
    "$(cat "$HV_TMP/worker-full-host.log")"
assert_match "and that the failed upload left it only in memory" \
    "job $FULL_JOB: result upload failed \([^)]*\); the result is only in memory" \
    "$(cat "$HV_TMP/worker-full-host.log")"

kill -TERM "$FULL_PID" "$KEPT_PID"
wait_for "both workers stop" 40 eval "gone $FULL_PID && gone $KEPT_PID"
wait "$FULL_PID" "$KEPT_PID" 2>/dev/null

# --- no room: the log says lost, never kept ---------------------------------------------
FULL_LOG=$(cat "$HV_TMP/worker-full-host.log")
assert_match "full-host tried to deliver it while stopping" \
    "job $FULL_JOB: shutting down with a result that is only in memory \(it cannot be kept in [^ ]*/outbox: No space left on device\); trying to deliver it for up to 10 s" \
    "$FULL_LOG"
assert_match "full-host says the result is lost, and why" \
    "result of job $FULL_JOB lost: could not keep it in [^ ]*/full-host/outbox \(No space left on device\) and the server did not take it \([^)]+\); the job will run again" \
    "$FULL_LOG"
assert_eq "full-host never says it kept the result" 0 \
    "$(grep -cE 'is (now )?kept in|sent at the next start' <<<"$FULL_LOG")"
assert_eq "its outbox is empty" "" "$(find "$SMALL/full-host/outbox" -type f)"

# --- room: the log says kept, the outbox holds it, the next start delivers it -----------
KEPT_LOG=$(cat "$HV_TMP/worker-kept-host.log")
assert_match "kept-host says the result is kept for the next start" \
    "job $KEPT_JOB: shutting down before the server took the result; it is kept in [^ ]*/kept-host/outbox and sent at the next start" \
    "$KEPT_LOG"
assert_eq "kept-host does not say lost" 0 "$(grep -c 'lost' <<<"$KEPT_LOG")"
assert_eq "its outbox holds the measurement" "1 7.25" \
    "$(jq -r '"\(.attempt) \(.metrics[0].value)"' "$HV_TMP/state/kept-host/outbox/$KEPT_JOB-1.json")"

# The server comes back at the same address (the kept credential names it).
"$SERVER" serve --db "$DB" --listen "127.0.0.1:$PORT" --web-dir "$HV_ROOT/web" \
    "${HV_SERVER_ARGS[@]}" >>"$HV_TMP/server.log" 2>&1 &
HV_SERVER_PID=$!
wait_for "the server is back on port $PORT" 20 server_up
hv_start_worker kept-host --config "$HV_TMP/worker.json" --poll 1 --wait 2
delivered() { [[ $(sql "SELECT status || ' ' || attempt || ' ' || failures FROM jobs WHERE id = $1") == "done 1 0" ]]; }
wait_for "the next start delivers the kept result: done on attempt 1" 60 delivered "$KEPT_JOB"
assert_eq "the stored measurement is the kept one" 7.25 \
    "$(sql "SELECT m.value FROM metrics m JOIN results r ON r.id = m.result_id WHERE r.job_id = $KEPT_JOB")"
assert_match "the worker says so" "job $KEPT_JOB attempt 1: kept result delivered" \
    "$(cat "$HV_TMP/worker-kept-host.log")"
assert_eq "the outbox is empty again" "" "$(find "$HV_TMP/state/kept-host/outbox" -type f)"
assert_eq "the lost result never reached the server" 0 \
    "$(sql "SELECT count(*) FROM results WHERE job_id = $FULL_JOB")"

hv_finish
