#!/usr/bin/env bash
# The built-in disk engine against fio on the same workloads, the same file
# and the same machine, interleaved (builtin, fio, builtin, fio, ...) so
# slow drift of the machine or its host hits both alike:
#
#   seq-write-overwrite  1 MiB sequential writes over the laid-out file
#                        (builtin rewrite, fio rw=write on the existing file)
#   seq-write-new        1 MiB sequential writes that create and extend a
#                        new file (builtin seq-write, fio rw=write on a new
#                        file with --fallocate=none)
#   seq-read             1 MiB sequential reads
#   rand-read-qd1        4 KiB random reads, one in flight
#   rand-read-qd32       4 KiB random reads, 32 in flight
#
# All with O_DIRECT, no fsync, one thread, a 1 GiB file, and, for random
# reads, fio --norandommap, since the engine draws offsets with
# replacement. The random phases stop after BENCH_SECONDS or size / 4 KiB
# I/Os, whichever comes first, in both tools. Each round runs the engine,
# fio with --ioengine=libaio and its defaults, and fio "matched" (the
# engine's system calls: psync at qd 1; libaio reaping every ready
# completion at qd 32), one after the other.
# Prints one Markdown table: MB/s and IOPS of each (mean of the rounds),
# the ratios builtin/fio and builtin/fio matched, median latencies, and
# each round's MB/s; the raw JSON stays in the work directory when KEEP=1.
#
#   make bench-progs && bench/disk-vs-fio.sh
#
# Needs fio (Debian: apt-get install fio) and jq. The engine runs through
# build/bench/enginerun (bench/enginerun.c).
#
# Env: BENCH_DIR (/var/tmp: where the work directory goes; must be a real
# disk, not tmpfs), BENCH_SIZE (1073741824 bytes), BENCH_SECONDS (20),
# BENCH_ROUNDS (2), BUILD (build), KEEP (0).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/local.sh
source bench/local.sh
ENGINERUN=$BUILD/bench/enginerun
SIZE=${BENCH_SIZE:-$(bench_quick 268435456 1073741824)}
SECS=${BENCH_SECONDS:-$(bench_quick 2 20)}
ROUNDS=${BENCH_ROUNDS:-$(bench_quick 1 2)}

command -v fio >/dev/null || die "fio is not installed (Debian: apt-get install fio)"
command -v jq >/dev/null || die "jq is not installed (Debian: apt-get install jq)"
bench_built "$ENGINERUN"

bench_workdir "${BENCH_DIR:-/var/tmp}"
export HVBENCH_SCRATCH=$WORK
DATA=$WORK/data.dat # read and overwritten by both tools
NEW=$WORK/new.dat   # made afresh by each seq-write-new run

dev=$(stat -c '%d' "$WORK")
majmin="$((dev >> 8 & 0xfff)):$((dev & 0xff | (dev >> 12 & 0xfff00)))"
sysdev=$(readlink -f "/sys/dev/block/$majmin" 2>/dev/null)
devname=$(basename "${sysdev:-?}")
[[ -r $sysdev/queue/scheduler ]] || sysdev=$(dirname "$sysdev")
sched=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$sysdev/queue/scheduler" 2>/dev/null)
driver=$(basename "$(readlink -f "$sysdev/device/driver" 2>/dev/null)")
echo "# machine: $(nproc) CPUs ($(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo))," \
    "$(awk '/MemTotal/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo) RAM, kernel $(uname -r)," \
    "virtualization: $(systemd-detect-virt --vm 2>/dev/null || echo none)," \
    "$(findmnt -no FSTYPE -T "$WORK") on $devname ($majmin, driver ${driver:-?}, scheduler ${sched:-?})," \
    "$(fio --version)"
echo "# file $SIZE bytes in $WORK; random phases at most ${SECS} s; $ROUNDS rounds, interleaved"

# Lay the data file out once, contiguously (1 MiB direct writes into a new
# file), so both tools read and overwrite the same blocks.
fio --name=layout --filename="$DATA" --rw=write --bs=1M --size="$SIZE" --direct=1 \
    --ioengine=libaio --fallocate=none --output-format=json >"$WORK/layout.json" ||
    die "laying out $DATA with fio failed"

# workload NAME -> BP (the engine's params), FA (fio's arguments), MA (what
# makes fio do the engine's system calls), OP (metric name), DIR (fio's side).
workload() {
    local common='"block": %d, "size": %d, "direct": true, "sync": "none", "qd": %d'
    MA=(--ioengine=psync)
    case $1 in
    seq-write-overwrite)
        BP=$(printf "{\"path\": \"%s\", \"ops\": [\"rewrite\"], $common}" "$DATA" 1048576 "$SIZE" 1)
        FA=(--filename="$DATA" --rw=write --bs=1M --iodepth=1)
        OP=rewrite DIR=write ;;
    seq-write-new)
        BP=$(printf "{\"path\": \"%s\", \"ops\": [\"seq-write\"], $common}" "$NEW" 1048576 "$SIZE" 1)
        FA=(--filename="$NEW" --rw=write --bs=1M --iodepth=1 --fallocate=none)
        OP=seq_write DIR=write ;;
    seq-read)
        BP=$(printf "{\"path\": \"%s\", \"ops\": [\"seq-read\"], $common}" "$DATA" 1048576 "$SIZE" 1)
        FA=(--filename="$DATA" --rw=read --bs=1M --iodepth=1)
        OP=seq_read DIR=read ;;
    rand-read-qd1 | rand-read-qd32)
        local qd=${1#rand-read-qd}
        BP=$(printf "{\"path\": \"%s\", \"ops\": [\"rand-read\"], \"seconds\": %s, $common}" \
            "$DATA" "$SECS" 4096 "$SIZE" "$qd")
        FA=(--filename="$DATA" --rw=randread --bs=4k --iodepth="$qd" --norandommap --runtime="$SECS")
        ((qd > 1)) && MA=(--ioengine=libaio --iodepth_batch_complete_max="$qd")
        OP=rand_read DIR=read ;;
    esac
}

# run_builtin NAME ROUND; run_fio NAME ROUND TAG [fio args...]: each prints
# "MBps IOPS p50_us".
run_builtin() {
    local out=$WORK/$1.builtin.$2.json
    rm -f "$NEW"
    "$ENGINERUN" disk "$BP" >"$out" || die "builtin $1: $(jq -r .error "$out" 2>/dev/null)"
    jq -r --arg op "$OP" '[.metrics[] | {(.name): .value}] | add |
        "\(.["disk.\($op).mbps"]) \(.["disk.\($op).iops"]) \(.["disk.\($op).lat_p50_us"])"' "$out"
}
run_fio() {
    local name=$1 round=$2 tag=$3 out
    shift 3
    out=$WORK/$name.$tag.$round.json
    rm -f "$NEW"
    fio --name="$name" "${FA[@]}" --size="$SIZE" --direct=1 --ioengine=libaio --numjobs=1 \
        --lat_percentiles=1 --output-format=json "$@" >"$out" || die "fio $name ($tag) failed"
    jq -r --arg d "$DIR" '.jobs[0][$d] |
        "\(.bw_bytes / 1e6) \(.iops) \(.lat_ns.percentile["50.000000"] / 1000)"' "$out"
}

# col N LINES...: the mean of field N over the lines.
col() {
    local n=$1
    shift
    printf '%s\n' "$@" | awk -v n="$n" '{s += $n} END {printf "%.6g", s / NR}'
}
# each LINES...: field 1 of each line, rounded, comma-separated.
each() { printf '%s\n' "$@" | awk '{printf "%s%.0f", (NR > 1 ? ", " : ""), $1}'; }

echo
echo "fio: --ioengine=libaio, fio's defaults otherwise; fio matched: the engine's system calls" \
    "(qd 1: --ioengine=psync, pread/pwrite; qd 32: libaio with --iodepth_batch_complete_max=32," \
    "every ready completion reaped per io_getevents). Means of $ROUNDS rounds; p50 latency in µs."
echo
echo "| workload | builtin MB/s | fio MB/s | fio matched MB/s | builtin IOPS | fio IOPS | fio matched IOPS | builtin / fio | builtin / fio matched | p50 builtin / fio / matched | rounds MB/s: builtin; fio; matched |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
DISK_RESULTS=()
for w in seq-write-overwrite seq-write-new seq-read rand-read-qd1 rand-read-qd32; do
    workload "$w"
    b=() f=() m=()
    for ((r = 1; r <= ROUNDS; r++)); do
        b+=("$(run_builtin "$w" "$r")") || exit 1
        f+=("$(run_fio "$w" "$r" fio)") || exit 1
        m+=("$(run_fio "$w" "$r" matched "${MA[@]}")") || exit 1
    done
    printf '| %s | %.1f | %.1f | %.1f | %.0f | %.0f | %.0f | **%.3f** | **%.3f** | %.0f / %.0f / %.0f | %s; %s; %s |\n' \
        "$w" "$(col 1 "${b[@]}")" "$(col 1 "${f[@]}")" "$(col 1 "${m[@]}")" \
        "$(col 2 "${b[@]}")" "$(col 2 "${f[@]}")" "$(col 2 "${m[@]}")" \
        "$(echo "$(col 1 "${b[@]}") / $(col 1 "${f[@]}")" | bc -l)" \
        "$(echo "$(col 1 "${b[@]}") / $(col 1 "${m[@]}")" | bc -l)" \
        "$(col 3 "${b[@]}")" "$(col 3 "${f[@]}")" "$(col 3 "${m[@]}")" \
        "$(each "${b[@]}")" "$(each "${f[@]}")" "$(each "${m[@]}")"
    DISK_RESULTS+=("$w $(col 1 "${b[@]}") $(col 1 "${f[@]}") $(col 1 "${m[@]}")")
done
echo
BENCH_COMMAND="BENCH_QUICK=$BENCH_QUICK BENCH_ROUNDS=$ROUNDS BENCH_SECONDS=$SECS BENCH_SIZE=$SIZE bench/disk-vs-fio.sh"
for x in "${DISK_RESULTS[@]}"; do
    read -r w bm fm mm <<<"$x"
    bench_result disk-vs-fio "builtin disk engine, $w" "$(printf %.1f "$bm")" MB/s \
        "fio (libaio)" "$(printf %.1f "$fm")" "$(bench_ratio "$bm" "$fm")" ">=0.95" "$ROUNDS" \
        "fio matched: $(printf %.1f "$mm") MB/s"
done
