#!/usr/bin/env bash
# Tuning that really happens, end to end on this machine with a real
# worker: a bare-metal plan varying transparent huge pages (a host knob,
# written to the kernel's sysfs file) and process pinning runs block by
# block; every result carries the levels read back from the kernel; the
# host file is as before once the plan ended; and after the worker is
# killed with SIGKILL in the middle of a plan, its restart puts back what
# its journal held before it claims again, and the plan completes.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
THP=/sys/kernel/mm/transparent_hugepage/enabled
[[ $(id -u) -eq 0 ]] || hv_skip "needs root to write $THP"
[[ -w $THP ]] || hv_skip "$THP is not writable here"
HV_SERVER_ARGS=(--lease 4)
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }
thp_now() { sed -E 's/.*\[([a-z]+)\].*/\1/' "$THP"; }
ORIGINAL=$(thp_now)
ORIGINAL_TEXT=$(cat "$THP")
hv_log "THP is $ORIGINAL before the test"
# Levels that both differ from the machine's setting, so each block changes it.
case $ORIGINAL in
always) LEVELS='["madvise", "never"]' ;;
madvise) LEVELS='["always", "never"]' ;;
*) LEVELS='["always", "madvise"]' ;;
esac
# Whatever happens, the machine keeps its setting; hv_teardown still gets
# the test's exit status (the echo's would hide a failure).
# shellcheck disable=SC2317 # called by the EXIT trap
tw_teardown() {
    local rc=$?
    echo "$ORIGINAL" >"$THP" 2>/dev/null
    return "$rc"
}
trap 'tw_teardown; hv_teardown' EXIT

plan() { # NAME FACTORS
    jq -c --arg n "$1" --argjson f "$2" '.name = $n | .targets.host = "tw-host"
        | .workloads[0].params.seconds = 1 | .repetitions = {min: 1} | .factors = $f' \
        "$HV_ROOT/examples/quick.json"
}
ended() { [[ $(sql "SELECT count(*) FROM jobs WHERE plan_id = $1 AND status IN ('queued', 'running')") == 0 &&
    $(sql "SELECT status FROM plan_steps WHERE plan_id = $1 AND kind = 'restore'") =~ ^(done|failed)$ ]]; }

hv_start_worker tw-host --kind host --poll 1 --wait 2
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(plan tuned "{\"thp\": $LEVELS, \"process_pin\": [\"off\", \"on\"]}")"
P=$(json .id)
wait_for "the tuning plan runs to its restore step" 240 ended "$P"
assert_eq "every job done" "4 4" "$(sql "SELECT count(*) FILTER (WHERE status = 'done') || ' ' || count(*) FROM jobs WHERE plan_id = $P")"
assert_eq "every apply step done, the restore step too" "done" \
    "$(sql "SELECT string_agg(DISTINCT status, ',') FROM plan_steps WHERE plan_id = $P")"
assert_eq "each result carries THP as the kernel read it back, equal to its level" 0 \
    "$(sql "SELECT count(*) FROM jobs j JOIN configurations c ON c.id = j.config_id JOIN results r ON r.job_id = j.id AND r.attempt = j.attempt WHERE j.plan_id = $P AND (r.observed->'host_settings'->'thp'->>'read_back') IS DISTINCT FROM (c.levels->>'thp')")"
assert_eq "and process pinning as the job's worker read it back" 0 \
    "$(sql "SELECT count(*) FROM jobs j JOIN configurations c ON c.id = j.config_id JOIN results r ON r.job_id = j.id AND r.attempt = j.attempt WHERE j.plan_id = $P AND (r.observed->'settings'->'process_pin'->>'read_back') IS DISTINCT FROM (c.levels->>'process_pin')")"
assert_eq "THP is back to what it was" "$ORIGINAL_TEXT" "$(cat "$THP")"
TID=$(sql "SELECT id FROM targets WHERE name = 'tw-host'")
assert_status 200 GET "/api/v1/targets/$TID/changes"
assert_eq "the host's changes are listed, all restored" "0" \
    "$(json "[.items[] | select(.plan_id == $P and .factor == \"thp\" and .restored_at == null)] | length")"
assert_match "at least one THP change from the original" "$ORIGINAL" \
    "$(json -r "[.items[] | select(.plan_id == $P and .factor == \"thp\") | .from] | join(\" \")")"
assert_status 200 GET "/api/v1/plans/$P/report"
assert_eq "the report compares the THP levels" true \
    "$(json '[.. | objects | select(has("factor") and .factor == "thp")] | length > 0')"

# --- the host worker killed in the middle of a plan ---------------------------------
WPID=${HV_WORKER_PIDS[-1]}
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan killed "{\"thp\": $LEVELS}")"
P=$(json .id)
applied() { [[ $(sql "SELECT count(*) FROM plan_steps WHERE plan_id = $1 AND kind = 'apply' AND status = 'done'") -ge 1 ]]; }
wait_for "the first block is applied" 60 applied "$P"
kill -KILL "$WPID"
wait "$WPID" 2>/dev/null
CHANGED=$(thp_now)
assert_eq "the killed worker left THP changed" true "$([[ $CHANGED != "$ORIGINAL" ]] && echo true || echo false)"
assert_eq "its journal holds the original" true \
    "$(find "$HV_TMP/state/tw-host" -path '*journal*' -type f | grep -q . && echo true || echo false)"
hv_start_worker tw-host --kind host --poll 1 --wait 2
restored() { [[ $(thp_now) == "$ORIGINAL" ]] || grep -q 'restor' "$HV_TMP/worker-tw-host.log"; }
wait_for "the restarted worker restores its journal first" 30 restored
wait_for "the plan completes after the restart" 240 ended "$P"
assert_eq "every job of it ended" 0 \
    "$(sql "SELECT count(*) FROM jobs WHERE plan_id = $P AND status IN ('queued', 'running')")"
assert_eq "THP is back to what it was after the crash too" "$ORIGINAL_TEXT" "$(cat "$THP")"

hv_finish
