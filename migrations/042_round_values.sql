-- 042_round_values.sql — the value of a series in a round, defined once.
--
-- A series is (plan, configuration, workload, target, metric); its value
-- in round r is:
--   - for a job that ran alone: its metric's value, as stored;
--   - for the client members of a group (guests that ran together): the
--     mean of their values, the group being one observation whose target
--     is the one member's name, or "N guests". Each value is divided by
--     the group's largest magnitude before averaging, so no sum overflows
--     whatever was stored, and the mean (at most 1 in magnitude) is
--     multiplied back.
-- Only done jobs, their current attempt's ok result, never the server
-- side of a net run. Everything that reads rounds reads them here: the
-- adaptive stop rule (server/db_rounds.c), the report's observations
-- (server/db_plan_report.c), the fleet's per-host view (server/report_hosts.c)
-- and compare (server/db_compare.c).
--
-- Columns: config_idx, workload_id, target, grouped (a group's
-- observation), metric, unit, higher_is_better, kind and engine (of the
-- workload: which metrics are primary), round, members (jobs averaged),
-- value, jobs (their ids, ascending).
--
-- A plain SQL function over one statement, STABLE: the planner inlines it
-- into the caller's query, so a caller's filter or aggregate costs what
-- it would written out in full.

CREATE OR REPLACE FUNCTION hv_round_values(p_plan bigint)
RETURNS TABLE (config_idx integer, workload_id text, target text, grouped boolean, metric text,
               unit text, higher_is_better boolean, kind text, engine text, round integer,
               members integer, value double precision, jobs bigint[])
LANGUAGE sql STABLE AS $$
SELECT c.idx, j.workload_id, j.target_name, false, m.name, m.unit, m.higher_is_better,
       j.workload->>'kind', coalesce(j.workload->>'engine', 'builtin'), j.repetition, 1,
       m.value, ARRAY[j.id]
FROM jobs j JOIN configurations c ON c.id = j.config_id
JOIN results r ON r.job_id = j.id AND r.attempt = j.attempt AND r.status = 'ok'
JOIN metrics m ON m.result_id = r.id
WHERE j.plan_id = p_plan AND j.status = 'done' AND j.role IS DISTINCT FROM 'server'
  AND j.group_id IS NULL
UNION ALL
SELECT y.cidx, y.workload_id,
       CASE WHEN count(DISTINCT y.target_name) = 1 THEN min(y.target_name)
            ELSE count(DISTINCT y.target_name) || ' guests' END,
       true, y.metric, min(y.unit), bool_and(y.hib), min(y.kind), min(y.engine), y.repetition,
       count(*)::integer,
       max(y.s) * least(greatest(avg(CASE WHEN y.s > 0 THEN y.value / y.s ELSE 0 END), -1), 1),
       array_agg(y.job_id ORDER BY y.job_id)
FROM (SELECT c.idx AS cidx, j.workload_id, j.target_name, j.repetition, j.id AS job_id,
             j.group_id, m.name AS metric, m.unit, m.higher_is_better AS hib, m.value,
             j.workload->>'kind' AS kind, coalesce(j.workload->>'engine', 'builtin') AS engine,
             max(abs(m.value)) OVER (PARTITION BY j.group_id, m.name) AS s
      FROM jobs j JOIN configurations c ON c.id = j.config_id
      JOIN results r ON r.job_id = j.id AND r.attempt = j.attempt AND r.status = 'ok'
      JOIN metrics m ON m.result_id = r.id
      WHERE j.plan_id = p_plan AND j.status = 'done' AND j.role IS DISTINCT FROM 'server'
        AND j.group_id IS NOT NULL) y
GROUP BY y.cidx, y.workload_id, y.metric, y.repetition, y.group_id
$$;
