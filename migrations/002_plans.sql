-- 002_plans.sql — groups of jobs that start together, target labels,
-- idempotent submission and cancellation.

-- Jobs that must start together (all guests at once; a network server and
-- its clients) share a group.
CREATE TABLE job_groups (
    id        bigserial PRIMARY KEY,
    plan_id   bigint NOT NULL REFERENCES plans ON DELETE CASCADE,
    idx       integer NOT NULL,
    size      integer NOT NULL CHECK (size >= 1),
    start_at  timestamptz,
    UNIQUE (plan_id, idx)
);

ALTER TABLE jobs
    ADD COLUMN group_id bigint REFERENCES job_groups ON DELETE CASCADE,
    ADD COLUMN role text CHECK (role IN ('server', 'client'));
CREATE INDEX jobs_group_idx ON jobs (group_id) WHERE group_id IS NOT NULL;
-- Job listings of a plan go in run order.
CREATE INDEX jobs_plan_order_idx ON jobs (plan_id, run_order, id);
-- "Plans with a job on this target".
CREATE INDEX jobs_target_plan_idx ON jobs (target_name, plan_id);

-- Labels a worker reports for its target (key -> value), used to pick
-- guests by label.
ALTER TABLE targets ADD COLUMN labels jsonb NOT NULL DEFAULT '{}';
CREATE INDEX targets_labels_idx ON targets USING gin (labels);

-- A retried submission with the same Idempotency-Key (per token) returns
-- the first plan; body_sha256 detects a key reused for another plan.
ALTER TABLE plans
    ADD COLUMN token_id bigint REFERENCES tokens,
    ADD COLUMN idempotency_key text,
    ADD COLUMN body_sha256 text,
    ADD COLUMN cancelled_at timestamptz;
CREATE UNIQUE INDEX plans_idempotency_idx ON plans (token_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE INDEX plans_name_idx ON plans (name);

-- The view gains the cancellation time.
CREATE OR REPLACE VIEW plan_summaries AS
SELECT p.id, p.name, p.spec, p.seed, p.cancelled, p.created_at, p.updated_at, c.*,
       CASE
           WHEN p.cancelled THEN 'cancelled'
           WHEN c.total > 0 AND c.done = c.total THEN 'done'
           WHEN c.total > 0 AND c.queued + c.running = 0 THEN 'failed'
           WHEN c.running + c.done + c.failed > 0 THEN 'running'
           ELSE 'queued'
       END AS status,
       p.cancelled_at
FROM plans p
CROSS JOIN LATERAL (
    SELECT count(*) AS total,
           count(*) FILTER (WHERE j.status = 'queued') AS queued,
           count(*) FILTER (WHERE j.status = 'running') AS running,
           count(*) FILTER (WHERE j.status = 'done') AS done,
           count(*) FILTER (WHERE j.status = 'failed') AS failed,
           count(*) FILTER (WHERE j.status = 'cancelled') AS cancelled_jobs
    FROM jobs j WHERE j.plan_id = p.id
) c;
