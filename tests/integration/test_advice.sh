#!/usr/bin/env bash
# plain-pass-only: it drives ansible-playbook, puppet and tuned's profile loader (outside tools, seconds each); the renderers run under the sanitizers in test_advice_format
# A plan's recommendations as configuration-management changes, checked
# with the real tools and never changing this machine: a one-at-a-time
# plan (thp, ksm, io_scheduler, kvm_ept, disk_cache; every level 5 %
# better, written by SQL as report_plans.sh does) rendered by GET
# /api/v1/plans/{id}/recommendations/apply?format= and hvbench advice.
# tuned: its own Loader reads the profile (include=virtual-host resolved);
# ansible: --syntax-check, then --check -c local on localhost into a fake
# root that stays as it was, the rollback play too; puppet: parser
# validate; shell: applied to a fake sysfs/etc tree, the values changed,
# then its rollback leaves the tree byte for byte as it was.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
command -v ansible-playbook >/dev/null || hv_missing_tool "ansible-playbook needed (ansible-core, deploy/deps.sh)"
command -v puppet >/dev/null || hv_missing_tool "puppet needed (puppet, deploy/deps.sh)"
# Debian's python3, the one tuned is installed for (not a python3 earlier in PATH).
TUNED_PY=/usr/bin/python3
"$TUNED_PY" -c 'import tuned.profiles' 2>/dev/null || hv_missing_tool "tuned's Python modules needed (tuned, deploy/deps.sh)"
[[ -f /usr/lib/tuned/virtual-host/tuned.conf ]] || hv_missing_tool "tuned's virtual-host profile needed (tuned)"
hv_setup
# shellcheck source=tests/integration/report_plans.sh
source "$(dirname "$0")/report_plans.sh"
[[ -x $CLI ]] || hv_die "$CLI not built"
R=(-H "Authorization: Bearer $READ_TOKEN")
T=$HV_TMP/advice
mkdir -p "$T"
export HOME=$T ANSIBLE_LOCAL_TEMP=$T/ansible-tmp ANSIBLE_NOCOLOR=1

# --- the plan: the default and one factor changed at a time ---------------
sql "
INSERT INTO targets (name, kind) VALUES ('adv-host', 'host'), ('adv-guest', 'guest');
INSERT INTO plans (name, spec, seed) VALUES ('adv', '{\"name\": \"adv\",
  \"targets\": {\"host\": \"adv-host\", \"guests\": [\"adv-guest\"]}, \"design\": \"one-at-a-time\",
  \"baseline\": \"host\", \"margin_pct\": 1, \"tuning\": {\"disk\": \"/dev/vdz\"},
  \"factors\": {\"thp\": [\"always\", \"never\"], \"ksm\": [\"off\", \"on\"],
                \"io_scheduler\": [\"mq-deadline\", \"bfq\"], \"kvm_ept\": [\"on\", \"off\"],
                \"disk_cache\": [\"writeback\", \"none\"]},
  \"repetitions\": {\"min\": 8, \"max\": 8, \"ci_pct\": 2}}', 0);
INSERT INTO configurations (plan_id, idx, name, levels)
SELECT p.id, v.idx, v.name, jsonb_build_object('disk_cache', 'writeback', 'io_scheduler',
       'mq-deadline', 'ksm', 'off', 'kvm_ept', 'on', 'thp', 'always') || v.levels::jsonb
FROM plans p, (VALUES (0, 'default', '{}'), (1, 'disk_cache=none', '{\"disk_cache\": \"none\"}'),
  (2, 'io_scheduler=bfq', '{\"io_scheduler\": \"bfq\"}'), (3, 'ksm=on', '{\"ksm\": \"on\"}'),
  (4, 'kvm_ept=off', '{\"kvm_ept\": \"off\"}'), (5, 'thp=never', '{\"thp\": \"never\"}'))
  AS v(idx, name, levels)
WHERE p.name = 'adv';" >/dev/null
add_rounds adv 1 8
P=$(sql "SELECT id FROM plans WHERE name = 'adv'")
assert_status 200 GET "/api/v1/plans/$P/report" "${R[@]}"
assert_eq "every factor's level is recommended" "disk_cache io_scheduler ksm kvm_ept thp" \
    "$(json '[.recommendations[].factor] | sort | join(" ")')"

# --- the endpoint ----------------------------------------------------------
for f in tuned ansible puppet shell; do
    assert_status 200 GET "/api/v1/plans/$P/recommendations/apply?format=$f" "${R[@]}"
    printf '%s\n' "$BODY" >"$T/advice.$f"
    assert_match "$f: the evidence as comments" \
        "# thp=never \\(rank [0-9]; the plan's default: always\\)" "$BODY"
    assert_match "$f: each gain with its interval" '#   gain: .* \+5\.[0-9] % \[\+[0-9.]+, \+[0-9.]+\]' "$BODY"
    assert_match "$f: a domain setting is a comment" '# +disk_cache=none: a setting of each guest domain' "$BODY"
done
assert_eq "the shell form's media type" "text/x-shellscript; charset=utf-8" "$CONTENT_TYPE"
assert_status 400 GET "/api/v1/plans/$P/recommendations/apply" "${R[@]}"
assert_eq "format is required" "format" "$(json -r '.errors[0].path')"
assert_status 400 GET "/api/v1/plans/$P/recommendations/apply?format=chef" "${R[@]}"
assert_status 404 GET "/api/v1/plans/999999/recommendations/apply?format=shell" "${R[@]}"

# The CLI renders the report with the same code.
HVBENCH_SERVER=$URL HVBENCH_TOKEN=$READ_TOKEN hv_cli advice --format shell "$P"
assert_eq "hvbench advice prints what the server renders" "$(cat "$T/advice.shell")" "$OUT"
HVBENCH_SERVER=$URL HVBENCH_TOKEN=$READ_TOKEN hv_cli advice --format chef "$P"
assert_eq "an unknown format is a usage error" "2" "$RC"

# --- tuned: its own loader reads the profile ---------------------------------
mkdir -p "$T/tuned/hvbench-plan-$P"
cp "$T/advice.tuned" "$T/tuned/hvbench-plan-$P/tuned.conf"
UNITS=$("$TUNED_PY" - "$T/tuned" "hvbench-plan-$P" <<'PY' 2>"$T/tuned.err"
import sys
from tuned import profiles
from tuned.utils.global_config import GlobalConfig
loader = profiles.Loader(profiles.Locator([sys.argv[1], "/usr/lib/tuned"]), profiles.Factory(),
                         profiles.Merger(), GlobalConfig(), profiles.variables.Variables())
p = loader.load(sys.argv[2])
for name, unit in sorted(p.units.items()):
    for k, v in sorted(unit.options.items()):
        print("%s/%s %s=%s" % (name, unit.type, k, v))
PY
) || hv_check 0 "tuned loads the profile" "$(cat "$T/tuned.err")"
printf '%s\n' "$UNITS" >"$T/tuned.units"
assert_match "tuned: thp in [sysfs]" $'(^|\n)sysfs/sysfs /sys/kernel/mm/transparent_hugepage/enabled=never\n' "$UNITS"
assert_match "tuned: ksm in [sysfs]" $'\nsysfs/sysfs /sys/kernel/mm/ksm/run=1\n' "$UNITS"
assert_match "tuned: the disk's scheduler in [sysfs]" $'\nsysfs/sysfs /sys/block/vdz/queue/scheduler=bfq' "$UNITS"
assert_match "tuned: the module parameter in [bootloader]" "bootloader/bootloader cmdline_hvbench_plan_$P=kvm_intel.ept=0" "$UNITS"
assert_match "tuned: virtual-host's units included" $'(^|\n)sysctl/sysctl vm.dirty_background_ratio=' "$UNITS"

# --- the fake root every tool writes into --------------------------------------
ROOTDIR=$T/root
mkdir -p "$ROOTDIR/sys/kernel/mm/transparent_hugepage" "$ROOTDIR/sys/kernel/mm/ksm" \
    "$ROOTDIR/sys/block/vdz/queue" "$ROOTDIR/etc/tmpfiles.d" "$ROOTDIR/etc/udev/rules.d" \
    "$ROOTDIR/etc/modprobe.d"
echo always >"$ROOTDIR/sys/kernel/mm/transparent_hugepage/enabled"
echo 0 >"$ROOTDIR/sys/kernel/mm/ksm/run"
echo mq-deadline >"$ROOTDIR/sys/block/vdz/queue/scheduler"
printf 'w /sys/kernel/mm/ksm/run - - - - 0\n# a site file hvbench overwrites\n' \
    >"$ROOTDIR/etc/tmpfiles.d/hvbench-plan-$P.conf"
echo 'options kvm ignore_msrs=1' >"$ROOTDIR/etc/modprobe.d/site.conf"
cp -a "$ROOTDIR" "$T/root.orig"

# --- ansible ------------------------------------------------------------------
cp "$T/advice.ansible" "$T/advice.yml"
ansible-playbook --syntax-check -i localhost, "$T/advice.yml" >"$T/ansible-syntax.log" 2>&1
assert_eq "ansible-playbook --syntax-check passes" "0" "$?"
# One run in check mode for both plays: the rollback play is tagged never
# and rollback, so it runs when rollback is asked for by name.
ansible-playbook --check -c local -i localhost, -e hvbench_root="$ROOTDIR" -e hvbench_become=false \
    --tags all,rollback "$T/advice.yml" >"$T/ansible-check.log" 2>&1
assert_eq "ansible-playbook --check runs" "0" "$?"
CHECKED=$(cat "$T/ansible-check.log")
assert_match "ansible: every task ran in check mode, none failed" 'localhost +: ok=[0-9]+ +changed=[0-9]+ +unreachable=0 +failed=0' "$CHECKED"
assert_match "ansible: the tmpfiles file would be written" "TASK \\[/etc/tmpfiles.d/hvbench-plan-$P.conf: the settings at every boot\\] \\**"$'\n'"changed: \\[localhost\\]" "$CHECKED"
assert_match "ansible: the rollback play removes the modprobe file" "TASK \\[/etc/modprobe.d/hvbench-plan-$P.conf removed\\]" "$CHECKED"
diff -r "$T/root.orig" "$ROOTDIR" >"$T/ansible.diff" 2>&1
assert_eq "ansible --check changed nothing in the root" "0" "$?"

# --- puppet ---------------------------------------------------------------------
cp "$T/advice.puppet" "$T/advice.pp"
PUP=(--confdir "$T/puppet/etc" --vardir "$T/puppet/var" --logdir "$T/puppet/log" --rundir "$T/puppet/run" --codedir "$T/puppet/code")
puppet parser validate "${PUP[@]}" "$T/advice.pp" >"$T/puppet.log" 2>&1
assert_eq "puppet parser validate passes" "0" "$?"
echo 'file { "/x": ensure => bogus_value, }}' >"$T/bad.pp"
puppet parser validate "${PUP[@]}" "$T/bad.pp" >/dev/null 2>&1
assert_eq "... and the validator refuses a broken manifest" "1" "$?"

# --- shell: applied to the fake root, then rolled back ------------------------------
STATE=$T/state ROOT=$ROOTDIR sh "$T/advice.shell" apply >"$T/shell.log" 2>&1
assert_eq "the shell form applies" "0" "$?"
assert_eq "thp written" "never" "$(cat "$ROOTDIR/sys/kernel/mm/transparent_hugepage/enabled")"
assert_eq "ksm written" "1" "$(cat "$ROOTDIR/sys/kernel/mm/ksm/run")"
assert_eq "the disk's scheduler written" "bfq" "$(cat "$ROOTDIR/sys/block/vdz/queue/scheduler")"
assert_eq "kept at boot by systemd-tmpfiles" \
    "w /sys/kernel/mm/transparent_hugepage/enabled - - - - never|w /sys/kernel/mm/ksm/run - - - - 1" \
    "$(paste -sd '|' "$ROOTDIR/etc/tmpfiles.d/hvbench-plan-$P.conf")"
assert_eq "the disk's by a udev rule" \
    'ACTION=="add|change", SUBSYSTEM=="block", KERNEL=="vdz", ATTR{queue/scheduler}="bfq"' \
    "$(cat "$ROOTDIR/etc/udev/rules.d/60-hvbench-plan-$P.rules")"
assert_eq "the module parameter in modprobe.d" "options kvm_intel ept=0" \
    "$(cat "$ROOTDIR/etc/modprobe.d/hvbench-plan-$P.conf")"
STATE=$T/state ROOT=$ROOTDIR sh "$T/advice.shell" apply >>"$T/shell.log" 2>&1
assert_eq "applying twice keeps the first originals" "always" \
    "$(sed -n 's/.*\[\(.*\)\].*/\1/p;t;p' "$T/state/1")"
STATE=$T/state ROOT=$ROOTDIR sh "$T/advice.shell" rollback >>"$T/shell.log" 2>&1
assert_eq "the rollback runs" "0" "$?"
diff -r "$T/root.orig" "$ROOTDIR" >"$T/shell.diff" 2>&1
assert_eq "the rollback restores every byte" "0" "$?"
assert_eq "and removes its state" "no" "$([[ -e $T/state ]] && echo yes || echo no)"

hv_finish
