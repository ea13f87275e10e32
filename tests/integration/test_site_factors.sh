#!/usr/bin/env bash
# Site factors on a bare-metal host (no guest): the host worker's
# configuration declares a knob backed by a file, with the site's own
# programs to set it, read it and put it back (small sh scripts here, run
# by argv, never through a shell by the worker). The worker registers the
# factors (levels and class, never the argvs); a plan naming a site factor
# its host does not declare, or a level it does not list, is refused with
# 422 at /factors/site.NAME; a plan varying the knob runs each block at its
# level, each job's observed.settings holds the level read back, and the
# file is restored after the plan; a failing apply program fails its
# block's jobs with a reason naming the factor and the level.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }
SITE=$HV_TMP/site
mkdir -p "$SITE" "$HV_TMP/root"
echo a >"$SITE/knob"
echo on >"$SITE/other"
cat >"$SITE/set.sh" <<'EOF'
#!/bin/sh
printf '%s\n' "${1#--to=}" >"$2"
EOF
cat >"$SITE/get.sh" <<'EOF'
#!/bin/sh
cat "$1"
EOF
cat >"$SITE/fail.sh" <<'EOF'
#!/bin/sh
echo "cannot set $1: controller busy" >&2
exit 3
EOF
chmod 755 "$SITE"/*.sh
jq -n --arg d "$SITE" '{factors: {
    knob: {levels: ["a", "b", "c"], class: "host",
           apply: [($d + "/set.sh"), "--to={level}", ($d + "/knob")],
           read: [($d + "/get.sh"), ($d + "/knob")],
           revert: [($d + "/set.sh"), "--to={value}", ($d + "/knob")]},
    broken: {levels: ["on", "off"], class: "host", timeout: 10,
             apply: [($d + "/fail.sh"), "{level}"],
             read: [($d + "/get.sh"), ($d + "/other")],
             revert: [($d + "/set.sh"), "--to={value}", ($d + "/other")]}}}' >"$HV_TMP/worker.json"

plan() { # NAME FACTORS
    jq -c --arg n "$1" --argjson f "$2" '.name = $n | .targets.host = "sf-host"
        | .workloads[0].params.seconds = 1 | .repetitions = {min: 1} | .order = "sequential"
        | .factors = $f' "$HV_ROOT/examples/quick.json"
}

hv_start_worker sf-host --kind host --sysfs-root "$HV_TMP/root" --config "$HV_TMP/worker.json" \
    --poll 1 --wait 2
# shellcheck disable=SC2317 # called through wait_for
registered() { [[ $(sql "SELECT count(*) FROM targets WHERE name = 'sf-host'") == 1 ]]; }
wait_for "the host worker registers" 30 registered
TID=$(sql "SELECT id FROM targets WHERE name = 'sf-host'")
assert_status 200 GET "/api/v1/targets/$TID"
assert_eq "its facts list each site factor's levels and class" \
    "broken=on,off/host knob=a,b,c/host" \
    "$(json -r '[.facts.site_factors | to_entries[] | .key + "=" + (.value.levels | join(",")) + "/" + .value.class] | sort | join(" ")')"
assert_eq "never its programs" "class levels" \
    "$(json -r '.facts.site_factors.knob | keys | join(" ")')"

# --- refused at submission ---------------------------------------------------------
assert_status 422 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$(plan nope '{"site.nope": ["x", "y"]}')"
assert_eq "an undeclared site factor: 422 at its path" "/factors/site.nope" \
    "$(json -r '[.errors[].path] | join(" ")')"
assert_eq "saying what the host declares" \
    "host 'sf-host' declares no site factor 'nope' (its worker's configuration, \"factors\", declares: knob, broken)" \
    "$(json -r '.errors[0].message')"
assert_status 422 POST /api/v1/plans "${S[@]}" --data-binary "$(plan unlisted '{"site.knob": ["a", "z"]}')"
assert_eq "a level the host does not list: 422 at the factor" "/factors/site.knob" \
    "$(json -r '[.errors[].path] | join(" ")')"
assert_eq "naming the level and the levels allowed" \
    "host 'sf-host' does not allow level 'z' of site factor 'knob' (its levels: a, b, c)" \
    "$(json -r '.errors[0].message')"
assert_eq "nothing was stored" 0 "$(sql "SELECT count(*) FROM plans WHERE name IN ('nope', 'unlisted')")"
assert_status 400 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$(plan bad '{"site.Bad-Name": ["x"]}')"
assert_eq "a malformed site factor name: 400 at its path" "/factors/site.Bad-Name" \
    "$(json -r '[.errors[].path] | join(" ")')"
assert_status 200 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$(plan dry '{"site.knob": ["b", "c"]}')"
assert_eq "the dry run lists the site factor it will apply" '[{"factor":"site.knob","levels":["b","c"]}]' \
    "$(json -c '.actions.host.site_factors')"

# --- a plan varying the knob ----------------------------------------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan knob '{"site.knob": ["b", "c"]}')"
P=$(json .id)
# shellcheck disable=SC2317 # called through wait_for
restored() { [[ $(sql "SELECT status FROM plan_steps WHERE plan_id = $1 AND kind = 'restore'") =~ ^(done|failed)$ ]]; }
wait_for "the plan runs to its restore step" 120 restored "$P"
assert_eq "both jobs are done" "done done" \
    "$(sql "SELECT string_agg(status, ' ' ORDER BY block) FROM jobs WHERE plan_id = $P")"
assert_eq "each job's observed.settings holds its level as read back, at start and end" \
    "b:b:b:b c:c:c:c" \
    "$(sql "SELECT string_agg(c.levels->>'site.knob' || ':' || (r.observed->'settings'->'site.knob'->>'read_back') || ':' || (r.observed->'settings'->'site.knob'->>'start') || ':' || (r.observed->'settings'->'site.knob'->>'end'), ' ' ORDER BY j.block) FROM results r JOIN jobs j ON j.id = r.job_id AND j.attempt = r.attempt JOIN configurations c ON c.id = j.config_id WHERE j.plan_id = $P")"
assert_match "read from the read program's output" "get.sh" \
    "$(sql "SELECT r.observed->'settings'->'site.knob'->>'source' FROM results r JOIN jobs j ON j.id = r.job_id WHERE j.plan_id = $P LIMIT 1")"
assert_eq "the apply steps read each level back" "b c" \
    "$(sql "SELECT string_agg(settings->'site.knob'->>'read_back', ' ' ORDER BY block) FROM plan_steps WHERE plan_id = $P AND kind = 'apply'")"
assert_eq "the restore step is done" "done" "$(sql "SELECT status FROM plan_steps WHERE plan_id = $P AND kind = 'restore'")"
assert_eq "and the file holds what the plan found" a "$(cat "$SITE/knob")"
assert_status 200 GET "/api/v1/targets/$TID/changes"
assert_eq "the server's copy of the changes: each block's, marked restored by the restore step" \
    "site.knob:a>b:restored site.knob:b>c:restored" \
    "$(json -r '[.items | sort_by(.id)[] | select(.factor == "site.knob") | .object + ":" + .from + ">" + .to + ":" + (if .restored_at != null then "restored" else "not restored" end)] | join(" ")')"
assert_eq "the journal is empty" "" "$(ls "$HV_TMP/state/sf-host/journal" 2>/dev/null)"

# --- a failing apply program ------------------------------------------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan broken '{"site.broken": ["on", "off"]}')"
P=$(json .id)
wait_for "the failing plan runs to its restore step" 120 restored "$P"
assert_eq "the block the host is at already runs; the other's job fails" "on:done off:failed" \
    "$(sql "SELECT string_agg(c.levels->>'site.broken' || ':' || j.status, ' ' ORDER BY j.block) FROM jobs j JOIN configurations c ON c.id = j.config_id WHERE j.plan_id = $P")"
ERR=$(sql "SELECT j.error FROM jobs j JOIN configurations c ON c.id = j.config_id WHERE j.plan_id = $P AND c.levels->>'site.broken' = 'off'")
hv_log "the failed job's reason: $ERR"
assert_match "its reason names the factor, the level and the program's message" \
    "could not be applied on sf-host: site.broken=off: site.broken's apply program $SITE/fail.sh exited with status 3: cannot set off: controller busy" \
    "$ERR"
assert_eq "the restore step is done" "done" "$(sql "SELECT status FROM plan_steps WHERE plan_id = $P AND kind = 'restore'")"
assert_eq "and the other file is as it was" on "$(cat "$SITE/other")"

# --- a crash: hvbench-worker --restore puts the knob back from the journal ---------
# The worker killed while a block is applied; --restore, which reads no
# configuration, runs the journalled revert argv.
WPID=${HV_WORKER_PIDS[-1]}
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary \
    "$(plan crash '{"site.knob": ["c"]}' | jq -c '.workloads[0].params.seconds = 30')"
P=$(json .id)
# shellcheck disable=SC2317 # called through wait_for
applied() { [[ $(sql "SELECT count(*) FROM plan_steps WHERE plan_id = $1 AND kind = 'apply' AND status = 'done'") -ge 1 ]]; }
wait_for "the block is applied" 60 applied "$P"
kill -KILL "$WPID"
wait "$WPID" 2>/dev/null
assert_eq "the killed worker left the knob at the level" c "$(cat "$SITE/knob")"
"$WORKER" --restore --name sf-host --state-dir "$HV_TMP/state" --sysfs-root "$HV_TMP/root" \
    >"$HV_TMP/restore.log" 2>&1
assert_eq "--restore exits 0: nothing left" 0 "$?"
assert_eq "and the knob is back" a "$(cat "$SITE/knob")"
assert_match "saying what it put back" "site.knob c -> a" "$(cat "$HV_TMP/restore.log")"

hv_finish
