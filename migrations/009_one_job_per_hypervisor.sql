-- A plan's targets share one hypervisor: its host and the host's guests.
-- A job of a plan is claimed only while no job of the same plan runs on
-- another of its targets (members of one group excepted: they run together
-- by design), so the host baseline never runs beside a guest's benchmark
-- and one guest's benchmark never beside another's. The claim looks for
-- running jobs of the plan through this index.
CREATE INDEX jobs_running_plan_idx ON jobs (plan_id, target_name) WHERE status = 'running';

-- A job that stops running may let a job of its plan on another target go:
-- wake the waiting claims then (only then: a plan on one target wakes
-- nobody, as before).
CREATE FUNCTION hv_notify_jobs_ended() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM old_rows o JOIN new_rows n ON n.id = o.id
               WHERE o.status = 'running' AND n.status <> 'running'
                 AND EXISTS (SELECT 1 FROM jobs q WHERE q.plan_id = n.plan_id
                             AND q.status = 'queued' AND q.target_name <> n.target_name)) THEN
        PERFORM pg_notify('hv_jobs', '');
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER jobs_ended_notify
    AFTER UPDATE ON jobs REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION hv_notify_jobs_ended();
