#!/usr/bin/env bash
# The web page in a real headless Chromium against a real server and
# database filled by real plan runs: a quick plan run to the end by a real
# worker, a plan that fails (stress-ng is not on the worker's PATH), a
# tuning plan with two levels of a factor whose guest jobs a real worker
# runs (the host's apply and restore steps and its baseline jobs are
# answered by a small loop here, as the host worker would: this machine's
# settings are never changed), and a plan waiting for a target that never
# registered, and a fleet plan over three hosts chosen by label, each run by
# its own real worker. tests/browser/web.test.js (playwright-core driving Debian's
# /usr/bin/chromium) then checks every page against the REST API, clicks
# plan → job → target → history → compare, and saves a screenshot of each
# page in build/test-logs/web/.
# Needs node, npm and chromium (deploy/deps.sh; node comes with the machine).
set -uo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

BROWSER_DIR=$HV_ROOT/tests/browser
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    hv_missing_tool "node and npm needed for the browser test"
fi
[[ -x $CHROMIUM ]] || hv_missing_tool "$CHROMIUM missing: run deploy/deps.sh (package chromium)"
hv_npm_install "$BROWSER_DIR"

hv_setup
S=(-H "Authorization: Bearer $SUBMIT_TOKEN" -H 'Content-Type: application/json')

# --- a quick plan and a failing one, run by a real worker ------------------------
plan=$(jq -c '.targets.host = "web-host" | .workloads[0].params.seconds = 1' "$HV_ROOT/examples/quick.json")
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$plan"
QUICK=$(json .id)
plan=$(jq -c '.name = "web-fail" | .targets.host = "web-host" | .repetitions.min = 1
    | .workloads[0] = {"id": "sng", "kind": "cpu", "engine": "stress-ng", "params": {"seconds": 1}}' \
    "$HV_ROOT/examples/quick.json")
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$plan"
FAIL=$(json .id)
# Without a PATH the worker has no stress-ng to run: that plan fails with
# the reason; the built-in cpu engine needs nothing.
printf '#!/bin/sh\nPATH=/nonexistent exec "%s" "$@"\n' "$WORKER" >"$HV_TMP/worker-nopath"
chmod +x "$HV_TMP/worker-nopath"
WORKER=$HV_TMP/worker-nopath hv_start_worker web-host --kind host --poll 1

# shellcheck disable=SC2317 # called through wait_for
plan_ended() {
    api GET "/api/v1/plans/$1"
    [[ $(json .status) =~ ^(done|failed|cancelled)$ ]]
}
wait_for "plan $QUICK ends" 120 plan_ended "$QUICK"
assert_eq "plan $QUICK is done" "done" "$(json .status)" || hv_finish
wait_for "plan $FAIL ends" 60 plan_ended "$FAIL"
assert_eq "plan $FAIL failed" failed "$(json .status)"

# A real result of this machine, for the host's baseline jobs below.
api GET "/api/v1/plans/$QUICK/jobs?status=done&limit=1"
api GET "/api/v1/jobs/$(json '.items[0].id')/results"
REAL=$(json -c '.items[0] | {metrics, samples, observed}')

# --- a tuning plan with two levels of thp ---------------------------------------------
hv_register web-tune host '{"cpu_model":"test","cpus":2}'
TUNE_W=("${W[@]}")
TUNE_TARGET=$TARGET
plan=$(jq -c '.name = "web-tune" | .targets = {"host": "web-tune", "guests": {"domains": ["web-guest"]}}
    | .factors = {"thp": ["always", "never"]} | .repetitions.min = 3 | .workloads[0].params.seconds = 1' \
    "$HV_ROOT/examples/quick.json")
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$plan"
TUNE=$(json .id)

# The host worker of web-tune: answers apply steps with every level read
# back, runs the baseline jobs (uploading the real result above, with host
# telemetry samples beside it) and stops after the restore step. Its own
# curl and files: the test's api() is not safe from two processes.
tune_host() {
    local deadline=$((SECONDS + 240)) out=$HV_TMP/tune-claim id att now start body
    while ((SECONDS < deadline)); do
        curl -s --max-time 40 -o "$out" "${TUNE_W[@]}" -H 'Content-Type: application/json' \
            --data-binary '{"wait":20}' "$URL/api/v1/jobs/claim" || continue
        [[ -s $out ]] || continue
        if [[ $(jq -r '.step.kind // empty' "$out") != "" ]]; then
            id=$(jq -r .step.id "$out") att=$(jq -r .step.attempt "$out")
            body=$(jq -c --argjson a "$att" '{attempt: $a, status: "ok",
                settings: (.step.levels | with_entries(.value = {level: .value, read_back: .value,
                    source: "/sys/kernel/mm/transparent_hugepage/enabled"})),
                changes: [.step.levels | to_entries[] | {factor: .key, scope: "host",
                    object: "/sys/kernel/mm/transparent_hugepage/enabled", from: "madvise", to: .value}]}' "$out")
            curl -s --max-time 10 -o /dev/null "${TUNE_W[@]}" -H 'Content-Type: application/json' \
                --data-binary "$body" "$URL/api/v1/steps/$id/result"
            [[ $(jq -r .step.kind "$out") == restore ]] && return 0
        elif [[ $(jq -r '.job.id // empty' "$out") != "" ]]; then
            id=$(jq -r .job.id "$out") att=$(jq -r .job.attempt "$out")
            start=$(date -u -d "-2 seconds" +%Y-%m-%dT%H:%M:%S.%3NZ) now=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
            body=$(jq -c --argjson a "$att" --arg s "$start" --arg f "$now" '{attempt: $a, status: "ok",
                started_at: $s, finished_at: $f} + . | .samples += [range(0; 3) as $t
                | {metric: "host.cpu_busy_pct", t: ($t + 0.5), value: (20 + $t)}]' <<<"$REAL")
            curl -s --max-time 10 -o /dev/null "${TUNE_W[@]}" -H 'Content-Type: application/json' \
                --data-binary "$body" "$URL/api/v1/jobs/$id/result"
        fi
    done
    return 1
}
tune_host >"$HV_TMP/tune-host.log" 2>&1 &
HV_WORKER_PIDS+=($!)
hv_start_worker web-guest --kind guest --poll 1
wait_for "plan $TUNE ends" 180 plan_ended "$TUNE"
assert_eq "plan $TUNE is done" "done" "$(json .status)"
# The plan is done with its last job; its host's restore step comes after.
# shellcheck disable=SC2317 # called through wait_for
steps_ran() {
    api GET "/api/v1/plans/$TUNE/steps"
    [[ $(json -r '[.items[].status] | unique | join(",")') == "done" ]]
}
wait_for "every step of plan $TUNE ran" 60 steps_ran

# --- a fleet plan over three hosts by label, each its own real worker ----------------
# One host reports another kernel (the test-only facts override), so an
# outlier, when the noise makes one, names it.
printf '{"kernel":"6.1.0-fleet","microcode":"0x2a","thp":"madvise"}' >"$HV_TMP/facts.json"
printf '{"kernel":"6.8.0-odd","microcode":"0x2a","thp":"madvise"}' >"$HV_TMP/facts-odd.json"
for name in web-fl1 web-fl2 web-fl3; do
    file=$HV_TMP/facts.json
    [[ $name == web-fl3 ]] && file=$HV_TMP/facts-odd.json
    HVBENCH_TEST_FACTS=$file hv_start_worker "$name" --kind host --label pool=webfleet --poll 1
done
# shellcheck disable=SC2317 # called through wait_for
fleet_registered() {
    api GET "/api/v1/targets?label=pool=webfleet"
    [[ $(json '.items | length') == 3 ]]
}
wait_for "the three fleet hosts registered" 60 fleet_registered
plan='{"name":"web-fleet","targets":{"host":{"label":"pool=webfleet"}},"max_parallel_hosts":2,
  "repetitions":{"min":2,"max":2},
  "workloads":[{"id":"c","kind":"cpu","engine":"builtin","params":{"seconds":1,"copies":1}}]}'
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$plan"
FLEET=$(json .id)
assert_eq "the fleet plan has a child per host" 3 "$(json '.children | length')"
wait_for "fleet plan $FLEET ends" 180 plan_ended "$FLEET"
assert_eq "fleet plan $FLEET is done" "done" "$(json .status)"
api GET "/api/v1/plans/$FLEET/report"
assert_eq "its report has the three hosts' view" '["web-fl1","web-fl2","web-fl3"]' "$(json -c '.hosts.hosts')"

# --- a plan waiting for a target that never registered ------------------------------
plan=$(jq -c '.name = "web-waits" | .targets.host = "web-nowhere"' "$HV_ROOT/examples/quick.json")
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$plan"
WAITS=$(json .id)
assert_match "plan $WAITS waits in words" 'web-nowhere' "$(json -r '.waiting.detail')"

# --- recommendations in each state, for #/recommendations -----------------------------
# Rows as the server keeps them (migrations/053 and 055), of the tuning
# plan: one proposed; one adopted on two fleet hosts whose verdict is
# pending (the server judges it again from the values those hosts measured,
# none of them after the adoption: pending still); one delivered; one
# regressed, with its rollback in every form (the tuning plan's own, from
# GET .../recommendations/apply). The server judges anew only a
# recommendation with adoptions: the delivered and the regressed one have
# none left (as when the hosts that adopted them were removed), so their
# verdicts stay as written here.
sql() { "$PG" psql "$HV_TMP/pg" -- -qAtc "$1"; }
# rec FACTOR LEVEL DEFAULT GAIN LO HI RISK_LEVEL SENTENCE APPLY: a new
# recommendation of the tuning plan; prints its id.
rec() {
    local detail
    detail=$(jq -cn --arg s "$8" --arg a "$9" '{sentence: $s, apply: $a}')
    sql "INSERT INTO recommendations (plan_id, factor, level, default_level, scope, workload, metric,
        gain_pct, gain_lo_pct, gain_hi_pct, risk_level, rank, detail)
        VALUES ($TUNE, '$1', '$2', '$3', '{web-tune}', 'cpu', 'cpu.score', $4, $5, $6, '$7', 1,
        \$j\$$detail\$j\$::jsonb) RETURNING id"
}
# judged ID STATE GAIN LO HI PRED_LO PRED_HI WHY [ROLLBACK]: stores a verdict
# as the server does, on two adopted hosts against three controls.
judged() {
    local v
    v=$(jq -cn --arg st "$2" --argjson g "$3" --argjson lo "$4" --argjson hi "$5" \
        --argjson plo "$6" --argjson phi "$7" --arg why "$8" --argjson rb "${9:-null}" \
        '{state: $st, gain_pct: $g, lo_pct: $lo, hi_pct: $hi, hosts: (if $g == null then 0 else 2 end),
          controls: 3, controlled: ($g != null), why: (if $why == "" then null else $why end),
          predicted: {lo_pct: $plo, hi_pct: $phi}, margin_pct: 1, split_at: (now - 86400 | todate),
          per_host: ([("web-fl1", "web-fl2") | {target: ., adopted: true, before: 6,
                       after: (if $g == null then 0 else 5 end)}]
            + [("web-fl3", "web-host", "web-tune") | {target: ., adopted: false, before: 6, after: 6}])}
        + (if $rb == null then {} else {rollback: $rb} end)')
    sql "UPDATE recommendations SET verdict = '$2', verdict_detail = \$j\$$v\$j\$::jsonb,
        judged_at = now(), verdict_at = now() WHERE id = $1"
}
REC_PROPOSED=$(rec halt_poll_ns 50000 200000 2.4 1.1 3.7 low \
    'Set halt_poll_ns=50000 (the plan'"'"'s default is 200000): cpu score +2.4 % [+1.1, +3.7].' \
    'echo 50000 > /sys/module/kvm/parameters/halt_poll_ns')
REC_ADOPTED=$(rec ksm off on 3.1 1.9 4.3 none \
    'Set ksm=off (the plan'"'"'s default is on): cpu score +3.1 % [+1.9, +4.3].' 'echo 0 > /sys/kernel/mm/ksm/run')
sql "INSERT INTO recommendation_adoptions (recommendation_id, target_id, since, source)
    SELECT $REC_ADOPTED, id, now(), 'declared' FROM targets WHERE name IN ('web-fl1', 'web-fl2')"
judged "$REC_ADOPTED" pending null null null 1.9 4.3 'no adopted host has values after its adoption yet'
REC_DELIVERED=$(rec vcpu_pin on off 5.02 4.61 5.43 low \
    'Set vcpu_pin=on (the plan'"'"'s default is off): cpu score +5.0 % [+4.6, +5.4].' \
    'virsh vcpupin DOMAIN VCPU HOSTCPU --live --config')
judged "$REC_DELIVERED" delivered 5.31 4.12 6.50 4.61 5.43 ''
REC_REGRESSED=$(rec io_scheduler none mq-deadline 1.8 0.6 3.0 low \
    'Set io_scheduler=none (the plan'"'"'s default is mq-deadline): cpu score +1.8 % [+0.6, +3.0].' \
    'echo none > /sys/block/DISK/queue/scheduler')
forms='{}'
for f in tuned ansible puppet shell; do
    api GET "/api/v1/plans/$TUNE/recommendations/apply?format=$f"
    assert_eq "the tuning plan's recommendations as $f" 200 "$STATUS"
    forms=$(jq -c --arg f "$f" --arg t "$BODY" '.[$f] = $t' <<<"$forms")
done
judged "$REC_REGRESSED" regressed -4.2 -6.1 -2.3 0.6 3.0 '' "$forms"
api GET "/api/v1/recommendations?limit=500"
# shellcheck disable=SC2016 # $i and $ids are jq's
assert_eq "the seeded recommendations in their states" "regressed delivered adopted proposed" \
    "$(json -r --argjson ids "[$REC_REGRESSED, $REC_DELIVERED, $REC_ADOPTED, $REC_PROPOSED]" \
        '[.items[] | select(.id as $i | $ids | index($i)) | .state] | join(" ")')"
assert_status 200 GET "/api/v1/recommendations/$REC_REGRESSED"
assert_eq "GET one: the regressed one keeps its rollback in four forms" "ansible puppet shell tuned" \
    "$(json -r '.verdict.rollback | keys | join(" ")')"

# The centre as the CLI prints it: the page must format numbers the same way.
# Columns: configuration workload target metric arrow n centre interval ...
report=$(HVBENCH_SERVER=$URL HVBENCH_TOKEN=$READ_TOKEN "$CLI" report "$QUICK")
assert_eq "hvbench report exits 0" 0 "$?"
cli_centre=$(awk '$4 == "cpu.score" { print $7; exit }' <<<"$report")
assert_match "hvbench report has a cpu.score centre" '.' "$cli_centre" || echo "$report"
# Its interval: the bounds, or the words in their place.
cli_interval=$(awk '$4 == "cpu.score" && match($0, /\[[^]]*\]|n = [0-9]+: [^ ]+( [^ ]+)*/) {
    print substr($0, RSTART, RLENGTH); exit }' <<<"$report")

# A second server on the same database whose GETs need a token, for the
# token form. Started like lib.sh starts the first; stopped on exit by
# adding it to the pids hv_teardown stops.
AUTH_PORT=$(hv_free_port) || hv_die "no free TCP port"
AUTH_URL=http://127.0.0.1:$AUTH_PORT
"$SERVER" serve --db "$DB" --listen "127.0.0.1:$AUTH_PORT" --web-dir "$HV_ROOT/web" \
    --read-auth token >>"$HV_TMP/server-auth.log" 2>&1 &
HV_WORKER_PIDS+=($!)
# shellcheck disable=SC2317 # called through wait_for
auth_server_up() { curl -fsS --max-time 2 -o /dev/null "$AUTH_URL/healthz" 2>/dev/null; }
wait_for "second server (--read-auth token) at $AUTH_URL" 20 auth_server_up ||
    hv_tail "$HV_TMP/server-auth.log"
assert_eq "second server: GET /api/v1/plans without a token -> 401" 401 \
    "$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' "$AUTH_URL/api/v1/plans")"

# The browser test. TMPDIR: Playwright makes Chromium's fresh profile there,
# so a Chromium left behind is recognisable by it; a short path under /tmp,
# whatever the checkout's path, keeps Chromium's sockets within the length
# a socket path may have. timeout: node must not hang the test run even if
# its own watchdog fails.
shots=$HV_TMP/shots
profile_dir=$(mktemp -d /tmp/hvweb.XXXXXX) || hv_die "mktemp failed"
mkdir -p "$shots"
web_teardown() {
    local rc=$?
    rm -rf -- "$profile_dir"
    (exit "$rc")
    hv_teardown
}
trap web_teardown EXIT
hv_log "browser test: node --test web.test.js"
(cd "$BROWSER_DIR" && URL=$URL QUICK_ID=$QUICK FAIL_ID=$FAIL TUNE_ID=$TUNE WAITS_ID=$WAITS FLEET_ID=$FLEET \
    REC_PROPOSED=$REC_PROPOSED REC_ADOPTED=$REC_ADOPTED REC_DELIVERED=$REC_DELIVERED REC_REGRESSED=$REC_REGRESSED \
    TUNE_TARGET=$TUNE_TARGET SHOTS=$shots CLI_CENTRE=$cli_centre CLI_INTERVAL=$cli_interval SUBMIT_TOKEN=$SUBMIT_TOKEN \
    AUTH_URL=$AUTH_URL READ_TOKEN=$READ_TOKEN CHROMIUM=$CHROMIUM TMPDIR=$profile_dir \
    timeout -k 10 400 node --test --test-reporter=spec web.test.js)
assert_eq "browser test (node --test web.test.js) exits 0" 0 "$?"

# A Chromium still running with a profile under our temp dir was left
# behind by a killed node: end it (by pid) and count it as a failure.
leftover=$(pgrep -f -- "--user-data-dir=$profile_dir/" || true)
if [[ -n $leftover ]]; then
    # shellcheck disable=SC2086 # one pid per word
    kill -KILL $leftover 2>/dev/null
fi
assert_eq "no Chromium left running" "" "$leftover"
rm -rf -- "$profile_dir"

# Keep the pictures for a person to look at, even when the test fails.
if compgen -G "$shots/*.png" >/dev/null; then
    mkdir -p "$BUILD/test-logs/web"
    cp -- "$shots"/*.png "$BUILD/test-logs/web/"
    hv_log "screenshots: $BUILD/test-logs/web/"
fi
for page in plans plan-quick plan-tune plan-fail plan-fleet jobs job target compare targets; do
    assert_eq "screenshot of the $page page taken" yes "$([[ -s $shots/$page.png ]] && echo yes || echo no)"
done

hv_finish
