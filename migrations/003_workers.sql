-- 003_workers.sql — group barriers and long-poll notifications.

-- A group member reports ready for its attempt; when every member of the
-- group is ready the server sets the group's start_at.
ALTER TABLE jobs ADD COLUMN ready_at timestamptz;
-- Where a member can be reached ({"host", "port"}), announced when it
-- reports ready: the server side of a net workload listens there and its
-- clients learn it from the ready answer.
ALTER TABLE jobs ADD COLUMN endpoint jsonb;
-- How many times a group was aborted (a member lost, failed or released)
-- and retried.
ALTER TABLE job_groups ADD COLUMN aborts integer NOT NULL DEFAULT 0;

-- Waiting claims are woken by NOTIFY hv_jobs whenever jobs become
-- claimable: a new plan, a release, an expired lease, an aborted group.
-- Claims themselves (queued -> running) notify nobody: the transition
-- table tells the two apart, so 200 waiting workers are not woken by every
-- claim.
CREATE FUNCTION hv_notify_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM new_rows WHERE status = 'queued') THEN
        PERFORM pg_notify('hv_jobs', '');
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER jobs_insert_notify
    AFTER INSERT ON jobs REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION hv_notify_jobs();
CREATE TRIGGER jobs_update_notify
    AFTER UPDATE ON jobs REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION hv_notify_jobs();
