#!/usr/bin/env bash
# A plan's record of its changes says when and how each came back. A
# restore step's result marks the changes it reports at their own times
# (how step, restored_by), both changes of an object changed by two
# blocks, and then the plan's other open changes at its end. A host
# worker's report (POST /api/v1/workers/restored) marks what it put back
# itself; entries that match no open change are ignored, malformed ones
# refused. Then a real host worker (host files under a temporary
# --sysfs-root), killed with SIGKILL in block 0 and started again, puts
# back its journal at its start and reports it at its registration:
# restored_how worker_start, earlier than the restore step's end. And one
# killed again, whose `hvbench-worker --restore` runs while the server is
# down, reports at its next start with how restore_command and the time
# --restore put the settings back. No change of any plan stays open.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }
plan() { # NAME HOST FACTORS SECONDS
    jq -c --arg n "$1" --arg h "$2" --argjson f "$3" --argjson s "$4" '.name = $n
        | .targets.host = $h | .workloads[0].params.seconds = $s | .repetitions = {min: 1}
        | .order = "sequential" | .factors = $f' "$HV_ROOT/examples/quick.json"
}
claim() { api POST /api/v1/jobs/claim "${WH[@]}" --data-binary '{"wait":0}'; }
step_result() { # ID ATTEMPT CHANGES
    api POST "/api/v1/steps/$1/result" "${WH[@]}" --data-binary \
        "{\"attempt\":$2,\"status\":\"ok\",\"changes\":$3}"
}
restored() { # PLAN: each change's factor, from, how and step, oldest first
    sql "SELECT string_agg(factor || ' ' || from_value || ' ' || coalesce(restored_how, 'open')
        || ' ' || coalesce(restored_by::text, '-'), ',' ORDER BY id) FROM target_changes
        WHERE plan_id = $1"
}
finish_jobs() { # PLAN BLOCK
    sql "UPDATE jobs SET status = 'done', finished_at = now() WHERE plan_id = $1 AND block = $2" >/dev/null
}

hv_register rr-host
WH=("${W[@]}")

# --- the restore step's own record -----------------------------------------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(plan steps rr-host '{"thp": ["never", "always"], "ksm": ["on"]}' 1)"
P=$(json .id)
claim
A1=$(json .step.id)
step_result "$A1" "$(json .step.attempt)" '[
    {"factor": "thp", "scope": "host", "object": "/sys/thp", "from": "madvise", "to": "never", "at": "2026-01-01T10:00:00Z"},
    {"factor": "ksm", "scope": "host", "object": "/sys/ksm", "from": "0", "to": "1", "at": "2026-01-01T10:00:01Z"}]'
assert_eq "block 0's changes recorded" 201 "$STATUS"
finish_jobs "$P" 0
claim
assert_eq "block 1's apply step" "apply 1" "$(json -r '"\(.step.kind) \(.step.block)"')"
step_result "$(json .step.id)" "$(json .step.attempt)" '[
    {"factor": "thp", "scope": "host", "object": "/sys/thp", "from": "never", "to": "always", "at": "2026-01-01T10:05:00Z"}]'
finish_jobs "$P" 1
claim
assert_eq "then the restore step" "restore $P" "$(json -r '"\(.step.kind) \(.step.plan_id)"')"
R=$(json .step.id)
step_result "$R" "$(json .step.attempt)" '[
    {"factor": "thp", "scope": "host", "object": "/sys/thp", "from": "always", "to": "madvise", "at": "2026-01-01T10:10:00Z"}]'
assert_eq "the restore step's result is stored" 201 "$STATUS"
assert_eq "both changes of thp marked by the step, ksm (not reported) too" \
    "thp madvise step $R,ksm 0 step $R,thp never step $R" "$(restored "$P")"
assert_eq "thp's at the time the step reported, ksm's at the step's end" \
    "2026-01-01 10:10:00+00,2026-01-01 10:10:00+00,true" \
    "$(sql "SELECT string_agg(restored_at::text, ',' ORDER BY id) FILTER (WHERE factor = 'thp')
        || ',' || bool_and(restored_at > now() - interval '1 minute') FILTER (WHERE factor = 'ksm')
        FROM target_changes WHERE plan_id = $P")"
assert_status 200 GET "/api/v1/targets/$TARGET/changes"
assert_eq "the changes endpoint says how and by which step" "step $R step $R step $R" \
    "$(json -r '[.items[] | "\(.restored_how) \(.restored_by)"] | join(" ")')"

# --- a worker's report ---------------------------------------------------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(plan report rr-host '{"thp": ["never"]}' 1)"
P2=$(json .id)
claim
step_result "$(json .step.id)" "$(json .step.attempt)" '[
    {"factor": "thp", "scope": "host", "object": "/sys/thp", "from": "madvise", "to": "never", "at": "2026-01-02T10:00:00Z"}]'
REPORT='{"restored": [
    {"plan_id": '"$P2"', "factor": "thp", "scope": "host", "object": "/sys/thp", "from": "never", "to": "madvise", "at": "2026-01-02T10:03:00Z", "how": "worker_start"},
    {"plan_id": '"$P2"', "factor": "ksm", "scope": "host", "object": "/sys/ksm", "from": "1", "to": "0", "at": "2026-01-02T10:03:00Z", "how": "worker_start"},
    {"plan_id": 999999, "factor": "thp", "scope": "host", "object": "/sys/thp", "from": "never", "to": "madvise", "at": "2026-01-02T10:03:00Z", "how": "worker_start"}]}'
assert_status 400 POST /api/v1/workers/restored "${WH[@]}" --data-binary \
    '{"restored": [{"plan_id": 1, "factor": "thp", "at": "yesterday", "how": "step"}]}'
assert_eq "a malformed entry is refused, naming it" "/restored/0/how /restored/0" \
    "$(json -r '[.errors[].path] | join(" ")')"
assert_status 403 POST /api/v1/workers/restored -H "Authorization: Bearer $WORKER_TOKEN" \
    --data-binary "$REPORT"
assert_status 200 POST /api/v1/workers/restored "${WH[@]}" --data-binary "$REPORT"
assert_eq "three entries taken, one matched a change" '3 1' "$(json -r '"\(.received) \(.marked)"')"
assert_status 200 POST /api/v1/workers/restored "${WH[@]}" --data-binary "$REPORT"
assert_eq "the same report again marks nothing" '3 0' "$(json -r '"\(.received) \(.marked)"')"
assert_eq "the change is marked at the worker's time, by no step" \
    "worker_start 2026-01-02 10:03:00+00 -" \
    "$(sql "SELECT restored_how || ' ' || restored_at || ' ' || coalesce(restored_by::text, '-')
        FROM target_changes WHERE plan_id = $P2")"
sql "UPDATE jobs SET status = 'cancelled', finished_at = now() WHERE plan_id = $P2" >/dev/null
claim
assert_eq "the plan's restore step" "restore $P2" "$(json -r '"\(.step.kind) \(.step.plan_id)"')"
step_result "$(json .step.id)" "$(json .step.attempt)" '[]'
assert_eq "finding nothing, it keeps the worker's record" "thp madvise worker_start -" "$(restored "$P2")"

# --- the real host worker, killed and started again ----------------------------------
ROOT=$HV_TMP/root
THP=$ROOT/sys/kernel/mm/transparent_hugepage/enabled
HPN=$ROOT/sys/module/kvm/parameters/halt_poll_ns
mkdir -p "$(dirname "$THP")" "$(dirname "$HPN")"
echo madvise >"$THP"
echo 200000 >"$HPN"
NOTED=$HV_TMP/state/hw-host/restored.json
host_worker() { hv_start_worker hw-host --kind host --sysfs-root "$ROOT" --poll 1 --wait 2; }
# shellcheck disable=SC2317 # called through wait_for
running() { # PLAN: a job of block 0 runs
    [[ $(sql "SELECT count(*) FROM jobs WHERE plan_id = $1 AND block = 0 AND status = 'running'") -ge 1 ]]
}
# shellcheck disable=SC2317 # called through wait_for
step_done() { [[ $(sql "SELECT status FROM plan_steps WHERE plan_id = $1 AND kind = 'restore'") == "done" ]]; }
kill_in_block0() { # PLAN
    wait_for "plan $1: block 0 applied, its job runs" 30 running "$1"
    assert_eq "plan $1: the host files changed" "never 0" "$(cat "$THP") $(cat "$HPN")"
    kill -KILL "$WPID"
    wait "$WPID" 2>/dev/null
    assert_status 200 POST "/api/v1/plans/$1/cancel" "${S[@]}"
}
FACTORS='{"thp": ["never", "always"], "halt_poll_ns": ["0", "400000"]}'

host_worker
WPID=${HV_WORKER_PIDS[-1]}
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan killed hw-host "$FACTORS" 30)"
K=$(json .id)
kill_in_block0 "$K"
host_worker
WPID=${HV_WORKER_PIDS[-1]}
wait_for "the restarted worker runs the restore step" 30 step_done "$K"
assert_eq "the host files are back" "madvise 200000" "$(cat "$THP") $(cat "$HPN")"
assert_eq "both changes put back by the worker at its start, reported" \
    "thp madvise worker_start -,halt_poll_ns 200000 worker_start -" "$(restored "$K")"
assert_eq "before the restore step ended" t \
    "$(sql "SELECT bool_and(c.restored_at < s.finished_at AND c.restored_at >= c.changed_at)
        FROM target_changes c JOIN plan_steps s ON s.plan_id = c.plan_id AND s.kind = 'restore'
        WHERE c.plan_id = $K")"
assert_eq "nothing left to report" false "$([[ -e $NOTED ]] && echo true || echo false)"

# --- hvbench-worker --restore while the server is down -------------------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan down hw-host "$FACTORS" 30)"
D=$(json .id)
kill_in_block0 "$D"
hv_stop_pid "$HV_SERVER_PID" 10
"$WORKER" --restore --server "$URL" --name hw-host --state-dir "$HV_TMP/state" \
    --sysfs-root "$ROOT" >"$HV_TMP/restore.log" 2>&1
assert_eq "--restore puts everything back without the server (exit 0)" "0 madvise 200000" \
    "$? $(cat "$THP") $(cat "$HPN")"
assert_eq "and keeps both for the server, how restore_command" \
    "$D halt_poll_ns restore_command,$D thp restore_command" \
    "$(jq -r '[.restored[] | "\(.plan_id) \(.factor) \(.how)"] | join(",")' "$NOTED")"
AT=$(jq -r '.restored[] | select(.factor == "thp") | .at' "$NOTED")
assert_match "--restore says the report waits" "reported at the worker's next registration" \
    "$(cat "$HV_TMP/restore.log")"
HV_SERVER_PORT=$PORT hv_start_server
host_worker
wait_for "the started worker runs the restore step" 30 step_done "$D"
assert_eq "reported at its registration, how restore_command, at --restore's time" \
    "thp madvise restore_command - $AT" \
    "$(sql "SELECT factor || ' ' || from_value || ' ' || restored_how || ' '
        || coalesce(restored_by::text, '-') || ' '
        || to_char(restored_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')
        FROM target_changes WHERE plan_id = $D AND factor = 'thp'")"
assert_eq "halt_poll_ns too" "restore_command" \
    "$(sql "SELECT restored_how FROM target_changes WHERE plan_id = $D AND factor = 'halt_poll_ns'")"
assert_eq "the report is gone from the state folder" false \
    "$([[ -e $NOTED ]] && echo true || echo false)"
assert_eq "no change of any plan is left open" 0 \
    "$(sql "SELECT count(*) FROM target_changes WHERE restored_at IS NULL")"

hv_finish
