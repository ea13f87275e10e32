-- 048_cancel_apply.sql — a result's host samples have one definition.
--
-- Before, only GET /api/v1/jobs/{id}/results joined a result's host
-- telemetry (009) to its samples; GET /api/v1/jobs/{id}/samples left the
-- host.* series out.
--
-- Now hv_result_host_samples(rid) gives the host.* samples of a result's
-- host telemetry, on the result's axis; both endpoints read them from it.

-- The host worker's host.* samples of result rid (its telemetry of the
-- same attempt, stored ok): t shifted onto the result's axis, seconds
-- after its started_at (negative before it: the host samples from the
-- claim on).
CREATE FUNCTION hv_result_host_samples(rid bigint)
RETURNS TABLE (metric text, t double precision, value double precision)
LANGUAGE sql STABLE AS $$
    SELECT e->>'metric', (e->>'t')::float8
               + coalesce(extract(epoch FROM tm.t0 - r.started_at)::float8, 0),
           (e->>'value')::float8
    FROM results r
    JOIN telemetry tm ON tm.job_id = r.job_id AND tm.attempt = r.attempt AND tm.status = 'ok'
    CROSS JOIN LATERAL jsonb_array_elements(tm.samples) e
    WHERE r.id = rid;
$$;
