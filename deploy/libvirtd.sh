#!/usr/bin/env bash
# The system libvirt daemon (qemu:///system) for the guest tests and the demo.
#
#   deploy/libvirtd.sh start|stop|status
#
# start: nothing to do when `virsh -c qemu:///system version` already
#   answers. Otherwise, on a host booted with systemd, `systemctl start
#   libvirtd`; without systemd (containers, these build machines) it starts
#   virtlogd and libvirtd as daemons itself and writes their process ids to
#   var/libvirtd/ (libvirtd does not spawn virtlogd for the system
#   connection, and QEMU's output goes through it). Waits up to 30 s for
#   virsh to answer. Without udev (no systemd) it also gives /dev/kvm the
#   group and mode Debian's udev rule gives it (kvm, 0660), so that QEMU,
#   run by libvirt as libvirt-qemu, can open it.
# stop: stops only the daemons this script started (the pid files); leaves
#   them running, and says so, while domains run (another user's guests),
#   unless --force.
# status: exit 0 when virsh answers.
#
# Needs root (the system daemon). Every command prints what it did.
# Logs: var/libvirtd/libvirtd.log, var/libvirtd/virtlogd.log.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VAR=$ROOT/var/libvirtd
URI=qemu:///system

die() {
    echo "libvirtd.sh: $*" >&2
    exit 1
}

answers() { virsh -q -c "$URI" version >/dev/null 2>&1; }

# A process id that names a live process (not a zombie) running PROGRAM.
alive() {
    local pid=$1 program=$2 state comm
    [[ $pid =~ ^[0-9]+$ && -r /proc/$pid/stat ]] || return 1
    comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
    state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || return 1
    [[ $comm == "$program" && $state != Z ]]
}

systemd_booted() { [[ -d /run/systemd/system ]]; }

# Start PROGRAM (virtlogd or libvirtd) as a daemon and record its pid, read
# from the pid file it writes itself (/run/PROGRAM.pid when root).
start_daemon() {
    local program=$1 i pid=''
    command -v "$program" >/dev/null 2>&1 || die "$program not found; run deploy/deps.sh"
    if [[ -r /run/$program.pid ]] && alive "$(cat "/run/$program.pid")" "$program"; then
        pid=$(cat "/run/$program.pid")
        if [[ $pid == "$(cat "$VAR/$program.pid" 2>/dev/null)" ]]; then
            echo "libvirtd.sh: $program already runs (pid $pid, started here)"
        else
            echo "libvirtd.sh: $program already runs (pid $pid, not started here)"
        fi
        return 0
    fi
    LIBVIRT_LOG_OUTPUTS="3:file:$VAR/$program.log" "$program" -d ||
        die "$program -d failed (see $VAR/$program.log)"
    for ((i = 0; i < 50; i++)); do
        pid=$(cat "/run/$program.pid" 2>/dev/null || true)
        alive "$pid" "$program" && break
        sleep 0.1
    done
    alive "$pid" "$program" || die "$program did not stay up (see $VAR/$program.log)"
    echo "$pid" >"$VAR/$program.pid"
    echo "libvirtd.sh: started $program (pid $pid)"
}

# Without udev nothing applies Debian's rule for /dev/kvm (group kvm, mode
# 0660), and QEMU, which libvirt runs as libvirt-qemu (group kvm), cannot
# open it. Apply it, as udev would at boot.
kvm_device_access() {
    [[ -c /dev/kvm ]] && getent group kvm >/dev/null || return 0
    [[ $(stat -c '%G %a' /dev/kvm) == "kvm 660" ]] && return 0
    if chgrp kvm /dev/kvm && chmod 0660 /dev/kvm; then
        echo "libvirtd.sh: /dev/kvm: group kvm, mode 0660 (no udev applied Debian's rule)"
    else
        echo "libvirtd.sh: could not give group kvm access to /dev/kvm; KVM guests will not start"
    fi
}

cmd_start() {
    if ! systemd_booted && [[ $(id -u) -eq 0 ]]; then
        kvm_device_access
    fi
    if answers; then
        echo "libvirtd.sh: $URI already answers; nothing started"
        return 0
    fi
    [[ $(id -u) -eq 0 ]] || die "the system libvirt daemon needs root"
    mkdir -p "$VAR"
    # Ours but deaf (its socket was removed under it): start it afresh.
    if [[ -f $VAR/libvirtd.pid ]] && alive "$(cat "$VAR/libvirtd.pid")" libvirtd; then
        echo "libvirtd.sh: libvirtd (pid $(cat "$VAR/libvirtd.pid"), started here) does not answer; restarting it"
        stop_daemon libvirtd
    fi
    if systemd_booted; then
        systemctl start virtlogd.socket libvirtd.service ||
            die "systemctl start libvirtd failed"
        echo "libvirtd.sh: started libvirtd with systemctl (not stopped by this script)"
    else
        start_daemon virtlogd
        start_daemon libvirtd
    fi
    local i
    for ((i = 0; i < 60; i++)); do
        answers && break
        sleep 0.5
    done
    answers || die "$URI does not answer after 30 s (see $VAR/libvirtd.log)"
    echo "libvirtd.sh: $URI answers: $(virsh -q -c "$URI" version | grep -i 'running hypervisor' || true)"
}

# Stop the daemon whose pid file this script wrote; remove the pid file.
stop_daemon() {
    local program=$1 pid i
    [[ -f $VAR/$program.pid ]] || return 0
    pid=$(cat "$VAR/$program.pid")
    if ! alive "$pid" "$program"; then
        echo "libvirtd.sh: $program (pid $pid) no longer runs"
        rm -f -- "$VAR/$program.pid"
        return 0
    fi
    kill -TERM "$pid"
    for ((i = 0; i < 100; i++)); do
        alive "$pid" "$program" || break
        sleep 0.1
    done
    if alive "$pid" "$program"; then
        kill -KILL "$pid" 2>/dev/null || true
        echo "libvirtd.sh: killed $program (pid $pid): it ignored TERM for 10 s"
    else
        echo "libvirtd.sh: stopped $program (pid $pid)"
    fi
    rm -f -- "$VAR/$program.pid"
}

cmd_stop() {
    local force=${1:-}
    if [[ ! -f $VAR/libvirtd.pid && ! -f $VAR/virtlogd.pid ]]; then
        echo "libvirtd.sh: this script started no daemon; nothing stopped"
        return 0
    fi
    if [[ $force != --force ]] && answers; then
        local running
        running=$(virsh -q -c "$URI" list --name 2>/dev/null | sed '/^$/d' | tr '\n' ' ')
        if [[ -n $running ]]; then
            echo "libvirtd.sh: domains run ($running); libvirtd left running (stop --force stops it)"
            return 0
        fi
    fi
    stop_daemon libvirtd
    stop_daemon virtlogd
}

case ${1:-} in
start) cmd_start ;;
stop) cmd_stop "${2:-}" ;;
status)
    if answers; then
        echo "libvirtd.sh: $URI answers"
    else
        echo "libvirtd.sh: $URI does not answer"
        exit 1
    fi
    ;;
*)
    echo "usage: deploy/libvirtd.sh start|stop [--force]|status" >&2
    exit 2
    ;;
esac
