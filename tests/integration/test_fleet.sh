#!/usr/bin/env bash
# Fleet plans: one plan whose targets.host is a label selector runs on
# every registered host it picks, as one child plan per host, at most
# max_parallel_hosts at a time; the parent sums its children, cancels
# them with it, and its report compares the hosts against the fleet's
# median, naming the outliers and the facts in which they differ.
#
# 20 host workers on loopback, their facts made to differ through the
# test-only HVBENCH_TEST_FACTS; fl07 has another kernel. The outlier plan
# runs the twenty hosts, six rounds each, seven at a time (fl07 in the
# first seven, so other hosts run beside it until it ends and the
# machine's other work weighs on all of them alike), each worker held by a
# CPU quota of its own (a cpu cgroup): 12 % of a CPU, 2 % for fl07, which
# is slowed for real. A quota rather than a CPU hog beside it: on a machine
# shared with other work what a hog takes changes with that work. Six
# rounds, not four: a round of fl07 that its quota's periods happen to
# spare measures near the others (113.8 against 18-20 in the other rounds,
# once), and with four rounds that one widened fl07's interval past 1.
# Without
# a writable cgroup v1 cpu controller (root) that part is skipped.
# test-timeout: 420
set -uo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

hv_setup
trap 'uncap; hv_teardown' EXIT
S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
R=(-H "Authorization: Bearer $READ_TOKEN")
N=20
SLOW=fl07
declare -A PIDS
CG=/sys/fs/cgroup/cpu
CGROUPS=()

# cap PID PERCENT: holds the process to PERCENT % of one CPU (a cpu
# cgroup of its own); fails without a writable cgroup v1 cpu controller.
cap() {
    local d=$CG/hvbench-test-fleet-$$-$1
    mkdir "$d" 2>/dev/null || return 1
    CGROUPS+=("$d")
    # A short period (the quota is at least 1 ms): the quota's bursts then
    # come often enough to weigh alike on each measured second.
    echo 50000 >"$d/cpu.cfs_period_us" && echo $(($2 * 500)) >"$d/cpu.cfs_quota_us" &&
        echo "$1" >"$d/cgroup.procs"
}
# Back to the root group, then the groups removed (before the usual
# teardown, the EXIT trap).
# shellcheck disable=SC2317 # called through the trap
uncap() {
    local rc=$? d p
    for d in "${CGROUPS[@]}"; do
        while read -r p; do echo "$p" >"$CG/cgroup.procs"; done <"$d/cgroup.procs"
        rmdir "$d"
    done
    return "$rc"
}

facts() { # KERNEL
    printf '{"kernel":"%s","microcode":"0x2a","bios":"2.4.1","thp":"madvise","cpu_model":"Test CPU"}' "$1"
}
facts 6.1.0-fleet >"$HV_TMP/facts.json"
facts 6.8.0-odd >"$HV_TMP/facts-odd.json"

for ((i = 1; i <= N; i++)); do
    name=$(printf 'fl%02d' "$i")
    file=$HV_TMP/facts.json
    [[ $name == "$SLOW" ]] && file=$HV_TMP/facts-odd.json
    args=(--label pool=batch)
    ((i <= 3)) && args+=(--label cpu=epyc)
    HVBENCH_TEST_FACTS=$file "$WORKER" --server "$URL" --token "$WORKER_TOKEN" \
        --name "$name" --kind host --state-dir "$HV_TMP/state" "${args[@]}" \
        >>"$HV_TMP/worker-$name.log" 2>&1 &
    HV_WORKER_PIDS+=($!)
    PIDS[$name]=$!
done
# A host of another pool, registered without a worker.
api POST /api/v1/workers/register -H "Authorization: Bearer $WORKER_TOKEN" --data-binary \
    '{"name":"fl-web","kind":"host","facts":{},"labels":{"pool":"web"}}'
assert_eq "a host of another pool registers" 200 "$STATUS"

# shellcheck disable=SC2317 # called through wait_for
registered() {
    api GET "/api/v1/targets?label=pool=batch" "${R[@]}"
    [[ $(json '.items | length') == "$N" ]]
}
wait_for "the $N host workers registered with their labels" 60 registered
api GET "/api/v1/targets?label=pool=batch" "${R[@]}"
assert_status 200 GET "/api/v1/targets/$(json ".items[] | select(.name == \"$SLOW\") | .id")" "${R[@]}"
assert_eq "the test's facts override the probed ones" "6.8.0-odd" "$(json -r .facts.kernel)"

plan() { # SELECTOR MAX_PARALLEL REPETITIONS [extra members] [SECONDS]
    printf '{"name":"fleet","targets":{"host":{"label":"%s"}},"max_parallel_hosts":%s,
      "repetitions":{"min":%s,"max":%s}%s,
      "workloads":[{"id":"c","kind":"cpu","engine":"builtin","params":{"seconds":%s,"copies":1}}]}' \
        "$1" "$2" "$3" "$3" "${4:-}" "${5:-1}"
}

# Selectors: a dry run lists the hosts matched; none matched is a 422.
assert_status 200 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$(plan pool=batch,cpu=epyc 5 1)"
assert_eq "pool=batch,cpu=epyc picks only the hosts carrying both" '["fl01","fl02","fl03"]' \
    "$(json -c '[.hosts[].host]')"
assert_eq "each host's jobs" '[1,1,1]' "$(json -c '[.hosts[].jobs]')"
assert_status 200 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$(plan pool=web 5 1)"
assert_eq "pool=web: the host of that pool" '["fl-web"]' "$(json -c '[.hosts[].host]')"
assert_status 422 POST /api/v1/plans "${S[@]}" --data-binary "$(plan pool=none 5 1)"
assert_eq "nothing matched: 422 at /targets/host" '["/targets/host"]' "$(json -c '[.errors[].path]')"
assert_match "naming the selector" 'pool=none' "$(json -r '.errors[0].message')"
assert_status 400 POST /api/v1/plans "${S[@]}" --data-binary "$(plan 'pool batch' 5 1)"
assert_match "a malformed selector: 400 at the label" '/targets/host/label' "$(json -c '[.errors[].path]')"
assert_status 400 POST /api/v1/plans "${S[@]}" --data-binary "$(plan pool=batch 0 1)"
assert_match "max_parallel_hosts is at least 1" '/max_parallel_hosts' "$(json -c '[.errors[].path]')"

# Plan A: every host once, five at a time.
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan pool=batch 5 1)"
A=$(json .id)
assert_eq "the parent lists one child per host" "$N" "$(json '.children | length')"
assert_eq "its children's hosts" "$(printf '"fl%02d",' $(seq 1 $N) | sed 's/,$//;s/^/[/;s/$/]/')" \
    "$(json -c '[.children[].host] | sort')"
assert_eq "the parent's jobs are its children's" "$N" "$(json .jobs.total)"
assert_eq "max_parallel_hosts shown" 5 "$(json .max_parallel_hosts)"
assert_eq "the last child waits for a slot" "waiting for a slot: max_parallel_hosts=5" \
    "$(json -r '.children[-1].waiting')"
LAST=$(json '.children[-1].id')
assert_status 200 GET "/api/v1/plans/$LAST" "${R[@]}"
assert_eq "the child names its parent" "$A" "$(json .parent_id)"
assert_eq "and says what it waits for" "waiting_for_slot" "$(json -r '.waiting.reason')"
assert_eq "a child runs on its host" "$(printf 'fl%02d' $N)" "$(json -r '.plan.targets.host')"

# shellcheck disable=SC2317 # called through wait_for
done_plan() { # ID
    api GET "/api/v1/plans/$1" "${R[@]}"
    [[ $(json -r .status) == "done" ]]
}
wait_for "fleet plan A done" 150 done_plan "$A"
assert_eq "every child done" "$N" "$(json '[.children[] | select(.status == "done")] | length')"
assert_eq "the parent's progress" 1 "$(json .progress)"

# How many hosts ran at once: each child from its first claim to its last
# result, counted at every start.
spans() { # PARENT -> one line per child: START END (seconds)
    local id
    api GET "/api/v1/plans/$1" "${R[@]}"
    for id in $(json '.children[].id'); do
        api GET "/api/v1/plans/$id/jobs" "${R[@]}"
        # shellcheck disable=SC2016 # jq's variables
        json -r 'def t: capture("^(?<d>[^.+Z]+)(\\.(?<f>[0-9]+))?")
              | ((.d + "Z") | fromdateiso8601) + ("0." + (.f // "0") | tonumber);
            [.items[].claimed_at | t] as $a | [.items[].finished_at | t] as $b
            | "\($a | min) \($b | max)"'
    done
}
most_at_once() {
    awk '{s[NR] = $1; e[NR] = $2} END {m = 0; for (i = 1; i <= NR; i++) {n = 0;
         for (j = 1; j <= NR; j++) if (s[j] <= s[i] && e[j] > s[i]) n++; if (n > m) m = n}; print m}'
}
spans "$A" >"$HV_TMP/spans-a"
assert_eq "one span per host" "$N" "$(wc -l <"$HV_TMP/spans-a")"
at_once=$(most_at_once <"$HV_TMP/spans-a")
hv_log "plan A: at most $at_once hosts at once"
[[ $at_once -ge 1 && $at_once -le 5 ]]
hv_check $((! $?)) "never more than max_parallel_hosts=5 hosts ran at once" "$at_once at once"

# Plan B: the outlier.
capped=1
for name in "${!PIDS[@]}"; do
    pct=12
    [[ $name == "$SLOW" ]] && pct=2
    cap "${PIDS[$name]}" "$pct" || capped=0
done
if ((capped == 0)); then
    hv_log "no writable cgroup v1 cpu controller: the outlier plan is skipped"
else
    assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
        "$(plan pool=batch 7 6 ',"margin_pct":20' 2)"
    B=$(json .id)
    wait_for "fleet plan B done" 240 done_plan "$B"
    assert_status 200 GET "/api/v1/plans/$B/report" "${R[@]}"
    hv_log "cpu.score: $(json -c '.hosts.series[] | select(.metric == "cpu.score") |
        [.median, [.hosts[] | [.host, .ratio, .ratio_lo, .ratio_hi]]]')"
    assert_eq "the report's hosts" "$N" "$(json '.hosts.hosts | length')"
    assert_eq "each host's figures for cpu.score" "$N" \
        "$(json '[.hosts.series[] | select(.metric == "cpu.score") | .hosts[]] | length')"
    assert_eq "the slowed host is the only outlier" "[\"$SLOW\"]" "$(json -c '[.hosts.outliers[].host]')"
    assert_eq "below the median in cpu.score" "below" \
        "$(json -r '.hosts.outliers[0].series[] | select(.metric == "cpu.score") | .side')"
    assert_eq "named with the fact in which it differs" \
        '[{"fact":"kernel","typical":"6.1.0-fleet","value":"6.8.0-odd"}]' \
        "$(json -cS '.hosts.outliers[0].differs')"
    assert_status 200 GET "/api/v1/plans/$B/report?format=md" "${R[@]}"
    assert_match "the Markdown report has the per-host view" "## Hosts" "$BODY"
    assert_match "and names the outlier" "- $SLOW: .*Differs in kernel 6.8.0-odd" "$BODY"
    HVBENCH_SERVER=$URL HVBENCH_TOKEN=$READ_TOKEN hv_cli report "$B"
    assert_eq "hvbench report of a fleet plan" 0 "$RC"
    assert_match "prints the outlier and its facts" "Outlier $SLOW: .*kernel \"6.8.0-odd\"" "$OUT"
fi

# Cancelling the parent cancels every child.
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan pool=batch 2 1)"
C=$(json .id)
assert_status 200 POST "/api/v1/plans/$C/cancel" "${S[@]}"
assert_eq "the parent cancelled" cancelled "$(json -r .status)"
assert_eq "and each child" 20 "$(json '[.children[] | select(.status == "cancelled")] | length')"

hv_finish
