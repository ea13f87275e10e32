#!/usr/bin/env bash
# migrations/schema.sql is what the migrations make: tools/schema.sh
# --check applies them to a scratch database, dumps its definitions and
# finds no difference with the committed file (else the diff is in the
# log: run make schema and commit the file with the migration), and its
# header names the schema version of the newest migration.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

[[ -x $SERVER ]] || hv_skip "$SERVER not built"

OUT=$(BUILD=$BUILD "$HV_ROOT/tools/schema.sh" --check 2>&1)
rc=$?
echo "$OUT"
assert_eq "migrations/schema.sql is current (tools/schema.sh --check exits 0)" 0 "$rc"
LATEST=$(find "$HV_ROOT/migrations" -name '[0-9]*_*.sql' -printf '%f\n' | sort -n | tail -n 1)
assert_eq "its header names the newest migration's schema version" "Schema version $((10#${LATEST%%_*}))." \
    "$(grep -o 'Schema version [0-9]*\.' "$HV_ROOT/migrations/schema.sql")"
hv_finish
