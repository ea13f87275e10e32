#!/usr/bin/env bash
# Many workers on several servers, correctness only (no timing is
# asserted; speed is bench/'s business): two hvbench-server processes on one
# database, 200 simulated workers (bench/hvload) spread over both, all
# claiming at once from one plan of 2000 jobs, each uploading a result with
# one sample. No job may be handed out twice, lost, or stored twice. The
# first server takes the claims waiting at one moment in one statement
# (--batch, server/batch.c), the second each claim alone (--batch 1): both
# ways hand out the same queue at once. (Results with samples are stored
# one by one either way.)
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
HVLOAD=$BUILD/bench/hvload
[[ -x $HVLOAD ]] || hv_skip "$HVLOAD not built (make bench-progs)"
hv_setup

JOBS=2000 WORKERS=200 TARGET=scale-host
sql() { "$PG" psql "$HV_TMP/pg" -- -X -Atqc "$1"; }

# --- a second server on the same database ------------------------------------
# It logs into server.log too, so hv_teardown's sanitizer check and failure
# report cover both.
URL1=$URL PID2='' URL2=''
# shellcheck disable=SC2317 # called by the EXIT trap
scale_teardown() {
    local rc=$?
    [[ -n $PID2 ]] && hv_stop_pid "$PID2" 10
    (exit "$rc")
    hv_teardown
}
trap scale_teardown EXIT
for attempt in 1 2 3; do
    port=$(hv_free_port) || hv_die "no free TCP port"
    "$SERVER" serve --db "$DB" --listen "127.0.0.1:$port" --web-dir "$HV_ROOT/web" \
        --batch 1 >>"$HV_TMP/server.log" 2>&1 &
    pid=$!
    for ((i = 0; i < 40; i++)); do
        if curl -fsS --max-time 2 -o /dev/null "http://127.0.0.1:$port/healthz" 2>/dev/null; then
            PID2=$pid URL2=http://127.0.0.1:$port
            break 2
        fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.5
    done
    hv_stop_pid "$pid" 2
    hv_log "second server did not come up on port $port (attempt $attempt)"
done
[[ -n $URL2 ]] || hv_die "the second server did not answer /healthz within 20 s"
hv_log "second server pid $PID2 at $URL2"

# --- 2000 jobs: 4 workloads x 500 repetitions on one host target --------------
hv_submit_cpu_plan scale "$TARGET" 500

# --- 200 workers, round-robin over both servers, all claiming at once ---------
# Bounded twice: hvload stops itself after 90 s, timeout kills it after 110 s.
HVBENCH_TOKEN=$WORKER_TOKEN timeout -k 5 110 "$HVLOAD" --server "$URL1" --server "$URL2" \
    --workers "$WORKERS" --target "$TARGET" --samples 1 --metrics 1 --heartbeat \
    --duration-limit 90 --json >"$HV_TMP/hvload.json" 2>"$HV_TMP/hvload.err"
rc=$?
sed 's/^/# /' "$HV_TMP/hvload.err"
BODY=$(cat "$HV_TMP/hvload.json")
hv_log "hvload: $BODY"
assert_eq "hvload exits 0 (no duplicate, no unexpected status, no lost request)" 0 "$rc"
assert_eq "every simulated worker registered" "$WORKERS" "$(json .registered)"
assert_eq "hvload was handed $JOBS jobs" "$JOBS" "$(json .jobs_claimed)"
assert_eq "hvload was handed $JOBS distinct jobs" "$JOBS" "$(json .distinct_jobs)"
assert_eq "no job id was handed out twice" 0 "$(json .duplicates)"
assert_eq "every upload was stored the first time (201)" "$JOBS" "$(json '.uploads["201"]')"
assert_eq "no upload answered 200, 409 or anything else" "0 0 0" \
    "$(json '[.uploads["200"], .uploads["409"], .uploads.other] | map(tostring) | join(" ")')"
assert_eq "every heartbeat answered 200" "$JOBS 0" \
    "$(json '[.heartbeats["200"], .heartbeats.other] | map(tostring) | join(" ")')"
assert_eq "no claim answered anything but 200 or 204" 0 "$(json .claims.other)"
assert_eq "no request went unanswered" 0 "$(json .errors)"
assert_eq "both servers handed out jobs, $JOBS in all" "true $JOBS" \
    "$(json '[(.servers | all(.claims > 0)), (.servers | map(.claims) | add)] | map(tostring) | join(" ")')"

# --- the database: every job done exactly once, nothing lost -------------------
assert_eq "every job of the plan is done" "$JOBS done" \
    "$(sql "SELECT count(*) || ' ' || string_agg(DISTINCT status, ',') FROM jobs WHERE plan_id = $PLAN")"
assert_eq "one result per job" "$JOBS $JOBS" \
    "$(sql "SELECT count(*) || ' ' || count(DISTINCT r.job_id) FROM results r JOIN jobs j ON j.id = r.job_id
            WHERE j.plan_id = $PLAN")"
assert_eq "no (job, attempt) with two results" 0 \
    "$(sql "SELECT count(*) FROM (SELECT 1 FROM results GROUP BY job_id, attempt HAVING count(*) > 1) d")"
assert_eq "each job was claimed once: the attempts add up to $JOBS, no failure" "$JOBS 0" \
    "$(sql "SELECT sum(attempt) || ' ' || sum(failures) FROM jobs WHERE plan_id = $PLAN")"
assert_eq "every result is attempt 1 and ok" "$JOBS" \
    "$(sql "SELECT count(*) FROM results WHERE attempt = 1 AND status = 'ok'")"
assert_eq "one metric and one sample stored per result" "$JOBS $JOBS" \
    "$(sql "SELECT (SELECT count(*) FROM metrics) || ' ' || (SELECT count(*) FROM samples)")"
assert_eq "no job left queued or running anywhere" 0 \
    "$(sql "SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')")"

# --- the first server batched its claims, the second did not ----------------------
# metric NAME URL: the value of a counter in URL's /metrics.
metric() { curl -fsS --max-time 5 "$2/metrics" | awk -v n="$1" '$1 == n {print $2}'; }
claims1=$(json '.servers[0].claims')
batched1=$(metric 'hvbench_batched_requests_total{kind="claim"}' "$URL1")
batches1=$(metric 'hvbench_batches_total{kind="claim"}' "$URL1")
hv_log "server 1: $claims1 jobs handed out, $batched1 claims in $batches1 statements"
assert_eq "every claim the first server answered with a job went through its batches" true \
    "$(jq -n "$batched1 >= $claims1")"
assert_eq "some statement of the first server took several claims" true \
    "$(jq -n "$batched1 > $batches1")"
assert_eq "the second server (--batch 1) took each claim alone" "0 0" \
    "$(metric 'hvbench_batched_requests_total{kind="claim"}' "$URL2") $(metric 'hvbench_batches_total{kind="claim"}' "$URL2")"

# --- both servers survived ------------------------------------------------------
for u in "$URL1" "$URL2"; do
    assert_eq "$u still answers /healthz" 200 \
        "$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' "$u/healthz")"
done
grep -E 'Z (error|warn) ' "$HV_TMP/server.log" | head -n 20 | sed 's/^/# /'
assert_eq "neither server logged an error" 0 "$(grep -cE 'Z error ' "$HV_TMP/server.log")"
hv_finish
