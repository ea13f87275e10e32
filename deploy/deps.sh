#!/usr/bin/env bash
# Install the Debian packages that building, testing and the demo need.
# Only missing packages are installed; when everything is present this is a
# single dpkg-query call, so `make check` can run it every time.
#
#   deploy/deps.sh         building, testing, the demo
#   deploy/deps.sh bench   ... and the benchmarks' peers (`make bench`)
set -euo pipefail

PACKAGES=(
    gcc                  # C compiler
    make                 # the build
    pkg-config           # compiler and linker flags of the libraries below
    libc6-dev            # C library headers
    libmicrohttpd-dev    # server: HTTP
    libjansson-dev       # all: JSON
    libpq-dev            # server: PostgreSQL client library
    libvirt-dev          # worker: hypervisor facts and guest control
    libtirpc-dev         # sanitizer builds: the worker links libtirpc so ASan's xdr wrappers work with libvirt
    libxml2-dev          # worker: headers of libxml2, loaded at run time to edit domain XML
    libcurl4-openssl-dev # worker and CLI: HTTP client
    libgsl-dev           # statistics (Student t for confidence intervals)
    postgresql-15        # server binaries (initdb, postgres) for the private cluster
    postgresql-client-15 # psql, pg_isready
    curl                 # integration tests: HTTP requests
    jq                   # integration tests: JSON assertions
    clang-format         # make format-check
    clang                # make fuzz, make fuzz-check (in make check): the libFuzzer targets of fuzz/
    libclang-rt-dev      # clang's runtimes: libFuzzer and the ASan/UBSan runtimes that
                         # -fsanitize=fuzzer,address,undefined links (libclang_rt.fuzzer-x86_64.a
                         # is in libclang-rt-14-dev on Debian 12, only a Recommends of clang)
    procps               # ps, pgrep: inspecting test and demo processes
    util-linux           # runuser (start postgres as its user when root), flock
    ca-certificates      # TLS for the HTTP client
    git                  # make format-check lists tracked files
    chromium             # tests/integration/test_web.sh: headless browser (/usr/bin/chromium);
                         # node and npm for it come with the machine image, not from here
    fio                  # the disk/fio engine; bench/disk-vs-fio.sh: the peer of the built-in disk engine
    iperf3               # the net/iperf3 engine (tests/unit/test_tools.c runs it on loopback)
    iperf                # the net/iperf engine (iperf 2)
    sysbench             # the cpu/sysbench engine
    stress-ng            # the cpu/stress-ng engine
    bonnie++             # the disk/bonnie engine
    libvirt-daemon-system # deploy/libvirtd.sh: libvirtd, virtlogd and virsh (qemu:///system) for guests
    qemu-system-x86      # the guests' hypervisor (TCG, or KVM where probe-kvm.sh finds it boots)
    qemu-utils           # qemu-img: inspecting and converting guest disks by hand (docs/virt.md)
    busybox-static       # the guest image's userland (/init, udhcpc, acpid, insmod); depmod for its modules
    cpio                 # deploy/guest-image/build.sh: packs the initramfs
    e2fsprogs            # mkfs.ext4: the guest image's state and benchmark disks
    xz-utils             # unpacks the kernel from Debian's xz-compressed bzImage (booted uncompressed)
    binutils             # readelf: checks the unpacked kernel has a PVH entry
    scdoc                # make man: the man pages of docs/man/*.scd
    man-db               # make man-check: man --warnings over the pages
    groff-base           # ... and the roff that man renders them with
    systemd              # systemd-analyze verify: the units of deploy/systemd (test_install)
    ansible-core         # test_ansible (deploy/ansible's role against localhost), test_advice (--syntax-check, --check)
    puppet tuned         # test_advice: puppet parser validate, tuned's profile loader (its daemon is not left running: below)
    slurmctld slurmd slurm-client munge # test_slurm: a private Slurm cluster drained by deploy/hooks/
)

# deploy/deps.sh bench: also what `make bench` needs beyond the above (pgbench
# comes with postgresql-client-15, fio and iperf3/iperf are above); CI does
# not install these.
BENCH_PACKAGES=(
    wrk                  # bench/reads.sh: the HTTP load generator against the server and its peer
)
if [[ ${1:-} == bench ]]; then
    PACKAGES+=("${BENCH_PACKAGES[@]}")
fi

# A package is present only when dpkg says "install ok installed"; unknown
# packages print nothing on stdout and an error on stderr, hence the 2>/dev/null.
installed=$(dpkg-query -W -f='${Package} ${Status}\n' "${PACKAGES[@]}" 2>/dev/null || true)
missing=()
for pkg in "${PACKAGES[@]}"; do
    if ! grep -qx "$pkg install ok installed" <<<"$installed"; then
        missing+=("$pkg")
    fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
    echo "deps: all ${#PACKAGES[@]} packages present"
    exit 0
fi

echo "deps: installing: ${missing[*]}"

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO=(sudo)
    else
        echo "deps: not root and no sudo; install them by hand: ${missing[*]}" >&2
        exit 1
    fi
fi

"${SUDO[@]}" apt-get update -q
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${missing[@]}"

# Daemons the packages just installed start on a systemd machine that the
# tests must not find running: tuned would apply a profile to this machine,
# and test_slurm starts munged, slurmctld and slurmd of its own. Only what
# this run installed is stopped; a daemon that was there before is left.
if [[ -d /run/systemd/system ]]; then
    for unit in tuned munge slurmctld slurmd; do
        for pkg in "${missing[@]}"; do
            if [[ $pkg == "$unit" ]]; then
                "${SUDO[@]}" systemctl disable --now "$unit" >/dev/null 2>&1 || true
            fi
        done
    done
fi
