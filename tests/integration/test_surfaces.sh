#!/usr/bin/env bash
# One estimator everywhere: a series' centre (the geometric mean) and its
# 95 % interval on logs are the same, to the printed precision, in the
# API's summaries and in every format of `hvbench report` (table, json,
# csv, md); one comparison is the same in the report, in /api/v1/compare
# and in `hvbench compare`, which prints what the API computed; a series
# of 2 rounds, a comparison and an overhead of 2 rounds each print the
# server's words instead of an interval. (The web
# page's table and compare page against the API: test_web's browser
# test.) Results are uploaded by hand, so every value is known.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
hv_register surf-host
cli() { HVBENCH_SERVER=$URL HVBENCH_TOKEN=$READ_TOKEN "$CLI" "$@"; }
g4() { awk -v x="$1" 'BEGIN { printf "%.4g", x }'; } # cli_fmt_num and hv_fmt_value below 1e5

# A tuning plan on the host: thp always (the default) and never, 4 rounds;
# cpu.score 1000, 1012, 991, 1004 under always and 5 % more under never.
plan=$(jq -c '.name = "surfaces" | .targets.host = "surf-host" | .workloads[0].params.seconds = 1
    | .factors = {"thp": ["always", "never"]} | .repetitions = {min: 4, max: 4, ci_pct: 2}' \
    "$HV_ROOT/examples/quick.json")
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$plan"
P=$(json .id)
VALUES=(1000 1012 991 1004)
while :; do
    api POST /api/v1/jobs/claim "${W[@]}" --data-binary '{}'
    [[ $STATUS == 200 ]] || break
    if [[ $(json -r .step.kind) != null ]]; then
        api POST "/api/v1/steps/$(json .step.id)/result" "${W[@]}" --data-binary \
            "{\"attempt\":$(json .step.attempt),\"status\":\"ok\"}"
        continue
    fi
    v=${VALUES[$(($(json .job.repetition) - 1))]}
    [[ $(json -r .job.configuration) == default ]] || v=$(awk -v v="$v" 'BEGIN { print v * 1.05 }')
    api POST "/api/v1/jobs/$(json .job.id)/result" "${W[@]}" --data-binary \
        "{\"attempt\":$(json .job.attempt),\"status\":\"ok\",\"metrics\":[{\"name\":\"cpu.score\",\"value\":$v,\"unit\":\"score\"}]}"
    [[ $STATUS == 201 ]] || hv_die "result: $STATUS $BODY"
done
assert_status 200 GET "/api/v1/plans/$P" -H "Authorization: Bearer $READ_TOKEN"
assert_eq "the plan is done" "done" "$(json -r .status)"

# --- one series: the default's cpu.score on the host ---------------------------------------
assert_status 200 GET "/api/v1/plans/$P/report" -H "Authorization: Bearer $READ_TOKEN"
report=$BODY
sel='.summaries[] | select(.metric == "cpu.score" and .configuration == "default")'
c=$(jq -r "$sel | .interval.center" <<<"$report")
lo=$(jq -r "$sel | .interval.lo" <<<"$report")
hi=$(jq -r "$sel | .interval.hi" <<<"$report")
hv_log "API: centre $c [$lo, $hi]"
assert_eq "the API's centre is the geometric mean" \
    "$(awk 'BEGIN { printf "%.9g", exp((log(1000) + log(1012) + log(991) + log(1004)) / 4) }')" \
    "$(awk -v x="$c" 'BEGIN { printf "%.9g", x }')"
assert_eq "on logs" log "$(jq -r "$sel | .interval.scale" <<<"$report")"
assert_eq "a usable interval" "true null" "$(jq -r "$sel | \"\(.usable) \(.interval_note)\"" <<<"$report")"

cli report "$P" --format json >"$HV_TMP/r.json"
assert_eq "json: the same centre and bounds" "$c $lo $hi" \
    "$(jq -r "$sel | \"\(.interval.center) \(.interval.lo) \(.interval.hi)\"" "$HV_TMP/r.json")"

table=$(cli report "$P")
assert_eq "table: the centre and the interval" "$(g4 "$c") [$(g4 "$lo"), $(g4 "$hi")]" \
    "$(awk '$1 == "default" && $4 == "cpu.score" { print $7, $8, $9; exit }' <<<"$table")"

md=$(cli report "$P" --format md)
assert_match "md: the centre and the interval" \
    "\\| default \\| .* \\| cpu\\.score \\(primary\\) \\| score \\| 4 \\| $(g4 "$c") \\| \\[$(g4 "$lo"), $(g4 "$hi")\\] \\(log\\) \\|" "$md"

csv=$(cli report "$P" --format csv)
line=$(grep '^summary,default,' <<<"$csv" | grep ',cpu.score,')
est=$(awk -F, -v h="$(head -n1 <<<"$csv")" 'BEGIN { n = split(h, c, ","); for (i = 1; i <= n; i++) k[c[i]] = i }
    { print $k["estimate"], $k["lo"], $k["hi"] }' <<<"$line")
assert_eq "csv: the same centre and bounds (to 9 digits)" \
    "$(awk -v a="$c" -v b="$lo" -v d="$hi" 'BEGIN { printf "%.9g %.9g %.9g", a, b, d }')" \
    "$(awk '{ printf "%.9g %.9g %.9g", $1, $2, $3 }' <<<"$est")"

# --- one comparison: thp=never against the default ------------------------------------------
rsel='.comparisons[] | select(.metric == "cpu.score" and .factor == "thp")'
# The report pairs the plan's complete rounds; /compare, between any two
# selections, is Welch on logs: the same centre (4 rounds: nothing is
# trimmed), each its own interval.
rpct=$(jq -r "$rsel | [.pct, .lo_pct, .hi_pct] | map(. * 100 | round / 100) | @tsv" <<<"$report")
assert_eq "the report's comparison is paired" paired "$(jq -r "$rsel | .analysis" <<<"$report")"
assert_status 200 GET "/api/v1/compare?a=$P&b=$P:thp=never" -H "Authorization: Bearer $READ_TOKEN"
cmp=$BODY
csel='.rows[] | select(.metric == "cpu.score")'
apct=$(jq -r "$csel | [.change_pct, .lo_pct, .hi_pct] | map(. * 100 | round / 100) | @tsv" <<<"$cmp")
hv_log "report (paired): $rpct; compare (Welch): $apct"
assert_eq "its centre is /compare's (the same rounds)" "$(cut -f1 <<<"$rpct")" "$(cut -f1 <<<"$apct")"
g9() { awk '{ printf "%.9g %.9g %.9g", $1, $2, $3 }'; }
assert_eq "and its side A is the report's series (to 9 digits)" "$(g9 <<<"$c $lo $hi")" \
    "$(jq -r "$csel | .a | \"\(.center) \(.lo) \(.hi)\"" <<<"$cmp" | g9)"
out=$(cli compare "$P" "$P:thp=never")
row=$(grep 'cpu\.score' <<<"$out")
b=$(jq -r "$csel | .b | \"\(.center) \(.lo) \(.hi)\"" <<<"$cmp")
read -r bc blo bhi <<<"$b"
want_pct=$(jq -r "$csel | [.change_pct, .lo_pct, .hi_pct] | \"\(.[0]) \(.[1]) \(.[2])\"" <<<"$cmp" |
    awk '{ printf "%+.2f%% *\\[%+.2f%%, %+.2f%%\\]", $1, $2, $3 }')
assert_match "hvbench compare prints the API's sides" \
    "$(g4 "$c") \\[$(g4 "$lo"), $(g4 "$hi")\\] \\(n=4\\) +$(g4 "$bc") \\[$(g4 "$blo"), $(g4 "$bhi")\\] \\(n=4\\)" "$row"
assert_match "and its change" "${want_pct//+/\\+}" "$row"

# --- two rounds: words, not an interval -------------------------------------------------------
# thp always (the default, the baseline) and never, 2 rounds each; never
# 40 % and 160 % faster: a comparison and an overhead whose intervals on
# logs reach past +100000 %, so every surface prints words instead.
plan2=$(jq -c '.name = "two" | .targets.host = "surf-host" | .workloads[0].params.seconds = 1
    | .factors = {"thp": ["always", "never"]} | .baseline = "default"
    | .repetitions = {min: 2, max: 2, ci_pct: 2}' "$HV_ROOT/examples/quick.json")
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$plan2"
P2=$(json .id)
DEFAULT2=(1000 1100) NEVER2=(1400 2600)
while :; do
    api POST /api/v1/jobs/claim "${W[@]}" --data-binary '{}'
    [[ $STATUS == 200 ]] || break
    if [[ $(json -r .step.kind) != null ]]; then
        api POST "/api/v1/steps/$(json .step.id)/result" "${W[@]}" --data-binary \
            "{\"attempt\":$(json .step.attempt),\"status\":\"ok\"}"
        continue
    fi
    i=$(($(json .job.repetition) - 1))
    v=${DEFAULT2[$i]}
    [[ $(json -r .job.configuration) == default ]] || v=${NEVER2[$i]}
    api POST "/api/v1/jobs/$(json .job.id)/result" "${W[@]}" --data-binary \
        "{\"attempt\":$(json .job.attempt),\"status\":\"ok\",\"metrics\":[{\"name\":\"cpu.score\",\"value\":$v,\"unit\":\"score\"}]}"
    [[ $STATUS == 201 ]] || hv_die "result: $STATUS $BODY"
done
assert_status 200 GET "/api/v1/plans/$P2/report" -H "Authorization: Bearer $READ_TOKEN"
report2=$BODY
note=$(json -r '.summaries[] | select(.metric == "cpu.score" and .configuration == "default") | .interval_note')
assert_match "n = 2: the server's words" '^n = 2: too few rounds for an interval; about [0-9]+ more would give ±2 %$' "$note"
table2=$(cli report "$P2")
md2=$(cli report "$P2" --format md)
assert_match "hvbench report prints them" "$note" "$table2"
assert_match "so does the Markdown" "$note" "$md2"

# The comparison and the overhead: usable false with the words, and no
# verdict from an interval of 2 rounds.
cn=$(jq -r "$rsel | \"\(.usable) \(.verdict) \(.family_verdict) \(.interval_note)\"" <<<"$report2")
hv_log "comparison: $cn; bounds $(jq -r "$rsel | \"\(.lo_pct) \(.hi_pct)\"" <<<"$report2")"
hv_log "$(sed -n '/^Verdicts/,$p' <<<"$table2")"
assert_match "the comparison's interval is not usable, its verdict inconclusive" \
    '^false inconclusive inconclusive n = 2: too few rounds for an interval' "$cn"
on=$(jq -r '.overhead[] | select(.metric == "cpu.score") | "\(.usable) \(.verdict) \(.interval_note)"' <<<"$report2")
assert_match "so is the overhead's" '^false inconclusive n = 2: too few rounds for an interval' "$on"
assert_eq "and the efficiency's" "false n = 2: too few rounds for an interval" \
    "$(jq -r '.efficiency[0].overall | "\(.usable) \(.interval_note)"' <<<"$report2")"
assert_match "the comparison's sentence has the words, not the bounds" \
    '\+[0-9.]+ % \(n = 2: too few rounds for an interval[^)]*\) vs thp=always' \
    "$(jq -r "$rsel | .sentence" <<<"$report2")"
assert_match "the table's verdict row prints them" 'thp=never vs always +2 +\+[0-9.]+ % +n = 2: too few rounds' "$table2"
assert_eq "no bracketed bound in the table's verdicts and overhead" "" \
    "$(sed -n '/^Verdicts/,$p' <<<"$table2" | grep -E '\[[^]]*[0-9]' || true)"
assert_eq "no bound below -100 anywhere in the table or the Markdown" "" \
    "$(grep -oE '(−|-)[0-9]+(\.[0-9]+)?' <<<"$table2$md2" | sed 's/−/-/' | awk '$1 < -100' || true)"
csv2=$(cli report "$P2" --format csv)
assert_eq "csv: the comparison's bounds are empty" "," \
    "$(awk -F, -v h="$(head -n1 <<<"$csv2")" 'BEGIN { n = split(h, c, ","); for (i = 1; i <= n; i++) k[c[i]] = i }
        $1 == "comparison" { print $k["lo"] "," $k["hi"] }' <<<"$csv2" | tr -d '\r' | head -n1)"

assert_status 200 GET "/api/v1/compare?a=$P2&b=$P2:thp=never" -H "Authorization: Bearer $READ_TOKEN"
assert_eq "/compare: the difference is not usable" \
    "false inconclusive n = 2: too few rounds for an interval" \
    "$(jq -r "$csel | \"\(.usable) \(.verdict) \(.interval_note)\"" <<<"$BODY")"
assert_match "hvbench compare prints the words" 'n = 2: too few rounds for an interval +inconclusive' \
    "$(cli compare "$P2" "$P2:thp=never" | grep 'cpu\.score')"

hv_finish
