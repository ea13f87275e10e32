# shellcheck shell=bash
# Sourced by the bench scripts. bench_setup gives a benchmark its own
# PostgreSQL cluster, a migrated database, tokens and one running server
# (bench_start_server starts more); bench_result (bench/result.sh) records
# a figure in bench/results/NAME.json; bench_teardown (an EXIT trap) takes it all
# down again. Everything listens on 127.0.0.1 only and lives under
# var/bench/NAME.XXXX (KEEP=1 keeps it).
#
# Variables after bench_setup: URL (the first server), URLS (all of them),
# DB, BENCH_TMP, SUBMIT_TOKEN, WORKER_TOKEN, and SERVER, WORKER, HVLOAD (the
# binaries). BENCH_PG_FAST=1 runs the cluster without fsync (as the tests
# do); the default is a durable cluster, as in production.
#
# The generic helpers (hv_free_port, hv_stop_pid, hv_tail, hv_log, hv_die,
# hv_drop_work)
# come from the integration tests' lib.sh; nothing else of it is used.

# shellcheck source=tests/integration/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../tests/integration/lib.sh"
# shellcheck source=bench/result.sh
source "$(dirname "${BASH_SOURCE[0]}")/result.sh"

HVLOAD=$BUILD/bench/hvload
BENCH_NAME=$(basename "$0" .sh)
BENCH_TMP=
BENCH_PIDS=()
URLS=()
# shellcheck disable=SC2034 # for the scripts
CLK_TCK=$(getconf CLK_TCK)

# Start one more server on a free port, same database; appends to URLS.
# Extra arguments go to `hvbench-server serve`.
bench_start_server() {
    local attempt i port url pid n=${#URLS[@]}
    for attempt in 1 2 3; do
        port=$(hv_free_port) || hv_die "no free TCP port"
        url=http://127.0.0.1:$port
        "$SERVER" serve --db "$DB" --listen "127.0.0.1:$port" --web-dir "$HV_ROOT/web" \
            --migrations-dir "$HV_ROOT/migrations" "$@" >>"$BENCH_TMP/server-$n.log" 2>&1 &
        pid=$!
        for ((i = 0; i < 40; i++)); do
            if curl -fsS --max-time 2 -o /dev/null "$url/healthz" 2>/dev/null; then
                BENCH_PIDS+=("$pid")
                URLS+=("$url")
                BENCH_SERVER_PIDS+=("$pid")
                URL=${URLS[0]}
                return 0
            fi
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.5
        done
        hv_stop_pid "$pid" 2
    done
    hv_tail "$BENCH_TMP/server-$n.log"
    hv_die "server did not answer /healthz within 20 s"
}

# Temp dir, private cluster, migrated database, tokens, one running server;
# arguments (optional) go to its `hvbench-server serve`.
# shellcheck disable=SC2120
bench_setup() {
    local b
    for b in "$SERVER" "$WORKER" "$HVLOAD"; do
        [[ -x $b ]] || hv_die "$b not built; run: make bench-progs"
    done
    if ! command -v curl >/dev/null || ! command -v jq >/dev/null; then
        hv_die "curl and jq needed (deploy/deps.sh)"
    fi
    mkdir -p "$HV_ROOT/var/bench"
    BENCH_TMP=$(mktemp -d "$HV_ROOT/var/bench/$BENCH_NAME.XXXX")
    chmod 755 "$BENCH_TMP" # the postgres user must reach the cluster inside
    trap bench_teardown EXIT
    trap 'exit 143' TERM
    trap 'exit 130' INT

    HVBENCH_PG_FAST=${BENCH_PG_FAST:-0} "$PG" start "$BENCH_TMP/pg" >"$BENCH_TMP/pg.out" 2>&1 ||
        { cat "$BENCH_TMP/pg.out"; hv_die "could not start PostgreSQL"; }
    DB=$("$PG" conninfo "$BENCH_TMP/pg")
    "$SERVER" migrate --db "$DB" --migrations-dir "$HV_ROOT/migrations" \
        >"$BENCH_TMP/migrate.log" 2>&1 || { hv_tail "$BENCH_TMP/migrate.log"; hv_die "migrate failed"; }
    local role token
    for role in submit worker; do
        token=$("$SERVER" token create --db "$DB" --role "$role" --name "bench-$role") ||
            hv_die "token create --role $role failed"
        printf -v "${role^^}_TOKEN" '%s' "$token"
    done
    BENCH_SERVER_PIDS=()
    bench_start_server "$@"
}

# EXIT trap: stop what we started, destroy the cluster, remove the temp dir.
bench_teardown() {
    local rc=$? pid
    trap - EXIT TERM INT
    for pid in "${BENCH_PIDS[@]}"; do hv_stop_pid "$pid" 10; done
    [[ -n $BENCH_TMP ]] || exit "$rc"
    if [[ $rc -ne 0 ]]; then
        local f
        for f in "$BENCH_TMP"/server-*.log "$BENCH_TMP"/worker*.log; do hv_tail "$f"; done
    fi
    hv_drop_work "$BENCH_TMP" "${KEEP:-0}"
    exit "$rc"
}

# bench_sql SQL: one statement through psql, unaligned, tuples only.
bench_sql() {
    "$PG" psql "$BENCH_TMP/pg" -- -X -Atq -v ON_ERROR_STOP=1 -c "$1"
}

# bench_submit FILE: submits a plan, prints its id.
bench_submit() {
    local out
    out=$(curl -sS --max-time 120 -H "Authorization: Bearer $SUBMIT_TOKEN" \
        --data-binary @"$1" -w '\n%{http_code}' "$URL/api/v1/plans") || hv_die "submit: no answer"
    [[ ${out##*$'\n'} == 201 ]] || hv_die "submit answered ${out##*$'\n'}: ${out%$'\n'*}"
    jq -r .id <<<"${out%$'\n'*}"
}

# bench_plan NAME TARGET WORKLOADS REPETITIONS: a plan of WORKLOADS builtin
# cpu workloads x REPETITIONS on one host target (never run for real: the
# simulated workers only claim it).
bench_plan() {
    jq -n --arg name "$1" --arg target "$2" --argjson w "$3" --argjson reps "$4" \
        '{name: $name, targets: {host: $target}, repetitions: {min: $reps},
          workloads: [range($w) | {id: "cpu-\(.)", kind: "cpu", engine: "builtin",
                                   params: {copies: 1, seconds: 1}}]}'
}

# bench_http_median PATH N: N GETs of $URL$PATH on one kept-alive
# connection, timed by curl; prints the median in ms.
bench_http_median() {
    local urls=() i
    for ((i = 0; i < $2; i++)); do urls+=("$URL$1" -o /dev/null); done
    curl -fsS --max-time 600 -w '%{time_total}\n' "${urls[@]}" >"$BENCH_TMP/http.txt" ||
        hv_die "a GET of $1 failed"
    # shellcheck disable=SC2046
    bench_median $(awk '{print $1 * 1000}' "$BENCH_TMP/http.txt")
}

# bench_sql_median SQL N: N runs of SQL in one psql session, timed by
# psql's \timing; prints the median in ms.
bench_sql_median() {
    local i
    {
        printf '%s\n' '\timing on'
        for ((i = 0; i < $2; i++)); do echo "$1;"; done
    } >"$BENCH_TMP/floor.sql"
    "$PG" psql "$BENCH_TMP/pg" -- -X -Atq -v ON_ERROR_STOP=1 -f "$BENCH_TMP/floor.sql" \
        >"$BENCH_TMP/sql.txt" || hv_die "a SELECT failed"
    # shellcheck disable=SC2046
    bench_median $(awk '/^Time: / {print $2}' "$BENCH_TMP/sql.txt")
}

# bench_seed_history TARGET POINTS METRICS: a host TARGET with a history of
# POINTS runs (a multiple of 10): POINTS / 10 plans of 10 done jobs of one
# fio workload, each result an hour after the one before. METRICS ends the
# statement: an INSERT INTO metrics that reads the results from "runs" (id,
# and i: the run's number in time order, from 0). The random numbers are
# seeded first (setseed 0.42), so every call draws the same. Returns psql's
# status.
bench_seed_history() {
    bench_sql "
SELECT setseed(0.42);
INSERT INTO targets (name, kind) VALUES ('$1', 'host');
WITH p AS (INSERT INTO plans (name, spec, seed)
           SELECT 'nightly ' || g, '{\"name\": \"nightly\"}', 0 FROM generate_series(1, $2 / 10) g
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
            FROM j) x RETURNING id, started_at),
runs AS (SELECT id, row_number() OVER (ORDER BY started_at, id) - 1 AS i FROM r)
$3;
ANALYZE;" >/dev/null
}

# bench_seed_history_steps TARGET POINTS METRIC: bench_seed_history with 4
# metrics a result (METRIC and three others of disk.seq_write); METRIC's
# level steps -12 % at 30 % of the points, +8 % at 60 % and +10 % at 85 %
# (noise 2 %). The history of bench/history.sh and bench/report.sh.
bench_seed_history_steps() {
    bench_seed_history "$1" "$2" "INSERT INTO metrics (result_id, name, value, unit)
SELECT r.id, m.name, m.base * CASE WHEN m.name <> '$3' THEN 1
       WHEN i < $2 * 0.30 THEN 1 WHEN i < $2 * 0.60 THEN 0.88
       WHEN i < $2 * 0.85 THEN 0.88 * 1.08 ELSE 0.88 * 1.08 * 1.10 END
       * (1 + 0.02 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random())), m.unit
FROM runs r,
     (VALUES ('$3', 900.0, 'MB/s'), ('disk.seq_write.iops', 900.0, 'IO/s'),
             ('disk.seq_write.lat_p99_us', 2000.0, 'us'), ('disk.seq_write.lat_max_us', 9000.0, 'us'))
     AS m(name, base, unit)"
}

# bench_history_floor TARGET_ID METRIC: prints the floor of a history read:
# a SELECT of the same rows (its joins and filters), aggregated per series
# (jobs.series_key, as the history groups them).
bench_history_floor() {
    echo "SELECT j.series_key, count(*), avg(m.value), stddev_samp(m.value)
FROM targets t JOIN jobs j ON j.target_name = t.name
JOIN configurations c ON c.id = j.config_id
JOIN results r ON r.job_id = j.id AND r.attempt = j.attempt
JOIN metrics m ON m.result_id = r.id
WHERE t.id = $1 AND j.status = 'done' AND j.role IS DISTINCT FROM 'server'
AND r.status = 'ok' AND m.name = '$2' AND c.idx = 0 GROUP BY 1"
}

# bench_ticks PID: utime + stime of a process (all its threads, living and
# dead), in clock ticks.
bench_ticks() {
    local stat f
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
    read -ra f <<<"${stat##*) }"
    echo $((f[11] + f[12]))
}

# bench_times_children FILE: the children's user + system CPU seconds of
# the output of bash's `times` in FILE (its second line, "0m1.250s 0m0.310s").
bench_times_children() {
    awk 'NR == 2 {
        t = 0
        for (i = 1; i <= 2; i++) { split($i, a, "m"); sub("s", "", a[2]); t += a[1] * 60 + a[2] }
        printf "%.3f\n", t
    }' "$1"
}

# bench_pg_ticks: CPU ticks the whole PostgreSQL cluster has used so far:
# every live process of it, plus the children the postmaster has reaped
# (backends of connections that ended, such as psql's).
bench_pg_ticks() {
    local pm stat f total child children=()
    pm=$(head -n1 "$BENCH_TMP/pg/data/postmaster.pid" 2>/dev/null) || { echo 0; return; }
    stat=$(cat "/proc/$pm/stat" 2>/dev/null) || { echo 0; return; }
    read -ra f <<<"${stat##*) }"
    total=$((f[11] + f[12] + f[13] + f[14]))
    read -ra children 2>/dev/null <"/proc/$pm/task/$pm/children"
    for child in "${children[@]}"; do
        total=$((total + $(bench_ticks "$child")))
    done
    echo "$total"
}

# bench_machine: one line describing where the numbers come from.
bench_machine() {
    local cpu pgv
    cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
    pgv=$("$PG" psql "$BENCH_TMP/pg" -- -X -Atqc 'SHOW server_version' 2>/dev/null)
    echo "machine: $(nproc) CPUs ($cpu), $(awk '/MemTotal/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo) RAM," \
        "PostgreSQL $pgv, fsync $([[ ${BENCH_PG_FAST:-0} == 1 ]] && echo off || echo on)," \
        "kernel $(uname -r)"
}
