#!/usr/bin/env bash
# shellcheck disable=SC2317 # functions run by wait_for
# An engine that never returns fails its job, not the plan's run. A real
# worker with HVBENCH_FAULT=engine.run:hang (its engine thread blocks for
# good, as an I/O a stalled device never completes would) and --run-slack 1
# runs a 1 s cpu job: past its limit (3 × 1 s + 1 s) it is told to stop;
# not stopped 15 s later, the job fails with the reason and the worker exits
# with status 70. A second worker then runs the plan's other job: the plan
# ends (failed, one job of two), nothing waits for the stuck one.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup
S=(-H "Authorization: Bearer $SUBMIT_TOKEN" -H 'Content-Type: application/json')

plan=$(jq -c '.name = "stuck" | .targets.host = "stuck-host" | .repetitions = {min: 2, max: 2}
    | .workloads[0].params = {copies: 1, seconds: 1}' "$HV_ROOT/examples/quick.json")
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$plan"
P=$(json .id)

HVBENCH_FAULT=engine.run:hang "$WORKER" --server "$URL" --token "$WORKER_TOKEN" --name stuck-host \
    --state-dir "$HV_TMP/state" --run-slack 1 --poll 1 >>"$HV_TMP/worker-stuck.log" 2>&1 &
WPID=$!
HV_WORKER_PIDS+=("$WPID")
gone() { ! kill -0 "$WPID" 2>/dev/null; }
wait_for "the stuck worker exits" 60 gone
wait "$WPID"
assert_eq "it exits with status 70" 70 "$?"
grep -q "past its limit of 4 s; stopping it" "$HV_TMP/worker-stuck.log"
assert_eq "it said the limit (3 x 1 s + 1 s) when it stopped the engine" 0 "$?"

api GET "/api/v1/plans/$P/jobs?status=failed"
assert_eq "one job failed" 1 "$(json '.items | length')"
J=$(json '.items[0].id')
api GET "/api/v1/jobs/$J/results"
assert_match "its error names the limit and the stuck engine" \
    'past its limit of 4 s and did not stop within 15 s' "$(json -r '.items[0].error')"

hv_start_worker stuck-host --poll 1
plan_ended() {
    api GET "/api/v1/plans/$P"
    [[ $(json -r .status) =~ ^(done|failed|cancelled)$ ]]
}
wait_for "plan $P ends" 60 plan_ended
assert_eq "the plan ends failed: one job of two" "failed 1 1" \
    "$(json -r '"\(.status) \(.jobs.done) \(.jobs.failed)"')"
hv_finish
