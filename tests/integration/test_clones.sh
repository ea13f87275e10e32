#!/usr/bin/env bash
# Guest templates on the real server, the host worker and the guests
# played with curl (no libvirt): a template plan names its clones with its
# own id (a dry run shows the mark p{plan}), its apply step carries the
# template and the clones' names, a template plan without factors is
# refused, and once the host reported the clones it made (change
# "template" from "absent" to the clone's UUID) a guest job goes only to a
# worker whose DMI product UUID is its clone's: a registration with another
# UUID claims nothing, the right one gets the job. A plain guest named in
# targets.guests.domains is checked the same way against the domains the
# host's facts list (a domain they do not list is not checked).
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
U1=6a1f0c2e-0000-4000-8000-000000000001
U2=6a1f0c2e-0000-4000-8000-000000000002
U3=6a1f0c2e-0000-4000-8000-000000000003
hv_register clone-host host "{\"libvirt\":{\"domains\":[{\"name\":\"vm-a\",\"uuid\":\"$U3\"}]}}"
WH=("${W[@]}")

plan() { # GUESTS-JSON FACTORS-JSON
    jq -c --argjson g "$1" --argjson f "$2" '.name = "clones" | .targets = {host: "clone-host", guests: $g}
        | .factors = $f | .repetitions.min = 1 | .workloads[0].params.seconds = 1
        | if $f == {} then del(.factors) else . end' "$HV_ROOT/examples/quick.json"
}
TEMPLATE='{"template":{"domain":"tmpl","count":2,"prefix":"c-"}}'

# --- names and refusals -----------------------------------------------------------
assert_status 400 POST /api/v1/plans "${S[@]}" --data-binary "$(plan "$TEMPLATE" '{}')"
assert_match "a template plan needs factors" 'needs factors' "$(json -r '.errors[].message')"
assert_status 200 POST "/api/v1/plans?dry_run=true" "${S[@]}" \
    --data-binary "$(plan "$TEMPLATE" '{"vcpu_pin":["off"]}')"
assert_eq "a dry run shows the plan-id mark" "clone-host c-p{plan}-1 c-p{plan}-2" \
    "$(json -r '.targets | join(" ")')"

assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan "$TEMPLATE" '{"vcpu_pin":["off"]}')"
P=$(json .id)
api GET "/api/v1/plans/$P/jobs"
assert_eq "the clones carry the plan's id" "c-p$P-1 c-p$P-2 clone-host" \
    "$(json -r '[.items[].target] | unique | join(" ")')"

# --- the apply step names the template and the clones --------------------------
api POST /api/v1/jobs/claim "${WH[@]}" --data-binary '{}'
assert_eq "the host gets the apply step" apply "$(json -r .step.kind)"
assert_eq "with the template" tmpl "$(json -r .step.template)"
assert_eq "and the clones to make" "c-p$P-1 c-p$P-2" "$(json -r '.step.domains | sort | join(" ")')"
STEP=$(json .step.id) ATT=$(json .step.attempt)
changes=$(jq -nc --arg a "c-p$P-1" --arg b "c-p$P-2" --arg u1 "$U1" --arg u2 "$U2" \
    '[{factor: "template", scope: "guest", object: $a, from: "absent", to: $u1},
      {factor: "template", scope: "guest", object: $b, from: "absent", to: $u2}]')
assert_status 201 POST "/api/v1/steps/$STEP/result" "${WH[@]}" --data-binary \
    "{\"attempt\":$ATT,\"status\":\"ok\",\"settings\":{\"vcpu_pin\":{\"level\":\"off\",\"read_back\":\"off\"}},\"changes\":$changes}"

# --- a guest job goes to the worker of its clone's UUID only -------------------------
hv_register "c-p$P-1" guest "{\"dmi_product_uuid\":\"$U2\"}"
api POST /api/v1/jobs/claim "${W[@]}" --data-binary '{}'
assert_eq "a worker whose DMI UUID is another clone's gets nothing" 204 "$STATUS"
hv_register "c-p$P-2" guest "{\"dmi_product_uuid\":\"${U2^^}\"}"
api POST /api/v1/jobs/claim "${W[@]}" --data-binary '{}'
JOB=$(json .job.id)
api GET "/api/v1/jobs/$JOB"
assert_eq "the clone's own worker (UUID in any case) gets its job" "c-p$P-2" "$(json -r .target)"

# --- a named domain: checked against the host's facts ----------------------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan '{"domains":["vm-a","vm-b"]}' '{}')"
hv_register vm-a guest "{\"dmi_product_uuid\":\"$U1\"}"
api POST /api/v1/jobs/claim "${W[@]}" --data-binary '{}'
assert_eq "a guest whose UUID is not its domain's gets nothing" 204 "$STATUS"
hv_register vm-b guest "{\"dmi_product_uuid\":\"$U1\"}"
api POST /api/v1/jobs/claim "${W[@]}" --data-binary '{}'
assert_eq "a guest whose domain the host does not list is not checked" 200 "$STATUS"

hv_finish
