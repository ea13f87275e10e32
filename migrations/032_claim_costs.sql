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
-- of one plan queued on it until each committed. A claim can start the
-- plan only when no other job of it was ever claimed: when one was, the
-- claim that started the plan sent plan.started (or will, having taken the
-- lock first), and nothing is left to do or to lock. Only a job that may be
-- the plan's first claim or that ends takes the lock, as before.
CREATE OR REPLACE FUNCTION hv_webhook_job_trigger() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    p plans%ROWTYPE;
    open_jobs bigint;
    not_done bigint;
    starts boolean := OLD.status = 'queued' AND NEW.status = 'running' AND NEW.attempt = 1;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM webhooks WHERE deleted_at IS NULL) THEN
        RETURN NULL;
    END IF;
    IF starts AND EXISTS (SELECT 1 FROM jobs WHERE plan_id = NEW.plan_id AND id <> NEW.id
                          AND (attempt > 0 OR status <> 'queued')) THEN
        RETURN NULL;
    END IF;
    IF NOT starts AND NOT (OLD.status IN ('queued', 'running')
                           AND NEW.status NOT IN ('queued', 'running')) THEN
        RETURN NULL;
    END IF;
    SELECT * INTO p FROM plans WHERE id = NEW.plan_id FOR UPDATE;
    IF p.cancelled THEN
        RETURN NULL;
    END IF;
    IF starts THEN
        IF NOT EXISTS (SELECT 1 FROM jobs WHERE plan_id = NEW.plan_id AND id <> NEW.id
                       AND (attempt > 0 OR status <> 'queued')) THEN
            PERFORM hv_webhook_enqueue('plan.started', hv_webhook_plan(NEW.plan_id));
        END IF;
    ELSE
        SELECT count(*) FILTER (WHERE status IN ('queued', 'running')),
               count(*) FILTER (WHERE status <> 'done')
          INTO open_jobs, not_done FROM jobs WHERE plan_id = NEW.plan_id;
        IF open_jobs = 0 THEN
            PERFORM hv_webhook_enqueue(CASE WHEN not_done = 0 THEN 'plan.finished'
                                       ELSE 'plan.failed' END, hv_webhook_plan(NEW.plan_id));
        END IF;
    END IF;
    RETURN NULL;
END;
$$;
