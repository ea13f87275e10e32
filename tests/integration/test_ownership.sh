#!/usr/bin/env bash
# shellcheck disable=SC2016 # jq programs in single quotes
# Plans belong to their submitter: a submit token cancels and retries only
# the plans it submitted (403 not_owner naming the owner otherwise), an
# admin token any plan; a plan without a submitter (imported, or whose
# token was revoked) is an admin's; a fleet child is its parent's owner's.
# The plan answers and `hvbench status` name the owner. The worker is
# played with curl, so no job runs by itself.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }
# token NAME: a new submit token, as an operator makes one.
token() { "$SERVER" token create --db "$DB" --role submit --name "$1" || hv_die "token create $1 failed"; }
TA=$(token owner-a)
TB=$(token owner-b)
TC=$(token owner-c)
SA=(-H "Authorization: Bearer $TA")
SB=(-H "Authorization: Bearer $TB")
SC=(-H "Authorization: Bearer $TC")
AD=(-H "Authorization: Bearer $ADMIN_TOKEN")
hv_register own-host
WH=("${W[@]}")

plan=$(jq -c '.name = "owned" | .targets.host = "own-host" | .repetitions.min = 1
    | .workloads[0].params.seconds = 1' "$HV_ROOT/examples/quick.json")
# submit CURL-ARGS...: submits the plan; sets P to its id.
submit() {
    api POST /api/v1/plans "$@" --data-binary "$plan"
    [[ $STATUS == 201 ]] || hv_die "submit: $STATUS $BODY"
    P=$(json .id)
}
# refused ACTION PLAN WHO OWNER-WORDS CURL-ARGS...: the action is refused
# with 403 not_owner, the detail naming the owner.
refused() {
    local action=$1 id=$2 who=$3 words=$4
    shift 4
    api POST "/api/v1/plans/$id/$action" "$@"
    assert_eq "$who may not $action plan $id: 403 not_owner" "403 not_owner" "$STATUS $(json -r .code)"
    assert_match "the detail names the owner" "^plan $id $words.* may $action it$" "$(json -r .detail)"
}

# --- a submit token's plans are its own ---------------------------------------------
submit "${SA[@]}"
PA=$P
assert_eq "the submit answer names the owner" owner-a "$(json -r .owner)"
assert_status 200 GET "/api/v1/plans/$PA"
assert_eq "the plan names its owner's token" owner-a "$(json -r .owner)"
assert_status 200 GET "/api/v1/plans?name=owned"
assert_eq "so does the list" owner-a "$(json -r ".items[] | select(.id == $PA) | .owner")"
refused cancel "$PA" "B" 'belongs to token "owner-a", which submitted it' "${SB[@]}"
refused retry "$PA" "B" 'belongs to token "owner-a", which submitted it' "${SB[@]}"
api GET "/api/v1/plans/$PA"
assert_eq "the refusals changed nothing" "queued 1" "$(json -r '"\(.status) \(.jobs.queued)"')"
assert_status 409 POST "/api/v1/plans/$PA/retry" "${SA[@]}"
assert_match "its owner passes to the retry's own check" "only a failed plan" "$(json -r .detail)"
assert_status 404 POST /api/v1/plans/987654/cancel "${SB[@]}"
assert_status 200 POST "/api/v1/plans/$PA/cancel" "${SA[@]}"
assert_eq "its owner cancels it" cancelled "$(json -r .status)"

# The CLI: the status names the owner, a refusal prints the detail and hint.
HVBENCH_SERVER=$URL HVBENCH_TOKEN=$READ_TOKEN hv_cli status "$PA"
assert_eq "hvbench status exits 0" 0 "$RC"
assert_match "and names the owner" $'\nowner +owner-a\n' "$OUT"
submit "${SB[@]}"
PB=$P
HVBENCH_SERVER=$URL HVBENCH_TOKEN=$TA hv_cli cancel "$PB"
assert_eq "hvbench cancel of another token's plan exits 1" 1 "$RC"
assert_match "naming the owner" "^hvbench: Plan belongs to another token: plan $PB belongs to token \"owner-b\".* \\(HTTP 403\\)" "$ERR"
assert_match "with the hint" $'\nhint: cancel or retry a plan with the token that submitted it' "$ERR"
assert_status 200 POST "/api/v1/plans/$PB/cancel" "${AD[@]}"
assert_eq "an admin cancels B's plan" cancelled "$(json -r .status)"

# --- retry: a failed plan, by its owner only -------------------------------------------
# Two failed plans, A's and B's: each job's result is an error.
submit "${SA[@]}"
PF=$P
submit "${SB[@]}"
PX=$P
for _ in 1 2; do
    api POST /api/v1/jobs/claim "${WH[@]}" --data-binary '{}'
    JOB=$(json .job.id)
    api POST "/api/v1/jobs/$JOB/result" "${WH[@]}" --data-binary \
        "$(jq -nc --argjson a "$(json .job.attempt)" '{attempt: $a, status: "error", error: "the engine crashed"}')"
    assert_eq "the error result is stored" 201 "$STATUS"
done
api GET "/api/v1/plans?status=failed"
assert_eq "both plans failed" "$PX $PF" "$(json -r '[.items[].id] | join(" ")')"
refused retry "$PF" "B" 'belongs to token "owner-a"' "${SB[@]}"
assert_status 200 POST "/api/v1/plans/$PF/retry" "${SA[@]}"
assert_eq "its owner retries it" 1 "$(json .retried)"

# --- an imported plan has no submitter: an admin's -----------------------------------------
# B's failed plan exported here and imported again by A: a new plan, failed.
assert_status 200 GET "/api/v1/plans/$PX/export" -H "Authorization: Bearer $READ_TOKEN"
EXPORT=$BODY
api POST /api/v1/plans/import "${SA[@]}" --data-binary "$EXPORT"
assert_eq "A imports it" 201 "$STATUS"
PI=$(json .id)
assert_status 200 GET "/api/v1/plans/$PI"
assert_eq "the imported plan: failed, no owner" "failed null" "$(json -r '"\(.status) \(.owner)"')"
refused retry "$PI" "its importer" "has no submitter: an admin's" "${SA[@]}"
refused retry "$PI" "B" "has no submitter: an admin's" "${SB[@]}"
refused cancel "$PI" "its importer" "has no submitter: an admin's" "${SA[@]}"
assert_status 200 POST "/api/v1/plans/$PI/retry" "${AD[@]}"
assert_eq "an admin retries it" 1 "$(json .retried)"
assert_status 200 POST "/api/v1/plans/$PI/cancel" "${AD[@]}"
assert_eq "and cancels it" cancelled "$(json -r .status)"
HVBENCH_SERVER=$URL HVBENCH_TOKEN=$READ_TOKEN hv_cli status "$PI"
assert_match "hvbench status says it has none" $'\nowner +none \\(no submitter: an admin\'s\\)\n' "$OUT"

# --- a plan whose token was revoked: an admin's ---------------------------------------------
submit "${SC[@]}"
PC=$P
assert_eq "C's plan is C's" owner-c "$(json -r .owner)"
"$SERVER" token revoke --db "$DB" --name owner-c >/dev/null || hv_die "token revoke failed"
assert_status 200 GET "/api/v1/plans/$PC"
assert_eq "revoked, the plan has no owner" null "$(json -r .owner)"
refused cancel "$PC" "A" "has no submitter: an admin's" "${SA[@]}"
refused retry "$PC" "A" "has no submitter: an admin's" "${SA[@]}"
assert_status 200 POST "/api/v1/plans/$PC/cancel" "${AD[@]}"
assert_eq "an admin cancels it" cancelled "$(json -r .status)"

# --- a fleet plan's children are its parent's owner's -----------------------------------------
for h in own-f1 own-f2; do
    api POST /api/v1/workers/register -H "Authorization: Bearer $WORKER_TOKEN" --data-binary \
        "{\"name\":\"$h\",\"kind\":\"host\",\"facts\":{},\"labels\":{\"pool\":\"owned\"}}"
done
fleet='{"name":"owned-fleet","targets":{"host":{"label":"pool=owned"}},
  "workloads":[{"id":"c","kind":"cpu","params":{"seconds":1}}]}'
api POST /api/v1/plans "${SA[@]}" --data-binary "$fleet"
assert_eq "A submits a fleet plan" 201 "$STATUS"
FP=$(json .id)
CH1=$(json '.children[0].id')
CH2=$(json '.children[1].id')
# A child's own token does not count: the parent's does.
sql "UPDATE plans SET token_id = (SELECT id FROM tokens WHERE name = 'owner-b') WHERE id = $CH1" >/dev/null
assert_status 200 GET "/api/v1/plans/$CH1"
assert_eq "the child's owner is its parent's" owner-a "$(json -r .owner)"
refused cancel "$CH1" "B" 'belongs to token "owner-a"' "${SB[@]}"
refused cancel "$FP" "B" 'belongs to token "owner-a"' "${SB[@]}"
assert_status 200 POST "/api/v1/plans/$CH2/cancel" "${SA[@]}"
assert_eq "A cancels a child of its fleet" cancelled "$(json -r .status)"
assert_status 200 POST "/api/v1/plans/$FP/cancel" "${SA[@]}"
assert_eq "and the fleet, with every child" "cancelled 2" \
    "$(json -r '"\(.status) \([.children[] | select(.status == "cancelled")] | length)"')"

hv_finish
