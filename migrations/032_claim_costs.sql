-- 032_claim_costs.sql — what each claim and each result paid for in
-- triggers without needing it.
--
-- history_mark_move (028_history_marks.sql) is called by the statement
-- triggers of every UPDATE of jobs and every INSERT of results and metrics:
-- a claim, a heartbeat, a result. As an SQL function its INSERT was planned
-- again on each call, also for a claim, which moves no mark (no job of it
-- became done: its list of targets is empty). It is now plpgsql, which
-- keeps the plan, and returns at once for an empty list.
CREATE OR REPLACE FUNCTION history_mark_move(names text[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF coalesce(cardinality(names), 0) = 0 THEN
        RETURN;
    END IF;
    INSERT INTO history_marks AS h (target_name, mark)
    SELECT DISTINCT x, 1 FROM unnest(names) AS x WHERE x IS NOT NULL ORDER BY 1
    ON CONFLICT (target_name) DO UPDATE SET mark = h.mark + 1;
END $$;

-- The webhook trigger of 011_webhooks.sql locked the plan's row on every
-- change of a job's status while any subscription existed, so the claims
-- of one plan queued on it until each committed. It now fires only for a
-- job that ends (its function unchanged: the lock makes exactly one of two
-- last jobs ending at once send the event), and a first claim has a
-- trigger of its own: a claim can start the plan only when no other job of
-- it was ever claimed, and when one was (seen without any lock: that
-- claim committed), the claim that started the plan sent plan.started, so
-- nothing is left to do or to lock. Only a claim that may be the plan's
-- first takes the lock and looks again.
CREATE FUNCTION hv_webhook_job_started() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM webhooks WHERE deleted_at IS NULL)
       OR EXISTS (SELECT 1 FROM jobs WHERE plan_id = NEW.plan_id AND id <> NEW.id
                  AND (attempt > 0 OR status <> 'queued')) THEN
        RETURN NULL;
    END IF;
    PERFORM 1 FROM plans WHERE id = NEW.plan_id AND NOT cancelled FOR UPDATE;
    IF FOUND AND NOT EXISTS (SELECT 1 FROM jobs WHERE plan_id = NEW.plan_id AND id <> NEW.id
                             AND (attempt > 0 OR status <> 'queued')) THEN
        PERFORM hv_webhook_enqueue('plan.started', hv_webhook_plan(NEW.plan_id));
    END IF;
    RETURN NULL;
END $$;

DROP TRIGGER jobs_webhooks ON jobs;
CREATE TRIGGER jobs_webhooks AFTER UPDATE OF status ON jobs
    FOR EACH ROW WHEN (OLD.status IN ('queued', 'running') AND NEW.status NOT IN ('queued', 'running'))
    EXECUTE FUNCTION hv_webhook_job_trigger();
CREATE TRIGGER jobs_webhooks_started AFTER UPDATE OF status ON jobs
    FOR EACH ROW WHEN (OLD.status = 'queued' AND NEW.status = 'running' AND NEW.attempt = 1)
    EXECUTE FUNCTION hv_webhook_job_started();
