#!/usr/bin/env bash
# Site benchmarks against the real server and database: workers register
# the custom benchmarks their administrator declared (facts.benchmarks,
# never a command); malformed declarations are refused with their paths;
# a plan naming one (engine "custom") is accepted only when every target
# that would run it declares it with the same name and kind, and is
# otherwise refused with 422 at /workloads/<i>/params/name, naming the
# targets lacking it and the targets having it.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
W=(-H "Authorization: Bearer $WORKER_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }

HS06='{"name":"hepspec06","kind":"cpu","metric":"hepspec06.score","unit":"HS06","higher_is_better":true}'
NETLAT='{"name":"netlat","kind":"net","metric":"netlat.p99","unit":"us","higher_is_better":false}'
IOLAT='{"name":"iolat","kind":"disk","metric":"iolat.p99","unit":"ms","higher_is_better":false}'
# The same name as HS06, declared as a disk benchmark.
HS06_DISK='{"name":"hepspec06","kind":"disk","metric":"hepspec06.score","unit":"HS06","higher_is_better":true}'

# register NAME KIND BENCHMARKS-JSON-OR-EMPTY [LABELS-JSON]: sets STATUS/BODY.
register() {
    local facts='{"cpus":2}'
    [[ -n $3 ]] && facts="{\"cpus\":2,\"benchmarks\":$3}"
    api POST /api/v1/workers/register "${W[@]}" --data-binary \
        "{\"name\":\"$1\",\"kind\":\"$2\",\"facts\":$facts,\"labels\":${4:-{\}}}"
}

# --- registration with and without site benchmarks ------------------------------
register hv01 host "[$HS06,$NETLAT,$IOLAT]"
assert_eq "a host with three site benchmarks registers" 200 "$STATUS"
HV01=$(json .target_id)
register vm1 guest "[$HS06,$NETLAT]" '{"pool":"site"}'
assert_eq "vm1 registers" 200 "$STATUS"
register vm2 guest "[$HS06,$NETLAT]" '{"pool":"site"}'
assert_eq "vm2 registers" 200 "$STATUS"
register vm3 guest "" '{"pool":"site"}'
assert_eq "vm3 registers without benchmarks" 200 "$STATUS"
register vm4 guest "[$HS06_DISK]" '{"pool":"other"}'
assert_eq "vm4 registers hepspec06 as a disk benchmark" 200 "$STATUS"
register netsrv host "[]"
assert_eq "an empty list of benchmarks is fine" 200 "$STATUS"

assert_status 200 GET "/api/v1/targets/$HV01"
assert_eq "the target's facts keep its benchmarks" "hepspec06 netlat iolat" \
    "$(json '[.facts.benchmarks[].name] | join(" ")')"
assert_eq "with every field" "cpu hepspec06.score HS06 true" \
    "$(json '.facts.benchmarks[0] | "\(.kind) \(.metric) \(.unit) \(.higher_is_better)"')"
assert_eq "and shown beside the facts" "hepspec06/cpu netlat/net iolat/disk" \
    "$(json '[.benchmarks[] | "\(.name)/\(.kind)"] | join(" ")')"
assert_status 200 GET /api/v1/targets
assert_eq "the list shows each target's benchmarks" \
    "hv01:3 netsrv:0 vm1:2 vm2:2 vm3:0 vm4:1" \
    "$(json '[.items[] | "\(.name):\(.benchmarks | length)"] | join(" ")')"

# --- malformed declarations: 400 with the JSON path -------------------------------
badreg() { # WHAT 'PATHS' BENCHMARKS-JSON
    api POST /api/v1/workers/register "${W[@]}" --data-binary \
        "{\"name\":\"badreg\",\"kind\":\"guest\",\"facts\":{\"benchmarks\":$3}}"
    assert_eq "$1: 400" 400 "$STATUS"
    assert_eq "$1: paths" "$2" "$(json '[.errors[].path] | sort | join(" ")')"
}
badreg "not an array" /facts/benchmarks '{"hepspec06":"cpu"}'
assert_eq "not an array: message" "must be an array, not object" "$(json '.errors[0].message')"
badreg "an entry that is not an object" /facts/benchmarks/0 '["hepspec06"]'
badreg "a command is never accepted" /facts/benchmarks/0/command \
    '[{"name":"x","kind":"cpu","metric":"x.s","unit":"s","higher_is_better":true,"command":["/bin/x"]}]'
assert_eq "a command: message" "is not a known member" "$(json '.errors[0].message')"
badreg "a name that could reach elsewhere" /facts/benchmarks/0/name \
    '[{"name":"../x","kind":"cpu","metric":"x.s","unit":"s","higher_is_better":true}]'
assert_eq "the name rule" "must use only a-z, 0-9, '_', '.' and '-', and not start with '.'" \
    "$(json '.errors[0].message')"
badreg "upper case in a name" /facts/benchmarks/0/name \
    '[{"name":"HS06","kind":"cpu","metric":"x.s","unit":"s","higher_is_better":true}]'
badreg "an empty name" /facts/benchmarks/0/name \
    '[{"name":"","kind":"cpu","metric":"x.s","unit":"s","higher_is_better":true}]'
badreg "a name of 65 characters" /facts/benchmarks/0/name \
    "[{\"name\":\"$(printf 'a%.0s' {1..65})\",\"kind\":\"cpu\",\"metric\":\"x\",\"unit\":\"\",\"higher_is_better\":true}]"
badreg "an unknown kind" /facts/benchmarks/1/kind "[$HS06,{\"name\":\"x\",\"kind\":\"gpu\",\"metric\":\"x\",\"unit\":\"s\",\"higher_is_better\":true}]"
assert_eq "the kinds" "must be one of: cpu, disk, net" "$(json '.errors[0].message')"
badreg "missing fields and wrong types" \
    "/facts/benchmarks/0/higher_is_better /facts/benchmarks/0/metric /facts/benchmarks/0/unit" \
    '[{"name":"x","kind":"cpu","unit":7,"higher_is_better":"yes"}]'
badreg "an empty metric" /facts/benchmarks/0/metric \
    '[{"name":"x","kind":"cpu","metric":"","unit":"","higher_is_better":true}]'
badreg "the same name and kind twice" /facts/benchmarks/2/name "[$HS06,$IOLAT,$HS06]"
assert_eq "twice: message" '"hepspec06" (cpu) is declared twice (first at index 0)' \
    "$(json '.errors[0].message')"
MANY=$(jq -cn '[range(65) | {name: "b\(.)", kind: "cpu", metric: "m", unit: "", higher_is_better: true}]')
badreg "65 benchmarks" /facts/benchmarks "$MANY"
assert_eq "65: message" "must have at most 64 entries" "$(json '.errors[0].message')"
assert_eq "no refused registration was stored" 0 "$(sql "SELECT count(*) FROM targets WHERE name = 'badreg'")"
api POST /api/v1/workers/register "${W[@]}" --data-binary \
    "{\"name\":\"badreg\",\"kind\":\"guest\",\"facts\":{\"benchmarks\":$(jq -c '.[:64]' <<<"$MANY")}}"
assert_eq "64 benchmarks are fine" 200 "$STATUS"
assert_eq "and stored" 64 "$(sql "SELECT jsonb_array_length(facts->'benchmarks') FROM targets WHERE name = 'badreg'")"

# --- plans naming a site benchmark ------------------------------------------------
# plan FILE-NAME GUESTS-JSON WORKLOAD-JSON: a plan on host hv01, 2 repetitions.
plan() {
    jq -n --argjson guests "$2" --argjson w "$3" \
        '{name: "site", targets: ({host: "hv01"} + (if $guests == null then {} elif ($guests | type) == "array" then {guests: {domains: $guests}} else {guests: $guests} end)),
          workloads: [{id: "first", kind: "cpu", engine: "builtin", params: {copies: 1, seconds: 1}}, $w],
          repetitions: {min: 2}}' >"$HV_TMP/$1.json"
}
submit() { # FILE [QUERY]
    api POST "/api/v1/plans$2" "${S[@]}" --data-binary @"$HV_TMP/$1.json"
}
CPU_HS06='{"id": "hs06", "kind": "cpu", "engine": "custom", "params": {"name": "hepspec06"}}'

plan ok '["vm1", "vm2"]' "$CPU_HS06"
submit ok "?dry_run=1"
assert_eq "every target has it: the dry run passes" 200 "$STATUS"
# one-guest with the host baseline: per workload hv01, vm1, vm2, over 2 rounds.
assert_eq "dry run counts" "1 2 3 12" \
    "$(json '.counts | "\(.configurations) \(.workloads) \(.targets) \(.jobs)"')"
assert_eq "the custom workload runs on hv01, vm1 and vm2" "hv01 vm1 vm2" \
    "$(json '[.run_order[] | select(.workload == "hs06") | .target] | unique | join(" ")')"
submit ok
assert_eq "and the plan is stored" 201 "$STATUS"
PLAN=$(json .id)
assert_eq "with its 12 jobs" 12 "$(json .jobs.total)"
assert_eq "the custom jobs carry only the name" '{"name":"hepspec06"}' \
    "$(sql "SELECT DISTINCT workload->>'params' FROM jobs WHERE plan_id = $PLAN AND workload_id = 'hs06'" | jq -c .)"

plan label '{"label": "pool=site"}' "$CPU_HS06"
submit label "?dry_run=1"
assert_eq "a label-selected guest lacks it: 422" 422 "$STATUS"
assert_eq "an impossible plan" impossible_plan "$(json .code)"
assert_eq "one error at the workload's name" /workloads/1/params/name "$(json '[.errors[].path] | join(" ")')"
assert_eq "naming the target that lacks it and those that have it" \
    'target "vm3" has no site benchmark "hepspec06" (cpu); targets that have it: hv01, vm1, vm2' \
    "$(json '.errors[0].message')"
PLANS_BEFORE=$(sql 'SELECT count(*) FROM plans')
submit label
assert_eq "a real submission is refused the same way" "422 /workloads/1/params/name" \
    "$STATUS $(json '.errors[0].path')"
assert_eq "and stores nothing" "$PLANS_BEFORE" "$(sql 'SELECT count(*) FROM plans')"

plan two '["vm3", "vm9"]' "$CPU_HS06"
submit two "?dry_run=1"
assert_eq "two guests lacking it, one never registered" \
    '422 targets "vm3", "vm9" (not registered) have no site benchmark "hepspec06" (cpu); targets that have it: hv01, vm1, vm2' \
    "$STATUS $(json '.errors[0].message')"

plan kind null '{"id": "io", "kind": "disk", "engine": "custom", "params": {"name": "hepspec06"}}'
submit kind "?dry_run=1"
assert_eq "same name, other kind: refused" "422 /workloads/1/params/name" \
    "$STATUS $(json '[.errors[].path] | join(" ")')"
assert_eq "only a target with that kind has it" \
    'target "hv01" has no site benchmark "hepspec06" (disk); targets that have it: vm4' \
    "$(json '.errors[0].message')"

plan nobody null '{"id": "x", "kind": "cpu", "engine": "custom", "params": {"name": "spec2017"}}'
submit nobody "?dry_run=1"
assert_eq "a name nobody declared" \
    '422 target "hv01" has no site benchmark "spec2017" (cpu); targets that have it: none' \
    "$STATUS $(json '.errors[0].message')"

# A ramp of one guest only runs on the first: the second's lack does not count.
jq '.targets.guests.domains = ["vm1", "vm3"] | .concurrency = "ramp" | .ramp = {"from": 1, "to": 1}' \
    "$HV_TMP/ok.json" >"$HV_TMP/ramp.json"
submit ramp "?dry_run=1"
assert_eq "only the targets that run it must have it" 200 "$STATUS"
[[ $STATUS == 200 ]] || echo "# $BODY"

# --- net: a site network benchmark is self-contained (its command knows its far end) --
plan net '["vm1", "vm2"]' '{"id": "lat", "kind": "net", "engine": "custom", "params": {"name": "netlat"}}'
submit net "?dry_run=1"
assert_eq "a net custom both guests declare passes" 200 "$STATUS"
plan netpeer '["vm1", "vm2"]' '{"id": "lat", "kind": "net", "engine": "custom", "params": {"name": "netlat", "peer": "hv01"}}'
submit netpeer "?dry_run=1"
assert_eq "a plan cannot give it a peer: 400 at the param" "400 /workloads/1/params/peer" \
    "$STATUS $(json '[.errors[].path] | join(" ")')"

# --- several custom workloads: one error each, at its own index --------------------
jq '.workloads += [{"id": "io", "kind": "disk", "engine": "custom", "params": {"name": "iolat"}}]
    | .targets.guests = {"label": "pool=site"}' "$HV_TMP/ok.json" >"$HV_TMP/both.json"
submit both "?dry_run=1"
assert_eq "each custom workload is checked" \
    "422 /workloads/1/params/name /workloads/2/params/name" \
    "$STATUS $(json '[.errors[].path] | join(" ")')"
assert_eq "the disk one lacks on every guest" \
    'targets "vm1", "vm2", "vm3" have no site benchmark "iolat" (disk); targets that have it: hv01' \
    "$(json '.errors[1].message')"

# --- hvbench validate --remote shows the refusal -------------------------------------
if [[ -x $CLI ]]; then
    HVBENCH_SERVER=$URL HVBENCH_TOKEN=$SUBMIT_TOKEN "$CLI" validate --remote "$HV_TMP/label.json" \
        >"$HV_TMP/out" 2>"$HV_TMP/err" </dev/null
    assert_eq "validate --remote exits 1" 1 "$?"
    assert_match "and prints the path and the lists" \
        '/workloads/1/params/name: target "vm3" has no site benchmark "hepspec06" \(cpu\); targets that have it: hv01, vm1, vm2' \
        "$(cat "$HV_TMP/err")"
else
    hv_check 0 "validate --remote" "$CLI not built"
fi

hv_finish
