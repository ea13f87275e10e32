-- 038_webhook_statement_trigger.sql — plan events of job changes, once a
-- statement.
--
-- Three row triggers sent the plan events of job changes: jobs_webhooks
-- (011_webhooks.sql, 032_claim_costs.sql: a plan's end), jobs_webhooks_started
-- (032: plan.started) and jobs_webhooks_parent (031_fleet_webhooks.sql: a
-- fleet parent's start and end). Each ran for every job that changed state,
-- and each first asked whether any subscription exists: three calls for
-- every job claimed or ended, with or without webhooks. Each also asked
-- about "the plan's other jobs", and when one statement changed several
-- jobs of a plan (a batch of claims or of results) those were rows of the
-- same statement: a plan whose first two jobs were claimed together had no
-- plan.started, and a plan whose last two jobs ended together sent
-- plan.finished twice.
--
-- One statement trigger replaces them. It asks once whether a subscription
-- exists, then looks at the statement's changed rows by plan:
--   * plan.started for a plan whose jobs claimed for the first time are
--     the only jobs of it ever claimed, and its parent's plan.started when
--     no job of any of its children but these was ever claimed;
--   * plan.finished or plan.failed for a plan whose jobs ended and which
--     has no job left to run, then its parent's end (hv_webhook_parent_ended,
--     031) once for each parent.
-- As before, a plan's row is locked before its end is decided (of two
-- transactions ending its last jobs at once exactly one sends the event),
-- a first claim is checked without a lock and only a possible first one
-- takes the lock and looks again, and a cancelled plan's events come from
-- its cancellation. Plans are locked in ascending id order, children
-- before their parents.

DROP TRIGGER jobs_webhooks ON jobs;
DROP TRIGGER jobs_webhooks_started ON jobs;
DROP TRIGGER jobs_webhooks_parent ON jobs;
DROP FUNCTION hv_webhook_job_trigger();
DROP FUNCTION hv_webhook_job_started();
DROP FUNCTION hv_webhook_parent_job_trigger();

CREATE FUNCTION hv_webhook_jobs_updated() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    e record;
    p plans%ROWTYPE;
    open_jobs bigint;
    not_done bigint;
    parents bigint[] := '{}';
BEGIN
    IF NOT EXISTS (SELECT 1 FROM webhooks WHERE deleted_at IS NULL) THEN
        RETURN NULL;
    END IF;

    -- plan.started: ids are the plan's jobs this statement claimed first.
    FOR e IN SELECT n.plan_id, array_agg(n.id) AS ids
             FROM old_rows o JOIN new_rows n ON n.id = o.id
             WHERE o.status = 'queued' AND n.status = 'running' AND n.attempt = 1
             GROUP BY n.plan_id ORDER BY n.plan_id LOOP
        CONTINUE WHEN EXISTS (SELECT 1 FROM jobs WHERE plan_id = e.plan_id AND id <> ALL (e.ids)
                              AND (attempt > 0 OR status <> 'queued'));
        PERFORM 1 FROM plans WHERE id = e.plan_id AND NOT cancelled FOR UPDATE;
        IF FOUND AND NOT EXISTS (SELECT 1 FROM jobs WHERE plan_id = e.plan_id
                                 AND id <> ALL (e.ids)
                                 AND (attempt > 0 OR status <> 'queued')) THEN
            PERFORM hv_webhook_enqueue('plan.started', hv_webhook_plan(e.plan_id));
        END IF;
    END LOOP;

    -- A fleet parent's plan.started: with the first job claimed in any of
    -- its children.
    FOR e IN SELECT c.parent_id, array_agg(n.id) AS ids
             FROM old_rows o JOIN new_rows n ON n.id = o.id JOIN plans c ON c.id = n.plan_id
             WHERE o.status = 'queued' AND n.status = 'running' AND n.attempt = 1
               AND c.parent_id IS NOT NULL AND NOT c.cancelled
             GROUP BY c.parent_id ORDER BY c.parent_id LOOP
        PERFORM 1 FROM plans WHERE id = e.parent_id AND NOT cancelled FOR UPDATE;
        IF FOUND AND NOT EXISTS (SELECT 1 FROM plans ch JOIN jobs j ON j.plan_id = ch.id
                                 WHERE ch.parent_id = e.parent_id AND j.id <> ALL (e.ids)
                                   AND (j.attempt > 0 OR j.status <> 'queued')) THEN
            PERFORM hv_webhook_enqueue('plan.started', hv_webhook_plan(e.parent_id));
        END IF;
    END LOOP;

    -- A plan's end, once for each plan whose jobs ended here.
    FOR e IN SELECT DISTINCT n.plan_id
             FROM old_rows o JOIN new_rows n ON n.id = o.id
             WHERE o.status IN ('queued', 'running') AND n.status NOT IN ('queued', 'running')
             ORDER BY n.plan_id LOOP
        SELECT * INTO p FROM plans WHERE id = e.plan_id FOR UPDATE;
        CONTINUE WHEN NOT FOUND OR p.cancelled;
        SELECT count(*) FILTER (WHERE status IN ('queued', 'running')),
               count(*) FILTER (WHERE status <> 'done')
          INTO open_jobs, not_done FROM jobs WHERE plan_id = e.plan_id;
        IF open_jobs = 0 THEN
            PERFORM hv_webhook_enqueue(CASE WHEN not_done = 0 THEN 'plan.finished'
                                       ELSE 'plan.failed' END, hv_webhook_plan(e.plan_id));
            IF p.parent_id IS NOT NULL AND NOT p.parent_id = ANY (parents) THEN
                parents := parents || p.parent_id;
            END IF;
        END IF;
    END LOOP;

    -- Their parents' ends, each once.
    FOR e IN SELECT x AS parent_id FROM unnest(parents) AS x ORDER BY x LOOP
        PERFORM hv_webhook_parent_ended(e.parent_id);
    END LOOP;
    RETURN NULL;
END $$;

CREATE TRIGGER jobs_webhooks AFTER UPDATE ON jobs
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION hv_webhook_jobs_updated();

-- Every query by plan reads one of the indexes that start with plan_id
-- (jobs_plan_order_idx, jobs_plan_round_idx, jobs_running_plan_idx); the
-- one on plan_id alone only cost each job's two state changes an entry.
DROP INDEX jobs_plan_idx;
