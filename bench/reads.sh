#!/usr/bin/env bash
# Reads against their peers, on one private cluster, in interleaved rounds:
#  - GET /api/v1/plans/{id} of a 3-job plan with a read token (wrk -t2
#    -c64) against `pgbench -S -M prepared -c 64 -j 2` (the same
#    concurrency) on the same cluster: plan reads/s over pgbench's tps,
#    from a server with its default --plan-cache-ms (answers kept up to a
#    second: the issue's figure) and from a second server on the same
#    database with --plan-cache-ms 0 (every read runs the statement);
#  - GET /healthz against build/bench/mhd_min, a minimal libmicrohttpd
#    responder in the server's own daemon mode (same pool size): req/s over
#    req/s.
# Beside them, the plan read's own statement run alone by pgbench (-f, same
# concurrency): how close the server comes to its SQL.
# Each round runs the six in turn (plan, plan uncached, pgbench -S, the
# statement, healthz, mhd_min);
# medians of the rounds, their ratios (goals: plan read >= 0.5, /healthz
# >= 0.9). Any non-2xx answer fails the run.
#
#   make bench-progs && bench/reads.sh      (needs wrk: deploy/deps.sh bench)
#
# Env: BENCH_ROUNDS (3; quick 2), BENCH_SECONDS (10; quick 4),
# BENCH_CONNECTIONS (64), BENCH_SCALE (pgbench scale, 10; quick 4),
# BENCH_THREADS (the server's --threads; default its own: one a CPU, at
# least 2; mhd_min gets the same), BENCH_PG_FAST (0), BENCH_QUICK, KEEP.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=bench/lib.sh
source bench/lib.sh

ROUNDS=${BENCH_ROUNDS:-$(bench_quick 2 3)}
SECS=${BENCH_SECONDS:-$(bench_quick 4 10)}
CONNS=${BENCH_CONNECTIONS:-64}
SCALE=${BENCH_SCALE:-$(bench_quick 4 10)}
MHDMIN=$BUILD/bench/mhd_min
TARGET=bench-host

command -v wrk >/dev/null || hv_die "wrk needed: deploy/deps.sh bench"
command -v pgbench >/dev/null || hv_die "pgbench needed (postgresql-client-15)"
[[ -x $MHDMIN ]] || hv_die "$MHDMIN not built; run: make bench-progs"

THREADS=${BENCH_THREADS:-}
# shellcheck disable=SC2046 # no --threads: the server's default
bench_setup $([[ -n $THREADS ]] && echo --threads "$THREADS")
echo "# $(bench_machine)"
READ_TOKEN=$("$SERVER" token create --db "$DB" --role read --name bench-read) ||
    hv_die "token create --role read failed"
bench_plan reads "$TARGET" 3 1 >"$BENCH_TMP/plan.json"
PLAN=$(bench_submit "$BENCH_TMP/plan.json")
[[ $(bench_sql "SELECT count(*) FROM jobs WHERE plan_id = $PLAN") == 3 ]] || hv_die "plan $PLAN has not 3 jobs"
curl -fsS -H "Authorization: Bearer $READ_TOKEN" "$URL/api/v1/plans/$PLAN" >/dev/null ||
    hv_die "GET /api/v1/plans/$PLAN failed with the read token"
# The second server: the same, keeping no answer.
# shellcheck disable=SC2046 # no --threads: the server's default
bench_start_server --plan-cache-ms 0 $([[ -n $THREADS ]] && echo --threads "$THREADS")
URL0=${URLS[1]}
cmp -s <(curl -fsS -H "Authorization: Bearer $READ_TOKEN" "$URL/api/v1/plans/$PLAN") \
    <(curl -fsS -H "Authorization: Bearer $READ_TOKEN" "$URL0/api/v1/plans/$PLAN") ||
    hv_die "the two servers answer GET /api/v1/plans/$PLAN differently"

# pgbench's own database on the same cluster.
bench_sql "CREATE DATABASE pgbench" || hv_die "CREATE DATABASE pgbench failed"
[[ $DB =~ dbname=([^ ]*) ]] || hv_die "no dbname in $DB"
PGB_DB=${DB/dbname=${BASH_REMATCH[1]}/dbname=pgbench}
pgbench -q -i -s "$SCALE" "$PGB_DB" >"$BENCH_TMP/pgbench-init.log" 2>&1 ||
    { hv_tail "$BENCH_TMP/pgbench-init.log"; hv_die "pgbench -i failed"; }

# The plan read's own statement (plan_read_rows in server/db_plan_read.c, for
# a plan outside a fleet and without hooks, over the count shards or,
# before them, the counts; plan_read in a server before it), as the
# server prepares it (the string in its binary), run by pgbench at the
# same concurrency: the floor the server stands on, beside the pgbench -S
# peer.
# shellcheck disable=SC2016 # a literal $1
STMT=$(strings -n 20 "$SERVER" | grep -m1 'FROM plan_job_count_shards k LEFT JOIN targets t')
[[ -n $STMT ]] || STMT=$(strings -n 20 "$SERVER" | grep -m1 'k.queued > 0 AND t.id IS NULL')
[[ -n $STMT ]] ||
    STMT=$(strings -n 20 "$SERVER" | grep -m1 'hv_plan_waiting_unregistered(created_at, queued_targets)')
[[ -n $STMT ]] || hv_die "the plan read's statement is not in $SERVER"
printf '%s;\n' "${STMT//\$1/$PLAN}" >"$BENCH_TMP/plan-stmt.sql"

port=$(hv_free_port) || hv_die "no free TCP port"
"$MHDMIN" "$port" ${THREADS:+"$THREADS"} >"$BENCH_TMP/mhd_min.log" 2>&1 &
BENCH_PIDS+=("$!")
MHD_URL=http://127.0.0.1:$port
for ((i = 0; i < 40; i++)); do
    curl -fsS --max-time 2 -o /dev/null "$MHD_URL/healthz" 2>/dev/null && break
    sleep 0.25
done
curl -fsS --max-time 2 -o /dev/null "$MHD_URL/healthz" || hv_die "mhd_min did not answer"
echo "# server $URL (default --plan-cache-ms) and $URL0 (--plan-cache-ms 0), plan $PLAN (3 jobs), mhd_min $MHD_URL, wrk -t2 -c$CONNS -d${SECS}s, pgbench -S -M prepared -c $CONNS -j 2 -T $SECS (scale $SCALE), $ROUNDS rounds"

# wrk_rate OUT URL [HEADER]: requests/s of one wrk run; dies on errors or
# any non-2xx answer.
wrk_rate() {
    local out=$1 url=$2 hdr=(${3:+-H "$3"})
    wrk -t2 -c"$CONNS" -d"${SECS}s" "${hdr[@]}" "$url" >"$out" 2>&1 || { cat "$out"; hv_die "wrk failed"; }
    if grep -q 'Non-2xx\|Socket errors' "$out"; then
        cat "$out" >&2
        hv_die "wrk saw errors or non-2xx answers on $url"
    fi
    awk '/^Requests\/sec:/ {print $2}' "$out"
}

plans=() plans0=() pgbs=() stmts=() healths=() mins=()
echo
echo "| round | plan read/s | uncached read/s | pgbench -S tps | ratio | uncached ratio | its statement alone, tps | uncached / statement | /healthz req/s | mhd_min req/s | ratio |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for ((r = 1; r <= ROUNDS; r++)); do
    p=$(wrk_rate "$BENCH_TMP/wrk-plan-$r.txt" "$URL/api/v1/plans/$PLAN" "Authorization: Bearer $READ_TOKEN")
    p0=$(wrk_rate "$BENCH_TMP/wrk-plan0-$r.txt" "$URL0/api/v1/plans/$PLAN" "Authorization: Bearer $READ_TOKEN")
    pgbench -n -S -M prepared -c "$CONNS" -j 2 -T "$SECS" "$PGB_DB" >"$BENCH_TMP/pgbench-$r.txt" 2>&1 ||
        { hv_tail "$BENCH_TMP/pgbench-$r.txt"; hv_die "pgbench failed"; }
    g=$(awk '/^tps = / {print $3; exit}' "$BENCH_TMP/pgbench-$r.txt")
    pgbench -n -M prepared -f "$BENCH_TMP/plan-stmt.sql" -c "$CONNS" -j 2 -T "$SECS" "$DB" \
        >"$BENCH_TMP/pgbench-stmt-$r.txt" 2>&1 ||
        { hv_tail "$BENCH_TMP/pgbench-stmt-$r.txt"; hv_die "pgbench -f (the plan statement) failed"; }
    st=$(awk '/^tps = / {print $3; exit}' "$BENCH_TMP/pgbench-stmt-$r.txt")
    h=$(wrk_rate "$BENCH_TMP/wrk-health-$r.txt" "$URL/healthz")
    m=$(wrk_rate "$BENCH_TMP/wrk-min-$r.txt" "$MHD_URL/healthz")
    plans+=("$p") plans0+=("$p0") pgbs+=("$g") stmts+=("$st") healths+=("$h") mins+=("$m")
    printf '| %d | %.0f | %.0f | %.0f | %s | %s | %.0f | %s | %.0f | %.0f | %s |\n' "$r" "$p" "$p0" "$g" \
        "$(bench_ratio "$p" "$g" 2)" "$(bench_ratio "$p0" "$g" 2)" "$st" "$(bench_ratio "$p0" "$st" 2)" \
        "$h" "$m" "$(bench_ratio "$h" "$m" 2)"
done
P=$(bench_median "${plans[@]}") P0=$(bench_median "${plans0[@]}") G=$(bench_median "${pgbs[@]}")
F=$(bench_median "${stmts[@]}") H=$(bench_median "${healths[@]}") M=$(bench_median "${mins[@]}")
printf '| median | **%.0f** | **%.0f** | **%.0f** | **%s** | **%s** | **%.0f** | **%s** | **%.0f** | **%.0f** | **%s** |\n' \
    "$P" "$P0" "$G" "$(bench_ratio "$P" "$G" 2)" "$(bench_ratio "$P0" "$G" 2)" "$F" "$(bench_ratio "$P0" "$F" 2)" \
    "$H" "$M" "$(bench_ratio "$H" "$M" 2)"
# The kept answers served (a sanity check: the cached rows are hits).
curl -fsS -H "Authorization: Bearer $READ_TOKEN" "$URL/metrics" | grep '^hvbench_plan_cache_reads_total' |
    sed 's/^/# /'
echo
BENCH_COMMAND="${BENCH_QUICK:+BENCH_QUICK=$BENCH_QUICK }BENCH_ROUNDS=$ROUNDS BENCH_SECONDS=$SECS BENCH_CONNECTIONS=$CONNS BENCH_SCALE=$SCALE ${THREADS:+BENCH_THREADS=$THREADS }BENCH_PG_FAST=${BENCH_PG_FAST:-0} bench/reads.sh"
bench_result reads "GET /api/v1/plans/{id} (3 jobs, wrk -c$CONNS)" "$(printf %.0f "$P")" req/s \
    "pgbench -S -M prepared -c $CONNS" "$(printf %.0f "$G")" "$(bench_ratio "$P" "$G")" ">=0.5" "$ROUNDS" \
    "goal 0.8; same cluster; default --plan-cache-ms (answers kept up to 1 s)"
bench_result reads "GET /api/v1/plans/{id} uncached (--plan-cache-ms 0)" "$(printf %.0f "$P0")" req/s \
    "pgbench -S -M prepared -c $CONNS" "$(printf %.0f "$G")" "$(bench_ratio "$P0" "$G")" - "$ROUNDS" \
    "every read runs the statement; a second server on the same database"
bench_result reads "GET /api/v1/plans/{id} vs its statement alone" "$(printf %.0f "$P0")" req/s \
    "pgbench -f (the server's statement) -c $CONNS" "$(printf %.0f "$F")" "$(bench_ratio "$P0" "$F")" - "$ROUNDS" \
    "the server's overhead over its own SQL (--plan-cache-ms 0)"
bench_result reads "GET /healthz (wrk -c$CONNS)" "$(printf %.0f "$H")" req/s \
    "minimal libmicrohttpd responder" "$(printf %.0f "$M")" "$(bench_ratio "$H" "$M")" ">=0.9" "$ROUNDS"
echo "reproduce: make bench-progs && $BENCH_COMMAND"
