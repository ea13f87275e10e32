#!/usr/bin/env bash
# Smoke test of the whole chain: health, authentication, a quick plan run by
# one worker, its report, and migrate being safe to run twice.
set -uo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

hv_setup

assert_status 200 GET /healthz
assert_eq "healthz .status" ok "$(json .status)"

assert_status 200 GET /readyz
assert_eq "readyz .status" ready "$(json .status)"
schema=$(json .schema_version)
assert_match "readyz .schema_version is a positive number" '^[1-9][0-9]*$' "$schema"

# Migrations already applied: a second run does nothing and succeeds.
"$SERVER" migrate --db "$DB" >>"$HV_TMP/migrate.log" 2>&1
assert_eq "second migrate exits 0" 0 "$?" || hv_tail "$HV_TMP/migrate.log"
api GET /readyz
assert_eq "schema_version after the second migrate" "$schema" "$(json .schema_version)"

# The quick example, pinned to our worker and shortened.
plan=$(jq '.targets.host = "smoke-host" | .workloads[0].params.seconds = 1' \
    "$HV_ROOT/examples/quick.json") || hv_die "cannot read examples/quick.json"

assert_status 401 POST /api/v1/plans -H 'Content-Type: application/json' --data-binary "$plan"
assert_match "401 is a problem document" 'application/problem\+json' "$CONTENT_TYPE"
assert_eq "401 problem .status" 401 "$(json .status)"

assert_status 201 POST /api/v1/plans -H "Authorization: Bearer $SUBMIT_TOKEN" \
    -H 'Content-Type: application/json' --data-binary "$plan"
assert_eq "plan .id is a number" number "$(json '.id | type')"
ID=$(json .id)
assert_match "plan id" '^[0-9]+$' "$ID" || hv_finish

hv_start_worker smoke-host

# True once the plan has ended, however it ended; the status is checked after.
# shellcheck disable=SC2317 # called through wait_for
plan_ended() {
    api GET "/api/v1/plans/$ID"
    [[ $(json .status) =~ ^(done|failed|cancelled)$ ]]
}
wait_for "plan $ID ends" 120 plan_ended
assert_eq "plan $ID .status" "done" "$(json .status)"
# The worker claims its first job; each result it uploads brings the next
# (?claim=true), so its second and third jobs came with its results.
with_result=$(curl -fsS --max-time 5 "$URL/metrics" |
    awk '$1 == "hvbench_job_claims_total{outcome=\"with_result\"}" {print $2}')
assert_eq "the worker's 2nd and 3rd jobs came with its results' answers" 2 "$with_result"

# The cpu workload reports several metrics; the row order is not part of the
# API, so the cpu.score row is picked by name.
assert_status 200 GET "/api/v1/plans/$ID/report"
score='[.rows[] | select(.metric == "cpu.score")][0]'
assert_eq "report has a cpu.score row" cpu.score "$(json "$score.metric")"
assert_eq "cpu.score .n" 3 "$(json "$score.n")"
assert_eq "cpu.score .mean > 0" true "$(json "$score.mean > 0")"

hv_finish
