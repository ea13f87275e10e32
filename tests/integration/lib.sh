# shellcheck shell=bash
# Sourced by the integration tests. hv_setup gives a test its own PostgreSQL
# cluster, a migrated database, tokens of every role and a running server;
# hv_teardown (an EXIT trap) takes it all down again.
#
# Variables after hv_setup: URL, DB, HV_TMP, ADMIN_TOKEN, SUBMIT_TOKEN,
# WORKER_TOKEN, READ_TOKEN, and SERVER, WORKER, CLI (the binaries).
# After a request: STATUS, BODY, CONTENT_TYPE.
# With HV_CONTRACT_LOG set (tests/run.sh sets it), every answered request
# is appended to that file as one JSON line; test_contract checks them
# against api/openapi.yaml.
# Assertions print "ok - ..." or "FAIL - ..." and return 1 when they fail;
# tests run without set -e so that one failure does not hide the others.
# KEEP=1 keeps the temporary directory of a failed test.

HV_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$HV_ROOT/$BUILD ;; esac
SERVER=$BUILD/bin/hvbench-server
WORKER=$BUILD/bin/hvbench-worker
# shellcheck disable=SC2034 # for the tests
CLI=$BUILD/bin/hvbench
# Read-only: the teardown destroys the test's cluster through it, so a test
# that reused the name would leave its PostgreSQL running.
readonly PG=$HV_ROOT/deploy/pg.sh

HV_TEST=$(basename "$0" .sh)
HV_TMP=
HV_SERVER_PID=
HV_WORKER_PIDS=()
# Extra options for `hvbench-server serve`; a test sets it before hv_setup.
HV_SERVER_ARGS=("${HV_SERVER_ARGS[@]}")
# The server's --noise-default: keep, since the tests' workers share this
# machine with the server, its database and each other, so their jobs may
# run beside other work by design and the tests count jobs; empty: the
# server's own default (repeat). A test sets it before hv_setup.
HV_NOISE_DEFAULT=${HV_NOISE_DEFAULT-keep}
HV_ASSERTS=0
HV_FAILED=0
STATUS='' BODY='' CONTENT_TYPE=''

# Print a line to the test log, prefixed so it stands out from program output.
hv_log() { echo "# $*"; }

# Skip the test (exit 77) with a reason; tests/run.sh shows the last line.
hv_skip() {
    echo "SKIP: $*"
    exit 77
}

# Stop the test at once: a step without which the rest makes no sense failed.
hv_die() {
    echo "FATAL: $*"
    exit 1
}

# A tool the test needs is missing: skip the test, except on CI (CI=true),
# where that is a failure (tests/run.sh also turns a skip into a failure
# there, but this says why).
hv_missing_tool() {
    [[ ${CI:-} == true ]] && hv_die "$*"
    hv_skip "$*"
}

# hv_npm_install DIR: installs the npm packages of DIR (tests/contract,
# tests/browser) from its lock file when node_modules is missing or older
# than package-lock.json (npm writes node_modules/.package-lock.json at
# every install, so its age is that of the install). flock: two test runs
# must not install at once. A failed install is a missing tool.
hv_npm_install() {
    local dir=$1 name
    name=$(basename "$dir")
    mkdir -p "$HV_ROOT/tests/tmp"
    local stamp=$dir/node_modules/.package-lock.json log=$HV_ROOT/tests/tmp/npm-ci-$name.log
    if [[ -f $stamp && ! $dir/package-lock.json -nt $stamp ]]; then
        return 0
    fi
    hv_log "npm ci in tests/$name"
    if ! (cd "$dir" && flock 9 &&
        timeout 300 npm ci --no-audit --no-fund) 9>"$HV_ROOT/tests/tmp/npm-$name.lock" \
        >"$log" 2>&1; then
        cat "$log"
        hv_missing_tool "npm ci failed in tests/$name (no access to the npm registry?)"
    fi
}

# Last lines of a log file, indented, for failure reports.
hv_tail() {
    [[ -f $1 ]] || return 0
    echo "--- last lines of $1"
    tail -n "${2:-30}" -- "$1" | sed 's/^/  | /'
}

# Port on 127.0.0.1 that nothing listens on, from a random base. Uses bash's
# /dev/tcp: a refused connection means the port is free.
hv_free_port() {
    local port i lo=32768 _
    # Below the kernel's ephemeral range: a port picked there can be taken
    # by any outgoing connection's local end before the server binds it.
    read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || lo=32768
    ((lo > 12000)) || lo=32768
    for ((i = 0; i < 200; i++)); do
        port=$((10000 + (RANDOM + i) % (lo - 10000)))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return 0
        fi
    done
    return 1
}

# TERM a process, wait up to $2 seconds (default 10), then KILL it.
hv_stop_pid() {
    local pid=$1 wait=${2:-10} i
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < wait * 10; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    return 0
}

# Start the server on a free port; retried because another test may take
# the port between the probe and the bind. With HV_SERVER_PORT set, on that
# port (a restart at the URL its workers know).
hv_start_server() {
    local attempt i out
    for attempt in 1 2 3; do
        PORT=${HV_SERVER_PORT:-$(hv_free_port)} || hv_die "no free TCP port"
        URL=http://127.0.0.1:$PORT
        "$SERVER" serve --db "$DB" --listen "127.0.0.1:$PORT" --web-dir "$HV_ROOT/web" \
            ${HV_NOISE_DEFAULT:+--noise-default "$HV_NOISE_DEFAULT"} \
            "${HV_SERVER_ARGS[@]}" >>"$HV_TMP/server.log" 2>&1 &
        HV_SERVER_PID=$!
        for ((i = 0; i < 40; i++)); do
            if out=$(curl -fsS --max-time 2 -o "$HV_TMP/healthz" \
                -w '%{http_code} %{content_type}' "$URL/healthz" 2>/dev/null); then
                hv_contract_log GET /healthz "${out%% *}" "${out#* }" "$HV_TMP/healthz"
                rm -f -- "$HV_TMP/healthz"
                export URL PORT
                hv_log "server pid $HV_SERVER_PID at $URL"
                return 0
            fi
            kill -0 "$HV_SERVER_PID" 2>/dev/null || break
            sleep 0.5
        done
        hv_stop_pid "$HV_SERVER_PID" 2
        hv_log "server did not come up on port $PORT (attempt $attempt)"
    done
    hv_tail "$HV_TMP/server.log"
    hv_die "server did not answer /healthz within 20 s"
}

# Temp dir, private cluster, migrated database, tokens, running server.
hv_setup() {
    [[ -x $SERVER ]] || hv_skip "$SERVER not built"
    if ! command -v curl >/dev/null || ! command -v jq >/dev/null; then
        hv_skip "curl and jq needed (deploy/deps.sh)"
    fi
    mkdir -p "$HV_ROOT/tests/tmp"
    HV_TMP=$(mktemp -d "$HV_ROOT/tests/tmp/$HV_TEST.XXXX")
    # Readable so the postgres user can reach the cluster inside it.
    chmod 755 "$HV_TMP"
    trap hv_teardown EXIT
    trap 'exit 143' TERM
    trap 'exit 130' INT
    hv_log "temp dir $HV_TMP"

    HVBENCH_PG_FAST=1 "$PG" start "$HV_TMP/pg" >"$HV_TMP/pg.out" 2>&1 ||
        { cat "$HV_TMP/pg.out"; hv_die "could not start PostgreSQL"; }
    DB=$("$PG" conninfo "$HV_TMP/pg")
    export DB

    "$SERVER" migrate --db "$DB" >"$HV_TMP/migrate.log" 2>&1 ||
        { hv_tail "$HV_TMP/migrate.log"; hv_die "migrate failed"; }

    local role token
    for role in admin submit worker read; do
        token=$("$SERVER" token create --db "$DB" --role "$role" --name "test-$role") ||
            hv_die "token create --role $role failed"
        [[ -n $token ]] || hv_die "token create --role $role printed nothing"
        printf -v "${role^^}_TOKEN" '%s' "$token"
        export "${role^^}_TOKEN"
    done

    hv_start_server
}

# Start a worker in the background: hv_start_worker NAME [args...]. Its
# state (credential, results not yet delivered) lives in $HV_TMP/state.
hv_start_worker() {
    local name=$1
    shift
    "$WORKER" --server "$URL" --token "$WORKER_TOKEN" --name "$name" \
        --state-dir "$HV_TMP/state" "$@" \
        >>"$HV_TMP/worker-$name.log" 2>&1 &
    HV_WORKER_PIDS+=($!)
    hv_log "worker $name pid $!"
}

# Start tests/tools/hookrecv in the background: hv_start_hookrecv LOG
# [hookrecv args]. It logs each request to LOG and checks signatures
# with the secret in $HV_TMP/secret; sets RECV_PID and RECV_PORT.
hv_start_hookrecv() {
    local log=$1 recv=$BUILD/tools/hookrecv i
    shift
    [[ -x $recv ]] || hv_die "$recv not built (make test-tools)"
    rm -f -- "$HV_TMP/recv.port"
    "$recv" --port-file "$HV_TMP/recv.port" --log "$log" --secret-file "$HV_TMP/secret" "$@" \
        >>"$HV_TMP/recv.out" 2>&1 &
    RECV_PID=$!
    HV_WORKER_PIDS+=("$RECV_PID")
    for ((i = 0; i < 50; i++)); do
        [[ -s $HV_TMP/recv.port ]] && break
        sleep 0.1
    done
    RECV_PORT=$(cat "$HV_TMP/recv.port") || hv_die "hookrecv did not start: $(cat "$HV_TMP/recv.out")"
}

# Register target NAME of KIND (default host) with the worker token, as a
# worker process would, and set W to the curl arguments that carry the
# worker credential the server issued (hvw_...) and TARGET to its id:
#   hv_register hv01 [host|guest] [facts JSON]
hv_register() {
    local name=$1 kind=${2:-host} facts=${3:-'{}'}
    api POST /api/v1/workers/register -H "Authorization: Bearer $WORKER_TOKEN" --data-binary \
        "{\"name\":\"$name\",\"kind\":\"$kind\",\"facts\":$facts}"
    [[ $STATUS == 200 ]] || hv_die "registering $name: $STATUS $BODY"
    TARGET=$(json .target_id)
    W=(-H "Authorization: Bearer $(json .worker_token)")
}

# Submit a plan NAME of 4 one-second builtin cpu workloads, each repeated
# REPS times on the host target TARGET, and set PLAN to its id (the load
# tests' queue: 4 x REPS jobs that bench/hvload answers at once):
#   hv_submit_cpu_plan NAME TARGET REPS
hv_submit_cpu_plan() {
    jq -n --arg name "$1" --arg target "$2" --argjson reps "$3" '{name: $name,
        targets: {host: $target}, repetitions: {min: $reps},
        workloads: [range(4) | {id: "cpu-\(.)", kind: "cpu", engine: "builtin",
                                params: {copies: 1, seconds: 1}}]}' >"$HV_TMP/plan.json"
    assert_status 201 POST /api/v1/plans -H "Authorization: Bearer $SUBMIT_TOKEN" \
        --data-binary @"$HV_TMP/plan.json"
    # shellcheck disable=SC2034 # for the caller
    PLAN=$(json .id)
    assert_eq "the plan holds $((4 * $3)) jobs" "$((4 * $3))" "$(json .jobs.total)"
}

# A fake guest worker: claims with the credential header in
# $HV_TMP/guest-auth (read again each time, so a test can switch it) and
# answers each job at once with cpu.score 100; stops once $HV_TMP/ended
# exists. Run it in the background: hv_fake_guest >LOG 2>&1 &
hv_fake_guest() {
    local out=$HV_TMP/claim-guest id att auth
    while [[ ! -e $HV_TMP/ended ]]; do
        auth=$(cat "$HV_TMP/guest-auth")
        curl -s --max-time 10 -o "$out" -H "$auth" -H 'Content-Type: application/json' \
            --data-binary '{"wait":1}' "$URL/api/v1/jobs/claim" || continue
        if [[ ! -s $out ]] || ! jq -e .job >/dev/null "$out"; then
            sleep 0.5
            continue
        fi
        id=$(jq -r .job.id "$out") att=$(jq -r .job.attempt "$out")
        curl -s --max-time 10 -o /dev/null -H "$auth" -H 'Content-Type: application/json' \
            --data-binary "{\"attempt\":$att,\"status\":\"ok\",\"metrics\":[{\"name\":\"cpu.score\",\"value\":100,\"unit\":\"score\"}]}" \
            "$URL/api/v1/jobs/$id/result"
    done
}

# EXIT trap: stop workers, server and cluster; keep the temp dir only when
# the test failed and KEEP=1.
hv_teardown() {
    local rc=$? pid
    trap - EXIT TERM INT
    for pid in "${HV_WORKER_PIDS[@]}"; do hv_stop_pid "$pid" 10; done
    [[ -n $HV_SERVER_PID ]] && hv_stop_pid "$HV_SERVER_PID" 10
    [[ -n $HV_TMP ]] || exit "$rc"
    # Under `make SANITIZE=...` a memory error or leak in a server or worker
    # fails the test even when every answer looked right.
    if grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' \
        "$HV_TMP"/server.log "$HV_TMP"/worker-*.log 2>/dev/null; then
        echo "FAIL - a sanitizer reported an error (log above)"
        rc=1
    fi
    if [[ $rc -ne 0 && $rc -ne 77 ]]; then
        local f
        for f in "$HV_TMP"/server.log "$HV_TMP"/worker-*.log; do hv_tail "$f"; done
    fi
    local keep=0
    [[ $rc -ne 0 && $rc -ne 77 && ${KEEP:-0} == 1 ]] && keep=1
    hv_drop_work "$HV_TMP" "$keep"
    exit "$rc"
}

# hv_drop_work DIR KEEP: with KEEP 1 stops the cluster in DIR/pg and keeps
# DIR, saying how to start the cluster again; otherwise destroys the
# cluster and removes DIR (the tests' and the benchmarks' teardown).
hv_drop_work() {
    if [[ $2 == 1 ]]; then
        "$PG" stop "$1/pg" >/dev/null 2>&1
        hv_log "kept $1 (start its cluster with: deploy/pg.sh start $1/pg)"
    else
        "$PG" destroy "$1/pg" >/dev/null 2>&1
        rm -rf -- "$1"
    fi
}

# Record one assertion: hv_check OK WHAT [explanation if failed].
hv_check() {
    HV_ASSERTS=$((HV_ASSERTS + 1))
    if [[ $1 -eq 1 ]]; then
        echo "ok - $2"
        return 0
    fi
    HV_FAILED=$((HV_FAILED + 1))
    echo "FAIL - $2: $3"
    return 1
}

# assert_near WHAT EXPECTED ACTUAL: numbers equal to 9 significant digits.
assert_near() {
    local ok
    ok=$(jq -n --argjson e "$2" --argjson a "${3:-null}" \
        '$a != null and (($a - $e) | fabs) <= 1e-9 * ([($e | fabs), 1] | max)')
    [[ $ok == true ]] && hv_check 1 "$1" && return 0
    hv_check 0 "$1" "expected $2, got '${3}'"
}

# hv_cli ARGS...: runs the CLI ($CLI), sets RC, OUT (its stdout) and ERR
# (its stderr).
# shellcheck disable=SC2034 # the tests read them
hv_cli() {
    OUT=$("$CLI" "$@" 2>"$HV_TMP/stderr")
    RC=$?
    ERR=$(cat "$HV_TMP/stderr")
}

# assert_eq WHAT EXPECTED ACTUAL
assert_eq() {
    [[ $3 == "$2" ]] && hv_check 1 "$1" && return 0
    hv_check 0 "$1" "expected '$2', got '$3'"
}

# assert_match WHAT REGEX ACTUAL (bash extended regex)
assert_match() {
    [[ $3 =~ $2 ]] && hv_check 1 "$1" && return 0
    hv_check 0 "$1" "'$3' does not match /$2/"
}

# hv_contract_log METHOD PATH STATUS CONTENT_TYPE BODY_FILE: with
# HV_CONTRACT_LOG set, appends the exchange to it as one JSON line
#   {"method","path","query","status","content_type","body"}
# (path without the query string; body parsed, or null when empty or not
# JSON). A request that got no answer (status 000) is no exchange.
hv_contract_log() {
    [[ -n ${HV_CONTRACT_LOG:-} && $3 =~ ^[1-9][0-9][0-9]$ ]] || return 0
    local query='' body=$5
    [[ $2 == *\?* ]] && query=${2#*\?}
    [[ -f $body ]] || body=/dev/null
    jq -cn --arg method "$1" --arg path "${2%%\?*}" --arg query "$query" \
        --argjson status "$3" --arg content_type "$4" --rawfile body "$body" \
        '{method: $method, path: $path, query: $query, status: $status,
          content_type: $content_type, body: ($body | try fromjson catch null)}' \
        >>"$HV_CONTRACT_LOG" || echo "# could not log $1 $2 to $HV_CONTRACT_LOG"
}

# api METHOD PATH [curl args]: one request to the server, no assertion.
# Sets STATUS (000 when no answer), BODY and CONTENT_TYPE.
api() {
    local method=$1 path=$2 out
    shift 2
    out=$(curl -s --max-time 30 -X "$method" -o "$HV_TMP/body" \
        -w '%{http_code} %{content_type}' "$@" "$URL$path") || true
    STATUS=${out%% *}
    # shellcheck disable=SC2034 # for the tests
    CONTENT_TYPE=${out#* }
    BODY=$(cat -- "$HV_TMP/body" 2>/dev/null || true)
    hv_contract_log "$method" "$path" "$STATUS" "$CONTENT_TYPE" "$HV_TMP/body"
    rm -f -- "$HV_TMP/body"
}

# assert_status EXPECTED METHOD PATH [curl args]: request and check the code.
assert_status() {
    local expected=$1
    api "$2" "$3" "${@:4}"
    [[ $STATUS == "$expected" ]] && hv_check 1 "$2 $3 -> $expected" && return 0
    hv_check 0 "$2 $3" "expected HTTP $expected, got $STATUS; body: ${BODY:0:500}"
}

# json FILTER [jq args]: jq -r on the last response body.
json() {
    jq -r "$@" <<<"$BODY"
}

# wait_for DESC TIMEOUT CMD...: run CMD once a second until it succeeds;
# counts as one assertion.
wait_for() {
    local desc=$1 timeout=$2 deadline
    shift 2
    deadline=$((SECONDS + timeout))
    while ((SECONDS < deadline)); do
        if "$@"; then
            hv_check 1 "$desc"
            return 0
        fi
        sleep 1
    done
    hv_check 0 "$desc" "timed out after ${timeout}s"
}

# End of a test: exit 0 when every assertion held.
hv_finish() {
    echo "$HV_ASSERTS assertions, $HV_FAILED failed"
    [[ $HV_ASSERTS -gt 0 && $HV_FAILED -eq 0 ]] && exit 0
    exit 1
}
