#!/usr/bin/env bash
# Test runner behind `make check`: every unit test binary $BUILD/tests/test_*
# then every tests/integration/test_*.sh, each with its output in
# $BUILD/test-logs/NAME.log. Exit 0 passes, 77 skips, anything else fails;
# with CI=true a skip fails too, so CI never goes green on tests that did not run.
#
#   tests/run.sh [PATTERN...]   only the tests whose name contains a PATTERN
#
# Env: BUILD (default build), TEST_TIMEOUT seconds per test (default 900,
# or what a test's "# test-timeout: N" line says). A test whose first lines
# say "# plain-pass-only: WHY" (it drives outside tools: QEMU guests, a
# PostgreSQL failover) is not run in a sanitizer build (BUILD */sanitize):
# it is listed as such, neither passed nor skipped, and .ci/run names it.
# Sets HV_CONTRACT_LOG for the integration tests (see test_contract.sh).
# The last line printed is "N passed, N failed" (", N skipped" and ", N in
# the plain pass only" when N > 0).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
export BUILD
LOGS=$BUILD/test-logs
TIMEOUT=${TEST_TIMEOUT:-900}
IN_CI=0
[[ ${CI:-} == true ]] && IN_CI=1

mkdir -p "$LOGS"
# The integration tests log every request they make through lib.sh's api
# here; test_contract, which runs last, checks each answer against
# api/openapi.yaml.
export HV_CONTRACT_LOG=$LOGS/contract.jsonl
: >"$HV_CONTRACT_LOG"
# Sanitizer builds: what LeakSanitizer is not to report (tests/lsan.supp).
export LSAN_OPTIONS=suppressions=$ROOT/tests/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}

selected() {
    local name=$1 p
    [[ ${#PATTERNS[@]} -eq 0 ]] && return 0
    for p in "${PATTERNS[@]}"; do
        [[ $name == *"$p"* ]] && return 0
    done
    return 1
}

PATTERNS=("$@")
tests=()
for t in "$BUILD"/tests/test_*; do
    [[ -f $t && -x $t ]] && tests+=("$t")
done
for t in tests/integration/test_*.sh; do
    [[ -f $t && $t != */test_contract.sh ]] && tests+=("$t")
done
[[ -f tests/integration/test_contract.sh ]] && tests+=(tests/integration/test_contract.sh)

passed=0 failed=0 skipped=0 plain=0
failures=()
SANITIZER_BUILD=0
[[ $BUILD == */sanitize ]] && SANITIZER_BUILD=1
for t in "${tests[@]}"; do
    name=$(basename "$t" .sh)
    selected "$name" || continue
    log=$LOGS/$name.log
    echo "== $name"
    why=$(head -n 40 "$t" 2>/dev/null | sed -n 's/^# plain-pass-only: \(.*\)$/\1/p' | head -n 1)
    if [[ -n $why && $SANITIZER_BUILD -eq 1 ]]; then
        echo "   plain pass only: $why"
        plain=$((plain + 1))
        continue
    fi
    start=$SECONDS
    if [[ $t == *.sh ]]; then
        runner=(bash "$t")
    else
        runner=("$t")
    fi
    # A hung test must not eat CI's time: TERM after TIMEOUT, KILL 30 s later.
    # A test whose first lines say "# test-timeout: N" gets N seconds
    # instead (the guest tests under QEMU TCG), unless TEST_TIMEOUT is set.
    limit=$TIMEOUT
    own=$(head -n 40 "$t" 2>/dev/null | sed -n 's/^# test-timeout: \([0-9][0-9]*\)$/\1/p' | head -n 1)
    [[ -n $own && -z ${TEST_TIMEOUT:-} ]] && limit=$own
    timeout -k 30 "$limit" "${runner[@]}" >"$log" 2>&1 </dev/null
    rc=$?
    took="$((SECONDS - start))s"
    if [[ $rc -eq 0 ]]; then
        echo "   ok ($took)"
        passed=$((passed + 1))
        continue
    fi
    if [[ $rc -eq 77 && $IN_CI -eq 0 ]]; then
        echo "   skipped: $(tail -n 1 "$log")"
        skipped=$((skipped + 1))
        continue
    fi
    if [[ $rc -eq 77 ]]; then
        echo "   FAILED: skipped, and CI=true does not allow skips: $(tail -n 1 "$log")"
    elif [[ $rc -eq 124 || $rc -eq 137 ]]; then
        echo "   FAILED: timed out after ${limit}s ($log)"
    else
        echo "   FAILED: exit $rc after $took ($log)"
    fi
    # The failed assertions first (the log's tail is mostly the server's and
    # workers' logs), then the tail.
    grep -E '^(FAIL|FATAL)|^not ok' "$log" | head -n 10 | sed 's/^/   ! /'
    tail -n 40 "$log" | sed 's/^/   | /'
    failed=$((failed + 1))
    failures+=("$name")
done

ok=1
if [[ $((passed + failed + skipped + plain)) -eq 0 ]]; then
    echo "no tests found${PATTERNS[*]:+ matching: ${PATTERNS[*]}}"
    ok=0
fi
if [[ $failed -gt 0 ]]; then
    echo "failed: ${failures[*]}"
    ok=0
fi
summary="$passed passed, $failed failed"
[[ $skipped -gt 0 ]] && summary+=", $skipped skipped"
[[ $plain -gt 0 ]] && summary+=", $plain in the plain pass only"
echo "$summary"
[[ $ok -eq 1 ]]
