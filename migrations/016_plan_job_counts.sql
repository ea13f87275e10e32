-- 016_plan_job_counts.sql — a plan's summary kept up to date rather than
-- counted.
--
-- plan_summaries counted every job of a plan on each read: 75-150 ms for a
-- plan of 100,000 jobs, paid by every GET of the plan, every list and every
-- report. The counts and times it gives are now kept per plan and target,
-- changed by the statements that change jobs, in their own transaction
-- (statement triggers over the rows they wrote: one upsert per plan and
-- target a statement touched, however many jobs).
--
-- Why per target and not per plan (006_plan_state.sql): a plan's jobs
-- change state in many transactions at once, and one row per plan would
-- make every claim and result of the plan wait for that row's lock. A
-- target's jobs are claimed by its one worker, one at a time, so its row
-- is written by one transaction at a time but for the lease sweeps, a
-- cancel or a group's abort; those write their rows in (plan, target)
-- order, so two of them never wait for each other in a circle.
--
-- The times are the same as the view counted: started_at the first claim,
-- state_at the last change of status, finished_max the last end. A change
-- that moves them only forward (a claim, an end: every change the job
-- lifecycle makes) is kept with least/greatest; one that moves one back (a
-- retry clears finished_at), moves a job to another plan or target, or a
-- deletion, counts that plan and target's jobs again (its index,
-- jobs_target_plan_idx).
CREATE TABLE plan_job_counts (
    plan_id      bigint NOT NULL REFERENCES plans ON DELETE CASCADE,
    target_name  text NOT NULL,
    total        bigint NOT NULL,
    queued       bigint NOT NULL,
    running      bigint NOT NULL,
    done         bigint NOT NULL,
    failed       bigint NOT NULL,
    cancelled    bigint NOT NULL,
    started_at   timestamptz,
    state_at     timestamptz,
    finished_max timestamptz,
    PRIMARY KEY (plan_id, target_name)
);

-- Counts the jobs of the (plan, target) pairs named again, in (plan,
-- target) order; a pair left without jobs loses its row.
CREATE FUNCTION hv_plan_job_recount(pids bigint[], names text[]) RETURNS void
LANGUAGE sql AS $$
    DELETE FROM plan_job_counts k
    USING (SELECT DISTINCT p, t FROM unnest(pids, names) u(p, t)) u
    WHERE k.plan_id = u.p AND k.target_name = u.t
      AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.plan_id = u.p AND j.target_name = u.t);
    INSERT INTO plan_job_counts AS k (plan_id, target_name, total, queued, running, done,
                                      failed, cancelled, started_at, state_at, finished_max)
    SELECT j.plan_id, j.target_name, count(*),
           count(*) FILTER (WHERE j.status = 'queued'),
           count(*) FILTER (WHERE j.status = 'running'),
           count(*) FILTER (WHERE j.status = 'done'),
           count(*) FILTER (WHERE j.status = 'failed'),
           count(*) FILTER (WHERE j.status = 'cancelled'),
           min(j.first_claimed_at), max(j.state_at), max(j.finished_at)
    FROM (SELECT DISTINCT p, t FROM unnest(pids, names) u(p, t)) u
    JOIN jobs j ON j.plan_id = u.p AND j.target_name = u.t
    GROUP BY j.plan_id, j.target_name
    ORDER BY j.plan_id, j.target_name
    ON CONFLICT (plan_id, target_name) DO UPDATE SET
        total = EXCLUDED.total, queued = EXCLUDED.queued, running = EXCLUDED.running,
        done = EXCLUDED.done, failed = EXCLUDED.failed, cancelled = EXCLUDED.cancelled,
        started_at = EXCLUDED.started_at, state_at = EXCLUDED.state_at,
        finished_max = EXCLUDED.finished_max;
$$;

-- Jobs added: their counts and times, per plan and target.
CREATE FUNCTION hv_plan_job_counts_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO plan_job_counts AS k (plan_id, target_name, total, queued, running, done,
                                      failed, cancelled, started_at, state_at, finished_max)
    SELECT n.plan_id, n.target_name, count(*),
           count(*) FILTER (WHERE n.status = 'queued'),
           count(*) FILTER (WHERE n.status = 'running'),
           count(*) FILTER (WHERE n.status = 'done'),
           count(*) FILTER (WHERE n.status = 'failed'),
           count(*) FILTER (WHERE n.status = 'cancelled'),
           min(n.first_claimed_at), max(n.state_at), max(n.finished_at)
    FROM new_rows n
    GROUP BY n.plan_id, n.target_name
    ORDER BY n.plan_id, n.target_name
    ON CONFLICT (plan_id, target_name) DO UPDATE SET
        total = k.total + EXCLUDED.total, queued = k.queued + EXCLUDED.queued,
        running = k.running + EXCLUDED.running, done = k.done + EXCLUDED.done,
        failed = k.failed + EXCLUDED.failed, cancelled = k.cancelled + EXCLUDED.cancelled,
        started_at = least(k.started_at, EXCLUDED.started_at),
        state_at = greatest(k.state_at, EXCLUDED.state_at),
        finished_max = greatest(k.finished_max, EXCLUDED.finished_max);
    RETURN NULL;
END $$;

-- Jobs changed: each changed job leaves its old status and enters its new
-- one. Updates that change none of what is kept (heartbeats, barriers,
-- run order) write nothing. A trigger with transition tables cannot name
-- columns, so it sees every update and looks first.
CREATE FUNCTION hv_plan_job_counts_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    pids bigint[];
    names text[];
BEGIN
    IF NOT EXISTS (SELECT 1 FROM old_rows o JOIN new_rows n ON n.id = o.id
                   WHERE (o.status, o.plan_id, o.target_name, o.first_claimed_at, o.state_at,
                          o.finished_at) IS DISTINCT FROM
                         (n.status, n.plan_id, n.target_name, n.first_claimed_at, n.state_at,
                          n.finished_at)) THEN
        RETURN NULL;
    END IF;
    WITH ch AS (
        SELECT o.plan_id AS o_plan, o.target_name AS o_target, o.status AS o_status,
               n.plan_id, n.target_name, n.status, n.first_claimed_at, n.state_at, n.finished_at
        FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE (o.status, o.plan_id, o.target_name, o.first_claimed_at, o.state_at,
               o.finished_at) IS DISTINCT FROM
              (n.status, n.plan_id, n.target_name, n.first_claimed_at, n.state_at,
               n.finished_at)),
    d AS (
        SELECT plan_id, target_name, status, 1 AS s, first_claimed_at, state_at, finished_at
        FROM ch
        UNION ALL
        SELECT o_plan, o_target, o_status, -1, NULL, NULL, NULL FROM ch)
    INSERT INTO plan_job_counts AS k (plan_id, target_name, total, queued, running, done,
                                      failed, cancelled, started_at, state_at, finished_max)
    SELECT d.plan_id, d.target_name, sum(d.s),
           coalesce(sum(d.s) FILTER (WHERE d.status = 'queued'), 0),
           coalesce(sum(d.s) FILTER (WHERE d.status = 'running'), 0),
           coalesce(sum(d.s) FILTER (WHERE d.status = 'done'), 0),
           coalesce(sum(d.s) FILTER (WHERE d.status = 'failed'), 0),
           coalesce(sum(d.s) FILTER (WHERE d.status = 'cancelled'), 0),
           min(d.first_claimed_at), max(d.state_at), max(d.finished_at)
    FROM d
    GROUP BY d.plan_id, d.target_name
    ORDER BY d.plan_id, d.target_name
    ON CONFLICT (plan_id, target_name) DO UPDATE SET
        total = k.total + EXCLUDED.total, queued = k.queued + EXCLUDED.queued,
        running = k.running + EXCLUDED.running, done = k.done + EXCLUDED.done,
        failed = k.failed + EXCLUDED.failed, cancelled = k.cancelled + EXCLUDED.cancelled,
        started_at = least(k.started_at, EXCLUDED.started_at),
        state_at = greatest(k.state_at, EXCLUDED.state_at),
        finished_max = greatest(k.finished_max, EXCLUDED.finished_max);
    -- A time moved back, or a job moved: count those pairs again.
    SELECT array_agg(x.p), array_agg(x.t) INTO pids, names FROM (
        SELECT o.plan_id AS p, o.target_name AS t FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE n.plan_id <> o.plan_id OR n.target_name <> o.target_name
           OR (o.first_claimed_at IS NOT NULL
               AND (n.first_claimed_at IS NULL OR n.first_claimed_at > o.first_claimed_at))
           OR (o.state_at IS NOT NULL AND (n.state_at IS NULL OR n.state_at < o.state_at))
           OR (o.finished_at IS NOT NULL
               AND (n.finished_at IS NULL OR n.finished_at < o.finished_at))
        GROUP BY 1, 2) x;
    IF pids IS NOT NULL THEN
        PERFORM hv_plan_job_recount(pids, names);
    END IF;
    RETURN NULL;
END $$;

-- Jobs deleted (a plan's deletion cascades here): their pairs are counted
-- again, which drops the rows of pairs left without jobs.
CREATE FUNCTION hv_plan_job_counts_delete() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    pids bigint[];
    names text[];
BEGIN
    SELECT array_agg(x.p), array_agg(x.t) INTO pids, names
    FROM (SELECT DISTINCT o.plan_id AS p, o.target_name AS t FROM old_rows o) x;
    IF pids IS NOT NULL THEN
        PERFORM hv_plan_job_recount(pids, names);
    END IF;
    RETURN NULL;
END $$;

-- No job changes while the triggers are added and the counts taken.
LOCK TABLE jobs IN SHARE ROW EXCLUSIVE MODE;

CREATE TRIGGER jobs_counts_insert
    AFTER INSERT ON jobs REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION hv_plan_job_counts_insert();
CREATE TRIGGER jobs_counts_update
    AFTER UPDATE ON jobs REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION hv_plan_job_counts_update();
CREATE TRIGGER jobs_counts_delete
    AFTER DELETE ON jobs REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION hv_plan_job_counts_delete();

INSERT INTO plan_job_counts (plan_id, target_name, total, queued, running, done, failed,
                             cancelled, started_at, state_at, finished_max)
SELECT plan_id, target_name, count(*),
       count(*) FILTER (WHERE status = 'queued'),
       count(*) FILTER (WHERE status = 'running'),
       count(*) FILTER (WHERE status = 'done'),
       count(*) FILTER (WHERE status = 'failed'),
       count(*) FILTER (WHERE status = 'cancelled'),
       min(first_claimed_at), max(state_at), max(finished_at)
FROM jobs GROUP BY plan_id, target_name;

-- The view of 007_tuning.sql, its columns unchanged, read from the kept
-- counts: a few rows per plan (one per target) instead of its jobs.
CREATE OR REPLACE VIEW plan_summaries AS
SELECT p.id, p.name, p.spec, p.seed, p.cancelled, p.created_at, p.updated_at,
       c.total, c.queued, c.running, c.done, c.failed, c.cancelled_jobs,
       CASE
           WHEN p.cancelled THEN 'cancelled'
           WHEN c.total > 0 AND c.done = c.total THEN 'done'
           WHEN c.total > 0 AND c.queued + c.running = 0 THEN 'failed'
           WHEN c.running + c.done + c.failed > 0 THEN 'running'
           ELSE 'queued'
       END AS status,
       p.cancelled_at,
       c.started_at,
       c.state_at,
       c.finished_max,
       p.waiting,
       ARRAY(SELECT n FROM unnest(c.queued_targets) AS n
             WHERE NOT EXISTS (SELECT 1 FROM targets t WHERE t.name = n)
             ORDER BY n) AS unregistered,
       p.adaptive
FROM plans p
CROSS JOIN LATERAL (
    SELECT coalesce(sum(k.total), 0)::bigint AS total,
           coalesce(sum(k.queued), 0)::bigint AS queued,
           coalesce(sum(k.running), 0)::bigint AS running,
           coalesce(sum(k.done), 0)::bigint AS done,
           coalesce(sum(k.failed), 0)::bigint AS failed,
           coalesce(sum(k.cancelled), 0)::bigint AS cancelled_jobs,
           min(k.started_at) AS started_at,
           max(k.state_at) AS state_at,
           max(k.finished_max) AS finished_max,
           array_agg(k.target_name ORDER BY k.target_name)
               FILTER (WHERE k.queued > 0) AS queued_targets
    FROM plan_job_counts k WHERE k.plan_id = p.id
) c;

-- A plan event's payload (011_webhooks.sql) is built by a row trigger of
-- the statement that ended or started the plan, before the statement's
-- own changes reach the kept counts: it counts the plan's jobs itself, as
-- the view did (only when a plan starts or ends).
CREATE OR REPLACE FUNCTION hv_webhook_plan(pid bigint) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object('plan', jsonb_build_object('id', p.id, 'name', p.name,
        'status', CASE
            WHEN p.cancelled THEN 'cancelled'
            WHEN c.total > 0 AND c.done = c.total THEN 'done'
            WHEN c.total > 0 AND c.queued + c.running = 0 THEN 'failed'
            WHEN c.running + c.done + c.failed > 0 THEN 'running'
            ELSE 'queued' END,
        'host', p.spec->'targets'->'host', 'jobs', jsonb_build_object(
        'total', c.total, 'done', c.done, 'failed', c.failed, 'cancelled', c.cancelled)))
    FROM plans p CROSS JOIN LATERAL (
        SELECT count(*) AS total,
               count(*) FILTER (WHERE j.status = 'queued') AS queued,
               count(*) FILTER (WHERE j.status = 'running') AS running,
               count(*) FILTER (WHERE j.status = 'done') AS done,
               count(*) FILTER (WHERE j.status = 'failed') AS failed,
               count(*) FILTER (WHERE j.status = 'cancelled') AS cancelled
        FROM jobs j WHERE j.plan_id = p.id) c
    WHERE p.id = pid;
$$;
