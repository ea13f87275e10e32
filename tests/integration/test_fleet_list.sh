#!/usr/bin/env bash
# shellcheck disable=SC2016 # jq programs in single quotes
# The plan list tells a fleet's children apart: the items of
# GET /api/v1/plans for a fleet plan's children carry their host and
# parent_id (both null for an ordinary plan and for the fleet plan
# itself), and hvbench list shows them in its host column. The hosts
# register without workers: nothing runs.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
for h in fll-a fll-b; do
    api POST /api/v1/workers/register -H "Authorization: Bearer $WORKER_TOKEN" --data-binary \
        "{\"name\":\"$h\",\"kind\":\"host\",\"facts\":{},\"labels\":{\"pool\":\"fll\"}}"
    assert_eq "host $h registers" 200 "$STATUS"
done
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary '{"name": "fleet-list",
    "targets": {"host": {"label": "pool=fll"}}, "repetitions": {"min": 1, "max": 1},
    "workloads": [{"id": "c", "kind": "cpu", "engine": "builtin", "params": {"seconds": 1}}]}'
F=$(json .id)
CHILDREN=$(json -r '[.children[] | "\(.id) \(.host)"] | join("|")')
assert_match "the fleet plan has a child per host" '^[0-9]+ fll-a\|[0-9]+ fll-b$' "$CHILDREN"
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(jq -c '.name = "plain-list" | .targets.host = "fll-a"' "$HV_ROOT/examples/quick.json")"
O=$(json .id)

api GET "/api/v1/plans?limit=10"
assert_eq "list: each child with its host and parent" "$CHILDREN" \
    "$(json -r --argjson f "$F" '[.items[] | select(.parent_id == $f)] | sort_by(.id) | map("\(.id) \(.host)") | join("|")')"
assert_eq "list: the fleet plan and an ordinary plan have neither" "$F null null|$O null null" \
    "$(json -r --argjson f "$F" --argjson o "$O" \
        '[.items[] | select(.id == $f or .id == $o)] | sort_by(.id) | map("\(.id) \(.host) \(.parent_id)") | join("|")')"

OUT=$(HVBENCH_SERVER=$URL "$CLI" list --limit 10)
assert_eq "hvbench list exits 0" 0 "$?"
assert_match "hvbench list has a host column" $'(^|\n) *id +name +host +status +done/total +created +waiting' "$OUT"
C1=${CHILDREN%% *}
assert_match "a child's row names its host and parent" \
    $'(^|\n) *'"$C1"' +fleet-list +fll-a, child of #'"$F"' +queued +0/1 ' "$OUT"
assert_match "an ordinary plan's host cell is empty" $'(^|\n) *'"$O"' +plain-list +queued +0/3 ' "$OUT"
hv_finish
