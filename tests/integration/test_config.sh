#!/usr/bin/env bash
# Configuration files: the server's and the worker's settings from a JSON
# file of their option names, overridden by HVBENCH_SERVER_* /
# HVBENCH_WORKER_* variables and by the command line; --check-config says
# what is wrong, with the member's JSON Pointer, and what the settings are.
set -uo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

hv_setup

conf=$HV_TMP/server.json
# The server: a file with a mistake in every way one can be made.
printf '{"listen": "127.0.0.1:1", "nme": 1, "threads": [2, true], "once": true, "config": "x"}' >"$conf"
out=$("$SERVER" serve --config "$conf" --check-config 2>&1)
assert_eq "a wrong server file: exit 2" 2 "$?"
assert_match "an unknown member is named by its pointer" "$conf: /nme: is not a setting" "$out"
assert_match "so is a setting kept for the command line" "/config: is not a setting of a file" "$out"
assert_match "and a wrong type" "/threads/1: must be a string or an integer" "$out"
printf '{"listen": ' >"$conf"
out=$("$SERVER" serve --config "$conf" --check-config 2>&1)
assert_eq "a server file that is not JSON: exit 2" 2 "$?"
assert_match "it names the line and column" "$conf: line 1, column" "$out"
out=$("$SERVER" serve --config "$HV_TMP/none.json" --check-config 2>&1)
assert_eq "a missing file: exit 2" 2 "$?"
assert_match "it says so" "cannot read $HV_TMP/none.json: No such file" "$out"

# A good file; the environment and the command line override it.
P2=$(hv_free_port)
jq -n --arg db "$DB" --arg web "$HV_ROOT/web" --arg listen "127.0.0.1:$P2" \
    '{db: $db, listen: $listen, "web-dir": $web, threads: 3, lease: 45,
      trusted: ["10.0.0.0/8", "127.0.0.1"], "read-auth": "token", "noise-default": "keep"}' >"$conf"
out=$(HVBENCH_SERVER_LEASE=50 "$SERVER" serve --config "$conf" --threads 4 --check-config \
    --migrations-dir "$HV_ROOT/migrations" 2>&1)
assert_eq "a good file: --check-config exits 0" 0 "$?" || echo "$out"
assert_match "the file's listen" "listen = 127.0.0.1:$P2" "$out"
assert_match "the command line over the file" "threads = 4" "$out"
assert_match "the environment over the file" "lease = 50" "$out"
assert_match "a list" "trusted = 10.0.0.0/8,127.0.0.1/32" "$out"
assert_match "the plans' noise default from the file" "noise-default = keep" "$out"
assert_match "the database and its schema" "database: reachable, schema [0-9]+" "$out"
assert_match "and the verdict" "configuration ok" "$out"
out=$(HVBENCH_SERVER_CONFIG=$conf HVBENCH_SERVER_TRUSTED=10.1.0.0/16,10.2.0.0/16 \
    "$SERVER" serve --check-config --migrations-dir "$HV_ROOT/migrations" 2>&1)
assert_eq "the file named by HVBENCH_SERVER_CONFIG" 0 "$?" || echo "$out"
assert_match "a comma list in the environment replaces the file's" "trusted = 10.1.0.0/16,10.2.0.0/16
" "$out"
out=$(HVBENCH_SERVER_TRUSTED=10.1.0.0/16 "$SERVER" serve --config "$conf" --check-config \
    --migrations-dir "$HV_ROOT/migrations" --trusted 10.9.0.0/16 2>&1)
assert_match "and the command line's replaces both" "trusted = 10.9.0.0/16
" "$out"
out=$("$SERVER" serve --config "$conf" --check-config --migrations-dir "$HV_ROOT/migrations" \
    --db "host=$HV_TMP/nowhere dbname=x" 2>&1)
assert_eq "an unreachable database: exit 1" 1 "$?"
assert_match "it says which" "db: cannot connect with 'host=$HV_TMP/nowhere dbname=x'" "$out"
out=$("$SERVER" serve --config "$conf" --check-config --web-dir "$HV_TMP" \
    --migrations-dir "$HV_ROOT/migrations" 2>&1)
assert_eq "a web folder without index.html: exit 1" 1 "$?"
assert_match "it names the file" "web-dir: cannot read $HV_TMP/index.html" "$out"

# The server runs from the file alone: read access needs a token there.
"$SERVER" serve --config "$conf" --migrations-dir "$HV_ROOT/migrations" \
    >>"$HV_TMP/server2.log" 2>&1 &
S2=$!
# shellcheck disable=SC2317 # called through wait_for
up() { curl -fsS --max-time 2 "http://127.0.0.1:$P2/healthz" >/dev/null 2>&1; }
wait_for "the server configured by its file answers" 60 up
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P2/api/v1/plans")
assert_eq "read-auth token from the file: a read without a token is refused" 401 "$code"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $READ_TOKEN" \
    "http://127.0.0.1:$P2/api/v1/plans")
assert_eq "and one with a token is answered" 200 "$code"
hv_stop_pid "$S2" 10

# The worker: its options and its site benchmarks in one file.
wconf=$HV_TMP/worker.json
jq -n --arg s "$URL" --arg t "$WORKER_TOKEN" --arg st "$HV_TMP/state" \
    '{server: $s, token: $t, name: "conf-host", "state-dir": $st, label: ["rack=r1", "role=db"],
      poll: 3, benchmarks: {}, bogus: 1}' >"$wconf"
out=$("$WORKER" --config "$wconf" --check-config 2>&1)
assert_eq "a wrong worker file: exit 2" 2 "$?"
assert_match "its unknown member is named" "$wconf: /bogus: is not a setting" "$out"
jq 'del(.bogus)' "$wconf" >"$wconf.new" && mv "$wconf.new" "$wconf"
out=$(HVBENCH_WORKER_WAIT=7 "$WORKER" --config "$wconf" --check-config --poll 5 2>&1)
assert_eq "a good worker file: exit 0" 0 "$?" || echo "$out"
assert_match "the worker's name from the file" "name = conf-host" "$out"
assert_match "the command line over the file" "poll = 5" "$out"
assert_match "the environment over the default" "wait = 7" "$out"
assert_match "labels from a list" 'labels = \{"rack":"r1","role":"db"\}' "$out"
assert_match "the server answered" "server: /healthz answered 200" "$out"
out=$("$WORKER" --config "$wconf" --check-config --server "http://127.0.0.1:1" 2>&1)
assert_eq "a server that does not answer: exit 1" 1 "$?"
assert_match "it says which" "server http://127.0.0.1:1: /healthz: no answer" "$out"

# Started from the file alone, the worker registers under its name and labels.
"$WORKER" --config "$wconf" >>"$HV_TMP/worker-conf.log" 2>&1 &
HV_WORKER_PIDS+=($!)
# shellcheck disable=SC2317 # called through wait_for
registered() {
    api GET /api/v1/targets
    [[ $(json '[.items[] | select(.name == "conf-host")] | length') == 1 ]]
}
wait_for "the worker configured by its file registers" 60 registered
assert_eq "with the file's labels" r1 \
    "$(json '.items[] | select(.name == "conf-host") | .labels.rack')"

hv_finish
