#!/usr/bin/env bash
# Result ingest, in samples per second, through the HTTP API against its
# peer, a plain `psql \copy` of the same number of rows into the same
# samples table of the same cluster.
#
#   A  HTTP: 8 simulated workers (hvload) drain 1000 jobs and upload one
#      result each: 3600 per-second samples over 4 metrics (~220 KB of
#      JSON). Each upload is parsed, validated and stored in one
#      transaction (result row, metrics, COPY of the samples, job update).
#   B  COPY: 1000 result rows are created first (so the foreign keys hold),
#      a file of 1000 x 3600 rows for them is generated (not timed), then
#      `psql -c "\copy samples(result_id, metric, t, value) FROM file"` is
#      timed: one client, one statement, one transaction.
#
# Runs A B A B (2 rounds) so drift of the machine hits both alike, and
# reports each run, the HTTP/COPY ratio per round and overall. The goal of
# the issue: HTTP at least half of raw COPY speed (ratio >= 0.5).
#
#   make bench-progs && bench/ingest.sh
#
# Env: BENCH_ROUNDS (2), BENCH_JOBS (1000, quick 200; a multiple of 10),
# BENCH_SAMPLES (3600, quick 1200), BENCH_WORKERS (8), BENCH_WAIT (0),
# BENCH_PG_FAST (0), BENCH_QUICK, KEEP (0).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh

ROUNDS=${BENCH_ROUNDS:-2}
JOBS=${BENCH_JOBS:-$(bench_quick 200 1000)}
SAMPLES=${BENCH_SAMPLES:-$(bench_quick 1200 3600)}
WORKERS=${BENCH_WORKERS:-8}
WAIT=${BENCH_WAIT:-0}
METRICS=4
WORKLOADS=10
((JOBS % WORKLOADS == 0 && JOBS / WORKLOADS <= 1000)) || hv_die "BENCH_JOBS must be a multiple of 10, at most 10000"
ROWS=$((JOBS * SAMPLES))
PSQL=$(command -v psql || echo /usr/lib/postgresql/15/bin/psql)

bench_setup
echo "# $(bench_machine)"
echo "# server $URL; per run $JOBS results x $SAMPLES samples = $ROWS rows; $WORKERS HTTP workers"

secs() { echo "$1" | bc -l; }

# run_http ROUND: drains a fresh plan with hvload; sets RATE and ROW.
run_http() {
    local r=$1 plan rc srv0 srv1 pg0 pg1 stored rate secs p50 p99 cpu
    bench_plan "ingest-http-$r" ingest-host "$WORKLOADS" $((JOBS / WORKLOADS)) >"$BENCH_TMP/plan.json"
    plan=$(bench_submit "$BENCH_TMP/plan.json")
    srv0=$(bench_ticks "${BENCH_SERVER_PIDS[0]}") pg0=$(bench_pg_ticks)
    HVBENCH_TOKEN=$WORKER_TOKEN timeout -k 5 960 "$HVLOAD" --server "$URL" --workers "$WORKERS" \
        --target ingest-host --samples "$SAMPLES" --metrics "$METRICS" --wait "$WAIT" \
        --duration-limit 900 --quiet --json >"$BENCH_TMP/http-$r.json" 2>"$BENCH_TMP/http-$r.err"
    rc=$?
    srv1=$(bench_ticks "${BENCH_SERVER_PIDS[0]}") pg1=$(bench_pg_ticks)
    cat "$BENCH_TMP/http-$r.err" >&2
    [[ $rc -eq 0 ]] || hv_die "hvload exited $rc in round $r: $(cat "$BENCH_TMP/http-$r.json")"
    read -r stored rate secs p50 p99 cpu < <(jq -r '[.samples_stored, .samples_per_s,
        .work_elapsed_s, .upload_ms.p50, .upload_ms.p99, .cpu_s] | @tsv' "$BENCH_TMP/http-$r.json")
    local in_db
    in_db=$(bench_sql "SELECT count(*) FROM samples s JOIN results r ON r.id = s.result_id
                       JOIN jobs j ON j.id = r.job_id WHERE j.plan_id = $plan")
    [[ $stored == "$ROWS" && $in_db == "$ROWS" ]] ||
        hv_die "round $r: hvload stored $stored, the table holds $in_db, expected $ROWS"
    RATE=$rate
    ROW=$(printf '| %d | A: HTTP (%d workers) | %d | %.2f | **%.0f** | upload p50 %.0f ms, p99 %.0f ms | %.1f / %.1f / %.1f |' \
        "$r" "$WORKERS" "$ROWS" "$secs" "$rate" "$p50" "$p99" \
        "$(secs "($srv1 - $srv0) / $CLK_TCK")" "$(secs "($pg1 - $pg0) / $CLK_TCK")" "$cpu")
}

# run_copy ROUND: result rows, a generated file, a timed \copy; sets RATE and ROW.
run_copy() {
    local r=$1 plan file pg0 pg1 t real user sys in_db rate
    bench_plan "ingest-copy-$r" copy-host "$WORKLOADS" $((JOBS / WORKLOADS)) >"$BENCH_TMP/plan.json"
    plan=$(bench_submit "$BENCH_TMP/plan.json")
    bench_sql "INSERT INTO results (job_id, attempt, status)
               SELECT id, 1, 'ok' FROM jobs WHERE plan_id = $plan ORDER BY id RETURNING id" \
        >"$BENCH_TMP/ids" || hv_die "cannot create the result rows"
    [[ $(wc -l <"$BENCH_TMP/ids") == "$JOBS" ]] || hv_die "round $r: expected $JOBS result rows"
    # Same shape as hvload's samples: 4 metrics, one per second, varied values.
    file=$BENCH_TMP/samples-$r.tsv
    awk -v n="$SAMPLES" -v m="$METRICS" -v seed="$r" 'BEGIN {srand(seed)}
        {for (i = 0; i < n; i++) {k = i % m; t = int(i / m) + 1
            printf "%s\tload.m%d\t%d\t%.3f\n", $1, k, t, 1000 * (k + 1) * (1 + 0.05 * sin(t / 7)) + 50 * rand()}}' \
        "$BENCH_TMP/ids" >"$file"
    pg0=$(bench_pg_ticks)
    TIMEFORMAT='%R %U %S'
    t=$({ time "$PSQL" "$DB" -X -q -v ON_ERROR_STOP=1 \
        -c "\\copy samples(result_id, metric, t, value) FROM '$file'" >/dev/null; } 2>&1) ||
        hv_die "round $r: \\copy failed: $t"
    # psql's backend is counted once the postmaster has reaped it.
    sleep 1
    pg1=$(bench_pg_ticks)
    read -r real user sys <<<"${t##*$'\n'}"
    rm -f -- "$file"
    in_db=$(bench_sql "SELECT count(*) FROM samples s JOIN results r ON r.id = s.result_id
                       JOIN jobs j ON j.id = r.job_id WHERE j.plan_id = $plan")
    [[ $in_db == "$ROWS" ]] || hv_die "round $r: the table holds $in_db rows of the copy, expected $ROWS"
    rate=$(secs "$ROWS / $real")
    RATE=$rate
    ROW=$(printf '| %d | B: psql \\copy | %d | %.2f | **%.0f** | one statement | – / %.1f / %.1f |' \
        "$r" "$ROWS" "$real" "$rate" "$(secs "($pg1 - $pg0) / $CLK_TCK")" "$(secs "$user + $sys")")
}

rows=() ratios=() http=() copy=()
for ((round = 1; round <= ROUNDS; round++)); do
    run_http "$round"
    rows+=("$ROW") http+=("$RATE")
    run_copy "$round"
    rows+=("$ROW") copy+=("$RATE")
    ratios+=("$(secs "${http[-1]} / ${copy[-1]}")")
done

echo
echo "| round | path | rows | seconds | samples/s | latency | CPU s server / PostgreSQL / client |"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "| round | HTTP samples/s | COPY samples/s | HTTP / COPY |"
echo "|---|---|---|---|"
for ((i = 0; i < ROUNDS; i++)); do
    printf '| %d | %.0f | %.0f | %.2f |\n' $((i + 1)) "${http[i]}" "${copy[i]}" "${ratios[i]}"
done
mh=$(bench_median "${http[@]}") mc=$(bench_median "${copy[@]}")
printf '| median | %.0f | %.0f | **%.2f** (goal >= 0.50) |\n' "$mh" "$mc" "$(secs "$mh / $mc")"
echo
BENCH_COMMAND="BENCH_QUICK=$BENCH_QUICK BENCH_ROUNDS=$ROUNDS BENCH_JOBS=$JOBS BENCH_SAMPLES=$SAMPLES BENCH_WORKERS=$WORKERS BENCH_WAIT=$WAIT BENCH_PG_FAST=${BENCH_PG_FAST:-0} bench/ingest.sh"
bench_result ingest "samples/s through HTTP ($WORKERS workers, $SAMPLES a result)" "$(printf %.0f "$mh")" \
    samples/s "psql \\copy of the same rows" "$(printf %.0f "$mc")" "$(bench_ratio "$mh" "$mc")" ">=0.5" "$ROUNDS"
echo "reproduce: make bench-progs && BENCH_ROUNDS=$ROUNDS BENCH_JOBS=$JOBS BENCH_SAMPLES=$SAMPLES BENCH_WORKERS=$WORKERS BENCH_WAIT=$WAIT BENCH_PG_FAST=${BENCH_PG_FAST:-0} bench/ingest.sh"
echo "A: HVBENCH_TOKEN=<worker token> $HVLOAD --server $URL --workers $WORKERS --target ingest-host --samples $SAMPLES --metrics $METRICS --wait $WAIT --duration-limit 900 --json"
echo "B: $PSQL \"$DB\" -c \"\\copy samples(result_id, metric, t, value) FROM 'samples.tsv'\""
