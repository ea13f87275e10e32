#!/usr/bin/env bash
# make bench: every benchmark, one after another, each beside its peer and
# writing bench/results/NAME.json; then tools/bench-table.py rewrites the
# table at the top of BENCHMARKS.md from those files. A benchmark that
# fails is reported and the others still run (its old results file stays);
# the exit status is then 1. Each one's output goes to var/bench/logs/NAME.log
# too, and the time it took is printed.
#
#   make bench                  # the full benchmarks (an hour or more)
#   BENCH_QUICK=1 make bench    # fewer rounds, smaller sizes: under 10 minutes here
#   BENCH_ONLY="reads claims" bench/all.sh
#
# bench/net-vs-iperf.sh needs root (network namespaces); without it it is
# left out with a note. The peers' programs come from deploy/deps.sh bench
# (run first: it installs what is missing, as root or through sudo).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export BUILD=${BUILD:-build}
export BENCH_QUICK=${BENCH_QUICK:-0}

# bench/guest_agent_cost.sh boots a guest (one guest run at a time on a
# shared machine): BENCH_ONLY=guest_agent_cost runs it on purpose.
ALL=(reads claims ingest worker_idle agent_cost report web webhooks fleet disk-vs-fio net-vs-iperf cpu-stability rounds)
read -ra ONLY <<<"${BENCH_ONLY:-${ALL[*]}}"

deploy/deps.sh bench || { echo "bench: deploy/deps.sh bench failed" >&2; exit 1; }
mkdir -p var/bench/logs
failed=() skipped=()
t_all=$(date +%s)
for name in "${ONLY[@]}"; do
    [[ -x bench/$name.sh ]] || { echo "bench: no bench/$name.sh" >&2; exit 2; }
    env=()
    if [[ $name == net-vs-iperf && $(id -u) -ne 0 ]]; then
        skipped+=("$name (needs root)")
        continue
    fi
    # report.sh and webhooks.sh keep their own defaults; their quick sizes
    # are given here.
    if [[ $name == report && $BENCH_QUICK == 1 ]]; then
        env=(BENCH_ROUNDS="${BENCH_ROUNDS:-2}" BENCH_REQUESTS="${BENCH_REQUESTS:-3}" BENCH_REPS="${BENCH_REPS:-200}")
    elif [[ $name == webhooks && $BENCH_QUICK == 1 ]]; then
        env=(BENCH_RUNS="${BENCH_RUNS:-2}" BENCH_DELIVERIES="${BENCH_DELIVERIES:-100}")
    fi
    echo "=== bench/$name.sh (load $(cut -d' ' -f1-3 /proc/loadavg))"
    t0=$(date +%s)
    env "${env[@]}" "bench/$name.sh" 2>&1 | tee "var/bench/logs/$name.log"
    rc=${PIPESTATUS[0]}
    echo "=== bench/$name.sh: exit $rc, $(($(date +%s) - t0)) s"
    [[ $rc -eq 0 ]] || failed+=("$name")
done
tools/bench-table.py || failed+=(bench-table)
echo "bench: $((${#ONLY[@]} - ${#failed[@]} - ${#skipped[@]})) ran, ${#failed[@]} failed${failed[*]:+: ${failed[*]}}," \
    "${#skipped[@]} left out${skipped[*]:+: ${skipped[*]}}; $(($(date +%s) - t_all)) s in all (BENCH_QUICK=$BENCH_QUICK)"
[[ ${#failed[@]} -eq 0 ]]
