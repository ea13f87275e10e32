-- 055_recommendation_verdicts.sql — whether an adopted recommendation
-- delivered: its verdict, kept with it, and the one function that changes
-- it and alone sends recommendation.verdict.
--
-- The verdict is computed by the server (server/recommendation_verdict.c:
-- lib/adoption.h's difference in differences over the hosts' round values
-- before and after their adoption) whenever what it rests on may have
-- changed, and stored through hv_recommendation_judged(). A change of the
-- verdict's state to delivered, partial, none or regressed (pending is no
-- answer) sends recommendation.verdict once: the row is locked, so of two
-- servers judging at once the second finds the state already stored.
ALTER TABLE recommendations
    ADD COLUMN verdict text CHECK (verdict IN ('pending', 'delivered', 'partial', 'none', 'regressed')),
    ADD COLUMN verdict_detail jsonb,
    ADD COLUMN judged_at timestamptz,
    ADD COLUMN verdict_at timestamptz;

-- The values of a recommendation are its workload's series on every host:
-- read by series key.
CREATE INDEX jobs_series_key_idx ON jobs (series_key);

-- Stores the verdict state st with its figures (verdict_of: the object the
-- API shows as "verdict", st included) for recommendation rid; on a change
-- of state to one other than pending, queues recommendation.verdict with
-- the recommendation, the verdict and the state before. Returns whether
-- the state changed.
CREATE FUNCTION hv_recommendation_judged(rid bigint, st text, verdict_of jsonb) RETURNS boolean
    LANGUAGE plpgsql
    AS $$
DECLARE
    before text;
    r recommendations%ROWTYPE;
BEGIN
    SELECT * INTO r FROM recommendations WHERE id = rid FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    before := r.verdict;
    UPDATE recommendations SET verdict = st, verdict_detail = verdict_of, judged_at = now(),
        verdict_at = CASE WHEN before IS DISTINCT FROM st THEN now() ELSE verdict_at END
     WHERE id = rid;
    IF before IS DISTINCT FROM st AND st <> 'pending' THEN
        PERFORM hv_webhook_enqueue('recommendation.verdict', jsonb_build_object(
            'recommendation', jsonb_build_object('id', r.id, 'plan_id', r.plan_id,
                'factor', r.factor, 'level', r.level, 'default', r.default_level,
                'workload', r.workload, 'metric', r.metric, 'gain_pct', r.gain_pct,
                'gain_interval', jsonb_build_object('lo_pct', r.gain_lo_pct, 'hi_pct', r.gain_hi_pct),
                'sentence', r.detail->>'sentence'),
            'verdict', verdict_of, 'previous', coalesce(before, 'pending')));
    END IF;
    RETURN before IS DISTINCT FROM st;
END $$;
