#!/usr/bin/env bash
# Long-poll claims and group barriers against the real server: a waiting
# claim is woken by a new plan, group members get one start time once all
# are ready (also through a long-polling ready), a released or lost member
# aborts its group and the group is retried, and a stopping server answers
# its long polls instead of dropping them.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
HV_SERVER_ARGS=(--lease 3)
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }
# Each target's worker credential: WH, WG1, WG2 carry them; AS[id] too.
declare -A AS
hv_register gh host
H=$TARGET WH=("${W[@]}") AS[$H]=${W[1]}
hv_register g1 guest
G1=$TARGET WG1=("${W[@]}") AS[$G1]=${W[1]}
hv_register g2 guest
G2=$TARGET WG2=("${W[@]}") AS[$G2]=${W[1]}

# --- long-poll claims ------------------------------------------------------------
api POST /api/v1/jobs/claim "${WG1[@]}" --data-binary "{\"target_id\":$G1,\"wait\":1}"
assert_eq "an empty queue answers 204 after the wait" 204 "$STATUS"
# A claim waiting for up to 30 s is woken by the plan submitted meanwhile.
curl -s -o "$HV_TMP/claim1" -w '%{http_code} %{time_total}' -X POST "${WH[@]}" \
    --data-binary "{\"target_id\":$H,\"wait\":30}" "$URL/api/v1/jobs/claim" >"$HV_TMP/claim1.status" &
CLAIMER=$!
sleep 1
jq '.name = "groups" | .targets = {"host": "gh", "guests": {"domains": ["g1", "g2"]}}
    | .concurrency = "all-guests" | .repetitions.min = 4 | .order = "sequential"' \
    "$HV_ROOT/examples/quick.json" >"$HV_TMP/plan.json"
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary @"$HV_TMP/plan.json"
PLAN=$(json .id)
wait "$CLAIMER"
read -r code took <"$HV_TMP/claim1.status"
hv_log "the waiting claim answered after ${took}s"
assert_eq "the waiting claim got the host's job" 200 "$code"
assert_eq "a solo job has no group" null "$(jq -c .job.group "$HV_TMP/claim1")"
HJOB=$(jq .job.id "$HV_TMP/claim1")
api POST "/api/v1/jobs/$HJOB/release" "${WH[@]}" --data-binary '{"attempt":1}'

# --- the barrier -------------------------------------------------------------------
claim() { # TARGET_ID -> sets JOB ATT GROUP SIZE
    api POST /api/v1/jobs/claim -H "${AS[$1]}" --data-binary "{\"target_id\":$1}"
    JOB=$(json .job.id) ATT=$(json .job.attempt) GROUP=$(json .job.group.id) SIZE=$(json .job.group.size)
}
claim "$G1"
A=$JOB A_ATT=$ATT A_GROUP=$GROUP
assert_eq "a guest job belongs to a group of 2" 2 "$SIZE"
api POST "/api/v1/jobs/$A/ready" "${WG1[@]}" --data-binary "{\"attempt\":$A_ATT}"
assert_eq "first member ready" "null 1" "$(json '"\(.start_at) \(.group.ready)"')"
# The first member now waits; the second member's ready completes the group.
curl -s -o "$HV_TMP/ready_a" -X POST "${WG1[@]}" --data-binary "{\"attempt\":$A_ATT,\"wait\":30}" \
    "$URL/api/v1/jobs/$A/ready" &
WAITER=$!
sleep 1
claim "$G2"
B=$JOB B_ATT=$ATT
assert_eq "both members in one group" "$A_GROUP" "$GROUP"
api POST /api/v1/jobs/claim "${WH[@]}" --data-binary "{\"target_id\":$H}"
assert_eq "the host's job waits while the guests' group runs" 204 "$STATUS"
api POST "/api/v1/jobs/$B/ready" "${WG2[@]}" --data-binary "{\"attempt\":$B_ATT}"
START=$(json .start_at)
assert_match "the last member gets the start time" '^20[0-9-]+T[0-9:.]+Z$' "$START"
assert_eq "all ready" 2 "$(json .group.ready)"
wait "$WAITER"
assert_eq "the waiting member gets the same start time" "$START" "$(jq -r .start_at "$HV_TMP/ready_a")"
server_now=$(json .server_time)
assert_eq "the start lies ahead of the server's clock" true \
    "$(jq -n --arg a "$START" --arg b "$server_now" '$a > $b')"
for j in "$A:$A_ATT:$G1" "$B:$B_ATT:$G2"; do
    IFS=: read -r jid jatt jtarget <<<"$j"
    api POST "/api/v1/jobs/$jid/result" -H "${AS[$jtarget]}" --data-binary \
        "{\"attempt\":$jatt,\"status\":\"ok\",\"metrics\":[{\"name\":\"cpu.score\",\"value\":100}],\"observed\":{\"start_skew_ms\":0.4}}"
    assert_eq "member $jid uploads" 201 "$STATUS"
done

# --- a released member aborts its group ---------------------------------------------
claim "$G1"
A=$JOB A_ATT=$ATT A_GROUP=$GROUP
claim "$G2"
B=$JOB B_ATT=$ATT
api POST "/api/v1/jobs/$A/ready" "${WG1[@]}" --data-binary "{\"attempt\":$A_ATT}"
api POST "/api/v1/jobs/$B/release" "${WG2[@]}" --data-binary "{\"attempt\":$B_ATT,\"reason\":\"test\"}"
assert_eq "release answers" 200 "$STATUS"
assert_status 409 POST "/api/v1/jobs/$A/heartbeat" "${WG1[@]}" --data-binary "{\"attempt\":$A_ATT}"
assert_eq "both members back in the queue" "queued queued" \
    "$(sql "SELECT string_agg(status, ' ' ORDER BY id) FROM jobs WHERE id IN ($A, $B)")"
assert_eq "no failure counted" 0 "$(sql "SELECT sum(failures) FROM jobs WHERE id IN ($A, $B)")"
assert_eq "the group counts the abort" 1 "$(sql "SELECT aborts FROM job_groups WHERE id = $A_GROUP")"

# --- a lost member (lease expired) aborts its group; only it counts a failure -------
claim "$G1"
A=$JOB A_ATT=$ATT
assert_eq "the retried group is claimed again" "$A_GROUP" "$GROUP"
claim "$G2"
B=$JOB B_ATT=$ATT
for i in 1 2 3 4 5; do # member A stays alive, member B is silent
    api POST "/api/v1/jobs/$A/heartbeat" "${WG1[@]}" --data-binary "{\"attempt\":$A_ATT}"
    sleep 1
done
api POST /api/v1/jobs/claim "${WH[@]}" --data-binary "{\"target_id\":$H}" # runs the expiry
assert_eq "the host claims a job of its own once the group is back in the queue" 200 "$STATUS"
HJOB=$(json .job.id) HATT=$(json .job.attempt)
# The plan's targets share one hypervisor: while the host's job runs, no
# guest of the plan starts one, and the other way round.
api POST /api/v1/jobs/claim "${WG1[@]}" --data-binary "{\"target_id\":$G1}"
assert_eq "a guest's job of the same plan waits while the host's runs" 204 "$STATUS"
api POST "/api/v1/jobs/$HJOB/release" "${WH[@]}" --data-binary "{\"attempt\":$HATT}"
assert_eq "the silent member failed once" "queued 1" \
    "$(sql "SELECT status || ' ' || failures FROM jobs WHERE id = $B")"
assert_eq "its peer went back without a failure" "queued 0" \
    "$(sql "SELECT status || ' ' || failures FROM jobs WHERE id = $A")"
assert_match "the peer says why" 'group aborted' "$(sql "SELECT error FROM jobs WHERE id = $A")"
assert_status 409 POST "/api/v1/jobs/$A/ready" "${WG1[@]}" --data-binary "{\"attempt\":$A_ATT}"
assert_status 409 POST "/api/v1/jobs/$B/result" "${WG2[@]}" --data-binary \
    "{\"attempt\":$B_ATT,\"status\":\"ok\",\"metrics\":[{\"name\":\"cpu.score\",\"value\":1}]}"

# --- an error result fails the rest of its group ------------------------------------
claim "$G1"
A=$JOB A_ATT=$ATT
claim "$G2"
B=$JOB B_ATT=$ATT
api POST "/api/v1/jobs/$B/result" "${WG2[@]}" --data-binary "{\"attempt\":$B_ATT,\"status\":\"error\",\"error\":\"engine crashed\"}"
assert_eq "error result stored" 201 "$STATUS"
assert_eq "its peer fails with it" failed "$(sql "SELECT status FROM jobs WHERE id = $A")"
assert_status 409 POST "/api/v1/jobs/$A/heartbeat" "${WG1[@]}" --data-binary "{\"attempt\":$A_ATT}"

# --- a stopping server answers its long polls ------------------------------------------
sql "UPDATE jobs SET status = 'cancelled' WHERE status = 'queued'" >/dev/null
curl -s -o /dev/null -w '%{http_code}' -X POST "${WG1[@]}" --data-binary "{\"target_id\":$G1,\"wait\":30}" \
    "$URL/api/v1/jobs/claim" >"$HV_TMP/drain.status" &
DRAINED=$!
sleep 1
kill -TERM "$HV_SERVER_PID"
wait "$DRAINED"
assert_eq "the long poll was answered, not dropped" 204 "$(cat "$HV_TMP/drain.status")"
wait "$HV_SERVER_PID"
assert_eq "the server exits cleanly" 0 "$?"
HV_SERVER_PID=
hv_finish
