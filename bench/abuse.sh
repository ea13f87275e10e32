#!/usr/bin/env bash
# Hostile use of one server, this tree's build beside a baseline build, on
# the same database, one after the other in one run:
#  1. large reads: a stored result whose answer (samples and raw output) is
#     about 11 MB, read by 20 clients at once while /healthz is probed from
#     127.0.0.1 every 0.2 s; then the server's resident memory.
#  2. slow bodies: 4,200 connections from 20 untrusted addresses
#     (127.0.0.2 and up) each send a whole POST head and then its body one
#     byte a second (tests/tools/slowclients --body), connecting again a
#     second after the server closes one; /healthz is probed from another
#     untrusted address (127.0.0.60) every 0.5 s.
# Prints, per build: the probes' latency (p50 / p99 / max ms) and how many
# were answered 200, the large reads answered whole, and RSS before and
# after the reads.
#
#   git worktree add /tmp/base 4094f9b && make -C /tmp/base -j2 all
#   make -j2 all test-tools build/bench/hvload
#   BASE_SERVER=/tmp/base/build/bin/hvbench-server bench/abuse.sh
#
# Loopback only, bounded: 20 reads, slow bodies for BENCH_SECONDS (20) per
# build; the whole run takes a few minutes.
#
# Env: BASE_SERVER (required), BENCH_SAMPLES (200000), BENCH_SECONDS (20),
# BENCH_PG_FAST (1), KEEP (0).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh

BASE=${BASE_SERVER:?set BASE_SERVER to a baseline build of hvbench-server}
[[ -x $BASE ]] || hv_die "$BASE is not executable"
SAMPLES=${BENCH_SAMPLES:-200000}
SECS=${BENCH_SECONDS:-20}
BENCH_PG_FAST=${BENCH_PG_FAST:-1}
SLOW=$BUILD/tools/slowclients
[[ -x $SLOW ]] || hv_die "$SLOW not built; run: make test-tools"

bench_setup
THIS=$SERVER
SERVER=$BASE bench_start_server
SERVER=$THIS
echo "# $(bench_machine)"

# --- a result of about 11 MB -------------------------------------------------------
bench_plan abuse abuse-host 1 1 >"$BENCH_TMP/plan.json"
bench_submit "$BENCH_TMP/plan.json" >/dev/null
"$HVLOAD" --server "$URL" --token "$WORKER_TOKEN" --workers 1 --target abuse-host \
    --samples "$SAMPLES" --metrics 4 --quiet >"$BENCH_TMP/hvload.txt" 2>&1 ||
    { cat "$BENCH_TMP/hvload.txt"; hv_die "hvload could not store the result"; }
JOB=$(bench_sql "SELECT job_id FROM results LIMIT 1")
READ_PATH="/api/v1/jobs/$JOB/results?samples=true&raw=true"
# The two builds write the same JSON with different spacing: compare them
# parsed, and count a read whole when it has its own build's size.
size_of() { curl -s -o /dev/null -w '%{size_download}' "$1$READ_PATH"; }
declare -A SIZE=(["${URLS[0]}"]=$(size_of "${URLS[0]}") ["${URLS[1]}"]=$(size_of "${URLS[1]}"))
echo "# the large answer: GET $READ_PATH, ${SIZE[${URLS[1]}]} bytes (baseline)," \
    "${SIZE[${URLS[0]}]} bytes (this)"
if cmp -s <(curl -s "${URLS[0]}$READ_PATH" | jq -S .) <(curl -s "${URLS[1]}$READ_PATH" | jq -S .); then
    echo "# the two answers are equal as parsed JSON"
else
    echo "# the two answers DIFFER as parsed JSON"
fi

# rss PID: resident memory in MB.
rss() { awk '/^VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }

# probe_stats FILE: "p50 | p99 | max | answered/total" (ms) of lines "CODE SECONDS".
probe_stats() {
    sort -k2,2g "$1" | awk '{ t[NR] = $2 * 1000; if ($1 == 200) ok++ }
        END { if (NR == 0) { print "- | - | - | 0/0"; exit }
              p50 = t[int((NR - 1) * 0.50) + 1]; p99 = t[int((NR - 1) * 0.99) + 1]
              printf "%.0f | %.0f | %.0f | %d/%d\n", p50, p99, t[NR], ok, NR }'
}

# probe URL FROM OUT INTERVAL: probes /healthz until $BENCH_TMP/stop exists.
probe() {
    while [[ ! -e $BENCH_TMP/stop ]]; do
        curl -s --interface "$2" --max-time 5 -o /dev/null -w '%{http_code} %{time_total}\n' \
            "$1/healthz" >>"$3" || echo "000 5" >>"$3"
        sleep "$4"
    done
}

# reads NAME URL PID: 20 parallel reads of the large answer.
reads() {
    local name=$1 url=$2 pid=$3 i before whole=0 size
    size=${SIZE[$url]}
    before=$(rss "$pid")
    rm -f "$BENCH_TMP/stop" "$BENCH_TMP/$name-reads.probe"
    probe "$url" 127.0.0.1 "$BENCH_TMP/$name-reads.probe" 0.2 &
    local prober=$!
    local readers=()
    for ((i = 0; i < 20; i++)); do
        curl -s --max-time 300 -o /dev/null -w '%{http_code} %{size_download} %{time_total}\n' \
            "$url$READ_PATH" >"$BENCH_TMP/$name-read-$i.txt" &
        readers+=($!)
    done
    wait "${readers[@]}"
    touch "$BENCH_TMP/stop"
    wait "$prober"
    for ((i = 0; i < 20; i++)); do
        read -r code got _ <"$BENCH_TMP/$name-read-$i.txt"
        [[ "$code $got" == "200 $size" ]] && whole=$((whole + 1))
    done
    sleep 2
    printf '| %s | 20 parallel reads of %s MB | %s | %d/20 | %s -> %s |\n' "$name" \
        "$((size / 1000000))" "$(probe_stats "$BENCH_TMP/$name-reads.probe")" "$whole" \
        "$before" "$(rss "$pid")"
}

# bodies NAME URL: 4,200 slow bodies from 20 addresses, probed from 127.0.0.60.
bodies() {
    local name=$1 url=$2 port=${2##*:}
    rm -f "$BENCH_TMP/stop" "$BENCH_TMP/$name-bodies.probe"
    timeout -k 5 $((SECS + 30)) "$SLOW" --port "$port" --from 127.0.0.2 --addresses 20 \
        --connections 4200 --body --reconnect 1 --duration "$SECS" \
        >"$BENCH_TMP/$name-bodies.json" 2>"$BENCH_TMP/$name-bodies.err" &
    local slow=$!
    sleep 3
    probe "$url" 127.0.0.60 "$BENCH_TMP/$name-bodies.probe" 0.5 &
    local prober=$!
    wait "$slow"
    touch "$BENCH_TMP/stop"
    wait "$prober"
    printf '| %s | 4,200 slow bodies from 20 addresses, probed from 127.0.0.60 | %s | | %s |\n' \
        "$name" "$(probe_stats "$BENCH_TMP/$name-bodies.probe")" \
        "$(jq -r '"\(.answered | to_entries | map("\(.key): \(.value)") | join(", ")) answered, \(.open_at_end) open at the end"' \
            "$BENCH_TMP/$name-bodies.json")"
}

echo
echo "| build | load | /healthz p50 ms | p99 ms | max ms | answered | reads whole | RSS MB before -> after / slow clients |"
echo "|---|---|---|---|---|---|---|---|"
base_pid=${BENCH_SERVER_PIDS[1]} this_pid=${BENCH_SERVER_PIDS[0]}
reads baseline "${URLS[1]}" "$base_pid"
reads this "${URLS[0]}" "$this_pid"
bodies baseline "${URLS[1]}"
bodies this "${URLS[0]}"
