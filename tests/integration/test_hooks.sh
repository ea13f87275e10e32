#!/usr/bin/env bash
# shellcheck disable=SC2016,SC2317 # jq programs in single quotes; functions run by wait_for
# Drain hooks (docs/plans.md, Drain hooks): a plan's url hooks are POSTed
# by the server to a loopback receiver (tests/tools/hookrecv) with the
# signature of --hook-secret-file; before_host (answered 500 once, then
# retried) ends before the plan's first job starts and after_host starts
# after its last job ended; both are in the plan's hook log with their
# answers. A plan cancelled while its jobs wait still calls after_host; a
# before_host that keeps failing fails the jobs with its answer and the
# plan, and still calls after_host; a local hook runs the command the host
# worker's configuration names, in order around the plan's job; refusals:
# a bad url (400), a local name the registered host does not declare
# (422), url hooks on a server without a signing key (422). A before_host
# saying "not yet" (a local hook exiting 75, a url hook answering 503 with
# Retry-After) is asked again, the plan waiting with its words, until it
# says yes or hooks.timeout passed; a local hook gets the target's name
# and labels in its environment. A fleet plan's
# child waiting for its slot (max_parallel_hosts) does not drain its host.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

RECV=$BUILD/tools/hookrecv
[[ -x $RECV ]] || hv_die "$RECV not built (make test-tools)"
S=(-H "Authorization: Bearer $SUBMIT_TOKEN")

# start_receiver NAME [hookrecv args]: a receiver in the background logging
# to $HV_TMP/NAME.log; sets RECV_PORT.
start_receiver() {
    local name=$1 i
    shift
    "$RECV" --port-file "$HV_TMP/$name.port" --log "$HV_TMP/$name.log" \
        --secret-file "$HV_TMP/secret" "$@" >>"$HV_TMP/recv.out" 2>&1 &
    HV_WORKER_PIDS+=($!)
    for ((i = 0; i < 50; i++)); do
        [[ -s $HV_TMP/$name.port ]] && break
        sleep 0.1
    done
    [[ -s $HV_TMP/$name.port ]] || hv_die "hookrecv did not start: $(cat "$HV_TMP/recv.out")"
    RECV_PORT=$(cat "$HV_TMP/$name.port")
}
plan_json() { # NAME HOST HOOKS
    jq -c --arg n "$1" --arg h "$2" --argjson k "$3" '.name = $n | .targets.host = $h
        | .repetitions.min = 1 | .workloads[0].params.seconds = 1 | .hooks = $k' \
        "$HV_ROOT/examples/quick.json"
}
# calls LOG PLAN: the events of PLAN's calls in LOG with their answers.
calls() {
    [[ -s $1 ]] || return 0
    jq -s -r --argjson p "$2" '[.[] | select(.body.plan.id == $p) | "\(.event):\(.answered)"] | join(" ")' "$1"
}

# --- without a signing key url hooks are refused --------------------------------------
url_hooks() { # PORT
    printf '{"before_host": {"url": "http://127.0.0.1:%s/drain"}, "after_host": {"url": "http://127.0.0.1:%s/return"}}' "$1" "$1"
}
assert_status 422 POST /api/v1/plans "${S[@]}" --data-binary "$(plan_json nokey hook-host "$(url_hooks 9)")"
assert_eq "the refusal names the hook and the option" "/hooks/after_host /hooks/before_host --hook-secret-file" \
    "$(json -r '[.errors[].path] | sort | join(" ")') $(json -r '.errors[0].message' | grep -o -- '--hook-secret-file')"

# --- the server with a key; private addresses allowed by its administrator -------------
echo "hook-test-secret" >"$HV_TMP/secret"
HV_SERVER_ARGS=(--hook-secret-file "$HV_TMP/secret" --hook-addresses any)
hv_stop_pid "$HV_SERVER_PID" 10
hv_start_server

assert_status 400 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(plan_json bad hook-host '{"before_host": {"url": "http://x/"}, "after_host": {"url": "http://x/", "local": "drain"}}')"
assert_eq "a hook naming both a url and a local command is refused at its path" "/hooks/after_host" \
    "$(json -r '[.errors[].path] | join(" ")')"
assert_status 400 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(plan_json bad hook-host '{"before_host": {"url": "ftp://example.org/x"}}')"
assert_eq "a url hook must be http(s)" "/hooks/before_host url: must be an http:// or https:// URL" \
    "$(json -r '.errors[0] | "\(.path) \(.message)"')"

# The host worker declares two local hooks; its configuration runs a shell
# (the worker itself never does).
# A site factor whose programs log to the same file, for a tuning plan.
DRAINED=$HV_TMP/drained
echo a >"$HV_TMP/knob"
# gate says "not yet" (exit 75, its last line the reason) twice, then yes,
# logging the environment it got; never always says "not yet".
GATE=$HV_TMP/gate
jq -n --arg f "$DRAINED" --arg k "$HV_TMP/knob" --arg g "$GATE" '{
    hooks: {drain: ["/bin/sh", "-c", ("echo drain {plan} {host} >> " + $f)],
            undrain: ["/bin/sh", "-c", ("echo undrain {plan} {host} >> " + $f)],
            gate: ["/bin/sh", "-c", ("n=$(($(cat " + $g + ".n 2>/dev/null || echo 0) + 1)); echo $n > " + $g
                + ".n; echo \"$HVBENCH_HOOK $HVBENCH_PLAN $HVBENCH_TARGET $HVBENCH_LABEL_SLURM_NODE $HVBENCH_LABELS ${HVBENCH_TOKEN:-notoken}\" >> "
                + $g + ".env; [ $n -gt 2 ] && exit 0; echo checking the queue;"
                + " echo \"draining: batch job 42 still running on $HVBENCH_TARGET\"; exit 75")],
            never: ["/bin/sh", "-c", "echo draining: batch job 7 never ends; exit 75"]},
    factors: {knob: {levels: ["a", "b"], class: "host",
        apply: ["/bin/sh", "-c", ("echo \"$0\" > " + $k + "; echo apply \"$0\" >> " + $f), "{level}"],
        read: ["/bin/cat", $k],
        revert: ["/bin/sh", "-c", ("echo \"$0\" > " + $k + "; echo revert \"$0\" >> " + $f), "{value}"]}}}' \
    >"$HV_TMP/worker.json"
hv_start_worker hook-host --kind host --poll 1 --config "$HV_TMP/worker.json"
registered() {
    api GET /api/v1/targets
    [[ $(json -r '[.items[] | select(.name == "hook-host")] | length') == 1 ]]
}
wait_for "the host worker registered" 30 registered
assert_status 422 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(plan_json undeclared hook-host '{"before_host": {"local": "nodrain"}}')"
assert_eq "a local hook the host does not declare: 422 at its path, naming what it declares" \
    "/hooks/before_host drain, undrain, gate, never" \
    "$(json -r '.errors[0].path') $(json -r '.errors[0].message' | sed -n 's/.*declares: \(.*\))$/\1/p')"

# --- url hooks around a plan, before_host failing once ---------------------------------
start_receiver once --fail 1
PORT_ONCE=$RECV_PORT
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan_json url-hooks hook-host "$(url_hooks "$PORT_ONCE")")"
P1=$(json .id)
after_done() { # PLAN
    api GET "/api/v1/plans/$1"
    [[ $(json -r '[.hooks[] | select(.kind == "after_host")][0].status') =~ ^(done|failed)$ ]]
}
wait_for "plan $P1 ran and its after_host hook was called" 90 after_done "$P1"
assert_eq "the plan is done" "done" "$(json -r .status)"
assert_eq "the receiver: before_host (500, then 204), then after_host" \
    "hook.before_host:500 hook.before_host:204 hook.after_host:204" "$(calls "$HV_TMP/once.log" "$P1")"
assert_eq "every call signed with the server's key, naming the host" "true hook-host" \
    "$(jq -s -r '[.[] | .sig_ok] | unique | map(tostring) | join(",")' "$HV_TMP/once.log") $(jq -s -r '.[0].body.host' "$HV_TMP/once.log")"
assert_eq "the hook log: both done, before_host in 2 attempts, each with its answer" \
    "before_host done 2 204 after_host done 1 204" \
    "$(json -r '[.hooks[] | "\(.kind) \(.status) \(.attempts) \(.answer.http_status)"] | join(" ")')"
before_end=$(json -r '.hooks[0].finished_at')
after_start=$(json -r '.hooks[1].started_at')
started=$(json -r .started_at)
finished=$(json -r .finished_at)
assert_eq "before_host answered before the first job started" true \
    "$(jq -n --arg a "$before_end" --arg b "$started" '$a <= $b')"
assert_eq "after_host was called after the last job finished" true \
    "$(jq -n --arg a "$finished" --arg b "$after_start" '$a <= $b')"

# --- a plan cancelled while its jobs wait ----------------------------------------------
start_receiver good
PORT_GOOD=$RECV_PORT
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan_json cancelled hook-away "$(url_hooks "$PORT_GOOD")")"
P2=$(json .id)
before_called() { [[ $(calls "$HV_TMP/good.log" "$P2") == "hook.before_host:204" ]]; }
wait_for "plan $P2's before_host called (its jobs then wait for an absent host)" 30 before_called
jobs_wait() {
    api GET "/api/v1/plans/$P2"
    [[ $(json -r '"\(.status) \(.waiting.reason)"') == "queued target_unregistered" ]]
}
wait_for "then its jobs wait for their target" 30 jobs_wait
assert_status 200 POST "/api/v1/plans/$P2/cancel" "${S[@]}"
wait_for "after_host called after the cancel" 30 after_done "$P2"
assert_eq "the receiver: before_host then after_host" "hook.before_host:204 hook.after_host:204" \
    "$(calls "$HV_TMP/good.log" "$P2")"
assert_eq "the after_host call says the plan was cancelled" cancelled \
    "$(jq -s -r --argjson p "$P2" '[.[] | select(.body.plan.id == $p)][-1].body.plan.status' "$HV_TMP/good.log")"

# --- a before_host that keeps failing --------------------------------------------------
start_receiver broken --fail 1000
PORT_BROKEN=$RECV_PORT
hooks=$(printf '{"before_host": {"url": "http://127.0.0.1:%s/drain"}, "after_host": {"url": "http://127.0.0.1:%s/return"}}' \
    "$PORT_BROKEN" "$PORT_GOOD")
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan_json failing hook-host "$hooks")"
P3=$(json .id)
assert_status 200 GET "/api/v1/plans/$P3"
assert_eq "the plan says it waits for the hook" "before_host_hook waiting for before_host hook (drain) on hook-host" \
    "$(json -r '"\(.waiting.reason) \(.waiting.detail)"')"
wait_for "plan $P3's after_host called once its before_host gave up" 60 after_done "$P3"
assert_eq "before_host failed after 5 attempts, after_host done" "before_host failed 5 500 after_host done 1 204" \
    "$(json -r '[.hooks[] | "\(.kind) \(.status) \(.attempts) \(.answer.http_status)"] | join(" ")')"
assert_eq "the plan failed, no job ran" "failed 1 0" "$(json -r '"\(.status) \(.jobs.failed) \(.jobs.done)"')"
out=$(HVBENCH_SERVER=$URL HVBENCH_TOKEN=$SUBMIT_TOKEN "$CLI" status "$P3")
assert_eq "hvbench status lists both hooks" \
    "hook      before_host on hook-host: failed (HTTP 500, 5 attempts): the hook answered HTTP 500|hook      after_host on hook-host: done (HTTP 204, 1 attempt)" \
    "$(grep '^hook' <<<"$out" | paste -sd '|')"
assert_status 200 GET "/api/v1/plans/$P3/jobs"
assert_match "the job's error is the hook's answer" "before_host hook failed on hook-host: the hook answered HTTP 500" \
    "$(json -r '.items[0].error')"
assert_status 200 POST "/api/v1/plans/$P3/retry" "${S[@]}"
assert_status 200 GET "/api/v1/plans/$P3"
assert_eq "a retry arms the hooks again: the job waits for a new before_host" \
    "1 before_host_hook after_host waiting" \
    "$(json -r '"\(.jobs.queued) \(.waiting.reason) \(.hooks[1].kind) \(.hooks[1].status)"')"
assert_status 409 POST "/api/v1/plans/$P3/retry" "${S[@]}"

# --- local hooks, run by the host worker --------------------------------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(plan_json local-hooks hook-host '{"before_host": {"local": "drain"}, "after_host": {"local": "undrain"}}')"
P4=$(json .id)
wait_for "plan $P4's after_host ran" 60 after_done "$P4"
assert_eq "the plan is done" "done" "$(json -r .status)"
assert_eq "the worker ran drain, then undrain, with the plan and host substituted" \
    "drain $P4 hook-host|undrain $P4 hook-host" "$(paste -sd '|' "$DRAINED")"
assert_eq "the hook log: both done, exit status 0" "before_host done 0 after_host done 0" \
    "$(json -r '[.hooks[] | "\(.kind) \(.status) \(.answer.exit_status)"] | join(" ")')"
assert_eq "before_host before the job, after_host after it" true \
    "$(json '.hooks[0].finished_at <= .started_at and .finished_at <= .hooks[1].started_at')"

# --- a before_host that says "not yet" (exit 75) twice, then yes -----------------------
A=(-H "Authorization: Bearer $ADMIN_TOKEN")
api GET /api/v1/targets
HOST_ID=$(json -r '.items[] | select(.name == "hook-host") | .id')
assert_status 200 PUT "/api/v1/targets/$HOST_ID/labels" "${A[@]}" \
    --data-binary '{"labels": {"slurm.node": "n042", "rack": "r7"}}'
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(plan_json gated hook-host '{"before_host": {"local": "gate"}, "after_host": {"local": "undrain"}, "interval": 2}')"
PGATE=$(json .id)
gate_waits() {
    api GET "/api/v1/plans/$PGATE"
    [[ $(json -r '.hooks[0].answer.not_yet.calls // 0') -ge 1 ]]
}
wait_for "plan $PGATE's gate said not yet" 30 gate_waits
assert_eq "the plan waits with the hook's last line as its words, the hook queued again" \
    "queued before_host_hook draining: batch job 42 still running on hook-host queued true" \
    "$(json -r '"\(.status) \(.waiting.reason) \(.waiting.detail) \(.hooks[0].status) \(.waiting.retry_at != null)"')"
wait_for "plan $PGATE's after_host ran" 60 after_done "$PGATE"
assert_eq "the plan ran once the gate said yes; its log keeps the two not-yets" \
    "done before_host done 0 2 draining: batch job 42 still running on hook-host" \
    "$(json -r '"\(.status) \(.hooks[0].kind) \(.hooks[0].status) \(.hooks[0].answer.exit_status) \(.hooks[0].answer.not_yet.calls) \(.hooks[0].answer.not_yet.reason)"')"
assert_eq "the gate got the hook, plan, target and labels, not the worker's own HVBENCH_ variables" \
    "before_host $PGATE hook-host n042 rack=r7,slurm.node=n042 notoken" "$(sort -u "$GATE.env")"
assert_eq "it was called three times" 3 "$(cat "$GATE.n")"

# --- a before_host that never says yes ends at hooks.timeout ---------------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(plan_json never hook-host '{"before_host": {"local": "never"}, "timeout": 3, "interval": 1}')"
PN=$(json .id)
plan_failed() {
    api GET "/api/v1/plans/$PN"
    [[ $(json -r .status) == failed ]]
}
wait_for "plan $PN failed once hooks.timeout passed" 40 plan_failed
assert_eq "the hook failed with its last words and the bound" \
    "before_host failed not ready within hooks.timeout (3 s): draining: batch job 7 never ends" \
    "$(json -r '"\(.hooks[0].kind) \(.hooks[0].status) \(.hooks[0].error)"')"
assert_eq "no job ran, the plan no longer waits" "0 1 null" "$(json -r '"\(.jobs.done) \(.jobs.failed) \(.waiting)"')"
assert_status 200 GET "/api/v1/plans/$PN/jobs"
assert_match "the job's error says why" "before_host hook failed on hook-host: not ready within hooks.timeout \\(3 s\\)" \
    "$(json -r '.items[0].error')"
assert_status 400 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(plan_json bounds hook-host '{"before_host": {"local": "gate"}, "timeout": 604801, "interval": 0}')"
assert_eq "hooks.timeout and hooks.interval are bounded" "/hooks/interval /hooks/timeout" \
    "$(json -r '[.errors[].path] | sort | join(" ")')"

# --- a url before_host answering 503 with Retry-After: 1 twice (the plan sets no interval:
# its 30 s default would outlast the wait below) ---------------------------------------
start_receiver notyet --not-yet 2
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan_json url-not-yet hook-host "$(url_hooks "$RECV_PORT")")"
PU=$(json .id)
url_waits() {
    api GET "/api/v1/plans/$PU"
    [[ $(json -r '.waiting.detail') == "draining: "* ]]
}
wait_for "plan $PU waits with the receiver's reason" 30 url_waits
wait_for "plan $PU's after_host called" 60 after_done "$PU"
assert_eq "the receiver: before_host 503 twice, then 204, then after_host" \
    "hook.before_host:503 hook.before_host:503 hook.before_host:204 hook.after_host:204" \
    "$(calls "$HV_TMP/notyet.log" "$PU")"
assert_eq "the hook log: done in 3 calls, 2 of them not yet, the last reason kept" \
    "done done 3 204 2 draining: 1 more calls" \
    "$(json -r '"\(.status) \(.hooks[0].status) \(.hooks[0].attempts) \(.hooks[0].answer.http_status) \(.hooks[0].answer.not_yet.calls) \(.hooks[0].answer.not_yet.reason)"')"
assert_eq "the call carries the target and its labels" "hook-host n042" \
    "$(jq -s -r '[.[] | select(.event == "hook.before_host")][0].body | "\(.target) \(.labels["slurm.node"])"' "$HV_TMP/notyet.log")"

# --- a tuning plan: before_host before its first apply step, after_host
# after its restore step ------------------------------------------------------------
: >"$DRAINED"
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(jq -c '.factors = {"site.knob": ["a", "b"]}' <<<"$(plan_json tuned-hooks hook-host \
        '{"before_host": {"local": "drain"}, "after_host": {"local": "undrain"}}')")"
P5=$(json .id)
wait_for "plan $P5's after_host ran" 90 after_done "$P5"
assert_eq "the plan is done" "done" "$(json -r .status)"
assert_eq "drain first, undrain last, the levels applied between" \
    "drain $P5 hook-host|apply|undrain $P5 hook-host" \
    "$(sed -e 's/^apply .*/apply/' -e '/^revert/d' "$DRAINED" | uniq | paste -sd '|')"
after_start=$(json -r '.hooks[1].started_at')
before_end=$(json -r '.hooks[0].finished_at')
assert_status 200 GET "/api/v1/plans/$P5/steps"
assert_eq "before_host ended before the first apply step, after_host began after the restore step" "true true" \
    "$(json -r --arg b "$before_end" --arg a "$after_start" '"\($b <= ([.items[] | select(.kind == "apply") | .claimed_at] | min)) \(([.items[] | select(.kind == "restore")][0].finished_at) <= $a)"')"
# --- a fleet plan: only a child that has its slot drains its host ------------------
# Two hosts with the label pool=hooks (hook-host, and hook-z2, registered
# without a worker), max_parallel_hosts 1: the first child's before_host is
# called, the second's is not while the first holds the slot.
A=(-H "Authorization: Bearer $ADMIN_TOKEN")
hv_register hook-z2 host
assert_status 200 PUT "/api/v1/targets/$TARGET/labels" "${A[@]}" --data-binary '{"labels": {"pool": "hooks"}}'
api GET /api/v1/targets
HOST_ID=$(json -r '.items[] | select(.name == "hook-host") | .id')
assert_status 200 PUT "/api/v1/targets/$HOST_ID/labels" "${A[@]}" --data-binary '{"labels": {"pool": "hooks"}}'
start_receiver fleet
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(jq -c '.targets.host = {"label": "pool=hooks"}
    | .max_parallel_hosts = 1 | .workloads[0].params.seconds = 30' <<<"$(plan_json fleet-hooks x "$(url_hooks "$RECV_PORT")")")"
PF=$(json .id)
assert_status 200 GET "/api/v1/plans/$PF"
FIRST=$(json '.children[0].id')
SECOND=$(json '.children[1].id')
fleet_drains() { [[ -s $HV_TMP/fleet.log ]] && [[ $(jq -s '[.[] | select(.event == "hook.before_host")] | length' "$HV_TMP/fleet.log") -ge 1 ]]; }
wait_for "the first child's before_host called" 30 fleet_drains
sleep 3
assert_eq "only the child with the slot drained its host" "$FIRST" \
    "$(jq -s -r '[.[] | select(.event == "hook.before_host") | .body.plan.id] | unique | map(tostring) | join(" ")' "$HV_TMP/fleet.log")"
assert_status 200 GET "/api/v1/plans/$SECOND"
assert_eq "the other waits for its slot" waiting_for_slot "$(json -r .waiting.reason)"
assert_status 200 POST "/api/v1/plans/$PF/cancel" "${S[@]}"
wait_for "the first child's after_host called after the cancel" 30 after_done "$FIRST"
hv_finish
