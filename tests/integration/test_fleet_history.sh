#!/usr/bin/env bash
# shellcheck disable=SC2016 # $v ... in single quotes are jq's variables
# A fleet's history and its targets at a glance. GET /api/v1/history reads
# one metric on every host a label selector picks, in one answer: three
# hosts of pool=fh (a fourth of another pool left out) with 24 daily
# results each in January 2026 come back as 24 six-hour buckets each (a
# 30-day window: the bucket the answer names), the fleet median per bucket
# is the middle host's value, fh-c (20 % below, then a −12 % step) is the
# one outlier and comes first, and the change point its own history read
# found shows on it, new, then acknowledged. Bad selectors, metrics and
# windows, and a selector matching more hosts than one answer draws, are
# 400s naming the parameter. GET /api/v1/targets says which targets are
# online (a worker registered and seen within --stale-after, here 300 s;
# an imported target never), filters by label, and counts each target's
# change points not acknowledged.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
HV_SERVER_ARGS=(--stale-after 300)
hv_setup

S=(-H "Authorization: Bearer $SUBMIT_TOKEN")
METRIC=disk.seq_write.mbps
sql() { "$PG" psql "$HV_TMP/pg" -- -Atc "$1"; }

for h in fh-a:fh fh-b:fh fh-c:fh fh-x:other; do
    api POST /api/v1/workers/register -H "Authorization: Bearer $WORKER_TOKEN" --data-binary \
        "{\"name\":\"${h%%:*}\",\"kind\":\"host\",\"facts\":{},\"labels\":{\"pool\":\"${h#*:}\"}}"
    assert_eq "host ${h%%:*} registers" 200 "$STATUS"
done

# seed HOST KPS: one plan on HOST of 24 done jobs of a bonnie block write,
# their results at noon on 1-24 January 2026 with metric disk.seq_write.mbps
# = KPS × 1024 / 1e6 (KPS an SQL expression of the day d), written by SQL
# as bench/lib.sh's bench_seed_history does: hundreds of imports would take
# minutes. The workload is the same on every host: one series key.
seed() {
    sql "WITH p AS (INSERT INTO plans (name, spec, seed) VALUES ('seed $1', '{\"name\": \"seed\"}', 0) RETURNING id),
c AS (INSERT INTO configurations (plan_id, idx, name, levels) SELECT id, 0, 'default', '{}' FROM p RETURNING id, plan_id),
j AS (INSERT INTO jobs (plan_id, config_id, workload_id, workload, target_name, target_id, repetition, run_order, status, attempt)
      SELECT c.plan_id, c.id, 'bonnie', '{\"id\": \"bonnie\", \"kind\": \"disk\", \"engine\": \"bonnie\", \"params\": {\"size\": 1073741824}}',
             '$1', (SELECT id FROM targets WHERE name = '$1'), d, d - 1, 'done', 1 FROM c, generate_series(1, 24) d RETURNING id, repetition AS d),
r AS (INSERT INTO results (job_id, attempt, status, started_at, finished_at)
      SELECT id, 1, 'ok', timestamptz '2026-01-01 12:00Z' + (d - 1) * interval '1 day',
             timestamptz '2026-01-01 12:01Z' + (d - 1) * interval '1 day' FROM j RETURNING id, job_id)
INSERT INTO metrics (result_id, name, value, unit, higher_is_better)
SELECT r.id, '$METRIC', round(($2) * (1 + 0.003 * sin(j.d * 7))) * 1024 / 1e6, 'MB/s', true FROM r JOIN j ON j.id = r.job_id" >/dev/null ||
        hv_die "cannot seed $1"
}
seed fh-a 75000
seed fh-b 75500
seed fh-c 'CASE WHEN d <= 12 THEN 60000 ELSE 52800 END'
seed fh-x 90000
# A target only an import named.
api POST /api/v1/imports "${S[@]}" --data-binary "$(jq -n --arg o "$(cat "$HV_ROOT/tests/fixtures/bonnie/D-f-s1024-r512.csv")" \
    '{tool: "bonnie", target: "fh-imp", output: ($o + "\n"), at: "2026-01-02T12:00:00Z"}')"
assert_eq "an import names fh-imp" 201 "$STATUS"
C=$(sql "SELECT id FROM targets WHERE name = 'fh-c'")
# fh-c's own history read finds its step (and keeps it).
api GET "/api/v1/targets/$C/history?metric=$METRIC"
CP=$(json '.series[0].change_points[0].id')
assert_eq "fh-c's history finds one change point" 1 "$(json '.series[0].change_points | length')"

Q="selector=pool%3Dfh&metric=$METRIC&from=2026-01-01T00:00:00Z&to=2026-01-31T00:00:00Z"
assert_status 200 GET "/api/v1/history?$Q"
assert_eq "the window and its bucket: 30 days in 6 h buckets" \
    "2026-01-01T00:00:00+00:00 2026-01-31T00:00:00+00:00 21600 $METRIC MB/s true" \
    "$(json '"\(.from) \(.to) \(.bucket_s) \(.metric) \(.unit) \(.higher_is_better)"')"
assert_eq "one series, on the three hosts" "1 3 72" "$(json '"\(.series_keys | length) \(.series_keys[0].hosts) \(.series_keys[0].points)"')"
assert_eq "the pool's hosts, the outlier first; the other pool left out" "fh-c true|fh-a false|fh-b false" \
    "$(json '[.hosts[] | "\(.name) \(.outlier)"] | .[0:1] + (.[1:] | sort) | join("|")')"
assert_eq "24 points a host, each one import at noon, at its bucket's start" "24 24 24" \
    "$(json '[.hosts[] | [.points[] | select((.[0] - 1767225600) % 86400 == 43200 and .[2] == 1)] | length] | join(" ")')"
assert_eq "fh-a day 1: its value" "$(sql "SELECT round(75000 * (1 + 0.003 * sin(7))) * 1024 / 1e6")" \
    "$(json '.hosts[] | select(.name == "fh-a") | .points[0][1]')"
assert_eq "the median of each bucket is the middle host's value, over 3 hosts" "24" \
    "$(json '. as $d | [range(0; 24) as $i | [$d.hosts[].points[$i][1]] | sort | .[1] as $m
        | select($d.median[$i][1] == $m and $d.median[$i][4] == 3 and $d.median[$i][0] == $d.hosts[0].points[$i][0])] | length')"
assert_eq "fh-c's ratio: its median over the buckets of value over median" "true" \
    "$(json '.hosts[0].ratio > 0.72 and .hosts[0].ratio < 0.78')"
assert_eq "fh-a and fh-b lie within 1 % of the median" "true" \
    "$(json '[.hosts[1:][] | (.ratio - 1) | fabs < 0.01] | all')"
assert_eq "fh-c's change point, new, on day 13" "$CP new 2026-01-13" \
    "$(json -r '.hosts[0].change_points[0] | "\(.id) \(.status) \(.at[0:10])"')"
assert_eq "the others have none" "0" "$(json '[.hosts[1:][].change_points[]] | length')"
FIRST=$BODY
assert_status 200 GET "/api/v1/history?$Q"
assert_eq "asked again: the same answer (kept while the hosts' marks stand)" "$FIRST" "$BODY"

# Another series key asked for, or none in the window.
assert_status 200 GET "/api/v1/history?$Q&key=0123456789abcdef0123456789abcdef"
assert_eq "an unknown key: the hosts without points" "null 3 0" "$(json '"\(.key) \(.hosts | length) \([.hosts[].points[]] | length)"')"
assert_status 200 GET "/api/v1/history?selector=pool%3Dfh&metric=$METRIC&from=2025-01-01T00:00:00Z&to=2025-01-08T00:00:00Z"
assert_eq "a week before any point: 7 days in 1 h buckets, nothing" "3600 0 0" "$(json '"\(.bucket_s) \(.median | length) \([.hosts[].points[]] | length)"')"

# Bad questions: 400 naming the parameter.
bad() {
    assert_status 400 GET "/api/v1/history?$1"
    assert_eq "$2 is named" "$2" "$(json -r '[.errors[].path] | join(",")')"
}
bad "metric=$METRIC" selector
bad "selector=pool&metric=$METRIC" selector
bad "selector=pool%3Dfh" metric
bad "selector=pool%3Dfh&metric=bad%20metric%20" metric
bad "selector=pool%3Dfh&metric=$METRIC&from=2026-01-01T00:00:00Z&to=2025-12-01T00:00:00Z" to
bad "selector=pool%3Dfh&metric=$METRIC&from=2000-01-01T00:00:00Z&to=2026-01-01T00:00:00Z" from
sql "INSERT INTO targets (name, kind, labels) SELECT 'many-' || g, 'host', '{\"pool\": \"many\"}' FROM generate_series(1, 1001) g" >/dev/null
bad "selector=pool%3Dmany&metric=$METRIC" selector
assert_match "too many hosts: the count and the bound" 'matches 1001 hosts; one answer shows at most 1000' "$BODY"

# --- the targets at a glance --------------------------------------------------------------------
sql "UPDATE targets SET last_seen = now() - interval '200 seconds' WHERE name = 'fh-b';
     UPDATE targets SET last_seen = now() - interval '400 seconds' WHERE name = 'fh-x'" >/dev/null
assert_status 200 GET "/api/v1/targets?label=pool%3Dfh"
assert_eq "label filter; online within --stale-after 300; change points not acknowledged" \
    "fh-a true 0|fh-b true 0|fh-c true 1" \
    "$(json '[.items[] | "\(.name) \(.online) \(.change_points_new)"] | join("|")')"
assert_eq "seen 200 s ago: stale by the lease (60 s), online by --stale-after" "true true" \
    "$(json '.items[] | select(.name == "fh-b") | "\(.stale) \(.online)"')"
assert_status 200 GET "/api/v1/targets?kind=host"
assert_eq "seen 400 s ago: not online; only imported: never" "false false" \
    "$(json '[.items[] | select(.name == "fh-x" or .name == "fh-imp") | .online] | join(" ")')"
assert_status 200 POST "/api/v1/change-points/$CP/ack" "${S[@]}"
assert_status 200 GET "/api/v1/targets?label=pool%3Dfh"
assert_eq "acknowledged: none new left" "0 0 0" "$(json '[.items[].change_points_new] | join(" ")')"
assert_status 200 GET "/api/v1/history?$Q"
assert_eq "and the fleet history says so" "$CP acknowledged" "$(json -r '.hosts[0].change_points[0] | "\(.id) \(.status)"')"
OUT=$("$SERVER" serve --db "$DB" --web-dir "$HV_ROOT/web" --check-config 2>&1)
assert_match "--check-config shows the default --stale-after: three claim waits" $'\nstale-after = 180\n' "$OUT"

hv_finish
