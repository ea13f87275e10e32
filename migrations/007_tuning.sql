-- 007_tuning.sql — configurations applied in blocks, apply and restore
-- steps, one tuning plan per host, and the journal of what was changed.
--
-- A plan with factors is a tuning plan. Its jobs are cut into blocks, one
-- per (round, configuration), shuffled per round from the plan's seed.
-- Block k's jobs become claimable only after its apply step succeeded on
-- the plan's host (the host worker applied every level and read it back);
-- the next block's apply step is queued once every job of block k ended;
-- after the last block, on cancel and on failure a restore step puts
-- back what the plan changed.

-- The block of a job of a tuning plan (0-based, in run order); NULL in a
-- plan without factors.
ALTER TABLE jobs ADD COLUMN block integer;
CREATE INDEX jobs_plan_block_idx ON jobs (plan_id, block) WHERE block IS NOT NULL;

-- The host whose settings a tuning plan changes; the block in progress
-- (NULL once the last one ended); whether the plan holds its host (from
-- its first apply step until its restore step ended).
ALTER TABLE plans ADD COLUMN host_name text;
ALTER TABLE plans ADD COLUMN current_block integer;
ALTER TABLE plans ADD COLUMN holds_host boolean NOT NULL DEFAULT false;
-- Whether the current block's apply step succeeded: its jobs may run.
ALTER TABLE plans ADD COLUMN block_ready boolean NOT NULL DEFAULT false;
CREATE INDEX plans_current_block_idx ON plans (id) WHERE current_block IS NOT NULL;

-- Adaptive repetitions (server/db_rounds.h): the decision taken after the
-- plan's latest round, {"rounds", "decision": "more" | "precise" | "max",
-- "ci_pct", "series", "widest": {...}}; NULL before its first round ended.
ALTER TABLE plans ADD COLUMN adaptive jsonb;

-- Apply and restore steps: records of their own, not jobs, so job counts
-- and progress stay about benchmarks. Claimed by the host's worker like
-- jobs (lease, attempt, only the claimer may answer).
CREATE TABLE plan_steps (
    id          bigserial PRIMARY KEY,
    plan_id     bigint NOT NULL REFERENCES plans ON DELETE CASCADE,
    kind        text NOT NULL CHECK (kind IN ('apply', 'restore')),
    block       integer,
    config_id   bigint REFERENCES configurations ON DELETE CASCADE,
    target_name text NOT NULL,
    status      text NOT NULL DEFAULT 'waiting'
                CHECK (status IN ('waiting', 'queued', 'running', 'done', 'failed', 'cancelled')),
    attempt     integer NOT NULL DEFAULT 0,
    failures    integer NOT NULL DEFAULT 0,
    worker_id   bigint REFERENCES workers,
    lease_until timestamptz,
    claimed_at  timestamptz,
    finished_at timestamptz,
    error       text,
    settings    jsonb,
    UNIQUE (plan_id, kind, block)
);
CREATE INDEX plan_steps_queue_idx ON plan_steps (target_name, plan_id, block)
    WHERE status = 'queued';
CREATE INDEX plan_steps_lease_idx ON plan_steps (lease_until) WHERE status = 'running';

-- What a plan changed on a target, from what to what, and when it was put
-- back: the server's copy of the host worker's journal
-- (GET /api/v1/targets/{id}/changes).
CREATE TABLE target_changes (
    id          bigserial PRIMARY KEY,
    target_name text NOT NULL,
    plan_id     bigint REFERENCES plans ON DELETE SET NULL,
    step_id     bigint REFERENCES plan_steps ON DELETE SET NULL,
    factor      text NOT NULL,
    scope       text NOT NULL,
    object      text NOT NULL,
    from_value  text,
    to_value    text,
    changed_at  timestamptz NOT NULL DEFAULT now(),
    restored_at timestamptz,
    restored_by bigint REFERENCES plan_steps ON DELETE SET NULL
);
CREATE INDEX target_changes_target_idx ON target_changes (target_name, changed_at DESC);

-- A new step in the queue wakes the waiting claims as a job would.
CREATE FUNCTION hv_notify_steps() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM new_rows WHERE status = 'queued') THEN
        PERFORM pg_notify('hv_jobs', '');
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER plan_steps_insert_notify
    AFTER INSERT ON plan_steps REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION hv_notify_steps();
CREATE TRIGGER plan_steps_update_notify
    AFTER UPDATE ON plan_steps REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION hv_notify_steps();

-- The plan as the API shows it gains its adaptive decision (the view of
-- 006_plan_state.sql, with one more column at the end).
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
