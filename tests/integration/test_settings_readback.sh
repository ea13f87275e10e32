#!/usr/bin/env bash
# The host's reading of a guest job's levels at its end goes into the
# job's result. A tuning plan (vcpu_pin off/on, two rounds in order: four
# blocks) on a host and one guest, both played with curl: the host
# answers each apply step
# with its levels read back on that domain, and, after each guest job
# ended, uploads its telemetry with the levels read back again:
#   block 1: the levels as applied: observed.settings holds level, start
#            (the apply step's reading of the domain), end, read_back,
#            source; the job stays done;
#   block 2: a level that moved (settings_changed): the result and the
#            job fail with "a setting changed under the job: ...";
#   block 3: no reading (settings_missing): the job stays done and the
#            result says why;
#   block 4: a factor the guest's worker read itself keeps its reading,
#            the host's goes under "host"; a second upload of the attempt
#            changes nothing.
# The running list the host worker polls carries each guest job's levels
# to read back.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
R=(-H "Authorization: Bearer $READ_TOKEN")
UUID=0b3c2a34-5d7e-4f60-8a9b-1c2d3e4f5a6b

# The host's facts list no domain, as a host whose clones were made after
# it registered: the plan links the guest to it.
hv_register rb-host host '{}'
H=("${W[@]}")
hv_register rb-guest guest "{\"dmi_product_uuid\":\"$UUID\"}"
G=("${W[@]}")

plan=$(jq -c '.name = "readback" | .targets = {"host": "rb-host", "guests": {"domains": ["rb-guest"]}}
    | .factors = {"vcpu_pin": ["off", "on"]} | .order = "sequential"
    | .repetitions = {"min": 2, "max": 2} | .workloads[0].params.seconds = 1' \
    "$HV_ROOT/examples/quick.json")
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$plan"
P=$(json .id)

ok_result() { # JOB AUTH-HEADER ATTEMPT [OBSERVED]
    local obs=${4-}
    [[ -n $obs ]] || obs='{}'
    assert_status 201 POST "/api/v1/jobs/$1/result" -H "$2" --data-binary \
        "{\"attempt\":$3,\"status\":\"ok\",\"observed\":$obs,\"metrics\":[{\"name\":\"cpu.score\",\"value\":100,\"unit\":\"score\"}]}"
}
# The host claims until it gets a step, answering its own (baseline) jobs
# on the way; an apply step is answered with its levels read back on the
# guest's domain. STEP_KIND, STEP_BLOCK, STEP_LEVEL say which.
host_step() {
    local i body
    for i in 1 2 3 4 5 6; do
        api POST /api/v1/jobs/claim "${H[@]}" --data-binary '{}'
        if [[ $STATUS == 200 && $(json -r '.step.kind // empty') != "" ]]; then
            STEP_KIND=$(json -r .step.kind) STEP_BLOCK=$(json -r .step.block)
            STEP_LEVEL=$(json -r '.step.levels.vcpu_pin // empty')
            body=$(json -c '{attempt: .step.attempt, status: "ok", settings: (.step.levels
                | with_entries(.value = {level: .value, read_back: .value, source: "test",
                    detail: {"rb-guest": {read_back: .value}}}))}')
            assert_status 201 POST "/api/v1/steps/$(json .step.id)/result" "${H[@]}" \
                --data-binary "$body"
            return 0
        elif [[ $STATUS == 200 ]]; then
            ok_result "$(json .job.id)" "${H[1]}" "$(json .job.attempt)"
        fi
    done
    hv_die "the host was offered no step"
}
# The guest claims its job and ends it; then the host's poll no longer
# lists it. JOB, ATT: the job.
guest_job() {
    api POST /api/v1/jobs/claim "${G[@]}" --data-binary '{}'
    [[ $STATUS == 200 ]] || hv_die "the guest got no job: $STATUS $BODY"
    JOB=$(json .job.id) ATT=$(json .job.attempt)
    api GET /api/v1/workers/telemetry "${H[@]}"
    RUNNING=$BODY
    ok_result "$JOB" "${G[1]}" "$ATT" "${GUEST_OBSERVED-}"
}
telemetry() { # STATUS-CODE BODY
    assert_status "$1" POST "/api/v1/jobs/$JOB/telemetry" "${H[@]}" --data-binary "$2"
}
reading() { # LEVEL READ-BACK
    jq -nc --arg l "$1" --arg r "$2" '{vcpu_pin: {level: $l, read_back: $r,
        source: "sched_getaffinity of QEMU'"'"'s vCPU threads"}}'
}

# --- block 1: the levels as applied ---------------------------------------------------
host_step
assert_eq "block 1 applies vcpu_pin=off" "apply 0 off" "$STEP_KIND $STEP_BLOCK $STEP_LEVEL"
guest_job
assert_eq "the host's poll lists the running guest job with the levels to read back" \
    "$JOB rb-guest {\"disk\":null,\"domains\":[\"rb-guest\"],\"levels\":{\"vcpu_pin\":\"off\"},\"nic\":null,\"plan_id\":$P}" \
    "$(jq -c '.jobs[0] | "\(.job_id) \(.domain.name) \(.tuning | to_entries | sort_by(.key) | from_entries | tojson)"' -r <<<"$RUNNING")"
api GET /api/v1/workers/telemetry "${H[@]}"
assert_eq "and no longer once it ended" 0 "$(json '.jobs | length')"
telemetry 201 "{\"attempt\":$ATT,\"status\":\"missing\",\"reason\":\"test\",\"settings\":$(reading off off)}"
api GET "/api/v1/jobs/$JOB/results" "${R[@]}"
assert_eq "observed.settings: the level, the apply step's reading, the end's" \
    '{"end":"off","level":"off","read_back":"off","source":"sched_getaffinity of QEMU'"'"'s vCPU threads","start":"off"}' \
    "$(json -c '.items[0].observed.settings.vcpu_pin | to_entries | sort_by(.key) | from_entries')"
assert_eq "the result stays ok" "ok null" "$(json -r '"\(.items[0].status) \(.items[0].error)"')"
assert_eq "the apply step's settings are kept beside it" off \
    "$(json -r '.items[0].observed.host_settings.vcpu_pin.read_back')"
api GET "/api/v1/jobs/$JOB" "${R[@]}"
assert_eq "the job is done" "done" "$(json -r .status)"

# --- block 2: a level moved under the job ---------------------------------------------
host_step
assert_eq "block 2 applies vcpu_pin=on" "apply 1 on" "$STEP_KIND $STEP_BLOCK $STEP_LEVEL"
guest_job
telemetry 201 "$(jq -nc --argjson a "$ATT" --argjson s "$(reading on off)" '{attempt: $a,
    status: "missing", reason: "test", settings: $s,
    settings_changed: "vcpu_pin=on: reads back off (sched_getaffinity)"}')"
api GET "/api/v1/jobs/$JOB" "${R[@]}"
assert_eq "the job fails, saying what changed" \
    "failed a setting changed under the job: vcpu_pin=on: reads back off (sched_getaffinity)" \
    "$(json -r '"\(.status) \(.error)"')"
api GET "/api/v1/jobs/$JOB/results" "${R[@]}"
assert_eq "so does its result, which holds both readings" \
    "error a setting changed under the job: vcpu_pin=on: reads back off (sched_getaffinity) on on off off" \
    "$(json -r '.items[0] | "\(.status) \(.error) \(.observed.settings.vcpu_pin | "\(.level) \(.start) \(.end) \(.read_back)")"')"

# --- block 3: no reading --------------------------------------------------------------
host_step
assert_eq "block 3 applies vcpu_pin=off" "apply 2 off" "$STEP_KIND $STEP_BLOCK $STEP_LEVEL"
guest_job
telemetry 201 "{\"attempt\":$ATT,\"status\":\"missing\",\"reason\":\"test\",\"settings_missing\":\"cannot open libvirt\"}"
api GET "/api/v1/jobs/$JOB/results" "${R[@]}"
assert_eq "a reading that could not be taken is said, the result stays ok" "ok cannot open libvirt" \
    "$(json -r '.items[0] | "\(.status) \(.observed.settings_missing)"')"
api GET "/api/v1/jobs/$JOB" "${R[@]}"
assert_eq "and the job done" "done" "$(json -r .status)"

# --- block 4: the guest read the factor itself; a second upload changes nothing ----------
host_step
assert_eq "block 4 applies vcpu_pin=on" "apply 3 on" "$STEP_KIND $STEP_BLOCK $STEP_LEVEL"
GUEST_OBSERVED='{"settings":{"vcpu_pin":{"level":"on","read_back":"on","source":"the guest"}}}'
guest_job
telemetry 201 "{\"attempt\":$ATT,\"status\":\"missing\",\"reason\":\"test\",\"settings\":$(reading on on)}"
telemetry 200 "{\"attempt\":$ATT,\"status\":\"missing\",\"reason\":\"again\",\"settings\":$(reading on off),\"settings_changed\":\"vcpu_pin=on: reads back off\"}"
api GET "/api/v1/jobs/$JOB" "${R[@]}"
assert_eq "the job stays done" "done" "$(json -r .status)"
api GET "/api/v1/jobs/$JOB/results" "${R[@]}"
assert_eq "with the guest's reading, and the host's first one under host" \
    "ok the guest on on on on" \
    "$(json -r '.items[0] | "\(.status) \(.observed.settings.vcpu_pin | "\(.source) \(.read_back) \(.host | "\(.start) \(.end) \(.read_back)")")"')"

host_step
assert_eq "then the restore step" restore "$STEP_KIND"
api GET "/api/v1/plans/$P" "${R[@]}"
assert_eq "the plan counts the job that a moved level failed" "5 1" \
    "$(json -r '"\(.jobs.done) \(.jobs.failed)"')"

hv_finish
