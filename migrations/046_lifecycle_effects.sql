-- 046_lifecycle_effects.sql — what a transition stamps, only the
-- transition stamps: a plan's end time, a job's end time and a plan's hold
-- on its host each have one writer.
--
-- Before, a plan's finished_at in the API was derived from its jobs' times
-- wherever it was read (server/db_plan_read.c), besides the ended_at that
-- hv_plan_transition (041, 045) stamps; UPDATE jobs statements in the
-- server and in hv_hook_before_ended (024) set a job's finished_at
-- themselves, besides the trigger that checks the change (041); and the
-- step claim and the restore step's end (server/db_steps.c) wrote
-- plans.holds_host directly, unlocked and unrecorded.
--
-- Now:
--   * a plan's finished_at is plans.ended_at, stamped by its transition
--     (a fleet parent's by its own). An imported plan's end is its jobs'
--     last end, as before.
--   * a job's finished_at is stamped only by hv_job_state_at, the BEFORE
--     trigger of its change of status: now() when it ends or a result ends
--     it again (failed to done), kept when an ended job is corrected (done
--     to failed), cleared when it goes back to queued or running (a retry).
--     No statement sets it.
--   * plans.holds_host changes only in hv_plan_hold(pid, hold, reason),
--     under the plan's lock (045), recorded in plan_holds; a release
--     notifies hv_jobs (the host's waiting plans may claim their steps).
--     The step claim (server/db_steps.c) takes the plan's lock before it
--     locks the apply step's row, as 045 asks, and a step's result takes
--     it before the step's row too.

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

-- As in 045; an imported plan's end is its jobs' last end (it happened
-- elsewhere), not the import's time.
CREATE OR REPLACE FUNCTION hv_plan_transition(pid bigint, to_state text, reason text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    p plans%ROWTYPE;
    t plan_transitions%ROWTYPE;
    body jsonb;
BEGIN
    PERFORM hv_plan_lock(pid);
    SELECT * INTO p FROM plans WHERE id = pid FOR NO KEY UPDATE;
    IF NOT FOUND OR p.state = to_state THEN
        RETURN false;
    END IF;
    SELECT * INTO t FROM plan_transitions x WHERE x.from_state = p.state AND x.to_state = $2;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'plan %: no transition from % to % (%)', pid, p.state, to_state, reason
            USING ERRCODE = 'check_violation';
    END IF;
    UPDATE plans SET state = to_state, state_reason = reason,
           ended_at = CASE WHEN to_state IN ('done', 'failed', 'cancelled')
                           THEN coalesce(cancelled_at,
                                         CASE WHEN reason = 'imported' THEN
                                             (SELECT max(k.finished_max) FROM plan_job_count_shards k
                                              WHERE k.plan_id = pid) END,
                                         now()) END
     WHERE id = pid;
    IF t.event IS NOT NULL AND reason <> 'imported' THEN
        body := hv_webhook_plan(pid);
        INSERT INTO webhook_deliveries (webhook_id, event, payload)
        SELECT w.id, e.ev, jsonb_build_object('event', e.ev, 'at', now()) || body
        FROM webhooks w CROSS JOIN LATERAL (SELECT CASE WHEN t.event = ANY (w.events) THEN t.event
                                            WHEN t.fallback = ANY (w.events) THEN t.fallback
                                            END AS ev) e
        WHERE w.deleted_at IS NULL AND e.ev IS NOT NULL;
        IF FOUND THEN
            PERFORM pg_notify('hv_webhooks', '');
        END IF;
    END IF;
    IF p.parent_id IS NOT NULL THEN
        IF to_state IN ('done', 'failed', 'cancelled') THEN
            -- A sibling waiting for a slot may be claimable now.
            PERFORM pg_notify('hv_jobs', '');
        END IF;
        PERFORM hv_plan_settle(p.parent_id, 'child');
    END IF;
    RETURN true;
END $$;

-- A plan's holds of its host and their releases, in order.
CREATE TABLE plan_holds (
    id        bigserial PRIMARY KEY,
    plan_id   bigint NOT NULL REFERENCES plans (id) ON DELETE CASCADE,
    host_name text,
    held      boolean NOT NULL,
    reason    text NOT NULL,
    at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX plan_holds_plan ON plan_holds (plan_id);

-- Plan pid holds its host (hold: its first apply step was claimed, its
-- tuning is applied there, the host's other tuning plans wait) or lets it
-- go (its restore step ran): the one writer of plans.holds_host. Takes
-- the plan's lock first (045); changes and records only a change, and
-- returns whether there was one. A release notifies hv_jobs: the steps of
-- plans waiting for the host may be claimed now.
CREATE FUNCTION hv_plan_hold(pid bigint, hold boolean, reason text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    p record;
BEGIN
    PERFORM hv_plan_lock(pid);
    SELECT holds_host, host_name INTO p FROM plans WHERE id = pid FOR NO KEY UPDATE;
    IF NOT FOUND OR p.holds_host = hold THEN
        RETURN false;
    END IF;
    UPDATE plans SET holds_host = hold WHERE id = pid;
    INSERT INTO plan_holds (plan_id, host_name, held, reason) VALUES (pid, p.host_name, hold, reason);
    IF NOT hold THEN
        PERFORM pg_notify('hv_jobs', '');
    END IF;
    RETURN true;
END $$;
