#!/usr/bin/env bash
# Claim throughput: a queue of 10,000 jobs (10 cpu workloads x 1000
# repetitions on one host target), drained by 50 simulated workers (hvload,
# --samples 0: each job is claim + a one-metric result). Reports jobs
# claimed per second and the claim latency p50/p99, per run and the median
# of the runs. There is no outside peer for claims; the latency percentiles
# say how a single claim fares under that load.
#
#   make bench && bench/claims.sh
#
# Env: BENCH_RUNS (3), BENCH_WORKERS (50), BENCH_REPS (1000; x10 workloads),
# BENCH_WAIT (0: claim long-poll seconds), BENCH_PG_FAST (0), KEEP (0).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh

RUNS=${BENCH_RUNS:-3}
WORKERS=${BENCH_WORKERS:-50}
REPS=${BENCH_REPS:-1000}
WAIT=${BENCH_WAIT:-0}
WORKLOADS=10
JOBS=$((WORKLOADS * REPS))
TARGET=bench-host

bench_setup
echo "# $(bench_machine)"
echo "# server $URL, $JOBS jobs per run, $WORKERS simulated workers, wait $WAIT s"

rates=() p50s=() p99s=()
rows=()
for ((run = 1; run <= RUNS; run++)); do
    bench_plan "claims-$run" "$TARGET" "$WORKLOADS" "$REPS" >"$BENCH_TMP/plan.json"
    t0=$(date +%s.%N)
    plan=$(bench_submit "$BENCH_TMP/plan.json")
    submit_s=$(echo "$(date +%s.%N) - $t0" | bc)
    queued=$(bench_sql "SELECT count(*) FROM jobs WHERE plan_id = $plan AND status = 'queued'")
    [[ $queued == "$JOBS" ]] || hv_die "plan $plan queued $queued jobs, expected $JOBS"

    srv0=$(bench_ticks "${BENCH_SERVER_PIDS[0]}") pg0=$(bench_pg_ticks)
    HVBENCH_TOKEN=$WORKER_TOKEN timeout -k 5 660 "$HVLOAD" --server "$URL" --workers "$WORKERS" \
        --target "$TARGET" --samples 0 --metrics 1 --wait "$WAIT" --duration-limit 600 \
        --quiet --json >"$BENCH_TMP/hvload-$run.json" 2>"$BENCH_TMP/hvload-$run.err"
    rc=$?
    srv1=$(bench_ticks "${BENCH_SERVER_PIDS[0]}") pg1=$(bench_pg_ticks)
    cat "$BENCH_TMP/hvload-$run.err" >&2
    [[ $rc -eq 0 ]] || hv_die "hvload exited $rc in run $run: $(cat "$BENCH_TMP/hvload-$run.json")"
    read -r claimed dups rate p50 p99 secs client_cpu < <(jq -r \
        '[.jobs_claimed, .duplicates, .claims_per_s, .claim_ms.p50, .claim_ms.p99,
          .work_elapsed_s, .cpu_s] | @tsv' "$BENCH_TMP/hvload-$run.json")
    [[ $claimed == "$JOBS" && $dups == 0 ]] || hv_die "run $run: claimed $claimed of $JOBS, $dups duplicates"
    left=$(bench_sql "SELECT count(*) FROM jobs WHERE plan_id = $plan AND status <> 'done'")
    [[ $left == 0 ]] || hv_die "run $run: $left jobs not done"
    rates+=("$rate") p50s+=("$p50") p99s+=("$p99")
    rows+=("$(printf '| %d | %d | %.1f | %.2f | **%.0f** | %.2f | %.2f | %.1f / %.1f / %.1f |' \
        "$run" "$JOBS" "$submit_s" "$secs" "$rate" "$p50" "$p99" \
        "$(echo "($srv1 - $srv0) / $CLK_TCK" | bc -l)" "$(echo "($pg1 - $pg0) / $CLK_TCK" | bc -l)" \
        "$client_cpu")")
done

echo
echo "| run | jobs | submit s | drain s | claims/s | claim p50 ms | claim p99 ms | CPU s server / PostgreSQL / hvload |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
printf '| median | | | | **%.0f** | %.2f | %.2f | |\n' "$(bench_median "${rates[@]}")" \
    "$(bench_median "${p50s[@]}")" "$(bench_median "${p99s[@]}")"
echo
echo "reproduce: make bench && BENCH_RUNS=$RUNS BENCH_WORKERS=$WORKERS BENCH_REPS=$REPS BENCH_WAIT=$WAIT BENCH_PG_FAST=${BENCH_PG_FAST:-0} bench/claims.sh"
echo "each run:  HVBENCH_TOKEN=<worker token> $HVLOAD --server $URL --workers $WORKERS --target $TARGET --samples 0 --metrics 1 --wait $WAIT --duration-limit 600 --json"
