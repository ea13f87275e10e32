#!/usr/bin/env bash
# plain-pass-only: it drives a real Slurm cluster (munged, slurmctld, slurmd) on loopback; the hook machinery it uses runs under the sanitizers in test_hooks
# shellcheck disable=SC2016,SC2317 # jq programs in single quotes; functions run by wait_for
# Slurm drained and returned by the hooks of deploy/hooks/ (docs/integration.md,
# "Slurm"): a private munged (its own key and socket), slurmctld and
# slurmd -N on loopback with a private slurm.conf (SLURM_CONF), one node,
# hvnode01, mapped from the target hv-slurm by its label slurm.node. A
# batch job holds the node: the plan waits with the job named in its
# waiting, the node is draining then drained while the plan runs, idle
# after it. A node drained by hand (another reason) stays drained after a
# plan; a plan cancelled while it waits for the drain still resumes the
# node. The state sequence, with times, is in the log ("# seq").
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
for tool in munged slurmctld slurmd sbatch squeue sinfo scontrol scancel; do
    command -v "$tool" >/dev/null ||
        hv_missing_tool "$tool not installed (slurmctld slurmd slurm-client munge: deploy/deps.sh)"
done
[[ $(id -u) == 0 ]] || hv_missing_tool "slurmd runs jobs as their user: the test runs as root"
hv_setup
START=$SECONDS

NODE=hvnode01
# Slurm's sockets (munged's, and slurmstepd's in the spool: NODE_JOB.STEP)
# must fit a unix socket's 108 bytes whatever the checkout's path: its
# files live in a short folder of their own, linked from $HV_TMP/slurm and
# removed when the test ends (kept with KEEP=1 after a failure).
SL=$(mktemp -d /tmp/hvslurm.XXXXXX) || hv_die "mktemp failed"
ln -s "$SL" "$HV_TMP/slurm"
slurm_teardown() {
    local rc=$? pid
    for pid in "${HV_WORKER_PIDS[@]}"; do hv_stop_pid "$pid" 10; done
    [[ $rc -ne 0 && $rc -ne 77 && ${KEEP:-0} == 1 ]] || rm -rf -- "$SL"
    (exit "$rc")
    hv_teardown
}
trap slurm_teardown EXIT
mkdir -p "$SL/munge" "$SL/state" "$SL/spool" "$SL/log"
chmod 700 "$SL/munge"
dd if=/dev/urandom of="$SL/munge/key" bs=1024 count=1 status=none
chmod 600 "$SL/munge/key"
munged -F -f -S "$SL/munge/sock" --key-file "$SL/munge/key" --log-file "$SL/log/munged.log" \
    --pid-file "$SL/munge/pid" --seed-file "$SL/munge/seed" >"$SL/log/munged.out" 2>&1 &
HV_WORKER_PIDS+=($!)
CTLD_PORT=$(hv_free_port) || hv_die "no free port"
SLURMD_PORT=$(hv_free_port) || hv_die "no free port"
cat >"$SL/slurm.conf" <<CONF
ClusterName=hvtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$SL/munge/sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/linear
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
StateSaveLocation=$SL/state
SlurmdSpoolDir=$SL/spool
SlurmctldPidFile=$SL/slurmctld.pid
SlurmdPidFile=$SL/slurmd.pid
SlurmctldLogFile=$SL/log/slurmctld.log
SlurmdLogFile=$SL/log/slurmd.log
NodeName=$NODE NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$SL/slurm.conf
sock_up() { [[ -S $SL/munge/sock ]]; }
wait_for "munged listens on its own socket" 10 sock_up
slurmctld -D -i >"$SL/log/slurmctld.out" 2>&1 &
HV_WORKER_PIDS+=($!)
slurmd -D -N "$NODE" >"$SL/log/slurmd.out" 2>&1 &
HV_WORKER_PIDS+=($!)

# node: the node's state and reason, "idle|none", "draining|hvbench plan 3" ...
node() { sinfo -h -N -n "$NODE" -o '%T|%E' 2>/dev/null | head -n 1; }
# seq WHAT: one line of the state sequence, with the time.
seq_note() { hv_log "seq $(date +%T) $* [node: $(node)]"; }
node_is() { [[ $(node) == "$1" ]]; }
wait_for "slurm node $NODE is idle" 30 node_is "idle|none" ||
    { hv_tail "$SL/log/slurmctld.log"; hv_tail "$SL/log/slurmd.log"; }

# The host worker declares the two hooks; SLURM_CONF reaches them through
# its environment, the node's name through the target's label.
jq -n --arg d "$HV_ROOT/deploy/hooks" '{hooks: {
    slurm_drain: [($d + "/slurm-before-host")], slurm_resume: [($d + "/slurm-after-host")]}}' \
    >"$HV_TMP/worker.json"
hv_start_worker hv-slurm --kind host --poll 1 --config "$HV_TMP/worker.json"
S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
A=(-H "Authorization: Bearer $ADMIN_TOKEN")
registered() {
    api GET /api/v1/targets
    [[ $(json -r '[.items[] | select(.name == "hv-slurm")] | length') == 1 ]]
}
wait_for "the host worker registered" 30 registered
HOST_ID=$(json -r '.items[] | select(.name == "hv-slurm") | .id')
assert_status 200 PUT "/api/v1/targets/$HOST_ID/labels" "${A[@]}" --data-binary "{\"labels\": {\"slurm.node\": \"$NODE\"}}"

HOOKS='{"before_host": {"local": "slurm_drain"}, "after_host": {"local": "slurm_resume"}, "interval": 1}'
plan_json() { # NAME SECONDS
    jq -c --arg n "$1" --argjson s "$2" --argjson k "$HOOKS" '.name = $n | .targets.host = "hv-slurm"
        | .repetitions.min = 1 | .repetitions.max = 1 | .workloads = [.workloads[0]]
        | .workloads[0].params.seconds = $s | .hooks = $k' "$HV_ROOT/examples/quick.json"
}
after_done() { # PLAN
    api GET "/api/v1/plans/$1"
    [[ $(json -r '[.hooks[] | select(.kind == "after_host")][0].status') =~ ^(done|failed)$ ]]
}
job_runs() { [[ $(squeue -h -j "$1" -o '%T' 2>/dev/null) == RUNNING ]]; }

# --- a batch job holds the node: the plan waits for it, then runs on the drained node ---
JOB=$(sbatch --parsable -J holder -o /dev/null --wrap 'sleep 6') || hv_die "sbatch failed"
wait_for "batch job $JOB runs on $NODE" 20 job_runs "$JOB"
seq_note "batch job $JOB running"
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan_json slurm-drained 3)"
P1=$(json .id)
seq_note "plan $P1 submitted"
waits_for_job() {
    api GET "/api/v1/plans/$P1"
    [[ $(json -r '.waiting.detail // ""') == "draining: batch job $JOB (holder) still running on $NODE, started "* ]]
}
wait_for "plan $P1 waits, naming the batch job" 20 waits_for_job
seq_note "plan $P1 waiting: $(json -r .waiting.detail)"
assert_eq "the plan is queued, waiting for its before_host hook" "queued before_host_hook" \
    "$(json -r '"\(.status) \(.waiting.reason)"')"
assert_eq "meanwhile the node is draining for the plan" "draining|hvbench plan $P1" "$(node)"
plan_runs() {
    api GET "/api/v1/plans/$P1"
    [[ $(json -r .status) == running ]]
}
wait_for "plan $P1 runs once the batch job ended" 40 plan_runs
seq_note "plan $P1 running"
# DRAIN: "drained", or "draining" for the moment Slurm takes to mark the
# ended batch job's node drained.
assert_match "while the plan runs the node is drained by it, and no batch job is on it" \
    "^drain(ed|ing)\\|hvbench plan $P1 0\$" "$(node) $(squeue -h -w "$NODE" | wc -l)"
wait_for "plan $P1's after_host ran" 60 after_done "$P1"
seq_note "plan $P1 $(json -r .status), after_host $(json -r '.hooks[1].status')"
assert_eq "the plan is done; the hook log: before_host done after saying not yet, after_host done" \
    "done before_host done true after_host done" \
    "$(json -r '"\(.status) \(.hooks[0].kind) \(.hooks[0].status) \(.hooks[0].answer.not_yet.calls >= 1) \(.hooks[1].kind) \(.hooks[1].status)"')"
assert_eq "after_host said it resumed the node" "slurm node $NODE resumed (it was drained by hvbench plan $P1)" \
    "$(json -r '.hooks[1].answer.output | rtrimstr("\n") | split("\n") | last')"
wait_for "the node is idle again" 10 node_is "idle|none"
# Slurm's end time of the batch job (local time, whole seconds) against the
# plan's start, both as seconds since the epoch.
job_end=$(scontrol show job "$JOB" -o | sed -n 's/.*EndTime=\([^ ]*\).*/\1/p')
assert_eq "the batch job ended ($job_end) before the plan's first job ($(json -r .started_at))" 1 \
    "$(($(date -d "$job_end" +%s) <= $(date -d "$(json -r .started_at)" +%s)))"

# --- a node drained by hand stays drained ------------------------------------------
scontrol update NodeName="$NODE" State=DRAIN Reason="operator: disk swap"
seq_note "drained by hand"
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan_json slurm-operator 1)"
P2=$(json .id)
wait_for "plan $P2's after_host ran" 60 after_done "$P2"
seq_note "plan $P2 $(json -r .status), after_host $(json -r '.hooks[1].status')"
assert_eq "the plan ran on the drained node" "done" "$(json -r .status)"
assert_eq "before_host left the operator's drain as it was" \
    "slurm node $NODE is already drained (reason: operator: disk swap): left as it is, never resumed by hvbench" \
    "$(json -r '.hooks[0].answer.output' | head -n 1)"
assert_eq "after_host did not resume it, and said why" \
    "slurm node $NODE not resumed: it is drained for another reason (operator: disk swap), not by hvbench plan $P2" \
    "$(json -r '.hooks[1].answer.output | rtrimstr("\n") | split("\n") | last')"
assert_eq "the node is still drained with the operator's reason" "drained|operator: disk swap" "$(node)"
scontrol update NodeName="$NODE" State=RESUME
wait_for "the operator resumed it" 10 node_is "idle|none"

# --- a plan cancelled while it waits for the drain still resumes the node -----------------
JOB=$(sbatch --parsable -J long -o /dev/null --wrap 'sleep 60') || hv_die "sbatch failed"
wait_for "batch job $JOB runs on $NODE" 20 job_runs "$JOB"
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan_json slurm-cancelled 1)"
P3=$(json .id)
waits3() {
    api GET "/api/v1/plans/$P3"
    [[ $(json -r '.waiting.detail // ""') == "draining: batch job $JOB (long) still running on $NODE"* ]]
}
wait_for "plan $P3 waits for batch job $JOB" 20 waits3
seq_note "plan $P3 waiting: $(json -r .waiting.detail)"
assert_eq "the node is draining for plan $P3" "draining|hvbench plan $P3" "$(node)"
assert_status 200 POST "/api/v1/plans/$P3/cancel" "${S[@]}"
seq_note "plan $P3 cancelled"
wait_for "plan $P3's after_host ran after the cancel" 30 after_done "$P3"
seq_note "plan $P3 $(json -r .status), after_host $(json -r '.hooks[1].status')"
assert_eq "cancelled; after_host done; no job of the plan ran" "cancelled done 0" \
    "$(json -r '"\(.status) \(.hooks[1].status) \(.jobs.done)"')"
back_in_service() { [[ "$(node) $(squeue -h -j "$JOB" -o '%T')" == "allocated|none RUNNING" ]]; }
wait_for "the node is back in service, the batch job still on it" 10 back_in_service
scancel "$JOB"
wait_for "the node is idle once the batch job was cancelled" 20 node_is "idle|none"
seq_note "end ($((SECONDS - START)) s after the server started)"
hv_finish
