#!/usr/bin/env bash
# The built-in net engine end to end: two real workers registered as two
# targets, a plan whose net workloads (stream with 2 streams, then rr) have
# the second as their peer. The peer's worker runs the server role: it
# listens, announces its endpoint in the ready call, and the client finds
# it in the ready answer's endpoints. Both roles' results are stored, with
# throughput (or transactions) above zero, the same bytes counted at both
# ends, the start skew recorded, and the endpoint used being the one the
# server announced.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }
registered() { [[ $(sql "SELECT count(*) FROM targets WHERE name IN ('net-a', 'net-b')") == 2 ]]; }

hv_start_worker net-a --wait 5
hv_start_worker net-b --wait 5
wait_for "both workers registered" 30 registered

jq -n '{name: "net", targets: {host: "net-a"},
        workloads: [
          {id: "stream", kind: "net", engine: "builtin",
           params: {peer: "net-b", streams: 2, seconds: 2, warmup: 0.5, window: "256k"}},
          {id: "rr", kind: "net", engine: "builtin",
           params: {peer: "net-b", mode: "rr", seconds: 1, warmup: 0.2, msg_size: 1}}],
        order: "sequential", repetitions: {min: 1}}' >"$HV_TMP/plan.json"
assert_status 201 POST /api/v1/plans -H "Authorization: Bearer $SUBMIT_TOKEN" \
    --data-binary @"$HV_TMP/plan.json"
PLAN=$(json .id)
assert_eq "four jobs: a server and a client per workload" "rr client net-a|rr server net-b|stream client net-a|stream server net-b" \
    "$(sql "SELECT string_agg(workload_id || ' ' || role || ' ' || target_name, '|' ORDER BY workload_id, role) FROM jobs WHERE plan_id = $PLAN")"

finished() { [[ $(sql "SELECT count(*) FROM jobs WHERE plan_id = $PLAN AND status IN ('queued', 'running')") == 0 ]]; }
wait_for "the plan's jobs finish" 120 finished
assert_eq "every job is done" "done done done done" \
    "$(sql "SELECT string_agg(status, ' ') FROM jobs WHERE plan_id = $PLAN")"

# One value of a job's result: res WORKLOAD ROLE SQL_EXPRESSION (r: results, j: jobs).
res() {
    sql "SELECT $3 FROM results r JOIN jobs j ON j.id = r.job_id
         WHERE j.plan_id = $PLAN AND j.workload_id = '$1' AND j.role = '$2' AND r.status = 'ok'"
}
metric() {
    sql "SELECT m.value FROM metrics m JOIN results r ON r.id = m.result_id JOIN jobs j ON j.id = r.job_id
         WHERE j.plan_id = $PLAN AND j.workload_id = '$1' AND j.role = '$2' AND m.name = '$3'"
}
positive() { awk -v v="$1" 'BEGIN { exit !(v + 0 > 0) }'; }

# --- stream -------------------------------------------------------------------------
gbps=$(metric stream client net.tcp.gbps)
positive "$gbps"
hv_check $((! $?)) "the client's net.tcp.gbps is above zero" "got '$gbps'"
sgbps=$(metric stream server net.tcp.gbps)
positive "$sgbps"
hv_check $((! $?)) "the server's result has net.tcp.gbps above zero" "got '$sgbps'"
assert_eq "the client's headline is its first metric" net.tcp.gbps \
    "$(res stream client "(SELECT name FROM metrics WHERE result_id = r.id ORDER BY ctid LIMIT 1)")"
assert_eq "two streams" 2 "$(res stream client "jsonb_array_length(r.observed->'streams')")"
assert_eq "both ends counted the same bytes" \
    "$(res stream client "r.observed->>'bytes_total'")" \
    "$(res stream server "r.observed->'clients'->0->>'bytes_total'")"
assert_eq "the server knows its client's job" \
    "$(sql "SELECT id FROM jobs WHERE plan_id = $PLAN AND workload_id = 'stream' AND role = 'client'")" \
    "$(res stream server "r.observed->'clients'->0->>'client_job'")"
assert_match "the client records the start skew" '^-?[0-9.e-]+$' "$(res stream client "r.observed->>'start_skew_ms'")"
assert_match "the server records the start skew" '^-?[0-9.e-]+$' "$(res stream server "r.observed->>'start_skew_ms'")"
announced=$(res stream server "(r.observed->'endpoint'->>'host') || ':' || (r.observed->'endpoint'->>'port')")
assert_match "the server announced its endpoint" '^[0-9a-f.:]+:[0-9]+$' "$announced"
assert_eq "the client connected to the announced endpoint" "$announced" "$(res stream client "r.observed->>'server'")"
assert_eq "the window was asked for" 262144 "$(res stream client "r.observed->'window'->>'requested'")"
assert_match "the MSS is recorded" '^[1-9][0-9]*$' "$(res stream client "r.observed->>'mss'")"
assert_match "the MTU is recorded" '^[1-9][0-9]*$' "$(res stream client "r.observed->>'mtu'")"
assert_match "the steady-state verdict is recorded" '^(true|false)$' "$(res stream client "r.observed->'steady_state'->>'steady'")"
assert_match "samples of the measured window are stored" '^[1-3]$' \
    "$(res stream client "(SELECT count(*) FROM samples s WHERE s.result_id = r.id AND s.metric = 'net.tcp.gbps')")"

# --- rr -----------------------------------------------------------------------------
tps=$(metric rr client net.rr.tps)
positive "$tps"
hv_check $((! $?)) "the client's net.rr.tps is above zero" "got '$tps'"
p50=$(metric rr client net.rr.lat_p50_us)
p99=$(metric rr client net.rr.lat_p99_us)
awk -v a="$p50" -v b="$p99" 'BEGIN { exit !(a > 0 && a <= b) }'
hv_check $((! $?)) "latency p50 <= p99" "p50 '$p50', p99 '$p99'"
positive "$(metric rr server net.rr.tps)"
hv_check $((! $?)) "the server's result has net.rr.tps above zero" "got '$(metric rr server net.rr.tps)'"
assert_eq "both ends counted the same transactions" \
    "$(res rr client "(SELECT sum((s->>'transactions_total')::bigint) FROM jsonb_array_elements(r.observed->'streams') s)")" \
    "$(res rr server "r.observed->'clients'->0->>'transactions_total'")"

assert_match "the worker logged where it listened" 'listening on .* port [0-9]+' "$(cat "$HV_TMP/worker-net-b.log")"
hv_finish
