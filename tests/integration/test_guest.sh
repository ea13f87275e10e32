#!/usr/bin/env bash
# A real guest: the guest image (deploy/guest-image/build.sh, cached) booted
# under QEMU TCG through the system libvirtd. Its worker reaches the server
# on the host's 127.0.0.1 as 10.0.2.2, registers as a guest whose DMI UUID
# is the domain's, the server links it to the host worker's domain, a
# one-second CPU plan runs on it, and the ACPI power button stops the worker
# and powers the guest off. No domain and no guest files are left behind.
# Needs root, libvirtd (started here when none answers, and stopped after
# only then) and the packages of deploy/deps.sh.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/guest.sh
source "$(dirname "$0")/guest.sh"

NAME=hvbench-test-guest-$$
GUEST_NAME=$NAME
HOST=guest-test-host

# shellcheck disable=SC2119 # no tool beyond the common ones
guest_requirements
hv_setup

# With KEEP=1 the guest's serial log stays with the test's files.
guest_before_undefine() {
    [[ $DEFINED == 1 && ${KEEP:-0} == 1 ]] && cp -- "$("$GUEST_SH" log "$NAME")" "$HV_TMP/serial.log" 2>/dev/null
    return 0
}
guest_trap

# --- the image: built once, then taken from the cache ----------------------
t0=$SECONDS
IMAGE=$("$HV_ROOT/deploy/guest-image/build.sh" --worker "$WORKER" 2>"$HV_TMP/build.log" | tail -n 1)
[[ -n $IMAGE && -s $IMAGE/initrd.img ]] || { hv_tail "$HV_TMP/build.log"; hv_die "the image build failed"; }
hv_log "image $IMAGE ($((SECONDS - t0))s): $(tail -n 1 "$HV_TMP/build.log")"
again=$("$HV_ROOT/deploy/guest-image/build.sh" --worker "$WORKER" 2>&1 >/dev/null)
assert_match "a second build with the same inputs builds nothing" 'up to date, nothing built' "$again"
assert_match "the image lives where QEMU can read it" "^$IMAGES/image-" "$IMAGE"

# --- libvirtd ------------------------------------------------------------------
guest_libvirtd_start
hv_log "libvirtd started by this test: $LIBVIRTD_STARTED"

# --- define and boot ------------------------------------------------------------------
t_define=$SECONDS
UUID=$("$GUEST_SH" define "$NAME" --accel tcg --image "$IMAGE" --server "http://10.0.2.2:$PORT" \
    --token "$WORKER_TOKEN" --label suite=guest) || hv_die "guest.sh define failed"
DEFINED=1
assert_eq "virsh domuuid is the UUID define printed" "$UUID" "$(virsh_ domuuid "$NAME")"
xml=$(virsh_ dumpxml "$NAME")
assert_match "TCG domain" "<domain type='qemu'" "$xml"
assert_match "the benchmark disk uses io='threads'" "io='threads'" "$xml"
assert_match "ACPI is on (virsh shutdown works)" "<acpi/>" "$xml"
assert_match "the kernel command line names the server" "hvbench.server=http://10.0.2.2:$PORT" "$xml"

# The host worker reports libvirt's domains (read at its start: after define).
hv_start_worker "$HOST" --libvirt qemu:///system --kind host

t_boot=$SECONDS
"$GUEST_SH" start "$NAME" || hv_die "virsh start failed"
ready=$("$GUEST_SH" wait "$NAME" 150 2>"$HV_TMP/wait.log") ||
    { cat "$HV_TMP/wait.log"; hv_die "no ready marker"; }
boot_s=$((SECONDS - t_boot))
hv_log "ready marker ${boot_s}s after virsh start: $ready"
assert_match "the ready marker: name, DHCP address, benchmark disk mounted" \
    "^HVBENCH-GUEST-READY name=$NAME ip=10\.0\.2\.15/24 disk=fs" "$ready"

# --- registration over 10.0.2.2 -----------------------------------------------------
# The host worker lists the domain, so the server makes the guest its host's:
# target HOST/NAME.
GN=$HOST/$NAME
guest_target() {
    api GET "/api/v1/targets?kind=guest"
    GUEST_ID=$(json --arg n "$GN" '.items[] | select(.name == $n) | .id')
    [[ -n $GUEST_ID ]]
}
wait_for "the guest's worker registers" 90 guest_target
t_register=$((SECONDS - t_define))
api GET "/api/v1/targets/$GUEST_ID"
assert_eq "registered as a guest of its host" "guest $HOST $NAME" "$(json -r '"\(.kind) \(.host) \(.short_name)"')"
assert_eq "facts.dmi_product_uuid is the domain's UUID" "$UUID" "$(json .facts.dmi_product_uuid)"
assert_eq "the server links it to the host's domain" "$HOST $NAME $UUID" \
    "$(json '[.domain.host, .domain.name, .domain.uuid] | join(" ")')"
assert_eq "its label came through the kernel command line" guest "$(json .labels.suite)"
assert_eq "it runs the image's kernel" "$(sed -n 's/^kernel linux-image-\([^ ]*\) .*/\1/p' "$IMAGE/manifest")" \
    "$(json .facts.kernel)"

# --- a three-second CPU plan on it (long enough for the host worker's telemetry to
# --- take a few one-second samples), and a small disk workload on its benchmark disk ---
jq --arg h "$HOST" --arg g "$NAME" \
    '.targets = {host: $h, guests: {domains: [$g]}} | .workloads[0].params.seconds = 3 | .repetitions.min = 1
     | .workloads += [{id: "disk", kind: "disk", engine: "builtin",
                       params: {size: "32m", block: "1m", ops: ["seq-write", "seq-read"]}}]' \
    "$HV_ROOT/examples/quick.json" >"$HV_TMP/plan.json"
assert_status 201 POST /api/v1/plans -H "Authorization: Bearer $SUBMIT_TOKEN" \
    --data-binary @"$HV_TMP/plan.json"
PLAN=$(json .id)
plan_ended() {
    api GET "/api/v1/plans/$PLAN"
    [[ $(json .status) =~ ^(done|failed|cancelled)$ ]]
}
wait_for "the plan ends" 120 plan_ended
assert_eq "the plan is done" "done" "$(json .status)"
api GET "/api/v1/plans/$PLAN/jobs"
jobs=$BODY
guest_job() { jq -r --arg g "$GN" --arg w "$1" '.items[] | select(.target == $g and .workload == $w) | .id' <<<"$jobs"; }
api GET "/api/v1/targets?kind=host"
HOST_ID=$(json --arg n "$HOST" '.items[] | select(.name == $n) | .id')
api GET "/api/v1/targets/$HOST_ID"
assert_eq "the host's facts give the domain's type: qemu (TCG)" qemu \
    "$(json --arg n "$NAME" '.facts.libvirt.domains[] | select(.name == $n) | .type')"
api GET "/api/v1/plans/$PLAN/report"
assert_match "the report says the guest ran under TCG, not KVM" \
    "^$GN ran under QEMU's TCG emulation \\(domain type qemu\\), not KVM" \
    "$(json -r '.warnings[] | select(.kind == "emulated") | .message')"
JOB=$(guest_job cpu)
assert_match "the cpu workload ran on the guest" '^[0-9]+$' "$JOB"
api GET "/api/v1/jobs/$JOB/results?samples=0"
assert_eq "its result is ok" ok "$(json '.items[-1].status')"
assert_eq "with a positive cpu.score" true "$(json '[.items[-1].metrics[] | select(.name == "cpu.score") | .value > 0] == [true]')"
cpu_telemetry() {
    api GET "/api/v1/jobs/$JOB/results"
    [[ $(json '.items[-1].telemetry') == present ]]
}
wait_for "the host worker's telemetry of the cpu job arrived" 20 cpu_telemetry
hv_log "host telemetry of the cpu job: $(json '[.items[-1].samples[] | select(.metric | startswith("host."))] | length') samples, vCPU max $(json '[.items[-1].samples[] | select(.metric == "host.domain.vcpu_time_pct") | .value] | max')%, host_busy $(json -c '.items[-1].observed.host_busy')"
assert_eq "it sampled the host's CPU and the domain's vCPU time and disks" true \
    "$(json '[.items[-1].samples[].metric] | (index("host.cpu.user_pct") != null) and (index("host.domain.vcpu_time_pct") != null) and (index("host.domain.block.rd_bytes_s") != null)')"
assert_eq "the guest's vCPU ran while the cpu job ran" true \
    "$(json '[.items[-1].samples[] | select(.metric == "host.domain.vcpu_time_pct") | .value] | max > 0')"
assert_eq "and the result says whether the host was busy, with the host's own work" \
    "boolean number" "$(json '.items[-1].observed.host_busy | "\(.busy | type) \(.nonguest_cpu_pct | type)"')"
JOB=$(guest_job disk)
assert_match "the disk workload ran on the guest" '^[0-9]+$' "$JOB"
api GET "/api/v1/jobs/$JOB/results?samples=0"
assert_eq "O_DIRECT I/O on the benchmark disk's ext4 (/var/tmp) works: ok, no error" "ok null" "$(json '.items[-1].status + " " + (.items[-1].error // "null")')"
assert_eq "on an ext4 file under /var/tmp, O_DIRECT" "ext4 true true" \
    "$(json '.items[-1].observed | [.filesystem, .direct, (.file | startswith("/var/tmp/"))] | map(tostring) | join(" ")')"
assert_eq "with positive write and read rates" true \
    "$(json '[.items[-1].metrics[] | select(.name == "disk.seq_write.mbps" or .name == "disk.seq_read.mbps") | .value > 0] == [true, true]')"

# --- the ACPI power button stops the worker, the guest powers off ------------------
stopped=$("$GUEST_SH" stop "$NAME" 60)
hv_log "$stopped"
assert_match "the guest powered off by ACPI, not destroyed" "powered off \(ACPI\)" "$stopped"
serial=$(cat "$("$GUEST_SH" log "$NAME")")
assert_match "the power button stopped the worker" "power button: stopping the worker" "$serial"
assert_match "which exited 0" "HVBENCH-GUEST-EXIT status=0" "$serial"
total_s=$((SECONDS - t_define))
hv_log "define -> boot -> register -> power-off: ${total_s}s (boot to marker ${boot_s}s, define to registered ${t_register}s)"

"$GUEST_SH" undefine "$NAME"
DEFINED=0
assert_eq "no domain of this test remains" "" "$(virsh_ list --all --name | grep -x -- "$NAME" || true)"
assert_eq "its files are gone" no "$([[ -e $IMAGES/guests/$NAME ]] && echo yes || echo no)"

hv_finish
