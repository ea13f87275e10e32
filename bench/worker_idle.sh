#!/usr/bin/env bash
# What an idle worker costs its machine: one real hvbench-worker against a
# server with no work queued. After a 5 s settle, its CPU time (utime +
# stime from /proc/PID/stat, all threads) is sampled over 60 s and its
# resident memory (VmRSS from /proc/PID/status, and RssAnon: the part that
# is not shared library or file pages) read every second. The
# server's CPU over the same window is shown too: an idle worker's polling
# costs the server (and PostgreSQL) as well.
#
# PSS (from /proc/PID/smaps_rollup) shares each shared-library page among
# the processes that map it. The last row is the floor: build/bench/curlidle,
# a client that only initialises the distribution's libcurl, makes one
# request and waits — what any libcurl-based agent costs before its own code.
#
# Measured with the worker's default options (long-poll claims), with
# --poll 1, and with plain polling (--wait 0, every 2 s and every 1 s) for
# comparison. Goal of the issue: < 0.1 % of one core and < 10 MB.
#
#   make bench-progs && bench/worker_idle.sh
#
# Env: BENCH_SECONDS (60; quick 6), BENCH_SETTLE (5; quick 2),
# BENCH_PG_FAST (0), BENCH_QUICK, KEEP (0).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh

SECONDS_SAMPLED=${BENCH_SECONDS:-$(bench_quick 6 60)}
SETTLE=${BENCH_SETTLE:-$(bench_quick 2 5)}

bench_setup
echo "# $(bench_machine)"
echo "# server $URL, no work queued; settle ${SETTLE} s, sample ${SECONDS_SAMPLED} s; CLK_TCK $CLK_TCK"

# rss_kb PID FIELD: VmRSS (all resident pages, shared libraries included)
# or RssAnon (the process's own memory), in kB.
rss_kb() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
pss_kb() { awk '$1 == "Pss:" {print $2}' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0; }
CURLIDLE=$BUILD/bench/curlidle
[[ -x $CURLIDLE ]] || hv_die "$CURLIDLE is not built: make bench-progs"


# measure LABEL [worker options...]: sets ROW. LABEL "no worker" measures
# the server and PostgreSQL alone: the baseline the other rows add to.
measure() {
    local label=$1 pid=$$ w0 w1 s0 s1 p0 p1 t0 t1 rss anon pss max_rss=0 max_anon=0 max_pss=0 i
    local n=${#BENCH_PIDS[@]}
    shift
    if [[ $label == "libcurl floor" ]]; then
        "$CURLIDLE" "$URL/healthz" >>"$BENCH_TMP/curlidle.log" 2>&1 &
        pid=$!
        BENCH_PIDS+=("$pid")
    elif [[ $label != "no worker" ]]; then
        "$WORKER" --server "$URL" --token "$WORKER_TOKEN" --name idle-host --state-dir "$BENCH_TMP/state" "$@" \
            >>"$BENCH_TMP/worker-$n.log" 2>&1 &
        pid=$!
        BENCH_PIDS+=("$pid")
    fi
    sleep "$SETTLE"
    kill -0 "$pid" 2>/dev/null || { hv_tail "$BENCH_TMP/worker-$n.log"; hv_die "the worker exited"; }
    w0=$(bench_ticks "$pid") s0=$(bench_ticks "${BENCH_SERVER_PIDS[0]}") p0=$(bench_pg_ticks)
    t0=$(date +%s.%N)
    for ((i = 0; i < SECONDS_SAMPLED; i++)); do
        sleep 1
        rss=$(rss_kb "$pid" VmRSS) anon=$(rss_kb "$pid" RssAnon) pss=$(pss_kb "$pid")
        ((rss > max_rss)) && max_rss=$rss
        ((pss > max_pss)) && max_pss=$pss
        ((anon > max_anon)) && max_anon=$anon
    done
    w1=$(bench_ticks "$pid") s1=$(bench_ticks "${BENCH_SERVER_PIDS[0]}") p1=$(bench_pg_ticks)
    t1=$(date +%s.%N)
    kill -0 "$pid" 2>/dev/null || hv_die "the worker exited during the measurement"
    local span cpu others
    span=$(echo "$t1 - $t0" | bc -l)
    others=$(printf '%.3f %% | %.3f %% |' "$(echo "($s1 - $s0) / $CLK_TCK * 100 / $span" | bc -l)" \
        "$(echo "($p1 - $p0) / $CLK_TCK * 100 / $span" | bc -l)")
    if [[ $pid == "$$" ]]; then
        ROW=$(printf '| %s | %.1f | – | – | – | – | – | – | %s' "$label" "$span" "$others")
        return
    fi
    hv_stop_pid "$pid" 10
    cpu=$(echo "($w1 - $w0) / $CLK_TCK" | bc -l)
    M_CPU=$cpu M_SPAN=$span M_RSS=$(echo "$max_rss / 1024" | bc -l)
    ROW=$(printf '| %s | %.1f | %d | %.3f | **%.3f %%** | **%.1f** | %.1f | %.1f | %s' \
        "$label" "$span" $((w1 - w0)) "$(echo "$cpu * 60 / $span" | bc -l)" \
        "$(echo "$cpu * 100 / $span" | bc -l)" "$(echo "$max_rss / 1024" | bc -l)" \
        "$(echo "$max_pss / 1024" | bc -l)" "$(echo "$max_anon / 1024" | bc -l)" "$others")
}

# The defaults (claims long-poll the server), --poll 1 as asked for in the
# issue, and plain polling (--wait 0) every 2 s and every 1 s for comparison.
VARIANTS=("" "--poll 1" "--wait 0" "--wait 0 --poll 1")
measure "no worker"
rows=("$ROW")
for v in "${VARIANTS[@]}"; do
    read -ra args <<<"$v"
    measure "${v:-default options}" "${args[@]}"
    rows+=("$ROW")
    if [[ -z $v ]]; then DEF_CPU=$M_CPU DEF_SPAN=$M_SPAN DEF_RSS=$M_RSS; fi
done
measure "libcurl floor"
rows+=("$ROW")

echo
echo "| worker | seconds | CPU ticks | CPU s per minute | % of one core | max VmRSS MB | max PSS MB | max RssAnon MB | server % core | PostgreSQL % core |"
echo "|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "goal: < 0.1 % of one core and < 10 MB RSS (one tick is $(echo "100 / $CLK_TCK / $SECONDS_SAMPLED" | bc -l | xargs printf '%.3f') % over ${SECONDS_SAMPLED} s)"
BENCH_COMMAND="BENCH_QUICK=$BENCH_QUICK BENCH_SECONDS=$SECONDS_SAMPLED BENCH_SETTLE=$SETTLE BENCH_PG_FAST=${BENCH_PG_FAST:-0} bench/worker_idle.sh"
bench_result worker_idle "idle worker's CPU (default options)" "$(printf %.4f "$DEF_CPU")" "CPU s" \
    "one core over the same span" "$(printf %.1f "$DEF_SPAN")" "$(bench_ratio "$DEF_CPU" "$DEF_SPAN" 5)" \
    "<=0.001" 1 "share of one core"
bench_result worker_idle "idle worker's VmRSS (default options)" "$(printf %.1f "$DEF_RSS")" MB \
    "libcurl floor (curlidle) VmRSS" "$(printf %.1f "$M_RSS")" "$(bench_ratio "$DEF_RSS" "$M_RSS" 2)" \
    - 1 "goal < 10 MB"
echo "reproduce: make bench-progs && BENCH_SECONDS=$SECONDS_SAMPLED BENCH_SETTLE=$SETTLE BENCH_PG_FAST=${BENCH_PG_FAST:-0} bench/worker_idle.sh"
echo "floor:     $CURLIDLE $URL/healthz"
echo "worker:    $WORKER --server $URL --token <worker token> --name idle-host [options above]"
