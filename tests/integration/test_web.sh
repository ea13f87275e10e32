#!/usr/bin/env bash
# The web page in a real headless Chromium: a quick plan is run to the end by
# a real worker, then tests/browser/web.test.js (playwright-core driving
# Debian's /usr/bin/chromium) checks the plan list, the plan page and its
# report against the REST API and the CLI, an unknown plan, and the token
# form of a second server started with --read-auth token.
# Needs node, npm and chromium (deploy/deps.sh; node comes with the machine).
set -uo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

BROWSER_DIR=$HV_ROOT/tests/browser
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

# Skipping is only allowed off CI: with CI=true a missing tool is a failure
# (tests/run.sh also turns a skip into a failure there, but say why).
missing_tool() {
    [[ ${CI:-} == true ]] && hv_die "$*"
    hv_skip "$*"
}

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    missing_tool "node and npm needed for the browser test"
fi
[[ -x $CHROMIUM ]] || missing_tool "$CHROMIUM missing: run deploy/deps.sh (package chromium)"

# npm packages: installed from the lock file when node_modules is missing or
# older than package-lock.json (npm writes node_modules/.package-lock.json at
# every install, so its age is that of the install). flock: two test runs
# must not install at once.
install_npm_packages() {
    local stamp=$BROWSER_DIR/node_modules/.package-lock.json
    if [[ -f $stamp && ! $BROWSER_DIR/package-lock.json -nt $stamp ]]; then
        return 0
    fi
    hv_log "npm ci in tests/browser"
    if ! (cd "$BROWSER_DIR" && flock 9 &&
        timeout 300 npm ci --no-audit --no-fund) 9>"$HV_ROOT/tests/tmp/npm-browser.lock" \
        >"$HV_ROOT/tests/tmp/npm-ci.log" 2>&1; then
        cat "$HV_ROOT/tests/tmp/npm-ci.log"
        missing_tool "npm ci failed in tests/browser (no access to the npm registry?)"
    fi
}
mkdir -p "$HV_ROOT/tests/tmp"
install_npm_packages

hv_setup

# The quick example, pinned to our worker and shortened to 1 s per job.
plan=$(jq '.targets.host = "web-host" | .workloads[0].params.seconds = 1' \
    "$HV_ROOT/examples/quick.json") || hv_die "cannot read examples/quick.json"
assert_status 201 POST /api/v1/plans -H "Authorization: Bearer $SUBMIT_TOKEN" \
    -H 'Content-Type: application/json' --data-binary "$plan"
ID=$(json .id)
assert_match "plan id" '^[0-9]+$' "$ID" || hv_finish

hv_start_worker web-host

# shellcheck disable=SC2317 # called through wait_for
plan_ended() {
    api GET "/api/v1/plans/$ID"
    [[ $(json .status) =~ ^(done|failed|cancelled)$ ]]
}
wait_for "plan $ID ends" 120 plan_ended
assert_eq "plan $ID .status" "done" "$(json .status)" || hv_finish

# The mean as the CLI prints it: the page must format numbers the same way.
# Columns: configuration workload target metric arrow n mean ...
report=$(HVBENCH_SERVER=$URL HVBENCH_TOKEN=$READ_TOKEN "$CLI" report "$ID")
assert_eq "hvbench report exits 0" 0 "$?"
cli_mean=$(awk '$4 == "cpu.score" { print $7; exit }' <<<"$report")
assert_match "hvbench report has a cpu.score mean" '.' "$cli_mean" || echo "$report"

# A second server on the same database whose GETs need a token, for the
# token form. Started like lib.sh starts the first; stopped on exit by
# adding it to the pids hv_teardown stops.
AUTH_PORT=$(hv_free_port) || hv_die "no free TCP port"
AUTH_URL=http://127.0.0.1:$AUTH_PORT
"$SERVER" serve --db "$DB" --listen "127.0.0.1:$AUTH_PORT" --web-dir "$HV_ROOT/web" \
    --read-auth token >>"$HV_TMP/server-auth.log" 2>&1 &
HV_WORKER_PIDS+=($!)
# shellcheck disable=SC2317 # called through wait_for
auth_server_up() { curl -fsS --max-time 2 -o /dev/null "$AUTH_URL/healthz" 2>/dev/null; }
wait_for "second server (--read-auth token) at $AUTH_URL" 20 auth_server_up ||
    hv_tail "$HV_TMP/server-auth.log"
assert_eq "second server: GET /api/v1/plans without a token -> 401" 401 \
    "$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' "$AUTH_URL/api/v1/plans")"

# The browser test. TMPDIR: Playwright makes Chromium's fresh profile there,
# so a Chromium left behind is recognisable by it, and Chromium puts its
# profile lock socket (SingletonSocket) there. A unix socket path holds at
# most 107 bytes, and a checkout can sit at any depth, so this is a short
# private directory of its own under /tmp, not one under $HV_TMP; removed
# on exit before lib.sh's teardown. timeout: node must not hang the test
# run even if its own watchdog fails.
shot=$HV_TMP/web-plan.png
profile_dir=$(mktemp -d /tmp/hvweb.XXXXXX) || hv_die "cannot make a directory under /tmp"
web_teardown() {
    local rc=$?
    rm -rf -- "$profile_dir"
    (exit "$rc")
    hv_teardown
}
trap web_teardown EXIT
hv_log "browser test: node --test web.test.js"
(cd "$BROWSER_DIR" && URL=$URL PLAN_ID=$ID SHOT=$shot CLI_MEAN=$cli_mean \
    AUTH_URL=$AUTH_URL READ_TOKEN=$READ_TOKEN CHROMIUM=$CHROMIUM TMPDIR=$profile_dir \
    timeout -k 10 200 node --test --test-reporter=spec web.test.js)
assert_eq "browser test (node --test web.test.js) exits 0" 0 "$?"

# A Chromium still running with a profile under our temp dir was left
# behind by a killed node: end it (by pid) and count it as a failure.
leftover=$(pgrep -f -- "--user-data-dir=$profile_dir/" || true)
if [[ -n $leftover ]]; then
    # shellcheck disable=SC2086 # one pid per word
    kill -KILL $leftover 2>/dev/null
fi
assert_eq "no Chromium left running" "" "$leftover"

# Keep the picture for a person to look at, even when the test fails.
if [[ -f $shot ]]; then
    mkdir -p "$BUILD/test-logs"
    cp -- "$shot" "$BUILD/test-logs/web-plan.png"
    hv_log "screenshot: $BUILD/test-logs/web-plan.png"
fi
assert_eq "screenshot of the plan page taken" yes "$([[ -s $shot ]] && echo yes || echo no)"

hv_finish
