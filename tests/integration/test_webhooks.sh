#!/usr/bin/env bash
# shellcheck disable=SC2016,SC2317 # jq programs in single quotes; functions run by wait_for
# Webhooks: subscriptions need an admin token and a valid http(s) URL and
# known events; the secret is shown once; a loopback receiver is refused
# unless the subscription allows private addresses (the refusal is in the
# delivery log, the same whether anything listens there or not); plan.started and plan.finished of a real plan reach a
# receiver (tests/tools/hookrecv) that fails twice first, each signed with
# the subscription's secret; a delivery queued while the receiver is down
# survives a server restart and arrives once; a cancelled plan sends
# plan.failed; a fleet plan's parent sends plan.started with its first
# child and plan.failed or plan.finished after its last, its events and
# its children's naming each other; a deleted subscription gets nothing
# more.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

A=(-H "Authorization: Bearer $ADMIN_TOKEN")
S=(-H "Authorization: Bearer $SUBMIT_TOKEN")

start_receiver() { hv_start_hookrecv "$@"; }
# received LOG EVENT: how many deliveries of EVENT LOG holds, by distinct id,
# answered 204.
received() {
    [[ -s $1 ]] || { echo 0; return; }
    jq -s --arg e "$2" '[.[] | select(.event == $e and .answered == 204) | .delivery] | unique | length' "$1"
}
plan_json() { # NAME
    jq -c --arg n "$1" '.name = $n | .targets.host = "hook-host" | .repetitions.min = 1
        | .workloads[0].params.seconds = 1' "$HV_ROOT/examples/quick.json"
}

# --- refusals ----------------------------------------------------------------------
sub='{"url": "http://127.0.0.1:9/hook", "events": ["ping"]}'
assert_status 401 POST /api/v1/webhooks --data-binary "$sub"
assert_status 403 POST /api/v1/webhooks "${S[@]}" --data-binary "$sub"
assert_status 400 POST /api/v1/webhooks "${A[@]}" --data-binary \
    '{"url": "ftp://example.org/x", "events": ["plan.finished", "plan.exploded"]}'
assert_eq "each problem at its path" "/events/1 /url" "$(json -r '[.errors[].path] | sort | join(" ")')"
assert_status 400 POST /api/v1/webhooks "${A[@]}" --data-binary '{"url": "http://u:p@example.org/", "events": []}'
assert_eq "credentials in the URL and no event refused" "/events /url" \
    "$(json -r '[.errors[].path] | sort | join(" ")')"

# --- a loopback receiver without allow_private ------------------------------------
start_receiver "$HV_TMP/recv1.log"
assert_status 201 POST /api/v1/webhooks "${A[@]}" --data-binary \
    "{\"url\": \"http://127.0.0.1:$RECV_PORT/hook\", \"events\": [\"ping\"]}"
H1=$(json .id)
assert_match "the secret is shown at creation" '^hvs_[0-9a-f]{64}$' "$(json -r .secret)"
assert_status 202 POST "/api/v1/webhooks/$H1/ping" "${A[@]}"
refused() {
    api GET "/api/v1/webhooks/$H1/deliveries" "${A[@]}"
    [[ $(json -r '.items[0].last_error // ""') == *"is loopback: not allowed"* ]]
}
wait_for "a loopback receiver is refused without allow_private" 20 refused
listening_error=$(json -r '.items[0].last_error')
assert_eq "the receiver saw nothing" 0 "$(received "$HV_TMP/recv1.log" ping)"
# Refused before connecting: once nothing listens there, the error is the
# same (no "connection refused" telling open ports from closed ones).
hv_stop_pid "$RECV_PID" 5
assert_status 202 POST "/api/v1/webhooks/$H1/ping" "${A[@]}"
second_refused() {
    api GET "/api/v1/webhooks/$H1/deliveries" "${A[@]}"
    [[ $(json '.items | length') == 2 && $(json -r '.items[0].last_error // ""') != "" ]]
}
wait_for "a ping to the closed port is refused too" 20 second_refused
assert_eq "the same error with and without a listener" "$listening_error" "$(json -r '.items[0].last_error')"
assert_status 200 DELETE "/api/v1/webhooks/$H1" "${A[@]}"
assert_status 404 GET "/api/v1/webhooks/$H1" "${A[@]}"

# --- a real plan, a receiver that fails twice -------------------------------------------
start_receiver "$HV_TMP/recv2.log" --fail 2
# Through the CLI this time.
out=$(HVBENCH_SERVER=$URL HVBENCH_TOKEN=$ADMIN_TOKEN "$CLI" webhooks add "http://127.0.0.1:$RECV_PORT/hook" \
    plan.started plan.finished plan.failed --allow-private --description "test receiver" 2>/dev/null)
assert_eq "hvbench webhooks add exits 0" 0 "$?"
H=$(sed -n 's/^webhook \([0-9]*\): .*/\1/p' <<<"$out")
sed -n 's/^secret: //p' <<<"$out" >"$HV_TMP/secret"
assert_match "it prints the id and the secret" '^hvs_[0-9a-f]{64}$' "$(cat "$HV_TMP/secret")"
assert_status 200 GET /api/v1/webhooks "${A[@]}"
assert_eq "the list shows the subscription without its secret" "$H false" \
    "$(json -r '.items[0] | "\(.id) \(has("secret"))"')"

assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan_json hook-1)"
P1=$(json .id)
hv_start_worker hook-host --kind host --poll 1
both_arrived() {
    [[ $(received "$HV_TMP/recv2.log" plan.started) == 1 && $(received "$HV_TMP/recv2.log" plan.finished) == 1 ]]
}
wait_for "plan.started and plan.finished delivered (after two failures)" 60 both_arrived
assert_eq "every delivery signed with the secret" "true" \
    "$(jq -s '[.[] | select(.answered == 204) | .sig_ok] | unique | map(tostring) | join(",")' -r "$HV_TMP/recv2.log")"
assert_eq "the first two answered 500" "500 500" \
    "$(jq -s -r '[.[] | select(.n <= 2) | .answered] | map(tostring) | join(" ")' "$HV_TMP/recv2.log")"
assert_eq "plan.finished names the plan, done" "$P1 done hook-1" \
    "$(jq -s -r '[.[] | select(.event == "plan.finished")][-1].body.plan | "\(.id) \(.status) \(.name)"' "$HV_TMP/recv2.log")"
assert_status 200 GET "/api/v1/webhooks/$H/deliveries" "${A[@]}"
assert_eq "the log: both delivered, in 4 attempts (the receiver's 2 failures and 2 successes)" \
    "4 delivered delivered" "$(json -r '"\(.items | map(.attempts) | add) \([.items[].status] | join(" "))"')"
assert_status 200 GET "/api/v1/webhooks/$H" "${A[@]}"
assert_eq "counts by status" '{"failed":0,"pending":0,"delivered":2}' "$(json -c '.deliveries')"
out=$(HVBENCH_SERVER=$URL HVBENCH_TOKEN=$ADMIN_TOKEN "$CLI" webhooks deliveries "$H")
assert_eq "hvbench webhooks deliveries: both delivered, 204 last" "delivered 204 delivered 204" \
    "$(awk 'NR > 2 { printf "%s%s %s", (NR > 3 ? " " : ""), $3, $5 }' <<<"$out")"
out=$(HVBENCH_SERVER=$URL HVBENCH_TOKEN=$ADMIN_TOKEN "$CLI" webhooks)
assert_match "hvbench webhooks lists it" "^ *$H +http://127.0.0.1:$RECV_PORT/hook +plan.started,plan.finished,plan.failed +yes" \
    "$(sed -n 3p <<<"$out")"

# --- the receiver down, the server restarted -----------------------------------------
hv_stop_pid "$RECV_PID" 5
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan_json hook-2)"
P2=$(json .id)
pending_failed() {
    api GET "/api/v1/webhooks/$H/deliveries" "${A[@]}"
    [[ $(json -r --argjson p "$P2" '[.items[] | select(.event == "plan.finished" and .payload.plan.id == $p
        and .status == "pending" and .attempts >= 1)] | length') == 1 ]]
}
wait_for "plan $P2's plan.finished waits, its receiver down" 60 pending_failed
hv_stop_pid "$HV_SERVER_PID" 10
start_receiver "$HV_TMP/recv3.log" --port "$RECV_PORT"
hv_start_server
arrived_after_restart() { [[ $(received "$HV_TMP/recv3.log" plan.finished) == 1 ]]; }
wait_for "delivered after the server's restart" 60 arrived_after_restart
assert_eq "it is plan $P2's, once" "$P2 1" \
    "$(jq -s -r '[.[] | select(.event == "plan.finished")] | "\(.[0].body.plan.id) \(length)"' "$HV_TMP/recv3.log")"

# --- a fleet plan: the parent's events ---------------------------------------------------
# Two hosts with workers and one without: the parent starts with its first
# child, and ends (failed: a child was cancelled) once the last child did;
# each event names its parent or children.
hv_start_worker hook-f1 --kind host --poll 1 --label fleet=hook --label live=yes
hv_start_worker hook-f2 --kind host --poll 1 --label fleet=hook --label live=yes
api POST /api/v1/workers/register -H "Authorization: Bearer $WORKER_TOKEN" --data-binary \
    '{"name":"hook-f3","kind":"host","facts":{},"labels":{"fleet":"hook"}}'
fleet_hosts() {
    api GET "/api/v1/targets?label=fleet=hook" "${S[@]}"
    [[ $(json '.items | length') == 3 ]]
}
wait_for "three fleet hosts registered" 30 fleet_hosts
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(jq -c '.targets.host = {label: "fleet=hook"} | .max_parallel_hosts = 3' <<<"$(plan_json hook-fleet)")"
F=$(json .id)
KIDS=$(json -c '[.children[].id]')
F3=$(json '.children[] | select(.host == "hook-f3") | .id')
# events LOG PLAN: the events delivered for plan PLAN, in the order sent.
events() {
    jq -s -r --argjson p "$2" '[.[] | select(.answered == 204 and .body.plan.id == $p)]
        | unique_by(.delivery) | sort_by(.n) | map(.event) | join(" ")' "$1"
}
kids_done() {
    local k
    for k in $(jq '.[]' <<<"$KIDS"); do
        [[ $k == "$F3" ]] && continue
        [[ $(events "$HV_TMP/recv3.log" "$k") == "plan.started plan.finished" ]] || return 1
    done
}
wait_for "the children with workers started and finished" 60 kids_done
assert_eq "the parent started once, with its first child" "plan.started" "$(events "$HV_TMP/recv3.log" "$F")"
assert_eq "the parent's plan.started lists its children" "$KIDS null" \
    "$(jq -s -c --argjson p "$F" '[.[] | select(.body.plan.id == $p)][0].body.plan | [.children, .parent_id]' "$HV_TMP/recv3.log" | jq -c '"\(.[0]) \(.[1])"' -r)"
assert_eq "a child's events name its parent" "$F" \
    "$(jq -s -r --argjson k "$(jq '.[0]' <<<"$KIDS")" '[.[] | select(.body.plan.id == $k) | .body.plan.parent_id] | unique | join(",")' "$HV_TMP/recv3.log")"
assert_status 200 POST "/api/v1/plans/$F3/cancel" "${S[@]}"
parent_ended() { [[ $(events "$HV_TMP/recv3.log" "$F") == "plan.started plan.failed" ]]; }
wait_for "the parent's plan.failed once its last child (cancelled) ended" 30 parent_ended
assert_eq "it counts its children's jobs" "2 2 1" \
    "$(jq -s -r --argjson p "$F" '[.[] | select(.event == "plan.failed" and .body.plan.id == $p)][0].body.plan.jobs
        | "\(.done) \(.total - .cancelled) \(.cancelled)"' "$HV_TMP/recv3.log")"
assert_eq "the cancelled child sent plan.failed" "plan.failed" "$(events "$HV_TMP/recv3.log" "$F3")"

# A fleet whose every child finishes, one host at a time: the parent's
# plan.finished.
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(jq -c '.targets.host = {label: "live=yes"} | .max_parallel_hosts = 1' <<<"$(plan_json hook-fleet-2)")"
F=$(json .id)
parent_finished() { [[ $(events "$HV_TMP/recv3.log" "$F") == "plan.started plan.finished" ]]; }
wait_for "the parent's plan.started and plan.finished, each once" 90 parent_finished
assert_eq "every child finished" "2" \
    "$(jq -s -r --argjson p "$F" '[.[] | select(.answered == 204 and .event == "plan.finished" and .body.plan.parent_id == $p)] | unique_by(.delivery) | length' "$HV_TMP/recv3.log")"

# --- jobs of one plan changed by one statement -------------------------------------------
# A batch of claims or of results changes several jobs of a plan in one
# statement: the first ones claimed together send one plan.started, the
# last ones ended together one plan.finished; a fleet parent's the same,
# its children's jobs claimed and ended together. Done in SQL, so that each
# statement holds every job of the plans, whatever batches would form.
sql() { "$PG" psql "$HV_TMP/pg" -- -X -Atq -v ON_ERROR_STOP=1 -c "$1"; }
for h in hook-b1 hook-b2; do
    api POST /api/v1/workers/register -H "Authorization: Bearer $WORKER_TOKEN" --data-binary \
        "{\"name\":\"$h\",\"kind\":\"host\",\"facts\":{},\"labels\":{\"fleet\":\"hook-batch\"}}"
done
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(jq -c '.targets.host = "hook-b0" | .repetitions.min = 3' <<<"$(plan_json hook-batch)")"
PB=$(json .id)
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(jq -c '.targets.host = {label: "fleet=hook-batch"} | .max_parallel_hosts = 2' <<<"$(plan_json hook-batch-fleet)")"
FB=$(json .id)
FB_KIDS=$(json -r '[.children[].id] | join(",")')
IDS="$PB,$FB_KIDS"
assert_eq "the plan has several jobs" "yes" "$(sql "SELECT CASE WHEN count(*) > 1 THEN 'yes' END FROM jobs WHERE plan_id = $PB")"
sql "UPDATE jobs SET status = 'running', attempt = attempt + 1, claimed_at = now(),
     lease_until = now() + interval '1 hour' WHERE plan_id IN ($IDS)" >/dev/null
sql "UPDATE jobs SET status = 'done', lease_until = NULL, finished_at = now() WHERE plan_id IN ($IDS)" >/dev/null
queued_events() { # PLAN: the events queued for PLAN, in order
    sql "SELECT string_agg(event, ' ' ORDER BY id) FROM webhook_deliveries WHERE webhook_id = $H
         AND (payload->'plan'->>'id')::bigint = $1"
}
assert_eq "one statement claimed the plan's first jobs, one ended its last: each event once" \
    "plan.started plan.finished" "$(queued_events "$PB")"
assert_eq "the fleet parent's, its children's jobs claimed and ended together: each once" \
    "plan.started plan.finished" "$(queued_events "$FB")"
for k in ${FB_KIDS//,/ }; do
    assert_eq "child $k: each event once" "plan.started plan.finished" "$(queued_events "$k")"
done
batch_sent() { [[ $(events "$HV_TMP/recv3.log" "$PB") == "plan.started plan.finished" ]]; }
wait_for "the plan's events delivered" 30 batch_sent

# --- a cancelled plan, then a deleted subscription -------------------------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(jq -c '.targets.host = "hook-nowhere"' <<<"$(plan_json hook-3)")"
P3=$(json .id)
assert_status 200 POST "/api/v1/plans/$P3/cancel" "${S[@]}"
cancelled_sent() { [[ $(events "$HV_TMP/recv3.log" "$P3") == plan.failed ]]; }
wait_for "plan.failed for the cancelled plan" 30 cancelled_sent
assert_eq "it says cancelled" "$P3 cancelled" \
    "$(jq -s -r --argjson p "$P3" '[.[] | select(.event == "plan.failed" and .body.plan.id == $p)][0].body.plan | "\(.id) \(.status)"' "$HV_TMP/recv3.log")"
failed_before=$(received "$HV_TMP/recv3.log" plan.failed)
assert_status 200 DELETE "/api/v1/webhooks/$H" "${A[@]}"
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(jq -c '.targets.host = "hook-nowhere"' <<<"$(plan_json hook-4)")"
assert_status 200 POST "/api/v1/plans/$(json .id)/cancel" "${S[@]}"
sleep 3
assert_eq "a deleted subscription gets nothing more" "$failed_before" "$(received "$HV_TMP/recv3.log" plan.failed)"
hv_finish
