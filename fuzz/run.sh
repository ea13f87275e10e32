#!/usr/bin/env bash
# Runs the libFuzzer targets that `make fuzz-build` puts in build/fuzz
# (fuzz/README.md); the Makefile's fuzz, fuzz-check and fuzz-merge call it.
#
#   fuzz/run.sh check SECONDS TARGET...  replay every input of fuzz/corpus/TARGET,
#                                        then fuzz until SECONDS have passed; new
#                                        inputs go to a scratch directory emptied first
#   fuzz/run.sh fuzz SECONDS TARGET...   the same, new inputs kept in
#                                        build/fuzz/corpus/TARGET from run to run
#   fuzz/run.sh merge 0 TARGET...        fold build/fuzz/corpus/TARGET into
#                                        fuzz/corpus/TARGET, keeping only inputs
#                                        that reach a new edge (libFuzzer -merge=1)
#                                        and every regress-* input
#
# A sanitizer report, a leak, a timeout (over 10 s for one input) or a
# broken promise (FUZZ_REQUIRE in fuzz/fuzz.c) fails the target: libFuzzer
# saves the input as build/fuzz/crashes/TARGET/crash-<sha1> (or leak-,
# timeout-), the log is build/fuzz/logs/TARGET-MODE.log. One line per target
# gives executions, coverage (cov: edges, ft: features) and corpus size
# from libFuzzer's final stats; the last line is "fuzz: N targets, N failed".
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
FUZZ_BUILD=build/fuzz

usage() {
    echo "usage: fuzz/run.sh check|fuzz|merge SECONDS TARGET..." >&2
    exit 2
}
[[ $# -ge 3 ]] || usage
mode=$1 seconds=$2
shift 2
[[ $mode =~ ^(check|fuzz|merge)$ && $seconds =~ ^[0-9]+$ ]] || usage
mkdir -p "$FUZZ_BUILD/logs"

# UBSan aborts on the first report (-fno-sanitize-recover=all); with a
# stack it says where.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

# The options every run shares: where crashes go, the dictionary if the
# target has one.
common_opts() {
    local t=$1
    mkdir -p "$FUZZ_BUILD/crashes/$t"
    opts=(-timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        "-artifact_prefix=$FUZZ_BUILD/crashes/$t/")
    [[ -f fuzz/$t.dict ]] && opts+=("-dict=fuzz/$t.dict")
}

# "plan: 123456 runs in 600 s, cov: 812 ft: 2963, corpus 245 inputs" from
# the log of a run.
summary() {
    local t=$1 log=$2 runs stats
    runs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1 runs in \2 s/p' "$log" | tail -n 1)
    stats=$(grep -E '^#[0-9]+[[:space:]]+(DONE|INITED|pulse|NEW|REDUCE)' "$log" | tail -n 1 |
        grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[^ ]+')
    echo "$t: ${runs:-no runs}, ${stats:-no stats}"
}

# One target in check or fuzz mode. Returns libFuzzer's exit status.
run_target() {
    local t=$1 bin=$FUZZ_BUILD/fuzz_$1 seeds=fuzz/corpus/$1 log=$FUZZ_BUILD/logs/$1-$mode.log out
    if [[ $mode == check ]]; then
        out=$FUZZ_BUILD/check/$t
        rm -rf -- "$out"
    else
        out=$FUZZ_BUILD/corpus/$t
    fi
    mkdir -p "$out"
    common_opts "$t"
    # The first directory receives the new inputs; the committed corpus is
    # only read. A check is the same run every time (a fixed seed and a
    # fixed number of inputs, with the time as a bound only), so make check
    # passes or fails the same way on every machine; fuzzing for new
    # inputs is `make fuzz`.
    if [[ $mode == check ]]; then
        "$bin" "${opts[@]}" -seed=1 -runs="${FUZZ_CHECK_RUNS:-30000}" \
            "-max_total_time=$((seconds * 10))" "$out" "$seeds" >"$log" 2>&1
    else
        "$bin" "${opts[@]}" "-max_total_time=$seconds" "$out" "$seeds" >"$log" 2>&1
    fi
}

merge_target() {
    local t=$1 bin=$FUZZ_BUILD/fuzz_$1 seeds=fuzz/corpus/$1 log=$FUZZ_BUILD/logs/$1-merge.log
    local tmp=$FUZZ_BUILD/merge/$1 found=$FUZZ_BUILD/corpus/$1
    rm -rf -- "$tmp"
    mkdir -p "$tmp" "$found"
    common_opts "$t"
    # -use_counters=0: an input stays for a new edge, not for a new hit
    # count of an edge already covered; that keeps a committed corpus small.
    "$bin" "${opts[@]}" -merge=1 -use_counters=0 "$tmp" "$seeds" "$found" >"$log" 2>&1 ||
        return 1
    # regress-* inputs (a crash once found, README) stay as they are; libFuzzer
    # names its copies by their SHA-1, so drop those.
    local f before after
    for f in "$seeds"/regress-*; do
        [[ -f $f ]] && rm -f -- "$tmp/$(sha1sum <"$f" | cut -d' ' -f1)"
    done
    before=$(find "$seeds" -type f | wc -l)
    find "$seeds" -type f ! -name 'regress-*' -delete
    cp -- "$tmp"/* "$seeds"/
    after=$(find "$seeds" -type f | wc -l)
    echo "$t: fuzz/corpus/$t $before -> $after inputs"
}

failed=0 total=0
for t in "$@"; do
    total=$((total + 1))
    if [[ ! -x $FUZZ_BUILD/fuzz_$t ]]; then
        echo "$t: FAILED: $FUZZ_BUILD/fuzz_$t not built (make fuzz-build)"
        failed=$((failed + 1))
        continue
    fi
    if [[ ! -d fuzz/corpus/$t ]] || [[ -z $(ls -A "fuzz/corpus/$t") ]]; then
        echo "$t: FAILED: no committed corpus in fuzz/corpus/$t (fuzz/README.md: seeds)"
        failed=$((failed + 1))
        continue
    fi
    if [[ $mode == merge ]]; then
        merge_target "$t" || {
            echo "$t: FAILED: merge ($FUZZ_BUILD/logs/$t-merge.log)"
            failed=$((failed + 1))
        }
        continue
    fi
    if run_target "$t"; then
        summary "$t" "$FUZZ_BUILD/logs/$t-$mode.log"
        continue
    fi
    log=$FUZZ_BUILD/logs/$t-$mode.log
    echo "$t: FAILED ($log)"
    grep -E 'ERROR: |runtime error:|promise broken|==ERROR|Test unit written to' "$log" |
        head -n 8 | sed 's/^/   | /'
    echo "   reproduce: $FUZZ_BUILD/fuzz_$t <the input above>; once fixed, copy the input into fuzz/corpus/$t/"
    failed=$((failed + 1))
done
echo "fuzz: $total targets, $failed failed"
[[ $failed -eq 0 ]]
