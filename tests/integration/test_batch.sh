#!/usr/bin/env bash
# Claims and results in batches (server/batch.c): requests that arrive
# together share one statement (claims) or one transaction (results), and
# each still gets the answer it would get alone. A batched call's worker
# credential is looked up with its batch: in one burst, a signed-off
# worker's and an unknown credential answer 401 and the others are served;
# a refused credential answers 401 before a refused body. Bursts of concurrent
# requests: every job handed out once, every claim beyond the queue a 204;
# a result uploaded twice in one burst stored once (one 201, one 200); in
# one burst, a released attempt answers 409, another worker's upload 403, an
# unknown job 404, an error result fails its job, and the others are
# stored. A round's last jobs ended in one burst decide their plan once.
# Results sent with ?claim=true bring the worker's next job, each job to
# one of them, and null once the queue is empty; so with one result lane
# and with eight. An upload that waits for the job while another
# transaction stores the same result reads it as a replay.
# Claims that find nothing, while the statistics say the target's
# queue is full, read jobs through an index, never whole. No timing is
# asserted.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

sql() { "$PG" psql "$HV_TMP/pg" -- -X -Atqc "$1"; }
metric() { curl -fsS --max-time 5 "$URL/metrics" | awk -v n="$1" '$1 == n {print $2}'; }

# submit_cpu NAME HOST WORKLOADS REPETITIONS_JSON: submits a plan of
# WORKLOADS one-second cpu workloads on HOST; its id is $(json .id).
submit_cpu() {
    jq -n --arg name "$1" --arg host "$2" --argjson n "$3" --argjson reps "$4" \
        '{name: $name, targets: {host: $host}, repetitions: $reps,
          workloads: [range($n) | {id: "cpu-\(.)", kind: "cpu", engine: "builtin",
                                   params: {copies: 1, seconds: 1}}]}' >"$HV_TMP/$1.json"
    assert_status 201 POST /api/v1/plans -H "Authorization: Bearer $SUBMIT_TOKEN" \
        --data-binary @"$HV_TMP/$1.json"
}

# claim_list FILE N AUTH_ARRAY_NAME: N claims one after another; the ids
# of the jobs they got, a line each, into FILE.
claim_list() {
    local i creds="$3[@]"
    : >"$1"
    for ((i = 0; i < $2; i++)); do
        api POST /api/v1/jobs/claim "${!creds}" --data-binary '{}'
        [[ $STATUS == 200 ]] && json .job.id >>"$1"
    done
}

JOBS=30
submit_cpu batch batch-host 1 "{\"min\": $JOBS}"
PLAN=$(json .id)
hv_register batch-host
TID=$TARGET
WA=("${W[@]}")
hv_register other-host
WB=("${W[@]}")
OTHER_TID=$TARGET
hv_register gone-host
WG=("${W[@]}")
assert_status 200 POST /api/v1/workers/deregister "${WG[@]}" --data-binary '{}'
UNKNOWN=(-H "Authorization: Bearer hvw_$(printf '%064d' 7)")

# burst DIR N CMD...: runs CMD N times at once (CMD gets the index as its
# last argument); each writes its HTTP status and body into DIR/INDEX.
# Waits for those N only (the server is a child of this shell too).
burst() {
    local dir=$1 n=$2 i pids=()
    shift 2
    mkdir -p "$dir"
    for ((i = 0; i < n; i++)); do
        "$@" "$dir" "$i" &
        pids+=($!)
    done
    wait "${pids[@]}"
}
# tally DIR: the HTTP statuses of a burst, "STATUS:COUNT " each.
tally() {
    for f in "$1"/*.status; do echo "$(<"$f")"; done | sort | uniq -c | awk '{printf "%s:%s ", $2, $1}'
}
# shellcheck disable=SC2317 # called through burst
claim_for() { # TARGET_ID AUTH_ARRAY_NAME DIR INDEX
    local auth="$2[@]"
    curl -s --max-time 30 -o "$3/$4.body" -w '%{http_code}' -X POST "${!auth}" \
        --data-binary "{\"target_id\":$1}" "$URL/api/v1/jobs/claim" >"$3/$4.status"
}

# --- 40 claims at once for 30 jobs ------------------------------------------------
burst "$HV_TMP/claims" 40 claim_for "$TID" WA
statuses=$(tally "$HV_TMP/claims")
assert_eq "40 claims at once: 30 with a job, 10 with none" "200:30 204:10 " "$statuses"
for f in "$HV_TMP"/claims/*.status; do
    [[ $(cat "$f") == 200 ]] && jq -r '"\(.job.id) \(.job.attempt)"' "${f%.status}.body"
done | sort -n >"$HV_TMP/jobs.txt"
assert_eq "30 distinct jobs, each at attempt 1" "$JOBS $JOBS 1" \
    "$(wc -l <"$HV_TMP/jobs.txt") $(cut -d' ' -f1 "$HV_TMP/jobs.txt" | sort -u | wc -l) $(cut -d' ' -f2 "$HV_TMP/jobs.txt" | sort -u | tr '\n' ' ' | xargs)"
assert_eq "the database agrees: 30 running, one claim each" "$JOBS $JOBS" \
    "$(sql "SELECT count(*) FILTER (WHERE status = 'running') || ' ' || (SELECT count(*) FROM job_claims)
            FROM jobs WHERE plan_id = $PLAN")"
assert_eq "every claim went through a batch" true \
    "$(jq -n "$(metric 'hvbench_batched_requests_total{kind="claim"}') >= 40")"
mapfile -t JOB_IDS < <(cut -d' ' -f1 "$HV_TMP/jobs.txt")

# --- credentials looked up with the batch ---------------------------------------
# shellcheck disable=SC2317 # called through burst
claim_as() { # DIR INDEX: 0-3 the live worker, 4-6 the signed-off one, 7-9 an unknown one
    local auth=("${WA[@]}")
    (($2 >= 4)) && auth=("${WG[@]}")
    (($2 >= 7)) && auth=("${UNKNOWN[@]}")
    curl -s --max-time 30 -o "$1/$2.body" -w '%{http_code}' -X POST "${auth[@]}" \
        --data-binary '{}' "$URL/api/v1/jobs/claim" >"$1/$2.status"
}
burst "$HV_TMP/creds" 10 claim_as
got=$(for i in {0..9}; do printf '%s ' "$(<"$HV_TMP/creds/$i.status")"; done)
assert_eq "one burst: the live worker 204 (queue empty), the signed-off and unknown ones 401" \
    "204 204 204 204 401 401 401 401 401 401 " "$got"
assert_eq "the signed-off worker is told why" true \
    "$(jq -r '.detail | test("registration has ended")' "$HV_TMP/creds/4.body")"
api POST /api/v1/jobs/claim "${UNKNOWN[@]}" --data-binary '{"wait": "soon"}'
assert_eq "a bad body with an unknown credential: 401 first" 401 "$STATUS"
api POST /api/v1/jobs/claim "${WA[@]}" --data-binary '{"wait": "soon"}'
assert_eq "a bad body with a live credential: 400" 400 "$STATUS"
api POST /api/v1/jobs/claim "${WA[@]}" --data-binary "{\"target_id\":$OTHER_TID}"
assert_eq "a claim naming another worker's target: 403" 403 "$STATUS"
api POST "/api/v1/jobs/${JOB_IDS[0]}/result" "${UNKNOWN[@]}" --data-binary '{"attempt": 1}'
assert_eq "a result with an unknown credential and a bad body: 401" 401 "$STATUS"

# result JOB ATTEMPT STATUS: a result body with one metric.
result() {
    jq -nc --argjson att "$2" --arg st "$3" '{attempt: $att, status: $st,
        started_at: "2026-12-01T10:00:00Z", finished_at: "2026-12-01T10:00:05Z",
        metrics: [{name: "cpu.score", value: (1000 + $att), unit: "score", higher_is_better: true}]}
        + (if $st == "error" then {error: "the engine failed"} else {} end)'
}
# shellcheck disable=SC2317 # called through burst
upload() { # DIR INDEX, uploads line INDEX of $HV_TMP/uploads.txt: JOB ATTEMPT STATUS WHO
    local job att st who
    read -r job att st who < <(sed -n "$(($2 + 1))p" "$HV_TMP/uploads.txt")
    local auth=("${WA[@]}")
    [[ $who == B ]] && auth=("${WB[@]}")
    curl -s --max-time 30 -o "$1/$2.body" -w '%{http_code}' -X POST "${auth[@]}" \
        --data-binary "$(result "$job" "$att" "$st")" "$URL/api/v1/jobs/$job/result" >"$1/$2.status"
}

# --- one burst: 24 results, 20 of them sent twice; a stale attempt, another
# worker's upload, an unknown job, an error result -------------------------------
# The worker gives job 20 back: its attempt 1 is stale from then on.
assert_status 200 POST "/api/v1/jobs/${JOB_IDS[20]}/release" "${WA[@]}" --data-binary '{"attempt":1}'
: >"$HV_TMP/uploads.txt"
for ((i = 0; i < 20; i++)); do
    echo "${JOB_IDS[$i]} 1 ok A" >>"$HV_TMP/uploads.txt"
    echo "${JOB_IDS[$i]} 1 ok A" >>"$HV_TMP/uploads.txt"
done
{
    echo "${JOB_IDS[20]} 1 ok A"     # 40: released, not running any more
    echo "${JOB_IDS[21]} 1 ok B"     # 41: not its claimer
    echo "999999 1 ok A"             # 42: no such job
    echo "${JOB_IDS[22]} 1 error A"  # 43: the engine failed
} >>"$HV_TMP/uploads.txt"
burst "$HV_TMP/up" 44 upload
st() { cat "$HV_TMP/up/$1.status"; }
twice=''
for ((i = 0; i < 20; i++)); do twice+="$(st $((2 * i)))+$(st $((2 * i + 1))) "; done
assert_eq "each result sent twice at once: stored once (201), the other a replay (200)" \
    "$(printf '201+200 %.0s' {1..20})" "$(sed -E 's/200\+201/201+200/g' <<<"$twice")"
assert_eq "the same result id in both answers of each pair" 20 \
    "$(for ((i = 0; i < 20; i++)); do
           jq -r .result_id "$HV_TMP/up/$((2 * i)).body" "$HV_TMP/up/$((2 * i + 1)).body" | sort -u | wc -l
       done | grep -c '^1$')"
assert_eq "a stale attempt in the burst: 409 stale_attempt" "409 stale_attempt" \
    "$(st 40) $(jq -r .type "$HV_TMP/up/40.body" | sed 's|.*/||')"
assert_eq "another worker's upload in the burst: 403" 403 "$(st 41)"
assert_eq "an unknown job in the burst: 404" 404 "$(st 42)"
assert_eq "an error result in the burst: stored (201)" 201 "$(st 43)"
assert_eq "the database: 21 results, 21 metrics, nothing twice" "21 21 0" \
    "$(sql "SELECT (SELECT count(*) FROM results) || ' ' || (SELECT count(*) FROM metrics) || ' ' ||
            (SELECT count(*) FROM (SELECT 1 FROM results GROUP BY job_id, attempt HAVING count(*) > 1) d)")"
assert_eq "20 jobs done, the error's job failed with its error, the released one queued" \
    "done:20 failed:1 queued:1 running:8 | the engine failed" \
    "$(sql "SELECT string_agg(status || ':' || n, ' ' ORDER BY status) FROM (SELECT status, count(*) n
            FROM jobs WHERE plan_id = $PLAN GROUP BY status) s") | $(sql "SELECT error FROM jobs WHERE id = ${JOB_IDS[22]}")"
assert_eq "each stored metric is its result's" 21 \
    "$(sql "SELECT count(*) FROM metrics m JOIN results r ON r.id = m.result_id
            WHERE m.value = 1000 + r.attempt AND m.name = 'cpu.score'")"
assert_eq "the results went through batches" true \
    "$(jq -n "$(metric 'hvbench_batched_requests_total{kind="result"}') >= 44")"

# --- the rest, one at a time: still stored ----------------------------------------
api POST /api/v1/jobs/claim "${WA[@]}" --data-binary "{\"target_id\":$TID}"
assert_eq "the released job is claimed again, attempt 2" "${JOB_IDS[20]} 2" "$(json '"\(.job.id) \(.job.attempt)"')"
api POST "/api/v1/jobs/${JOB_IDS[20]}/result" "${WA[@]}" --data-binary "$(result "${JOB_IDS[20]}" 2 ok)"
assert_eq "its attempt 2 is stored" 201 "$STATUS"
for i in 21 23 24 25 26 27 28 29; do
    api POST "/api/v1/jobs/${JOB_IDS[$i]}/result" "${WA[@]}" --data-binary "$(result "${JOB_IDS[$i]}" 1 ok)"
    [[ $STATUS == 201 ]] || break
done
assert_eq "the other 8 results stored one by one" 201 "$STATUS"
assert_eq "the plan is over: 29 done, 1 failed" "done:29 failed:1" \
    "$(sql "SELECT string_agg(status || ':' || n, ' ' ORDER BY status) FROM (SELECT status, count(*) n
            FROM jobs WHERE plan_id = $PLAN GROUP BY status) s")"
assert_status 200 GET "/api/v1/plans/$PLAN"
assert_eq "the plan reads 29 done, 1 failed" "29 1" "$(json '"\(.jobs.done) \(.jobs.failed)"')"

# --- a round's last jobs ended by one burst: the plan decided once ----------------
# Eight jobs make the plan's one round; their results arrive together, and
# each job a batch ends sees the round over. The plan is decided after the
# first of them only: one decision in the log, one record on the plan.
submit_cpu round round-host 8 '{"min": 1, "max": 1}'
RPLAN=$(json .id)
hv_register round-host
# shellcheck disable=SC2034 # read by claim_list and upload_listed, by name
WR=("${W[@]}")
claim_list "$HV_TMP/round-jobs.txt" 8 WR
assert_eq "the round's 8 jobs claimed" 8 "$(sort -u "$HV_TMP/round-jobs.txt" | wc -l)"
# shellcheck disable=SC2317 # called through burst
upload_listed() { # LIST AUTH_ARRAY_NAME QUERY DIR INDEX: the result of line INDEX of LIST
    local job creds="$2[@]"
    job=$(sed -n "$(($5 + 1))p" "$1")
    curl -s --max-time 30 -o "$4/$5.body" -w '%{http_code}' -X POST "${!creds}" \
        --data-binary "$(result "$job" 1 ok)" "$URL/api/v1/jobs/$job/result$3" >"$4/$5.status"
}
burst "$HV_TMP/round-up" 8 upload_listed "$HV_TMP/round-jobs.txt" WR ''
assert_eq "the 8 results stored" "201:8 " \
    "$(tally "$HV_TMP/round-up")"
assert_status 200 GET "/api/v1/plans/$RPLAN"
assert_eq "the plan is done, decided after its one round" "done max 1" \
    "$(json -r '"\(.status) \(.rounds.decision) \(.rounds.rounds)"')"
assert_eq "the decision was made once" 1 \
    "$(grep -c "plan $RPLAN: after 1 round: max rounds done" "$HV_TMP/server.log")"

# --- results that claim the worker's next job (?claim=true) -----------------------
# Twelve jobs; eight claimed, then their eight results sent at once, each
# asking for the worker's next job: the four left go to four of them, once
# each, and the other four hear there is none. The stored results and the
# next jobs' claims are those of the worker. A result with samples (stored
# alone) claims too; a stale attempt and a bad argument claim nothing.
submit_cpu next next-host 1 '{"min": 12}'
NPLAN=$(json .id)
hv_register next-host
WN=("${W[@]}")
NWORKER=$(sql "SELECT w.id FROM workers w JOIN targets t ON t.id = w.target_id
               WHERE t.name = 'next-host' AND w.ended_at IS NULL")
claim_list "$HV_TMP/next-jobs.txt" 8 WN
assert_eq "8 of the 12 jobs claimed" 8 "$(sort -u "$HV_TMP/next-jobs.txt" | wc -l)"
api POST "/api/v1/jobs/$(head -n1 "$HV_TMP/next-jobs.txt")/result?claim=maybe" "${WN[@]}" \
    --data-binary "$(result 0 1 ok)"
assert_eq "?claim=maybe: 400 naming the argument" "400 claim" \
    "$STATUS $(json -r '.errors[0].path')"
burst "$HV_TMP/next-up" 8 upload_listed "$HV_TMP/next-jobs.txt" WN '?claim=true'
assert_eq "the 8 results stored" "201:8 " \
    "$(tally "$HV_TMP/next-up")"
jq -r '.next.job | select(. != null) | "\(.id) \(.attempt) \(.plan_id) \(.lease_seconds > 0)"' \
    "$HV_TMP"/next-up/*.body | sort -n >"$HV_TMP/next-next.txt"
assert_eq "4 answers bring a next job: distinct, attempt 1, of the plan, with a lease" \
    "4 4 1 $NPLAN true" \
    "$(wc -l <"$HV_TMP/next-next.txt") $(cut -d' ' -f1 "$HV_TMP/next-next.txt" | sort -u | wc -l) $(cut -d' ' -f2- "$HV_TMP/next-next.txt" | sort -u | tr '\n' ' ' | xargs)"
assert_eq "4 answers say there is none (next: null), every answer has server_time" "4 8" \
    "$(jq -s '[.[] | select(has("next") and .next == null)] | length' "$HV_TMP"/next-up/*.body) $(jq -s '[.[] | select(.server_time | type == "string")] | length' "$HV_TMP"/next-up/*.body)"
assert_eq "none of the next jobs is one just ended" 0 \
    "$(cut -d' ' -f1 "$HV_TMP/next-next.txt" | grep -cxFf "$HV_TMP/next-jobs.txt")"
assert_eq "the database: 8 done, 4 running, each claimed once, by the worker" "8 4 4" \
    "$(sql "SELECT count(*) FILTER (WHERE status = 'done') || ' ' ||
                   count(*) FILTER (WHERE status = 'running') || ' ' ||
                   (SELECT count(*) FROM job_claims c JOIN jobs j ON j.id = c.job_id
                    WHERE j.plan_id = $NPLAN AND j.status = 'running' AND c.worker_id = $NWORKER)
            FROM jobs WHERE plan_id = $NPLAN")"
mapfile -t NEXT_IDS < <(cut -d' ' -f1 "$HV_TMP/next-next.txt")
# The worker gives one back: its attempt is stale, and its upload claims nothing.
assert_status 200 POST "/api/v1/jobs/${NEXT_IDS[0]}/release" "${WN[@]}" --data-binary '{"attempt":1}'
api POST "/api/v1/jobs/${NEXT_IDS[0]}/result?claim=true" "${WN[@]}" --data-binary "$(result 0 1 ok)"
assert_eq "a stale attempt with ?claim=true: 409, the released job still queued" "409 queued" \
    "$STATUS $(sql "SELECT status FROM jobs WHERE id = ${NEXT_IDS[0]}")"
samples=$(jq -nc '[range(3) | {t: ., metric: "cpu.score", value: 1000}]')
api POST "/api/v1/jobs/${NEXT_IDS[1]}/result?claim=true" "${WN[@]}" \
    --data-binary "$(result 0 1 ok | jq -c --argjson s "$samples" '. + {samples: $s}')"
assert_eq "a result with samples, stored alone, also brings the next job: the released one, attempt 2" \
    "201 ${NEXT_IDS[0]} 2" "$STATUS $(json -r '"\(.next.job.id) \(.next.job.attempt)"')"
for id in "${NEXT_IDS[@]:2}" "${NEXT_IDS[0]}"; do
    att=1
    [[ $id == "${NEXT_IDS[0]}" ]] && att=2
    api POST "/api/v1/jobs/$id/result?claim=true" "${WN[@]}" --data-binary "$(result 0 "$att" ok)"
    [[ $STATUS == 201 && $(json -c .next) == null ]] || break
done
assert_eq "the last results: stored, nothing left to bring" "201 null" "$STATUS $(json -c .next)"
api POST "/api/v1/jobs/$id/result?claim=true" "${WN[@]}" --data-binary "$(result 0 "$att" ok)"
assert_eq "a replayed upload: 200, and no job to bring" "200 null" "$STATUS $(json -c .next)"
assert_status 200 GET "/api/v1/plans/$NPLAN"
assert_eq "the plan is done: 12 jobs done" "done 12" "$(json -r '"\(.status) \(.jobs.done)"')"

# --- a result stored by another transaction while the upload waits ------------------
# Another session locks a claimed job, stores its result and ends it; the
# upload of the same result comes meanwhile and waits for the job's lock.
# Once the session commits, the upload reads its result as stored: a
# replay (200, that result's id), not a conflict. Through a result lane
# (no samples) and through the handler (with samples).
submit_cpu locked locked-host 1 '{"min": 2}'
hv_register locked-host
# shellcheck disable=SC2034 # read by claim_list, by name
WL=("${W[@]}")
claim_list "$HV_TMP/locked-jobs.txt" 2 WL
mapfile -t LOCKED < "$HV_TMP/locked-jobs.txt"
# store_meanwhile JOB: in the background, a session that locks JOB, stores
# its attempt 1's result, holds an advisory lock while it waits (at most
# 20 s) for another session to wait for a lock, and commits; the id it
# stored goes to $HV_TMP/meanwhile.id.
store_meanwhile() {
    "$PG" psql "$HV_TMP/pg" -- -X -Atq -v ON_ERROR_STOP=1 >"$HV_TMP/meanwhile.id" <<SQL &
BEGIN;
SELECT FROM jobs WHERE id = $1 FOR UPDATE;
INSERT INTO results (job_id, attempt, status, started_at, finished_at)
    VALUES ($1, 1, 'ok', now(), now()) RETURNING id;
UPDATE jobs SET status = 'done', finished_at = now(), lease_until = NULL WHERE id = $1;
SELECT FROM pg_advisory_xact_lock(4711);
DO \$\$ BEGIN
    FOR i IN 1..400 LOOP
        EXIT WHEN EXISTS (SELECT 1 FROM pg_locks WHERE NOT granted);
        PERFORM pg_sleep(0.05);
    END LOOP;
END \$\$;
COMMIT;
SQL
    MEANWHILE_PID=$!
    local i
    for ((i = 0; i < 200; i++)); do
        [[ $(sql "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted") == 1 ]] && return 0
        sleep 0.1
    done
    return 1
}
store_meanwhile "${LOCKED[0]}"
api POST "/api/v1/jobs/${LOCKED[0]}/result" "${WL[@]}" --data-binary "$(result 0 1 ok)"
wait "$MEANWHILE_PID"
assert_eq "an upload that waited for a result stored meanwhile (result lane): 200, that result" \
    "200 $(grep -Ex "[0-9]+" "$HV_TMP/meanwhile.id")" "$STATUS $(json .result_id)"
store_meanwhile "${LOCKED[1]}"
api POST "/api/v1/jobs/${LOCKED[1]}/result" "${WL[@]}" \
    --data-binary "$(result 0 1 ok | jq -c --argjson s "$samples" '. + {samples: $s}')"
wait "$MEANWHILE_PID"
assert_eq "an upload that waited for a result stored meanwhile (with samples): 200, that result" \
    "200 $(grep -Ex "[0-9]+" "$HV_TMP/meanwhile.id")" "$STATUS $(json .result_id)"
assert_eq "one result each, no samples stored for the replay" "2 0" \
    "$(sql "SELECT count(*) || ' ' || (SELECT count(*) FROM samples s JOIN results r ON r.id = s.result_id
            WHERE r.job_id = ${LOCKED[1]}) FROM results WHERE job_id IN (${LOCKED[0]}, ${LOCKED[1]})")"

# --- result lanes (--result-lanes): one, and eight side by side -----------------------
# Each count of lanes: 20 jobs, 16 claimed, their 16 results sent at once
# with ?claim=true: all stored, the 4 jobs left each brought once, and
# the others told there is none; the database agrees. The option's
# bounds and its place in --check-config.
for lanes in 1 8; do
    hv_stop_pid "$HV_SERVER_PID" 10
    HV_SERVER_ARGS=(--result-lanes "$lanes")
    hv_start_server
    submit_cpu "lanes-$lanes" "lanes-$lanes" 1 '{"min": 20}'
    LPLAN=$(json .id)
    hv_register "lanes-$lanes"
    # shellcheck disable=SC2034 # read by claim_list and upload_listed, by name
    WL=("${W[@]}")
    claim_list "$HV_TMP/lanes-$lanes.txt" 16 WL
    burst "$HV_TMP/lanes-$lanes-up" 16 upload_listed "$HV_TMP/lanes-$lanes.txt" WL '?claim=true'
    assert_eq "$lanes lane(s): the 16 results stored" "201:16 " "$(tally "$HV_TMP/lanes-$lanes-up")"
    assert_eq "$lanes lane(s): 4 distinct next jobs, 12 answers with none" "4 4 12" \
        "$(jq -s '[.[] | .next.job.id | select(. != null)] | "\(length) \(unique | length)"' -r \
            "$HV_TMP"/lanes-"$lanes"-up/*.body) $(jq -s '[.[] | select(.next == null)] | length' \
            "$HV_TMP"/lanes-"$lanes"-up/*.body)"
    assert_eq "$lanes lane(s): the database has 16 done, 4 running, claimed once each" "16 4 4" \
        "$(sql "SELECT count(*) FILTER (WHERE status = 'done') || ' ' ||
                       count(*) FILTER (WHERE status = 'running') || ' ' ||
                       (SELECT count(*) FROM job_claims c JOIN jobs j ON j.id = c.job_id
                        WHERE j.plan_id = $LPLAN AND j.status = 'running')
                FROM jobs WHERE plan_id = $LPLAN")"
done
HV_SERVER_ARGS=()
out=$("$SERVER" serve --db "$DB" --check-config --migrations-dir "$HV_ROOT/migrations" 2>&1)
assert_match "--check-config: two lanes by default" "result-lanes = 2
" "$out"
for bad in 0 9 x; do
    out=$("$SERVER" serve --db "$DB" --result-lanes "$bad" --check-config 2>&1)
    assert_eq "--result-lanes $bad: exit 2" 2 "$?"
    assert_eq "--result-lanes $bad: what is wrong" \
        "hvbench-server: --result-lanes must be an integer between 1 and 8" "$out"
done

# --- claims that find nothing, the statistics saying the queue is full ------------
# The last ANALYZE saw a target's 2,000 jobs queued; they are all done now
# (the end of a drain, idle workers asking). A claim batch that takes
# nothing asks whether the target has queued jobs it did not take, and its
# sweeps whether a running job's lease ran out: both read an index, never
# every job. Counted by PostgreSQL: index scans of jobs, no sequential one.
submit_cpu history history-host 10 '{"min": 200}'
HPLAN=$(json .id)
sql "ALTER TABLE jobs SET (autovacuum_enabled = off)" >/dev/null
sql "ANALYZE jobs" >/dev/null
sql "UPDATE jobs SET status = 'done', finished_at = now() WHERE plan_id = $HPLAN" >/dev/null
hv_register history-host
HTID=$TARGET
# shellcheck disable=SC2034 # read by claim_for, by name
WH=("${W[@]}")
scans() { sql "SELECT seq_scan || ' ' || coalesce(idx_scan, 0) FROM pg_stat_user_tables WHERE relname = 'jobs'"; }
# A backend reports its counts when it ends: the server stops before each
# count, so that the second holds the burst's reads and nothing else.
# shellcheck disable=SC2317 # called through wait_for
alone() { [[ $(sql "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'") == 1 ]]; }
hv_stop_pid "$HV_SERVER_PID" 10
wait_for "the server's database sessions ended" 30 alone
read -r seq0 idx0 < <(scans)
hv_start_server
burst "$HV_TMP/empty" 20 claim_for "$HTID" WH
assert_eq "20 claims at once on an empty queue: 20 answered 204" "204:20 " \
    "$(tally "$HV_TMP/empty")"
hv_stop_pid "$HV_SERVER_PID" 10
wait_for "the server's database sessions ended again" 30 alone
read -r seq1 idx1 < <(scans)
assert_eq "the claims read jobs through an index" true "$( ((idx1 > idx0)) && echo true)"
assert_eq "no sequential scan of jobs" "$seq0" "$seq1"

assert_eq "the server logged no error" 0 "$(grep -cE 'Z error ' "$HV_TMP/server.log")"
hv_finish
