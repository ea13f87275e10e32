-- 005_worker_sessions.sql — each worker process holds a credential of its
-- own, and every job call is checked against the worker that claimed it.
--
-- A worker token (role worker) may serve a whole fleet, so it cannot tell
-- one worker from another. Registration therefore issues a credential per
-- worker process ("hvw_" + 64 hex digits; only its SHA-256 is stored),
-- bound to one target and to the token that registered it: revoking that
-- token ends its workers too. At most one live worker holds a target.
CREATE TABLE workers (
    id           bigserial PRIMARY KEY,
    target_id    bigint NOT NULL REFERENCES targets ON DELETE CASCADE,
    token_id     bigint NOT NULL REFERENCES tokens,
    hash         bytea NOT NULL UNIQUE,
    version      text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_seen    timestamptz NOT NULL DEFAULT now(),
    -- Set when the worker signed off, an admin freed its target, or a new
    -- worker took over a target whose worker had gone silent.
    ended_at     timestamptz,
    ended_reason text
);
CREATE UNIQUE INDEX workers_live_idx ON workers (target_id) WHERE ended_at IS NULL;

-- Which worker claimed which attempt of a job. Only that worker may send
-- the attempt's ready, heartbeat, release and result calls.
CREATE TABLE job_claims (
    job_id     bigint NOT NULL REFERENCES jobs ON DELETE CASCADE,
    attempt    integer NOT NULL,
    worker_id  bigint NOT NULL REFERENCES workers,
    claimed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, attempt)
);

-- The attempt whose lease lapsed, while no newer attempt was claimed: its
-- worker may still deliver the result it finished (e.g. after a database
-- outage that also stopped its heartbeats), unless its group was aborted.
ALTER TABLE jobs ADD COLUMN lapsed_attempt integer;
