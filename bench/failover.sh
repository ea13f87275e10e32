#!/usr/bin/env bash
# How long claims and uploads stall across a PostgreSQL failover. A primary
# with a synchronous standby (deploy/pg.sh standby), one server on the
# pair's multi-host connection string, 20 simulated workers (hvload
# --outage: a request answered 503 or not at all is asked again every
# 0.2 s, as a worker's outbox does) draining a plan of 4 x REPS jobs. A
# quarter of the way in every process of the primary is killed (SIGKILL);
# BENCH_PROMOTE_AFTER seconds later the standby is promoted. Reports the
# longest time without a claim and without an upload (hvload's
# claim_stall_s, upload_stall_s) beside its peer, the time from the kill
# until the promotion returned: what the stall adds to it is hvbench's
# (reconnecting, the transactions run again, the workers' retry pause).
# Every job must be done once, with one result.
#
#   make bench-progs && bench/failover.sh
#
# Env: BENCH_REPS (500; quick 150), BENCH_WORKERS (20), BENCH_PROMOTE_AFTER
# (1 s), BENCH_PG_FAST (0), BENCH_QUICK, KEEP (0).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh

REPS=${BENCH_REPS:-$(bench_quick 150 500)}
WORKERS=${BENCH_WORKERS:-20}
AFTER=${BENCH_PROMOTE_AFTER:-1}
JOBS=$((4 * REPS))
TARGET=bench-host

bench_setup --lease 10
# shellcheck disable=SC2317 # called by the EXIT trap
failover_teardown() {
    local rc=$?
    [[ -n $BENCH_TMP ]] && "$PG" destroy "$BENCH_TMP/pg2" >/dev/null 2>&1
    (exit "$rc")
    bench_teardown
}
trap failover_teardown EXIT
export HVBENCH_PG_FAST=${BENCH_PG_FAST:-0}
DB=$("$PG" standby "$BENCH_TMP/pg" "$BENCH_TMP/pg2") || hv_die "could not ship a standby"
# The server of bench_setup knows the primary alone: one on the pair instead.
hv_stop_pid "${BENCH_SERVER_PIDS[0]}" 10
bench_start_server --lease 10
URL=${URLS[1]}

bench_plan failover "$TARGET" 4 "$REPS" >"$BENCH_TMP/plan.json"
PLAN=$(bench_submit "$BENCH_TMP/plan.json")
HVBENCH_TOKEN=$WORKER_TOKEN timeout -k 5 300 "$HVLOAD" --server "$URL" --workers "$WORKERS" \
    --target "$TARGET" --samples 10 --metrics 1 --wait 2 --empty-claims 6 --outage 60 \
    --duration-limit 240 --json >"$BENCH_TMP/hvload.json" 2>"$BENCH_TMP/hvload.err" &
LOAD=$!
BENCH_PIDS+=("$LOAD")
for ((i = 0; i < 1200; i++)); do
    n=$("$PG" psql "$BENCH_TMP/pg" -- -X -Atqc "SELECT count(*) FROM results" 2>/dev/null)
    [[ ${n:-0} -ge $((JOBS / 4)) ]] && break
    sleep 0.1
done
PRIMARY=$(head -n1 "$BENCH_TMP/pg/data/postmaster.pid")
mapfile -t children < <(pgrep -P "$PRIMARY")
t0=$(date +%s.%N)
kill -KILL "$PRIMARY" "${children[@]}"
sleep "$AFTER"
"$PG" promote "$BENCH_TMP/pg2" >/dev/null || hv_die "could not promote the standby"
promoted=$(jq -n "$(date +%s.%N) - $t0")
wait "$LOAD"
rc=$?
R=$(cat "$BENCH_TMP/hvload.json")
hv_log "hvload (exit $rc): $R"
[[ $rc == 0 ]] || hv_die "hvload exited $rc"
sql2() { "$PG" psql "$BENCH_TMP/pg2" -- -X -Atqc "$1"; }
done_once=$(sql2 "SELECT count(*) FILTER (WHERE status = 'done') || ' ' ||
                   (SELECT count(DISTINCT job_id) || ' ' || count(*) FROM results)
                   FROM jobs WHERE plan_id = $PLAN")
[[ $done_once == "$JOBS $JOBS $JOBS" ]] ||
    hv_die "jobs done, jobs with a result, results: $done_once (want $JOBS each)"
metric() { curl -fsS --max-time 5 "$URL/metrics" | awk -v n="$1" '$1 == n {print $2}'; }
note="$WORKERS workers, $JOBS jobs; $(jq -r '.retries' <<<"$R") requests asked again, \
$(jq -r '.uploads_replayed' <<<"$R") uploads answered as replays; server: \
$(metric hvbench_db_txn_retries_total) transactions run again, \
$(metric hvbench_db_commit_unknown_total) COMMITs of unknown outcome"
claim=$(jq -r '.claim_stall_s' <<<"$R") upload=$(jq -r '.upload_stall_s' <<<"$R")
printf 'failover: promoted %.2f s after the kill; claims stalled %.2f s, uploads %.2f s (%s)\n' \
    "$promoted" "$claim" "$upload" "$note"
bench_result failover "claims stalled across a failover" "$claim" s "kill to promoted" \
    "$promoted" "$(jq -n "$claim / $promoted")" - 1 "$note"
bench_result failover "uploads stalled across a failover" "$upload" s "kill to promoted" \
    "$promoted" "$(jq -n "$upload / $promoted")" - 1 "$note"
