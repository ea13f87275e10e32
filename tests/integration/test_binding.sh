#!/usr/bin/env bash
# Workers are bound to what they claimed. Registration issues each worker
# process a credential of its own (hvw_...); job calls take only that; a
# worker that did not claim an attempt gets 403 on its result, heartbeat,
# ready and release, whatever token it holds; a name a live worker holds
# is refused (409) until it signs off, goes silent past --worker-live, or
# an admin frees it; revoking the worker token ends its workers.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
HV_SERVER_ARGS=(--worker-live 10)
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
A=(-H "Authorization: Bearer $ADMIN_TOKEN")
T=(-H "Authorization: Bearer $WORKER_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }

# --- one credential per worker, stored hashed -----------------------------------------
hv_register hv01
HV01=$TARGET WA=("${W[@]}")
assert_match "registration issues a worker credential" '^hvw_[0-9a-f]{64}$' "$(json -r .worker_token)"
assert_eq "the server keeps only its hash" 0 \
    "$(sql "SELECT count(*) FROM workers WHERE encode(hash, 'escape') LIKE 'hvw_%'")"
assert_eq "limits say what a result may hold" true \
    "$(json '.limits.max_result_bytes > 1000000 and .limits.max_samples == 200000')"
assert_eq "the answer names the server's version and job protocol" \
    "$("$SERVER" version | awk '{print $2}') 1" "$(json -r '"\(.server_version) \(.protocol)"')"
hv_register hv02
HV02=$TARGET WB=("${W[@]}")

# --- a worker of another job protocol is refused, saying so ------------------------------
assert_status 409 POST /api/v1/workers/register "${T[@]}" --data-binary \
    '{"name":"hv-future","kind":"host","facts":{},"version":"9.0.0","protocol":99}'
assert_match "the refusal names both versions and what to do" \
    "hvbench 9.0.0\\) speaks job protocol 99, this server \\(hvbench [^)]+\\) speaks 1: install" "$(json -r .detail)"
assert_eq "and registers nothing" 0 "$(sql "SELECT count(*) FROM targets WHERE name = 'hv-future'")"

# --- a name a live worker holds is refused -----------------------------------------------
assert_status 409 POST /api/v1/workers/register "${T[@]}" --data-binary \
    '{"name":"hv01","kind":"host","facts":{"cpus":64}}'
assert_eq "the refusal is target_held" target_held "$(json .code)"
assert_match "it names the holder and the way out" 'held by worker [0-9]+ .*free' "$(json .detail)"
assert_eq "the holder's facts were not overwritten" '{}' \
    "$(sql "SELECT facts FROM targets WHERE name = 'hv01'")"
assert_status 409 POST /api/v1/workers/register "${WB[@]}" --data-binary \
    '{"name":"hv01","kind":"host","facts":{}}'
assert_match "another worker's credential cannot take it either" 'another target' "$(json .detail)"
assert_status 200 POST /api/v1/workers/register "${WA[@]}" --data-binary \
    '{"name":"hv01","kind":"host","facts":{"cpus":2}}'
assert_eq "its own credential re-registers, keeping the credential" "null $HV01" \
    "$(json '"\(.worker_token) \(.target_id)"')"

# --- job calls take the credential, and only the claimer's -------------------------------
jq '.targets.host = "hv01" | .repetitions.min = 1 | .workloads[0].params.seconds = 1' \
    "$HV_ROOT/examples/quick.json" >"$HV_TMP/plan.json"
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary @"$HV_TMP/plan.json"
assert_status 403 POST /api/v1/jobs/claim "${T[@]}" --data-binary "{\"target_id\":$HV01}"
assert_match "a worker token alone cannot claim" 'worker credential' "$(json .detail)"
assert_status 403 POST /api/v1/jobs/claim "${WB[@]}" --data-binary "{\"target_id\":$HV01}"
assert_match "nor can another target's worker" 'another target' "$(json .detail)"
assert_status 204 POST /api/v1/jobs/claim "${WB[@]}" --data-binary '{}'
assert_status 200 POST /api/v1/jobs/claim "${WA[@]}" --data-binary '{}'
JOB=$(json .job.id)
assert_eq "the claim is recorded for its worker" 1 \
    "$(sql "SELECT count(*) FROM job_claims c JOIN workers w ON w.id = c.worker_id JOIN targets t ON t.id = w.target_id WHERE c.job_id = $JOB AND t.name = 'hv01'")"

forged='{"attempt":1,"status":"ok","metrics":[{"name":"cpu.score","value":1e9,"unit":"score"}]}'
for who in WB T A; do
    ref="$who[@]"
    assert_status 403 POST "/api/v1/jobs/$JOB/result" "${!ref}" --data-binary "$forged"
    assert_status 403 POST "/api/v1/jobs/$JOB/heartbeat" "${!ref}" --data-binary '{"attempt":1}'
    assert_status 403 POST "/api/v1/jobs/$JOB/ready" "${!ref}" --data-binary '{"attempt":1}'
    assert_status 403 POST "/api/v1/jobs/$JOB/release" "${!ref}" --data-binary '{"attempt":1}'
done
assert_eq "nothing forged was stored, the job still runs" "0 running" \
    "$(sql "SELECT (SELECT count(*) FROM results) || ' ' || status FROM jobs WHERE id = $JOB")"
assert_status 200 POST "/api/v1/jobs/$JOB/heartbeat" "${WA[@]}" --data-binary '{"attempt":1}'
assert_status 201 POST "/api/v1/jobs/$JOB/result" "${WA[@]}" --data-binary \
    '{"attempt":1,"status":"ok","metrics":[{"name":"cpu.score","value":912.5,"unit":"score"}]}'
assert_eq "the claimer's measurement is the one stored" 912.5 \
    "$(sql "SELECT value FROM metrics m JOIN results r ON r.id = m.result_id WHERE r.job_id = $JOB")"

# --- a silent holder is replaced; its credential then says why ----------------------------
sleep 11 # past --worker-live 10 without a call from hv02's worker
assert_status 200 POST /api/v1/workers/register "${T[@]}" --data-binary \
    '{"name":"hv02","kind":"host","facts":{}}'
WB2=(-H "Authorization: Bearer $(json -r .worker_token)")
assert_eq "the silent worker's target is taken over" "$HV02" "$(json .target_id)"
assert_status 401 POST /api/v1/jobs/claim "${WB[@]}" --data-binary '{}'
assert_match "the replaced credential says why" 'replaced by a new registration' "$(json .detail)"

# --- an admin frees a target ---------------------------------------------------------------
assert_status 403 POST "/api/v1/targets/$HV02/free" "${T[@]}"
assert_status 200 POST "/api/v1/targets/$HV02/free" "${A[@]}"
assert_eq "the freed worker is named" "hv02" "$(json .name)"
assert_status 401 POST /api/v1/jobs/claim "${WB2[@]}" --data-binary '{}'
assert_match "the freed credential says why" 'freed by an admin' "$(json .detail)"
assert_status 200 POST /api/v1/workers/register "${T[@]}" --data-binary \
    '{"name":"hv02","kind":"host","facts":{}}'

# --- a worker process signs off on SIGTERM: its name is free at once ----------------------
hv_start_worker w5
registered() { [[ $(sql "SELECT count(*) FROM workers w JOIN targets t ON t.id = w.target_id WHERE t.name = 'w5' AND w.ended_at IS NULL") == 1 ]]; }
wait_for "worker w5 registers" 30 registered
hv_stop_pid "${HV_WORKER_PIDS[-1]}"
assert_eq "it signed off" "signed off" \
    "$(sql "SELECT ended_reason FROM workers w JOIN targets t ON t.id = w.target_id WHERE t.name = 'w5'")"
assert_eq "and left no credential behind" false \
    "$([[ -e $HV_TMP/state/w5/credential ]] && echo true || echo false)"
assert_status 200 POST /api/v1/workers/register "${T[@]}" --data-binary \
    '{"name":"w5","kind":"host","facts":{}}'

# --- a long poll parked before its worker signed off takes no job ------------------------------
# (a guest powering off: its claim stays parked on the server, whose
# answer would go nowhere and whose job would wait for its lease)
hv_register lp01
LP=("${W[@]}")
curl -s --max-time 30 -o /dev/null -w '%{http_code}' "${LP[@]}" -H 'Content-Type: application/json' \
    --data-binary '{"wait":20}' "$URL/api/v1/jobs/claim" >"$HV_TMP/parked.status" &
PARKED=$!
parked() { [[ $(curl -s "$URL/metrics" | awk '$1 == "hvbench_long_polls_waiting" {print $2}') -ge 1 ]]; }
wait_for "the claim is parked" 10 parked
api POST /api/v1/workers/deregister "${LP[@]}" --data-binary '{}'
assert_eq "its worker signs off" 200 "$STATUS"
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(jq -c '.name = "parked" | .targets.host = "lp01" | .repetitions.min = 1' "$HV_ROOT/examples/quick.json")"
wait "$PARKED"
assert_eq "the parked claim is answered without a job" 204 "$(cat "$HV_TMP/parked.status")"
assert_eq "which stays queued for the next worker" "queued 0" \
    "$(sql "SELECT status || ' ' || attempt FROM jobs WHERE target_name = 'lp01'")"

# --- revoking the worker token ends its workers' credentials --------------------------------
TOKEN_ID=$(sql "SELECT id FROM tokens WHERE name = 'test-worker'")
assert_status 200 POST "/api/v1/tokens/$TOKEN_ID/revoke" "${A[@]}"
assert_status 401 POST /api/v1/jobs/claim "${WA[@]}" --data-binary '{}'

hv_finish
