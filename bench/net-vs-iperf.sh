#!/usr/bin/env bash
# The built-in net engine against iperf3 and iperf 2 on the same paths,
# interleaved (builtin, iperf3, iperf, builtin, iperf3, iperf, ...) so slow
# drift of the machine or its host hits all alike:
#
#   loopback   server and client in this network namespace, 127.0.0.1
#   veth       server and client in two network namespaces this script
#              creates (and removes), joined by a veth pair, 10.213.0.1/.2
#
# each with 1 and with 4 parallel TCP streams, client sending, the
# system's buffer autotuning, 128 KiB writes (the default of all three).
# Every tool gets BENCH_WARMUP seconds of traffic that is not counted, then
# BENCH_SECONDS measured: the engine's warmup, iperf3 -O, and for iperf 2
# (which has no omit) the mean of its per-second sums after the warm-up.
# iperf3's figure is the receiver's count (sum_received), iperf 2's the
# client's per-second reports (the sender's count, as the engine's: see
# worker/engines/net.c); over a window of seconds the two counts differ by
# the change of the few MB queued in the socket buffers.
#
# Prints one Markdown table: Gbit/s of each (the median of the rounds: on
# a shared host one round in a few lands far off, for any of the three),
# the ratio builtin / the better of the two peers, the same ratio of the
# means, and each round's values.
#
#   make bench-progs && bench/net-vs-iperf.sh
#
# Needs root (network namespaces), ip (iproute2), iperf3, iperf (2.x) and
# jq. The engine runs through build/bench/netrun (bench/netrun.c).
#
# Env: BENCH_SECONDS (10), BENCH_WARMUP (2), BENCH_ROUNDS (2),
# BENCH_PATHS ("loopback veth"), BENCH_STREAMS ("1 4"), BUILD (build),
# KEEP (0: keep the raw outputs).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/local.sh
source bench/local.sh
NETRUN=$PWD/$BUILD/bench/netrun
SECS=${BENCH_SECONDS:-$(bench_quick 3 10)}
WARM=${BENCH_WARMUP:-$(bench_quick 1 2)}
ROUNDS=${BENCH_ROUNDS:-$(bench_quick 1 2)}
PATHS=${BENCH_PATHS:-loopback veth}
STREAMS=${BENCH_STREAMS:-1 4}

for tool in ip iperf3 iperf jq; do
    command -v "$tool" >/dev/null || die "$tool is not installed (Debian: apt-get install iproute2 iperf3 iperf jq)"
done
bench_built "$NETRUN"
[[ $(id -u) == 0 ]] || die "needs root for the network namespaces"

NS_A=hvb-net-a-$$
NS_B=hvb-net-b-$$
SERVER_PID=
# On exit, before the work directory goes: the server, the namespaces.
bench_before_drop() {
    [[ -n $SERVER_PID ]] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    ip netns del "$NS_A" 2>/dev/null
    ip netns del "$NS_B" 2>/dev/null
    return 0
}
bench_workdir /tmp

# The veth path: two namespaces, one veth pair, no other interface.
make_veth() {
    ip netns add "$NS_A" && ip netns add "$NS_B" &&
        ip link add hvb-va-$$ type veth peer name hvb-vb-$$ &&
        ip link set hvb-va-$$ netns "$NS_A" && ip link set hvb-vb-$$ netns "$NS_B" &&
        ip -n "$NS_A" addr add 10.213.0.1/24 dev hvb-va-$$ &&
        ip -n "$NS_B" addr add 10.213.0.2/24 dev hvb-vb-$$ &&
        ip -n "$NS_A" link set lo up && ip -n "$NS_B" link set lo up &&
        ip -n "$NS_A" link set hvb-va-$$ up && ip -n "$NS_B" link set hvb-vb-$$ up ||
        die "cannot create the namespaces and the veth pair"
}

# Where a path's server and client run: in_server/in_client CMD...
path=
in_server() { if [[ $path == veth ]]; then ip netns exec "$NS_A" "$@"; else "$@"; fi; }
# Starts CMD... as the path's server in the background, its output in OUT
# and ERR; SERVER_PID is the program itself (ip netns exec execs it), so
# stop_server reaches it: start_server OUT ERR CMD...
start_server() {
    local out=$1 err=$2
    shift 2
    if [[ $path == veth ]]; then
        ip netns exec "$NS_A" "$@" >"$out" 2>"$err" &
    else
        "$@" >"$out" 2>"$err" &
    fi
    SERVER_PID=$!
}
in_client() { if [[ $path == veth ]]; then ip netns exec "$NS_B" "$@"; else "$@"; fi; }
server_addr() { if [[ $path == veth ]]; then echo 10.213.0.1; else echo 127.0.0.1; fi; }

# Waits until something listens on TCP port $1 on the server's side (at
# most 10 s).
await_port() {
    local i
    for ((i = 0; i < 100; i++)); do
        [[ -n $(in_server ss -Hltn "sport = :$1") ]] && return 0
        sleep 0.1
    done
    return 1
}

# Waits until a line matching $2 appears in file $1 (at most 10 s).
await_line() {
    local i
    for ((i = 0; i < 100; i++)); do
        grep -q -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# Ends the server: SIGTERM, and SIGKILL when it is still there after 3 s
# (an iperf 2 server may keep serving after the first SIGTERM).
stop_server() {
    [[ -n $SERVER_PID ]] || return
    local i
    kill "$SERVER_PID" 2>/dev/null
    for ((i = 0; i < 30; i++)); do
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$SERVER_PID" 2>/dev/null
    wait "$SERVER_PID" 2>/dev/null
    SERVER_PID=
}

# Each writes one number to OUT.value: Gbit/s over the measured window.
run_builtin() { # STREAMS OUT
    local params port
    params=$(jq -cn --argjson p "$1" --argjson s "$SECS" --argjson w "$WARM" \
        '{streams: $p, seconds: $s, warmup: $w}')
    start_server "$2.server" "$2.server.err" "$NETRUN" server "$params"
    await_line "$2.server.err" '^port ' || die "netrun server did not start: $(cat "$2.server.err")"
    port=$(awk '/^port /{print $2}' "$2.server.err")
    in_client "$NETRUN" client "$(server_addr)" "$port" "$params" >"$2" 2>"$2.err" ||
        die "netrun client failed: $(cat "$2.err")"
    wait "$SERVER_PID"
    SERVER_PID=
    jq -r '.metrics[] | select(.name == "net.tcp.gbps") | .value' "$2" >"$2.value"
}

run_iperf3() { # STREAMS OUT
    start_server "$2.server" "$2.server.err" iperf3 -s -1 -p 5399
    await_port 5399 || die "iperf3 server did not start: $(cat "$2.server")"
    in_client iperf3 -c "$(server_addr)" -p 5399 -P "$1" -t "$SECS" -O "$WARM" -J >"$2" 2>"$2.err" ||
        die "iperf3 failed: $(cat "$2.err")"
    stop_server
    jq -r '.end.sum_received.bits_per_second / 1e9' "$2" >"$2.value"
}

run_iperf2() { # STREAMS OUT
    start_server "$2.server" "$2.server.err" iperf -s -p 5398
    await_port 5398 || die "iperf server did not start: $(cat "$2.server")"
    in_client iperf -c "$(server_addr)" -p 5398 -P "$1" -t "$((SECS + WARM))" -i 1 -y C \
        >"$2" 2>"$2.err" || die "iperf failed: $(cat "$2.err")"
    stop_server
    # CSV: time,local,lport,remote,rport,id,interval,bytes,bps; one line
    # per stream and second (iperf 2.1 prints no sum lines in CSV; a sum
    # line would have id -1 and is skipped). The whole seconds inside
    # [WARM, WARM+SECS], all streams added.
    awk -F, -v w="$WARM" -v s="$SECS" '
        { split($7, iv, "-"); a = iv[1] + 0; b = iv[2] + 0 }
        $6 != -1 && b - a <= 1.01 && a >= w - 0.01 && b <= w + s + 0.01 {
            bits += $8 * 8; if (!(a in seen)) { seen[a] = 1; secs += b - a } }
        END { if (secs > 0) printf "%.6f\n", bits / secs / 1e9 }' "$2" >"$2.value"
}

make_veth
NET_RESULTS=()
TOOLS=(builtin iperf3 iperf2)
{
    echo "net-vs-iperf: $(nproc) CPUs, kernel $(uname -r), $(iperf3 --version | head -1), $(iperf --version 2>&1 | head -1)"
    echo "$ROUNDS rounds of ${WARM} s warm-up + ${SECS} s, interleaved"
} >&2
printf '| path | streams | builtin Gbit/s | iperf3 Gbit/s | iperf 2 Gbit/s | builtin / better peer | (of the means) | rounds (builtin, iperf3, iperf 2) |\n'
printf '|---|---|---|---|---|---|---|---|\n'
for path in $PATHS; do
    for p in $STREAMS; do
        declare -A sum=() rounds=() vals=()
        for ((r = 1; r <= ROUNDS; r++)); do
            for t in "${TOOLS[@]}"; do
                out=$WORK/$path-$p-$t-$r.out
                "run_$t" "$p" "$out"
                v=$(cat "$out.value" 2>/dev/null)
                [[ -n $v ]] || die "$t on $path with $p stream(s) gave no figure (see $WORK)"
                sum[$t]=$(awk -v a="${sum[$t]:-0}" -v b="$v" 'BEGIN { print a + b }')
                rounds[$t]="${rounds[$t]:-}${rounds[$t]:+/}$(printf '%.2f' "$v")"
                vals[$t]="${vals[$t]:-} $v"
                echo "# $path P$p round $r $t: $v Gbit/s" >&2
            done
        done
        awk -v path="$path" -v p="$p" -v n="$ROUNDS" -v b="${sum[builtin]}" -v i3="${sum[iperf3]}" \
            -v i2="${sum[iperf2]}" -v rb="${rounds[builtin]}" -v r3="${rounds[iperf3]}" \
            -v r2="${rounds[iperf2]}" '
            function median(list,    v, k, i, j, t) {
                k = split(list, v, "/")
                for (i = 2; i <= k; i++)
                    for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
                return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
            }
            BEGIN {
                b /= n; i3 /= n; i2 /= n; best = i3 > i2 ? i3 : i2
                mb = median(rb); m3 = median(r3); m2 = median(r2); mbest = m3 > m2 ? m3 : m2
                printf "| %s | %d | %.2f | %.2f | %.2f | **%.3f** | %.3f | %s, %s, %s |\n",
                    path, p, mb, m3, m2, mb / mbest, b / best, rb, r3, r2 }'
        # shellcheck disable=SC2086 # the lists of values
        NET_RESULTS+=("$path $p $(bench_median ${vals[builtin]}) $(bench_median ${vals[iperf3]}) $(bench_median ${vals[iperf2]})")
        unset sum rounds vals
    done
done
echo
BENCH_COMMAND="BENCH_QUICK=$BENCH_QUICK BENCH_ROUNDS=$ROUNDS BENCH_SECONDS=$SECS BENCH_WARMUP=$WARM bench/net-vs-iperf.sh"
for x in "${NET_RESULTS[@]}"; do
    read -r path p mb m3 m2 <<<"$x"
    if awk -v a="$m3" -v b="$m2" 'BEGIN {exit !(a >= b)}'; then best=$m3 peer=iperf3; else best=$m2 peer="iperf 2"; fi
    bench_result net-vs-iperf "builtin net engine, $path, $p stream(s)" "$(printf %.2f "$mb")" Gbit/s \
        "$peer (the better peer)" "$(printf %.2f "$best")" "$(bench_ratio "$mb" "$best")" ">=0.95" "$ROUNDS" \
        "iperf3 $(printf %.2f "$m3"), iperf 2 $(printf %.2f "$m2")"
done
