#!/usr/bin/env bash
# Blocks advance one at a time under concurrent claims: a tuning plan of
# many short blocks (thp two levels, 8 rounds: 16 blocks, 24 jobs) whose
# host and guest workers, played with curl, answer at once, while idle
# workers poll without pause. Every claim request advances blocks whose
# jobs ended, and a job's end wakes every waiting claim, so several advance
# the same plan at the same moment; none may skip a block (its jobs would
# stay queued and the plan would never end) or queue the restore step
# before the last block ran.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
ROUNDS=8

hv_register race-host host
HOST_W=("${W[@]}")
hv_register race-guest guest
GUEST_W=("${W[@]}")
IDLE=()
for i in 1 2 3; do
    hv_register "race-idle-$i" host
    IDLE+=("${W[1]}")
done

plan=$(jq -c --argjson r "$ROUNDS" '.name = "race" | .targets = {"host": "race-host",
    "guests": {"domains": ["race-guest"]}} | .factors = {"thp": ["always", "never"]}
    | .repetitions.min = $r | .workloads[0].params.seconds = 1' "$HV_ROOT/examples/quick.json")
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$plan"
P=$(json .id)

# One worker played with curl: claims, answers a step with every level
# read back and a job with a result at once; stops after the restore step
# (the host) or when the plan ended (the guest). Its own files: the test's
# api() is not safe from two processes.
fake_worker() { # NAME AUTH-HEADER
    local auth=$2 out=$HV_TMP/claim-$1 deadline=$((SECONDS + 150)) id att kind body
    while ((SECONDS < deadline)); do
        [[ -e $HV_TMP/ended ]] && return 0
        curl -s --max-time 20 -o "$out" -H "$auth" -H 'Content-Type: application/json' \
            --data-binary '{"wait":5}' "$URL/api/v1/jobs/claim" || continue
        [[ -s $out ]] || continue
        kind=$(jq -r 'if .step then "step" elif .job then "job" else "" end' "$out")
        if [[ $kind == step ]]; then
            id=$(jq -r .step.id "$out") att=$(jq -r .step.attempt "$out")
            body=$(jq -c --argjson a "$att" '{attempt: $a, status: "ok",
                settings: (.step.levels | with_entries(.value = {level: .value, read_back: .value,
                    source: "test"}))}' "$out")
            curl -s --max-time 10 -o /dev/null -H "$auth" -H 'Content-Type: application/json' \
                --data-binary "$body" "$URL/api/v1/steps/$id/result"
            [[ $(jq -r .step.kind "$out") == restore ]] && return 0
        elif [[ $kind == job ]]; then
            id=$(jq -r .job.id "$out") att=$(jq -r .job.attempt "$out")
            curl -s --max-time 10 -o /dev/null -H "$auth" -H 'Content-Type: application/json' \
                --data-binary "{\"attempt\":$att,\"status\":\"ok\",\"metrics\":[{\"name\":\"cpu.score\",\"value\":$((100 + RANDOM % 5)),\"unit\":\"score\"}]}" \
                "$URL/api/v1/jobs/$id/result"
        fi
    done
    return 1
}
# An idle worker: claims without waiting, over and over, so advances run
# all the time.
idle_worker() { # AUTH-HEADER
    while [[ ! -e $HV_TMP/ended ]]; do
        curl -s --max-time 5 -o /dev/null -H "$1" -H 'Content-Type: application/json' \
            --data-binary '{"wait":0}' "$URL/api/v1/jobs/claim"
    done
}
fake_worker race-host "${HOST_W[1]}" >"$HV_TMP/race-host.log" 2>&1 &
HV_WORKER_PIDS+=($!)
fake_worker race-guest "${GUEST_W[1]}" >"$HV_TMP/race-guest.log" 2>&1 &
HV_WORKER_PIDS+=($!)
for auth in "${IDLE[@]}"; do
    idle_worker "$auth" >/dev/null 2>&1 &
    HV_WORKER_PIDS+=($!)
done

# shellcheck disable=SC2317 # called through wait_for
plan_ended() {
    api GET "/api/v1/plans/$P"
    [[ $(json .status) =~ ^(done|failed|cancelled)$ ]]
}
wait_for "plan $P ends" 150 plan_ended
assert_eq "plan $P is done" "done" "$(json -r .status)"
assert_eq "every job done: $ROUNDS rounds x (2 guest configurations + the host's baseline)" \
    "$((ROUNDS * 3)) 0 0" "$(json -r '"\(.jobs.done) \(.jobs.queued) \(.jobs.failed)"')"
# The plan reads done once its jobs are; its restore step runs after that
# (the host worker stops once it answered it).
# shellcheck disable=SC2317 # called through wait_for
restore_done() {
    api GET "/api/v1/plans/$P/steps"
    [[ $(json '[.items[] | select(.kind == "restore" and .status == "done")] | length') == 1 ]]
}
wait_for "the restore step done after the plan's last job" 60 restore_done
touch "$HV_TMP/ended"
api GET "/api/v1/plans/$P/steps"
assert_eq "every block's apply step and the restore step done" "$((ROUNDS * 2 + 1))" \
    "$(json '[.items[] | select(.status == "done")] | length')"
# The restore step was claimed after the last apply step ended.
assert_eq "the restore step came after the last block" true \
    "$(json '([.items[] | select(.kind == "apply") | .finished_at] | max) <= (.items[] | select(.kind == "restore") | .claimed_at)')"
# Its many apply steps took the host's hold once; the restore step let it go.
assert_eq "one hold and one release, the host free at the end" "true:apply false:restored false" \
    "$("$PG" psql "$HV_TMP/pg" -- -Atc "SELECT string_agg(h.held || ':' || h.reason, ' ' ORDER BY h.id)
        || ' ' || (SELECT holds_host FROM plans WHERE id = $P) FROM plan_holds h WHERE h.plan_id = $P")"
hv_finish
