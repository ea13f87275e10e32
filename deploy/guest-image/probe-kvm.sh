#!/usr/bin/env bash
# Can guests of this host boot with KVM? Some machines show a /dev/kvm (a
# nested, paravirtual KVM: KVM_CREATE_VM succeeds and the firmware runs)
# under which a stock kernel hangs right after the firmware. So the answer
# comes from a real boot: the guest image is started once with domain type
# 'kvm' and the probe waits (default 60 s) for its ready marker on the
# serial console. kvm when it comes, tcg otherwise, with the reason.
#
#   deploy/guest-image/probe-kvm.sh [--force] [--answer] [--timeout SECONDS]
#
# The answer is cached in var/guest-image/kvm-probe.json and reused while
# the host's kernel, QEMU, the presence of /dev/kvm and the guest kernel
# are the same; --force probes again. Prints one line ("kvm-probe: tcg:
# REASON"); --answer prints only kvm or tcg. Needs libvirtd
# (deploy/libvirtd.sh start). The probe's domain is destroyed and undefined
# on every path.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd -P)
CACHE=${HVBENCH_GUEST_CACHE:-$ROOT/var/guest-image}
OUT=$CACHE/kvm-probe.json
GUEST=$HERE/guest.sh
URI=qemu:///system
FORCE=0 ANSWER_ONLY=0 TIMEOUT=60
NAME=''

die() {
    echo "probe-kvm.sh: $*" >&2
    exit 1
}

while [[ $# -gt 0 ]]; do
    case $1 in
    --force) FORCE=1 ;;
    --answer) ANSWER_ONLY=1 ;;
    --timeout)
        [[ ${2:-} =~ ^[0-9]+$ && $2 -ge 5 ]] || die "--timeout takes seconds, at least 5"
        TIMEOUT=$2
        shift
        ;;
    *)
        echo "usage: deploy/guest-image/probe-kvm.sh [--force] [--answer] [--timeout SECONDS]" >&2
        exit 2
        ;;
    esac
    shift
done

# What the answer depends on; a cached answer holds while it is the same.
host_state() {
    local kvm=absent image
    [[ -e /dev/kvm ]] && kvm=present
    image=$("$GUEST" xml hvbench-kvm-probe --accel tcg | sed -n 's|.*<kernel>\(.*\)</kernel>.*|\1|p')
    jq -cn --arg host_kernel "$(uname -r)" --arg dev_kvm "$kvm" \
        --arg qemu "$(qemu-system-x86_64 --version 2>/dev/null | head -n 1)" \
        --arg guest_kernel "$(sed -n 's/^kernel //p' "$(dirname "$image")/manifest" 2>/dev/null)" \
        '{host_kernel: $host_kernel, dev_kvm: $dev_kvm, qemu: $qemu, guest_kernel: $guest_kernel}'
}

report() {
    local accel=$1 reason=$2 cached=$3
    if [[ $ANSWER_ONLY == 1 ]]; then
        echo "$accel"
    else
        echo "kvm-probe: $accel: $reason${cached:+ (cached, probed $cached)}"
    fi
}

# Destroy and undefine the probe's domain; the EXIT trap.
cleanup() {
    if [[ -n $NAME ]]; then
        "$GUEST" undefine "$NAME" >/dev/null 2>&1 || true
    fi
}

# One boot under KVM: sets ACCEL, REASON and SECONDS_TO_MARKER.
probe_boot() {
    local err t0 line
    ACCEL=tcg SECONDS_TO_MARKER=null
    if [[ ! -e /dev/kvm ]]; then
        REASON="no /dev/kvm"
        return 0
    fi
    if ! err=$(virsh -q -c "$URI" domcapabilities --virttype kvm 2>&1 >/dev/null); then
        REASON="libvirt offers no kvm domain: ${err//$'\n'/ }"
        return 0
    fi
    NAME=hvbench-kvm-probe-$$
    trap cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    "$GUEST" define "$NAME" --accel kvm >/dev/null
    t0=$SECONDS
    if ! err=$("$GUEST" start "$NAME" 2>&1); then
        REASON="a kvm domain does not start: ${err//$'\n'/ }"
        return 0
    fi
    if "$GUEST" wait "$NAME" "$TIMEOUT" >/dev/null 2>&1; then
        ACCEL=kvm SECONDS_TO_MARKER=$((SECONDS - t0))
        REASON="a kvm guest reached its ready marker in ${SECONDS_TO_MARKER}s"
    else
        line=$({ grep -a -v '^[[:space:]]*$' "$("$GUEST" log "$NAME")" 2>/dev/null || true; } |
            tail -n 1 | tr -cd '[:print:]')
        REASON="no ready marker from a kvm guest within ${TIMEOUT}s (last console line: ${line:-none, the console stayed empty})"
    fi
}

command -v jq >/dev/null 2>&1 || die "jq not found; run deploy/deps.sh"
virsh -q -c "$URI" version >/dev/null 2>&1 || die "$URI does not answer; run deploy/libvirtd.sh start"
STATE=$(host_state)
if [[ $FORCE == 0 && -r $OUT ]] && jq -e --argjson s "$STATE" '.host == $s' "$OUT" >/dev/null 2>&1; then
    report "$(jq -r .accel "$OUT")" "$(jq -r .reason "$OUT")" "$(jq -r .probed_at "$OUT")"
    exit 0
fi
probe_boot
cleanup
NAME=''
mkdir -p "$CACHE"
jq -n --arg accel "$ACCEL" --arg reason "$REASON" --argjson host "$STATE" \
    --argjson seconds "$SECONDS_TO_MARKER" --arg at "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    '{accel: $accel, reason: $reason, seconds_to_marker: $seconds, probed_at: $at, host: $host}' \
    >"$OUT.new"
mv -f -- "$OUT.new" "$OUT"
report "$ACCEL" "$REASON" ''
