#!/usr/bin/env bash
# A configuration that was not applied is never run. The host worker (with
# its host settings under a temporary --sysfs-root) publishes in its facts
# which actuators can work here; a plan setting a factor its host cannot
# apply is refused at submission, dry run too, naming the factor, the host
# and what is missing (an unknown host is accepted as before). And a host
# level that changes under a job (the test rewrites the THP file while the
# job runs) fails that job with the factor, the level and the value read,
# while observed.settings holds the level as read at the start and the end.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }
ROOT=$HV_TMP/root
THP=$ROOT/sys/kernel/mm/transparent_hugepage/enabled
mkdir -p "$(dirname "$THP")"
echo always >"$THP"
mkdir -p "$ROOT/sys/module/kvm/parameters"
echo 200000 >"$ROOT/sys/module/kvm/parameters/halt_poll_ns"

plan() { # NAME HOST FACTORS SECONDS
    jq -c --arg n "$1" --arg h "$2" --argjson f "$3" --argjson s "$4" '.name = $n
        | .targets.host = $h | .workloads[0].params.seconds = $s | .repetitions = {min: 1}
        | .factors = $f' "$HV_ROOT/examples/quick.json"
}

hv_start_worker ac-host --kind host --sysfs-root "$ROOT" --poll 1 --wait 2
# shellcheck disable=SC2317 # called through wait_for
registered() { [[ $(sql "SELECT count(*) FROM targets WHERE name = 'ac-host'") == 1 ]]; }
wait_for "the host worker registers" 30 registered
TID=$(sql "SELECT id FROM targets WHERE name = 'ac-host'")
assert_status 200 GET "/api/v1/targets/$TID"
assert_eq "its facts say THP can be applied here" true "$(json '.facts.actuators.thp.ok')"
assert_eq "and halt polling too" true "$(json '.facts.actuators.halt_poll_ns.ok')"
assert_eq "and KSM not, since its file is missing" false "$(json '.facts.actuators.ksm.ok')"
assert_match "naming the file" 'sys/kernel/mm/ksm/run missing' "$(json '.facts.actuators.ksm.why')"
assert_eq "nor vCPU pinning without libvirt" "no libvirt connection (--libvirt)" \
    "$(json -r '.facts.actuators.vcpu_pin.why')"
assert_match "nor EPT without kvm_intel" 'kvm_intel is not loaded' "$(json '.facts.actuators.kvm_ept.why')"

# --- refused at submission ---------------------------------------------------------
assert_status 422 POST /api/v1/plans "${S[@]}" --data-binary "$(plan ksm ac-host '{"ksm": ["off", "on"], "thp": ["always", "never"]}' 1)"
assert_eq "the error points at the factor alone" "/factors/ksm" "$(json -r '[.errors[].path] | join(" ")')"
assert_match "naming the host, the factor and what is missing" \
    "host 'ac-host' cannot apply factor 'ksm': /sys/kernel/mm/ksm/run missing" "$(json -r '.errors[0].message')"
assert_eq "nothing was stored" 0 "$(sql "SELECT count(*) FROM plans WHERE name = 'ksm'")"
assert_status 422 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$(plan ept ac-host '{"kvm_ept": ["on", "off"]}' 1)"
assert_match "a dry run is refused the same way" "cannot apply factor 'kvm_ept': .*kvm_intel is not loaded" \
    "$(json -r '.errors[0].message')"
GUESTS=$(plan pin ac-host '{"vcpu_pin": ["off", "on"], "thp": ["always", "never"]}' 1 | jq -c '.targets.guests = {domains: ["vm0"]}')
assert_status 422 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$GUESTS"
assert_eq "a guest factor needs the host worker's libvirt connection" \
    "/factors/vcpu_pin: host 'ac-host' cannot apply factor 'vcpu_pin': no libvirt connection (--libvirt)" \
    "$(json -r '[.errors[] | .path + ": " + .message] | join("; ")')"
assert_status 200 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$(plan thp ac-host '{"thp": ["always", "never"]}' 1)"
assert_status 200 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$(plan ksm nobody '{"ksm": ["off", "on"]}' 1)"
PINNED=$(plan pinned ac-host '{"process_pin": ["off", "on"]}' 1 | jq -c '.workloads[0].params.pin = true')
assert_status 422 POST /api/v1/plans "${S[@]}" --data-binary "$PINNED"
assert_eq "process_pin and the cpu engine's own pin are refused together, pointing at both" \
    "/factors/process_pin /workloads/0/params/pin" "$(json -r '[.errors[].path] | join(" ")')"
# A host whose worker says nothing of its actuators (an older worker).
hv_register old-host host '{"cpus": 2}'
assert_status 200 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$(plan ksm old-host '{"ksm": ["off", "on"]}' 1)"

# --- the dry run lists what the plan will do ----------------------------------------
assert_status 200 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$(plan thp ac-host '{"thp": ["always", "never"], "halt_poll_ns": [200000, 0]}' 3)"
hv_log "dry run actions: $(json -c .actions)"
assert_eq "the host files it writes, per factor" \
    "halt_poll_ns=/sys/module/kvm/parameters/halt_poll_ns thp=/sys/kernel/mm/transparent_hugepage/enabled" \
    "$(json -r '[.actions.host.files[] | .factor + "=" + .path] | sort | join(" ")')"
assert_eq "4 blocks, no guest, no restart, no pause, no warning" "4 0 0 0 0" \
    "$(json -r '[.actions.blocks, (.actions.guests | length), .actions.estimate.restarts, (.actions.host.operator_pauses | length), (.actions.warnings | length)] | map(tostring) | join(" ")')"
assert_eq "its duration: 4 jobs of 3 s" 12 "$(json '.actions.estimate.seconds')"
GUESTED=$(plan restart nobody '{"disk_cache": ["none", "writeback"], "kvm_ept": ["on", "off"]}' 1 |
    jq -c '.targets.guests = {domains: ["vm0", "vm1"]} | .concurrency = "all-guests"')
assert_status 200 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$GUESTED"
hv_log "dry run actions: $(json -c .actions)"
assert_eq "each guest restarts once per block and once for the restore" "vm0=5 vm1=5" \
    "$(json -r '[.actions.guests[] | .name + "=" + (.restarts | tostring)] | join(" ")')"
assert_eq "the reboot-class factor is an operator pause, with its file" \
    "kvm_ept /sys/module/kvm_intel/parameters/ept" \
    "$(json -r '.actions.host.operator_pauses[] | .factor + " " + .file')"
assert_eq "restarts are counted in the duration" "10 30 true" \
    "$(json -r '[.actions.estimate.restarts, .actions.estimate.seconds_per_restart, (.actions.estimate.seconds == .actions.estimate.job_seconds + 300)] | map(tostring) | join(" ")')"
assert_match "existing domains restarted without allow_restart: a warning" "needs allow_restart: true" \
    "$(json -r '.actions.warnings[0]')"
assert_status 200 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$(jq -c '.allow_restart = true' <<<"$GUESTED")"
assert_eq "with allow_restart: true, no warning" 0 "$(json '.actions.warnings | length')"
echo "$GUESTED" >"$HV_TMP/guested.json"
HVBENCH_SERVER=$URL HVBENCH_TOKEN=$SUBMIT_TOKEN "$CLI" submit --dry-run "$HV_TMP/guested.json" \
    >"$HV_TMP/dry.out" 2>"$HV_TMP/dry.err"
assert_eq "hvbench submit --dry-run prints the same actions" "vm0=5 vm1=5 305" \
    "$(jq -r '[(.actions.guests[] | .name + "=" + (.restarts | tostring)), (.actions.estimate.seconds | tostring)] | join(" ")' "$HV_TMP/dry.out")"
assert_match "and the warning on standard error" "^hvbench: warning: restart-class factors restart the existing domains" \
    "$(cat "$HV_TMP/dry.err")"

# --- a level that changes under a job fails it ------------------------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan moved ac-host '{"thp": ["madvise", "never"]}' 6)"
P=$(json .id)
# shellcheck disable=SC2317 # called through wait_for
running() { [[ $(sql "SELECT count(*) FROM jobs WHERE plan_id = $P AND status = 'running'") == 1 ]]; }
wait_for "the first block's job runs" 60 running
FIRST=$(sql "SELECT id FROM jobs WHERE plan_id = $P AND status = 'running'")
LEVEL=$(sql "SELECT c.levels->>'thp' FROM jobs j JOIN configurations c ON c.id = j.config_id WHERE j.id = $FIRST")
echo always >"$THP"
mkdir -p "$ROOT/sys/module/kvm/parameters"
echo 200000 >"$ROOT/sys/module/kvm/parameters/halt_poll_ns"
hv_log "THP rewritten to always under job $FIRST (level $LEVEL)"
# shellcheck disable=SC2317 # called through wait_for
ended() { [[ $(sql "SELECT count(*) FROM jobs WHERE plan_id = $P AND status IN ('queued', 'running')") == 0 &&
    $(sql "SELECT status FROM plan_steps WHERE plan_id = $P AND kind = 'restore'") =~ ^(done|failed)$ ]]; }
wait_for "the plan runs to its restore step" 120 ended
assert_eq "the job the level changed under failed" failed "$(sql "SELECT status FROM jobs WHERE id = $FIRST")"
assert_eq "naming the factor, the level and the value read" \
    "a setting changed under the job: thp=$LEVEL: reads back always (/sys/kernel/mm/transparent_hugepage/enabled)" \
    "$(sql "SELECT error FROM jobs WHERE id = $FIRST")"
assert_eq "its result holds THP as read at the start and at the end" "$LEVEL $LEVEL always" \
    "$(sql "SELECT r.observed->'settings'->'thp'->>'level' || ' ' || (r.observed->'settings'->'thp'->>'start') || ' ' || (r.observed->'settings'->'thp'->>'end') FROM results r JOIN jobs j ON j.id = r.job_id AND j.attempt = r.attempt WHERE j.id = $FIRST")"
assert_eq "the other block's job, left alone, is done" "done" \
    "$(sql "SELECT status FROM jobs WHERE plan_id = $P AND id <> $FIRST")"
assert_eq "with the same level at both ends" t \
    "$(sql "SELECT r.observed->'settings'->'thp'->>'start' = c.levels->>'thp' AND r.observed->'settings'->'thp'->>'end' = c.levels->>'thp' FROM results r JOIN jobs j ON j.id = r.job_id AND j.attempt = r.attempt JOIN configurations c ON c.id = j.config_id WHERE j.plan_id = $P AND j.id <> $FIRST")"
assert_eq "the restore put back what the plan found" always "$(cat "$THP")"

hv_finish
