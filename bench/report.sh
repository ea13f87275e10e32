#!/usr/bin/env bash
# A plan's report over 100,000 results, and a target's 10,000-point history,
# through the HTTP API, each against its floor: a plain SELECT of count, avg
# and stddev_samp grouped the way the answer groups, over the same rows (the
# same joins and filters), in the same cluster.
#
#   A  GET /api/v1/plans/{id}/report (JSON): a full factorial of two
#      factors (5 x 2 levels, 10 configurations), 5 workloads (2 cpu, 2
#      disk, 1 net), a host and a guest, 1,000 repetitions: 100,000 done
#      jobs, each with one result, 4 metrics (400,000 values) and 10
#      per-second samples (1,000,000 samples, which the report does not
#      read), and the host's telemetry of every job (100,000 rows; 20 jobs
#      ran while the host was busy, which the report warns of). Planted: halt_poll_ns=0 +5 % on the cpu score, thp=never
#      -10 % on the disk figures, the guest 10 % slower than the host;
#      noise 3 %.
#   B  its floor: SELECT config, workload, target, metric, count(*),
#      avg(value), stddev_samp(value) ... GROUP BY 1, 2, 3, 4.
#   C  GET /api/v1/targets/{id}/history?metric=M over 10,000 points with
#      3 change points (as bench/history.sh seeds it; the first read,
#      which computes the change points, is left out of the timings).
#   D  its floor: SELECT series_key, count(*), avg, stddev_samp ... GROUP BY.
#
# Then, once: GET /api/v1/plans/{id} (the plan's summary, which every read
# of the plan pays), the first report after one more job of the plan ended
# (the plan done again: the digest computed again), and the first report
# of the plan running (a job queued again) after one more job ended (the
# answer kept, its digest younger than 30 s).
#
# The GETs are timed by curl on one kept-alive connection, one request after
# another; the SELECTs by psql's \timing in one session. A, B, C and D
# alternate ROUNDS times, each timing REQUESTS requests; the medians and the
# ratios A / B and C / D are reported per round and overall. The goal: each
# within 1.5 x its floor, and under 100 ms.
#
#   make bench-progs && bench/report.sh
#
# Env: BENCH_ROUNDS (3), BENCH_REQUESTS (10), BENCH_REPS (1000: the
# repetitions, 100 results each), BENCH_POINTS (10000, a multiple of 10),
# BENCH_PG_FAST (0), KEEP (0).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh

ROUNDS=${BENCH_ROUNDS:-3}
REQUESTS=${BENCH_REQUESTS:-10}
REPS=${BENCH_REPS:-1000}
POINTS=${BENCH_POINTS:-10000}
((REPS >= 2)) || hv_die "BENCH_REPS must be at least 2"
((POINTS % 10 == 0 && POINTS >= 100)) || hv_die "BENCH_POINTS must be a multiple of 10, at least 100"
METRIC=disk.seq_write.mbps
RESULTS=$((REPS * 100))

bench_setup
echo "# $(bench_machine)"
echo "# server $URL; a plan of $RESULTS results ($((RESULTS * 4)) values, $((RESULTS * 10)) samples);" \
    "a history of $POINTS points"

# The plan: configurations x workloads x targets x repetitions, all done.
t0=$(date +%s.%N)
bench_sql "
SELECT setseed(0.17);
INSERT INTO targets (name, kind) VALUES ('bench-host', 'host'), ('bench-guest', 'guest');
INSERT INTO plans (name, spec, seed) VALUES ('report bench', '{\"name\": \"report bench\",
  \"targets\": {\"host\": \"bench-host\", \"guests\": [\"bench-guest\"]}, \"design\": \"full\",
  \"baseline\": \"host\", \"margin_pct\": 1,
  \"factors\": {\"halt_poll_ns\": [\"200000\", \"0\", \"50000\", \"400000\", \"1000000\"],
                \"thp\": [\"always\", \"never\"]},
  \"repetitions\": {\"min\": $REPS, \"max\": $REPS, \"ci_pct\": 2}}', 0);
INSERT INTO configurations (plan_id, idx, name, levels)
SELECT 1, (h - 1) * 2 + t - 1, CASE WHEN h = 1 AND t = 1 THEN 'default'
       ELSE 'halt_poll_ns=' || hv[h] || ',thp=' || tv[t] END,
       jsonb_build_object('halt_poll_ns', hv[h], 'thp', tv[t])
FROM (SELECT '{200000,0,50000,400000,1000000}'::text[] AS hv, '{always,never}'::text[] AS tv) v,
     generate_series(1, 5) h, generate_series(1, 2) t;
CREATE TEMP TABLE w (idx int, id text, kind text, engine text);
INSERT INTO w VALUES (0, 'cpu-a', 'cpu', 'builtin'), (1, 'cpu-b', 'cpu', 'builtin'),
  (2, 'disk-a', 'disk', 'fio'), (3, 'disk-b', 'disk', 'fio'), (4, 'net-a', 'net', 'builtin');
INSERT INTO jobs (plan_id, config_id, workload_id, workload, target_name, target_id,
                  repetition, run_order, status, attempt)
SELECT 1, c.id, w.id, jsonb_build_object('id', w.id, 'workload', w.id, 'kind', w.kind,
       'engine', w.engine, 'params', '{}'::jsonb), t.name, t.id, r,
       ((r - 1) * 10 + c.idx) * 10 + w.idx * 2 + (t.kind = 'guest')::int, 'done', 1
FROM configurations c, w, targets t, generate_series(1, $REPS) r;
INSERT INTO results (job_id, attempt, status, started_at, finished_at)
SELECT id, 1, 'ok', timestamptz '2026-01-01' + run_order * interval '1 minute',
       timestamptz '2026-01-01' + (run_order + 1) * interval '1 minute' FROM jobs;
CREATE TEMP TABLE m (kind text, name text, base float8, unit text, hib boolean);
INSERT INTO m VALUES
  ('cpu', 'cpu.score', 1000, 'score', true), ('cpu', 'cpu.ops_per_s', 5e6, 'ops/s', true),
  ('cpu', 'cpu.lat_p99_us', 40, 'us', false), ('cpu', 'cpu.steal_pct', 2, '%', false),
  ('disk', 'disk.seq_read.mbps', 1500, 'MB/s', true), ('disk', 'disk.seq_write.mbps', 900, 'MB/s', true),
  ('disk', 'disk.rand_read.mbps', 300, 'MB/s', true), ('disk', 'disk.rand_write.mbps', 200, 'MB/s', true),
  ('net', 'net.tcp.gbps', 9.4, 'Gbit/s', true), ('net', 'net.rr.tps', 40000, 'trans/s', true),
  ('net', 'net.lat_p99_us', 80, 'us', false), ('net', 'net.retrans', 3, 'count', false);
INSERT INTO metrics (result_id, name, value, unit, higher_is_better)
SELECT r.id, m.name, m.base
       * CASE WHEN c.levels->>'halt_poll_ns' = '0' AND m.name = 'cpu.score' THEN 1.05 ELSE 1 END
       * CASE WHEN c.levels->>'thp' = 'never' AND m.kind = 'disk' THEN 0.90 ELSE 1 END
       * CASE WHEN j.target_name = 'bench-guest' THEN 0.90 ELSE 1 END
       * (1 + 0.03 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random())), m.unit, m.hib
FROM results r JOIN jobs j ON j.id = r.job_id JOIN configurations c ON c.id = j.config_id
JOIN m ON m.kind = j.workload->>'kind';
INSERT INTO samples (result_id, metric, t, value)
SELECT r.id, 'cpu.score', s, 1000 + 30 * random() FROM results r, generate_series(1, 10) s;
INSERT INTO workers (target_id, token_id, hash)
SELECT t.id, (SELECT min(id) FROM tokens), decode('00', 'hex') FROM targets t WHERE t.name = 'bench-host';
INSERT INTO telemetry (job_id, attempt, worker_id, host_target_id, domain, status, observed)
SELECT j.id, 1, w.id, w.target_id, j.target_name, 'ok', jsonb_build_object('host_busy',
       jsonb_build_object('busy', j.id % 5000 = 0, 'others_cpu_pct', 20, 'steal_pct', 0,
                          'nonguest_cpu_pct', 5))
FROM jobs j, workers w JOIN targets h ON h.id = w.target_id AND h.name = 'bench-host';
ANALYZE;" >/dev/null || hv_die "cannot seed the plan"
t1=$(date +%s.%N)
PLAN=$(bench_sql "SELECT id FROM plans WHERE name = 'report bench'")
[[ $(bench_sql "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id WHERE j.plan_id = $PLAN") == "$RESULTS" ]] ||
    hv_die "the seed did not make $RESULTS results"
printf '# plan seeded in %.1f s: %s metric values, %s samples\n' "$(echo "$t1 - $t0" | bc -l)" \
    "$(bench_sql 'SELECT count(*) FROM metrics')" "$(bench_sql 'SELECT count(*) FROM samples')"

# The history: POINTS / 10 plans of 10 done jobs on bench-history, each with a
# result an hour after the one before and 4 metrics; the level steps at
# 30 %, 60 % and 85 % of the points (as bench/history.sh).
bench_seed_history_steps bench-history "$POINTS" "$METRIC" || hv_die "cannot seed the history"
TARGET=$(bench_sql "SELECT id FROM targets WHERE name = 'bench-history'")

# The floors: the same rows as the answers' (their joins and filters),
# aggregated as they group them.
FLOOR_REPORT="SELECT c.idx, j.workload_id, j.target_name, m.name, count(*), avg(m.value),
stddev_samp(m.value)
FROM jobs j JOIN configurations c ON c.id = j.config_id
JOIN results r ON r.job_id = j.id AND r.attempt = j.attempt AND r.status = 'ok'
JOIN metrics m ON m.result_id = r.id
WHERE j.plan_id = $PLAN AND j.status = 'done' AND j.role IS DISTINCT FROM 'server'
GROUP BY 1, 2, 3, 4"
FLOOR_HISTORY=$(bench_history_floor "$TARGET" "$METRIC")
PATH_REPORT="/api/v1/plans/$PLAN/report"
PATH_HISTORY="/api/v1/targets/$TARGET/history?metric=$METRIC"

# First reads: the report's answer is checked, the history's computes its
# change points.
t0=$(date +%s.%N)
curl -fsS --max-time 300 "$URL$PATH_REPORT" >"$BENCH_TMP/report.json" || hv_die "the first report GET failed"
t1=$(date +%s.%N)
jq -e --argjson n "$REPS" '(.summaries | length) == 400 and .summaries[0].n == $n
    and ([.warnings[] | select(.kind == "host_busy")] | length) > 0' \
    "$BENCH_TMP/report.json" >/dev/null ||
    hv_die "the report does not hold the plan: $(head -c 300 "$BENCH_TMP/report.json")"
printf '# first report GET: %.1f ms; answer %d bytes; recommended: %s\n' \
    "$(echo "($t1 - $t0) * 1000" | bc -l)" "$(wc -c <"$BENCH_TMP/report.json")" \
    "$(jq -r '[.recommendations[] | "\(.factor)=\(.level)"] | join(", ")' "$BENCH_TMP/report.json")"
t0=$(date +%s.%N)
curl -fsS --max-time 300 "$URL$PATH_HISTORY" >"$BENCH_TMP/history.json" || hv_die "the first history GET failed"
t1=$(date +%s.%N)
jq -e --argjson n "$POINTS" '.series[0].n == $n' "$BENCH_TMP/history.json" >/dev/null ||
    hv_die "the history does not hold the series: $(head -c 300 "$BENCH_TMP/history.json")"
printf '# first history GET, change points computed: %.1f ms; change points: %s\n' \
    "$(echo "($t1 - $t0) * 1000" | bc -l)" \
    "$(jq -r '[.series[0].change_points[] | "\(.index)"] | join(", ")' "$BENCH_TMP/history.json")"

# run_http PATH: REQUESTS GETs on one connection; prints the median in ms.
run_http() { bench_http_median "$1" "$REQUESTS"; }

# run_sql SQL: REQUESTS SELECTs in one psql session; prints the median in ms.
run_sql() { bench_sql_median "$1" "$REQUESTS"; }

echo
echo "| round | A: GET report | B: its SELECT | A / B | C: GET history | D: its SELECT | C / D |"
echo "|---|---|---|---|---|---|---|"
AS=() BS=() CS=() DS=()
for ((round = 1; round <= ROUNDS; round++)); do
    a=$(run_http "$PATH_REPORT")
    b=$(run_sql "$FLOOR_REPORT")
    c=$(run_http "$PATH_HISTORY")
    d=$(run_sql "$FLOOR_HISTORY")
    AS+=("$a") BS+=("$b") CS+=("$c") DS+=("$d")
    printf '| %d | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f |\n' "$round" "$a" "$b" \
        "$(echo "$a / $b" | bc -l)" "$c" "$d" "$(echo "$c / $d" | bc -l)"
done
a=$(bench_median "${AS[@]}")
b=$(bench_median "${BS[@]}")
c=$(bench_median "${CS[@]}")
d=$(bench_median "${DS[@]}")
printf '| all | **%.1f** | **%.1f** | **%.2f** | **%.1f** | **%.1f** | **%.2f** |\n' "$a" "$b" \
    "$(echo "$a / $b" | bc -l)" "$c" "$d" "$(echo "$c / $d" | bc -l)"
echo
echo "# medians in ms of $REQUESTS requests a round; goal: A / B and C / D <= 1.5, A and C < 100 ms"

# The server's own CPU (user + system, /proc/PID/stat) per report over
# 5 x REQUESTS reports of the finished plan: what the machine's load
# changes least.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
c0=$(cpu_ticks "${BENCH_SERVER_PIDS[0]}")
bench_http_median "$PATH_REPORT" $((5 * REQUESTS)) >/dev/null
c1=$(cpu_ticks "${BENCH_SERVER_PIDS[0]}")
printf '# server CPU per report: %.1f ms (%d reports)\n' \
    "$(echo "($c1 - $c0) * 1000 / $(getconf CLK_TCK) / (5 * $REQUESTS)" | bc -l)" $((5 * REQUESTS))

# What the report pays besides its digest: the plan's summary, which every
# read of the plan pays (GET /api/v1/plans/{id}).
printf '# GET plan (its summary): median %.1f ms of %d\n' "$(run_http "/api/v1/plans/$PLAN")" "$REQUESTS"

# A running plan: one of its jobs ends again (claimed and done by SQL, as
# an upload would leave it), so the digest kept is no longer of the
# plan's state: the next report reads the values and keeps a new one.
bench_sql "UPDATE jobs SET status = 'running' WHERE id = (SELECT min(id) FROM jobs WHERE plan_id = $PLAN);
UPDATE jobs SET status = 'done', finished_at = now() WHERE id = (SELECT min(id) FROM jobs WHERE plan_id = $PLAN)" \
    >/dev/null || hv_die "cannot end a job again"
t0=$(date +%s.%N)
curl -fsS --max-time 300 -o /dev/null "$URL$PATH_REPORT" || hv_die "the report GET after a job ended failed"
t1=$(date +%s.%N)
printf '# report GET after one more job ended (the digest computed again): %.1f ms; the next: %.1f ms\n' \
    "$(echo "($t1 - $t0) * 1000" | bc -l)" "$(run_http "$PATH_REPORT")"

# A running plan (one of its jobs queued again) whose jobs keep ending:
# the report is the answer kept while the digest is younger than 30 s,
# its as_of the state it is of, not computed again for each job.
bench_sql "UPDATE jobs SET status = 'queued' WHERE id = (SELECT max(id) FROM jobs WHERE plan_id = $PLAN);
UPDATE jobs SET status = 'running' WHERE id = (SELECT min(id) FROM jobs WHERE plan_id = $PLAN);
UPDATE jobs SET status = 'done', finished_at = now() WHERE id = (SELECT min(id) FROM jobs WHERE plan_id = $PLAN)" \
    >/dev/null || hv_die "cannot end a job of the running plan"
t0=$(date +%s.%N)
curl -fsS --max-time 300 "$URL$PATH_REPORT" >"$BENCH_TMP/running.json" ||
    hv_die "the report GET of the running plan failed"
t1=$(date +%s.%N)
printf '# running plan, report GET after one more job ended (the answer kept): %.1f ms; as_of %s, status %s\n' \
    "$(echo "($t1 - $t0) * 1000" | bc -l)" "$(jq -r .as_of "$BENCH_TMP/running.json")" \
    "$(jq -r .status "$BENCH_TMP/running.json")"
BENCH_COMMAND="BENCH_QUICK=$BENCH_QUICK BENCH_ROUNDS=$ROUNDS BENCH_REQUESTS=$REQUESTS BENCH_REPS=$REPS BENCH_POINTS=$POINTS bench/report.sh"
bench_result report "GET a plan's report ($RESULTS results)" "$(printf %.1f "$a")" ms "its GROUP BY floor (psql)" \
    "$(printf %.1f "$b")" "$(bench_ratio "$a" "$b" 2)" "<=1.5" "$ROUNDS" "goal also < 100 ms"
bench_result report "GET a history ($POINTS points)" "$(printf %.1f "$c")" ms "its GROUP BY floor (psql)" \
    "$(printf %.1f "$d")" "$(bench_ratio "$c" "$d" 2)" "<=1.5" "$ROUNDS" "goal also < 100 ms"
