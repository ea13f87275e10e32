-- 019_telemetry_busy.sql — the report finds the jobs of a plan that ran
-- while their host was busy from the busy telemetry rather than from the
-- plan's jobs (server/db_telemetry.c): a few rows however big the plan,
-- where joining every job of a plan of 100,000 to its telemetry took
-- 0.5-1.4 s on each report.
CREATE INDEX telemetry_busy_idx ON telemetry (job_id, attempt)
    WHERE observed -> 'host_busy' -> 'busy' = 'true'::jsonb;
