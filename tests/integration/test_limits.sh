#!/usr/bin/env bash
# Limits of workload params against the real server, database and worker:
# what every worker would refuse is refused at submission. A limit fixed by
# the params alone is a 400 at its path; one that depends on the target
# (threads x qd x block of a "per-vcpu" disk run, within 1 GiB) is a 422
# naming the param and the target when the target is registered, and the
# worker refuses the job with the same message, counted on its own CPUs,
# when the target registered only after the plan was accepted.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
W=(-H "Authorization: Bearer $WORKER_TOKEN")
R=(-H "Authorization: Bearer $READ_TOKEN")

# register NAME CPUS: a target as its worker would register it.
register() {
    api POST /api/v1/workers/register "${W[@]}" --data-binary \
        "{\"name\":\"$1\",\"kind\":\"host\",\"facts\":{\"cpus\":$2}}"
    assert_eq "$1 registers with $2 CPUs" 200 "$STATUS"
}

# plan HOST PARAMS: a plan of one disk workload on HOST, into $HV_TMP/plan.json.
plan() {
    cat >"$HV_TMP/plan.json" <<EOF
{"name": "limits", "targets": {"host": "$1"},
 "workloads": [{"id": "io", "kind": "disk", "params": $2}],
 "repetitions": {"min": 1, "max": 1}}
EOF
}

# --- fixed by the params: 400 ----------------------------------------------------
plan big '{"threads": 256, "qd": 1024, "block": "64m"}'
assert_status 400 POST /api/v1/plans "${S[@]}" --data-binary @"$HV_TMP/plan.json"
assert_eq "the error is at the queue depth" "/workloads/0/params/qd" "$(json -r '.errors[0].path')"
assert_match "it says the buffers and the limit" \
    'threads x qd x block is 16777216 MiB of I/O buffers; at most 1024 MiB' \
    "$(json -r '.errors[0].message')"

# --- per-vcpu on registered targets: 422 where it does not fit --------------------
register big 64
register small 8
PER='{"threads": "per-vcpu", "qd": 64, "block": "1m", "size": "64m"}'
plan big "$PER"
assert_status 422 POST /api/v1/plans "${S[@]}" --data-binary @"$HV_TMP/plan.json"
assert_eq "the error is at threads" "/workloads/0/params/threads" "$(json -r '.errors[0].path')"
assert_match "it names the target, its CPUs and the buffers" \
    '"per-vcpu" is 64 threads on target big \(64 CPUs\): threads x qd x block is 4096 MiB of I/O buffers; at most 1024 MiB' \
    "$(json -r '.errors[0].message')"
plan small "$PER"
assert_status 200 POST "/api/v1/plans?dry_run=true" "${S[@]}" --data-binary @"$HV_TMP/plan.json"
# A sweep: only the variant that does not fit is named.
plan small '{"threads": "per-vcpu", "qd": [64, 256], "block": "1m", "size": "256m"}'
assert_status 422 POST /api/v1/plans "${S[@]}" --data-binary @"$HV_TMP/plan.json"
assert_eq "one error for the sweep" 1 "$(json '.errors | length')"
assert_match "the variant with qd 256 does not fit 8 CPUs" 'is 2048 MiB of I/O buffers' \
    "$(json -r '.errors[0].message')"

# --- an unregistered target: accepted, its worker refuses the job -----------------
CPUS=$(nproc)
plan later '{"threads": "per-vcpu", "qd": 1024, "block": "1m", "size": "1m", "ops": ["seq-write"]}'
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary @"$HV_TMP/plan.json"
PLAN=$(json .id)
if ((CPUS >= 2)); then
    hv_start_worker later --poll 1
    plan_ended() {
        api GET "/api/v1/plans/$PLAN" "${R[@]}"
        [[ $(json .status) == done || $(json .status) == failed ]]
    }
    wait_for "the plan on the target that registered later ends" 120 plan_ended
    assert_eq "it failed" failed "$(json .status)"
    api GET "/api/v1/plans/$PLAN/jobs" "${R[@]}"
    T=$((CPUS > 256 ? 256 : CPUS))
    assert_match "the worker says why, as the server would have" \
        "invalid params: /params/threads: \"per-vcpu\" is $T threads on this target \($CPUS CPUs\): threads x qd x block is $((T * 1024)) MiB of I/O buffers; at most 1024 MiB" \
        "$(json -r '.items[0].error')"
else
    hv_log "one CPU here: a per-vcpu run of 1 GiB fits; the worker's refusal is not shown"
fi

hv_finish
