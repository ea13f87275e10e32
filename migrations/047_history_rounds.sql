-- 047_history_rounds.sql — the value of a series in a round, defined once
-- for a plan and for a target's history.
--
-- hv_round_parts holds the rule of 042: only done jobs, their current
-- attempt's ok result, never the server side of a net run; per plan,
-- configuration, workload, target, metric and round, one row per job that
-- ran alone (its value as stored) and one per group for its client members
-- on that target (a "part" of the group: the mean of their values, each
-- divided by the part's largest magnitude before averaging and multiplied
-- back, so no sum overflows whatever was stored). A plan runs a round of a
-- workload on a target alone or in one group, so a target has one row per
-- round either way.
--
-- hv_round_values(plan) keeps its columns and callers (the adaptive stop
-- rule, the report, the fleet's per-host view, compare) and reads the
-- view's rows of the plan: a job alone as it is, and a group's parts one
-- observation again (target the one member's name, or "N guests"), the
-- mean of every member's value (member_values, in the order of jobs)
-- computed as 042 did, so its values are 042's.
--
-- A target's history (server/db_history.c) reads the view's rows of the
-- target: one point per round, a group's members on the target their
-- mean, a member of a group spanning several targets this target's own
-- value. Besides 042's columns the view gives what a point needs: the
-- plan, the configuration's name, the series key, when the round ran (the
-- first of its results, started_at or else received_at), its first result
-- and the largest and the sum of its results' ids (the state of a series'
-- points, with which its change points and points are kept: a new or
-- retried member moves it).
--
-- Every filter a caller puts on the columns that make a row (plan_id,
-- configuration, workload, target, metric, round) reaches the scans of
-- jobs and metrics (plain columns of the first branch, the grouping and
-- window keys of the second: a part's scale is its own largest
-- magnitude), so a plan's rounds read the plan's jobs (jobs_plan_idx) and
-- a target's the target's (jobs_target_plan_idx). A filter through a join
-- reaches no GROUP BY: read a target's rows with the target named in a
-- lateral subquery that OFFSET 0 keeps whole (server/db_history.c).
-- The history keys its kept states on this view's definition too (its
-- text's md5), so a later change of the rule recomputes them.

CREATE VIEW hv_round_parts AS
SELECT j.plan_id, c.idx AS config_idx, c.name AS configuration, j.workload_id, j.series_key,
       j.target_name AS target, NULL::bigint AS group_id, false AS grouped, m.name AS metric,
       m.unit, m.higher_is_better, j.workload->>'kind' AS kind,
       coalesce(j.workload->>'engine', 'builtin') AS engine, j.repetition AS round,
       1 AS members, m.value, ARRAY[j.id] AS jobs, ARRAY[m.value] AS member_values,
       coalesce(r.started_at, r.received_at) AS at, r.id AS result_id, r.id AS results_max,
       r.id AS results_sum
FROM jobs j JOIN configurations c ON c.id = j.config_id
JOIN results r ON r.job_id = j.id AND r.attempt = j.attempt AND r.status = 'ok'
JOIN metrics m ON m.result_id = r.id
WHERE j.status = 'done' AND j.role IS DISTINCT FROM 'server' AND j.group_id IS NULL
UNION ALL
SELECT y.plan_id, y.cidx, y.cname, y.workload_id, y.series_key, y.target_name, y.group_id, true,
       y.metric, min(y.unit), bool_and(y.hib), min(y.kind), min(y.engine), y.repetition,
       count(*)::integer,
       max(y.s) * least(greatest(avg(CASE WHEN y.s > 0 THEN y.value / y.s ELSE 0 END), -1), 1),
       array_agg(y.job_id ORDER BY y.job_id), array_agg(y.value ORDER BY y.job_id), min(y.at),
       min(y.rid), max(y.rid),
       sum(y.rid)::bigint
FROM (SELECT j.plan_id, c.idx AS cidx, c.name AS cname, j.workload_id, j.series_key,
             j.target_name, j.repetition, j.id AS job_id, j.group_id, m.name AS metric, m.unit,
             m.higher_is_better AS hib, m.value, j.workload->>'kind' AS kind,
             coalesce(j.workload->>'engine', 'builtin') AS engine,
             coalesce(r.started_at, r.received_at) AS at, r.id AS rid,
             max(abs(m.value)) OVER (PARTITION BY j.plan_id, j.target_name, j.group_id, m.name,
                                     c.idx, c.name, j.workload_id, j.series_key, j.repetition) AS s
      FROM jobs j JOIN configurations c ON c.id = j.config_id
      JOIN results r ON r.job_id = j.id AND r.attempt = j.attempt AND r.status = 'ok'
      JOIN metrics m ON m.result_id = r.id
      WHERE j.status = 'done' AND j.role IS DISTINCT FROM 'server'
        AND j.group_id IS NOT NULL) y
GROUP BY y.plan_id, y.target_name, y.group_id, y.metric, y.cidx, y.cname, y.workload_id,
         y.series_key, y.repetition;

CREATE OR REPLACE FUNCTION hv_round_values(p_plan bigint)
RETURNS TABLE (config_idx integer, workload_id text, target text, grouped boolean, metric text,
               unit text, higher_is_better boolean, kind text, engine text, round integer,
               members integer, value double precision, jobs bigint[])
LANGUAGE sql STABLE AS $$
SELECT v.config_idx, v.workload_id, v.target, false, v.metric, v.unit, v.higher_is_better, v.kind,
       v.engine, v.round, 1, v.value, v.jobs
FROM hv_round_parts v WHERE v.plan_id = p_plan AND NOT v.grouped
UNION ALL
SELECT y.config_idx, y.workload_id,
       CASE WHEN count(DISTINCT y.target) = 1 THEN min(y.target)
            ELSE count(DISTINCT y.target) || ' guests' END,
       true, y.metric, min(y.unit), bool_and(y.higher_is_better), min(y.kind), min(y.engine),
       y.round, count(*)::integer,
       max(y.s) * least(greatest(avg(CASE WHEN y.s > 0 THEN y.val / y.s ELSE 0 END), -1), 1),
       array_agg(y.job ORDER BY y.job)
FROM (SELECT v.config_idx, v.workload_id, v.target, v.group_id, v.metric, v.unit,
             v.higher_is_better, v.kind, v.engine, v.round, u.job, u.val,
             max(abs(u.val)) OVER (PARTITION BY v.group_id, v.metric) AS s
      FROM hv_round_parts v CROSS JOIN LATERAL unnest(v.jobs, v.member_values) u(job, val)
      WHERE v.plan_id = p_plan AND v.grouped) y
GROUP BY y.config_idx, y.workload_id, y.metric, y.round, y.group_id
$$;
