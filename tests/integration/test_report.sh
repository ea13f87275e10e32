#!/usr/bin/env bash
# The plan report on the real server and database, with results uploaded
# through the worker protocol (the host and two guests played with curl): a
# tuning plan {"vcpu_pin": ["off", "on"]} where "on" is 5 % faster, the two
# guests running together (one group, one observation per round), the
# host as the baseline. The report's verdict, overhead sentence,
# efficiency and recommendation; ?format=csv and md; hvbench report
# --format table|md|csv|json; a group's values stored near the largest
# double still average without overflow.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

[[ -x $CLI ]] || hv_die "$CLI not built"
S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }
MINUS=$'\xe2\x88\x92'

hv_register rep-host host '{"cpus":2}'
WH=("${W[@]}")
hv_register vm0 guest '{"cpus":2}'
W0=("${W[@]}")
hv_register vm1 guest '{"cpus":2}'
W1=("${W[@]}")

plan=$(jq -n '{name: "pin", targets: {host: "rep-host", guests: {domains: ["vm0", "vm1"]}},
    concurrency: "all-guests", factors: {vcpu_pin: ["off", "on"]}, repetitions: {min: 6},
    workloads: [{id: "cpu", kind: "cpu", engine: "builtin", params: {copies: 1, seconds: 1}}]}')
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$plan"
P=$(json .id)
assert_status 200 GET "/api/v1/plans/$P/report"
assert_eq "before any result: no rows, a partial report" "0 true" "$(json '"\(.rows | length) \(.partial)"')"

# The value of a run: guests 900 (x 1.05 with vcpu_pin=on), the host 1000,
# each times a small per-round factor; vm0 runs 0.2 % above its group's
# mean and vm1 as much below, so a round's mean is exactly 900 x f x noise.
value() { # WHO CONFIGURATION REPETITION
    awk -v who="$1" -v cfg="$2" -v r="$3" 'BEGIN {
        split("0.995 1.004 0.998 1.003 0.999 1.001", off, " ")
        split("1.002 0.997 1.001 0.996 1.004 1.000", on, " ")
        split("1.001 0.999 1.002 0.998 1.000 1.000", host, " ")
        if (who == "rep-host") v = 1000 * host[r]
        else v = 900 * (cfg == "vcpu_pin=on" ? 1.05 * on[r] : off[r]) * (who == "vm0" ? 1.002 : 0.998)
        printf "%.6f", v }'
}

# play NAME CREDENTIAL...: one claim of NAME's worker; answers a step with
# every level read back, a job with its value. Sets PLAYED=1 when it did.
play() {
    local who=$1 id att
    shift
    api POST /api/v1/jobs/claim "$@" --data-binary '{}'
    [[ $STATUS == 200 ]] || return 0
    PLAYED=1
    if [[ $(json '.step != null') == true ]]; then
        id=$(json .step.id) att=$(json .step.attempt)
        local settings
        settings=$(json -c '.step.levels | with_entries(.value = {level: .value, read_back: .value, source: "test"})')
        api POST "/api/v1/steps/$id/result" "$@" --data-binary \
            "{\"attempt\":$att,\"status\":\"ok\",\"settings\":$settings,\"changes\":[]}"
        [[ $STATUS == 201 ]] || echo "# step answer: $STATUS $BODY"
        return 0
    fi
    id=$(json .job.id) att=$(json .job.attempt)
    local v
    v=$(value "$who" "$(json -r .job.configuration)" "$(json .job.repetition)")
    api POST "/api/v1/jobs/$id/result" "$@" --data-binary \
        "{\"attempt\":$att,\"status\":\"ok\",\"metrics\":[{\"name\":\"cpu.score\",\"value\":$v,\"unit\":\"score\"},{\"name\":\"cpu.score_per_copy\",\"value\":$v,\"unit\":\"score\"}]}"
    [[ $STATUS == 201 ]] || echo "# result: $STATUS $BODY"
}

for ((i = 0; i < 200; i++)); do
    PLAYED=0
    play rep-host "${WH[@]}"
    play vm0 "${W0[@]}"
    play vm1 "${W1[@]}"
    [[ $PLAYED == 0 ]] && break
done
assert_status 200 GET "/api/v1/plans/$P"
assert_eq "the plan ran: 24 guest jobs and 6 host jobs done" "done 30" "$(json -r '"\(.status) \(.jobs.done)"')"

# --- the report ------------------------------------------------------------------
assert_status 200 GET "/api/v1/plans/$P/report"
R=$BODY
jr() { jq -r "$@" <<<"$R"; }
assert_eq "complete: no partial flag" false "$(jr .partial)"
assert_eq "the guests that ran together are one observation per round" "6 2 guests" \
    "$(jr '.summaries[] | select(.configuration == "default" and .target != "rep-host" and .metric == "cpu.score") | "\(.n) \(.target)"')"
assert_eq "a round's value is the mean of its guests' values" 903.6 \
    "$(jr '.summaries[] | select(.configuration == "default" and .target == "2 guests" and .metric == "cpu.score") | .runs[] | select(.round == 2) | .value')"
assert_eq "with both jobs behind it" 2 \
    "$(jr '.summaries[] | select(.configuration == "default" and .target == "2 guests" and .metric == "cpu.score") | .runs[0].jobs | length')"
assert_eq "rows keep their fields" "configuration,workload,target,metric,unit,higher_is_better,n,mean,sd,ci95_low,ci95_high,ci95_half_pct" \
    "$(jr '.rows[0] | keys_unsorted | join(",")')"

# Verdicts: one comparison (the primary metric; cpu.score_per_copy is shown, not judged).
assert_eq "one comparison feeds the recommendations" "1 holm" "$(jr '"\(.family.comparisons) \(.family.method)"')"
C=$(jr -c '.comparisons[0]')
assert_eq "vcpu_pin=on against off, in the guests" "vcpu_pin on off guests cpu.score 6" \
    "$(jq -r '"\(.factor) \(.level) \(.default) \(.side) \(.metric) \(.n)"' <<<"$C")"
assert_eq "better, also after Holm" "better better" "$(jq -r '"\(.verdict) \(.family_verdict)"' <<<"$C")"
assert_match "the change is about +5 %" '^(4\.[5-9]|5\.[0-4])[0-9]*$' "$(jq -r .pct <<<"$C")"
assert_eq "its interval lies past the margin and covers +5 %" true \
    "$(jq '.lo_pct > 1 and .lo_pct < 5 and .hi_pct > 5' <<<"$C")"
assert_match "the verdict's sentence" \
    '^cpu score in the guests with vcpu_pin=on: \+5\.[0-9] % \[\+[0-9.]+, \+[0-9.]+\] vs vcpu_pin=off \(n = 6 rounds, paired within each\): better$' \
    "$(jq -r .sentence <<<"$C")"

# Overhead against the host, and the efficiency.
assert_match "the overhead sentence" \
    "^cpu score in the guests: ${MINUS}10\.[0-9] % \[${MINUS}[0-9.]+, ${MINUS}[0-9.]+\] vs the host \(n = 6 each\)$" \
    "$(jr '.overhead[] | select(.configuration == "default" and .metric == "cpu.score") | .sentence')"
assert_match "with vcpu_pin=on the guests lose 5.5 %" \
    "^cpu score in the guests with vcpu_pin=on: ${MINUS}5\.[0-9] % " \
    "$(jr '.overhead[] | select(.configuration == "vcpu_pin=on" and .metric == "cpu.score") | .sentence')"
assert_match "the guests keep about 90 % of the host's cpu" '^0\.(89|90)' \
    "$(jr '.efficiency[] | select(.configuration == "default") | .overall.efficiency')"

# The recommendation.
assert_eq "one recommendation: vcpu_pin=on, risk low, live" "1 vcpu_pin on low live" \
    "$(jr '"\(.recommendations | length) \(.recommendations[0] | "\(.factor) \(.level) \(.risk_level) \(.disruption)")"')"
assert_match "with the catalogue's apply snippet" '^virsh vcpupin' "$(jr '.recommendations[0].apply')"
assert_match "and links to the jobs behind it" '^/api/v1/jobs/[0-9]+$' "$(jr '.recommendations[0].links[0]')"
JOB=$(jr '.recommendations[0].jobs[0]')
assert_eq "the evidence is a job of this plan" "$P" "$(sql "SELECT plan_id FROM jobs WHERE id = $JOB")"
assert_eq "every comparison decided: the sequential rule's stop, every configuration's" \
    "sequential decided decided decided" \
    "$(jr '"\(.repetitions.rule) \(.repetitions.decision) " + ([.repetitions.configurations[].stop] | join(" "))')"
assert_eq "the catalogue shows the risk level" low \
    "$(curl -s "$URL/api/v1/catalog" | jq -r '.factors[] | select(.name == "vcpu_pin") | .risk_level')"

# --- Markdown and CSV ---------------------------------------------------------------
assert_status 200 GET "/api/v1/plans/$P/report?format=md"
assert_match "md: text/markdown" '^text/markdown' "$CONTENT_TYPE"
MD=$BODY
assert_eq "md: the title" "# Report of plan $P: pin (done)" "$(head -n 1 <<<"$MD")"
assert_eq "md: the answer first" "## Answer" "$(grep -m 1 '^## ' <<<"$MD")"
assert_match "md: the answer's recommendation" $'## Answer\n\n- Recommended 1: vcpu_pin=on: cpu score in the guests \\+5\\.' "$MD"
assert_match "md: the recommendation" '1\. \*\*vcpu_pin=on\*\* \(risk: low, disruption: live\)' "$MD"
assert_match "md: the overhead sentence" "- cpu score in the guests: ${MINUS}10\." "$MD"
assert_status 200 GET "/api/v1/plans/$P/report?format=csv"
assert_match "csv: text/csv" '^text/csv' "$CONTENT_TYPE"
CSV=$BODY
assert_eq "csv: the header" "section,configuration,against,level,workload,target,side,metric,unit,higher_is_better,round,n,estimate,lo,hi,sd,cv_pct,verdict,sentence" \
    "$(head -n 1 <<<"$CSV" | tr -d '\r')"
assert_match "csv: the comparison row" $'\ncomparison,,,vcpu_pin=on,cpu,,guests,cpu.score,score,true,,6,[45]\\.[0-9]+,' "$CSV"
assert_eq "csv: a run row per round of each summary" \
    "$(jr '[.summaries[].runs[]] | length')" "$(grep -c '^run,' <<<"$CSV")"
assert_status 400 GET "/api/v1/plans/$P/report?format=xml"
assert_match "a bad format names the argument" '"path": ?"format"' "$BODY"
assert_status 404 GET "/api/v1/plans/987654/report?format=csv"

# --- the CLI -----------------------------------------------------------------------------
export HVBENCH_SERVER=$URL
cli() {
    "$CLI" "$@" >"$HV_TMP/out" 2>"$HV_TMP/err" </dev/null
    RC=$?
    OUT=$(cat -- "$HV_TMP/out")
}
cli report "$P"
assert_eq "report (table) exits 0" 0 "$RC"
sed 's/^/# | /' <<<"$OUT"
assert_match "table: the summary row of the guests" '^default +cpu +2 guests +cpu\.score ↑ +6 ' "$(grep '^default .*2 guests .*cpu.score ↑' <<<"$OUT")"
assert_match "table: the verdict" 'vcpu_pin=on vs off +6 +\+5\.[0-9] % .* better' "$OUT"
assert_match "table: the overhead" "cpu score in the guests: ${MINUS}10\." "$OUT"
assert_match "table: the recommendation" '1\. Set vcpu_pin=on \(the plan.s default is off\)' "$OUT"
# The answer comes first: right under the header, before the summary table.
assert_eq "table: the answer opens the report" "Answer" "$(sed -n 3p <<<"$OUT")"
assert_match "answer: the recommendation with its gain and interval" \
    '^  Recommended 1: vcpu_pin=on: cpu score in the guests \+5\.[0-9] % \[\+[0-9.]+, \+[0-9.]+\] \(n = 6 rounds\)$' \
    "$(sed -n 4p <<<"$OUT")"
assert_match "answer: the guests' efficiency" '^  Efficiency: the guests keep (89|90)\.[0-9] % \[' "$(sed -n 5p <<<"$OUT")"
assert_eq "answer: how many comparisons are decided" \
    "  Decided: 1 of 1 comparison (1 better, 0 worse, 0 no effect); 0 inconclusive" \
    "$(grep '^  Decided:' <<<"$OUT")"
assert_eq "json: the report's answer is the lines the CLI prints under Answer" \
    "$(jr '.answer[] | "  " + .')" "$(awk '/^Answer$/ { a = 1; next } a && /^  / { print; next } a { exit }' <<<"$OUT")"
assert_eq "json: the decided counts" '{"comparisons":1,"better":1,"worse":0,"no_effect":0,"inconclusive":0}' \
    "$(jq -c .decided <<<"$R")"
assert_eq "answer before the summary table" 1 \
    "$(awk '/^Answer$/ { a = NR } /^configuration / { t = NR } END { print (a > 0 && a < t) }' <<<"$OUT")"
assert_eq "table: primary metrics only" 0 "$(grep -c 'cpu\.score_per_copy' <<<"$OUT")"
assert_eq "table: the efficiency is said once, in the answer" 2 "$(grep -c 'of the host.s performance' <<<"$OUT")"
assert_eq "table: the rows left out, and how to list them" \
    "5 rows of other metrics and percentiles left out: --all lists them" "$(tail -n 1 <<<"$OUT")"
cli report --all "$P"
assert_eq "--all exits 0" 0 "$RC"
assert_eq "--all: the answer still first" "Answer" "$(sed -n 3p <<<"$OUT")"
assert_eq "--all: every metric's summary row" 3 "$(grep -c '^[a-z_=]* *cpu .*cpu\.score_per_copy ↑' <<<"$OUT")"
assert_eq "--all: an overhead line per entry" "$(jr '.overhead | length')" \
    "$(awk '/^Overhead$/ { on = 1; next } on && /^$/ { on = 0 } on { n++ } END { print n }' <<<"$OUT")"
assert_eq "--all: the overhead of the other metric too" 2 "$(grep -c '^  cpu score-per-copy in the guests' <<<"$OUT")"
assert_match "--all: the efficiency section" $'\nEfficiency\n  the guests keep' "$OUT"
assert_eq "--all: nothing left out" 0 "$(grep -c 'left out' <<<"$OUT")"
cli report --format md "$P"
assert_eq "--format md prints the server's Markdown" "$MD" "$OUT"
cli report --format csv "$P"
assert_eq "--format csv prints the server's CSV" "$(tr -d '\r' <<<"$CSV")" "$(tr -d '\r' <<<"$OUT")"
cli report --format json "$P"
JSON_OUT=$OUT
cli --json report "$P"
assert_eq "--format json is --json" "$JSON_OUT" "$OUT"
assert_eq "--json prints the report" "$(jq -c .recommendations <<<"$R")" "$(jq -c .recommendations <<<"$OUT")"
cli report --format xml "$P"
assert_eq "--format xml is a usage error" 2 "$RC"

# --- values near the largest double --------------------------------------------------------
sql "UPDATE metrics SET value = 1.7e308 WHERE name = 'cpu.score_per_copy' AND result_id IN
     (SELECT r.id FROM results r JOIN jobs j ON j.id = r.job_id WHERE j.plan_id = $P
      AND j.repetition = 1 AND j.target_name IN ('vm0', 'vm1'))" >/dev/null
assert_status 200 GET "/api/v1/plans/$P/report"
assert_match "a group of values near the largest double averages without overflow" '^1\.7[0-9]*e\+308$' \
    "$(json '.summaries[] | select(.configuration == "default" and .target == "2 guests" and .metric == "cpu.score_per_copy") | .runs[0].value' | tr 'E' 'e')"
assert_status 200 GET "/api/v1/plans/$P/report?format=csv"

# --- recommendations per host, across its tuning plans --------------------------------------
assert_status 200 GET "/api/v1/recommendations?target=rep-host"
assert_eq "the host's recommendations come from its tuning plan" "$P vcpu_pin on" \
    "$(json -r '.items[0] | "\(.plan_id) \(.factor) \(.level)"')"
assert_eq "and list the plans read" "$P" "$(json '.plans[0].id')"
assert_status 200 GET "/api/v1/recommendations"
assert_eq "without target: the recommendations kept when the plan ended done" \
    "1 $P vcpu_pin on null" \
    "$(json -c '"\(.items | length) \(.items[0].plan_id) \(.items[0].factor) \(.items[0].level) \(.next_cursor)"')"
assert_status 400 GET "/api/v1/recommendations?state=gone"
assert_status 404 GET "/api/v1/recommendations?target=nobody"

hv_finish
