#!/usr/bin/env bash
# What an idle fleet costs the server side: 200 simulated workers (hvload
# --wait 25) long-poll an empty queue for 60 s while the server's and
# PostgreSQL's CPU time is measured. Twice: on a fresh database, and after
# 20,000 jobs have been run (a server's history), since a parked claim is
# re-run on every fallback tick of the server and a claim's cost may grow
# with the jobs table.
#
#   make bench-progs && bench/idle_fleet.sh
#
# Env: BENCH_FLEET (200), BENCH_SECONDS (60), BENCH_HISTORY (20000, a
# multiple of 10000), BENCH_WAIT (25), BENCH_PG_FAST (1: CPU is the subject,
# and the history fills faster), KEEP (0).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh

FLEET=${BENCH_FLEET:-200}
SECS=${BENCH_SECONDS:-60}
HISTORY=${BENCH_HISTORY:-20000}
WAIT=${BENCH_WAIT:-25}
BENCH_PG_FAST=${BENCH_PG_FAST:-1}

bench_setup
echo "# $(bench_machine)"
echo "# server $URL; $FLEET workers long-polling (--wait $WAIT) for $SECS s"

# fleet LABEL: sets ROW.
fleet() {
    local s0 s1 p0 p1 rc done_jobs
    done_jobs=$(bench_sql "SELECT count(*) FROM jobs WHERE status = 'done'")
    s0=$(bench_ticks "${BENCH_SERVER_PIDS[0]}") p0=$(bench_pg_ticks)
    HVBENCH_TOKEN=$WORKER_TOKEN timeout -k 5 $((SECS + 60)) "$HVLOAD" --server "$URL" \
        --workers "$FLEET" --target idle-fleet --wait "$WAIT" --empty-claims 100000 \
        --duration-limit "$SECS" --quiet --json >"$BENCH_TMP/fleet.json" 2>"$BENCH_TMP/fleet.err"
    rc=$?
    s1=$(bench_ticks "${BENCH_SERVER_PIDS[0]}") p1=$(bench_pg_ticks)
    # Exit 3 is the expected end: the duration limit stopped an idle run.
    [[ $rc -eq 3 ]] || { cat "$BENCH_TMP/fleet.err"; hv_die "hvload exited $rc: $(cat "$BENCH_TMP/fleet.json")"; }
    local span
    span=$(jq -r .elapsed_s "$BENCH_TMP/fleet.json")
    ROW=$(printf '| %s | %d | %d | %.1f | %d | %.1f | **%.1f %%** | %.1f | **%.1f %%** |' "$1" "$done_jobs" \
        "$FLEET" "$span" "$(jq -r '.claims["204"]' "$BENCH_TMP/fleet.json")" \
        "$(echo "($s1 - $s0) / $CLK_TCK" | bc -l)" "$(echo "($s1 - $s0) / $CLK_TCK * 100 / $span" | bc -l)" \
        "$(echo "($p1 - $p0) / $CLK_TCK" | bc -l)" "$(echo "($p1 - $p0) / $CLK_TCK * 100 / $span" | bc -l)")
}

rows=()
fleet "fresh database"
rows+=("$ROW")
for ((r = 1; r <= HISTORY / 10000; r++)); do
    bench_plan "history-$r" history 10 1000 >"$BENCH_TMP/plan.json"
    bench_submit "$BENCH_TMP/plan.json" >/dev/null
    HVBENCH_TOKEN=$WORKER_TOKEN timeout -k 5 960 "$HVLOAD" --server "$URL" --workers 50 \
        --target history --duration-limit 900 --quiet --json >"$BENCH_TMP/history.json" ||
        hv_die "filling the history failed: $(cat "$BENCH_TMP/history.json")"
done
fleet "after $HISTORY jobs"
rows+=("$ROW")

echo
echo "| database | done jobs | idle workers | seconds | claims answered 204 | server CPU s | server % core | PostgreSQL CPU s | PostgreSQL % core |"
echo "|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "reproduce: make bench-progs && BENCH_FLEET=$FLEET BENCH_SECONDS=$SECS BENCH_HISTORY=$HISTORY BENCH_WAIT=$WAIT BENCH_PG_FAST=$BENCH_PG_FAST bench/idle_fleet.sh"
echo "the fleet: HVBENCH_TOKEN=<worker token> $HVLOAD --server $URL --workers $FLEET --target idle-fleet --wait $WAIT --empty-claims 100000 --duration-limit $SECS --json"
