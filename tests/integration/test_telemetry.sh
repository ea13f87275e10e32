#!/usr/bin/env bash
# shellcheck disable=SC2317 # the wait_for conditions are called through wait_for
# Host telemetry of guest jobs. A host worker run with --libvirt (the
# libvirt test driver, whose domain "test" stands for the guest) asks the
# server once a second which of its domains run a job, samples the host
# meanwhile, and uploads host.* samples when the job ends; they come back
# with the guest's result on its time axis, with observed.host_busy. The
# guest is played with curl, registered with the domain's UUID as its
# dmi_product_uuid. Only the host worker may upload a job's telemetry;
# without a host worker the result says telemetry "missing" and why.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
R=(-H "Authorization: Bearer $READ_TOKEN")
UUID=6695eb01-f6a4-8304-79aa-97f2502e193f # the test driver's domain "test"

hv_start_worker tel-host --libvirt test:///default --kind host --wait 5
HOST_PID=${HV_WORKER_PIDS[-1]}
host_registered() {
    api GET /api/v1/targets "${R[@]}"
    [[ $(json '[.items[] | select(.name == "tel-host")] | length') == 1 ]]
}
wait_for "the host worker registered" 30 host_registered

# Its UUID is tel-host's domain's: it is tel-host's guest, tel-host/tel-guest
# (the plan on tel-other below names it alone, as the one guest of that name).
hv_register tel-guest guest "{\"dmi_product_uuid\":\"$UUID\"}"
GUEST=$TARGET WG=("${W[@]}")
api GET "/api/v1/targets/$GUEST" "${R[@]}"
assert_eq "the guest is linked to the host's domain" "tel-host test" \
    "$(json '"\(.domain.host) \(.domain.name)"')"
hv_register tel-other host '{}'
WO=("${W[@]}")

# tel-other never claims: its host jobs stay queued, the guest's run.
jq '.name = "telemetry" | .targets = {"host": "tel-other", "guests": {"domains": ["tel-guest"]}}
    | .repetitions.min = 2 | .workloads[0].params.seconds = 1' \
    "$HV_ROOT/examples/quick.json" >"$HV_TMP/plan.json"
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary @"$HV_TMP/plan.json"

# --- a guest job while the host worker samples --------------------------------------------
assert_status 200 POST /api/v1/jobs/claim "${WG[@]}" --data-binary '{}'
JOB1=$(json .job.id) ATT1=$(json .job.attempt)
api GET /api/v1/workers/telemetry "${WO[@]}"
assert_eq "another host's worker is told of no job" 0 "$(json '.jobs | length')"
api GET /api/v1/workers/telemetry "${WG[@]}"
assert_eq "nor is the guest's own" 0 "$(json '.jobs | length')"
sampling() { grep -q "job $JOB1 attempt $ATT1 runs on domain test" "$HV_TMP/worker-tel-host.log"; }
wait_for "the host worker starts sampling the guest's job" 15 sampling
sleep 4 # a few one-second samples
assert_status 200 POST "/api/v1/jobs/$JOB1/heartbeat" "${WG[@]}" --data-binary "{\"attempt\":$ATT1}"
now=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)
assert_status 201 POST "/api/v1/jobs/$JOB1/result" "${WG[@]}" --data-binary \
    "{\"attempt\":$ATT1,\"status\":\"ok\",\"started_at\":\"$now\",\"finished_at\":\"$now\",\"metrics\":[{\"name\":\"cpu.score\",\"value\":100,\"unit\":\"score\"}],\"samples\":[{\"metric\":\"cpu.score\",\"t\":1,\"value\":100}]}"
present() {
    api GET "/api/v1/jobs/$JOB1/results" "${R[@]}"
    [[ $(json '.items[0].telemetry') == present ]]
}
wait_for "the host's telemetry arrives after the job ended" 20 present
assert_eq "no reason when present" null "$(json '.items[0].telemetry_reason')"
assert_eq "host CPU, steal, iowait, load and the other domains' CPU are sampled" \
    "host.cpu.iowait_pct host.cpu.steal_pct host.cpu.system_pct host.cpu.user_pct host.load1 host.others.cpu_pct" \
    "$(json '[.items[0].samples[].metric | select(startswith("host."))] | unique | join(" ")')"
# The test driver's records carry no cpu.time, block or interface counters
# (only the domain's state): no host.domain.* series is made up from them.
assert_eq "at least two seconds of each" true \
    "$(json '[.items[0].samples[] | select(.metric == "host.load1")] | length >= 2')"
assert_eq "the guest's own samples are kept beside them" 1 \
    "$(json '[.items[0].samples[] | select(.metric == "cpu.score")] | length')"
assert_eq "host samples are on the result's axis (before its start: negative t)" true \
    "$(json '[.items[0].samples[] | select(.metric == "host.load1") | .t] | min < 0')"
assert_eq "percentages are percentages" true \
    "$(json '[.items[0].samples[] | select(.metric | endswith("_pct")) | .value] | all(. >= 0 and . <= 100)')"
assert_eq "observed.host_busy says whether the host was busy, with its numbers" \
    "boolean 0 25 null" \
    "$(json '.items[0].observed.host_busy | "\(.busy | type) \(.others_cpu_pct) \(.others_threshold_pct) \(.nonguest_cpu_pct)"')"
# The chart's endpoint has the host.* series too, with the same values.
HOST_LOAD=$(json -c '[.items[0].samples[] | select(.metric == "host.load1")] | sort_by(.t) | [[.[].t], [.[].value]]')
GUEST_SAMPLES=$(json -c '[.items[0].samples[].metric] | unique')
assert_status 200 GET "/api/v1/jobs/$JOB1/samples" "${R[@]}"
assert_eq "samples: the guest's series and the host's, by name" "$GUEST_SAMPLES" \
    "$(json -c '[.series[].metric]')"
assert_eq "samples: host.load1 with the results' times and values" "$HOST_LOAD" \
    "$(json -c '.series[] | select(.metric == "host.load1") | [.t, .value]')"
assert_eq "samples: its count and bounds" true \
    "$(json '.series[] | select(.metric == "host.load1") | .n >= 2 and .first < 0 and .downsampled == false')"
assert_status 200 GET "/api/v1/jobs/$JOB1/samples?from=-1000&to=1000&points=10" "${R[@]}"
assert_eq "samples in a range: host.load1 there too" "$HOST_LOAD" \
    "$(json -c '.series[] | select(.metric == "host.load1") | [.t, .value]')"

# --- only the host worker may upload telemetry ----------------------------------------
tel='{"attempt":1,"status":"missing","reason":"forged"}'
assert_status 403 POST "/api/v1/jobs/$JOB1/telemetry" "${WG[@]}" --data-binary "$tel"
assert_match "the guest's worker is refused, naming who may" 'host whose domain' "$(json .detail)"
assert_status 403 POST "/api/v1/jobs/$JOB1/telemetry" "${WO[@]}" --data-binary "$tel"
assert_status 403 POST "/api/v1/jobs/$JOB1/telemetry" "${S[@]}" --data-binary "$tel"
assert_status 403 GET /api/v1/workers/telemetry "${R[@]}"
assert_status 400 POST "/api/v1/jobs/$JOB1/telemetry" "${WG[@]}" --data-binary \
    '{"attempt":1,"status":"ok","t0":"2026-01-01T00:00:00Z","samples":[{"metric":"cpu.x","t":1,"value":1}]}'
assert_match "telemetry samples are host.* only" 'host\.\*' "$(json '.errors[0].message')"
# The host worker's own credential, as it keeps it in its state folder.
WH=(-H "Authorization: Bearer $(jq -r .token "$HV_TMP/state/tel-host/credential")")
assert_status 200 POST "/api/v1/jobs/$JOB1/telemetry" "${WH[@]}" --data-binary "$tel"
assert_eq "the host's second upload of an attempt stores nothing" false "$(json .stored)"
assert_status 409 POST "/api/v1/jobs/$JOB1/telemetry" "${WH[@]}" --data-binary \
    '{"attempt":7,"status":"missing","reason":"never claimed"}'
api GET "/api/v1/jobs/$JOB1/results" "${R[@]}"
assert_eq "nothing replaced the host's first telemetry" present "$(json '.items[0].telemetry')"

# --- without a host worker: missing, with the reason; the job still succeeds --------------
hv_stop_pid "$HOST_PID"
assert_status 200 POST /api/v1/jobs/claim "${WG[@]}" --data-binary '{}'
JOB2=$(json .job.id) ATT2=$(json .job.attempt)
assert_status 201 POST "/api/v1/jobs/$JOB2/result" "${WG[@]}" --data-binary \
    "{\"attempt\":$ATT2,\"status\":\"ok\",\"metrics\":[{\"name\":\"cpu.score\",\"value\":99,\"unit\":\"score\"}]}"
api GET "/api/v1/jobs/$JOB2" "${R[@]}"
assert_eq "the job is done without telemetry" "done" "$(json .status)"
api GET "/api/v1/jobs/$JOB2/results" "${R[@]}"
assert_eq "its result says telemetry missing" missing "$(json '.items[0].telemetry')"
assert_match "and why" 'no host worker sent telemetry' "$(json '.items[0].telemetry_reason')"
assert_eq "no host samples, no host_busy" "0 null" \
    "$(json '"\([.items[0].samples[] | select(.metric | startswith("host."))] | length) \(.items[0].observed.host_busy)"')"


# --- the report names the jobs that ran while the host was busy ------------------------
# The telemetry of JOB1 said busy (set here: the test driver's host is
# idle), and the plan's host lists the guest's domain as TCG with a KVM
# probe's answer in its facts: the report says both.
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }
P=$(sql "SELECT plan_id FROM jobs WHERE id = $JOB1")
sql "UPDATE telemetry SET observed = jsonb_set(observed, '{host_busy}', observed->'host_busy' || '{\"busy\": true, \"others_cpu_pct\": 40, \"steal_pct\": 0.5, \"nonguest_cpu_pct\": 12}') WHERE job_id = $JOB1" >/dev/null
sql "UPDATE targets SET facts = facts || '{\"libvirt\": {\"domains\": [{\"name\": \"tel-guest\", \"type\": \"qemu\"}]}, \"kvm_probe\": {\"answer\": \"tcg\", \"why\": \"no ready marker from a kvm guest within 60s\", \"probed_at\": \"2026-12-01T19:43:53Z\", \"current\": true}}' WHERE name = 'tel-other'" >/dev/null
assert_status 200 GET "/api/v1/plans/$P/report" "${R[@]}"
assert_eq "a host_busy warning names the busy job of its configuration" \
    "configuration default: 1 job ran while tel-other was busy with other work (job $JOB1 (tel-host/tel-guest); other domains up to 40.0 % of a CPU, steal up to 0.5 %, the host's own work up to 12.0 % of a CPU): their values carry that work's noise (kept although the plan repeats noisy jobs: the last job its round allowed, one that ran with others, or one whose host telemetry came after its result)" \
    "$(json -r '[.warnings[] | select(.kind == "host_busy") | .message] | join("; ")')"
assert_match "the emulated warning says what the host's KVM probe found" \
    "^tel-host/tel-guest ran under QEMU's TCG emulation .*\. The KVM probe of tel-other found KVM unusable there: no ready marker from a kvm guest within 60s \(probed 2026-12-01T19:43:53Z\)$" \
    "$(json -r '.warnings[] | select(.kind == "emulated") | .message')"
HVBENCH_SERVER=$URL HVBENCH_TOKEN=$READ_TOKEN "$CLI" report "$P" >"$HV_TMP/report.md"
assert_match "hvbench report prints it" "job $JOB1 \(tel-host/tel-guest\)" "$(grep 'busy with other work' "$HV_TMP/report.md")"

hv_finish
