#!/usr/bin/env bash
# shellcheck disable=SC2016 # $v ... in single quotes are jq's variables
# Studies and comparisons (hvbench import --study, GET /api/v1/compare,
# hvbench compare): a study of bonnie++ outputs of a host and a guest
# becomes one plan with a configuration per label, stored as a plan with
# the factor "study" whose default is the baseline; comparing its two
# configurations gives the guest's −20 % as the ratio of geometric means
# with its interval (paired within rounds, as the plan's report gives it)
# and verdict "worse", and equal figures
# "no_effect"; two plans on different targets compare metric by metric;
# one run a side gives the ratio without an interval; the margin decides
# the verdict; names with '=' and ',' pass unescaped; bad sides get 400,
# unknown plans and configurations 404. Three items (a plan, a
# configuration, a target standing for its latest done plan) compare
# against a baseline: verdicts after Holm over the metric's comparisons,
# the geometric mean of the listed ratios over the primary metrics, the
# settings side by side; too few or too many items get 400, an unknown
# item 404 naming it.
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
# Two configurations of one plan with values in the same rounds: paired
# within rounds, the change and interval the plan's report gives.
api GET "/api/v1/plans/$STUDY/report"
assert_eq "paired, as the report compares them: the same change and interval" \
    "$(json -c '.comparisons[] | select(.metric == "disk.seq_write.mbps") | [.analysis, .pct, .lo_pct, .hi_pct]')" \
    "$(jq -c '[.analysis, .change_pct, .lo_pct, .hi_pct]' <<<"$ROW")"
assert_eq "compare says which analysis: paired" paired "$(jq -r .analysis <<<"$ROW")"
api GET "/api/v1/compare?a=$STUDY&b=$STUDY:study=guest"
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
assert_eq "two plans: Welch on logs" welch "$(json -r '.rows[] | select(.metric == "disk.seq_write.mbps") | .analysis')"
hv_cli --json import --tool bonnie --target cmp-vm "$HV_TMP/guest2.csv"
ONE=$(jq .plan_id <<<"$OUT")
api GET "/api/v1/compare?a=$A&b=$ONE"
ROW=$(json '.rows[] | select(.metric == "disk.seq_write.mbps")')
assert_near "one run a side: the ratio of the means" \
    "$(jq -n "(59800 * 1024 / 1e6) / ((75000 + 75400) / 2 * 1024 / 1e6)")" "$(jq .ratio <<<"$ROW")"
assert_eq "without an interval or a verdict" 'null null null 1 none' \
    "$(jq -r '"\(.lo_pct) \(.hi_pct) \(.verdict) \(.b.n) \(.b.scale)"' <<<"$ROW")"

# --- three items against a baseline -----------------------------------------------------------
C=(74000 74600 73700)
for i in 0 1 2; do bonnie_file "c$i.csv" "${C[i]}"; done
cat "$HV_TMP/c0.csv" "$HV_TMP/c1.csv" "$HV_TMP/c2.csv" >"$HV_TMP/cs.csv"
hv_cli --json import --tool bonnie --target cmp-c "$HV_TMP/cs.csv"
PC=$(jq .plan_id <<<"$OUT")
api GET "/api/v1/compare?items=$STUDY,$STUDY:study=guest,cmp-c"
assert_eq "items: 200, three items, the first the baseline, the target its latest plan" \
    "200 0 $STUDY:default:true $STUDY:study=guest:false $PC:default:false" \
    "$STATUS $(json -r '"\(.baseline) " + ([.items[] | "\(.plan_id):\(.configuration):\(.baseline)"] | join(" "))')"
M=$(json '.metrics[] | select(.metric == "disk.seq_write.mbps")')
assert_eq "a metric: a value per item, a comparison per item but the baseline" '3 null 3 3 3' \
    "$(jq -r '"\(.values | length) \(.comparisons[0]) \(.values[0].n) \(.values[1].n) \(.values[2].n)"' <<<"$M")"
expect=$(jq -n --argjson a "$(gm "$(IFS=,; echo "${H[*]}")")" \
    --argjson c "$(gm "$(IFS=,; echo "${C[*]}")")" '100 * ($c / $a - 1)')
assert_near "the target's change is the ratio of the geometric means" "$expect" \
    "$(jq .comparisons[2].change_pct <<<"$M")"
assert_eq "the guest's the same as in the two-sided answer" worse "$(jq -r .comparisons[1].verdict <<<"$M")"
# Holm over the two comparisons of each metric: the smaller margin p
# doubled, the larger kept (never below the first); a better or worse
# whose adjusted p exceeds 0.05 is inconclusive.
holm='[.comparisons[1:][] | .p_margin // 1] as $p | ($p | min * 2 | if . > 1 then 1 else . end) as $lo
  | [$p[] | if . == ($p | min) then $lo else ([., $lo] | max) end]'
assert_eq "adjusted p-values are Holm's over the metric's comparisons" true \
    "$(json "[.metrics[] | select(.comparisons[1].p_margin != null and .comparisons[2].p_margin != null)
      | ($holm) as \$want | [.comparisons[1:][] | .p_adjusted] as \$got
      | ([range(2)] | all(((\$want[.] - \$got[.]) | fabs) < 1e-9))] | length > 0 and all")"
assert_eq "a directional verdict stands only under 0.05 after Holm" true \
    "$(json '[.metrics[] | .comparisons[1:][] | select(.verdict == "better" or .verdict == "worse") | .p_adjusted <= 0.05] | all')"
# The geometric mean of the listed ratios over the metrics it names,
# inverted where lower is better.
gexp=$(json '.geomean.metrics as $names | .geomean.inverted as $inv
  | [.metrics[] | select(.metric as $m | $names | index($m))] as $ms
  | [1, 2] | map(. as $i | [$ms[] | .comparisons[$i].ratio as $r
      | if (.metric as $m | $inv | index($m)) then (1 / $r) else $r end | log] | add / length | exp)')
assert_near "geomean of the guest: from the listed ratios" "$(jq '.[0]' <<<"$gexp")" "$(json '.geomean.values[1]')"
assert_near "geomean of the target: from the listed ratios" "$(jq '.[1]' <<<"$gexp")" "$(json '.geomean.values[2]')"
assert_eq "over the primary metrics, the baseline 1, the page told" 'true 1 true' \
    "$(json -r '"\(.geomean.metrics | length > 0) \(.geomean.values[0]) \(.geomean.sentence | test("inverted"))"')"
assert_eq "settings side by side, the differing marked" '{"name":"study","values":["host","guest",null],"differs":true}' \
    "$(json -c '.settings[] | select(.name == "study")')"
api GET "/api/v1/compare?items=$STUDY,$STUDY:study=guest,cmp-c&baseline=cmp-c"
assert_eq "baseline= picks the item" '2 null' "$(json -c '"\(.baseline) \(.metrics[0].comparisons[2])"' | tr -d '"')"
hv_cli compare "$STUDY" "$STUDY:study=guest" cmp-c
assert_eq "hvbench compare A B C: exit 0" 0 "$RC"
assert_match "a table per metric, the guest worse" \
    "$STUDY:study=guest +[0-9.]+ \[[0-9.]+, [0-9.]+\] \(n=3\) +-(19|20)\.[0-9]+% +\[-2[0-9]\.[0-9]+%, -1[0-9]\.[0-9]+%\] +worse" "$OUT"
assert_match "and the geometric means" "geometric mean \(.*inverted.*\):
  $STUDY 1
  $STUDY:study=guest 0\.[0-9]+" "$OUT"

assert_status 400 GET "/api/v1/compare?items=$A"
assert_eq "one item: 400 under items" items "$(json -r '.errors[0].path')"
assert_status 400 GET "/api/v1/compare?items=$(printf "$A,%.0s" {1..12})$A"
assert_match "thirteen: too many" 'more than 12' "$(json -r '.errors[0].message // .errors[0].detail')"
assert_status 400 GET "/api/v1/compare?items=$A,$B&baseline=$STUDY"
assert_eq "a baseline not among the items" baseline "$(json -r '.errors[0].path')"
assert_status 404 GET "/api/v1/compare?items=$A,no-such-host"
assert_match "an unknown target named" '^item "no-such-host": no target' "$(json -r .detail)"
assert_status 404 GET "/api/v1/compare?items=$A,987654321"
assert_eq "an unknown plan named" 'item "987654321": no plan 987654321' "$(json -r .detail)"
assert_status 404 GET "/api/v1/compare?items=$A,$STUDY:study=x,thp=y"
assert_match "an unknown configuration named, its ',' kept" 'no configuration "study=x,thp=y"' "$(json -r .detail)"

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
