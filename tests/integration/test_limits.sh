#!/usr/bin/env bash
# Limits of workload params against the real server, database and worker:
# what every worker would refuse is refused at submission. A limit fixed by
# the params alone is a 400 at its path; one that depends on the target
# (threads x qd x block of a "per-vcpu" disk run, within 1 GiB) is a 422
# naming the param and the target when the target is registered, and the
# worker refuses the job with the same message, counted on its own CPUs,
# when the target registered only after the plan was accepted.
# Then the request limits, as given: --max-result-body below --max-body
# caps result uploads at it (413), and an over-long URL is a 414 problem.
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
    # shellcheck disable=SC2317 # called through wait_for
    plan_ended() {
        api GET "/api/v1/plans/$PLAN" "${R[@]}"
        [[ $(json .status) == "done" || $(json .status) == failed ]]
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

# --- request limits ----------------------------------------------------------------
# --max-result-body is honoured as given, even below --max-body.
hv_stop_pid "$HV_SERVER_PID" 10
HV_SERVER_ARGS=(--max-body 65536 --max-result-body 4096)
out=$("$SERVER" serve --db "$DB" --check-config --migrations-dir "$HV_ROOT/migrations" \
    "${HV_SERVER_ARGS[@]}" 2>&1)
assert_match "--check-config shows both caps as given" $'max-body = 65536\nmax-result-body = 4096' "$out"
hv_start_server
head -c 5000 /dev/zero | tr '\0' ' ' >"$HV_TMP/5000.txt"
W2=(-H "Authorization: Bearer $WORKER_TOKEN" -H 'Content-Type: application/json')
assert_status 413 POST /api/v1/jobs/1/result "${W2[@]}" --data-binary @"$HV_TMP/5000.txt"
assert_eq "a result body past --max-result-body: 413 body_too_large, of the result cap" \
    "application/problem+json body_too_large the body is larger than 4096 bytes" \
    "$CONTENT_TYPE $(json -r '"\(.code) \(.detail)"')"
assert_status 400 POST /api/v1/plans "${S[@]}" --data-binary @"$HV_TMP/5000.txt"
assert_eq "the same body to another endpoint is read (under --max-body): bad JSON, not 413" \
    bad_json "$(json -r .code)"

# An over-long URL is a problem document like any other error.
long=$(head -c 3000 /dev/zero | tr '\0' x)
for path in "/api/v1/$long" "/healthz?q=$long$long$long"; do
    api GET "$path"
    assert_eq "${#path} bytes of URL: 414 uri_too_long as application/problem+json" \
        "414 application/problem+json uri_too_long" "$STATUS $CONTENT_TYPE $(json -r .code)"
done
api GET "/api/v1/no-such-endpoint?q=$long"
assert_eq "a query of ${#long} bytes is within the limit (routed: 404, not 414)" 404 "$STATUS"

hv_finish
