#!/usr/bin/env bash
# The web page's speed in headless Chromium (Debian's /usr/bin/chromium,
# driven by playwright-core from tests/browser): time from navigation to
# the first chart painted
#
#   A  a job page whose time series holds 100,000 samples (one result
#      uploaded through the worker protocol, its samples then added with
#      one INSERT ... SELECT generate_series);
#   B  a target's history of 10,000 points (1,000 plans of 10 done jobs an
#      hour apart, written by SQL as bench/history.sh does), read once
#      before measuring so its change points are computed;
#
# each beside its floor: the API answer the page fetched for the chart,
# fetched and parsed as JSON alone in the same browser (and, for A, the
# whole 100,000 samples as GET /api/v1/jobs/{id}/results gives them).
# Goal: under 0.5 s to the first chart.
#
#   make && bench/web.sh
#
# Env: BENCH_RUNS (7, quick 3; medians are reported), BENCH_POINTS (10000, a
# multiple of 10), BENCH_SAMPLES (100000), CHROMIUM (/usr/bin/chromium),
# KEEP (0), BENCH_TRACE (0; 1 prints each load's resources and marks with their
# start, first byte and end in ms: where the time went).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh
# This benchmark drives no load generator: only the server must be built.
HVLOAD=$SERVER

RUNS=${BENCH_RUNS:-$(bench_quick 3 7)}
SAMPLES=${BENCH_SAMPLES:-100000}
POINTS=${BENCH_POINTS:-10000}
((POINTS % 10 == 0 && POINTS >= 100)) || hv_die "BENCH_POINTS must be a multiple of 10, at least 100"
METRIC=disk.seq_write.mbps
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[[ -x $CHROMIUM ]] || hv_die "$CHROMIUM missing: run deploy/deps.sh (package chromium)"
command -v node >/dev/null || hv_die "node needed"
if [[ ! -d tests/browser/node_modules/playwright-core ]]; then
    (cd tests/browser && npm ci --no-audit --no-fund) >/dev/null 2>&1 || hv_die "npm ci in tests/browser failed"
fi

BENCH_PG_FAST=${BENCH_PG_FAST:-1}
bench_setup
echo "# $(bench_machine)"
echo "# chromium: $("$CHROMIUM" --version 2>/dev/null)"

# --- A: one job, its result's samples by SQL -------------------------------------
W=(-H "Authorization: Bearer $WORKER_TOKEN" -H 'Content-Type: application/json')
out=$(curl -fsS --max-time 60 "${W[@]}" --data-binary '{"name":"bench-web","kind":"host","facts":{}}' \
    "$URL/api/v1/workers/register") || hv_die "register failed"
C=(-H "Authorization: Bearer $(jq -r .worker_token <<<"$out")" -H 'Content-Type: application/json')
bench_plan bench-web bench-web 1 1 >"$BENCH_TMP/plan.json"
bench_submit "$BENCH_TMP/plan.json" >/dev/null
out=$(curl -fsS --max-time 60 "${C[@]}" --data-binary '{"wait":5}' "$URL/api/v1/jobs/claim") ||
    hv_die "claim failed"
JOB=$(jq -r .job.id <<<"$out")
curl -fsS --max-time 60 "${C[@]}" -o /dev/null --data-binary '{"attempt":1,"status":"ok",
  "metrics":[{"name":"cpu.score","value":1000,"unit":"score","higher_is_better":true}]}' \
    "$URL/api/v1/jobs/$JOB/result" || hv_die "upload failed"
bench_sql "INSERT INTO samples (result_id, metric, t, value)
SELECT r.id, 'cpu.score', g, 1000 + 50 * sin(g / 500.0) + (g % 7)
FROM results r, generate_series(1, $SAMPLES) g WHERE r.job_id = $JOB; ANALYZE samples;" >/dev/null ||
    hv_die "cannot add the samples"

# --- B: a history of POINTS points -----------------------------------------------
bench_seed_history bench-history "$POINTS" "INSERT INTO metrics (result_id, name, value, unit)
SELECT r.id, '$METRIC', 900 * CASE WHEN i < $POINTS * 0.5 THEN 1 ELSE 0.9 END
       * (1 + 0.02 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random())), 'MB/s'
FROM runs r" || hv_die "cannot seed the history"
HIST=$(bench_sql "SELECT id FROM targets WHERE name = 'bench-history'")
t0=$(date +%s.%N)
curl -fsS --max-time 300 -o /dev/null "$URL/api/v1/targets/$HIST/history?metric=$METRIC" ||
    hv_die "the first history read failed"
printf '# %d samples in job %d; %d history points on target %d (first read, change points computed: %.2f s)\n' \
    "$SAMPLES" "$JOB" "$POINTS" "$HIST" "$(echo "$(date +%s.%N) - $t0" | bc -l)"

# A short folder for Chromium's profile, whatever the checkout's path.
profile_dir=$(mktemp -d /tmp/hvbench-web.XXXXXX) || hv_die "mktemp failed"
URL=$URL CHROMIUM=$CHROMIUM JOB=$JOB HIST=$HIST METRIC=$METRIC SAMPLES=$SAMPLES POINTS=$POINTS \
    TMPDIR=$profile_dir NODE_PATH=$HV_ROOT/tests/browser/node_modules BENCH_RUNS=$RUNS \
    timeout -k 10 1800 node bench/web-bench.js | tee "$BENCH_TMP/web.txt"
rc=${PIPESTATUS[0]}
rm -rf -- "$profile_dir"
[[ $rc == 0 ]] || exit "$rc"
# The first chart beside its floor (the chart's API answer fetched and
# parsed alone), in seconds; the goal (< 0.5 s) is on the first chart.
BENCH_COMMAND="BENCH_QUICK=$BENCH_QUICK BENCH_RUNS=$RUNS BENCH_SAMPLES=$SAMPLES BENCH_POINTS=$POINTS bench/web.sh"
for page in A B; do
    read -r chart floor < <(awk -v p="$page" '$1 == p {
        for (i = 1; i < NF; i++) { if ($i == "chart" && !c) c = $(i + 1); if ($i == "alone" && !f) f = $(i + 1) }
        print c, f }' "$BENCH_TMP/web.txt")
    [[ -n $chart && -n $floor ]] || hv_die "no figures for page $page in the browser's output"
    what=$([[ $page == A ]] && echo "job page, $SAMPLES samples" || echo "history, $POINTS points")
    bench_result web "first chart, $what" "$chart" s "its API answer fetched and parsed alone" "$floor" \
        "$(bench_ratio "$chart" "$floor" 2)" - "$RUNS" \
        "goal < 0.5 s to the first chart: $(awk -v c="$chart" 'BEGIN {print (c < 0.5) ? "met" : "not met"}')"
done
