-- 035_trigger_plans.sql — triggers whose statements were planned again on
-- every call: the history marks of results and metrics, and the wake-up of
-- hv_jobs_updated().
--
-- 034_job_triggers.sql had the triggers of results and metrics pass the
-- job ids of their rows to history_mark_done_jobs(ids), whose query
-- (j.id = ANY (ids)) PostgreSQL planned again on every call: a custom plan
-- for each array looked cheaper than the generic one. That was two plans
-- a result, 0.08 ms of PostgreSQL's time for each job drained, for a mark
-- that almost never moves (a result is written before its job is done).
-- Each trigger now joins its transition table to jobs itself, a plan made
-- once per session, and moves the marks only when a job named is done.
--
-- The same befell the wake-up question of hv_jobs_updated() (034): asked
-- as one condition with the trigger's variables (queued_any OR (ended_any
-- AND EXISTS ...)), it was planned anew on each call once the kept counts
-- had grown (a plan folded for ended_any = false looks cheaper), and read
-- the counts through the view plan_job_counts, which groups every shard.
-- In four drains of 10,000 jobs one after the other its share grew from
-- 0.015 to 0.1 ms a call, planning included.

CREATE OR REPLACE FUNCTION history_mark_results() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    names text[];
BEGIN
    IF TG_OP <> 'DELETE' THEN
        names := ARRAY(SELECT DISTINCT j.target_name FROM new_rows n
                       JOIN jobs j ON j.id = n.job_id WHERE j.status = 'done');
    END IF;
    IF TG_OP <> 'INSERT' THEN
        names := coalesce(names, '{}') ||
                 ARRAY(SELECT DISTINCT j.target_name FROM old_rows o
                       JOIN jobs j ON j.id = o.job_id WHERE j.status = 'done');
    END IF;
    IF cardinality(names) > 0 THEN
        PERFORM history_mark_move(names);
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION history_mark_metrics() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    names text[];
BEGIN
    IF TG_OP <> 'DELETE' THEN
        names := ARRAY(SELECT DISTINCT j.target_name FROM new_rows n
                       JOIN results r ON r.id = n.result_id
                       JOIN jobs j ON j.id = r.job_id WHERE j.status = 'done');
    END IF;
    IF TG_OP <> 'INSERT' THEN
        names := coalesce(names, '{}') ||
                 ARRAY(SELECT DISTINCT j.target_name FROM old_rows o
                       JOIN results r ON r.id = o.result_id
                       JOIN jobs j ON j.id = r.job_id WHERE j.status = 'done');
    END IF;
    IF cardinality(names) > 0 THEN
        PERFORM history_mark_move(names);
    END IF;
    RETURN NULL;
END $$;

DROP FUNCTION history_mark_done_jobs(bigint[]);

-- The one trigger on an UPDATE of jobs (034), its wake-up asked in two steps.
CREATE OR REPLACE FUNCTION hv_jobs_updated() RETURNS trigger LANGUAGE plpgsql AS $$
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
        INSERT INTO plan_job_count_shards AS k (plan_id, target_name, shard, total, queued,
                                                running, done, failed, cancelled, started_at,
                                                state_at, finished_max)
        SELECT d.plan_id, d.target_name, pg_backend_pid() % 64, sum(d.s),
               coalesce(sum(d.s) FILTER (WHERE d.status = 'queued'), 0),
               coalesce(sum(d.s) FILTER (WHERE d.status = 'running'), 0),
               coalesce(sum(d.s) FILTER (WHERE d.status = 'done'), 0),
               coalesce(sum(d.s) FILTER (WHERE d.status = 'failed'), 0),
               coalesce(sum(d.s) FILTER (WHERE d.status = 'cancelled'), 0),
               min(d.first_claimed_at), max(d.state_at), max(d.finished_at)
        FROM d
        GROUP BY d.plan_id, d.target_name
        ORDER BY d.plan_id, d.target_name
        ON CONFLICT (plan_id, target_name, shard) DO UPDATE SET
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
    -- The question asked of the ended jobs names no variable, so its plan
    -- is made once; the shards are read by their primary key.
    IF queued_any THEN
        PERFORM pg_notify('hv_jobs', '');
    ELSIF ended_any THEN
        IF EXISTS (
                SELECT 1 FROM old_rows o JOIN new_rows n ON n.id = o.id
                WHERE o.status = 'running' AND n.status <> 'running'
                  AND EXISTS (SELECT 1 FROM plan_job_count_shards k
                              WHERE k.plan_id = n.plan_id AND k.target_name <> n.target_name
                              GROUP BY k.target_name HAVING sum(k.queued) > 0)) THEN
            PERFORM pg_notify('hv_jobs', '');
        END IF;
    END IF;
    RETURN NULL;
END $$;
