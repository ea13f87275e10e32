#!/usr/bin/env bash
# shellcheck disable=SC2016,SC2317 # jq programs in single quotes; functions run by wait_for
# A plan moved between servers: three rounds measured here (the worker
# played with curl, so every value is known) are exported and imported
# with the CLI (hvbench export, hvbench import --plan) into a second
# server on its own database; the imported plan is
# a new plan there with every job, result, metric, sample, observation and
# raw output, and its report gives the same figures. The same document
# imported again (or the plan exported again) is the same plan: 200 with
# its id, no plan or history point added. A plan that has not
# ended is not exported; a document that is not an export, or whose jobs
# name what it does not hold, is refused with each problem's path.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
hv_register exp-host
WH=("${W[@]}") EXP_HOST=$TARGET

plan=$(jq -c '.name = "exported" | .targets.host = "exp-host" | .repetitions.min = 3
    | .workloads[0].params.seconds = 1' "$HV_ROOT/examples/quick.json")
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$plan"
P=$(json .id)
for v in 101 104 99; do
    api POST /api/v1/jobs/claim "${WH[@]}" --data-binary '{}'
    id=$(json .job.id) att=$(json .job.attempt)
    assert_status 201 POST "/api/v1/jobs/$id/result" "${WH[@]}" --data-binary "$(jq -nc --argjson a "$att" \
        --argjson v "$v" '{attempt: $a, status: "ok", started_at: "2026-11-30T10:00:00Z",
        finished_at: "2026-11-30T10:00:01.5Z", observed: {copies: 1},
        metrics: [{name: "cpu.score", value: $v, unit: "score"}],
        samples: [range(0; 3) as $t | {metric: "cpu.score", t: $t, value: ($v + $t)}], raw: "run \($v)"}')"
done
api GET "/api/v1/plans/$P"
assert_eq "plan $P is done" "done" "$(json -r .status)"

# --- refusals ----------------------------------------------------------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(jq -c '.name = "open"' <<<"$plan")"
assert_status 409 GET "/api/v1/plans/$(json .id)/export"
assert_status 404 GET /api/v1/plans/987654/export

# --- export ------------------------------------------------------------------------
HVBENCH_SERVER=$URL "$CLI" export "$P" -o "$HV_TMP/plan.json" 2>/dev/null
assert_eq "hvbench export exits 0" 0 "$?"
assert_eq "the document: format, plan, 3 jobs with a result each, 9 samples" "hvbench-plan/1 exported 3 3 9" \
    "$(jq -r '"\(.format) \(.plan.name) \(.jobs | length) \([.jobs[].results[]] | length) \([.jobs[].results[].samples[]] | length)"' "$HV_TMP/plan.json")"

# --- a second server on its own database ---------------------------------------------
"$PG" psql "$HV_TMP/pg" -- -qc "CREATE DATABASE other" >/dev/null || hv_die "createdb failed"
DB2=${DB/dbname=hvbench/dbname=other}
[[ $DB2 != "$DB" ]] || hv_die "cannot name the second database in: $DB"
"$SERVER" migrate --db "$DB2" >>"$HV_TMP/migrate.log" 2>&1 || hv_die "migrate of the second database failed"
SUBMIT2=$("$SERVER" token create --db "$DB2" --role submit --name other) || hv_die "token create failed"
PORT2=$(hv_free_port) || hv_die "no free port"
URL2=http://127.0.0.1:$PORT2
"$SERVER" serve --db "$DB2" --listen "127.0.0.1:$PORT2" --web-dir "$HV_ROOT/web" >>"$HV_TMP/server2.log" 2>&1 &
HV_WORKER_PIDS+=($!)
up2() { curl -fsS --max-time 2 -o /dev/null "$URL2/healthz" 2>/dev/null; }
wait_for "the second server answers" 20 up2
S2=(-H "Authorization: Bearer $SUBMIT2")

# Refusals first: not an export, and a job naming a configuration it lacks.
URL=$URL2 assert_status 400 POST /api/v1/plans/import "${S2[@]}" --data-binary \
    '{"format": "something-else", "plan": {}, "configurations": [], "jobs": []}'
assert_eq "not an export: 400 at /format" "/format" "$(json -r '.errors[0].path')"
code=$(curl -s -o "$HV_TMP/bad.json" -w '%{http_code}' "${S2[@]}" -H 'Content-Type: application/json' \
    --data-binary "$(jq -c '.jobs[1].configuration = 7 | .jobs[2].status = "queued"' "$HV_TMP/plan.json")" \
    "$URL2/api/v1/plans/import")
assert_eq "each problem at its path" "400 /jobs/1/configuration /jobs/2/status" \
    "$code $(jq -r '[.errors[].path] | sort | join(" ")' "$HV_TMP/bad.json")"

out=$(HVBENCH_SERVER=$URL2 HVBENCH_TOKEN=$SUBMIT2 "$CLI" import --plan "$HV_TMP/plan.json")
assert_eq "hvbench import --plan exits 0" 0 "$?"
P2=$(sed -n 's/^plan \([0-9]*\) imported (exported): hvbench report [0-9]*$/\1/p' <<<"$out")
assert_match "and names the new plan" '^[0-9]+$' "$P2"
curl -s "$URL2/api/v1/plans/$P2" >"$HV_TMP/p2.json"
# The same document again is the same plan: 200, its id and Location, nothing stored.
plans2() { curl -s "$URL2/api/v1/plans?limit=100" | jq '.items | length'; }
N2=$(plans2)
URL=$URL2 assert_status 200 POST /api/v1/plans/import "${S2[@]}" -D "$HV_TMP/h" --data-binary @"$HV_TMP/plan.json"
assert_eq "the same document again: the plan it made, with its Location" "$P2 /api/v1/plans/$P2" \
    "$(json .id) $(tr -d '\r' <"$HV_TMP/h" | sed -n 's/^[Ll]ocation: //p')"
out=$(HVBENCH_SERVER=$URL2 HVBENCH_TOKEN=$SUBMIT2 "$CLI" import --plan "$HV_TMP/plan.json")
assert_eq "hvbench import --plan names it" "0 plan $P2 was imported before (exported): hvbench report $P2" "$? $out"
# The first import above went through the CLI, which writes the document
# its own way; curl sent the file as it is. Exported again (another
# exported_at): the same document.
sleep 1
HVBENCH_SERVER=$URL "$CLI" export "$P" -o "$HV_TMP/plan-again.json" 2>/dev/null
assert_eq "a second export differs in exported_at only" "true false" \
    "$(jq -n --slurpfile a "$HV_TMP/plan.json" --slurpfile b "$HV_TMP/plan-again.json" \
        '"\(($a[0] | del(.exported_at)) == ($b[0] | del(.exported_at))) \($a[0].exported_at == $b[0].exported_at)"' -r)"
URL=$URL2 assert_status 200 POST /api/v1/plans/import "${S2[@]}" --data-binary @"$HV_TMP/plan-again.json"
assert_eq "the second export: the same plan" "$P2" "$(json .id)"
assert_eq "no plan was added" "$N2" "$(plans2)"
# Another document (one value changed) is another plan.
URL=$URL2 assert_status 201 POST /api/v1/plans/import "${S2[@]}" --data-binary \
    "$(jq -c '.jobs[0].results[0].raw = "run 101 again"' "$HV_TMP/plan.json")"
assert_eq "a changed document: a new plan" "true $((N2 + 1))" "$(json ".id > $P2") $(plans2)"

# On the server it came from: the first import adds a plan and its points
# to the host's history, the second nothing.
points() {
    api GET "/api/v1/targets/$EXP_HOST/history?metric=cpu.score"
    json '[.series[].n] | add'
}
before=$(points)
assert_status 201 POST /api/v1/plans/import "${S[@]}" --data-binary @"$HV_TMP/plan.json"
P3=$(json .id)
after=$(points)
assert_eq "the first import adds its 3 points to the history" "$((before + 3))" "$after"
api GET "/api/v1/plans?limit=100"
N1=$(json '.items | length')
assert_status 200 POST /api/v1/plans/import "${S[@]}" --data-binary @"$HV_TMP/plan.json"
assert_eq "the second: the same plan" "$P3" "$(json .id)"
assert_eq "history points unchanged" "$after" "$(points)"
api GET "/api/v1/plans?limit=100"
assert_eq "plans unchanged" "$N1" "$(json '.items | length')"
assert_eq "a new plan there: its name, done, 3 jobs done" "exported done 3" \
    "$(jq -r '"\(.name) \(.status) \(.jobs.done)"' "$HV_TMP/p2.json")"
curl -s "$URL2/api/v1/plans/$P2/jobs" >"$HV_TMP/jobs2.json"
J2=$(jq -r '.items[0].id' "$HV_TMP/jobs2.json")
curl -s "$URL2/api/v1/jobs/$J2/results?raw=1" >"$HV_TMP/r2.json"
assert_eq "a result with its metric, samples, observation and raw output" "3 1 run " \
    "$(jq -r '.items[0] | "\(.samples | length) \(.observed.copies) \(.raw | .[0:4])"' "$HV_TMP/r2.json")"
# The report's figures, without the ids that differ between the servers.
figures() { jq -c '[.. | objects | select(has("mean") and has("n")) | {mean, n, sd}]'; }
api GET "/api/v1/plans/$P/report"
here=$(figures <<<"$BODY")
there=$(curl -s "$URL2/api/v1/plans/$P2/report" | figures)
assert_match "the report has figures" '"n":3' "$here"
assert_eq "the imported plan's report gives the same figures" "$here" "$there"
hv_finish
