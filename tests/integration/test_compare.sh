#!/usr/bin/env bash
# shellcheck disable=SC2016 # $v ... in single quotes are jq's variables
# Studies and comparisons (hvbench import --study, GET /api/v1/compare,
# hvbench compare): a study of bonnie++ outputs of a host and a guest
# becomes one plan with a configuration per label, stored as a plan with
# the factor "study" whose default is the baseline; comparing its two
# configurations gives the guest's −20 % as the ratio of geometric means
# with its Welch interval and verdict "worse", and equal figures
# "no_effect"; two plans on different targets compare metric by metric;
# one run a side gives the ratio without an interval; the margin decides
# the verdict; names with '=' and ',' pass unescaped; bad sides get 400,
# unknown plans and configurations 404.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

FX=$HV_ROOT/tests/fixtures
export HVBENCH_SERVER=$URL HVBENCH_TOKEN=$SUBMIT_TOKEN
BONNIE=$(cat "$FX/bonnie/D-f-s1024-r512.csv")
# A bonnie++ CSV file whose block write is $2 K/s, saved as $1.
bonnie_file() { sed "s/,75329,46,/,$2,46,/" <<<"$BONNIE" >"$HV_TMP/$1"; }

# --- a study: host and guest, three runs each ------------------------------------------------
H=(75000 75400 74700) G=(60000 60300 59800)
for i in 0 1 2; do
    bonnie_file "host$i.csv" "${H[i]}"
    bonnie_file "guest$i.csv" "${G[i]}"
done
hv_cli --json import --study kvm-2010 --tool bonnie --target cmp-host --baseline host \
    --label site=lab guest="$HV_TMP/guest0.csv" host="$HV_TMP/host0.csv" \
    host="$HV_TMP/host1.csv" guest:bonnie="$HV_TMP/guest1.csv" host="$HV_TMP/host2.csv" \
    guest="$HV_TMP/guest2.csv"
assert_eq "hvbench import --study: exit 0" 0 "$RC"
STUDY=$(jq .plan_id <<<"$OUT")
assert_eq "the baseline's configuration is default, the other study=LABEL" \
    '[{"label":"host","configuration":"default"},{"label":"guest","configuration":"study=guest"}]' \
    "$(jq -c .configurations <<<"$OUT")"
assert_eq "one run per output, repetitions counted per label" \
    'guest:1 host:1 host:2 guest:2 host:3 guest:3' \
    "$(jq -r '[.runs[] | "\(.label):\(.repetition)"] | join(" ")' <<<"$OUT")"
assert_status 200 GET "/api/v1/plans/$STUDY"
assert_eq "stored as a plan with the factor study, the baseline its default" \
    '[{"study":["host","guest"]},"default","full",{"ci_pct":2,"max":3,"min":3}]' \
    "$(json -cS '[.plan.factors, .plan.baseline, .plan.design, .plan.repetitions]')"
assert_eq "with its labels and where each output came from" \
    'kvm-2010 host 6 lab import' \
    "$(json -r '"\(.plan.study.name) \(.plan.study.baseline) \(.plan.study.outputs | length) \(.plan.labels.site) \(.plan.study.outputs[0].at_source)"')"
assert_eq "the plan is done" done "$(json -r .status)"
assert_eq "configurations carry their levels" 'default={"study": "host"} study=guest={"study": "guest"}' \
    "$("$PG" psql "$HV_TMP/pg" -- -Atc "SELECT string_agg(name || '=' || levels::text, ' ' ORDER BY idx) FROM configurations WHERE plan_id = $STUDY")"
assert_status 200 GET "/api/v1/plans/$STUDY/report"
assert_eq "its report has both configurations" 'default study=guest' \
    "$(json -r '[.rows[] | select(.metric == "disk.seq_write.mbps") | .configuration] | join(" ")')"
assert_eq "and compares the guest with the host baseline, with verdicts" true \
    "$(json '[.comparisons[]? | select(.level == "guest" or .configuration == "study=guest" or (tostring | test("guest")))] | length > 0')"
hv_cli import --study kvm-2010 --tool bonnie --target cmp-host --baseline host \
    guest="$HV_TMP/guest0.csv" host="$HV_TMP/host0.csv" host="$HV_TMP/host1.csv" \
    guest:bonnie="$HV_TMP/guest1.csv" host="$HV_TMP/host2.csv" guest="$HV_TMP/guest2.csv"
assert_eq "the same study again: exit 1" 1 "$RC"
assert_match "naming the plan it is" "imported for target cmp-host before, as plan $STUDY" "$ERR"

# --- the two configurations of the study -----------------------------------------------------
api GET "/api/v1/compare?a=$STUDY&b=$STUDY:study=guest"
assert_eq "compare: 200, the two sides named" "200 default study=guest 1" \
    "$STATUS $(json -r '"\(.a.configuration) \(.b.configuration) \(.margin_pct)"')"
ROW=$(json '.rows[] | select(.metric == "disk.seq_write.mbps")')
# The geometric means of the values the files hold (K/s × 1024 / 1e6).
gm() { jq -n "[$1] | map(. * 1024 / 1e6 | log) | add / length | exp"; }
expect=$(jq -n --argjson a "$(gm "$(IFS=,; echo "${H[*]}")")" \
    --argjson b "$(gm "$(IFS=,; echo "${G[*]}")")" '100 * ($b / $a - 1)')
assert_near "B's change is the ratio of the geometric means" "$expect" "$(jq .change_pct <<<"$ROW")"
assert_eq "its interval holds it, below the margin: worse" 'true worse 3 3 log' \
    "$(jq -r '"\(.lo_pct < .change_pct and .change_pct < .hi_pct and .hi_pct < -1) \(.verdict) \(.a.n) \(.b.n) \(.a.scale)"' <<<"$ROW")"
assert_eq "equal figures on both sides: no_effect" '0 no_effect' \
    "$(json -r '.rows[] | select(.metric == "disk.seeks.iops") | "\(.change_pct) \(.verdict)"')"
api GET "/api/v1/compare?a=$STUDY&b=$STUDY:study=guest&margin_pct=50"
assert_eq "a margin of 50 %: no_effect" no_effect \
    "$(json -r '.rows[] | select(.metric == "disk.seq_write.mbps") | .verdict')"
# The configuration's '=' travels unescaped in the query string.
out=$(curl -s "$URL/api/v1/compare?a=$STUDY:study=guest&b=$STUDY")
assert_eq "PLAN:NAME with a raw '=' in the URL" study=guest "$(jq -r .a.configuration <<<"$out")"

hv_cli compare "$STUDY" "$STUDY:study=guest"
assert_eq "hvbench compare: exit 0" 0 "$RC"
assert_match "a row per metric with its change and verdict" \
    'bonnie +disk\.seq_write\.mbps ↑ +cmp-host +[0-9.]+ \[[0-9.]+, [0-9.]+\] \(n=3\) +[0-9.]+ \[[0-9.]+, [0-9.]+\] \(n=3\) +-(19|20)\.[0-9]+% +\[-2[0-9]\.[0-9]+%, -1[0-9]\.[0-9]+%\] +worse' \
    "$OUT"
hv_cli compare "$STUDY" "$STUDY:study=none"
assert_eq "hvbench compare: an unknown configuration exits 1" 1 "$RC"
assert_match "naming the plan's configurations" 'no configuration "study=none"; it has \["default","study=guest"\]' "$ERR"

# --- two plans, on two targets ---------------------------------------------------------------
cat "$HV_TMP/host0.csv" "$HV_TMP/host1.csv" >"$HV_TMP/hosts.csv"
cat "$HV_TMP/guest0.csv" "$HV_TMP/guest1.csv" >"$HV_TMP/guests.csv"
hv_cli --json import --tool bonnie --target cmp-hv "$HV_TMP/hosts.csv"
A=$(jq .plan_id <<<"$OUT")
hv_cli --json import --tool bonnie --target cmp-vm "$HV_TMP/guests.csv"
B=$(jq .plan_id <<<"$OUT")
api GET "/api/v1/compare?a=$A&b=$B"
assert_eq "each side on one target: rows pair across them" 'cmp-hv cmp-vm true' \
    "$(json -r '.rows[] | select(.metric == "disk.seq_write.mbps") | "\(.a.target) \(.b.target) \(.change_pct < -19)"')"
# Two runs a side: an interval, but too few rounds to print it or to read
# a verdict from it, however far below the margin it lies.
assert_eq "two runs a side: no verdict, the words why" \
    'false inconclusive n = 2: too few rounds for an interval, so the verdict is inconclusive' \
    "$(json -r '.rows[] | select(.metric == "disk.seq_write.mbps") | "\(.usable) \(.verdict) \(.interval_note)"')"
assert_eq "the sides name their targets" '[["cmp-hv"],["cmp-vm"]]' "$(json -c '[.a.targets, .b.targets]')"
hv_cli --json import --tool bonnie --target cmp-vm "$HV_TMP/guest2.csv"
ONE=$(jq .plan_id <<<"$OUT")
api GET "/api/v1/compare?a=$A&b=$ONE"
ROW=$(json '.rows[] | select(.metric == "disk.seq_write.mbps")')
assert_near "one run a side: the ratio of the means" \
    "$(jq -n "(59800 * 1024 / 1e6) / ((75000 + 75400) / 2 * 1024 / 1e6)")" "$(jq .ratio <<<"$ROW")"
assert_eq "without an interval or a verdict" 'null null null 1 none' \
    "$(jq -r '"\(.lo_pct) \(.hi_pct) \(.verdict) \(.b.n) \(.b.scale)"' <<<"$ROW")"

# --- bad sides -------------------------------------------------------------------------------
assert_status 400 GET "/api/v1/compare?b=$A"
assert_eq "a is required" a "$(json -r '.errors[0].path')"
for bad in 0 abc "1:" "-1" "12x"; do
    assert_status 400 GET "/api/v1/compare?a=$(jq -rn --arg v "$bad" '$v | @uri')&b=$A"
done
assert_status 400 GET "/api/v1/compare?a=$A&b=$B&margin_pct=100"
assert_eq "margin_pct is checked" margin_pct "$(json -r '.errors[0].path')"
assert_status 404 GET "/api/v1/compare?a=987654321&b=$A"
assert_match "naming the side" '^a: no plan 987654321$' "$(json -r .detail)"
assert_status 404 GET "/api/v1/compare?a=$A&b=$A:study=x"
hv_cli compare 1
assert_eq "hvbench compare needs two sides (exit 2)" 2 "$RC"

hv_finish
