-- 010_telemetry.sql — host telemetry of guest jobs: what the host worker
-- of a guest's domain sampled (host CPU, load, the domain's vCPU, block
-- and interface counters) while an attempt of the guest's job ran.
-- One row per (job, attempt), uploaded once after the attempt ended; its
-- samples are on the row's own axis (t seconds after t0) and are shifted
-- onto the result's axis (seconds after results.started_at) when read.
-- A row with status 'missing' says why the host could not sample.
CREATE TABLE telemetry (
    job_id         bigint NOT NULL REFERENCES jobs ON DELETE CASCADE,
    attempt        integer NOT NULL,
    worker_id      bigint NOT NULL REFERENCES workers,
    host_target_id bigint NOT NULL REFERENCES targets,
    domain         text NOT NULL,
    status         text NOT NULL CHECK (status IN ('ok', 'missing')),
    reason         text,
    t0             timestamptz,
    samples        jsonb NOT NULL DEFAULT '[]',
    observed       jsonb NOT NULL DEFAULT '{}',
    received_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, attempt)
);
