#!/usr/bin/env bash
# Domains of another VM manager are left alone unless the plan names them
# and allows restarts. The host worker runs against libvirt's test driver
# with a node file of two running domains, one with OpenStack nova's
# metadata, one with OpenNebula's, and its facts name each one's manager.
# A plan naming the nova domain without allow_restart is refused at
# submission (422, dry run too) naming the domain and its manager; one
# naming both names both; the same plan with allow_restart: true is
# accepted, its worker applies the block and, the plan cancelled,
# restores it. (The worker's own check, for a domain that changed hands
# since its facts, and domains selected by label: tests/unit/
# test_actuators_guest.c.)
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }

domain() { # NAME UUID METADATA
    cat <<DOM
  <domain type='test'>
    <name>$1</name><uuid>$2</uuid><memory unit='KiB'>1048576</memory><vcpu>1</vcpu>
    <metadata>$3</metadata>
    <os><type arch='x86_64'>hvm</type></os>
    <devices><disk type='file' device='disk'><source file='/var/lib/hvt/$1.img'/>
      <target dev='vda' bus='virtio'/></disk></devices>
  </domain>
DOM
}
{
    echo "<node><cpu><nodes>1</nodes><sockets>1</sockets><cores>2</cores><threads>1</threads>"
    echo "<active>2</active><mhz>2000</mhz></cpu><memory>8388608</memory>"
    domain tenant-vm 6695eb01-f6a4-8304-79aa-97f2502e1001 \
        "<nova:instance xmlns:nova='http://openstack.org/xmlns/libvirt/nova/1.1'><nova:name>tenant</nova:name></nova:instance>"
    domain one-42 6695eb01-f6a4-8304-79aa-97f2502e1002 \
        "<one:vm xmlns:one='http://opennebula.org/xmlns/libvirt/1.0'><one:id>42</one:id></one:vm>"
    echo "</node>"
} >"$HV_TMP/node.xml"

hv_start_worker md-host --libvirt "test://$HV_TMP/node.xml" --kind host --wait 2
# shellcheck disable=SC2317 # called through wait_for
host_registered() { [[ $(sql "SELECT count(*) FROM targets WHERE name = 'md-host' AND facts ? 'libvirt'") == 1 ]]; }
wait_for "the host worker registers with its domains" 30 host_registered
assert_eq "its facts name each domain's state and manager" \
    "one-42 running OpenNebula,tenant-vm running OpenStack nova" \
    "$(sql "SELECT string_agg(concat_ws(' ', d->>'name', d->>'state', d->>'manager'), ',' ORDER BY d->>'name') FROM targets, jsonb_array_elements(facts->'libvirt'->'domains') d WHERE name = 'md-host'")"

plan() { # NAME DOMAINS-JSON ALLOW-RESTART
    jq -c --arg n "$1" --argjson d "$2" --argjson r "$3" '.name = $n
        | .targets = {host: "md-host", guests: {domains: $d}} | .allow_restart = $r
        | .factors = {vcpu_pin: ["off", "on"]} | .order = "sequential"
        | .workloads[0].params.seconds = 1 | .repetitions = {min: 1}' "$HV_ROOT/examples/quick.json"
}
step_of() { # PLAN KIND -> "status|error" of its first step of KIND
    sql "SELECT status || '|' || coalesce(error, '') FROM plan_steps WHERE plan_id = $1 AND kind = '$2' ORDER BY id LIMIT 1"
}
# shellcheck disable=SC2317 # called through wait_for
step_ended() { [[ $(step_of "$1" "$2") =~ ^(done|failed)\| ]]; }

NOVA="domain tenant-vm on host md-host is managed by OpenStack nova (its worker's last facts): hvbench changes a domain another manager owns only when the plan names it in targets.guests.domains and sets allow_restart: true"

# --- named, but allow_restart is false: refused at submission -----------------------
assert_status 422 POST "/api/v1/plans?dry_run=1" "${S[@]}" --data-binary "$(plan named-only '["tenant-vm"]' false)"
assert_status 422 POST /api/v1/plans "${S[@]}" --data-binary "$(plan named-only '["tenant-vm"]' false)"
hv_log "refused: $(json -r .detail)"
assert_eq "one error, at the member naming the domain, naming its manager" \
    "/targets/guests/domains/0|$NOVA" "$(json -r '.errors | map(.path + "|" + .message) | join(";")')"
assert_eq "the detail says what to do" \
    "guest factors would change domain tenant-vm on host md-host, which OpenStack nova manages: name it in targets.guests.domains and set allow_restart: true, or use a template's clones (targets.guests.template)" \
    "$(json -r .detail)"

# --- both named, allow_restart false: each refused ----------------------------------
assert_status 422 POST /api/v1/plans "${S[@]}" --data-binary "$(plan both '["tenant-vm", "one-42"]' false)"
assert_eq "both domains, each with its manager" \
    "/targets/guests/domains/0 OpenStack nova,/targets/guests/domains/1 OpenNebula" \
    "$(json -r '[.errors[] | .path + " " + (.message | capture("managed by (?<m>[^(]+) ").m)] | join(",")')"
assert_eq "no plan was stored" 0 "$(sql "SELECT count(*) FROM plans")"

# --- named with allow_restart: applied, then restored --------------------------------
assert_status 201 POST /api/v1/plans "${S[@]}" --data-binary "$(plan allowed '["tenant-vm", "one-42"]' true)"
P=$(json .id)
wait_for "plan $P's first apply step ends" 60 step_ended "$P" apply
assert_eq "the step is done" "done|" "$(step_of "$P" apply)"
assert_status 200 POST "/api/v1/plans/$P/cancel" "${S[@]}"
wait_for "the cancelled plan's restore step ends" 60 step_ended "$P" restore
assert_eq "what it changed was put back" "done|" "$(step_of "$P" restore)"
hv_finish
