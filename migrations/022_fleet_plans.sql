-- 022_fleet_plans.sql — fleet plans: one plan run on every host a label
-- selector picks (targets.host = {"label": "pool=batch"}).
--
-- The submitted plan is the parent; it has no jobs of its own. Each
-- matching host gets a child plan (the same spec with targets.host set to
-- that host) whose parent_id names it. At most max_parallel_hosts children
-- of one parent run at a time: a child's jobs are claimable only while
-- fewer than that many of its older siblings still have queued or running
-- jobs (hv_plan_admitted), so the children start in id order as slots
-- free, without anything having to start them.
ALTER TABLE plans
    ADD COLUMN parent_id bigint REFERENCES plans (id) ON DELETE CASCADE,
    ADD COLUMN max_parallel_hosts integer CHECK (max_parallel_hosts IS NULL OR max_parallel_hosts > 0);
CREATE INDEX plans_parent_idx ON plans (parent_id, id) WHERE parent_id IS NOT NULL;

-- The older siblings of child plan pid that still have jobs to run.
CREATE FUNCTION hv_plan_open_siblings(pid bigint) RETURNS bigint LANGUAGE sql STABLE AS $$
    SELECT count(*) FROM plans p JOIN plans s ON s.parent_id = p.parent_id AND s.id < p.id
    WHERE p.id = pid AND NOT s.cancelled
      AND EXISTS (SELECT 1 FROM plan_job_counts k WHERE k.plan_id = s.id
                  AND k.queued + k.running > 0);
$$;

-- Whether plan pid's jobs may be claimed: a plan without a parent always;
-- a child while fewer than its parent's max_parallel_hosts older siblings
-- are open.
CREATE FUNCTION hv_plan_admitted(pid bigint) RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT p.parent_id IS NULL OR q.max_parallel_hosts IS NULL
           OR hv_plan_open_siblings(p.id) < q.max_parallel_hosts
    FROM plans p LEFT JOIN plans q ON q.id = p.parent_id WHERE p.id = pid;
$$;

-- The view of 016_plan_job_counts.sql with, after its columns: the
-- parent's id, and for a child waiting for a slot what it waits for. A
-- parent's counts are its children's.
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
          SELECT k1.* FROM plans ch JOIN plan_job_counts k1 ON k1.plan_id = ch.id
          WHERE ch.parent_id = p.id) k
) c;
