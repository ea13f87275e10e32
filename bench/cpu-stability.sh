#!/usr/bin/env bash
# Run-to-run stability of the built-in CPU engine: N runs (default 10) of
# the same workload, in-process (build/bench/enginerun), one after another;
# reports the mean, standard deviation and coefficient of variation (CV)
# of cpu.score and of each kernel's rate. The issue's goal: CV <= 1 % on an
# idle machine.
#
# A CV only means something on an idle machine, so the script also reports
# what else ran: the load average before the series, and per run the CPU
# time other processes and the hypervisor took (user+system of the whole
# machine minus the engine's own, and steal, from /proc/stat), as a share
# of the run's CPU capacity.
#
#   make bench-progs && bench/cpu-stability.sh
#   BENCH_RUNS=10 BENCH_SECONDS=10 BENCH_COPIES=1 BENCH_PIN=true bench/cpu-stability.sh
#
# Env: BENCH_RUNS (10; quick 4), BENCH_SECONDS (10, quick 3: measured seconds of each run),
# BENCH_COPIES (1; or per-vcpu), BENCH_PIN (false), BUILD (build), KEEP
# (0: keep each run's JSON).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/local.sh
source bench/local.sh

ENGINERUN=$BUILD/bench/enginerun
RUNS=${BENCH_RUNS:-$(bench_quick 4 10)}
SECS=${BENCH_SECONDS:-$(bench_quick 3 10)}
COPIES=${BENCH_COPIES:-1}
PIN=${BENCH_PIN:-false}

bench_built "$ENGINERUN"
[[ $RUNS =~ ^[0-9]+$ && $RUNS -ge 2 ]] || die "BENCH_RUNS must be at least 2"
[[ $COPIES =~ ^([0-9]+|per-vcpu)$ ]] || die "BENCH_COPIES must be a number or per-vcpu"
[[ $PIN == true || $PIN == false ]] || die "BENCH_PIN must be true or false"
copies_json=$COPIES
[[ $COPIES == per-vcpu ]] && copies_json='"per-vcpu"'
params="{\"copies\": $copies_json, \"seconds\": $SECS, \"pin\": $PIN}"

bench_workdir "${TMPDIR:-/tmp}"

# cpu_jiffies: "busy steal total" of the whole machine from /proc/stat.
cpu_jiffies() {
    awk '$1 == "cpu" {busy = $2 + $3 + $4 + $7 + $8; steal = $9; total = 0
                      for (i = 2; i <= 9; i++) total += $i; print busy, steal, total}' /proc/stat
}

echo "# machine: $(nproc) CPUs ($(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)), kernel $(uname -r)"
echo "# load average before the series: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $RUNS runs of cpu/builtin $params, one after another"
echo
echo "| run | cpu.score | int | fp | mem | branch | others' CPU % | steal % | steady |"
echo "|---|---|---|---|---|---|---|---|---|"
for ((i = 1; i <= RUNS; i++)); do
    read -r b0 s0 t0 < <(cpu_jiffies)
    /usr/bin/time -f '%U %S' -o "$WORK/time" "$ENGINERUN" cpu "$params" >"$WORK/run-$i.json" ||
        die "run $i failed: $(jq -r .error "$WORK/run-$i.json" 2>/dev/null)"
    read -r b1 s1 t1 < <(cpu_jiffies)
    read -r u s <"$WORK/time"
    # Jiffies are 1/100 s (USER_HZ); the engine's own time is subtracted
    # from the machine's busy time to leave what others used.
    others=$(echo "(($b1 - $b0) - ($u + $s) * 100) * 100 / ($t1 - $t0)" | bc -l)
    steal=$(echo "($s1 - $s0) * 100 / ($t1 - $t0)" | bc -l)
    jq -r --arg others "$others" --arg steal "$steal" --arg i "$i" '
        def m(n): (.metrics[] | select(.name == n) | .value);
        "| \($i) | \(m("cpu.score") | . * 10 | round / 10) | \(m("cpu.int.rate") | round) | \(m("cpu.fp.rate") | round) | \(m("cpu.mem.rate") | round) | \(m("cpu.branch.rate") | round) | \($others | tonumber | if . < 0 then 0 else . end | . * 10 | round / 10) | \($steal | tonumber | . * 10 | round / 10) | \(.observed.steady_state.steady) |"' \
        "$WORK/run-$i.json"
done

echo
echo "| metric | mean | sd | CV |"
echo "|---|---|---|---|"
for metric in cpu.score cpu.int.rate cpu.fp.rate cpu.mem.rate cpu.branch.rate; do
    jq -s -r --arg n "$metric" '
        [.[] | .metrics[] | select(.name == $n) | .value] as $v
        | ($v | add / length) as $mean
        | ([$v[] | (. - $mean) * (. - $mean)] | add / (length - 1) | sqrt) as $sd
        | "| \($n) | \($mean | . * 10 | round / 10) | \($sd | . * 10 | round / 10) | **\($sd / $mean * 10000 | round / 100) %** |"' \
        "$WORK"/run-*.json
done
echo
echo "goal: CV <= 1 % on an idle machine"
read -r mean sd < <(jq -s -r '[.[] | .metrics[] | select(.name == "cpu.score") | .value] as $v
    | ($v | add / length) as $mean
    | "\($mean) \([$v[] | (. - $mean) * (. - $mean)] | add / (length - 1) | sqrt)"' "$WORK"/run-*.json)
BENCH_COMMAND="BENCH_QUICK=$BENCH_QUICK BENCH_RUNS=$RUNS BENCH_SECONDS=$SECS BENCH_COPIES=$COPIES BENCH_PIN=$PIN bench/cpu-stability.sh"
bench_result cpu-stability "cpu.score standard deviation over $RUNS runs (pin $PIN)" "$(printf %.2f "$sd")" "" \
    "cpu.score mean" "$(printf %.2f "$mean")" "$(bench_ratio "$sd" "$mean" 4)" "<=0.01" "$RUNS" \
    "the ratio is the coefficient of variation; load $(cut -d' ' -f1 /proc/loadavg) at the end"
echo "reproduce: make bench-progs && BENCH_RUNS=$RUNS BENCH_SECONDS=$SECS BENCH_COPIES=$COPIES BENCH_PIN=$PIN bench/cpu-stability.sh"
