#!/usr/bin/env bash
# How many connected workers one server holds: W simulated workers (hvload),
# each on its own keep-alive connection, all connected to ONE server at
# once, drain a plan of 2 x W jobs with one sample each. Every request that
# got no answer within hvload's timeout (15 s) is counted as a stall.
#
# With long-poll claims every idle worker keeps a connection open, so the
# number of workers a server can hold is its number of connections.
# libmicrohttpd splits --max-connections evenly over the --threads of its
# pool (1024 / 2 = 512 per thread by default) and the pool threads accept
# unevenly; the table shows the per-thread share next to the outcome.
#
#   make bench-progs && bench/connections.sh
#   BENCH_THREADS=4 BENCH_WORKERS=600 bench/connections.sh   # 256 per thread
#
# Env: BENCH_WORKERS (1000), BENCH_THREADS (2), BENCH_MAX_CONNECTIONS (1024),
# BENCH_RUNS (3), BENCH_PG_FAST (1: connection handling is the subject, not
# the disk), KEEP (0).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh

WORKERS=${BENCH_WORKERS:-1000}
THREADS=${BENCH_THREADS:-2}
MAXCONN=${BENCH_MAX_CONNECTIONS:-1024}
RUNS=${BENCH_RUNS:-3}
BENCH_PG_FAST=${BENCH_PG_FAST:-1}
REPS=$(((2 * WORKERS + 3) / 4))
JOBS=$((REPS * 4))

bench_setup --threads "$THREADS" --max-connections "$MAXCONN"
echo "# $(bench_machine)"
echo "# server $URL: --threads $THREADS --max-connections $MAXCONN ($((MAXCONN / THREADS)) per pool thread);" \
    "$WORKERS workers, $JOBS jobs per run"

rows=()
for ((run = 1; run <= RUNS; run++)); do
    bench_plan "connections-$run" "conn-$run" 4 "$REPS" >"$BENCH_TMP/plan.json"
    plan=$(bench_submit "$BENCH_TMP/plan.json")
    HVBENCH_TOKEN=$WORKER_TOKEN timeout -k 5 200 "$HVLOAD" --server "$URL" --workers "$WORKERS" \
        --target "conn-$run" --samples 1 --duration-limit 150 --quiet --json \
        >"$BENCH_TMP/run-$run.json" 2>"$BENCH_TMP/run-$run.err"
    rc=$?
    head -n 3 "$BENCH_TMP/run-$run.err" | sed 's/^/# /'
    read -r claimed stalls elapsed p99 < <(jq -r '[.jobs_claimed, .errors, .elapsed_s, .claim_ms.p99] | @tsv' \
        "$BENCH_TMP/run-$run.json")
    left=$(bench_sql "SELECT count(*) FROM jobs WHERE plan_id = $plan AND status <> 'done'")
    alive=yes
    kill -0 "${BENCH_SERVER_PIDS[0]}" 2>/dev/null || alive=NO
    rows+=("$(printf '| %d | %d | %d | %d | **%d** | %d | %.1f | %.0f | %d | %s |' "$run" "$WORKERS" \
        "$JOBS" "$claimed" "$stalls" "$left" "$elapsed" "$p99" "$rc" "$alive")")
done

echo
echo "| run | workers | jobs | claimed | requests without answer | jobs not done | elapsed s | claim p99 ms | hvload exit | server alive |"
echo "|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "reproduce: make bench-progs && BENCH_WORKERS=$WORKERS BENCH_THREADS=$THREADS BENCH_MAX_CONNECTIONS=$MAXCONN BENCH_RUNS=$RUNS BENCH_PG_FAST=$BENCH_PG_FAST bench/connections.sh"
echo "each run:  HVBENCH_TOKEN=<worker token> $HVLOAD --server $URL --workers $WORKERS --target conn-N --samples 1 --duration-limit 150 --json"
