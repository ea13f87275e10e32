#!/usr/bin/env bash
# Claim throughput against `pgbench -N` on the same cluster. Each run
# queues a plan of 10 cpu workloads x REPS repetitions on one host target
# and drains it with 50 simulated workers (hvload, --samples 0: each job is
# claimed and gets a one-metric result; as hvbench-worker does, each result
# asks for the worker's next job, ?claim=true, so a worker claims alone only
# when an answer brought none) through one server, then queues another and
# drains it through two servers on the same database (the workers split
# round-robin; the two are other servers than the first, each with
# --result-lanes 1, so that both together run as many batches at once as
# the one does with its default 2: BENCHMARKS.md, "Result lanes"), then runs `pgbench -N -c 50 -j 2` (the same number of
# clients) on its own database of the same cluster; before each drain and
# before pgbench, a checkpoint and no autovacuum running. Every drain must hand
# out each job once (0 duplicates) and leave none undone. Reports jobs
# drained per second, the claim latency p50/p99 (the answer of the claim or
# of the upload that brought the job), and the ratios to
# pgbench's tps (goal >= 0.5), per run and the median of the runs.
# Each run also drains the same number of jobs as a fleet holds them: each
# of the 50 workers a host of its own (hvload --hosts) with a plan of its
# own (REPS / 50 repetitions of the 10 workloads), through one server and
# through two. A target's jobs are meant for its one worker: 50 workers on
# one target, as the first drains have it, also queue on that target's row
# of kept plan counts (migrations/016), which a fleet never does.
# The CPU every process of a drain used (servers, PostgreSQL, hvload) per
# job is set beside the CPU of a pgbench -N transaction (pgbench and
# PostgreSQL): the throughput ratio cannot pass the ratio of the two on a
# machine whose cores all of them share.
#
#   make bench-progs && bench/claims.sh
#
# Env: BENCH_RUNS (3; quick 2), BENCH_WORKERS (50), BENCH_REPS (1000; quick
# 100; x10 workloads), BENCH_WAIT (0: claim long-poll seconds),
# BENCH_THREADS (the servers' --threads; default theirs: one a CPU, at
# least 2; each thread holds one PostgreSQL connection, so it bounds the
# commits in flight), BENCH_BATCH (the servers' --batch; default theirs, 64; 1 runs each
# claim and result alone), BENCH_PGB_SECONDS (10; quick 5), BENCH_SCALE (pgbench scale, 10; quick 4),
# BENCH_PG_FAST (0), BENCH_SHARED_BUFFERS (1GB), BENCH_WEBHOOK (0; 1 registers a
# subscription to plan.started and plan.finished, delivered to a local
# receiver, before the drains: the plan events' triggers then do their
# work), BENCH_CLAIM_ALONE (0; 1 runs hvload --claim-alone: every job claimed
# with a request of its own), BENCH_LANES (the one server's --result-lanes;
# default theirs, 2), BENCH_LANES_2 (each of the two servers'; 1),
# BENCH_QUICK, KEEP (0).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh

RUNS=${BENCH_RUNS:-$(bench_quick 2 3)}
WORKERS=${BENCH_WORKERS:-50}
REPS=${BENCH_REPS:-$(bench_quick 100 1000)}
WAIT=${BENCH_WAIT:-0}
PGB_SECS=${BENCH_PGB_SECONDS:-$(bench_quick 5 10)}
SCALE=${BENCH_SCALE:-$(bench_quick 4 10)}
WORKLOADS=10
JOBS=$((WORKLOADS * REPS))
TARGET=bench-host
THREADS=${BENCH_THREADS:-}
SERVER_ARGS=()
[[ -n $THREADS ]] && SERVER_ARGS=(--threads "$THREADS")
[[ -n ${BENCH_BATCH:-} ]] && SERVER_ARGS+=(--batch "$BENCH_BATCH")
# Room in PostgreSQL's buffers for pgbench's tables and hvbench's together
# (the default 128MB is not: each pgbench run evicted the jobs' pages, and
# the drains after it read them back through the kernel).
export HVBENCH_PG_SHARED_BUFFERS=${BENCH_SHARED_BUFFERS:-1GB}

LANES=${BENCH_LANES:-} LANES_2=${BENCH_LANES_2:-1}

command -v pgbench >/dev/null || hv_die "pgbench needed (postgresql-client-15)"
# URLS[0] drains alone, URLS[1] and URLS[2] together.
bench_setup "${SERVER_ARGS[@]}" ${LANES:+--result-lanes "$LANES"}
bench_start_server "${SERVER_ARGS[@]}" --result-lanes "$LANES_2"
bench_start_server "${SERVER_ARGS[@]}" --result-lanes "$LANES_2"
ALONE=
[[ ${BENCH_CLAIM_ALONE:-0} == 1 ]] && ALONE=--claim-alone
if [[ ${BENCH_WEBHOOK:-0} == 1 ]]; then
    RECV=$BUILD/tools/hookrecv
    [[ -x $RECV ]] || hv_die "$RECV not built; run: make bench-progs"
    "$RECV" --port-file "$BENCH_TMP/recv.port" --log "$BENCH_TMP/recv.log" >"$BENCH_TMP/recv.out" 2>&1 &
    BENCH_PIDS+=("$!")
    for ((i = 0; i < 50; i++)); do
        [[ -s $BENCH_TMP/recv.port ]] && break
        sleep 0.1
    done
    [[ -s $BENCH_TMP/recv.port ]] || hv_die "hookrecv did not start"
    ADMIN_TOKEN=$("$SERVER" token create --db "$DB" --role admin --name bench-admin) ||
        hv_die "token create --role admin failed"
    curl -fsS -o /dev/null -H "Authorization: Bearer $ADMIN_TOKEN" --data-binary \
        "{\"url\": \"http://127.0.0.1:$(cat "$BENCH_TMP/recv.port")/hook\", \"events\": [\"plan.started\", \"plan.finished\"], \"allow_private\": true}" \
        "$URL/api/v1/webhooks" || hv_die "webhook subscription refused"
fi
echo "# $(bench_machine)"
echo "# servers ${URLS[*]}, $JOBS jobs per drain, $WORKERS simulated workers, wait $WAIT s;" \
    "pgbench -N -c $WORKERS -j 2 -T $PGB_SECS (scale $SCALE)"

bench_sql "CREATE DATABASE pgbench" || hv_die "CREATE DATABASE pgbench failed"
[[ $DB =~ dbname=([^ ]*) ]] || hv_die "no dbname in $DB"
PGB_DB=${DB/dbname=${BASH_REMATCH[1]}/dbname=pgbench}
pgbench -q -i -s "$SCALE" "$PGB_DB" >"$BENCH_TMP/pgbench-init.log" 2>&1 ||
    { hv_tail "$BENCH_TMP/pgbench-init.log"; hv_die "pgbench -i failed"; }

# settle: a checkpoint, then until no autovacuum worker runs (30 s at
# most), so neither a drain nor pgbench shares the machine with the
# cleanup of the one before (a fast drain leaves more of it to the next).
settle() {
    local i
    bench_sql "CHECKPOINT" >/dev/null
    for ((i = 0; i < 60; i++)); do
        [[ $(bench_sql "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'") == 0 ]] &&
            return 0
        sleep 0.5
    done
}

# drain RUN NSERVERS [hosts]: queue a plan, drain it through the one
# server (URLS[0]) or the two (URLS[1], URLS[2]); sets rate p50 p99 and appends a row. With "hosts" each
# simulated worker is a host of its own (hvload --hosts) with a plan of its
# own, JOBS / WORKERS jobs each: a fleet's layout, one worker per host.
drain() {
    local run=$1 n=$2 layout=${3:-one} plan t0 submit_s queued srv0=0 srv1=0 pg0 pg1 rc i claimed dups secs client_cpu left
    local servers=() hosts=() plans=() first=$((n == 1 ? 0 : 1))
    for ((i = first; i < first + n; i++)); do servers+=(--server "${URLS[i]}"); done
    t0=$(date +%s.%N)
    if [[ $layout == hosts ]]; then
        hosts=(--hosts)
        for ((i = 0; i < WORKERS; i++)); do
            bench_plan "claims-$run-$n-$i" "$(printf '%s-%03d' "$TARGET" "$i")" "$WORKLOADS" \
                "$((REPS / WORKERS))" >"$BENCH_TMP/plan.json"
            plans+=("$(bench_submit "$BENCH_TMP/plan.json")")
        done
    else
        bench_plan "claims-$run-$n" "$TARGET" "$WORKLOADS" "$REPS" >"$BENCH_TMP/plan.json"
        plans=("$(bench_submit "$BENCH_TMP/plan.json")")
    fi
    submit_s=$(echo "$(date +%s.%N) - $t0" | bc)
    plan=$(IFS=,; echo "${plans[*]}")
    queued=$(bench_sql "SELECT count(*) FROM jobs WHERE plan_id IN ($plan) AND status = 'queued'")
    [[ $queued == "$JOBS" ]] || hv_die "plans $plan queued $queued jobs, expected $JOBS"
    settle

    for ((i = first; i < first + n; i++)); do srv0=$((srv0 + $(bench_ticks "${BENCH_SERVER_PIDS[i]}"))); done
    pg0=$(bench_pg_ticks)
    HVBENCH_TOKEN=$WORKER_TOKEN timeout -k 5 660 "$HVLOAD" "${servers[@]}" --workers "$WORKERS" \
        --target "$TARGET" "${hosts[@]}" ${ALONE:+"$ALONE"} --samples 0 --metrics 1 --wait "$WAIT" --duration-limit 600 \
        --quiet --json >"$BENCH_TMP/hvload-$run-$n.json" 2>"$BENCH_TMP/hvload-$run-$n.err"
    rc=$?
    for ((i = first; i < first + n; i++)); do srv1=$((srv1 + $(bench_ticks "${BENCH_SERVER_PIDS[i]}"))); done
    pg1=$(bench_pg_ticks)
    cat "$BENCH_TMP/hvload-$run-$n.err" >&2
    [[ $rc -eq 0 ]] || hv_die "hvload exited $rc in run $run: $(cat "$BENCH_TMP/hvload-$run-$n.json")"
    read -r claimed dups rate p50 p99 secs client_cpu < <(jq -r \
        '[.jobs_claimed, .duplicates, .claims_per_s, .claim_ms.p50, .claim_ms.p99,
          .work_elapsed_s, .cpu_s] | @tsv' "$BENCH_TMP/hvload-$run-$n.json")
    [[ $claimed == "$JOBS" && $dups == 0 ]] || hv_die "run $run: claimed $claimed of $JOBS, $dups duplicates"
    left=$(bench_sql "SELECT count(*) FROM jobs WHERE plan_id IN ($plan) AND status <> 'done'")
    [[ $left == 0 ]] || hv_die "run $run: $left jobs not done"
    # CPU per job drained, every process of the drain: the servers,
    # PostgreSQL and the load generator.
    cpu_job=$(echo "(($srv1 - $srv0) + ($pg1 - $pg0)) / $CLK_TCK * 1000 / $JOBS + $client_cpu * 1000 / $JOBS" | bc -l)
    rows+=("$(printf '| %d | %d%s | %d | %.1f | %.2f | **%.0f** | %.2f | %.2f | %.1f / %.1f / %.1f |' \
        "$run" "$n" "$([[ $layout == hosts ]] && echo ", $WORKERS hosts")" "$JOBS" "$submit_s" "$secs" "$rate" "$p50" "$p99" \
        "$(echo "($srv1 - $srv0) / $CLK_TCK" | bc -l)" "$(echo "($pg1 - $pg0) / $CLK_TCK" | bc -l)" \
        "$client_cpu")")
}

rates1=() rates2=() rates3=() rates4=() p99s4=() p99s1=() p99s2=() p99s3=() p50s1=() tpss=() cpus1=() cpus3=() pgcpus=()
rows=()
for ((run = 1; run <= RUNS; run++)); do
    drain "$run" 1
    rates1+=("$rate") p50s1+=("$p50") p99s1+=("$p99") cpus1+=("$cpu_job")
    drain "$run" 2
    rates2+=("$rate") p99s2+=("$p99")
    drain "$run" 1 hosts
    rates3+=("$rate") p99s3+=("$p99") cpus3+=("$cpu_job")
    drain "$run" 2 hosts
    rates4+=("$rate") p99s4+=("$p99")
    # pgbench's CPU and PostgreSQL's while it runs, per transaction: the
    # same accounting as a drain's (`times` reports this shell's children).
    settle
    times >"$BENCH_TMP/times0"
    pg0=$(bench_pg_ticks)
    pgbench -n -N -c "$WORKERS" -j 2 -T "$PGB_SECS" "$PGB_DB" >"$BENCH_TMP/pgbench-$run.txt" 2>&1 ||
        { hv_tail "$BENCH_TMP/pgbench-$run.txt"; hv_die "pgbench -N failed"; }
    pg1=$(bench_pg_ticks)
    times >"$BENCH_TMP/times1"
    tpss+=("$(awk '/^tps = / {print $3; exit}' "$BENCH_TMP/pgbench-$run.txt")")
    txns=$(awk '/^number of transactions actually processed: / {print $6; exit}' "$BENCH_TMP/pgbench-$run.txt")
    pgcpus+=("$(echo "(($pg1 - $pg0) / $CLK_TCK + $(bench_times_children "$BENCH_TMP/times1") -" \
        "$(bench_times_children "$BENCH_TMP/times0")) * 1000 / $txns" | bc -l)")
done

R1=$(bench_median "${rates1[@]}") R2=$(bench_median "${rates2[@]}") T=$(bench_median "${tpss[@]}")
Q1=$(bench_median "${p99s1[@]}") Q2=$(bench_median "${p99s2[@]}")
R3=$(bench_median "${rates3[@]}") Q3=$(bench_median "${p99s3[@]}")
R4=$(bench_median "${rates4[@]}") Q4=$(bench_median "${p99s4[@]}")
echo
echo "| run | servers | jobs | submit s | drain s | jobs/s | claim p50 ms | claim p99 ms | CPU s servers / PostgreSQL / hvload |"
echo "|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
printf '| median | 1 | | | | **%.0f** | %.2f | %.2f | |\n' "$R1" "$(bench_median "${p50s1[@]}")" "$Q1"
printf '| median | 2 | | | | **%.0f** | | %.2f | |\n' "$R2" "$Q2"
printf '| median | 1, %d hosts | | | | **%.0f** | | %.2f | |\n' "$WORKERS" "$R3" "$Q3"
printf '| median | 2, %d hosts | | | | **%.0f** | | %.2f | |\n' "$WORKERS" "$R4" "$Q4"
echo
echo "| run | pgbench -N tps (-c $WORKERS) |"
echo "|---|---|"
for ((run = 1; run <= RUNS; run++)); do printf '| %d | %.0f |\n' "$run" "${tpss[run - 1]}"; done
printf '| median | **%.0f** |\n' "$T"
echo
C1=$(bench_median "${cpus1[@]}") C3=$(bench_median "${cpus3[@]}") CP=$(bench_median "${pgcpus[@]}")
printf 'CPU per job drained (servers + PostgreSQL + hvload), medians: %.3f ms with one target, %.3f ms with %d hosts;\n' \
    "$C1" "$C3" "$WORKERS"
printf 'CPU per pgbench -N transaction (pgbench + PostgreSQL): %.3f ms. On %d CPUs the drain cannot pass %.0f jobs/s.\n' \
    "$CP" "$(nproc)" "$(echo "$(nproc) * 1000 / $C3" | bc -l)"
echo
BENCH_COMMAND="BENCH_QUICK=$BENCH_QUICK ${THREADS:+BENCH_THREADS=$THREADS }${BENCH_BATCH:+BENCH_BATCH=$BENCH_BATCH }${BENCH_WEBHOOK:+BENCH_WEBHOOK=$BENCH_WEBHOOK }${BENCH_CLAIM_ALONE:+BENCH_CLAIM_ALONE=$BENCH_CLAIM_ALONE }${LANES:+BENCH_LANES=$LANES }BENCH_LANES_2=$LANES_2 BENCH_RUNS=$RUNS BENCH_WORKERS=$WORKERS BENCH_REPS=$REPS BENCH_WAIT=$WAIT BENCH_PGB_SECONDS=$PGB_SECS BENCH_SCALE=$SCALE BENCH_PG_FAST=${BENCH_PG_FAST:-0} BENCH_SHARED_BUFFERS=$HVBENCH_PG_SHARED_BUFFERS bench/claims.sh"
bench_result claims "jobs drained/s, 1 server ($WORKERS workers)" "$(printf %.0f "$R1")" jobs/s \
    "pgbench -N -c $WORKERS" "$(printf %.0f "$T")" "$(bench_ratio "$R1" "$T")" ">=0.5" "$RUNS" \
    "claim p99 $(printf %.1f "$Q1") ms; 0 duplicates"
bench_result claims "jobs drained/s, 2 servers ($WORKERS workers)" "$(printf %.0f "$R2")" jobs/s \
    "pgbench -N -c $WORKERS" "$(printf %.0f "$T")" "$(bench_ratio "$R2" "$T")" ">=0.5" "$RUNS" \
    "claim p99 $(printf %.1f "$Q2") ms; 0 duplicates; --result-lanes $LANES_2 each"
bench_result claims "jobs drained/s, 1 server, $WORKERS hosts (a worker and a plan each)" \
    "$(printf %.0f "$R3")" jobs/s "pgbench -N -c $WORKERS" "$(printf %.0f "$T")" \
    "$(bench_ratio "$R3" "$T")" ">=0.5" "$RUNS" "claim p99 $(printf %.1f "$Q3") ms; 0 duplicates"
bench_result claims "jobs drained/s, 2 servers, $WORKERS hosts (a worker and a plan each)" \
    "$(printf %.0f "$R4")" jobs/s "pgbench -N -c $WORKERS" "$(printf %.0f "$T")" \
    "$(bench_ratio "$R4" "$T")" ">=0.5" "$RUNS" "claim p99 $(printf %.1f "$Q4") ms; 0 duplicates; --result-lanes $LANES_2 each"
bench_result claims "CPU per job drained, 1 server, $WORKERS hosts (servers + PostgreSQL + hvload)" \
    "$(printf %.3f "$C3")" "CPU ms" "CPU per pgbench -N transaction (pgbench + PostgreSQL)" \
    "$(printf %.3f "$CP")" "$(bench_ratio "$C3" "$CP")" - "$RUNS" \
    "one target: $(printf %.3f "$C1") ms a job; the ratio of CPU a job costs to what a transaction costs"
echo "reproduce: make bench-progs && $BENCH_COMMAND"
echo "each drain: HVBENCH_TOKEN=<worker token> $HVLOAD --server URL [--server URL2] --workers $WORKERS --target $TARGET ${ALONE:+$ALONE }--samples 0 --metrics 1 --wait $WAIT --duration-limit 600 --json"
