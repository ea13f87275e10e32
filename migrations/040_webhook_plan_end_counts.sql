-- 040_webhook_plan_end_counts.sql — a plan's end, for its webhooks, from
-- the kept counts rather than from every job of the plan.
--
-- While a webhook subscription exists, each statement that ends jobs asks,
-- for each of their plans, whether the plan has a job left to run and
-- whether all of them are done (038_webhook_statement_trigger.sql). It
-- counted them in jobs: every job of the plan read again for every batch
-- of results, 10,000 rows a batch in a plan of 10,000 jobs. The same
-- numbers are the plan's kept counts (016_plan_job_counts.sql), which
-- hv_jobs_updated() has already brought up to date for this statement's
-- changes (the jobs_updated trigger fires before jobs_webhooks: triggers
-- fire in name order), a row per target and session. As before, the
-- plan's row is locked first, and the count is a statement of its own,
-- which sees what the transactions that ended the plan's other jobs
-- committed while this one waited for the lock.

CREATE OR REPLACE FUNCTION hv_webhook_jobs_updated() RETURNS trigger
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
        SELECT coalesce(sum(k.queued + k.running), 0), coalesce(sum(k.total - k.done), 0)
          INTO open_jobs, not_done FROM plan_job_count_shards k WHERE k.plan_id = e.plan_id;
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
