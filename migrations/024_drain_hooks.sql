-- 024_drain_hooks.sql — a plan's drain hooks: before_host and after_host.
--
-- A plan may name hooks (spec->'hooks'): before_host drains its host from
-- the site's scheduler before anything of the plan runs there, after_host
-- returns it once the plan ended, whatever the outcome (done, failed or
-- cancelled). Each is a step of the plan on its host (plan_steps, kinds
-- before_host and after_host): a "url" hook is called by the server
-- (server/hooks.c), a "local" one is claimed and run by the host's worker
-- like an apply step. While before_host has not succeeded, none of the
-- plan's jobs and steps is claimable; when it failed, the plan's queued
-- jobs fail with its answer. after_host waits until no job and no other
-- step of the plan is open.
ALTER TABLE plan_steps DROP CONSTRAINT plan_steps_kind_check;
ALTER TABLE plan_steps ADD CONSTRAINT plan_steps_kind_check
    CHECK (kind IN ('apply', 'restore', 'before_host', 'after_host'));
-- The hook as the plan names it: {"url": ...} or {"local": NAME}.
ALTER TABLE plan_steps ADD COLUMN hook jsonb;
-- What the hook answered last: {"http_status", "body"} or {"exit_status",
-- "output"} (the first 1 kB), or {"error"} when there was no answer.
ALTER TABLE plan_steps ADD COLUMN answer jsonb;
-- A url hook that failed is called again at this time (backoff).
ALTER TABLE plan_steps ADD COLUMN not_before timestamptz;
CREATE INDEX plan_steps_hooks_idx ON plan_steps (plan_id) WHERE kind IN ('before_host', 'after_host');
CREATE INDEX plan_steps_url_due_idx ON plan_steps (not_before)
    WHERE status = 'queued' AND hook ? 'url';

-- The claims of jobs and steps (server/db_job_claim.c, db_steps.c) skip a
-- plan whose before_host is waiting, queued or running with a NOT EXISTS
-- of their own, through plan_steps_hooks_idx (a function the planner
-- cannot inline cost 19 µs a row, the anti-join 1.4 µs).

-- A before_host hook ended: the plan no longer waits for it; when it
-- failed, the plan's queued jobs fail with its answer and its apply steps
-- (nothing was applied) and its restore step are cancelled. after_host
-- still runs (the hook may have half-drained the host).
CREATE FUNCTION hv_hook_before_ended(sid bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    s plan_steps%ROWTYPE;
BEGIN
    SELECT * INTO s FROM plan_steps WHERE id = sid;
    UPDATE plans SET waiting = NULL, updated_at = now()
     WHERE id = s.plan_id AND waiting->>'reason' = 'before_host_hook';
    IF s.status = 'failed' THEN
        UPDATE jobs SET status = 'failed', finished_at = now(),
               error = 'the before_host hook failed on ' || s.target_name || ': '
                       || coalesce(s.error, 'no answer')
         WHERE plan_id = s.plan_id AND status = 'queued';
        UPDATE plan_steps SET status = 'cancelled', finished_at = now(), lease_until = NULL
         WHERE plan_id = s.plan_id AND kind IN ('apply', 'restore')
           AND status IN ('waiting', 'queued', 'waiting_for_operator');
        UPDATE plans SET current_block = NULL WHERE id = s.plan_id;
    END IF;
    PERFORM pg_notify('hv_jobs', '');
END $$;

-- Queues the after_host hooks that are due: their plan has no open job
-- and no other open step. Returns how many. First, a before_host that
-- failed without its result (its lease ran out too often) fails its
-- plan's queued jobs as a reported failure does.
CREATE FUNCTION hv_hooks_after_due() RETURNS bigint
LANGUAGE sql AS $$
    SELECT hv_hook_before_ended(s.id) FROM plan_steps s
     WHERE s.kind = 'before_host' AND s.status = 'failed'
       AND EXISTS (SELECT 1 FROM jobs j WHERE j.plan_id = s.plan_id AND j.status = 'queued');
    WITH due AS (UPDATE plan_steps a SET status = 'queued'
        WHERE a.kind = 'after_host' AND a.status = 'waiting'
          AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.plan_id = a.plan_id
                          AND j.status IN ('queued', 'running'))
          AND NOT EXISTS (SELECT 1 FROM plan_steps o WHERE o.plan_id = a.plan_id
                          AND o.id <> a.id AND o.status IN ('waiting', 'queued', 'running',
                          'waiting_for_operator'))
        RETURNING 1)
    SELECT count(*) FROM due;
$$;
