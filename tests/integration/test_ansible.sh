#!/usr/bin/env bash
# plain-pass-only: it drives ansible-playbook (Python) against this machine; the worker it installs is the one every other test runs under the sanitizers
# Deploys a worker with deploy/ansible's role the way a fleet is deployed:
# the example playbook against localhost (-c local) with an inventory that
# puts it in groups carrying labels, everything under a scratch prefix.
# The token comes from a vault (ansible-vault encrypt_string). Checks the
# syntax, the installed files and the configuration's values,
# that a second run changes nothing, then starts the installed worker by
# hand with its installed configuration and sees it register with the
# server under its name and with the inventory's labels.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
command -v ansible-playbook >/dev/null ||
    hv_missing_tool "ansible-playbook not installed (ansible-core, deploy/deps.sh)"
[[ -x $WORKER ]] || hv_skip "$WORKER not built"
hv_setup

sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }

PREFIX=$HV_TMP/root
PLAYBOOK=$HV_ROOT/deploy/ansible/playbook.yml
export ANSIBLE_HOME=$HV_TMP/ansible ANSIBLE_LOCAL_TEMP=$HV_TMP/ansible/tmp \
    ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0 ANSIBLE_STDOUT_CALLBACK=default

# The token in a vault, as a site keeps it (docs/operations.md).
echo "test vault password" >"$HV_TMP/vault-pass"
ansible-vault encrypt_string --vault-password-file "$HV_TMP/vault-pass" \
    --name hvbench_worker_token "$WORKER_TOKEN" >"$HV_TMP/vault.yml" 2>"$HV_TMP/vault.err" ||
    hv_die "ansible-vault encrypt_string failed: $(cat "$HV_TMP/vault.err")"
assert_eq "the vault file holds the token encrypted only" 0 "$(grep -c -F "$WORKER_TOKEN" "$HV_TMP/vault.yml")"

# The inventory: localhost in the hypervisors group and two of its
# children, each group with its labels; the host's own label over them.
cat >"$HV_TMP/inventory.yml" <<INV
all:
  children:
    hypervisors:
      vars:
        hvbench_worker_server: "$URL"
        hvbench_worker_prefix: "$PREFIX"
        hvbench_worker_binaries_dir: "$BUILD/bin"
        hvbench_worker_libvirt: ""
        hvbench_worker_labels_hypervisors: {site: lab}
      children:
        rack7:
          vars:
            hvbench_worker_labels_rack7: {rack: 7}
          hosts:
            localhost:
              ansible_connection: local
              ansible_python_interpreter: /usr/bin/python3
              ansible_become: false
              hvbench_worker_name: ansible-hv01
              hvbench_worker_labels: {cpu: "epyc 7302", rack: 7b}
        batch:
          vars:
            hvbench_worker_labels_batch: {pool: batch}
          hosts:
            localhost:
INV

play() {
    ansible-playbook -c local -i "$HV_TMP/inventory.yml" -e "@$HV_TMP/vault.yml" \
        --vault-password-file "$HV_TMP/vault-pass" "$PLAYBOOK" "$@"
}

play --syntax-check >"$HV_TMP/syntax.log" 2>&1
assert_eq "ansible-playbook --syntax-check passes" "0" "$?" || cat "$HV_TMP/syntax.log"

# The unit is installed where systemd runs; forced here so that its text
# is checked too (below a prefix the role never enables or starts it).
play -e hvbench_worker_unit=true >"$HV_TMP/play1.log" 2>&1
rc=$?
cat "$HV_TMP/play1.log"
assert_eq "the playbook runs" 0 "$rc" || hv_die "the playbook failed"
assert_match "the first run changed the host" 'localhost +: ok=[0-9]+ +changed=[1-9]' \
    "$(grep -E '^localhost ' "$HV_TMP/play1.log")"
assert_eq "the token is not in the playbook's output" 0 "$(grep -c -F "$WORKER_TOKEN" "$HV_TMP/play1.log")"

BIN=$PREFIX/usr/local/bin/hvbench-worker CONF=$PREFIX/etc/hvbench/worker.json
cmp -s "$BUILD/bin/hvbench-worker" "$BIN"
assert_eq "the built binary is installed" 0 "$?"
assert_eq "it is executable" 755 "$(stat -c %a "$BIN")"
assert_eq "the configuration is the owner's alone (it holds the token)" 600 "$(stat -c %a "$CONF")"
assert_eq "its folder" 750 "$(stat -c %a "$PREFIX/etc/hvbench")"
assert_eq "the state folder" 700 "$(stat -c %a "$PREFIX/var/lib/hvbench-worker")"
assert_eq "configuration: server" "$URL" "$(jq -r .server "$CONF")"
assert_eq "configuration: the token, decrypted from the vault" "$WORKER_TOKEN" "$(jq -r .token "$CONF")"
assert_eq "configuration: name, kind, state folder" \
    "ansible-hv01 host $PREFIX/var/lib/hvbench-worker" \
    "$(jq -r '"\(.name) \(.kind) \(.["state-dir"])"' "$CONF")"
assert_eq "configuration: the labels of every group, the host's over its groups'" \
    '["cpu=epyc 7302","pool=batch","rack=7b","site=lab"]' "$(jq -c .label "$CONF")"
assert_eq "configuration: no libvirt when none is set" null "$(jq .libvirt "$CONF")"
assert_eq "configuration: the sections" '{"benchmarks":{},"factors":{},"hooks":{}}' \
    "$(jq -c '{benchmarks, factors, hooks}' "$CONF")"
UNIT=$PREFIX/etc/systemd/system/hvbench-worker.service
assert_eq "the unit starts the installed worker with its configuration" \
    "ExecStart=$BIN --config $CONF" "$(grep '^ExecStart=' "$UNIT")"
assert_eq "the unit is deploy/systemd's (no placeholder left)" 0 "$(grep -c '@[A-Z]*@' "$UNIT")"
assert_eq "the unit keeps deploy/systemd's hardening" \
    "$(grep -c '^Protect' "$HV_ROOT/deploy/systemd/hvbench-worker.service.in")" \
    "$(grep -c '^Protect' "$UNIT")"

play -e hvbench_worker_unit=true >"$HV_TMP/play2.log" 2>&1
assert_eq "the second run passes" 0 "$?"
assert_match "the second run changes nothing" 'localhost +: ok=[0-9]+ +changed=0 ' \
    "$(grep -E '^localhost ' "$HV_TMP/play2.log")"

# The worker as installed, started by hand (no systemd here): its settings
# are the file's alone.
"$BIN" --config "$CONF" --poll 1 >>"$HV_TMP/worker-ansible.log" 2>&1 &
HV_WORKER_PIDS+=($!)
# shellcheck disable=SC2317 # called through wait_for
registered() { [[ $(sql "SELECT count(*) FROM targets WHERE name = 'ansible-hv01'") == 1 ]]; }
wait_for "the installed worker registers" 30 registered
assert_eq "it registered as a host" host "$(sql "SELECT kind FROM targets WHERE name = 'ansible-hv01'")"
assert_eq "with the inventory's labels" '{"cpu":"epyc 7302","pool":"batch","rack":"7b","site":"lab"}' \
    "$(sql "SELECT labels::text FROM targets WHERE name = 'ansible-hv01'" | sed 's/": /":/g; s/, /,/g')"
assert_eq "its credential is in the installed state folder" 1 \
    "$(find "$PREFIX/var/lib/hvbench-worker/ansible-hv01" -name credential | wc -l)"
hv_finish
