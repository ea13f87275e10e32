-- 046_lifecycle_effects.sql — what a transition stamps, only the
-- transition stamps.
--
-- Before, UPDATE jobs statements in the server and in
-- hv_hook_before_ended (024) set a job's finished_at themselves, besides
-- the trigger that checks the change (041).
--
-- Now:
--   * a job's finished_at is stamped only by hv_job_state_at, the BEFORE
--     trigger of its change of status: now() when it ends or a result ends
--     it again (failed to done), kept when an ended job is corrected (done
--     to failed), cleared when it goes back to queued or running (a retry).
--     No statement sets it.

-- A job's change of status: checked against job_transitions, then stamped.
CREATE OR REPLACE FUNCTION hv_job_state_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM job_transitions
                   WHERE from_status = OLD.status AND to_status = NEW.status) THEN
        RAISE EXCEPTION 'job %: no transition from % to %', OLD.id, OLD.status, NEW.status
            USING ERRCODE = 'check_violation';
    END IF;
    NEW.state_at := now();
    IF NEW.status = 'running' AND NEW.first_claimed_at IS NULL THEN
        NEW.first_claimed_at := now();
    END IF;
    IF NEW.status NOT IN ('done', 'failed', 'cancelled') THEN
        NEW.finished_at := NULL;
    ELSIF OLD.status NOT IN ('done', 'failed', 'cancelled') OR NEW.status = 'done' THEN
        NEW.finished_at := now();
    ELSE
        NEW.finished_at := coalesce(OLD.finished_at, now());
    END IF;
    RETURN NEW;
END $$;

-- As in 024, the failed jobs' finished_at left to the trigger.
CREATE OR REPLACE FUNCTION hv_hook_before_ended(sid bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    s plan_steps%ROWTYPE;
BEGIN
    SELECT * INTO s FROM plan_steps WHERE id = sid;
    UPDATE plans SET waiting = NULL, updated_at = now()
     WHERE id = s.plan_id AND waiting->>'reason' = 'before_host_hook';
    IF s.status = 'failed' THEN
        UPDATE jobs SET status = 'failed',
               error = 'the before_host hook failed on ' || s.target_name || ': '
                       || coalesce(s.error, 'no answer')
         WHERE plan_id = s.plan_id AND status = 'queued';
        UPDATE plan_steps SET status = 'cancelled', finished_at = now(), lease_until = NULL
         WHERE plan_id = s.plan_id AND kind IN ('apply', 'restore')
           AND status IN ('waiting', 'queued', 'waiting_for_operator');
        UPDATE plans SET current_block = NULL WHERE id = s.plan_id;
    END IF;
    PERFORM pg_notify('hv_jobs', '');
END $$;
