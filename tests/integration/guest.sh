# shellcheck shell=bash
# guest.sh — what the tests of real guests share (test_guest.sh,
# test_e2e_guests.sh), sourced after lib.sh: their requirements, libvirtd
# started when none answers (and stopped after only then), and on exit the
# guest they defined undefined before lib.sh's teardown.
#
# A test sets GUEST_NAME to the domain it defines, DEFINED=1 once it is
# defined (0 when it undefined it itself), and may define
# guest_before_undefine, run first on exit (stop workers, keep logs ...).

# shellcheck disable=SC2034 # the tests that source this use them
GUEST_SH=$HV_ROOT/deploy/guest-image/guest.sh
LIBVIRTD_SH=$HV_ROOT/deploy/libvirtd.sh
IMAGES=${HVBENCH_GUEST_IMAGES:-/var/lib/libvirt/images/hvbench}
GUEST_NAME=
LIBVIRTD_STARTED=0
DEFINED=0

virsh_() { virsh -q -c qemu:///system "$@"; }

# guest_requirements [TOOL...]: skips the test unless it runs as root and
# the tools every guest test needs, and these, busybox and the worker are
# there.
guest_requirements() {
    local tool
    [[ $(id -u) -eq 0 ]] || hv_skip "needs root (the system libvirt daemon)"
    for tool in virsh libvirtd qemu-system-x86_64 cpio mkfs.ext4 "$@"; do
        command -v "$tool" >/dev/null 2>&1 || hv_skip "$tool not found (deploy/deps.sh)"
    done
    [[ -x /bin/busybox ]] || hv_skip "busybox-static not installed (deploy/deps.sh)"
    [[ -x $WORKER ]] || hv_skip "$WORKER not built"
}

# guest_libvirtd_start: starts libvirtd unless one runs; LIBVIRTD_STARTED=1
# when it was started here.
guest_libvirtd_start() {
    local pidfile=$HV_ROOT/var/libvirtd/libvirtd.pid had_pidfile=0
    [[ -f $pidfile ]] && had_pidfile=1
    "$LIBVIRTD_SH" start >/dev/null || hv_die "libvirtd did not start"
    [[ $had_pidfile == 0 && -f $pidfile ]] && LIBVIRTD_STARTED=1
    return 0
}

# The EXIT trap guest_trap sets: guest_before_undefine, the guest, libvirtd,
# then lib.sh's teardown with the test's exit status.
guest_on_exit() {
    local rc=$?
    declare -F guest_before_undefine >/dev/null && guest_before_undefine
    if [[ $DEFINED == 1 ]]; then
        "$GUEST_SH" undefine "$GUEST_NAME" >/dev/null 2>&1 || true
    fi
    [[ $LIBVIRTD_STARTED == 1 ]] && "$LIBVIRTD_SH" stop
    (exit "$rc")
    hv_teardown
}

# guest_trap: after hv_setup (which sets its own EXIT trap).
guest_trap() {
    trap guest_on_exit EXIT
}
