#!/usr/bin/env bash
# shellcheck disable=SC2016,SC2317 # jq programs in single quotes; functions run by wait_for
# One lifecycle: a plan's state changes only through its transitions
# (migrations/041_lifecycle.sql), and only a transition sends a plan's
# events, each once. Adaptive plans (fake workers over curl, the values
# chosen so the rounds are known) that end done, failed and cancelled
# after 1 and after 4 rounds, and a fleet's parent: exactly one end event
# per plan, after its last round, matching its final state, and one
# plan.started; a cancelled plan's `hvbench status` says cancelled and
# nothing of rounds; a plan waiting for an unregistered target says so; a
# job change the transition table does not allow is refused.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

A=(-H "Authorization: Bearer $ADMIN_TOKEN")
S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }

hv_start_hookrecv "$HV_TMP/recv.log"
assert_status 201 POST /api/v1/webhooks "${A[@]}" --data-binary \
    "{\"url\":\"http://127.0.0.1:$RECV_PORT/hook\",\"allow_private\":true,\"events\":[\"plan.started\",\"plan.finished\",\"plan.failed\",\"plan.cancelled\"]}"

hv_register lc-host
plan() { # NAME MIN MAX [HOST]
    jq -c --arg n "$1" --argjson lo "$2" --argjson hi "$3" --arg h "${4:-lc-host}" \
        '.name = $n | .targets.host = $h | .workloads[0].params.seconds = 1
         | .repetitions = {min: $lo, max: $hi, ci_pct: 0.5}' "$HV_ROOT/examples/quick.json"
}
# claim PLAN: claims the next job with $W, which must be of PLAN; sets JOB and ATT.
claim() {
    api POST /api/v1/jobs/claim "${W[@]}" --data-binary '{}'
    [[ $STATUS == 200 && $(json .job.plan_id) == "$1" ]] || hv_die "claim for plan $1: $STATUS $BODY"
    JOB=$(json .job.id)
    ATT=$(json .job.attempt)
}
# upload STATUS VALUE: the claimed job's result.
upload() {
    api POST "/api/v1/jobs/$JOB/result" "${W[@]}" --data-binary \
        "{\"attempt\":$ATT,\"status\":\"$1\"$([[ $1 == ok ]] || echo ',"error":"broken"'),\"metrics\":[{\"name\":\"cpu.score\",\"value\":$2,\"unit\":\"score\"}]}"
    [[ $STATUS == 201 ]] || hv_die "result of job $JOB: $STATUS $BODY"
}
# run PLAN STATUS:VALUE...: one job claimed and ended per argument.
run() {
    local p=$1 a
    shift
    for a in "$@"; do
        claim "$p"
        upload "${a%%:*}" "${a#*:}"
    done
}
rounds() { sql "SELECT max(repetition) FROM jobs WHERE plan_id = $1"; }
submit() { # NAME MIN MAX [HOST]: sets P
    assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan "$@")"
    P=$(json .id)
}
# queued PLAN: the plan's events queued, in order (one subscription: one
# row per event sent).
queued() {
    sql "SELECT string_agg(event, ' ' ORDER BY id) FROM webhook_deliveries
         WHERE (payload->'plan'->>'id')::bigint = $1"
}

# --- done, failed and cancelled after 1 round --------------------------------------------
submit done-1 1 1
D1=$P
run "$D1" ok:1000
submit failed-1 1 1
F1=$P
run "$F1" error:0
submit cancelled-1 1 1
C1=$P
claim "$C1"
assert_status 200 POST "/api/v1/plans/$C1/cancel" "${S[@]}"

# --- done, failed and cancelled after 4 rounds -------------------------------------------
# Noisy values keep the interval wide: a round is added after each until max.
submit done-4 2 4
D4=$P
run "$D4" ok:1000 ok:1300
assert_eq "done-4: a third round after two" "3 running" "$(rounds "$D4") $(sql "SELECT state FROM plans WHERE id = $D4")"
assert_eq "done-4: no end event between rounds" "plan.started" "$(queued "$D4")"
assert_status 200 GET "/api/v1/plans/$D4" "${S[@]}"
assert_eq "done-4: no finished_at while it runs, nor ended_at" "null " \
    "$(json .finished_at) $(sql "SELECT ended_at FROM plans WHERE id = $D4")"
run "$D4" ok:800 ok:1250
submit failed-4 2 4
F4=$P
run "$F4" ok:1000 ok:1300 ok:800 error:0
submit cancelled-4 2 5
C4=$P
run "$C4" ok:1000 ok:1300 ok:800
claim "$C4"
assert_status 200 POST "/api/v1/plans/$C4/cancel" "${S[@]}"
assert_eq "rounds run: 4 each" "4 4 4" "$(rounds "$D4") $(rounds "$F4") $(rounds "$C4")"

# --- a fleet parent ----------------------------------------------------------------------
HOST_W=("${W[@]}")
register_fleet_host() { # NAME: sets W to its credential
    api POST /api/v1/workers/register -H "Authorization: Bearer $WORKER_TOKEN" --data-binary \
        "{\"name\":\"$1\",\"kind\":\"host\",\"facts\":{},\"labels\":{\"fleet\":\"lc\"}}"
    [[ $STATUS == 200 ]] || hv_die "registering $1: $STATUS $BODY"
    W=(-H "Authorization: Bearer $(json -r .worker_token)")
}
register_fleet_host lc-f1
W_f1=("${W[@]}")
register_fleet_host lc-f2
W_f2=("${W[@]}")
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(plan fleet 1 1 | jq -c '.targets.host = {label: "fleet=lc"} | .max_parallel_hosts = 2')"
FP=$(json .id)
K1=$(json '.children[] | select(.host == "lc-f1") | .id')
K2=$(json '.children[] | select(.host == "lc-f2") | .id')
W=("${W_f1[@]}")
run "$K1" ok:1000
assert_eq "the parent runs while a child does" running "$(sql "SELECT state FROM plans WHERE id = $FP")"
W=("${W_f2[@]}")
run "$K2" ok:1000
W=("${HOST_W[@]}")

# --- every plan: one start, one end, matching its state ----------------------------------
expect() { # PLAN STATE EVENTS TOTAL
    assert_eq "plan $1 ($2): its events, each once" "$3" "$(queued "$1")"
    assert_status 200 GET "/api/v1/plans/$1" "${S[@]}"
    assert_eq "plan $1: the answer says $2" "$2" "$(json -r .status)"
    assert_eq "plan $1: its end event says $2, after its last round ($4 jobs)" "$2 $4" \
        "$(sql "SELECT payload->'plan'->>'status' || ' ' || (payload->'plan'->'jobs'->>'total')
                FROM webhook_deliveries WHERE (payload->'plan'->>'id')::bigint = $1
                AND event <> 'plan.started'")"
    # finished_at is the plan's ended_at, in the answer and in a list.
    assert_eq "plan $1: finished_at is its ended_at" t \
        "$(sql "SELECT ended_at = '$(json -r .finished_at)'::timestamptz FROM plans WHERE id = $1")"
    assert_status 200 GET "/api/v1/plans?limit=100" "${S[@]}"
    assert_eq "plan $1: a list's finished_at is its ended_at" t \
        "$(sql "SELECT ended_at = '$(json -r --argjson p "$1" '.items[] | select(.id == $p) | .finished_at')'::timestamptz
                FROM plans WHERE id = $1")"
}
expect "$D1" "done" "plan.started plan.finished" 1
expect "$F1" failed "plan.started plan.failed" 1
expect "$C1" cancelled "plan.started plan.cancelled" 1
expect "$D4" "done" "plan.started plan.finished" 4
expect "$F4" failed "plan.started plan.failed" 4
expect "$C4" cancelled "plan.started plan.cancelled" 4
expect "$K1" "done" "plan.started plan.finished" 1
expect "$FP" "done" "plan.started plan.finished" 2
assert_eq "each plan ended once, its time kept" 0 \
    "$(sql "SELECT count(*) FROM plans WHERE state IN ('done', 'failed', 'cancelled') AND ended_at IS NULL")"

# The receiver got them: one delivery per plan and event.
all_delivered() {
    [[ -s $HV_TMP/recv.log ]] &&
        [[ $(jq -s '[.[] | select(.answered == 204)] | unique_by(.delivery) | length' "$HV_TMP/recv.log") == 18 ]]
}
wait_for "every event delivered" 30 all_delivered
assert_eq "at the receiver: each plan's events once" \
    "$D1:plan.finished:1 $D1:plan.started:1 $D4:plan.finished:1 $D4:plan.started:1" \
    "$(jq -s -r --argjson a "$D1" --argjson b "$D4" '[.[] | select(.answered == 204 and (.body.plan.id == $a or .body.plan.id == $b))]
        | unique_by(.delivery) | group_by([.body.plan.id, .event]) | map("\(.[0].body.plan.id):\(.[0].event):\(length)") | join(" ")' "$HV_TMP/recv.log")"
assert_eq "at the receiver: no plan has two deliveries of one event" 0 \
    "$(jq -s '[.[] | select(.answered == 204)] | unique_by(.delivery) | group_by([.body.plan.id, .event]) | map(select(length > 1)) | length' "$HV_TMP/recv.log")"

# --- what the cancelled plan says --------------------------------------------------------
assert_status 200 GET "/api/v1/plans/$C4" "${S[@]}"
assert_eq "the cancelled plan's last decision was for more, it waits for nothing" "more null" \
    "$(json -r '"\(.rounds.decision) \(.waiting)"')"
out=$(HVBENCH_TOKEN=$SUBMIT_TOKEN "$CLI" --server "$URL" status "$C4" 2>&1)
assert_match "hvbench status says cancelled" "status +cancelled" "$out"
assert_eq "and nothing of rounds" 0 "$(grep -ci round <<<"$out")"

# --- a plan waiting for a target no worker registered ------------------------------------
submit waits 1 1 lc-nowhere
out=$(HVBENCH_TOKEN=$SUBMIT_TOKEN "$CLI" --server "$URL" status "$P" 2>&1)
assert_match "hvbench status says what it waits for" "status +queued: waiting for target lc-nowhere \(never registered\)" "$out"
assert_eq "a waiting plan sent nothing" "" "$(queued "$P")"

# --- the transition table ----------------------------------------------------------------
assert_eq "a done job cannot go back to the queue" "no transition from done to queued" \
    "$("$PG" psql "$HV_TMP/pg" -- -Atc "UPDATE jobs SET status = 'queued' WHERE plan_id = $D1" 2>&1 |
        grep -o 'no transition from done to queued')"
assert_eq "a cancelled plan cannot be done" "no transition from cancelled to done" \
    "$("$PG" psql "$HV_TMP/pg" -- -Atc "SELECT hv_plan_transition($C1, 'done', 'test')" 2>&1 |
        grep -o 'no transition from cancelled to done')"

# --- a retry: the plan runs again, nothing of its end kept --------------------------------
FJOB=$(sql "SELECT id FROM jobs WHERE plan_id = $F1")
assert_eq "the failed job has ended" t "$(sql "SELECT finished_at IS NOT NULL FROM jobs WHERE id = $FJOB")"
assert_status 200 POST "/api/v1/plans/$F1/retry" "${S[@]}"
assert_status 200 GET "/api/v1/plans/$F1" "${S[@]}"
assert_eq "the retried plan runs, no finished_at" "running null" "$(json -r '"\(.status) \(.finished_at)"')"
assert_eq "nor ended_at, and its job is queued without finished_at" "running  queued " \
    "$(sql "SELECT p.state, p.ended_at, j.status, j.finished_at FROM plans p JOIN jobs j ON j.plan_id = p.id
            WHERE p.id = $F1" | tr '|' ' ')"
W=("${HOST_W[@]}")
run "$F1" ok:1000
assert_status 200 GET "/api/v1/plans/$F1" "${S[@]}"
assert_eq "run again, it ends again: finished_at is its new ended_at, its job's end" "done t t" \
    "$(json -r .status) $(sql "SELECT p.ended_at = '$(json -r .finished_at)'::timestamptz,
                                     p.ended_at = j.finished_at
                              FROM plans p JOIN jobs j ON j.plan_id = p.id WHERE p.id = $F1" | tr '|' ' ')"

hv_finish
