# shellcheck shell=bash
# report_plans.sh — plans with results written by SQL, as bench/report.sh
# writes them, for the tests of reports (test_report_big.sh,
# test_report_key.sh); sourced after lib.sh, used after hv_setup.

# sql STATEMENTS: run through psql on the test's database, rows printed
# unaligned, one a line.
sql() { "$PG" psql "$HV_TMP/pg" -- -X -Atq -v ON_ERROR_STOP=1 -c "$1"; }

# seed NAME ROUNDS: a plan of two configurations (thp always, never) of one
# cpu workload on a host and a guest, ROUNDS rounds, all done, with
# cpu.score 1000 on the host and 900 in the guest (x 1.05 with thp=never),
# a small deterministic wobble per round, and round 77 of the default on
# the host at 2000: an outlier. Prints the plan's id.
seed() {
    sql "
INSERT INTO targets (name, kind) VALUES ('$1-host', 'host'), ('$1-guest', 'guest');
INSERT INTO plans (name, spec, seed) VALUES ('$1', '{\"name\": \"$1\",
  \"targets\": {\"host\": \"$1-host\", \"guests\": [\"$1-guest\"]}, \"design\": \"full\",
  \"baseline\": \"host\", \"margin_pct\": 1, \"factors\": {\"thp\": [\"always\", \"never\"]},
  \"repetitions\": {\"min\": $2, \"max\": $2, \"ci_pct\": 2}}', 0);
INSERT INTO configurations (plan_id, idx, name, levels)
SELECT p.id, t - 1, CASE WHEN t = 1 THEN 'default' ELSE 'thp=never' END,
       jsonb_build_object('thp', (ARRAY['always', 'never'])[t])
FROM plans p, generate_series(1, 2) t WHERE p.name = '$1';" >/dev/null
    add_rounds "$1" 1 "$2"
    sql "SELECT id FROM plans WHERE name = '$1'"
}

# add_rounds NAME FROM TO: the jobs, results and values of rounds FROM..TO
# (every configuration but the default 5 % above it).
add_rounds() {
    sql "
WITH j AS (
  INSERT INTO jobs (plan_id, config_id, workload_id, workload, target_name, target_id,
                    repetition, run_order, status, attempt)
  SELECT c.plan_id, c.id, 'cpu', '{\"id\": \"cpu\", \"workload\": \"cpu\", \"kind\": \"cpu\",
         \"engine\": \"builtin\", \"params\": {}}', t.name, t.id, r, (r * 2 + c.idx) * 2 + (t.kind = 'guest')::int,
         'done', 1
  FROM configurations c JOIN plans p ON p.id = c.plan_id, targets t, generate_series($2, $3) r
  WHERE p.name = '$1' AND t.name IN ('$1-host', '$1-guest')
  RETURNING id, config_id, target_name, repetition),
r AS (
  INSERT INTO results (job_id, attempt, status, started_at, finished_at)
  SELECT id, 1, 'ok', timestamptz '2026-01-01', timestamptz '2026-01-01 00:01' FROM j
  RETURNING id, job_id)
INSERT INTO metrics (result_id, name, value, unit, higher_is_better)
SELECT r.id, 'cpu.score',
       CASE WHEN j.repetition = 77 AND c.idx = 0 AND j.target_name = '$1-host' THEN 2000
       ELSE CASE WHEN j.target_name = '$1-host' THEN 1000 ELSE 900 END
            * CASE WHEN c.idx >= 1 THEN 1.05 ELSE 1 END
            * (1 + 0.01 * sin(j.repetition * 1.7 + c.idx)) END, 'score', true
FROM r JOIN j ON j.id = r.job_id JOIN configurations c ON c.id = j.config_id" >/dev/null
}

# Plan $1, done, made running again as a round in progress would be: one
# more job queued, and its stored state back to running (a plan's state
# never goes back from done by itself: migrations/041).
reopen() {
    sql "INSERT INTO jobs (plan_id, config_id, workload_id, workload, target_name, target_id,
                      repetition, run_order, status, attempt)
    SELECT plan_id, config_id, workload_id, workload, target_name, target_id, 999, 9999, 'queued', 0
    FROM jobs WHERE id = (SELECT max(id) FROM jobs WHERE plan_id = $1)" >/dev/null
    sql "UPDATE plans SET state = 'running', ended_at = NULL WHERE id = $1" >/dev/null
}
