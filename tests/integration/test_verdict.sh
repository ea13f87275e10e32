#!/usr/bin/env bash
# Was adopted advice delivered? Six host workers (v1..v6), each on its own
# fake root, declare two site factors that write a file under it (tier:
# slow|fast, mode: a|b) and two site benchmarks that read them: tierbench
# scores 100, times the factor in $HV_TMP/effect-tier at tier=fast;
# modebench the same with $HV_TMP/effect-mode at mode=b; each with a
# wobble of a few tenths of a percent. Two tuning plans on v1, with both
# effects at 1.10, recommend tier=fast and mode=b (about +10 %). Then mode's
# effect is set to 1.00: on the fleet, mode changes nothing. A fleet plan
# measures both benchmarks on the six hosts as they are (3 rounds); then
# configuration management (here: the test writing the files) sets
# tier=fast on v1..v3 and mode=b on v4..v6, and the workers' settings
# reports (--settings-every 1) open observed adoptions; a second fleet plan
# measures again. Asserted: tier=fast delivered (3 adopted hosts against 3
# controls, the observed gain's interval reaching the predicted one),
# mode=b none (no gain, the predicted one ruled out); each verdict sent once
# as recommendation.verdict to a webhook; the list filters by verdict; a
# verdict stored as regressed carries the rollback in every form.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

A=(-H "Authorization: Bearer $ADMIN_TOKEN")
S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
R=(-H "Authorization: Bearer $READ_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }

echo 1.10 >"$HV_TMP/effect-tier"
echo 1.10 >"$HV_TMP/effect-mode"
# set ROOT FILE LEVEL: what a site factor's apply and revert programs run.
cat >"$HV_TMP/set.sh" <<'EOF'
#!/bin/sh
printf '%s\n' "$3" >"$1/$2"
EOF
# bench ROOT FILE LEVEL EFFECT-FILE: 100, times the effect at LEVEL.
cat >"$HV_TMP/bench.sh" <<'EOF'
#!/bin/sh
n=$(cat "$1/runs" 2>/dev/null || echo 0)
echo $((n + 1)) >"$1/runs"
e=1
[ "$(cat "$1/$2")" = "$3" ] && e=$(cat "$4")
awk -v e="$e" -v n="$n" 'BEGIN { printf "{\"score\": %.3f}\n", 100 * e * (1 + 0.003 * (n % 3 - 1)) }'
EOF
chmod 755 "$HV_TMP/set.sh" "$HV_TMP/bench.sh"
for i in 1 2 3 4 5 6; do
    root=$HV_TMP/root-v$i
    mkdir -p "$root"
    echo slow >"$root/tier"
    echo a >"$root/mode"
    jq -n --arg r "$root" --arg set "$HV_TMP/set.sh" --arg b "$HV_TMP/bench.sh" \
        --arg et "$HV_TMP/effect-tier" --arg em "$HV_TMP/effect-mode" '{
      benchmarks: {
        tierbench: {kind: "cpu", argv: [$b, $r, "tier", "fast", $et], timeout: 30,
                    result: {json: "/score"}, metric: "tierbench.score", unit: "score",
                    higher_is_better: true},
        modebench: {kind: "cpu", argv: [$b, $r, "mode", "b", $em], timeout: 30,
                    result: {json: "/score"}, metric: "modebench.score", unit: "score",
                    higher_is_better: true}},
      factors: {
        tier: {levels: ["slow", "fast"], class: "host", apply: [$set, $r, "tier", "{level}"],
               read: ["/bin/cat", ($r + "/tier")], revert: [$set, $r, "tier", "{value}"]},
        mode: {levels: ["a", "b"], class: "host", apply: [$set, $r, "mode", "{level}"],
               read: ["/bin/cat", ($r + "/mode")], revert: [$set, $r, "mode", "{value}"]}}}' \
        >"$HV_TMP/worker-v$i.json"
    hv_start_worker "v$i" --kind host --sysfs-root "$root" --config "$HV_TMP/worker-v$i.json" \
        --label fleet=verdict --settings-every 1 --poll 1 --wait 1
done
# shellcheck disable=SC2317 # called through wait_for
registered() { [[ $(sql "SELECT count(*) FROM target_settings s JOIN targets t ON t.id = s.target_id WHERE t.name ~ '^v[1-6]$' AND s.settings->>'site.tier' = 'slow'") == 6 ]]; }
wait_for "six host workers register, reporting their site factors" 30 registered
assert_eq "v1's settings hold its site factors as it reads them" "slow a" \
    "$(sql "SELECT s.settings->>'site.tier' || ' ' || (s.settings->>'site.mode') FROM target_settings s JOIN targets t ON t.id = s.target_id WHERE t.name = 'v1'")"

hv_start_hookrecv "$HV_TMP/recv.log"
assert_status 201 POST /api/v1/webhooks "${A[@]}" --data-binary "{\"url\": \"http://127.0.0.1:$RECV_PORT/hook\",
    \"events\": [\"recommendation.verdict\"], \"allow_private\": true}"
json -r .secret >"$HV_TMP/secret"

# shellcheck disable=SC2317 # called through wait_for
ended() { [[ $(sql "SELECT state FROM plans WHERE id = $1") =~ ^(done|failed|cancelled)$ ]]; }
# tune FACTOR LEVELS... WORKLOAD: a tuning plan on v1; sets P.
tune() {
    assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(jq -nc --arg f "site.$1" \
        --arg a "$2" --arg b "$3" --arg w "$4" '{name: ("tune " + $f), targets: {host: "v1"},
        factors: {($f): [$a, $b]}, noise: "keep", repetitions: {min: 4, max: 4},
        order: "sequential", workloads: [{id: $w, kind: "cpu", engine: "custom", params: {name: $w}}]}')"
    P=$(json .id)
    wait_for "plan $P (site.$1 on v1) ends" 120 ended "$P"
    assert_eq "plan $P ended done" "done" "$(sql "SELECT state FROM plans WHERE id = $P")"
}
tune tier slow fast tierbench
TIER=$(sql "SELECT id FROM recommendations WHERE plan_id = $P AND factor = 'site.tier'")
tune mode a b modebench
MODE=$(sql "SELECT id FROM recommendations WHERE plan_id = $P AND factor = 'site.mode'")
assert_eq "both recommended, about +10 % each" "fast true b true" \
    "$(sql "SELECT string_agg(level || ' ' || (gain_pct BETWEEN 8 AND 12), ' ' ORDER BY id) FROM recommendations WHERE id IN ($TIER, $MODE)")"
assert_eq "v1 is as it was: the plans restored their factors" "slow a" \
    "$(cat "$HV_TMP/root-v1/tier") $(cat "$HV_TMP/root-v1/mode")"
# On the fleet, mode changes nothing.
echo 1.00 >"$HV_TMP/effect-mode"

# fleet NAME: both benchmarks on the six hosts, 3 rounds; waits for its end.
fleet() {
    assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(jq -nc --arg n "$1" '{name: $n,
        targets: {host: {label: "fleet=verdict"}}, noise: "keep", repetitions: {min: 3, max: 3},
        workloads: [{id: "tierbench", kind: "cpu", engine: "custom", params: {name: "tierbench"}},
                    {id: "modebench", kind: "cpu", engine: "custom", params: {name: "modebench"}}]}')"
    local f
    f=$(json .id)
    wait_for "fleet plan $f ends" 120 ended "$f"
    assert_eq "fleet plan $f ended done" "done" "$(sql "SELECT state FROM plans WHERE id = $f")"
}
fleet before

assert_status 200 GET "/api/v1/recommendations/$TIER" "${R[@]}"
assert_eq "before any adoption: proposed, not judged" "proposed null" "$(json -r '"\(.state) \(.verdict)"')"

for i in 1 2 3; do echo fast >"$HV_TMP/root-v$i/tier"; done
for i in 4 5 6; do echo b >"$HV_TMP/root-v$i/mode"; done
# shellcheck disable=SC2317 # called through wait_for
adopted() { [[ $(sql "SELECT count(*) FROM recommendation_adoptions WHERE until IS NULL AND source = 'observed' AND recommendation_id IN ($TIER, $MODE)") == 6 ]]; }
wait_for "the settings reports open six observed adoptions" 30 adopted
assert_status 200 GET "/api/v1/recommendations/$TIER" "${R[@]}"
assert_eq "adopted on v1..v3, the verdict pending: no value after the adoption yet" \
    "adopted v1 v2 v3 pending" \
    "$(json -r '"\(.state) \(.adopted.names | join(" ")) \(.verdict.state)"')"

fleet after

# shellcheck disable=SC2317 # called through wait_for
judged() { [[ $(sql "SELECT count(*) FROM recommendations WHERE id IN ($TIER, $MODE) AND verdict <> 'pending'") == 2 ]]; }
wait_for "the sweeper judges both" 30 judged
assert_status 200 GET "/api/v1/recommendations/$TIER" "${R[@]}"
hv_log "tier=fast: $(json -c '.verdict | del(.per_host)')"
assert_eq "tier=fast: delivered, 3 adopted hosts against 3 controls" "delivered 3 3 true" \
    "$(json -r '"\(.state) \(.verdict.hosts) \(.verdict.controls) \(.verdict.controlled)"')"
assert_eq "its observed gain about +10 %, the interval reaching the predicted one" "true" \
    "$(json '.verdict | .gain_pct > 8 and .gain_pct < 12 and .lo_pct > .margin_pct and .hi_pct >= .predicted.lo_pct')"
assert_eq "each host 3 values on each side" "true" \
    "$(json '[.verdict.per_host[] | .before == 3 and .after == 3] | all and length == 6')"
assert_status 200 GET "/api/v1/recommendations/$MODE" "${R[@]}"
hv_log "mode=b: $(json -c '.verdict | del(.per_host)')"
assert_eq "mode=b: none, v4..v6 against v1..v3" "none adopted-none 3 3" \
    "$(json -r '"\(.state) adopted-\(.verdict.state) \(.verdict.hosts) \(.verdict.controls)"')"
assert_eq "its gain within the margin, the predicted one ruled out" "true" \
    "$(json '.verdict | .lo_pct <= .margin_pct and .hi_pct < .predicted.lo_pct and (.rollback == null)')"

assert_status 200 GET "/api/v1/recommendations?state=delivered" "${R[@]}"
assert_eq "the list by verdict: delivered" "$TIER" "$(json '[.items[].id] | join(" ")')"
assert_status 200 GET "/api/v1/recommendations?state=none" "${R[@]}"
assert_eq "the list by verdict: none" "$MODE" "$(json '[.items[].id] | join(" ")')"
assert_status 400 GET "/api/v1/recommendations?state=great" "${R[@]}"

# shellcheck disable=SC2317 # called through wait_for
two_sent() { [[ -s $HV_TMP/recv.log ]] && [[ $(jq -s '[.[] | select(.answered == 204)] | length' "$HV_TMP/recv.log") -ge 2 ]]; }
wait_for "two recommendation.verdict deliveries" 30 two_sent
assert_eq "one per verdict, signed, naming the recommendation and its state" \
    "$TIER:delivered:pending:true $MODE:none:pending:true" \
    "$(jq -rs '[.[] | select(.answered == 204) | .body | "\(.recommendation.id):\(.verdict.state):\(.previous):\(.event == "recommendation.verdict")"] | sort | join(" ")' "$HV_TMP/recv.log")"
# Judged again with nothing new: the same verdict, no second event.
assert_status 200 GET "/api/v1/recommendations/$TIER" "${R[@]}"
sleep 6
assert_eq "judging again sends nothing" 2 "$(sql "SELECT count(*) FROM webhook_deliveries WHERE event = 'recommendation.verdict'")"

# --- regressed: the rollback in every form ---------------------------------------------
# v1..v3 at tier=fast now score half of what they did (an effect of 0.50): a
# third fleet plan makes the mean after the adoption fall below before.
echo 0.50 >"$HV_TMP/effect-tier"
fleet worse
assert_status 200 GET "/api/v1/recommendations/$TIER" "${R[@]}"
hv_log "tier=fast after the fall: $(json -c '.verdict | del(.per_host, .rollback)')"
assert_eq "tier=fast: regressed" "regressed" "$(json -r .state)"
assert_eq "with its rollback in every form" "ansible puppet shell tuned" \
    "$(json -r '.verdict.rollback | keys | join(" ")')"
# A site factor is set by its host worker's programs: every form names
# what to set it back to (a catalogue setting's forms write it: test_advice).
for form in tuned ansible puppet shell; do
    assert_match "the $form form says what rolling back returns to" "rollback: site\.tier=slow" \
        "$(json -r ".verdict.rollback.$form")"
done
# shellcheck disable=SC2317 # called through wait_for
three_sent() { [[ $(jq -s '[.[] | select(.answered == 204)] | length' "$HV_TMP/recv.log") -ge 3 ]]; }
wait_for "a third recommendation.verdict: regressed, after delivered" 30 three_sent
assert_eq "the webhook carries the rollback" "regressed delivered ansible,puppet,shell,tuned" \
    "$(jq -rs '[.[] | select(.answered == 204) | .body | select(.verdict.state == "regressed")][0] | "\(.verdict.state) \(.previous) \(.verdict.rollback | keys | join(","))"' "$HV_TMP/recv.log")"

# --- the CLI --------------------------------------------------------------------------
export HVBENCH_SERVER=$URL HVBENCH_TOKEN=$READ_TOKEN
hv_cli recommendations
hv_log "hvbench recommendations:"$'\n'"$OUT"
hv_cli recommendations --state none
assert_eq "hvbench recommendations --state none: one row, mode=b, none" "0 $MODE site.mode=b none" \
    "$RC $(awk 'NR == 3 { print $1, $2, $(NF - 4) }' <<<"$OUT")"
hv_cli recommendations show "$TIER"
assert_match "show: the verdict with its hosts and controls" \
    "verdict: regressed: observed -2[0-9.]+ % \[.*\], 3 adopted hosts against 3 controls" "$OUT"
assert_match "show: each adoption" "adoption: v2 observed" "$OUT"
hv_cli recommendations show "$TIER" --rollback shell
assert_eq "show --rollback shell prints the shell form" "0 $(json -r .verdict.rollback.shell | head -n 1)" \
    "$RC $(head -n 1 <<<"$OUT")"
hv_cli recommendations show "$MODE" --rollback shell
assert_match "a verdict that is not regressed has no rollback" "1 .*only a regressed verdict" "$RC $ERR"
HVBENCH_TOKEN=$SUBMIT_TOKEN hv_cli recommendations adopt "$MODE" --selector fleet=nowhere
assert_match "adopt: a selector no host matches is refused" "1 .*/selector" "$RC $ERR"
HVBENCH_TOKEN=$SUBMIT_TOKEN hv_cli recommendations adopt "$MODE" v1
assert_match "adopt v1: declared" "adoption: v1 declared, .* by test-submit" "$OUT"

hv_finish
