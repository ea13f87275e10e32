#!/usr/bin/env bash
# Results are stored whole or not at all: a server killed in the middle of
# an upload stores nothing, the worker's retry after a restart stores the
# result once with every sample, and a retried upload after a lost reply
# stores nothing twice.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }

jq '.targets.host = "res-host" | .repetitions.min = 1' "$HV_ROOT/examples/quick.json" >"$HV_TMP/plan.json"
assert_status 201 POST /api/v1/plans -H "Authorization: Bearer $SUBMIT_TOKEN" --data-binary @"$HV_TMP/plan.json"
hv_register res-host
TID=$TARGET
api POST /api/v1/jobs/claim "${W[@]}" --data-binary "{\"target_id\":$TID}"
JOB=$(json .job.id)
ATT=$(json .job.attempt)

# A result of 12,000 per-second samples (about 700 KB).
N=12000
jq -n --argjson n "$N" --argjson att "$ATT" '{attempt: $att, status: "ok",
    started_at: "2026-11-29T10:00:00Z", finished_at: "2026-11-29T13:20:00Z",
    metrics: [{name: "cpu.score", value: 1000.5, unit: "score", higher_is_better: true}],
    samples: [range($n) | {metric: "cpu.score", t: (. + 1), value: (1000 + (. % 7))}],
    raw: "synthetic"}' >"$HV_TMP/result.json"
hv_log "result body: $(wc -c <"$HV_TMP/result.json") bytes"

# The upload crawls at 50 KB/s; the server dies under it.
curl -s -o /dev/null --limit-rate 50k -X POST "${W[@]}" --data-binary @"$HV_TMP/result.json" \
    "$URL/api/v1/jobs/$JOB/result" &
UPLOAD=$!
sleep 2
kill -KILL "$HV_SERVER_PID"
wait "$HV_SERVER_PID" 2>/dev/null
wait "$UPLOAD"
assert_eq "the interrupted upload failed at the client" true "$([[ $? -ne 0 ]] && echo true)"
assert_eq "nothing of it was stored" "0|0|0" \
    "$(sql 'SELECT (SELECT count(*) FROM results), (SELECT count(*) FROM metrics), (SELECT count(*) FROM samples)')"

hv_start_server
api POST "/api/v1/jobs/$JOB/result" "${W[@]}" --data-binary @"$HV_TMP/result.json"
assert_eq "the retry after the restart is stored" 201 "$STATUS"
assert_eq "stored: true" true "$(json .stored)"
assert_eq "every sample, once" "1|1|$N" \
    "$(sql 'SELECT (SELECT count(*) FROM results), (SELECT count(*) FROM metrics), (SELECT count(*) FROM samples)')"
assert_eq "sample values intact" "$(( (N - 1) % 7 + 1000 ))" \
    "$(sql "SELECT value FROM samples WHERE t = $N")"

# The reply was lost: the worker uploads the same attempt again.
api POST "/api/v1/jobs/$JOB/result" "${W[@]}" --data-binary @"$HV_TMP/result.json"
assert_eq "a repeated upload answers 200" 200 "$STATUS"
assert_eq "stored: false" false "$(json .stored)"
assert_eq "nothing stored twice" "1|$N" \
    "$(sql 'SELECT (SELECT count(*) FROM results), (SELECT count(*) FROM samples)')"
assert_eq "the job is done" done "$(sql "SELECT status FROM jobs WHERE id = $JOB")"
assert_status 200 GET "/api/v1/jobs/$JOB/results"
assert_eq "the API serves all samples" "$N" "$(json '.items[0].samples | length')"
hv_finish
