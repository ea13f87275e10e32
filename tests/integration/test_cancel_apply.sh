#!/usr/bin/env bash
# A cancelled plan never applies. Its apply step running at the cancel is
# marked: the end of its lease cancels it (it is not queued again), and
# only the restore step is handed out; the restore step's end releases the
# plan's hold on its host, and the host's next tuning plan applies. An
# apply result that arrives after the restore step ended is taken and
# queues the restore step again; a plan cancelled before any apply step
# was claimed cancels its restore step and never holds its host. Then the
# real host worker (its host settings under a temporary --sysfs-root) is
# killed with SIGKILL in block 0, the plan cancelled and the worker
# started again: the host files are back as they were, the restore step
# ran, nothing is applied again, and the host is free.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }
plan() { # NAME HOST FACTORS SECONDS
    jq -c --arg n "$1" --arg h "$2" --argjson f "$3" --argjson s "$4" '.name = $n
        | .targets.host = $h | .workloads[0].params.seconds = $s | .repetitions = {min: 1}
        | .factors = $f' "$HV_ROOT/examples/quick.json"
}
claim() { api POST /api/v1/jobs/claim "${WH[@]}" --data-binary '{"wait":0}'; }
step_result() { # ID ATTEMPT CHANGES
    api POST "/api/v1/steps/$1/result" "${WH[@]}" --data-binary \
        "{\"attempt\":$2,\"status\":\"ok\",\"changes\":$3}"
}
holds() { # PLAN: holds_host, then the plan's holds and releases in order
    sql "SELECT (SELECT holds_host FROM plans WHERE id = $1) || ' ' || coalesce(string_agg(held
        || ':' || reason, ',' ORDER BY id), '') FROM plan_holds WHERE plan_id = $1"
}

hv_register ca-host
WH=("${W[@]}")

# --- the apply step running at the cancel loses its lease ------------------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(plan first ca-host '{"thp": ["never", "always"]}' 1)"
P=$(json .id)
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(plan second ca-host '{"thp": ["always", "never"]}' 1)"
P2=$(json .id)
claim
assert_eq "the host worker gets block 0's apply step" "apply 0 $P" \
    "$(json -r '"\(.step.kind) \(.step.block) \(.step.plan_id)"')"
APPLY=$(json .step.id) AATT=$(json .step.attempt)
assert_status 200 POST "/api/v1/plans/$P/cancel" "${S[@]}"
assert_eq "the cancel marks the running apply step, ends the other, queues the restore step" \
    "apply 0 running true,apply 1 cancelled true,restore  queued false" \
    "$(sql "SELECT string_agg(kind || ' ' || coalesce(block::text, '') || ' ' || status || ' '
        || cancelled, ',' ORDER BY kind, block) FROM plan_steps WHERE plan_id = $P")"
sql "UPDATE plan_steps SET lease_until = now() - interval '1 s' WHERE id = $APPLY" >/dev/null
claim
assert_eq "after its lease ran out: the restore step, not the apply step" "restore $P" \
    "$(json -r '"\(.step.kind) \(.step.plan_id)"')"
RESTORE=$(json .step.id) RATT=$(json .step.attempt)
assert_eq "the apply step is cancelled, not queued, and was claimed once" "cancelled 1" \
    "$(sql "SELECT status || ' ' || attempt FROM plan_steps WHERE id = $APPLY")"
claim
assert_eq "nothing else while the restore step runs (the plan holds the host)" 204 "$STATUS"
step_result "$APPLY" "$AATT" '[]'
assert_eq "the lost attempt's answer is refused" 409 "$STATUS"
step_result "$RESTORE" "$RATT" '[]'
assert_eq "the restore step's result (no changes left) is stored" 201 "$STATUS"
assert_eq "the host is let go once the restore step ran" "false true:apply,false:restored" "$(holds "$P")"
claim
assert_eq "the host's next tuning plan applies" "apply 0 $P2" \
    "$(json -r '"\(.step.kind) \(.step.block) \(.step.plan_id)"')"
assert_eq "and the cancelled plan's apply step never came again" "cancelled 1" \
    "$(sql "SELECT status || ' ' || attempt FROM plan_steps WHERE id = $APPLY")"
assert_eq "the cancelled plan's jobs never ran" "cancelled" \
    "$(sql "SELECT string_agg(DISTINCT status, ',') FROM jobs WHERE plan_id = $P")"

# --- an apply result after the restore step ended -----------------------------------
APPLY2=$(json .step.id) AATT2=$(json .step.attempt)
assert_status 200 POST "/api/v1/plans/$P2/cancel" "${S[@]}"
claim
assert_eq "the restore step comes while the apply step still runs" "restore $P2" \
    "$(json -r '"\(.step.kind) \(.step.plan_id)"')"
step_result "$(json .step.id)" "$(json .step.attempt)" '[]'
assert_eq "the host is let go" "false true:apply,false:restored" "$(holds "$P2")"
step_result "$APPLY2" "$AATT2" \
    '[{"factor": "thp", "scope": "host", "object": "/sys/thp", "from": "never", "to": "always"}]'
assert_eq "the apply step's late answer is taken" 201 "$STATUS"
assert_eq "its change is recorded, the restore step queued again, the host held again" \
    "1 queued true true:apply,false:restored,true:applied after its restore" \
    "$(sql "SELECT count(*) FROM target_changes WHERE plan_id = $P2 AND restored_at IS NULL") $(sql "SELECT status FROM plan_steps WHERE plan_id = $P2 AND kind = 'restore'") $(holds "$P2")"
assert_eq "no block is released for it" f "$(sql "SELECT block_ready FROM plans WHERE id = $P2")"
claim
assert_eq "the restore step runs again" "restore $P2" "$(json -r '"\(.step.kind) \(.step.plan_id)"')"
step_result "$(json .step.id)" "$(json .step.attempt)" \
    '[{"factor": "thp", "scope": "host", "object": "/sys/thp", "from": "always", "to": "never"}]'
assert_eq "its change restored, the host let go" "0 f" \
    "$(sql "SELECT count(*) FROM target_changes WHERE plan_id = $P2 AND restored_at IS NULL") $(sql "SELECT holds_host FROM plans WHERE id = $P2")"
claim
assert_eq "then nothing is left for the host" 204 "$STATUS"

# --- cancelled before any apply step was claimed -------------------------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(plan never ca-host '{"thp": ["always", "never"]}' 1)"
P3=$(json .id)
assert_status 200 POST "/api/v1/plans/$P3/cancel" "${S[@]}"
assert_eq "every step cancelled, the host never held" "cancelled false " \
    "$(sql "SELECT string_agg(DISTINCT status, ',') FROM plan_steps WHERE plan_id = $P3") $(holds "$P3")"
claim
assert_eq "nothing to claim" 204 "$STATUS"

# --- a worker's new run ends what its earlier run held ---------------------------------
# Registering again with its own credential and "held" (the results its
# outbox kept), a worker ends every other attempt and step of the
# credential: they died with the earlier run, so the next sweep requeues
# them instead of waiting for their lease (the server's sweeper may have
# done so already: the lease is then gone, not in the past).
HW=("${WH[@]}")
hv_register ca-run
RW=("${W[@]}") WH=("${W[@]}")
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(plan run ca-run '{"thp": ["never", "always"]}' 1)"
R=$(json .id)
claim
RSTEP=$(json .step.id)
step_result "$RSTEP" "$(json .step.attempt)" \
    '[{"factor": "thp", "scope": "host", "object": "/sys/thp", "from": "madvise", "to": "never"}]'
claim
RJOB=$(json .job.id) RJATT=$(json .job.attempt)
assert_eq "block 0's job is claimed" "$R running" \
    "$(sql "SELECT plan_id || ' ' || status FROM jobs WHERE id = $RJOB")"
lease_left() { sql "SELECT coalesce(lease_until > now(), false) FROM jobs WHERE id = $RJOB"; }
api POST /api/v1/workers/register "${RW[@]}" --data-binary \
    "{\"name\":\"ca-run\",\"kind\":\"host\",\"facts\":{},\"held\":[{\"job_id\":$RJOB,\"attempt\":$RJATT}]}"
assert_eq "a registration that holds the attempt's kept result leaves its lease" "200 t" \
    "$STATUS $(lease_left)"
api POST /api/v1/workers/register "${RW[@]}" --data-binary \
    '{"name":"ca-run","kind":"host","facts":{},"held":[{"job_id":0,"attempt":1}]}'
assert_eq "a malformed held entry is refused at its path" "400 /held/0/job_id" \
    "$STATUS $(json -r '.errors[0].path')"
api POST /api/v1/workers/register "${RW[@]}" --data-binary \
    '{"name":"ca-run","kind":"host","facts":{},"held":[]}'
assert_eq "one that holds nothing ends the attempt's lease" "200 f" "$STATUS $(lease_left)"
claim
assert_eq "the next claim gets block 0 applied again, then its job again" "apply 0" \
    "$(json -r '"\(.step.kind) \(.step.block)"')"
assert_eq "the job went back to the queue" "queued $RJATT" \
    "$(sql "SELECT status || ' ' || attempt FROM jobs WHERE id = $RJOB")"
assert_status 200 POST "/api/v1/plans/$R/cancel" "${S[@]}"
WH=("${HW[@]}")

# --- the real host worker, killed in block 0 --------------------------------------------
ROOT=$HV_TMP/root
THP=$ROOT/sys/kernel/mm/transparent_hugepage/enabled
HPN=$ROOT/sys/module/kvm/parameters/halt_poll_ns
mkdir -p "$(dirname "$THP")" "$(dirname "$HPN")"
echo madvise >"$THP"
echo 200000 >"$HPN"
hv_start_worker hw-host --kind host --sysfs-root "$ROOT" --poll 1 --wait 2
WPID=${HV_WORKER_PIDS[-1]}
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(plan killed hw-host '{"thp": ["never", "always"], "halt_poll_ns": ["0", "400000"]}' 30)"
K=$(json .id)
# shellcheck disable=SC2317 # called through wait_for
in_block0() { [[ $(sql "SELECT count(*) FROM jobs WHERE plan_id = $K AND block = 0 AND status = 'running'") -ge 1 ]]; }
wait_for "block 0 applied, its job runs" 30 in_block0
assert_eq "the host files changed" true \
    "$([[ $(cat "$THP") != madvise || $(cat "$HPN") != 200000 ]] && echo true || echo false)"
kill -KILL "$WPID"
wait "$WPID" 2>/dev/null
assert_status 200 POST "/api/v1/plans/$K/cancel" "${S[@]}"
hv_start_worker hw-host --kind host --sysfs-root "$ROOT" --poll 1 --wait 2
# shellcheck disable=SC2317 # called through wait_for
restored() { [[ $(sql "SELECT status FROM plan_steps WHERE plan_id = $K AND kind = 'restore'") == "done" ]]; }
wait_for "the restarted worker runs the restore step" 30 restored
assert_eq "the host files are back" "madvise 200000" "$(cat "$THP") $(cat "$HPN")"
assert_eq "no apply step ran again" "apply 0 done 1,apply 1 cancelled 0,apply 2 cancelled 0,apply 3 cancelled 0" \
    "$(sql "SELECT string_agg(kind || ' ' || block || ' ' || status || ' ' || attempt, ',' ORDER BY block) FROM plan_steps WHERE plan_id = $K AND kind = 'apply'")"
assert_eq "the host is free" "false true:apply,false:restored" "$(holds "$K")"

hv_finish
