#!/usr/bin/env bash
# Labels: a worker's own (--label, replaced at each registration) and an
# administrator's (PUT /api/v1/targets/{id}/labels, kept across
# registrations, winning on a key both set); one selector grammar
# (key=value,key=value: all must match) for GET /targets?label=, a plan's
# guests.label and the CLI.
set -uo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

hv_setup
A=(-H "Authorization: Bearer $ADMIN_TOKEN")
S=(-H "Authorization: Bearer $SUBMIT_TOKEN")

reg() { # NAME KIND LABELS
    api POST /api/v1/workers/register -H "Authorization: Bearer $WORKER_TOKEN" --data-binary \
        "{\"name\":\"$1\",\"kind\":\"$2\",\"facts\":{},\"labels\":$3}"
    [[ $STATUS == 200 ]] || hv_die "registering $1: $STATUS $BODY"
}
reg lh1 host '{"rack":"r1"}'
H1=$(json .target_id)
reg lg1 guest '{"pool":"batch","os":"el9"}'
G1=$(json .target_id)
reg lg2 guest '{"pool":"batch","os":"deb12"}'
G2=$(json .target_id)
reg lg3 guest '{"pool":"web"}'

# The administrator's labels.
assert_status 200 PUT "/api/v1/targets/$G2/labels" "${A[@]}" --data-binary '{"labels":{"cpu":"epyc","os":"el9"}}'
assert_eq "the answer: both, the administrator's os over the worker's" \
    '{"cpu":"epyc","os":"el9","pool":"batch"}' "$(json -cS '.labels')"
assert_eq "kept apart: the worker's" '{"os":"deb12","pool":"batch"}' "$(json -cS '.worker_labels')"
assert_eq "and the administrator's" '{"cpu":"epyc","os":"el9"}' "$(json -cS '.admin_labels')"
assert_status 200 POST "/api/v1/targets/$G2/free" "${A[@]}"
reg lg2 guest '{"pool":"batch","os":"deb12","new":"1"}'
assert_status 200 GET "/api/v1/targets/$G2"
assert_eq "a new registration changes the worker's labels only" \
    '{"cpu":"epyc","new":"1","os":"el9","pool":"batch"}' "$(json -cS '.labels')"

# Refusals.
assert_status 401 PUT "/api/v1/targets/$G2/labels" --data-binary '{"labels":{}}'
assert_status 403 PUT "/api/v1/targets/$G2/labels" "${S[@]}" --data-binary '{"labels":{}}'
assert_status 404 PUT /api/v1/targets/987654/labels "${A[@]}" --data-binary '{"labels":{}}'
assert_status 400 PUT "/api/v1/targets/$G2/labels" "${A[@]}" \
    --data-binary '{"labels":{"a b":"x","ok":"has space","n":3,"fine":"yes"}}'
assert_eq "each bad label named" '["/labels/a b","/labels/n","/labels/ok"]' \
    "$(json -c '[.errors[].path] | sort')"
assert_status 400 PUT "/api/v1/targets/$G2/labels" "${A[@]}" --data-binary '{"label":{}}'
assert_status 200 GET "/api/v1/targets/$G2"
assert_eq "nothing changed by a refused request" '{"cpu":"epyc","os":"el9"}' "$(json -cS '.admin_labels')"

# Selectors.
names() { json -c '[.items[].name]'; }
assert_status 200 GET "/api/v1/targets?label=pool=batch"
assert_eq "one pair" '["lg1","lg2"]' "$(names)"
assert_status 200 GET "/api/v1/targets?label=pool=batch,os=el9"
assert_eq "two pairs, the administrator's label counts" '["lg1","lg2"]' "$(names)"
assert_status 200 GET "/api/v1/targets?label=pool=batch,cpu=epyc"
assert_eq "a pair only the administrator set" '["lg2"]' "$(names)"
assert_status 200 GET "/api/v1/targets?label=os=deb12"
assert_eq "the worker's value the administrator's replaced matches no more" '[]' "$(names)"
assert_status 400 GET "/api/v1/targets?label=pool=batch,,os=el9"
assert_match "a bad selector says what is wrong" "'' is not key=value" "$(json -c '.errors')"

# A plan's guests by selector.
plan='{"name":"sel","targets":{"host":"lh1","guests":{"label":"pool=batch,os=el9"}},
  "workloads":[{"id":"c","kind":"cpu","engine":"builtin","params":{"seconds":1}}]}'
assert_status 200 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$plan"
assert_eq "the plan's targets: the host and the two guests the selector finds" 3 \
    "$(json '.counts.targets')"
assert_eq "by name" '["lg1","lg2","lh1"]' "$(json -c '[.. | objects | .target? | strings] | unique')"
plan2=${plan/os=el9/os=none}
assert_status 422 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$plan2"
assert_match "none found: 422 at the label" '/targets/guests/label' "$(json -c '[.errors[].path]')"
plan3=${plan/os=el9/o s=el9}
assert_status 400 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$plan3"
assert_match "a malformed selector: 400 at the label" 'must be a label selector' "$(json -c '.errors')"

# The CLI.
out=$(HVBENCH_SERVER=$URL HVBENCH_TOKEN=$ADMIN_TOKEN "$CLI" label "$H1" cpu=xeon pool=batch 2>&1)
assert_eq "hvbench label sets" "lh1: cpu=xeon,pool=batch,rack=r1" "$out"
out=$(HVBENCH_SERVER=$URL HVBENCH_TOKEN=$ADMIN_TOKEN "$CLI" label "$H1" cpu- 2>&1)
assert_eq "KEY- removes" "lh1: pool=batch,rack=r1" "$out"
out=$(HVBENCH_SERVER=$URL HVBENCH_TOKEN=$ADMIN_TOKEN "$CLI" label "$H1" --clear 2>&1)
assert_eq "--clear removes the administrator's, the worker's stay" "lh1: rack=r1" "$out"
HVBENCH_SERVER=$URL HVBENCH_TOKEN=$ADMIN_TOKEN "$CLI" label "$H1" 'bad' >/dev/null 2>&1
assert_eq "a bad argument: usage error" 2 "$?"
HVBENCH_SERVER=$URL HVBENCH_TOKEN=$SUBMIT_TOKEN "$CLI" label "$H1" a=b >/dev/null 2>&1
assert_eq "a submit token is refused" 1 "$?"
out=$(HVBENCH_SERVER=$URL "$CLI" targets --label pool=batch,cpu=epyc 2>&1)
assert_match "hvbench targets --label takes a selector" "lg2" "$out"
assert_eq "and shows only what it matches" 1 "$(grep -c "^ *[0-9]" <<<"$out")"
echo "$G1" >/dev/null

hv_finish
