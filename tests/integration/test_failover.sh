#!/usr/bin/env bash
# plain-pass-only: it drives a PostgreSQL failover under load; under the sanitizers the load runs too slowly to reach the failover mid-plan
# The database fails over mid-plan and nothing is lost or stored twice: a
# primary with a synchronous standby (deploy/pg.sh standby), the server on
# the pair's multi-host connection string (target_session_attrs=read-write),
# 20 simulated workers (bench/hvload --outage: a request answered 503 or not
# at all is asked again, as a worker's outbox does) claiming and uploading a
# plan of 600 small jobs. A quarter of the way in, every process of the
# primary is killed with SIGKILL, and a second later the standby is promoted.
# The plan finishes; every job has exactly one result, every acknowledged
# upload is there, and the report equals one computed from the rows.
#
# Plain pass only (tests/run.sh): under the sanitizers the load runs too
# slowly to reach the failover mid-plan; the failover paths are the same
# code either way.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
HVLOAD=$BUILD/bench/hvload
[[ -x $HVLOAD ]] || hv_skip "$HVLOAD not built (make bench-progs)"
# Claims whose answer the failover lost stay leased to a worker that never
# saw them until the lease lapses: a short lease, longer than the outage.
HV_SERVER_ARGS=(--lease 5)
hv_setup

JOBS=600 WORKERS=20 TARGET=failover-host KILL_AT=150
sql() { "$PG" psql "$HV_TMP/pg2" -- -X -Atqc "$1"; }

# --- a synchronous standby, and the server on both -------------------------------
STANDBY_PID=''
# shellcheck disable=SC2317 # called by the EXIT trap
failover_teardown() {
    local rc=$?
    "$PG" destroy "$HV_TMP/pg2" >/dev/null 2>&1
    (exit "$rc")
    hv_teardown
}
trap failover_teardown EXIT
DB=$("$PG" standby "$HV_TMP/pg" "$HV_TMP/pg2" 2>"$HV_TMP/standby.err") ||
    hv_die "could not ship a standby: $(cat "$HV_TMP/standby.err")"
hv_log "the pair: $DB"
assert_match "the connection string names both sockets, the primary first" \
    "^host=[^ ,]+/run,[^ ]+/run .*target_session_attrs=read-write$" "$DB"
assert_eq "the standby streams synchronously" "hvbench_standby sync" \
    "$("$PG" psql "$HV_TMP/pg" -- -X -Atqc \
        "SELECT application_name || ' ' || sync_state FROM pg_stat_replication")"
hv_stop_pid "$HV_SERVER_PID" 10
hv_start_server
STANDBY_PID=$(head -n1 "$HV_TMP/pg2/data/postmaster.pid")

# --- 600 jobs: 4 workloads x 150 repetitions on one host target -------------------
hv_submit_cpu_plan failover "$TARGET" 150

# --- 20 workers; the primary dies under them -----------------------------------------
# Workers keep asking (long polls of 2 s, 4 empty ones in a row) past the
# lease, so a job whose claim the failover lost is claimed again.
HVBENCH_TOKEN=$WORKER_TOKEN timeout -k 5 60 "$HVLOAD" --server "$URL" --workers "$WORKERS" \
    --target "$TARGET" --samples 2 --metrics 1 --wait 2 --empty-claims 4 --outage 20 \
    --duration-limit 45 --json >"$HV_TMP/hvload.json" 2>"$HV_TMP/hvload.err" &
LOAD_PID=$!
HV_WORKER_PIDS+=("$LOAD_PID")
stored() { "$PG" psql "$HV_TMP/pg" -- -X -Atqc "SELECT count(*) FROM results" 2>/dev/null; }
for ((i = 0; i < 300; i++)); do
    n=$(stored)
    [[ ${n:-0} -ge $KILL_AT ]] && break
    sleep 0.1
done
hv_log "$n results stored when the primary is killed"
assert_eq "the plan is under way, not over, at the failover" true \
    "$( ((n >= KILL_AT && n < JOBS)) && echo true || echo "false ($n)")"
PRIMARY_PID=$(head -n1 "$HV_TMP/pg/data/postmaster.pid")
# The postmaster and every child, at once: a crash, not a shutdown.
mapfile -t children < <(pgrep -P "$PRIMARY_PID")
kill -KILL "$PRIMARY_PID" "${children[@]}"
sleep 1
"$PG" promote "$HV_TMP/pg2" >"$HV_TMP/promote.out" 2>&1 ||
    { cat "$HV_TMP/promote.out"; hv_die "could not promote the standby"; }
hv_log "standby (pid $STANDBY_PID) promoted"
wait "$LOAD_PID"
rc=$?
sed 's/^/# /' "$HV_TMP/hvload.err" | tail -n 20
BODY=$(cat "$HV_TMP/hvload.json")
hv_log "hvload: $BODY"
assert_eq "hvload exits 0 (no duplicate, no unexpected answer, nothing unanswered)" 0 "$rc"
assert_eq "the run was not stopped by its limit" false "$(json .limit_reached)"
assert_eq "no (job, attempt) was handed out twice" 0 "$(json .duplicate_attempts)"
# How the outage shows to the workers varies (requests cut and asked
# again, or held by the server's own retries until the promote): logged.
hv_log "requests asked again across the outage: $(json .retries), uploads answered as replays: $(json .uploads_replayed)"
assert_eq "every job claimed was uploaded, first time or as a replay" \
    "$(json .jobs_claimed)" "$(json '.uploads["201"] + .uploads_replayed')"

# --- the database: every job done exactly once --------------------------------------
assert_eq "the new primary is out of recovery" f "$(sql "SELECT pg_is_in_recovery()")"
assert_eq "every job of the plan is done" "$JOBS done" \
    "$(sql "SELECT count(*) || ' ' || string_agg(DISTINCT status, ',') FROM jobs WHERE plan_id = $PLAN")"
assert_eq "one result per job: none lost, none twice" "$JOBS $JOBS" \
    "$(sql "SELECT count(*) || ' ' || count(DISTINCT r.job_id) FROM results r JOIN jobs j ON j.id = r.job_id
            WHERE j.plan_id = $PLAN")"
assert_eq "no (job, attempt) with two results" 0 \
    "$(sql "SELECT count(*) FROM (SELECT 1 FROM results GROUP BY job_id, attempt HAVING count(*) > 1) d")"
assert_eq "each result is of its job's current attempt" 0 \
    "$(sql "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id WHERE r.attempt <> j.attempt")"
assert_eq "one metric and two samples per result" "$JOBS $((2 * JOBS))" \
    "$(sql "SELECT (SELECT count(*) FROM metrics) || ' ' || (SELECT count(*) FROM samples)")"
assert_eq "every upload acknowledged with 201 is stored" true \
    "$(jq -n "$(sql "SELECT count(*) FROM results") >= $(json '.uploads["201"]')")"

# --- the report equals one computed from the rows --------------------------------------
assert_status 200 GET "/api/v1/plans/$PLAN/report"
assert_eq "the report is complete" false "$(json .partial)"
REPORT=$(json -c '[.rows[] | select(.metric == "load.m0") | [.workload, .n, (.mean * 1000 | round)]]
    | sort_by(.[0])')
ROWS=$(sql "SELECT coalesce(json_agg(json_build_array(w, n, m) ORDER BY w), '[]') FROM (
              SELECT j.workload_id AS w, count(*) AS n, round(avg(m.value) * 1000) AS m
              FROM jobs j JOIN results r ON r.job_id = j.id JOIN metrics m ON m.result_id = r.id
              WHERE j.plan_id = $PLAN AND m.name = 'load.m0' GROUP BY j.workload_id) x" | jq -c .)
assert_eq "per workload: n and mean of the stored rows" "$ROWS" "$REPORT"

# --- the server followed the failover -------------------------------------------------
metric() { curl -fsS --max-time 5 "$URL/metrics" | awk -v n="$1" '$1 == n {print $2}'; }
assert_eq "the LISTEN connection was opened again, once, on the new primary" 1 \
    "$(metric hvbench_db_listen_reconnects_total)"
assert_eq "server threads reconnected" true "$(jq -n "$(metric hvbench_db_reconnects_total) > 0")"
hv_log "transactions run again: $(metric hvbench_db_txn_retries_total)," \
    "COMMITs of unknown outcome: $(metric hvbench_db_commit_unknown_total)"
assert_eq "the server still answers /healthz" 200 \
    "$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' "$URL/healthz")"
hv_finish
