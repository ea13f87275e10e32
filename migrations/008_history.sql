-- 008_history.sql — the history of a target's facts, and the change points
-- found in its metrics' histories (GET /api/v1/targets/{id}/history).

-- Every distinct version of a target's facts, with when it was first and
-- last registered. A registration whose facts (without the list of libvirt
-- domains, whose states change with every guest start) and fingerprint
-- equal the latest version's only moves that version's last_seen; any
-- difference starts a new version, also a return to an older one. So the
-- version in force at time T is the latest with first_seen <= T, and a
-- change point can say what changed on the target around it (kernel, QEMU,
-- libvirt, microcode, KVM parameters ...).
CREATE TABLE target_facts (
    id          bigserial PRIMARY KEY,
    target_id   bigint NOT NULL REFERENCES targets ON DELETE CASCADE,
    fingerprint text,
    facts       jsonb NOT NULL,
    first_seen  timestamptz NOT NULL DEFAULT now(),
    last_seen   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX target_facts_target_idx ON target_facts (target_id, first_seen DESC, id DESC);

-- The facts registered before this migration are each target's first
-- version, in force since the target registered.
INSERT INTO target_facts (target_id, fingerprint, facts, first_seen, last_seen)
SELECT id, fingerprint, facts #- '{libvirt,domains}', registered_at, last_seen
FROM targets WHERE facts <> '{}' OR fingerprint IS NOT NULL;

-- A series: one metric of one workload on one target, in each plan's
-- default configuration ('') or in the configurations of one name. A
-- workload is what was run (its kind, engine, params and peer), not the id
-- a plan gave it: jobs.series_key is the MD5 of the job's workload without
-- its names, so series are told apart by a short text, not by comparing
-- JSON row by row.
ALTER TABLE jobs ADD COLUMN series_key text
    GENERATED ALWAYS AS (md5((workload - 'id' - 'workload')::text)) STORED;

-- A series' change points are computed when it is read and kept here with
-- the state of the points they were computed from (count, largest and sum
-- of the result ids), their count and time range: a read finding the same
-- state uses them as they are, and cuts a long series into time buckets
-- over the range kept. The points as the last read answered them (for
-- points_max points at most, in points_state) are kept too: a read whose
-- points are in that state answers them without grouping them again.
CREATE TABLE history_series (
    id            bigserial PRIMARY KEY,
    target_id     bigint NOT NULL REFERENCES targets ON DELETE CASCADE,
    series_key    text NOT NULL,
    workload      jsonb NOT NULL,
    metric        text NOT NULL,
    configuration text NOT NULL DEFAULT '',
    state         text,
    n             bigint,
    first_at      timestamptz,
    last_at       timestamptz,
    scanned_at    timestamptz,
    points_max    integer,
    points_state  text,
    points        text,
    UNIQUE (target_id, series_key, metric, configuration)
);

-- A change point keeps its id while later computations find it again
-- near the same time, so it can be acknowledged once: an acknowledged
-- change point is not reported as new again. One no longer found is kept
-- inactive (with its acknowledgement) in case it comes back.
CREATE TABLE change_points (
    id               bigserial PRIMARY KEY,
    series_id        bigint NOT NULL REFERENCES history_series ON DELETE CASCADE,
    -- The first point of the new regime, and the last one before it.
    at               timestamptz NOT NULL,
    before_at        timestamptz NOT NULL,
    result_id        bigint,
    plan_id          bigint,
    idx              integer NOT NULL,
    n_before         integer NOT NULL,
    n_after          integer NOT NULL,
    mean_before      double precision NOT NULL,
    mean_after       double precision NOT NULL,
    rel_change       double precision,
    q                double precision NOT NULL,
    p                double precision NOT NULL,
    -- What differed on the target between before_at and at: its facts
    -- versions in force then, the facts that changed, tuning changes.
    context          jsonb NOT NULL DEFAULT '{}',
    active           boolean NOT NULL DEFAULT true,
    detected_at      timestamptz NOT NULL DEFAULT now(),
    acknowledged_at  timestamptz,
    acknowledged_by  bigint REFERENCES tokens ON DELETE SET NULL
);
CREATE INDEX change_points_series_idx ON change_points (series_id, at);
