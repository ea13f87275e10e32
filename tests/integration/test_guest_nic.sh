#!/usr/bin/env bash
# The guest's side of guest_mtu and net_queues: a guest worker (its NIC in
# a temporary --sysfs-root tree: eth0 with the default route, MTU 1500,
# one queue) sets its own NIC before each job of a plan varying them and
# reads it back into observed.settings; a level it cannot set (more queues
# than the tree shows: the ioctl acts on the running kernel only) fails
# the job naming the factor, the level and why. The host worker is played
# with curl: it answers every step with its levels read back.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }
ROOT=$HV_TMP/groot
mkdir -p "$ROOT/proc/net" "$ROOT/sys/class/net/eth0/queues/rx-0" "$ROOT/sys/class/net/eth0/queues/tx-0"
printf 'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\neth0\t00000000\t0202000A\t0003\t0\t0\t0\t00000000\t0\t0\t0\n' \
    >"$ROOT/proc/net/route"
echo 1500 >"$ROOT/sys/class/net/eth0/mtu"

hv_register gn-host host
HOST_AUTH=${W[1]}
# The host worker: every step read back at its levels, its own baseline
# jobs answered at once; stops at the flag file.
fake_host() {
    local out=$HV_TMP/claim-host id att kind body
    while [[ ! -e $HV_TMP/ended ]]; do
        curl -s --max-time 20 -o "$out" -H "$HOST_AUTH" -H 'Content-Type: application/json' \
            --data-binary '{"wait":2}' "$URL/api/v1/jobs/claim" || continue
        [[ -s $out ]] || continue
        kind=$(jq -r 'if .step then "step" elif .job then "job" else "" end' "$out")
        if [[ $kind == step ]]; then
            id=$(jq -r .step.id "$out") att=$(jq -r .step.attempt "$out")
            body=$(jq -c --argjson a "$att" '{attempt: $a, status: "ok",
                settings: (.step.levels | with_entries(.value = {level: .value, read_back: .value,
                    source: "test"}))}' "$out")
            curl -s --max-time 10 -o /dev/null -H "$HOST_AUTH" -H 'Content-Type: application/json' \
                --data-binary "$body" "$URL/api/v1/steps/$id/result"
        elif [[ $kind == job ]]; then
            id=$(jq -r .job.id "$out") att=$(jq -r .job.attempt "$out")
            curl -s --max-time 10 -o /dev/null -H "$HOST_AUTH" -H 'Content-Type: application/json' \
                --data-binary "{\"attempt\":$att,\"status\":\"ok\",\"metrics\":[{\"name\":\"cpu.score\",\"value\":100,\"unit\":\"score\"}]}" \
                "$URL/api/v1/jobs/$id/result"
        fi
    done
}
fake_host >"$HV_TMP/fake-host.log" 2>&1 &
HV_WORKER_PIDS+=($!)
hv_start_worker gn-guest --kind guest --sysfs-root "$ROOT" --poll 1 --wait 2

plan() { # NAME FACTORS
    jq -c --arg n "$1" --argjson f "$2" '.name = $n
        | .targets = {host: "gn-host", guests: {domains: ["gn-guest"]}} | .allow_restart = true
        | .workloads[0].params.seconds = 1 | .repetitions = {min: 1} | .order = "sequential"
        | .factors = $f' "$HV_ROOT/examples/quick.json"
}
# shellcheck disable=SC2317 # called through wait_for
ended() { [[ $(sql "SELECT status FROM plan_steps WHERE plan_id = $P AND kind = 'restore'") =~ ^(done|failed)$ ]]; }
# The guest's jobs: level:status:error, in block order.
guest_jobs() {
    sql "SELECT string_agg(c.levels->>'$1' || ':' || j.status || ':' || coalesce(j.error, ''), ' ' ORDER BY j.block)
         FROM jobs j JOIN configurations c ON c.id = j.config_id WHERE j.plan_id = $P AND j.target_name = 'gn-guest'"
}

# --- guest_mtu: set through the mtu file, read back at both ends --------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan mtu '{"guest_mtu": [1500, 9000]}')"
P=$(json .id)
wait_for "the guest_mtu plan ends" 120 ended
assert_eq "both guest jobs done" "1500:done: 9000:done:" "$(guest_jobs guest_mtu)"
assert_eq "the guest's NIC has the last level" 9000 "$(cat "$ROOT/sys/class/net/eth0/mtu")"
assert_eq "each result holds the level as the guest read it, at the start and the end" \
    "1500|1500|1500|1500|/sys/class/net/eth0/mtu 9000|9000|9000|9000|/sys/class/net/eth0/mtu" \
    "$(sql "SELECT string_agg(concat_ws('|', s->>'level', s->>'read_back', s->>'start', s->>'end', s->>'source'), ' ' ORDER BY j.block)
            FROM jobs j JOIN results r ON r.job_id = j.id AND r.attempt = j.attempt,
                 LATERAL (SELECT r.observed->'settings'->'guest_mtu' AS s) x
            WHERE j.plan_id = $P AND j.target_name = 'gn-guest'")"

# --- net_queues: a count the guest cannot set fails its job ----------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan queues '{"net_queues": [1, 2]}')"
P=$(json .id)
wait_for "the net_queues plan ends" 120 ended
assert_eq "the level the NIC has runs; the other fails naming the factor, the level and why" \
    "1:done: 2:failed:the guest's NIC cannot be set to the configuration's levels: net_queues=2: eth0's channels are set by an ioctl on the running kernel, not under $ROOT" \
    "$(guest_jobs net_queues)"
assert_eq "the failed job's result still holds what the guest read" "2 1 /sys/class/net/eth0/queues/rx-* (1)" \
    "$(sql "SELECT concat_ws(' ', s->>'level', s->>'read_back', s->>'source') FROM jobs j
            JOIN results r ON r.job_id = j.id AND r.attempt = j.attempt,
            LATERAL (SELECT r.observed->'settings'->'net_queues' AS s) x
            WHERE j.plan_id = $P AND j.status = 'failed'")"
touch "$HV_TMP/ended"
hv_finish
