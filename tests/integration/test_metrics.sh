#!/usr/bin/env bash
# GET /metrics against the real server: the text parses as the Prometheus
# exposition format 0.0.4, and each counter moves by exactly what the test
# did between two scrapes: requests by route and status class (and the
# duration histogram's counts), claims with a job and empty, a long poll
# waiting (the gauge) and answering, a result stored (a replay not), its
# samples, a database reconnect after the server's connection is killed.
# Then read access: a bad token is refused, and with --read-auth token a
# scrape needs one.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
# One thread, so one database connection serves every request: killing it
# makes the next request reconnect once (the background threads' own
# connections may reconnect too).
HV_SERVER_ARGS=(--threads 1)
hv_setup

W=(-H "Authorization: Bearer $WORKER_TOKEN")
S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }
SCRAPES=0

# scrape FILE: GET /metrics into FILE; counts the scrape (the server counts
# it too, after answering).
scrape() {
    api GET /metrics
    SCRAPES=$((SCRAPES + 1))
    printf '%s\n' "$BODY" >"$1"
}
# value FILE SERIES: the value of the line whose series (name and labels,
# up to the last blank) is exactly SERIES; 0 when there is none (a counter
# that has counted nothing has no line yet).
value() {
    awk -v want="$2" '
        /^#/ { next }
        { i = match($0, / [^ ]+$/); if (i && substr($0, 1, i - 1) == want) { print substr($0, i + 1); found = 1 } }
        END { if (!found) print 0 }' "$1"
}
# delta SERIES: its value in after.txt minus before.txt.
delta() {
    echo $(($(value "$HV_TMP/after.txt" "$1") - $(value "$HV_TMP/before.txt" "$1")))
}
# assert_delta WHAT SERIES EXPECTED
assert_delta() {
    assert_eq "$1: $2 moved by $3" "$3" "$(delta "$2")"
}
# parses FILE: every line is a HELP or TYPE comment or `name{labels} value`,
# and every series belongs to a family with a TYPE line before it.
# Prints the offending lines; exit status 0 when there are none.
parses() {
    awk '
        function bad(why) { print "line " NR ": " why ": " $0; n++ }
        /^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* [^ ]/ { next }
        /^# TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge|histogram|summary|untyped)$/ {
            typed[$3] = $4; next }
        /^#/ { bad("a comment other than HELP or TYPE"); next }
        {
            if ($0 !~ /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*"(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*")*\})? [-+]?([0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?|Inf|NaN)$/) {
                bad("not name{labels} value"); next }
            name = $0; sub(/[{ ].*/, "", name)
            family = name
            if (!(family in typed)) sub(/_(bucket|sum|count)$/, "", family)
            if (!(family in typed)) bad("no TYPE line before it")
            else if (family != name && typed[family] != "histogram") bad("a suffix on a " typed[family])
        }
        END { exit n > 0 }' "$1"
}

# --- the format, before anything happened ------------------------------------------
scrape "$HV_TMP/before.txt"
assert_eq "GET /metrics answers 200" 200 "$STATUS"
assert_eq "the content type of the text format 0.0.4" "text/plain; version=0.0.4; charset=utf-8" \
    "$CONTENT_TYPE"
out=$(parses "$HV_TMP/before.txt")
assert_eq "every line is a comment or name{labels} value" "" "$out"
version=$("$SERVER" version | awk '{print $2}')
assert_eq "build info names this server's version" 1 \
    "$(value "$HV_TMP/before.txt" "hvbench_build_info{version=\"$version\"}")"
for series in 'hvbench_job_claims_total{outcome="job"}' 'hvbench_job_claims_total{outcome="empty"}' \
    'hvbench_job_claims_total{outcome="with_result"}' \
    hvbench_long_polls_waiting hvbench_results_stored_total hvbench_samples_ingested_total \
    hvbench_db_reconnects_total hvbench_db_txn_retries_total hvbench_db_commit_unknown_total \
    hvbench_db_listen_reconnects_total; do
    assert_eq "$series is there, at 0" "$series 0" "$(grep -Fx "$series 0" "$HV_TMP/before.txt")"
done

# --- requests by route and status class ------------------------------------------------
for _ in 1 2 3; do assert_status 200 GET /api/v1/plans; done
assert_status 400 GET '/api/v1/plans?limit=0'
assert_status 404 GET /api/v1/plans/987654321
assert_status 404 GET /api/v1/no-such-thing
assert_status 405 DELETE /api/v1/plans
assert_status 401 POST /api/v1/plans --data-binary '{}'

# --- a plan, a claim, a result (and its replay), an empty claim --------------------------
plan=$(jq -c '.targets.host = "metrics-host" | .workloads[0].params.seconds = 1
    | .repetitions.min = 1' "$HV_ROOT/examples/quick.json") || hv_die "cannot read examples/quick.json"
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$plan"
hv_register metrics-host
scrape "$HV_TMP/queued.txt"
assert_eq "the queue's depth: the plan's job" "1 0 1" "$(value "$HV_TMP/queued.txt" 'hvbench_jobs{state="queued"}') \
$(value "$HV_TMP/queued.txt" 'hvbench_jobs{state="running"}') $(value "$HV_TMP/queued.txt" hvbench_workers_live)"
assert_status 200 POST /api/v1/jobs/claim "${W[@]}" --data-binary "{\"target_id\":$TARGET}"
JOB=$(json .job.id)
result='{"attempt":1,"status":"ok","started_at":"2026-11-29T18:40:12.5Z",
  "finished_at":"2026-11-29T18:40:15.5Z",
  "metrics":[{"name":"cpu.score","value":1523.2,"unit":"score","higher_is_better":true}],
  "samples":[{"metric":"cpu.score","t":1.0,"value":1519.0},
             {"metric":"cpu.score","t":2.0,"value":1524.0},
             {"metric":"cpu.score","t":3.0,"value":1526.6}]}'
assert_status 201 POST "/api/v1/jobs/$JOB/result" "${W[@]}" --data-binary "$result"
assert_status 200 POST "/api/v1/jobs/$JOB/result" "${W[@]}" --data-binary "$result"
assert_eq "the replay stored nothing" false "$(json .stored)"
assert_status 204 POST /api/v1/jobs/claim "${W[@]}" --data-binary "{\"target_id\":$TARGET}"

# --- a long poll: the gauge while it waits, an empty claim when it ends -------------------
curl -s -o /dev/null -w '%{http_code}' -X POST "${W[@]}" --data-binary "{\"target_id\":$TARGET,\"wait\":5}" \
    "$URL/api/v1/jobs/claim" >"$HV_TMP/poll.status" &
POLLER=$!
# shellcheck disable=SC2317 # called through wait_for
polls_waiting() {
    scrape "$HV_TMP/now.txt"
    [[ $(value "$HV_TMP/now.txt" hvbench_long_polls_waiting) == 1 ]]
}
wait_for "the gauge shows the claim waiting" 4 polls_waiting
wait "$POLLER"
assert_eq "the long poll answered 204 at its deadline" 204 "$(cat "$HV_TMP/poll.status")"

# --- a database reconnect --------------------------------------------------------------
killed=$(sql "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
              WHERE datname = current_database() AND pid <> pg_backend_pid()
                AND backend_type = 'client backend'")
assert_match "the server's connection was killed" '^[1-9]' "$killed"
assert_status 200 GET /api/v1/plans
# The long-poll listener's connection was among them: it LISTENs again.
# shellcheck disable=SC2317 # called through wait_for
listening_again() {
    scrape "$HV_TMP/now.txt"
    [[ $(value "$HV_TMP/now.txt" hvbench_db_listen_reconnects_total) == 1 ]]
}
wait_for "the LISTEN connection is opened again" 10 listening_again

# --- what moved ------------------------------------------------------------------------
scrape "$HV_TMP/after.txt"
out=$(parses "$HV_TMP/after.txt")
assert_eq "after: every line is a comment or name{labels} value" "" "$out"
assert_eq "after: nothing queued or running" "0 0" "$(value "$HV_TMP/after.txt" 'hvbench_jobs{state="queued"}') \
$(value "$HV_TMP/after.txt" 'hvbench_jobs{state="running"}')"
R=hvbench_http_requests_total
assert_delta "GETs of the plan list" "$R{route=\"GET /api/v1/plans\",status=\"2xx\"}" 4
assert_delta "a bad query" "$R{route=\"GET /api/v1/plans\",status=\"4xx\"}" 1
assert_delta "an unknown plan" "$R{route=\"GET /api/v1/plans/{id}\",status=\"4xx\"}" 1
assert_delta "an unknown path and a wrong method" "$R{route=\"(no route)\",status=\"4xx\"}" 2
assert_delta "a submit without a token" "$R{route=\"POST /api/v1/plans\",status=\"4xx\"}" 1
assert_delta "a submit" "$R{route=\"POST /api/v1/plans\",status=\"2xx\"}" 1
assert_delta "claims: a job, an empty one, a long poll" "$R{route=\"POST /api/v1/jobs/claim\",status=\"2xx\"}" 3
assert_delta "results: stored and replayed" "$R{route=\"POST /api/v1/jobs/{id}/result\",status=\"2xx\"}" 2
# Every scrape before this one, the ones in wait_for included.
assert_eq "the scrapes themselves" $((SCRAPES - 1)) \
    "$(value "$HV_TMP/after.txt" "$R{route=\"GET /metrics\",status=\"2xx\"}")"
assert_delta "claims with a job" 'hvbench_job_claims_total{outcome="job"}' 1
assert_delta "claims answered empty" 'hvbench_job_claims_total{outcome="empty"}' 2
assert_delta "results stored (not the replay)" hvbench_results_stored_total 1
assert_delta "samples ingested" hvbench_samples_ingested_total 3
J=hvbench_job_duration_seconds
assert_delta "the job's 3 s are over the 1 s bucket" "${J}_bucket{outcome=\"ok\",le=\"1\"}" 0
assert_delta "and in the 5 s one" "${J}_bucket{outcome=\"ok\",le=\"5\"}" 1
assert_delta "and +Inf" "${J}_bucket{outcome=\"ok\",le=\"+Inf\"}" 1
assert_delta "one ok job counted" "${J}_count{outcome=\"ok\"}" 1
assert_delta "no failed job" "${J}_count{outcome=\"error\"}" 0
assert_eq "the durations' sum: started_at to finished_at" 3.000 \
    "$(value "$HV_TMP/after.txt" "${J}_sum{outcome=\"ok\"}")"
# The request's thread reconnects once; the server's background threads
# (webhook sender, hook caller) hold connections of their own, killed too,
# and reconnect when they next ask something: at least one, at most every
# connection killed.
reconnects=$(delta hvbench_db_reconnects_total)
assert_eq "database reconnects: between 1 and the $killed connections killed" true \
    "$( ((reconnects >= 1 && reconnects <= killed)) && echo true || echo "false ($reconnects)")"
assert_delta "the LISTEN connection opened again once" hvbench_db_listen_reconnects_total 1
assert_delta "no transaction was cut (the killed connections were idle)" \
    hvbench_db_txn_retries_total 0
assert_eq "no long poll waits now" 0 "$(value "$HV_TMP/after.txt" hvbench_long_polls_waiting)"

# The histogram counts what the counters count; its buckets never decrease.
H=hvbench_http_request_duration_seconds
route='route="GET /api/v1/plans"'
assert_delta "durations of the plan list GETs" "${H}_count{$route}" 5
assert_eq "the +Inf bucket is the count" "$(value "$HV_TMP/after.txt" "${H}_count{$route}")" \
    "$(value "$HV_TMP/after.txt" "${H}_bucket{$route,le=\"+Inf\"}")"
buckets=$(grep -F "${H}_bucket{$route," "$HV_TMP/after.txt" | awk '{print $NF}' | tr '\n' ' ')
assert_match "15 buckets" '^([0-9]+ ){15}$' "$buckets"
assert_eq "cumulative buckets never decrease" "$(tr ' ' '\n' <<<"$buckets" | sed '/^$/d' | sort -n | tr '\n' ' ')" \
    "$buckets"
claim='route="POST /api/v1/jobs/claim"'
# The long poll waited 5 s by design, so it is above the 2.5 s bucket.
above=$(($(value "$HV_TMP/after.txt" "${H}_bucket{$claim,le=\"+Inf\"}") -
    $(value "$HV_TMP/after.txt" "${H}_bucket{$claim,le=\"2.5\"}")))
assert_match "the long poll is counted above 2.5 s" '^[1-9]' "$above"

# --- read access -----------------------------------------------------------------------
assert_status 401 GET /metrics -H "Authorization: Bearer hvb_$(printf '0%.0s' {1..64})"
assert_status 200 GET /metrics -H "Authorization: Bearer $READ_TOKEN"
hv_stop_pid "$HV_SERVER_PID" 10
HV_SERVER_ARGS+=(--read-auth token)
hv_start_server
assert_status 401 GET /metrics
assert_status 200 GET /metrics -H "Authorization: Bearer $WORKER_TOKEN"
assert_eq "a new process counts from 0" 0 "$(value <(printf '%s\n' "$BODY") hvbench_results_stored_total)"

hv_finish
