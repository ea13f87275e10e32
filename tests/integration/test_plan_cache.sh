#!/usr/bin/env bash
# GET /api/v1/plans/{id} answers kept for --plan-cache-ms (server/answer_cache.c):
# a change made through the server (a claim, a result, a cancellation) shows
# on the very next read although the read before it was kept; a change made
# behind the server's back (psql) shows once the kept answer is older than
# the max age, and at once on a second server on the same database with
# --plan-cache-ms 0; /metrics counts the reads answered from the cache and
# from the database; the option's bounds are enforced. No assertion depends
# on how fast anything runs: a hit is asserted among five back-to-back reads
# of one curl, and the psql change on the cached server is waited for with
# a deadline.
set -uo pipefail
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
HV_SERVER_ARGS=(--plan-cache-ms 1000)
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN" -H 'Content-Type: application/json')
R=(-H "Authorization: Bearer $READ_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -X -Atq -v ON_ERROR_STOP=1 -c "$1"; }

# reads URL: the plan read counters of the server at URL, "HITS MISSES".
reads() {
    curl -fsS "${R[@]}" "$1/metrics" |
        awk '/^hvbench_plan_cache_reads_total\{outcome="hit"\}/ {h = $2}
             /^hvbench_plan_cache_reads_total\{outcome="miss"\}/ {m = $2}
             END {print h + 0, m + 0}'
}

# counts: the plan's status and job counts as the last answer says.
counts() {
    json '"\(.status) \(.jobs.queued) \(.jobs.running) \(.jobs.done)"'
}

jq '.targets.host = "cache-host" | .repetitions.min = 3' "$HV_ROOT/examples/quick.json" >"$HV_TMP/plan.json"
api POST /api/v1/plans "${S[@]}" --data-binary @"$HV_TMP/plan.json"
assert_eq "a plan of 3 jobs" 201 "$STATUS"
P=$(json .id)

# Repeated reads: the same answer, counted; a hit among back-to-back reads.
read -r h0 m0 <<<"$(reads "$URL")"
api GET "/api/v1/plans/$P" "${R[@]}"
assert_eq "the plan reads" "200 queued 3 0 0" "$STATUS $(counts)"
first=$BODY
curl -fsS "${R[@]}" -o "$HV_TMP/r1" "$URL/api/v1/plans/$P" -o "$HV_TMP/r2" "$URL/api/v1/plans/$P" \
    -o "$HV_TMP/r3" "$URL/api/v1/plans/$P" -o "$HV_TMP/r4" "$URL/api/v1/plans/$P" \
    -o "$HV_TMP/r5" "$URL/api/v1/plans/$P"
same=0
for i in 1 2 3 4 5; do [[ $(cat "$HV_TMP/r$i") == "$first" ]] && same=$((same + 1)); done
assert_eq "five reads more give the same bytes" 5 "$same"
read -r h1 m1 <<<"$(reads "$URL")"
assert_eq "each of the six reads is counted once, hit or miss" 6 $((h1 - h0 + m1 - m0))
assert_eq "the first read after the submission reads the database" 1 $((m1 - m0 >= 1))
assert_eq "back-to-back reads are answered from the cache" 1 $((h1 - h0 >= 1))

# Changes through this server show on the very next read, although the
# read before each was kept.
hv_register cache-host
api GET "/api/v1/plans/$P" "${R[@]}"
api POST /api/v1/jobs/claim "${W[@]}" --data-binary '{}'
assert_eq "a claim" 200 "$STATUS"
JOB=$(json .job.id) ATT=$(json .job.attempt)
api GET "/api/v1/plans/$P" "${R[@]}"
assert_eq "the claim shows at once" "running 2 1 0" "$(counts)"
body=$(jq -n --argjson a "$ATT" '{attempt: $a, status: "ok", started_at: "2026-11-29T10:00:00Z",
    finished_at: "2026-11-29T10:00:05Z", metrics: [{name: "cpu.score", value: 1000,
    unit: "score", higher_is_better: true}]}')
assert_status 201 POST "/api/v1/jobs/$JOB/result" "${W[@]}" --data-binary "$body"
api GET "/api/v1/plans/$P" "${R[@]}"
assert_eq "the result shows at once" "running 2 0 1" "$(counts)"
assert_status 200 POST "/api/v1/plans/$P/cancel" "${S[@]}"
assert_eq "the cancellation's own answer" "cancelled 0 0 1" "$(counts)"
api GET "/api/v1/plans/$P" "${R[@]}"
assert_eq "the cancellation shows at once" "cancelled 0 0 1" "$(counts)"

# A change behind the server's back shows within the max age: waited for,
# with a deadline far beyond it.
api GET "/api/v1/plans/$P" "${R[@]}"
sql "UPDATE plans SET name = 'renamed-by-sql' WHERE id = $P"
# shellcheck disable=SC2317 # called through wait_for
named() {
    api GET "/api/v1/plans/$P" "${R[@]}"
    [[ $(json .name) == "$1" ]]
}
wait_for "a psql change shows on the cached server within its max age" 20 named renamed-by-sql

# A second server on the same database keeps nothing: the next read after
# a psql change shows it, and its counters stay at 0.
P2=$(hv_free_port) || hv_die "no free TCP port"
"$SERVER" serve --db "$DB" --listen "127.0.0.1:$P2" --web-dir "$HV_ROOT/web" --plan-cache-ms 0 \
    >>"$HV_TMP/server-nocache.log" 2>&1 &
HV_WORKER_PIDS+=($!) # stopped with the workers at the end
URL2=http://127.0.0.1:$P2
for ((i = 0; i < 40; i++)); do
    curl -fsS --max-time 2 -o /dev/null "$URL2/healthz" 2>/dev/null && break
    sleep 0.5
done
curl -fsS --max-time 2 -o /dev/null "$URL2/healthz"
assert_eq "a second server with --plan-cache-ms 0 answers" 0 "$?" || hv_tail "$HV_TMP/server-nocache.log"
for name in one two three; do
    sql "UPDATE plans SET name = 'name-$name' WHERE id = $P"
    BODY=$(curl -fsS "${R[@]}" "$URL2/api/v1/plans/$P")
    assert_eq "--plan-cache-ms 0: the psql change ($name) shows on the next read" "name-$name" \
        "$(json .name)"
done
assert_eq "--plan-cache-ms 0: nothing counted" "0 0" "$(reads "$URL2")"

# The read sums a plan's count rows in C (server/db_plan_read.c); the list
# builds each summary from the plan_summaries view in SQL. In every state
# both say the same, member for member.
sub() {
    jq -c "$1" "$HV_TMP/plan.json" >"$HV_TMP/sub.json"
    api POST /api/v1/plans "${S[@]}" --data-binary @"$HV_TMP/sub.json"
    [[ $STATUS == 201 ]] || hv_die "submitting $1: $STATUS $BODY"
    json .id
}
Q1=$(sub '.targets.host = "sum-h" | .targets.guests = {domains: ["g7", "g1", "g2", "g3", "g4", "g5", "g6"]}')
Q2=$(sub '.targets.host = "sum-run" | .repetitions.min = 8')
Q3=$(sub '.targets.host = "sum-ended" | .repetitions.min = 32')
Q4=$(sub '.targets.host = "sum-wait"')
Q5=$(sub '.targets.host = "sum-none"')
Q6=$(sub '.targets.host = "sum-cancel"')
hv_register sum-run
api POST /api/v1/jobs/claim "${W[@]}" --data-binary '{}'
sql "UPDATE jobs SET status = 'done', finished_at = now() WHERE plan_id = $Q2 AND run_order < 2"
sql "UPDATE jobs SET status = 'done', finished_at = now() - interval '1 day' WHERE plan_id = $Q3 AND run_order < 1"
sql "UPDATE jobs SET status = 'failed', finished_at = now() - interval '2 days' WHERE plan_id = $Q3 AND run_order >= 1"
sql "UPDATE plans SET waiting = '{\"reason\": \"waiting_for_operator\", \"since\": \"2026-01-01T00:00:00Z\", \"detail\": \"run \\\"x\\\"\"}', adaptive = '{\"round\": 2}' WHERE id = $Q4"
sql "INSERT INTO jobs (plan_id, config_id, workload_id, workload, target_name, repetition, run_order)
     SELECT plan_id, config_id, workload_id, workload, E'odd \"name\"\\\t', 9, 99 FROM jobs WHERE plan_id = $Q1 LIMIT 1"
sql "DELETE FROM jobs WHERE plan_id = $Q5"
assert_status 200 POST "/api/v1/plans/$Q6/cancel" "${S[@]}"
BODY=$(curl -fsS "${R[@]}" "$URL2/api/v1/plans?limit=500")
LIST=$BODY
for q in "$Q1" "$Q2" "$Q3" "$Q4" "$Q5" "$Q6"; do
    BODY=$(curl -fsS "${R[@]}" "$URL2/api/v1/plans/$q")
    read_one=$(json -S 'del(.plan)')
    # A list item also names a fleet child's host and parent (host, parent_id).
    listed=$(jq -S --argjson id "$q" '.items[] | select(.id == $id) | del(.host, .parent_id)' <<<"$LIST")
    assert_eq "plan $q ($(json '"\(.status), \(.jobs.total) jobs"')): the read's summary is the list's" \
        "$listed" "$read_one"
done
BODY=$(curl -fsS "${R[@]}" "$URL2/api/v1/plans/$Q1")
assert_eq "the unregistered targets, five named in order" \
    'waiting for targets g1, g2, g3, g4, g5 and 4 more (never registered)' "$(json .waiting.detail)"
# Counts kept in several shards of a target (migrations/034), one of them
# below zero, sum as one: the same summary and the same waiting targets.
sql "INSERT INTO plan_job_count_shards (plan_id, target_name, shard, total, queued, running, done,
       failed, cancelled) SELECT DISTINCT plan_id, target_name, 99, -5, -5, 0, 0, 0, 0
     FROM plan_job_count_shards WHERE plan_id = $Q1;
     UPDATE plan_job_count_shards SET total = total + 5, queued = queued + 5
     WHERE (plan_id, target_name, shard) IN (SELECT DISTINCT ON (target_name) plan_id, target_name,
       shard FROM plan_job_count_shards WHERE plan_id = $Q1 AND shard <> 99
       ORDER BY target_name, shard)"
assert_eq "every target of the plan has two shards" 0 \
    "$(sql "SELECT count(*) FROM (SELECT target_name FROM plan_job_count_shards WHERE plan_id = $Q1
            GROUP BY 1 HAVING count(*) < 2) x")"
BODY=$(curl -fsS "${R[@]}" "$URL2/api/v1/plans/$Q1")
assert_eq "in shards: the unregistered targets, five named in order" \
    'waiting for targets g1, g2, g3, g4, g5 and 4 more (never registered)' "$(json .waiting.detail)"
read_one=$(json -S 'del(.plan)')
listed=$(curl -fsS "${R[@]}" "$URL2/api/v1/plans?limit=500" | jq -S --argjson id "$Q1" '.items[] | select(.id == $id) | del(.host, .parent_id)')
assert_eq "in shards: the read's summary is the list's" "$listed" "$read_one"
BODY=$(curl -fsS "${R[@]}" "$URL2/api/v1/plans/$Q3")
assert_eq "an ended plan's counts, progress and end" "failed 1 31 1 true" \
    "$(json '"\(.status) \(.jobs.done) \(.jobs.failed) \(.progress) \(.finished_at == .updated_at)"')"
BODY=$(curl -fsS "${R[@]}" "$URL2/api/v1/plans/$Q2")
assert_eq "a running plan's progress, rounded to 4 places" "running 0.25" \
    "$(json '"\(.status) \(.progress)"')"

# The option: a config-file key and a variable like the others; bounds.
conf=$HV_TMP/server.json
jq -n '{"plan-cache-ms": 250}' >"$conf"
out=$("$SERVER" serve --config "$conf" --db "$DB" --check-config \
    --migrations-dir "$HV_ROOT/migrations" 2>&1)
assert_match "from the file" "plan-cache-ms = 250
" "$out"
out=$(HVBENCH_SERVER_PLAN_CACHE_MS=0 "$SERVER" serve --config "$conf" --db "$DB" --check-config \
    --migrations-dir "$HV_ROOT/migrations" 2>&1)
assert_match "the environment over the file" "plan-cache-ms = 0
" "$out"
out=$("$SERVER" serve --db "$DB" --check-config --migrations-dir "$HV_ROOT/migrations" 2>&1)
assert_match "the default" "plan-cache-ms = 1000
" "$out"
for bad in 1001 -1 x ''; do
    out=$("$SERVER" serve --db "$DB" --plan-cache-ms "$bad" --check-config 2>&1)
    assert_eq "--plan-cache-ms '$bad': exit 2" 2 "$?"
    assert_eq "--plan-cache-ms '$bad': what is wrong" \
        "hvbench-server: --plan-cache-ms must be an integer between 0 and 1000" "$out"
done

hv_finish
