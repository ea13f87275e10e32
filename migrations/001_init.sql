-- 001_init.sql — the first schema of hvbench.
--
-- Applied once by `hvbench-server migrate`, inside a transaction, under an
-- advisory lock; recorded in hv_schema_migrations.

-- API tokens. Only the SHA-256 of a token is stored.
CREATE TABLE tokens (
    id          bigserial PRIMARY KEY,
    name        text NOT NULL UNIQUE,
    role        text NOT NULL CHECK (role IN ('admin', 'submit', 'worker', 'read')),
    hash        bytea NOT NULL UNIQUE,
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);

-- Machines where tests run: hosts and guests, with the facts their worker
-- reported and a fingerprint of the facts that matter for performance.
CREATE TABLE targets (
    id            bigserial PRIMARY KEY,
    name          text NOT NULL UNIQUE,
    kind          text NOT NULL CHECK (kind IN ('host', 'guest')),
    facts         jsonb NOT NULL DEFAULT '{}',
    fingerprint   text,
    dmi_uuid      text,
    registered_at timestamptz NOT NULL DEFAULT now(),
    last_seen     timestamptz NOT NULL DEFAULT now()
);

-- Submitted plans. spec is the normalised plan; the status the API shows
-- is derived from the jobs, except for cancellation which is recorded here.
CREATE TABLE plans (
    id          bigserial PRIMARY KEY,
    name        text NOT NULL,
    spec        jsonb NOT NULL,
    seed        bigint NOT NULL,
    cancelled   boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX plans_created_idx ON plans (created_at DESC, id DESC);

-- One combination of factor levels of a plan.
CREATE TABLE configurations (
    id       bigserial PRIMARY KEY,
    plan_id  bigint NOT NULL REFERENCES plans ON DELETE CASCADE,
    idx      integer NOT NULL,
    name     text NOT NULL,
    levels   jsonb NOT NULL DEFAULT '{}',
    UNIQUE (plan_id, idx)
);

-- One workload run on one target under one configuration, one repetition.
CREATE TABLE jobs (
    id           bigserial PRIMARY KEY,
    plan_id      bigint NOT NULL REFERENCES plans ON DELETE CASCADE,
    config_id    bigint NOT NULL REFERENCES configurations ON DELETE CASCADE,
    workload_id  text NOT NULL,
    workload     jsonb NOT NULL,
    target_name  text NOT NULL,
    repetition   integer NOT NULL,
    run_order    integer NOT NULL,
    status       text NOT NULL DEFAULT 'queued'
                 CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
    -- attempt counts claims (a result names its attempt); failures counts
    -- attempts lost to expired leases or errors, up to max_failures.
    attempt      integer NOT NULL DEFAULT 0,
    failures     integer NOT NULL DEFAULT 0,
    max_failures integer NOT NULL DEFAULT 3,
    target_id    bigint REFERENCES targets,
    lease_until  timestamptz,
    claimed_at   timestamptz,
    finished_at  timestamptz,
    error        text
);
CREATE INDEX jobs_plan_idx ON jobs (plan_id);
-- The claim scans queued jobs of one target in run order.
CREATE INDEX jobs_queue_idx ON jobs (target_name, plan_id, run_order) WHERE status = 'queued';
-- Lease expiry scans running jobs.
CREATE INDEX jobs_lease_idx ON jobs (lease_until) WHERE status = 'running';

-- One uploaded result per (job, attempt).
CREATE TABLE results (
    id          bigserial PRIMARY KEY,
    job_id      bigint NOT NULL REFERENCES jobs ON DELETE CASCADE,
    attempt     integer NOT NULL,
    status      text NOT NULL CHECK (status IN ('ok', 'error')),
    error       text,
    started_at  timestamptz,
    finished_at timestamptz,
    observed    jsonb NOT NULL DEFAULT '{}',
    raw         text,
    received_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (job_id, attempt)
);

-- Summary metrics of a result.
CREATE TABLE metrics (
    result_id        bigint NOT NULL REFERENCES results ON DELETE CASCADE,
    name             text NOT NULL,
    value            double precision NOT NULL,
    unit             text NOT NULL DEFAULT '',
    higher_is_better boolean NOT NULL DEFAULT true,
    PRIMARY KEY (result_id, name)
);

-- Per-second samples of a result, loaded with COPY.
CREATE TABLE samples (
    result_id  bigint NOT NULL REFERENCES results ON DELETE CASCADE,
    metric     text NOT NULL,
    t          double precision NOT NULL,
    value      double precision NOT NULL
);
CREATE INDEX samples_result_idx ON samples (result_id);

-- A plan with its job counts and derived status, as the API shows it.
-- LATERAL keeps the counting to the plans a query actually returns.
CREATE VIEW plan_summaries AS
SELECT p.id, p.name, p.spec, p.seed, p.cancelled, p.created_at, p.updated_at, c.*,
       CASE
           WHEN p.cancelled THEN 'cancelled'
           WHEN c.total > 0 AND c.done = c.total THEN 'done'
           WHEN c.total > 0 AND c.queued + c.running = 0 THEN 'failed'
           WHEN c.running + c.done + c.failed > 0 THEN 'running'
           ELSE 'queued'
       END AS status
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
