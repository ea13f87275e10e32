#!/usr/bin/env bash
# make install's layout, from what is built (make install-files into a
# DESTDIR): the programs, the web page and migrations, the systemd units
# (checked by systemd-analyze verify), the example configuration files
# (which the installed programs accept, and a second install keeps), the
# man pages (no warning from man --warnings).
set -uo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

hv_setup

D=$HV_TMP/dest
P=$D/usr/local
make -s -C "$HV_ROOT" install-files DESTDIR="$D" PREFIX=/usr/local BUILD="$BUILD" \
    >"$HV_TMP/install.log" 2>&1
assert_eq "make install-files exits 0" 0 "$?" || hv_tail "$HV_TMP/install.log"

for f in bin/hvbench bin/hvbench-server bin/hvbench-worker; do
    assert_eq "$f is installed, executable" yes "$([[ -x $P/$f ]] && echo yes)"
done
assert_eq "the web page" yes "$([[ -f $P/share/hvbench/web/index.html ]] && echo yes)"
assert_eq "every migration" "$(find "$HV_ROOT/migrations" -name '*.sql' | wc -l)" \
    "$(find "$P/share/hvbench/migrations" -name '*.sql' | wc -l)"
for f in server.json worker.json; do
    assert_eq "etc/hvbench/$f, mode 640" 640 "$(stat -c %a "$P/etc/hvbench/$f")"
done
assert_eq "etc/hvbench is 750" 750 "$(stat -c %a "$P/etc/hvbench")"
assert_eq "the server's user (sysusers.d)" yes \
    "$(grep -q '^u hvbench ' "$P/lib/sysusers.d/hvbench.conf" && echo yes)"

# The units name the installed programs and configuration files.
unit=$P/lib/systemd/system/hvbench-server.service
assert_match "the server unit runs the installed server with its file" \
    "ExecStart=/usr/local/bin/hvbench-server serve --config /usr/local/etc/hvbench/server.json" \
    "$(cat "$unit")"
assert_match "as its own user" "User=hvbench" "$(cat "$unit")"
assert_match "with no capabilities" "CapabilityBoundingSet=$" "$(grep '^CapabilityBoundingSet' "$unit")"
assert_match "the worker unit keeps its state folder" "StateDirectory=hvbench-worker" \
    "$(cat "$P/lib/systemd/system/hvbench-worker.service")"
if command -v systemd-analyze >/dev/null; then
    # verify checks that the programs and man pages exist: point the units
    # at the DESTDIR copy.
    mkdir -p "$HV_TMP/units"
    for u in hvbench-server hvbench-worker; do
        sed "s|/usr/local/|$P/|g" "$P/lib/systemd/system/$u.service" >"$HV_TMP/units/$u.service"
    done
    out=$(MANPATH=$P/share/man systemd-analyze verify "$HV_TMP"/units/*.service 2>&1)
    assert_eq "systemd-analyze verify finds nothing in the units" "0:" "$?:$out"
else
    hv_check 0 "systemd-analyze verify" "systemd-analyze is missing (deploy/deps.sh installs systemd)"
fi

# The man pages.
for page in man1/hvbench.1 man1/hvbench-advice.1 man8/hvbench-server.8 man8/hvbench-worker.8; do
    warn=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$P/share/man/$page" 2>&1 >/dev/null)
    assert_eq "man --warnings $page: nothing" "" "$warn"
done
assert_match "man hvbench-server explains the configuration file" "HVBENCH_SERVER_" \
    "$(MANWIDTH=100 man -l "$P/share/man/man8/hvbench-server.8" 2>/dev/null | col -b)"

# The installed programs take the installed example files.
out=$("$P/bin/hvbench-server" serve --config "$P/etc/hvbench/server.json" --db "$DB" \
    --web-dir "$P/share/hvbench/web" --migrations-dir "$P/share/hvbench/migrations" \
    --check-config 2>&1)
assert_eq "the example server.json passes --check-config" 0 "$?" || echo "$out"
out=$("$P/bin/hvbench-worker" --config "$P/etc/hvbench/worker.json" --server "$URL" --check-config 2>&1)
assert_eq "the example worker.json passes --check-config (server given)" 0 "$?" || echo "$out"

# A second install keeps configuration files an operator edited.
echo '{"listen": "127.0.0.1:9999"}' >"$P/etc/hvbench/server.json"
make -s -C "$HV_ROOT" install-files DESTDIR="$D" PREFIX=/usr/local BUILD="$BUILD" \
    >>"$HV_TMP/install.log" 2>&1
assert_eq "a second install keeps the edited server.json" '{"listen": "127.0.0.1:9999"}' \
    "$(cat "$P/etc/hvbench/server.json")"

hv_finish
