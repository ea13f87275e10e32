#!/usr/bin/env bash
# shellcheck disable=SC2016 # jq programs in single quotes
# Guests are told apart by their host: two host workers (gi-h1, gi-h2,
# label pool=gi) each with a guest worker named vm0 (--kind guest --host
# HOST) register as targets gi-h1/vm0 and gi-h2/vm0, not one target taken
# over by the other. A fan-out plan with guests.domains ["vm0"] runs each
# host's job on that host's own vm0 (the jobs' target ids, their results);
# GET /targets?host= lists each host's guests; a guest that names no host
# is linked to the host whose libvirt domains list its DMI UUID, and one of
# no known host keeps its bare name; a guest naming a host nobody
# registered is refused; the CLI takes a guest's bare name when one host
# has it and calls it ambiguous, naming each, when several do.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
R=(-H "Authorization: Bearer $READ_TOKEN")
WT=(-H "Authorization: Bearer $WORKER_TOKEN")
cli() { HVBENCH_SERVER=$URL HVBENCH_TOKEN=$READ_TOKEN hv_cli "$@"; }

# start NAME STATE-DIR [args]: a worker with a state folder of its own (the
# two guests share a name, and the state lives in DIR/NAME).
start() {
    local name=$1 dir=$2
    shift 2
    mkdir -p "$HV_TMP/$dir"
    "$WORKER" --server "$URL" --token "$WORKER_TOKEN" --name "$name" --state-dir "$HV_TMP/$dir" \
        --wait 2 "$@" >>"$HV_TMP/worker-$dir-$name.log" 2>&1 &
    HV_WORKER_PIDS+=($!)
}
start gi-h1 s-h1 --kind host --label pool=gi
start gi-h2 s-h2 --kind host --label pool=gi
# shellcheck disable=SC2317 # called through wait_for
hosts_up() {
    api GET "/api/v1/targets?kind=host&label=pool=gi" "${R[@]}"
    [[ $(json '.items | length') == 2 ]]
}
wait_for "the two host workers registered" 30 hosts_up
start vm0 s-g1 --kind guest --host gi-h1
start vm0 s-g2 --kind guest --host gi-h2
# shellcheck disable=SC2317 # called through wait_for
guests_up() {
    api GET "/api/v1/targets?kind=guest" "${R[@]}"
    [[ $(json '.items | length') == 2 ]]
}
wait_for "the two guest workers named vm0 registered" 30 guests_up
assert_eq "each is a guest of its host: HOST/vm0" \
    '[{"host":"gi-h1","name":"gi-h1/vm0","short_name":"vm0"},{"host":"gi-h2","name":"gi-h2/vm0","short_name":"vm0"}]' \
    "$(json -c '[.items[] | {host, name, short_name}]')"
assert_match "the worker logs the name it got" 'registered as "gi-h2/vm0"' "$(cat "$HV_TMP/worker-s-g2-vm0.log")"
G1=$(json '.items[] | select(.host == "gi-h1") | .id')
G2=$(json '.items[] | select(.host == "gi-h2") | .id')
assert_eq "two targets" 1 "$(((G1 != G2) && G1 > 0 && G2 > 0))"

# --- listing by host -------------------------------------------------------------------
assert_status 200 GET "/api/v1/targets?host=gi-h1" "${R[@]}"
assert_eq "?host=gi-h1 lists its guest only" "[$G1]" "$(json -c '[.items[].id]')"
assert_status 200 GET "/api/v1/targets?host=gi-h2" "${R[@]}"
assert_eq "?host=gi-h2 lists its own" "[$G2]" "$(json -c '[.items[].id]')"
assert_status 200 GET "/api/v1/targets?host=gi-none" "${R[@]}"
assert_eq "an unknown host has no guests" 0 "$(json '.items | length')"
assert_status 200 GET "/api/v1/targets?host=gi-h1&kind=host" "${R[@]}"
assert_eq "hosts have no host" 0 "$(json '.items | length')"
assert_status 200 GET "/api/v1/targets/$G2" "${R[@]}"
assert_eq "one target shows its host" "gi-h2 gi-h2/vm0" "$(json -r '"\(.host) \(.name)"')"

# --- registration: re-registration, a host nobody registered, '/' ----------------------
reg() { # BODY
    api POST /api/v1/workers/register "${WT[@]}" --data-binary "$1"
}
reg '{"name":"vm0","kind":"guest","host":"gi-nowhere","facts":{}}'
assert_eq "a guest naming a host nobody registered: 409" 409 "$STATUS"
assert_match "saying which host" 'no host worker registered as \\"gi-nowhere\\"' "$BODY"
reg '{"name":"a/b","kind":"guest","facts":{}}'
assert_eq "a name holding / is refused" "400 /name" "$STATUS $(json -r '.errors[0].path')"
reg '{"name":"gi-x","kind":"host","host":"gi-h1","facts":{}}'
assert_eq "only a guest names a host" "400 /host" "$STATUS $(json -r '.errors[0].path')"

# A host listing a domain; a guest whose DMI UUID is that domain's, naming
# no host, is its guest; one of no known host keeps its bare name.
U=6f1b36aa-0c1e-4b41-9d3f-12ab34cd56ef
reg "{\"name\":\"gi-h3\",\"kind\":\"host\",\"facts\":{\"libvirt\":{\"domains\":[{\"name\":\"db1\",\"uuid\":\"$U\"}]}}}"
assert_eq "a host with one domain" 200 "$STATUS"
reg "{\"name\":\"db1\",\"kind\":\"guest\",\"facts\":{\"dmi_product_uuid\":\"${U^^}\"}}"
assert_eq "a guest found by its DMI UUID, in any case" "200 gi-h3/db1 gi-h3" \
    "$STATUS $(json -r '"\(.name) \(.host)"')"
DB1=$(json .target_id)
DB1_AUTH=(-H "Authorization: Bearer $(json -r .worker_token)")
api POST /api/v1/workers/register "${DB1_AUTH[@]}" --data-binary \
    "{\"name\":\"db1\",\"kind\":\"guest\",\"host\":\"gi-h3\",\"facts\":{\"dmi_product_uuid\":\"$U\"}}"
assert_eq "registering again (its host named) is the same target" "200 $DB1" "$STATUS $(json .target_id)"
reg "{\"name\":\"db1\",\"kind\":\"guest\",\"host\":\"gi-h1\",\"facts\":{}}"
assert_eq "the same name under another host is another target" "200 gi-h1/db1" "$STATUS $(json -r .name)"
assert_eq "with an id of its own" 1 "$(($(json .target_id) != DB1))"
# A guest that moved to another host: its credential holds the old host's
# target, so it is told to register anew (401, as the worker then does
# with the worker token) and becomes the new host's guest.
reg '{"name":"mv","kind":"guest","host":"gi-h1","facts":{}}'
MV=$(json .target_id) MV_AUTH=(-H "Authorization: Bearer $(json -r .worker_token)")
api POST /api/v1/workers/register "${MV_AUTH[@]}" --data-binary '{"name":"mv","kind":"guest","host":"gi-h2","facts":{}}'
assert_eq "a moved guest's credential: 401" 401 "$STATUS"
assert_match "saying what it is now" 'it is now \\"gi-h2/mv\\": register with the worker token' "$BODY"
reg '{"name":"mv","kind":"guest","host":"gi-h2","facts":{}}'
assert_eq "with the worker token it is gi-h2's guest, another target" "200 gi-h2/mv 1" \
    "$STATUS $(json -r .name) $(($(json .target_id) != MV))"
reg '{"name":"lone","kind":"guest","facts":{}}'
assert_eq "a guest of no known host keeps its name" "200 lone null" "$STATUS $(json -r '"\(.name) \(.host)"')"

# --- a fan-out plan over both hosts, guests.domains ["vm0"] -------------------------------
plan='{"name":"gi-fleet","targets":{"host":{"label":"pool=gi"},"guests":{"domains":["vm0"]}},
  "max_parallel_hosts":2,"repetitions":{"min":1,"max":1},
  "workloads":[{"id":"c","kind":"cpu","engine":"builtin","params":{"seconds":1,"copies":1}}]}'
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$plan"
P=$(json .id)
assert_eq "one child per host" '["gi-h1","gi-h2"]' "$(json -c '[.children[].host] | sort')"
# shellcheck disable=SC2317 # called through wait_for
plan_done() {
    api GET "/api/v1/plans/$P" "${R[@]}"
    [[ $(json -r .status) =~ ^(done|failed)$ ]]
}
wait_for "the fleet plan ends" 90 plan_done
assert_eq "the fleet plan is done" "done" "$(json -r .status)"
for c in $(json '.children[].id'); do
    api GET "/api/v1/plans/$c" "${R[@]}"
    h=$(json -r .plan.targets.host)
    want=$G1
    [[ $h == gi-h2 ]] && want=$G2
    [[ $h == gi-h1 ]] && C1=$c
    api GET "/api/v1/plans/$c/jobs" "${R[@]}"
    assert_eq "$h's child ran its guest job on $h's own vm0 (target $want)" "$h/vm0 $want done" \
        "$(json -r --arg h "$h" '.items[] | select(.target != $h) | "\(.target) \(.target_id) \(.status)"')"
    J=$(json --arg h "$h" '[.items[] | select(.target != $h)][0].id')
    api GET "/api/v1/jobs/$J/results" "${R[@]}"
    assert_eq "its result is there" "ok" "$(json -r '[.items[].status] | join(",")')"
done

# A plan on one host means that host's vm0.
single='{"name":"gi-one","targets":{"host":"gi-h2","guests":{"domains":["vm0"]}},"repetitions":{"min":1},
  "workloads":[{"id":"c","kind":"cpu","engine":"builtin","params":{"seconds":1,"copies":1}}]}'
assert_status 200 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$single"
assert_eq "a plan on gi-h2 names gi-h2/vm0" '["gi-h2/vm0"]' \
    "$(json -c '[.run_order[].target] | unique | map(select(. != "gi-h2"))')"

# guests.label: among the plan's host's guests (and those of no host).
reg '{"name":"lab","kind":"guest","host":"gi-h1","facts":{},"labels":{"role":"gi"}}'
reg '{"name":"lab","kind":"guest","host":"gi-h2","facts":{},"labels":{"role":"gi"}}'
assert_status 200 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary \
    "$(jq -c '.targets.guests = {label: "role=gi"}' <<<"$single")"
assert_eq "guests.label picks gi-h2's guest only" '["gi-h2/lab"]' \
    "$(json -c '[.run_order[].target] | unique | map(select(. != "gi-h2"))')"

# --- the CLI -------------------------------------------------------------------------------
cli targets --host gi-h1
assert_eq "hvbench targets --host gi-h1 exits 0" 0 "$RC"
assert_match "and lists gi-h1/vm0" "gi-h1/vm0" "$OUT"
assert_eq "and not gi-h2's" 0 "$(grep -c 'gi-h2/' <<<"$OUT")"
cli list --target vm0
assert_eq "a guest name two hosts share is ambiguous: exit 2" 2 "$RC"
assert_match "naming each" "'vm0' is a guest of 2 hosts: gi-h1/vm0, gi-h2/vm0; give HOST/GUEST" "$ERR"
cli list --target gi-h1/vm0 --json
assert_eq "HOST/GUEST picks gi-h1's child plan" "0 $C1" "$RC $(jq -r '[.items[].id] | join(",")' <<<"$OUT")"
reg '{"name":"solo","kind":"guest","host":"gi-h3","facts":{}}'
cli history solo cpu.score
assert_status 200 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary \
    "$(jq -c '.targets.guests.domains = ["solo"]' <<<"$single")"
assert_eq "a plan on gi-h2 naming a guest only gi-h3 has takes gi-h3's" '["gi-h3/solo"]' \
    "$(json -c '[.run_order[].target] | unique | map(select(. != "gi-h2"))')"
# The name resolves (no "no target", no ambiguity); the answer is then the
# history's own: solo never measured cpu.score (exit 1, unknown_metric).
assert_eq "a guest name one host has needs no host (hvbench history solo)" "1 never measured" \
    "$RC $(grep -c 'no target' <<<"$ERR" | grep -v '^0$')$(grep -o 'never measured' <<<"$ERR" | head -1)"
cli history vm0 cpu.score
assert_eq "hvbench history vm0: ambiguous, exit 2" "2 1" "$RC $(grep -c 'is a guest of 2 hosts' <<<"$ERR")"
hv_finish
