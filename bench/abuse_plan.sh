#!/usr/bin/env bash
# abuse_plan.sh — how long validating an oversized plan takes: a plan with
# N workloads (default 20,000, far past the limit of 64), every one of them
# well formed and with its own id, validated by build/bench/plancheck as the
# server validates a submitted plan. Not part of `make bench` (no server,
# no database): run it by hand after `make build/bench/plancheck`.
#
#   BUILD=build bench/abuse_plan.sh [N]
#
# Prints "workloads N verdict V errors E seconds S"; V is 1 (invalid) and
# E stays bounded whatever N is. BAD=1 gives every workload an unknown
# param too (one more problem per workload).
set -euo pipefail
BUILD=${BUILD:-build}
n=${1:-20000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$n" "${BAD:-0}" >"$tmp/plan.json" <<'PY'
import json, sys
n = int(sys.argv[1])
params = {"nosuch": 1} if sys.argv[2] == "1" else {"copies": 1}
print(json.dumps({
    "name": "abuse",
    "targets": {"host": "hv01"},
    "workloads": [{"id": "w%d" % i, "kind": "cpu", "params": params}
                  for i in range(n)],
}))
PY
printf 'workloads %s ' "$n"
"$BUILD/bench/plancheck" "$tmp/plan.json" 3
