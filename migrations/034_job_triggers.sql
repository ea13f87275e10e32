-- 034_job_triggers.sql — what every claim and every result paid in
-- statement triggers on jobs, and the rows they took turns on.
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
--
-- The kept counts of a plan and target (016_plan_job_counts.sql) and the
-- history mark of a target (028_history_marks.sql) were one row each, which
-- every claim and every result of that target updated and held locked
-- until its commit was on disk. Workers of one target in several sessions
-- (several server threads, several servers) therefore committed one after
-- the other: in a drain of one target through two servers most sessions
-- were found waiting for another's transaction. Each is now a set of
-- shard rows: a session adds its changes to the shard of its backend
-- (pg_backend_pid() % 64), and readers sum the shards.
--
-- plan_job_counts keeps its name and columns as a view that sums the
-- shards of plan_job_count_shards per plan and target, so every reader
-- reads what it read; a condition on plan_id or target_name goes into the
-- view's grouping, so a reader still reads only its plan's rows. The
-- history marks are read as the sum of a target's shards
-- (server/db_history.c).

-- No job changes while the table changes shape.
LOCK TABLE jobs IN SHARE ROW EXCLUSIVE MODE;

ALTER TABLE plan_job_counts RENAME TO plan_job_count_shards;
ALTER TABLE plan_job_count_shards ADD COLUMN shard integer NOT NULL DEFAULT 0;
ALTER TABLE plan_job_count_shards DROP CONSTRAINT plan_job_counts_pkey;
ALTER TABLE plan_job_count_shards ADD PRIMARY KEY (plan_id, target_name, shard);

CREATE VIEW plan_job_counts AS
SELECT plan_id, target_name,
       sum(total)::bigint AS total, sum(queued)::bigint AS queued,
       sum(running)::bigint AS running, sum(done)::bigint AS done,
       sum(failed)::bigint AS failed, sum(cancelled)::bigint AS cancelled,
       min(started_at) AS started_at, max(state_at) AS state_at,
       max(finished_max) AS finished_max
FROM plan_job_count_shards
GROUP BY plan_id, target_name;

-- The view of 022_fleet_plans.sql, unchanged but for reading the counts
-- of a parent's children one child at a time (a join on the grouped view
-- would sum every plan's shards).
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
       p.adaptive,
       p.parent_id,
       CASE WHEN p.parent_id IS NOT NULL AND NOT p.cancelled AND c.queued > 0
                 AND c.running = 0 AND NOT hv_plan_admitted(p.id)
            THEN 'waiting for a slot: max_parallel_hosts='
                 || (SELECT q.max_parallel_hosts FROM plans q WHERE q.id = p.parent_id)
       END AS slot_wait
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
    FROM (SELECT * FROM plan_job_counts k0 WHERE k0.plan_id = p.id
          UNION ALL
          SELECT k1.* FROM plans ch
          CROSS JOIN LATERAL (SELECT * FROM plan_job_counts k2 WHERE k2.plan_id = ch.id) k1
          WHERE ch.parent_id = p.id) k
) c;

-- Counts the jobs of the (plan, target) pairs named again into one shard,
-- in (plan, target) order; a pair left without jobs loses its rows.
CREATE OR REPLACE FUNCTION hv_plan_job_recount(pids bigint[], names text[]) RETURNS void
LANGUAGE sql AS $$
    DELETE FROM plan_job_count_shards k
    USING (SELECT DISTINCT p, t FROM unnest(pids, names) u(p, t)) u
    WHERE k.plan_id = u.p AND k.target_name = u.t;
    INSERT INTO plan_job_count_shards AS k (plan_id, target_name, shard, total, queued, running,
                                            done, failed, cancelled, started_at, state_at,
                                            finished_max)
    SELECT j.plan_id, j.target_name, 0, count(*),
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
    ON CONFLICT (plan_id, target_name, shard) DO UPDATE SET
        total = EXCLUDED.total, queued = EXCLUDED.queued, running = EXCLUDED.running,
        done = EXCLUDED.done, failed = EXCLUDED.failed, cancelled = EXCLUDED.cancelled,
        started_at = EXCLUDED.started_at, state_at = EXCLUDED.state_at,
        finished_max = EXCLUDED.finished_max;
$$;

-- Jobs added: their counts and times, per plan and target, in the
-- session's shard.
CREATE OR REPLACE FUNCTION hv_plan_job_counts_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO plan_job_count_shards AS k (plan_id, target_name, shard, total, queued, running,
                                            done, failed, cancelled, started_at, state_at,
                                            finished_max)
    SELECT n.plan_id, n.target_name, pg_backend_pid() % 64, count(*),
           count(*) FILTER (WHERE n.status = 'queued'),
           count(*) FILTER (WHERE n.status = 'running'),
           count(*) FILTER (WHERE n.status = 'done'),
           count(*) FILTER (WHERE n.status = 'failed'),
           count(*) FILTER (WHERE n.status = 'cancelled'),
           min(n.first_claimed_at), max(n.state_at), max(n.finished_at)
    FROM new_rows n
    GROUP BY n.plan_id, n.target_name
    ORDER BY n.plan_id, n.target_name
    ON CONFLICT (plan_id, target_name, shard) DO UPDATE SET
        total = k.total + EXCLUDED.total, queued = k.queued + EXCLUDED.queued,
        running = k.running + EXCLUDED.running, done = k.done + EXCLUDED.done,
        failed = k.failed + EXCLUDED.failed, cancelled = k.cancelled + EXCLUDED.cancelled,
        started_at = least(k.started_at, EXCLUDED.started_at),
        state_at = greatest(k.state_at, EXCLUDED.state_at),
        finished_max = greatest(k.finished_max, EXCLUDED.finished_max);
    RETURN NULL;
END $$;

-- The one trigger on an UPDATE of jobs, adding to the session's shard.
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
    IF queued_any OR (ended_any AND EXISTS (
            SELECT 1 FROM old_rows o JOIN new_rows n ON n.id = o.id
            WHERE o.status = 'running' AND n.status <> 'running'
              AND EXISTS (SELECT 1 FROM plan_job_counts k WHERE k.plan_id = n.plan_id
                          AND k.target_name <> n.target_name AND k.queued > 0))) THEN
        PERFORM pg_notify('hv_jobs', '');
    END IF;
    RETURN NULL;
END $$;

-- Moves the marks of the targets of those of the jobs named that are done.
CREATE FUNCTION history_mark_done_jobs(ids bigint[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM history_mark_move(ARRAY(SELECT DISTINCT j.target_name FROM jobs j
                                     WHERE j.id = ANY (ids) AND j.status = 'done'));
END $$;

CREATE OR REPLACE FUNCTION history_mark_results() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'DELETE' THEN
        PERFORM history_mark_done_jobs(ARRAY(SELECT n.job_id FROM new_rows n));
    END IF;
    IF TG_OP <> 'INSERT' THEN
        PERFORM history_mark_done_jobs(ARRAY(SELECT o.job_id FROM old_rows o));
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION history_mark_metrics() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'DELETE' THEN
        PERFORM history_mark_done_jobs(ARRAY(SELECT r.job_id FROM new_rows n
                                             JOIN results r ON r.id = n.result_id));
    END IF;
    IF TG_OP <> 'INSERT' THEN
        PERFORM history_mark_done_jobs(ARRAY(SELECT r.job_id FROM old_rows o
                                             JOIN results r ON r.id = o.result_id));
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

-- The history marks: a shard row per target and session; a target's mark
-- is the sum of its shards, which every move makes larger.
ALTER TABLE history_marks ADD COLUMN shard integer NOT NULL DEFAULT 0;
ALTER TABLE history_marks DROP CONSTRAINT history_marks_pkey;
ALTER TABLE history_marks ADD PRIMARY KEY (target_name, shard);

CREATE OR REPLACE FUNCTION history_mark_move(names text[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF coalesce(cardinality(names), 0) = 0 THEN
        RETURN;
    END IF;
    INSERT INTO history_marks AS h (target_name, shard, mark)
    SELECT DISTINCT x, pg_backend_pid() % 64, 1 FROM unnest(names) AS x WHERE x IS NOT NULL
    ORDER BY 1
    ON CONFLICT (target_name, shard) DO UPDATE SET mark = h.mark + 1;
END $$;
