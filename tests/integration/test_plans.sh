#!/usr/bin/env bash
# The plan API against the real server and database: the example plans
# validate and expand to the expected counts, invalid plans get 400/422 with
# their paths, cancel and Idempotency-Key work, the read API filters and
# pages, and the access matrix (role x endpoint) holds.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
W=(-H "Authorization: Bearer $WORKER_TOKEN")
A=(-H "Authorization: Bearer $ADMIN_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }

# --- guests by label come from registered targets ------------------------------
for i in $(seq 1 8); do
    api POST /api/v1/workers/register "${W[@]}" --data-binary \
        "{\"name\":\"nb$i\",\"kind\":\"guest\",\"facts\":{\"cpus\":1},\"labels\":{\"pool\":\"net-bench\"}}"
done
assert_eq "labelled guest registered" 200 "$STATUS"
assert_status 200 GET "/api/v1/targets?label=pool=net-bench"
assert_eq "8 targets carry the label" 8 "$(json '.items | length')"
assert_eq "labels are kept" net-bench "$(json '.items[0].labels.pool')"
TID=$(json '.items[0].id')
assert_status 200 GET "/api/v1/targets/$TID"
assert_eq "a target shows its facts" 1 "$(json .facts.cpus)"
assert_status 200 GET "/api/v1/targets?kind=host"
assert_eq "no host registered yet" 0 "$(json '.items | length')"
assert_status 400 GET "/api/v1/targets?label=nolabel"
assert_status 404 GET /api/v1/targets/999999

# --- example plans: dry run counts (configs, workloads, targets, jobs, groups) --
dry() { # FILE CONFIGS WORKLOADS TARGETS JOBS GROUPS
    api POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary @"$HV_ROOT/examples/$1"
    assert_eq "$1 dry run" 200 "$STATUS"
    assert_eq "$1 counts" "$2 $3 $4 $5 $6" \
        "$(json '.counts | "\(.configurations) \(.workloads) \(.targets) \(.jobs) \(.groups)"')"
}
dry quick.json 1 1 1 3 0
dry cpu-pinning-ept.json 4 1 9 99 12
dry disk-iozone.json 3 1 9 75 9
dry net-ramp.json 2 2 9 528 96
assert_eq "dry runs store nothing" 0 "$(sql 'SELECT count(*) FROM plans')"
api POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary @"$HV_ROOT/examples/net-ramp.json"
assert_eq "the run order lists every job" 528 "$(json '.run_order | length')"
assert_eq "a net group starts with its server" server "$(json '.run_order[0].role')"
assert_eq "the seed is recorded" true "$(json '.plan.seed | type == "number"')"

# --- invalid plans: status and JSON paths --------------------------------------
bad() { # STATUS 'PATHS' JQ-EDIT-OF-QUICK
    jq "$3" "$HV_ROOT/examples/quick.json" >"$HV_TMP/bad.json"
    api POST /api/v1/plans "${S[@]}" --data-binary @"$HV_TMP/bad.json"
    assert_eq "$3 -> $1" "$1" "$STATUS"
    assert_eq "$3 paths" "$2" "$(json '[.errors[].path] | sort | join(" ")')"
}
bad 400 "/workloads/0/kind" '.workloads[0].kind = "gpu"'
bad 400 "/repetitions/min /workloads/0/params/seconds" \
    '.workloads[0].params.seconds = "soon" | .repetitions.min = 0'
bad 422 "/factors/warp" '.factors = {"warp": ["off", "on"]}'
bad 422 "/factors/thp/1" '.factors = {"thp": ["always", "sometimes"]}'
bad 422 "/workloads/0/params/peer" '.workloads = [{"id": "n", "kind": "net"}] | .targets.guests = {"domains": ["g"]}'
bad 422 "/targets/guests/label" '.targets.guests = {"label": "pool=nobody"}'
bad 400 "/targets/guests" '.targets.guests = {"domains": ["a"], "label": "x=y"}'
jq -n '{name: "deep", targets: {host: "h"}, workloads: [{id: "c", kind: "cpu", params: {}}],
        description: "x"} | .factors = ([range(40)] | reduce .[] as $i ({}; {a: .}))' >"$HV_TMP/deep.json"
api POST /api/v1/plans "${S[@]}" --data-binary @"$HV_TMP/deep.json"
assert_eq "deep nesting refused" 400 "$STATUS"
assert_match "deep nesting explained" 'deeper than 32' "$(json '.errors[0].message')"
assert_eq "no invalid plan stored" 0 "$(sql 'SELECT count(*) FROM plans')"

# --- idempotency ---------------------------------------------------------------
jq '.targets.host = "plans-host" | .workloads[0].params.seconds = 1' \
    "$HV_ROOT/examples/quick.json" >"$HV_TMP/plan.json"
api POST /api/v1/plans "${S[@]}" -H 'Idempotency-Key: run-42' --data-binary @"$HV_TMP/plan.json"
assert_eq "first submit" 201 "$STATUS"
P1=$(json .id)
replayed=$(curl -s -o "$HV_TMP/replay" -D - -X POST "${S[@]}" -H 'Idempotency-Key: run-42' \
    --data-binary @"$HV_TMP/plan.json" "$URL/api/v1/plans" | tr -d '\r')
assert_match "retry answers 200" '^HTTP/1.1 200' "$replayed"
assert_match "retry is marked replayed" 'Idempotency-Replayed: true' "$replayed"
assert_eq "retry returns the first plan" "$P1" "$(jq .id "$HV_TMP/replay")"
assert_eq "one plan stored" 1 "$(sql 'SELECT count(*) FROM plans')"
assert_eq "its jobs once" 3 "$(sql 'SELECT count(*) FROM jobs')"
jq '.name = "other"' "$HV_TMP/plan.json" >"$HV_TMP/other.json"
api POST /api/v1/plans "${S[@]}" -H 'Idempotency-Key: run-42' --data-binary @"$HV_TMP/other.json"
assert_eq "same key, other body" 409 "$STATUS"
assert_eq "the conflict is named" idempotency_key_reused "$(json .code)"
api POST /api/v1/plans -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Idempotency-Key: run-42' \
    --data-binary @"$HV_TMP/other.json"
assert_eq "keys are per token" 201 "$STATUS"
PA=$(json .id)
api POST /api/v1/plans "${S[@]}" -H "Idempotency-Key: $(printf 'k%.0s' {1..200})" \
    --data-binary @"$HV_TMP/plan.json"
assert_eq "an over-long key is refused" 400 "$STATUS"

# --- cancel: queued jobs at once, a running one at its next heartbeat ----------
jq '.workloads[0].params.seconds = 60 | .repetitions.min = 2' "$HV_TMP/plan.json" >"$HV_TMP/long.json"
api POST /api/v1/plans "${S[@]}" --data-binary @"$HV_TMP/long.json"
P2=$(json .id)
# The first plan has to finish before the long one starts (run order is per
# plan); the worker runs both.
hv_start_worker plans-host --poll 1
running() { [[ $(sql "SELECT count(*) FROM jobs WHERE plan_id = $P2 AND status = 'running'") == 1 ]]; }
wait_for "the long plan starts" 90 running
assert_status 200 POST "/api/v1/plans/$P2/cancel" "${S[@]}"
assert_eq "cancelled" cancelled "$(json .status)"
assert_eq "every job cancelled" 2 "$(json .jobs.cancelled)"
worker_idle() { grep -q "cancel" "$HV_TMP/worker-plans-host.log"; }
wait_for "the worker hears of it within a heartbeat" 40 worker_idle
assert_eq "nothing was uploaded for it" 0 \
    "$(sql "SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id WHERE j.plan_id = $P2")"
assert_status 200 POST "/api/v1/plans/$P2/cancel" "${S[@]}"
done_p1() { [[ $(curl -s "$URL/api/v1/plans/$P1" | jq -r .status) == done ]]; }
wait_for "the first plan finishes" 60 done_p1
done_pa() { [[ $(curl -s "$URL/api/v1/plans/$PA" | jq -r .status) == done ]]; }
wait_for "the admin's plan finishes" 60 done_pa
assert_status 409 POST "/api/v1/plans/$P1/cancel" "${S[@]}"
assert_status 404 POST /api/v1/plans/999999/cancel "${S[@]}"

# --- read API: filters, pages, jobs, results ---------------------------------------
for i in 1 2 3 4 5; do
    jq ".name = \"bulk\" | .targets.host = \"bulk-host\"" "$HV_TMP/plan.json" >"$HV_TMP/bulk.json"
    api POST /api/v1/plans "${S[@]}" --data-binary @"$HV_TMP/bulk.json"
done
assert_status 200 GET "/api/v1/plans?name=bulk&limit=2"
assert_eq "page 1" 2 "$(json '.items | length')"
C=$(json .next_cursor)
assert_status 200 GET "/api/v1/plans?name=bulk&limit=2&cursor=$C"
assert_eq "page 2" 2 "$(json '.items | length')"
C=$(json .next_cursor)
assert_status 200 GET "/api/v1/plans?name=bulk&limit=2&cursor=$C"
assert_eq "page 3" "1 null" "$(json '"\(.items | length) \(.next_cursor)"')"
assert_status 200 GET "/api/v1/plans?status=cancelled"
assert_eq "status filter" "$P2" "$(json '[.items[].id] | join(",")')"
assert_status 200 GET "/api/v1/plans?target=plans-host&status=done"
assert_eq "target filter" "$PA,$P1" "$(json '[.items[].id] | join(",")')"
assert_status 200 GET "/api/v1/plans?target=plans-host"
assert_eq "target filter, any status" "$P2,$PA,$P1" "$(json '[.items[].id] | join(",")')"
assert_status 200 GET "/api/v1/plans?since=2999-01-01"
assert_eq "since filter" 0 "$(json '.items | length')"
assert_status 400 GET "/api/v1/plans?status=sleeping&since=yesterday&limit=9999"
assert_eq "every bad argument named" "status since limit" "$(json '[.errors[].path] | join(" ")')"

assert_status 200 GET "/api/v1/plans/$P1/jobs?limit=2"
assert_eq "jobs page" "2 1" "$(json '"\(.items | length) \(.next_cursor)"')"
JOB=$(json '.items[0].id')
assert_eq "a job names its configuration" default "$(json '.items[0].configuration')"
assert_status 200 GET "/api/v1/plans/$P1/jobs?status=done"
assert_eq "all done" 3 "$(json '.items | length')"
assert_status 200 GET "/api/v1/jobs/$JOB"
assert_eq "job detail has its workload" cpu "$(json .spec.kind)"
assert_status 200 GET "/api/v1/jobs/$JOB/results"
assert_eq "one result" 1 "$(json '.items | length')"
assert_eq "its metrics" true "$(json '[.items[0].metrics[].name] | index("cpu.score") != null')"
assert_eq "its samples" true "$(json '.items[0].samples | length > 0')"
assert_status 200 GET "/api/v1/jobs/$JOB/results?samples=0"
assert_eq "samples left out" null "$(json '.items[0].samples')"
assert_status 404 GET /api/v1/jobs/999999/results
assert_status 404 GET /api/v1/plans/999999/jobs

# --- catalogue and tokens --------------------------------------------------------
assert_status 200 GET /api/v1/catalog
assert_eq "catalogue lists vcpu_pin" live "$(json '.factors[] | select(.name == "vcpu_pin") | .disruption')"
assert_eq "catalogue lists fio" true "$(json '[.engines[] | select(.engine == "fio")] | length == 1')"
assert_status 201 POST /api/v1/tokens "${A[@]}" --data-binary '{"name":"ci","role":"submit"}'
NEW=$(json .token)
NEW_ID=$(json .id)
assert_status 409 POST /api/v1/tokens "${A[@]}" --data-binary '{"name":"ci","role":"read"}'
assert_status 400 POST /api/v1/tokens "${A[@]}" --data-binary '{"name":"x","role":"root"}'
assert_status 201 POST "/api/v1/plans?dry_run=0" -H "Authorization: Bearer $NEW" --data-binary @"$HV_TMP/plan.json"
assert_status 200 GET /api/v1/tokens "${A[@]}"
assert_eq "tokens are listed without secrets" false "$(json '[.items[] | has("token") or has("hash")] | any')"
assert_status 200 POST "/api/v1/tokens/$NEW_ID/revoke" "${A[@]}"
assert_status 401 POST /api/v1/plans -H "Authorization: Bearer $NEW" --data-binary @"$HV_TMP/plan.json"
assert_eq "hashes only in the database" 0 "$(sql "SELECT count(*) FROM tokens WHERE encode(hash, 'escape') LIKE 'hvb_%'")"

# --- access matrix: role x endpoint ---------------------------------------------------
# Each row: METHOD PATH BODY and the expected outcome for none read worker
# submit admin credential: "ok" means the request got past authentication
# (whatever the handler then said), a number is the exact status.
# "credential" is the worker credential a registration issues: the only
# key to the job calls, which no token opens, not even admin's.
hv_register matrix-host
declare -A TOK=([none]="" [read]="$READ_TOKEN" [worker]="$WORKER_TOKEN" [submit]="$SUBMIT_TOKEN"
    [admin]="$ADMIN_TOKEN" [credential]="${W[1]#Authorization: Bearer }")
ROLES=(none read worker submit admin credential)
matrix() {
    local method=$1 path=$2 body=$3
    shift 3
    local i role expect args
    for i in "${!ROLES[@]}"; do
        role=${ROLES[$i]}
        expect=${!i+x}
        expect=$1
        shift
        args=()
        [[ -n ${TOK[$role]} ]] && args=(-H "Authorization: Bearer ${TOK[$role]}")
        [[ $method == POST ]] && args+=(--data-binary "$body")
        api "$method" "$path" "${args[@]}"
        if [[ $expect == ok ]]; then
            assert_match "$role $method $path passes auth" '^([2345][0-9][0-9])$' "$STATUS"
            [[ $STATUS == 401 || $STATUS == 403 ]] && hv_check 0 "$role $method $path" "got $STATUS"
        else
            assert_eq "$role $method $path" "$expect" "$STATUS"
        fi
    done
}
matrix GET /healthz '' ok ok ok ok ok ok
matrix GET /api/v1/plans '' ok ok ok ok ok ok
matrix GET "/api/v1/plans/$P1/report" '' ok ok ok ok ok ok
matrix POST /api/v1/plans '{}' 401 403 403 ok ok 403
matrix POST "/api/v1/plans/$P1/cancel" '' 401 403 403 ok ok 403
matrix POST /api/v1/workers/register '{}' 401 403 ok 403 ok ok
matrix POST /api/v1/jobs/claim '{}' 401 403 403 403 403 ok
matrix POST "/api/v1/jobs/$JOB/heartbeat" '{}' 401 403 403 403 403 ok
matrix POST "/api/v1/jobs/$JOB/release" '{}' 401 403 403 403 403 ok
matrix POST "/api/v1/jobs/$JOB/result" '{}' 401 403 403 403 403 ok
matrix GET /api/v1/tokens '' 401 403 403 403 ok 403
matrix POST /api/v1/tokens '{}' 401 403 403 403 ok 403
matrix POST "/api/v1/tokens/$NEW_ID/revoke" '' 401 403 403 403 ok 403
NB1=$(sql "SELECT id FROM targets WHERE name = 'nb1'")
matrix POST "/api/v1/targets/$NB1/free" '' 401 403 403 403 ok 403

hv_finish
