#!/usr/bin/env bash
# Hostile and broken input: every request gets a clear error, nothing is
# stored, and the server keeps running. Also a database restart under a
# running server.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

AUTH_S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
AUTH_W=(-H "Authorization: Bearer $WORKER_TOKEN")
PLAN='{"name":"h","targets":{"host":"hostile-host"},"workloads":[{"id":"cpu","kind":"cpu"}]}'

# problem STATUS CODE: the last answer is a problem document of that kind.
problem() {
    assert_eq "status $1" "$1" "$STATUS"
    assert_match "problem+json content type" 'application/problem\+json' "$CONTENT_TYPE"
    assert_eq "problem code" "$2" "$(json .code)"
    assert_eq "problem status member" "$1" "$(json .status)"
}

# --- bodies -----------------------------------------------------------------
head -c $((2 * 1024 * 1024)) /dev/zero | tr '\0' 'a' >"$HV_TMP/big"
api POST /api/v1/plans "${AUTH_S[@]}" --data-binary @"$HV_TMP/big"
problem 413 body_too_large
api POST /api/v1/plans "${AUTH_S[@]}" -H 'Transfer-Encoding: chunked' --data-binary @"$HV_TMP/big"
problem 413 body_too_large

api POST /api/v1/plans "${AUTH_S[@]}" --data-binary '{"name": "x",'
problem 400 bad_json
assert_match "bad JSON detail names the place" 'line [0-9]+, column [0-9]+' "$(json .detail)"
api POST /api/v1/plans "${AUTH_S[@]}" --data-binary '{"name":"a","name":"b"}'
problem 400 bad_json
api POST /api/v1/plans "${AUTH_S[@]}" --data-binary ''
problem 400 bad_json
printf '%*s' 5000 '' | tr ' ' '[' >"$HV_TMP/deep"
api POST /api/v1/plans "${AUTH_S[@]}" --data-binary @"$HV_TMP/deep"
problem 400 bad_json
printf '{"name":"\xff\xfe","targets":{"host":"h"},"workloads":[]}' >"$HV_TMP/utf8"
api POST /api/v1/plans "${AUTH_S[@]}" --data-binary @"$HV_TMP/utf8"
problem 400 bad_json
api POST /api/v1/plans "${AUTH_S[@]}" --data-binary \
    '{"name":"a\u0000b","targets":{"host":"h"},"workloads":[{"id":"cpu","kind":"cpu"}]}'
problem 400 bad_json
api POST /api/v1/plans "${AUTH_S[@]}" --data-binary '"just a string"'
problem 400 bad_json
api POST /api/v1/plans "${AUTH_S[@]}" --data-binary '[1, 2]'
problem 400 invalid_plan
assert_eq "a plan that is not an object is named at the root" "" "$(json '.errors[0].path')"

# --- tokens and roles ---------------------------------------------------------
api POST /api/v1/plans --data-binary "$PLAN"
problem 401 unauthorized
api POST /api/v1/plans -H "Authorization: Bearer hvb_$(printf '0%.0s' {1..64})" --data-binary "$PLAN"
problem 401 unauthorized
api POST /api/v1/plans -H "Authorization: Basic dXNlcjpwYXNz" --data-binary "$PLAN"
problem 401 unauthorized
api POST /api/v1/plans "${AUTH_W[@]}" --data-binary "$PLAN"
problem 403 forbidden
api POST /api/v1/plans -H "Authorization: Bearer $READ_TOKEN" --data-binary "$PLAN"
problem 403 forbidden
api POST /api/v1/jobs/claim "${AUTH_S[@]}" --data-binary '{"target_id":1}'
problem 403 forbidden
"$SERVER" token create --db "$DB" --role submit --name doomed >"$HV_TMP/doomed"
"$SERVER" token revoke --db "$DB" --name doomed
api POST /api/v1/plans -H "Authorization: Bearer $(cat "$HV_TMP/doomed")" --data-binary "$PLAN"
problem 401 unauthorized
# A token used (and so believed for a second) then revoked by another
# process: refused once that second has passed.
"$SERVER" token create --db "$DB" --role read --name brief >"$HV_TMP/brief"
api GET /api/v1/plans -H "Authorization: Bearer $(cat "$HV_TMP/brief")"
assert_eq "a read token reads" 200 "$STATUS"
"$SERVER" token revoke --db "$DB" --name brief
sleep 1.2
api POST /api/v1/plans -H "Authorization: Bearer $(cat "$HV_TMP/brief")" --data-binary "$PLAN"
problem 401 unauthorized
api POST /api/v1/plans -H "Authorization: Bearer $ADMIN_TOKEN" --data-binary "$PLAN"
assert_eq "admin may submit" 201 "$STATUS"

# --- paths and methods --------------------------------------------------------
api GET /api/v1/nothing-here
problem 404 not_found
for id in 0 abc 99999999999999999999 -1 1.5; do
    api GET "/api/v1/plans/$id"
    problem 404 not_found
done
api GET /api/v1/plans/424242
problem 404 not_found
api DELETE /api/v1/plans
problem 405 method_not_allowed
allow=$(curl -s -o /dev/null -D - -X PUT "$URL/api/v1/plans" | tr -d '\r' | sed -n 's/^Allow: //Ip')
assert_eq "405 names the allowed methods" "GET, HEAD, POST" "$allow"
api GET "/api/v1/plans?limit=0"
problem 400 invalid_request
api GET "/api/v1/$(printf 'x%.0s' {1..3000})"
assert_match "an over-long URL is refused" '^(414|404)$' "$STATUS"
assert_status 404 GET /../../etc/passwd --path-as-is
assert_status 404 GET /web/app.js

# --- the worker protocol -------------------------------------------------------
api POST /api/v1/workers/register "${AUTH_W[@]}" --data-binary '{"name":"","kind":"host","facts":{}}'
problem 400 invalid_request
api POST /api/v1/workers/register "${AUTH_W[@]}" --data-binary '{"name":"x","kind":"vm","facts":[]}'
problem 400 invalid_request
assert_eq "both bad members named" "/kind /facts" "$(json '[.errors[].path] | join(" ")')"
hv_register hostile-host host '{"cpus":1}'
TID=$TARGET
api POST /api/v1/jobs/claim "${W[@]}" --data-binary "{\"target_id\":$TID}"
assert_eq "the admin's plan gives a job" 200 "$STATUS"
JOB=$(json .job.id)
api POST "/api/v1/jobs/$JOB/result" "${W[@]}" --data-binary '{"attempt":7,"status":"ok","metrics":[{"name":"m","value":1}]}'
problem 403 forbidden
api POST "/api/v1/jobs/$JOB/result" "${W[@]}" --data-binary '{"attempt":1,"status":"ok","metrics":[]}'
problem 400 invalid_request
api POST "/api/v1/jobs/$JOB/result" "${W[@]}" --data-binary \
    '{"attempt":1,"status":"ok","metrics":[{"name":"m","value":"fast"}],"started_at":"yesterday"}'
problem 400 invalid_request
assert_eq "bad metric and time named" "/metrics/0/value /started_at" "$(json '[.errors[].path] | join(" ")')"
api POST /api/v1/jobs/999999/result "${W[@]}" --data-binary '{"attempt":1,"status":"ok","metrics":[{"name":"m","value":1}]}'
problem 404 not_found
count=$("$PG" psql "$HV_TMP/pg" -- -Atc 'SELECT count(*) FROM results')
assert_eq "no refused upload stored anything" 0 "$count"

# --- garbage on the socket --------------------------------------------------------
for i in $(seq 1 50); do
    head -c 2048 /dev/urandom >"$HV_TMP/noise"
    curl -s -o /dev/null --max-time 5 -X POST "${AUTH_S[@]}" --data-binary @"$HV_TMP/noise" \
        "$URL/api/v1/plans" || true
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT" && head -c 512 /dev/urandom >&3) 2>/dev/null || true
done
assert_status 200 GET /healthz
assert_eq "server still running" 0 "$(kill -0 "$HV_SERVER_PID" 2>/dev/null; echo $?)"
plans=$("$PG" psql "$HV_TMP/pg" -- -Atc 'SELECT count(*) FROM plans')
assert_eq "only the admin's plan was stored" 1 "$plans"

# --- a database restart ----------------------------------------------------------
"$PG" stop "$HV_TMP/pg" >/dev/null
api GET /api/v1/plans
problem 503 db_unavailable
assert_status 503 GET /readyz
assert_status 200 GET /healthz
HVBENCH_PG_FAST=1 "$PG" start "$HV_TMP/pg" >/dev/null
assert_status 200 GET /api/v1/plans
assert_eq "the plan survived the restart" 1 "$(json '.items | length')"
assert_status 200 GET /readyz

# A transaction whose connection the restart closed, its token answered
# from the cache (no lookup before it): its BEGIN, sent with its first
# statement, fails, and it runs again on a new connection. Three
# submissions, so each server thread's first call after the restart is one.
"$PG" stop "$HV_TMP/pg" >/dev/null
HVBENCH_PG_FAST=1 "$PG" start "$HV_TMP/pg" >/dev/null
for i in 1 2 3; do
    api POST /api/v1/plans -H "Authorization: Bearer $ADMIN_TOKEN" --data-binary "$PLAN"
    assert_eq "submission $i after the second restart is stored" 201 "$STATUS"
done
plans=$("$PG" psql "$HV_TMP/pg" -- -Atc 'SELECT count(*) FROM plans')
assert_eq "the three submissions are stored once each" 4 "$plans"

hv_finish
