#!/usr/bin/env bash
# Tuning plans run in blocks on the real server: each (round,
# configuration) is a block whose jobs are claimable only after the host
# worker's apply step succeeded; blocks follow one another, shuffled per
# round from the seed; a failed apply fails its block's jobs naming the
# configuration and the reason; after the last block, and on cancel, a
# restore step runs; one tuning plan holds a host at a time; what a plan
# changed is listed per target with when it was restored. The host worker
# is played with curl here, so every answer can be checked.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }
hv_register tune-host
H=$TARGET WH=("${W[@]}")

plan() { # NAME FACTORS-JSON REPS
    jq -c --arg n "$1" --argjson f "$2" --argjson r "$3" '.name = $n | .targets.host = "tune-host"
        | .factors = $f | .repetitions.min = $r | .workloads[0].params.seconds = 1' \
        "$HV_ROOT/examples/quick.json"
}
claim() { api POST /api/v1/jobs/claim "${WH[@]}" --data-binary '{}'; }
# apply_ok: answers the claimed step with every level read back as asked.
step_ok() {
    local id att
    id=$(json .step.id) att=$(json .step.attempt)
    local settings changes
    settings=$(json -c '.step.levels | with_entries(.value = {level: .value, read_back: .value, source: "test"})')
    changes=$(json -c '[.step.levels | to_entries[] | {factor: .key, scope: "host", object: ("/sys/" + .key), from: "always", to: .value}]')
    api POST "/api/v1/steps/$id/result" "${WH[@]}" --data-binary \
        "{\"attempt\":$att,\"status\":\"ok\",\"settings\":$settings,\"changes\":$changes}"
}
job_ok() {
    local id att
    id=$(json .job.id) att=$(json .job.attempt)
    api POST "/api/v1/jobs/$id/result" "${WH[@]}" --data-binary \
        "{\"attempt\":$att,\"status\":\"ok\",\"metrics\":[{\"name\":\"cpu.score\",\"value\":100,\"unit\":\"score\"}],\"observed\":{\"settings\":{}}}"
}

# --- blocks and steps ------------------------------------------------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan tune '{"thp":["always","never"]}' 2)"
P=$(json .id)
assert_status 200 GET "/api/v1/plans/$P/steps"
assert_eq "2 rounds x 2 configurations: 4 apply steps and a restore" "apply apply apply apply restore" \
    "$(json -r '[.items[].kind] | join(" ")')"
assert_eq "the first apply step is queued, the rest wait" "queued waiting waiting waiting waiting" \
    "$(json -r '[.items[].status] | join(" ")')"
assert_eq "each round holds both configurations" "2 2" \
    "$(sql "SELECT string_agg(n::text, ' ') FROM (SELECT count(DISTINCT config_id) n FROM jobs WHERE plan_id = $P GROUP BY repetition ORDER BY repetition) x")"
assert_eq "a block is one configuration of one round" 4 \
    "$(sql "SELECT count(DISTINCT (block, config_id, repetition)) FROM jobs WHERE plan_id = $P")"
assert_eq "run order follows the blocks" t \
    "$(sql "SELECT bool_and(ok) FROM (SELECT block >= lag(block, 1, 0) OVER (ORDER BY run_order) AS ok FROM jobs WHERE plan_id = $P) x")"

assert_status 201 POST "/api/v1/plans" "${S[@]}" --data-binary "$(plan other '{"ksm":["off","on"]}' 1)"
P2=$(json .id)
claim
assert_eq "the host worker gets the apply step first" "apply 0 $P" \
    "$(json -r '"\(.step.kind) \(.step.block) \(.step.plan_id)"')"
assert_match "with every factor's level" '^(always|never)$' "$(json -r .step.levels.thp)"
FIRST_LEVEL=$(json -r .step.levels.thp)
FIRST=$BODY
claim
assert_eq "no job before the block is applied, and no other plan's step" 204 "$STATUS"
BODY=$FIRST
step_ok
claim
for round in 1 2 3 4; do
    [[ $round -gt 1 ]] && { step_ok; claim; }
    assert_match "block $round: a job of the applied configuration" '^[0-9]+$' "$(json .job.id)"
    LEVEL=$(json -r .job.levels.thp)
    job_ok
    assert_eq "block $round: result stored" 201 "$STATUS"
    claim
    if [[ $round -lt 4 ]]; then
        assert_eq "block $round: the next block's apply step comes next" apply "$(json -r .step.kind)"
    fi
done
assert_eq "the first job ran at the first block's level" "$FIRST_LEVEL" \
    "$(sql "SELECT c.levels->>'thp' FROM jobs j JOIN configurations c ON c.id = j.config_id WHERE j.plan_id = $P AND j.block = 0")"
assert_eq "results carry the levels the host read back" "$(sql "SELECT c.levels->>'thp' FROM jobs j JOIN configurations c ON c.id = j.config_id WHERE j.plan_id = $P AND j.block = 3")" \
    "$(sql "SELECT r.observed->'host_settings'->'thp'->>'read_back' FROM results r JOIN jobs j ON j.id = r.job_id WHERE j.plan_id = $P AND j.block = 3")"
assert_eq "after the last block: the restore step" restore "$(json -r .step.kind)"
assert_eq "while the first plan holds the host, the second waits" "$P" "$(json .step.plan_id)"
RESTORE=$(json .step.id) RATT=$(json .step.attempt)
assert_status 201 POST "/api/v1/steps/$RESTORE/result" "${WH[@]}" --data-binary \
    "{\"attempt\":$RATT,\"status\":\"ok\",\"changes\":[{\"factor\":\"thp\",\"scope\":\"host\",\"object\":\"/sys/thp\",\"from\":\"never\",\"to\":\"always\"}]}"
assert_status 200 GET "/api/v1/targets/$H/changes"
assert_eq "every change of the plan is listed, and restored" "4 0" \
    "$(json "[.items[] | select(.plan_id == $P)] | \"\(length) \(map(select(.restored_at == null)) | length)\"")"
assert_eq "the host is free again" f "$(sql "SELECT holds_host FROM plans WHERE id = $P")"
assert_eq "the plan held it once, from its first apply step to its restore step" "true:apply false:restored" \
    "$(sql "SELECT string_agg(held || ':' || reason, ' ' ORDER BY id) FROM plan_holds WHERE plan_id = $P")"
assert_eq "and the hold was its host's" tune-host "$(sql "SELECT DISTINCT host_name FROM plan_holds WHERE plan_id = $P")"
claim
assert_eq "now the second plan's apply step" "apply $P2" "$(json -r '"\(.step.kind) \(.step.plan_id)"')"

# --- a configuration that cannot be applied -----------------------------------------
ID=$(json .step.id) ATT=$(json .step.attempt)
# The worker of another target cannot answer it.
hv_register intruder
assert_status 403 POST "/api/v1/steps/$ID/result" "${W[@]}" --data-binary "{\"attempt\":$ATT,\"status\":\"ok\"}"
assert_status 201 POST "/api/v1/steps/$ID/result" "${WH[@]}" --data-binary \
    "{\"attempt\":$ATT,\"status\":\"error\",\"error\":\"ksm: /sys/kernel/mm/ksm/run is missing (no KSM in this kernel)\"}"
assert_status 200 GET "/api/v1/plans/$P2/jobs"
assert_match "the block's jobs fail naming the configuration and the reason" \
    'configuration .* could not be applied on tune-host: ksm: /sys/kernel/mm/ksm/run is missing' \
    "$(json -r '.items[0].error')"
claim
assert_eq "the plan goes on with its next block" apply "$(json -r .step.kind)"
ID=$(json .step.id) ATT=$(json .step.attempt)

# --- cancel: the restore step runs ------------------------------------------------------
assert_status 200 POST "/api/v1/plans/$P2/cancel" "${S[@]}"
assert_eq "the restore step is queued at once" queued \
    "$(sql "SELECT status FROM plan_steps WHERE plan_id = $P2 AND kind = 'restore'")"
api POST "/api/v1/steps/$ID/heartbeat" "${WH[@]}" --data-binary "{\"attempt\":$ATT}"
assert_eq "the running apply step learns of the cancel" true "$(json .cancel)"
api POST "/api/v1/steps/$ID/result" "${WH[@]}" --data-binary "{\"attempt\":$ATT,\"status\":\"error\",\"error\":\"cancelled\"}"
claim
assert_eq "the restore step comes" restore "$(json -r .step.kind)"

hv_finish
