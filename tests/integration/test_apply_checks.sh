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
# The disk and NIC host factors act on: named in tuning, checked, required.
assert_status 422 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$(plan mtu ac-host '{"nic_mtu": [1500, 9000], "readahead_kb": [128, 256]}' 1)"
assert_eq "nic_mtu without tuning.nic and readahead_kb without tuning.disk are refused, each at its factor" \
    "/factors/nic_mtu /factors/readahead_kb" "$(json -r '[.errors[].path] | sort | join(" ")')"
assert_match "saying what to add" 'nic_mtu acts on the host nic the plan names in tuning.nic, and it names none: add "tuning": \{"nic": "eth1"\}' \
    "$(json -r '[.errors[].message] | join("; ")')"
assert_status 400 POST /api/v1/plans "${S[@]}" --data-binary "$(plan trick ac-host '{"readahead_kb": [128, 256]}' 1 | jq -c '.tuning = {disk: "/dev/../etc/passwd", nic: "eth0/x"}')"
assert_eq "a disk or NIC that is not a plain name is malformed" "/tuning/disk /tuning/nic" \
    "$(json -r '[.errors[].path] | join(" ")')"
assert_status 200 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$(plan ra ac-host '{"readahead_kb": [128, 256]}' 1 | jq -c '.tuning = {disk: "/dev/sdb"}')"
assert_eq "the dry run names the disk's file" "/sys/block/sdb/queue/read_ahead_kb" \
    "$(json -r '.actions.host.files[0].path')"
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

# --- the plan's tuning.disk reaches the apply step and the job's read-back --------
# A disk hvb0 in the host's sysfs tree: /sys/class/block/hvb0 leads to its
# folder, as on a real host.
mkdir -p "$ROOT/sys/devices/virtual/block/hvb0/queue" "$ROOT/sys/class/block" "$ROOT/sys/block"
echo 128 >"$ROOT/sys/devices/virtual/block/hvb0/queue/read_ahead_kb"
ln -s ../../devices/virtual/block/hvb0 "$ROOT/sys/class/block/hvb0"
ln -s ../devices/virtual/block/hvb0 "$ROOT/sys/block/hvb0"
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan ra ac-host '{"readahead_kb": [128, 4096]}' 1 | jq -c '.tuning = {disk: "hvb0"}')"
P=$(json .id)
# shellcheck disable=SC2317 # called through wait_for
ra_ended() { [[ $(sql "SELECT status FROM plan_steps WHERE plan_id = $P AND kind = 'restore'") =~ ^(done|failed)$ ]]; }
wait_for "the tuning.disk plan runs to its restore step" 120 ra_ended
assert_eq "both blocks applied the level to the plan's disk and read it back" \
    "128:/sys/block/hvb0/queue/read_ahead_kb 4096:/sys/block/hvb0/queue/read_ahead_kb" \
    "$(sql "SELECT string_agg((settings->'readahead_kb'->>'read_back') || ':' || (settings->'readahead_kb'->>'source'), ' ' ORDER BY (settings->'readahead_kb'->>'read_back')::int) FROM plan_steps WHERE plan_id = $P AND kind = 'apply'")"
assert_eq "both jobs are done, read back at their end on the same disk" "done:4096 done:128" \
    "$(sql "SELECT string_agg(j.status || ':' || (r.observed->'settings'->'readahead_kb'->>'end'), ' ' ORDER BY (r.observed->'settings'->'readahead_kb'->>'end')::int DESC) FROM jobs j JOIN results r ON r.job_id = j.id AND r.attempt = j.attempt WHERE j.plan_id = $P")"
assert_eq "the restore put the disk's read-ahead back" 128 "$(cat "$ROOT/sys/devices/virtual/block/hvb0/queue/read_ahead_kb")"

# --- a reboot-class level waits for the operator ----------------------------------
# A second host whose KVM module parameter the test plays the operator for:
# the block at kvm_ept=off waits (nothing failed, the command shown) until
# the file reads the level, then runs; a waiting plan can be cancelled.
OROOT=$HV_TMP/oproot
EPT=$OROOT/sys/module/kvm_intel/parameters/ept
mkdir -p "$(dirname "$EPT")"
echo Y >"$EPT"
jq -n '{accel: "tcg", reason: "no ready marker from a kvm guest within 60s (last console line: none, the console stayed empty)",
        seconds_to_marker: null, probed_at: "2026-12-01T19:43:53Z",
        host: {host_kernel: "0.0-other", dev_kvm: "present", qemu: "QEMU 7.2", guest_kernel: "6.1"}}' >"$HV_TMP/kvm-probe.json"
hv_start_worker op-host --kind host --sysfs-root "$OROOT" --kvm-probe "$HV_TMP/kvm-probe.json" --poll 1 --wait 2
# shellcheck disable=SC2317 # called through wait_for
op_registered() { [[ $(sql "SELECT count(*) FROM targets WHERE name = 'op-host'") == 1 ]]; }
wait_for "the second host worker registers" 30 op_registered
OTID=$(sql "SELECT id FROM targets WHERE name = 'op-host'")
assert_status 200 GET "/api/v1/targets/$OTID"
assert_eq "its facts say EPT can be read here" true "$(json '.facts.actuators.kvm_ept.ok')"
assert_eq "and hold the KVM probe's answer from --kvm-probe" \
    "tcg|no ready marker from a kvm guest within 60s (last console line: none, the console stayed empty)|2026-12-01T19:43:53Z|false" \
    "$(json -r '.facts.kvm_probe | [.answer, .why, .probed_at, (.current | tostring)] | join("|")')"

OPPLAN=$(plan operator op-host '{"kvm_ept": ["on", "off"]}' 1 | jq -c '.order = "sequential"')
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$OPPLAN"
OP=$(json .id)
# shellcheck disable=SC2317 # called through wait_for
op_waits() { [[ $(sql "SELECT count(*) FROM plan_steps WHERE plan_id = $OP AND status = 'waiting_for_operator'") == 1 ]]; }
wait_for "the kvm_ept=off block waits for the operator" 60 op_waits
assert_eq "the first block (on, as the host is) ran; the second's job waits, queued, not failed" \
    "on:done off:queued" \
    "$(sql "SELECT string_agg(c.levels->>'kvm_ept' || ':' || j.status, ' ' ORDER BY j.block) FROM jobs j JOIN configurations c ON c.id = j.config_id WHERE j.plan_id = $OP")"
assert_status 200 GET "/api/v1/plans/$OP"
assert_eq "the plan runs, and says it waits for the operator" "running waiting_for_operator" \
    "$(json -r '[.status, .waiting.reason] | join(" ")')"
assert_eq "with the factor, the level, the file and the exact command" \
    "kvm_ept|off|on|/sys/module/kvm_intel/parameters/ept|modprobe -r kvm_intel && modprobe kvm_intel ept=0" \
    "$(json -r '.waiting.operator[0] | [.factor, .level, .value, .file, .command] | join("|")')"
assert_match "and in words" "^waiting for the operator on op-host: kvm_ept=off needs a reload of kvm_intel.*stop every guest, then run: modprobe -r kvm_intel && modprobe kvm_intel ept=0" \
    "$(json -r '.waiting.detail')"
assert_status 200 GET "/api/v1/plans/$OP/steps"
assert_eq "the apply step is waiting_for_operator" "done waiting_for_operator waiting" \
    "$(json -r '[.items[].status] | join(" ")')"
HVBENCH_SERVER=$URL HVBENCH_TOKEN=$SUBMIT_TOKEN "$CLI" status "$OP" >"$HV_TMP/op-status.out"
assert_match "hvbench status shows the command" \
    "^status +running: waiting for the operator on op-host: kvm_ept=off .*modprobe kvm_intel ept=0" \
    "$(grep '^status' "$HV_TMP/op-status.out")"
echo N >"$EPT"
T_OPERATOR=$SECONDS
hv_log "the operator set ept to N"
# shellcheck disable=SC2317 # called through wait_for
op_done() { [[ $(sql "SELECT count(*) FROM plan_steps WHERE plan_id = $OP AND kind = 'restore' AND status = 'done'") == 1 ]]; }
wait_for "the plan goes on once the file reads the level" 90 op_done
hv_log "the plan ended $((SECONDS - T_OPERATOR)) s after the operator's change; the waiting step was offered $(sql "SELECT attempt FROM plan_steps WHERE plan_id = $OP AND block = 1") times in all"
assert_status 200 GET "/api/v1/plans/$OP"
assert_eq "and is done, waiting for nothing" "done null 2" "$(json -r '[.status, (.waiting | tostring), (.jobs.done | tostring)] | join(" ")')"
assert_eq "the step read the level back" off \
    "$(sql "SELECT settings->'kvm_ept'->>'read_back' FROM plan_steps WHERE plan_id = $OP AND block = 1")"

# Cancelled while it waits: its jobs are cancelled, its restore runs.
OPPLAN=$(plan operator2 op-host '{"kvm_ept": ["off", "on"]}' 1 | jq -c '.order = "sequential"')
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$OPPLAN"
OP=$(json .id)
wait_for "the kvm_ept=on block waits for the operator" 60 op_waits
assert_status 200 POST "/api/v1/plans/$OP/cancel" "${S[@]}"
wait_for "the cancelled plan's restore step runs" 30 op_done
assert_eq "the waiting step is cancelled, its job too" "cancelled cancelled" \
    "$(sql "SELECT s.status || ' ' || j.status FROM plan_steps s JOIN jobs j ON j.plan_id = s.plan_id AND j.block = s.block WHERE s.plan_id = $OP AND s.block = 1")"
assert_status 200 GET "/api/v1/plans/$OP"
assert_eq "the plan is cancelled, waiting for nothing" "cancelled null" \
    "$(json -r '[.status, (.waiting | tostring)] | join(" ")')"

hv_finish
