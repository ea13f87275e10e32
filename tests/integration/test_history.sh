#!/usr/bin/env bash
# shellcheck disable=SC2016 # $v ... in single quotes are jq's variables
# A metric's history on a target (GET /api/v1/targets/{id}/history, hvbench
# history): registrations keep every distinct version of a target's facts;
# a series gathers imports and worker results in the order they ran (an
# import's own date); a planted −12 % step is found at its index with the
# facts that changed around it (QEMU 7.2 → 8.0, the kernel), a later +15 %
# step with the tuning applied in between; ids stay across reads and new
# points; acknowledging one (submit role) stops it being new, and hvbench
# history exits 4 only while a change point is new; long series are cut
# into time buckets; an unchanged series is not searched again and answers
# the same, kept until a new point or an ack moves the target's mark; each
# plan's default configuration counts unless another is asked for; bad
# queries get 400, unknown targets and change points 404; a metric the
# target never measured is a 404 naming those it has (hvbench history
# exits 1), one outside the query's filters an empty 200.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

FX=$HV_ROOT/tests/fixtures
S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
R=(-H "Authorization: Bearer $READ_TOKEN")
T=(-H "Authorization: Bearer $WORKER_TOKEN")
export HVBENCH_SERVER=$URL HVBENCH_TOKEN=$SUBMIT_TOKEN
METRIC=disk.seq_write.mbps
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }

# A bonnie++ 2.00a CSV line whose block write is $1 K/s (the fixture's
# other figures as they are): disk.seq_write.mbps = $1 × 1024 / 1e6.
BONNIE=$(cat "$FX/bonnie/D-f-s1024-r512.csv")
bonnie_line() { sed "s/,75329,46,/,$1,46,/" <<<"$BONNIE"; }
# Noise of 1 % (a fixed draw), one value per import.
NOISE=(-0.0026 0.0051 -0.0023 -0.0032 -0.0093 -0.0021 0.0111 0.0042 0.0104 0.0025 0.0039 0.0019
    -0.0167 0.0086 0.0051 0.0050 -0.0169 -0.0174 -0.0089 -0.0047 0.0031 -0.0005 0.0052 -0.0064
    0.0031 0.0039 -0.0066 0.0172 0.0056 0.0120 -0.0062 -0.0074 -0.0034 -0.0011 0.0063 0.0025)
K=0
# import_at TARGET BASE_KPS [AT]: imports one output of BASE_KPS with the
# next noise value, at AT (default: when the output gives none, now).
import_at() {
    local v
    v=$(jq -n --argjson b "$2" --argjson e "${NOISE[K % 36]}" '$b * (1 + $e) | round')
    K=$((K + 1))
    api POST /api/v1/imports "${S[@]}" --data-binary "$(jq -n --arg o "$(bonnie_line "$v")" \
        --arg t "$1" --arg at "${3:-}" \
        '{tool: "bonnie", target: $t, output: ($o + "\n")} + if $at == "" then {} else {at: $at} end')"
    [[ $STATUS == 201 ]] || hv_check 0 "import $v K/s on $1" "$STATUS $BODY"
}
# register FACTS [FINGERPRINT]: (re-)registers hist-host with these facts.
register() {
    local who=("${T[@]}")
    [[ -n ${W[*]:-} ]] && who=("${W[@]}")
    api POST /api/v1/workers/register "${who[@]}" --data-binary \
        "{\"name\":\"hist-host\",\"kind\":\"host\",\"facts\":$1,\"fingerprint\":\"$2\"}"
    [[ $STATUS == 200 ]] || hv_die "registering hist-host: $STATUS $BODY"
    [[ -z ${W[*]:-} ]] && W=(-H "Authorization: Bearer $(json .worker_token)")
    HOST=$(json .target_id)
}
history() { api GET "/api/v1/targets/$HOST/history?metric=$METRIC$1"; }

# --- the facts of a target, version by version ----------------------------------------------
facts() {
    jq -nc --arg k "$1" --arg q "$2" --arg s "$3" '{kernel: $k, cpu_model: "EPYC 7302",
        libvirt: {version: "9.0.0", hypervisor: "QEMU", hypervisor_version: $q,
                  domains: [{name: "vm0", uuid: "u0", state: $s}]}}'
}
W=()
register "$(facts 6.1.0 7.2.0 running)" 1111111111111111
register "$(facts 6.1.0 7.2.0 "shut off")" 1111111111111111
assert_status 200 GET "/api/v1/targets/$HOST/facts"
assert_eq "the same facts again (a domain stopped) are one version" 1 "$(json '.items | length')"
assert_eq "a version keeps the facts without the domains" '"7.2.0" null 1111111111111111' \
    "$(json -c '.items[0] | "\(.facts.libvirt.hypervisor_version | tojson) \(.facts.libvirt.domains) \(.fingerprint)"')"
assert_eq "seen again: last_seen moved past first_seen" true \
    "$(json '.items[0].last_seen > .items[0].first_seen')"

# --- a step in the history, with the facts that changed around it --------------------------------
for i in $(seq 12); do import_at hist-host 75000; done
register "$(facts 6.5.0 8.0.0 running)" 2222222222222222
assert_status 200 GET "/api/v1/targets/$HOST/facts"
assert_eq "other facts are a new version, newest first" '2 "8.0.0" "7.2.0"' \
    "$(json -c '"\(.items | length) \(.items[0].facts.libvirt.hypervisor_version | tojson) \(.items[1].facts.libvirt.hypervisor_version | tojson)"')"
for i in $(seq 12); do import_at hist-host 66000; done

history ''
assert_eq "history: 200" 200 "$STATUS"
assert_eq "one series of 24 points, bonnie's" '1 24 bonnie 24' \
    "$(json '"\(.series | length) \(.series[0].n) \(.series[0].workload.engine) \(.series[0].points | length)"')"
assert_eq "points in the order they ran" true \
    "$(json '.series[0].points | [.[].at] == ([.[].at] | sort)')"
assert_eq "each point is one result with its plan" true \
    "$(json '[.series[0].points[] | .n == 1 and .plan_id > 0 and .result_id > 0] | all')"
assert_eq "one change point, at the first point after the step, new" '1 12 new 1' \
    "$(json '"\(.series[0].change_points | length) \(.series[0].change_points[0].index) \(.series[0].change_points[0].status) \(.new_change_points)"')"
CP=$(json '.series[0].change_points[0]')
assert_eq "it is the −12 % step (means of the 12 points either side)" true \
    "$(jq '.change_pct < -11 and .change_pct > -13 and .n_before == 12 and .n_after == 12 and .p <= 0.01' <<<"$CP")"
assert_eq "its first point is the 13th import" true \
    "$(jq --argjson s "$(json '.series[0].points')" '.at == $s[12].at and .before_at == $s[11].at and .result_id == $s[12].result_id' <<<"$CP")"
assert_eq "the facts that changed: kernel and QEMU" \
    '[{"fact":"kernel","before":"6.1.0","after":"6.5.0"},{"fact":"libvirt.hypervisor_version","before":"7.2.0","after":"8.0.0"}]' \
    "$(jq -c '.facts_changed | map({fact, before, after})' <<<"$CP")"
assert_eq "the versions in force before and after" '1111111111111111 2222222222222222 1' \
    "$(jq -r '"\(.facts_before.fingerprint) \(.facts_after.fingerprint) \(.facts_versions_between)"' <<<"$CP")"
CP_ID=$(jq .id <<<"$CP")
FIRST=$(jq -S . <<<"$BODY")
SCANNED=$(sql "SELECT scanned_at FROM history_series WHERE metric = '$METRIC' AND target_id = $HOST")
history ''
assert_eq "an unchanged series is not searched again" "$SCANNED" \
    "$(sql "SELECT scanned_at FROM history_series WHERE metric = '$METRIC' AND target_id = $HOST")"
assert_eq "read again: the same change point, the same id" "$CP_ID" "$(json '.series[0].change_points[0].id')"
assert_eq "read again (the points kept): the same answer" "$FIRST" "$(jq -S . <<<"$BODY")"

hv_cli history hist-host "$METRIC"
assert_eq "hvbench history exits 4 on a new change point" 4 "$RC"
assert_match "it prints the step and what changed" \
    "change point $CP_ID \(new\) at .*: -1[12]\.[0-9] %.*libvirt.hypervisor_version: 7.2.0 -> 8.0.0" \
    "$(tr '\n' ' ' <<<"$OUT")"
assert_match "and says why it exits so" 'not acknowledged' "$ERR"
hv_cli history "$HOST" "$METRIC"
assert_eq "a target id works as its name" 4 "$RC"

# --- acknowledging ----------------------------------------------------------------------------------
assert_status 403 POST "/api/v1/change-points/$CP_ID/ack" "${R[@]}"
assert_status 401 POST "/api/v1/change-points/$CP_ID/ack"
assert_status 404 POST /api/v1/change-points/987654321/ack "${S[@]}"
hv_cli ack "$CP_ID"
assert_eq "hvbench ack: exit 0" 0 "$RC"
assert_match "it says who acknowledged" "change point $CP_ID of $METRIC on hist-host: acknowledged by test-submit" "$OUT"
assert_status 200 POST "/api/v1/change-points/$CP_ID/ack" "${S[@]}"
assert_eq "acknowledging again keeps the first" "acknowledged test-submit true hist-host" \
    "$(json -r '"\(.status) \(.acknowledged_by) \(.active) \(.series.target)"')"
history ''
assert_eq "no longer new: the ack changed the answer kept before it at once" "acknowledged 0" \
    "$(json -r '"\(.series[0].change_points[0].status) \(.new_change_points)"')"
# The answer kept for the target's mark (migrations/028) is the one sent
# again, and the same as one rendered afresh once the mark moved with
# nothing changed.
ACKED=$BODY
history ''
assert_eq "read again: the kept answer, byte for byte" "$ACKED" "$BODY"
sql "UPDATE history_marks SET mark = mark + 1 WHERE target_name = 'hist-host'" >/dev/null
history ''
assert_eq "the kept answer equals one rendered afresh" "$(jq -S . <<<"$ACKED")" "$(jq -S . <<<"$BODY")"
hv_cli history hist-host "$METRIC"
assert_eq "hvbench history exits 0 when every change point is acknowledged" 0 "$RC"
hv_cli ack x12
assert_eq "hvbench ack refuses a bad id (exit 2)" 2 "$RC"

# --- new points: the acknowledged change point stays, a new one is new --------------------------------
# A tuning plan's change between the last old point and the first new
# one, still in force (the host worker's journal, as a step result
# stores it), and one made and put back before the history began.
sql "INSERT INTO target_changes (target_name, factor, scope, object, from_value, to_value, changed_at)
     VALUES ('hist-host', 'thp', 'host', '/sys/kernel/mm/transparent_hugepage/enabled', 'madvise', 'never', now())" >/dev/null
sql "INSERT INTO target_changes (target_name, factor, scope, object, from_value, to_value, changed_at, restored_at)
     VALUES ('hist-host', 'halt_poll_ns', 'host', 'kvm', '200000', '0', now() - interval '1 day', now() - interval '23 hours')" >/dev/null
import_at hist-host 76000
history ''
assert_eq "a new point changes the kept answer at once" '25 25 true' \
    "$(json -r '"\(.series[0].n) \(.series[0].points | length) \(.series[0].points[-1].value > 74)"')"
for i in $(seq 11); do import_at hist-host 76000; done
history ''
assert_eq "36 points, two change points" '36 2' \
    "$(json '"\(.series[0].n) \(.series[0].change_points | length)"')"
assert_eq "the first keeps its id and acknowledgement" "$CP_ID acknowledged 12" \
    "$(json -r '.series[0].change_points[0] | "\(.id) \(.status) \(.index)"')"
assert_eq "the second is new, +15 %" 'new 24 true 1' \
    "$(json -r '.series[0].change_points[1] | "\(.status) \(.index) \(.change_pct > 13 and .change_pct < 17)"') $(json .new_change_points)"
assert_eq "around it no fact changed" '[] 2222222222222222' \
    "$(json -c '.series[0].change_points[1] | "\(.facts_changed) \(.facts_before.fingerprint)"' | tr -d '"')"
assert_eq "but the tuning applied in between is listed" '[{"event":"applied","factor":"thp","from":"madvise","to":"never"}]' \
    "$(json -c '.series[0].change_points[1].tuning | map({event, factor, from, to})')"
assert_eq "the first change point has no tuning of its own" '[]' "$(json -c '.series[0].change_points[0].tuning')"
hv_cli history hist-host "$METRIC"
assert_eq "hvbench history exits 4 again" 4 "$RC"

# --- downsampling -------------------------------------------------------------------------------------
history '&max_points=10'
TEN=$(jq -S . <<<"$BODY")
history '&max_points=10'
assert_eq "read again with max_points: the same buckets" "$TEN" "$(jq -S . <<<"$BODY")"
assert_eq "past max_points: at most that many buckets of all 36 points" 'true true 36' \
    "$(json '"\(.series[0].downsampled) \(.series[0].points | length <= 10) \(.series[0].points | map(.n) | add)"')"
assert_eq "each bucket's mean lies within its min and max" true \
    "$(json '[.series[0].points[] | select(.n > 1) | .min <= .value and .value <= .max and .until >= .at] | all')"
assert_eq "change points are computed on every point" 2 "$(json '.series[0].change_points | length')"
hv_cli history --max-points 10 --points hist-host "$METRIC"
assert_match "--points prints the buckets" 'at +value +n +min +max' "$OUT"

# --- a window of time ------------------------------------------------------------------------------------
history ''
FULL=$(jq -S . <<<"$BODY")
A10=$(json -r '.series[0].points[9].at | @uri')
A20=$(json -r '.series[0].points[19].at | @uri')
AT10=$(json -r '.series[0].points[9].at')
AT20=$(json -r '.series[0].points[19].at')
history "&from=$A10&to=$A20"
assert_eq "from and to: the 11 points between them, not cut into buckets" "11 11 false" \
    "$(json '"\(.series[0].n) \(.series[0].points | length) \(.series[0].downsampled)"')"
assert_eq "from the first in the window to the last" "$AT10 $AT20" \
    "$(json -r '"\(.series[0].points[0].at) \(.series[0].points[-1].at)"')"
assert_eq "the window is in the answer" "$AT10" "$(json -r .from)"
assert_eq "change points as for the whole series" 2 "$(json '.series[0].change_points | length')"
history "&from=$A10&to=$A20&max_points=10"
assert_eq "more points than max_points in the window: buckets of the window" "true true 11" \
    "$(json '"\(.series[0].downsampled) \(.series[0].points | length <= 10) \(.series[0].points | map(.n) | add)"')"
history "&from=$A10"
assert_eq "from alone: the window is open at its end" 27 "$(json '.series[0].n')"
history "&to=$A10"
assert_eq "to alone: open at its start" 10 "$(json '.series[0].n')"
history ''
assert_eq "a window's read leaves the whole series' answer as it was" "$FULL" "$(jq -S . <<<"$BODY")"
assert_status 400 GET "/api/v1/targets/$HOST/history?metric=$METRIC&from=$A20&to=$A10"
assert_eq "to before from is refused" to "$(json -r '.errors[0].path')"
assert_status 400 GET "/api/v1/targets/$HOST/history?metric=$METRIC&from=yesterday"
assert_eq "a time that is not ISO 8601 is refused" from "$(json -r '.errors[0].path')"

# --- bad queries -----------------------------------------------------------------------------------------
assert_status 400 GET "/api/v1/targets/$HOST/history"
assert_eq "metric is required" metric "$(json -r '.errors[0].path')"
assert_status 400 GET "/api/v1/targets/$HOST/history?metric=$METRIC&max_points=5"
assert_eq "max_points below 10 is refused" max_points "$(json -r '.errors[0].path')"
assert_status 400 GET "/api/v1/targets/$HOST/history?metric=%ff"
assert_status 404 GET "/api/v1/targets/987654321/history?metric=$METRIC"
assert_status 404 GET /api/v1/targets/987654321/facts
# A metric the target never measured (a typo) is no empty history.
TYPO=disk.seq_write.mbs
HAS=$(sql "SELECT string_agg(name, ', ' ORDER BY name COLLATE \"C\") FROM (SELECT DISTINCT m.name
    FROM metrics m JOIN results r ON r.id = m.result_id JOIN jobs j ON j.id = r.job_id
    WHERE j.target_name = 'hist-host') x")
assert_match "hist-host has measured the metric and others" "(^|, )$METRIC(, |$)" "$HAS"
assert_status 404 GET "/api/v1/targets/$HOST/history?metric=$TYPO"
assert_eq "a metric never measured: 404 unknown_metric naming those it has" \
    "unknown_metric|hist-host never measured $TYPO; it has: $HAS|$HAS|$(awk -F', ' '{print NF}' <<<"$HAS")" \
    "$(json -r '"\(.code)|\(.detail)|\(.metrics | join(", "))|\(.metrics_total)"')"
assert_status 404 GET "/api/v1/targets/$HOST/history?metric=$TYPO&configuration=x&from=2000-01-01"
assert_eq "whatever the filters" unknown_metric "$(json -r .code)"
assert_status 200 GET "/api/v1/targets/$HOST/history?metric=$METRIC&configuration=no-such-configuration"
assert_eq "a metric measured, but not in what the query selects: no series" '0 0' \
    "$(json '"\(.series | length) \(.new_change_points)"')"
assert_status 200 GET "/api/v1/targets/$HOST/history?metric=$METRIC&from=2000-01-01&to=2000-01-02"
assert_eq "nor in a window without points" 0 "$(json '.series | length')"
hv_cli history hist-host "$TYPO"
assert_eq "hvbench history: a metric never measured exits 1" 1 "$RC"
assert_match "naming the metrics the target has" "hist-host never measured $TYPO; it has: $HAS" "$ERR"
hv_cli history --configuration no-such-configuration hist-host "$METRIC"
assert_eq "a metric measured elsewhere: exit 0, saying so" \
    "0 no $METRIC on hist-host in this workload, configuration or window" "$RC $OUT"
hv_cli history no-such-target "$METRIC"
assert_eq "hvbench history: an unknown target name exits 1" 1 "$RC"

# --- an import's own date orders the series ----------------------------------------------------------
import_at old-host 70000 2012-05-01T10:00:00Z
import_at old-host 71000 2010-03-01T10:00:00Z
import_at old-host 72000 2011-04-01
OLD=$(sql "SELECT id FROM targets WHERE name = 'old-host'")
api GET "/api/v1/targets/$OLD/history?metric=$METRIC"
assert_eq "points ordered by when they ran, not when imported" \
    '2010-03-01T10:00:00+00:00 2011-04-01T00:00:00+00:00 2012-05-01T10:00:00+00:00' \
    "$(json -r '[.series[0].points[].at] | join(" ")')"
assert_status 201 POST /api/v1/imports "${S[@]}" --data-binary "$(jq -n --rawfile o "$FX/fio/seq-write.json" \
    '{tool: "fio", target: "old-host", output: $o}')"
FIO_AT=$(json -r .started_at)
api GET "/api/v1/targets/$OLD/history?metric=$METRIC"
assert_eq "another workload is another series" 'bonnie fio' "$(json -r '[.series[].workload.engine] | sort | join(" ")')"
assert_eq "fio's own stamp is the point's time" true \
    "$(json --arg at "$FIO_AT" '(.series[] | select(.workload.engine == "fio") | .points[0].at | sub("\\+00:00$"; "")) == ($at | sub("Z$"; ""))')"
api GET "/api/v1/targets/$OLD/history?metric=$METRIC&workload=fio"
assert_eq "workload= keeps the jobs of that id" fio "$(json -r '[.series[].workload.engine] | join(" ")')"

# --- worker results, and only each plan's default configuration ---------------------------------------
hv_register hist-w
WTARGET=$TARGET
jq '.targets.host = "hist-w" | .repetitions.min = 2 | .workloads[0].params.seconds = 1' \
    "$HV_ROOT/examples/quick.json" >"$HV_TMP/plan.json"
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary @"$HV_TMP/plan.json"
# The second result ran first: the series follows started_at.
for run in "1500 03" "1510 02"; do
    read -r v day <<<"$run"
    api POST /api/v1/jobs/claim "${W[@]}" --data-binary '{}'
    job=$(json .job.id)
    api POST "/api/v1/jobs/$job/result" "${W[@]}" --data-binary "$(jq -n --argjson v "$v" \
        --arg at "2026-01-${day}T10:00:00Z" '{attempt: 1, status: "ok", started_at: $at,
        finished_at: $at, metrics: [{name: "cpu.score", value: $v, unit: "score"}]}')"
    [[ $STATUS == 201 ]] || hv_check 0 "upload of job $job" "$STATUS $BODY"
done
api GET "/api/v1/targets/$WTARGET/history?metric=cpu.score"
assert_eq "a worker's results are a series, in the order they ran" \
    '2 builtin 1 1510,1500 2026-01-02T10:00:00+00:00' \
    "$(json -r '.series[0] | "\(.n) \(.workload.engine) \(.workload.params.copies) \([.points[].value] | map(tostring) | join(",")) \(.first)"')"

# A study on one target: its baseline label is the default configuration.
line() { bonnie_line "$1"; }
study=$(jq -n --arg h1 "$(line 75000)" --arg h2 "$(line 75400)" --arg g1 "$(line 60000)" \
    --arg g2 "$(line 60300)" '{study: "cache", target: "hist-study", baseline: "none",
    outputs: [{label: "none", tool: "bonnie", output: ($h1 + "\n")},
              {label: "writeback", tool: "bonnie", output: ($g1 + "\n")},
              {label: "none", tool: "bonnie", output: ($h2 + "\n")},
              {label: "writeback", tool: "bonnie", output: ($g2 + "\n")}]}')
assert_status 201 POST /api/v1/imports "${S[@]}" --data-binary "$study"
STUDY_TARGET=$(sql "SELECT id FROM targets WHERE name = 'hist-study'")
api GET "/api/v1/targets/$STUDY_TARGET/history?metric=$METRIC"
assert_eq "by default the baseline label's points" '2 76.8 77.2096' \
    "$(json -r '.series[0] | "\(.n) \(.points[0].value) \(.points[1].value)"')"
api GET "/api/v1/targets/$STUDY_TARGET/history?metric=$METRIC&configuration=study=writeback"
assert_eq "configuration= takes that configuration's" '2 61.44 61.7472' \
    "$(json -r '.series[0] | "\(.n) \(.points[0].value) \(.points[1].value)"')"

hv_finish
