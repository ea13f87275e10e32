#!/usr/bin/env bash
# shellcheck disable=SC2016,SC2317 # jq programs in single quotes; functions run by wait_for
# A lost worker is visible. A host's worker (a fake one, over curl) takes
# its plan's apply step, reports two changed settings, claims a job and
# goes silent: once the job's lease ran out (the server's --lease, 6 s),
# the plan waits with reason worker_lost, its detail naming the target,
# the time its worker was last seen and the settings its host may still
# carry; the target is stale in GET /api/v1/targets, GET /targets/{id},
# `hvbench targets` and `hvbench status`; a receiver gets one worker.lost
# event, however many sweeps follow. The worker registering again ends it:
# no waiting, not stale. Then a real host worker is killed with SIGKILL
# in the middle of a job: the same, until it is started again.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
HV_SERVER_ARGS=(--lease 6)
hv_setup
export HVBENCH_SERVER=$URL HVBENCH_TOKEN=$SUBMIT_TOKEN

A=(-H "Authorization: Bearer $ADMIN_TOKEN")
S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }
plan() { # NAME HOST SECONDS
    jq -c --arg n "$1" --arg h "$2" --argjson s "$3" '.name = $n | .targets.host = $h
        | .workloads[0].params.seconds = $s | .repetitions = {min: 1} | .order = "sequential"
        | .factors = {"thp": ["never", "always"]}' "$HV_ROOT/examples/quick.json"
}
# received EVENT: how many distinct deliveries of EVENT the receiver answered.
received() {
    [[ -s $HV_TMP/recv.log ]] || { echo 0; return; }
    jq -s --arg e "$1" '[.[] | select(.event == $e and .answered == 204) | .delivery] | unique
        | length' "$HV_TMP/recv.log"
}
# poke: another worker's claim, which runs the sweeps that are due.
poke() { api POST /api/v1/jobs/claim "${WP[@]}" --data-binary '{"wait":0}'; }
# seen TARGET_ID: its worker's last_seen as the detail writes it.
seen() { sql "SELECT to_char(last_seen AT TIME ZONE 'UTC', 'HH24:MI:SS') FROM targets WHERE id = $1"; }

hv_start_hookrecv "$HV_TMP/recv.log"
assert_status 201 POST /api/v1/webhooks "${A[@]}" --data-binary \
    "{\"url\": \"http://127.0.0.1:$RECV_PORT/hook\", \"events\": [\"worker.lost\"], \"allow_private\": true}"
json -r .secret >"$HV_TMP/secret"

hv_register poke-host
WP=("${W[@]}")
hv_register lost-host
WH=("${W[@]}") T=$TARGET

# --- a fake host worker claims a job and goes silent --------------------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan fake lost-host 1)"
P=$(json .id)
api POST /api/v1/jobs/claim "${WH[@]}" --data-binary '{"wait":0}'
assert_eq "the host's worker gets block 0's apply step" "apply 0" "$(json -r '"\(.step.kind) \(.step.block)"')"
api POST "/api/v1/steps/$(json .step.id)/result" "${WH[@]}" --data-binary "{\"attempt\":$(json .step.attempt),
    \"status\":\"ok\",\"changes\":[
    {\"factor\":\"thp\",\"scope\":\"host\",\"object\":\"/sys/thp\",\"from\":\"madvise\",\"to\":\"never\"},
    {\"factor\":\"readahead_kb\",\"scope\":\"host\",\"object\":\"vda\",\"from\":\"128\",\"to\":\"2048\"}]}"
assert_eq "its result is stored" 201 "$STATUS"
api POST /api/v1/jobs/claim "${WH[@]}" --data-binary '{"wait":0}'
assert_eq "then it claims block 0's job" "200 $P" "$STATUS $(json .job.plan_id)"
JOB=$(json .job.id)
assert_status 200 GET "/api/v1/plans/$P"
assert_eq "while the worker is there the plan waits for nothing" null "$(json -c .waiting)"

lost() {
    poke
    api GET "/api/v1/plans/$P"
    [[ $(json -r '.waiting.reason // ""') == worker_lost ]]
}
wait_for "once the job's lease ran out the plan waits: worker_lost" 30 lost
assert_eq "the job went back to the queue as before" "queued 1" \
    "$(sql "SELECT status || ' ' || failures FROM jobs WHERE id = $JOB")"
assert_eq "the detail names the target, when its worker was last seen and what the host may carry" \
    "lost-host's worker last seen $(seen "$T") UTC; its host may still carry plan $P's settings (readahead_kb=2048, thp=never) until the worker restarts or runs --restore" \
    "$(json -r .waiting.detail)"
DETAIL=$(json -r .waiting.detail)
assert_eq "the waiting names the target and its last_seen" "lost-host true" \
    "$(json -r '"\(.waiting.target) \(.waiting.last_seen != null and .waiting.since >= .waiting.last_seen)"')"
assert_status 200 GET "/api/v1/plans?limit=5"
assert_eq "the plan list says so too" worker_lost \
    "$(json -r --argjson p "$P" '.items[] | select(.id == $p) | .waiting.reason')"
assert_status 200 GET "/api/v1/targets/$T"
assert_eq "GET /targets/{id}: stale" true "$(json .stale)"
poke # last_seen moves at most every 5 s: poke-host's is recent now
assert_status 200 GET /api/v1/targets
assert_eq "GET /targets: lost-host stale, poke-host not" "lost-host=true poke-host=false" \
    "$(json -r '[.items[] | "\(.name)=\(.stale)"] | join(" ")')"
hv_cli status "$P"
assert_match "hvbench status prints the waiting detail" "lost-host's worker last seen .* until the worker restarts or runs --restore" "$OUT"
hv_cli targets
assert_match "hvbench targets marks the target stale" "lost-host .*\(stale\)" "$(grep lost-host <<<"$OUT")"
assert_eq "and not the other one" "" "$(grep poke-host <<<"$OUT" | grep stale)"

one_event() { [[ $(received worker.lost) -ge 1 ]]; }
wait_for "a worker.lost event reaches the receiver" 20 one_event
assert_eq "its payload: target, worker, last_seen, plans, detail" \
    "lost-host $T true [$P] true" \
    "$(jq -s -r --arg d "$DETAIL" '[.[] | select(.event == "worker.lost")][0].body
        | "\(.target) \(.target_id) \(.worker_id > 0 and .last_seen != null) \(.plan_ids | tojson) \(.detail == $d)"' "$HV_TMP/recv.log")"
for _ in 1 2 3; do poke; sleep 0.5; done
assert_eq "one loss, one event, however many sweeps follow" "1 1" \
    "$(sql "SELECT count(*) FROM worker_losses WHERE target_id = $T") $(sql "SELECT count(*) FROM webhook_deliveries WHERE event = 'worker.lost'")"

# --- the worker registers again --------------------------------------------------------
api POST /api/v1/workers/register "${WH[@]}" --data-binary '{"name":"lost-host","kind":"host","facts":{}}'
assert_eq "it registers again with its own credential" 200 "$STATUS"
assert_status 200 GET "/api/v1/plans/$P"
assert_eq "the plan no longer waits" null "$(json -c .waiting)"
assert_status 200 GET "/api/v1/targets/$T"
assert_eq "the target is not stale" false "$(json .stale)"
assert_eq "the loss ended" "1" "$(sql "SELECT count(*) FROM worker_losses WHERE target_id = $T AND found_at IS NOT NULL")"
assert_status 200 POST "/api/v1/plans/$P/cancel" "${S[@]}"

# --- a real host worker killed with SIGKILL in the middle of a job -------------------------
ROOT=$HV_TMP/root
THP=$ROOT/sys/kernel/mm/transparent_hugepage/enabled
mkdir -p "$(dirname "$THP")"
echo madvise >"$THP"
hv_start_worker real-host --kind host --sysfs-root "$ROOT" --poll 1 --wait 2
WPID=${HV_WORKER_PIDS[-1]}
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan killed real-host 30)"
K=$(json .id)
in_block0() { [[ $(sql "SELECT count(*) FROM jobs WHERE plan_id = $K AND block = 0 AND status = 'running'") -ge 1 ]]; }
wait_for "block 0 applied, its job runs" 30 in_block0
assert_eq "the host's thp is the plan's" never "$(cat "$THP")"
kill -KILL "$WPID"
wait "$WPID" 2>/dev/null
RT=$(sql "SELECT id FROM targets WHERE name = 'real-host'")
# No claim runs the sweeps now: the server's own sweeper (server/sweeper.h)
# finds the lease that ran out.
real_lost() {
    api GET "/api/v1/plans/$K"
    [[ $(json -r '.waiting.reason // ""') == worker_lost ]]
}
wait_for "the killed worker's plan waits: worker_lost" 30 real_lost
assert_eq "its detail names what the host still carries" \
    "real-host's worker last seen $(seen "$RT") UTC; its host may still carry plan $K's settings (thp=never) until the worker restarts or runs --restore" \
    "$(json -r .waiting.detail)"
assert_status 200 GET "/api/v1/targets/$RT"
assert_eq "real-host is stale" true "$(json .stale)"
two_events() { [[ $(received worker.lost) -ge 2 ]]; }
wait_for "a second worker.lost, for real-host" 20 two_events
assert_eq "one event per loss" "1 1" \
    "$(jq -s -r '[.[] | select(.event == "worker.lost" and .answered == 204) | .body.target]
        | "\(map(select(. == "lost-host")) | length) \(map(select(. == "real-host")) | length)"' "$HV_TMP/recv.log")"
hv_start_worker real-host --kind host --sysfs-root "$ROOT" --poll 1 --wait 2
found() {
    api GET "/api/v1/plans/$K"
    [[ $(json -c .waiting) == null ]]
}
wait_for "the restarted worker ends the wait" 30 found
assert_status 200 GET "/api/v1/targets/$RT"
assert_eq "real-host is not stale any more" false "$(json .stale)"
assert_status 200 POST "/api/v1/plans/$K/cancel" "${S[@]}"

hv_finish
