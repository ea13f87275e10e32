#!/usr/bin/env bash
# shellcheck disable=SC2016 # jq programs in single quotes
# A guest's boots are told apart by the boot id its worker registers with
# (docs/virt.md, "Guests come back"). Guest workers are played with curl.
#
# The server (fake host sb-host, guest vm): a registration keeps its boot
# id; a re-registration of the same boot (its own credential, a network
# blip) keeps the worker and its claimed attempt, and the same boot's
# registration with the worker token is still refused while the first
# holds the target; a registration of a new boot ends the old boot's
# worker at once (it held a running job), whose claim and heartbeat are
# then refused and hand no job, while the new boot's worker claims; a
# credential that re-registers from another boot ends; a bad boot id is
# refused at /boot_id.
#
# The host worker (libvirt's test driver, its domain "test"): the wait
# after a restart does not count a late registration of the boot before
# the restart, and counts the next boot's, logging it; a guest this worker
# started (the restore step's restart) and whose worker has not registered
# since is waited for before it is powered off again.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
export HVBENCH_LOG=debug # the server logs each request: the host worker's questions are counted
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
WT="Authorization: Bearer $WORKER_TOKEN"
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }
A=aaaaaaaa-0000-4000-8000-00000000000a
B=bbbbbbbb-0000-4000-8000-00000000000b
C=cccccccc-0000-4000-8000-00000000000c
D=dddddddd-0000-4000-8000-00000000000d
# reg NAME AUTH-HEADER BOOT UUID: a guest worker's registration.
reg() {
    api POST /api/v1/workers/register -H "$2" --data-binary \
        "{\"name\":\"$1\",\"kind\":\"guest\",\"facts\":{\"dmi_product_uuid\":\"$4\"},\"boot_id\":\"$3\"}"
}
cred() { echo "Authorization: Bearer $(json -r .worker_token)"; }

# --- the server: boots of one guest ------------------------------------------------
U2=0b5a4c1e-1111-2222-3333-444455556666
hv_register sb-host host "{\"libvirt\":{\"domains\":[{\"name\":\"vm\",\"uuid\":\"$U2\"}]}}"
HOSTW=${W[1]}
reg vm "$WT" "${A^^}" "$U2"
assert_eq "the guest of sb-host registers" "200 sb-host/vm" "$STATUS $(json -r .name)"
GA=$(cred)
WA=$(json .worker_id)
assert_eq "its boot id is kept, in lower case" "$A" "$(sql "SELECT boot_id FROM workers WHERE id = $WA")"
assert_status 200 GET "/api/v1/workers/guest?uuid=$U2" -H "$HOSTW"
assert_eq "the host worker learns the registration's boot" "$WA $A true" \
    "$(json -r '[(.registration.worker_id | tostring), .registration.boot_id, (.registration.live | tostring)] | join(" ")')"

jq -c '.name = "boots" | .targets = {host: "sb-host", guests: {domains: ["vm"]}}
    | .workloads[0].params.seconds = 1 | .repetitions = {min: 2}' "$HV_ROOT/examples/quick.json" >"$HV_TMP/plan.json"
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "@$HV_TMP/plan.json"
assert_status 200 POST /api/v1/jobs/claim -H "$GA" --data-binary '{}'
J1=$(json .job.id) ATT1=$(json .job.attempt)
assert_match "boot A's worker claims a job" '^[0-9]+$' "$J1"

reg vm "$GA" "$A" "$U2"
assert_eq "a re-registration of the same boot keeps the worker, no new credential" "200 $WA null" \
    "$STATUS $(json .worker_id) $(json -c .worker_token)"
assert_status 200 POST "/api/v1/jobs/$J1/heartbeat" -H "$GA" --data-binary "{\"attempt\":$ATT1}"
reg vm "$WT" "$A" "$U2"
assert_eq "the same boot's registration with the worker token does not take over" "409 target_held" \
    "$STATUS $(json -r .type | sed 's|.*/||')"

reg vm "$WT" "$B" "$U2"
assert_eq "the new boot's registration is taken at once, though boot A's worker runs a job" 200 "$STATUS"
GB=$(cred)
WB=$(json .worker_id)
assert_eq "boot A's worker ended, saying why" \
    "its guest booted again (boot bbbbbbbb, this worker ran on boot aaaaaaaa)" \
    "$(sql "SELECT ended_reason FROM workers WHERE id = $WA")"
assert_status 401 POST /api/v1/jobs/claim -H "$GA" --data-binary '{}'
assert_match "boot A's claim is refused, naming the new boot" "registration has ended \\(its guest booted again \\(boot bbbbbbbb" "$(json -r .detail)"
assert_status 401 POST "/api/v1/jobs/$J1/heartbeat" -H "$GA" --data-binary "{\"attempt\":$ATT1}"
assert_eq "boot A's worker was handed no other job" 1 "$(sql "SELECT count(*) FROM job_claims WHERE worker_id = $WA")"
assert_status 200 POST /api/v1/jobs/claim -H "$GB" --data-binary '{}'
assert_eq "boot B's worker gets the job boot A ran again at once (its lease ended with boot A)" \
    "$J1 $((ATT1 + 1))" "$(json .job.id) $(json .job.attempt)"
assert_status 200 GET "/api/v1/workers/guest?uuid=$U2" -H "$HOSTW"
assert_eq "the host worker learns boot B" "$WB $B true" \
    "$(json -r '[(.registration.worker_id | tostring), .registration.boot_id, (.registration.live | tostring)] | join(" ")')"

reg vm "$GB" "$C" "$U2"
assert_eq "a credential re-registering from another boot ends" "401 t" \
    "$STATUS $(sql "SELECT ended_at IS NOT NULL FROM workers WHERE id = $WB")"
assert_match "and is told to register with the worker token" "issued to boot bbbbbbbb .* booted again \\(boot cccccccc\\)" "$(json -r .detail)"
reg vm "$WT" "../x" "$U2"
assert_eq "a bad boot id is refused at its path" "400 /boot_id" "$STATUS $(json -r '.errors[0].path')"
api POST /api/v1/workers/deregister -H "$HOSTW"

# --- the host worker: restarts of the test driver's domain -------------------------
UUID=6695eb01-f6a4-8304-79aa-97f2502e193f # the test driver's domain "test"
hv_start_worker gb-host --libvirt test:///default --kind host --wait 2 --guest-wait 60
# shellcheck disable=SC2317 # called through wait_for
host_registered() { [[ $(sql "SELECT count(*) FROM targets WHERE name = 'gb-host' AND facts ? 'libvirt'") == 1 ]]; }
wait_for "the host worker registers with its domains" 30 host_registered
LOG=$HV_TMP/worker-gb-host.log
reg test "$WT" "$A" "$UUID"
cred >"$HV_TMP/guest-auth"

hv_fake_guest >"$HV_TMP/fake-guest.log" 2>&1 &
HV_WORKER_PIDS+=($!)

plan() { # NAME LEVELS
    jq -c --arg n "$1" --argjson l "$2" '.name = $n | .targets = {host: "gb-host", guests: {domains: ["test"]}}
        | .allow_restart = true | .factors = {iothreads: $l} | .order = "sequential"
        | .workloads[0].params.seconds = 1 | .repetitions = {min: 1}' "$HV_ROOT/examples/quick.json"
}
step() { sql "SELECT status FROM plan_steps WHERE plan_id = $1 AND kind = 'apply' AND block = $2"; }
asked() { grep -c "GET /api/v1/workers/guest" "$HV_TMP/server.log"; }

assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan late '["0", "1"]')"
P=$(json .id)
# shellcheck disable=SC2317 # called through wait_for
waiting() { grep -q "waiting up to 60 s for the worker of 1 restarted guest" "$LOG"; }
wait_for "block 1's step restarted the guest and waits for its worker" 90 waiting
# The boot before the restart registers late (it signed off, then its
# registration came through): a newer registration, of the old boot.
api POST /api/v1/workers/deregister -H "$(cat "$HV_TMP/guest-auth")"
reg test "$WT" "$A" "$UUID"
cred >"$HV_TMP/guest-auth"
N=$(asked)
# shellcheck disable=SC2317 # called through wait_for
asked_twice() { (($(asked) >= N + 2)); }
wait_for "the host worker asked again after the late registration" 30 asked_twice
assert_eq "a late registration of the boot before the restart does not count" "running" "$(step "$P" 1)"
assert_eq "nor is it logged as the guest's return" 0 "$(grep -c "the worker of test registered again" "$LOG")"
reg test "$WT" "$B" "$UUID"
cred >"$HV_TMP/guest-auth"
# shellcheck disable=SC2317 # called through wait_for
restored() { [[ $(sql "SELECT status FROM plan_steps WHERE plan_id = $1 AND kind = 'restore'") == "done" ]]; }
wait_for "the plan runs to its restore step" 90 restored "$P"
assert_eq "block 1's step is done once the next boot registered" "done" "$(step "$P" 1)"
assert_match "the host worker logged the new boot" \
    "the worker of test registered again [0-9]+ s after the restart \\(boot bbbbbbbb\\)" "$(cat "$LOG")"

# The restore step restarted the guest (its original definition), and its
# worker has not registered since: the next restart waits for it.
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan booting '["1"]')"
P=$(json .id)
# shellcheck disable=SC2317 # called through wait_for
booting() { grep -qE "test is still booting \(started [0-9]+ s ago, its worker has not registered since\); waiting up to 60 s" "$LOG"; }
wait_for "the apply step waits for the booting guest" 60 booting
assert_eq "it has not restarted it yet" 1 "$(grep -c "restarted guest to register again" "$LOG")"
reg test "$WT" "$C" "$UUID"
cred >"$HV_TMP/guest-auth"
# shellcheck disable=SC2317 # called through wait_for
waiting2() { (($(grep -c "restarted guest to register again" "$LOG") == 2)); }
wait_for "the guest came up and was restarted" 60 waiting2
assert_match "the host worker said it was up, and which boot" "test is up: its worker registered [0-9]+ s after its start \\(boot cccccccc\\); powering it off" "$(cat "$LOG")"
reg test "$WT" "$D" "$UUID"
cred >"$HV_TMP/guest-auth"
wait_for "the second plan runs to its restore step" 90 restored "$P"
assert_eq "its block's step is done" "done" "$(step "$P" 0)"
assert_match "after boot D registered" "registered again [0-9]+ s after the restart \\(boot dddddddd\\)" "$(cat "$LOG")"
touch "$HV_TMP/ended"
hv_finish
