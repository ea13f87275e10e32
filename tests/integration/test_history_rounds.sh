#!/usr/bin/env bash
# shellcheck disable=SC2016 # $v ... in single quotes are jq's variables
# A target's history reads the value of a series in a round where the
# report does (hv_round_parts, migrations/047): the two clients of a group
# on the target are one point per round, their mean, at the round's first
# result, whatever the server side measured; a member of a group spanning
# two targets is its own target's value there, while the plan's rounds
# (hv_round_values) make the group one value of "2 guests"; a failed member
# changes its round's point alone, and its retry moves the series' state
# (keyed by the definition too) so the change points and points kept are
# computed again. Plans written by SQL, as report_plans.sh writes them.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/report_plans.sh
source "$(dirname "$0")/report_plans.sh"
hv_setup

# A plan on hr-host (and hr-guest) of one configuration and 4 rounds: per
# round, workload "pair" in a group of two clients on hr-host (100 + 10r
# and 200 + 10r, the second a minute later) and a server (999, not a
# value); workload "span" in a group of one client on hr-host (50 + r) and
# one on hr-guest (500).
sql "
INSERT INTO targets (name, kind) VALUES ('hr-host', 'host'), ('hr-guest', 'guest');
INSERT INTO plans (name, spec, seed) VALUES ('hr', '{\"name\": \"hr\",
  \"targets\": {\"host\": \"hr-host\", \"guests\": [\"hr-guest\"]}}', 0);
INSERT INTO configurations (plan_id, idx, name, levels)
SELECT id, 0, 'default', '{}' FROM plans WHERE name = 'hr';
INSERT INTO job_groups (plan_id, idx, size)
SELECT p.id, r * 2 + g, 3 - g FROM plans p, generate_series(1, 4) r, generate_series(0, 1) g
WHERE p.name = 'hr';
WITH j AS (
  INSERT INTO jobs (plan_id, config_id, workload_id, workload, target_name, repetition, run_order,
                    status, attempt, role, group_id)
  SELECT c.plan_id, c.id, x.w, jsonb_build_object('id', x.w, 'kind', 'cpu', 'engine', 'builtin',
         'params', jsonb_build_object('copies', x.g + 1)), x.t, r, r * 10 + x.k, 'done', 1, x.role,
         g.id
  FROM configurations c JOIN plans p ON p.id = c.plan_id, generate_series(1, 4) r,
       (VALUES ('pair', 0, 'hr-host', 'client', 0), ('pair', 0, 'hr-host', 'client', 1),
               ('pair', 0, 'hr-host', 'server', 2), ('span', 1, 'hr-host', 'client', 3),
               ('span', 1, 'hr-guest', 'client', 4)) x(w, g, t, role, k),
       job_groups g
  WHERE p.name = 'hr' AND g.plan_id = p.id AND g.idx = r * 2 + x.g
  RETURNING id, workload_id, target_name, role, repetition, run_order),
r AS (
  INSERT INTO results (job_id, attempt, status, started_at, finished_at)
  SELECT id, 1, 'ok', timestamptz '2026-02-01 10:00Z' + repetition * interval '1 day'
         + (run_order % 10) * interval '1 minute', timestamptz '2026-02-01' FROM j
  RETURNING id, job_id)
INSERT INTO metrics (result_id, name, value, unit, higher_is_better)
SELECT r.id, 'cpu.score', CASE j.run_order % 10 WHEN 0 THEN 100 + 10 * j.repetition
       WHEN 1 THEN 200 + 10 * j.repetition WHEN 2 THEN 999 WHEN 3 THEN 50 + j.repetition
       ELSE 500 END, 'score', true
FROM r JOIN j ON j.id = r.job_id"
PLAN=$(sql "SELECT id FROM plans WHERE name = 'hr'")
HOST=$(sql "SELECT id FROM targets WHERE name = 'hr-host'")
history() { api GET "/api/v1/targets/$HOST/history?metric=cpu.score$1"; }
# points: the series' points as "value@day" (its n first), the values to
# 1e-9 (a group's mean is computed on its values scaled by the largest).
points() {
    json -r '.series[0] | "\(.n): " + ([.points[] | "\(.value * 1e9 | round / 1e9)@\(.at[8:10])"]
        | join(" "))'
}

history '&workload=pair'
assert_eq "two clients of a group on the target: one point per round, their mean" \
    '4: 160@02 170@03 180@04 190@05' "$(points)"
assert_eq "each a point of its own, at the round's first result" \
    '1 1 1 1|10:00:00 10:00:00 10:00:00 10:00:00' \
    "$(json -r '[.series[0].points[].n] | join(" ")')|$(json -r '[.series[0].points[].at[11:19]] | join(" ")')"
FIRST=$(sql "SELECT string_agg(id::text, ' ' ORDER BY repetition) FROM (SELECT j.repetition,
    min(r.id) AS id FROM jobs j JOIN results r ON r.job_id = j.id WHERE j.plan_id = $PLAN
    AND j.workload_id = 'pair' AND j.role = 'client' GROUP BY 1) x")
assert_eq "its result is the round's first stored" "$FIRST" "$(json -r '[.series[0].points[].result_id] | join(" ")')"
assert_eq "the plan's rounds (hv_round_values) say the same" \
    "$(json -r '[.series[0].points[].value] | join(" ")')" \
    "$(sql "SELECT string_agg(value::text, ' ' ORDER BY round) FROM hv_round_values($PLAN)
            WHERE workload_id = 'pair' AND metric = 'cpu.score'")"
FULL=$(jq -S . <<<"$BODY")
history '&workload=pair'
assert_eq "read again (the points kept): the same answer" "$FULL" "$(jq -S . <<<"$BODY")"
history '&workload=pair&from=2026-02-03T00:00:00Z&to=2026-02-04T23:00:00Z'
assert_eq "a window reads the same points" '2: 170@03 180@04' "$(points)"

history '&workload=span'
assert_eq "a member of a group on two targets: this target's own value" \
    '4: 51@02 52@03 53@04 54@05' "$(points)"
assert_eq "where the plan's rounds make the group one value of both" \
    '2 guests 2 275.5|2 guests 2 277' \
    "$(sql "SELECT string_agg(target || ' ' || members || ' ' || value, '|' ORDER BY round)
            FROM hv_round_values($PLAN) WHERE workload_id = 'span' AND round IN (1, 4)")"

STATE=$(sql "SELECT s.state FROM history_series s JOIN targets t ON t.id = s.target_id
    WHERE t.name = 'hr-host' AND s.workload->'params'->>'copies' = '1'")
assert_match "the state kept is keyed by the definition of a round's value" \
    '^[0-9a-f]{12}:4:[0-9]+:[0-9]+$' "$STATE"

# The second client of round 3 fails.
B3="(SELECT id FROM jobs WHERE plan_id = $PLAN AND workload_id = 'pair' AND repetition = 3
     AND run_order % 10 = 1)"
sql "UPDATE results SET status = 'error' WHERE job_id = $B3;
     UPDATE jobs SET status = 'failed' WHERE id = $B3" >/dev/null
history '&workload=pair'
assert_eq "a failed member: its round is the other's value, the others as they were" \
    '4: 160@02 170@03 130@04 190@05' "$(points)"
# Retried: a second attempt of 230.
sql "UPDATE jobs SET status = 'done', attempt = 2 WHERE id = $B3;
     WITH r AS (INSERT INTO results (job_id, attempt, status, started_at, finished_at)
       SELECT $B3, 2, 'ok', timestamptz '2026-02-04 12:00Z', timestamptz '2026-02-04 12:01Z'
       RETURNING id)
     INSERT INTO metrics (result_id, name, value, unit, higher_is_better)
     SELECT id, 'cpu.score', 230, 'score', true FROM r" >/dev/null
history '&workload=pair'
assert_eq "its retry: the round is the mean again, of the new attempt" \
    '4: 160@02 170@03 180@04 190@05' "$(points)"
AGAIN=$(sql "SELECT s.state FROM history_series s JOIN targets t ON t.id = s.target_id
    WHERE t.name = 'hr-host' AND s.workload->'params'->>'copies' = '1'")
assert_eq "the same count of points, another state: computed again" "true" \
    "$([[ $AGAIN != "$STATE" && ${AGAIN%%:*} == "${STATE%%:*}" ]] && echo true)"

hv_finish
