-- 006_plan_state.sql — when a plan started, when it last changed, when it
-- finished, and what it waits for.
--
-- Jobs change state in one-statement claims, results, releases and lease
-- expiries, many at once on one plan. Writing the plan's row on each of
-- those would make every claim of a plan queue behind the others for that
-- row's lock (and take it while holding a job's lock, the opposite order
-- of a cancel). So each job keeps its own times, stamped by a BEFORE
-- trigger on the row the statement writes anyway, and the plan's times are
-- read from its jobs in the same pass that counts them (plan_summaries).

-- When the job last changed status, and when it was first claimed. Rows
-- from before this migration keep NULL: their history is unknown.
ALTER TABLE jobs
    ADD COLUMN state_at timestamptz,
    ADD COLUMN first_claimed_at timestamptz;
ALTER TABLE jobs ALTER COLUMN state_at SET DEFAULT now();

-- Runs only for rows whose status changes (the WHEN is checked before the
-- function is called; heartbeats and barrier updates, which do not set
-- status, do not even get there), and only assigns two fields of the row
-- being written: no other row is read, written or locked.
CREATE FUNCTION hv_job_state_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.state_at := now();
    IF NEW.status = 'running' AND NEW.first_claimed_at IS NULL THEN
        NEW.first_claimed_at := now();
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER jobs_state_at
    BEFORE UPDATE OF status ON jobs
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION hv_job_state_at();

-- A state the plan waits in, set by whatever holds it ({"reason", "since",
-- "detail"}: an operator's pause, a drain). NULL when nothing does; the API
-- then derives one from the jobs (targets that never registered).
ALTER TABLE plans
    ADD COLUMN waiting jsonb
    CHECK (waiting IS NULL OR (jsonb_typeof(waiting -> 'reason') = 'string'
                               AND jsonb_typeof(waiting -> 'since') = 'string'));

-- The view gains, after its old columns: when the first job was claimed,
-- when a job last changed status, and the targets of queued jobs that no
-- worker ever registered.
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
             ORDER BY n) AS unregistered
FROM plans p
CROSS JOIN LATERAL (
    SELECT count(*) AS total,
           count(*) FILTER (WHERE j.status = 'queued') AS queued,
           count(*) FILTER (WHERE j.status = 'running') AS running,
           count(*) FILTER (WHERE j.status = 'done') AS done,
           count(*) FILTER (WHERE j.status = 'failed') AS failed,
           count(*) FILTER (WHERE j.status = 'cancelled') AS cancelled_jobs,
           min(j.first_claimed_at) AS started_at,
           max(j.state_at) AS state_at,
           max(j.finished_at) AS finished_max,
           array_agg(DISTINCT j.target_name) FILTER (WHERE j.status = 'queued') AS queued_targets
    FROM jobs j WHERE j.plan_id = p.id
) c;
