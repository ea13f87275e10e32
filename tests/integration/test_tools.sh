#!/usr/bin/env bash
# External tools and site benchmarks end to end: a worker started with
# --config publishes its site benchmarks (never their argv) and runs a plan
# of fio, sysbench and two site benchmarks (tests/fixtures/site/bench.sh,
# read by JSON Pointer and by regex) to done, with the tools' metric names,
# versions, argv and raw outputs stored; a plan naming a site benchmark the
# target lacks is refused; a worker whose PATH lacks the tool fails the job
# with the clear reason; a broken configuration stops the worker at start
# with the member's path. Each job of the host worker says what else ran on
# the host meanwhile (observed.interference); a busy one is warned of in
# the report, and a busy loop beside a job shows in its others' share.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

for tool in fio sysbench; do
    command -v "$tool" >/dev/null || hv_die "$tool is not installed (deploy/deps.sh installs it)"
done

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
R=(-H "Authorization: Bearer $READ_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }
BENCH=$HV_ROOT/tests/fixtures/site/bench.sh
export HVBENCH_SCRATCH=$HV_TMP/scratch
mkdir -p "$HVBENCH_SCRATCH"

# --- a broken configuration stops the worker at start ---------------------------
cat >"$HV_TMP/bad.json" <<EOF
{"benchmarks": {"hs06": {"kind": "cpu", "argv": ["spec2k6_vm.sh"], "timeout": 60,
                         "result": {"json": "/score"}, "metric": "hs06.score",
                         "unit": "HS06", "higher_is_better": true}}}
EOF
"$WORKER" --server "$URL" --token "$WORKER_TOKEN" --name bad --config "$HV_TMP/bad.json" \
    >"$HV_TMP/bad.out" 2>&1
assert_eq "a broken configuration is a usage error (exit 2)" 2 "$?"
assert_match "the error names the member" '/benchmarks/hs06/argv/0: must be an absolute path' \
    "$(cat "$HV_TMP/bad.out")"

# --- a worker with site benchmarks ------------------------------------------------
cat >"$HV_TMP/worker.json" <<EOF
{"benchmarks": {
   "site-json": {"kind": "cpu", "argv": ["$BENCH", "json", "--copies", "2"], "timeout": 60,
                 "result": {"json": "/score/value"}, "metric": "site.json.score",
                 "unit": "HS06", "higher_is_better": true},
   "site-text": {"kind": "cpu", "argv": ["$BENCH", "text"], "timeout": 60,
                 "result": {"regex": "Score: ([0-9.]+)"}, "metric": "site.text.score",
                 "unit": "HS06", "higher_is_better": true}}}
EOF
hv_start_worker tools-host --kind host --config "$HV_TMP/worker.json"
registered() {
    api GET /api/v1/targets "${R[@]}"
    [[ $(json '[.items[] | select(.name == "tools-host")] | length') == 1 ]]
}
wait_for "the worker registers" 30 registered
TARGET=$(json '.items[] | select(.name == "tools-host") | .id')
api GET "/api/v1/targets/$TARGET" "${R[@]}"
assert_eq "the target lists its site benchmarks" \
    '[{"higher_is_better":true,"kind":"cpu","metric":"site.json.score","name":"site-json","unit":"HS06"},{"higher_is_better":true,"kind":"cpu","metric":"site.text.score","name":"site-text","unit":"HS06"}]' \
    "$(json -c '(.facts.benchmarks // .benchmarks) | map(to_entries | sort_by(.key) | from_entries)')"
assert_eq "no argv is published" 0 "$(grep -c bench.sh <<<"$BODY")"

# A site benchmark the target lacks is refused at submission.
cat >"$HV_TMP/lacking.json" <<EOF
{"name": "lacking", "targets": {"host": "tools-host"},
 "workloads": [{"id": "hs06", "kind": "cpu", "engine": "custom", "params": {"name": "hepspec06"}}],
 "repetitions": {"min": 1}}
EOF
assert_status 422 POST /api/v1/plans "${S[@]}" --data-binary @"$HV_TMP/lacking.json"
assert_match "the refusal names the missing benchmark" 'has no site benchmark \\"hepspec06\\"' "$BODY"

# --- the plan -----------------------------------------------------------------------
cat >"$HV_TMP/plan.json" <<EOF
{"name": "tools", "targets": {"host": "tools-host"},
 "workloads": [
   {"id": "fio", "kind": "disk", "engine": "fio",
    "params": {"rw": "write", "bs": "4k", "size": "1m", "runtime": 1, "ioengine": "psync",
               "direct": false}},
   {"id": "sysbench", "kind": "cpu", "engine": "sysbench",
    "params": {"test": "cpu", "seconds": 1, "max_prime": 2000}},
   {"id": "site-json", "kind": "cpu", "engine": "custom", "params": {"name": "site-json"}},
   {"id": "site-text", "kind": "cpu", "engine": "custom", "params": {"name": "site-text"}}],
 "repetitions": {"min": 1}}
EOF
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary @"$HV_TMP/plan.json"
PLAN=$(json .id)
plan_ended() {
    api GET "/api/v1/plans/$PLAN" "${R[@]}"
    [[ $(json .status) == done || $(json .status) == failed ]]
}
wait_for "the tools plan ends" 180 plan_ended
assert_eq "the tools plan is done" done "$(json .status)"

api GET "/api/v1/plans/$PLAN/jobs" "${R[@]}"
declare -A JOB
for w in fio sysbench site-json site-text; do
    JOB[$w]=$(json ".items[] | select(.workload == \"$w\") | .id")
done
# result_of WORKLOAD: the job's last result into BODY.
result_of() {
    api GET "/api/v1/jobs/${JOB[$1]}/results?samples=0" "${R[@]}"
    BODY=$(json -c '.items[-1]')
}
metric_of() { json ".metrics[] | select(.name == \"$1\") | .value"; }
positive() { jq -n --arg v "$1" '($v | tonumber? // 0) > 0' 2>/dev/null; }

result_of fio
assert_eq "fio: ok" ok "$(json .status)"
assert_eq "fio: disk.seq_write.mbps is positive" true "$(positive "$(metric_of disk.seq_write.mbps)")"
assert_eq "fio: disk.seq_write.iops is positive" true "$(positive "$(metric_of disk.seq_write.iops)")"
assert_match "fio: observed records its version" '^fio-[0-9]' "$(json -r .observed.tool_version)"
assert_eq "fio: observed records the argv" '"fio" "--rw=write" "--output-format=json"' \
    "$(json -c '.observed.argv | [.[0], (.[] | select(. == "--rw=write" or . == "--output-format=json"))] | map(tojson) | join(" ")')"

result_of sysbench
assert_eq "sysbench: ok" ok "$(json .status)"
assert_eq "sysbench: cpu.sysbench.events_per_s is positive" true \
    "$(positive "$(metric_of cpu.sysbench.events_per_s)")"
assert_match "sysbench: observed records its version" '^sysbench [0-9]' "$(json -r .observed.tool_version)"

# sane: observed.interference holds shares of the host's CPU time, the CPUs
# and the runnable tasks (the reader among them), whatever else runs here.
NCPUS=$(getconf _NPROCESSORS_ONLN)
sane='.observed.interference | (.busy | type) == "boolean" and .ncpus == '"$NCPUS"'
    and .others_cpu_pct >= 0 and .others_cpu_pct <= 100 and .steal_pct >= 0
    and .steal_pct <= 100 and .procs_running >= 1 and .seconds > 0
    and .others_threshold_pct == (50 / .ncpus * 100 | round / 100) and .steal_threshold_pct == 2'
assert_eq "sysbench: observed.interference is sane ($(json -c .observed.interference))" true \
    "$(json "$sane")"
result_of fio
assert_eq "fio: observed.interference is sane ($(json -c .observed.interference))" true \
    "$(json "$sane")"

result_of site-json
assert_eq "site-json: the JSON Pointer's value" 42.5 "$(metric_of site.json.score)"
assert_eq "site-json: its unit" HS06 "$(json -r '.metrics[0].unit')"
assert_eq "site-json: observed records the argv" "[\"$BENCH\",\"json\",\"--copies\",\"2\"]" \
    "$(json -c .observed.argv)"
result_of site-text
assert_eq "site-text: the regex's value" 17.25 "$(metric_of site.text.score)"

raw_of() {
    api GET "/api/v1/jobs/${JOB[$1]}/results?samples=0&raw=1"
    json '.items[-1].raw'
}
assert_match "fio's JSON output is kept as raw" '"fio version"' "$(raw_of fio)"
assert_match "sysbench's report is kept as raw" 'events per second' "$(raw_of sysbench)"
assert_match "the site benchmark's output is kept as raw" '"args": "--copies 2"' "$(raw_of site-json)"

api GET "/api/v1/plans/$PLAN/report" "${R[@]}"
assert_eq "the report has the site benchmark's metric" 17.25 \
    "$(json '.rows[] | select(.metric == "site.text.score") | .mean')"

# A bare-metal job whose interference says busy is warned of like a guest
# job whose host telemetry did, with its others' share in % of a CPU (this
# shared machine may have been busy for any job: all are set here).
sql "UPDATE results SET observed = jsonb_set(observed, '{interference,busy}', 'false')" >/dev/null
sql "UPDATE results SET observed = jsonb_set(observed, '{interference}', observed->'interference' || '{\"busy\": true, \"others_cpu_pct\": 30, \"steal_pct\": 0.5, \"ncpus\": 4}') WHERE job_id = ${JOB[sysbench]}" >/dev/null
api GET "/api/v1/plans/$PLAN/report" "${R[@]}"
assert_eq "a host_busy warning names the busy bare-metal job" \
    "configuration default: 1 job ran while tools-host was busy with other work (job ${JOB[sysbench]} (tools-host); steal up to 0.5 %, the host's own work up to 120.0 % of a CPU): their values carry that work's noise (kept although the plan repeats noisy jobs: the last job its round allowed, one that ran with others, or one whose host telemetry came after its result)" \
    "$(json -r '[.warnings[] | select(.kind == "host_busy") | .message] | join("; ")')"

# A busy loop beside a job: its CPU is others' (the bound is generous: one
# loop takes a CPU when the host's others leave it one).
yes >/dev/null &
YES=$!
HV_WORKER_PIDS+=("$YES")
jq '.name = "beside a busy loop" | .workloads = [.workloads[1] | .params.seconds = 2]' \
    "$HV_TMP/plan.json" >"$HV_TMP/busy.json"
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary @"$HV_TMP/busy.json"
PLAN=$(json .id)
wait_for "the plan beside the busy loop ends" 120 plan_ended
kill "$YES"
api GET "/api/v1/plans/$PLAN/jobs" "${R[@]}"
JOB[busy]=$(json '.items[0].id')
result_of busy
assert_eq "beside a busy loop: others took over 10 % of the CPU time ($(json -c .observed.interference))" \
    true "$(json "($sane) and .observed.interference.others_cpu_pct > 10")"

# --- a tool missing on the worker -----------------------------------------------------
mkdir -p "$HV_TMP/emptybin"
PATH=$HV_TMP/emptybin hv_start_worker tools-nopath
cat >"$HV_TMP/missing.json" <<EOF
{"name": "missing tool", "targets": {"host": "tools-nopath"},
 "workloads": [{"id": "sysbench", "kind": "cpu", "engine": "sysbench",
                "params": {"seconds": 1}}],
 "repetitions": {"min": 1}}
EOF
registered_nopath() {
    api GET /api/v1/targets "${R[@]}"
    [[ $(json '[.items[] | select(.name == "tools-nopath")] | length') == 1 ]]
}
wait_for "the worker without the tools registers" 30 registered_nopath
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary @"$HV_TMP/missing.json"
PLAN=$(json .id)
wait_for "the plan with the missing tool ends" 120 plan_ended
assert_eq "the plan with the missing tool failed" failed "$(json .status)"
api GET "/api/v1/plans/$PLAN/jobs" "${R[@]}"
assert_match "the job says the tool is missing" \
    'sysbench is not installed on this worker \(not found in PATH\)' "$(json -r '.items[0].error')"

hv_finish
