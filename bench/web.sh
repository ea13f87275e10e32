#!/usr/bin/env bash
# The web page's speed in headless Chromium (Debian's /usr/bin/chromium,
# driven by playwright-core from tests/browser): time from navigation to
# the first chart painted
#
#   A  a job page whose time series holds 100,000 samples (one result
#      uploaded through the worker protocol);
#   B  a target's history of 10,000 points (10,000 imports of a sysbench
#      output at their own dates, one hour apart), when the server has
#      GET /api/v1/targets/{id}/history;
#
# each beside its floor: the same API answer fetched and parsed as JSON
# alone, in the same browser. Goal: under 0.5 s to the first chart.
#
#   make && bench/web.sh
#
# Env: BENCH_RUNS (7, medians are reported), BENCH_POINTS (10000),
# BENCH_SAMPLES (100000), CHROMIUM (/usr/bin/chromium), KEEP (0).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh
# This benchmark drives no load generator: only the server must be built.
HVLOAD=$SERVER

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[[ -x $CHROMIUM ]] || hv_die "$CHROMIUM missing: run deploy/deps.sh (package chromium)"
command -v node >/dev/null || hv_die "node needed"
if [[ ! -d tests/browser/node_modules/playwright-core ]]; then
    (cd tests/browser && npm ci --no-audit --no-fund) >/dev/null 2>&1 || hv_die "npm ci in tests/browser failed"
fi

BENCH_PG_FAST=${BENCH_PG_FAST:-1} bench_setup
echo "# $(bench_machine)"
echo "# chromium: $("$CHROMIUM" --version 2>/dev/null)"
# A short folder for Chromium's profile, whatever the checkout's path.
profile_dir=$(mktemp -d /tmp/hvbench-web.XXXXXX) || hv_die "mktemp failed"
URL=$URL SUBMIT_TOKEN=$SUBMIT_TOKEN WORKER_TOKEN=$WORKER_TOKEN CHROMIUM=$CHROMIUM \
    FIXTURE=$HV_ROOT/tests/fixtures/sysbench/cpu-t2.txt TMPDIR=$profile_dir \
    NODE_PATH=$HV_ROOT/tests/browser/node_modules \
    timeout -k 10 1800 node bench/web-bench.js
rc=$?
rm -rf -- "$profile_dir"
exit "$rc"
