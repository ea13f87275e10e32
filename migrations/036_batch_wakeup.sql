-- 036_batch_wakeup.sql — the wake-up question of hv_jobs_updated() asked
-- once for each plan and target among the jobs a statement ended.
--
-- Since a server ends the jobs of many results in one statement
-- (server/batch.c), the question of 035, whether a plan of an ended job
-- has queued jobs on another target, was asked once for each job: each
-- time an index scan over every shard of the plan's kept counts (up to 64
-- a target, most of them updated often), some 0.05 ms a job. The jobs of a
-- batch mostly share their plan and target; the question is now asked of
-- the distinct pairs.

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
    -- is made once; the shards are read by their primary key, once for
    -- each plan and target among the ended jobs.
    IF queued_any THEN
        PERFORM pg_notify('hv_jobs', '');
    ELSIF ended_any THEN
        IF EXISTS (
                SELECT 1 FROM (SELECT DISTINCT n.plan_id, n.target_name
                               FROM old_rows o JOIN new_rows n ON n.id = o.id
                               WHERE o.status = 'running' AND n.status <> 'running') e
                WHERE EXISTS (SELECT 1 FROM plan_job_count_shards k
                              WHERE k.plan_id = e.plan_id AND k.target_name <> e.target_name
                              GROUP BY k.target_name HAVING sum(k.queued) > 0)) THEN
            PERFORM pg_notify('hv_jobs', '');
        END IF;
    END IF;
    RETURN NULL;
END $$;
