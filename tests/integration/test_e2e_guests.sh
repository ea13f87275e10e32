#!/usr/bin/env bash
# test-timeout: 1800
# plain-pass-only: it drives QEMU guests under TCG through the system libvirtd (minutes); the tuning code it runs is under the sanitizers in test_tuning_worker, test_clone and test_chaos
# Guest templates end to end under QEMU TCG through the system libvirtd: a
# template guest of the guest image (deploy/guest-image/guest.sh, never
# started), a plan with the host as baseline and two clones of it, CPU (1 s)
# and disk (builtin, 8 MiB) workloads run by both clones at once
# (all-guests), factors vcpu_pin off/on (live) and disk_cache
# none/writeback (restart), in written order (disk_cache changes twice a
# repetition, so the clones restart three times), E2E_REPS repetitions
# (default 2). The host worker makes the clones in the first apply step,
# every apply step's settings read back at its configuration's levels on
# both clones, every job ends done, every result (the host's and the
# guests') has each factor of its configuration read back at its level
# when the job ended, every guest result has the host's telemetry, and
# after the restore step the clones, their overlays, logs, pool and folder
# are gone and the template's definition and files are as before.
# Then a one-block plan (vcpu_pin on, the disk workload alone) whose host
# worker is killed (SIGKILL) once the clones run: its restart removes the
# clones from its journal before it claims again, its registration queues
# the block's apply step again (clones made again), and the plan ends done.
# Where the time goes (docs/virt.md "Times"): the clones' boots under TCG
# and the built-in CPU engine's setup in a guest, which takes most of a
# CPU job there.
# Needs root, libvirtd (started here when none answers, and stopped after
# only then) and the packages of deploy/deps.sh.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/guest.sh
source "$(dirname "$0")/guest.sh"

TMPL=hvbench-e2e-tmpl-$$
GUEST_NAME=$TMPL
HOST=e2e-host
REPS=${E2E_REPS:-2}

guest_requirements qemu-img
hv_setup

# Every domain and pool a plan of this test left, by name.
leftovers() {
    {
        virsh_ list --all --name | grep -E -- "^e2e-p[0-9]+-" || true
        virsh_ pool-list --all --name | grep -E -- "^hvbench-clones-" || true
    } | sort
}
cleanup_clones() {
    local d
    for d in $(virsh_ list --all --name | grep -E -- "^e2e-p[0-9]+-" || true); do
        virsh_ destroy "$d" >/dev/null 2>&1 || true
        virsh_ undefine "$d" >/dev/null 2>&1 || true
    done
    for d in $(virsh_ pool-list --all --name | grep -E -- "^hvbench-clones-" || true); do
        [[ $(virsh_ pool-dumpxml "$d") == *"<path>$TDIR/"* ]] && virsh_ pool-destroy "$d" >/dev/null
    done
    rm -rf -- "${TDIR:?}/hvbench-clones"
}
# Before the template goes: the host worker first (a step in progress
# would define a clone again), then the clones.
guest_before_undefine() {
    local pid
    for pid in "${HV_WORKER_PIDS[@]}"; do hv_stop_pid "$pid" 10; done
    HV_WORKER_PIDS=()
    [[ $DEFINED == 1 ]] && cleanup_clones
    return 0
}
guest_trap

# --- the image (cached), libvirtd, the template ---------------------------------------
# The guests run the plain build's worker when there is one: a sanitizer
# build's worker under TCG is several times slower, and the host worker,
# which does the tuning, stays the build under test.
GUEST_WORKER=$WORKER
if [[ $WORKER == */sanitize/* && -x $HV_ROOT/build/bin/hvbench-worker ]]; then
    GUEST_WORKER=$HV_ROOT/build/bin/hvbench-worker
fi
hv_log "the guests' worker: $GUEST_WORKER"
IMAGE=$(BUILD=${GUEST_WORKER%/bin/hvbench-worker} "$HV_ROOT/deploy/guest-image/build.sh" --worker "$GUEST_WORKER" \
    2>"$HV_TMP/build.log" | tail -n 1)
[[ -n $IMAGE && -s $IMAGE/initrd.img ]] || { hv_tail "$HV_TMP/build.log"; hv_die "the image build failed"; }
guest_libvirtd_start

"$GUEST_SH" define "$TMPL" --accel tcg --image "$IMAGE" --server "http://10.0.2.2:$PORT" \
    --token "$WORKER_TOKEN" >/dev/null || hv_die "guest.sh define failed"
DEFINED=1
TDIR=$IMAGES/guests/$TMPL
# The template's definition and its folder: each file's size, mode, owner
# and mtime; each folder's mode and owner (a folder's mtime moves when the
# clone folder comes and goes in it).
snapshot() {
    virsh_ dumpxml --inactive --security-info "$TMPL"
    {
        find "$TDIR" -type f -printf '%P %s %m %u:%g %T@\n'
        find "$TDIR" -type d -printf '%P/ %m %u:%g\n'
    } | sort
}
snapshot >"$HV_TMP/before.txt"
assert_eq "no clone and no clone pool before" "" "$(leftovers)"

hv_start_worker "$HOST" --libvirt qemu:///system --kind host
host_registered() {
    api GET "/api/v1/targets?kind=host"
    [[ -n $(json -r --arg n "$HOST" '.items[] | select(.name == $n) | .id') ]]
}
wait_for "the host worker registers" 30 host_registered

plan_json() { # NAME REPS FACTORS WORKLOADS
    jq -nc --arg n "$1" --argjson r "$2" --argjson f "$3" --arg w "$4" --arg h "$HOST" --arg t "$TMPL" '{
        name: $n, targets: {host: $h, guests: {template: {domain: $t, count: 2, prefix: "e2e-"}}},
        workloads: [{id: "cpu", kind: "cpu", engine: "builtin", params: {copies: 1, seconds: 1}},
                    {id: "disk", kind: "disk", engine: "builtin",
                     params: {size: "8m", block: "1m", ops: ["seq-write", "seq-read"]}}]
            | map(select(.id | IN($w | split(" ")[]))),
        concurrency: "all-guests", factors: $f, order: "sequential",
        repetitions: {min: $r, max: $r}}'
}
plan_ended() {
    api GET "/api/v1/plans/$P"
    [[ $(json -r .status) =~ ^(done|failed|cancelled)$ ]]
}
restored() {
    api GET "/api/v1/plans/$P/steps"
    [[ $(json -r '[.items[] | select(.kind == "restore") | .status] | join("")') =~ ^(done|failed)$ ]]
}

# --- the plan ---------------------------------------------------------------------
t0=$SECONDS
assert_status 201 POST /api/v1/plans -H "Authorization: Bearer $SUBMIT_TOKEN" --data-binary \
    "$(plan_json e2e-guests "$REPS" '{"vcpu_pin": ["off", "on"], "disk_cache": ["none", "writeback"]}' "cpu disk")"
P=$(json .id)
# A guard, not a measure: a repetition took 2-4 minutes on two shared
# cores (docs/virt.md "Times").
wait_for "the plan ends" $((450 * REPS)) plan_ended
hv_log "plan $P: $(json -r .status) after $((SECONDS - t0)) s ($REPS repetition(s))"
assert_eq "the plan is done" "done" "$(json -r .status)"
assert_eq "every job done: 4 configurations x 2 clones x 2 workloads and the host's baseline, per repetition" \
    "$((REPS * (4 * 2 * 2 + 2))) 0" "$(json -r '"\(.jobs.done) \(.jobs.failed)"')"
wait_for "the restore step ran" 60 restored
api GET "/api/v1/plans/$P/steps"
steps=$BODY
assert_eq "every step done" "$((REPS * 4 + 1))" "$(jq '[.items[] | select(.status == "done")] | length' <<<"$steps")"
# Each apply step read every level back on both clones at its configuration.
bad=$(jq -r --arg a "e2e-p$P-1" --arg b "e2e-p$P-2" '.items[] | select(.kind == "apply")
    | (.configuration | if test("vcpu_pin=on") then "on" else "off" end) as $pin
    | (.configuration | if test("disk_cache=writeback") then "writeback" else "none" end) as $cache
    | select(.settings.vcpu_pin.read_back != $pin or .settings.disk_cache.read_back != $cache
             or (.settings.disk_cache.detail | keys) != [$a, $b]
             or .settings.vcpu_pin.detail[$a].read_back != $pin or .settings.disk_cache.detail[$b].read_back != $cache)
    | "block \(.block) \(.configuration): \(.settings | tojson)"' <<<"$steps")
assert_eq "every apply step's settings read back as configured on both clones" "" "$bad"
api GET "/api/v1/plans/$P/jobs?limit=1000"
jobs=$BODY
assert_eq "the jobs ran on the host and the two clones" "$HOST e2e-p$P-1 e2e-p$P-2" \
    "$(json -r '[.items[].target] | unique | join(" ")')"
# Every result (the host's and the guests') carries each factor of its
# configuration as read back when the job ended (the host's worker reads
# the guests' domains for them) at its level, and the guests' results
# carry the host's telemetry.
bad=
for id in $(jq -r '.items[].id' <<<"$jobs"); do
    api GET "/api/v1/jobs/$id/results"
    bad+=$(jq -r --arg id "$id" --argjson job "$(jq -c --argjson id "$id" '.items[] | select(.id == $id)' <<<"$jobs")" '
        ({vcpu_pin: "off", disk_cache: "none"} + ($job.configuration | if . == "default" then {}
            else split(",") | map(split("=") | {(.[0]): .[1]}) | add end)) as $want
        | .items[-1] as $r
        | [$want | to_entries[] | select($r.observed.settings[.key].level != .value
            or $r.observed.settings[.key].read_back != .value or $r.observed.settings[.key].end != .value)
            | .key] as $off
        | select(($off | length) > 0 or ($job.target != $host and $r.telemetry != "present"))
        | "job \($id) on \($job.target) \($job.configuration): settings \($r.observed.settings | tojson), telemetry \($r.telemetry) \($r.telemetry_reason)\n"' \
        --arg host "$HOST" <<<"$BODY")
done
assert_eq "every result's observed.settings reads back its configuration's levels at the job's end; every guest result has host telemetry" "" "$bad"
assert_eq "no clone and no clone pool after" "" "$(leftovers)"
assert_eq "no clone folder after" no "$([[ -e $TDIR/hvbench-clones ]] && echo yes || echo no)"
snapshot >"$HV_TMP/after.txt"
assert_eq "the template's definition and files are as before" "" \
    "$(diff "$HV_TMP/before.txt" "$HV_TMP/after.txt" || true)"

# --- the host worker killed while the clones run --------------------------------------
assert_status 201 POST /api/v1/plans -H "Authorization: Bearer $SUBMIT_TOKEN" --data-binary \
    "$(plan_json e2e-kill 1 '{"vcpu_pin": ["on"]}' disk)"
P=$(json .id)
clones_run() { [[ $(virsh_ list --name | grep -c -- "^e2e-p$P-") == 2 ]]; }
wait_for "the clones run" 120 clones_run
host_pid=${HV_WORKER_PIDS[-1]}
kill -KILL "$host_pid"
wait "$host_pid" 2>/dev/null || true
assert_eq "the clones outlive the killed worker" 2 "$(virsh_ list --all --name | grep -c -- "^e2e-p$P-")"
hv_start_worker "$HOST" --libvirt qemu:///system --kind host
gone() { [[ $(virsh_ list --all --name | grep -c -- "^e2e-p$P-") == 0 ]] || return 1; }
wait_for "the restarted worker removes the clones from its journal" 60 gone
assert_match "and says so" "plan $P: (restoring|everything restored)" "$(cat "$HV_TMP/worker-$HOST.log")"
wait_for "the plan ends" 300 plan_ended
status=$(json -r .status)
hv_log "plan $P after the kill: $status ($(json -c .jobs))"
wait_for "its restore step ran" 60 restored
assert_eq "the plan is done: the block in progress is applied again (its clones made again)" \
    "done" "$status"
assert_eq "no clone and no clone pool after" "" "$(leftovers)"
snapshot >"$HV_TMP/after2.txt"
assert_eq "the template's definition and files are as before" "" \
    "$(diff "$HV_TMP/before.txt" "$HV_TMP/after2.txt" || true)"

hv_finish
