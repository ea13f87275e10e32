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
#   make bench && bench/history.sh
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
PLANS=$((POINTS / 10))
METRIC=disk.seq_write.mbps

bench_setup
echo "# $(bench_machine)"
echo "# server $URL; $POINTS points on each of 2 targets, 4 metrics a result"

# seed TARGET: PLANS plans of 10 done jobs on TARGET, each with a result an
# hour after the one before and 4 metrics; the history's level steps at
# 30 %, 60 % and 85 % of the points.
seed() {
    bench_sql "
SELECT setseed(0.42);
INSERT INTO targets (name, kind) VALUES ('$1', 'host');
WITH p AS (INSERT INTO plans (name, spec, seed)
           SELECT 'nightly ' || g, '{\"name\": \"nightly\"}', 0 FROM generate_series(1, $PLANS) g
           RETURNING id),
c AS (INSERT INTO configurations (plan_id, idx, name, levels)
      SELECT id, 0, 'default', '{}' FROM p RETURNING id, plan_id),
j AS (INSERT INTO jobs (plan_id, config_id, workload_id, workload, target_name, target_id,
                        repetition, run_order, status, attempt)
      SELECT c.plan_id, c.id, 'seqwrite', '{\"id\": \"seqwrite\", \"workload\": \"seqwrite\",
             \"kind\": \"disk\", \"engine\": \"fio\", \"params\": {\"bs\": \"1M\"}}',
             '$1', (SELECT id FROM targets WHERE name = '$1'), r, r - 1, 'done', 1
      FROM c, generate_series(1, 10) r RETURNING id, plan_id, repetition),
r AS (INSERT INTO results (job_id, attempt, status, started_at, finished_at)
      SELECT id, 1, 'ok', k, k + interval '1 minute'
      FROM (SELECT id, timestamptz '2020-01-01' + ((plan_id * 10 + repetition) * interval '1 hour') AS k
            FROM j) x RETURNING id, started_at)
INSERT INTO metrics (result_id, name, value, unit)
SELECT r.id, m.name, m.base * CASE WHEN m.name <> '$METRIC' THEN 1
       WHEN i < $POINTS * 0.30 THEN 1 WHEN i < $POINTS * 0.60 THEN 0.88
       WHEN i < $POINTS * 0.85 THEN 0.88 * 1.08 ELSE 0.88 * 1.08 * 1.10 END
       * (1 + 0.02 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random())), m.unit
FROM (SELECT id, row_number() OVER (ORDER BY started_at, id) - 1 AS i FROM r) r,
     (VALUES ('$METRIC', 900.0, 'MB/s'), ('disk.seq_write.iops', 900.0, 'IO/s'),
             ('disk.seq_write.lat_p99_us', 2000.0, 'us'), ('disk.seq_write.lat_max_us', 9000.0, 'us'))
     AS m(name, base, unit);
ANALYZE;" >/dev/null || hv_die "cannot seed $1"
}
seed bench-other
seed bench-host
TARGET=$(bench_sql "SELECT id FROM targets WHERE name = 'bench-host'")
[[ $(bench_sql "SELECT count(*) FROM metrics m JOIN results r ON r.id = m.result_id JOIN jobs j ON j.id = r.job_id WHERE j.target_name = 'bench-host' AND m.name = '$METRIC'") == "$POINTS" ]] ||
    hv_die "the seed did not make $POINTS points"

# The floor: the same rows as the history's (its joins and filters),
# aggregated per series (jobs.series_key, as the history groups them).
FLOOR="SELECT j.series_key, count(*), avg(m.value), stddev_samp(m.value)
FROM targets t JOIN jobs j ON j.target_name = t.name
JOIN configurations c ON c.id = j.config_id
JOIN results r ON r.job_id = j.id AND r.attempt = j.attempt
JOIN metrics m ON m.result_id = r.id
WHERE t.id = $TARGET AND j.status = 'done' AND j.role IS DISTINCT FROM 'server'
AND r.status = 'ok' AND m.name = '$METRIC' AND c.idx = 0 GROUP BY 1"
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
run_http() {
    local urls=() i
    for ((i = 0; i < REQUESTS; i++)); do urls+=("$URL$PATH_Q" -o /dev/null); done
    curl -fsS --max-time 300 -w '%{time_total}\n' "${urls[@]}" >"$BENCH_TMP/http.txt" ||
        hv_die "a GET failed"
    # shellcheck disable=SC2046
    bench_median $(awk '{print $1 * 1000}' "$BENCH_TMP/http.txt")
}

# run_sql: REQUESTS SELECTs in one psql session; prints the median in ms.
run_sql() {
    local i
    {
        echo '\timing on'
        for ((i = 0; i < REQUESTS; i++)); do echo "$FLOOR;"; done
    } >"$BENCH_TMP/floor.sql"
    "$PG" psql "$BENCH_TMP/pg" -- -X -Atq -v ON_ERROR_STOP=1 -f "$BENCH_TMP/floor.sql" \
        >"$BENCH_TMP/sql.txt" || hv_die "the SELECT failed"
    # shellcheck disable=SC2046
    bench_median $(awk '/^Time: / {print $2}' "$BENCH_TMP/sql.txt")
}

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
