#!/usr/bin/env bash
# Hostile names: every plan string that becomes a name, a path, XML text or
# a command-line argument on a host (the template's prefix and domain,
# guests.domains, targets.host, a site factor's and a site benchmark's
# name, a local hook) must be a host-safe name (docs/plans.md, "Host-safe
# names"). Each string here — markup, an entity, quotes, a kernel
# parameter, a way up, a path, a new line, a NUL, a "%00" as typed, 129
# characters, Unicode
# look-alikes — is submitted at each place and answered 400 with the error
# at that place's JSON path (a NUL is refused by the JSON parser, before
# any path); nothing is stored. The log ends with the table of string,
# path and answer.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")

# The strings, each as JSON text.
A129=$(printf 'a%.0s' {1..129})
STRINGS=(
    '"x</name><uuid>0</uuid><name>y"'
    '"a<b"'
    '"a&b"'
    '"a\"b"'
    "\"a'b\""
    '"a init=/bin/sh "'
    '"../../etc/x"'
    '"a/b"'
    '"a\nb"'
    '"a\u0000b"'
    '"a%00b"'
    "\"$A129\""
    '"\uff48\uff5601"'
    '"vm\u0430"'
)

# The places: a plan with the string $s at one place, and that place's
# JSON path (a site factor's path is its escaped name).
# shellcheck disable=SC2016 # jq's variables
PLACES='def wl: [{id: "cpu", kind: "cpu"}];
def tmpl(t): {name: "n", targets: {host: "h", guests: {template: t}},
              factors: {vcpu_pin: ["off"]}, workloads: wl};
[ {path: "/targets/host", plan: {name: "n", targets: {host: $s}, workloads: wl}},
  {path: "/targets/guests/domains/1",
   plan: {name: "n", targets: {host: "h", guests: {domains: ["vm1", $s]}}, workloads: wl}},
  {path: "/targets/guests/template/domain", plan: tmpl({domain: $s, count: 2})},
  {path: "/targets/guests/template/prefix", plan: tmpl({domain: "tmpl", count: 2, prefix: $s})},
  {path: ("/factors/" + ("site." + $s | gsub("~"; "~0") | gsub("/"; "~1"))),
   plan: {name: "n", targets: {host: "h"}, factors: {("site." + $s): ["a"]}, workloads: wl}},
  {path: "/workloads/0/params/name",
   plan: {name: "n", targets: {host: "h"},
          workloads: [{id: "c", kind: "cpu", engine: "custom", params: {name: $s}}]}},
  {path: "/hooks/before_host/local",
   plan: {name: "n", targets: {host: "h"}, hooks: {before_host: {local: $s}}, workloads: wl}} ]'

# A legitimate plan at every place passes (dry run), so the refusals are
# the strings' doing.
good=$(jq -nc '{name: "n", targets: {host: "hv-01.lab", guests: {template: {domain: "tmpl_1",
    count: 2, prefix: "bench.a-"}}}, factors: {vcpu_pin: ["off"]},
    hooks: {before_host: {local: "drain"}}, workloads: [{id: "cpu", kind: "cpu"}]}')
assert_status 200 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$good"

# Every case in one jq run (jq is slow to start on a busy machine): a
# JSON array of {string, path} in cases.json, one plan a line in bodies.
strings=$(printf '%s\n' "${STRINGS[@]}" | jq -sc .)
jq -nc --argjson all "$strings" \
    "[\$all[] as \$s | ($PLACES)[] | {string: \$s, path}]" >"$HV_TMP/cases.json"
jq -nc --argjson all "$strings" "\$all[] as \$s | ($PLACES)[] | .plan" >"$HV_TMP/bodies"
mkdir -p "$HV_TMP/answers"
n=0
while IFS= read -r body; do
    api POST /api/v1/plans "${S[@]}" --data-binary "$body"
    printf '%s' "$BODY" >"$HV_TMP/answers/$n.json"
    echo "$STATUS" >"$HV_TMP/answers/$n.status"
    n=$((n + 1))
done <"$HV_TMP/bodies"
assert_eq "one answer per case" "$(jq length "$HV_TMP/cases.json")" "$n"

# Each case: 400; a NUL is refused by the JSON parser (jansson refuses
# one anywhere in a body, before any path), everything else is an
# invalid_plan with an error at the case's path naming the rule (or the
# field's length limit, for 129 characters). One line per check:
# "1|0 <tab> what <tab> detail", then the table.
answers=()
for ((i = 0; i < n; i++)); do answers+=("$HV_TMP/answers/$i.json"); done
statuses=$(for ((i = 0; i < n; i++)); do cat "$HV_TMP/answers/$i.status"; done | jq -sc .)
# shellcheck disable=SC2016 # jq's variables
jq -nr --slurpfile cases "$HV_TMP/cases.json" --argjson statuses "$statuses" '
    [inputs] as $answers | $cases[0] | to_entries[] |
    .key as $i | .value as $c | $answers[$i] as $a | $statuses[$i] as $st |
    ($c.string | tojson | .[0:34]) as $what |
    ([$a.errors[]? | select(.path == $c.path) | .message][0] // "") as $msg |
    (if ($c.string | explode | any(. == 0)) then
        [[($st == 400 and $a.code == "bad_json"), "\($what) at \($c.path): 400 bad_json",
          "\($st) \($a.code)"]]
     else
        [[($st == 400 and $a.code == "invalid_plan"), "\($what) at \($c.path): 400 invalid_plan",
          "\($st) \($a.code)"],
         [($msg | test("host-safe name|at most|must use only")),
          "\($what): the error at \($c.path) names the rule",
          ($a.errors | tojson)]]
     end)[] | "\(if .[0] then 1 else 0 end)\t\(.[1] | gsub("\n"; "\\n"))\t\(.[2])"
    ' "${answers[@]}" >"$HV_TMP/checks"
while IFS=$'\t' read -r ok what detail; do
    hv_check "$ok" "$what" "$detail"
done <"$HV_TMP/checks"
assert_eq "every case checked" "$(jq 'length' "$HV_TMP/cases.json")" \
    "$(grep -c ': 400 ' "$HV_TMP/checks")"

echo "# string -> path -> answer"
# shellcheck disable=SC2016 # jq's variables
jq -nr --slurpfile cases "$HV_TMP/cases.json" --argjson statuses "$statuses" '
    [inputs] as $answers | $cases[0] | to_entries[] |
    .key as $i | .value as $c | $answers[$i] as $a |
    ([$a.errors[]? | select(.path == $c.path) | .message][0] // "") as $msg |
    "# \($c.string | tojson | .[0:34] | . + " " * (36 - length)) \($c.path | tojson | . + " " * (46 - length)) \($statuses[$i]) \($a.code)\(if $msg != "" then ": " + $msg[0:48] else "" end)"
    ' "${answers[@]}"

api GET /api/v1/plans "${S[@]}"
assert_eq "nothing was stored" 0 "$(json '.items | length')"
hv_finish
