#!/usr/bin/env bash
# Every door a result comes in by holds it to the same rules (docs/api.md,
# "Metric names and values"): the same bad values and names — 1e200,
# 1.7e308, a negative score, a metric named "" or "cpu.score ", a metric
# named twice, an observed object of 1 MiB — are refused by a result
# upload, by POST /api/v1/imports where a tool output can carry them, and
# by POST /api/v1/plans/import, each with 400 and the same message at the
# same path under the door's own prefix. Then values no door accepts are
# written straight into the database (as an older version could have
# stored them): compare, the report and the history answer 200, leave
# them out and say how many they left out.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
# Bodies past 1 MiB, so the observed object reaches the check of each door
# rather than the body cap.
HV_SERVER_ARGS=(--max-body 4194304)
hv_setup
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
hv_register doors-host
WH=("${W[@]}")
HOST=$TARGET

# A measured plan: six results of cpu.score, 100 to 105.
plan=$(jq -c '.name = "doors" | .targets.host = "doors-host" | .repetitions.min = 6' \
    "$HV_ROOT/examples/quick.json")
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$plan"
P=$(json .id)
for v in 100 101 102 103 104 105; do
    api POST /api/v1/jobs/claim "${WH[@]}" --data-binary '{}'
    id=$(json .job.id) att=$(json .job.attempt)
    assert_status 201 POST "/api/v1/jobs/$id/result" "${WH[@]}" --data-binary "$(jq -nc \
        --argjson a "$att" --argjson v "$v" '{attempt: $a, status: "ok", observed: {copies: 1},
        metrics: [{name: "cpu.score", value: $v, unit: "score"}],
        samples: [{metric: "cpu.score", t: 1, value: $v}]}')"
done
assert_status 200 GET "/api/v1/plans/$P/export"
printf '%s' "$BODY" >"$HV_TMP/plan.json"
assert_eq "the export holds six results" 6 "$(jq '[.jobs[].results[]] | length' "$HV_TMP/plan.json")"

# The bad cases, one per line: a jq program on a result {metrics, samples,
# observed} ($big: 1 MiB of text), the path under the result, and the
# message, separated by '|'.
head -c 1048576 /dev/zero | tr '\0' 'o' >"$HV_TMP/big"
# shellcheck disable=SC2016 # jq programs
CASES=(
    '.metrics[0].value = 1e200|/metrics/0/value|1e+200 is out of range: a metric'"'"'s magnitude is at most 1e+15'
    '.metrics[0].value = 1.7e308|/metrics/0/value|1.7e+308 is out of range: a metric'"'"'s magnitude is at most 1e+15'
    '.metrics[0].value = -5|/metrics/0/value|-5 must not be negative for a score (score)'
    '.metrics[0].name = ""|/metrics/0/name|a metric'"'"'s name must not be empty'
    '.metrics[0].name = "cpu.score "|/metrics/0/name|a metric'"'"'s name must not begin or end with a blank'
    '.metrics += [.metrics[0]]|/metrics/1/name|metric "cpu.score" appears more than once in this result'
    '.observed = {big: $big}|/observed|is 1048586 bytes as JSON; at most 65536 are kept'
)

# --- the upload -------------------------------------------------------------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(jq -c '.name = "doors-upload"' <<<"$plan")"
for c in "${CASES[@]}"; do
    IFS='|' read -r prog path msg <<<"$c"
    api POST /api/v1/jobs/claim "${WH[@]}" --data-binary '{}'
    id=$(json .job.id) att=$(json .job.attempt)
    jq -c --argjson a "$att" --rawfile big "$HV_TMP/big" "{attempt: \$a, status: \"ok\", observed: {},
        metrics: [{name: \"cpu.score\", value: 100, unit: \"score\"}],
        samples: [{metric: \"cpu.score\", t: 1, value: 100}]} | $prog" <<<'null' >"$HV_TMP/body.json"
    api POST "/api/v1/jobs/$id/result" "${WH[@]}" --data-binary @"$HV_TMP/body.json"
    assert_eq "upload, $prog: 400 at $path" "400 $path $msg" \
        "$STATUS $(json -r '.errors[0].path') $(json -r '.errors[0].message')"
    api POST "/api/v1/jobs/$id/release" "${WH[@]}" --data-binary "{\"attempt\":$att}"
done

# --- the plan import ----------------------------------------------------------------------
for c in "${CASES[@]}"; do
    IFS='|' read -r prog path msg <<<"$c"
    jq -c --rawfile big "$HV_TMP/big" ".jobs[0].results[0] |= ($prog)" "$HV_TMP/plan.json" \
        >"$HV_TMP/doc.json"
    api POST /api/v1/plans/import "${S[@]}" --data-binary @"$HV_TMP/doc.json"
    assert_eq "plan import, $prog: 400 at $path" "400 /jobs/0/results/0$path $msg" \
        "$STATUS $(json -r '.errors[0].path') $(json -r '.errors[0].message')"
done
# What the database keeps once is refused by name, never by a constraint.
jq -c '.configurations += [.configurations[0]]' "$HV_TMP/plan.json" >"$HV_TMP/doc.json"
api POST /api/v1/plans/import "${S[@]}" --data-binary @"$HV_TMP/doc.json"
assert_eq "a configuration index twice: 400 naming it" \
    "400 /configurations/1/idx a configuration index of 0 appears more than once" \
    "$STATUS $(json -r '.errors[0].path') $(json -r '.errors[0].message')"
jq -c '.jobs[0].results += [.jobs[0].results[0]]' "$HV_TMP/plan.json" >"$HV_TMP/doc.json"
api POST /api/v1/plans/import "${S[@]}" --data-binary @"$HV_TMP/doc.json"
assert_eq "an attempt twice: 400 naming it" "400 /jobs/0/results/1/attempt an attempt of 1 appears more than once" \
    "$STATUS $(json -r '.errors[0].path') $(json -r '.errors[0].message')"
assert_eq "nothing of them was stored" 2 "$(sql "SELECT count(*) FROM plans")"
assert_status 201 POST /api/v1/plans/import "${S[@]}" --data-binary @"$HV_TMP/plan.json"

# --- the tool output import ---------------------------------------------------------------
# Metric names come from the parser; values from the output, which can be edited.
for bw in 1e200 1.7e308; do
    bad=$(jq ".jobs[0].write.bw_bytes = $bw | .jobs[0].write.bw = $bw" \
        "$HV_ROOT/tests/fixtures/fio/seq-write.json")
    api POST /api/v1/imports "${S[@]}" --data-binary \
        "$(jq -n --arg out "$bad" '{tool: "fio", target: "doors-import", output: $out}')"
    assert_eq "import, bandwidth $bw: 400" 400 "$STATUS"
    assert_match "at a metric's value, with the upload's message" \
        '^/runs/0/metrics/[0-9]+/value [-+.e0-9]+ is out of range: a metric.s magnitude is at most 1e\+15$' \
        "$(json -r '.errors[0] | "\(.path) \(.message)"')"
done
bad=$(jq '.jobs[0].write.bw_bytes = -5000000 | .jobs[0].write.bw = -4883' \
    "$HV_ROOT/tests/fixtures/fio/seq-write.json")
api POST /api/v1/imports "${S[@]}" --data-binary \
    "$(jq -n --arg out "$bad" '{tool: "fio", target: "doors-import", output: $out}')"
assert_match "import, a negative bandwidth: 400 with the upload's message" \
    '^400 /runs/0/metrics/[0-9]+/value -[.0-9e+]+ must not be negative for a rate \(MB/s\)$' \
    "$STATUS $(json -r '.errors[0] | "\(.path) \(.message)"')"
assert_eq "no import was stored" 0 "$(sql "SELECT count(*) FROM imports")"

# --- values stored before the doors checked them --------------------------------------------
# Four of plan P's six values become ones no door takes; two stay.
sql "UPDATE metrics m SET value = v.x FROM (VALUES (100, '1e200'::float8), (101, '1.7e308'),
    (102, '-5'), (103, 'NaN'), (104, 'Infinity')) AS v(old, x), results r, jobs j
    WHERE m.value = v.old AND m.name = 'cpu.score' AND r.id = m.result_id AND j.id = r.job_id
    AND j.plan_id = $P" >/dev/null
assert_eq "five values were overwritten" 5 \
    "$(sql "SELECT count(*) FROM metrics m JOIN results r ON r.id = m.result_id JOIN jobs j ON j.id = r.job_id WHERE j.plan_id = $P AND m.value <> 105")"
assert_status 200 GET "/api/v1/compare?a=$P&b=$P"
assert_eq "compare: the one sane value on each side, five left out and why" \
    "1 105 5 5 true" \
    "$(json -r '"\(.rows[0].a.n) \(.rows[0].a.mean) \(.rows[0].a.excluded) \(.a.excluded.values) \(.a.excluded.reason | test("left out"))"')"
assert_status 200 GET "/api/v1/plans/$P/report"
assert_status 200 GET "/api/v1/targets/$HOST/history?metric=cpu.score"
# The plan imported above brought six more points, of the values before.
assert_eq "history: the seven sane points, five left out and why" "7 720 5 true" \
    "$(json -r '"\(.series[0].n) \([.series[0].points[].value] | add) \(.excluded.values) \(.excluded.reason | test("left out"))"')"
assert_status 200 GET "/api/v1/targets/$HOST/history?metric=cpu.score&from=2000-01-01T00:00:00Z"
assert_eq "a window of it too" "7 5" "$(json -r '"\(.series[0].n) \(.excluded.values)"')"
hv_finish
