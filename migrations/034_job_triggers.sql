-- 034_job_triggers.sql — what every claim and every result paid in
-- statement triggers on jobs, once instead of four times.
--
-- An UPDATE of jobs ran four statement triggers over the same transition
-- tables: the wake-up of queued jobs (003_workers.sql), the wake-up of a
-- plan's other targets when a job ends (009), the kept counts (016) and the
-- history marks (028). Each was a plpgsql call that looked at the changed
-- rows again, and the second counted, on every claim and every end, the
-- plan's queued jobs of other targets in jobs itself: as many rows as the
-- plan had queued (0.16 ms a call in a drain of 50 plans of 600 jobs, a
-- fifth of PostgreSQL's time). Now one trigger looks at the changed rows
-- once, does only what they call for, and asks the kept counts (one row a
-- target of the plan) whether another target has queued jobs.
--
-- The history marks of results and metrics move only for jobs that are
-- done: a history reads done jobs alone, and the job that becomes done
-- moves its target's mark itself. A result's transaction, which writes the
-- result and its metrics before the job becomes done, so moves the mark
-- once instead of three times (each a new version of the one row that
-- every result of the target writes).

CREATE FUNCTION hv_jobs_updated() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    queued_any boolean;
    ended_any boolean;
    counts_moved boolean;
    marked text[];
    pids bigint[];
    names text[];
BEGIN
    SELECT coalesce(bool_or(n.status = 'queued'), false),
           coalesce(bool_or(o.status = 'running' AND n.status <> 'running'), false),
           coalesce(bool_or((o.status, o.plan_id, o.target_name, o.first_claimed_at, o.state_at,
                             o.finished_at) IS DISTINCT FROM
                            (n.status, n.plan_id, n.target_name, n.first_claimed_at, n.state_at,
                             n.finished_at)), false),
           array_remove(array_agg(DISTINCT o.target_name)
                            FILTER (WHERE o.status = 'done' OR n.status = 'done')
                        || array_agg(DISTINCT n.target_name)
                            FILTER (WHERE o.status = 'done' OR n.status = 'done'), NULL)
      INTO queued_any, ended_any, counts_moved, marked
      FROM old_rows o JOIN new_rows n ON n.id = o.id;

    -- The history marks (028_history_marks.sql): a done job updated
    -- (whatever changed) or a job becoming done; the old and the new target.
    -- First, as the four triggers did: rows are locked marks, then counts.
    IF cardinality(marked) > 0 THEN
        PERFORM history_mark_move(marked);
    END IF;

    -- The kept counts (016_plan_job_counts.sql): each changed job leaves
    -- its old status and enters its new one.
    IF counts_moved THEN
        WITH ch AS (
            SELECT o.plan_id AS o_plan, o.target_name AS o_target, o.status AS o_status,
                   n.plan_id, n.target_name, n.status, n.first_claimed_at, n.state_at,
                   n.finished_at
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
    END IF;

    -- Workers waiting for work (003_workers.sql): jobs queued, or a job
    -- ended while its plan has queued jobs on another target, which may
    -- now run (009_one_job_per_hypervisor.sql).
    IF queued_any OR (ended_any AND EXISTS (
            SELECT 1 FROM old_rows o JOIN new_rows n ON n.id = o.id
            JOIN plan_job_counts k ON k.plan_id = n.plan_id
             AND k.target_name <> n.target_name AND k.queued > 0
            WHERE o.status = 'running' AND n.status <> 'running')) THEN
        PERFORM pg_notify('hv_jobs', '');
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION history_mark_results() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'DELETE' THEN
        PERFORM history_mark_move(ARRAY(SELECT DISTINCT j.target_name FROM new_rows n
                                          JOIN jobs j ON j.id = n.job_id
                                         WHERE j.status = 'done'));
    END IF;
    IF TG_OP <> 'INSERT' THEN
        PERFORM history_mark_move(ARRAY(SELECT DISTINCT j.target_name FROM old_rows o
                                          JOIN jobs j ON j.id = o.job_id
                                         WHERE j.status = 'done'));
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION history_mark_metrics() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'DELETE' THEN
        PERFORM history_mark_move(ARRAY(SELECT DISTINCT j.target_name FROM new_rows n
                                          JOIN results r ON r.id = n.result_id
                                          JOIN jobs j ON j.id = r.job_id
                                         WHERE j.status = 'done'));
    END IF;
    IF TG_OP <> 'INSERT' THEN
        PERFORM history_mark_move(ARRAY(SELECT DISTINCT j.target_name FROM old_rows o
                                          JOIN results r ON r.id = o.result_id
                                          JOIN jobs j ON j.id = r.job_id
                                         WHERE j.status = 'done'));
    END IF;
    RETURN NULL;
END $$;

DROP TRIGGER jobs_update_notify ON jobs;
DROP TRIGGER jobs_ended_notify ON jobs;
DROP TRIGGER jobs_counts_update ON jobs;
DROP TRIGGER history_mark_jobs_upd ON jobs;
DROP FUNCTION hv_notify_jobs_ended();
DROP FUNCTION hv_plan_job_counts_update();

CREATE TRIGGER jobs_updated
    AFTER UPDATE ON jobs REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION hv_jobs_updated();
