#!/usr/bin/env bash
# Slow clients cannot lock anyone out. Connections that send their request
# head one byte a second (tests/tools/slowclients, from 127.0.0.2 and up to
# the server on 127.0.0.1) are bounded three ways, while health probes and
# a worker from the trusted 127.0.0.1 keep being served:
#  1. --max-per-address: one address past the cap is closed at once while
#     another address still gets in; a --trusted address is not capped.
#  2. --trusted-reserve: untrusted clients that fill all their room leave
#     room for trusted ones: every probe from 127.0.0.1 answers 200.
#  3. --header-timeout: a head that has not arrived by its deadline gets
#     408 and its connection is closed, so the room comes back;
#  4. but a head that has arrived whole, waiting for a busy thread, is not
#     slow: it is answered;
#  5. --max-bodies-per-address: one address sending slow request bodies
#     gets 503 past it, and once it sends that many, its next connections
#     are closed as they are accepted, without an answer, while others
#     (and trusted ones) are served;
#  6. --body-timeout: a body that stalls gets 408 request_timeout and its
#     connection is closed.
# Bounded: at most 1,000 slow connections, each tool run at most 20 s.
set -uo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

SLOW=$BUILD/tools/slowclients
[[ -x $SLOW ]] || hv_skip "$SLOW not built (make test-tools)"

CAP=50
HV_SERVER_ARGS=(--threads 2 --max-connections 400 --max-per-address "$CAP" --header-timeout 60
    --trusted 127.0.0.1 --trusted 127.0.0.30/32)
hv_setup

# metric SERIES: its value in a fresh GET /metrics from 127.0.0.1.
metric() {
    curl -s --max-time 5 "$URL/metrics" | awk -v want="$1" '
        /^#/ { next }
        { i = match($0, / [^ ]+$/); if (i && substr($0, 1, i - 1) == want) v = substr($0, i + 1) }
        END { print v == "" ? "none" : v }'
}
# shellcheck disable=SC2317 # called through wait_for
metric_is() { [[ $(metric "$1") == "$2" ]]; }
# status_from ADDR: the status of GET /healthz on a new connection from ADDR
# (000: closed without an answer).
status_from() {
    curl -s --max-time 5 --interface "$1" -o /dev/null -w '%{http_code}' "$URL/healthz" || true
}
# slow NAME ARGS...: slowclients in the background against the server; its
# summary goes to $HV_TMP/NAME.json. Sets SLOW_PID; waits until every first
# connect finished.
slow() {
    local name=$1 i
    shift
    rm -f -- "$HV_TMP/$name.ready"
    timeout -k 5 60 "$SLOW" --port "$PORT" --ready "$HV_TMP/$name.ready" "$@" \
        >"$HV_TMP/$name.json" 2>"$HV_TMP/$name.err" &
    SLOW_PID=$!
    for ((i = 0; i < 200; i++)); do
        [[ -f $HV_TMP/$name.ready ]] && return 0
        sleep 0.1
    done
    hv_die "slowclients $name did not connect within 20 s"
}
# stop_slow PID: SIGTERM to slowclients itself (not through timeout, which
# would follow it with SIGCONTs to the whole group and a SIGKILL 5 s later),
# then wait for its summary.
stop_slow() {
    local tool
    tool=$(pgrep -P "$1" -x slowclients) || tool=$1
    kill -TERM "$tool" 2>/dev/null
    wait "$1" || hv_log "slowclients exited $?: $(cat "$HV_TMP"/*.err 2>/dev/null)"
}
UNTRUSTED='hvbench_connections_open{from="untrusted"}'
TRUSTED='hvbench_connections_open{from="trusted"}'
BY_ADDRESS='hvbench_connections_refused_total{reason="address"}'
NO_ROOM='hvbench_connections_refused_total{reason="room"}'
TIMEOUTS=hvbench_request_head_timeouts_total

# --- 1. the per-address cap ------------------------------------------------------
assert_eq "the metrics list the connection gauge" 0 "$(metric "$UNTRUSTED")"
slow cap --from 127.0.0.20 --connections $((CAP + 1)) --duration 20
capped=$SLOW_PID
wait_for "127.0.0.20 holds $CAP connections, its connection $((CAP + 1)) was refused" 10 \
    bash -c "[[ \$(curl -s '$URL/metrics' | grep -c -x -F -e '$UNTRUSTED $CAP' -e '$BY_ADDRESS 1') == 2 ]]"
assert_eq "one more from 127.0.0.20 is closed without an answer" 000 "$(status_from 127.0.0.20)"
assert_eq "and counted as refused by address" 2 "$(metric "$BY_ADDRESS")"
assert_eq "127.0.0.21 still gets in" 200 "$(status_from 127.0.0.21)"
assert_eq "127.0.0.1 still gets in" 200 "$(status_from 127.0.0.1)"

slow trusted --from 127.0.0.30 --connections $((CAP + 10)) --duration 20
trusted=$SLOW_PID
# The scrape's own connection from 127.0.0.1 is trusted too: one more.
wait_for "the trusted 127.0.0.30 holds $((CAP + 10)) connections, past the cap" 10 \
    metric_is "$TRUSTED" $((CAP + 11))
assert_eq "none of them refused" 2 "$(metric "$BY_ADDRESS")"

stop_slow "$capped"
stop_slow "$trusted"
assert_eq "slowclients 127.0.0.20: one closed by the server, unanswered, $CAP still open" \
    "1 1 $CAP" "$(jq -r '"\(.closed_by_server) \(.unanswered) \(.open_at_end)"' "$HV_TMP/cap.json")"
assert_eq "slowclients 127.0.0.30: none closed by the server, $((CAP + 10)) open" \
    "0 $((CAP + 10))" "$(jq -r '"\(.closed_by_server) \(.open_at_end)"' "$HV_TMP/trusted.json")"
wait_for "their connections are given back" 10 metric_is "$UNTRUSTED" 0
assert_eq "127.0.0.20 gets in again" 200 "$(status_from 127.0.0.20)"

# --- 2 and 3. a sustained slow load past the untrusted room -------------------------
# 600 connections, 75 of them (an eighth) kept for trusted addresses: 525
# for the others, who may hold 600 in all (the 75 answered 503 once their
# head arrives, which it never does). 1,000 slow clients from 10 addresses
# (100 each, at the cap) hold all of that; the 400 left over are refused
# and come back a second later, all for 16 s.
HEADER_TIMEOUT=4
hv_stop_pid "$HV_SERVER_PID" 10
HV_SERVER_ARGS=(--threads 2 --max-connections 600 --max-per-address 100
    --header-timeout "$HEADER_TIMEOUT")
hv_start_server
slow load --from 127.0.0.2 --addresses 10 --connections 1000 --reconnect 1 --duration 16
load=$SLOW_PID
hv_log "1000 slow connections from 127.0.0.2-127.0.0.11"

probes=0 answered=0 codes=()
started=$SECONDS
while ((SECONDS - started < 12)); do
    code=$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' "$URL/healthz" || true)
    probes=$((probes + 1))
    [[ $code == 200 ]] && answered=$((answered + 1))
    codes+=("$code")
    if ((probes == 8)); then
        assert_status 200 POST /api/v1/workers/register -H "Authorization: Bearer $WORKER_TOKEN" \
            --data-binary '{"name":"slow-w","kind":"host","facts":{"cpus":2}}'
        target=$(json .target_id)
        assert_status 204 POST /api/v1/jobs/claim -H "Authorization: Bearer $(json -r .worker_token)" \
            --data-binary "{\"target_id\":$target,\"wait\":1}"
    fi
    sleep 0.5
done
refused_room=$(metric "$NO_ROOM")
wait "$load"
hv_log "probes from 127.0.0.1: $answered of $probes answered 200 (${codes[*]})"
hv_log "slowclients: $(cat "$HV_TMP/load.json")"
assert_eq "every probe from 127.0.0.1 answered 200 during the load" "$probes" "$answered"
assert_match "the load filled the untrusted room (connections refused for want of room)" \
    '^[1-9][0-9]*$' "$refused_room"

read -r reaped reap_min reap_median reap_max < <(jq -r \
    '[.answered["408"] // 0, .close_s.answered.min, .close_s.answered.median, .close_s.answered.max] | @tsv' \
    "$HV_TMP/load.json")
hv_log "closed at the head deadline: $reaped; seconds from connect to close: min $reap_min, median $reap_median, max $reap_max"
assert_eq "every answer the slow clients got was 408" "$reaped" "$(jq -r '[.answered[]] | add // 0' "$HV_TMP/load.json")"
assert_eq "at least the 600 connections of the first wave were closed at the deadline" 1 "$((reaped >= 600))"
assert_eq "none before the ${HEADER_TIMEOUT} s deadline (1 s slack)" 1 \
    "$(jq -r --argjson t "$HEADER_TIMEOUT" '.close_s.answered.min >= $t - 1 | if . then 1 else 0 end' "$HV_TMP/load.json")"
assert_eq "all within the deadline and 6 s of slack" 1 \
    "$(jq -r --argjson t "$HEADER_TIMEOUT" '.close_s.answered.max <= $t + 6 | if . then 1 else 0 end' "$HV_TMP/load.json")"
timeouts=$(metric "$TIMEOUTS")
assert_eq "the server counted at least as many head timeouts" 1 "$((timeouts >= reaped))"
wait_for "the untrusted connections are all given back" 10 metric_is "$UNTRUSTED" 0
assert_eq "an untrusted address is served again" 200 "$(status_from 127.0.0.9)"
# --- 4. a complete request waiting for a busy thread is not slow --------------------
# One thread, a 4 s head deadline. A connection opens (the thread accepts
# it), then a list of plans waits 10 s for a lock another session holds,
# in that thread; meanwhile the connection sends a whole request, which
# waits unread past its deadline: it is answered, not closed as slow.
hv_stop_pid "$HV_SERVER_PID" 10
HV_SERVER_ARGS=(--threads 1 --header-timeout 4 --max-bodies-per-address 4
    --trusted 127.0.0.1 --trusted 127.0.0.30/32)
hv_start_server
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }
# shellcheck disable=SC2317 # called through wait_for
lock_held() { [[ $(sql "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
    WHERE c.relname = 'plans' AND l.mode = 'AccessExclusiveLock' AND l.granted") == 1 ]]; }
# shellcheck disable=SC2317 # called through wait_for
waits_on_lock() { [[ $(sql "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'") -ge 1 ]]; }
sql "BEGIN; LOCK TABLE plans IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(10); COMMIT;" \
    >/dev/null 2>&1 &
locker=$!
wait_for "another session holds the plans table" 10 lock_held
exec 3<>"/dev/tcp/127.0.0.1/$PORT"
opened=$SECONDS
curl -s --max-time 30 -o /dev/null -H "Authorization: Bearer $READ_TOKEN" "$URL/api/v1/plans" &
lister=$!
wait_for "the list of plans waits for the lock, in the server's only thread" 10 waits_on_lock
if ((SECONDS - opened < 3)); then
    printf 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' >&3
    answer=$(timeout 30 head -n 1 <&3 | tr -d '\r')
    assert_eq "the request, whole but unread past its head deadline, is answered" \
        "HTTP/1.1 200 OK" "$answer"
    assert_eq "no head timed out" 0 "$(metric "$TIMEOUTS")"
else
    hv_log "the lock took $((SECONDS - opened)) s to be waited on: too late to send the request before its deadline"
fi
exec 3<&-
wait "$locker" "$lister"

# --- 5. request bodies in flight, per address ----------------------------------------
# --max-bodies-per-address 4: six slow bodies from 127.0.0.40, four are
# read, two answered 503 at their head; then a new connection from
# 127.0.0.40 is closed at accept, without an answer; another address is
# served, and a trusted one is not counted.
BODIES='hvbench_request_bodies_refused_total'
slow bodies --from 127.0.0.40 --connections 6 --body --duration 20
bodies=$SLOW_PID
wait_for "two of 127.0.0.40's bodies were refused" 10 metric_is "$BODIES" 2
REFUSED_BODIES='hvbench_connections_refused_total{reason="bodies"}'
assert_eq "127.0.0.40's next connection is closed at accept, without an answer" 000 \
    "$(status_from 127.0.0.40)"
assert_eq "counted as refused for its bodies" 1 "$(metric "$REFUSED_BODIES")"
api POST /api/v1/plans -H "Authorization: Bearer $SUBMIT_TOKEN" --interface 127.0.0.41 --data-binary '{}'
assert_eq "a body from 127.0.0.41 is read (an invalid plan: 400)" "400 invalid_plan" "$STATUS $(json -r .code)"
assert_eq "a request from 127.0.0.41 is served" 200 "$(status_from 127.0.0.41)"
slow trusted-bodies --from 127.0.0.30 --connections 6 --body --duration 20
trusted_bodies=$SLOW_PID
api POST /api/v1/plans -H "Authorization: Bearer $SUBMIT_TOKEN" --interface 127.0.0.30 --data-binary '{}'
assert_eq "the trusted 127.0.0.30 sends a seventh body" "400 invalid_plan" "$STATUS $(json -r .code)"
stop_slow "$bodies"
stop_slow "$trusted_bodies"
assert_eq "slowclients 127.0.0.40: 2 answered 503, 4 still sending" "2 4" \
    "$(jq -r '"\(.answered["503"] // 0) \(.open_at_end)"' "$HV_TMP/bodies.json")"
assert_eq "slowclients 127.0.0.30: none refused, 6 still sending" "0 6" \
    "$(jq -r '"\(.closed_by_server) \(.open_at_end)"' "$HV_TMP/trusted-bodies.json")"
assert_eq "the server counted 2 bodies refused at their head" 2 "$(metric "$BODIES")"
api POST /api/v1/plans -H "Authorization: Bearer $SUBMIT_TOKEN" --interface 127.0.0.40 --data-binary '{}'
assert_eq "once they are gone, 127.0.0.40 sends bodies again" "400 invalid_plan" "$STATUS $(json -r .code)"

# --- 6. a request body that stalls ----------------------------------------------------
# --body-timeout 2: a POST whose head announces 100 bytes, of which 8 come,
# is answered 408 with a problem document and closed.
hv_stop_pid "$HV_SERVER_PID" 10
HV_SERVER_ARGS=(--threads 1 --body-timeout 2 --trusted 127.0.0.1)
hv_start_server
exec 3<>"/dev/tcp/127.0.0.1/$PORT"
printf 'POST /api/v1/plans HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":' \
    "$SUBMIT_TOKEN" >&3
reply=$(timeout 30 cat <&3 | tr -d '\r')
exec 3<&-
assert_eq "the stalled body: 408" "HTTP/1.1 408 Request Timeout" "$(head -n 1 <<<"$reply")"
assert_eq "with a problem document of request_timeout" "request_timeout 408" \
    "$(sed '1,/^$/d' <<<"$reply" | jq -r '"\(.code) \(.status)"')"
assert_match "naming the option" 'body-timeout' "$(sed '1,/^$/d' <<<"$reply" | jq -r .detail)"
assert_eq "counted" 1 "$(metric hvbench_request_body_timeouts_total)"
assert_eq "the server serves on" 200 "$(status_from 127.0.0.1)"
hv_finish
