#!/usr/bin/env bash
# Noisy jobs on the real server: a job whose result says it ran beside
# other work (observed.interference.busy, as a host worker measures it)
# is set aside in a plan with noise "repeat" (the default) and its
# configuration runs again in the same round, up to repetitions.max jobs
# of it in the round; the report's figures leave it out and say how many
# were set aside and why. With noise "keep" it stays in. Results are
# uploaded by hand so which job is noisy, and the values, are known.
# The server runs with its own default (no --noise-default).
HV_NOISE_DEFAULT=''
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }
hv_register noise-host

plan() { # NAME [NOISE]: one workload, two fixed rounds, at most 2 jobs a round
    jq -c --arg n "$1" --arg noise "${2:-}" \
        '.name = $n | .targets.host = "noise-host" | .workloads[0].params.seconds = 1
         | .repetitions = {min: 2, max: 2} | if $noise != "" then .noise = $noise else del(.noise) end' \
        "$HV_ROOT/examples/quick.json"
}
# run VALUE BUSY: claims the next job and uploads cpu.score VALUE with
# observed.interference.busy BUSY; JOB is its id.
run() {
    api POST /api/v1/jobs/claim "${W[@]}" --data-binary '{}'
    [[ $STATUS == 200 ]] || return 1
    JOB=$(json .job.id)
    api POST "/api/v1/jobs/$JOB/result" "${W[@]}" --data-binary \
        "{\"attempt\":$(json .job.attempt),\"status\":\"ok\",\"metrics\":[{\"name\":\"cpu.score\",\"value\":$1,\"unit\":\"score\"}],\"observed\":{\"interference\":{\"busy\":$2,\"others_cpu_pct\":$([[ $2 == true ]] && echo 52.5 || echo 1.5),\"steal_pct\":0,\"procs_running\":3,\"ncpus\":2,\"seconds\":1.0}}}"
    [[ $STATUS == 201 ]] || return 1
}
round_of() { sql "SELECT repetition FROM jobs WHERE id = $1"; }

# --- repeat (the default): the noisy job is set aside and run again ---------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan repeat)"
P=$(json .id)
assert_eq "the plan's noise defaults to repeat" repeat "$(sql "SELECT spec->>'noise' FROM plans WHERE id = $P")"
run 5000 true
NOISY=$JOB
R=$(round_of "$NOISY")
assert_eq "the noisy job's result is set aside, by its interference" interference \
    "$(sql "SELECT set_aside FROM results WHERE job_id = $NOISY")"
assert_eq "one more job of its configuration is queued in the same round" "1 $R" \
    "$(sql "SELECT count(*) || ' ' || min(repetition) FROM jobs WHERE plan_id = $P AND id > $NOISY AND status = 'queued' AND repetition = $R AND config_id = (SELECT config_id FROM jobs WHERE id = $NOISY)")"
assert_eq "the plan now has 3 jobs" 3 "$(sql "SELECT count(*) FROM jobs WHERE plan_id = $P")"
run 1000 false
run 1010 false
assert_eq "the repeat ran in the noisy job's round" "$R" \
    "$(sql "SELECT repetition FROM jobs WHERE plan_id = $P AND id > $NOISY AND config_id = (SELECT config_id FROM jobs WHERE id = $NOISY) AND repetition = $R")"
assert_eq "before any job of a later round" 0 \
    "$(sql "SELECT count(*) FROM jobs a JOIN jobs b ON b.plan_id = a.plan_id AND b.repetition > a.repetition WHERE a.plan_id = $P AND a.id > $NOISY AND a.repetition = $R AND (b.run_order, b.id) < (a.run_order, a.id)")"
assert_status 200 GET "/api/v1/plans/$P"
assert_eq "the plan is done with 3 jobs" "done 3" "$(json -r '"\(.status) \(.jobs.total)"')"
assert_status 200 GET "/api/v1/plans/$P/report"
assert_eq "the report counts the set-aside job and why" '1 {"interference":1}' \
    "$(json -r '"\(.set_aside.count) \(.set_aside.reasons | tojson)"')"
assert_eq "and names it with its round and signal" "$NOISY $R 52.5" \
    "$(json -r '.set_aside.jobs[0] | "\(.job_id) \(.round) \(.signal.others_cpu_pct)"')"
assert_eq "n leaves it out: two rounds, mean of 1000 and 1010" "2 1005" \
    "$(json -r '.summaries[] | select(.metric == "cpu.score") | "\(.n) \(.mean | round)"')"
assert_eq "a set_aside warning says so" 1 \
    "$(json '[.warnings[] | select(.kind == "set_aside")] | length')"
assert_eq "no host_busy warning: nothing busy stayed in" 0 \
    "$(json '[.warnings[] | select(.kind == "host_busy")] | length')"
assert_status 200 GET "/api/v1/plans/$P/report?format=md"
assert_eq "the markdown report prints the count" 1 \
    "$(grep -c '^Set aside as noisy: 1 job (1 interference)' <<<"$BODY")"

# --- the bound: a round holds at most repetitions.max jobs of a configuration ---
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan bound)"
P=$(json .id)
run 5000 true
run 6000 true
assert_eq "the second noisy job was the repeat, in the first one's round" 2 \
    "$(sql "SELECT count(*) FROM jobs WHERE plan_id = $P AND repetition = $(round_of "$JOB")")"
run 900 false
assert_eq "the repeat was noisy too but is kept: its round has 2 jobs, max 2" "1 1" \
    "$(sql "SELECT count(*) FILTER (WHERE r.set_aside IS NOT NULL) || ' ' || count(*) FILTER (WHERE r.set_aside IS NULL AND r.observed->'interference'->>'busy' = 'true') FROM results r JOIN jobs j ON j.id = r.job_id WHERE j.plan_id = $P")"
assert_eq "no fourth job" 3 "$(sql "SELECT count(*) FROM jobs WHERE plan_id = $P")"
assert_status 200 GET "/api/v1/plans/$P/report"
assert_eq "the kept noisy job is warned of, as kept" 1 \
    "$(json '[.warnings[] | select(.kind == "host_busy" and (.message | test("kept")))] | length')"
assert_eq "the figures hold the kept one, not the set-aside one" "2 3450" \
    "$(json -r '.summaries[] | select(.metric == "cpu.score") | "\(.n) \(.mean | round)"')"

# --- keep: today's behaviour ---------------------------------------------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan keep keep)"
P=$(json .id)
run 5000 true
run 1000 false
assert_eq "keep: nothing set aside, no job added" "0 2" \
    "$(sql "SELECT (SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id WHERE j.plan_id = $P AND r.set_aside IS NOT NULL) || ' ' || count(*) FROM jobs WHERE plan_id = $P")"
assert_status 200 GET "/api/v1/plans/$P/report"
assert_eq "keep: the noisy value is in the figures" "2 3000" \
    "$(json -r '.summaries[] | select(.metric == "cpu.score") | "\(.n) \(.mean | round)"')"
assert_eq "keep: set_aside counts none" 0 "$(json .set_aside.count)"
assert_eq "keep: the host_busy warning names it" 1 \
    "$(json '[.warnings[] | select(.kind == "host_busy")] | length')"

# --- a plan's noise is one of repeat and keep -----------------------------------------
assert_status 400 POST /api/v1/plans "${S[@]}" --data-binary "$(plan bad sometimes)"
assert_eq "the error names /noise" true "$(json '[.errors[]? | .path // .pointer] | index("/noise") != null')"

hv_finish
