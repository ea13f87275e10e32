#!/usr/bin/env bash
# Webhook delivery rate: the server's sender against the way operators
# script it today, a shell loop of curl calls. Both deliver the same N
# signed JSON bodies (HMAC-SHA256 over "t.body", the Hvbench-Signature
# header) one after another to the same loopback receiver
# (tests/tools/hookrecv, which checks every signature), in interleaved
# rounds; the figure is deliveries per second, the median of the rounds.
#
# The server's deliveries are queued in one transaction (rows in
# webhook_deliveries, as plan events queue them) and the sender is woken by
# a ping; each is taken, sent on a new connection and recorded durably, as
# in production. The loop signs each body with `openssl dgst -hmac` and
# posts it with `curl` (two processes per delivery, as such scripts do).
#
#   make bench-progs && bench/webhooks.sh
#
# Env: BENCH_RUNS (3), BENCH_DELIVERIES (500), BENCH_PG_FAST (0), KEEP (0).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh

RUNS=${BENCH_RUNS:-3}
N=${BENCH_DELIVERIES:-500}
RECV=$BUILD/tools/hookrecv
[[ -x $RECV ]] || hv_die "$RECV not built; run: make bench-progs"
command -v openssl >/dev/null || hv_die "openssl needed (deploy/deps.sh)"

bench_setup
echo "# $(bench_machine)"
echo "# $N deliveries per run, $RUNS interleaved runs"

ADMIN_TOKEN=$("$SERVER" token create --db "$DB" --role admin --name bench-admin) ||
    hv_die "token create --role admin failed"

# The receiver: answers 204 to every POST and logs one line per request.
RECV_LOG=$BENCH_TMP/recv.log
"$RECV" --port-file "$BENCH_TMP/recv.port" --log "$RECV_LOG" --secret-file "$BENCH_TMP/secret" \
    >"$BENCH_TMP/recv.out" 2>&1 &
BENCH_PIDS+=("$!")
for ((i = 0; i < 50; i++)); do
    [[ -s $BENCH_TMP/recv.port ]] && break
    sleep 0.1
done
RECV_URL=http://127.0.0.1:$(cat "$BENCH_TMP/recv.port")/hook || hv_die "hookrecv did not start"

sub=$(curl -fsS -H "Authorization: Bearer $ADMIN_TOKEN" --data-binary \
    "{\"url\": \"$RECV_URL\", \"events\": [\"plan.finished\", \"ping\"], \"allow_private\": true}" \
    "$URL/api/v1/webhooks") || hv_die "webhook subscription refused"
HOOK_ID=$(jq -r .id <<<"$sub")
SECRET=$(jq -r .secret <<<"$sub")
[[ $HOOK_ID =~ ^[0-9]+$ && -n $SECRET && $SECRET != null ]] || hv_die "no subscription: $sub"
printf '%s' "$SECRET" >"$BENCH_TMP/secret"

# A body the size of a plan.finished event.
BODY=$(jq -cn '{event: "plan.finished", plan: {id: 1, name: "nightly-tuning", status: "done",
    progress: {total: 48, done: 48, failed: 0, cancelled: 0}, finished_at: "2026-12-02T06:00:00Z",
    report: "/api/v1/plans/1/report"}}')

lines() { [[ -s $RECV_LOG ]] && wc -l <"$RECV_LOG" || echo 0; }
now() { date +%s.%N; }

# The server: N rows queued at once, then a ping wakes the sender; done
# when the receiver has logged N + 1 more requests.
server_run() {
    local before t0 t1
    before=$(lines)
    bench_sql "INSERT INTO webhook_deliveries (webhook_id, event, payload)
               SELECT $HOOK_ID, 'plan.finished', '$BODY'::jsonb FROM generate_series(1, $N)" ||
        hv_die "queueing deliveries failed"
    t0=$(now)
    curl -fsS -o /dev/null -X POST -H "Authorization: Bearer $ADMIN_TOKEN" \
        "$URL/api/v1/webhooks/$HOOK_ID/ping" || hv_die "ping refused"
    while (($(lines) < before + N + 1)); do sleep 0.05; done
    t1=$(now)
    awk -v n="$((N + 1))" -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f\n", n / (b - a)}'
}

# The loop: what an operator's script does for each event.
loop_run() {
    local t0 t1 i t sig
    t0=$(now)
    for ((i = 0; i < N; i++)); do
        t=$(date +%s)
        sig=$(printf '%s.%s' "$t" "$BODY" | openssl dgst -sha256 -hmac "$SECRET" -r | cut -d' ' -f1)
        curl -fsS -o /dev/null -X POST -H 'Content-Type: application/json' \
            -H "Hvbench-Event: plan.finished" -H "Hvbench-Delivery: loop-$i" \
            -H "Hvbench-Signature: t=$t,v1=$sig" --data-binary "$BODY" "$RECV_URL" ||
            hv_die "the loop's POST failed"
    done
    t1=$(now)
    awk -v n="$N" -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f\n", n / (b - a)}'
}

server_rates=() loop_rates=()
for ((r = 1; r <= RUNS; r++)); do
    s=$(server_run)
    l=$(loop_run)
    server_rates+=("$s")
    loop_rates+=("$l")
    echo "run $r: server $s deliveries/s, curl loop $l/s (load $(cut -d' ' -f1 /proc/loadavg))"
done
bad=$(jq -s '[.[] | select(.sig_ok != true)] | length' "$RECV_LOG")
[[ $bad == 0 ]] || hv_die "$bad deliveries with a bad signature"
# The server's deliveries carry their queue ids; each must arrive once.
dups=$(jq -rs '[.[] | .delivery | select(test("^[0-9]+$"))] | group_by(.) | map(select(length > 1)) | length' "$RECV_LOG")
S=$(bench_median "${server_rates[@]}")
L=$(bench_median "${loop_rates[@]}")
echo "server: $S deliveries/s (median of $RUNS), curl loop: $L/s, ratio $(awk -v a="$S" -v b="$L" \
    'BEGIN {printf "%.2f", a / b}'); every signature valid, $dups of the server's deliveries received twice"
BENCH_COMMAND="BENCH_QUICK=$BENCH_QUICK BENCH_RUNS=$RUNS BENCH_DELIVERIES=$N BENCH_PG_FAST=${BENCH_PG_FAST:-0} bench/webhooks.sh"
bench_result webhooks "signed webhook deliveries/s, the server's sender" "$S" deliveries/s \
    "a shell loop of openssl and curl" "$L" "$(bench_ratio "$S" "$L" 2)" - "$RUNS" "every signature valid"
