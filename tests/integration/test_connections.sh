#!/usr/bin/env bash
# The connection limit: --max-connections is the server's, not each pool
# thread's. Connections past it are answered 503 server_busy with
# Retry-After at once (not left waiting in the backlog), and room comes
# back as connections close.
set -uo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

LIMIT=4
HV_SERVER_ARGS=(--threads 2 --max-connections "$LIMIT")
hv_setup

# raw_get: one GET /healthz on a new connection, bypassing the contract log
# (a 503 for lack of room is not an answer of the operation). Sets STATUS,
# BODY, HEADERS.
raw_get() {
    local out
    out=$(curl -s --max-time 5 -D "$HV_TMP/headers" -o "$HV_TMP/raw" -w '%{http_code}' \
        "$URL/healthz") || true
    STATUS=$out
    BODY=$(cat "$HV_TMP/raw" 2>/dev/null || true)
    HEADERS=$(tr -d '\r' <"$HV_TMP/headers" 2>/dev/null || true)
}

# Idle connections that sent nothing: they count as soon as accepted.
fds=()
open_idle() {
    local fd
    exec {fd}<>"/dev/tcp/127.0.0.1/$PORT" || hv_die "cannot connect to port $PORT"
    fds+=("$fd")
}

for ((i = 0; i < LIMIT - 1; i++)); do open_idle; done
sleep 0.5
raw_get
assert_eq "with $((LIMIT - 1)) of $LIMIT connections taken, a request is served" 200 "$STATUS"

open_idle
sleep 0.5
for ((i = 1; i <= 3; i++)); do
    raw_get
    assert_eq "past the limit, request $i: 503 at once" 503 "$STATUS"
done
assert_eq "a problem document" "server_busy 503" "$(jq -r '"\(.type | sub(".*/"; "")) \(.status)"' <<<"$BODY")"
assert_match "saying how many connections are held" "holds $LIMIT connections" "$(jq -r .detail <<<"$BODY")"
assert_match "with Retry-After" '(^|
)Retry-After: 1($|
)' "$HEADERS"
assert_match "and the connection closed" '(^|
)Connection: close($|
)' "$HEADERS"

exec {fds[0]}>&-
fds=("${fds[@]:1}")
wait_for "room again once a connection closes" 10 bash -c \
    "[[ \$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' '$URL/healthz') == 200 ]]"

for fd in "${fds[@]}"; do exec {fd}>&-; done
assert_status 200 GET /healthz
hv_finish
