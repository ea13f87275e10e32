#!/usr/bin/env bash
# Bad input is stopped at the edge with a 400 naming what is wrong, never
# passed on to PostgreSQL to come back as a 500: query values that are not
# UTF-8 (every argument of every endpoint that reads one), and times that
# look like ISO 8601 but name no real moment (Feb 31, year 0000, second 61,
# a leap second) in query arguments, imports' "at" and results'
# "started_at"/"finished_at". The limits are exact: real but unusual values
# right beside them are accepted. A NUL byte (%00) never cuts a value
# short: in a query argument it is a 400 naming it, in a path a 404.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN" -H 'Content-Type: application/json')
W=(-H "Authorization: Bearer $WORKER_TOKEN" -H 'Content-Type: application/json')
R=(-H "Authorization: Bearer $READ_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }

# bad400 WHAT PARAM METHOD PATH [curl args]: 400 invalid_request, and the
# problem's errors name PARAM.
bad400() {
    local what=$1 param=$2
    api "$3" "$4" "${@:5}"
    assert_eq "$what: 400" 400 "$STATUS" || echo "# body: ${BODY:0:300}"
    assert_eq "$what: names $param" "invalid_request $param" \
        "$(json '"\(.code) \([.errors[]?.path] | join(","))"')"
}

# A plan and a job to read, so the job and results endpoints answer.
api POST /api/v1/plans "${S[@]}" --data-binary \
    "$(jq '.targets.host = "edge-host" | .repetitions.min = 1' "$HV_ROOT/examples/quick.json")"
assert_eq "a plan to read" 201 "$STATUS"
P=$(json .id)
J=$(sql "SELECT id FROM jobs WHERE plan_id = $P LIMIT 1")

# --- query values that are not UTF-8 -------------------------------------------
bad400 "plans ?name=%ff%fe" name GET '/api/v1/plans?name=%ff%fe' "${R[@]}"
bad400 "plans ?target=%c0%af (overlong /)" target GET '/api/v1/plans?target=%c0%af' "${R[@]}"
bad400 "plans ?status=%ff" status GET '/api/v1/plans?status=%ff' "${R[@]}"
bad400 "plans ?since=%ff" since GET '/api/v1/plans?since=%ff' "${R[@]}"
bad400 "plans ?limit=%ff" limit GET '/api/v1/plans?limit=%ff' "${R[@]}"
bad400 "plans ?cursor=%ff" cursor GET '/api/v1/plans?cursor=%ff' "${R[@]}"
bad400 "plans ?name=%ed%a0%80 (a surrogate)" name GET '/api/v1/plans?name=%ed%a0%80' "${R[@]}"
bad400 "plans ?name=%f4%90%80%80 (past U+10FFFF)" name GET '/api/v1/plans?name=%f4%90%80%80' "${R[@]}"
bad400 "plans ?name=%e2%82 (cut short)" name GET '/api/v1/plans?name=%e2%82' "${R[@]}"
bad400 "plans ?name=ok%80 (a lone continuation byte)" name GET '/api/v1/plans?name=ok%80' "${R[@]}"
bad400 "two bad arguments" target,name GET '/api/v1/plans?name=%ff&target=%fe' "${R[@]}"
bad400 "targets ?label=%ff=%fe" label GET '/api/v1/targets?label=%ff=%fe' "${R[@]}"
bad400 "targets ?kind=%ff" kind GET '/api/v1/targets?kind=%ff' "${R[@]}"
bad400 "plan jobs ?status=%ff" status GET "/api/v1/plans/$P/jobs?status=%ff" "${R[@]}"
bad400 "plan jobs ?cursor=%c0%80" cursor GET "/api/v1/plans/$P/jobs?cursor=%c0%80" "${R[@]}"
bad400 "job results ?samples=%ff" samples GET "/api/v1/jobs/$J/results?samples=%ff" "${R[@]}"
bad400 "job results ?raw=%fe" raw GET "/api/v1/jobs/$J/results?raw=%fe" "${R[@]}"
bad400 "submit ?dry_run=%ff" dry_run POST '/api/v1/plans?dry_run=%ff' "${S[@]}" --data-binary '{}'

# Real UTF-8 beyond ASCII is text like any other.
assert_status 200 GET '/api/v1/plans?name=%c3%a9t%c3%a9' "${R[@]}"
assert_eq "a two-byte name filters (no match)" 0 "$(json '.items | length')"
assert_status 200 GET '/api/v1/plans?name=%f0%9f%98%80' "${R[@]}"
assert_status 200 GET '/api/v1/plans?target=%e2%82%ac' "${R[@]}"
assert_status 200 GET '/api/v1/targets?label=r%c3%b4le=%c3%a9' "${R[@]}"
assert_eq "a UTF-8 label filters (no match)" 0 "$(json '.items | length')"

# --- times that name no real moment -------------------------------------------------
for since in 2026-02-31 2026-02-29 1900-02-29 2026-04-31 0000-01-01 2026-13-01 2026-00-10 \
    2026-11-29T23:59:61Z 2016-12-31T23:59:60Z 2026-11-29T24:00:00Z 2026-11-29T23:60:00Z \
    2026-11-29T18:40:12.1234567890Z -001-01-01 12026-01-01; do
    bad400 "since=$since" since GET "/api/v1/plans?since=$since" "${R[@]}"
done
for since in 2024-02-29 2000-02-29 0001-01-01T00:00:00Z 9999-12-31T23:59:59.999999999Z \
    2026-11-29T18:40:12%2B00:00; do
    assert_status 200 GET "/api/v1/plans?since=$since" "${R[@]}"
done
assert_status 200 GET '/api/v1/plans?since=0001-01-01' "${R[@]}"
assert_eq "since 0001-01-01 finds the plan" "$P" "$(json '[.items[].id] | join(",")')"
assert_status 200 GET '/api/v1/plans?since=9999-12-31' "${R[@]}"
assert_eq "since 9999-12-31 finds nothing" 0 "$(json '.items | length')"

# Imports' "at".
body() { # AT
    jq -n --arg at "$1" --rawfile out "$HV_ROOT/tests/fixtures/sysbench/cpu-threads2-prime10000.txt" \
        '{tool: "sysbench", target: "edge-import", output: $out, at: $at}'
}
plans_before=$(sql "SELECT count(*) FROM plans")
for at in 2026-02-31 0000-01-01 2025-06-30T23:59:61Z 2016-12-31T23:59:60Z; do
    bad400 "import at=$at" /at POST /api/v1/imports "${S[@]}" --data-binary "$(body "$at")"
done
assert_eq "no import was stored" "$plans_before" "$(sql "SELECT count(*) FROM plans")"
assert_status 201 POST /api/v1/imports "${S[@]}" --data-binary "$(body 2024-02-29T12:00:00Z)"
assert_eq "a leap day is a real day" "2024-02-29 12:00:00+00" \
    "$(sql "SELECT r.started_at AT TIME ZONE 'UTC' || '+00' FROM results r JOIN jobs j ON
            j.id = r.job_id WHERE j.plan_id = $(json .plan_id)")"

# Results' "started_at" and "finished_at", on a job really claimed.
hv_register edge-host host '{"cpus":1}'
api POST /api/v1/jobs/claim "${W[@]}" --data-binary '{}'
assert_eq "a job claimed" 200 "$STATUS"
CJ=$(json .job.id)
result() { # STARTED_AT FINISHED_AT
    jq -n --arg s "$1" --arg f "$2" '{attempt: 1, status: "ok", started_at: $s, finished_at: $f,
        metrics: [{name: "cpu.score", value: 1, unit: "score", higher_is_better: true}]}'
}
for at in 2026-02-31T10:00:00Z 0000-01-01T00:00:00Z 2026-11-29T23:59:61Z; do
    bad400 "result started_at=$at" /started_at POST "/api/v1/jobs/$CJ/result" "${W[@]}" \
        --data-binary "$(result "$at" 2026-11-29T10:00:00Z)"
done
bad400 "result finished_at=2026-06-31T10:00:00Z" /finished_at POST "/api/v1/jobs/$CJ/result" \
    "${W[@]}" --data-binary "$(result 2026-11-29T10:00:00Z 2026-06-31T10:00:00Z)"
assert_eq "nothing was stored for the job" "running 0" \
    "$(sql "SELECT status || ' ' || (SELECT count(*) FROM results WHERE job_id = $CJ) FROM jobs
            WHERE id = $CJ")"
assert_status 201 POST "/api/v1/jobs/$CJ/result" "${W[@]}" \
    --data-binary "$(result 2024-02-29T23:59:59.5Z 2024-03-01T00:00:00Z)"

# --- a NUL byte: never cut short ---------------------------------------------------
bad400 "plans ?name=forge%00x" name GET '/api/v1/plans?name=forge%00x' "${R[@]}"
assert_eq "as a problem document" application/problem+json "$CONTENT_TYPE"
bad400 "a NUL at the end of a value" status GET "/api/v1/plans/$P/jobs?status=done%00" "${R[@]}"
bad400 "a NUL in an argument's name" na GET '/api/v1/plans?na%00me=x' "${R[@]}"
bad400 "a NUL in a posted call's argument" dry_run POST '/api/v1/plans?dry_run=true%00' \
    "${S[@]}" --data-binary '{}'
assert_status 200 GET '/api/v1/plans?name=forge%2500x' "${R[@]}"
assert_eq "an escaped percent sign is text: %00 literally, no match" 0 "$(json '.items | length')"
for path in '/index.html%00.js' '/index.html%00' "/api/v1/plans/$P%00" '/healthz%00'; do
    assert_status 404 GET "$path"
    assert_eq "$path: not_found as a problem document" "application/problem+json not_found" \
        "$CONTENT_TYPE $(json -r .code)"
done
assert_status 200 GET /index.html

assert_eq "the server logged no failed statement" 0 \
    "$(grep -c 'database:' "$HV_TMP/server.log")"

hv_finish
