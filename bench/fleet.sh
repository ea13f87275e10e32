#!/usr/bin/env bash
# A fan-out plan over a fleet: BENCH_HOSTS simulated hosts (build/bench/hvload
# --hosts: one worker per host, each its own target fl-NNN with the label
# pool=bench and a credential of its own), from submission to the last
# result, against the same work done the way operators script it today: a
# shell loop of curl calls that submits one plan per host and then polls
# each plan until all have ended. Same hosts, same workload, same
# repetitions; interleaved rounds, medians.
#
# The fan-out plan is one POST of targets.host {"label": "pool=bench"} with
# max_parallel_hosts = BENCH_HOSTS; it ends when the parent's status is
# done. The loop's time runs from its first POST to the moment its last
# plan reads done. The simulated hosts claim with a 2 s long poll and
# upload a one-metric result for each job (no engine runs: this measures
# the control plane).
#
#   make bench-progs && bench/fleet.sh
#
# Env: BENCH_RUNS (3; quick 1), BENCH_HOSTS (200; quick 50), BENCH_REPS (2),
# BENCH_PG_FAST (0), BENCH_QUICK, KEEP (0).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh

RUNS=${BENCH_RUNS:-$(bench_quick 1 3)}
HOSTS=${BENCH_HOSTS:-$(bench_quick 50 200)}
REPS=${BENCH_REPS:-2}

bench_setup
echo "# $(bench_machine)"
echo "# $HOSTS simulated hosts, 1 workload x $REPS repetitions each, $RUNS interleaved runs"

HV_PID=
# hosts_up: starts hvload with HOSTS hosts; returns once all are registered.
hosts_up() {
    local i n since
    since=$(date -u +%Y-%m-%dT%H:%M:%S)
    HVBENCH_TOKEN=$WORKER_TOKEN "$HVLOAD" --server "$URL" --hosts --target fl --label pool=bench \
        --workers "$HOSTS" --wait 2 --empty-claims 1000000 --duration-limit 3600 --quiet \
        >>"$BENCH_TMP/hvload.log" 2>&1 &
    HV_PID=$!
    BENCH_PIDS+=("$HV_PID")
    for ((i = 0; i < 600; i++)); do
        n=$(curl -fsS --max-time 5 -H "Authorization: Bearer $SUBMIT_TOKEN" \
            "$URL/api/v1/targets?label=pool=bench" | jq --arg s "$since" '[.items[] | select(.last_seen >= $s)] | length')
        [[ $n -ge $HOSTS ]] && return 0
        sleep 0.2
    done
    hv_die "only ${n:-0} of $HOSTS simulated hosts registered"
}
hosts_down() {
    hv_stop_pid "$HV_PID" 30
}
workload='[{"id": "cpu", "kind": "cpu", "engine": "builtin", "params": {"copies": 1, "seconds": 1}}]'
now() { date +%s.%N; }
status_of() {
    curl -fsS --max-time 10 -H "Authorization: Bearer $SUBMIT_TOKEN" "$URL/api/v1/plans/$1" | jq -r .status
}

# The fan-out: one POST, then the parent's status.
fanout_run() {
    local t0 t1 id st
    jq -n --argjson w "$workload" --argjson r "$REPS" --argjson h "$HOSTS" '{name: "fleet-fanout",
        targets: {host: {label: "pool=bench"}}, max_parallel_hosts: $h,
        repetitions: {min: $r, max: $r}, workloads: $w}' >"$BENCH_TMP/fanout.json"
    t0=$(now)
    id=$(bench_submit "$BENCH_TMP/fanout.json")
    while :; do
        st=$(status_of "$id")
        [[ $st == "done" ]] && break
        [[ $st == failed || $st == cancelled ]] && hv_die "the fan-out plan $id $st"
        sleep 0.1
    done
    t1=$(now)
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f\n", b - a}'
}

# The loop: one plan per host by curl, then each polled until done.
loop_run() {
    local t0 t1 i id ids=() st left
    t0=$(now)
    for ((i = 0; i < HOSTS; i++)); do
        id=$(jq -n --argjson w "$workload" --argjson r "$REPS" --arg h "$(printf 'fl-%03d' "$i")" \
            '{name: "fleet-loop", targets: {host: $h}, repetitions: {min: $r, max: $r}, workloads: $w}' |
            curl -fsS --max-time 30 -H "Authorization: Bearer $SUBMIT_TOKEN" --data-binary @- \
                "$URL/api/v1/plans" | jq -r .id) || hv_die "the loop's POST failed"
        ids+=("$id")
    done
    left=("${ids[@]}")
    while ((${#left[@]} > 0)); do
        local still=()
        for id in "${left[@]}"; do
            st=$(status_of "$id")
            [[ $st == failed || $st == cancelled ]] && hv_die "the loop's plan $id $st"
            [[ $st == "done" ]] || still+=("$id")
        done
        left=("${still[@]}")
    done
    t1=$(now)
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f\n", b - a}'
}

fan=() loop=()
for ((r = 1; r <= RUNS; r++)); do
    hosts_up
    fr=$(fanout_run)
    lr=$(loop_run)
    hosts_down
    fan+=("$fr")
    loop+=("$lr")
    echo "run $r: fan-out plan $fr s, curl loop $lr s (load $(cut -d' ' -f1 /proc/loadavg))"
done
F=$(bench_median "${fan[@]}")
L=$(bench_median "${loop[@]}")
RATIO=$(awk -v f="$F" -v l="$L" 'BEGIN {printf "%.2f", l / f}')
echo "fan-out over $HOSTS hosts: $F s from submission to the last result; the curl loop: $L s;" \
    "the loop takes ${RATIO}x as long"
# The figure is a speed: hosts measured per second of wall time.
bench_result fleet "fan-out plan over $HOSTS hosts, hosts done/s" \
    "$(awk -v f="$F" -v h="$HOSTS" 'BEGIN {printf "%.1f", h / f}')" hosts/s \
    "shell loop of curl (a plan per host)" "$(awk -v l="$L" -v h="$HOSTS" 'BEGIN {printf "%.1f", h / l}')" \
    "$RATIO" ">=1" "$RUNS" "$REPS repetitions of one job per host; medians $F s vs $L s"
