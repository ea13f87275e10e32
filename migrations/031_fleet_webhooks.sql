-- 031_fleet_webhooks.sql — plan events for a fleet plan's parent.
--
-- A fleet plan's parent (022_fleet_plans.sql) has no jobs of its own, so
-- the job trigger of 011_webhooks.sql never spoke of it. Now: plan.started
-- for the parent when its first child starts, plan.finished or
-- plan.failed (failed when any child did or was cancelled) when its last
-- child ended; the children send theirs as before. Every plan event says
-- its plan's parent_id (null for a plan of its own) and children (the
-- ids of a parent's children, else empty). The parent's row is locked
-- before it is looked at, so of two children ending at once exactly one
-- sends the parent's event.

-- A plan event's payload: a parent's job counts are its children's. The
-- jobs of a plan being cancelled count as cancelled (the cancellation's
-- event is built before they are).
CREATE OR REPLACE FUNCTION hv_webhook_plan(pid bigint) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object('plan', jsonb_build_object('id', p.id, 'name', p.name,
        'status', CASE
            WHEN p.cancelled THEN 'cancelled'
            WHEN c.total > 0 AND c.done = c.total THEN 'done'
            WHEN c.total > 0 AND c.queued + c.running = 0 THEN 'failed'
            WHEN c.running + c.done + c.failed > 0 THEN 'running'
            ELSE 'queued' END,
        'host', p.spec->'targets'->'host', 'parent_id', p.parent_id,
        'children', (SELECT coalesce(jsonb_agg(ch.id ORDER BY ch.id), '[]') FROM plans ch
                     WHERE ch.parent_id = p.id),
        'jobs', jsonb_build_object(
        'total', c.total, 'done', c.done, 'failed', c.failed, 'cancelled', c.cancelled)))
    FROM plans p CROSS JOIN LATERAL (
        SELECT count(*) AS total,
               count(*) FILTER (WHERE j.status = 'queued' AND NOT o.cancelled) AS queued,
               count(*) FILTER (WHERE j.status = 'running' AND NOT o.cancelled) AS running,
               count(*) FILTER (WHERE j.status = 'done') AS done,
               count(*) FILTER (WHERE j.status = 'failed') AS failed,
               count(*) FILTER (WHERE j.status = 'cancelled' OR (o.cancelled
                                AND j.status IN ('queued', 'running'))) AS cancelled
        FROM jobs j JOIN plans o ON o.id = j.plan_id
        WHERE o.id = p.id OR o.parent_id = p.id) c
    WHERE p.id = pid;
$$;

-- The parent's plan.finished or plan.failed once none of its children
-- has a job to run (a cancelled parent's event came from its
-- cancellation).
CREATE FUNCTION hv_webhook_parent_ended(parent bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    q plans%ROWTYPE;
BEGIN
    SELECT * INTO q FROM plans WHERE id = parent FOR UPDATE;
    IF NOT FOUND OR q.cancelled THEN
        RETURN;
    END IF;
    -- A cancelled child's jobs are being cancelled in this transaction.
    IF EXISTS (SELECT 1 FROM plans ch JOIN jobs j ON j.plan_id = ch.id
               WHERE ch.parent_id = parent AND NOT ch.cancelled
                 AND j.status IN ('queued', 'running')) THEN
        RETURN;
    END IF;
    PERFORM hv_webhook_enqueue(CASE WHEN EXISTS (SELECT 1 FROM plans ch WHERE ch.parent_id = parent
            AND (ch.cancelled OR EXISTS (SELECT 1 FROM jobs j WHERE j.plan_id = ch.id
                                         AND j.status <> 'done')))
        THEN 'plan.failed' ELSE 'plan.finished' END, hv_webhook_plan(parent));
END;
$$;

-- The parent's side of a child's job changing state, after the child's
-- own events (011_webhooks.sql's jobs_webhooks fires first: triggers fire
-- in name order): plan.started with the first job claimed in any child,
-- the parent's end once a child has no job left to run.
CREATE FUNCTION hv_webhook_parent_job_trigger() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    c plans%ROWTYPE;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM webhooks WHERE deleted_at IS NULL) THEN
        RETURN NULL;
    END IF;
    SELECT * INTO c FROM plans WHERE id = NEW.plan_id;
    IF c.parent_id IS NULL OR c.cancelled THEN
        RETURN NULL;
    END IF;
    IF OLD.status = 'queued' AND NEW.status = 'running' AND NEW.attempt = 1 THEN
        PERFORM 1 FROM plans WHERE id = c.parent_id AND NOT cancelled FOR UPDATE;
        IF FOUND AND NOT EXISTS (SELECT 1 FROM plans ch JOIN jobs j ON j.plan_id = ch.id
                                 WHERE ch.parent_id = c.parent_id AND j.id <> NEW.id
                                   AND (j.attempt > 0 OR j.status <> 'queued')) THEN
            PERFORM hv_webhook_enqueue('plan.started', hv_webhook_plan(c.parent_id));
        END IF;
    ELSIF OLD.status IN ('queued', 'running') AND NEW.status NOT IN ('queued', 'running')
          AND NOT EXISTS (SELECT 1 FROM jobs WHERE plan_id = NEW.plan_id
                          AND status IN ('queued', 'running')) THEN
        PERFORM hv_webhook_parent_ended(c.parent_id);
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER jobs_webhooks_parent AFTER UPDATE OF status ON jobs
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION hv_webhook_parent_job_trigger();

-- A child cancelled alone (not with its parent) may be the parent's last
-- open child.
CREATE FUNCTION hv_webhook_parent_cancel_trigger() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM hv_webhook_parent_ended(NEW.parent_id);
    RETURN NULL;
END;
$$;
CREATE TRIGGER plans_cancel_webhooks_parent AFTER UPDATE OF cancelled ON plans
    FOR EACH ROW WHEN (NEW.cancelled AND NOT OLD.cancelled AND NEW.parent_id IS NOT NULL)
    EXECUTE FUNCTION hv_webhook_parent_cancel_trigger();
