-- 054_settings_while_held.sql — what a host reports while a tuning plan
-- holds it is the plan's doing, not an adoption. A tuning plan applies
-- its levels on its host (thp=never for one configuration, then back)
-- and the host's worker reports what it reads every --settings-every
-- seconds meanwhile: hv_target_settings_put (053) took such a report for
-- an adoption of every recommendation at that level, and its restore
-- for the adoption's end. The settings are still kept (the host's latest
-- reading), but adoptions open and end only while no plan holds the host
-- (plans.holds_host, written by hv_plan_hold alone, 046).
CREATE OR REPLACE FUNCTION hv_target_settings_put(tid bigint, reported jsonb) RETURNS jsonb
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
    IF EXISTS (SELECT 1 FROM plans p JOIN targets t ON t.name = p.host_name
               WHERE t.id = tid AND p.holds_host) THEN
        RETURN jsonb_build_object('opened', 0, 'ended', 0, 'held', true);
    END IF;
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
    RETURN jsonb_build_object('opened', opened, 'ended', ended, 'held', false);
END $$;
