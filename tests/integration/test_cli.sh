#!/usr/bin/env bash
# The hvbench CLI against the real server, database and a worker: validate
# (locally and --remote), submit --idempotency-key, jobs, cancel, targets,
# catalog and help; their output, exit codes and error paths.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

[[ -x $CLI ]] || hv_die "$CLI not built"
export HVBENCH_SERVER=$URL HVBENCH_TOKEN=$SUBMIT_TOKEN
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }

# cli ARGS...: runs the CLI; sets OUT (stdout), ERR (stderr) and RC.
cli() {
    "$CLI" "$@" >"$HV_TMP/out" 2>"$HV_TMP/err" </dev/null
    RC=$?
    OUT=$(cat -- "$HV_TMP/out")
    ERR=$(cat -- "$HV_TMP/err")
}
# rows: the data rows of the table in OUT (after the header and the rule).
rows() { tail -n +3 <<<"$OUT" | grep -c .; }
# line KEY: the line of OUT starting with KEY.
line() { grep -E "^$1 " <<<"$OUT"; }
# assert_line WHAT REGEX: some line of OUT matches REGEX (grep -E).
assert_line() {
    grep -qE -- "$2" <<<"$OUT" && hv_check 1 "$1" && return 0
    hv_check 0 "$1" "no line matches /$2/ in:"$'\n'"$OUT"
}
EX=$HV_ROOT/examples

# --- help ---------------------------------------------------------------------
cli help
assert_eq "help exits 0" 0 "$RC"
for c in validate submit jobs cancel targets catalog; do
    assert_line "help lists $c" "^  $c "
done
cli help validate
assert_match "help validate shows --remote" '--remote' "$OUT"
cli submit --help
assert_match "submit --help shows --idempotency-key" '--idempotency-key KEY' "$OUT"

# --- validate, locally -------------------------------------------------------------
cli validate "$EX/quick.json"
assert_eq "validate quick.json exits 0" 0 "$RC"
assert_eq "quick: header" "plan quick: valid (checked locally)" "$(head -n 1 <<<"$OUT")"
assert_match "quick: configurations" '^configurations +1: default$' "$(line configurations)"
assert_match "quick: workloads" '^workloads +1: cpu$' "$(line workloads)"
assert_match "quick: targets" '^targets +1: demo-host \(host\)$' "$(line targets)"
assert_match "quick: 3 jobs" '^jobs +1 per round; 3 at 3 repetitions$' "$(line jobs)"
assert_match "quick: no groups" '^groups +none' "$(line groups)"
assert_eq "quick: nothing on stderr" "" "$ERR"

cli validate "$EX/cpu-pinning-ept.json"
assert_eq "validate cpu-pinning-ept.json exits 0" 0 "$RC"
assert_match "cpu-pinning-ept: configurations" \
    '^configurations +4: default; vcpu_pin=on; kvm_ept=off; kvm_ept=off,vcpu_pin=on$' \
    "$(line configurations)"
assert_match "cpu-pinning-ept: targets" '^targets +9: hv01 \(host\), vm1, vm2, .*, vm8$' \
    "$(line targets)"
assert_match "cpu-pinning-ept: repetitions" '^repetitions +3 to 10$' "$(line repetitions)"
assert_match "cpu-pinning-ept: 99 jobs, 330 at max" \
    '^jobs +33 per round; 99 at 3 repetitions, 330 at 10$' "$(line jobs)"
assert_match "cpu-pinning-ept: 12 groups" \
    '^groups +4 per round; 12 at 3 repetitions, 40 at 10$' "$(line groups)"

cli validate "$EX/disk-iozone.json"
assert_eq "validate disk-iozone.json exits 0" 0 "$RC"
assert_match "disk-iozone: configurations" \
    '^configurations +3: default; disk_cache=writeback; disk_cache=writethrough$' \
    "$(line configurations)"
assert_match "disk-iozone: template guests" '^targets +9: hv01 \(host\), io-p\{plan\}-1, .*, io-p\{plan\}-8$' \
    "$(line targets)"
assert_match "disk-iozone: 75 jobs" '^jobs +25 per round; 75 at 3 repetitions$' "$(line jobs)"
assert_match "disk-iozone: 9 groups" '^groups +3 per round; 9 at 3 repetitions$' "$(line groups)"

# Label guests are resolved by the server only: locally they are left out
# and a note says so.
jq '.targets.guests = {"label": "pool=cli"}' "$EX/quick.json" >"$HV_TMP/label.json"
cli validate "$HV_TMP/label.json"
assert_eq "a label plan validates locally" 0 "$RC"
assert_match "its label guests are not counted" '^targets +1: demo-host \(host\)$' \
    "$(line targets)"
assert_match "a note names the label" '^note: the guests of label pool=cli are not resolved locally' \
    "$ERR"

cli --json validate "$EX/cpu-pinning-ept.json"
assert_eq "validate --json exits 0" 0 "$RC"
assert_eq "validate --json: the server's dry-run counts" "4 1 9 99 12 330" \
    "$(jq -r '.counts | "\(.configurations) \(.workloads) \(.targets) \(.jobs) \(.groups) \(.jobs_at_max_repetitions)"' <<<"$OUT")"

# A broken plan: every error with its JSON path, exit 1, nothing sent.
jq '.workloads[0].kind = "gpu" | .repetitions.min = 0 | del(.name)' "$EX/quick.json" >"$HV_TMP/bad.json"
cli validate "$HV_TMP/bad.json"
assert_eq "a broken plan exits 1" 1 "$RC"
assert_match "its summary line" '^hvbench: Invalid plan: 3 errors in the plan$' "$(head -n 1 <<<"$ERR")"
assert_eq "every path listed" "/name /repetitions/min /workloads/0/kind" \
    "$(grep -oE '^  /[^:]*' <<<"$ERR" | tr -d ' ' | sort | paste -sd ' ')"
assert_match "with its message" '  /workloads/0/kind: must be one of' "$ERR"
assert_eq "nothing on stdout" "" "$OUT"
jq '.factors = {"warp": ["off", "on"]}' "$EX/quick.json" >"$HV_TMP/warp.json"
cli validate "$HV_TMP/warp.json"
assert_eq "an impossible plan exits 1" 1 "$RC"
assert_match "its path" '  /factors/warp: ' "$ERR"
cli --json validate "$HV_TMP/bad.json"
assert_eq "--json: the problem document on stdout" "invalid_plan 3" \
    "$(jq -r '"\(.code) \(.errors | length)"' <<<"$OUT")"
printf '{"name": "x",\n "name": "y"}' >"$HV_TMP/dup.json"
cli validate "$HV_TMP/dup.json"
assert_eq "duplicate keys exit 1" 1 "$RC"
assert_match "and name file:line:column" "dup.json:2:[0-9]+: duplicate" "$ERR"
cli validate "$HV_TMP/missing.json"
assert_eq "an unreadable file is a usage error" 2 "$RC"
cli validate
assert_eq "no file is a usage error" 2 "$RC"
assert_eq "validate sent nothing" 0 "$(sql 'SELECT count(*) FROM plans')"

# --- validate --remote -------------------------------------------------------------
cli validate --remote "$EX/quick.json"
assert_eq "validate --remote quick.json exits 0" 0 "$RC"
assert_eq "remote: header" "plan quick: valid (checked by the server)" "$(head -n 1 <<<"$OUT")"
assert_match "remote: 3 jobs" '^jobs +1 per round; 3 at 3 repetitions$' "$(line jobs)"
assert_match "remote: targets" '^targets +1: demo-host \(host\)$' "$(line targets)"
cli validate --remote "$HV_TMP/label.json"
assert_eq "remote: a label no target carries exits 1" 1 "$RC"
assert_match "remote: the label's path" '  /targets/guests/label: no registered guest' "$ERR"
assert_match "remote: the HTTP status" '\(HTTP 422\)' "$ERR"
# cli-g1 declares two site benchmarks, cli-g2 none.
SITE_BENCHES_cli_g1='{"name":"hepspec06","kind":"cpu","metric":"hs06.score","unit":"HS06","higher_is_better":true},{"name":"iolat","kind":"disk","metric":"iolat.p99","unit":"us","higher_is_better":false}'
for g in cli-g1 cli-g2; do
    SITE_BENCHES=
    [[ $g == cli-g1 ]] && SITE_BENCHES=$SITE_BENCHES_cli_g1
    api POST /api/v1/workers/register -H "Authorization: Bearer $WORKER_TOKEN" --data-binary \
        "{\"name\":\"$g\",\"kind\":\"guest\",\"facts\":{\"cpus\":1,\"benchmarks\":[$SITE_BENCHES]},\"labels\":{\"pool\":\"cli\",\"note\":\"\\u001b[31mred\"}}"
done
cli validate --remote "$HV_TMP/label.json"
assert_eq "remote: the label resolves" 0 "$RC"
assert_match "remote: label guests counted" '^targets +3: demo-host \(host\), cli-g1, cli-g2$' \
    "$(line targets)"
assert_match "remote: host baseline plus 2 guests" '^jobs +3 per round; 9 at 3 repetitions$' \
    "$(line jobs)"
HVBENCH_TOKEN='' cli validate --remote "$EX/quick.json"
assert_eq "remote without a token exits 1" 1 "$RC"
assert_match "and says how to pass one" 'hint: ' "$ERR"
cli --server "http://127.0.0.1:$(hv_free_port)" validate --remote "$EX/quick.json"
assert_eq "remote, server unreachable: exit 3" 3 "$RC"
assert_eq "validate --remote stored nothing" 0 "$(sql 'SELECT count(*) FROM plans')"

# --- submit --idempotency-key ------------------------------------------------------
jq '.name = "cli-idle" | .targets.host = "cli-idle"' "$EX/quick.json" >"$HV_TMP/idle.json"
cli submit --idempotency-key cli-run-1 "$HV_TMP/idle.json"
assert_eq "submit with a key exits 0" 0 "$RC"
assert_match "first submit: submitted" '^plan [0-9]+ submitted: 3 jobs \(queued\)$' \
    "$(head -n 1 <<<"$OUT")"
IDLE=$(head -n 1 <<<"$OUT" | awk '{print $2}')
cli submit --idempotency-key cli-run-1 "$HV_TMP/idle.json"
assert_eq "second submit exits 0" 0 "$RC"
assert_eq "second submit: already submitted, same id" \
    "plan $IDLE already submitted with this key" "$(head -n 1 <<<"$OUT")"
cli submit -q -k cli-run-1 "$HV_TMP/idle.json"
assert_eq "--quiet replay prints the same id" "$IDLE" "$OUT"
assert_eq "stored once" 1 "$(sql "SELECT count(*) FROM plans WHERE name = 'cli-idle'")"
jq '.description = "other"' "$HV_TMP/idle.json" >"$HV_TMP/idle2.json"
cli submit --idempotency-key cli-run-1 "$HV_TMP/idle2.json"
assert_eq "the key with another body exits 1" 1 "$RC"
assert_match "and names the conflict" 'Idempotency key used for another request.*HTTP 409' "$ERR"
cli submit --idempotency-key "$(printf 'k%.0s' {1..129})" "$HV_TMP/idle.json"
assert_eq "an over-long key is a usage error" 2 "$RC"
cli submit --idempotency-key "$(printf 'a\tb')" "$HV_TMP/idle.json"
assert_eq "a key with a control character is a usage error" 2 "$RC"

# --- jobs ------------------------------------------------------------------------
cli jobs "$IDLE"
assert_eq "jobs exits 0" 0 "$RC"
assert_match "jobs: header" '^ *id  configuration  workload  target +rep  group  role  status  attempt  error$' \
    "$(head -n 1 <<<"$OUT")"
assert_eq "jobs lists 3 jobs" 3 "$(rows)"
assert_match "a job row" '^ *[0-9]+  default +cpu +cli-idle +[1-3] +-  -  +queued +0$' \
    "$(sed -n 3p <<<"$OUT")"
cli jobs --limit 2 "$IDLE"
assert_eq "--limit 2: 2 rows" 2 "$(rows)"
assert_match "--limit 2: more are announced" 'more jobs: use --all' "$ERR"
cli jobs --limit 1 --all "$IDLE"
assert_eq "--all follows the cursor" 3 "$(rows)"
assert_eq "--all: nothing more to announce" "" "$ERR"
cli --json jobs --limit 1 --all "$IDLE"
assert_eq "--json --all: every item, no cursor" "3 null" \
    "$(jq -r '"\(.items | length) \(.next_cursor)"' <<<"$OUT")"
cli jobs --status=done "$IDLE"
assert_eq "--status done on a queued plan exits 0" 0 "$RC"
assert_eq "and says no jobs" "hvbench: no jobs" "$ERR"
cli jobs --status sleeping "$IDLE"
assert_eq "a bad --status is a usage error" 2 "$RC"
cli jobs --limit 0 "$IDLE"
assert_eq "a bad --limit is a usage error" 2 "$RC"
cli jobs 999999
assert_eq "jobs of an unknown plan exits 1" 1 "$RC"
assert_match "not found" 'Not found.*HTTP 404' "$ERR"

# --- global options after the command, list filters, the configuration file -------
cli jobs "$IDLE" --json --limit 1
assert_eq "--json after the command is taken as the global option" "1 0" \
    "$(jq -r '"\(.items | length) \(.items[0].attempt)"' <<<"$OUT")"
cli jobs "$IDLE" --server "http://127.0.0.1:$(hv_free_port)"
assert_eq "--server after the command is taken too: unreachable, exit 3" 3 "$RC"
cli jobs "$IDLE" --server
assert_eq "a global option without its value is a usage error" 2 "$RC"
assert_match "that says which" '--server needs a value' "$ERR"
cli list --name cli-idle
assert_eq "list --name: the one plan" "$IDLE cli-idle" "$(tail -n +3 <<<"$OUT" | awk '{print $1, $2}')"
cli list --json --status queued --target cli-idle --since 2000-01-01
assert_eq "list --status --target --since: the queued plan on that target" "$IDLE" \
    "$(jq -r '[.items[].id] | join(" ")' <<<"$OUT")"
cli list --status=done --target cli-idle
assert_eq "list --status done: none of that target's plans is done" 0 "$(rows)"
cli list --status sleeping
assert_eq "a status the server does not know: refused, exit 1" 1 "$RC"
assert_match "with the server's reason" 'status' "$ERR"
cli list --since 2026-02-31
assert_eq "a day that does not exist: refused, exit 1" 1 "$RC"
CFG=$HV_TMP/hvbench.config
printf '# written by the test\nserver = %s\ntoken = %s\n' "$URL" "$SUBMIT_TOKEN" >"$CFG"
chmod 600 "$CFG"
HVBENCH_SERVER='' HVBENCH_TOKEN='' HVBENCH_CONFIG=$CFG cli list --name cli-idle --json
assert_eq "server and token from the configuration file" "$IDLE" "$(jq -r '.items[0].id' <<<"$OUT")"
chmod 644 "$CFG"
HVBENCH_SERVER='' HVBENCH_TOKEN='' HVBENCH_CONFIG=$CFG cli list
assert_eq "a token in a file others may read: usage error" 2 "$RC"
assert_match "that says to chmod it" 'other users may read it: chmod 600' "$ERR"
printf 'sever = %s\n' "$URL" >"$CFG"
HVBENCH_SERVER='' HVBENCH_CONFIG=$CFG cli list
assert_eq "an unknown key: usage error" 2 "$RC"
assert_match "naming the file, line and key" "hvbench.config:1: unknown key 'sever'" "$ERR"
HVBENCH_CONFIG=$HV_TMP/absent.config cli list
assert_eq "a configuration file named but missing: usage error" 2 "$RC"
XDG_CONFIG_HOME=$HV_TMP/no-such-dir cli list --name cli-idle
assert_eq "no configuration file at the default place: the environment serves" 0 "$RC"

# --- cancel ------------------------------------------------------------------------
cli cancel "$IDLE"
assert_eq "cancel exits 0" 0 "$RC"
assert_eq "cancel prints the count" "plan $IDLE cancelled: 3 jobs cancelled" "$OUT"
cli status "$IDLE"
assert_line "status shows cancelled" '^status +cancelled$'
assert_line "status shows the owner, the token that submitted it" '^owner +test-submit$'
cli cancel "$IDLE"
assert_eq "cancelling again exits 0" 0 "$RC"
cli cancel 999999
assert_eq "cancel of an unknown plan exits 1" 1 "$RC"
assert_match "with the problem" 'Not found: no plan with this id \(HTTP 404\)' "$ERR"
cli cancel seven
assert_eq "cancel of a non-id is a usage error" 2 "$RC"
HVBENCH_TOKEN=$READ_TOKEN cli cancel "$IDLE"
assert_eq "cancel with a read token exits 1" 1 "$RC"
assert_match "forbidden" 'HTTP 403' "$ERR"

# --- a worker runs plans: targets, jobs of a done and a failed plan -----------------
jq '.name = "cli-done" | .targets.host = "cli-host" | .workloads[0].params.seconds = 1' \
    "$EX/quick.json" >"$HV_TMP/done.json"
cli submit -q "$HV_TMP/done.json"
DONE=$OUT
jq '.name = "cli-fail" | .targets.host = "cli-host" | .repetitions.min = 1
    | .workloads[0] = {"id": "sng", "kind": "cpu", "engine": "stress-ng", "params": {"seconds": 1}}' \
    "$EX/quick.json" >"$HV_TMP/fail.json"
cli submit -q "$HV_TMP/fail.json"
FAIL=$OUT
# The worker runs without a PATH, so it has no stress-ng to run: that plan
# fails with the reason.
printf '#!/bin/sh\nPATH=/nonexistent exec "%s" "$@"\n' "$WORKER" >"$HV_TMP/worker-nopath"
chmod +x "$HV_TMP/worker-nopath"
WORKER=$HV_TMP/worker-nopath hv_start_worker cli-host --kind host --poll 1
timeout 120 "$CLI" watch --interval 1 "$DONE" >/dev/null 2>&1
assert_eq "the worker finished the plan (watch exits 0)" 0 "$?"
timeout 60 "$CLI" watch --interval 1 "$FAIL" >/dev/null 2>&1
assert_eq "the stress-ng plan failed (watch exits 1)" 1 "$?"

# submit --wait: the plan's outcome is the exit code; a line per change
# into a file.
jq '.name = "cli-wait" | .repetitions.min = 1' "$HV_TMP/done.json" >"$HV_TMP/wait.json"
timeout 120 "$CLI" submit --wait "$HV_TMP/wait.json" >"$HV_TMP/wait.out" 2>&1
assert_eq "submit --wait of a plan that succeeds exits 0" 0 "$?"
assert_match "it says the plan was submitted, then follows it to done" \
    'plan [0-9]+ submitted: 1 job.*plan [0-9]+ cli-wait: done +1/1 done' "$(tr '\n' ' ' <"$HV_TMP/wait.out")"
jq '.name = "cli-wait-fail"' "$HV_TMP/fail.json" >"$HV_TMP/wait-fail.json"
timeout 60 "$CLI" submit --wait "$HV_TMP/wait-fail.json" >"$HV_TMP/wait.out" 2>&1
assert_eq "submit --wait of a plan that fails exits 1" 1 "$?"
assert_match "and says so" 'plan [0-9]+ failed: 1 of 1 jobs failed' "$(cat "$HV_TMP/wait.out")"
cli submit --wait --dry-run "$HV_TMP/wait.json"
assert_eq "--wait with --dry-run is a usage error" 2 "$RC"

cli cancel "$DONE"
assert_eq "cancelling a done plan exits 1" 1 "$RC"
assert_match "with the conflict" '^hvbench: Conflict: the plan already ended; nothing to cancel \(HTTP 409\)' "$ERR"
cli jobs --status=done "$DONE"
assert_eq "3 done jobs" 3 "$(rows)"
assert_match "on the worker's target, attempt 1" '^ *[0-9]+  default +cpu +cli-host +[1-3] +-  -  +done +1$' \
    "$(sed -n 3p <<<"$OUT")"
cli jobs "$FAIL"
assert_match "a failed job's error, cut to 40 characters" \
    '  failed +1  stress-ng is not installed on this work…$' "$(sed -n 3p <<<"$OUT")"

cli targets
assert_eq "targets exits 0" 0 "$RC"
assert_match "targets: header" '^ *id  name +kind +fingerprint +labels +site benchmarks +last seen$' "$(head -n 1 <<<"$OUT")"
assert_eq "three targets" 3 "$(rows)"
HOST_ROW=$(grep -E '^ *[0-9]+  cli-host ' <<<"$OUT")
assert_match "the worker's target, a host, seen in local time" \
    '^ *[0-9]+  cli-host +host +[0-9a-f]{8,} +- +- +[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$' "$HOST_ROW"
assert_match "a target's site benchmarks, and - for none" \
    '  cli-g1 +guest +- +.* +hepspec06,iolat +[0-9]{4}-.*
 *[0-9]+  cli-g2 +guest +- +.* +- +[0-9]{4}-' "$OUT"
assert_match "labels sorted, control characters scrubbed" \
    '  cli-g1 +guest .* note=\?\[31mred,pool=cli ' "$OUT"
assert_eq "no escape character reaches the terminal" 0 "$(grep -c $'\e' <<<"$OUT")"
cli targets --kind guest
assert_eq "--kind guest: the 2 guests" "cli-g1 cli-g2" "$(tail -n +3 <<<"$OUT" | awk '{print $2}' | paste -sd ' ')"
cli targets --label pool=cli --kind host
assert_eq "--label and --kind host: none" "hvbench: no targets" "$ERR"
cli targets --label $'note=\e[31mred'
assert_eq "a label value with odd characters is sent encoded" "cli-g1 cli-g2" \
    "$(tail -n +3 <<<"$OUT" | awk '{print $2}' | paste -sd ' ')"
cli targets --label pool
assert_eq "a label without = is a usage error" 2 "$RC"
cli targets --kind vm
assert_eq "a bad --kind is a usage error" 2 "$RC"
cli --json targets --kind host
assert_eq "--json targets" cli-host "$(jq -r '.items[0].name' <<<"$OUT")"

# --- catalog ---------------------------------------------------------------------
cli catalog factors
assert_eq "catalog factors exits 0" 0 "$RC"
assert_match "factors: header" '^factor +levels +disruption +scope +system default$' "$(head -n 1 <<<"$OUT")"
assert_line "factors: vcpu_pin" '^vcpu_pin +off, on +live +guest +off$'
assert_line "factors: a numeric range with its unit" '^halt_poll_ns +0\.\.10000000 ns +host +host +200000$'
cli catalog engines
assert_eq "catalog engines exits 0" 0 "$RC"
assert_line "engines: fio with defaults, sweepable and required marks" \
    '^disk +fio +rw!, bs\*=4k, size=1g, iodepth\*=1, '
assert_line "engines: cpu builtin" '^cpu +builtin +copies=1, seconds=10, pin=false$'
cli catalog
assert_match "catalog: both tables" 'vcpu_pin.*fio' "$(tr '\n' ' ' <<<"$OUT")"
cli --json catalog engines
assert_eq "--json catalog engines: only engines" "engines" "$(jq -r 'keys | join(",")' <<<"$OUT")"
cli catalog knobs
assert_eq "catalog knobs is a usage error" 2 "$RC"

hv_finish
