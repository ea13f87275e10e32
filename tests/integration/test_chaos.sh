#!/usr/bin/env bash
# test-timeout: 600
# The crash matrix: a tuning plan (thp on a scratch --sysfs-root, two
# blocks of one short job) is broken at each boundary —
# before an apply step (apply.claimed), during it (apply.changed: the host
# settings changed, the step not answered), during a job (job.kept: the
# result measured and kept, not sent) and during the restore step
# (restore.changed) — with and without a cancel, by SIGKILL of the host
# worker or of the server. The worker reaches the boundary by itself
# (HVBENCH_FAULT, lib/fault.h): killed there, or stopped there while the
# server is killed and started again on the same port, then let go on.
# Every cell must end with the host files at their original values, the
# plan final (done, or cancelled when cancelled), no hold on the host, every
# journal entry restored (with a time and how) and none left in the
# worker's journal, and no result lost or stored twice.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }

# The server again on the same port, after a SIGKILL.
restart_server() {
    local i
    kill -KILL "$HV_SERVER_PID" 2>/dev/null
    wait "$HV_SERVER_PID" 2>/dev/null
    for ((i = 0; i < 50; i++)); do
        local j
        "$SERVER" serve --db "$DB" --listen "127.0.0.1:$PORT" --web-dir "$HV_ROOT/web" \
            ${HV_NOISE_DEFAULT:+--noise-default "$HV_NOISE_DEFAULT"} \
            "${HV_SERVER_ARGS[@]}" >>"$HV_TMP/server.log" 2>&1 &
        HV_SERVER_PID=$!
        for ((j = 0; j < 40; j++)); do
            curl -fsS --max-time 2 -o /dev/null "$URL/healthz" 2>/dev/null && return 0
            kill -0 "$HV_SERVER_PID" 2>/dev/null || break
            sleep 0.25
        done
        sleep 0.2
    done
    hv_die "the server did not come back on port $PORT"
}

# The host worker of cell $1 (its own state folder and host files), with
# HVBENCH_FAULT=$2 when given; its pid goes to WPID[$1].
start_worker() {
    HVBENCH_FAULT=${2:-} "$WORKER" --server "$URL" --token "$WORKER_TOKEN" --name "ch-$1" \
        --kind host --state-dir "$HV_TMP/state-$1" --sysfs-root "$HV_TMP/root-$1" --poll 1 \
        --wait 2 >>"$HV_TMP/worker-ch-$1.log" 2>&1 &
    WPID[$1]=$!
    HV_WORKER_PIDS+=("$!")
}

thp_file() { echo "$HV_TMP/root-$1/sys/kernel/mm/transparent_hugepage/enabled"; }

# Every worker of cells $FIRST..$LAST reached its fault point: gone (kill)
# or stopped (stop).
# shellcheck disable=SC2317 # called through wait_for
faults_reached() {
    local c
    for ((c = FIRST; c <= LAST; c++)); do
        if [[ $ACTION == kill ]]; then
            kill -0 "${WPID[$c]}" 2>/dev/null && return 1
        else
            [[ $(awk '{print $3}' "/proc/${WPID[$c]}/stat" 2>/dev/null) == T ]] || return 1
        fi
    done
    return 0
}

# Every plan of cells $FIRST..$LAST is final, holds no host and has no step
# left to run.
# shellcheck disable=SC2317 # called through wait_for
plans_settled() {
    local ids
    ids=$(IFS=,; echo "${PLANS[*]:FIRST:LAST-FIRST+1}")
    [[ $(sql "SELECT count(*) FROM plans p WHERE p.id IN ($ids)
        AND (p.state NOT IN ('done', 'cancelled', 'failed') OR p.holds_host
        OR EXISTS (SELECT 1 FROM plan_steps s WHERE s.plan_id = p.id
            AND s.status IN ('waiting', 'queued', 'running')))" | tr -d ' ') == 0 ]]
}

# What cell $1 ended with, in the words of the expected line.
outcome() {
    local c=$1 p=${PLANS[$1]} host=ch-$1 got
    got="$(sql "SELECT state FROM plans WHERE id = $p") $(cat "$(thp_file "$c")")"
    got+=" holds=$(sql "SELECT count(*) FROM plans WHERE host_name = '$host' AND holds_host")"
    got+=" open=$(sql "SELECT count(*) FROM target_changes WHERE target_name = '$host'
        AND (restored_at IS NULL OR restored_how IS NULL)")"
    got+=" journal=$(find "$HV_TMP/state-$c" -path '*/journal/*.json' -size +0 \
        -exec jq 'length' {} + 2>/dev/null | awk '{s += $1} END {print s + 0}')"
    got+=" twice=$(sql "SELECT count(*) FROM (SELECT r.job_id FROM results r JOIN jobs j
        ON j.id = r.job_id WHERE j.plan_id = $p GROUP BY r.job_id HAVING count(*) > 1) x")"
    got+=" lost=$(sql "SELECT count(*) FROM jobs j WHERE j.plan_id = $p AND (j.status = 'done')
        <> EXISTS (SELECT 1 FROM results r WHERE r.job_id = j.id AND r.status = 'ok')")"
    got+=" undone=$(sql "SELECT count(*) FROM jobs WHERE plan_id = $p AND status <> 'done'")"
    echo "$got"
}

BOUNDARIES=("before the apply step:apply.claimed" "during the apply step:apply.changed"
    "during a job:job.kept" "during the restore step:restore.changed")
declare -a WPID PLANS POINT CANCEL NAME ANSWER
CELLS=0 PASSED=0

# One phase: the 8 cells of VICTIM (worker|server) at once — each
# boundary with and without a cancel, each cell its own host and plan.
phase() {
    local victim=$1 b cancel c t0=$SECONDS
    ACTION="kill"
    [[ $victim == server ]] && ACTION="stop"
    FIRST=$((CELLS + 1))
    for cancel in no yes; do
        for b in "${BOUNDARIES[@]}"; do
            c=$((CELLS + 1)) CELLS=$((CELLS + 1))
            NAME[c]="${b%%:*}, cancel $cancel, $victim killed" POINT[c]=${b##*:} CANCEL[c]=$cancel
            mkdir -p "$(dirname "$(thp_file "$c")")"
            echo madvise >"$(thp_file "$c")"
            start_worker "$c" "${POINT[c]}:$ACTION"
            api POST /api/v1/plans "${S[@]}" --data-binary "$(jq -c --arg h "ch-$c" '.name = "chaos"
                | .targets.host = $h | .workloads[0].params.seconds = 1 | .repetitions = {min: 1}
                | .factors = {"thp": ["never", "always"]}' "$HV_ROOT/examples/quick.json")"
            [[ $STATUS == 201 ]] || hv_die "cell $c: plan refused: $STATUS $BODY"
            PLANS[c]=$(json .id)
        done
    done
    LAST=$CELLS
    wait_for "$victim phase: every worker at its fault point" 120 faults_reached
    [[ $victim == server ]] && restart_server
    for ((c = FIRST; c <= LAST; c++)); do
        ANSWER[c]=
        if [[ ${CANCEL[c]} == yes ]]; then
            # a plan whose jobs all ended has nothing left to cancel: 409
            api POST "/api/v1/plans/${PLANS[c]}/cancel" "${S[@]}"
            [[ $STATUS == 200 || $STATUS == 409 ]] || hv_die "cancel: $STATUS $BODY"
            ANSWER[c]=$STATUS
        fi
        if [[ $victim == server ]]; then
            kill -CONT "${WPID[c]}"
        else
            wait "${WPID[c]}" 2>/dev/null
            start_worker "$c"
        fi
    done
    wait_for "$victim phase: every plan settles" 180 plans_settled
    for ((c = FIRST; c <= LAST; c++)); do
        local want="done"
        [[ ${ANSWER[c]} == 200 ]] && want="cancelled"
        local undone=0
        [[ $want == cancelled ]] && undone=$(sql "SELECT count(*) FROM jobs
            WHERE plan_id = ${PLANS[c]} AND status <> 'done'")
        local got
        got=$(outcome "$c")
        hv_log "cell $c (${NAME[c]}): $got"
        assert_eq "cell $c (${NAME[c]})" \
            "$want madvise holds=0 open=0 journal=0 twice=0 lost=0 undone=$undone" \
            "$got" && PASSED=$((PASSED + 1))
        hv_stop_pid "${WPID[c]}" 10
    done
    hv_log "$victim phase took $((SECONDS - t0)) s"
}

phase worker
phase server
hv_log "chaos matrix: $PASSED of $CELLS cells passed"

hv_finish
