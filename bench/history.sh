#!/usr/bin/env bash
# A 10,000-point history with change points, through the HTTP API, against
# its floor: a plain SELECT of count, avg and stddev_samp grouped by the
# series over the same rows (the same joins and filters), in the same
# cluster.
#
#   A  GET /api/v1/targets/{id}/history?metric=M (max_points 2000: the
#      10,000 points come back as 2,000 time buckets), with the change
#      points kept from the first read (the points did not change). Timed
#      by curl on one kept-alive connection, one request after another.
#   B  the SELECT, timed by psql's \timing in one session, one statement
#      after another.
#
# The history: 1,000 plans of 10 runs each of one workload on one target,
# an hour apart, with steps of −12 % at point 3,000, +8 % at 6,000 and
# +10 % at 8,500 (noise 2 %), 4 metrics a result, and the same again on a
# second target (the query must not read it). The first GET computes the
# change points (reported apart as "cold"); then A and B alternate
# ROUNDS times, each timing REQUESTS requests, and the medians and their
# ratio (A / B) are reported per round and overall. The goal: A within
# 1.5 x B, and under 100 ms.
#
#   make bench-progs && bench/history.sh
#
# Env: BENCH_ROUNDS (3), BENCH_REQUESTS (30), BENCH_POINTS (10000, a
# multiple of 10), BENCH_PG_FAST (0), KEEP (0).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh

ROUNDS=${BENCH_ROUNDS:-3}
REQUESTS=${BENCH_REQUESTS:-30}
POINTS=${BENCH_POINTS:-10000}
((POINTS % 10 == 0 && POINTS >= 100)) || hv_die "BENCH_POINTS must be a multiple of 10, at least 100"
METRIC=disk.seq_write.mbps

bench_setup
echo "# $(bench_machine)"
echo "# server $URL; $POINTS points on each of 2 targets, 4 metrics a result"

# seed TARGET: POINTS / 10 plans of 10 done jobs on TARGET, each with a result an
# hour after the one before and 4 metrics; the history's level steps at
# 30 %, 60 % and 85 % of the points.
seed() { bench_seed_history_steps "$1" "$POINTS" "$METRIC" || hv_die "cannot seed $1"; }
seed bench-other
seed bench-host
TARGET=$(bench_sql "SELECT id FROM targets WHERE name = 'bench-host'")
[[ $(bench_sql "SELECT count(*) FROM metrics m JOIN results r ON r.id = m.result_id JOIN jobs j ON j.id = r.job_id WHERE j.target_name = 'bench-host' AND m.name = '$METRIC'") == "$POINTS" ]] ||
    hv_die "the seed did not make $POINTS points"

# The floor: the same rows as the history's (its joins and filters),
# aggregated per series (jobs.series_key, as the history groups them).
FLOOR=$(bench_history_floor "$TARGET" "$METRIC")
PATH_Q="/api/v1/targets/$TARGET/history?metric=$METRIC"

# The first read computes the change points.
t0=$(date +%s.%N)
curl -fsS --max-time 300 "$URL$PATH_Q" >"$BENCH_TMP/cold.json" || hv_die "the first GET failed"
t1=$(date +%s.%N)
COLD=$(echo "($t1 - $t0) * 1000" | bc -l)
jq -e --argjson n "$POINTS" '.series[0].n == $n and (.series[0].points | length) <= 2000' \
    "$BENCH_TMP/cold.json" >/dev/null || hv_die "the answer does not hold the series: $(head -c 300 "$BENCH_TMP/cold.json")"
echo "# change points: $(jq -r '[.series[0].change_points[] | "\(.index) (\(.change_pct | . * 10 | round / 10) %)"] | join(", ")' "$BENCH_TMP/cold.json")"
printf '# cold (first) GET, change points computed: %.1f ms; answer %d bytes\n' "$COLD" \
    "$(wc -c <"$BENCH_TMP/cold.json")"

# run_http: REQUESTS GETs on one connection; prints the median in ms.
run_http() { bench_http_median "$PATH_Q" "$REQUESTS"; }

# run_sql: REQUESTS SELECTs in one psql session; prints the median in ms.
run_sql() { bench_sql_median "$FLOOR" "$REQUESTS"; }

echo
echo "| round | A: GET history (median ms) | B: SELECT avg, stddev GROUP BY (median ms) | A / B |"
echo "|---|---|---|---|"
AS=() BS=()
for ((round = 1; round <= ROUNDS; round++)); do
    a=$(run_http)
    b=$(run_sql)
    AS+=("$a") BS+=("$b")
    printf '| %d | %.1f | %.1f | %.2f |\n' "$round" "$a" "$b" "$(echo "$a / $b" | bc -l)"
done
a=$(bench_median "${AS[@]}")
b=$(bench_median "${BS[@]}")
printf '| all | **%.1f** | **%.1f** | **%.2f** |\n' "$a" "$b" "$(echo "$a / $b" | bc -l)"
echo
echo "# goal: A / B <= 1.5 and A < 100 ms"

# The server's own CPU (user + system, /proc/PID/stat) per history read
# over 5 x REQUESTS reads: what the machine's load changes least.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
c0=$(cpu_ticks "${BENCH_SERVER_PIDS[0]}")
run_http >/dev/null
run_http >/dev/null
run_http >/dev/null
run_http >/dev/null
run_http >/dev/null
c1=$(cpu_ticks "${BENCH_SERVER_PIDS[0]}")
printf '# server CPU per history read: %.2f ms (%d reads)\n' \
    "$(echo "($c1 - $c0) * 1000 / $(getconf CLK_TCK) / (5 * $REQUESTS)" | bc -l)" $((5 * REQUESTS))
