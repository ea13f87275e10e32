#!/usr/bin/env bash
# make layers-check: arrows point down only. lib/ includes no wing; no wing
# (server/, worker/, cli/) includes another; each wing uses only its own
# libraries: SQL and HTTP serving in server/, libvirt and libxml2 in
# worker/, libcurl only through lib/httpc. Exits 1 naming every include
# that breaks a rule.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1

# wing, the files of it, the include patterns it must not use.
rules=(
    "lib|lib/*.c lib/*.h|\"(server|worker|cli)/|<libpq-fe\.h>|<microhttpd\.h>|<libvirt/|<libxml/"
    "server|server/*.c server/*.h|\"(worker|cli)/|<libvirt/|<libxml/|<curl/"
    "worker|worker/*.c worker/*.h worker/*/*.c worker/*/*.h|\"(server|cli)/|<libpq-fe\.h>|<microhttpd\.h>"
    "cli|cli/*.c cli/*.h|\"(server|worker)/|<libpq-fe\.h>|<microhttpd\.h>|<libvirt/|<libxml/|<curl/"
)
bad=0
for rule in "${rules[@]}"; do
    IFS='|' read -r wing globs pattern <<<"$rule"
    # shellcheck disable=SC2086 # the globs are meant to expand
    hits=$(grep -HnE "^#[[:space:]]*include[[:space:]]*($pattern)" $globs 2>/dev/null)
    if [[ -n $hits ]]; then
        echo "layers-check: $wing/ includes what its layer must not:"
        sed 's/^/  /' <<<"$hits"
        bad=1
    fi
done
# Only lib/httpc.c talks to libcurl directly in lib/.
hits=$(grep -lE '^#[[:space:]]*include[[:space:]]*<curl/' lib/*.c lib/*.h 2>/dev/null | grep -v '^lib/httpc\.[ch]$')
if [[ -n $hits ]]; then
    echo "layers-check: libcurl outside lib/httpc: $hits"
    bad=1
fi
[[ $bad -eq 0 ]] && echo "layers-check: ok"
exit "$bad"
