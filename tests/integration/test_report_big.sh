#!/usr/bin/env bash
# The report of a big plan (a series of more than 100 rounds), its results
# written by SQL as bench/report.sh writes them: per series only the
# flagged runs are listed ("runs_listed": "flagged", "runs_omitted"), and
# ?runs=all lists every run with every other figure unchanged; the second
# report is read from the digest the first kept (migrations/015) and is the
# same byte for byte, sent as the answer kept beside the digest
# (migrations/026), which is the answer rendered again from the digest or
# the values after it is invalidated, and changes with the plan's name; a
# round more (rows written by SQL again) is in the next report; a running
# plan's report is the answer kept while its digest is recent, exact once
# the plan ended; ?format=md and csv list the flagged runs; deleting the plan
# deletes its digest; a plan of 100 rounds lists every run and keeps no
# digest.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/report_plans.sh
source "$(dirname "$0")/report_plans.sh"
hv_setup

md5() { printf '%s' "$1" | md5sum | cut -d' ' -f1; }

P=$(seed big 150)
assert_status 200 GET "/api/v1/plans/$P/report"
FIRST=$BODY
assert_eq "four series of 150 rounds, each listing only its flagged runs" \
    "4 150 flagged" "$(json '"\(.summaries | length) \([.summaries[].n] | unique | join(",")) \([.summaries[].runs_listed] | unique | join(","))"')"
assert_eq "the host's default lists round 77, its outlier, and omits the other 149" \
    "1 1 77 true 149" "$(json '.summaries[] | select(.configuration == "default" and .side == "host")
        | "\(.outliers) \(.runs | length) \(.runs[0].round) \(.runs[0].outlier) \(.runs_omitted)"')"
assert_eq "every series lists as many runs as it flags" "true" \
    "$(json '[.summaries[] | (.runs | length) == .outliers and .runs_omitted == .n - .outliers] | all')"
assert_eq "the comparison sees thp=never +5 % in the guests" "better" \
    "$(json '.comparisons[] | select(.side == "guests") | .verdict')"
assert_eq "its evidence keeps the first 100 jobs of each configuration" "200" \
    "$(json '.comparisons[] | select(.side == "guests") | .jobs | length')"
assert_eq "a digest is kept for the plan" "1" "$(sql "SELECT count(*) FROM report_digests WHERE plan_id = $P")"

assert_status 200 GET "/api/v1/plans/$P/report"
assert_eq "the second report, read from the digest, is the first byte for byte" "$FIRST" "$BODY"
assert_eq "the answer is kept beside the digest as sent" "$(md5 "$FIRST")" \
    "$(md5 "$(sql "SELECT answer FROM report_digests WHERE plan_id = $P")")"

# The kept answer is sent as it is: altered in the table, the alteration
# is answered; its inputs changed, the answer is rendered again from the
# digest (the first byte for byte) and kept; the digest and answer
# deleted, the answer rendered from the values is the same again.
sql "UPDATE report_digests SET answer = replace(answer, '\"name\":\"big\"', '\"name\":\"kept\"')
WHERE plan_id = $P" >/dev/null
assert_status 200 GET "/api/v1/plans/$P/report"
assert_eq "a kept answer is sent as kept" "kept" "$(json .name)"
sql "UPDATE report_digests SET inputs = 'other' WHERE plan_id = $P" >/dev/null
assert_status 200 GET "/api/v1/plans/$P/report"
assert_eq "its inputs changed, the answer rendered again from the digest is the first" \
    "$(md5 "$FIRST")" "$(md5 "$BODY")"
assert_eq "and is kept again" "$(md5 "$FIRST") t" \
    "$(md5 "$(sql "SELECT answer FROM report_digests WHERE plan_id = $P")") $(sql "SELECT inputs <> 'other' FROM report_digests WHERE plan_id = $P")"
sql "DELETE FROM report_digests WHERE plan_id = $P" >/dev/null
assert_status 200 GET "/api/v1/plans/$P/report"
assert_eq "rendered from the values again, the answer is the first" "$(md5 "$FIRST")" "$(md5 "$BODY")"
assert_status 200 GET "/api/v1/plans/$P/report"
assert_eq "and the one kept then is too" "$(md5 "$FIRST")" "$(md5 "$BODY")"

# An input of the answer other than the jobs (the plan's name, in its
# summary) changes: the next answer says so, and the one after too.
sql "UPDATE plans SET name = 'big renamed' WHERE id = $P" >/dev/null
assert_status 200 GET "/api/v1/plans/$P/report"
assert_eq "the plan renamed, the answer names it so" "big renamed" "$(json .name)"
assert_eq "and the answer kept then too" "big renamed" \
    "$(sql "SELECT answer::json->>'name' FROM report_digests WHERE plan_id = $P")"
sql "UPDATE plans SET name = 'big' WHERE id = $P" >/dev/null
assert_status 200 GET "/api/v1/plans/$P/report"
assert_eq "named back, the answer is the first again" "$(md5 "$FIRST")" "$(md5 "$BODY")"

assert_status 200 GET "/api/v1/plans/$P/report?runs=all"
assert_eq "runs=all lists every run" "600 0" \
    "$(json '"\([.summaries[].runs | length] | add) \([.summaries[] | select(has("runs_listed"))] | length)"')"
assert_eq "and changes nothing else" "true" "$(jq -n --argjson a "$FIRST" --argjson b "$BODY" '
    ($a | del(.summaries[].runs, .summaries[].runs_listed, .summaries[].runs_omitted)) ==
    ($b | del(.summaries[].runs, .summaries[].runs_listed, .summaries[].runs_omitted))')"
assert_status 400 GET "/api/v1/plans/$P/report?runs=some"

add_rounds big 151 151
assert_status 200 GET "/api/v1/plans/$P/report"
assert_eq "a round written by SQL is in the next report" "151" "$(json '[.summaries[].n] | unique | join(",")')"
assert_eq "and in the digest kept" "151" \
    "$(sql "SELECT digest::json->'summaries'->0->>'n' FROM report_digests WHERE plan_id = $P")"
assert_eq "and in the answer kept" "151" \
    "$(sql "SELECT answer::json->'summaries'->0->>'n' FROM report_digests WHERE plan_id = $P")"
ROUND151=$BODY
assert_status 200 GET "/api/v1/plans/$P/report"
assert_eq "the next report sends the answer kept, the same" "$(md5 "$ROUND151")" "$(md5 "$BODY")"

assert_status 200 GET "/api/v1/plans/$P/report?format=md"
assert_match "the Markdown says which runs it lists" 'list only their flagged runs' "$BODY"
assert_match "the Markdown lists the outlier" '\| default \| cpu \| big-host \| cpu.score \| 77 \|' "$BODY"
assert_status 200 GET "/api/v1/plans/$P/report?format=csv"
assert_eq "the CSV lists one run, the outlier" "1" "$(grep -c '^run,' <<<"$BODY")"

# The plan running again (a job queued): while its digest is recent, its
# jobs ending do not make the figures be computed again, the report is the
# answer kept (of the state its as_of names); the digest aged, the figures
# are of every done job, the state's; the plan ended, they are of every job
# however recent the digest, and the same rendered afresh.
assert_status 200 GET "/api/v1/plans/$P/report"
KEPT=$BODY
AS_OF=$(json .as_of)
assert_eq "the report says of which state it is" \
    "$(sql "SELECT json_build_object('t', greatest(updated_at, state_at))->>'t' FROM plan_summaries WHERE id = $P")" \
    "$AS_OF"
reopen "$P"
add_rounds big 152 152
sql "UPDATE report_digests SET computed_at = now() WHERE plan_id = $P" >/dev/null
assert_status 200 GET "/api/v1/plans/$P/report"
assert_eq "running, its digest recent, the report is the answer kept" "$(md5 "$KEPT")" "$(md5 "$BODY")"
sql "UPDATE report_digests SET computed_at = now() - interval '1 hour' WHERE plan_id = $P" >/dev/null
assert_status 200 GET "/api/v1/plans/$P/report"
assert_eq "its digest aged, the figures are of the round more and of the running plan" \
    "152 running true" "$(json '"\([.summaries[].n] | unique | join(",")) \(.status) \(.partial)"')"
assert_eq "of a later state" "later" "$([[ $(json .as_of) > "$AS_OF" ]] && echo later)"
sql "DELETE FROM jobs WHERE plan_id = $P AND status = 'queued'" >/dev/null
add_rounds big 153 153
sql "UPDATE report_digests SET computed_at = now() WHERE plan_id = $P" >/dev/null
assert_status 200 GET "/api/v1/plans/$P/report"
assert_eq "the plan ended, the figures are of every job however recent the digest" "153 done false" \
    "$(json '"\([.summaries[].n] | unique | join(",")) \(.status) \(.partial)"')"
ENDED=$BODY
sql "DELETE FROM report_digests WHERE plan_id = $P" >/dev/null
assert_status 200 GET "/api/v1/plans/$P/report"
assert_eq "and the same rendered afresh from the values" "$(md5 "$ENDED")" "$(md5 "$BODY")"

assert_status 200 DELETE "/api/v1/plans/$P" -H "Authorization: Bearer $ADMIN_TOKEN"
assert_eq "deleting the plan deletes its digest" "0" "$(sql "SELECT count(*) FROM report_digests")"

S=$(seed small 100)
assert_status 200 GET "/api/v1/plans/$S/report"
assert_eq "a plan of 100 rounds lists every run" "400 0" \
    "$(json '"\([.summaries[].runs | length] | add) \([.summaries[] | select(has("runs_listed"))] | length)"')"
assert_eq "and keeps no digest" "0" "$(sql "SELECT count(*) FROM report_digests WHERE plan_id = $S")"

hv_finish
