#!/usr/bin/env bash
# A finished measurement reaches the server, whatever happens on the way:
# a result larger than the server takes is fitted (raw output cut after
# JSON escaping, with a marker); a refused result ends the job at once
# with the server's reason instead of a lapsed lease and re-runs; a
# result finished during a database outage longer than the lease is kept
# on disk and delivered when the database is back, also after the worker
# restarted; values no measurement can have are refused at upload and
# import, and the report survives extreme values already stored.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
HV_SERVER_ARGS=(--lease 3 --max-result-body 400000)
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }
pg_stop() { "$PG" stop "$HV_TMP/pg" >/dev/null; }
pg_start() { HVBENCH_PG_FAST=1 "$PG" start "$HV_TMP/pg" >/dev/null; }

# A site benchmark with three moods: a report of ~1 MB full of characters
# JSON must escape, a negative rate, and a run of 3 s.
cat >"$HV_TMP/bench.sh" <<'SH'
#!/bin/sh
case $1 in
big)
    echo "Score: 5.5"
    i=0
    while [ $i -lt 45000 ]; do
        printf 'line %d "quoted"\t\001\n' "$i"
        i=$((i + 1))
    done
    ;;
neg) echo "Score: -3" ;;
slow) sleep 3; echo "Score: 7.25" ;;
esac
SH
chmod +x "$HV_TMP/bench.sh"
bench() { # NAME MODE METRIC UNIT
    printf '"%s": {"kind": "cpu", "argv": ["%s", "%s"], "timeout": 60, "result": {"regex": "Score: (-?[0-9.]+)"}, "metric": "%s", "unit": "%s", "higher_is_better": true}' \
        "$1" "$HV_TMP/bench.sh" "$2" "$3" "$4"
}
echo "{\"benchmarks\": {$(bench big big site.big.score score), $(bench neg neg site.neg.mbps MB/s),
  $(bench slow slow site.slow.score score)}}" >"$HV_TMP/worker.json"
plan() { # NAME WORKLOAD...
    local name=$1 w list=
    shift
    for w in "$@"; do
        list+="${list:+,}{\"id\":\"$w\",\"kind\":\"cpu\",\"engine\":\"custom\",\"params\":{\"name\":\"$w\"}}"
    done
    echo "{\"name\":\"$name\",\"targets\":{\"host\":\"dl-host\"},\"workloads\":[$list],\"repetitions\":{\"min\":1}}"
}
job_of() { sql "SELECT id FROM jobs WHERE plan_id = $1 AND workload_id = '$2'"; }
plan_ended() { [[ $(sql "SELECT count(*) FROM jobs WHERE plan_id = $1 AND status IN ('queued', 'running')") == 0 ]]; }
running() { [[ $(sql "SELECT status FROM jobs WHERE id = $1") == running ]]; }

hv_start_worker dl-host --config "$HV_TMP/worker.json" --poll 1 --wait 2
WPID=${HV_WORKER_PIDS[-1]}
registered() { [[ $(sql "SELECT count(*) FROM targets WHERE name = 'dl-host'") == 1 ]]; }
wait_for "the worker registers" 30 registered

# --- a result past the body cap is fitted; a refused one fails with the reason -----------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan fit big neg)"
P1=$(json .id)
wait_for "the plan ends" 60 plan_ended "$P1"
BIG=$(job_of "$P1" big) NEG=$(job_of "$P1" neg)
assert_eq "the large result is stored on the first attempt" "done 1" \
    "$(sql "SELECT status || ' ' || attempt FROM jobs WHERE id = $BIG")"
assert_eq "its metric is intact" 5.5 \
    "$(sql "SELECT m.value FROM metrics m JOIN results r ON r.id = m.result_id WHERE r.job_id = $BIG")"
assert_eq "the raw output ends with the marker" t \
    "$(sql "SELECT raw LIKE '%raw output truncated to fit the server''s limits%' FROM results WHERE job_id = $BIG")"
assert_eq "observed says what was kept of what" t \
    "$(sql "SELECT (observed->'raw_truncated'->>'kept_bytes')::int < (observed->'raw_truncated'->>'of_bytes')::int AND (observed->'raw_truncated'->>'of_bytes')::int > 900000 FROM results WHERE job_id = $BIG")"
assert_eq "the refused result failed its job at once" "failed 1 0" \
    "$(sql "SELECT status || ' ' || attempt || ' ' || failures FROM jobs WHERE id = $NEG")"
assert_match "with the server's reason" 'refused this job.s result: .*must not be negative for a rate \(MB/s\)' \
    "$(sql "SELECT error FROM jobs WHERE id = $NEG")"

# --- a database outage past the lease, while the job finishes ------------------------------
hv_register dl-other
OTHER=("${W[@]}")
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan outage slow)"
P2=$(json .id)
SLOW=$(job_of "$P2" slow)
wait_for "the slow job runs" 30 running "$SLOW"
pg_stop
t0=$SECONDS
sleep 25 # the job ends 3 s in; its heartbeats and uploads fail for 22 s more
pg_start
hv_log "PostgreSQL was down $((SECONDS - t0)) s"
# Another worker's claim runs the lease expiry first: the attempt lapsed.
api POST /api/v1/jobs/claim "${OTHER[@]}" --data-binary '{}'
assert_eq "the lease lapsed during the outage" "queued 1" \
    "$(sql "SELECT status || ' ' || lapsed_attempt FROM jobs WHERE id = $SLOW")"
wait_for "the kept result is delivered after the outage" 60 plan_ended "$P2"
assert_eq "done on attempt 1, no failure counted" "done 1 0" \
    "$(sql "SELECT status || ' ' || attempt || ' ' || failures FROM jobs WHERE id = $SLOW")"
assert_eq "the measurement is the one stored" 7.25 \
    "$(sql "SELECT m.value FROM metrics m JOIN results r ON r.id = m.result_id WHERE r.job_id = $SLOW")"
assert_match "the worker said where it kept the result" 'kept in .*/outbox' \
    "$(cat "$HV_TMP/worker-dl-host.log")"

# --- the same, with the worker stopped and started again during the outage ----------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan restart slow)"
P3=$(json .id)
SLOW=$(job_of "$P3" slow)
wait_for "the slow job runs" 30 running "$SLOW"
pg_stop
kept() { [[ -f $HV_TMP/state/dl-host/outbox/$SLOW-1.json ]] && grep -q "job $SLOW: result upload failed" "$HV_TMP/worker-dl-host.log"; }
wait_for "the finished result waits in the outbox" 30 kept
hv_stop_pid "$WPID"
assert_eq "the stopped worker kept the result and its credential" "true true" \
    "$([[ -f $HV_TMP/state/dl-host/outbox/$SLOW-1.json ]] && echo true) $([[ -f $HV_TMP/state/dl-host/credential ]] && echo true)"
pg_start
api POST /api/v1/jobs/claim "${OTHER[@]}" --data-binary '{}'
hv_start_worker dl-host --config "$HV_TMP/worker.json" --poll 1 --wait 2
wait_for "the restarted worker delivers the kept result" 60 plan_ended "$P3"
assert_eq "done on attempt 1" "done 1 0" \
    "$(sql "SELECT status || ' ' || attempt || ' ' || failures FROM jobs WHERE id = $SLOW")"
assert_eq "the outbox is empty again" 0 "$(find "$HV_TMP/state/dl-host/outbox" -type f | wc -l)"
assert_eq "one worker held the target throughout" 1 \
    "$(sql "SELECT count(*) FROM workers w JOIN targets t ON t.id = w.target_id WHERE t.name = 'dl-host'")"

# --- values no measurement can have ---------------------------------------------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(jq -c '.targets.host = "dl-other" | .repetitions.min = 2' "$HV_ROOT/examples/quick.json")"
P4=$(json .id)
upload() { # VALUE [UNIT] -> STATUS of the result of the next claimed job
    api POST /api/v1/jobs/claim "${OTHER[@]}" --data-binary '{}'
    local job att
    job=$(json .job.id) att=$(json .job.attempt)
    api POST "/api/v1/jobs/$job/result" "${OTHER[@]}" --data-binary \
        "{\"attempt\":$att,\"status\":\"ok\",\"metrics\":[{\"name\":\"cpu.score\",\"value\":$1,\"unit\":\"${2:-score}\"}]}"
    LASTJOB=$job LASTATT=$att
}
for v in 1.4e154 1e200 -1e200 1.7e308; do
    upload "$v"
    assert_eq "$v is refused" 400 "$STATUS"
    assert_match "$v: named at its path" '/metrics/0/value' "$(json -c '[.errors[].path]')"
    api POST "/api/v1/jobs/$LASTJOB/release" "${OTHER[@]}" --data-binary "{\"attempt\":$LASTATT}"
done
upload -5 MB/s
assert_match "a negative rate is refused" 'must not be negative for a rate' "$(json -c .errors)"
api POST "/api/v1/jobs/$LASTJOB/release" "${OTHER[@]}" --data-binary "{\"attempt\":$LASTATT}"
api POST /api/v1/jobs/claim "${OTHER[@]}" --data-binary '{}'
LASTJOB=$(json .job.id) LASTATT=$(json .job.attempt)
api POST "/api/v1/jobs/$LASTJOB/result" "${OTHER[@]}" --data-binary \
    "{\"attempt\":$LASTATT,\"status\":\"ok\",\"metrics\":[{\"name\":\"a\",\"value\":1},{\"name\":\"a\",\"value\":2}]}"
assert_eq "a metric named twice is a bad request" "400 /metrics/1/name" "$STATUS $(json -r '.errors[0].path')"
api POST "/api/v1/jobs/$LASTJOB/release" "${OTHER[@]}" --data-binary "{\"attempt\":$LASTATT}"
upload 1000
assert_eq "a sane value is stored" 201 "$STATUS"
upload 1000
assert_eq "so is its repetition" 201 "$STATUS"
# Values stored before these checks existed must not break the report.
sql "UPDATE metrics SET value = CASE WHEN value = 1000 AND result_id = (SELECT min(result_id) FROM metrics WHERE name = 'cpu.score' AND value = 1000) THEN 1.7e308 ELSE 1e200 END WHERE name = 'cpu.score' AND result_id IN (SELECT r.id FROM results r JOIN jobs j ON j.id = r.job_id WHERE j.plan_id = $P4)" >/dev/null
assert_status 200 GET "/api/v1/plans/$P4/report"
assert_match "the mean of extreme values is computed" '^1\.7[0-9]*e\+308$|^8\.5[0-9]*e\+307$' \
    "$(json '.rows[] | select(.metric == "cpu.score") | .mean' | tr 'E' 'e')"

# --- imports are held to the same rule ----------------------------------------------------
bad=$(jq '.jobs[0].write.bw_bytes = -5000000 | .jobs[0].write.bw = -4883' "$HV_ROOT/tests/fixtures/fio/seq-write.json")
api POST /api/v1/imports "${S[@]}" --data-binary \
    "$(jq -n --arg out "$bad" '{tool: "fio", target: "imp-host", output: $out}')"
assert_eq "an output with a negative bandwidth is refused" 400 "$STATUS"
assert_match "naming the run and metric" '/runs/0/metrics/[0-9]+' "$(json -c '[.errors[].path]')"
assert_eq "nothing of it was stored" 0 "$(sql "SELECT count(*) FROM imports")"

hv_finish
