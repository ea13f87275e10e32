#!/usr/bin/env bash
# What the host worker costs while a guest measures: the CPU time of every
# thread of the host's hvbench-worker (its per-second telemetry of the
# guest's vCPUs, disks and NICs through libvirt, heartbeats, the guest's
# settings read back) as a share of the CPU time of the guest's vCPU
# threads, and the host worker's resident memory meanwhile.
#
# One QEMU guest of the guest image (deploy/guest-image, TCG here, KVM
# where the probe boots) runs the built-in cpu engine for BENCH_SECONDS +
# 10 s; the host worker runs with --libvirt qemu:///system. After a settle,
# every thread of the host worker and every vCPU thread of the guest's QEMU
# process ("CPU n/TCG" or "CPU n/KVM") is read twice BENCH_SECONDS apart from
# /proc/PID/task/TID/schedstat. Goal of the issue: under 0.1 %.
#
#   make bench-progs && bench/guest_agent_cost.sh
#   (or BENCH_ONLY=guest_agent_cost make bench)
#
# Needs root, libvirt and QEMU (deploy/deps.sh); starts libvirtd when none
# answers and stops it after only then. Env: BENCH_SECONDS (20),
# BENCH_SETTLE (5), BENCH_PG_FAST (0), KEEP (0).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh

SAMPLE=${BENCH_SECONDS:-20}
SETTLE=${BENCH_SETTLE:-5}
RUN=$((SETTLE + SAMPLE + 10))
GUEST=hvbench-agent-$$
HOST=agent-host
# GUEST_SH, LIBVIRTD_SH, virsh_ and guest_libvirtd_start, as the guest tests
# have them (its exit trap is not used: this script sets its own).
# shellcheck source=tests/integration/guest.sh
source tests/integration/guest.sh

[[ $(id -u) -eq 0 ]] || hv_die "needs root (the system libvirt daemon)"
for tool in virsh libvirtd qemu-system-x86_64; do
    command -v "$tool" >/dev/null || hv_die "$tool not found (deploy/deps.sh)"
done

bench_setup
echo "# $(bench_machine)"

guest_libvirtd_start
guest_cleanup() {
    local rc=$? pid
    for pid in "${BENCH_PIDS[@]}"; do [[ $pid == "$WPID" ]] && hv_stop_pid "$pid" 10; done
    [[ $DEFINED == 1 ]] && "$GUEST_SH" undefine "$GUEST" >/dev/null 2>&1
    [[ $LIBVIRTD_STARTED == 1 ]] && "$LIBVIRTD_SH" stop >/dev/null
    (exit "$rc")
    bench_teardown
}
WPID=
trap guest_cleanup EXIT

echo "# the guest image (built once, cached in var/guest-image)"
IMAGE=$("$HV_ROOT/deploy/guest-image/build.sh" --worker "$WORKER" 2>"$BENCH_TMP/image.log" | tail -n 1)
[[ -n $IMAGE && -s $IMAGE/initrd.img ]] || { hv_tail "$BENCH_TMP/image.log"; hv_die "the image build failed"; }
PORT=${URL##*:}
"$GUEST_SH" define "$GUEST" --image "$IMAGE" --server "http://10.0.2.2:$PORT" \
    --token "$WORKER_TOKEN" >/dev/null || hv_die "guest.sh define failed"
DEFINED=1
"$WORKER" --server "$URL" --token "$WORKER_TOKEN" --name "$HOST" --kind host \
    --libvirt qemu:///system --state-dir "$BENCH_TMP/state" >>"$BENCH_TMP/worker.log" 2>&1 &
WPID=$!
BENCH_PIDS+=("$WPID")
"$GUEST_SH" start "$GUEST" >/dev/null || hv_die "the guest did not start"
accel=$(virsh_ dumpxml "$GUEST" | sed -n "s/.*<domain type='\([a-z]*\)'.*/\1/p")

# The host worker lists the domain: the guest is its host's, HOST/GUEST.
registered() {
    curl -fsS --max-time 5 "$URL/api/v1/targets?kind=guest" |
        jq -e --arg n "$HOST/$GUEST" '.items[] | select(.name == $n)' >/dev/null
}
for ((i = 0; i < 300; i++)); do
    registered && break
    sleep 1
done
registered || hv_die "the guest's worker did not register within 300 s"
echo "# guest $GUEST ($accel) registered; its cpu job runs $RUN s, sampled $SAMPLE s after $SETTLE s"

jq -n --arg h "$HOST" --arg g "$GUEST" --argjson s "$RUN" '{name: "guest-agent-cost",
    targets: {host: $h, guests: {domains: [$g]}}, baseline: "default",
    repetitions: {min: 1, max: 1},
    workloads: [{id: "c", kind: "cpu", engine: "builtin", params: {copies: 1, seconds: $s}}]}' \
    >"$BENCH_TMP/plan.json"
P=$(bench_submit "$BENCH_TMP/plan.json")

guest_job_running() {
    curl -fsS --max-time 5 "$URL/api/v1/plans/$P/jobs" |
        jq -e --arg g "$HOST/$GUEST" '.items[] | select(.target == $g and .status == "running")' >/dev/null
}
for ((i = 0; i < 600; i++)); do
    guest_job_running && break
    sleep 0.5
done
guest_job_running || hv_die "the guest's job did not start"
sleep "$SETTLE"

QPID=$(cat "/run/libvirt/qemu/$GUEST.pid" 2>/dev/null) || hv_die "no QEMU pid for $GUEST"
# ns PID PATTERN: CPU nanoseconds of PID's threads whose name matches
# PATTERN (an extended regex), summed.
ns() {
    local t comm n sum=0
    for t in /proc/"$1"/task/*; do
        comm=$(cat "$t/comm" 2>/dev/null) || continue
        [[ $comm =~ $2 ]] || continue
        read -r n _ <"$t/schedstat" 2>/dev/null || continue
        sum=$((sum + n))
    done
    echo "$sum"
}
w0=$(ns "$WPID" '.') v0=$(ns "$QPID" '^CPU [0-9]+/')
max_rss=0
for ((i = 0; i < SAMPLE; i++)); do
    sleep 1
    rss=$(awk '$1 == "VmRSS:" {print $2}' "/proc/$WPID/status")
    ((rss > max_rss)) && max_rss=$rss
done
w1=$(ns "$WPID" '.') v1=$(ns "$QPID" '^CPU [0-9]+/')
guest_job_running || hv_die "the guest's job ended during the measurement"

share=$(awk -v w="$((w1 - w0))" -v v="$((v1 - v0))" 'BEGIN {printf "%.6f", w / v}')
bench_result guest_agent_cost "host worker's CPU while a $accel guest runs the cpu engine" \
    "$(awk -v w="$((w1 - w0))" 'BEGIN {printf "%.2f", w / 1e6}')" "CPU ms" "the guest's vCPU threads" \
    "$(awk -v v="$((v1 - v0))" 'BEGIN {printf "%.0f", v / 1e6}')" "$share" "<=0.001" 1 \
    "host worker VmRSS max $(awk -v r="$max_rss" 'BEGIN {printf "%.1f", r / 1024}') MB"
awk -v w="$((w1 - w0))" -v v="$((v1 - v0))" -v rss="$max_rss" -v accel="$accel" -v s="$SAMPLE" 'BEGIN {
    printf "\n| guest (%s), cpu engine | guest vCPU threads CPU (ms) | host worker CPU (ms) | host worker / vCPU | host worker VmRSS max (MB) |\n", accel
    print "|---|---|---|---|---|"
    printf "| %d s sampled | %.0f | %.2f | %.4f %% | %.1f |\n", s, v / 1e6, w / 1e6, w / v * 100, rss / 1024
}'
