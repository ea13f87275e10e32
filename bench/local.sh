# shellcheck shell=bash
# Sourced by the benchmarks that run engines and tools on this machine
# alone, without a server or a database (cpu-stability.sh, disk-vs-fio.sh,
# net-vs-iperf.sh): their messages, the build's programs and a work
# directory, and bench_result (bench/result.sh). bench/lib.sh is the server benchmarks' counterpart.

BUILD=${BUILD:-build}
BENCH_NAME=$(basename "$0" .sh)
WORK=
# shellcheck source=bench/result.sh
source "$(dirname "${BASH_SOURCE[0]}")/result.sh"

# die MESSAGE: "NAME: MESSAGE" on stderr, then exit 1.
die() {
    echo "$BENCH_NAME: $*" >&2
    exit 1
}

# bench_built PROGRAM: dies unless PROGRAM was built (make bench-progs).
bench_built() {
    [[ -x $1 ]] || die "$1 not built; run: make bench-progs"
}

# bench_workdir PARENT: WORK, a new directory under PARENT, removed on exit
# unless KEEP=1 (then named on stderr). On exit bench_before_drop runs
# first when the script defines it (to stop what it started). INT and TERM
# exit 130 and 143.
bench_workdir() {
    WORK=$(mktemp -d "$1/hvbench-$BENCH_NAME.XXXX") || die "cannot make a work directory"
    trap bench_drop_workdir EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

bench_drop_workdir() {
    declare -F bench_before_drop >/dev/null && bench_before_drop
    if [[ ${KEEP:-0} == 1 ]]; then
        echo "# kept $WORK" >&2
    else
        rm -rf "$WORK"
    fi
}
