#!/usr/bin/env bash
# A plan's summary is kept, not counted (migrations/016_plan_job_counts.sql):
# jobs are moved through every path that changes their state — added by a
# submission, an import and SQL, claimed, done, failed by an error result,
# released, sent back and failed by lease expiries, retried, cancelled
# (queued and running), deleted one by SQL and with their plan — and after
# each step the kept counts and times of every plan and target are those a
# COUNT(*) over the jobs gives, and the plan's summary in the API says the
# same.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN" -H 'Content-Type: application/json')
A=(-H "Authorization: Bearer $ADMIN_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -X -Atq -v ON_ERROR_STOP=1 -c "$1"; }

# What a COUNT(*) over the jobs gives, per plan and target, as kept.
COUNTED="SELECT plan_id, target_name, count(*), count(*) FILTER (WHERE status = 'queued'),
  count(*) FILTER (WHERE status = 'running'), count(*) FILTER (WHERE status = 'done'),
  count(*) FILTER (WHERE status = 'failed'), count(*) FILTER (WHERE status = 'cancelled'),
  min(first_claimed_at), max(state_at), max(finished_at) FROM jobs GROUP BY 1, 2"
KEPT="SELECT plan_id, target_name, total, queued, running, done, failed, cancelled,
  started_at, state_at, finished_max FROM plan_job_counts"

# same STEP [PLAN [sql]]: the kept rows are the counted ones, none more or
# fewer; with PLAN, its summary in the API counts as its jobs do. A change
# made through the server shows on the next read; one made by SQL, behind
# the server's back, within its --plan-cache-ms: with "sql" the summary is
# read again until it agrees, up to a deadline of 10 s.
same() {
    assert_eq "$1: kept = counted" "0" \
        "$(sql "SELECT count(*) FROM (($KEPT EXCEPT ALL $COUNTED) UNION ALL
                                     ($COUNTED EXCEPT ALL $KEPT)) x")"
    [[ -n ${2:-} ]] || return 0
    local want got deadline=$((SECONDS + 10))
    want=$(sql "SELECT concat_ws(' ', count(*), count(*) FILTER (WHERE status = 'queued'),
            count(*) FILTER (WHERE status = 'running'), count(*) FILTER (WHERE status = 'done'),
            count(*) FILTER (WHERE status = 'failed'), count(*) FILTER (WHERE status = 'cancelled'))
            FROM jobs WHERE plan_id = $2")
    while :; do
        api GET "/api/v1/plans/$2"
        got=$(json '.jobs | "\(.total) \(.queued) \(.running) \(.done) \(.failed) \(.cancelled)"')
        [[ $got != "$want" && ${3:-} == sql && $SECONDS -lt $deadline ]] || break
        sleep 0.2
    done
    assert_eq "$1: plan $2's summary" "$want" "$got"
}

# plan HOST REPS [jq edit]: the quick example on HOST, REPS repetitions.
plan() {
    jq --arg h "$1" --argjson n "$2" ".targets.host = \$h | .repetitions.min = \$n | ${3:-.}" \
        "$HV_ROOT/examples/quick.json"
}

# claim: the next job of the registered target (W); sets JOB and ATT.
claim() {
    api POST /api/v1/jobs/claim "${W[@]}" --data-binary '{}'
    [[ $STATUS == 200 ]] || hv_die "claim: $STATUS $BODY"
    JOB=$(json .job.id) ATT=$(json .job.attempt)
}

# result STATUS: the claimed job's result (ok or error).
result() {
    local body
    body=$(jq -n --arg s "$1" --argjson a "$ATT" '{attempt: $a, status: $s,
        started_at: "2026-11-29T10:00:00Z", finished_at: "2026-11-29T10:00:05Z",
        metrics: (if $s == "ok" then [{name: "cpu.score", value: 1000, unit: "score",
                  higher_is_better: true}] else [] end)}
        + (if $s == "error" then {error: "engine failed"} else {} end)')
    assert_status 201 POST "/api/v1/jobs/$JOB/result" "${W[@]}" --data-binary "$body"
}

api POST /api/v1/plans "${S[@]}" --data-binary "$(plan cnt-host 6)"
assert_eq "a plan of 6 jobs" 201 "$STATUS"
P=$(json .id)
same "submitted" "$P"
assert_eq "its row: 6 queued" "6 6" \
    "$(sql "SELECT total || ' ' || queued FROM plan_job_counts WHERE plan_id = $P")"

hv_register cnt-other
OTHER=("${W[@]}")
hv_register cnt-host
claim
same "claimed" "$P"
api POST "/api/v1/jobs/$JOB/heartbeat" "${W[@]}" --data-binary "{\"attempt\": $ATT}"
assert_eq "a heartbeat" 200 "$STATUS"
same "heartbeat" "$P"
result ok
same "done" "$P"

claim
result error
same "failed by an error result" "$P"

claim
assert_status 200 POST "/api/v1/jobs/$JOB/release" "${W[@]}" --data-binary "{\"attempt\": $ATT}"
same "released" "$P"

# Any claim expires the lapsed leases first (here, one of a target with no job).
claim
sql "UPDATE jobs SET lease_until = now() - interval '1 s' WHERE id = $JOB"
api POST /api/v1/jobs/claim "${OTHER[@]}" --data-binary '{}'
assert_eq "the lease expired: queued again" queued "$(sql "SELECT status FROM jobs WHERE id = $JOB")"
same "lease expired, queued again" "$P"
claim
sql "UPDATE jobs SET max_failures = failures + 1, lease_until = now() - interval '1 s' WHERE id = $JOB"
api POST /api/v1/jobs/claim "${OTHER[@]}" --data-binary '{}'
assert_eq "the lease expired for good: failed" failed "$(sql "SELECT status FROM jobs WHERE id = $JOB")"
same "lease expired, failed" "$P"

while [[ $(sql "SELECT count(*) FROM jobs WHERE plan_id = $P AND status = 'queued'") != 0 ]]; do
    claim
    result ok
done
same "the rest done" "$P"
api GET "/api/v1/plans/$P"
assert_eq "the plan failed: 4 done, 2 failed" "failed 4 2" "$(json '"\(.status) \(.jobs.done) \(.jobs.failed)"')"

assert_status 200 POST "/api/v1/plans/$P/retry" "${S[@]}"
assert_eq "two jobs retried" 2 "$(json .retried)"
same "retried (their end cleared)" "$P"
claim
result ok
claim
result ok
same "retried and done" "$P"
api GET "/api/v1/plans/$P"
assert_eq "the plan is done" "done 6" "$(json '"\(.status) \(.jobs.done)"')"

# Cancels: two targets, one job running.
api POST /api/v1/plans "${S[@]}" --data-binary "$(plan cnt-host 2 '.targets.guests = {domains: ["cnt-g1"]}')"
assert_eq "a plan on a host and a guest" 201 "$STATUS"
Q=$(json .id)
same "submitted on two targets" "$Q"
assert_eq "one row per target" 2 "$(sql "SELECT count(*) FROM plan_job_counts WHERE plan_id = $Q")"
claim
same "one of them claimed" "$Q"
assert_status 200 POST "/api/v1/plans/$Q/cancel" "${S[@]}"
same "cancelled" "$Q"
api GET "/api/v1/plans/$Q"
assert_eq "all cancelled" "cancelled 0 0" "$(json '"\(.status) \(.jobs.queued) \(.jobs.running)"')"

# An import adds its jobs one statement each; rows written by SQL count too.
assert_status 200 GET "/api/v1/plans/$P/export"
EXPORT=$BODY
assert_status 201 POST /api/v1/plans/import "${S[@]}" --data-binary "$EXPORT"
I=$(json .id)
same "imported" "$I"
sql "INSERT INTO jobs (plan_id, config_id, workload_id, workload, target_name, repetition, run_order)
     SELECT plan_id, config_id, workload_id, workload, 'cnt-sql', 9, 99 FROM jobs WHERE plan_id = $I LIMIT 1"
same "a job added by SQL" "$I" sql
sql "UPDATE jobs SET status = 'done', finished_at = now() WHERE plan_id = $I AND target_name = 'cnt-sql'"
same "made done by SQL" "$I" sql
sql "UPDATE jobs SET target_name = 'cnt-moved' WHERE plan_id = $I AND target_name = 'cnt-sql'"
same "moved to another target by SQL" "$I" sql
assert_eq "the emptied target has no row" 0 \
    "$(sql "SELECT count(*) FROM plan_job_counts WHERE plan_id = $I AND target_name = 'cnt-sql'")"

# Deletions.
sql "DELETE FROM jobs WHERE id = (SELECT max(id) FROM jobs WHERE plan_id = $I AND target_name = 'cnt-host')"
same "a job deleted by SQL" "$I" sql
sql "DELETE FROM jobs WHERE plan_id = $I AND target_name = 'cnt-moved'"
same "a target's last job deleted" "$I" sql
assert_eq "its row is gone" 0 \
    "$(sql "SELECT count(*) FROM plan_job_counts WHERE plan_id = $I AND target_name = 'cnt-moved'")"
assert_status 200 DELETE "/api/v1/plans/$P" "${A[@]}"
same "a plan deleted"
assert_eq "its rows are gone" 0 "$(sql "SELECT count(*) FROM plan_job_counts WHERE plan_id = $P")"

hv_finish
