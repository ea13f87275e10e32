#!/usr/bin/env bash
# Seeds build/fuzz/corpus/<target> from the project's own inputs, for
# `make fuzz-merge` to fold into the committed fuzz/corpus (only what adds
# coverage stays). Run it after adding fixtures, examples or unit strings:
#
#   fuzz/seed.sh && make fuzz-merge
#
#   tool targets  tests/fixtures/<tool>/** (real outputs, the bad/ ones too)
#   plan          examples/*.json and the ```json blocks of docs/plans.md
#   units         the quoted strings of tests/unit/test_units.c
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
OUT=build/fuzz/corpus

# seed TARGET FILE...: copies each file under a name that says where it came from.
seed() {
    local t=$1 f
    shift
    mkdir -p "$OUT/$t"
    for f in "$@"; do
        cp -- "$f" "$OUT/$t/seed-${f//\//_}"
    done
}

for tool in fio iperf3 iperf bonnie sysbench stress-ng; do
    mapfile -t files < <(find "tests/fixtures/$tool" -type f ! -name README.md | sort)
    seed "${tool//-/}" "${files[@]}"
done

seed plan examples/*.json
mkdir -p "$OUT/plan"
awk -v out="$OUT/plan/seed-docs_plans.md-" '
    /^```json/ { n++; file = out n ".json"; inblock = 1; next }
    /^```/     { if (inblock) close(file); inblock = 0; next }
    inblock    { print > file }
' docs/plans.md

mkdir -p "$OUT/units"
n=0
grep -o '"[^"]*"' tests/unit/test_units.c | tr -d '"' | sort -u | while IFS= read -r s; do
    n=$((n + 1))
    printf '%s' "$s" >"$OUT/units/seed-test_units-$n"
done
for t in "$OUT"/*/; do
    echo "$(basename "$t"): $(find "$t" -type f | wc -l) inputs in $t"
done
