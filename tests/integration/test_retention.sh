#!/usr/bin/env bash
# shellcheck disable=SC2016 # jq programs in single quotes
# Retention and recovery through the API and the CLI: a failed plan's
# failed job retried until the plan is done; an ended plan deleted with
# what it held counted (a plan still running refused); samples and raw
# output purged before a date (a dry run first, counting the same), the
# summary metrics kept; old plans purged; each refusal with its reason.
# The worker is played with curl, so every upload is known.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

A=(-H "Authorization: Bearer $ADMIN_TOKEN")
S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
hv_register ret-host
WH=("${W[@]}")
cli() { HVBENCH_SERVER=$URL "$CLI" "$@"; }

plan_json() { # NAME
    jq -c --arg n "$1" '.name = $n | .targets.host = "ret-host" | .repetitions.min = 1
        | .workloads[0].params.seconds = 1' "$HV_ROOT/examples/quick.json"
}
# claim_and_post BODY-JQ: claims the next job as ret-host and posts the
# result the jq program makes of {attempt}.
claim_and_post() {
    api POST /api/v1/jobs/claim "${WH[@]}" --data-binary '{}'
    local id att
    id=$(json .job.id) att=$(json .job.attempt)
    api POST "/api/v1/jobs/$id/result" "${WH[@]}" --data-binary "$(jq -nc --argjson a "$att" "$1")"
    JOB=$id
}
OK='{attempt: $a, status: "ok", metrics: [{name: "cpu.score", value: 100, unit: "score"}],
     samples: [range(0; 5) as $t | {metric: "cpu.score", t: $t, value: (100 + $t)}], raw: "the output"}'

# --- retry ----------------------------------------------------------------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan_json ret-fail)"
P1=$(json .id)
claim_and_post '{attempt: $a, status: "error", error: "the engine crashed"}'
api GET "/api/v1/plans/$P1"
assert_eq "an error result fails the job, and plan $P1" failed "$(json -r .status)"
assert_status 403 POST "/api/v1/plans/$P1/retry" "${WH[@]}"
out=$(HVBENCH_TOKEN=$SUBMIT_TOKEN cli retry "$P1")
assert_eq "hvbench retry exits 0" 0 "$?"
assert_eq "and says so" "plan $P1: 1 failed job queued again" "$out"
api GET "/api/v1/plans/$P1"
# A retried plan has started before: its state goes from failed back to
# running (migrations/041's transitions), its job queued again.
assert_eq "the plan runs again" "running 1" "$(json -r '"\(.status) \(.jobs.queued)"')"
assert_status 409 POST "/api/v1/plans/$P1/retry" "${S[@]}"
assert_match "a plan that has not failed is not retried" "only a failed plan" "$(json -r .detail)"
claim_and_post "$OK"
api GET "/api/v1/plans/$P1"
assert_eq "retried, the plan is done" "done" "$(json -r .status)"
assert_status 404 POST /api/v1/plans/987654/retry "${S[@]}"

# --- delete ---------------------------------------------------------------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan_json ret-open)"
P2=$(json .id)
assert_status 409 DELETE "/api/v1/plans/$P2" "${A[@]}"
assert_match "a plan not ended is not deleted" "has not ended" "$(json -r .detail)"
assert_status 403 DELETE "/api/v1/plans/$P1" "${S[@]}"
assert_status 200 DELETE "/api/v1/plans/$P1" "${A[@]}"
assert_eq "what the plan held: 1 job, 2 results (the error, the retry), 5 samples" "$P1 1 2 5" \
    "$(json -r '.deleted | "\(.plan) \(.jobs) \(.results) \(.samples)"')"
assert_match "its size counted" '^[1-9][0-9]*$' "$(json -r .deleted.bytes)"
assert_status 404 GET "/api/v1/plans/$P1"
assert_status 404 DELETE "/api/v1/plans/$P1" "${A[@]}"

# --- purge ----------------------------------------------------------------------------
claim_and_post "$OK" # plan P2's job
J2=$JOB
assert_status 400 POST /api/v1/purge "${A[@]}" --data-binary '{"before": "yesterday", "samples": true}'
assert_eq "a bad time is refused at /before" "/before" "$(json -r '.errors[0].path')"
assert_status 400 POST /api/v1/purge "${A[@]}" --data-binary '{"before": "2030-01-01T00:00:00Z"}'
assert_status 403 POST /api/v1/purge "${S[@]}" --data-binary '{"before": "2030-01-01T00:00:00Z", "raw": true}'
assert_status 200 POST /api/v1/purge "${A[@]}" --data-binary \
    '{"before": "2000-01-01T00:00:00Z", "samples": true, "raw": true, "plans": true}'
assert_eq "nothing is that old" "0 0 0 0" "$(json -r '"\(.plans) \(.samples) \(.raw_outputs) \(.bytes)"')"
FUTURE=$(date -u -d '+1 day' +%Y-%m-%dT%H:%M:%SZ)
out=$(HVBENCH_TOKEN=$ADMIN_TOKEN cli purge --before "$FUTURE" --samples --raw --dry-run)
assert_match "a dry run counts: 5 samples, 1 raw output" \
    "^would purge before $FUTURE: 0 plans .* 5 samples, 0 telemetry rows, 1 raw outputs; [1-9][0-9]* bytes$" "$out"
api GET "/api/v1/jobs/$J2/results?raw=1"
assert_eq "and deletes nothing" "5 the output" "$(json -r '.items[-1] | "\(.samples | length) \(.raw)"')"
api GET "/api/v1/jobs/$J2/samples"
assert_eq "the series as the samples endpoint reads it: 5 samples, t 0..4" "5 0 4" \
    "$(json -r '.series[0] | "\(.n) \(.first) \(.last)"')"
assert_status 200 POST /api/v1/purge "${A[@]}" --data-binary "{\"before\": \"$FUTURE\", \"samples\": true, \"raw\": true}"
assert_eq "purged: 5 samples, 1 raw output" "5 1 false" "$(json -r '"\(.samples) \(.raw_outputs) \(.dry_run)"')"
api GET "/api/v1/jobs/$J2/results?raw=1"
assert_eq "samples and raw output gone, the metric kept" "0 null 100" \
    "$(json -r '.items[-1] | "\(.samples | length) \(.raw) \(.metrics[0].value)"')"
api GET "/api/v1/jobs/$J2/samples"
assert_eq "and no series left to chart" "[]" "$(json -c .series)"
out=$(HVBENCH_TOKEN=$ADMIN_TOKEN cli --json purge --before "$FUTURE" --plans)
assert_eq "old plans purged: the one ended" "1 1" "$(jq -r '"\(.plans) \(.results)"' <<<"$out")"
assert_status 404 GET "/api/v1/plans/$P2"
out=$(HVBENCH_TOKEN=$ADMIN_TOKEN cli purge --samples 2>&1)
assert_eq "purge without --before: usage error" 2 "$?"
hv_finish
