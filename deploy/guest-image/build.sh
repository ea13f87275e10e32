#!/usr/bin/env bash
# Build the hvbench guest image from Debian packages: the kernel of
# linux-image-amd64, an initramfs with busybox, the kernel modules a guest
# needs, hvbench-worker and every library ldd lists for it, and two template
# disks (the worker's state, the benchmark disk). docs/virt.md, "The guest
# image", describes what is in it.
#
#   deploy/guest-image/build.sh [--worker PATH] [--force]
#
# Prints the image's directory as the last line of standard output; progress
# goes to standard error. What the build needs from the kernel package is
# cached in var/guest-image/ (the package, its unpacked kernel, modules.dep
# and modules.builtin, apt's answer); the image (kernel, initrd.img,
# state.raw, bench.raw, manifest, key) is built into $HVBENCH_GUEST_IMAGES
# (default /var/lib/libvirt/images/hvbench) as image-BUILD-KEY/, where QEMU
# can read it, and var/guest-image/image-BUILD names the latest. KEY hashes every input: the kernel package and version, busybox, the
# worker binary and its build (BUILD: build, build/sanitize ...), each
# library, this script, /init and rootfs/, and mkfs.ext4's version. With
# unchanged inputs nothing is built and it says so; --force rebuilds.
#
# Env: BUILD (default build; the worker is $BUILD/bin/hvbench-worker),
# HVBENCH_GUEST_IMAGES, HVBENCH_GUEST_CACHE (default var/guest-image),
# HVBENCH_GUEST_DISK_MB (the benchmark disk, default 2048).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd -P)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
WORKER=$BUILD/bin/hvbench-worker
CACHE=${HVBENCH_GUEST_CACHE:-$ROOT/var/guest-image}
IMAGES=${HVBENCH_GUEST_IMAGES:-/var/lib/libvirt/images/hvbench}
DISK_MB=${HVBENCH_GUEST_DISK_MB:-2048}
STATE_MB=32
FORCE=0
KERNEL_META=linux-image-amd64
# Drivers of the devices domain.xml.in gives a guest (and of the disk buses
# the disk_bus factor may choose), ext4 with the crc32c it checksums with,
# and the ACPI power button read through evdev. Their dependencies come
# from modules.dep.
MODULES=(virtio_pci virtio_blk virtio_net virtio_scsi sd_mod ahci virtio_rng
    ext4 crc32c_generic button evdev)

say() { echo "guest-image: $*" >&2; }
die() {
    echo "guest-image: $*" >&2
    exit 1
}

usage() {
    echo "usage: deploy/guest-image/build.sh [--worker PATH] [--force]" >&2
    exit 2
}

while [[ $# -gt 0 ]]; do
    case $1 in
    --worker)
        [[ $# -ge 2 ]] || usage
        WORKER=$2
        shift 2
        ;;
    --force)
        FORCE=1
        shift
        ;;
    *) usage ;;
    esac
done
[[ $DISK_MB =~ ^[0-9]+$ && $DISK_MB -ge 64 ]] || die "HVBENCH_GUEST_DISK_MB must be a number of MiB, at least 64"

# The build's name, part of the image's: the worker's build directory
# relative to the checkout (build, build/sanitize -> build-sanitize), or
# "custom" for a binary elsewhere.
build_name() {
    local dir rel
    dir=$(cd "$(dirname "$WORKER")/.." && pwd -P)
    rel=${dir#"$ROOT"/}
    if [[ $rel == "$dir" ]]; then
        echo custom
    else
        echo "${rel//\//-}"
    fi
}

# The package linux-image-amd64 depends on and its version, as apt's
# candidate. apt-cache takes seconds where its binary cache is off (Debian's
# container images), so the answer is kept with a stamp of the package lists
# and apt's preferences, and asked again only when they change. The lists
# are updated once when apt knows no kernel.
kernel_package() {
    local stamp line meta
    stamp=$(ls -l --time-style=+%s /var/lib/apt/lists /etc/apt/preferences.d 2>/dev/null | sha256sum | cut -c1-16)
    if [[ -r $CACHE/kernel-candidate ]]; then
        read -r line <"$CACHE/kernel-candidate" || true
        if [[ $line == "$stamp "* ]]; then
            read -r _ KPKG KVER <<<"$line"
            [[ -n $KVER ]] && return 0
        fi
    fi
    meta=$(apt-cache show --no-all-versions "$KERNEL_META" 2>/dev/null || true)
    if [[ -z $meta ]]; then
        say "apt knows no $KERNEL_META; apt-get update"
        apt-get update -q >&2 || die "apt-get update failed"
        stamp=$(ls -l --time-style=+%s /var/lib/apt/lists /etc/apt/preferences.d 2>/dev/null | sha256sum | cut -c1-16)
        meta=$(apt-cache show --no-all-versions "$KERNEL_META") || die "apt has no $KERNEL_META"
    fi
    # "Depends: linux-image-6.1.0-57-amd64 (= 6.1.192-3)"
    line=$(awk '$1 == "Depends:" {print; exit}' <<<"$meta")
    [[ $line =~ Depends:\ (linux-image-[^ ,]+)\ \(=\ ([^\)]+)\) ]] ||
        die "cannot read the kernel package from $KERNEL_META's '$line'"
    KPKG=${BASH_REMATCH[1]}
    KVER=${BASH_REMATCH[2]}
    mkdir -p "$CACHE"
    echo "$stamp $KPKG $KVER" >"$CACHE/kernel-candidate"
}

# The libraries the worker loads, as ldd lists them (the loader included).
worker_libraries() {
    local out
    out=$(ldd "$WORKER" 2>&1) || die "ldd $WORKER failed: $out"
    if grep -q 'not found' <<<"$out"; then
        die "ldd $WORKER: a library is missing: $(grep 'not found' <<<"$out" | head -n 1)"
    fi
    awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' <<<"$out" | sort -u
}

# The inputs, one per line; KEY is their hash.
manifest() {
    local f lib
    echo "kernel $KPKG $KVER"
    echo "busybox $(dpkg-query -W -f='${Version}' busybox-static 2>/dev/null) $(sha256sum </bin/busybox | cut -c1-64)"
    echo "mkfs.ext4 $(mkfs.ext4 -V 2>&1 | head -n 1)"
    echo "modules ${MODULES[*]}"
    echo "disk ${DISK_MB}MiB state ${STATE_MB}MiB"
    echo "build $BUILD_NAME"
    echo "worker $(sha256sum <"$WORKER" | cut -c1-64)"
    for lib in "${LIBS[@]}"; do
        echo "lib $lib $(sha256sum <"$lib" | cut -c1-64)"
    done
    for f in "$HERE/build.sh" "$HERE/init" $(cd "$HERE" && find rootfs -type f | LC_ALL=C sort); do
        [[ $f == /* ]] || f=$HERE/$f
        echo "file ${f#"$HERE"/} $(stat -c %a "$f") $(sha256sum <"$f" | cut -c1-64)"
    done
}

# Download the kernel package into the cache (once per version).
fetch_kernel() {
    KDEB=$CACHE/debs/${KPKG}_${KVER}.deb
    [[ -s $KDEB ]] && return 0
    mkdir -p "$CACHE/debs"
    local tmp opts=()
    tmp=$(mktemp -d "$CACHE/debs/.get.XXXX")
    # apt drops to its _apt user to download, which cannot write here.
    [[ $(id -u) -eq 0 ]] && opts=(-o APT::Sandbox::User=root)
    say "downloading $KPKG $KVER"
    (cd "$tmp" && apt-get download -q "${opts[@]}" "$KPKG=$KVER" >&2) ||
        { rm -rf -- "$tmp"; die "apt-get download $KPKG=$KVER failed"; }
    mv -f -- "$tmp"/*.deb "$KDEB"
    rm -rf -- "$tmp"
}

# True when ELF file $1 has a PVH entry point (Xen ELF note 18,
# XEN_ELFNOTE_PHYS32_ENTRY): QEMU then boots it directly.
has_pvh_entry() {
    [[ $(head -c 4 -- "$1" | od -An -tx1 | tr -d ' \n') == 7f454c46 ]] &&
        readelf -n -- "$1" 2>/dev/null | grep -q 'Xen.*(0x00000012)'
}

# The uncompressed kernel unpacked from bzImage $1 into $2: the first
# compressed stream (xz, zstd or gzip) that unpacks to an ELF with a PVH
# entry. Under TCG the bzImage's own decompressor takes 15 s or more.
extract_vmlinux() {
    local z=$1 out=$2 spec magic off
    for spec in '\xfd\x37\x7a\x58\x5a\x00:xz -dc --single-stream' \
        '\x28\xb5\x2f\xfd:zstd -dcq' '\x1f\x8b\x08:gzip -dcq'; do
        magic=${spec%%:*}
        for off in $(LC_ALL=C grep -aboP "$magic" -- "$z" | head -n 3 | cut -d: -f1); do
            # shellcheck disable=SC2086 # the tool's argv
            tail -c +$((off + 1)) -- "$z" | ${spec#*:} >"$out" 2>/dev/null || true
            has_pvh_entry "$out" && return 0
        done
    done
    rm -f -- "$out"
    return 1
}

# The kernel, modules.dep and modules.builtin, in $KDIR (once
# per version): the package ships no modules.dep, depmod makes it from the
# unpacked modules tree, which is then thrown away.
unpack_kernel() {
    KDIR=$CACHE/kernel/${KPKG}_${KVER}
    if [[ -s $KDIR/modules.dep && -s $KDIR/kernel && -s $KDIR/release && -d $KDIR/modules ]]; then
        KREL=$(cat "$KDIR/release")
        return 0
    fi
    local tree depmod=(busybox depmod)
    command -v depmod >/dev/null 2>&1 && depmod=(depmod)
    mkdir -p "$CACHE/kernel"
    tree=$(mktemp -d "$CACHE/kernel/.tree.XXXX")
    say "unpacking $KPKG and resolving module dependencies (${depmod[*]})"
    dpkg-deb -x "$KDEB" "$tree"
    KREL=$(cd "$tree/lib/modules" && ls | head -n 1)
    [[ -n $KREL && -f $tree/boot/vmlinuz-$KREL ]] || die "$KDEB holds no kernel"
    "${depmod[@]}" -b "$tree" "$KREL"
    rm -rf -- "$KDIR"
    mkdir -p "$KDIR"
    if extract_vmlinux "$tree/boot/vmlinuz-$KREL" "$KDIR/kernel"; then
        say "kernel: the uncompressed vmlinux, booted through its PVH entry"
    else
        say "kernel: no PVH entry found; the bzImage (slow to decompress under TCG)"
        cp -- "$tree/boot/vmlinuz-$KREL" "$KDIR/kernel"
    fi
    cp -- "$tree/lib/modules/$KREL/modules.dep" "$tree/lib/modules/$KREL/modules.builtin" "$KDIR/"
    local m
    for m in $(module_order); do
        mkdir -p "$KDIR/modules/$(dirname "$m")"
        cp -- "$tree/lib/modules/$KREL/$m" "$KDIR/modules/$m"
    done
    echo "$KREL" >"$KDIR/release"
    rm -rf -- "$tree"
}

# The modules of module_order in $KDIR/modules/: the ones missing there
# (MODULES changed since the kernel was unpacked) come from the package.
ensure_modules() {
    local m tmp members=()
    for m in $(module_order); do
        [[ -s $KDIR/modules/$m ]] || members+=("./lib/modules/$KREL/$m")
    done
    [[ ${#members[@]} -eq 0 ]] && return 0
    say "unpacking ${#members[@]} more modules from $KPKG"
    tmp=$(mktemp -d "$CACHE/kernel/.more.XXXX")
    dpkg-deb --fsys-tarfile "$KDEB" | tar -x -C "$tmp" "${members[@]}"
    mkdir -p "$KDIR/modules"
    cp -a -- "$tmp/lib/modules/$KREL/." "$KDIR/modules/"
    rm -rf -- "$tmp"
}

# MODULES and their dependencies in load order (dependencies first), as
# paths relative to lib/modules/KREL; built-in ones are left out.
module_order() {
    local -A path_of=() deps_of=() seen=()
    local line mod name order=()
    while IFS= read -r line; do
        mod=${line%%:*}
        name=${mod##*/}
        name=${name%%.ko*}
        path_of[${name//-/_}]=$mod
        deps_of[$mod]=${line#*:}
    done <"$KDIR/modules.dep"
    visit() {
        local m=$1 d
        [[ -n ${seen[$m]:-} ]] && return 0
        seen[$m]=1
        for d in ${deps_of[$m]}; do visit "$d"; done
        order+=("$m")
    }
    for name in "${MODULES[@]}"; do
        mod=${path_of[$name]:-}
        if [[ -z $mod ]]; then
            grep -q "/$name\.ko" "$KDIR/modules.builtin" ||
                grep -q "/${name//_/-}\.ko" "$KDIR/modules.builtin" ||
                die "kernel $KREL has no module $name"
            continue
        fi
        visit "$mod"
    done
    printf '%s\n' "${order[@]}"
}

# The initramfs tree in $1: /init, busybox, the worker and its libraries at
# the paths ldd names, the modules with their load order, rootfs/.
stage_tree() {
    local stage=$1 lib order m
    mkdir -p "$stage"/{bin,usr/bin,etc/hvbench,lib/modules/"$KREL"}
    install -m 0755 "$HERE/init" "$stage/init"
    install -m 0755 /bin/busybox "$stage/bin/busybox"
    install -m 0755 "$WORKER" "$stage/usr/bin/hvbench-worker"
    for lib in "${LIBS[@]}"; do
        mkdir -p "$stage$(dirname "$lib")"
        cp -L -- "$lib" "$stage$lib"
    done
    cp -a -- "$HERE/rootfs/." "$stage/"
    ensure_modules
    order=$(module_order)
    # Compressed modules (newer kernels) are unpacked: busybox insmod
    # loads plain ones.
    : >"$stage/etc/hvbench/modules"
    for m in $order; do
        mkdir -p "$stage/lib/modules/$KREL/$(dirname "$m")"
        cp -- "$KDIR/modules/$m" "$stage/lib/modules/$KREL/$m"
        case $m in
        *.ko.xz) xz -d -- "$stage/lib/modules/$KREL/$m" ;;
        *.ko.zst) zstd -q -d --rm -- "$stage/lib/modules/$KREL/$m" ;;
        *.ko.gz) gzip -d -- "$stage/lib/modules/$KREL/$m" ;;
        esac
        echo "${m%.ko*}.ko" >>"$stage/etc/hvbench/modules"
    done
    cat >"$stage/etc/os-release" <<OS
NAME="hvbench guest image"
ID=hvbench-guest
VERSION_ID=$KEY12
PRETTY_NAME="hvbench guest image $KEY12 ($KPKG $KVER)"
OS
}

# An ext4 file system of $2 MiB labelled $3 in file $1, fully initialised
# (no lazy inode-table writes during a benchmark).
make_disk() {
    truncate -s "${2}M" "$1"
    mkfs.ext4 -q -F -L "$3" -m 0 -E lazy_itable_init=0,lazy_journal_init=0 "$1" >&2
}

# Build everything into a temporary directory beside the images, then move
# it into place: a half-built image is never seen.
build_image() {
    local work stage
    work=$(mktemp -d "$IMAGES/.build.XXXX")
    chmod 0755 "$work"
    # shellcheck disable=SC2064 # expand now: the path is local
    trap "rm -rf -- '$work'" EXIT
    stage=$work/tree
    stage_tree "$stage"
    say "initramfs: $(find "$stage" -type f | wc -l) files, $(du -sm "$stage" | cut -f1) MiB unpacked"
    # Not compressed: under TCG the kernel takes 1.5-3 s to gunzip it, and
    # about 0.5 s to unpack the plain archive.
    (cd "$stage" && find . -print0 | LC_ALL=C sort -z |
        cpio --null --create --format=newc --owner=0:0 --reproducible --quiet) >"$work/initrd.img"
    rm -rf -- "$stage"
    cp -- "$KDIR/kernel" "$work/kernel"
    make_disk "$work/state.raw" "$STATE_MB" hvbench-state
    make_disk "$work/bench.raw" "$DISK_MB" hvbench-bench
    printf '%s\n' "$MANIFEST_TEXT" >"$work/manifest"
    echo "$KEY" >"$work/key"
    chmod 0644 "$work"/*
    rm -rf -- "$DEST"
    mv -- "$work" "$DEST"
    trap - EXIT
}

# Images of this build older than a day, other than the current one, go:
# a guest defined from one keeps its kernel once started, a new definition
# takes the current image.
prune_old() {
    local dir
    for dir in "$IMAGES/image-$BUILD_NAME-"*; do
        [[ -d $dir && $dir != "$DEST" ]] || continue
        if [[ -n $(find "$dir" -maxdepth 0 -mmin +1440) ]]; then
            rm -rf -- "$dir"
            say "removed the old image $dir"
        fi
    done
}

# Kernel packages of other versions leave the cache once an image of the
# current one is built.
prune_kernels() {
    local f
    for f in "$CACHE"/debs/*.deb "$CACHE"/kernel/*; do
        [[ -e $f && $f != "$CACHE/debs/${KPKG}_${KVER}.deb" && $f != "$CACHE/kernel/${KPKG}_${KVER}" ]] || continue
        rm -rf -- "$f"
        say "removed ${f#"$CACHE"/} from the cache"
    done
}

[[ -x $WORKER ]] || die "$WORKER is missing; run make (or pass --worker PATH)"
WORKER=$(realpath -- "$WORKER")
for tool in apt-get apt-cache dpkg-deb cpio gzip mkfs.ext4 ldd; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool not found; run deploy/deps.sh"
done
if [[ ! -x /bin/busybox ]] || ldd /bin/busybox >/dev/null 2>&1; then
    die "/bin/busybox is missing or not static; run deploy/deps.sh (busybox-static)"
fi
BUILD_NAME=$(build_name)
mapfile -t LIBS < <(worker_libraries)
kernel_package
MANIFEST_TEXT=$(manifest)
KEY=$(sha256sum <<<"$MANIFEST_TEXT" | cut -c1-64)
KEY12=${KEY:0:12}
DEST=$IMAGES/image-$BUILD_NAME-$KEY12

mkdir -p "$CACHE" "$IMAGES"
chmod 0755 "$IMAGES"
# One build at a time on this host: builds from other checkouts share the
# images directory.
exec {lock}>"$IMAGES/.build.lock"
flock "$lock"
if [[ $FORCE == 0 && -f $DEST/key && $(cat "$DEST/key") == "$KEY" &&
    -s $DEST/kernel && -s $DEST/initrd.img && -s $DEST/state.raw && -s $DEST/bench.raw ]]; then
    touch -- "$DEST"
    say "up to date, nothing built (key $KEY12: $KPKG $KVER, worker of $BUILD_NAME)"
else
    say "building image $KEY12 ($KPKG $KVER, worker of $BUILD_NAME, ${#LIBS[@]} libraries)"
    fetch_kernel
    unpack_kernel
    build_image
    say "built $DEST ($(du -sh "$DEST/initrd.img" | cut -f1) initramfs)"
    prune_kernels
fi
echo "$DEST" >"$CACHE/image-$BUILD_NAME"
prune_old
echo "$DEST"
