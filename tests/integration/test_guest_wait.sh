#!/usr/bin/env bash
# An apply step that restarts a guest succeeds only once the guest's worker
# registered again. The host worker runs against libvirt's test driver
# (test:///default, whose domain "test" runs; its restart is immediate);
# the guest's worker is played with curl, registered by the domain's UUID
# (so as the host's guest: target gw-host/test).
# Block 0 (iothreads=0, the domain's own level) restarts nothing; block 1
# (iothreads=1) restarts "test", and its step stays running until the
# guest signs off and registers again, newer than the restart. A second
# plan whose guest never comes back fails its step after --guest-wait,
# naming the domain and how long the step waited. The route the host
# worker asks is for host workers only.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
R=(-H "Authorization: Bearer $READ_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }
UUID=6695eb01-f6a4-8304-79aa-97f2502e193f # the test driver's domain "test"

hv_start_worker gw-host --libvirt test:///default --kind host --wait 2 --guest-wait 120
HOST_PID=${HV_WORKER_PIDS[-1]}
# shellcheck disable=SC2317 # called through wait_for
host_registered() { [[ $(sql "SELECT count(*) FROM targets WHERE name = 'gw-host' AND facts ? 'libvirt'") == 1 ]]; }
wait_for "the host worker registers with its domains" 30 host_registered
hv_register test guest "{\"dmi_product_uuid\":\"$UUID\"}"
GUEST_AUTH=${W[1]}
FIRST=$(sql "SELECT max(w.id) FROM workers w JOIN targets t ON t.id = w.target_id WHERE t.name = 'gw-host/test'")

# --- the route: host workers only ------------------------------------------------
hv_register gw-other-host host
HOST_AUTH=${W[1]}
assert_status 200 GET "/api/v1/workers/guest?uuid=${UUID^^}" -H "$HOST_AUTH"
assert_eq "a host worker learns the guest's newest registration, by UUID in any case" \
    "$UUID $FIRST test" "$(json -r '[.uuid, (.registration.worker_id | tostring), .registration.target] | join(" ")')"
assert_status 200 GET "/api/v1/workers/guest?uuid=00000000-0000-0000-0000-000000000000" -H "$HOST_AUTH"
assert_eq "a UUID no guest registered with has none" null "$(json -c .registration)"
assert_status 400 GET "/api/v1/workers/guest?uuid=../../etc" -H "$HOST_AUTH"
assert_eq "a malformed UUID is refused, at the argument" uuid "$(json -r '.errors[0].path')"
assert_status 403 GET "/api/v1/workers/guest?uuid=$UUID" -H "$GUEST_AUTH"
assert_status 403 GET "/api/v1/workers/guest?uuid=$UUID" "${R[@]}"
api POST /api/v1/workers/deregister -H "$HOST_AUTH"

echo "$GUEST_AUTH" >"$HV_TMP/guest-auth"
hv_fake_guest >"$HV_TMP/fake-guest.log" 2>&1 &
HV_WORKER_PIDS+=($!)

plan() { # NAME
    jq -c --arg n "$1" '.name = $n | .targets = {host: "gw-host", guests: {domains: ["test"]}}
        | .allow_restart = true | .factors = {iothreads: ["0", "1"]} | .order = "sequential"
        | .workloads[0].params.seconds = 1 | .repetitions = {min: 1}' "$HV_ROOT/examples/quick.json"
}
step() { # PLAN BLOCK -> status
    sql "SELECT status FROM plan_steps WHERE plan_id = $1 AND kind = 'apply' AND block = $2"
}

# --- the restarted guest registers again: the step goes on ------------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan back)"
P=$(json .id)
# shellcheck disable=SC2317 # called through wait_for
waiting() { grep -q "step .*: waiting up to 120 s for the worker of 1 restarted guest" "$HV_TMP/worker-gw-host.log"; }
wait_for "block 1's step restarted the guest and waits for its worker" 90 waiting
assert_eq "block 0 restarted nothing and is done; block 1's step runs while it waits" "done running" \
    "$(step "$P" 0) $(step "$P" 1)"
assert_eq "block 1's job waits too" queued \
    "$(sql "SELECT j.status FROM jobs j WHERE j.plan_id = $P AND j.block = 1 AND j.target_name = 'gw-host/test'")"
# The guest's worker signs off as the guest powers off, and registers again
# once it is up.
api POST /api/v1/workers/deregister -H "$GUEST_AUTH"
hv_register test guest "{\"dmi_product_uuid\":\"$UUID\"}"
echo "${W[1]}" >"$HV_TMP/guest-auth"
SECOND=$(sql "SELECT max(w.id) FROM workers w JOIN targets t ON t.id = w.target_id WHERE t.name = 'gw-host/test'")
# shellcheck disable=SC2317 # called through wait_for
plan_done() { [[ $(sql "SELECT status FROM plan_steps WHERE plan_id = $P AND kind = 'restore'") =~ ^(done|failed)$ ]]; }
wait_for "the plan runs to its restore step" 120 plan_done
assert_eq "block 1's step is done once the guest registered again" "done" "$(step "$P" 1)"
assert_eq "it finished after that registration" t \
    "$(sql "SELECT s.finished_at >= w.created_at FROM plan_steps s, workers w WHERE s.plan_id = $P AND s.kind = 'apply' AND s.block = 1 AND w.id = $SECOND")"
assert_match "the host worker logged it" "the worker of test registered again" "$(cat "$HV_TMP/worker-gw-host.log")"
assert_eq "every job of the plan is done" "3 0" \
    "$(sql "SELECT count(*) FILTER (WHERE status = 'done') || ' ' || count(*) FILTER (WHERE status <> 'done') FROM jobs WHERE plan_id = $P")"

# --- a guest that never comes back fails the step -------------------------------
hv_stop_pid "$HOST_PID"
hv_start_worker gw-host --libvirt test:///default --kind host --wait 2 --guest-wait 3
# shellcheck disable=SC2317 # called through wait_for
host_back() { [[ $(sql "SELECT count(*) FROM workers w JOIN targets t ON t.id = w.target_id WHERE t.name = 'gw-host' AND w.ended_at IS NULL") == 1 ]]; }
wait_for "the host worker is back with --guest-wait 3" 30 host_back
# The guest's worker runs block 0's job and never registers again.
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan gone)"
P=$(json .id)
# shellcheck disable=SC2317 # called through wait_for
failed() { [[ $(step "$P" 1) == failed ]]; }
wait_for "block 1's step fails" 90 failed
assert_eq "naming the domain and how long it waited" \
    "test was restarted and its worker did not register again within 3 s (waited 3 s for a registration of DMI product UUID $UUID; --guest-wait)" \
    "$(sql "SELECT regexp_replace(error, 'waited [0-9]+ s', 'waited 3 s') FROM plan_steps WHERE plan_id = $P AND kind = 'apply' AND block = 1")"
# shellcheck disable=SC2317 # called through wait_for
restored() { [[ $(sql "SELECT status FROM plan_steps WHERE plan_id = $P AND kind = 'restore'") == "done" ]]; }
wait_for "the restore step still runs" 60 restored
touch "$HV_TMP/ended"
hv_finish
