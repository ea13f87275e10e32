#!/usr/bin/env bash
# Adaptive repetitions on the real server: after each round the server
# summarises every primary metric and queues one more whole round while an
# interval is wider than ci_pct and fewer than max rounds ran; the plan
# records why it stopped (the width reached, or max). Results are uploaded
# by hand so the values, and so the widths, are known.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }
hv_register rounds-host

plan() { # NAME MIN MAX CI_PCT
    jq -c --arg n "$1" --argjson lo "$2" --argjson hi "$3" --argjson ci "$4" \
        '.name = $n | .targets.host = "rounds-host" | .workloads[0].params.seconds = 1
         | .repetitions = {min: $lo, max: $hi, ci_pct: $ci}' "$HV_ROOT/examples/quick.json"
}
# run_all VALUE...: claims and uploads one job per value (cpu.score and a
# secondary metric that varies wildly), until the values run out.
run_all() {
    local v
    for v in "$@"; do
        api POST /api/v1/jobs/claim "${W[@]}" --data-binary '{}'
        [[ $STATUS == 200 ]] || return 1
        api POST "/api/v1/jobs/$(json .job.id)/result" "${W[@]}" --data-binary \
            "{\"attempt\":$(json .job.attempt),\"status\":\"ok\",\"metrics\":[{\"name\":\"cpu.score\",\"value\":$v,\"unit\":\"score\"},{\"name\":\"cpu.int.ops\",\"value\":$((RANDOM + 1)),\"unit\":\"ops/s\"}]}"
        [[ $STATUS == 201 ]] || return 1
    done
}
rounds() { sql "SELECT max(repetition) FROM jobs WHERE plan_id = $1"; }

# --- steady values: the width is reached at min ------------------------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan steady 3 10 2)"
P=$(json .id)
assert_eq "min rounds queued at first" 3 "$(rounds "$P")"
run_all 1000 1001 999
assert_eq "no more rounds: the width was reached" 3 "$(rounds "$P")"
assert_status 200 GET "/api/v1/plans/$P"
assert_eq "the plan says why it stopped" "precise 3" "$(json -r '"\(.rounds.decision) \(.rounds.rounds)"')"
assert_eq "and it is done" done "$(json -r .status)"
api POST /api/v1/jobs/claim "${W[@]}" --data-binary '{}'
assert_eq "nothing more to run" 204 "$STATUS"

# --- noisy values: rounds are added up to max ---------------------------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan noisy 2 5 0.5)"
P=$(json .id)
run_all 1000 1300
assert_eq "after 2 noisy rounds a third is queued" 3 "$(rounds "$P")"
assert_status 200 GET "/api/v1/plans/$P"
assert_eq "more, after 2 rounds" "more 2" "$(json -r '"\(.rounds.decision) \(.rounds.rounds)"')"
assert_eq "the widest series is named" "cpu.score" "$(json -r .rounds.widest.metric)"
run_all 800 1250 900
assert_eq "rounds stop at max" 5 "$(rounds "$P")"
assert_status 200 GET "/api/v1/plans/$P"
assert_eq "stopped on max, width not reached" "max 5" "$(json -r '"\(.rounds.decision) \(.rounds.rounds)"')"
assert_eq "done with 5 jobs" "done 5" "$(json -r '"\(.status) \(.jobs.total)"')"
text=$("$CLI" --server "$URL" report "$P" 2>&1)
assert_eq "hvbench report says once that the width was not reached" 1 \
    "$(grep -c 'stopped at the maximum of 5 rounds without reaching the width' <<<"$text")"
assert_eq "the added rounds ran after the first ones" t \
    "$(sql "SELECT bool_and(ok) FROM (SELECT repetition >= lag(repetition, 1, 0) OVER (ORDER BY run_order) AS ok FROM jobs WHERE plan_id = $P) x")"

# --- a tuning plan's added round is applied block by block --------------------------
hv_register tune-rounds
WT=("${W[@]}")
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(plan tuned 1 2 0.1 | jq -c '.targets.host = "tune-rounds" | .factors = {"thp": ["always", "never"]}')"
P=$(json .id)
for i in 1 2 3 4; do
    api POST /api/v1/jobs/claim "${WT[@]}" --data-binary '{}'
    if [[ $(json -r .step.kind) == apply ]]; then
        api POST "/api/v1/steps/$(json .step.id)/result" "${WT[@]}" --data-binary \
            "{\"attempt\":$(json .step.attempt),\"status\":\"ok\"}"
        api POST /api/v1/jobs/claim "${WT[@]}" --data-binary '{}'
    fi
    api POST "/api/v1/jobs/$(json .job.id)/result" "${WT[@]}" --data-binary \
        "{\"attempt\":$(json .job.attempt),\"status\":\"ok\",\"metrics\":[{\"name\":\"cpu.score\",\"value\":$((900 + 100 * i)),\"unit\":\"score\"}]}"
    assert_eq "tuned job $i stored" 201 "$STATUS"
done
assert_eq "a second round was added, as blocks 2 and 3 with their apply steps" "2 4 4" \
    "$(sql "SELECT max(repetition) || ' ' || count(DISTINCT block) || ' ' || (SELECT count(*) FROM plan_steps WHERE plan_id = $P AND kind = 'apply') FROM jobs WHERE plan_id = $P")"
api POST /api/v1/jobs/claim "${WT[@]}" --data-binary '{}'
assert_eq "after the last block, the restore step" restore "$(json -r .step.kind)"

# --- comparisons decide: the group-sequential rule stops at min -----------------------
# The host drifts ±10 % from round to round, the same for both levels of a
# round; thp=never is 10 % faster within every round. Paired over complete
# rounds the drift is gone: decided at the first look, long before the
# width of each configuration (0.1 %) could be reached.
hv_register paired-rounds
WP=("${W[@]}")
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(plan paired 3 10 0.1 | jq -c '.targets.host = "paired-rounds" | .factors = {"thp": ["always", "never"]}')"
P=$(json .id)
drift=(0 1000 1100 950 1080)
noise=(0 1.002 0.998 1.001 0.999)
for ((i = 0; i < 12; i++)); do
    api POST /api/v1/jobs/claim "${WP[@]}" --data-binary '{}'
    [[ $STATUS == 200 ]] || break
    if [[ $(json -r .step.kind) == apply ]]; then
        api POST "/api/v1/steps/$(json .step.id)/result" "${WP[@]}" --data-binary \
            "{\"attempt\":$(json .step.attempt),\"status\":\"ok\"}"
        continue
    fi
    [[ $(json -r .step.kind) == restore ]] && break
    rep=$(json .job.repetition)
    v=${drift[rep]}
    [[ $(json -r .job.levels.thp) == never ]] && v=$(awk -v b="$v" -v n="${noise[rep]}" 'BEGIN { printf "%.3f", 1.10 * b * n }')
    api POST "/api/v1/jobs/$(json .job.id)/result" "${WP[@]}" --data-binary \
        "{\"attempt\":$(json .job.attempt),\"status\":\"ok\",\"metrics\":[{\"name\":\"cpu.score\",\"value\":$v,\"unit\":\"score\"}]}"
    [[ $STATUS == 201 ]] || hv_die "paired job: $STATUS $BODY"
done
assert_eq "decided after the 3 rounds of min: no fourth" 3 "$(rounds "$P")"
assert_status 200 GET "/api/v1/plans/$P"
assert_eq "the plan says it stopped decided, by the sequential rule" "decided sequential 3 1 of 1" \
    "$(json -r '"\(.rounds.decision) \(.rounds.rule) \(.rounds.rounds) \(.rounds.decided) of \(.rounds.comparisons)"')"
assert_status 200 GET "/api/v1/plans/$P/report"
assert_eq "the report: paired, better, at look 3 of 3..10" "paired better 3 3 10" \
    "$(json -r '"\(.comparisons[0].analysis) \(.comparisons[0].family_verdict) \(.family.look) \(.family.looks_from) \(.family.looks_to)"')"
assert_eq "the effect: +10 % within its interval" true \
    "$(json '.comparisons[0].lo_pct < 10 and .comparisons[0].hi_pct > 10 and .comparisons[0].lo_pct > 9')"
assert_eq "its repetitions stop: decided" "sequential decided decided" \
    "$(json -r '"\(.repetitions.rule) \(.repetitions.decision) \(.repetitions.configurations[0].stop)"')"

hv_finish
