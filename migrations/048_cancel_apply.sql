-- 048_cancel_apply.sql — a cancelled plan never applies; a result's host
-- samples have one definition.
--
-- Before, a cancel (server/db_plan_cancel.c, server/db_steps.c) left a
-- running apply step alone: when its host worker was lost, the lease's
-- end put it back in the queue, and after the restore step (claimed
-- first) the host worker applied the cancelled plan's block again, took
-- the plan's hold on the host again (hv_plan_hold, 046) and kept it: the
-- host stayed tuned and its later tuning plans waited for good. And only
-- GET /api/v1/jobs/{id}/results joined a result's host telemetry (009) to
-- its samples; GET /api/v1/jobs/{id}/samples left the host.* series out.
--
-- Now:
--   * plan_steps.cancelled marks an apply step that was running when its
--     plan was cancelled: the end of its lease cancels it (it is never
--     queued again), its result is taken (what it changed is recorded, the
--     restore step puts it back) but releases no block. The step claim
--     never hands out an apply step of a cancelled or ended plan, nor a
--     marked one, and a host worker's registration queues no apply step of
--     a cancelled plan again (server/db_workers.c).
--   * The restore step of a cancelled plan is queued at the cancel when
--     any of its apply steps was ever claimed (attempt > 0), else
--     cancelled (the hold was never taken). When it ends, whatever came
--     first, hv_plan_hold releases the host; an apply result that arrives
--     after it ended queues it again and takes the hold again (the host
--     was changed once more).
--   * hv_result_host_samples(rid): the host.* samples of result rid's host
--     telemetry, on the result's axis; both endpoints read them from it.

ALTER TABLE plan_steps ADD COLUMN cancelled boolean NOT NULL DEFAULT false;

-- The host worker's host.* samples of result rid (its telemetry of the
-- same attempt, stored ok): t shifted onto the result's axis, seconds
-- after its started_at (negative before it: the host samples from the
-- claim on).
CREATE FUNCTION hv_result_host_samples(rid bigint)
RETURNS TABLE (metric text, t double precision, value double precision)
LANGUAGE sql STABLE AS $$
    SELECT e->>'metric', (e->>'t')::float8
               + coalesce(extract(epoch FROM tm.t0 - r.started_at)::float8, 0),
           (e->>'value')::float8
    FROM results r
    JOIN telemetry tm ON tm.job_id = r.job_id AND tm.attempt = r.attempt AND tm.status = 'ok'
    CROSS JOIN LATERAL jsonb_array_elements(tm.samples) e
    WHERE r.id = rid;
$$;

-- An apply step running now whose plan was cancelled before: marked as a
-- cancel now would mark it.
UPDATE plan_steps s SET cancelled = true FROM plans p
WHERE p.id = s.plan_id AND p.cancelled AND s.kind = 'apply' AND s.status = 'running';
