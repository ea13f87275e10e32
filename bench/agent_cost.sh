#!/usr/bin/env bash
# What the worker itself costs while a built-in benchmark runs: the CPU
# time of its own threads (claims, heartbeats, the per-second sampling,
# uploads) as a share of the CPU time of the threads doing the engine's
# work, and its resident memory during each engine.
#
# One real hvbench-worker runs one job at a time: a cpu job (1 copy) and a
# disk job (4 KiB random writes with O_DIRECT into a 1 GiB file under the
# scratch folder, bounded by the job's seconds). While each runs, after a
# settle, every thread of the worker is read twice BENCH_SECONDS apart from
# /proc/PID/task/TID/schedstat (time on CPU in nanoseconds) and
# /proc/PID/task/TID/comm: threads named hv-cpu, hv-disk or hv-net do the
# engine's work (worker/engines/engine.h names them), the others are the
# worker's own. VmRSS is the largest seen each second. Goal of the issue:
# the worker's own threads under 0.1 % of the engine's.
#
#   make bench-progs && bench/agent_cost.sh
#
# The net job (builtin stream, 1 stream) pairs the worker with a second
# worker, agent-peer, that runs the server side; only the first worker (the
# client side) is measured. Each engine's share is also recorded with
# bench_result (bench/results/agent_cost.json). Not measured here: the host
# worker's telemetry cost as a share of a guest's vCPU time (it needs a
# guest: bench/guest_agent_cost.sh).
#
# Env: BENCH_SECONDS (10; quick 4), BENCH_SETTLE (3; quick 2),
# BENCH_PG_FAST (0), BENCH_QUICK, KEEP (0).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh

SAMPLE=${BENCH_SECONDS:-$(bench_quick 4 10)}
SETTLE=${BENCH_SETTLE:-$(bench_quick 2 3)}
RUN=$((SETTLE + SAMPLE + 5))

bench_setup
echo "# $(bench_machine)"
echo "# one worker, one job at a time; settle ${SETTLE} s, sample ${SAMPLE} s of a ${RUN} s job"

mkdir -p "$BENCH_TMP/scratch"
HVBENCH_SCRATCH=$BENCH_TMP/scratch "$WORKER" --server "$URL" --token "$WORKER_TOKEN" \
    --name agent-host --state-dir "$BENCH_TMP/state" >>"$BENCH_TMP/worker.log" 2>&1 &
WPID=$!
BENCH_PIDS+=("$WPID")
"$WORKER" --server "$URL" --token "$WORKER_TOKEN" --name agent-peer \
    --state-dir "$BENCH_TMP/state-peer" >>"$BENCH_TMP/worker-peer.log" 2>&1 &
BENCH_PIDS+=("$!")

# threads PID: "ENGINE_NS OWN_NS" summed over the living threads.
threads() {
    local t comm ns engine=0 own=0
    for t in /proc/"$1"/task/*; do
        comm=$(cat "$t/comm" 2>/dev/null) || continue
        read -r ns _ <"$t/schedstat" 2>/dev/null || continue
        case $comm in
        hv-cpu | hv-disk | hv-net) engine=$((engine + ns)) ;;
        *) own=$((own + ns)) ;;
        esac
    done
    echo "$engine $own"
}

# job_state ID: the status of plan ID's jobs: "running" once all run,
# "done" once all are done, "failed" if one failed, else the first one's.
job_state() {
    curl -sS --max-time 5 "$URL/api/v1/plans/$1/jobs" | jq -r '[.items[].status] |
        if length == 0 then "none" elif any(. == "failed") then "failed"
        elif all(. == "running") then "running" elif all(. == "done") then "done" else .[0] end'
}

# measure LABEL WORKLOAD_JSON FIGURE: prints a table row, records FIGURE.
measure() {
    local label=$1 plan id i e0 o0 e1 o1 rss max_rss=0 st
    plan=$BENCH_TMP/plan-$label.json
    jq -n --argjson w "$2" '{name: "agent-cost", targets: {host: "agent-host"},
        repetitions: {min: 1, max: 1}, workloads: [$w]}' >"$plan"
    id=$(bench_submit "$plan")
    for ((i = 0; i < 300; i++)); do
        st=$(job_state "$id")
        [[ $st == running ]] && break
        [[ $st == "done" || $st == "failed" ]] && hv_die "$label: the job ended before it was measured"
        sleep 0.2
    done
    [[ $st == running ]] || hv_die "$label: the job did not start"
    # The engine's threads may start after the job shows running (a net
    # client waits for its peer's server side): wait for them to have run.
    for ((i = 0; i < 60; i++)); do
        read -r e0 _ < <(threads "$WPID")
        ((e0 > 0)) && break
        sleep 0.5
    done
    ((e0 > 0)) || hv_die "$label: no engine thread ran within 30 s of the job starting"
    sleep "$SETTLE"
    read -r e0 o0 < <(threads "$WPID")
    for ((i = 0; i < SAMPLE; i++)); do
        sleep 1
        rss=$(awk '$1 == "VmRSS:" {print $2}' "/proc/$WPID/status")
        ((rss > max_rss)) && max_rss=$rss
    done
    read -r e1 o1 < <(threads "$WPID")
    [[ $(job_state "$id") == running ]] || hv_die "$label: the job ended during the measurement"
    for ((i = 0; i < 600; i++)); do
        st=$(job_state "$id")
        [[ $st == "done" || $st == "failed" ]] && break
        sleep 0.5
    done
    [[ $st == "done" ]] || { hv_tail "$BENCH_TMP/worker.log"; hv_die "$label: the job $st"; }
    local engine_ms own_ms
    ((e1 > e0)) || hv_die "$label: the engine's threads did not run in the window (ended early?)"
    engine_ms=$(echo "($e1 - $e0) / 1000000" | bc -l)
    own_ms=$(echo "($o1 - $o0) / 1000000" | bc -l)
    printf '| %s | %.0f | %.2f | %.4f %% | %.1f |\n' "$label" "$engine_ms" "$own_ms" \
        "$(echo "$own_ms / $engine_ms * 100" | bc -l)" "$(echo "$max_rss / 1024" | bc -l)"
    RESULTS+=("$3|$(printf %.2f "$own_ms")|$(printf %.0f "$engine_ms")|$(bench_ratio "$own_ms" "$engine_ms" 6)|$(printf %.1f "$(echo "$max_rss / 1024" | bc -l)")")
}
RESULTS=()

echo
echo "| engine | engine threads' CPU (ms) | worker's own threads' CPU (ms) | own / engine | VmRSS max (MB) |"
echo "|---|---|---|---|---|"
measure "cpu (builtin, 1 copy)" "{\"id\": \"c\", \"kind\": \"cpu\", \"engine\": \"builtin\",
    \"params\": {\"copies\": 1, \"seconds\": $RUN}}" cpu
measure "disk (builtin, rand-write 4 KiB, O_DIRECT)" "{\"id\": \"d\", \"kind\": \"disk\", \"engine\": \"builtin\",
    \"params\": {\"size\": \"1g\", \"block\": \"4k\", \"ops\": [\"rand-write\"], \"direct\": true, \"seconds\": $RUN}}" disk
measure "net (builtin, 1 TCP stream to agent-peer)" "{\"id\": \"n\", \"kind\": \"net\", \"engine\": \"builtin\",
    \"params\": {\"peer\": \"agent-peer\", \"streams\": 1, \"seconds\": $((RUN + 10)), \"warmup\": 0.5}}" net
echo
for r in "${RESULTS[@]}"; do
    IFS='|' read -r engine own eng share rss <<<"$r"
    bench_result agent_cost "worker's own threads' CPU, $engine engine" "$own" "CPU ms" \
        "the $engine engine's threads" "$eng" "$share" "<=0.001" 1 "VmRSS max $rss MB"
done
echo "the host worker's cost as a share of a guest's vCPU time: bench/guest_agent_cost.sh (boots a guest)"
