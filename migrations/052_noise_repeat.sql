-- 052_noise_repeat.sql — a noisy job is set aside and its configuration
-- run again in the same round (the plan's `noise: "repeat"`, docs/plans.md).
--
-- A job is noisy when what ran beside it says so, by the decision its
-- worker already took and stored: a bare-metal job's own
-- observed.interference.busy (worker/interference.h), a guest job's host
-- telemetry host_busy.busy (worker/telemetry.c, the report's host_busy
-- warning reads the same two, server/db_telemetry.c). hv_result_noise
-- names which, or NULL.
--
-- results.set_aside holds why a result was set aside ('interference' or
-- 'host_busy'); NULL keeps it. A set-aside result stays stored and
-- readable (GET /api/v1/jobs/{id}) but is no value of any round:
-- hv_round_parts, which every reader of rounds reads (the adaptive stop
-- rule, the report, compare, the per-host view, the history), now skips
-- it. The view keeps its columns; only its filter changes.
--
-- hv_noise_repeat(job) is called by the server (server/db_job_result.c)
-- in the transaction that ended the job done, before the round's decision:
-- when the plan's noise is "repeat", the job ran alone (no group, no net
-- role) and its counted result is noisy, and fewer than repetitions.max
-- jobs of its configuration, workload and target are in its round, it
-- sets the result aside and queues one more job of that configuration,
-- workload and target in the same round (same block in a tuning plan):
-- its run order is the round's last (shared with that round's last job;
-- jobs are claimed in run order), so it runs before any later round's
-- jobs, and the round is open until it ends.
-- At the bound the noisy result is kept (the report says so). A plan
-- stored without `noise` (before this migration) keeps its results.

ALTER TABLE results ADD COLUMN set_aside text
    CHECK (set_aside IN ('interference', 'host_busy'));

-- Which signal says the attempt ran beside other work: 'interference'
-- (the bare-metal job's own), 'host_busy' (its host's telemetry), NULL.
CREATE FUNCTION hv_result_noise(p_job bigint, p_attempt integer) RETURNS text
LANGUAGE sql STABLE AS $$
SELECT CASE
    WHEN EXISTS (SELECT 1 FROM results r WHERE r.job_id = p_job AND r.attempt = p_attempt
                 AND r.observed->'interference'->'busy' = 'true'::jsonb) THEN 'interference'
    WHEN EXISTS (SELECT 1 FROM telemetry tm WHERE tm.job_id = p_job AND tm.attempt = p_attempt
                 AND tm.observed->'host_busy'->'busy' = 'true'::jsonb) THEN 'host_busy'
END
$$;

CREATE FUNCTION hv_noise_repeat(p_job bigint) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    j jobs;
    why text;
    rmax integer;
    n integer;
BEGIN
    SELECT * INTO j FROM jobs WHERE id = p_job;
    IF NOT FOUND OR j.status <> 'done' OR j.group_id IS NOT NULL OR j.role IS NOT NULL THEN
        RETURN NULL;
    END IF;
    SELECT coalesce((p.spec->'repetitions'->>'max')::int, 1) INTO rmax FROM plans p
    WHERE p.id = j.plan_id AND p.spec->>'noise' = 'repeat' AND NOT p.cancelled;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    why := hv_result_noise(j.id, j.attempt);
    IF why IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM hv_plan_lock(j.plan_id);
    SELECT count(*) INTO n FROM jobs x
    WHERE x.plan_id = j.plan_id AND x.config_id = j.config_id AND x.workload_id = j.workload_id
      AND x.target_name = j.target_name AND x.repetition = j.repetition;
    IF n >= rmax THEN
        RETURN NULL;
    END IF;
    UPDATE results SET set_aside = why
    WHERE job_id = j.id AND attempt = j.attempt AND status = 'ok';
    INSERT INTO jobs (plan_id, config_id, workload_id, workload, target_name, repetition,
                      run_order, max_failures, block)
    SELECT j.plan_id, j.config_id, j.workload_id, j.workload, j.target_name, j.repetition,
           max(x.run_order), j.max_failures, j.block
    FROM jobs x WHERE x.plan_id = j.plan_id AND x.repetition = j.repetition;
    RETURN why;
END $$;

CREATE OR REPLACE VIEW hv_round_parts AS
SELECT j.plan_id, c.idx AS config_idx, c.name AS configuration, j.workload_id, j.series_key,
       j.target_name AS target, NULL::bigint AS group_id, false AS grouped, m.name AS metric,
       m.unit, m.higher_is_better, j.workload->>'kind' AS kind,
       coalesce(j.workload->>'engine', 'builtin') AS engine, j.repetition AS round,
       1 AS members, m.value, ARRAY[j.id] AS jobs, ARRAY[m.value] AS member_values,
       coalesce(r.started_at, r.received_at) AS at, r.id AS result_id, r.id AS results_max,
       r.id AS results_sum
FROM jobs j JOIN configurations c ON c.id = j.config_id
JOIN results r ON r.job_id = j.id AND r.attempt = j.attempt AND r.status = 'ok' AND r.set_aside IS NULL
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
      JOIN results r ON r.job_id = j.id AND r.attempt = j.attempt AND r.status = 'ok' AND r.set_aside IS NULL
      JOIN metrics m ON m.result_id = r.id
      WHERE j.status = 'done' AND j.role IS DISTINCT FROM 'server'
        AND j.group_id IS NOT NULL) y
GROUP BY y.plan_id, y.target_name, y.group_id, y.metric, y.cidx, y.cname, y.workload_id,
         y.series_key, y.repetition;
