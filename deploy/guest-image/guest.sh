#!/usr/bin/env bash
# Guests of the hvbench guest image on the system libvirt (qemu:///system).
#
#   guest.sh define NAME [options]   define the domain (prints its UUID)
#   guest.sh xml NAME [options]      print the domain XML, define nothing
#   guest.sh start NAME              start it
#   guest.sh wait NAME [SECONDS]     wait for the ready marker on its serial
#                                    console (default 120 s); prints the line
#   guest.sh stop NAME [SECONDS]     power it off with the ACPI button, destroy
#                                    it if still running after SECONDS (30)
#   guest.sh undefine NAME           destroy if running, undefine, delete its files
#   guest.sh log NAME                the path of its serial console log
#
# define/xml options:
#   --server URL     the hvbench server as the guest sees it (user-mode
#                    networking: the host's 127.0.0.1 is 10.0.2.2)
#   --token TOKEN    a worker-role token (default: $HVBENCH_TOKEN)
#   --uuid UUID      the domain's UUID (default: a random one)
#   --memory MIB     256..4096 (default 384)
#   --vcpus N        1..16 (default 1)
#   --accel auto|kvm|tcg   domain type; auto (default) asks probe-kvm.sh
#   --disk fs|device|none  the benchmark disk's use in the guest (default fs)
#   --net dhcp|static, --label KEY=VALUE (repeatable), --log LEVEL
#   --host NAME      the host worker's name, given to the guest's worker as
#                    --host (default: the server finds the host by the
#                    domain's UUID among the domains host workers list)
#   --image DIR      an image build.sh made (default: the one it made last
#                    for $BUILD, building it when there is none)
#
# A guest's files (its two disks, the serial log) live in
# $HVBENCH_GUEST_IMAGES/guests/NAME/ (default /var/lib/libvirt/images/hvbench).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd -P)
URI=qemu:///system
IMAGES=${HVBENCH_GUEST_IMAGES:-/var/lib/libvirt/images/hvbench}
CACHE=${HVBENCH_GUEST_CACHE:-$ROOT/var/guest-image}
MARKER=HVBENCH-GUEST-READY

die() {
    echo "guest.sh: $*" >&2
    exit 1
}

usage() {
    sed -n '3,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

virsh_() { virsh -q -c "$URI" "$@"; }

check_name() {
    [[ $1 =~ ^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$ ]] ||
        die "a guest name is 1..63 of A-Z a-z 0-9 . _ - (not starting with . _ -): '$1'"
}

xml_escape() {
    local s=$1
    s=${s//&/&amp;}
    s=${s//</&lt;}
    s=${s//>/&gt;}
    s=${s//\'/&apos;}
    s=${s//\"/&quot;}
    printf '%s' "$s"
}

# The image directory: --image, else the last build for $BUILD, else build.
default_image() {
    local build=${BUILD:-build} name
    case $build in /*) build=${build#"$ROOT"/} ;; esac
    name=${build//\//-}
    if [[ -r $CACHE/image-$name ]] && [[ -s $(cat "$CACHE/image-$name")/initrd.img ]]; then
        cat "$CACHE/image-$name"
        return 0
    fi
    "$HERE/build.sh" | tail -n 1
}

# The domain type for --accel auto: probe-kvm.sh's answer (cached per host).
auto_type() {
    local accel
    accel=$("$HERE/probe-kvm.sh" --answer) || die "probe-kvm.sh failed"
    [[ $accel == kvm ]] && echo kvm || echo qemu
}

# Parse define/xml options into the OPT_* variables.
parse_options() {
    OPT_SERVER='' OPT_TOKEN=${HVBENCH_TOKEN:-} OPT_UUID='' OPT_MEMORY=384 OPT_VCPUS=1
    OPT_ACCEL=auto OPT_DISK=fs OPT_NET=dhcp OPT_LABELS=() OPT_LOG='' OPT_IMAGE='' OPT_HOST=''
    while [[ $# -gt 0 ]]; do
        [[ $# -ge 2 ]] || die "$1 needs a value"
        case $1 in
        --server) OPT_SERVER=$2 ;;
        --token) OPT_TOKEN=$2 ;;
        --uuid) OPT_UUID=$2 ;;
        --memory) OPT_MEMORY=$2 ;;
        --vcpus) OPT_VCPUS=$2 ;;
        --accel) OPT_ACCEL=$2 ;;
        --disk) OPT_DISK=$2 ;;
        --net) OPT_NET=$2 ;;
        --label) OPT_LABELS+=("$2") ;;
        --log) OPT_LOG=$2 ;;
        --host) OPT_HOST=$2 ;;
        --image) OPT_IMAGE=$2 ;;
        *) die "unknown option $1" ;;
        esac
        shift 2
    done
    # Kernel command line words: no blanks, no quotes.
    local v
    for v in "$OPT_SERVER" "$OPT_TOKEN" "${OPT_LABELS[@]}" "$OPT_LOG" "$OPT_HOST"; do
        [[ $v =~ ^[^[:space:]\"\']*$ ]] || die "'$v' cannot go on a kernel command line (blank or quote)"
    done
    [[ -z $OPT_SERVER || $OPT_SERVER =~ ^https?:// ]] || die "--server takes an http:// or https:// URL"
    [[ -z $OPT_UUID || $OPT_UUID =~ ^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$ ]] ||
        die "--uuid takes a UUID (8-4-4-4-12 hex digits)"
    if [[ ! $OPT_MEMORY =~ ^[0-9]{3,4}$ ]] || ((OPT_MEMORY < 256 || OPT_MEMORY > 4096)); then
        die "--memory takes 256..4096 (MiB)"
    fi
    if [[ ! $OPT_VCPUS =~ ^[0-9]{1,2}$ ]] || ((OPT_VCPUS < 1 || OPT_VCPUS > 16)); then
        die "--vcpus takes 1..16"
    fi
    [[ $OPT_ACCEL =~ ^(auto|kvm|tcg)$ ]] || die "--accel takes auto, kvm or tcg"
    [[ $OPT_DISK =~ ^(fs|device|none)$ ]] || die "--disk takes fs, device or none"
    [[ $OPT_NET =~ ^(dhcp|static)$ ]] || die "--net takes dhcp or static"
    [[ $OPT_HOST != */* ]] || die "--host takes a host worker's name (no '/')"
    for v in "${OPT_LABELS[@]}"; do
        [[ $v == ?*=* ]] || die "--label takes KEY=VALUE"
    done
}

# The kernel command line of the guest (init documents each word).
cmdline() {
    local c="console=ttyS0 quiet panic=-1 hvbench.name=$NAME hvbench.disk=$OPT_DISK hvbench.net=$OPT_NET" l
    [[ -n $OPT_SERVER ]] && c+=" hvbench.server=$OPT_SERVER"
    [[ -n $OPT_TOKEN ]] && c+=" hvbench.token=$OPT_TOKEN"
    [[ -n $OPT_LOG ]] && c+=" hvbench.log=$OPT_LOG"
    [[ -n $OPT_HOST ]] && c+=" hvbench.host=$OPT_HOST"
    for l in "${OPT_LABELS[@]}"; do c+=" hvbench.label=$l"; done
    printf '%s' "$c"
}

# The domain XML from domain.xml.in; GDIR is the guest's directory.
render_xml() {
    local type=$1 xml key value
    xml=$(<"$HERE/domain.xml.in")
    local -A fields=(
        [TYPE]=$type [NAME]=$NAME [UUID]=$OPT_UUID [MEMORY_MIB]=$OPT_MEMORY
        [VCPUS]=$OPT_VCPUS [KERNEL]=$IMAGE/kernel [INITRD]=$IMAGE/initrd.img
        [CMDLINE]=$(cmdline) [STATE_DISK]=$GDIR/state.raw [BENCH_DISK]=$GDIR/bench.raw
        [SERIAL_LOG]=$GDIR/serial.log)
    for key in "${!fields[@]}"; do
        value=$(xml_escape "${fields[$key]}")
        xml=${xml//@$key@/$value}
    done
    printf '%s\n' "$xml"
}

# define and xml: resolve the image, the type and the UUID, then render.
prepare() {
    NAME=$1
    check_name "$NAME"
    shift
    parse_options "$@"
    IMAGE=${OPT_IMAGE:-$(default_image)}
    [[ -s $IMAGE/kernel && -s $IMAGE/initrd.img && -s $IMAGE/state.raw && -s $IMAGE/bench.raw ]] ||
        die "$IMAGE is no guest image (deploy/guest-image/build.sh makes one)"
    [[ -n $OPT_UUID ]] || OPT_UUID=$(cat /proc/sys/kernel/random/uuid)
    GDIR=$IMAGES/guests/$NAME
    case $OPT_ACCEL in
    kvm) TYPE=kvm ;;
    tcg) TYPE=qemu ;;
    auto) TYPE=$(auto_type) ;;
    esac
}

# The guest's disks: copies of the image's templates (sparse), or for
# --disk device a blank benchmark disk the engine may write as a device.
make_disks() {
    mkdir -p "$GDIR"
    chmod 0755 "$IMAGES/guests" "$GDIR"
    cp --sparse=always -- "$IMAGE/state.raw" "$GDIR/state.raw"
    if [[ $OPT_DISK == device ]]; then
        rm -f -- "$GDIR/bench.raw"
        truncate -s "$(stat -c %s "$IMAGE/bench.raw")" "$GDIR/bench.raw"
    else
        cp --sparse=always -- "$IMAGE/bench.raw" "$GDIR/bench.raw"
    fi
    : >"$GDIR/serial.log"
}

cmd_define() {
    prepare "$@"
    if virsh_ domuuid "$NAME" >/dev/null 2>&1; then
        die "a domain named $NAME exists already (guest.sh undefine $NAME)"
    fi
    make_disks
    render_xml "$TYPE" >"$GDIR/domain.xml"
    if ! virsh_ define "$GDIR/domain.xml" >/dev/null; then
        rm -rf -- "$GDIR"
        die "virsh define $NAME failed"
    fi
    echo "$OPT_UUID"
}

cmd_xml() {
    prepare "$@"
    render_xml "$TYPE"
}

cmd_start() {
    check_name "$1"
    virsh_ start "$1" >/dev/null
}

log_of() { echo "$IMAGES/guests/$1/serial.log"; }

cmd_wait() {
    local name=$1 timeout=${2:-120} log deadline state
    check_name "$name"
    log=$(log_of "$name")
    deadline=$((SECONDS + timeout))
    while ((SECONDS < deadline)); do
        if grep -a -m 1 "^$MARKER" "$log" 2>/dev/null; then
            return 0
        fi
        state=$(virsh_ domstate "$name" 2>/dev/null || echo gone)
        # A guest with nothing to run powers off right after the marker.
        if [[ $state != running ]] && grep -a -m 1 "^$MARKER" "$log" 2>/dev/null; then
            return 0
        fi
        if [[ $state != running ]]; then
            tail -n 20 -- "$log" >&2 2>/dev/null || true
            die "$name is $state before its ready marker"
        fi
        sleep 0.2
    done
    tail -n 20 -- "$log" >&2 2>/dev/null || true
    die "no $MARKER from $name within ${timeout}s"
}

cmd_stop() {
    local name=$1 timeout=${2:-30} t0=$SECONDS deadline
    check_name "$name"
    [[ $(virsh_ domstate "$name" 2>/dev/null) == running ]] || {
        echo "guest.sh: $name does not run"
        return 0
    }
    virsh_ shutdown "$name" --mode acpi >/dev/null || true
    deadline=$((SECONDS + timeout))
    while ((SECONDS < deadline)); do
        if [[ $(virsh_ domstate "$name" 2>/dev/null) != running ]]; then
            echo "guest.sh: $name powered off (ACPI) after $((SECONDS - t0))s"
            return 0
        fi
        sleep 0.2
    done
    virsh_ destroy "$name" >/dev/null 2>&1 || true
    echo "guest.sh: $name destroyed: still running ${timeout}s after the ACPI power button"
}

cmd_undefine() {
    local name=$1
    check_name "$name"
    if virsh_ domuuid "$name" >/dev/null 2>&1; then
        virsh_ destroy "$name" >/dev/null 2>&1 || true
        virsh_ undefine "$name" >/dev/null
    fi
    rm -rf -- "${IMAGES:?}/guests/$name"
}

cmd=${1:-}
[[ $# -ge 2 ]] || usage
shift
case $cmd in
define) cmd_define "$@" ;;
xml) cmd_xml "$@" ;;
start) cmd_start "$1" ;;
wait) cmd_wait "$@" ;;
stop) cmd_stop "$@" ;;
undefine) cmd_undefine "$1" ;;
log)
    check_name "$1"
    log_of "$1"
    ;;
*) usage ;;
esac
