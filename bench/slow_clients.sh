#!/usr/bin/env bash
# Slow clients against one server with its default limits: C connections
# from A addresses (127.0.0.2 and up) each send their request head one byte
# a second and never finish it, and connect again a second after the server
# closes one (tests/tools/slowclients); meanwhile /healthz is probed from
# 127.0.0.1 every 0.5 s. Prints how the probes were answered and what the
# server did with the slow connections.
#
#   make bench-progs && bench/slow_clients.sh
#   BENCH_SERVER_ARGS="--header-timeout 5" bench/slow_clients.sh
#
# A server built from another tree (one without these limits, say) runs
# against this tree's slowclients with BUILD=/other/build
# SLOWCLIENTS=build/tools/slowclients bench/slow_clients.sh.
#
# Env: BENCH_CONNECTIONS (4200), BENCH_ADDRESSES (20), BENCH_SECONDS (30),
# BENCH_SERVER_ARGS (none), BENCH_PG_FAST (1), KEEP (0).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh

CONNS=${BENCH_CONNECTIONS:-4200}
ADDRS=${BENCH_ADDRESSES:-20}
SECS=${BENCH_SECONDS:-30}
BENCH_PG_FAST=${BENCH_PG_FAST:-1}
SLOW=${SLOWCLIENTS:-$BUILD/tools/slowclients}
[[ -x $SLOW ]] || hv_die "$SLOW not built; run: make bench-progs"
read -r -a server_args <<<"${BENCH_SERVER_ARGS:-}"

bench_setup "${server_args[@]}"
port=${URL##*:}
echo "# $(bench_machine)"
echo "# server $URL ${server_args[*]:-(defaults)}; $CONNS slow connections from $ADDRS addresses for $SECS s"

timeout -k 5 $((SECS + 30)) "$SLOW" --port "$port" --from 127.0.0.2 --addresses "$ADDRS" \
    --connections "$CONNS" --reconnect 1 --duration "$SECS" >"$BENCH_TMP/slow.json" &
slow=$!
sleep 2 # let the slow connections arrive first
declare -A codes=()
probes=0
while kill -0 "$slow" 2>/dev/null && ((probes < SECS * 2 - 4)); do
    code=$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' "$URL/healthz" || true)
    codes[$code]=$((${codes[$code]:-0} + 1))
    probes=$((probes + 1))
    sleep 0.5
done
wait "$slow"

j=$BENCH_TMP/slow.json
read -r attempts closed answered408 unanswered open cmin cmed cmax < <(jq -r '[.attempts,
    .closed_by_server, (.answered["408"] // 0), .unanswered, .open_at_end,
    (.close_s.answered.min // "-"), (.close_s.answered.median // "-"),
    (.close_s.answered.max // "-")] | @tsv' "$j")
echo
echo "| probes | 200 | 503 | no answer | slow connects | closed by the server | of them 408 at the deadline | closed unanswered | open at the end | s to the 408: min / median / max |"
echo "|---|---|---|---|---|---|---|---|---|---|"
printf '| %d | %d | %d | %d | %d | %d | %d | %d | %d | %s / %s / %s |\n' "$probes" "${codes[200]:-0}" \
    "${codes[503]:-0}" "${codes["000"]:-0}" "$attempts" "$closed" "$answered408" "$unanswered" \
    "$open" "$cmin" "$cmed" "$cmax"
echo
echo "reproduce: make bench-progs && BENCH_CONNECTIONS=$CONNS BENCH_ADDRESSES=$ADDRS BENCH_SECONDS=$SECS" \
    "BENCH_SERVER_ARGS='${BENCH_SERVER_ARGS:-}' bench/slow_clients.sh"
