-- 053_recommendations.sql — recommendations kept with stable ids, their
-- adoption on hosts (declared by a user or observed in what a host worker
-- reports), and the latest host settings each host worker reported.
--
-- recommendations: one row per (plan, factor, level) the plan's report
-- recommends, written once, when the plan ends done, from the report's
-- own recommendation objects (server/db_rounds.c calls
-- hv_db_recommendations_keep with the report it built for the round's
-- decision, server/h_admin.c with the report of a plan imported done; the
-- figures are the report's, never computed again here).
-- scope: the host targets the plan measured. detail: the recommendation
-- object as the report gave it (gains, hurts, apply, sentence).
CREATE TABLE recommendations (
    id bigserial PRIMARY KEY,
    plan_id bigint NOT NULL REFERENCES plans (id) ON DELETE CASCADE,
    factor text NOT NULL,
    level text NOT NULL,
    default_level text,
    scope text[] NOT NULL DEFAULT '{}',
    workload text,
    metric text,
    gain_pct float8,
    gain_lo_pct float8,
    gain_hi_pct float8,
    risk_level text,
    risk text,
    rank integer,
    detail jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (plan_id, factor, level)
);
CREATE INDEX recommendations_factor ON recommendations (factor, level);

-- recommendation_adoptions: a host carrying a recommendation's level from
-- since, until it moved away (until; only observed adoptions end so: a
-- declared one stands as its author said). At most one open adoption per
-- recommendation and host: adopting again is a no-op.
CREATE TABLE recommendation_adoptions (
    id bigserial PRIMARY KEY,
    recommendation_id bigint NOT NULL REFERENCES recommendations (id) ON DELETE CASCADE,
    target_id bigint NOT NULL REFERENCES targets (id) ON DELETE CASCADE,
    since timestamptz NOT NULL,
    until timestamptz,
    source text NOT NULL CHECK (source IN ('declared', 'observed')),
    created_by bigint REFERENCES tokens (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK (until IS NULL OR until >= since)
);
CREATE UNIQUE INDEX recommendation_adoptions_open
    ON recommendation_adoptions (recommendation_id, target_id) WHERE until IS NULL;
CREATE INDEX recommendation_adoptions_target ON recommendation_adoptions (target_id);

-- target_settings: the levels of the catalogue's host settings a host
-- worker last read on its host ({factor: level}), when it reported them,
-- and since when they have been what they are.
CREATE TABLE target_settings (
    target_id bigint PRIMARY KEY REFERENCES targets (id) ON DELETE CASCADE,
    settings jsonb NOT NULL,
    reported_at timestamptz NOT NULL,
    changed_at timestamptz NOT NULL
);

-- The one writer of target_settings and of observed adoptions: stores
-- host tid's reported settings, opens an observed adoption of every
-- recommendation whose factor the host reports at the recommended level
-- and that the host has no open adoption of, and ends the open observed
-- adoptions whose factor the host now reports at another level. Returns
-- how many adoptions it opened and ended, as {"opened": n, "ended": n}.
CREATE FUNCTION hv_target_settings_put(tid bigint, reported jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    AS $$
DECLARE
    opened bigint;
    ended bigint;
BEGIN
    INSERT INTO target_settings AS s (target_id, settings, reported_at, changed_at)
    VALUES (tid, reported, now(), now())
    ON CONFLICT (target_id) DO UPDATE SET settings = EXCLUDED.settings,
        reported_at = EXCLUDED.reported_at,
        changed_at = CASE WHEN s.settings = EXCLUDED.settings THEN s.changed_at
                          ELSE EXCLUDED.changed_at END;
    UPDATE recommendation_adoptions a SET until = now()
      FROM recommendations r
     WHERE r.id = a.recommendation_id AND a.target_id = tid AND a.until IS NULL
       AND a.source = 'observed' AND reported ? r.factor AND reported->>r.factor <> r.level;
    GET DIAGNOSTICS ended = ROW_COUNT;
    INSERT INTO recommendation_adoptions (recommendation_id, target_id, since, source)
    SELECT r.id, tid, now(), 'observed' FROM recommendations r
     WHERE reported->>r.factor = r.level
       AND NOT EXISTS (SELECT 1 FROM recommendation_adoptions a
                       WHERE a.recommendation_id = r.id AND a.target_id = tid AND a.until IS NULL)
    ON CONFLICT DO NOTHING;
    GET DIAGNOSTICS opened = ROW_COUNT;
    RETURN jsonb_build_object('opened', opened, 'ended', ended);
END $$;
