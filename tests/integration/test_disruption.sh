#!/usr/bin/env bash
# What a plan's tuning disrupts is said at submission, not at its first
# apply step. Restart-class factors on domains the plan did not create,
# without allow_restart: the 201 answer and the dry run carry the same
# warning, naming the domains, the configurations and the blocks; when
# the host's last facts show such a domain running, the plan is refused
# (422, naming it); with allow_restart it is accepted without the
# warning. A disk-tuning factor whose tuning.disk holds / or the host
# worker's state folder (the host's storage facts) is warned of, and so
# is one holding the data directory of a PostgreSQL server running on the
# host; a real host worker reports its block devices and mounts under its
# --sysfs-root, and, on this machine, the test's own cluster.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }

plan() { # NAME HOST FACTORS
    jq -c --arg n "$1" --arg h "$2" --argjson f "$3" '.name = $n | .targets.host = $h
        | .workloads[0].params.seconds = 1 | .repetitions = {min: 2} | .factors = $f' \
        "$HV_ROOT/examples/quick.json"
}
facts() { # VM0-STATE
    jq -nc --arg s "$1" '{cpus: 2, libvirt: {uri: "test:///default", domains: [
        {name: "vm0", uuid: "6695eb01-f6a4-8304-79aa-97f2502e193f", state: $s},
        {name: "vm1", uuid: "7795eb01-f6a4-8304-79aa-97f2502e193f", state: "shut off"},
        {name: "other", uuid: "8895eb01-f6a4-8304-79aa-97f2502e193f", state: "running"}]},
        storage: {block_devices: [
            {name: "vda", dev: "254:0", size_bytes: 274877906944, rotational: false,
             partitions: ["vda1"], holders: [], mounts: ["/", "/boot"]},
            {name: "vdb", dev: "254:16", size_bytes: 1073741824, rotational: true,
             partitions: [], holders: [], mounts: []}],
            state_dir: {path: "/var/lib/hvbench-worker", mount: "/", device: "vda"}}}'
}

# --- restart-class factors without allow_restart ---------------------------------
hv_register dr-host host "$(facts 'shut off')"
RESTART=$(plan restart dr-host '{"disk_cache": ["none", "writeback"]}' |
    jq -c '.targets.guests = {domains: ["vm0", "vm1"]} | .concurrency = "all-guests"')
assert_status 200 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$RESTART"
DRY=$(json -r '.actions.warnings[0]')
hv_log "dry-run warning: $DRY"
assert_eq "one warning in the dry run" 1 "$(json '.actions.warnings | length')"
assert_match "naming the domains and the factor" \
    "^restart-class factors restart the existing domains vm0, vm1 \(disk_cache; not created by the plan\), which needs allow_restart: true" "$DRY"
assert_match "and the blocks that fail: both configurations, 2 repetitions each" \
    "blocks at risk: configurations default, disk_cache=writeback \(4 blocks\)\. Set allow_restart: true, or stop those domains" "$DRY"
assert_match "saying the host baseline fails with them" "every job of the block, host baseline included" "$DRY"
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$RESTART"
assert_eq "the 201 answer warns at /allow_restart with the dry run's very text" "/allow_restart|$DRY" \
    "$(json -r '.warnings[] | select(.path == "/allow_restart") | .path + "|" + .message')"
assert_eq "and nothing else (its targets: vm0 and vm1 never registered)" \
    "/allow_restart /targets/guests/domains/0 /targets/guests/domains/1" \
    "$(json -r '[.warnings[].path] | sort | join(" ")')"

# --- a running domain the plan would restart: refused ------------------------------
hv_register dr-run host "$(facts running)"
RUN=$(jq -c '.name = "refused" | .targets.host = "dr-run"' <<<"$RESTART")
assert_status 422 POST /api/v1/plans "${S[@]}" --data-binary "$RUN"
assert_match "a problem+json answer" 'application/problem\+json' "$CONTENT_TYPE"
assert_eq "its detail names the domain and what to do" \
    "restart-class factors would restart running domain vm0 on host dr-run, which the plan did not create: set allow_restart: true in the plan, or stop it first" \
    "$(json -r '.detail')"
assert_eq "one error, at the domain" "/targets/guests/domains/0" "$(json -r '[.errors[].path] | join(" ")')"
assert_match "saying its state, per the host's facts" "^domain vm0 is running on host dr-run \(its worker's last facts\)" \
    "$(json -r '.errors[0].message')"
assert_eq "nothing was stored" 0 "$(sql "SELECT count(*) FROM plans WHERE name = 'refused'")"
assert_status 422 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$RUN"
assert_eq "the dry run is refused the same way" "/targets/guests/domains/0" "$(json -r '[.errors[].path] | join(" ")')"
# A domain running that the plan does not use is none of its business.
assert_status 200 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$(jq -c '.targets.guests.domains = ["vm1"]' <<<"$RUN")"
assert_match "vm1 alone, shut off: warned, not refused" "existing domains vm1 \(" "$(json -r '.actions.warnings[0]')"

# --- with allow_restart: accepted though vm0 runs -----------------------------------------------------------
ALLOWED=$(jq -c '.name = "allowed" | .allow_restart = true' <<<"$RUN")
assert_status 200 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$ALLOWED"
assert_eq "with allow_restart: true, no warning in the dry run" 0 "$(json '.actions.warnings | length')"
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$ALLOWED"
assert_eq "and none about restarts in the 201 answer" 0 \
    "$(json '[.warnings // [] | .[] | select(.path == "/allow_restart")] | length')"

# --- the tuned disk holds / and the worker's state ---------------------------------
# disk_warned PLAN DESC TEXT: the dry run of PLAN warns TEXT at /tuning/disk
# first, and its 201 answer says the same there.
disk_warned() {
    assert_status 200 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$1"
    hv_log "disk warning: $(json -r '.actions.warnings[0]')"
    assert_eq "$2" "$3" "$(json -r '.actions.warnings[0]')"
    assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$1"
    assert_eq "the 201 answer says the same at /tuning/disk" "/tuning/disk|$3" \
        "$(json -r '.warnings[] | select(.path == "/tuning/disk") | .path + "|" + .message')"
}
DISK=$(plan disk dr-host '{"readahead_kb": [128, 4096]}' | jq -c '.tuning = {disk: "/dev/vda1"}')
disk_warned "$DISK" "a partition of vda stands for it: the dry run warns it holds / and the state folder" \
    "tuning.disk /dev/vda1 (disk vda of host dr-host) holds / (the host's root file system) and the host worker's state folder /var/lib/hvbench-worker (on /): the levels of readahead_kb apply to the host's own files too, so its operating system and worker share every level measured, and the guests' I/O shares the disk with them"
assert_status 200 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$(jq -c '.tuning.disk = "vdb"' <<<"$DISK")"
assert_eq "a disk holding nothing of the host's: no warning" 0 "$(json '.actions.warnings | length')"

# --- the tuned disk holds a PostgreSQL data directory -----------------------------
PG_FACTS=$(facts 'shut off' | jq -c '.storage.block_devices[1].mounts = ["/srv"]
    | .storage.databases = [
        {path: "/srv/pg/15/main", mount: "/srv", device: "vdb"},
        {path: "/var/lib/postgresql/15/main", mount: "/", device: "vda"}]')
hv_register dr-pg host "$PG_FACTS"
PGDISK=$(plan pgdisk dr-pg '{"io_scheduler": ["none", "mq-deadline"]}' | jq -c '.tuning = {disk: "vdb"}')
disk_warned "$PGDISK" "a disk holding a data directory alone: the dry run names it and what the levels do to its server" \
    "tuning.disk vdb (disk vdb of host dr-pg) holds the PostgreSQL data directory /srv/pg/15/main (on /srv): the levels of io_scheduler apply to the database's files too, so the PostgreSQL server of that data directory (hvbench's own database, perhaps) runs at every level measured: its service is disturbed and its I/O is in the results"
assert_status 200 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$(jq -c '.tuning.disk = "/dev/vda1"' <<<"$PGDISK")"
assert_match "the root disk: /, the state folder and the other data directory, all named" \
    "holds / \(the host's root file system\), the host worker's state folder /var/lib/hvbench-worker \(on /\) and the PostgreSQL data directory /var/lib/postgresql/15/main \(on /\): .* the guests' I/O shares the disk with them; the PostgreSQL server of that data directory \(hvbench's own database, perhaps\) runs at every level measured" \
    "$(json -r '.actions.warnings[0]')"

# --- a real host worker reports its storage ---------------------------------------
# Its --sysfs-root holds a disk hvb0 (254:7) and a mountinfo mounting / from
# it: the worker's facts list it, and a plan tuning it is warned of.
ROOT=$HV_TMP/root
mkdir -p "$ROOT/sys/block/hvb0/queue" "$ROOT/proc/self"
echo 254:7 >"$ROOT/sys/block/hvb0/dev"
echo 2097152 >"$ROOT/sys/block/hvb0/size"
echo 0 >"$ROOT/sys/block/hvb0/queue/rotational"
echo 128 >"$ROOT/sys/block/hvb0/queue/read_ahead_kb"
printf '26 1 254:7 / / rw,relatime - ext4 /dev/hvb0 rw\n27 26 0:20 / /proc rw - proc proc rw\n' \
    >"$ROOT/proc/self/mountinfo"
hv_start_worker st-host --kind host --sysfs-root "$ROOT" --poll 1 --wait 2
# shellcheck disable=SC2317 # called through wait_for
registered() { [[ $(sql "SELECT count(*) FROM targets WHERE name = 'st-host'") == 1 ]]; }
wait_for "the host worker registers" 30 registered
assert_status 200 GET "/api/v1/targets/$(sql "SELECT id FROM targets WHERE name = 'st-host'")"
assert_eq "its facts list the disk, its size, rotational and its mounts" "hvb0 1073741824 false /" \
    "$(json -r '.facts.storage.block_devices[] | [.name, .size_bytes, .rotational, (.mounts | join(","))] | map(tostring) | join(" ")')"
assert_eq "and its state folder's mount and disk" "/ hvb0" \
    "$(json -r '.facts.storage.state_dir | [.mount, .device] | join(" ")')"
assert_status 200 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary \
    "$(plan st st-host '{"readahead_kb": [128, 4096]}' | jq -c '.tuning = {disk: "hvb0"}')"
assert_match "a plan tuning it is warned of" "^tuning.disk hvb0 \(disk hvb0 of host st-host\) holds / \(the host's root file system\) and the host worker's state folder " \
    "$(json -r '.actions.warnings[0]')"

# --- a real host worker lists this machine's PostgreSQL servers --------------------
# The test's own cluster runs here, as the worker's user (or the postgres
# user, the worker being root): its data directory is among them.
hv_start_worker pg-host --kind host --state-dir "$HV_TMP/state-pg" --poll 1 --wait 2
# shellcheck disable=SC2317 # called through wait_for
pg_registered() { [[ $(sql "SELECT count(*) FROM targets WHERE name = 'pg-host'") == 1 ]]; }
wait_for "the real host worker registers" 30 pg_registered
assert_status 200 GET "/api/v1/targets/$(sql "SELECT id FROM targets WHERE name = 'pg-host'")"
DATA=$(realpath "$HV_TMP/pg/data")
# shellcheck disable=SC2016 # $d is jq's
assert_eq "its facts list the test cluster's data directory, with its mount" "$DATA true" \
    "$(json -r --arg d "$DATA" '.facts.storage.databases[] | select(.path == $d) | [.path, (.mount | startswith("/"))] | map(tostring) | join(" ")')"

hv_finish
