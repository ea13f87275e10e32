#!/usr/bin/env bash
# shellcheck disable=SC2016 # $v ... in single quotes are jq's variables
# What an import records of its workload: the identity its output says
# (fio's rw, bs, iodepth ...; iperf3's streams, direction, MSS ...) as the
# workload's params, so each identity has a history of its own. Twelve
# imports of fio at queue depth 1 then twelve at 32 on one target are two
# series of twelve points, neither with a change point (hvbench history
# exits 0), where one series would show a +230 % step; an iperf3 output
# whose MSS differs from another's is not a repetition of its workload,
# and --params mss=1400 against an output that says 32768 is refused
# naming both; --params size=4G gives a pasted bonnie++ table the size it
# lacks (its observed file_size and its params); keys and values are
# checked; an import stored before identities (params {}) stays a series
# of its own; comparing plans of two identities is refused (409) naming
# the difference; a study keeps a workload per identity.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

FX=$HV_ROOT/tests/fixtures
S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }
export HVBENCH_SERVER=$URL HVBENCH_TOKEN=$SUBMIT_TOKEN
METRIC=disk.rand_read.mbps

# Noise of 1 % (a fixed draw), one value per import.
NOISE=(-0.0026 0.0051 -0.0023 -0.0032 -0.0093 -0.0021 0.0111 0.0042 0.0104 0.0025 0.0039 0.0019
    -0.0167 0.0086 0.0051 0.0050 -0.0169 -0.0174 -0.0089 -0.0047 0.0031 -0.0005 0.0052 -0.0064
    0.0031 0.0039 -0.0066 0.0172 0.0056 0.0120)
# fio_run QD K: the real fio output at queue depth QD with its throughput
# and IOPS moved by the K-th noise value and its stamp 40 − K hours back,
# so each import is an output of its own, in the order K.
fio_run() {
    jq --argjson e "${NOISE[$2]}" --argjson k "$2" '
        .timestamp_ms -= (40 - $k) * 3600000 | .timestamp -= (40 - $k) * 3600
        | .jobs[0].read.bw_bytes = (.jobs[0].read.bw_bytes * (1 + $e) | round)
        | .jobs[0].read.iops *= (1 + $e)' "$FX/fio/randread-qd$1.json"
}
# import_fio TARGET QD K: imports fio_run QD K on TARGET (the answer in
# BODY, the plan in PLAN).
import_fio() {
    fio_run "$2" "$3" >"$HV_TMP/fio.json"
    api POST /api/v1/imports "${S[@]}" --data-binary "$(jq -n --rawfile o "$HV_TMP/fio.json" \
        --arg t "$1" '{tool: "fio", target: $t, output: $o}')"
    [[ $STATUS == 201 ]] || hv_check 0 "import of fio at depth $2 ($3) on $1" "$STATUS $BODY"
    PLAN=$(json .plan_id)
}
QD1='{"bs":4096,"direct":true,"iodepth":1,"ioengine":"libaio","numjobs":1,"rw":"randread","size":33554432}'
QD32=${QD1/\"iodepth\":1/\"iodepth\":32}

# --- twelve imports at queue depth 1, then twelve at 32: two series ------------------------
for k in $(seq 0 11); do import_fio id-host 1 "$k"; done
assert_eq "the receipt says the workload's params" "$QD1" "$(json -cS .params)"
QD1_PLAN=$PLAN
assert_status 200 GET "/api/v1/plans/$PLAN"
assert_eq "the plan's workload has them" "$QD1" "$(json -cS '.plan.workloads[0].params')"
for k in $(seq 12 23); do import_fio id-host 32 "$k"; done
QD32_PLAN=$PLAN
HOST=$(sql "SELECT id FROM targets WHERE name = 'id-host'")
api GET "/api/v1/targets/$HOST/history?metric=$METRIC"
assert_eq "history: two series of twelve points" '200 2 12 12' \
    "$STATUS $(json '"\(.series | length) \(.series[0].n) \(.series[1].n)"')"
assert_eq "each of one queue depth" '1 32' \
    "$(json -r '[.series[].workload.params.iodepth] | sort | map(tostring) | join(" ")')"
assert_eq "the series' workloads are the imports' params" "[$QD1,$QD32]" \
    "$(json -cS '[.series[].workload.params] | sort_by(.iodepth)')"
assert_eq "neither has a change point" '0 0' \
    "$(json '"\([.series[].change_points | length] | add) \(.new_change_points)"')"
hv_cli history id-host "$METRIC"
assert_eq "hvbench history exits 0" 0 "$RC"
assert_eq "it prints both series, each with its queue depth" 2 \
    "$(grep -c 'workload {.*"iodepth":\(1\|32\),' <<<"$OUT")"
assert_eq "each with no change point" 2 "$(grep -c '^no change point' <<<"$OUT")"
hv_cli history --workload fio id-host "$METRIC"
assert_eq "--workload fio: the same, exit 0" "0 2" "$RC $(grep -c 'workload {' <<<"$OUT")"

# --- an import stored before identities keeps {}: a series of its own ------------------------
import_fio id-old 1 24
sql "UPDATE jobs SET workload = jsonb_set(workload, '{params}', '{}') WHERE plan_id = $PLAN" >/dev/null
import_fio id-old 1 25
OLD=$(sql "SELECT id FROM targets WHERE name = 'id-old'")
api GET "/api/v1/targets/$OLD/history?metric=$METRIC"
assert_eq "params {} and the identity: two series of one point" '[1,1] [{},1]' \
    "$(json -c '[.series[] | [(.workload.params.iodepth // {}), .n]] | sort_by(.[0] | tostring) | map(tojson) | join(" ")')"

# --- compare: two identities are not compared ----------------------------------------------------
api GET "/api/v1/compare?a=$QD1_PLAN&b=$QD32_PLAN"
assert_eq "409 naming the param that differs" \
    "409 a's workload fio is not b's: a's has iodepth 1 where b's has 32; different workloads are not compared (compare plans that ran the same one)" \
    "$STATUS $(json -r .detail)"
hv_cli compare "$QD32_PLAN" "$QD1_PLAN"
assert_eq "hvbench compare: exit 1" 1 "$RC"
assert_match "naming it from its side" "a's has iodepth 32 where b's has 1" "$ERR"
import_fio id-other 1 26
api GET "/api/v1/compare?a=$QD1_PLAN&b=$PLAN"
assert_eq "one identity on both sides: compared" '200 fio 1' \
    "$STATUS $(json -r '.rows[] | select(.metric == "disk.rand_read.mbps") | "\(.workload) \(.b.n)"')"

# --- iperf3: the MSS is part of the workload --------------------------------------------------------
cat "$FX/iperf3/client-tcp-P1.json" "$FX/iperf3/client-tcp-M1400.json" >"$HV_TMP/two-mss.json"
hv_cli --json import --tool iperf3 --target id-net "$HV_TMP/two-mss.json"
assert_eq "two outputs of other MSS in one file: exit 1" 1 "$RC"
assert_match "not runs of one workload, naming the MSS" \
    'iperf3: the output holds 2 runs, and they are not runs of one workload: run 2 has mss 1400 where run 1 has 32768' "$ERR"
hv_cli --json import --tool iperf3 --target id-net --params mss=1400 "$FX/iperf3/client-tcp-P1.json"
assert_eq "--params mss=1400 against the output's 32768: exit 1" 1 "$RC"
assert_match "naming both values" 'iperf3: the params say mss 1400 where the output says 32768' "$ERR"
assert_status 400 POST /api/v1/imports "${S[@]}" --data-binary "$(jq -n \
    --rawfile o "$FX/iperf3/client-tcp-P1.json" '{tool: "iperf3", target: "id-net", output: $o, params: {mss: 1400}}')"
assert_eq "400 at /params" '/params iperf3: the params say mss 1400 where the output says 32768' \
    "$(json -r '.errors[0] | "\(.path) \(.message | split(":")[0:2] | join(":"))"')"
hv_cli --json import --tool iperf3 --target id-net --params mss=1400 "$FX/iperf3/client-tcp-M1400.json"
assert_eq "the MSS the output says, given again: exit 0" 0 "$RC"
assert_eq "the params of an iperf3 client's output" \
    '{"bitrate":0,"direction":"forward","mss":1400,"protocol":"tcp","role":"client","streams":1}' \
    "$(jq -cS .params <<<"$OUT")"
assert_eq "what was given is kept with the plan" '{"mss": 1400}' \
    "$(sql "SELECT spec->'import'->'params_given' FROM plans WHERE id = $(jq .plan_id <<<"$OUT")")"
assert_eq "nothing was stored of the refused ones" 1 \
    "$(sql "SELECT count(*) FROM jobs WHERE target_name = 'id-net'")"

# --- bonnie++: a pasted table's size, given -------------------------------------------------------
PASTED=$FX/bonnie/pasted-1.03e-s256-r128-n1.txt
hv_cli --json import --tool bonnie --target id-disk "$PASTED"
assert_eq "a pasted table without --params: its size is unknown, params {}" '0 {}' \
    "$RC $(jq -c .params <<<"$OUT")"
hv_cli --json import --tool bonnie --target id-disk2 --params size=4G "$PASTED"
assert_eq "--params size=4G: exit 0, the size in bytes" '0 {"size":4294967296}' \
    "$RC $(jq -c .params <<<"$OUT")"
assert_eq "the run's observed file size is the one given" '4G {"size": "4G"}' \
    "$(sql "SELECT r.observed->>'file_size', r.observed->'given' FROM results r JOIN jobs j ON j.id = r.job_id WHERE j.plan_id = $(jq .plan_id <<<"$OUT")" | tr '|' ' ')"
hv_cli --json import --tool bonnie --target id-disk3 --params size=1G "$FX/bonnie/f-s4096-r2048.csv"
assert_eq "a size the output says otherwise: exit 1" 1 "$RC"
assert_match "naming both" 'the params say size 1G where the output says 4G' "$ERR"

# --- keys and values -------------------------------------------------------------------------------
hv_cli import --tool bonnie --target id-disk --params Size=4G "$PASTED"
assert_eq "--params with a bad key: exit 2" 2 "$RC"
hv_cli import --tool bonnie --target id-disk --params size "$PASTED"
assert_eq "--params without =: exit 2" 2 "$RC"
assert_status 400 POST /api/v1/imports "${S[@]}" --data-binary "$(jq -n --rawfile o "$PASTED" \
    '{tool: "bonnie", target: "id-disk", output: $o, params: {"Bad Key": 1, ok: [1], long: ("x" * 65)}}')"
assert_eq "every bad member named" '/params /params/long /params/ok' \
    "$(json -r '[.errors[].path] | sort | join(" ")')"

# --- a study: a workload per identity ------------------------------------------------------------------
for k in 26 27 28 29; do fio_run $((k % 2 == 0 ? 1 : 32)) "$k" >"$HV_TMP/s$k.json"; done
hv_cli --json import --study depths --tool fio --target id-study --baseline host \
    host="$HV_TMP/s26.json" host="$HV_TMP/s27.json" vm="$HV_TMP/s28.json" vm="$HV_TMP/s29.json"
assert_eq "a study of two depths under two labels: exit 0" 0 "$RC"
STUDY=$(jq .plan_id <<<"$OUT")
assert_eq "a workload per identity, each label's runs under theirs" \
    'host/fio host/fio-2 vm/fio vm/fio-2' "$(jq -r '[.runs[] | "\(.label)/\(.workload)"] | join(" ")' <<<"$OUT")"
assert_status 200 GET "/api/v1/plans/$STUDY"
assert_eq "the plan's workloads and their depths" 'fio:1 fio-2:32' \
    "$(json -r '[.plan.workloads[] | "\(.id):\(.params.iodepth)"] | join(" ")')"
api GET "/api/v1/compare?a=$STUDY&b=$STUDY:study=vm"
assert_eq "its labels compare each depth with itself" '200 fio:1:1 fio-2:1:1' \
    "$STATUS $(json -r '[.rows[] | select(.metric == "disk.rand_read.mbps") | "\(.workload):\(.a.n):\(.b.n)"] | join(" ")')"

hv_finish
