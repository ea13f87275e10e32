#!/usr/bin/env bash
# A plan's state is the truth: a plan for a target that never registered
# says it waits for it (API, hvbench status, list and watch) instead of
# looking queued forever (the submission's answer warns of it, and hvbench
# submit prints the warning), and is refused outright with
# targets.require_registered; started_at, updated_at and finished_at follow
# its jobs as a real worker runs it, and a cancel; a 409 does not tell the
# client to retry what cannot succeed.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN" -H 'Content-Type: application/json')
W=(-H "Authorization: Bearer $WORKER_TOKEN" -H 'Content-Type: application/json')
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }
export HVBENCH_SERVER=$URL HVBENCH_TOKEN=$SUBMIT_TOKEN

# plan HOST [jq edit]: the quick example on HOST with 1 s jobs.
plan() {
    jq --arg h "$1" ".targets.host = \$h | .workloads[0].params.seconds = 1 | ${2:-.}" \
        "$HV_ROOT/examples/quick.json"
}

# --- a plan for a host that never registered waits, and says so ----------------
api POST /api/v1/plans "${S[@]}" --data-binary "$(plan state-host)"
assert_eq "plan for an unknown host is accepted" 201 "$STATUS"
P=$(json .id)
assert_eq "it is queued" queued "$(json .status)"
assert_eq "waiting.reason" target_unregistered "$(json .waiting.reason)"
assert_eq "waiting.detail names the target" "waiting for target state-host (never registered)" \
    "$(json .waiting.detail)"
assert_eq "waiting.since is the plan's creation" "$(json .created_at)" "$(json .waiting.since)"
assert_eq "not started" null "$(json .started_at)"
assert_eq "not finished" null "$(json .finished_at)"
assert_eq "updated_at is the creation time" "$(json .created_at)" "$(json .updated_at)"
CREATED=$(json .created_at)

assert_status 200 GET "/api/v1/plans/$P"
assert_eq "GET shows it waiting" target_unregistered "$(json .waiting.reason)"
assert_status 200 GET "/api/v1/plans?name=quick"
assert_eq "the list shows it waiting" "waiting for target state-host (never registered)" \
    "$(json ".items[] | select(.id == $P) | .waiting.detail")"

OUT=$("$CLI" status "$P" 2>&1)
assert_match "hvbench status says what it waits for" \
    $'(^|\n)status +queued: waiting for target state-host \\(never registered\\) since [0-9-]+ [0-9:]+' "$OUT"
OUT=$("$CLI" list 2>&1)
assert_match "hvbench list has a waiting column" $'(^|\n) *id +name +host +status +done/total +created +waiting' "$OUT"
assert_match "hvbench list shows it in its row" \
    $'(^|\n) *'"$P"' +quick +queued +0/3 +[0-9-]+ [0-9:]+ +waiting for target state-host \(never registered\)' "$OUT"
# Into a file, watch writes a line per change; it is stopped after the first.
timeout -k 5 -s INT 3 "$CLI" watch --interval 1 "$P" >"$HV_TMP/watch.out" 2>/dev/null
assert_match "hvbench watch shows it" 'queued .* waiting for target state-host \(never registered\)$' \
    "$(head -n 1 "$HV_TMP/watch.out")"

# Several unknown targets: the host and guests, five named, then a count.
api POST /api/v1/plans "${S[@]}" --data-binary "$(plan ghost-host \
    '.targets.guests = {domains: ["g1", "g2", "g3", "g4", "g5", "g6"]}')"
assert_eq "a plan for six unknown guests is accepted" 201 "$STATUS"
assert_eq "the detail names five and counts the rest" \
    "waiting for targets g1, g2, g3, g4, g5 and 2 more (never registered)" "$(json .waiting.detail)"

# --- the submission warns of what it will wait for --------------------------------
api POST /api/v1/plans "${S[@]}" --data-binary "$(plan warn-host)"
assert_eq "a plan for an unknown host: 201 with a warning at /targets/host" \
    '201 [{"path":"/targets/host","message":"target warn-host has never registered: the plan waits until its worker registers"}]' \
    "$STATUS $(json -c .warnings)"
api POST /api/v1/plans "${S[@]}" --data-binary "$(plan warn-host2 '.targets.guests = {domains: ["wg1", "wg2"]}')"
assert_eq "each target its jobs run on, at the member naming it" \
    "/targets/host warn-host2|/targets/guests/domains/0 wg1|/targets/guests/domains/1 wg2" \
    "$(json -r '[.warnings[] | "\(.path) \(.message | split(" ")[1])"] | join("|")')"
ERR=$("$CLI" submit <(plan warn-cli) 2>&1 >/dev/null)
assert_eq "hvbench submit prints it on standard error" \
    "hvbench: warning: /targets/host: target warn-cli has never registered: the plan waits until its worker registers" "$ERR"

# --- targets.require_registered refuses instead ---------------------------------
api POST /api/v1/plans "${S[@]}" --data-binary "$(plan state-typo '.targets.require_registered = true')"
assert_eq "require_registered with an unknown host: 422" 422 "$STATUS"
assert_eq "the code" impossible_plan "$(json .code)"
assert_eq "the error is at /targets/host" /targets/host "$(json '.errors[0].path')"
assert_match "and names the target" "'state-typo' never registered" "$(json '.errors[0].message')"
api POST "/api/v1/plans?dry_run=1" "${S[@]}" \
    --data-binary "$(plan state-typo '.targets.require_registered = true')"
assert_eq "a dry run refuses it too" 422 "$STATUS"
api POST /api/v1/plans "${S[@]}" --data-binary "$(jq -n '{name: "net", targets: {host: "state-typo",
    guests: {domains: ["vm-typo"]}, require_registered: true},
    workloads: [{id: "net", kind: "net", engine: "builtin", params: {peer: "peer-typo", seconds: 1}}]}')"
assert_eq "unknown host, guest and peer: 422" 422 "$STATUS"
assert_eq "each is named at its path" \
    "/targets/host state-typo|/targets/guests/domains/0 vm-typo|/workloads/0/params/peer peer-typo" \
    "$(json '[.errors[] | "\(.path) \(.message | capture("'"'"'(?<n>[^'"'"']+)'"'"'").n)"] | join("|")')"
api POST /api/v1/plans "${S[@]}" --data-binary "$(plan state-typo '.targets.require_registered = "yes"')"
assert_eq "require_registered must be a boolean" 400 "$STATUS"
assert_eq "the error is at its path" /targets/require_registered "$(json '.errors[0].path')"
api POST /api/v1/plans "${S[@]}" --data-binary "$(plan state-typo '.targets.require_registered = false')"
assert_eq "require_registered false lets it wait" 201 "$STATUS"
assert_eq "and it waits" target_unregistered "$(json .waiting.reason)"

# A registered target: no waiting, and require_registered accepts it.
api POST /api/v1/workers/register "${W[@]}" \
    --data-binary '{"name":"state-known","kind":"host","facts":{"cpus":1}}'
assert_eq "state-known registered" 200 "$STATUS"
KNOWN_ID=$(json .target_id)
api POST /api/v1/plans "${S[@]}" --data-binary "$(plan state-known '.targets.require_registered = true')"
assert_eq "require_registered with a registered host: 201" 201 "$STATUS"
assert_eq "nothing to wait for" null "$(json .waiting)"
assert_eq "nothing to warn of" null "$(json .warnings)"
K=$(json .id)
api POST /api/v1/plans "${S[@]}" --data-binary "$(plan state-known)"
assert_eq "a registered host without require_registered: no warnings" "201 null" "$STATUS $(json .warnings)"
ERR=$("$CLI" submit <(plan state-known) 2>&1 >/dev/null)
assert_eq "and hvbench submit warns of nothing" "" "$ERR"

# --- a cancel ends it: finished_at and updated_at are the cancellation ----------
assert_status 200 POST "/api/v1/plans/$K/cancel" "${S[@]}"
assert_eq "cancelled" cancelled "$(json .status)"
assert_eq "finished_at is the cancellation" "$(json .cancelled_at)" "$(json .finished_at)"
assert_eq "updated_at is the cancellation" "$(json .cancelled_at)" "$(json .updated_at)"
assert_eq "a cancelled plan waits for nothing" null "$(json .waiting)"
assert_eq "it never started" null "$(json .started_at)"

# --- a real worker runs the waiting plan: the times follow its jobs -------------
hv_start_worker state-host --poll 1
ended() {
    api GET "/api/v1/plans/$P"
    [[ $(json .status) =~ ^(done|failed|cancelled)$ ]]
}
wait_for "plan $P ends once its worker registered" 120 ended
assert_eq "it is done" done "$(json .status)"
assert_eq "it waits for nothing" null "$(json .waiting)"
SUMMARY=$BODY
assert_status 200 GET "/api/v1/plans/$P/jobs"
JOBS=$BODY
BODY=$SUMMARY
first_claim=$(jq -r '[.items[].claimed_at] | min' <<<"$JOBS")
last_finish=$(jq -r '[.items[].finished_at] | max' <<<"$JOBS")
assert_eq "started_at is its first job's claim" "$first_claim" "$(json .started_at)"
assert_eq "finished_at is its last job's end" "$last_finish" "$(json .finished_at)"
assert_eq "updated_at is that last change" "$last_finish" "$(json .updated_at)"
assert_eq "created < started < finished" true \
    "$(jq -n --arg c "$CREATED" --arg s "$(json .started_at)" --arg f "$(json .finished_at)" \
        '$c < $s and $s < $f')"
# Every change of a job's state moved it: each job's state time is stored,
# and the plan's updated_at is the newest of them.
assert_eq "every job has its state time" 3 \
    "$(sql "SELECT count(*) FROM jobs WHERE plan_id = $P AND state_at = finished_at
            AND first_claimed_at = claimed_at")"
# A lease that runs out puts a job back: that is a change of state too.
api POST /api/v1/plans "${S[@]}" --data-binary "$(plan state-lost '.repetitions.min = 1')"
L=$(json .id)
L0=$(json .updated_at)
hv_register state-other
OTHER=("${W[@]}")
hv_register state-lost host '{"cpus":1}'
api POST /api/v1/jobs/claim "${W[@]}" --data-binary '{}'
assert_eq "a job of it is claimed by hand" 200 "$STATUS"
api GET "/api/v1/plans/$L"
L1=$(json .updated_at)
assert_eq "the claim started it" "$L1" "$(json .started_at)"
assert_eq "the claim moved updated_at" true "$(jq -n --arg a "$L0" --arg b "$L1" '$a < $b')"
sql "UPDATE jobs SET lease_until = now() - interval '1 s' WHERE plan_id = $L" >/dev/null
# Any claim expires the lapsed leases first.
api POST /api/v1/jobs/claim "${OTHER[@]}" --data-binary '{}'
api GET "/api/v1/plans/$L"
assert_eq "the job is queued again" 1 "$(json .jobs.queued)"
assert_eq "the expiry moved updated_at" true \
    "$(jq -n --arg a "$L1" --arg b "$(json .updated_at)" '$a < $b')"
assert_eq "started_at stays the first claim" "$L1" "$(json .started_at)"

# --- a 409 does not ask for a retry that cannot help ----------------------------
assert_status 409 POST "/api/v1/plans/$P/cancel" "${S[@]}"
assert_eq "409 code" conflict "$(json .code)"
assert_eq "its hint does not say retry" false "$(json '.hint | test("retry"; "i")')"

hv_finish
