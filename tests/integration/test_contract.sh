#!/usr/bin/env bash
# The REST contract: api/openapi.json is what `make api` makes of
# api/openapi.yaml, redocly lint finds no error in it, the server serves
# exactly it at /api/v1/openapi.json, and every answer the integration tests
# got (tests/run.sh logs them to $HV_CONTRACT_LOG and runs this test last)
# conforms to it: documented status, content type and body schema
# (tests/contract/check-responses.mjs). Run alone, the test checks the
# answers to its own requests, which cover every endpoint the server has.
# Needs node and npm (the packages come from tests/contract/package-lock.json).
set -uo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

CONTRACT_DIR=$HV_ROOT/tests/contract

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    hv_missing_tool "node and npm needed for the contract test"
fi
hv_npm_install "$CONTRACT_DIR"

# --- the document ---------------------------------------------------------------
fresh=$(mktemp "$HV_ROOT/tests/tmp/openapi.XXXX.json")
(cd "$CONTRACT_DIR" && node yaml2json.mjs "$HV_ROOT/api/openapi.yaml" "$fresh")
assert_eq "api/openapi.yaml converts to JSON" 0 "$?"
if cmp -s "$fresh" "$HV_ROOT/api/openapi.json"; then
    hv_check 1 "api/openapi.json is up to date with api/openapi.yaml"
else
    hv_check 0 "api/openapi.json is up to date with api/openapi.yaml" "run 'make api' and commit"
    diff -u "$HV_ROOT/api/openapi.json" "$fresh" | head -n 40
fi
rm -f -- "$fresh"

# The Node 20 notice of redocly is not a finding; telemetry stays off.
lint=$(cd "$CONTRACT_DIR" && REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
    timeout 120 node_modules/.bin/redocly lint --config redocly.yaml --format=stylish \
    ../../api/openapi.yaml 2>&1)
rc=$?
grep -v -e '[║╔╚]' <<<"$lint" | sed '/^$/d'
assert_eq "redocly lint api/openapi.yaml finds no error" 0 "$rc"

# --- the served document ------------------------------------------------------------
hv_setup
# Run alone (not from tests/run.sh), the test checks its own requests.
if [[ -z ${HV_CONTRACT_LOG:-} ]]; then
    HV_CONTRACT_LOG=$HV_TMP/contract.jsonl
fi
: >>"$HV_CONTRACT_LOG"
own_start=$(wc -l <"$HV_CONTRACT_LOG")

assert_status 200 GET /api/v1/openapi.json
assert_eq "openapi.json content type" application/json "$CONTENT_TYPE"
served=$(jq -S . <<<"$BODY" 2>/dev/null)
if [[ -n $served && $served == "$(jq -S . "$HV_ROOT/api/openapi.json")" ]]; then
    hv_check 1 "the server serves api/openapi.json as it is"
else
    hv_check 0 "the server serves api/openapi.json as it is" "rebuild the server (make)"
    diff -u <(jq -S . "$HV_ROOT/api/openapi.json") <(printf '%s\n' "$served") | head -n 40
fi
# Without a token, also when GETs need one.
assert_status 200 GET /api/v1/openapi.json -H "Authorization: Bearer $READ_TOKEN"

# --- requests of our own: every endpoint the server has, good and bad ----------------
AUTH_S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
AUTH_W=(-H "Authorization: Bearer $WORKER_TOKEN")
JSON=(-H 'Content-Type: application/json')
plan=$(jq -c '.targets.host = "contract-host" | .workloads[0].params.seconds = 1
    | .repetitions.min = 1' "$HV_ROOT/examples/quick.json") || hv_die "cannot read examples/quick.json"

assert_status 200 GET /healthz
assert_status 200 GET /readyz

assert_status 200 POST '/api/v1/plans?dry_run=1' "${AUTH_S[@]}" "${JSON[@]}" --data-binary "$plan"
assert_eq "dry run: one job" 1 "$(json .counts.jobs)"
assert_status 201 POST /api/v1/plans "${AUTH_S[@]}" "${JSON[@]}" --data-binary "$plan" \
    -D "$HV_TMP/headers"
PLAN=$(json .id)
assert_match "201 has a Location header naming the plan" \
    "^Location: /api/v1/plans/$PLAN\$" "$(tr -d '\r' <"$HV_TMP/headers" | grep -i '^Location:')"
assert_status 400 POST /api/v1/plans "${AUTH_S[@]}" --data-binary '{"name": 1}'
assert_status 400 POST /api/v1/plans "${AUTH_S[@]}" --data-binary '{"name":'
assert_status 401 POST /api/v1/plans --data-binary "$plan"
assert_status 403 POST /api/v1/plans -H "Authorization: Bearer $READ_TOKEN" --data-binary "$plan"

assert_status 200 GET /api/v1/plans
assert_status 200 GET '/api/v1/plans?limit=1' -H "Authorization: Bearer $READ_TOKEN"
assert_status 400 GET '/api/v1/plans?limit=501'
assert_status 401 GET /api/v1/plans -H "Authorization: Bearer hvb_$(printf '0%.0s' {1..64})"
assert_status 200 GET "/api/v1/plans/$PLAN"
assert_status 404 GET /api/v1/plans/987654321
assert_status 200 GET "/api/v1/plans/$PLAN/report"

# The worker protocol, by hand: register, claim, heartbeat, release, claim
# again, upload twice, then no more work.
assert_status 200 POST /api/v1/workers/register "${AUTH_W[@]}" --data-binary \
    '{"name":"contract-host","kind":"host","facts":{"cpus":1},"fingerprint":"0123456789abcdef"}'
TARGET=$(json .target_id)
CRED=(-H "Authorization: Bearer $(json .worker_token)")
assert_status 409 POST /api/v1/workers/register "${AUTH_W[@]}" --data-binary \
    '{"name":"contract-host","kind":"host","facts":{"cpus":1}}'
assert_status 200 POST /api/v1/workers/register "${CRED[@]}" --data-binary \
    '{"name":"contract-host","kind":"host","facts":{"cpus":1},"fingerprint":"0123456789abcdef"}'
assert_status 403 POST /api/v1/jobs/claim "${AUTH_W[@]}" --data-binary '{}'
assert_status 400 POST /api/v1/workers/register "${AUTH_W[@]}" --data-binary '{"name":""}'
assert_status 403 POST /api/v1/workers/register "${AUTH_S[@]}" --data-binary '{}'
assert_status 200 POST /api/v1/jobs/claim "${CRED[@]}" --data-binary "{\"target_id\":$TARGET}"
JOB=$(json .job.id)
assert_status 200 POST "/api/v1/jobs/$JOB/heartbeat" "${CRED[@]}" --data-binary '{"attempt":1}'
assert_eq "heartbeat: not cancelled" false "$(json .cancel)"
assert_status 403 POST "/api/v1/jobs/$JOB/heartbeat" "${CRED[@]}" --data-binary '{"attempt":9}'
assert_status 200 POST "/api/v1/jobs/$JOB/release" "${CRED[@]}" \
    --data-binary '{"attempt":1,"reason":"contract test"}'
assert_status 409 POST "/api/v1/jobs/$JOB/release" "${CRED[@]}" --data-binary '{"attempt":1}'
assert_status 200 POST /api/v1/jobs/claim "${CRED[@]}" --data-binary "{\"target_id\":$TARGET}"
assert_eq "the released job comes back as attempt 2" "$JOB 2" "$(json '"\(.job.id) \(.job.attempt)"')"
result='{"attempt":2,"status":"ok","started_at":"2026-11-29T18:40:12.5Z",
  "finished_at":"2026-11-29T18:40:13.5Z","observed":{"copies":1},
  "metrics":[{"name":"cpu.score","value":1523.2,"unit":"score","higher_is_better":true}],
  "samples":[{"metric":"cpu.score","t":1.0,"value":1519.0}]}'
assert_status 201 POST "/api/v1/jobs/$JOB/result" "${CRED[@]}" --data-binary "$result"
assert_status 200 POST "/api/v1/jobs/$JOB/result" "${CRED[@]}" --data-binary "$result"
assert_eq "a repeated upload stores nothing" false "$(json .stored)"
assert_status 400 POST "/api/v1/jobs/$JOB/result" "${CRED[@]}" \
    --data-binary '{"attempt":2,"status":"ok","metrics":[]}'
assert_status 404 POST /api/v1/jobs/987654321/result "${CRED[@]}" \
    --data-binary '{"attempt":1,"status":"error","error":"x"}'
assert_status 204 POST /api/v1/jobs/claim "${CRED[@]}" --data-binary "{\"target_id\":$TARGET}"

# One repetition: the report's interval fields are null.
assert_status 200 GET "/api/v1/plans/$PLAN/report"
assert_eq "report: n = 1 has no interval" "1 null" \
    "$(json '.rows[] | select(.metric == "cpu.score") | "\(.n) \(.ci95_low)"')"
assert_status 200 GET "/api/v1/plans/$PLAN"
assert_eq "plan done" "done" "$(json .status)"

# Reading jobs, results, targets and the catalogue.
assert_status 200 GET "/api/v1/plans/$PLAN/jobs"
assert_status 200 GET "/api/v1/plans/$PLAN/jobs?status=done&limit=1"
assert_status 400 GET "/api/v1/plans/$PLAN/jobs?limit=0"
assert_status 404 GET /api/v1/plans/987654321/jobs
assert_status 200 GET "/api/v1/jobs/$JOB"
assert_status 404 GET /api/v1/jobs/987654321
assert_status 200 GET "/api/v1/jobs/$JOB/results"
assert_eq "results: the one upload" "1 2" "$(json '"\(.items | length) \(.items[0].attempt)"')"
assert_status 200 GET "/api/v1/jobs/$JOB/results?samples=0"
assert_status 200 GET /api/v1/targets
assert_status 200 GET '/api/v1/targets?kind=host'
assert_status 400 GET '/api/v1/targets?kind=vm'
assert_status 200 GET "/api/v1/targets/$TARGET"
assert_status 404 GET /api/v1/targets/987654321
assert_status 200 GET /api/v1/catalog

# History, facts versions, change points and comparisons.
assert_status 200 GET "/api/v1/targets/$TARGET/history?metric=cpu.score&max_points=10"
assert_status 400 GET "/api/v1/targets/$TARGET/history"
assert_status 200 GET "/api/v1/targets/$TARGET/facts"
assert_status 404 POST /api/v1/change-points/987654321/ack "${AUTH_S[@]}"
assert_status 200 GET "/api/v1/compare?a=$PLAN&b=$PLAN:default"
assert_status 400 GET "/api/v1/compare?a=$PLAN"

# Plan lists: filters and pages.
assert_status 201 POST /api/v1/plans "${AUTH_S[@]}" --data-binary "$plan" -H 'Idempotency-Key: contract-1'
api POST /api/v1/plans "${AUTH_S[@]}" --data-binary "$plan" -H 'Idempotency-Key: contract-1' \
    -D "$HV_TMP/headers"
assert_eq "the same submit again is a replay (200)" 200 "$STATUS"
assert_match "a replay says so" '^Idempotency-Replayed: true$' \
    "$(tr -d '\r' <"$HV_TMP/headers" | grep -i '^Idempotency-Replayed:')"
QUEUED=$(json .id)
assert_status 409 POST /api/v1/plans "${AUTH_S[@]}" -H 'Idempotency-Key: contract-1' \
    --data-binary "$(jq -c '.name = "another"' <<<"$plan")"
assert_status 200 GET "/api/v1/plans?status=queued&name=quick&target=contract-host&since=2026-01-01"
assert_status 200 GET '/api/v1/plans?limit=1'
cursor=$(json .next_cursor)
assert_match "a first page of one has a next page" '.' "$cursor"
assert_status 200 GET "/api/v1/plans?limit=1&cursor=$cursor"
assert_status 400 GET '/api/v1/plans?status=sleeping'

# Cancelling: a queued plan, again, an ended plan, a running job's heartbeat.
assert_status 200 POST /api/v1/jobs/claim "${CRED[@]}" --data-binary "{\"target_id\":$TARGET}"
RUNNING=$(json .job.id)
assert_status 200 POST "/api/v1/plans/$QUEUED/cancel" "${AUTH_S[@]}"
assert_eq "cancelled plan" cancelled "$(json .status)"
assert_status 200 POST "/api/v1/plans/$QUEUED/cancel" "${AUTH_S[@]}"
assert_status 200 POST "/api/v1/jobs/$RUNNING/heartbeat" "${CRED[@]}" --data-binary '{"attempt":1}'
assert_eq "the worker learns of the cancel" true "$(json .cancel)"
assert_status 409 POST "/api/v1/plans/$PLAN/cancel" "${AUTH_S[@]}"
assert_status 404 POST /api/v1/plans/987654321/cancel "${AUTH_S[@]}"
assert_status 403 POST "/api/v1/plans/$QUEUED/cancel" "${AUTH_W[@]}"

# Signing off and freeing a target.
AUTH_A=(-H "Authorization: Bearer $ADMIN_TOKEN")
assert_status 200 POST /api/v1/workers/deregister "${CRED[@]}"
assert_status 401 POST /api/v1/jobs/claim "${CRED[@]}" --data-binary '{}'
assert_status 403 POST /api/v1/workers/deregister "${AUTH_W[@]}"
assert_status 200 POST "/api/v1/targets/$TARGET/free" "${AUTH_A[@]}"
assert_status 403 POST "/api/v1/targets/$TARGET/free" "${AUTH_W[@]}"
assert_status 404 POST /api/v1/targets/987654321/free "${AUTH_A[@]}"

# Tokens.
assert_status 201 POST /api/v1/tokens "${AUTH_A[@]}" --data-binary '{"name":"contract","role":"read"}'
TOKEN_ID=$(json .id)
assert_status 409 POST /api/v1/tokens "${AUTH_A[@]}" --data-binary '{"name":"contract","role":"read"}'
assert_status 400 POST /api/v1/tokens "${AUTH_A[@]}" --data-binary '{"name":"x","role":"root"}'
assert_status 403 POST /api/v1/tokens "${AUTH_S[@]}" --data-binary '{"name":"y","role":"read"}'
assert_status 200 GET /api/v1/tokens "${AUTH_A[@]}"
assert_status 401 GET /api/v1/tokens
assert_status 200 POST "/api/v1/tokens/$TOKEN_ID/revoke" "${AUTH_A[@]}"
assert_status 404 POST /api/v1/tokens/987654321/revoke "${AUTH_A[@]}"

# Unknown endpoints and methods.
assert_status 404 GET /api/v1/no-such-thing
assert_status 405 PUT "/api/v1/plans/$PLAN"

own=$(($(wc -l <"$HV_CONTRACT_LOG") - own_start))
assert_match "this test's own requests were logged" '^[1-9][0-9]+$' "$own"

# --- every logged answer against the document -----------------------------------------
hv_log "checking $(wc -l <"$HV_CONTRACT_LOG") exchanges of $HV_CONTRACT_LOG"
(cd "$CONTRACT_DIR" && node check-responses.mjs "$HV_CONTRACT_LOG")
assert_eq "every answer conforms to api/openapi.yaml (check-responses.mjs)" 0 "$?"

hv_finish
