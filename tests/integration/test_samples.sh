#!/usr/bin/env bash
# GET /api/v1/jobs/{id}/samples against the real server: a result of 5,000
# samples of one metric (with a spike up and one down) and 50 of another.
# Past `points` a series is answered as at most `points` time buckets whose
# min ≤ mean ≤ max, whose counts add up to the samples and whose extremes
# are the series' own; a series of at most `points` samples, and a time
# range holding few, are the raw samples exactly; attempts, a job without a
# result, and bad arguments. The results answer, whose JSON the database
# builds and the server sends as it is (never parsed), holds what was sent:
# its fields in their order, the samples by metric then time, as numbers.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")

plan=$(jq -c '.targets.host = "samples-host" | .workloads[0].params.seconds = 1
    | .repetitions.min = 2' "$HV_ROOT/examples/quick.json") || hv_die "cannot read examples/quick.json"
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$plan"
PLAN=$(json .id)
hv_register samples-host
assert_status 200 POST /api/v1/jobs/claim "${W[@]}" --data-binary "{\"target_id\":$TARGET}"
JOB=$(json .job.id)

# A job of the plan nobody claimed: no result yet.
api GET "/api/v1/plans/$PLAN/jobs"
OTHER=$(json "[.items[] | select(.id != $JOB)][0].id")

jq -nc '{attempt: 1, status: "ok",
         metrics: [{name: "cpu.score", value: 1000, unit: "score", higher_is_better: true}],
         samples: ([range(1; 5001) | {metric: "cpu.score", t: ., value:
                      (if . == 2500 then 5000 elif . == 4000 then 10 else 1000 + (. % 37) end)}]
                   + [range(0; 50) | {metric: "host.cpu.busy_pct", t: (. * 0.5), value: (. % 7)}])}' \
    >"$HV_TMP/result.json"
assert_status 201 POST "/api/v1/jobs/$JOB/result" "${W[@]}" --data-binary "@$HV_TMP/result.json"

# The raw samples as the results endpoint gives them.
assert_status 200 GET "/api/v1/jobs/$JOB/results"
printf '%s\n' "$BODY" >"$HV_TMP/raw.json"
raw() { jq -c --arg m "$1" "[.items[-1].samples[] | select(.metric == \$m)] | $2" "$HV_TMP/raw.json"; }

# --- the results answer, sent as the database wrote it ------------------------------
assert_status 200 GET "/api/v1/jobs/$JOB/results?raw=true"
assert_eq "a JSON answer" application/json "$CONTENT_TYPE"
assert_eq "one result, its fields in order" \
    '["result_id","attempt","status","error","set_aside","started_at","finished_at","received_at","observed","telemetry","telemetry_reason","metrics","samples","raw"]' \
    "$(json -c '[.items[] | keys_unsorted] | .[]')"
assert_eq "the fields' types" \
    '["number","number","string","null","object","string","string","array","array","null"]' \
    "$(json -c '.items[0] | [.result_id, .attempt, .status, .error, .observed, .telemetry, .telemetry_reason, .metrics, .samples, .raw] | map(type)')"
assert_eq "the metrics sent" "$(jq -c .metrics "$HV_TMP/result.json")" "$(json -c '.items[0].metrics')"
assert_eq "the 5,050 samples sent, by metric then time" \
    "$(jq -c '.samples | sort_by(.metric, .t)' "$HV_TMP/result.json")" "$(json -c '.items[0].samples')"
assert_eq "no telemetry for a host job" "missing" "$(json -r '.items[0].telemetry')"
assert_status 200 GET "/api/v1/jobs/$JOB/results?samples=false"
assert_eq "samples=false: no samples" null "$(json -c '.items[0].samples')"
assert_status 200 GET "/api/v1/jobs/$OTHER/results"
assert_eq "a job without a result: no items" '{"items":[]}' "$(json -c .)"
assert_status 404 GET /api/v1/jobs/999999/results
assert_eq "an unknown job: not_found" not_found "$(json -r .code)"

# --- downsampled: points=100 ------------------------------------------------------
assert_status 200 GET "/api/v1/jobs/$JOB/samples?points=100"
assert_eq "the latest attempt" 1 "$(json .attempt)"
assert_eq "points echoed" 100 "$(json .points)"
assert_eq "one series per metric, by name" '["cpu.score","host.cpu.busy_pct"]' "$(json -c '[.series[].metric]')"
s='.series[] | select(.metric == "cpu.score")'
assert_eq "cpu.score: 5000 samples, downsampled" "5000 true" "$(json "$s | \"\(.n) \(.downsampled)\"")"
assert_eq "cpu.score: at most 100 buckets" true "$(json "$s | (.t | length) <= 100 and (.t | length) >= 90")"
assert_eq "columns of one length" true \
    "$(json "$s | [.t, .value, .min, .max, .count | length] | unique | length == 1")"
assert_eq "min <= mean <= max in every bucket" true \
    "$(json "$s | [range(0; .t | length) as \$i | .min[\$i] <= .value[\$i] and .value[\$i] <= .max[\$i]] | all")"
assert_eq "bucket counts add up to the samples" 5000 "$(json "$s | .count | add")"
assert_eq "buckets in time order" true "$(json "$s | .t == (.t | sort)")"
assert_eq "the series' minimum kept" "$(raw cpu.score '[.[].value] | min')" "$(json "$s | .min | min")"
assert_eq "the series' maximum kept" "$(raw cpu.score '[.[].value] | max')" "$(json "$s | .max | max")"
assert_eq "first and last sample times" "1 5000" "$(json "$s | \"\(.first) \(.last)\"")"
h='.series[] | select(.metric == "host.cpu.busy_pct")'
assert_eq "host metric: 50 samples, not downsampled" "50 false null" \
    "$(json "$h | \"\(.n) \(.downsampled) \(.min)\"")"
assert_eq "host metric: its raw times" "$(raw host.cpu.busy_pct '[.[].t]')" "$(json -c "$h | .t")"
assert_eq "host metric: its raw values" "$(raw host.cpu.busy_pct '[.[].value]')" "$(json -c "$h | .value")"

# --- a range at full resolution --------------------------------------------------
assert_status 200 GET "/api/v1/jobs/$JOB/samples?points=100&from=2450&to=2549"
assert_eq "from and to echoed" "2450 2549" "$(json '"\(.from) \(.to)"')"
assert_eq "the range holds 100 samples: whole" "100 false" "$(json "$s | \"\(.n) \(.downsampled)\"")"
assert_eq "range: the raw times" "$(raw cpu.score '[.[] | select(.t >= 2450 and .t <= 2549) | .t]')" \
    "$(json -c "$s | .t")"
assert_eq "range: the raw values, the spike included" \
    "$(raw cpu.score '[.[] | select(.t >= 2450 and .t <= 2549) | .value]')" "$(json -c "$s | .value")"
assert_eq "range: no host samples past t=24.5" '["cpu.score"]' "$(json -c '[.series[].metric]')"
assert_status 200 GET "/api/v1/jobs/$JOB/samples?points=10&from=2000.5"
assert_eq "a lower bound only: 3000 samples in at most 10 buckets" "3000 true" \
    "$(json "$s | \"\(.n) \(.downsampled and (.t | length) <= 10)\"")"
assert_eq "its maximum is the spike" 5000 "$(json "$s | .max | max")"
assert_status 200 GET "/api/v1/jobs/$JOB/samples?points=200000"
assert_eq "points past the samples: every sample" "$(raw cpu.score '[.[].value]')" "$(json -c "$s | .value")"

# --- attempts, a job without a result, errors ------------------------------------------
assert_status 200 GET "/api/v1/jobs/$JOB/samples?attempt=1&points=10"
assert_eq "attempt 1 named" 1 "$(json .attempt)"
assert_status 200 GET "/api/v1/jobs/$JOB/samples?attempt=2"
assert_eq "an attempt never uploaded: no result, no series" "null []" "$(json -c '"\(.result_id) \(.series)"')"
assert_status 200 GET "/api/v1/jobs/$OTHER/samples"
assert_eq "a job without a result: no series" "null []" "$(json -c '"\(.attempt) \(.series)"')"
assert_status 404 GET /api/v1/jobs/999999/samples
for q in points=5 points=abc from=nan from=1e13 'from=10&to=5' attempt=0; do
    assert_status 400 GET "/api/v1/jobs/$JOB/samples?$q"
done

hv_finish
